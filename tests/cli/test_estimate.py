"""`jaxqueens estimate` (`jaxqueens.cli.estimate`): size lists, printed lines, table and
plot."""

import argparse
import json
import time

import pytest

from jaxqueens.cli import estimate as E
from jaxqueens.cli.main import main
from jaxqueens.errors import QueensError


def test_parse_sizes():
    assert E.parse_sizes("8,12,20-22") == [8, 12, 20, 21, 22]
    with pytest.raises(QueensError):
        E.parse_sizes("x")


def test_estimate_command_writes_table_and_plot(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    E.add_command(parser.add_subparsers())
    args = parser.parse_args(
        [
            "estimate",
            "-n",
            "8-9,33",
            "--probes",
            "2e4",
            "--quiet",
            "--depth",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "n = 8: Q(n) ~" in out and "exact 92" in out and "n = 33" in out
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert [e["n"] for e in summary["estimates"]] == [8, 9, 33]
    assert (tmp_path / "estimates.csv").read_text().count("\n") == 4
    assert (tmp_path / "log_q_over_n.png").stat().st_size > 1000


@pytest.mark.parametrize("text", ["1-10000000", "1-10000000000", "5,1-99999999999999999999", "70"])
def test_defect_7_huge_size_lists_refused_before_building(text):
    """A range past the largest size is refused before it is expanded, in a short message."""
    t0 = time.perf_counter()
    with pytest.raises(QueensError) as err:
        E.cmd_estimate(argparse.Namespace(n=text, n_pos=None))
    assert time.perf_counter() - t0 < 1.0
    msg = str(err.value)
    assert len(msg) < 200 and "\n" not in msg and "1..64" in msg, msg[:300]


def test_defect_7_long_size_text_is_not_echoed():
    text = ",".join(["x"] * 100_000)
    with pytest.raises(QueensError) as err:
        E.parse_sizes(text)
    assert len(str(err.value)) < 200


def _main(argv, capsys):
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_defect_8_sizes_without_solutions_report_exact_zero(tmp_path, capsys):
    """n = 2 and 3 have no solution (exact 0): a report, not a traceback."""
    code, out, err = _main(
        ["estimate", "-n", "2-3", "--probes", "1024", "--quiet", "--out", tmp_path], capsys
    )
    assert code == 0 and err == "", err
    assert (
        "n = 2: Q(n) ~ 0" in out and "n = 3: Q(n) ~ 0" in out and "exact 0 (inside the CI)" in out
    )
    assert [
        e["exact"] for e in json.loads((tmp_path / "summary.json").read_text())["estimates"]
    ] == [0, 0]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "0", "-5"])
def test_defect_8_probes_must_be_a_positive_number(value, capsys):
    code, _, err = _main(["estimate", "-n", "8", f"--probes={value}", "--quiet"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--probes" in err and "Traceback" not in err


def test_estimate_with_fewer_probes_than_its_interval_needs_exits_2(capsys):
    """Fewer probes than the interval needs, in all or per stratum of --depth: exit 2, one line
    naming the floor and the fix (the interval under-covered there)."""
    code, _, err = _main(["estimate", "-n", "12", "--probes", "1000", "--quiet"], capsys)
    assert code == 2 and err.count("\n") == 1 and "--probes must be at least 1024" in err, err
    argv = ["estimate", "-n", "12", "--probes", "1024", "--depth", "3", "--quiet"]
    code, _, err = _main(argv, capsys)
    assert code == 2 and err.count("\n") == 1 and "--depth 3 (n = 12: 756 strata)" in err, err
    assert "give --probes 3024 or more" in err and "Traceback" not in err


def test_defect_28_msg_estimate_takes_several_sizes_as_positionals(capsys):
    """The help says the positional takes sizes: estimate 8 10 12 runs three sizes."""
    assert main(["estimate", "8", "10", "12", "--probes", "2000", "--depth", "1", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert all(f"n = {n}: Q(n) ~" in out for n in (8, 10, 12)), out
    assert main(["estimate", "8", "9-10", "-n", "8,9-10", "--probes", "2000", "--quiet"]) == 0
    assert main(["estimate", "8", "-n", "9", "--quiet"]) == 2
    assert "two board sizes given" in capsys.readouterr().err


def test_defect_28_msg_confidence_interval_is_never_negative(capsys):
    """A few probes at n = 20 gave "99% CI -4.8e10 .. 1.5e11"; the interval is cut at 0."""
    assert (
        main(["estimate", "-n", "20", "--probes", "1024", "--depth", "0", "--seed", "3", "--quiet"])
        == 0
    )
    line = capsys.readouterr().out.splitlines()[0]
    low = line.split("CI ")[1].split(" ..")[0]
    assert float(low) >= 0, line


def test_estimate_sizes_in_fullwidth_digits_are_refused():
    with pytest.raises(QueensError, match="-n '\uff18' is not written with the ASCII digits 0-9"):
        E.parse_sizes("\uff18")
    with pytest.raises(QueensError, match="ASCII digits"):
        E.parse_sizes("8,1\uff10")


def test_estimate_depth_deeper_than_the_board_is_refused_not_clamped(capsys):
    """`estimate -n 8 --depth 9` ran with depth 8 on the command line while the API refused it:
    both refuse it now, in one line naming --depth, the size and the range, before any work."""
    code = main(["estimate", "-n", "8", "--depth", "9", "--probes", "1024", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "--depth 9" in err and "n = 8" in err and "0 (the plain estimator) to 8" in err


@pytest.mark.parametrize(
    "text,message",
    [("20-10", "the range '20-10' runs backwards; write it as 10-20"), ("8,,9", "empty item")],
)
def test_size_list_with_a_backwards_range_or_an_empty_item_names_it(text, message):
    """`-n 20-10` said "give at least one board size" and `-n 8,,9` was accepted."""
    with pytest.raises(QueensError, match=message):
        E.parse_sizes(text)
    assert E.parse_sizes("8, 9") == [8, 9] and E.parse_sizes("10-20") == list(range(10, 21))


def test_estimate_printed_an_unlabelled_standard_error_and_a_99_percent_ci_unlike_compare(capsys):
    """``Q(n) ~ X +- Y (99% CI ...)``: the standard error was an unlabelled "+-" and the interval
    99% where compare's are 95%. The error is labelled "se" and the default level is compare's
    (``--level`` still sets it)."""
    from jaxqueens.drivers import compare, settings

    assert settings.CONFIDENCE == compare.CONFIDENCE == 0.95
    argv = ["estimate", "-n", "8", "--probes", "2000", "--depth", "1", "--quiet"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "+-" not in out and out.count(", se ") == 2, out
    assert "(95% CI " in out.splitlines()[0], out
    assert main([*argv, "--level", "0.9"]) == 0
    assert "(90% CI " in capsys.readouterr().out


def test_ctrl_c_before_the_first_call_reports_like_an_interrupted_run(
    tmp_path, monkeypatch, capsys
):
    """Ctrl-C while a size compiles (the driver raises KeyboardInterrupt) ends as an
    interrupted run does: one line on stderr, exit code 130."""

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(E.knuth, "estimate", interrupted)
    assert main(["estimate", "-n", "8", "--quiet", "--out", str(tmp_path / "o")]) == 130
    err = capsys.readouterr().err
    assert "interrupted before any work was saved" in err and "nothing to resume" in err
