"""Descent paths: an optimiser run from one or many starts, recorded step by step.

Every start is a column of one array, so many starts are one vectorised computation: the
function's value and gradient (Hessian for newton) come from one replay of its traced
program per step (``FieldFunction``), and the optimiser's formulas are elementwise over
all columns. A start stops on its own: after ``steps`` updates, when |∇f| <= ``tol``, when
a value stops being finite (it diverged), or when newton finds no step that lowers f.
Finished columns are dropped once they are half of the batch (the program is traced again
for the smaller batch), so a lattice whose starts converge at different speeds costs what
its slow starts cost.

Step 0 is the start and step k the point after k updates; f and |∇f| are taken at that
point. A replay whose value is not finite is checked with the engine's own evaluation
before the start counts as diverged (see ``engine.trace``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import EvaluationError, ref
from gradcli.fields.function import FieldFunction
from gradcli.fields.optim import Settings, make_optimizer
from gradcli.request.binding import count_text
from gradcli.support.allocator import keep_freed_memory

__all__ = ["Path", "descend", "STOPS", "column_norms", "row_limit"]

#: why a start stopped
STOPS = ("steps", "tol", "diverged", "stalled")
_COMPACT_MIN = 64  # batches smaller than this are never compacted: a retrace costs more


@dataclass
class Path:
    """The recorded rows of every start, run by run, step by step.

    ``run``, ``step``, ``f``, ``gnorm`` have one entry per row, ``X`` one row of the input
    components per row. ``stop_step[r]`` and ``stop[r]`` (one of STOPS) say where and why
    start r stopped; ``final_gnorm[r]`` is |∇f| there.
    """

    columns: list[str]
    run: np.ndarray
    step: np.ndarray
    X: np.ndarray
    f: np.ndarray
    gnorm: np.ndarray
    stop_step: np.ndarray
    stop: np.ndarray
    final_gnorm: np.ndarray

    def ends(self) -> np.ndarray:
        """The last recorded point of each run, (runs, n)."""
        last = np.r_[self.run[1:] != self.run[:-1], True]
        return self.X[last]


def row_limit(starts: int, steps: int, every: int, max_points: int) -> None:
    """Refuse a path table over ``max_points`` rows before anything runs."""
    rows = starts * (steps // every + 2)
    if rows > max_points:
        raise EvaluationError(
            f"{starts:,} start{'s' if starts != 1 else ''} × {steps:,} steps would record up "
            f"to {count_text(rows)} rows, over the limit of {max_points:,}: write fewer "
            f"with {ref('every', text='K', python='K')}, or raise {ref('max_points')}")


def descend(function: FieldFunction, starts: np.ndarray, s: Settings, *, steps: int,
            tol: float | None = None, every: int = 1,
            progress: Callable[[int, int], None] | None = None,
            recorded: Callable[[tuple], None] | None = None) -> Path:
    """Run ``s`` from each row of ``starts`` (N, n) for up to ``steps`` updates, recording
    every ``every``-th step and each start's last. ``recorded(rows)`` is called with each
    step's recorded rows (starts, step, P (n, m), f, |grad f|) as they are recorded: with
    one start these are the path's rows in order, for a caller that streams them."""
    if function.kind != "scalar":
        raise EvaluationError(f"descend needs a scalar formula f, but this one has shape "
                              f"{function.shape}")
    N = starts.shape[0]
    if N >= _COMPACT_MIN:  # every step's temporaries are reused, not page-faulted in again
        keep_freed_memory()
    P = np.array(starts.T, dtype=np.float64, order="C")  # (n, N)
    opt = make_optimizer(s, P.shape)
    ids = np.arange(N)  # the start each column holds
    stop_step = np.full(N, -1)
    stop = np.full(N, "", dtype=object)
    final = np.full(N, np.nan)
    kept: list[tuple[np.ndarray, int, np.ndarray, np.ndarray, np.ndarray]] = []

    def keep(rows: tuple) -> None:
        kept.append(rows)
        if recorded is not None:
            recorded(rows)

    active = np.ones(N, dtype=bool)
    with quiet():
        for k in range(steps + 1):
            f, G, H = _derivatives(function, P, s.order)
            gn = column_norms(G, function.norm_weights)
            # one cheap sum finds the common case, every value finite (an overflowing sum
            # only sends a step to the exact test)
            finite = math.isfinite(float(f.sum() + gn.sum() + P.sum()))
            if finite and tol is None and k < steps:  # nothing can end at this step
                if k % every == 0:
                    keep(_row(ids, k, P, f, gn, active))
            else:
                bad = active & ~(np.isfinite(f) & np.isfinite(gn) & np.isfinite(P).all(0))
                if bad.any():
                    bad, f, G, H, gn = _settle(function, P, f, G, H, gn, bad, s.order)
                ending = bad.copy()
                stop[ids[bad]] = "diverged"
                if tol is not None:
                    reached = active & ~bad & (gn <= tol)
                    ending |= reached
                    stop[ids[reached]] = "tol"
                if k == steps:
                    rest = active & ~ending
                    ending |= rest
                    stop[ids[rest]] = "steps"
                _finish(ending, k, ids, stop_step, final, gn)
                take = active if k % every == 0 else ending
                if take.any():
                    keep(_row(ids, k, P, f, gn, take))
                active &= ~ending
            if progress is not None:
                progress(k, steps)
            if not active.any():
                break
            if s.method == "newton":
                stalled = opt.step(P, G, f=f, H=H, value=function.value, active=active)
                if stalled.any():
                    stop[ids[stalled]] = "stalled"
                    _finish(stalled, k, ids, stop_step, final, gn)
                    if k % every:
                        keep(_row(ids, k, P, f, gn, stalled))
                    active &= ~stalled
            else:
                opt.step(P, G)
            if len(active) >= _COMPACT_MIN and active.sum() * 2 <= len(active):
                P, ids, active = _compact(P, ids, active, opt)
    return _assemble(function.columns, kept, stop_step, stop, final)


def column_norms(A: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """The 2-norm of each column of A (n, N), without overflow where the squares would
    overflow but the norm does not (|∇f| = 2.6e154 is finite). ``weights`` (n,) scale
    the rows first: the factors taking components in different units to one
    (``FieldFunction.norm_weights``)."""
    if weights is not None:
        A = A * weights[:, None]
    norms = np.sqrt(np.einsum("ij,ij->j", A, A))
    if not np.isinf(norms).any():
        return norms
    big = np.isinf(norms) & np.isfinite(A).all(0)
    if big.any():
        top = np.abs(A[:, big]).max(0)
        norms[big] = top * np.sqrt(np.einsum("ij,ij->j", A[:, big] / top, A[:, big] / top))
    return norms


def _row(ids: np.ndarray, k: int, P: np.ndarray, f: np.ndarray, gn: np.ndarray,
         take: np.ndarray) -> tuple:
    """The recorded rows of step k: the columns ``take`` (copies: P changes in place)."""
    if take.all():
        return ids, k, P.copy(), np.array(f), gn.copy()
    return ids[take], k, P[:, take], f[take], gn[take]


def _derivatives(function: FieldFunction, P: np.ndarray, order: int) -> tuple:
    if order == 2:
        return function.hessian(P)
    f, G = function.gradient(P)
    return f, G, None


def _settle(function: FieldFunction, P: np.ndarray, f: np.ndarray, G: np.ndarray,
            H: np.ndarray | None, gn: np.ndarray, bad: np.ndarray, order: int) -> tuple:
    """Recompute the non-finite columns with the engine itself; return the columns still
    bad and the values with the engine's put in."""
    cols = np.flatnonzero(bad & np.isfinite(P).all(0))
    if cols.size:
        f, G, gn = f.copy(), G.copy(), gn.copy()
        H = None if H is None else H.copy()
        got = function.engine_values(P[:, cols], "grad")
        if H is not None:
            got |= function.engine_values(P[:, cols], "hessian")
        names = function.columns
        f[cols] = got["f"]
        for j, a in enumerate(names):
            G[j, cols] = got[f"df/d{a}"]
            if H is not None:
                for i, b in enumerate(names):
                    H[j, i, cols] = got[f"d2f/d{a}d{b}"]
        gn[cols] = column_norms(G[:, cols], function.norm_weights)
    return bad & ~(np.isfinite(f) & np.isfinite(gn) & np.isfinite(P).all(0)), f, G, H, gn


def _finish(ending: np.ndarray, k: int, ids: np.ndarray, stop_step: np.ndarray,
            final: np.ndarray, gn: np.ndarray) -> None:
    stop_step[ids[ending]] = k
    final[ids[ending]] = gn[ending]


def _compact(P: np.ndarray, ids: np.ndarray, active: np.ndarray,
             opt: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Keep only the running columns (the optimiser's state too)."""
    cols = np.flatnonzero(active)
    opt.keep(cols)  # type: ignore[attr-defined]
    return np.ascontiguousarray(P[:, cols]), ids[cols], np.ones(cols.size, dtype=bool)


def _assemble(columns: list[str], kept: list, stop_step: np.ndarray, stop: np.ndarray,
              final: np.ndarray) -> Path:
    n = len(columns)
    if not kept:
        empty = np.zeros(0)
        return Path(columns, empty.astype(int), empty.astype(int), np.zeros((0, n)), empty,
                    empty, stop_step, stop, final)
    run = np.concatenate([r for r, *_ in kept])
    step = np.concatenate([np.full(len(r), k) for r, k, *_ in kept])
    X = np.concatenate([x.T for _, _, x, _, _ in kept])
    f = np.concatenate([fv for *_, fv, _ in kept])
    gn = np.concatenate([g for *_, g in kept])
    order = np.lexsort((step, run))
    return Path(columns, run[order], step[order], X[order], f[order], gn[order], stop_step,
                stop, final)
