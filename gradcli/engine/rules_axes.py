"""The primitive table, third part: work along trailing axes, and stable reductions.

These primitives act on the last axes of their inputs (negative ``dim``), so that a value
may carry any number of leading axes: the evaluation layer's per-point values have batch
axes first and vector or matrix components last, and inside ``batch_axes`` a cotangent may
be larger than a value along those leading axes (the per-point derivative of a value shared
by every point). Their rules therefore never reshape to a stored shape: they insert and
remove trailing unit axes (``unsqueeze``, ``squeeze``), swap the last two axes
(``matrix_transpose``, in ``rules_array.py``) and broadcast, all of which work whatever
leads.

The reductions follow PyTorch's formulas: ``logsumexp`` shifts by the maximum (finite at
[1000, 1000]), ``softmax`` and ``log_softmax`` have PyTorch's backward formulas on their
results, ``amax``/``amin`` (``torch.max(v)``) share the gradient evenly between ties,
``vector_norm`` masks ``x/‖x‖`` at 0. Rules are written with primitives, so they
differentiate again (second order and beyond).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import taylor as T
from gradcli.engine.core import raw
from gradcli.engine.primitive import Ctx, Primitive
from gradcli.engine.rules_elementwise import (  # noqa: A004 - abs, sum mirror torch's
    Dim,
    _negative,
    abs,
    broadcast_to,
    exp,
    linear,
    pow_scalar,
    sgn,
    sum,
    unsqueeze,
    where,
    zeros,
)


def _kept(g: Any, dim: Dim, keepdim: bool, ndim: int) -> Any:
    """A reduction's output (or cotangent) with its reduced axes back, as unit axes."""
    return g if keepdim else unsqueeze(g, dim=_negative(dim, ndim))


def _spread(g: Any, shape: tuple[int, ...]) -> Any:
    """``g`` broadcast against an input of ``shape``: the input's shape, larger along leading
    axes where ``g`` is (a per-point cotangent of a shared value)."""
    return broadcast_to(g, shape=np.broadcast_shapes(np.shape(raw(g)), shape))


# --- selecting components -------------------------------------------------------------------
def _out_ndim(key: tuple) -> int:
    """Component axes of ``a[..., *key]``: one per slice, one for adjacent index arrays."""
    arrays = any(isinstance(k, np.ndarray) for k in key)
    return len([k for k in key if isinstance(k, slice)]) + (1 if arrays else 0)


def _put(g: Any, key: tuple, comp: tuple[int, ...], ndim: int) -> np.ndarray:
    """Zeros of an input whose last axes are ``comp`` (``ndim`` axes in all), ``g`` at
    ``key``: the transpose of ``take``. Leading axes follow ``g`` (padded to ``ndim``)."""
    g = np.asarray(g)
    lead = g.shape[:max(0, g.ndim - _out_ndim(key))]
    lead = (1,) * max(0, ndim - len(comp) - len(lead)) + lead
    out = np.zeros(lead + comp, dtype=g.dtype if g.dtype.kind == "f" else np.float64)
    out[(Ellipsis, *key)] = g  # the keys gradcli makes never repeat an index
    return out


def _take_t(ctx: Ctx, g: Any) -> Any:
    key = ctx.params["key"]
    shape = ctx.shapes[0]
    return put(g, key=key, comp=shape[len(shape) - len(key):], ndim=len(shape))


take = linear("take", lambda a, key: np.asarray(a)[(Ellipsis, *key)], _take_t,
              grad_name="IndexBackward0")
put = linear("put", _put, lambda ctx, g: take(g, key=ctx.params["key"]),
             grad_name="IndexPutBackward0")


# --- sums along an axis ---------------------------------------------------------------------
def _cumsum_fwd(a: Any, dim: int = -1, reverse: bool = False) -> Any:
    if not reverse:
        return np.cumsum(a, axis=dim)
    return np.flip(np.cumsum(np.flip(a, axis=dim), axis=dim), axis=dim)


def _cumsum_t(ctx: Ctx, g: Any) -> Any:
    p = ctx.params
    return cumsum(_spread(g, ctx.shapes[0]), dim=p.get("dim", -1),
                  reverse=not p.get("reverse", False))


cumsum = linear("cumsum", _cumsum_fwd, _cumsum_t)


# --- logsumexp and the softmax family -------------------------------------------------------
def _finite_max(a: Any, dim: Dim) -> np.ndarray:
    """The maximum along ``dim`` (kept), 0 where it is infinite: PyTorch's shift, so that
    all -inf gives -inf and an inf gives inf, never inf - inf."""
    m = np.max(a, axis=dim, keepdims=True)
    return np.where(np.isinf(m), 0.0, m).astype(np.result_type(a), copy=False)


def _logsumexp_fwd(a: Any, dim: Dim = -1, keepdim: bool = False) -> Any:
    m = _finite_max(a, dim)
    out = np.log(np.sum(np.exp(a - m), axis=dim, keepdims=True)) + m
    return out if keepdim else np.squeeze(out, axis=dim)


def _lse_weights(ctx: Ctx) -> Any:
    """∂logsumexp/∂x: softmax along one axis (exactly [0.5, 0.5] at [1000, 1000]), or
    exp(x - logsumexp(x)) over several (PyTorch's logsumexp backward)."""
    p = ctx.params
    x, dim = ctx.inputs[0], p.get("dim", -1)
    if isinstance(dim, int):
        return softmax(x, dim=dim)
    return exp(x - _kept(ctx.out, dim, p.get("keepdim", False), np.ndim(raw(x))))


def _logsumexp_vjp(ctx: Ctx, g: Any) -> list:
    p, nd = ctx.params, len(ctx.shapes[0])
    return [_kept(g, p.get("dim", -1), p.get("keepdim", False), nd) * _lse_weights(ctx)]


def _logsumexp_jvp(ctx: Ctx, tangents: list) -> Any:
    p = ctx.params
    return sum(tangents[0] * _lse_weights(ctx), dim=p.get("dim", -1),
               keepdim=p.get("keepdim", False))


def _minus(a: Any, b: Any) -> Any:
    """a - b with None as an exact zero."""
    if b is None:
        return a
    return -b if a is None else a - b


def _lse_series(ctx: T.JetCtx, u: list, dim: Dim) -> tuple[list, list]:
    """Taylor coefficients of E = exp(u - m) and of logsumexp(u) along ``dim`` (kept), for
    the input series ``u``: E' = E·u', S = ΣE, (log S)' = S'/S, in series arithmetic (the
    shift m is a constant, so the series are free of overflow as the value is)."""
    x0 = ctx.inputs[0]
    m = _finite_max(x0, dim)
    e = [np.exp(x0 - m)]
    T.ode_fill(T.weighted(u), e, 0.0, 1.0, 0.0, ctx.order)
    s = [None if c is None else np.sum(c, axis=dim, keepdims=True) for c in e]
    w, ds = (1.0 / T.Series(s)).c, T.weighted(s)
    return e, [np.log(s[0]) + m] + [T.integral(ds, w, k) for k in range(1, ctx.order + 1)]


def _logsumexp_jet(ctx: T.JetCtx, us: list) -> list:
    p = ctx.params
    dim = p.get("dim", -1)
    y = _lse_series(ctx, us[0], dim)[1][1:]
    return y if p.get("keepdim", False) else [None if c is None else np.squeeze(c, axis=dim)
                                               for c in y]


logsumexp = Primitive("logsumexp", _logsumexp_fwd, vjp=_logsumexp_vjp, jvp=_logsumexp_jvp,
                      jet=_logsumexp_jet, arity=1)


def _softmax_fwd(a: Any, dim: int = -1) -> Any:
    e = np.exp(a - np.max(a, axis=dim, keepdims=True))  # torch: an inf gives nan
    return e / np.sum(e, axis=dim, keepdims=True)


def _softmax_back(y: Any, g: Any, dim: int) -> Any:
    """y·(g - Σ g·y): PyTorch's softmax backward, which is also its forward rule."""
    return y * (g - sum(g * y, dim=dim, keepdim=True))


def _softmax_jet(ctx: T.JetCtx, us: list) -> list:
    """E / ΣE, the quotient recurrence on the series of ``_lse_series``."""
    dim = ctx.params.get("dim", -1)
    e = _lse_series(ctx, us[0], dim)[0]
    s = [None if c is None else np.sum(c, axis=dim, keepdims=True) for c in e]
    return (T.Series(e) / T.Series(s)).c[1:]


softmax = Primitive(
    "softmax", _softmax_fwd,
    vjp=lambda ctx, g: [_softmax_back(ctx.out, g, ctx.params.get("dim", -1))],
    jvp=lambda ctx, ts: _softmax_back(ctx.out, ts[0], ctx.params.get("dim", -1)),
    jet=_softmax_jet, arity=1)


def _log_softmax_fwd(a: Any, dim: int = -1) -> Any:
    return a - _logsumexp_fwd(a, dim, keepdim=True)


def _log_softmax_vjp(ctx: Ctx, g: Any) -> list:
    """g - exp(y)·Σg: PyTorch's log_softmax backward."""
    g = _spread(g, ctx.shapes[0])
    return [g - exp(ctx.out) * sum(g, dim=ctx.params.get("dim", -1), keepdim=True)]


def _log_softmax_jvp(ctx: Ctx, tangents: list) -> Any:
    """t - Σ exp(y)·t: the transpose of the VJP."""
    t = _spread(tangents[0], ctx.shapes[0])
    return t - sum(exp(ctx.out) * t, dim=ctx.params.get("dim", -1), keepdim=True)


def _log_softmax_jet(ctx: T.JetCtx, us: list) -> list:
    """u - logsumexp(u) coefficient by coefficient."""
    lse = _lse_series(ctx, us[0], ctx.params.get("dim", -1))[1]
    return [_minus(u, c) for u, c in zip(us[0][1:], lse[1:], strict=True)]


log_softmax = Primitive("log_softmax", _log_softmax_fwd, vjp=_log_softmax_vjp,
                        jvp=_log_softmax_jvp, jet=_log_softmax_jet, arity=1)


def _one_hot(a: Any, k: Any) -> np.ndarray:
    """1 at class k along the last axis of ``a``, nan everywhere when k is not a class
    (not a whole number in 0..n-1): the loss is undefined there."""
    n = np.shape(a)[-1]
    k = np.asarray(raw(k))
    valid = (k == np.floor(k)) & (k >= 0) & (k < n)
    hot = (np.arange(n) == k[..., None]).astype(np.result_type(raw(a), np.float32))
    return np.where(valid[..., None], hot, np.nan).astype(hot.dtype, copy=False)


def _cross_entropy_fwd(a: Any, k: Any) -> Any:
    hot = _one_hot(a, k)
    picked = np.sum(np.where(hot == 1, a, 0.0), axis=-1) + np.where(np.isnan(hot[..., 0]),
                                                                     np.nan, 0.0)
    return _logsumexp_fwd(a, -1) - picked


def _cross_entropy_grad(ctx: Ctx) -> Any:
    a, k = ctx.inputs
    return softmax(a, dim=-1) - _one_hot(raw(a), k)


def _cross_entropy_jet(ctx: T.JetCtx, us: list) -> list | None:
    """logsumexp(a)_k - a_k[class], coefficient by coefficient (the class has no series)."""
    if us[0] is None:
        return None
    lse = _lse_series(ctx, us[0], -1)[1]
    hot = _one_hot(ctx.inputs[0], ctx.inputs[1])
    return [_minus(None if c is None else c[..., 0],
                     None if a is None else np.sum(np.where(hot == 1, a, 0.0), axis=-1))
            for a, c in zip(us[0][1:], lse[1:], strict=True)]


# cross_entropy(logits, k) = logsumexp(logits) - logits[k]; its gradient is softmax - one-hot
# (the class k has none, as an integer target in PyTorch)
cross_entropy = Primitive(
    "cross_entropy", _cross_entropy_fwd,
    vjp=lambda ctx, g: [unsqueeze(g, dim=-1) * _cross_entropy_grad(ctx) if ctx.needs[0]
                        else None, zeros(g, ctx.shapes[1]) if ctx.needs[1] else None],
    jvp=lambda ctx, ts: None if ts[0] is None else sum(ts[0] * _cross_entropy_grad(ctx),
                                                       dim=-1),
    jet=_cross_entropy_jet, arity=2)



# --- maxima and minima of a vector, and its p-norms ------------------------------------------
def _ties(ctx: Ctx) -> tuple[np.ndarray, np.ndarray]:
    """Where the extreme value is reached (nan matches nan), and how many times: PyTorch
    shares max(v)'s gradient evenly between ties."""
    x = raw(ctx.inputs[0])
    p = ctx.params
    y = raw(_kept(ctx.out, p["dim"], p.get("keepdim", False), np.ndim(x)))
    mask = (x == y) | (np.isnan(x) & np.isnan(y))
    return mask, np.sum(mask, axis=p["dim"], keepdims=True).astype(x.dtype)


def _extreme_vjp(ctx: Ctx, g: Any) -> list:
    mask, count = _ties(ctx)
    p = ctx.params
    kept = _kept(g, p["dim"], p.get("keepdim", False), len(ctx.shapes[0]))
    return [where(mask, kept / count, 0.0)]


def _extreme_jvp(ctx: Ctx, tangents: list) -> Any:
    mask, count = _ties(ctx)
    p = ctx.params
    return sum(where(mask, tangents[0], 0.0) / count, dim=p["dim"], keepdim=p.get("keepdim",
                                                                                 False))


# piecewise linear: every Taylor coefficient through the first-order rule, as max(a, b)
amax = Primitive("amax", lambda a, dim, keepdim=False: np.max(a, axis=dim, keepdims=keepdim),
                 vjp=_extreme_vjp, jvp=_extreme_jvp, jet=T.per_coefficient, arity=1)
amin = Primitive("amin", lambda a, dim, keepdim=False: np.min(a, axis=dim, keepdims=keepdim),
                 vjp=_extreme_vjp, jvp=_extreme_jvp, jet=T.per_coefficient, arity=1)


def _vector_norm_fwd(a: Any, ord: float, dim: Dim, keepdim: bool = False) -> Any:  # noqa: A002
    """‖a‖_ord for ord >= 1 (inf: the largest |aᵢ|), scaled by the largest |aᵢ| so that no
    power overflows or underflows."""
    m = np.max(np.abs(a), axis=dim, keepdims=True)
    if ord == np.inf:
        out = m
    elif ord == 1:
        out = np.sum(np.abs(a), axis=dim, keepdims=True)
    else:
        scale = np.where((m == 0) | ~np.isfinite(m), 1.0, m)
        out = np.sum((np.abs(a) / scale) ** ord, axis=dim, keepdims=True) ** (1.0 / ord) * scale
        out = np.where(np.isinf(m), m, out)
    out = out.astype(np.result_type(a), copy=False)
    return out if keepdim else np.squeeze(out, axis=dim)


def _vector_norm_partial(ctx: Ctx) -> Any:
    """∂‖x‖/∂x: sgn(x)·(|x|/‖x‖)^(p-1), 0 where ‖x‖ = 0 (PyTorch's formulas; for p = inf
    sgn(x) shared evenly between the largest |xᵢ|)."""
    x, p = ctx.inputs[0], ctx.params
    nd = np.ndim(raw(x))
    if p["ord"] == 1:
        return sgn(x)
    if p["ord"] == np.inf:
        y = raw(_kept(ctx.out, p["dim"], p.get("keepdim", False), nd))
        mask = np.abs(raw(x)) == y
        share = mask / np.sum(mask, axis=p["dim"], keepdims=True)
        return sgn(x) * share.astype(y.dtype)
    y = _kept(ctx.out, p["dim"], p.get("keepdim", False), nd)
    ratio = pow_scalar(abs(x) / y, exponent=float(p["ord"]) - 1.0)
    return where(raw(y) == 0, 0.0, sgn(x) * ratio)


def _vector_norm_jet(ctx: T.JetCtx, us: list) -> list:
    """ord 1 and inf are piecewise linear (every coefficient through the first-order rule);
    any other p is (Σ|xᵢ|^p)^(1/p) in series arithmetic with |xᵢ| = sgn(xᵢ₀)·xᵢ (xᵢ itself
    for an even p). A component at 0 moving along the line contributes |t|^p·|u|^p: zero
    coefficients below order p and none above (nan) unless p is even; a zero norm has no
    higher coefficients either (nan), as the cone ‖x‖ has no second derivative at 0."""
    p = ctx.params
    q = float(p["ord"])
    if q in (1.0, np.inf):
        return T.per_coefficient(ctx, us)
    x0 = np.asarray(ctx.inputs[0])
    order, dim, keepdim = ctx.order, p["dim"], p.get("keepdim", False)
    coeffs = T.full_series(us[0], x0, order)
    shape = np.broadcast_shapes(*(np.shape(c) for c in coeffs if c is not None))
    coeffs = [None if c is None else np.broadcast_to(c, shape) for c in coeffs]
    even = q.is_integer() and q % 2 == 0
    sign = 1.0 if even else np.sign(x0)
    powers = (T.Series([None if c is None else sign * c for c in coeffs]) ** q).c
    if not even:
        at_zero = np.broadcast_to(x0 == 0, shape)
        moving = np.zeros(shape, dtype=bool)
        for c in coeffs[1:]:
            moving = moving if c is None else moving | T.moving(c)
        for k in range(1, order + 1):
            if at_zero.any():
                fill = np.where(moving, np.nan if k >= q else 0.0, 0.0)
                base = np.zeros(shape) if powers[k] is None else powers[k]
                powers[k] = np.where(at_zero, fill, base)
    total = [None if c is None else np.sum(np.broadcast_to(c, shape), axis=dim, keepdims=True)
             for c in powers]
    norm = (T.Series(total) ** (1.0 / q)).c
    if not keepdim:
        norm = [None if c is None else np.squeeze(c, axis=dim) for c in norm]
    return [T.first(ctx, us)] + norm[2:]


vector_norm = Primitive(
    "vector_norm", _vector_norm_fwd, jet=_vector_norm_jet,
    vjp=lambda ctx, g: [_kept(g, ctx.params["dim"], ctx.params.get("keepdim", False),
                              len(ctx.shapes[0])) * _vector_norm_partial(ctx)],
    jvp=lambda ctx, ts: sum(ts[0] * _vector_norm_partial(ctx), dim=ctx.params["dim"],
                            keepdim=ctx.params.get("keepdim", False)),
    arity=1, grad_name="LinalgVectorNormBackward0")

__all__ = ["amax", "amin", "cross_entropy", "cumsum", "log_softmax", "logsumexp", "put",
           "softmax", "take", "vector_norm"]
