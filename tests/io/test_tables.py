"""io.tables: one CSV dialect and JSON writer, written atomically."""

import csv
import io
import json

import numpy as np

from jaxqueens.io import tables


def test_csv_with_empty_cells(tmp_path):
    path = tables.write_csv(tmp_path / "t.csv", ["a", "b"], [[1, None], [2.5, "x"]])
    assert path.read_text() == "a,b\n1,\n2.5,x\n"
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]  # no temporary file left


def test_dict_csv_columns_in_order_of_first_appearance(tmp_path):
    path = tables.write_dict_csv(tmp_path / "d.csv", [{"n": 8, "x": 1}, {"n": 9, "y": 2}])
    assert path.read_text() == "n,x,y\n8,1,\n9,,2\n"


def test_json(tmp_path):
    path = tables.write_json(tmp_path / "s.json", {"n": 8, "p": tmp_path})
    text = path.read_text()
    assert text.endswith("\n") and json.loads(text) == {"n": 8, "p": str(tmp_path)}


def test_defect_28_msg_csv_formula_cells_are_neutralised(tmp_path):
    """Text cells a spreadsheet would run as formulas get a leading ', numbers stay numbers."""
    path = tables.write_csv(
        tmp_path / "t.csv",
        ["file", "value"],
        [['=HYPERLINK("x")', -3], ["+1", -0.5], ["-cmd", 7], ["@SUM(A1)", None], ["ok", 1]],
    )
    rows = list(csv.reader(io.StringIO(path.read_text())))
    assert rows[1:] == [
        ['\'=HYPERLINK("x")', "-3"],
        ["'+1", "-0.5"],
        ["'-cmd", "7"],
        ["'@SUM(A1)", ""],
        ["ok", "1"],
    ]
    assert tables.csv_cell("\tx") == "'\tx" and tables.csv_cell(-2) == -2
    assert tables.csv_cell(np.float32(-1.5)) == np.float32(-1.5)


def _refuse(constant):
    raise ValueError(f"not strict JSON: {constant}")


def test_json_is_strict_non_finite_values_become_null_with_a_reason(tmp_path):
    doc = {
        "ert_s": float("inf"),
        "rate": np.float32("nan"),
        "ci": [1.5, np.inf],
        "nested": [{"x": -np.inf}],
        "arr": np.array([1, 2]),
        "ok": np.float64(2.5),
    }
    path = tables.write_json(tmp_path / "s.json", doc)
    loaded = json.loads(path.read_text(), parse_constant=_refuse)
    assert loaded["ert_s"] is None and "infinity" in loaded["ert_s_null_reason"]
    assert loaded["rate"] is None and "not a number" in loaded["rate_null_reason"]
    assert loaded["ci"] == [1.5, None] and "ci_null_reason" in loaded
    assert loaded["nested"] == [{"x": None, "x_null_reason": loaded["nested"][0]["x_null_reason"]}]
    assert loaded["arr"] == [1, 2] and loaded["ok"] == 2.5
    # compare's in-memory summary: the same strict values, without the reasons beside them
    bare = tables.strict(doc, reasons=False)
    assert bare == {
        "ert_s": None,
        "rate": None,
        "ci": [1.5, None],
        "nested": [{"x": None}],
        "arr": [1, 2],
        "ok": 2.5,
    }
    assert type(bare["ok"]) is float and type(tables.strict(np.bool_(True))) is bool
