"""``jaxqueens render`` (cli/render.py): the poster, and never over its own input."""

import os

import pytest

from jaxqueens.cli.main import main

BOARD = "1\n3\n0\n2\n"


def test_render_writes_a_png(tmp_path, capsys):
    board = tmp_path / "board.txt"
    board.write_text(BOARD)
    assert main(["render", str(board), "-o", str(tmp_path / "poster.png")]) == 0
    assert (tmp_path / "poster.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("how", ["same-name", "relative", "hard-link", "symlink"])
def test_defect_18_render_refuses_to_overwrite_its_own_input(tmp_path, monkeypatch, capsys, how):
    """`render board.txt -o board.txt` (or another name of the same file) is refused with one
    line; the board file is left as it was."""
    board = tmp_path / "board.txt"
    board.write_text(BOARD)
    target = {"same-name": str(board), "relative": "./board.txt"}.get(
        how, str(tmp_path / "alias.png")
    )
    if how == "hard-link":
        os.link(board, target)
    elif how == "symlink":
        os.symlink(board, target)
    monkeypatch.chdir(tmp_path)
    assert main(["render", str(board), "-o", target]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "-o" in err and "input" in err, err
    assert board.read_text() == BOARD


@pytest.mark.parametrize(
    "name, magic",
    [
        ("poster.pdf", b"%PDF"),
        ("poster.svg", b"<?xml"),
        ("p.jpg", b"\xff\xd8"),
    ],
)
def test_defect_28_msg_render_writes_the_format_its_suffix_names(tmp_path, name, magic, capsys):
    board = tmp_path / "board.txt"
    board.write_text(BOARD)
    assert main(["render", str(board), "-o", str(tmp_path / name)]) == 0
    assert (tmp_path / name).read_bytes().startswith(magic)


@pytest.mark.parametrize("name", ["poster.xyz", "poster"])
def test_defect_28_msg_render_refuses_an_unknown_suffix(tmp_path, name, capsys):
    board = tmp_path / "board.txt"
    board.write_text(BOARD)
    assert main(["render", str(board), "-o", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ".png, .pdf, .svg" in err and not (tmp_path / name).exists()


def test_an_upper_case_png_suffix_is_png(tmp_path, capsys):
    board = tmp_path / "board.txt"
    board.write_text(BOARD)
    assert main(["render", str(board), "-o", str(tmp_path / "poster.PNG")]) == 0
    assert (tmp_path / "poster.PNG").read_bytes()[:4] == b"\x89PNG"
