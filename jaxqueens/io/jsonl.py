"""The one reading of a JSON line: a board or an instance, never confused (pure Python).

A board line is `{"n": 8, "rows": [...]}` (other keys are the writer's labels); an instance line
has the keys of `jaxqueens.core.constraints.KEYS` and an optional `"name"` (its excluded rows
are `"excluded_rows"`, so that `"rows"` always means a board). `kind` decides which a line is from
its keys alone, and a line with keys of both kinds is an error naming the line and the key;
`board_rows` checks a board line. `loads` is the package's one reading of JSON text: an object
that gives a key twice is refused (`RepeatedKey`), where `json.loads` would keep the last value.
"""

from __future__ import annotations

import json
from typing import Any

from jaxqueens.core.constraints import KEYS as _INSTANCE_KEYS
from jaxqueens.errors import BoardFileError, clip

LABEL = "name"
"""An instance's label (a board line may carry it too, as a label)."""
INSTANCE_KEYS = tuple(k for k in _INSTANCE_KEYS if k != "n")
"""Keys only an instance line has (`"n"` is shared)."""
BOARD_EXAMPLE = '{"n": 8, "rows": [0, 4, 7, 5, 2, 6, 1, 3]}'
INSTANCE_EXAMPLE = '{"n": 8, "fixed": [[1, 3], [3, 4]]}'


class RepeatedKey(ValueError):
    """A JSON object gives the same key twice (`key`: that key)."""

    def __init__(self, key: str):
        super().__init__(f'the key "{clip(key)}" is given twice in one object')
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`json`'s `object_pairs_hook`: the object's pairs as a dict, a repeated key refused."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise RepeatedKey(key)
        doc[key] = value
    return doc


def loads(text: str | bytes) -> Any:
    """JSON text (bytes: UTF-8) as Python values, strictly: `json.loads` with a repeated key
    refused.

    Raises:
      RepeatedKey: an object gives a key twice (a ValueError, as json's own errors are).
      ValueError: not JSON (`json.JSONDecodeError`), or an integer with too many digits.
    """
    return json.loads(text, object_pairs_hook=_unique)


def parse(line: str, where: str) -> dict:
    """One non-blank line as a JSON object; BoardFileError naming `where` (the file and line)
    and the problem."""
    try:
        doc = loads(line)
    except RepeatedKey as exc:
        raise BoardFileError(
            f'{where}: the key "{clip(exc.key)}" is given twice; keep one (a JSON object names '
            "each key once)"
        ) from None
    except json.JSONDecodeError as exc:
        raise BoardFileError(
            f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); each line is one JSON "
            f"object, a board like {BOARD_EXAMPLE} or an instance like {INSTANCE_EXAMPLE}"
        ) from None
    except RecursionError:
        raise BoardFileError(f"{where}: JSON nested too deeply") from None
    except ValueError:  # Python's limit on the digits of an integer
        raise BoardFileError(f"{where}: a number with too many digits") from None
    if not isinstance(doc, dict):
        raise BoardFileError(
            f"{where}: expected a JSON object per line, got {clip(line)}; e.g. {BOARD_EXAMPLE}"
        )
    return doc


def kind(doc: dict, where: str) -> str:
    """Which kind of line an object is, `"board"` or `"instance"`; BoardFileError naming
    `where` (the file and line) when it mixes the two."""
    instance_keys = [k for k in doc if k in INSTANCE_KEYS]
    if "rows" in doc:
        if instance_keys:
            raise BoardFileError(
                f'{where}: mixes the board key "rows" with the instance key '
                f'"{instance_keys[0]}": a board line is {BOARD_EXAMPLE}; an instance names its '
                'excluded rows "excluded_rows"'
            )
        return "board"
    return "instance"


def board_rows(doc: dict, where: str) -> list[int]:
    """The rows of a board line, checked: a non-empty list of integers in `0..n-1` and an `"n"`
    (if given) that agrees with their number; BoardFileError naming `where` (the file and
    line) and the problem."""
    rows = doc["rows"]
    if not isinstance(rows, list) or not rows or not all(type(r) is int for r in rows):
        raise BoardFileError(
            f'{where}: "rows" must be a non-empty list of integers (the row of the queen in each '
            f"column), e.g. {BOARD_EXAMPLE}"
        )
    n = len(rows)
    if "n" in doc and (type(doc["n"]) is not int or doc["n"] != n):
        hint = (
            '; if "rows" lists excluded rows of an instance, name them "excluded_rows"'
            if type(doc["n"]) is int and n < doc["n"]
            else ""
        )
        raise BoardFileError(
            f'{where}: "n" is {clip(repr(doc["n"]))} but "rows" has {n} entries; make them '
            f"agree{hint}"
        )
    for c, r in enumerate(rows):
        if not 0 <= r < n:
            raise BoardFileError(
                f"{where}: column {c}: row {clip(str(r))} out of range 0..{n - 1}; rows must be "
                "0-based"
            )
    return rows


def label(doc: dict[str, Any]) -> str | None:
    """The line's `"name"` as a string, or None."""
    value = doc.get(LABEL)
    return None if value is None else str(value)
