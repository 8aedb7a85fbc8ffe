"""Trajectories of a vector field: x' = F(x), on a time grid or with adaptive steps.

``rk4`` is the classical fourth-order Runge-Kutta step, ``euler`` the explicit Euler step;
both use the grid's own steps (t[k+1] − t[k]), so the states are at exactly the times
asked for. ``dopri5`` is the adaptive Dormand–Prince 5(4) pair (as ``ode45`` and SciPy's
``RK45``): each run chooses its own steps so that the local error stays within
``atol + rtol·|x|`` per component, and the rows at the grid's times come from its
continuous extension (Hairer, Nørsett & Wanner's dense output), not from shortened steps.
A scalar formula f flows along −∇f (the gradient flow, the limit of gradient descent as
the learning rate goes to 0). Every start is a column of one array, and F comes from one
replay of the traced program per stage.

The time grid is never built: time k is ``t0 + k·(t1 − t0)/(n − 1)`` (numpy's linspace),
computed as the steps go, so ``n`` is bounded by :data:`MAX_TIMES` and not by memory.

A run ends at the grid's last time, or earlier: where its state stops being finite (its
last row holds the first non-finite state), where |F| <= ``tol`` (a fixed point reached),
or where its state leaves ``box`` (its last row is the first state outside).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import EvaluationError, ref
from gradcli.fields.defaults import ATOL as DEFAULT_ATOL
from gradcli.fields.defaults import FLOW_METHODS as METHODS
from gradcli.fields.defaults import RTOL as DEFAULT_RTOL
from gradcli.fields.descend import column_norms
from gradcli.fields.function import FieldFunction
from gradcli.support.allocator import keep_freed_memory

__all__ = ["Trajectories", "TimeGrid", "integrate", "METHODS", "MAX_TIMES",
           "DEFAULT_RTOL", "DEFAULT_ATOL", "MAX_ATTEMPTS"]

#: the most times a grid may have (so at most 10^9 steps, as ``descend``'s steps)
MAX_TIMES = 10**9 + 1
#: dopri5 tries at most this many steps per run (accepted and rejected) before ending it
MAX_ATTEMPTS = 10**7

#: why a run ended: the grid's last time, a non-finite state, |F| <= tol, outside the box,
#: or dopri5's step size too small to advance (or its step count used up)
ENDS = ("end", "diverged", "fixed", "left", "stalled")


@dataclass(frozen=True)
class TimeGrid:
    """``n`` times from ``t0`` to ``t1``, computed one at a time as ``numpy.linspace``
    would make them (time k is ``t0 + k·step``, the last exactly ``t1``)."""

    t0: float
    t1: float
    n: int

    @classmethod
    def of(cls, times: Any) -> TimeGrid:
        """A grid from ``(t0, t1, n)`` or from an evenly spaced array of times."""
        if isinstance(times, TimeGrid):
            return times
        if isinstance(times, tuple):
            t0, t1, n = times
            return cls(float(t0), float(t1), int(n))
        arr = np.asarray(times, dtype=np.float64)
        return cls(float(arr[0]), float(arr[-1]), int(arr.size))

    @property
    def step(self) -> float:
        return (self.t1 - self.t0) / (self.n - 1)

    def __len__(self) -> int:
        return self.n

    def at(self, k: Any) -> Any:
        """Time(s) of index(es) ``k``."""
        k = np.asarray(k)
        t = self.t0 + k * self.step
        return np.where(k == self.n - 1, self.t1, t) if k.ndim else \
            (self.t1 if int(k) == self.n - 1 else float(t))


@dataclass
class Trajectories:
    """Rows run by run, time by time: ``run``, ``t``, ``X`` (rows, n) and ``speed`` |F|;
    ``end[r]`` is the index into the time grid of run r's last row (for dopri5, the grid
    index at or before its last time), ``diverged[r]`` whether it ended on a non-finite
    state, ``reason[r]`` why it ended (one of ``ENDS``), ``t_end[r]`` its last time;
    ``accepted``/``rejected`` count dopri5's steps (0 for the fixed-step methods)."""

    columns: list[str]
    run: np.ndarray
    t: np.ndarray
    X: np.ndarray
    speed: np.ndarray
    end: np.ndarray
    diverged: np.ndarray
    reason: np.ndarray = field(default_factory=lambda: np.array([], dtype=object))
    t_end: np.ndarray = field(default_factory=lambda: np.array([]))
    accepted: int = 0
    rejected: int = 0


def field_of(function: FieldFunction) -> Callable[[np.ndarray], np.ndarray]:
    """F at points X (n, N): the field itself, or −∇f for a scalar formula; with units,
    each component scaled to its variable's unit per time unit (``function.scale``, set
    by ``units.flow_time``)."""
    scale = getattr(function, "scale", None)
    if scale is not None and np.all(scale == 1.0):
        scale = None
    if function.kind == "vector":
        if scale is None:
            return function.value
        return lambda X: scale[:, None] * function.value(X)
    if function.kind == "scalar":
        if scale is None:
            return lambda X: -function.gradient(X)[1]
        return lambda X: -scale[:, None] * function.gradient(X)[1]
    raise EvaluationError(f"flow needs a vector field with one component per variable "
                          f"({function.n}) or a scalar formula (its gradient flow), but this "
                          f"one has shape {function.shape}")


def _box_bounds(box: Any, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """``box`` ({column: (low, high)}) as bounds per state component (±inf where unnamed)."""
    if not box:
        return None
    lo = np.full(len(columns), -np.inf)
    hi = np.full(len(columns), np.inf)
    for name, (a, b) in box.items():
        if name not in columns:
            raise EvaluationError(f"box: '{name}' is not a variable of the flow (its state "
                                  f"is {', '.join(columns)})")
        if not (np.isfinite(a) and np.isfinite(b)) or a >= b:
            raise EvaluationError(f"box: {name}={a:g}:{b:g} needs two finite bounds, the "
                                  "lower first")
        j = list(columns).index(name)
        lo[j], hi[j] = a, b
    return lo, hi


class _Rows:
    """The rows kept so far (runs, grid or exact times, states, speeds), joined at the end."""

    def __init__(self) -> None:
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def add(self, runs: np.ndarray, t: Any, X: np.ndarray, speed: np.ndarray) -> None:
        if runs.size:
            t = np.broadcast_to(np.asarray(t, dtype=np.float64), runs.shape).copy()
            self.parts.append((runs, t, X.copy(), speed.copy()))

    def join(self, columns: list[str], **rest: Any) -> Trajectories:
        n = len(columns)
        if not self.parts:
            empty = np.empty(0)
            return Trajectories(columns, empty.astype(int), empty, np.empty((0, n)), empty,
                                **rest)
        run = np.concatenate([r for r, *_ in self.parts])
        t = np.concatenate([t for _, t, _, _ in self.parts])
        states = np.concatenate([x.T for _, _, x, _ in self.parts])
        speeds = np.concatenate([s for *_, s in self.parts])
        # a run's rows were added in time order (whichever way time runs)
        seq = np.concatenate([np.full(len(r), i) for i, (r, *_) in enumerate(self.parts)])
        order = np.lexsort((seq, run))
        return Trajectories(columns, run[order], t[order], states[order], speeds[order],
                            **rest)


def integrate(function: FieldFunction, starts: np.ndarray, times: Any, *,
              method: str = "rk4", every: int = 1,
              progress: Callable[[int, int], None] | None = None,
              tol: float | None = None, box: Any = None,
              rtol: float = DEFAULT_RTOL, atol: float = DEFAULT_ATOL) -> Trajectories:
    """Integrate from each row of ``starts`` (N, n) over ``times`` (``(t0, t1, n)``, a
    :class:`TimeGrid` or an evenly spaced array), recording every ``every``-th time and
    each run's last. ``tol`` ends a run where |F| <= tol; ``box`` ({variable: (low,
    high)}) ends it where the state leaves the box; ``rtol``/``atol`` are dopri5's."""
    if method not in METHODS:
        raise EvaluationError(f"unknown {ref('method')} '{method}': choose "
                              f"{', '.join(METHODS)}")
    grid = TimeGrid.of(times)
    if grid.n > MAX_TIMES:
        raise EvaluationError(f"the time grid has {grid.n:,} times, over the limit of "
                              f"{MAX_TIMES:,}")
    F = field_of(function)
    # |F| with its components in one unit (x in cm, y in m: dy/dt counted in cm per time
    # unit), the factors ``units.norm_factors`` set as ``function.speed_weights``
    weights = getattr(function, "speed_weights", None)
    speed_of = column_norms if weights is None else partial(column_norms, weights=weights)
    bounds = _box_bounds(box, function.columns)
    if starts.shape[0] >= 64:
        keep_freed_memory()
    with quiet():
        if method == "dopri5":
            if not (rtol > 0 and atol >= 0 and np.isfinite(rtol) and np.isfinite(atol)):
                raise EvaluationError(f"rtol must be > 0 and atol >= 0 (finite), got "
                                      f"rtol={rtol:g}, atol={atol:g}")
            return _adaptive(F, function.columns, starts, grid, every, progress, tol,
                             bounds, rtol, atol, speed_of)
        return _fixed(F, function.columns, starts, grid, method, every, progress, tol,
                      bounds, speed_of)


def _outside(X: np.ndarray, bounds: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray:
    if bounds is None:
        return np.zeros(X.shape[1], dtype=bool)
    lo, hi = bounds
    return ((X < lo[:, None]) | (X > hi[:, None])).any(0)


def _fixed(F: Callable[[np.ndarray], np.ndarray], columns: list[str], starts: np.ndarray,
           grid: TimeGrid, method: str, every: int,
           progress: Callable[[int, int], None] | None, tol: float | None,
           bounds: tuple[np.ndarray, np.ndarray] | None,
           speed_of: Callable[[np.ndarray], np.ndarray] = column_norms) -> Trajectories:
    N, T = starts.shape[0], grid.n
    X = np.array(starts.T, dtype=np.float64, order="C")
    live = np.ones(N, dtype=bool)
    end = np.full(N, T - 1)
    reason = np.full(N, "end", dtype=object)
    rows = _Rows()
    k1 = F(X)
    for k in range(T):
        speed = speed_of(k1)
        bad = live & ~(np.isfinite(X).all(0) & np.isfinite(speed))
        left = live & ~bad & _outside(X, bounds)
        fixed = live & ~bad & ~left & (speed <= tol) if tol is not None else \
            np.zeros(N, dtype=bool)
        ending = bad | left | fixed | (live & (k == T - 1))
        end[ending] = k
        reason[bad], reason[left], reason[fixed] = "diverged", "left", "fixed"
        take = live if k % every == 0 else ending
        if take.any():
            rows.add(np.flatnonzero(take), grid.at(k), X[:, take], speed[take])
        live &= ~ending
        if progress is not None:
            progress(k, T - 1)
        if not live.any():
            break
        h = grid.at(k + 1) - grid.at(k)
        if method == "euler":
            X = X + h * k1
        else:
            k2 = F(X + (h / 2) * k1)
            k3 = F(X + (h / 2) * k2)
            k4 = F(X + h * k3)
            X = X + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4)
        k1 = F(X)
    return rows.join(columns, end=end, diverged=reason == "diverged", reason=reason,
                     t_end=grid.at(end))


# Dormand & Prince (1980), RK5(4)7M: nodes, coefficients, 5th-order weights, and the
# difference of the embedded 4th-order weights (the error estimate)
_C = np.array([0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1])
_A = [
    [],
    [1 / 5],
    [3 / 40, 9 / 40],
    [44 / 45, -56 / 15, 32 / 9],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
]
_B = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_E = np.array([-71 / 57600, 0, 71 / 16695, -71 / 1920, 17253 / 339200, -22 / 525, 1 / 40])
# the continuous extension: x(t + σh) = x + h Σ_i k_i Σ_j P[i, j] σ^(j+1) (Hairer's
# dense output for DOPRI5; each row sums to _B, and its σ-derivative at 1 is k7)
_P = np.array([
    [1, -8048581381 / 2820520608, 8663915743 / 2820520608, -12715105075 / 11282082432],
    [0, 0, 0, 0],
    [0, 131558114200 / 32700410799, -68118460800 / 10900136933,
     87487479700 / 32700410799],
    [0, -1754552775 / 470086768, 14199869525 / 1410260304, -10690763975 / 1880347072],
    [0, 127303824393 / 49829197408, -318862633887 / 49829197408,
     701980252875 / 199316789632],
    [0, -282668133 / 205662961, 2019193451 / 616988883, -1453857185 / 822651844],
    [0, 40617522 / 29380423, -110615467 / 29380423, 69997945 / 29380423],
])


def _last_index(grid: TimeGrid, t: np.ndarray, direction: float) -> np.ndarray:
    """The last grid index whose time is not past ``t`` (in the direction of time)."""
    k = np.floor((t - grid.t0) / grid.step).astype(np.int64)
    k = np.clip(k, 0, grid.n - 1)
    k = np.where((k + 1 < grid.n) & (direction * (grid.at(np.minimum(k + 1, grid.n - 1))
                                                  - t) <= 0), k + 1, k)
    k = np.where((k > 0) & (direction * (grid.at(k) - t) > 0), k - 1, k)
    return np.where(t == grid.t1, grid.n - 1, k)


def _next_kept(k: np.ndarray, every: int, n: int) -> np.ndarray:
    """The first written grid index at or after ``k``: a multiple of ``every``, or the
    last (n − 1); n when none is left."""
    up = -(-k // every) * every
    return np.where(k >= n, n, np.where(up >= n - 1, n - 1, up))


def _rms(A: np.ndarray) -> np.ndarray:
    return np.sqrt(np.mean(A * A, axis=0))


def _first_step(F: Callable[[np.ndarray], np.ndarray], X: np.ndarray, f0: np.ndarray,
                direction: float, span: float, rtol: float, atol: float) -> np.ndarray:
    """Hairer, Nørsett & Wanner's starting step (II.4), per run."""
    scale = atol + np.abs(X) * rtol
    d0, d1 = _rms(X / scale), _rms(f0 / scale)
    h0 = np.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / np.maximum(d1, 1e-300))
    h0 = np.minimum(h0, span)
    with np.errstate(all="ignore"):
        f1 = F(X + direction * h0 * f0)
        d2 = _rms((f1 - f0) / scale) / h0
        big = np.maximum(d1, d2)
        h1 = np.where(big <= 1e-15, np.maximum(1e-6, h0 * 1e-3), (0.01 / big) ** (1 / 5))
    h = np.minimum(100 * h0, h1)
    return np.where(np.isfinite(h) & (h > 0), np.minimum(h, span), 1e-6 * span)


def _adaptive(F: Callable[[np.ndarray], np.ndarray], columns: list[str], starts: np.ndarray,
              grid: TimeGrid, every: int, progress: Callable[[int, int], None] | None,
              tol: float | None, bounds: tuple[np.ndarray, np.ndarray] | None,
              rtol: float, atol: float,
              speed_of: Callable[[np.ndarray], np.ndarray] = column_norms) -> Trajectories:
    """Dormand–Prince 5(4) with per-run steps; rows at the grid's times by dense output."""
    N, T = starts.shape[0], grid.n
    direction = 1.0 if grid.t1 > grid.t0 else -1.0
    span = abs(grid.t1 - grid.t0)
    X = np.array(starts.T, dtype=np.float64, order="C")
    t = np.full(N, grid.t0)
    nxt = np.zeros(N, dtype=np.int64)       # the next grid index to write, per run
    live = np.ones(N, dtype=bool)
    end = np.full(N, T - 1)
    reason = np.full(N, "end", dtype=object)
    t_end = np.full(N, grid.t1)
    attempts = np.zeros(N, dtype=np.int64)
    accepted = rejected = 0
    rows = _Rows()
    k1 = F(X)
    speed = speed_of(k1)

    def finish(mask: np.ndarray, why: str, Xs: np.ndarray, ts: np.ndarray,
               sp: np.ndarray) -> None:
        """End the runs in ``mask`` with a row at their own time ``ts``."""
        nonlocal live
        idx = np.flatnonzero(mask)
        if idx.size:
            rows.add(idx, ts[mask], Xs[:, mask], sp[mask])
            reason[idx], t_end[idx] = why, ts[mask]
            end[idx] = np.clip(nxt[idx] - 1, 0, T - 1)
            live &= ~mask

    # the start: grid time 0
    bad = ~(np.isfinite(X).all(0) & np.isfinite(speed))
    finish(bad, "diverged", X, t, speed)
    finish(live & _outside(X, bounds), "left", X, t, speed)
    if tol is not None:
        finish(live & (speed <= tol), "fixed", X, t, speed)
    rows.add(np.flatnonzero(live), grid.t0, X[:, live], speed[live])
    nxt[live] = 1
    h = _first_step(F, X, k1, direction, span, rtol, atol)
    factor_max = np.full(N, 10.0)
    while live.any():
        idx = np.flatnonzero(live)
        Xl, tl, hl, k1l = X[:, idx], t[idx], h[idx], k1[:, idx]
        remaining = np.abs(grid.t1 - tl)
        hl = np.minimum(hl, remaining)
        hs = direction * hl
        K = [k1l]
        with np.errstate(all="ignore"):
            for s in range(1, 6):
                dX = sum(a * k for a, k in zip(_A[s], K, strict=True) if a != 0)
                K.append(F(Xl + hs * dX))
            Xnew = Xl + hs * sum(b * k for b, k in zip(_B[:6], K, strict=True) if b != 0)
            k7 = F(Xnew)
            K.append(k7)
            err = hs * sum(e * k for e, k in zip(_E, K, strict=True) if e != 0)
            scale = atol + rtol * np.maximum(np.abs(Xl), np.abs(Xnew))
            norm = _rms(err / scale)
        attempts[idx] += 1
        finite = np.isfinite(Xnew).all(0) & np.isfinite(norm)
        ok = finite & (norm <= 1.0)
        # a step that comes out non-finite is shrunk like a rejected one; one too small to
        # change t ends the run (the field is too steep, or non-finite, there)
        with np.errstate(all="ignore"):
            grow = np.where(norm == 0, 10.0, 0.9 * norm ** -0.2)
        factor = np.clip(np.where(finite, grow, 0.2), 0.2, factor_max[idx])
        factor = np.where(ok, factor, np.minimum(factor, 1.0))
        accepted += int(ok.sum())
        rejected += int((~ok).sum())
        tnew = np.where(remaining <= hl, grid.t1, tl + hs)
        # dense output at the kept grid times inside the accepted steps (the others are
        # skipped by arithmetic: 10^9 times cost nothing until they are written)
        acc = idx[ok]
        if acc.size:
            Q = np.stack([k[:, ok] for k in K], axis=-1) @ _P  # (n, runs, 4)
            last = _last_index(grid, tnew[ok], direction)
            want = _next_kept(nxt[acc], every, T)
            while True:
                inside = want <= last
                if not inside.any():
                    break
                which = np.flatnonzero(inside)
                k_out = want[which]
                t_out = grid.at(k_out)
                sigma = (t_out - tl[ok][which]) / hs[ok][which]
                powers = sigma[None, :] ** np.arange(1, 5)[:, None]  # (4, m)
                at = Xl[:, ok][:, which] + hs[ok][which] * np.einsum(
                    "nmj,jm->nm", Q[:, which, :], powers)
                at = np.where(k_out == T - 1, Xnew[:, ok][:, which], at)
                sp = speed_of(F(at))
                rows.add(acc[which], t_out, at, sp)
                want[which] = _next_kept(k_out + 1, every, T)
                # a written state that ends its run (non-finite, outside the box, |F| <=
                # tol) is its last row: the rest of the step is not written
                stops = [(~(np.isfinite(at).all(0) & np.isfinite(sp)), "diverged"),
                         (_outside(at, bounds), "left")]
                if tol is not None:
                    stops.append((sp <= tol, "fixed"))
                for hit, why in stops:
                    runs = acc[which][hit & live[acc[which]]]
                    if runs.size:
                        reason[runs], t_end[runs] = why, t_out[hit & live[acc[which]]]
                        end[runs] = k_out[hit & live[acc[which]]]
                        live[runs] = False
                want[which] = np.where(live[acc[which]], want[which], T + 1)
            nxt[acc] = np.where(live[acc], np.maximum(nxt[acc], last + 1), nxt[acc])
        X[:, acc] = Xnew[:, ok]
        t[acc] = tnew[ok]
        k1[:, acc] = k7[:, ok]
        h[idx] = hl * factor
        factor_max[idx] = np.where(ok, 10.0, 1.0)
        speed_new = speed_of(k7)
        # the ends: the grid's last time reached, a non-finite state, outside the box,
        # |F| <= tol, a step too small to advance, or the attempts used up
        done = np.zeros(N, dtype=bool)
        done[acc] = nxt[acc] >= T
        live &= ~done
        all_speed = np.zeros(N)
        all_speed[acc] = speed_new[ok]
        moved = np.zeros(N, dtype=bool)
        moved[acc] = True
        finish(moved & live & ~np.isfinite(all_speed), "diverged", X, t, all_speed)
        finish(moved & live & _outside(X, bounds), "left", X, t, all_speed)
        if tol is not None:
            finish(moved & live & (all_speed <= tol), "fixed", X, t, all_speed)
        tiny = np.zeros(N, dtype=bool)
        tiny[idx] = (h[idx] <= 16 * np.spacing(np.maximum(np.abs(tl), 1.0))) | \
            (attempts[idx] >= MAX_ATTEMPTS)
        if (live & tiny).any():
            stuck = live & tiny
            sp = speed_of(F(X[:, stuck]))
            full = np.zeros(N)
            full[stuck] = sp
            finish(stuck, "stalled", X, t, full)
        if progress is not None:
            progress(int(nxt.min(initial=T) if live.any() else T - 1) - 1, T - 1)
    return rows.join(columns, end=end, diverged=reason == "diverged", reason=reason,
                     t_end=t_end, accepted=accepted, rejected=rejected)
