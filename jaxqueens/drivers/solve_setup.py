"""The settings of `jaxqueens solve`, JAX-free: how many chains, which path, the defaults a path
fills in, and the options a path refuses.

`solve_path` picks the path; `batched_setting` (the batched path: a `SolveSettings`, the search
settings of `jaxqueens.solve`, `solve_settings` filling the problem's defaults) or `solve_setting`
(the others) checks the options given for it once, before JAX is imported.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from jaxqueens.core import arguments
from jaxqueens.drivers import settings
from jaxqueens.errors import QueensError
from jaxqueens.solvers.variants import INITS, MAX_BATCHED_N, MOVES, default_max_steps, solver_name

# --- solve: how many chains, which path, how large a kernel call ---------------------------------

DEFAULT_CHAIN_WORK = 4e8
"""Default number of chains: `DEFAULT_CHAIN_WORK / n^2` (at most 1000, at least 1), about a
quarter second of batched search; it falls smoothly with n (1000 up to n = 632, 16 at n = 5000,
1 from n = 20,000), so no n doubles or halves the job of its neighbour."""

BATCHED_S_PER_QUEEN2 = 6.1e-10
"""Batched min-conflicts, wall seconds per chain per n^2 on the reference 2-core CPU (2 devices)."""
LARGE_S_PER_CHAIN = 0.02
LARGE_S_PER_QUEEN = 1e-6
"""Large-n path, wall seconds per chain: `LARGE_S_PER_CHAIN + LARGE_S_PER_QUEEN * n`, one chain
after another (on the reference CPU)."""

CALL_WORK = 1 << 30
"""Bound on the queen-steps (steps x n) of one attempt of every chain of a kernel call, per
device (about a second on the reference CPU): `minconflicts.default_chunk` keeps
`chunk * max_steps * n` under `devices * CALL_WORK`, so the progress line ticks within a second
or two even when no chain has solved yet."""


def default_chains(n: int) -> int:
    """Chains a run on an n-board solves when no budget is given (`DEFAULT_CHAIN_WORK`)."""
    return int(min(1000, max(1, DEFAULT_CHAIN_WORK // (n * n))))


def predicted_seconds(n: int, chains: int, path: str, devices: int = 2) -> float:
    """Predicted wall seconds of `chains` chains on `path` ("batched" or "large") over
    `devices` local devices, from the per-chain costs on the reference CPU (compilation, about
    equal, left out)."""
    if path == "batched":
        return chains * BATCHED_S_PER_QUEEN2 * n * n * 2 / max(1, devices)
    return chains * (LARGE_S_PER_CHAIN + LARGE_S_PER_QUEEN * n)


def auto_path(
    n: int,
    chains: int | None,
    solutions: int | None = None,
    seconds: float | None = None,
    devices: int = 2,
) -> str:
    """The path `--mode auto` takes: "large" when it is predicted faster for `chains` chains
    (None: `default_chains`) and the run needs nothing only the batched path has (a `solutions`
    or `seconds` budget; None: none), or when n is beyond the batched kernel; else "batched".
    With the reference CPU's costs the large path wins from n ~ 5,900 on."""
    if n > MAX_BATCHED_N:
        return "large"
    if solutions is not None or seconds is not None or n < 4:
        return "batched"
    k = chains if chains is not None else default_chains(n)
    faster = predicted_seconds(n, k, "large", devices) < predicted_seconds(n, k, "batched", devices)
    return "large" if faster else "batched"


# --- solve --instance -----------------------------------------------------------------------------


def check_instance_n(n: int) -> None:
    """Local search on a constrained instance runs on the batched kernel only (the large-n path
    has no masks): an instance beyond its limit is refused in one line, with no advice to switch
    paths (`--mode batched` and `--mode large` both refuse it)."""
    if n > MAX_BATCHED_N:
        raise QueensError(
            f"the instance has n = {n:,}, but local search on an instance runs on the batched "
            f"kernel, which takes n <= {MAX_BATCHED_N:,} (the large-n path takes no instance); "
            "give a smaller instance"
        )


def check_solvable(n: int) -> None:
    """A board size with a solution for the searches that look for one (min-conflicts, the
    large-n path): n = 2 and 3 have none."""
    if n in (2, 3):
        raise QueensError(
            f"n = {n} has no solution (N-Queens is solvable for n = 1 and every n >= 4)"
        )


# --- solve: min-conflicts (batched, large-n) and backtracking ----------------------------------


@dataclasses.dataclass(frozen=True, kw_only=True)
class SolveSettings:
    """The search settings of a min-conflicts run (`jaxqueens.solve`), checked once (frozen;
    the checked values replace those given). `solve_settings` fills in the defaults that depend
    on the problem (`max_steps`, `max_restarts`)."""

    init: str = settings.flag(
        "initial boards (default permutation; greedy: the CP468 column-by-column "
        "greedy; large path: qs4 (default) or permutation)",
        default="permutation",
        choices=INITS,
    )
    tabu: int = settings.flag(
        "CP468 plateau memory: squares a queen may not revisit during one local "
        "minimum (0 = off, the default)",
        default=0,
    )
    max_steps: int = settings.flag(
        "steps per attempt before a restart, every attempt alike (default: the measured "
        "restart period min(n^2/2, max(500, 2n)), e.g. 32 at n = 8, 500 at n = 32, 2n from "
        "n = 250; max(4000, 2n) with --toroidal or --instance; --move cisc352: "
        "ceil(2n / log2 n)); on the large path: swap attempts in all",
    )
    max_restarts: int = settings.flag(
        "restarts per chain before it gives up (default 1,000,000; 0: the CP468 "
        "give-up mode, one attempt of --maxsteps); --chains then counts chains run",
        default=1_000_000,
        metavar="R",
    )
    move: str = settings.flag(
        "row choice: minconflicts (default) or cisc352 (a conflict-free row, else "
        "up to 100 random rows for one with 1 conflict, else the full scan; "
        "defaults --init qs4, --maxsteps ceil(2n / log2 n), --max-restarts 99)",
        default="minconflicts",
        choices=MOVES,
    )
    seed: int = 0  # chain i uses `fold_in(key(seed), i)`
    batch: int | None = None  # chains per kernel call (None: sized from n and the budget)
    trace_steps: int = 0  # steps of chain 0 traced for the plots (0: none)

    def __post_init__(self) -> None:
        object.__setattr__(self, "seed", arguments.seed(self.seed, "seed"))
        object.__setattr__(self, "batch", arguments.integer(self.batch, "batch", 1, optional=True))
        for name, lo in (("max_steps", 1), ("tabu", 0), ("max_restarts", 0), ("trace_steps", 0)):
            object.__setattr__(self, name, arguments.integer(getattr(self, name), name, lo))
        arguments.choice(self.init, "init", INITS)
        arguments.choice(self.move, "move", MOVES)

    def search(self) -> dict[str, Any]:
        """The settings the chains depend on (not `batch`, `trace_steps`), by name, in order:
        what the summary and a checkpoint record."""
        return {
            k: v for k, v in dataclasses.asdict(self).items() if k not in ("batch", "trace_steps")
        }

    @property
    def name(self) -> str:
        """The solver's name in the outputs (`solver_name`)."""
        return solver_name("minconflicts", init=self.init, tabu=self.tabu, move=self.move)


INSTANCE_MAX_RESTARTS = 99
"""`--instance`: default restarts per chain (an instance may have no solution: a bounded job)."""
SOLVE_DEFAULTS: dict[str, Any] = {
    f.name: f.default
    for f in dataclasses.fields(SolveSettings)
    if f.name in ("init", "tabu", "seed", "max_restarts", "move")
}
"""`solve`: defaults of the options that only some paths use (the parser leaves them None);
`--maxsteps` depends on n and the path (`batched_setting`)."""


def solve_settings(n: int, *, plain: bool = True, instance: bool = False, **given) -> SolveSettings:
    """The checked settings of a min-conflicts run on an n-board, with the defaults its problem
    takes: `given` holds fields of `SolveSettings`; `max_steps` None or left out takes
    `default_max_steps` (the classic period unless `plain`: toroidal or constrained boards),
    `max_restarts` 1,000,000 (`INSTANCE_MAX_RESTARTS` for an `instance`)."""
    if given.get("max_restarts") is None:
        given["max_restarts"] = INSTANCE_MAX_RESTARTS if instance else SolveSettings.max_restarts
    if given.get("max_steps") is None:
        given["max_steps"] = default_max_steps(n, plain=plain)
    return SolveSettings(**given)


INSTANCE_CHAINS = 100
"""`--instance`: default chains run."""


def cisc352_defaults(n: int) -> dict[str, Any]:
    """`--move cisc352`'s defaults `init`, `max_restarts` and `max_steps`: QS4 boards (as the
    CISC352 program builds them), a cap of 100 attempts per chain and the program's
    size-dependent step limit, `ceil(2 n / log2 n)`, at least 1."""
    steps = max(1, math.ceil(2 * n / math.log2(max(n, 2))))
    return {"init": "qs4", "max_restarts": 99, "max_steps": steps}


_BACKTRACK_UNUSED = (
    "resume",
    "solutions",
    "time",
    "maxsteps",
    "init",
    "tabu",
    "batch",
    "file",
    "chains",
    "seed",
    "plot",
    "max_restarts",
    "move",
    "show_initial",
    "instance",
    "toroidal",
)
SOLVE_UNUSED: dict[str, tuple[str, ...]] = {
    "large": tuple(
        k for k in _BACKTRACK_UNUSED if k not in ("maxsteps", "init", "chains", "seed", "plot")
    ),
    "backtrack": _BACKTRACK_UNUSED,
}
"""`solve`: options a path does not use; given anyway, they are refused (never ignored
silently)."""


def _given(value) -> bool:
    """An option the user gave (0 counts: `--max-restarts 0` is given; None and an unset flag
    are not)."""
    return value is not None and value is not False


def solve_path(n: int, given: Mapping[str, Any]) -> str:
    """Which path `solve` takes: "backtrack" (`method`), "large" (`mode` large, or auto
    when `auto_path` predicts it faster for the chains asked for and no option only the batched
    path has is given) or "batched"; `given`: the options by their command-line names
    (`maxsteps`, `max_restarts`, ...), None when not given."""
    if given.get("method") == "backtrack":
        return "backtrack"
    if given.get("instance"):
        check_instance_n(n)  # the batched kernel's limit: no path takes a larger one
    mode = given.get("mode") or "auto"
    if mode != "auto":
        return mode
    batched_only = [name for name in SOLVE_UNUSED["large"] if _given(given.get(name))]
    if batched_only and n <= MAX_BATCHED_N:
        return "batched"
    return auto_path(n, given.get("chains"), given.get("solutions"), given.get("time"))


def _refuse(given: Mapping[str, Any], path: str) -> None:
    """Refuse a count out of range or an option `path` does not use: one line, with the fix
    (`batch` and `tabu` on the batched path: its `SolveSettings` checks them)."""
    lows = {"chains": 1, "maxsteps": 1, "max_restarts": 0}
    if path != "batched":
        lows.update(batch=1, tabu=0)
    for key, low in lows.items():  # (the keys are the command line's names)
        value = given.get(key)
        if value is not None and value < low:
            raise QueensError(f"{arguments.flag_of(key)} must be at least {low}, got {value}")
    unused = [name for name in SOLVE_UNUSED.get(path, ()) if _given(given.get(name))]
    if unused:
        flag = arguments.flag_of(unused[0])
        if path == "backtrack":
            raise QueensError(
                f"{flag} is not used by --method backtrack (one first solution from "
                f"an empty board); drop {flag}"
            )
        raise QueensError(
            f"{flag} is not used by the large-n path (--mode large, "
            f"or auto beyond the batched limit); drop it or give --mode batched"
        )
    if path == "large" and given.get("init") not in (None, "qs4", "permutation"):
        raise QueensError(
            f"--init {given.get('init')} is not available on the large-n path (it needs a "
            "permutation in O(n)); use --init qs4 or permutation, or --mode batched"
        )


def solve_setting(given: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The settings of a `solve` run on `path` "large" or "backtrack" (`solve_path`; the
    batched path: `batched_setting`), checked before any work: `given` (the options by their
    command-line names, None: not given) with `init`, `tabu`, `seed`, `max_restarts` and `move`
    filled in (the large path keeps `init` and `maxsteps` None: QS4, no step limit)."""
    _refuse(given, path)
    out = dict(given)
    for name, value in SOLVE_DEFAULTS.items():
        if out.get(name) is None and not (path == "large" and name == "init"):
            out[name] = value
    return out


def batched_setting(n: int, given: Mapping[str, Any]) -> tuple[SolveSettings, bool]:
    """`(settings, capped)` of a batched `solve` run, checked once before any work, with the
    command's defaults (`--move cisc352`: `cisc352_defaults`); `given`: the options by their
    command-line names (None: not given); `capped`: chains are run rather than awaited, a
    bounded job (`--max-restarts` given, or an instance, which may have no solution)."""
    _refuse(given, "batched")
    keys = ("maxsteps", "init", "tabu", "max_restarts", "move", "seed", "batch")
    fields = {
        k.replace("maxsteps", "max_steps"): given[k] for k in keys if given.get(k) is not None
    }
    instance = bool(given.get("instance"))
    if fields.get("move") == "cisc352":
        fields = {**cisc352_defaults(n), **fields}
    plain = not (given.get("toroidal") or instance)
    fields.setdefault("max_steps", default_max_steps(n, plain=plain))
    if given.get("plot"):
        fields["trace_steps"] = min(fields["max_steps"], 100_000)  # chain 0 for the plots
    capped = given.get("max_restarts") is not None or instance
    return solve_settings(n, plain=plain, instance=instance, **fields), capped
