"""The ``evolve`` command: config files, flags over config values, outputs and errors."""

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from jaxqueens.cli import evolve as evolve_cmd
from jaxqueens.cli import options, schema
from jaxqueens.cli.main import build_parser, main
from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.errors import QueensError
from jaxqueens.io import ga as ga_io
from jaxqueens.io import schema as run_schema

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def load_config(path):
    return schema.read_config(path, "evolve", evolve_cmd.parser())


def test_config_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    head = 'command = "evolve"\n[options]\n'
    bad.write_text(head + "n = 8\npopulation = 100\n")
    with pytest.raises(QueensError, match="unknown key 'population'"):
        load_config(bad)
    bad.write_text(head + 'n = 8\ncxpb = "high"\n')
    with pytest.raises(QueensError, match="'cxpb' must be a number"):
        load_config(bad)
    bad.write_text(head + "n = 8\ntrials = 2.5\n")
    with pytest.raises(QueensError, match="'trials' must be an integer"):
        load_config(bad)
    bad.write_text(head + 'scheme = "sideways"\n')
    with pytest.raises(QueensError, match="'scheme' must be one of steady, generational"):
        load_config(bad)
    bad.write_text('command = "solve"\n[options]\nn = 8\n')
    with pytest.raises(QueensError, match="jaxqueens run"):
        load_config(bad)
    for name in ("ga_classic_permutation", "ga_classic_combination", "ga_deap_n20"):
        assert load_config(CONFIGS / f"{name}.toml")["n"] in (8, 20)


class _Parsed:
    """``evolve`` words parsed as ``jaxqueens`` parses them, the ``--config`` file merged in."""

    def parse_args(self, argv):
        parser = build_parser()
        return schema.apply_config(parser.parse_args(argv), parser.commands[argv[0]])


def _parser():
    return _Parsed()


def test_cli_flags_override_config_and_write_outputs(tmp_path, capsys):
    conf = tmp_path / "c.toml"
    conf.write_text(
        'command = "evolve"\n[options]\nn = 8\npop = 30\ngenerations = 500\ntrials = 2\nseed = 3\n'
    )
    out = tmp_path / "run"
    args = _parser().parse_args(
        [
            "evolve",
            "--config",
            str(conf),
            "--generations",
            "60",
            "--out",
            str(out),
            "--plot",
            "--quiet",
            "--score",
            "nonattacking",
        ]
    )
    rc = args.func(args)
    assert rc in (0, 1)
    rows = list(csv.DictReader((out / "history.csv").read_text().splitlines()))
    assert list(rows[0]) == ga_io.summary_columns("nonattacking_pairs")
    assert [int(r["generation"]) for r in rows] == list(range(61))
    for r in rows:  # non-attacking pairs: the highest is the best trial's
        lo, mid, hi = (float(r[f"best_nonattacking_pairs_{k}"]) for k in ("min", "p50", "max"))
        assert 0 <= float(r["worst_nonattacking_pairs_mean"]) <= lo <= mid <= hi <= 28
    solved = [float(r["solved_fraction"]) for r in rows]
    assert solved == sorted(solved) and int(rows[1]["evaluations"]) == 2 * 2  # steady: 2 a trial
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["generations"] == 60
        and summary["trials"] == 2
        and summary["score_in_csv"] == "nonattacking"
    )
    sols = np.load(out / "solutions.npy")
    assert sols.shape[1:] == (8,) and checker.are_solutions(sols).all()
    assert np.load(out / "population.npy").shape == (2, 1, 30, 8)
    for name in ("best", "avg", "worst", "success"):
        assert (out / f"{name}.png").stat().st_size > 1000
    # the same run again into its folder: --force replaces its outputs (it is no GA setting:
    # evolve passed it on to the driver, an internal error)
    again = ["evolve", "--config", str(conf), "--generations", "60", "--out", str(out), "--quiet"]
    assert main(again) in (0, 1)  # (the command line writes the folder's manifest)
    assert main(again) == 2  # refused: an earlier run's outputs
    assert main([*again, "--force"]) in (0, 1)
    assert json.loads((out / "summary.json").read_text())["generations"] == 60
    args = _parser().parse_args(["evolve", "-n", "8", "--pop", "4", "--tournament", "5"])
    with pytest.raises(QueensError, match="tournament"):
        args.func(args)


def test_board_size_spellings_and_config_default(tmp_path):
    conf = tmp_path / "c.toml"
    conf.write_text('command = "evolve"\n[options]\nn = 12\npop = 30\n')
    settings = lambda *argv: evolve_cmd._settings(_parser().parse_args(["evolve", *argv]))
    assert "n" not in settings()  # evolve's own default (8) applies
    assert (
        settings("10")["n"] == 10
        and settings("--n", "9")["n"] == 9
        and settings("-n", "11")["n"] == 11
    )
    assert settings("--config", str(conf))["n"] == 12  # the config's n when no size is given
    assert settings("--config", str(conf), "-n", "6") == {"n": 6, "pop": 30}  # flags override
    with pytest.raises(QueensError, match="two board sizes"):
        settings("-n", "8", "9")


def test_quiet_flag():
    assert options.quiet(_parser().parse_args(["evolve", "--quiet"])) is True
    assert options.quiet(_parser().parse_args(["evolve"])) is None  # progress on a terminal only


def test_report_fitness_is_labelled_honestly(tmp_path, capsys):
    """``--fitness report-diagonals-only``: "N boards meet the report's score; K of them are
    solutions"; every board in solutions.npy passes the checker, score_met.npy holds the rest."""
    out = tmp_path / "report"
    args = _parser().parse_args(
        [
            "evolve",
            "-n",
            "6",
            "--pop",
            "16",
            "--generations",
            "40",
            "--trials",
            "3",
            "--encoding",
            "combination",
            "--fitness",
            "report-diagonals-only",
            "--out",
            str(out),
            "--quiet",
        ]
    )
    rc = args.func(args)
    stdout = capsys.readouterr().out
    met, sols = np.load(out / "score_met.npy"), np.load(out / "solutions.npy")
    assert (
        f"{len(met)} distinct boards meet the report's score; {len(sols)} of them are solutions"
        in stdout
    )
    assert len(met) > len(sols) and checker.are_solutions(sols).all()
    assert sum(checker.are_solutions(met)) == len(sols)
    trials = list(csv.reader((out / "runs.csv").read_text().splitlines()))
    assert trials[0] == [
        *run_schema.CORE,
        "generations_spent",
        "first_solved_generation",
        "first_score_met_generation",
        "best_fitness",
    ]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["boards_meeting_score"] == len(met) and summary["solutions_among_them"] == len(
        sols
    )
    assert "NOT always a solution" in summary["fitness"]
    assert rc == (0 if summary["solved"] else 1)


# ---------------------------------------------------------------- constrained boards (issue 16)
def test_instance_runs(tmp_path, capsys):
    gaps = tmp_path / "part.txt"
    gaps.write_text("2\n.\n.\n1\n.\n.\n.\n.\n")  # a text board with '.' gaps: two fixed queens
    argv = [
        "evolve",
        "--pop",
        "40",
        "--generations",
        "2000",
        "--trials",
        "8",
        "--seed",
        "5",
        "--quiet",
    ]
    assert main([*argv, "--instance", str(gaps), "--out", str(tmp_path / "i")]) == 0
    assert "n = 8," in capsys.readouterr().out
    model = cons.completion(8, [(0, 2), (3, 1)])
    boards = np.load(tmp_path / "i" / "solutions.npy")
    assert len(boards) and all(checker.check_constrained(b, model).ok for b in boards)
    summary = json.loads((tmp_path / "i" / "summary.json").read_text())
    assert summary["status"] == "SAT" and summary["instance"] == model.to_dict()
    assert summary["config"]["constrained"] and not summary["config"]["toroidal"]
    hard = tmp_path / "hard.jsonl"  # UNSAT, but no plain proof: the GA says unknown
    hard.write_text('{"n": 4, "fixed": [[0, 0]]}\n')
    assert main([*argv, "--instance", str(hard)]) == 1  # nothing solved, as for a plain board
    out = capsys.readouterr().out
    assert "instance unknown" in out and "UNSAT" not in out.replace("no UNSAT", "")


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["-n", "9"], "has n = 8 but n = 9"),
        (["--fitness", "report-diagonals-only"], "plain board only"),
        (["--instance", "TWO"], "holds 2 instances"),
        (
            ["--toroidal", "--fitness", "report-diagonals-only"],
            "plain board only",
        ),  # flag reaches evolve
    ],
)
def test_instance_option_errors(tmp_path, extra, needle, capsys):
    inst = tmp_path / "one.jsonl"
    inst.write_text('{"n": 8, "fixed": [[0, 2]]}\n')
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"n": 8, "fixed": [[0, 2], [4, 2]]}\n')
    two = tmp_path / "two.jsonl"
    two.write_text('{"n": 8}\n{"n": 9}\n')
    extra = [{"ROWS": str(rows), "TWO": str(two)}.get(x, x) for x in extra]
    argv = ["evolve", "--instance", str(inst), "--pop", "10", "--generations", "5", "--quiet"]
    if "--instance" in extra or "--toroidal" in extra:
        argv = argv[:1] + argv[3:]
    assert main(argv + extra) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


# --- issue 28 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--scheme", "steady", "--elite", "2"], "evolve --scheme steady does not use elite"),
        (["--mutation", "inversion", "--indpb", "0.2"], "does not use indpb (--indpb)"),
        (["--migrate-every", "5"], "evolve --islands 1 does not use migrate_every"),
    ],
)
def test_defect_28_10_options_the_scheme_does_not_use_are_refused(extra, needle, capsys):
    assert main(["evolve", "--generations", "5", "--quiet", *extra]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1, err


def test_defect_28_msg_unknown_option_is_named_not_its_value(capsys):
    """evolve --file B said "argument N: invalid int value: 'B'"."""
    with pytest.raises(SystemExit) as stop:  # argparse's own exit, code 2
        main(["evolve", "--file", "board.txt"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.count("\n") == 1, err
    assert "evolve has no option --file" in err and "invalid int" not in err, err
    with pytest.raises(SystemExit):
        main(["solve", "--chain", "5"])
    assert "did you mean --chains?" in capsys.readouterr().err


# ------------------------------------------- paper-scale runs: history, memory, resume (issue 26)
PER_TRIAL = ["-n", "8", "--pop", "20", "--generations", "50", "--trials", "3", "--seed", "5"]
PER_TRIAL += ["--history", "per-trial", "--quiet", "--checkpoint-every", "0.000001"]


def _interrupt_after(monkeypatch, chunks: int) -> None:
    """Ctrl-C as the ``chunks``-th chunk of generations is recorded (the loop's safe point)."""
    from jaxqueens.io import progress

    real, seen = progress.Progress.update, []

    def update(self, done, extra=""):
        seen.append(done)
        if len(seen) == chunks:
            raise KeyboardInterrupt
        return real(self, done, extra)

    monkeypatch.setattr(progress.Progress, "update", update)


def test_per_trial_history_is_streamed_and_equals_an_uninterrupted_run_after_resume(
    tmp_path, monkeypatch, capsys
):
    from jaxqueens.drivers import ga_size

    monkeypatch.setattr(ga_size, "default_chunk", lambda *args: 10)  # several chunks in a small run
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert main(["evolve", *PER_TRIAL, "--out", str(whole)]) in (0, 1)
    rows = list(csv.reader((whole / "history.csv").read_text().splitlines()))
    assert rows[0] == ga_io.per_trial_columns("attacking_pairs")
    assert len(rows) == 1 + 51 * 3
    assert [r[:2] for r in rows[1:5]] == [["0", "0"], ["0", "1"], ["0", "2"], ["1", "0"]]
    assert not list(whole.glob(".*partial"))
    capsys.readouterr()

    with monkeypatch.context() as m:
        _interrupt_after(m, 3)  # 30 generations recorded, checkpointed with the rows streamed
        assert main(["evolve", *PER_TRIAL, "--out", str(part)]) == 130
    err = capsys.readouterr().err
    assert "interrupted after 30 finished generations" in err and "--resume" in err
    assert not (part / "history.csv").exists() and (part / ".history.csv.partial").exists()
    assert main(["evolve", *PER_TRIAL, "--resume", str(part)]) in (0, 1)
    out = capsys.readouterr().out
    # this process ran generations 31..50 of 3 trials, 2 evaluations each: 120, over its own time
    assert "this process: 120 in " in out and "all 2 sessions of the resumed run" in out
    assert (part / "history.csv").read_bytes() == (whole / "history.csv").read_bytes()
    untimed = (
        lambda path: [  # runs.csv without its seconds column (timings differ)
            row[:6] + row[7:] for row in csv.reader(path.read_text().splitlines())
        ]
    )
    assert untimed(part / "runs.csv") == untimed(whole / "runs.csv")
    assert not (part / "checkpoint.npz").exists() and not list(part.glob(".*partial"))
    summary = json.loads((part / "summary.json").read_text())
    assert summary["sessions"] == 2 and summary["evaluations_this_process"] == 120
    assert summary["history"] == "per-trial" and summary["wall_total_s"] >= summary["wall_s"]


def _raise_interrupt(*args):
    raise KeyboardInterrupt


def test_an_interrupt_during_the_final_write_leaves_a_resumable_run(tmp_path, monkeypatch, capsys):
    """Stopped as history.csv is renamed into place: every file is whole or absent, the
    checkpoint and the streamed rows stay, and --resume finishes the same history; without a
    checkpoint (a run of one chunk) no partial file is left behind."""
    from jaxqueens.drivers import ga_size

    one = tmp_path / "one"
    with monkeypatch.context() as m:
        m.setattr(ga_io.HistoryStream, "commit", _raise_interrupt)
        assert main(["evolve", *PER_TRIAL, "--out", str(one)]) == 130
    assert "run the command again" in capsys.readouterr().err
    assert not (one / "history.csv").exists() and not list(one.glob(".*partial"))
    monkeypatch.setattr(ga_size, "default_chunk", lambda *args: 10)  # several chunks: checkpoints
    whole, part = tmp_path / "whole", tmp_path / "part"
    assert main(["evolve", *PER_TRIAL, "--out", str(whole)]) in (0, 1)
    with monkeypatch.context() as m:
        real = ga_io.HistoryStream.commit
        m.setattr(ga_io.HistoryStream, "commit", _raise_interrupt)
        capsys.readouterr()
        assert main(["evolve", *PER_TRIAL, "--out", str(part)]) == 130
        err = capsys.readouterr().err
        assert "resume with" in err and len(err.strip().splitlines()) <= 2
        m.setattr(ga_io.HistoryStream, "commit", real)
    assert (part / ".history.csv.partial").exists() and (part / "checkpoint.npz").exists()
    assert not (part / "history.csv").exists()
    assert main(["evolve", *PER_TRIAL, "--resume", str(part)]) in (0, 1)
    assert (part / "history.csv").read_bytes() == (whole / "history.csv").read_bytes()


def test_a_run_that_does_not_fit_in_memory_is_refused_before_it_starts(monkeypatch, capsys):
    from jaxqueens.parallel import memory

    monkeypatch.setattr(memory, "available_memory", lambda: 2 << 30)
    argv = ["evolve", "-n", "64", "--trials", "30000000", "--generations", "10", "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "needs about" in err and "fewer --trials" in err


def test_the_memory_estimate_is_printed_before_the_run(tmp_path, capsys):
    argv = ["evolve", "-n", "8", "--pop", "10", "--generations", "5", "--out", str(tmp_path)]
    assert main(argv) in (0, 1)
    err = capsys.readouterr().err
    assert "memory: about" in err and "available" in err


def test_per_trial_history_needs_out(capsys):
    assert main(["evolve", "--history", "per-trial", "--generations", "2", "--quiet"]) == 2
    assert "give --out" in capsys.readouterr().err


def test_out_need_reads_the_defaults_of_the_settings(tmp_path, monkeypatch):
    """What `--out` is asked to hold: the options given, else evolve's defaults and the preset's
    population (`evolve._values`); with --instance its size."""
    from jaxqueens.io import writing

    needs = []

    def prepare_out(out, need=0):
        needs.append(need)
        raise QueensError("stop here")

    monkeypatch.setattr(writing, "prepare_out", prepare_out)
    monkeypatch.setattr(options, "checkpoint_target", lambda args: (None, False))
    gaps = tmp_path / "part.txt"
    gaps.write_text(".\n" * 12)
    for extra, expect in (
        ([], (8, 10, 1, 1, 1000)),
        (["-n", "9", "--trials", "3", "--scheme", "generational"], (9, 20, 3, 1, 1000)),
        (["--preset", "classic", "--islands", "2", "--generations", "7"], (8, 100, 1, 2, 7)),
        (["--encoding", "combination", "--pop", "12"], (8, 12, 1, 1, 1000)),
        (["--instance", str(gaps)], (12, 10, 1, 1, 1000)),
    ):
        assert main(["evolve", "--out", str(tmp_path / "o"), "--quiet", *extra]) == 2
        assert needs.pop() == ga_io.out_bytes(*expect, "summary")
