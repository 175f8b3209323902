"""``jaxqueens complete`` (cli/complete.py): the table, --out files, --count/--enumerate, errors,
--resume and Ctrl-C."""

import csv
import io
import json
import re

import numpy as np
import pytest

from jaxqueens.cli import complete as complete_cli
from jaxqueens.cli.main import _Parser
from jaxqueens.core import checker
from jaxqueens.core.constraints import completion
from jaxqueens.drivers import complete as driver
from jaxqueens.errors import QueensError

NAUCK = "letting n be 8\nletting init be [[1, 3], [3, 4]]\n"
PARAM = "n = 8\nnumdiags = 3\ndiags = [[2, 1], [12, 0], [3, 1]]\n"  # 44, 14, 4 for d = 1, 2, 3


def _cli(argv):
    parser = _Parser(prog="jaxqueens")
    sub = parser.add_subparsers(dest="command")
    complete_cli.add_command(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def _table(text):
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "set"
    d.mkdir()
    (d / "nauck.param").write_text(NAUCK)
    (d / "diag.param").write_text(PARAM)
    (d / "gaps.txt").write_text("0\n.\n.\n.\n")  # a queen in the corner of a 4x4 board: UNSAT
    return d


def test_decide_prints_one_row_per_instance(folder, capsys):
    assert _cli(["complete", str(folder), "--quiet"]) == 0
    rows = _table(capsys.readouterr().out)
    assert [
        (r["file"].rsplit("/", 1)[-1], r["d"], r["n"], r["status"], r["solutions"]) for r in rows
    ] == [
        ("diag.param", "3", "8", "SAT", ""),
        ("gaps.txt", "", "4", "UNSAT", ""),
        ("nauck.param", "", "8", "SAT", ""),
    ]
    assert all(int(r["nodes"]) >= 0 and float(r["seconds"]) >= 0 for r in rows)


def test_count_and_enumerate_write_the_out_files(folder, tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        _cli(
            [
                "complete",
                str(folder / "nauck.param"),
                f"{folder / 'diag.param'}:1",
                "--count",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    rows = _table((out / "results.csv").read_text())
    assert [(r["status"], r["solutions"], r["d"]) for r in rows] == [
        ("SAT", "2", ""),
        ("SAT", "44", "1"),
    ]
    sols = [json.loads(line) for line in (out / "solutions.jsonl").read_text().splitlines()]
    assert len(sols) == 2 and sols[0]["file"].endswith("nauck.param")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["instances"] == 2 and summary["mode"] == "count" and summary["sat"] == 2
    capsys.readouterr()
    en = tmp_path / "en"
    assert (
        _cli(
            [
                "complete",
                str(folder / "nauck.param"),
                "--enumerate",
                "--cap",
                "5",
                "--out",
                str(en),
                "--quiet",
            ]
        )
        == 0
    )
    boards = [
        json.loads(line)["rows"] for line in (en / "solutions.jsonl").read_text().splitlines()
    ]
    model = completion(8, [(1, 3), (3, 4)])
    assert len(boards) == 2 and all(checker.check_constrained(b, model).ok for b in boards)


def test_toroidal_flag_and_resume(tmp_path, capsys):
    f = tmp_path / "plain.jsonl"
    f.write_text('{"n": 7}\n{"n": 5}\n')
    out = tmp_path / "out"
    assert _cli(["complete", str(f), "--toroidal", "--count", "--out", str(out), "--quiet"]) == 0
    assert [r["solutions"] for r in _table(capsys.readouterr().out)] == ["28", "10"]
    assert _cli(["complete", str(f), "--toroidal", "--count", "--resume", str(out), "--quiet"]) == 0
    assert [r["solutions"] for r in _table(capsys.readouterr().out)] == ["28", "10"]
    with pytest.raises(QueensError, match="other settings"):
        _cli(["complete", str(f), "--count", "--resume", str(out), "--quiet"])


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["--cap", "3"], "--enumerate only"),
        (["--enumerate", "--cap", "0"], "at least 1"),
        (["--diags", "-1"], "0 or more"),
        (["--max-nodes", "0"], "at least 1"),
        (["--diags", "9"], "fewer than 9"),
    ],
)
def test_bad_options_are_one_line_errors(folder, argv, msg):
    target = [str(folder / "d")] if msg == "fewer than 9" else [str(folder)]
    if msg == "fewer than 9":
        (folder / "d").mkdir()
        (folder / "d" / "x.param").write_text(PARAM)
    with pytest.raises(QueensError, match=msg):
        _cli(["complete", *target, *argv])


def test_missing_input_and_interrupt(folder, tmp_path, monkeypatch, capsys):
    with pytest.raises(QueensError, match="no such file"):
        _cli(["complete", str(tmp_path / "missing.param")])

    def instance(status):
        return driver.InstanceResult(8, status, None, 0, 0.0, np.zeros((0, 8), np.uint8))

    def interrupted(models, *a, **k):  # the driver's partial result after Ctrl-C, saved
        k["control"].checkpoint.parent.mkdir(parents=True, exist_ok=True)
        k["control"].checkpoint.write_bytes(b"")
        done = [instance("SAT")] + [instance("open")] * (len(models) - 1)
        return driver.CompleteResult(done, 1.0, 0.0, 1, 1, False, "interrupted")

    monkeypatch.setattr(driver, "solve_instances", interrupted)
    out = tmp_path / "o"
    assert _cli(["complete", str(folder), "--out", str(out), "--quiet"]) == 130
    err = capsys.readouterr().err
    assert re.search(r"interrupted after 1 of \d+ instances, saved in", err) and "resume" in err
    assert not (out / "results.csv").exists()

    def before_the_loop(*a, **k):  # Ctrl-C while compiling: nothing finished, still 130
        raise KeyboardInterrupt

    monkeypatch.setattr(driver, "solve_instances", before_the_loop)
    assert _cli(["complete", str(folder), "--out", str(tmp_path / "p"), "--quiet"]) == 130
    assert "resume" in capsys.readouterr().err


# --- issue 28 -------------------------------------------------------------------------------------

SOLUTION_8 = [0, 4, 7, 5, 2, 6, 1, 3]


def test_defect_28_7_board_jsonl_agrees_with_check(tmp_path, capsys):
    """The README's board format given to complete is a completion instance with every queen
    fixed: SAT for a solution (check says OK), UNSAT for a board that is not one."""
    from jaxqueens.cli.main import main

    f = tmp_path / "b.jsonl"
    bad = [0, 4, 7, 5, 2, 6, 3, 1]
    f.write_text(json.dumps({"n": 8, "rows": SOLUTION_8}) + "\n" + json.dumps({"rows": bad}) + "\n")
    assert main(["complete", str(f), "--quiet"]) == 0
    rows = _table(capsys.readouterr().out)
    assert [r["status"] for r in rows] == ["SAT", "UNSAT"]
    assert "attack each other" in rows[1]["reason"]
    assert main(["check", str(f)]) == 1  # the same verdicts: board 0 a solution, board 1 not
    assert "board 1: NOT a solution" in capsys.readouterr().out


def test_defect_28_12_report_line_stays_out_of_the_csv(tmp_path, capsys):
    from jaxqueens.cli.main import main

    f = tmp_path / "a.jsonl"
    f.write_text('{"n": 6}\n')
    assert main(["complete", str(f), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert "report:" not in out and "report:" in err
    assert [r["status"] for r in _table(out)] == ["SAT"]


def test_defect_28_msg_plainly_unsat_instances_give_their_reason(tmp_path, capsys):
    f = tmp_path / "i.jsonl"
    f.write_text(
        '{"n": 8, "fixed": [[0, 0], [1, 1]]}\n{"n": 8, "columns": [3]}\n'
        '{"n": 4, "fixed": [[0, 0]]}\n'
    )
    out = tmp_path / "o"
    assert _cli(["complete", str(f), "--count", "--out", str(out), "--quiet"]) == 0
    rows = _table(capsys.readouterr().out)
    assert [(r["status"], r["nodes"], r["reason"]) for r in rows] == [
        ("UNSAT", "0", "fixed queens at (0,0) and (1,1) attack each other"),
        (
            "UNSAT",
            "0",
            "column 3 has no allowed square (each is excluded, blocked or attacked by a fixed "
            "queen) but every column needs a queen",
        ),
        ("UNSAT", rows[2]["nodes"], ""),  # UNSAT by search: no reason to give
    ]
    assert int(rows[2]["nodes"]) > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unsat"] == 3 and summary["unsat_without_search"] == 2


def test_issue28_item5_an_unfinished_run_is_never_started_over(folder, tmp_path, capsys):
    from jaxqueens.cli.main import main

    out = tmp_path / "out"
    argv = ["complete", str(folder), "--count", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    (out / "summary.json").unlink()  # as an interrupted run leaves it: a checkpoint, no summary
    saved = (out / "checkpoint.npz").read_bytes()
    capsys.readouterr()
    assert main([*argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unfinished run" in err and f"--resume {out}" in err
    assert (out / "checkpoint.npz").read_bytes() == saved
    assert main([*argv, "--resume", str(out)]) == 0


def test_issue28_item14_enumerate_with_a_cap_too_large_for_memory_is_refused(folder, capsys):
    from jaxqueens.cli.main import main

    assert main(["complete", str(folder), "--enumerate", "--cap", "2147483647", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--cap 2,147,483,647" in err and "or less" in err
    assert "cap=" not in err and re.search(r"give --cap [\d,]+ or less", err), err


@pytest.mark.parametrize(
    "argv, flag", [(["--enumerate", "--cap", "0"], "--cap"), (["--max-nodes", "-2"], "--max-nodes")]
)
def test_the_drivers_range_errors_name_the_flag(folder, tmp_path, argv, flag, capsys):
    """The driver checks --cap and --max-nodes (once); the command line names the flag."""
    from jaxqueens.cli.main import main

    out = tmp_path / "out"
    assert main(["complete", str(folder), *argv, "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {flag} must be at least 1, got " in err, err
    assert "positive integer" in err and "Traceback" not in err
    assert not (out / "results.csv").exists()
    name = {"--cap": "cap", "--max-nodes": "max_nodes"}[flag]  # the library's words: the name
    with pytest.raises(QueensError, match=rf"^{name}( \(.*\))? must be at least 1") as raised:
        driver.solve_instances([completion(8, [])], "enumerate", **{name: 0})
    assert raised.value.param.split(" (")[0] == name


def test_issue28_item6_enumerate_refuses_a_disk_too_small_before_any_search(
    tmp_path, monkeypatch, capsys
):
    """The preflight estimates what --enumerate writes (at most --cap boards per instance, and
    no more than A000170(n)) and refuses up front, one line and exit 2; before it assumed 0
    bytes, searched, and failed at the final write with the work lost."""
    import shutil
    from collections import namedtuple

    from jaxqueens.cli.main import main
    from jaxqueens.core.constraints import Constraints
    from jaxqueens.io import complete as outputs
    from jaxqueens.io.instances_formats import Instance
    from jaxqueens.io.writing import MARGIN

    inst = tmp_path / "empty.param"
    inst.write_text("n = 12\nnumdiags = 0\ndiags = []\n")  # 14,200 solutions
    searched = []
    monkeypatch.setattr(driver, "solve_instances", lambda *a, **k: searched.append(1))
    usage = namedtuple("usage", "total used free")
    free = MARGIN + 400_000  # holds 1,000 boards (~220 KB with this path), not 14,200 (~3 MB)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: usage(1 << 40, 0, free))
    out = tmp_path / "out"
    argv = ["complete", str(inst), "--enumerate", "--cap", "20000", "--quiet", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err and "free" in err and "needed" in err
    assert not searched and not out.exists()
    # what it may write: 14,200 boards at most (A000170(12)), never the cap of 20,000
    given = [Instance(str(inst), None, Constraints(12))]
    need = outputs.written_bytes(given, 20000)
    assert need == outputs.written_bytes(given, 14200) > free - MARGIN
    line = json.dumps({"n": 12, "rows": [10] * 12, "file": str(inst), "d": None}) + "\n"
    assert need >= 14200 * len(line)
    assert outputs.written_bytes(given, 1000) < free - MARGIN
