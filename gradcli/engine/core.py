"""The engine's core object: Tensor, a numpy array with autograd bookkeeping.

Its operators apply the primitives of the table in ``rules.py`` (recorded by
``primitive.apply``), its methods the public operations of ``ops.py`` and the reverse
sweep of ``backward.py``. Those modules import this one, never the other way: each
installs itself here when it loads (:func:`install`), and the package ``gradcli.engine``
loads them all before any Tensor is used, so this module imports none of them.
"""

from __future__ import annotations

import numbers
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcli.engine.grad_mode import is_grad_enabled, quiet

#: a recorded operation (``primitive.Node``, which imports this module)
Node = Any

class AccumulateGrad:
    """The graph's edge into a leaf tensor: backward accumulates into its ``.grad``."""

    __slots__ = ("variable", "hooks", "__weakref__")

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.hooks: list[Callable[[Any], Any]] = []

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    @property
    def next_functions(self) -> tuple:
        return ()

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


_FLOAT_DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


def as_array(data: Any, dtype: Any = None) -> np.ndarray:
    """Convert user data to a float array (float64 unless float32 is asked for or given)."""
    if isinstance(data, Tensor):
        data = data.arr
    if dtype is not None:
        dt = np.dtype(dtype.name if hasattr(dtype, "name") and not isinstance(dtype, type)
                      else dtype)
        if dt not in _FLOAT_DTYPES:
            raise TypeError(f"dtype must be float64 or float32, got {dt}")
        return np.array(data, dtype=dt)
    arr = np.array(data)
    if arr.dtype in _FLOAT_DTYPES:
        return arr
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"cannot make a tensor from data of type {arr.dtype}")
    return arr.astype(np.float64)


def raw(v: Any) -> Any:
    """The array behind a Tensor; anything else unchanged."""
    return v.arr if isinstance(v, Tensor) else v


def operand(v: Any) -> Any:
    """An argument of an operation: tensors pass through, numbers become floats (numpy's
    weak scalars, so float32 stays float32) and anything else a float array."""
    if isinstance(v, Tensor):
        return v
    if isinstance(v, numbers.Number):
        return float(v)
    return as_array(v)


def _operator(name: str, reflected: bool = False) -> Callable[[Tensor, Any], Tensor]:
    """``Tensor.__add__`` and friends: the table's primitive ``name``.

    Looked up by name when the operator runs: Tensor's class body is built before the rule
    table can be imported (the table is written with Tensor's operators), so the functions
    themselves do not exist yet here."""
    if reflected:
        return lambda self, o: getattr(_R, name)(operand(o), self)
    return lambda self, o: getattr(_R, name)(self, operand(o))


class Tensor:
    """A numpy array with autograd bookkeeping, mirroring ``torch.Tensor``'s semantics.

    The operators below are the table's primitives (``rules.py``); every elementwise
    function of the table is also a method (``t.sin()``), looked up in the table on use.
    """

    __slots__ = ("arr", "requires_grad", "grad", "grad_fn", "tangent", "_acc", "__weakref__")
    __array_priority__ = 1000  # make ndarray <op> Tensor defer to Tensor's reflected ops

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None) -> None:
        self.arr = as_array(data, dtype)
        self.requires_grad = False
        self.grad: Tensor | None = None
        self.grad_fn: Node | None = None
        self.tangent: Any = None
        self._acc: AccumulateGrad | None = None
        if requires_grad:
            self.requires_grad_(True)

    @classmethod
    def _make(cls, arr: np.ndarray) -> Tensor:
        t = cls.__new__(cls)
        t.arr = arr
        t.requires_grad = False
        t.grad = None
        t.grad_fn = None
        t.tangent = None
        t._acc = None
        return t

    # --- arithmetic: the table's primitives --------------------------------------------
    __add__, __radd__ = _operator("add"), _operator("add", reflected=True)
    __sub__, __rsub__ = _operator("sub"), _operator("sub", reflected=True)
    __mul__, __rmul__ = _operator("mul"), _operator("mul", reflected=True)
    __truediv__, __rtruediv__ = _operator("div"), _operator("div", reflected=True)
    __matmul__, __rmatmul__ = _operator("matmul"), _operator("matmul", reflected=True)
    __rpow__ = _operator("pow", reflected=True)
    __lt__, __le__, __gt__, __ge__ = (_operator(n) for n in ("lt", "le", "gt", "ge"))
    __eq__, __ne__ = _operator("eq"), _operator("ne")  # type: ignore[assignment]

    def __pow__(self, o: Any) -> Tensor:
        return _R.power(self, o if isinstance(o, numbers.Number) else operand(o))

    def __neg__(self) -> Tensor:
        return _R.neg(self)

    def __pos__(self) -> Tensor:
        return self

    neg = __neg__

    def __abs__(self) -> Tensor:
        return _R.abs(self)

    __hash__ = object.__hash__  # == is elementwise, so identity is the hash (as in PyTorch)

    def __iadd__(self, o: Any) -> Tensor:
        return self._inplace(o, Tensor.__add__, np.add)

    def __isub__(self, o: Any) -> Tensor:
        return self._inplace(o, Tensor.__sub__, np.subtract)

    def __imul__(self, o: Any) -> Tensor:
        return self._inplace(o, Tensor.__mul__, np.multiply)

    def __itruediv__(self, o: Any) -> Tensor:
        return self._inplace(o, Tensor.__truediv__, np.true_divide)

    def _inplace(self, o: Any, op: Callable, ufunc: np.ufunc) -> Tensor:
        """``a += b``: in place on the array when no graph is involved; a leaf that requires
        grad refuses (PyTorch's error); a recorded value becomes the recorded result."""
        recording = is_grad_enabled() and (
            self.requires_grad or (isinstance(o, Tensor) and o.requires_grad))
        if recording:
            if self.requires_grad and self.is_leaf:
                self._check_inplace()
            return op(self, o)
        with quiet():
            ufunc(self.arr, raw(operand(o)), out=self.arr, casting="unsafe")
        return self

    def __getattr__(self, name: str) -> Any:
        """``t.sin()``, ``t.minimum(u)``...: every elementwise function of the table."""
        prim = _R.FUNCTIONS.get(name)
        if prim is None:
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        return lambda *others: prim(self, *[operand(o) for o in others])

    # --- shapes, reductions and products: PyTorch-style signatures (ops.py) -------------
    def __getitem__(self, key: Any) -> Tensor:
        return _OPS.index(self, key)

    def sum(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _OPS.sum(self, dim, keepdim)

    def mean(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _OPS.mean(self, dim, keepdim)

    def prod(self, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _OPS.prod(self, dim, keepdim)

    def norm(self, p: Any = 2, dim: Any = None, keepdim: bool = False) -> Tensor:
        return _OPS.norm(self, p, dim, keepdim)

    def clamp(self, min: float | None = None, max: float | None = None) -> Tensor:  # noqa: A002
        return _OPS.clamp(self, min, max)

    clip = clamp

    def pow(self, exponent: Any) -> Tensor:
        return self ** exponent

    def add(self, o: Any) -> Tensor:
        return self + o

    def sub(self, o: Any) -> Tensor:
        return self - o

    def mul(self, o: Any) -> Tensor:
        return self * o

    def div(self, o: Any) -> Tensor:
        return self / o

    def matmul(self, o: Any) -> Tensor:
        return self @ o

    def dot(self, o: Any) -> Tensor:
        return _OPS.dot(self, o)

    def reshape(self, *shape: Any) -> Tensor:
        return _OPS.reshape(self, *shape)

    view = reshape

    def permute(self, *axes: Any) -> Tensor:
        return _OPS.permute(self, *axes)

    def transpose(self, dim0: int, dim1: int) -> Tensor:
        return _OPS.transpose(self, dim0, dim1)

    def t(self) -> Tensor:
        return _OPS.permute(self, tuple(reversed(range(self.ndim))))

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        return self.t()

    def expand(self, *shape: Any) -> Tensor:
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return _OPS.broadcast_to(self, shape)

    def flatten(self) -> Tensor:
        return self.reshape(-1)

    def unsqueeze(self, dim: int) -> Tensor:
        return self.reshape(np.expand_dims(self.arr, dim).shape)

    def squeeze(self) -> Tensor:
        return self.reshape(np.squeeze(self.arr).shape)

    # --- leaf bookkeeping -------------------------------------------------------------
    @property
    def is_leaf(self) -> bool:
        """Leaves are tensors not produced by a recorded operation."""
        return self.grad_fn is None

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Mark a leaf as an input whose ``.grad`` backward should fill."""
        if not self.is_leaf:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and self.arr.dtype.kind != "f":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self) -> None:
        """Ask backward to also fill ``.grad`` of this non-leaf tensor."""
        if self.grad_fn is None:
            if not self.requires_grad:
                raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
            return
        self.grad_fn.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        return self.grad_fn is not None and self.grad_fn.retained is not None

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> Any:
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it."""
        if not self.requires_grad:
            raise RuntimeError(
                "cannot register a hook on a tensor that doesn't require gradient"
            )
        if self.grad_fn is not None:
            if self.grad_fn.pre_hooks is None:
                self.grad_fn.pre_hooks = []
            hooks = self.grad_fn.pre_hooks
        else:
            if self._acc is None:
                self._acc = AccumulateGrad(self)
            hooks = self._acc.hooks
        hooks.append(hook)
        return _HookHandle(hooks, hook)

    def detach(self) -> Tensor:
        """A tensor sharing this one's data, cut from the graph."""
        return Tensor._make(self.arr)

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self.requires_grad = False
        return self

    # --- data access -----------------------------------------------------------------
    @property
    def data(self) -> Tensor:
        """The values as a detached tensor sharing memory (as ``torch.Tensor.data``)."""
        return Tensor._make(self.arr)

    @data.setter
    def data(self, value: Any) -> None:
        self.arr = as_array(value)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.arr.shape

    def size(self, dim: int | None = None) -> Any:
        return self.arr.shape if dim is None else self.arr.shape[dim]

    @property
    def ndim(self) -> int:
        return self.arr.ndim

    def dim(self) -> int:
        return self.arr.ndim

    def numel(self) -> int:
        return int(self.arr.size)

    @property
    def dtype(self) -> np.dtype:
        return self.arr.dtype

    def __len__(self) -> int:
        return len(self.arr)

    def item(self) -> float:
        if self.arr.size != 1:
            raise RuntimeError(
                f"a Tensor with {self.arr.size} elements cannot be converted to Scalar"
            )
        return float(self.arr.reshape(()))

    def __float__(self) -> float:
        return self.item()

    def numpy(self) -> np.ndarray:
        if self.requires_grad:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead."
            )
        return self.arr

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.arr if dtype is None else self.arr.astype(dtype)

    def tolist(self) -> Any:
        return self.arr.tolist()

    def zero_(self) -> Tensor:
        """Set every element to 0 in place (as ``x.grad.zero_()``)."""
        self._check_inplace()
        self.arr[...] = 0
        return self

    def fill_(self, value: float) -> Tensor:
        self._check_inplace()
        self.arr[...] = value
        return self

    def __setitem__(self, key: Any, value: Any) -> None:
        self._check_inplace()
        self.arr[key] = raw(value)

    def _check_inplace(self) -> None:
        if self.requires_grad and is_grad_enabled():
            kind = "a leaf Variable" if self.is_leaf else "a variable needed for gradient"
            raise RuntimeError(
                f"{kind} that requires grad is being used in an in-place operation."
            )

    def __repr__(self) -> str:
        from gradcli.engine.tensor_repr import tensor_repr

        return tensor_repr(self)

    def __bool__(self) -> bool:
        if self.arr.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {self.arr.size} values is ambiguous"
            )
        return bool(self.arr.reshape(()))

    def backward(
        self,
        gradient: Any = None,
        retain_graph: bool | None = None,
        create_graph: bool = False,
        inputs: Any = None,
    ) -> None:
        """Accumulate the vector-Jacobian product ``gradientᵀ·J`` into the leaves' ``.grad``."""
        _SWEEP([self], None if gradient is None else [gradient], retain_graph, create_graph,
               inputs)


class _HookHandle:
    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


class _Missing:
    """A part of the engine not installed yet: says which (a Tensor used before
    ``gradcli.engine`` finished loading)."""

    def __init__(self, part: str) -> None:
        self.part = part

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"the engine's {self.part} is not loaded yet: import gradcli.engine")


#: the rule table, the public operations and the reverse sweep, installed by their modules
_R: Any = _Missing("rule table (rules.py)")
_OPS: Any = _Missing("operations (ops.py)")
_SWEEP: Any = _Missing("reverse sweep (backward.py)")


def install(*, rules: Any = None, ops: Any = None, sweep: Any = None) -> None:
    """Give Tensor the rule table (the ``rules`` module), the public operations (``ops``)
    or the reverse sweep (``backward.backward``): each module calls this when it loads."""
    global _R, _OPS, _SWEEP
    if rules is not None:
        _R = rules
    if ops is not None:
        _OPS = ops
    if sweep is not None:
        _SWEEP = sweep
