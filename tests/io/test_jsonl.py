"""io/jsonl.py: board and instance JSON lines are never confused (issue 28, item 7)."""

import pytest

from jaxqueens.errors import BoardFileError
from jaxqueens.io import jsonl


@pytest.mark.parametrize(
    "doc, kind",
    [
        ({"n": 8, "rows": [0, 4, 7, 5, 2, 6, 1, 3]}, "board"),
        ({"rows": [0], "file": "x", "d": 3}, "board"),
        ({"n": 8, "fixed": [[1, 3]]}, "instance"),
        ({"n": 8, "excluded_rows": [2]}, "instance"),
        ({"n": 8}, "instance"),
    ],
)
def test_defect_28_7_kind_by_keys(doc, kind):
    assert jsonl.kind(doc, "f:1") == kind


def test_defect_28_7_a_line_with_both_kinds_of_key_is_an_error():
    with pytest.raises(BoardFileError, match='f:3: mixes the board key "rows" with the instance'):
        jsonl.kind({"n": 8, "rows": [], "toroidal": False}, "f:3")


@pytest.mark.parametrize(
    "doc, needle",
    [
        ({"n": 8, "rows": [1, 2]}, '"n" is 8 but "rows" has 2 entries'),
        ({"rows": [0, 2.0]}, "non-empty list of integers"),
        ({"rows": [0, 2]}, "row 2 out of range 0..1"),
        ({"n": 2.0, "rows": [0, 1]}, '"n" is 2.0'),
    ],
)
def test_board_rows_are_checked(doc, needle):
    with pytest.raises(BoardFileError) as err:
        jsonl.board_rows(doc, "f:1")
    assert needle in str(err.value)


@pytest.mark.parametrize(
    "text, key",
    [
        ('{"n": 8, "rows": [1, 1], "rows": [0, 4, 7, 5, 2, 6, 1, 3]}', "rows"),
        ('{"a": {"b": 1, "b": 2}}', "b"),  # nested objects too
    ],
)
def test_json_object_with_repeated_key_is_refused(text, key):
    with pytest.raises(jsonl.RepeatedKey) as err:
        jsonl.loads(text)
    assert err.value.key == key and isinstance(err.value, ValueError)
    with pytest.raises(BoardFileError, match=f'f:2: the key "{key}" is given twice; keep one'):
        jsonl.parse(text, "f:2")
    assert jsonl.loads('{"a": {"b": 1}, "b": [{"b": 2}]}') == {"a": {"b": 1}, "b": [{"b": 2}]}
