"""Where a sampled curve must not be joined: poles (tan at π/2) and jumps (floor, sign).

Two neighbouring samples are suspect when f changes sign between them, or changes by more
than the engine's derivative at either end can explain. Each suspect interval is bisected
with the engine (one vectorised evaluation per step, following the half where f changes
most): across a continuous stretch the change shrinks with the interval, across a pole or a
jump it does not. So a steep but continuous curve stays joined, and ``tan(x)`` is not drawn
with vertical lines from +inf to -inf.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.evaluation import prepare
from gradcli.plot.data import Field

__all__ = ["curve_breaks", "broken_line"]

STEPS = 48  # halvings: h / 2**48 is below float resolution for any sensible grid
EXPLAINED = 4.0  # a change up to this many times |f'| h is continuous without checking
KEEP = 0.25  # a jump keeps at least this fraction of its first change


def _evaluate(expression: str, name: str, x: np.ndarray, held: Mapping[str, Any],
              component: str) -> np.ndarray:
    cols = prepare(expression, "eval", points={name: x}, fixed=held).run()
    return np.asarray(cols[component], dtype=float)


def curve_breaks(fl: Field, component: int) -> np.ndarray:
    """Indices i such that the line from sample i to i+1 of ``component`` crosses a pole or
    a jump (a non-finite sample breaks the line by itself and is not listed)."""
    x, f, df = fl.coords[0], fl.values[component], fl.grad[component]
    fa, fb = f[:-1], f[1:]
    h = np.diff(x)
    with quiet():
        change = np.abs(fb - fa)
        slope = np.maximum(np.abs(df[:-1]), np.abs(df[1:]))
        suspect = (np.isfinite(fa) & np.isfinite(fb)
                   & ((np.sign(fa) * np.sign(fb) < 0) | (change > EXPLAINED * slope * h)
                      | ~np.isfinite(slope)))
    idx = np.flatnonzero(suspect & (change > 0))
    if idx.size == 0:
        return idx
    name = fl.names[0]
    col = "f" if len(fl.values) == 1 and "f" in fl.columns else f"f[{component}]"
    a, b = x[idx].copy(), x[idx + 1].copy()
    va, vb = fa[idx].copy(), fb[idx].copy()
    first = np.abs(vb - va)
    pole = np.zeros(idx.size, dtype=bool)
    for _ in range(STEPS):
        live = ~pole
        if not live.any():
            break
        m = (a + b) / 2
        vm = _evaluate(fl.expression, name, m[live], fl.held, col)
        full = np.full(idx.size, np.nan)
        full[live] = vm
        pole |= live & ~np.isfinite(full)  # the formula is inf/nan inside: a pole
        with quiet():
            left = np.abs(full - va) >= np.abs(vb - full)
        go_left = live & ~pole & left
        go_right = live & ~pole & ~left
        b = np.where(go_left, m, b)
        vb = np.where(go_left, full, vb)
        a = np.where(go_right, m, a)
        va = np.where(go_right, full, va)
    with quiet():
        jump = np.abs(vb - va) >= KEEP * first
    return idx[pole | jump]


def broken_line(x: np.ndarray, f: np.ndarray, breaks: np.ndarray) -> tuple[np.ndarray,
                                                                             np.ndarray]:
    """``(x, f)`` with a nan point after each index in ``breaks``, so a line drawn through
    them stops there; non-finite values become nan (a gap) too."""
    f = np.where(np.isfinite(f), f, np.nan)
    if breaks.size == 0:
        return x, f
    xs = np.insert(x.astype(float), breaks + 1, np.nan)
    fs = np.insert(f, breaks + 1, np.nan)
    return xs, fs
