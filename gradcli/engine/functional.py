"""Functional transforms over the engine: grad, vjp, jvp, jacobian, hessian, hvp, gradcheck.

``jacobian`` picks the cheaper mode: reverse with one-hot cotangents when there are fewer
outputs than inputs, forward (one recorded pass, replayed per direction) otherwise. With
``batched=True`` the leading axis of every input and output indexes independent points;
each pass then covers all points at once: there is never a Python loop over points.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .backward import grad as autograd_grad
from .core import Tensor, _quiet, as_array
from .forward import Linearized, dual_jvp, linearize
from .grad_mode import _push_forward, enable_grad

__all__ = ["grad", "vjp", "jvp", "jacobian", "hessian", "hvp", "gradcheck", "linearize"]


def _leaves(xs: Sequence[Any]) -> list[Tensor]:
    return [Tensor._make(np.array(as_array(x))).requires_grad_() for x in xs]


def _zeros_if_none(gs: Sequence[Any], like: Sequence[Tensor]) -> tuple[Tensor, ...]:
    return tuple(Tensor._make(np.zeros_like(x.arr)) if g is None else g.detach()
                 for g, x in zip(gs, like, strict=True))


def grad(f: Callable[..., Tensor], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """``grad(f)(*xs)``: the gradient of scalar-valued ``f`` w.r.t. argument ``argnums``."""

    def grad_f(*xs: Any) -> Any:
        leaves = _leaves(xs)
        with enable_grad():
            out = f(*leaves)
        nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
        gs = autograd_grad(out, [leaves[i] for i in nums], allow_unused=True)
        res = _zeros_if_none(gs, [leaves[i] for i in nums])
        return res[0] if isinstance(argnums, int) else res

    return grad_f


def vjp(f: Callable[..., Tensor], *xs: Any, v: Any = None) -> tuple[Tensor, tuple[Tensor, ...]]:
    """(f(xs), vᵀ·J): the seeds' ``backward(gradient=v)`` as a pure function."""
    leaves = _leaves(xs)
    with enable_grad():
        out = f(*leaves)
    gs = autograd_grad(out, leaves, v, allow_unused=True)
    return out.detach(), _zeros_if_none(gs, leaves)


def jvp(f: Callable[..., Tensor], xs: Sequence[Any], us: Sequence[Any]) -> tuple[Tensor, Tensor]:
    """(f(xs), J·u) by forward mode: one sweep of dual numbers through the JVP rules."""
    out, tangent = dual_jvp(f, xs, us)
    return out.detach(), Tensor._make(tangent)


def _split(flat: np.ndarray, shapes: list[tuple], lead: tuple) -> list[np.ndarray]:
    parts, start = [], 0
    for s in shapes:
        n = int(np.prod(s, dtype=np.int64))
        parts.append(flat[..., start:start + n].reshape(lead + s))
        start += n
    return parts


def jacobian(f: Callable[..., Tensor], *xs: Any, batched: bool = False) -> Any:
    """∂f/∂x for each input, shaped ``out.shape + x.shape`` (per point when ``batched``:
    ``(B,) + out_point_shape + x_point_shape``), in min(m, n) passes."""
    leaves = _leaves(xs)
    with enable_grad():
        out = f(*leaves)
    lead = out.shape[:1] if batched else ()
    out_pt = out.shape[len(lead):]
    in_pts = [x.shape[len(lead):] for x in leaves]
    m = int(np.prod(out_pt, dtype=np.int64))
    n = sum(int(np.prod(s, dtype=np.int64)) for s in in_pts)
    blocks = [np.zeros(lead + out_pt + s, dtype=out.dtype) for s in in_pts]
    if m <= n:
        for k in range(m):
            v = np.zeros(lead + (m,), dtype=out.dtype)
            v[..., k] = 1.0
            gs = autograd_grad(out, leaves, v.reshape(out.shape), retain_graph=True,
                               allow_unused=True)
            idx = np.unravel_index(k, out_pt) if out_pt else ()
            for b, g, x in zip(blocks, gs, leaves, strict=True):
                if g is not None:
                    b[(slice(None),) * len(lead) + idx] = np.broadcast_to(g.arr, x.shape)
    else:
        lin = Linearized(leaves, [out])
        flat_cols = np.zeros(lead + out_pt + (n,), dtype=out.dtype)
        j = 0
        for i, s in enumerate(in_pts):
            for k in range(int(np.prod(s, dtype=np.int64))):
                t = np.zeros(lead + (int(np.prod(s, dtype=np.int64)),), dtype=out.dtype)
                t[..., k] = 1.0
                ts: list[Any] = [None] * len(leaves)
                ts[i] = t.reshape(leaves[i].shape)
                (res,) = lin.jvp(ts)
                if res is not None:
                    flat_cols[..., j] = np.broadcast_to(res, out.shape)
                j += 1
        blocks = _split(flat_cols, in_pts, lead + out_pt)
    result = tuple(Tensor._make(b) for b in blocks)
    return result[0] if len(xs) == 1 else result


def _hvp_pass(f: Callable[..., Tensor], xs: Sequence[Any], vs: Sequence[Any]) -> tuple:
    """Forward-over-reverse: reverse mode for ∇f on dual numbers carrying tangent v."""
    leaves = _leaves(xs)
    for leaf, v in zip(leaves, vs, strict=True):
        leaf.tangent = None if v is None else np.broadcast_to(as_array(v, leaf.dtype), leaf.shape)
    _push_forward(1)
    try:
        with enable_grad(), _quiet():
            out = f(*leaves)
            gs = autograd_grad(out, leaves, allow_unused=True)
    finally:
        _push_forward(-1)
    tangents = tuple(np.zeros_like(x.arr) if g is None or g.tangent is None
                     else np.broadcast_to(g.tangent, x.shape).copy()
                     for g, x in zip(gs, leaves, strict=True))
    return out, gs, tangents


def hvp(f: Callable[..., Tensor], xs: Sequence[Any], vs: Sequence[Any]) -> tuple:
    """(f(xs), H·v) for scalar ``f`` by forward-over-reverse, without forming H."""
    out, _, tangents = _hvp_pass(f, xs, vs)
    return out.detach(), tuple(Tensor._make(t) for t in tangents)


def hessian(f: Callable[..., Tensor], *xs: Any) -> Any:
    """Second derivatives of scalar ``f``: forward-over-reverse, one pass per input
    element. For one input x the result has shape ``x.shape + x.shape``; for several, a
    tuple of tuples ``H[i][j]`` of shape ``xi.shape + xj.shape``."""
    shapes = [np.shape(as_array(x)) for x in xs]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    rows: list[list[np.ndarray]] = [[np.zeros(si + sj) for sj in shapes] for si in shapes]
    for j, sj in enumerate(shapes):
        for k in range(sizes[j]):
            vs: list[Any] = [None] * len(xs)
            v = np.zeros(sizes[j])
            v[k] = 1.0
            vs[j] = v.reshape(sj)
            _, _, tangents = _hvp_pass(f, xs, vs)
            idx = np.unravel_index(k, sj) if sj else ()
            for i, t in enumerate(tangents):
                rows[i][j][(Ellipsis,) + idx] = t
    if len(xs) == 1:
        return Tensor._make(rows[0][0])
    return tuple(tuple(Tensor._make(b) for b in row) for row in rows)


def gradcheck(f: Callable[..., Tensor], *xs: Any, eps: float = 1e-6) -> tuple[float, float]:
    """Compare the engine's Jacobian with central finite differences in float64.

    Returns (largest absolute error, largest relative error) over all entries.
    """
    xs64 = [np.array(as_array(x, np.float64)) for x in xs]
    jac = jacobian(f, *xs64)
    jacs = [jac] if len(xs64) == 1 else list(jac)
    worst_abs = worst_rel = 0.0
    for i, x in enumerate(xs64):
        flat = x.reshape(-1)
        for k in range(flat.size):
            keep = flat[k]
            flat[k] = keep + eps
            hi = f(*[Tensor._make(a) for a in xs64]).arr
            flat[k] = keep - eps
            lo = f(*[Tensor._make(a) for a in xs64]).arr
            flat[k] = keep
            fd = (hi - lo) / (2 * eps)
            ad = jacs[i].arr.reshape(hi.shape + (-1,))[..., k]
            err = np.abs(fd - ad)
            worst_abs = max(worst_abs, float(np.max(err, initial=0.0)))
            rel = err / np.maximum(np.abs(fd), 1.0)
            worst_rel = max(worst_rel, float(np.max(rel, initial=0.0)))
    return worst_abs, worst_rel
