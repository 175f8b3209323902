"""Instance files (io/instances.py): prob079 .param, Essence' completion, JSON lines, text boards
with gaps, folders and .tar.gz sets, FILE:d, and one-line errors naming file and line."""

import io
import json
import tarfile

import pytest

from jaxqueens.core.constraints import Constraints
from jaxqueens.errors import BoardFileError
from jaxqueens.io import instances as I
from jaxqueens.io import instances_formats

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
    assert instances_formats.parse_param(
        "x", "letting n = 4\nletting init = [[0, 1]]\n"
    ).model.fixed == ((0, 1),)


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
        __import__("pathlib").Path(__file__).resolve().parents[2]
        / "instances/prob079/diag-8.tar.gz"
    )
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
    with pytest.raises(BoardFileError, match="not a readable tar archive"):
        I.load_instances([str(bad)])
    assert I.split_spec("a.param:12") == ("a.param", 12) and I.split_spec("a.param") == (
        "a.param",
        None,
    )


# --- issue 28: strict readers ---------------------------------------------------------------------

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]


def test_defect_28_7_board_jsonl_line_is_a_completion_instance(tmp_path):
    """A board line ({"n": 8, "rows": [...]}, the README's board format) is a completion instance
    with every queen fixed: a solution is SAT, never excluded rows read as UNSAT."""
    f = tmp_path / "b.jsonl"
    f.write_text(json.dumps({"n": 8, "rows": SOLUTION_8, "file": "x", "d": 3}) + "\n")
    (inst,) = I.load_instances([str(f)]).instances
    assert inst.model.fixed == tuple(enumerate(SOLUTION_8)) and inst.model.rows == ()


@pytest.mark.parametrize(
    "line, needle",
    [
        (
            '{"n": 8, "rows": [], "fixed": [[1, 3]]}',
            'mixes the board key "rows" with the instance key "fixed"',
        ),
        ('{"n": 8, "rows": [1, 2]}', 'name them "excluded_rows"'),
    ],
)
def test_defect_28_7_mixed_or_unknown_json_keys_are_errors(tmp_path, line, needle):
    f = tmp_path / "i.jsonl"
    f.write_text(line + "\n")
    with pytest.raises(BoardFileError) as err:
        I.load_instances([str(f)])
    assert f"{f}:1:" in str(err.value) and needle in str(err.value), str(err.value)


def test_defect_28_7_excluded_rows_key(tmp_path):
    f = tmp_path / "i.jsonl"
    f.write_text('{"n": 8, "excluded_rows": [2, 5], "name": "two rows"}\n')
    (inst,) = I.load_instances([str(f)]).instances
    assert inst.model.rows == (2, 5) and inst.source == "two rows"
    assert inst.model.to_dict() == {"n": 8, "excluded_rows": [2, 5]}


@pytest.mark.parametrize(
    "text, needle",
    [
        ("n = 8.5\nnumdiags = 1\ndiags = [[3, 1]]\n", ":1: n = '8.5' is not a whole number"),
        ("n = 8\nnumdiags = 1.0\ndiags = [[3, 1]]\n", ":2: numdiags = '1.0' is not a whole number"),
        (
            "n = 8\nn = 9\nnumdiags = 1\ndiags = [[3, 1]]\n",
            ":2: 'n' is given a second time (first on line 1)",
        ),
        ("n = 8\ndiags = [[3, 1]]\ndiags = [[4, 1]]\n", ":3: 'diags' is given a second time"),
        ("n = 8\nnumdiags = 1\nnumdiags = 1\ndiags = [[3, 1]]\n", ":3: 'numdiags' is given"),
        ("n = 8\nm = 3\ndiags = [[3, 1]]\n", ":2: unknown key 'm'"),
        ("n = 8\ndiags = [[3, 1]] [[4, 1]]\n", "after the list"),
        ("n = 8\ndiags = [[3.5, 1]]\n", "is not an [a, b] pair of whole numbers"),
        ("letting n be 8.5\nletting init be [[1, 3]]\n", ":1: n = '8.5' is not a whole number"),
        ("letting n be 8\nletting n be 9\n", ":2: 'n' is given a second time"),
        (
            "letting n be 8\nletting init be [[1, 3]]\nletting given_queens be 2\n",
            "given_queens = 2",
        ),
    ],
)
def test_defect_28_8_param_numbers_are_integers_and_keys_appear_once(tmp_path, text, needle):
    f = tmp_path / "x.param"
    f.write_text(text)
    with pytest.raises(BoardFileError) as err:
        I.load_instances([str(f)])
    assert needle in str(err.value) and str(f) in str(err.value), str(err.value)


def test_defect_28_msg_folder_d_names_its_d(tmp_path):
    d = tmp_path / "set"
    d.mkdir()
    (d / "a.param").write_text(PARAM)  # 4 diagonals
    loaded = I.load_instances([f"{d}:5"])
    assert loaded.skipped and loaded.skipped_note() == "1 files list fewer than 5 diagonals"
    with pytest.raises(BoardFileError, match="fewer than 5 diagonals") as err:
        loaded.require_some()
    assert "None" not in str(err.value)


def test_defect_28_msg_negative_d_is_a_range_error(tmp_path):
    f = tmp_path / "a.param"
    f.write_text(PARAM)
    with pytest.raises(BoardFileError) as err:
        I.load_instances([f"{f}:-1"])
    assert "d = -1 is out of range" in str(err.value) and "no such file" not in str(err.value)


@pytest.mark.parametrize(
    "mode, suffix", [("w:bz2", ".tar.bz2"), ("w:xz", ".tar.xz"), ("w", ".tar")]
)
def test_defect_28_msg_bz2_xz_and_plain_tar_archives(tmp_path, mode, suffix):
    archive = tmp_path / f"set{suffix}"
    data = PARAM.encode()
    with tarfile.open(archive, mode) as tar:
        info = tarfile.TarInfo("set/a.param")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    (inst,) = I.load_instances([str(archive)]).instances
    assert inst.source == f"{archive}/set/a.param" and inst.d == 4


def test_defect_28_msg_compressed_file_without_tar_suffix_is_named(tmp_path):
    f = tmp_path / "set.zst.txt"
    f.write_bytes(b"BZh91AY&SY\xff\xfe")
    with pytest.raises(BoardFileError, match="bzip2-compressed"):
        I.load_instances([str(f)])


def test_defect_28_msg_hard_and_symbolic_link_members_are_read(tmp_path):
    archive = tmp_path / "set.tar.gz"
    data = PARAM.encode()
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo("set/a.param")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        for name, kind in (
            ("set/hard.param", tarfile.LNKTYPE),
            ("set/soft.param", tarfile.SYMTYPE),
        ):
            link = tarfile.TarInfo(name)
            link.type, link.linkname = kind, "set/a.param" if kind == tarfile.LNKTYPE else "a.param"
            tar.addfile(link)
        dangling = tarfile.TarInfo("set/z.param")
        dangling.type, dangling.linkname = tarfile.LNKTYPE, "set/missing.param"
        tar.addfile(dangling)
    with pytest.raises(BoardFileError, match=r"z\.param: links to 'set/missing\.param'"):
        I.load_instances([str(archive)])
    with tarfile.open(archive, "r:gz") as tar:  # without the dangling link: all three read
        members = [m for m in tar.getmembers() if m.name != "set/z.param"]
        payload = {m.name: tar.extractfile(m).read() if m.isfile() else None for m in members}
    fixed = tmp_path / "ok.tar.gz"
    with tarfile.open(fixed, "w:gz") as tar:
        for m in members:
            tar.addfile(m, io.BytesIO(payload[m.name]) if payload[m.name] else None)
    got = I.load_instances([str(fixed)]).instances
    assert sorted(i.source.rsplit("/", 1)[-1] for i in got) == [
        "a.param",
        "hard.param",
        "soft.param",
    ]
    assert len({i.model for i in got}) == 1


def test_defect_28_msg_unreadable_input_is_named(tmp_path, monkeypatch):
    f = tmp_path / "a.param"
    f.write_text(PARAM)
    from jaxqueens.io import files

    def failing(*args, **kwargs):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(files.os, "open", failing)
    with pytest.raises(BoardFileError) as err:
        I.load_instances([str(f)])
    assert str(err.value).startswith(f"{f}: ") and "Input/output error" in str(err.value)


def test_defect_28_msg_named_pipe_is_refused_without_blocking(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pipe.param"
    os.mkfifo(fifo)
    box = []
    t = threading.Thread(target=lambda: box.append(_error_of(I.load_instances, [str(fifo)])))
    t.daemon = True
    t.start()
    t.join(20)
    assert box and "named pipe" in box[0] and str(fifo) in box[0], box


def _error_of(fn, *args):
    try:
        fn(*args)
    except BoardFileError as err:
        return str(err)
    return None


def test_jsonl_instance_with_repeated_key_is_refused(tmp_path):
    f = tmp_path / "i.jsonl"
    f.write_text('{"n":8,"fixed":[[0,0]],"fixed":[[0,1]]}\n')
    with pytest.raises(BoardFileError, match=r'i\.jsonl:1: the key "fixed" is given twice'):
        I.load_instances([str(f)])


@pytest.mark.parametrize(
    "text, needle",
    [
        ("n = \uff18\nnumdiags = 0\ndiags = []\n", "n = '\uff18' is not a whole number"),
        ("n = 8\nnumdiags = 1\ndiags = [[\uff14, 1]]\n", "is not an [a, b] pair of whole numbers"),
        ("letting n be \uff18\n", "n = '\uff18' is not a whole number"),
    ],
)
def test_param_with_fullwidth_digits_is_refused(tmp_path, text, needle):
    f = tmp_path / "a.param"
    f.write_text(text)
    with pytest.raises(BoardFileError) as err:
        I.load_instances([str(f)])
    assert needle in str(err.value)
    assert I.split_spec(f"{f}:\uff12") == (f"{f}:\uff12", None)  # a ":d" is ASCII too
    assert I.split_spec(f"{f}:2") == (str(f), 2)


def test_instance_files_starting_with_a_bom_are_read_alike(tmp_path):
    bom = b"\xef\xbb\xbf"
    (tmp_path / "a.param").write_bytes(bom + PARAM.encode())
    (tmp_path / "b.jsonl").write_bytes(bom + b'{"n": 6, "fixed": [[0, 1]]}\n')
    (tmp_path / "c.txt").write_bytes(bom + b".\n3\n.\n.\n")
    got = I.load_instances([str(tmp_path)]).instances
    assert [i.model.n for i in got] == [6, 6, 4]
