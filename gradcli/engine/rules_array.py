"""The primitive table, second half: shapes, selection, reductions and products.

``rules.py`` holds the elementwise half and the table's helpers, and re-exports these, so
``rules.PRIMITIVES`` is the whole table.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcli.engine import taylor as T
from gradcli.engine.core import raw
from gradcli.engine.primitive import Ctx, Primitive
from gradcli.engine.rules_elementwise import (  # the broadcasting primitives are written there
    _reduced_shape_back,
    broadcast_to,
    linear,
    mul,
    reshape,
    sum,  # noqa: A004 - mirrors torch.sum
    unbroadcast,
    where,
)


def _mean_t(ctx: Ctx, g: Any) -> Any:
    n_in = int(np.prod(ctx.shapes[0], dtype=np.int64))
    n_out = int(np.prod(np.shape(ctx.out), dtype=np.int64))
    return broadcast_to(_reduced_shape_back(g, ctx.shapes[0], **ctx.params) * (n_out / n_in),
                        shape=ctx.shapes[0])


def _index_put(g: Any, key: Any, shape: tuple) -> np.ndarray:
    z = np.zeros(shape, dtype=np.result_type(g, np.float32))
    np.add.at(z, key, g)
    return z


def _axes_back(ctx: Ctx) -> tuple:
    return tuple(int(i) for i in np.argsort(ctx.params["axes"]))




matrix_transpose = linear("matrix_transpose", lambda a: np.swapaxes(a, -1, -2),
                          lambda ctx, g: matrix_transpose(g), grad_name="TransposeBackward0")
permute = linear("permute", lambda a, axes: np.transpose(a, axes),
                 lambda ctx, g: permute(g, axes=_axes_back(ctx)))
index = linear("index", lambda a, key: np.asarray(a)[key],
               lambda ctx, g: index_put(g, key=ctx.params["key"], shape=ctx.shapes[0]),
               grad_name="IndexBackward0")
index_put = linear("index_put", _index_put, lambda ctx, g: index(g, key=ctx.params["key"]))
mean = linear("mean", lambda a, dim=None, keepdim=False: np.mean(a, axis=dim, keepdims=keepdim),
              _mean_t)




# --- products -----------------------------------------------------------------------------
def _others_product(x: Any, y: Any, dim: Any = None, keepdim: bool = False) -> Any:
    """∂prod/∂xᵢ: the product of the other reduced elements. Without zeros that is prod/xᵢ
    (PyTorch's formula); with zeros, exclusive products from both ends, so no 0/0 (PyTorch's
    values, to any order)."""
    shape = np.shape(raw(x))
    if not np.any(raw(x) == 0):
        return _reduced_shape_back(y, shape, dim, keepdim) / x
    nd = len(shape)
    reduced = list(range(nd)) if dim is None else sorted(
        d % nd for d in ((dim,) if isinstance(dim, int) else dim))
    kept = [d for d in range(nd) if d not in reduced]
    order = kept + reduced  # reduced axes last, flattened into one
    flat = reshape(permute(x, axes=tuple(order)),
                   shape=tuple(shape[d] for d in kept) + (-1,))
    others = _exclusive(flat, reverse=False) * _exclusive(flat, reverse=True)
    back = reshape(others, shape=tuple(shape[d] for d in order))
    return permute(back, axes=tuple(int(i) for i in np.argsort(order)))


def _exclusive(x: Any, reverse: bool) -> Any:
    """Products along the last axis of the elements strictly before (after, if ``reverse``)
    each one, built from slices and multiplications so that they differentiate again."""
    n = np.shape(raw(x))[-1]
    lead = (slice(None),) * (np.ndim(raw(x)) - 1)
    acc: Any = np.ones(np.shape(raw(x))[:-1] + (1,), dtype=raw(x).dtype)
    parts: list[Any] = [None] * n
    for i in (range(n - 1, -1, -1) if reverse else range(n)):
        parts[i] = acc
        acc = mul(acc, index(x, key=lead + (slice(i, i + 1),)))
    return cat(*parts, dim=-1)


def _prod_vjp(ctx: Ctx, g: Any) -> list:
    x, p = ctx.inputs[0], ctx.params
    return [_reduced_shape_back(g, ctx.shapes[0], **p) * _others_product(x, ctx.out, **p)]


def _prod_jvp(ctx: Ctx, tangents: list) -> Any:
    x, p = ctx.inputs[0], ctx.params
    t = broadcast_to(tangents[0], shape=ctx.shapes[0])
    return sum(t * _others_product(x, ctx.out, **p), **p)


def _prod_jet(ctx: T.JetCtx, us: list) -> list:
    """The product of the reduced elements: one Cauchy product per element, so zeros
    need no division (as the first-order rule)."""
    x, p = ctx.inputs[0], ctx.params
    shape = np.shape(x)
    nd = len(shape)
    reduced = list(range(nd)) if p.get("dim") is None else sorted(
        d % nd for d in ((p["dim"],) if isinstance(p["dim"], int) else p["dim"]))
    order = [d for d in range(nd) if d not in reduced] + reduced
    kept = tuple(shape[d] for d in order[:nd - len(reduced)])

    def elements(c: Any) -> Any:
        if c is None:
            return None
        flat = np.transpose(np.broadcast_to(c, shape), order)
        return flat.reshape(kept + (-1,))

    series = [elements(c) for c in T.full_series(us[0], x, ctx.order)]
    acc = None
    for i in range(series[0].shape[-1]):
        one = T.Series([None if c is None else c[..., i] for c in series])
        acc = one if acc is None else acc * one
    out_shape = np.shape(ctx.out)
    got = [None if c is None else np.reshape(c, out_shape) for c in acc.c[1:]]
    return [T.first(ctx, us)] + got[1:]


prod = Primitive("prod", lambda a, dim=None, keepdim=False: np.prod(a, axis=dim, keepdims=keepdim),
                 vjp=_prod_vjp, jvp=_prod_jvp, jet=_prod_jet, arity=1)


# --- the 2-norm ---------------------------------------------------------------------------
def _norm_fwd(a: Any, dim: Any = None, keepdim: bool = False) -> Any:
    return np.sqrt(np.sum(a * a, axis=dim, keepdims=keepdim))


def _norm_vjp(ctx: Ctx, g: Any) -> list:
    """g·x/‖x‖ with x/‖x‖ selected to 0 where ‖x‖ = 0: PyTorch's formula, so the gradient at
    0 is 0 and, to second order, the selected-away x/0 still gives nan, as in PyTorch."""
    x, p = ctx.inputs[0], ctx.params
    y = _reduced_shape_back(ctx.out, ctx.shapes[0], **p)
    return [_reduced_shape_back(g, ctx.shapes[0], **p) * where(y == 0, 0.0, x / y)]


def _norm_jvp(ctx: Ctx, tangents: list) -> Any:
    x, y, p = ctx.inputs[0], ctx.out, ctx.params
    dot = sum(x * broadcast_to(tangents[0], shape=ctx.shapes[0]), **p)
    return where(y == 0, 0.0, dot / y)


def _norm_square(ctx: T.JetCtx, us: list) -> list:
    x = T.Series(T.full_series(us[0], ctx.inputs[0], ctx.order))
    full = np.shape(ctx.inputs[0])
    return [None if c is None else np.sum(np.broadcast_to(c, full), axis=ctx.params.get("dim"),
                                          keepdims=ctx.params.get("keepdim", False))
            for c in (x * x).c]


norm = Primitive("norm", _norm_fwd, vjp=_norm_vjp, jvp=_norm_jvp,
                 jet=T.sqrt_rule(_norm_square), arity=1, grad_name="NormBackward1")


# --- matrix products and joins --------------------------------------------------------------
def swap(a: Any) -> Any:
    """The last two axes exchanged."""
    n = np.ndim(raw(a))
    return permute(a, axes=tuple(range(n - 2)) + (n - 1, n - 2))


def _matmul_vjp(ctx: Ctx, g: Any) -> list:
    a, b = ctx.inputs
    sa, sb = ctx.shapes
    a2 = reshape(a, shape=(1,) + sa) if len(sa) == 1 else a
    b2 = reshape(b, shape=sb + (1,)) if len(sb) == 1 else b
    out2 = np.broadcast_shapes(np.shape(raw(a2))[:-2], np.shape(raw(b2))[:-2]) + (
        np.shape(raw(a2))[-2], np.shape(raw(b2))[-1])
    # a per-point cotangent of shared operands (inside batch_axes) keeps its leading axes
    g2 = broadcast_to(g, shape=np.broadcast_shapes(np.shape(raw(g)), np.shape(raw(ctx.out))))
    if len(sa) == 1 or len(sb) == 1:
        g2 = reshape(g2, shape=out2)
    ga = unbroadcast(matmul(g2, swap(b2)), np.shape(raw(a2))) if ctx.needs[0] else None
    gb = unbroadcast(matmul(swap(a2), g2), np.shape(raw(b2))) if ctx.needs[1] else None
    # a vector operand's cotangent drops the unit axis it was given (no batch axes there)
    return [reshape(ga, shape=sa) if ga is not None and len(sa) == 1 else ga,
            reshape(gb, shape=sb) if gb is not None and len(sb) == 1 else gb]


def _matmul_jvp(ctx: Ctx, tangents: list) -> Any:
    (a, b), (ta, tb) = ctx.inputs, tangents
    terms = [matmul(broadcast_to(ta, shape=ctx.shapes[0]), b) if ta is not None else None,
             matmul(a, broadcast_to(tb, shape=ctx.shapes[1])) if tb is not None else None]
    live = [t for t in terms if t is not None]
    return None if not live else live[0] if len(live) == 1 else live[0] + live[1]


matmul = Primitive("matmul", np.matmul, vjp=_matmul_vjp, jvp=_matmul_jvp, arity=2,
                   jet=T.product(lambda ctx, a, b: np.matmul(np.broadcast_to(a, ctx.shapes[0]),
                                                             np.broadcast_to(b, ctx.shapes[1]))),
                   grad_name="MmBackward0")


def _slice_along(g: Any, dim: int, start: int, stop: int | None) -> Any:
    key = (slice(None),) * (dim % np.ndim(raw(g))) + (
        (start if stop is None else slice(start, stop)),)
    return index(g, key=key)


def _joined_jvp(join: Primitive, ctx: Ctx, tangents: list) -> Any:
    if all(t is None for t in tangents):
        return None
    filled = [broadcast_to(t, shape=s) if t is not None else np.zeros(s)
              for t, s in zip(tangents, ctx.shapes, strict=True)]
    return join(*filled, **ctx.params)


def _stack_vjp(ctx: Ctx, g: Any) -> list:
    dim = ctx.params["dim"]
    return [unbroadcast(_slice_along(g, dim, i, None), s) if need else None
            for i, (s, need) in enumerate(zip(ctx.shapes, ctx.needs, strict=True))]


def _cat_vjp(ctx: Ctx, g: Any) -> list:
    dim, out, start = ctx.params["dim"], [], 0
    for shape, need in zip(ctx.shapes, ctx.needs, strict=True):
        n = shape[dim]
        out.append(_slice_along(g, dim, start, start + n) if need else None)
        start += n
    return out


stack = Primitive("stack", lambda *a, dim=0: np.stack(np.broadcast_arrays(*a), axis=dim),
                  vjp=_stack_vjp, jvp=lambda ctx, ts: _joined_jvp(stack, ctx, ts),
                  jet=T.per_coefficient, saves=False)
cat = Primitive("cat", lambda *a, dim=0: np.concatenate(a, axis=dim), vjp=_cat_vjp,
                jvp=lambda ctx, ts: _joined_jvp(cat, ctx, ts), jet=T.per_coefficient,
                saves=False)
