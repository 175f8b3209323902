"""Figures of `jaxqueens compare`: one line per solver (host-only; arrays in, files out).

The house style of `jaxqueens.plots.base`: each solver keeps its style in every figure, told
apart by line style and marker as well as colour. `rtd_steps` and `rtd_seconds` are the run-time
distributions (Hoos & Stuetzle: fraction of all chains solved by t, censored at the budget),
`steps_ecdf` and `seconds_ecdf` the same conditional on success, and `ert` the expected seconds
per solution (bars, log scale, with the bootstrap CI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from jaxqueens.plots.base import (
    RATE_LIMITS,
    figure,
    finish,
    rate_band,
    solver_hatch,
    solver_style,
)

FIGURES = ("rtd_steps", "rtd_seconds", "steps_ecdf", "seconds_ecdf", "ert")  # file stems


def _lines(
    curves: dict,
    which: str,
    path: Path,
    title: str,
    xlabel: str,
    ylabel: str,
    *,
    unsolved: set,
    chains: int | None,
    fmt: str | None,
    dpi: int | None,
) -> Path:
    fig, ax = figure(7.5, 4.5, dpi)
    positive = False
    for solver, c in curves.items():
        x, y = (np.asarray(v, dtype=np.float64) for v in c[which])
        none = solver in unsolved or not x.size
        label = f"{solver} (not solved)" if none else solver
        if which == "rtd_seconds":  # a log axis: the 0 point is left out
            keep = x > 0
            x, y = x[keep], y[keep]
        style = solver_style(solver)
        if none and not x.size:
            ax.plot([], [], label=label, **style)  # (legend entry only)
            continue
        if chains and which.startswith("rtd_"):  # a share of all chains: its 95% interval
            rate_band(ax, x, y, chains, style["color"])
        ax.plot(x, y, drawstyle="steps-post", label=label, **style)
        positive |= bool(x.size and (x > 0).any())
    if positive:
        if which in ("seconds_ecdf", "rtd_seconds"):
            ax.set_xscale("log")
        else:  # steps may be 0 (a chain whose first board is a solution)
            ax.set_xscale("symlog", linthresh=1)
    ax.legend(fontsize=7, ncol=2)
    return finish(fig, ax, path, title, xlabel, ylabel, ylim=RATE_LIMITS, fmt=fmt, dpi=dpi)


def _error_bars(ax: Any, names: list, values: np.ndarray, solved: np.ndarray, ci: dict) -> list:
    """Draw each solved solver's CI (ms) as an error bar; the bars whose upper end is open."""
    open_top = []
    for i, s in enumerate(names):
        bounds = ci.get(s)
        if not solved[i] or not bounds or bounds[0] is None:
            continue
        lo = bounds[0] * 1e3
        hi = bounds[1] * 1e3 if bounds[1] is not None else None
        top = hi if hi is not None else values[i]
        ax.errorbar(
            i,
            values[i],
            yerr=[[max(0.0, values[i] - lo)], [max(0.0, top - values[i])]],
            color="black",
            capsize=3,
            lw=1,
        )
        if hi is None:
            open_top.append(i)
    return open_top


def ert_bars(
    ert: dict,
    path: Path,
    title: str,
    *,
    ci: dict | None = None,
    fmt: str | None = None,
    dpi: int | None = None,
) -> Path:
    """Expected seconds per solution per solver (`ert`; None: nothing solved), with its CI as error
    bars (`ci`: solver -> `[low, high]`, high None: no upper bound, drawn as an arrow); a solver
    that solved nothing gets a labelled "not solved" slot. `path` is the file without its suffix,
    `fmt` the figure format (None: png). Returns the file written."""
    fig, ax = figure(7.5, 4.0, dpi)
    names = list(ert)
    values = np.array([ert[s] if ert[s] is not None else np.nan for s in names]) * 1e3
    solved = np.isfinite(values)
    ax.bar(
        range(len(names)),
        np.where(solved, values, 0.0),
        color=[solver_style(s)["color"] for s in names],
        hatch=None,
        edgecolor="black",
        linewidth=0.6,
    )
    for s, patch in zip(names, ax.patches, strict=True):
        patch.set_hatch(solver_hatch(s))
    open_top = _error_bars(ax, names, values, solved, ci or {})
    finite = values[solved & (values > 0)]
    if finite.size:
        ax.set_yscale("log")
        ax.set_ylim(finite.min() / 3, finite.max() * 10)
    bottom = ax.get_ylim()[0]
    for k in np.flatnonzero(~solved):
        ax.text(
            int(k),
            bottom * 1.15 if finite.size else 0.02,
            "not solved",
            ha="center",
            va="bottom",
            rotation=90,
            fontsize=8,
            color="0.25",
            transform=ax.transData if finite.size else ax.get_xaxis_transform(),
        )
    for i in open_top:
        ax.annotate(
            "",
            xy=(i, ax.get_ylim()[1]),
            xytext=(i, values[i]),
            arrowprops={"arrowstyle": "->", "color": "black", "lw": 1},
        )
    labels = [s if solved[i] else f"{s}\n(not solved)" for i, s in enumerate(names)]
    ax.set_xticks(range(len(names)), labels, rotation=30, ha="right", fontsize=8)
    return finish(fig, ax, path, title, None, "ms per solution (ERT, 95% CI)", fmt=fmt, dpi=dpi)


def budget_text(n: int, budget: int, budgets: dict | None = None) -> str:
    """The run a title claims: board size `n` and the run's steps per chain `budget`, and every
    solver whose own step budget (`budgets`; None: every solver runs the run's) differs from it, by
    name: e.g. `n = 8, 10,000 steps per chain; sa: 50,000`."""
    own = {s: b for s, b in (budgets or {}).items() if b != budget}
    text = f"n = {n}, {budget:,} steps per chain"
    if own:
        text += "; " + ", ".join(f"{s}: {b:,}" for s, b in own.items())
    return text


TITLE_WIDTH = 75
"""Characters a title keeps on one line; a longer one puts what it claims on a second."""


def _title(kind: str, what: str) -> str:
    title = f"{kind} ({what})"
    return title if len(title) <= TITLE_WIDTH else f"{kind}\n({what})"


SOLVED_SHARE = "fraction of solved chains"

LINE_FIGURES = (
    ("rtd_steps", "RTD in steps, all chains", "steps", None),
    ("rtd_seconds", "RTD in seconds, all chains", "seconds", None),
    ("steps_ecdf", "RTD in steps, solved chains only", "steps to solution", SOLVED_SHARE),
    ("seconds_ecdf", "RTD in seconds, solved chains only", "seconds to solution", SOLVED_SHARE),
)
"""The line figures of `write_plots`: curve, title, x label, y label (None: the share of all
chains)."""


def write_plots(res: Any, out: Path, fmt: str | None = None, dpi: int | None = None) -> list[Path]:
    """Every figure of the compare result `res` (`FIGURES`) in folder `out`, as `fmt` (png, svg
    or pdf; None: png) at `dpi` (None: the default).

    `res` is read duck-typed: `n`, `steps` (the run's steps per chain), `chains` (None: unknown;
    the RTDs of all chains then have no interval), `curves` (solver -> `rtd_steps`,
    `rtd_seconds`, `steps_ecdf`, `seconds_ecdf`: `(x [P], y [P])` each) and the summary's
    `steps_budgets` (titles name the solvers' own) and `per_solver` records (`solved`, 0: labelled
    not solved; `ert_s`, None: nothing solved; `ert_s_ci`, high None: no upper bound).
    Returns the files written, in the order of `FIGURES`.
    """
    per = res.summary["per_solver"]
    what = budget_text(res.n, res.steps, res.summary["steps_budgets"])
    unsolved = {p["solver"] for p in per if not p["solved"]}
    common: dict[str, Any] = {"unsolved": unsolved, "chains": res.chains, "fmt": fmt, "dpi": dpi}
    share = "fraction of all chains solved" + (" (95% Wilson CI)" if res.chains else "")
    files = [
        _lines(res.curves, name, out / name, _title(title, what), x, y or share, **common)
        for name, title, x, y in LINE_FIGURES
    ]
    ert, ci = ({p["solver"]: p[key] for p in per} for key in ("ert_s", "ert_s_ci"))
    ert_title = _title("expected time per solution", what)
    return [*files, ert_bars(ert, out / "ert", ert_title, ci=ci, fmt=fmt, dpi=dpi)]
