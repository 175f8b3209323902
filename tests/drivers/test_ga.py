"""The GA driver: ``evolve`` runs, records, settings checks, devices and chunks."""

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import jaxqueens
from jaxqueens.core import checker
from jaxqueens.core import constraints as cons
from jaxqueens.drivers import ga, ga_run, ga_setup, ga_size, settings
from jaxqueens.drivers.loop import RunControl
from jaxqueens.errors import QueensError
from jaxqueens.io import ga as ga_io
from jaxqueens.io.config import load_config
from jaxqueens.parallel import memory, sizing
from jaxqueens.solvers import ga as kernel
from jaxqueens.solvers.base import chain_keys

CONFIGS = Path(__file__).resolve().parents[2] / "configs"
GEN = {
    "scheme": "generational",
    "crossover": "pmx",
    "mutation": "swap",
    "tournament": 3,
    "cxpb": 0.5,
    "mutpb": 0.2,
    "indpb": 0.1,
    "elite": 0,
}
ISLANDS = {
    "islands": 3,
    "migrate_every": 5,
    "migrants": 2,
    "crossover": "cycle",
    "mutation": "scramble",
}


@pytest.fixture(scope="module")
def classic():
    """Both classic 8-queens experiments as configured in configs/ (30 trials, 1000 generations)."""
    out = {}
    for enc in ("permutation", "combination"):
        conf = load_config(CONFIGS / f"ga_classic_{enc}.toml")["options"]  # ga.evolve's arguments
        out[enc] = ga.evolve(**conf)
    return out


def test_classic_experiment_solves_most_trials(classic):
    assert classic["permutation"].success_rate >= 0.8
    assert classic["combination"].success_rate >= 0.5
    for r in classic.values():
        assert r.best.shape == (1001, 30) and r.population.shape == (30, 1, 100, 8)
        assert (r.evaluations.sum(axis=0) == 100 + 2 * 1000).all()


def test_steady_state_never_loses_the_best(classic):
    for r in classic.values():
        assert (np.diff(r.best, axis=0) <= 0).all()
        assert (r.best <= r.avg + 1e-4).all() and (r.avg <= r.worst + 1e-4).all()


def test_records_are_consistent(classic):
    r = classic["permutation"]
    fs = r.first_solved
    for t in range(30):
        assert r.best[fs[t], t] == 0 and (fs[t] == 0 or r.best[fs[t] - 1, t] > 0)
    assert r.success_curve()[-1] == r.success_rate and (np.diff(r.success_curve()) >= 0).all()
    assert len(r.solutions) > 0 and checker.are_solutions(r.solutions).all()
    assert len(np.unique(r.solutions, axis=0)) == len(r.solutions)
    assert (r.fitness == checker.attacking_pairs(r.population)).all()
    final = r.population[r.fitness == 0]
    assert {tuple(s) for s in final} <= {tuple(s) for s in r.solutions}
    comb = classic["combination"]
    assert checker.are_solutions(comb.solutions).all()  # no repeated rows in a "solution"


def test_same_seed_same_results_and_trials_independent():
    a = ga.evolve(10, 40, 30, 3, seed=5, **GEN)
    b = ga.evolve(10, 40, 30, 3, seed=5, **GEN)
    c = ga.evolve(10, 40, 30, 4, seed=5, chunk=7, **GEN)  # more trials, two devices, chunked
    d = ga.evolve(10, 40, 30, 3, seed=6, **GEN)
    assert (a.population == b.population).all() and (a.best == b.best).all()
    assert (a.population == c.population[:3]).all() and (a.avg == c.avg[:, :3]).all()
    assert (a.evaluations == c.evaluations[:, :3]).all()
    assert not (a.population == d.population).all()


@pytest.mark.parametrize(
    "n, pop, kwargs",
    [(10, 40, GEN), (8, 20, ISLANDS)],  # the runs of test_same_seed_... and test_islands_...
    ids=["generational", "steady-islands"],
)
def test_the_kernels_run_is_the_drivers_trial(n, pop, kwargs):
    """The public per-trial kernel keyed fold_in(key(seed), t) is trial t of ``evolve``: ``run``
    stops at the driver's first solved generation with one of its solutions (or spends the
    budget with the driver's best), and a scan of generations ends on the driver's population."""
    generations, n_trials = 30, 3
    r = ga.evolve(n, pop, generations, n_trials, seed=5, **kwargs)
    params = kernel.default_params(r.config, **r.params, generations=generations)
    keys = chain_keys(jax.random.key(5), jnp.arange(n_trials))
    run = jax.jit(kernel.run, static_argnums=1)

    @jax.jit
    def scan(key):
        s = kernel.init(key, r.config, params)
        return lax.scan(
            lambda s, _: kernel.generation(s, r.config, params), s, None, length=generations
        )

    solutions = {tuple(b) for b in r.solutions}
    for t in range(n_trials):
        res = run(keys[t], r.config, params)
        if r.first_solved[t] >= 0:
            assert bool(res.solved) and int(res.steps) == r.first_solved[t]
            assert tuple(np.asarray(res.rows)) in solutions
        else:
            assert not bool(res.solved) and int(res.steps) == generations
        assert int(res.best) == r.best[: int(res.steps) + 1, t].min()
        s, m = scan(keys[t])
        np.testing.assert_array_equal(np.asarray(s.genes), r.population[t])
        np.testing.assert_array_equal(np.asarray(s.fit), r.fitness[t])
        np.testing.assert_array_equal(np.asarray(m.best), r.best[1:, t])
        np.testing.assert_array_equal(np.asarray(m.nevals), r.evaluations[1:, t])


def test_generational_elitism_keeps_the_best():
    r = ga.evolve(
        12,
        30,
        40,
        4,
        scheme="generational",
        crossover="ox1",
        mutation="inversion",
        elite=2,
        fitness="excess",
    )
    assert (np.diff(r.best, axis=0) <= 0).all()
    assert (r.fitness == np.asarray(jaxqueens.n_attacks(r.population))).all()


def test_islands_and_migration():
    r = ga.evolve(8, 20, 30, 3, **ISLANDS)
    assert r.population.shape == (3, 3, 20, 8)
    genes = jnp.asarray(r.population[0])
    fit = jnp.asarray(r.fitness[0]).at[1].set(jnp.arange(20) + 100)
    config = kernel.Config(n=8, pop=20, islands=3, migrants=2)
    g2, f2 = jax.jit(kernel.migrate, static_argnums=2)(genes, fit, config)  # one compile
    best0 = np.argsort(np.asarray(fit[0]), kind="stable")[:2]
    worst1 = np.argsort(-np.asarray(fit[1]), kind="stable")[:2]
    assert (np.asarray(g2[1])[worst1] == np.asarray(genes[0])[best0]).all()
    assert (np.asarray(f2[1])[worst1] == np.asarray(fit[0])[best0]).all()


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"pop": 4, "tournament": 5}, "tournament"),
        ({"cxpb": 1.5}, "cxpb"),
        ({"mutpb": -0.1}, "mutpb"),
        ({"indpb": 2.0}, "indpb"),
        ({"n": 3}, "n = 3"),
        ({"encoding": "combination", "crossover": "pmx"}, "combination"),
        ({"scheme": "annealing"}, "scheme"),
        ({"pop": 10.5}, "pop"),
        ({"fitness": "nonattacking"}, "fitness"),
    ],
)
def test_bad_parameters_give_clear_errors(kwargs, words):
    with pytest.raises(QueensError, match=words):
        ga.evolve(**{"n": 8, "pop": 20, "generations": 5, **kwargs})


def setup(n, generations, trials, crossover, mutation, *, encoding, scheme, **given):
    """`ga_setup.check_setup` of the settings made from the default preset and `given`."""
    s = settings.ga_settings("default", encoding, scheme, mutation=mutation, **given)
    return ga_setup.check_setup(
        s, n=n, generations=generations, trials=trials, crossover=crossover, mutation=mutation
    )


def test_check_setup_fills_the_static_config():
    config, params = setup(
        n=8,
        generations=5,
        trials=2,
        encoding="permutation",
        scheme="steady",
        crossover="cut",
        mutation="swap",
        pop=20,
        tournament=3,
        cxpb=0.5,
        mutpb=0.25,
        indpb=0.0,
    )
    assert config.elite == 0  # elitism applies to the generational scheme only
    assert (config.cx_cap32, config.mut_cap32, config.eval_cap32) == (16, 8, 20)
    assert params == {"cxpb": 0.5, "mutpb": 0.25, "indpb": 0.0, "migrate_every": 0}
    assert hash(config) == hash(kernel.Config(**vars(config)))  # a jit static argument
    assert (
        ga_size.default_chunk(config, 2, 5) == 5
        and ga_size.default_chunk(config, 10**6, 10**4) == 10
    )


SMALL_SETUP = {
    "n": 8,
    "pop": 12,
    "generations": 5,
    "trials": 2,
    "encoding": "permutation",
    "scheme": "generational",
    "crossover": "pmx",
    "mutation": "swap",
    "tournament": 3,
    "cxpb": 0.5,
    "mutpb": 0.2,
    "indpb": 0.1,
    "elite": 1,
    "islands": 2,
    "migrate_every": 2,
    "migrants": 1,
}


def test_chunk_builder_lowers_the_drivers_chunk():
    """The abstract chunk (what an accelerator's sizing and the GPU check compile) has the
    driver's shapes: states [T, ...] and records [generations, T]."""
    config, _ = setup(**SMALL_SETUP)
    lowered = ga_size.chunk_builder(config, 2)(7)
    states, metrics = lowered.out_info
    assert states.genes.shape == (2, 2, 12, 8) and metrics.best.shape == (7, 2)
    assert metrics.sols.shape == (7, 2, 2, 1, 8)
    lowered.compile()


def test_accelerator_chunk_sizes_the_chunk_from_the_compiled_builder():
    """The accelerator's route on the CPU with a synthetic target: the wanted chunk when the
    memory holds it, fewer generations per call when it does not, one line when even one
    generation of the population does not fit. The chunk wanted is the one
    test_chunk_builder_lowers_the_drivers_chunk compiles (the same program)."""
    config, _ = setup(**SMALL_SETUP)
    roomy = sizing.Target(10**9, 16, "test-roomy")
    assert ga_size.accelerator_chunk(config, 2, 7, 1, target=roomy) == 7
    one = sizing.footprint(ga_size.chunk_builder(config, 2)(1).compile())
    many = sizing.footprint(ga_size.chunk_builder(config, 2)(7).compile())
    assert many > one  # the per-generation records grow with the chunk
    tight = sizing.Target((one + many) // 2, 16, "test-tight")
    assert 1 <= ga_size.accelerator_chunk(config, 2, 7, 1, target=tight) < 7
    with pytest.raises(QueensError, match="use fewer --trials or a smaller --pop"):
        ga_size.accelerator_chunk(config, 2, 7, 1, target=sizing.Target(one // 2, 16, "test-tiny"))


def test_zero_generations_reports_the_initial_population():
    r = ga.evolve(8, 10, 0, 4, chunk=50)  # the programs of test_until_solved_... (compiled)
    assert r.best.shape == (1, 4) and not r.interrupted
    assert (r.best[0] == r.fitness.min(axis=(1, 2))).all()
    assert (r.evaluations == 10).all()


def test_report_fitness_boards_are_checked_and_labelled(classic):
    """The GA report's score (rows ignored): boards that score 0 are kept apart, and only those
    the independent checker confirms count as solutions or solved trials."""
    r = ga.evolve(6, 12, 30, 2, encoding="combination", fitness="report-diagonals-only", seed=1)
    assert len(r.score_met) > 0  # the report's 0 is easy: e.g. every queen on one row
    n = 6
    diag = [
        sum(abs(int(b[i]) - int(b[j])) == j - i for i in range(n) for j in range(i + 1, n))
        for b in r.score_met
    ]
    assert not any(diag)
    real = checker.are_solutions(r.score_met)
    np.testing.assert_array_equal(r.solutions, r.score_met[real])
    assert (~real).any()  # some of the report's "solutions" are not solutions
    met, solved = r.first_score_met, r.first_solved
    np.testing.assert_array_equal(met, np.where((r.best == 0).any(0), (r.best == 0).argmax(0), -1))
    assert ((solved < 0) | ((met >= 0) & (met <= solved))).all()
    assert r.success_rate == np.mean(solved >= 0)
    plain = classic["combination"]  # the default fitness counts rows: nothing to keep apart
    assert plain.score_met is None and plain.solved_at is None
    np.testing.assert_array_equal(plain.first_solved, plain.first_score_met)


# ---------------------------------------------------------------- constrained boards (issue 16)
@pytest.mark.parametrize("n", [5, 7])
def test_toroidal_solutions_pass_the_toroidal_checker(n):
    r = ga.evolve(n, pop=30, generations=300, trials=2, toroidal=True, seed=3)
    assert r.config.toroidal and not r.config.constrained
    assert r.status == "SAT" and r.instance == cons.Constraints(n, toroidal=True)
    torus = cons.Constraints(n, toroidal=True)
    assert all(checker.check_constrained(b, torus).ok for b in r.solutions)
    if n == 5:  # A051906(5) = 10 toroidal solutions
        assert len(r.solutions) <= 10


@pytest.mark.parametrize("encoding", ["permutation", "combination"])
def test_instances_fixed_queens_stay_and_unsolved_is_unknown(encoding):
    nauck = cons.completion(8, [(0, 2), (3, 1)])
    unsat = cons.completion(8, [(0, 0), (1, 2)])  # no solution holds both; no plain proof
    kw = {"pop": 40, "generations": 2000, "trials": 8, "encoding": encoding, "seed": 5}
    r = ga.evolve(instance=nauck, **kw)
    assert r.config.constrained and r.status == "SAT" and len(r.solutions)
    assert all(checker.check_constrained(b, nauck).ok for b in r.solutions)
    assert (r.population[..., 0] == 2).all() and (r.population[..., 3] == 1).all()
    blocked = cons.Constraints(8, blocked=tuple((x, x) for x in range(8)))  # same n: no recompile
    r = ga.evolve(instance=blocked, **kw)
    assert r.status == "SAT" and all(checker.check_constrained(b, blocked).ok for b in r.solutions)
    assert not any((b == np.arange(8)).any() for b in r.solutions)
    r = ga.evolve(instance=unsat, **kw)
    assert r.status == "unknown" and len(r.solutions) == 0 and (r.best > 0).all()
    assert (r.population[..., 0] == 0).all() and (r.population[..., 1] == 2).all()


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"instance": cons.completion(8, [(0, 3), (5, 3)])}, "UNSAT .fixed queens at .0,3."),
        ({"instance": cons.completion(8, [(0, 3)]), "n": 9}, "n = 9 but the instance has n = 8"),
        ({"n": 7, "toroidal": True, "fitness": "report-diagonals-only"}, "plain board only"),
    ],
)
def test_constrained_setting_errors(kwargs, words):
    with pytest.raises(QueensError, match=words):
        ga.evolve(pop=10, generations=5, **kwargs)


# ---------------------------------------------------------------- measured defaults (issue 27)


def test_presets_give_the_measured_and_the_classic_settings():
    d = ga.preset_settings("default", "permutation")
    assert (d["pop"], d["tournament"], d["cxpb"], d["mutpb"]) == (10, 4, 0.2, 1.0)
    assert "elite" not in d  # the steady state keeps no parents: no elite to give
    g = ga.preset_settings("default", "permutation", "generational")
    assert (g["pop"], g["tournament"], g["cxpb"], g["elite"]) == (20, 3, 0.2, 1)
    for encoding in ("permutation", "combination"):
        c = ga.preset_settings("classic", encoding)
        assert (c["pop"], c["tournament"], c["cxpb"], c["mutpb"]) == (100, 5, 1.0, 1.0)
        c = ga.preset_settings("classic", encoding, "generational")
        assert (c["tournament"], c["cxpb"], c["mutpb"], c["elite"]) == (3, 0.5, 0.2, 1)
    assert ga.preset_settings("default", "combination") == ga.preset_settings(
        "classic", "combination"
    )
    with pytest.raises(QueensError, match="--preset"):
        ga.evolve(8, generations=2, preset="nmof")


@pytest.mark.parametrize(
    "encoding, scheme, expect",
    [
        ("permutation", "steady", "7b8ba43129a1c832"),
        ("combination", "generational", "23ec1c5d183f29e4"),
    ],
)
def test_classic_preset_reproduces_the_earlier_defaults(encoding, scheme, expect):
    # recorded with the code before issue 27 (then the defaults: population 100, ...), and again
    # once the islands' streams took 64-bit seeds (the same settings, other draws)
    import hashlib

    r = ga.evolve(10, None, 40, 3, encoding=encoding, scheme=scheme, seed=5, preset="classic")
    got = hashlib.sha256(
        np.asarray(r.population, np.int32).tobytes() + np.asarray(r.best, np.int64).tobytes()
    ).hexdigest()[:16]
    assert r.population.shape == (3, 1, 100, 10) and got == expect


def test_default_ga_solves_n16_within_compares_budget():
    # measured: 99% of 100 trials within 10,000 evaluations (scripts/tune_defaults.py ga)
    r = ga.evolve(16, None, (10_000 - 10) // 2, 20, seed=1)
    assert r.population.shape == (20, 1, 10, 16) and r.success_rate >= 0.85


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        ({"pop": 2**31}, "pop must be at most 2,147,483,647"),
        ({"seed": -1}, "seed must be at least 0"),
        ({"scheme": "steady", "elite": 2}, "evolve --scheme steady does not use elite"),
        ({"mutation": "scramble", "indpb": 0.5}, "--mutation scramble does not use indpb"),
    ],
)
def test_defect_28_16_and_10_evolve_checks_arguments(kwargs, needle):
    with pytest.raises(QueensError) as err:
        ga.evolve(8, **{"generations": 2, **kwargs})
    assert needle in str(err.value)


def test_a_report_fitness_run_resumes_to_the_same_records_and_first_solved(tmp_path, monkeypatch):
    """The report's fitness keeps each trial's first solved generation in the checkpoint too;
    a resumed run equals the whole one, and a checkpoint of the other fitness is refused."""
    from jaxqueens.io import progress

    # test_same_seed_...'s c with the report's fitness (trial 0 solves at generation 7, before the
    # interrupt, the others do not); the refused "pairs" run is that c, compiled there
    kwargs = {
        "n": 10,
        "pop": 40,
        "generations": 30,
        "trials": 4,
        "seed": 3,
        "chunk": 7,
        "fitness": "report-diagonals-only",
        **GEN,
    }
    whole = ga.evolve(**kwargs)
    ck = tmp_path / "checkpoint.npz"
    real, seen = progress.Progress.update, []

    def update(self, done, extra=""):
        seen.append(done)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return real(self, done, extra)

    monkeypatch.setattr(progress.Progress, "update", update)
    part = ga.evolve(**kwargs, control=RunControl(checkpoint=ck))
    assert part.interrupted and ck.exists()
    monkeypatch.undo()
    resumed = ga.evolve(**kwargs, control=RunControl(checkpoint=ck, resume=True))
    for field in ("best", "avg", "worst", "evaluations", "solutions", "first_solved"):
        np.testing.assert_array_equal(getattr(resumed, field), getattr(whole, field))
    with pytest.raises(QueensError, match="config differ"):
        ga.evolve(**{**kwargs, "fitness": "pairs"}, control=RunControl(checkpoint=ck, resume=True))


def test_a_time_budget_stops_after_the_chunk_that_passes_it():
    """``seconds`` (what ``stats --solver ga --time`` gives each round) ends the run at the first
    chunk of generations past it; without it every generation runs."""
    kw = {"pop": 40, "trials": 4, "chunk": 7, **GEN}  # test_same_seed_...'s c: compiled there
    short = ga.evolve(10, generations=1000, seconds=1e-9, **kw)
    assert short.best.shape[0] - 1 == 7 and not short.interrupted
    assert ga.evolve(10, generations=30, **kw).best.shape[0] - 1 == 30
    with pytest.raises(QueensError, match="seconds"):
        ga.evolve(10, seconds=float("nan"))


# ------------------------------------- paper-scale runs: records in bounded memory (issue 26)
PAPER = {
    "n": 10,
    "pop": 12,
    "generations": 60,
    "trials": 7,
    "seed": 3,
    "chunk": 10,
}  # trials end both ways


class _Sink:
    """A history sink that keeps every chunk (and its position) in memory."""

    def __init__(self):
        self.rows, self.started, self.resumed = [], False, None

    def start(self):
        self.started = True

    def resume(self, position):
        self.resumed = position
        self.rows = self.rows[:position]

    def records(self, gen0, best, avg, worst, nevals):
        for k in range(len(best)):
            self.rows.append((gen0 + k, best[k].copy(), avg[k].copy(), worst[k].copy(), nevals[k]))

    def sync(self):
        return len(self.rows)


def test_summary_records_and_the_streamed_history_equal_the_in_memory_records():
    whole = ga.evolve(**PAPER)  # records="all": the [G+1, T] arrays
    sink = _Sink()
    lean = ga.evolve(**PAPER, records="summary", sink=sink)
    assert lean.records is None and sink.started
    with pytest.raises(AttributeError, match="records='all'"):
        lean.best  # noqa: B018 (the property raises)
    assert [r[0] for r in sink.rows] == list(range(61))
    for i, field in enumerate(("best", "avg", "worst", "evaluations")):
        np.testing.assert_array_equal(
            np.stack([r[i + 1] for r in sink.rows]), getattr(whole, field)
        )
    np.testing.assert_array_equal(lean.summary, whole.summary)
    np.testing.assert_array_equal(
        lean.summary, ga_run.summarise(whole.best, whole.avg, whole.worst, whole.evaluations)
    )
    cum = np.cumsum(whole.evaluations, axis=0)
    fs = whole.first_solved
    assert (fs >= 0).any() and (fs < 0).any()  # both kinds of trial in the check
    want_at_first = np.where(fs >= 0, cum[np.maximum(fs, 0), np.arange(7)], -1)
    hit = whole.best == 0
    for r in (whole, lean):
        np.testing.assert_array_equal(r.first_met, np.where(hit.any(0), hit.argmax(0), -1))
        np.testing.assert_array_equal(r.evals_total, cum[-1])
        np.testing.assert_array_equal(r.evals_at_first, want_at_first)
        np.testing.assert_array_equal(r.final_best, whole.best[-1])
        np.testing.assert_allclose(
            r.success_curve(), np.mean((fs >= 0) & (fs <= np.arange(61)[:, None]), axis=1)
        )
        np.testing.assert_array_equal(r.solutions, whole.solutions)
        assert r.evals_here == cum[-1].sum() - cum[0].sum() and r.sessions == 1


def test_resume_after_an_interrupt_gives_the_same_history_and_counts_only_its_own_work(
    tmp_path, monkeypatch
):
    from jaxqueens.io import progress

    whole = ga.evolve(**PAPER, records="summary", sink=(full := _Sink()))
    ck = tmp_path / "checkpoint.npz"
    real, seen = progress.Progress.update, []

    def update(self, done, extra=""):
        seen.append(done)
        if len(seen) == 2:  # after generation 20
            raise KeyboardInterrupt
        return real(self, done, extra)

    monkeypatch.setattr(progress.Progress, "update", update)
    sink = _Sink()
    part = ga.evolve(
        **PAPER,
        records="summary",
        sink=sink,
        control=RunControl(checkpoint=ck, checkpoint_every=1e9),
    )
    assert part.interrupted and part.generations == 20 and len(sink.rows) == 21
    sink.rows.append("written after the checkpoint: cut off on resume")
    monkeypatch.undo()
    resumed = ga.evolve(
        **PAPER, records="summary", sink=sink, control=RunControl(checkpoint=ck, resume=True)
    )
    assert sink.resumed == 21 and not resumed.interrupted
    for a, b in zip(sink.rows, full.rows, strict=True):
        assert a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:], strict=True))
    np.testing.assert_array_equal(resumed.summary, whole.summary)
    for field in ("first_met", "evals_total", "evals_at_first", "final_best", "solutions"):
        np.testing.assert_array_equal(getattr(resumed, field), getattr(whole, field))
    # throughput: this process ran generations 21..60 of 7 trials (2 evaluations each), and its
    # rate divides them by its own time; the total over both sessions is labelled apart
    assert resumed.evals_here == 40 * 7 * 2 and resumed.sessions == 2
    assert resumed.evals_per_s == resumed.evals_here / resumed.wall_s
    assert resumed.wall_total_s > resumed.wall_s
    assert resumed.evals_per_s_total == pytest.approx(60 * 7 * 2 / resumed.wall_total_s)


def test_the_checkpoint_does_not_grow_with_generations_x_trials(tmp_path, monkeypatch):
    """Every entry of a summary run's checkpoint but the per-generation statistics (and the
    distinct solutions found) has the same size at 20 and at 200 generations."""
    from jaxqueens.io import progress

    def stop(self, done, extra=""):
        if done == g:  # Ctrl-C once every generation has run (the run counts as interrupted)
            raise KeyboardInterrupt

    monkeypatch.setattr(progress.Progress, "update", stop)
    sizes = {}
    for g in (20, 200):
        ck = tmp_path / f"c{g}.npz"
        # chunks of 20 generations in both runs: one compiled program
        kw = {**PAPER, "n": 40, "trials": 50, "generations": g, "chunk": 20}
        assert ga.evolve(**kw, records="summary", control=RunControl(checkpoint=ck)).interrupted
        with np.load(ck) as z:
            sizes[g] = {k: z[k].shape for k in z.files if k != "header"}
    assert sizes[20]["summary"] == (21, len(ga_io.SUMMARY_STATS))
    assert sizes[200]["summary"] == (201, len(ga_io.SUMMARY_STATS))
    same = {k: v for k, v in sizes[20].items() if k not in ("summary", "sols")}
    assert same == {k: v for k, v in sizes[200].items() if k not in ("summary", "sols")}
    assert all(50 not in shape or 21 not in shape for shape in sizes[20].values())


def test_the_memory_estimate_refuses_an_impossible_run_and_admits_the_paper_run(monkeypatch):
    config, _ = setup(
        n=64,
        generations=20_000,
        trials=10_000,
        encoding="permutation",
        scheme="steady",
        crossover="cut",
        mutation="swap",
        pop=10,
        tournament=4,
        cxpb=0.2,
        mutpb=1.0,
    )
    chunk = ga_size.default_chunk(config, 10_000, 20_000)
    paper = ga_size.memory_estimate(config, 10_000, 20_000, chunk)
    assert sum(paper.values()) < 2 << 30  # under 2 GiB, and independent of the generations:
    assert sum(paper.values()) - sum(
        ga_size.memory_estimate(config, 10_000, 5_000, chunk).values()
    ) < (20 << 20)
    kept = ga_size.memory_estimate(config, 10_000, 20_000, chunk, records="all")
    assert kept["records"] > 10 * sum(paper.values())  # what records="all" would hold
    monkeypatch.setattr(memory, "available_memory", lambda: 4 << 30)
    with pytest.raises(QueensError, match=r"needs about .* fewer --trials"):
        ga.evolve(64, trials=10_000, generations=20_000, records="all")
    with pytest.raises(QueensError, match="needs about"):
        ga.evolve(64, trials=50_000_000, generations=1, records="summary")
    plans = []
    ga.evolve(8, pop=10, generations=3, records="summary", plan=plans.append)
    assert plans and plans[0]["available"] == 4 << 30 and "population" in plans[0]["memory"]


def _column_weighted(x):
    """A user fitness on permutations: diagonal conflicts weighted by column (0 for solutions)."""
    c = jnp.arange(x.shape[0])
    same = (jnp.abs(x[:, None] - x[None, :]) == jnp.abs(c[:, None] - c[None, :])) & (
        c[:, None] != c[None, :]
    )
    return jnp.sum(jnp.where(same, 1 + c[None, :], 0), dtype=jnp.int32)


def test_defect_evolve_refused_a_user_fitness_function(tmp_path):
    """``evolve(fitness=f)`` was refused ("use one of pairs, excess, ..."), though the kernel takes
    a function: now the driver runs it, checks its 0s (a fitness that scores every board 0 solves
    nothing it cannot show) and writes runs.csv and summary.json as for a built-in."""
    from jaxqueens.io import schema

    res = ga.evolve(8, pop=20, generations=150, trials=2, fitness=_column_weighted, seed=1)
    assert res.config.fitness is _column_weighted and (res.first_solved >= 0).all()
    assert len(res.solutions) and checker.are_solutions(res.solutions.astype(np.int64)).all()
    written = ga_io.write_outputs(res, tmp_path, ga_io.summary(res))
    runs = (tmp_path / schema.FILENAME).read_text().splitlines()
    assert tmp_path / schema.FILENAME in written and len(runs) == 1 + 2
    assert "_column_weighted" in (tmp_path / "summary.json").read_text()
    zero = ga.evolve(6, pop=10, generations=1, trials=2, fitness=lambda x: jnp.int32(0))
    assert len(zero.score_met) and (zero.first_score_met == 0).all()
    assert checker.are_solutions(zero.solutions.astype(np.int64)).all()
    with pytest.raises(QueensError, match="integer score"):
        ga.evolve(6, pop=10, generations=1, fitness=lambda x: jnp.float32(0.5))


def test_until_solved_ends_with_the_slowest_trials_first_solution():
    """compare's GA: the lockstep trials stop after the chunk in which the last one solved, and
    each trial's first solution is the one the full run finds (trials do not see each other)."""
    kwargs = {"n": 8, "pop": 10, "generations": 3000, "trials": 4, "seed": 3, "chunk": 50}
    full = ga.evolve(**kwargs, records="summary")
    early = ga.evolve(**kwargs, records="summary", until_solved=True)
    assert (full.first_solved >= 0).all() and full.generations == 3000
    last = int(full.first_solved.max())
    assert early.generations == -(-max(last, 1) // 50) * 50 < 3000
    np.testing.assert_array_equal(early.first_solved, full.first_solved)
    np.testing.assert_array_equal(early.evals_at_first, full.evals_at_first)
    assert early.evals_total.sum() < full.evals_total.sum()


def test_evolve_defaults_are_the_settings_defaults():
    """`evolve`'s keyword defaults are the settings classes' (`GARun`, `SteadySettings`), which
    the CLI reads before JAX is imported; None means the preset's, or (n) `GARun.n`."""
    import dataclasses
    import inspect

    fields = [f for c in (settings.GARun, settings.SteadySettings) for f in dataclasses.fields(c)]
    want = {f.name: f.default for f in fields if f.default is not dataclasses.MISSING}
    given = {k: p.default for k, p in inspect.signature(ga.evolve).parameters.items()}
    shown = {k: v for k, v in given.items() if k in want and v is not None}
    assert set(shown) == {
        "generations",
        "trials",
        "encoding",
        "scheme",
        "islands",
        "fitness",
        "preset",
    }
    assert shown == {k: want[k] for k in shown}
    assert ga.evolve(generations=0).config.n == settings.GARun.n
