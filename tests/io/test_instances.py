"""Instance files (io/instances.py): prob079 .param, Essence' completion, JSON lines, text boards
with gaps, folders and .tar.gz sets, FILE:d, and one-line errors naming file and line."""

import io
import json
import tarfile

import pytest

from jaxqueens.core.constraints import Constraints
from jaxqueens.errors import BoardFileError
from jaxqueens.io import instances as I

PARAM = "n =  6\nnumdiags =  4\ndiags =  [[4, 1], [0, 0], [9, 1],\n  [3, 0]]\n"
NAUCK = (
    "language ESSENCE' 1.0\n$ Nauck 1850\nletting n be 8\nletting given_queens be 2\n"
    "letting init be [[1, 3], [3, 4]]  $ b4, d5\n"
)


def test_param_uses_the_first_d_pairs(tmp_path):
    f = tmp_path / "a.param"
    f.write_text(PARAM)
    whole = I.load_instances([str(f)]).instances
    assert [(i.d, i.model.sums, i.model.diffs) for i in whole] == [(4, (4, 9), (0, 3))]
    two = I.load_instances([f"{f}:2"]).instances[0]
    assert (two.d, two.model.sums, two.model.diffs, two.source) == (2, (4,), (0,), str(f))
    assert I.load_instances([str(f)], diags=1).instances[0].model.sums == (4,)
    assert I.load_instances([str(f)], toroidal=True).instances[0].model.toroidal


def test_essence_completion_jsonl_and_gap_boards_agree(tmp_path):
    (tmp_path / "nauck.param").write_text(NAUCK)
    (tmp_path / "nauck.txt").write_text(".\n3\n.\n4\n-\n?\n.\n.\n")
    (tmp_path / "one.txt").write_text(".\n4\n.\n5\n.\n.\n.\n.\n")
    (tmp_path / "set.jsonl").write_text(
        json.dumps({"n": 8, "fixed": [[1, 3], [3, 4]], "name": "N"})
        + "\n\n"
        + json.dumps({"n": 5, "toroidal": True})
        + "\n"
    )
    want = Constraints(8, fixed=((1, 3), (3, 4)))
    got = I.load_instances([str(tmp_path)]).instances
    assert [i.source.rsplit("/", 1)[-1] for i in got] == [
        "nauck.param",
        "nauck.txt",
        "one.txt",
        "N",
        "set.jsonl:3",
    ]
    assert got[0].model == got[1].model == got[3].model == want
    assert got[4].model == Constraints(5, toroidal=True)
    assert I.load_instances([str(tmp_path / "one.txt")], one_based=True).instances[0].model == want
    assert I.parse_param("x", "letting n = 4\nletting init = [[0, 1]]\n").model.fixed == ((0, 1),)


def test_folders_and_archives_skip_files_with_fewer_diagonals(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in [
            ("s/a.param", PARAM),
            (
                "s/b.param",
                PARAM.replace("numdiags =  4", "numdiags = 1").replace(
                    ", [0, 0], [9, 1],\n  [3, 0]", ""
                ),
            ),
            ("s/readme.md", "not an instance"),
        ]:
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    arc = tmp_path / "set.tar.gz"
    arc.write_bytes(buf.getvalue())
    loaded = I.load_instances([str(arc)], diags=3)
    assert [i.source for i in loaded.instances] == [f"{arc}/s/a.param"] and loaded.skipped == [
        f"{arc}/s/b.param"
    ]
    assert len(I.load_instances([f"{arc}:1"]).instances) == 2


def test_shipped_sets_read(tmp_path):
    shipped = (
        __import__("pathlib").Path(__file__).resolve().parents[3]
        / "shared/instances/prob079/diag-8.tar.gz"
    )
    if not shipped.exists():
        pytest.skip("shared instances not present")
    loaded = I.load_instances([str(shipped)], diags=6)
    assert len(loaded.instances) + len(loaded.skipped) == 1000
    assert all(i.model.n == 8 and i.d == 6 for i in loaded.instances)


@pytest.mark.parametrize(
    "name,text,spec,msg",
    [
        ("a.param", "numdiags = 1\ndiags = [[1, 1]]\n", "", "no 'n = N'"),
        ("a.param", "n = 4\n", "", "no 'diags"),
        ("a.param", "n = 4\nnumdiags = 2\ndiags = [[1, 1]]\n", "", "a.param:2: numdiags = 2"),
        ("a.param", "n = 4\ndiags = [[1, 1], [2 2]]\n", "", "a.param:2: .*not an \\[a, b\\] pair"),
        ("a.param", "n = 4\ndiags = [[1, 1]\n", "", "never closed"),
        ("a.param", "n = 4\ndiags = [[1, 5]]\n", "", "a.param:2: .*type"),
        ("a.param", PARAM, ":7", "d = 7 is out of range"),
        ("c.param", "letting n be 4\nletting init be [[0, 4]]\n", "", "c.param:2: .*off the board"),
        ("c.param", "letting init be [[0, 1]]\n", "", "no 'letting n"),
        ("g.txt", ".\nx\n.\n", "", "g.txt:2: 'x' is neither"),
        ("g.txt", ".\n3\n.\n", "", "g.txt:2: row 3 out of range"),
        ("g.txt", "", "", "empty"),
        ("j.jsonl", '{"n": 4}\n{"n": 4, "sums": [9]}\n', "", "j.jsonl:2: sums"),
        ("j.jsonl", '{"n": 4}\nnope\n', "", "j.jsonl:2: not valid JSON"),
        ("j.jsonl", "[1]\n", "", "j.jsonl:1: expected a JSON object"),
    ],
)
def test_bad_files_name_the_file_and_line(tmp_path, name, text, spec, msg):
    f = tmp_path / name
    f.write_text(text)
    with pytest.raises(BoardFileError, match=msg):
        I.load_instances([str(f) + spec])


def test_missing_and_empty_inputs(tmp_path):
    with pytest.raises(BoardFileError, match="no such file"):
        I.load_instances([str(tmp_path / "nope.param")])
    with pytest.raises(BoardFileError, match="holds no instance files"):
        I.load_instances([str(tmp_path)])
    (tmp_path / "bin.param").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(BoardFileError, match="not UTF-8"):
        I.load_instances([str(tmp_path / "bin.param")])
    bad = tmp_path / "x.tar.gz"
    bad.write_bytes(b"garbage")
    with pytest.raises(BoardFileError, match="not a readable .tar.gz"):
        I.load_instances([str(bad)])
    assert I.split_spec("a.param:12") == ("a.param", 12) and I.split_spec("a.param") == (
        "a.param",
        None,
    )
