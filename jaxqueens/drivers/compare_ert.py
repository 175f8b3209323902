"""How `compare` ranks its solvers: expected run time (ERT), its bootstrap CI, the recommendation.

The measures of the stochastic local search literature (Hoos & Stuetzle, *Stochastic Local
Search*, 2004, ch. 4) over one `SolverRun` per solver: the expected run time with its bootstrap
CI (`ert_ci`) and the ranking by expected seconds per solution (`recommend`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxqueens.drivers import settings
from jaxqueens.drivers import stats as solstats

BOOTSTRAP = 2000  # bootstrap resamples of the recommendation's CI
CONFIDENCE = settings.CONFIDENCE
VERDICT = ("runner_up", "margin", "ci", "repeat_spread", "significant", "significant_by", "note")


@dataclasses.dataclass
class SolverRun:
    """One solver's chains, censored at the step budget (host arrays)."""

    name: str  #: the solver's name (`SOLVERS`)
    family: str  #: "minconflicts", "anneal" or "ga"
    options: dict  #: its effective settings
    solved: np.ndarray  #: [K] bool: solved within the budget
    steps: np.ndarray  #: [K] int64 steps to solution (solved) or spent (unsolved, <= budget)
    seconds: np.ndarray  #: [K] float64 seconds to solution (solved) or spent
    wall_s: float  #: the solver's kernel time as run, compilation excluded
    compile_s: float  #: compilation seconds
    stats: solstats.StatsResult  #: distinct, fundamental, chi-square (one sample per solved chain)
    budget: int | None = None  #: the solver's step budget per chain (None: the most steps spent)
    restarts: np.ndarray | None = None  #: [K] int64 (min-conflicts); None: never restarts
    best_pairs: np.ndarray | None = None  #: [K] float64 best board's attacking pairs, NaN: unknown
    repeat_ert_s: tuple[float, ...] = ()  #: [R] ERT of each timed repeat (`seconds`: their mean)

    @property
    def steps_budget(self) -> int:
        """The step budget per chain the runs are censored at."""
        return int(self.budget if self.budget is not None else self.steps.max(initial=0))

    @property
    def ert_spread(self) -> tuple[float, float] | None:
        """(lowest, highest) ERT over the timed repeats; None with one repeat."""
        if len(self.repeat_ert_s) < 2:
            return None
        return min(self.repeat_ert_s), max(self.repeat_ert_s)

    def same_runs(self, other: SolverRun) -> bool:
        """Every chain ran the same: the same outcome, steps, restarts and best board's
        attacking pairs at the same budget (one method under two names; only seconds differ)."""
        same = lambda a, b: (
            (a is None) == (b is None)
            and (a is None or np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
        )
        return (
            self.steps_budget == other.steps_budget
            and self.solved.shape == other.solved.shape
            and all(
                same(getattr(self, f), getattr(other, f))
                for f in ("solved", "steps", "restarts", "best_pairs")
            )
        )

    @property
    def ert_s(self) -> float:
        """Expected seconds per solution: all chains' seconds over the chains solved (inf if
        none)."""
        return _ert(self.seconds, self.solved)

    @property
    def ert_steps(self) -> float:
        """Expected steps per solution (Hoos & Stuetzle's ERT in steps, machine-independent):
        all chains' steps over the chains solved (inf if none)."""
        return _ert(self.steps, self.solved)


def _ert(values: np.ndarray, solved: np.ndarray) -> float:
    hits = int(solved.sum())
    return float(values.sum()) / hits if hits else float("inf")


def _boot_ert(values: np.ndarray, solved: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """ERT of each bootstrap resample `idx` [B, K]: the sum of `values` over the chains
    solved (inf where a resample solved none)."""
    hits = solved[idx].sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(hits > 0, values[idx].sum(axis=1) / np.maximum(hits, 1), np.inf)


def _percentiles(values: np.ndarray, confidence: float) -> tuple[float, float]:
    ordered = np.sort(values)
    tail = (1 - confidence) / 2
    pick = lambda q: float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])
    return pick(tail), pick(1 - tail)


def ert_ratio_ci(
    a: SolverRun,
    b: SolverRun,
    seed: int,
    resamples: int = BOOTSTRAP,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile bootstrap CI `(low, high)` of `ERT(b) / ERT(a)`, `a` the faster solver, chains
    resampled within each solver; high is inf when `b` solved nothing in some resamples."""
    rng = np.random.default_rng([seed, 0xC0])
    ea, eb = (
        _boot_ert(r.seconds, r.solved, rng.integers(0, r.solved.size, (resamples, r.solved.size)))
        for r in (a, b)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(np.isinf(ea) & np.isinf(eb), np.nan, eb / ea)
    return _percentiles(np.where(np.isnan(ratio), 1.0, ratio), confidence)


def ert_ci(
    run: SolverRun,
    seed: int,
    resamples: int = BOOTSTRAP,
    confidence: float = CONFIDENCE,
) -> dict[str, Any]:
    """ERT in seconds and in steps with percentile bootstrap CIs over the chains: `ert_s`,
    `ert_s_ci`, `ert_steps`, `ert_steps_ci` and `ert_note`, strict JSON (`summary.json`'s keys); a
    figure or bound that does not exist is None, with the reason in `ert_note`."""
    solved, k = int(run.solved.sum()), run.solved.size
    keys = ("ert_s", "ert_s_ci", "ert_steps", "ert_steps_ci", "ert_note")
    doc: dict[str, Any] = dict.fromkeys(keys)
    if not solved:
        doc["ert_note"] = not_solved(run)
        return doc
    rng = np.random.default_rng([seed, 0xE7, k])
    idx = rng.integers(0, k, size=(resamples, k))
    for key, values, ert in (
        ("ert_s", run.seconds, run.ert_s),
        ("ert_steps", run.steps.astype(np.float64), run.ert_steps),
    ):
        lo, hi = _percentiles(_boot_ert(values, run.solved, idx), confidence)
        doc[key] = ert
        doc[f"{key}_ci"] = [lo, hi if np.isfinite(hi) else None]
        if not np.isfinite(hi):
            doc["ert_note"] = (
                f"no upper bound: more than {(1 - confidence) / 2:.1%} of the resamples of "
                f"{solved} solved in {k} chains solved none"
            )
    return doc


def not_solved(run: SolverRun) -> str:
    """The words for a solver that solved no chain: "not solved (0 of K chains within B steps)"."""
    return f"not solved (0 of {run.solved.size:,} chains within {run.steps_budget:,} steps)"


def _ratio_words(x: float) -> str:
    return f"{x:.2f}" if np.isfinite(x) else "unbounded"


def recommend(runs: list[SolverRun], n: int, steps: int, seed: int) -> dict:
    """The fastest solver by expected seconds per solution (ERT), its margin over the runner-up (ERT
    ratio) and a percentile bootstrap CI of that ratio, with a line saying so in words without
    infinities (a solver that solved nothing is "not solved", an unbounded end of the CI
    "unbounded").

    A solver whose chains ran exactly as a faster one's (`SolverRun.same_runs`: one method under two
    names) is not ranked apart from it. With several timed repeats the difference is significant
    only when the bootstrap CI excludes 1 and the two solvers' ERTs over the repeats do not overlap;
    with one repeat, by the bootstrap alone (it covers the chain-to-chain variation, not the timing
    noise between runs). `steps` is the step budget per chain, `seed` the bootstrap's. Returns
    `summary.json`'s `recommendation` document (strict JSON: None with a reason where a figure does
    not exist), its `line` included."""
    ranked = sorted(runs, key=lambda r: (r.ert_s, r.name))
    solving: list[SolverRun] = []
    same_runs: dict[str, str] = {}  # solver -> the faster solver whose chains it ran exactly
    for r in (r for r in ranked if np.isfinite(r.ert_s)):
        twin = next((s for s in solving if r.same_runs(s)), None)
        if twin is None:
            solving.append(r)
        else:
            same_runs[r.name] = twin.name
    unsolved = [r for r in ranked if not np.isfinite(r.ert_s)]
    repeats = min((len(r.repeat_ert_s) for r in runs), default=1) or 1
    doc = {
        "metric": "expected seconds per solution (ERT: seconds of all chains / chains solved)",
        "ci_method": f"percentile bootstrap over chains, {BOOTSTRAP} resamples, "
        f"{CONFIDENCE:.0%}, of ERT(runner-up) / ERT(fastest)",
        "ranking": [
            {
                "solver": r.name,
                "ert_s": r.ert_s if np.isfinite(r.ert_s) else None,
                "solved": int(r.solved.sum()),
                "note": None if np.isfinite(r.ert_s) else not_solved(r),
            }
            for r in ranked
        ],
        "not_solved": [r.name for r in unsolved],
        "same_runs": same_runs,
        "repeats": repeats,
        "solver": solving[0].name if solving else None,
        **dict.fromkeys(VERDICT),  # filled in below where they exist
    }
    tail = _tail_words(unsolved, same_runs)
    if not solving:
        doc["note"] = "no solver solved a chain: no ERT, no ranking"
        doc["line"] = (
            f"no solver solved a chain of n = {n} within its budget ({steps:,} steps per chain "
            "unless a solver's own steps say otherwise); raise --steps or the solvers' steps"
        )
        return doc
    own = [
        f"{r.name} {r.steps_budget:,}" for r in runs if r.budget is not None and r.budget != steps
    ]
    budget = f"{steps:,} steps per chain" + (f" (own budgets: {', '.join(own)})" if own else "")
    if len(solving) == 1:
        return _only_solver(doc, solving[0], f"n = {n}, {budget}", same_runs, unsolved, tail)
    return _ranked_pair(doc, solving[0], solving[1], f"n = {n}, {budget}", seed, repeats, tail)


def _tail_words(unsolved: list[SolverRun], same_runs: dict[str, str]) -> str:
    """The end of the recommendation's line: the solvers that ran a faster one's chains and
    those that solved nothing."""
    words = (
        f"; not solved: {', '.join(r.name for r in unsolved)} (no chain within its budget)"
        if unsolved
        else ""
    )
    if same_runs:
        words = (
            "; "
            + "; ".join(
                f"{a} ran the same chains as {b} (every chain's steps and outcome equal: one "
                "method under two names, not ranked apart on timing noise)"
                for a, b in same_runs.items()
            )
            + words
        )
    return words


def _only_solver(
    doc: dict[str, Any],
    best: SolverRun,
    where: str,
    same_runs: dict[str, str],
    unsolved: list[SolverRun],
    tail: str,
) -> dict[str, Any]:
    """`doc` completed when one solver (or one method under several names) solved chains."""
    ms = f"{best.ert_s * 1e3:.3g} ms per solution"
    if same_runs and not unsolved:
        doc["note"] = "the solvers ran identical chains: no ranking"
        doc["line"] = f"not ranked for {where}: {ms}{tail}"
        return doc
    doc["note"] = "no runner-up solved a chain: no ratio" if unsolved else "only one solver was run"
    doc["line"] = (
        f"recommended for {where}: {best.name}, {ms}, the only "
        f"{'method' if same_runs else 'solver'} that solved a chain{tail}"
        if unsolved
        else f"only {best.name} was run: {ms} at {where}"
    )
    return doc


def _ranked_pair(
    doc: dict[str, Any],
    best: SolverRun,
    second: SolverRun,
    where: str,
    seed: int,
    repeats: int,
    tail: str,
) -> dict[str, Any]:
    """`doc` completed with the fastest solver's margin over the runner-up and its CI."""
    margin = second.ert_s / best.ert_s
    lo, hi = ert_ratio_ci(best, second, seed)
    spread = (best.ert_spread, second.ert_spread)
    by_repeats = None  # one repeat: the timing noise between runs is not measured
    if spread[0] is not None and spread[1] is not None:
        by_repeats = spread[0][1] < spread[1][0]  # the best's slowest repeat beats all the other's
    significant = lo > 1.0 and by_repeats is not False
    doc.update(
        runner_up=second.name,
        margin=margin,
        ci=[lo, hi if np.isfinite(hi) else None],
        repeat_spread={
            r.name: None if s is None else list(s)
            for r, s in zip((best, second), spread, strict=True)
        },
        significant=significant,
        significant_by={"bootstrap": lo > 1.0, "repeats": by_repeats},
    )
    if not np.isfinite(hi):
        doc["note"] = f"the CI has no upper bound: {second.name} solved no chain in some resamples"
    if by_repeats is None:
        basis = "; one timed repeat: timing noise not measured, --repeats 2 or more"
    else:
        basis = f"; the ERTs of {repeats} repeats {'do not overlap' if by_repeats else 'overlap'}"
    doc["line"] = (
        f"recommended for {where}: {best.name}, "
        f"{best.ert_s * 1e3:.3g} ms per solution, {margin:.2f}x faster than "
        f"{second.name} ({CONFIDENCE:.0%} bootstrap CI of the ratio {_ratio_words(lo)} to "
        f"{_ratio_words(hi)}{basis}{'' if significant else '; not a clear difference'})"
        f"{tail}"
    )
    return doc
