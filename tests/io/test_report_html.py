"""`jaxqueens.io.report_html`: the pieces of the report page."""

from jaxqueens.io import report_html


def test_png_size():
    assert report_html.png_size(b"GIF89a" + b"\0" * 30) is None
    assert report_html.png_size(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x05\0\0\0\x07") == (5, 7)


def test_flatten():
    assert report_html.flatten({"a": {"b": 1.23456789, "c": [1, 2]}, "d": None, "e": {}}) == [
        ("a.b", "1.23457"),
        ("a.c", "1, 2"),
        ("d", ""),
        ("e", "{}"),
    ]
    assert report_html.flatten({"r": [{"x": 1}, {"x": 2}]}) == [("r.0.x", 1), ("r.1.x", 2)]
