"""The primitive table, fourth part: determinants, inverses and linear solves.

Each works on the last two axes (``(..., n, n)``), so leading axes are batches. The rules
are the textbook ones, written with primitives so that they differentiate again:
d det = det·tr(A⁻¹ dA) = ⟨cofactor(A), dA⟩, d A⁻¹ = −A⁻¹ dA A⁻¹, and for x = A⁻¹B,
dx = A⁻¹(dB − dA x). A singular matrix (a zero pivot) gives nan for its inverse and its
solves, never an exception; a matrix holding nan gives nan (numpy's det would say 0).
det's gradient is the cofactor matrix, which exists at singular matrices too: it is
computed from the SVD there (as JAX does), so det(A)' at [[1, 2], [2, 4]] is
[[4, -2], [-2, 1]] (torch 2.13 gives zeros there; the polynomial's derivative is not).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcli.engine import taylor as T
from gradcli.engine.homogeneous import per_monomial
from gradcli.engine.primitive import Ctx, Primitive
from gradcli.engine.rules_array import matmul, matrix_transpose
from gradcli.engine.rules_axes import _spread
from gradcli.engine.rules_elementwise import sum, unbroadcast, unsqueeze  # noqa: A004

_LAST2 = (-2, -1)


def _guarded(fn: Callable[..., np.ndarray], a: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    """``fn(a, *rest)`` on a stack of matrices, with nan for each matrix that holds nan or
    is singular, where numpy would raise for the whole stack (or call det 0)."""
    a = np.asarray(a)
    bad = np.isnan(a).any(axis=_LAST2)
    eye = np.eye(a.shape[-1], dtype=a.dtype)
    safe = np.where(bad[..., None, None], eye, a) if bad.any() else a
    try:
        out = fn(safe, *rest)
    except np.linalg.LinAlgError:
        bad = bad | (np.linalg.slogdet(safe)[0] == 0)
        out = fn(np.where(bad[..., None, None], eye, safe), *rest)
    if bad.any():
        out = np.array(out)  # writable, shaped like the result
        mask = np.broadcast_to(bad.reshape(bad.shape + (1,) * (out.ndim - bad.ndim)),
                               out.shape)
        out[mask] = np.nan
    return out


def _det_fwd(a: Any) -> Any:
    return _guarded(np.linalg.det, a)


def _inv_fwd(a: Any) -> Any:
    return _guarded(np.linalg.inv, a)


def _solve_fwd(a: Any, b: Any) -> Any:
    """A⁻¹B for B of shape (..., n, k)."""
    return _guarded(np.linalg.solve, a, b)


def _exclusive_products(s: np.ndarray) -> np.ndarray:
    """For each i, the product of the other entries along the last axis (no division)."""
    ones = np.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = np.cumprod(np.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = np.flip(np.cumprod(np.concatenate([ones, np.flip(s, -1)[..., :-1]], axis=-1),
                               axis=-1), -1)
    return before * after


def _cofactor_svd(a: np.ndarray) -> np.ndarray:
    """cofactor(A) = det(U)·det(Vᵀ)·U·diag(∏_{j≠i} s_j)·Vᵀ for A = U·diag(s)·Vᵀ: valid for any
    matrix, singular ones included."""
    u, s, vh = np.linalg.svd(a)
    sign = np.linalg.det(u) * np.linalg.det(vh)
    return sign[..., None, None] * ((u * _exclusive_products(s)[..., None, :]) @ vh)


def _cofactor_fwd(a: Any) -> Any:
    """The matrix of cofactors, det(A)·A⁻ᵀ: by LU where det(A) ≠ 0, by the SVD elsewhere."""
    a = np.asarray(a)
    d = _det_fwd(a)
    singular = d == 0
    out = d[..., None, None] * np.swapaxes(_inv_fwd(a), -1, -2)
    if singular.any():
        out = np.array(out)
        out[singular] = _cofactor_svd(a[singular])
    return out.astype(a.dtype, copy=False)


def _cofactor_vjp(ctx: Ctx, g: Any) -> list:
    """C = det·A⁻ᵀ: ∂⟨G, C⟩/∂A = ⟨G, C⟩·A⁻ᵀ − A⁻ᵀ·Gᵀ·C."""
    a, c = ctx.inputs[0], ctx.out
    g = _spread(g, np.shape(c))
    ait = matrix_transpose(inv(a))
    inner = unsqueeze(sum(g * c, dim=_LAST2), dim=_LAST2)
    return [unbroadcast(inner * ait - matmul(ait, matmul(matrix_transpose(g), c)),
                        ctx.shapes[0])]


def _cofactor_jvp(ctx: Ctx, tangents: list) -> Any:
    """dC = C·tr(A⁻¹dA) − C·dAᵀ·A⁻ᵀ."""
    a, c = ctx.inputs[0], ctx.out
    t = _spread(tangents[0], ctx.shapes[0])
    ait = matrix_transpose(inv(a))
    trace = unsqueeze(sum(ait * t, dim=_LAST2), dim=_LAST2)
    return c * trace - matmul(c, matmul(matrix_transpose(t), ait))


cofactor = Primitive("cofactor", _cofactor_fwd, vjp=_cofactor_vjp, jvp=_cofactor_jvp, arity=1)

#: the largest matrix whose determinant's jet is expanded (2ⁿ·n series products)
DET_JET_MAX = 10


def _det_jet(ctx: T.JetCtx, us: list) -> list:
    """det A(t) for A(t) = Σ A_k t^k as the permutation sum grouped by rows: after row r,
    one series per set S of r columns (the minor of the first r rows and the columns S),
    extended by each column c not in S with sign (-1)^#{s in S : s > c}. Only products and
    sums, so a singular A₀ needs no special case; y₁ is the first-order (cofactor) rule's."""
    a0 = np.asarray(ctx.inputs[0])
    n, order = a0.shape[-1], ctx.order
    if n > DET_JET_MAX:
        raise T.MissingTaylorRule("det", f"has a Taylor-mode rule for matrices up to "
                                  f"{DET_JET_MAX}×{DET_JET_MAX} only (this one is {n}×{n})")
    coeffs = [a0] + [None if c is None else np.broadcast_to(_spread(c, ctx.shapes[0]),
                                                            a0.shape)
                     for c in (us[0][1:] if us[0] is not None else [None] * order)]

    def entry(r: int, c: int) -> list:
        return [None if a is None else a[..., r, c] for a in coeffs]

    minors: dict[int, list] = {0: [np.ones(a0.shape[:-2], dtype=a0.dtype)] + [None] * order}
    for r in range(n):
        grown: dict[int, list] = {}
        for cols, series in minors.items():
            for c in range(n):
                if cols >> c & 1:
                    continue
                sign = -1.0 if bin(cols >> (c + 1)).count("1") % 2 else 1.0
                term = [T.cauchy(series, entry(r, c), k) for k in range(order + 1)]
                key = cols | 1 << c
                have = grown.get(key)
                grown[key] = [_signed_sum(h, t, sign) for h, t in
                              zip(have or [None] * (order + 1), term, strict=True)]
        minors = grown
    total = minors[(1 << n) - 1]
    return [T.first(ctx, us)] + total[2:]


def _signed_sum(have: Any, term: Any, sign: float) -> Any:
    if term is None:
        return have
    term = term if sign > 0 else -term
    return term if have is None else have + term


det = Primitive(
    "det", _det_fwd, jet=_det_jet,
    vjp=lambda ctx, g: [unbroadcast(unsqueeze(g, dim=_LAST2) * cofactor(ctx.inputs[0]),
                                    ctx.shapes[0])],
    jvp=lambda ctx, ts: sum(cofactor(ctx.inputs[0]) * ts[0], dim=_LAST2),
    arity=1, grad_name="LinalgDetBackward0")


def _inv_vjp(ctx: Ctx, g: Any) -> list:
    """−A⁻ᵀ·G·A⁻ᵀ."""
    yt = matrix_transpose(ctx.out)
    return [unbroadcast(-matmul(yt, matmul(_spread(g, np.shape(ctx.out)), yt)),
                        ctx.shapes[0])]


def _inv_jet(ctx: T.JetCtx, us: list) -> list:
    """B = A⁻¹ from A·B = I: B_k = −B₀·Σ_{j=1..k} A_j·B_{k−j} (the quotient recurrence
    with matrices; B₀ is the value, nan at a singular A as the value is)."""
    a, b = us[0], [ctx.out]
    for k in range(1, ctx.order + 1):
        acc = None
        for j in range(1, k + 1):
            if a[j] is not None and b[k - j] is not None:
                term = np.matmul(_spread(a[j], ctx.shapes[0]), b[k - j])
                acc = term if acc is None else acc + term
        b.append(None if acc is None else -np.matmul(ctx.out, acc))
    return b[1:]


inv = Primitive("inv", _inv_fwd, vjp=_inv_vjp,
                jvp=lambda ctx, ts: -matmul(ctx.out, matmul(_spread(ts[0], ctx.shapes[0]),
                                                            ctx.out)),
                jet=_inv_jet, arity=1, grad_name="LinalgInvExBackward0")


def _solve_vjp(ctx: Ctx, g: Any) -> list:
    """x = A⁻¹B: ḡ_B = A⁻ᵀ·G, ḡ_A = −ḡ_B·xᵀ."""
    a, x = ctx.inputs[0], ctx.out
    gb = solve(matrix_transpose(a), _spread(g, np.shape(x)))
    ga = -matmul(gb, matrix_transpose(x)) if ctx.needs[0] else None
    return [None if ga is None else unbroadcast(ga, ctx.shapes[0]),
            unbroadcast(gb, ctx.shapes[1]) if ctx.needs[1] else None]


def _solve_jvp(ctx: Ctx, tangents: list) -> Any:
    """dx = A⁻¹(dB − dA·x)."""
    (a, _), x = ctx.inputs, ctx.out
    ta, tb = tangents
    rhs = [t for t in (None if tb is None else _spread(tb, np.shape(x)),
                       None if ta is None else -matmul(_spread(ta, ctx.shapes[0]), x))
           if t is not None]
    return solve(a, rhs[0] if len(rhs) == 1 else rhs[0] + rhs[1])


def _solve_jet(ctx: T.JetCtx, us: list) -> list:
    """x = A⁻¹B from A·x = B: x_k = A₀⁻¹(B_k − Σ_{j=1..k} A_j·x_{k−j})."""
    a, b = us
    x = [ctx.out]
    for k in range(1, ctx.order + 1):
        rhs = None if b is None or b[k] is None else _spread(b[k], np.shape(ctx.out))
        for j in range(1, k + 1):
            if a is not None and a[j] is not None and x[k - j] is not None:
                term = np.matmul(_spread(a[j], ctx.shapes[0]), x[k - j])
                rhs = -term if rhs is None else rhs - term
        x.append(None if rhs is None else per_monomial(
            lambda r: _solve_fwd(ctx.inputs[0], np.asarray(r)), [rhs]))
    return x[1:]


solve = Primitive("solve", _solve_fwd, vjp=_solve_vjp, jvp=_solve_jvp, jet=_solve_jet,
                  arity=2, grad_name="LinalgSolveExBackward0")

__all__ = ["cofactor", "det", "inv", "solve"]
