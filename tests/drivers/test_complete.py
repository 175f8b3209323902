"""Batched exact solving of constrained instances (drivers/complete.py): Nauck's 1850 instance,
random instances against a plain reference, toroidal counts (A051906), plain counts (A000170),
the shipped prob079 sets against diag_c, splitting, strategies, checkpoint/resume."""

import dataclasses
import json
import shutil
import subprocess
import threading
from pathlib import Path

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxqueens.core import checker
from jaxqueens.core import constraints as C
from jaxqueens.core.oeis import A000170, A051906
from jaxqueens.drivers import complete
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.io import checkpoint as ckpt
from jaxqueens.io import instances as instio
from jaxqueens.parallel import devices, sizing
from jaxqueens.parallel import streams as parallel_streams
from tests.solvers.test_complete import plain_solutions

SHARED = Path(__file__).resolve().parents[3] / "shared"  # the diag_c peer, beside the repository
PROB079 = Path(__file__).resolve().parents[2] / "instances" / "prob079"  # shipped (CC BY 4.0)
NAUCK = C.completion(8, [(1, 3), (3, 4)])  # queens on b4 and d5 (Nauck, Illustrirte Zeitung 1850)


def test_nauck_1850_has_exactly_two_completions():
    res = complete.solve_instances([NAUCK], "enumerate")
    r = res.instances[0]
    assert (r.status, r.solutions) == ("SAT", 2)
    assert sorted(map(tuple, r.boards.tolist())) == [
        (5, 3, 0, 4, 7, 1, 6, 2),
        (6, 3, 1, 4, 7, 0, 2, 5),
    ]
    d = complete.solve_instances([NAUCK]).instances[0]
    assert (
        d.status == "SAT"
        and d.solutions is None
        and checker.check_constrained(d.boards[0], NAUCK).ok
    )


@st.composite
def instances(draw):
    n = draw(st.integers(1, 7))
    sq = st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
    line = st.integers(0, 2 * n - 2)
    return C.Constraints(
        n,
        fixed=draw(st.lists(sq, max_size=2)),
        blocked=draw(st.lists(sq, max_size=3)),
        sums=draw(st.lists(line, max_size=3)),
        diffs=draw(st.lists(line, max_size=3)),
        toroidal=draw(st.booleans()),
    )


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(instances(), min_size=1, max_size=6), st.sampled_from([3, 50, 1 << 20]))
def test_counts_and_decisions_match_the_reference(models, budget):
    want = [plain_solutions(m) for m in models]
    got = complete.solve_instances(models, "count", budget=budget, chunk=4).instances
    assert [r.solutions for r in got] == [len(w) for w in want]
    assert [r.status for r in got] == ["SAT" if w else "UNSAT" for w in want]
    for r, w in zip(got, want, strict=True):
        assert all(tuple(b) in set(w) for b in r.boards.tolist()) and len(r.boards) == min(
            1, len(w)
        )
    dec = complete.solve_instances(models, "decide", budget=budget, chunk=4, orient=False).instances
    assert [r.status for r in dec] == [r.status for r in got]
    assert all(len(r.boards) == (r.status == "SAT") for r in dec)


def test_no_constraint_gives_q_n_and_toroidal_gives_a051906():
    sizes = (1, 2, 4, 6, 8, 10)
    res = complete.solve_instances([C.Constraints(n) for n in sizes], "count")
    assert [r.solutions for r in res.instances] == [A000170[n] for n in sizes]
    assert all(isinstance(r.solutions, int) for r in res.instances)
    for n in (5, 7, 11, 13):
        assert complete.toroidal_count(n) == A051906[n]
    assert complete.toroidal_count(6) == 0 == complete.toroidal_count(9)


def test_enumerate_caps_the_list_but_counts_all():
    r = complete.solve_instances(
        [C.Constraints(8)], "enumerate", cap=10, budget=40, chunk=2
    ).instances[0]
    assert (
        r.solutions == 92 and r.boards.shape == (10, 8) and len({tuple(b) for b in r.boards}) == 10
    )
    assert checker.are_solutions(r.boards).all()


def test_splitting_does_not_change_results_and_hard_instances_split():
    models = [C.excluded_diagonals(10, [[k, 1], [k + 3, 0]]) for k in range(6)]
    whole = complete.solve_instances(models, "count")
    split = complete.solve_instances(models, "count", budget=64, chunk=2)
    assert [r.solutions for r in whole.instances] == [r.solutions for r in split.instances]
    assert split.items > len(models) and split.chunks > whole.chunks


def test_lockstep_strategy_gives_the_same(monkeypatch):
    models = [NAUCK, C.Constraints(7, toroidal=True), C.excluded_diagonals(8, [[5, 1], [7, 0]])]
    want = [r.solutions for r in complete.solve_instances(models, "count").instances]
    monkeypatch.setattr(devices, "is_accelerator", lambda: True)
    monkeypatch.setattr(
        sizing, "sizes", lambda: dataclasses.replace(sizing.ACCELERATOR_DEFAULTS, count_lanes=3)
    )
    got = complete.solve_instances(models, "count", budget=30, chunk=4).instances
    assert [r.solutions for r in got] == want


def test_node_limit_gives_unknown_never_unsat():
    r = complete.solve_instances(
        [C.Constraints(12, sums=[0])], "count", max_nodes=50, budget=20
    ).instances[0]
    assert r.status == "unknown" and r.solutions is None and r.nodes >= 50


def test_bad_arguments_are_one_line_errors():
    for kwargs, msg in [({"mode": "solve"}, "mode"), ({"cap": 0}, "cap")]:
        with pytest.raises(QueensError, match=msg):
            complete.solve_instances([NAUCK], **kwargs)
    with pytest.raises(QueensError, match="n <= 32"):
        complete.solve_instances([C.Constraints(33)])
    with pytest.raises(QueensError, match="not a Constraints"):
        complete.solve_instances([8])


def _stop_at(k):
    def hook(chunks, done):
        if chunks == k:
            raise KeyboardInterrupt

    return hook


def test_interrupted_run_resumes_to_the_same_results(tmp_path):
    models = [C.excluded_diagonals(9, [[k, 1], [k + 2, 0]]) for k in range(8)] + [NAUCK]
    want = complete.solve_instances(models, "count", budget=50, chunk=2)
    ck = tmp_path / "checkpoint.npz"
    part = complete.solve_instances(
        models, "count", budget=50, chunk=2, control=RunControl(checkpoint=ck), on_chunk=_stop_at(3)
    )
    # Ctrl-C returns the partial result (as solve does): settled instances as they ended, the
    # others open, without a count; the checkpoint is saved
    assert part.stopped_by == "interrupted" and part.chunks == 3 and ck.exists()
    assert 0 <= part.settled < len(models) and part.settled == sum(
        r.status in ("SAT", "UNSAT") for r in part.instances
    )
    for r, w in zip(part.instances, want.instances, strict=True):
        if r.status == "open":
            assert r.solutions is None
        else:
            assert (r.status, r.solutions) == (w.status, w.solutions)
    got = complete.solve_instances(
        models, "count", budget=50, chunk=2, control=RunControl(checkpoint=ck)
    )
    assert got.resumed and got.stopped_by == "finished" and got.settled == len(models)
    assert [(r.status, r.solutions, r.nodes) for r in got.instances] == [
        (r.status, r.solutions, r.nodes) for r in want.instances
    ]
    with pytest.raises(QueensError, match="other settings"):
        complete.solve_instances(
            models, "decide", budget=50, chunk=2, control=RunControl(checkpoint=ck, resume=True)
        )


def test_an_interrupted_enumeration_resumes_to_the_same_boards(tmp_path):
    """The checkpoint's queue of work items, tallies and listed boards give back exactly the
    uninterrupted run's results, boards included (Ctrl-C with sub-trees queued and in flight)."""
    models = [C.excluded_diagonals(9, [[k, 1]]) for k in range(4)] + [NAUCK, C.Constraints(6)]
    kw = {"budget": 40, "chunk": 2, "cap": 50}
    want = complete.solve_instances(models, "enumerate", **kw)
    ck = tmp_path / "checkpoint.npz"
    part = complete.solve_instances(
        models, "enumerate", **kw, control=RunControl(checkpoint=ck), on_chunk=_stop_at(4)
    )
    assert part.stopped_by == "interrupted"
    with np.load(ck) as z:  # a queue of work items, one array per field
        queued = len(z["queue.instance"])
        assert queued > 0 and z["queue.path"].shape == (queued, 9)
    got = complete.solve_instances(models, "enumerate", **kw, control=RunControl(checkpoint=ck))
    assert got.resumed and got.chunks == want.chunks and got.items == want.items
    for a, b in zip(got.instances, want.instances, strict=True):
        assert (a.status, a.solutions, a.nodes) == (b.status, b.solutions, b.nodes)
        np.testing.assert_array_equal(a.boards, b.boards)


def test_issue28_item15_a_checkpoint_with_altered_arrays_is_a_one_line_error(tmp_path):
    """A valid header (fingerprint) over altered arrays: refused in one line, never an
    IndexError or a KeyError; so is a checkpoint whose arrays do not fit the run's plan."""
    models = [C.excluded_diagonals(9, [[k, 1], [k + 2, 0]]) for k in range(4)]
    ck = tmp_path / "checkpoint.npz"
    part = complete.solve_instances(
        models, "count", budget=50, chunk=2, control=RunControl(checkpoint=ck), on_chunk=_stop_at(2)
    )
    assert part.stopped_by == "interrupted"
    with np.load(ck) as z:
        arrays = dict(z)
    altered = [
        {**arrays, "boards.owner": arrays["boards.owner"] + 99},  # an instance past the last
        {k: v for k, v in arrays.items() if k != "boards.rows"},  # an array missing
        {**arrays, "queue.instance": arrays["queue.instance"][:-1]},  # a queue cut short
    ]
    for tree in altered:
        with open(ck, "wb") as f:
            np.savez(f, **tree)
        with pytest.raises(QueensError, match="not a readable checkpoint") as err:
            complete.solve_instances(
                models, "count", budget=50, chunk=2, control=RunControl(checkpoint=ck)
            )
        assert "\n" not in str(err.value) and str(ck) in str(err.value)
    # the same cut queue written whole (a valid digest): refused by the schema's named sizes
    header = json.loads(str(arrays["header"]))
    flat = {k: v for k, v in altered[2].items() if k != "header"}
    tree: dict = {}
    for key, value in flat.items():
        node = tree
        *inner, leaf = key.split(".")
        for part in inner:
            node = node.setdefault(part, {})
        node[leaf] = value
    ckpt.save(ck, tree, header["settings"])
    with pytest.raises(
        QueensError, match=r"queue\.level has items = \d+ .*, but queue\.instance has"
    ):
        complete.solve_instances(
            models, "count", budget=50, chunk=2, control=RunControl(checkpoint=ck)
        )


@pytest.fixture(scope="module")
def diag_c(tmp_path_factory):
    src = SHARED / "baselines" / "diag_c.c"
    if not src.exists() or shutil.which("gcc") is None:
        pytest.skip("diag_c.c or gcc not available")
    exe = tmp_path_factory.mktemp("peer") / "diag_c"
    subprocess.run(["gcc", "-O2", "-o", str(exe), str(src)], check=True)
    return exe


@pytest.mark.parametrize("n,d", [(10, 8), (12, 10), (12, 13)])
def test_decisions_on_shipped_instances_match_diag_c(diag_c, tmp_path, n, d):
    arc = PROB079 / f"diag-{n}.tar.gz"
    loaded = instio.load_instances([str(arc)], diags=d).instances[::40]  # a sample of 25
    res = complete.solve_instances([i.model for i in loaded], "decide")
    for inst, r in zip(loaded, res.instances, strict=True):
        member = tmp_path / "x.param"
        member.write_text(_member_text(arc, inst.source))
        out = subprocess.run(
            [str(diag_c), str(member), str(d), "first"], capture_output=True, text=True, check=True
        ).stdout.split("\t")
        assert r.status == out[2], inst.source
        if r.status == "SAT":
            assert checker.check_constrained(r.boards[0], inst.model).ok
    counts = complete.solve_instances([i.model for i in loaded[:5]], "count").instances
    for inst, r in zip(loaded[:5], counts, strict=True):
        (tmp_path / "x.param").write_text(_member_text(arc, inst.source))
        out = subprocess.run(
            [str(diag_c), str(tmp_path / "x.param"), str(d), "count"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\t")
        assert r.solutions == int(out[3])


def _member_text(arc, source):
    import tarfile

    with tarfile.open(arc) as tar:
        return tar.extractfile(source[len(str(arc)) + 1 :]).read().decode()


def test_processes_split_instances_and_gather_the_same_results(monkeypatch):
    """Two processes simulated in turn: each searches every other instance; the gather (fed
    the first process's arrays) merges to the single-process results."""
    from jaxqueens.parallel import gather

    models = [
        NAUCK,
        C.Constraints(6),
        C.Constraints(5, toroidal=True),
        C.excluded_diagonals(7, [[3, 1]]),
        C.Constraints(4, columns=[1]),
    ]
    want = complete.solve_instances(models, "count").instances
    states, calls = {}, []
    monkeypatch.setattr(gather, "process_count", lambda: 2)
    real_gather = complete._gather
    monkeypatch.setattr(
        complete, "_gather", lambda st, m, mine: states.setdefault(len(states), (st, mine))[0]
    )
    for p in (0, 1):
        monkeypatch.setattr(gather, "process_index", lambda p=p: p)
        complete.solve_instances(models, "count")
    (st0, mine0), (st1, mine1) = states[0], states[1]
    assert mine0 == [0, 2, 4] and mine1 == [1, 3]

    def record_all(x):
        calls.append(np.asarray(x))
        return np.asarray(x)[None]

    monkeypatch.setattr(gather, "allgather", record_all)
    monkeypatch.setattr(
        gather, "ragged", lambda rows: calls.append(np.asarray(rows)) or np.asarray(rows)
    )
    real_gather(st0, models, mine0)  # process 0's arrays, in call order
    first = list(calls)
    it = iter(first)
    monkeypatch.setattr(gather, "allgather", lambda x: np.stack([next(it), np.asarray(x)]))
    monkeypatch.setattr(gather, "ragged", lambda rows: np.concatenate([next(it), np.asarray(rows)]))
    merged = real_gather(st1, models, mine1)
    assert merged.solutions == [r.solutions for r in want]
    assert merged.status == [r.status for r in want] and merged.nodes == [r.nodes for r in want]
    assert [len(b) for b in merged.boards] == [len(r.boards) for r in want]


def test_chunks_run_in_one_worker_thread_per_stream(monkeypatch):
    """XLA:CPU runs a one-device call inline: each stream's chunks must run in its own thread, so
    the devices and the host work overlap (and an empty column is UNSAT without a search)."""
    seen, run = set(), parallel_streams.call

    def spy(stream, fn, batch):
        if batch.any():  # a chunk of items (the compilation's empty batch runs before the search)
            seen.add(threading.current_thread().name)
        return run(stream, fn, batch)

    monkeypatch.setattr(parallel_streams, "call", spy)
    models = [C.excluded_diagonals(9, [[k, 1], [k + 2, 0]]) for k in range(6)] + [
        C.Constraints(6, columns=[2])
    ]
    want = complete.solve_instances(models, "count", orient=False).instances
    got = complete.solve_instances(models, "count", budget=50, chunk=2).instances
    assert [(r.status, r.solutions) for r in got] == [(r.status, r.solutions) for r in want]
    assert (got[-1].status, got[-1].nodes) == ("UNSAT", 0)
    assert "MainThread" not in seen and len(seen) == (
        1 if sizing.sizes().accelerator else jax.local_device_count()
    )


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"mode": "enumerate", "cap": 1.5}, "cap (the enumeration cap) must be an integer"),
        ({"max_nodes": 2.0}, "max_nodes must be an integer"),
        ({"chunk": True}, "chunk (items per call) must be an integer"),
    ],
)
def test_defect_28_16_solve_instances_checks_argument_types(kwargs, needle):
    with pytest.raises(QueensError) as err:
        complete.solve_instances([C.Constraints(6)], **kwargs)
    assert needle in str(err.value)


def test_defect_28_msg_plainly_unsat_instances_are_settled_without_search():
    models = [
        C.Constraints(8, fixed=((0, 0), (1, 1))),
        C.Constraints(6),
        C.Constraints(8, rows=(2,)),
    ]
    res = complete.solve_instances(models, "count")
    assert [(r.status, r.nodes, r.solutions) for r in res.instances[::2]] == [
        ("UNSAT", 0, 0),
        ("UNSAT", 0, 0),
    ]
    assert res.instances[0].reason == "fixed queens at (0,0) and (1,1) attack each other"
    assert res.instances[2].reason.startswith("row 2 has no allowed square")
    assert res.instances[1].status == "SAT" and res.instances[1].reason is None
    rows = res.rows([instio.Instance(f"m{i}", None, m) for i, m in enumerate(models)])
    assert [(r[0], r[3], r[7]) for r in rows] == [
        ("m0", "UNSAT", res.instances[0].reason),
        ("m1", "SAT", None),
        ("m2", "UNSAT", res.instances[2].reason),
    ]
    summary = res.summary(mode="count")
    assert (summary["sat"], summary["unsat"], summary["unsat_without_search"]) == (1, 2, 2)
    assert list(summary)[-1] == "mode"


def test_issue28_item14_a_cap_that_cannot_fit_is_refused_before_any_allocation():
    """``--enumerate --cap 2147483647`` ended in an XLA out-of-memory error (2.4 TB, exit 3):
    now one line with the largest cap that fits, before anything is compiled or allocated."""
    # in the API's words (the command line says --cap: tests/cli/test_complete.py)
    with pytest.raises(QueensError, match=r"^cap=2,147,483,647 .* give cap=[\d,]+ or less"):
        complete.check_listed_memory(2**31 - 1, 8, 64, available=16 << 30)
    most = int(0.9 * (16 << 30)) // complete.listed_bytes(1, 8, 64)
    complete.check_listed_memory(most, 8, 64, available=16 << 30)  # the largest that fits passes
    with pytest.raises(QueensError, match="cap="):
        complete.check_listed_memory(most + 1, 8, 64, available=16 << 30)
    with pytest.raises(QueensError, match="cap=2,147,483,647"):
        complete.solve_instances([C.Constraints(8)], "enumerate", cap=2**31 - 1)
