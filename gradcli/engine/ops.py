"""The public operations (``gc.sin``, ``gc.stack``, ...) and the Tensor's operators/methods.

Thin adapters from PyTorch-style signatures to the primitives in ``rules.py``.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import rules as R
from .core import Primitive, Tensor, as_array

_ELEMENTWISE = (
    "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp expm1 log log1p log2 "
    "log10 sqrt cbrt abs sign relu sigmoid softplus floor ceil neg"
).split()
_BINARY = "add sub mul div minimum maximum atan2 hypot lt le gt ge eq ne".split()


def _wrap(out: Any) -> Tensor:
    return out if isinstance(out, Tensor) else Tensor._make(np.asarray(out, dtype=float))


def _operand(v: Any) -> Any:
    """Constants stay numpy scalars/arrays; tensors pass through."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, numbers.Number):
        return float(v)
    return as_array(v)


def _public(prim: Primitive) -> Any:
    def fn(*args: Any, **params: Any) -> Tensor:
        return _wrap(prim(*[_operand(a) for a in args], **params))

    fn.__name__ = prim.name
    fn.__doc__ = f"Elementwise ``{prim.name}`` (differentiable; see rules.py for its derivative)."
    return fn


_namespace = globals()
for _name in _ELEMENTWISE + _BINARY:
    _namespace[_name] = _public(getattr(R, _name))
arcsin, arccos, arctan = _namespace["asin"], _namespace["acos"], _namespace["atan"]
multiply, divide, subtract = _namespace["mul"], _namespace["div"], _namespace["sub"]


def pow(base: Any, exponent: Any) -> Tensor:  # noqa: A001 - mirrors torch.pow
    """``base ** exponent`` with a scalar or tensor exponent."""
    if isinstance(exponent, numbers.Number) and not isinstance(base, numbers.Number):
        return _wrap(R.pow_scalar(_operand(base), exponent=float(exponent)))
    return _wrap(R.pow(_operand(base), _operand(exponent)))


def _dims(dim: Any) -> Any:
    return dim if dim is None or isinstance(dim, int) else tuple(dim)


def sum(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001
    """Sum over ``dim`` (all elements when None)."""
    return _wrap(R.sum(_operand(x), dim=_dims(dim), keepdim=keepdim))


def mean(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Mean over ``dim`` (all elements when None)."""
    return _wrap(R.mean(_operand(x), dim=_dims(dim), keepdim=keepdim))


def prod(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Product over ``dim`` (all elements when None)."""
    return _wrap(R.prod(_operand(x), dim=_dims(dim), keepdim=keepdim))


def norm(x: Any, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
    """Euclidean norm over ``dim``; its gradient at 0 is 0."""
    if p not in (2, 2.0, "fro"):
        raise NotImplementedError("gradcli's norm supports the 2-norm only")
    return _wrap(R.norm(_operand(x), dim=_dims(dim), keepdim=keepdim))


def clamp(x: Any, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
    """Clip to [min, max]; the gradient passes (as 1) on the boundary."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return _wrap(R.clamp(_operand(x), min=min, max=max))


clip = clamp


def where(condition: Any, a: Any, b: Any) -> Tensor:
    """``a`` where ``condition`` is nonzero, else ``b``; no gradient through the condition."""
    c = condition.arr if isinstance(condition, Tensor) else np.asarray(condition)
    return _wrap(R.where(c.astype(bool), _operand(a), _operand(b)))


def matmul(a: Any, b: Any) -> Tensor:
    """Matrix product with numpy's broadcasting rules."""
    return _wrap(R.matmul(_operand(a), _operand(b)))


def dot(a: Any, b: Any) -> Tensor:
    """Inner product of two 1-D tensors."""
    if np.ndim(_raw(a)) != 1 or np.ndim(_raw(b)) != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {np.ndim(_raw(a))}D and {np.ndim(_raw(b))}D tensors"
        )
    return matmul(a, b)


def _raw(v: Any) -> Any:
    return v.arr if isinstance(v, Tensor) else v


def stack(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new axis ``dim``."""
    shapes = {np.shape(_raw(t)) for t in tensors}
    if len(shapes) > 1:
        raise RuntimeError(f"stack expects each tensor to be equal size, but got {sorted(shapes)}")
    return _wrap(R.stack(*[_operand(t) for t in tensors], dim=dim))


def cat(tensors: Sequence[Any], dim: int = 0) -> Tensor:
    """Concatenate tensors along the existing axis ``dim``."""
    return _wrap(R.cat(*[_operand(t) for t in tensors], dim=dim))


def reshape(x: Any, *shape: Any) -> Tensor:
    """A tensor with the same values in a new shape (``-1`` infers one axis)."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    target = np.empty(np.shape(_raw(x)), dtype=np.int8).reshape(shape).shape
    return _wrap(R.reshape(_operand(x), shape=target))


def permute(x: Any, *axes: Any) -> Tensor:
    """Reorder the axes."""
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return _wrap(R.permute(_operand(x), axes=tuple(int(a) for a in axes)))


def transpose(x: Any, dim0: int, dim1: int) -> Tensor:
    """Swap two axes."""
    axes = list(range(np.ndim(_raw(x))))
    axes[dim0], axes[dim1] = axes[dim1], axes[dim0]
    return permute(x, axes)


def broadcast_to(x: Any, shape: Sequence[int]) -> Tensor:
    """Broadcast to ``shape``; the gradient sums back over the broadcast axes."""
    return _wrap(R.broadcast_to(_operand(x), shape=tuple(shape)))


def _index_key(key: Any) -> Any:
    if isinstance(key, tuple):
        return tuple(_index_key(k) for k in key)
    if isinstance(key, Tensor):
        return key.arr.astype(bool) if key.arr.dtype == bool else key.arr.astype(np.intp)
    return key


def index(x: Tensor, key: Any) -> Tensor:
    """``x[key]``; the gradient scatters back (adding where indices repeat)."""
    return _wrap(R.index(x, key=_index_key(key)))


def _binary_method(prim_name: str, reflected: bool = False) -> Any:
    prim = getattr(R, prim_name)

    def method(self: Tensor, other: Any) -> Tensor:
        o = _operand(other)
        return prim(o, self) if reflected else prim(self, o)

    return method


def _pow_method(self: Tensor, exponent: Any) -> Tensor:
    return pow(self, exponent)


def _rpow_method(self: Tensor, base: Any) -> Tensor:
    return _wrap(R.pow(_operand(base), self))


def _install_methods() -> None:
    T = Tensor
    for op, name in (("add", "add"), ("sub", "sub"), ("mul", "mul"), ("truediv", "div"),
                     ("matmul", "matmul")):
        setattr(T, f"__{op}__", _binary_method(name))
        setattr(T, f"__r{op}__", _binary_method(name, reflected=True))
    for op in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(T, f"__{op}__", _binary_method(op))
    T.__pow__ = _pow_method
    T.__rpow__ = _rpow_method
    T.__neg__ = lambda self: R.neg(self)
    T.__pos__ = lambda self: self
    T.__abs__ = lambda self: R.abs(self)
    T.__getitem__ = index
    T.__hash__ = lambda self: id(self)
    for name in _ELEMENTWISE + ["minimum", "maximum", "atan2", "hypot"]:
        setattr(T, name, _namespace[name])
    for name in ("sum", "mean", "prod", "norm", "clamp", "clip", "matmul", "dot", "pow",
                 "reshape", "permute", "transpose"):
        setattr(T, name, _namespace[name])
    T.view = reshape
    T.add, T.sub, T.mul, T.div = (_namespace[n] for n in ("add", "sub", "mul", "div"))
    T.T = property(lambda self: permute(self, tuple(reversed(range(self.ndim)))))
    T.t = lambda self: permute(self, tuple(reversed(range(self.ndim))))
    T.expand = lambda self, *shape: broadcast_to(
        self, shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape)
    T.flatten = lambda self: reshape(self, -1)
    T.unsqueeze = lambda self, d: reshape(self, np.expand_dims(self.arr, d).shape)
    T.squeeze = lambda self: reshape(self, np.squeeze(self.arr).shape)


_install_methods()

__all__ = [*_ELEMENTWISE, *_BINARY, "arcsin", "arccos", "arctan", "multiply", "divide",
           "subtract", "pow", "sum", "mean", "prod", "norm", "clamp", "clip", "where", "matmul",
           "dot", "stack", "cat", "reshape", "permute", "transpose", "broadcast_to", "index"]
