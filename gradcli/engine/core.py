"""The engine's core objects: Tensor, graph nodes, and ``Primitive.apply``.

A Tensor wraps a numpy array. Applying a Primitive to tensors that require grad records a
Node (PyTorch's ``grad_fn``) holding the inputs the derivative rules need. This module knows
nothing about particular functions: their forward code and derivative rules live in the
table in ``rules.py``.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .grad_mode import forward_level, is_grad_enabled

_seq = itertools.count()
def _quiet() -> Any:
    """inf/nan are values, never warnings or exceptions."""
    return np.errstate(all="ignore")


class Primitive:
    """One differentiable operation: numpy forward code plus its VJP and JVP rules.

    ``vjp(g, out, inputs, params, needs)`` returns one cotangent (or None) per input and
    ``jvp(tangents, out, inputs, params, cache)`` returns the output tangent (None = zero).
    Rules receive raw numpy arrays when no higher-order graph is wanted, and Tensors when
    it is; they are written with primitives, so they work for both.
    """

    __slots__ = ("name", "fwd", "vjp", "jvp", "partials", "nondiff", "saves", "grad_name")

    def __init__(
        self,
        name: str,
        fwd: Callable[..., Any],
        vjp: Callable[..., Any] | None = None,
        jvp: Callable[..., Any] | None = None,
        *,
        partials: Sequence[Callable[..., Any]] | None = None,
        nondiff: bool = False,
        saves: bool = True,
        grad_name: str | None = None,
    ) -> None:
        self.name = name
        self.fwd = fwd
        self.vjp = vjp
        self.jvp = jvp
        self.partials = tuple(partials) if partials is not None else None
        self.nondiff = nondiff
        self.saves = saves
        camel = "".join(p[:1].upper() + p[1:] for p in name.split("_"))
        self.grad_name = grad_name or f"{camel}Backward0"

    def __call__(self, *args: Any, **params: Any) -> Any:
        """Apply to tensors (recording a node) or, when no argument is a Tensor, to arrays."""
        for a in args:
            if isinstance(a, Tensor):
                return apply(self, args, params)
        return self.fwd(*args, **params)

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


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


class Node:
    """A recorded operation (``grad_fn``): what the backward and forward sweeps replay."""

    __slots__ = (
        "prim", "saved", "params", "edges", "shapes", "seq", "out_ref", "freed",
        "pre_hooks", "retained", "cache", "__weakref__",
    )

    def __init__(self, prim: Primitive, saved: tuple, params: dict, out: Tensor) -> None:
        self.prim = prim
        self.saved = saved
        self.params = params
        self.edges = tuple(_edge_of(a) for a in saved)
        self.shapes = tuple(np.shape(a.arr if isinstance(a, Tensor) else a) for a in saved)
        self.seq = next(_seq)
        self.out_ref = weakref.ref(out)
        self.freed = False
        self.pre_hooks: list[Callable[[Any], Any]] | None = None
        self.retained: weakref.ref | None = None
        self.cache: dict | None = None

    def name(self) -> str:
        """PyTorch-style name such as ``MulBackward0``."""
        return self.prim.grad_name

    @property
    def next_functions(self) -> tuple:
        return tuple((e, 0) for e in self.edges)

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"


def collect_nodes(roots: Any) -> list[Node]:
    """Every node reachable from ``roots``, in creation order (a topological order, since
    a node is always created after its inputs). Iterative: any depth is fine."""
    seen: set[int] = set()
    found: list[Node] = []
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        found.append(node)
        stack.extend(e for e in node.edges if isinstance(e, Node) and id(e) not in seen)
    found.sort(key=lambda n: n.seq)
    return found


def _edge_of(a: Any) -> Node | AccumulateGrad | None:
    if not isinstance(a, Tensor) or not a.requires_grad:
        return None
    if a.grad_fn is not None:
        return a.grad_fn
    if a._acc is None:
        a._acc = AccumulateGrad(a)
    return a._acc


def apply(prim: Primitive, args: tuple, params: dict) -> Tensor:
    """Run ``prim`` on tensors, recording a Node when grad is needed, and a tangent when
    forward mode is active."""
    arrays = [a.arr if isinstance(a, Tensor) else a for a in args]
    with _quiet():
        out = prim.fwd(*arrays, **params)
    if not isinstance(out, np.ndarray) or out.dtype.kind != "f":
        # comparisons stay boolean (masks, as in PyTorch); everything else is float
        out = np.asarray(out) if prim.nondiff else np.asarray(out, dtype=_result_dtype(arrays))
    result = Tensor._make(out)
    if not prim.nondiff:
        if is_grad_enabled() and any(isinstance(a, Tensor) and a.requires_grad for a in args):
            result.requires_grad = True
            result.grad_fn = Node(prim, args, params, result)
        if forward_level():
            tangents = [a.tangent if isinstance(a, Tensor) else None for a in args]
            if any(t is not None for t in tangents):
                with _quiet():
                    result.tangent = prim.jvp(tangents, out, arrays, params, None)
    return result


def _result_dtype(arrays: list) -> np.dtype:
    for a in arrays:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return a.dtype
    return np.dtype(np.float64)


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


class Tensor:
    """A numpy array with autograd bookkeeping, mirroring ``torch.Tensor``'s semantics."""

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
        self.arr[key] = value.arr if isinstance(value, Tensor) else value

    def _check_inplace(self) -> None:
        if self.requires_grad and is_grad_enabled():
            kind = "a leaf Variable" if self.is_leaf else "a variable needed for gradient"
            raise RuntimeError(
                f"{kind} that requires grad is being used in an in-place operation."
            )

    def __repr__(self) -> str:
        from .display import tensor_repr

        return tensor_repr(self)

    def __hash__(self) -> int:
        return id(self)

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
        from .backward import backward

        backward([self], None if gradient is None else [gradient], retain_graph, create_graph,
                 inputs)


class _HookHandle:
    def __init__(self, hooks: list, hook: Callable) -> None:
        self._hooks, self._hook = hooks, hook

    def remove(self) -> None:
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)
