"""The public operations (``gc.sin``, ``gc.stack``, ...): PyTorch-style signatures over the
primitives of the table in ``rules.py``.

The elementwise functions and operators are generated from the table (its ``function``,
``operator`` and ``compare`` kinds); the rest adapt PyTorch's arguments (``dim``,
``keepdim``, shapes given as varargs) to the primitives' parameters.
"""

from __future__ import annotations

import numbers
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcli.engine import core
from gradcli.engine import rules as R
from gradcli.engine.core import Tensor, operand, raw
from gradcli.engine.primitive import Primitive

_ELEMENTWISE = [n for n, p in R.PRIMITIVES.items()
                if p.kind in ("function", "operator") and p.arity == 1]
_BINARY = [n for n, p in R.PRIMITIVES.items()
           if p.kind in ("function", "operator", "compare") and p.arity == 2 and n != "pow"]


def _wrap(out: Any) -> Tensor:
    return out if isinstance(out, Tensor) else Tensor._make(np.asarray(out, dtype=float))


def _public(prim: Primitive) -> Any:
    def fn(*args: Any, **params: Any) -> Tensor:
        return _wrap(prim(*[operand(a) for a in args], **params))

    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise ``{prim.name}`` (differentiable; see rules.py for its derivative)."
    return fn


_namespace = globals()
for _name in _ELEMENTWISE + _BINARY:
    _namespace[_name] = _public(R.PRIMITIVES[_name])
arcsin, arccos, arctan = _namespace["asin"], _namespace["acos"], _namespace["atan"]
multiply, divide, subtract = _namespace["mul"], _namespace["div"], _namespace["sub"]


def pow(base: Any, exponent: Any) -> Tensor:  # noqa: A001 - mirrors torch.pow
    """``base ** exponent`` with a scalar or tensor exponent."""
    exp = exponent if isinstance(exponent, numbers.Number) else operand(exponent)
    return _wrap(R.power(operand(base), exp))


def _dims(dim: Any) -> Any:
    return dim if dim is None or isinstance(dim, int) else tuple(dim)


def sum(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (all elements when None)."""
    return _wrap(R.sum(operand(x), dim=_dims(dim), keepdim=keepdim))


def mean(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Mean over ``dim`` (all elements when None)."""
    return _wrap(R.mean(operand(x), dim=_dims(dim), keepdim=keepdim))


def prod(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Product over ``dim`` (all elements when None); exact at zeros, to any order."""
    return _wrap(R.prod(operand(x), dim=_dims(dim), keepdim=keepdim))


def norm(x: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Euclidean norm over ``dim``; its gradient at 0 is 0."""
    if p not in (2, 2.0, "fro"):
        raise NotImplementedError("gradcli's norm supports the 2-norm only")
    return _wrap(R.norm(operand(x), dim=_dims(dim), keepdim=keepdim))


def clamp(x: Any, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
    """Clip to [min, max]; the gradient passes (as 1) on the boundary."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _wrap(R.clamp(operand(x), min=min, max=max))


clip = clamp


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` is nonzero, else ``b``; no gradient through the condition."""
    c = np.asarray(raw(condition))
    return _wrap(R.where(c.astype(bool), operand(a), operand(b)))


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product with numpy's broadcasting rules."""
    return _wrap(R.matmul(operand(a), operand(b)))


def dot(a: Any, b: Any) -> Tensor:
    """Inner product of two 1-D tensors."""
    if np.ndim(raw(a)) != 1 or np.ndim(raw(b)) != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {np.ndim(raw(a))}D and {np.ndim(raw(b))}D tensors"
        )
    return matmul(a, b)


def logsumexp(x: Any, dim: Any, keepdim: bool = False) -> Tensor:
    """log Σ exp(x) over ``dim``, shifted by the maximum so that it never overflows."""
    return _wrap(R.logsumexp(operand(x), dim=_dims(dim), keepdim=keepdim))


def softmax(x: Any, dim: int) -> Tensor:
    """exp(x) / Σ exp(x) along ``dim`` (shifted by the maximum)."""
    return _wrap(R.softmax(operand(x), dim=dim))


def log_softmax(x: Any, dim: int) -> Tensor:
    """x - logsumexp(x) along ``dim``."""
    return _wrap(R.log_softmax(operand(x), dim=dim))


def cumsum(x: Any, dim: int) -> Tensor:
    """Running sums along ``dim``."""
    return _wrap(R.cumsum(operand(x), dim=dim))


def amax(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The largest element over ``dim`` (all when None); ties share the gradient evenly."""
    x = operand(x)
    dims = tuple(range(np.ndim(raw(x)))) if dim is None else _dims(dim)
    return _wrap(R.amax(x, dim=dims, keepdim=keepdim))


def amin(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    """The smallest element over ``dim`` (all when None); ties share the gradient evenly."""
    x = operand(x)
    dims = tuple(range(np.ndim(raw(x)))) if dim is None else _dims(dim)
    return _wrap(R.amin(x, dim=dims, keepdim=keepdim))


def outer(a: Any, b: Any) -> Tensor:
    """The outer product of two 1-D tensors."""
    return _wrap(R.unsqueeze(operand(a), dim=-1) * R.unsqueeze(operand(b), dim=-2))


def trace(x: Any) -> Tensor:
    """The sum of the diagonal of a matrix."""
    n = min(np.shape(raw(x))[-2:])
    diagonal = R.take(operand(x), key=(np.arange(n), np.arange(n)))
    return _wrap(R.sum(diagonal, dim=-1))


def det(x: Any) -> Tensor:
    """Determinant of a (batch of) square matrices; its gradient is the cofactor matrix."""
    return _wrap(R.det(operand(x)))


def inverse(x: Any) -> Tensor:
    """Inverse of a (batch of) square matrices; nan for a singular one."""
    return _wrap(R.inv(operand(x)))


def solve(a: Any, b: Any) -> Tensor:
    """x with a·x = b; ``b`` a vector (n,) or matrices (..., n, k); nan for a singular a."""
    a, b = operand(a), operand(b)
    sa, sb = np.shape(raw(a)), np.shape(raw(b))
    if len(sb) == 1 or (len(sb) == len(sa) - 1 and sb == sa[:-1]):
        return _wrap(R.squeeze(R.solve(a, R.unsqueeze(b, dim=-1)), dim=-1))
    return _wrap(R.solve(a, b))


def vector_norm(x: Any, ord: float = 2, dim: Any = None,  # noqa: A002 - torch's name
                keepdim: bool = False) -> Tensor:
    """‖x‖_ord over ``dim`` (all elements when None) for ord >= 1 or inf."""
    if not ord >= 1:
        raise ValueError(f"vector_norm supports ord >= 1 and inf, got {ord}")
    x = operand(x)
    dims = tuple(range(np.ndim(raw(x)))) if dim is None else _dims(dim)
    if ord == 2:
        return _wrap(R.norm(x, dim=dims, keepdim=keepdim))
    return _wrap(R.vector_norm(x, ord=float(ord), dim=dims, keepdim=keepdim))


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis ``dim``."""
    shapes = {np.shape(raw(t)) for t in tensors}
    if len(shapes) > 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got {sorted(shapes)}")
    return _wrap(R.stack(*[operand(t) for t in tensors], dim=dim))


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """Concatenate tensors along the existing axis ``dim``."""
    return _wrap(R.cat(*[operand(t) for t in tensors], dim=dim))


def _varargs(args: tuple) -> tuple:
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else args


def reshape(x: Any, *shape: Any) -> Tensor:
    """A tensor with the same values in a new shape (``-1`` infers one axis)."""
    target = np.empty(np.shape(raw(x)), dtype=np.int8).reshape(_varargs(shape)).shape
    return _wrap(R.reshape(operand(x), shape=target))


def permute(x: Any, *axes: Any) -> Tensor:
    """Reorder the axes."""
    return _wrap(R.permute(operand(x), axes=tuple(int(a) for a in _varargs(axes))))


def transpose(x: Any, dim0: int, dim1: int) -> Tensor:
    """Swap two axes."""
    axes = list(range(np.ndim(raw(x))))
    axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
    return permute(x, axes)


def broadcast_to(x: Any, shape: Sequence[int]) -> Tensor:
    """Broadcast to ``shape``; the gradient sums back over the broadcast axes."""
    return _wrap(R.broadcast_to(operand(x), shape=tuple(shape)))


def _index_key(key: Any) -> Any:
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, Tensor):
        return key.arr.astype(bool) if key.arr.dtype == bool else key.arr.astype(np.intp)
    return key


def index(x: Tensor, key: Any) -> Tensor:
    """``x[key]``; the gradient scatters back (adding where indices repeat)."""
    return _wrap(R.index(x, key=_index_key(key)))


__all__ = [*_ELEMENTWISE, *_BINARY, "arcsin", "arccos", "arctan", "multiply", "divide",
           "subtract", "pow", "sum", "mean", "prod", "norm", "clamp", "clip", "where", "matmul",
           "dot", "stack", "cat", "reshape", "permute", "transpose", "broadcast_to", "index",
           "logsumexp", "softmax", "log_softmax", "cumsum", "amax", "amin", "outer", "trace",
           "det", "inverse", "solve", "vector_norm"]

core.install(ops=sys.modules[__name__])  # Tensor's methods call these operations
