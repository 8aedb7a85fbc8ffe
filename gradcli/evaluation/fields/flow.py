"""Trajectories of a vector field: x' = F(x) integrated on a fixed time grid.

``rk4`` is the classical fourth-order Runge-Kutta step, ``euler`` the explicit Euler step;
both use the grid's own steps (t[k+1] − t[k]), so the states are at exactly the times
asked for. A scalar formula f flows along −∇f (the gradient flow, the limit of gradient
descent as the learning rate goes to 0). Every start is a column of one array, and F
comes from one replay of the traced program per stage. A trajectory whose state stops
being finite ends there (its last row holds the first non-finite state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ...engine.grad_mode import quiet
from ..allocator import keep_freed_memory
from ..binding import EvaluationError, ref
from .defaults import FLOW_METHODS as METHODS
from .descend import column_norms
from .function import FieldFunction

__all__ = ["Trajectories", "integrate", "METHODS"]


@dataclass
class Trajectories:
    """Rows run by run, time by time: ``run``, ``t``, ``X`` (rows, n) and ``speed`` |F|;
    ``end[r]`` is the index into the time grid of run r's last row and ``diverged[r]``
    whether it ended on a non-finite state."""

    columns: list[str]
    run: np.ndarray
    t: np.ndarray
    X: np.ndarray
    speed: np.ndarray
    end: np.ndarray
    diverged: np.ndarray


def field_of(function: FieldFunction) -> Callable[[np.ndarray], np.ndarray]:
    """F at points X (n, N): the field itself, or −∇f for a scalar formula."""
    if function.kind == "vector":
        return function.value
    if function.kind == "scalar":
        return lambda X: -function.gradient(X)[1]
    raise EvaluationError(f"flow needs a vector field with one component per variable "
                          f"({function.n}) or a scalar formula (its gradient flow), but this "
                          f"one has shape {function.shape}")


def integrate(function: FieldFunction, starts: np.ndarray, times: np.ndarray, *,
              method: str = "rk4", every: int = 1,
              progress: Callable[[int, int], None] | None = None) -> Trajectories:
    """Integrate from each row of ``starts`` (N, n) over ``times`` (T,), recording every
    ``every``-th time and each run's last."""
    if method not in METHODS:
        raise EvaluationError(f"unknown {ref('method')} '{method}': choose rk4 or euler")
    F = field_of(function)
    N, T = starts.shape[0], len(times)
    if N >= 64:
        keep_freed_memory()
    X = np.array(starts.T, dtype=np.float64, order="C")
    live = np.ones(N, dtype=bool)
    end = np.full(N, T - 1)
    diverged = np.zeros(N, dtype=bool)
    kept: list[tuple[np.ndarray, int, np.ndarray, np.ndarray]] = []
    with quiet():
        k1 = F(X)
        for k in range(T):
            speed = column_norms(k1)
            bad = live & ~(np.isfinite(X).all(0) & np.isfinite(speed))
            ending = bad | (live & (k == T - 1))
            end[bad] = k
            diverged |= bad
            take = live if k % every == 0 else ending
            if take.any():
                kept.append((np.flatnonzero(take), k, X[:, take].copy(), speed[take].copy()))
            live &= ~ending
            if progress is not None:
                progress(k, T - 1)
            if not live.any():
                break
            h = times[k + 1] - times[k]
            if method == "euler":
                X = X + h * k1
            else:
                k2 = F(X + (h / 2) * k1)
                k3 = F(X + (h / 2) * k2)
                k4 = F(X + h * k3)
                X = X + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4)
            k1 = F(X)
    run = np.concatenate([r for r, *_ in kept])
    index = np.concatenate([np.full(len(r), k) for r, k, *_ in kept])
    states = np.concatenate([x.T for _, _, x, _ in kept])
    speeds = np.concatenate([s for *_, s in kept])
    order = np.lexsort((index, run))
    return Trajectories(function.columns, run[order], times[index[order]], states[order],
                        speeds[order], end, diverged)
