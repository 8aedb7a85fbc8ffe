"""Functional transforms over the engine: grad, vjp, jvp, jacobian, hessian, hvp, gradcheck.

The modes are PyTorch's: ``jacobian`` is reverse mode (one sweep per output) unless
``strategy="forward-mode"`` (one recorded pass, replayed per input direction), ``hessian``
is reverse over reverse, ``jvp`` forward mode and ``hvp`` forward over reverse. With
``batched=True`` the leading axis of every input and output indexes independent points;
each pass then covers all points at once: there is never a Python loop over points.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcli.engine.backward import grad as autograd_grad
from gradcli.engine.core import Tensor, as_array
from gradcli.engine.forward import Linearized, dual_jvp, linearize
from gradcli.engine.grad_mode import enable_grad, forward_ad, quiet

__all__ = ["grad", "vjp", "jvp", "jacobian", "hessian", "hvp", "gradcheck", "linearize",
           "GradcheckError"]


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


def jacobian(f: Callable[..., Tensor], *xs: Any, batched: bool = False,
             strategy: str = "reverse-mode") -> Any:
    """∂f/∂x for each input, shaped ``out.shape + x.shape`` (per point when ``batched``:
    ``(B,) + out_point_shape + x_point_shape``): m reverse passes, or n forward passes
    with ``strategy="forward-mode"``."""
    if strategy not in ("reverse-mode", "forward-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    leaves = _leaves(xs)
    with enable_grad():
        out = f(*leaves)
    lead = out.shape[:1] if batched else ()
    out_pt = out.shape[len(lead):]
    in_pts = [x.shape[len(lead):] for x in leaves]
    m = int(np.prod(out_pt, dtype=np.int64))
    n = sum(int(np.prod(s, dtype=np.int64)) for s in in_pts)
    blocks = [np.zeros(lead + out_pt + s, dtype=out.dtype) for s in in_pts]
    if strategy == "reverse-mode":
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
    with forward_ad(), enable_grad(), quiet():
        out = f(*leaves)
        gs = autograd_grad(out, leaves, allow_unused=True)
    tangents = tuple(np.zeros_like(x.arr) if g is None or g.tangent is None
                     else np.broadcast_to(g.tangent, x.shape).copy()
                     for g, x in zip(gs, leaves, strict=True))
    return out, gs, tangents


def hvp(f: Callable[..., Tensor], xs: Sequence[Any], vs: Sequence[Any]) -> tuple:
    """(f(xs), H·v) for scalar ``f`` by forward-over-reverse, without forming H."""
    out, _, tangents = _hvp_pass(f, xs, vs)
    return out.detach(), tuple(Tensor._make(t) for t in tangents)


def hessian(f: Callable[..., Tensor], *xs: Any) -> Any:
    """Second derivatives of scalar ``f``, reverse over reverse as
    ``torch.autograd.functional.hessian``: the gradient is recorded (``create_graph``), then
    each of its elements is differentiated by one more reverse sweep. For one input x the
    result has shape ``x.shape + x.shape``; for several, a tuple of tuples ``H[i][j]`` of
    shape ``xi.shape + xj.shape``."""
    leaves = _leaves(xs)
    with enable_grad(), quiet():
        out = f(*leaves)
        firsts = autograd_grad(out, leaves, create_graph=True, allow_unused=True)
    shapes = [x.shape for x in leaves]
    rows: list[list[np.ndarray]] = [[np.zeros(si + sj) for sj in shapes] for si in shapes]
    for i, g in enumerate(firsts):
        if g is None or not g.requires_grad:
            continue
        flat = g.reshape(-1)
        for k in range(flat.shape[0]):
            seconds = autograd_grad(flat[k], leaves, retain_graph=True, allow_unused=True)
            idx = np.unravel_index(k, shapes[i]) if shapes[i] else ()
            for j, h in enumerate(seconds):
                if h is not None:
                    rows[i][j][idx] = h.arr
    if len(xs) == 1:
        return Tensor._make(rows[0][0])
    return tuple(tuple(Tensor._make(b) for b in row) for row in rows)


class GradcheckError(RuntimeError):
    """The engine's Jacobian and central differences disagree (``torch``'s exception name)."""


def gradcheck(f: Callable[..., Tensor], *inputs: Any, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True) -> bool:
    """Compare the engine's Jacobian with central finite differences in float64, as
    ``torch.autograd.gradcheck``: True when every entry satisfies
    |analytical - numerical| <= atol + rtol·|numerical|, else GradcheckError (or False with
    ``raise_exception=False``). The inputs may be given as one tuple, as PyTorch takes them.
    """
    if len(inputs) == 1 and isinstance(inputs[0], tuple):
        inputs = inputs[0]
    xs64 = [np.array(as_array(x, np.float64)) for x in inputs]
    jac = jacobian(f, *xs64)
    jacs = [jac] if len(xs64) == 1 else list(jac)
    for i, x in enumerate(xs64):
        numerical = _central_differences(f, xs64, x, eps)
        analytical = jacs[i].arr.reshape(numerical.shape)
        if not np.all(np.abs(analytical - numerical) <= atol + rtol * np.abs(numerical)):
            if not raise_exception:
                return False
            raise GradcheckError(
                f"Jacobian mismatch for output 0 with respect to input {i},\n"
                f"numerical:{Tensor._make(numerical)!r}\nanalytical:{Tensor._make(analytical)!r}\n")
    return True


def _central_differences(f: Callable[..., Tensor], xs: list[np.ndarray], x: np.ndarray,
                         eps: float) -> np.ndarray:
    """∂f/∂x by central differences, shaped (f's size, x's size)."""
    flat, cols = x.reshape(-1), []
    for k in range(flat.size):
        keep = flat[k]
        flat[k] = keep + eps
        hi = f(*[Tensor._make(a) for a in xs]).arr
        flat[k] = keep - eps
        lo = f(*[Tensor._make(a) for a in xs]).arr
        flat[k] = keep
        cols.append(((hi - lo) / (2 * eps)).reshape(-1))
    return np.stack(cols, axis=-1) if cols else np.zeros((0, 0))
