"""io.schema: the per-run table's columns are defined once; every writer and the docs use them."""

import csv
import types
from pathlib import Path

import numpy as np
import pytest

from jaxqueens.drivers import chains as driver
from jaxqueens.drivers import chains_types
from jaxqueens.io import chains as chain_out
from jaxqueens.io import compare as io_compare
from jaxqueens.io import ga as ga_io
from jaxqueens.io import schema
from jaxqueens.io import stats as stats_out
from tests.drivers.test_chains import fake_chunk
from tests.io import test_compare, test_ga, test_stats

OUTPUTS = Path(__file__).resolve().parents[2] / "docs" / "outputs.md"


def _header(path: Path) -> list[str]:
    with open(path, newline="") as f:
        return next(csv.reader(f))


def test_the_docs_table_is_generated_from_the_code():
    """docs/outputs.md asks the docs build for the tables (docs/_gen/hooks.py fills them from
    runs_markdown() and tables_markdown()), so they cannot drift from the code."""
    page = OUTPUTS.read_text(encoding="utf-8")
    assert "{{ runs_csv_columns }}" in page and "{{ tables_and_columns }}" in page
    table = schema.runs_markdown()
    every = schema.tables_markdown()
    for command, tables in schema.TABLES.items():
        for name in tables:
            assert f"| {command} | `{name}` |" in every
    for name in schema.TERMS:
        assert f"| `{name}` |" in every
    for name in schema.COLUMNS:
        assert f"| `{name}`" in table, name
    for column in schema.COLUMNS.values():  # snake_case names, a meaning and a unit each
        assert column.name == column.name.lower() and " " not in column.name
        assert column.meaning and column.unit


def test_header_orders_extras_and_refuses_undocumented_columns():
    assert schema.header() == list(schema.CORE)
    assert schema.header(["best_step", "best_nmof_attacks"])[-2:] == [
        "best_nmof_attacks",
        "best_step",
    ]
    with pytest.raises(ValueError, match="undocumented"):
        schema.header(["chain"])
    with pytest.raises(ValueError):
        schema.check_header(["chain", "solved", "steps"])
    with pytest.raises(ValueError):  # documented names, but not in the documented order
        schema.check_header([*schema.CORE, "best_step", "best_nmof_attacks"])
    with pytest.raises(ValueError):
        schema.check_header(list(reversed(schema.CORE)))


def test_run_table_cells():
    table = schema.RunTable(
        solver="x",
        solved=np.array([True, False]),
        steps_spent=np.array([5, 9]),
        seconds=np.array([1e-3, 2e-3]),
        best_attacking_pairs=np.array([0.0, np.nan]),
        extras={"best_step": np.array([5, 3])},
    )
    names, rows = schema.rows([table])
    assert names == [*schema.CORE, "best_step"]
    assert rows == [
        ["x", 0, 1, 5, 5, None, "1.000e-03", 0, 5],
        ["x", 1, 0, 9, None, None, "2.000e-03", None, 3],
    ]


def _writers(tmp_path: Path) -> dict[str, Path]:
    """Every writer of a per-run table, run on a small result: the file each wrote."""
    out = {}
    run = driver.run_chains(fake_chunk, 6, chains_types.Budget(chains=3), 8, "fake")
    chain_out.write_outputs(run, tmp_path / "solve", chains_types.summarize(run))
    out["solve"] = tmp_path / "solve" / "runs.csv"
    sa = types.SimpleNamespace(**vars(run), solutions=run.solutions)  # an annealing run
    sa.best, sa.best_step = np.arange(len(run.chain_id)), np.arange(len(run.chain_id))
    sa.best_unit, sa.solver = "nmof_attacks", "annealing-sa"
    table = chain_out.run_table(sa, pairs=np.full(int((~run.solved).sum()), 4))
    chain_out.write_outputs(sa, tmp_path / "anneal", {}, table)
    out["anneal"] = tmp_path / "anneal" / "runs.csv"
    stats_out.write_outputs(test_stats._result(), tmp_path / "stats")
    out["stats"] = tmp_path / "stats" / "runs.csv"
    io_compare.write_outputs(test_compare.result(), tmp_path / "compare")
    out["compare"] = tmp_path / "compare" / "runs.csv"
    ga = test_ga._result()
    ga_io.write_outputs(ga, tmp_path / "evolve", ga_io.summary(ga))
    out["evolve"] = tmp_path / "evolve" / "runs.csv"
    return out


def test_every_writer_uses_the_documented_columns(tmp_path):
    files = _writers(tmp_path)
    for command, path in files.items():
        header = _header(path)
        schema.check_header(header)  # core columns in order, then documented extras in order
        assert header[: len(schema.CORE)] == list(schema.CORE), command
    with open(files["anneal"], newline="") as f:
        anneal = list(csv.DictReader(f))
    assert _header(files["anneal"])[len(schema.CORE) :] == ["best_nmof_attacks", "best_step"]
    unsolved = [r for r in anneal if r["solved"] == "0"]
    assert unsolved and all(r["best_attacking_pairs"] == "4" for r in unsolved)
    assert all(r["restarts"] == "" for r in anneal)  # annealing never restarts: empty
    assert all(r["steps_to_solution"] == "" for r in unsolved)
    with open(files["evolve"], newline="") as f:
        evolve = list(csv.DictReader(f))
    assert [r["steps_spent"] for r in evolve] == ["12", "12"]  # GA evaluations


def test_stats_ga_trials_count_evaluations(tmp_path):
    sam = types.SimpleNamespace(
        solver="ga",
        name="ga-permutation",
        solved=np.array([True, False]),
        steps=np.array([3, 9]),  # first solved generation; generations run when unsolved
        step_unit="generations",
        work=np.array([[40, 16, 9], [40, -1, 9]]),
        seconds=np.array([0.5, 0.5]),
    )
    names, rows = schema.rows([stats_out.run_table(sam)])
    assert names == [*schema.CORE, "generations_spent", "first_solved_generation"]
    assert rows == [
        ["ga-permutation", 0, 1, 40, 16, None, "5.000e-01", 0, 9, 3],
        ["ga-permutation", 1, 0, 40, None, None, "5.000e-01", None, 9, None],
    ]


# ----------------------------------------------------------------------------- every table

INSTANCES = Path(__file__).resolve().parents[2] / "instances" / "prob079" / "diag-8.tar.gz"

COMMANDS = {
    "solve": ["solve", "-n", "8", "--chains", "16", "--maxsteps", "2", "--max-restarts", "0"],
    "anneal": [
        "anneal",
        "-n",
        "8",
        "--chains",
        "16",
        "--method",
        "sa",
        "--steps",
        "100",
        "--rounds",
        "10",
    ],
    "evolve": ["evolve", "-n", "8", "--trials", "2", "--generations", "400"],
    "stats": [
        *("stats", "-n", "6", "--chains", "8", "--solver", "ga", "--generations", "30"),
        "--no-plots",
    ],
    "compare": [
        *("compare", "-n", "6", "--chains", "8", "--solvers", "mc-qs4,ta,ga-combination"),
        "--no-plots",
    ],
    "estimate": ["estimate", "-n", "8", "--probes", "1024"],
    "complete": ["complete", str(INSTANCES), "--diags", "3"],
}
"""One small run of every command that writes tables (unsolved chains for best_boards.csv); no
figures where a flag leaves them out (they are no tables: tests/plots renders them)."""


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict[str, Path]:
    from jaxqueens.cli.main import main

    root = tmp_path_factory.mktemp("tables")
    for command, argv in COMMANDS.items():
        code = main([*argv, "--quiet", "--out", str(root / command)])
        assert code in ((0, 1) if command == "solve" else (0,)), command  # 1: nothing solved
    return {command: root / command for command in COMMANDS}


def _subsequence(names: list[str], declared: tuple[str, ...]) -> bool:
    it = iter(declared)
    return all(name in it for name in names)


def test_every_table_of_every_command_is_the_declared_one(written):
    """Each CSV a command writes is declared in schema.TABLES, its header is the declared columns
    (in order, optional ones left out), and every column name has its one meaning."""
    for command, folder in written.items():
        tables = sorted(folder.glob("*.csv"))
        assert tables, command
        for path in tables:
            header = _header(path)
            assert path.name in schema.TABLES[command], f"{command}/{path.name} is not declared"
            declared = schema.TABLES[command][path.name]
            if path.name == schema.FILENAME:
                schema.check_header(header)
            elif declared is not schema.ANY:
                assert _subsequence(header, declared), (command, path.name, header, declared)
                assert len(header) >= 2
            if declared is not schema.ANY:
                for name in header:
                    assert schema.meaning(name), name
    assert (written["solve"] / "best_boards.csv").exists()
    assert (written["anneal"] / "best_boards.csv").exists()


def test_every_solver_column_holds_the_one_name_compare_takes(written):
    """The same solver has the same name in every command: compare's names (the
    compare_setup.COMPARE_SOLVERS keys), which variants.solver_name gives every family."""
    from jaxqueens.drivers.compare_setup import COMPARE_SOLVERS
    from jaxqueens.solvers.variants import solver_name

    for name, spec in COMPARE_SOLVERS.items():
        options = {k: v for k, v in spec.items() if k != "family"}
        assert solver_name(spec["family"], **options) == name
    seen = {}
    for command, folder in written.items():
        for path in folder.glob("*.csv"):
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f))
            if rows and "solver" in rows[0]:
                seen[f"{command}/{path.name}"] = {r["solver"] for r in rows}
    assert seen["solve/runs.csv"] == {"mc-permutation"}
    assert seen["anneal/runs.csv"] == {"sa"}
    assert seen["evolve/runs.csv"] == {"ga-permutation"}
    assert seen["stats/runs.csv"] == seen["stats/success.csv"] == {"ga-permutation"}
    assert seen["compare/runs.csv"] == {"mc-qs4", "ta", "ga-combination"}
    assert all(names <= set(COMPARE_SOLVERS) for names in seen.values()), seen
    import json

    for command in ("solve", "anneal", "stats"):
        summary = json.loads((written[command] / "summary.json").read_text())
        assert summary["solver"] in COMPARE_SOLVERS, (command, summary["solver"])


def test_write_takes_each_file_by_its_name_in_order(tmp_path):
    """schema.write: a document, boards, a text board, RunTables, declared and given CSV
    headers, in the mapping's order; a None content writes nothing."""
    import json

    table = schema.RunTable("s", np.array([True]), np.array([3]), np.array([0.5]), np.array([0]))
    files = {
        "summary.json": {"n": 4},
        "solutions.npy": np.array([[1, 3, 0, 2]], np.int64),
        "solution.txt": np.array([1, 3, 0, 2]),
        "skipped.npy": None,
        schema.FILENAME: table,
        "settings.csv": [["s", "k", 1]],
        "other.csv": (["a", "b"], [[1, None]]),
    }
    written = schema.write(tmp_path / "out", "compare", files)
    names = ["summary.json", "solutions.npy", "solution.txt", "runs.csv", "settings.csv"]
    assert [p.name for p in written] == [*names, "other.csv"]
    assert json.loads(written[0].read_text()) == {"n": 4}
    assert np.load(written[1]).dtype == np.int32 and written[2].read_text() == "1\n3\n0\n2\n"
    assert _header(written[3]) == list(schema.CORE)
    assert written[4].read_text() == "solver,key,value\ns,k,1\n"
    assert written[5].read_text() == "a,b\n1,\n" and not (tmp_path / "out" / "skipped.npy").exists()
