"""The awkward-point reference (tests/reference/awkward.npz) and the rule that picks the
value gradcli must give from it. Shared by test_awkward_points.py and its report script.

The rule (README, "Conventions at singular points"): where torch and JAX agree (same nan
and inf pattern, finite values equal to ``RTOL``) gradcli gives that value; where they
disagree, torch's, unless the point is smooth (every primitive on the way is, by mpmath's
one-sided differences from both sides) and torch's value is not the mathematics: then the
mathematics. torch has no cbrt: the generator gives it one with JAX's rule.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

import gradcli

REFERENCE = np.load(Path(__file__).parent / "reference" / "awkward.npz")
META = json.loads(str(REFERENCE["meta"]))
TABLES = ("unary", "binary", "pairs")
RTOL = 1e-9  # finite values agree when |a - b| <= RTOL·max(|a|, |b|) (or both below 1e-300)
# derivatives are sums of terms that may cancel to 0: rounding leaves up to ~1e-16 of the
# largest term (6e-11 in d2/dy2 log10(x^y) at (1e-300, 0.5), where terms reach 5e5)
ATOL_DERIVATIVE = 1e-9
TINY = np.finfo(np.float64).tiny  # below it a nonzero number is subnormal
COLUMNS = {1: ["f", "df/dx", "d2f/dxdx"],
           2: ["f", "df/dx", "df/dy", "d2f/dxdx", "d2f/dxdy", "d2f/dydx", "d2f/dydy"]}


def agree(a: np.ndarray, b: np.ndarray, rtol: float = RTOL, derivative: Any = False) -> np.ndarray:
    """Elementwise: the same value to ``rtol`` (derivatives also to ``ATOL_DERIVATIVE``), the
    same infinity, or both nan. ``derivative`` marks the derivative columns (last axis)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    atol = np.where(derivative, ATOL_DERIVATIVE, 1e-300)
    with np.errstate(all="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        close = np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)) + atol
    return same | (np.isfinite(a) & np.isfinite(b) & close)


def target(table: str) -> tuple[np.ndarray, np.ndarray]:
    """(values gradcli must give, source of each: 'agreed', 'torch' or 'math')."""
    t, j, m = (REFERENCE[f"{table}_{k}"] for k in ("torch", "jax", "math"))
    deriv = np.arange(t.shape[2]) > 0
    both = agree(t, j, derivative=deriv)
    # torch wrong at a smooth point (mpmath decides): the mathematics
    math_ = ~both & np.isfinite(m) & ~agree(t, m, derivative=deriv)
    return np.where(math_, m, t), np.select([both, math_], ["agreed", "math"], "torch")


def gradcli_table(table: str) -> np.ndarray:
    """gradcli's f, gradient and Hessian for every expression of ``table`` at its points,
    through ``gradcli.evaluate(..., points=...)``: one grad and one hessian call each."""
    points = REFERENCE[f"{table}_points"]
    k = points.shape[1]
    names = ["x", "y"][:k]
    cols = {n: points[:, i] for i, n in enumerate(names)}
    out = []
    for expr in REFERENCE[f"{table}_exprs"]:
        g = gradcli.evaluate(str(expr), "grad", points=cols)
        h = gradcli.evaluate(str(expr), "hessian", points=cols)
        both = {**g, **h}
        out.append(np.stack([np.broadcast_to(both[c], (len(points),)) for c in COLUMNS[k]],
                            axis=1))
    return np.stack(out)



#: the documented classes of difference from the rule's value, each with its reason
CLASSES = {
    "fused log(sigmoid)": "the language compiles log(sigmoid(u)) to one primitive, finite for "
                          "every finite u; torch and JAX compose log and sigmoid, whose "
                          "sigmoid underflows to 0 below u = -745 (log 0 = -inf, then nan)",
    "subnormal": "a subnormal argument, which torch's vectorised kernels and XLA flush to "
                 "zero (log1p(-5e-324) is 0 there, -5e-324 in numpy and in gradcli)",
    "float64 range": "at |x| <= 1e-154 or >= 1e154 the mathematics (mpmath) is out of float64's "
                     "reach on the way (x² underflows onto a kink, terms of 1e300 cancel): "
                     "gradcli gives torch's value, as the rule does where torch and JAX "
                     "disagree at a singular point",
    "pow at exponent 0": "x^y keeps its exponent's derivative path at y = 0 (torch "
                         "cuts it to 0): gradcli gives JAX's value where mpmath cannot "
                         "tell (a huge x, or an inner function singular there)",
    "abs of a non-finite argument": "second derivatives of abs(u) where u is ±inf or nan "
                                    "(abs(x/y) at y = 0): torch's recorded sgn(u) makes them "
                                    "nan; gradcli's sgn is a constant of the rule (as torch's "
                                    "first-order sgn is), so the chain rule's value stands",
    "pow of -0.0": "a negative power of -0.0 ((-x)^0.5 differentiated at x = 0): torch's "
                   "pow(-0.0, -0.5) is -inf, IEEE 754 and numpy's +inf",
}


def _extreme(point: np.ndarray) -> bool:
    return any(v != 0 and (abs(v) <= 1e-154 or abs(v) >= 1e154) for v in point)


def classify(expr: str, point: np.ndarray, ours: float, want: float, source: str = "",
             torch: float = math.nan, jax: float = math.nan, column: int = 1) -> str | None:
    """The documented class a difference belongs to, or None if it is unexplained.
    ``column`` indexes f, the gradient, then the Hessian (COLUMNS)."""
    derivative = column > 0
    if "log(sigmoid(" in expr and math.isfinite(ours) and not math.isfinite(want):
        return "fused log(sigmoid)"
    if any(0 < abs(v) < TINY for v in point) and not agree(ours, torch, derivative=derivative):
        return "subnormal"
    if source == "math" and _extreme(point) and agree(ours, torch, derivative=derivative):
        return "float64 range"
    if "^(y)" in expr and len(point) > 1 and point[1] == 0 and torch == 0 and \
            agree(ours, jax, derivative=derivative):
        return "pow at exponent 0"
    if "abs(" in expr and column > len(point) and math.isnan(want):
        return "abs of a non-finite argument"
    if ")^" in expr and 0 in point and math.isinf(ours) and ours == -want:
        return "pow of -0.0"
    return None
