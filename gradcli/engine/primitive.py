"""Primitives and the graph they record: ``Primitive``, ``Ctx``, ``Node`` and ``apply``.

Applying a Primitive to tensors that require grad records a Node (PyTorch's ``grad_fn``)
holding the inputs its derivative rules need. This module knows nothing about particular
functions: their forward code and derivative rules live in the table in ``rules.py``.
"""

from __future__ import annotations

import itertools
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcli.engine.core import AccumulateGrad, Tensor, raw
from gradcli.engine.grad_mode import active_tape, forward_level, is_grad_enabled, quiet, reuse_table
from gradcli.engine.homogeneous import BILINEAR, Poly, per_monomial

_seq = itertools.count()


class Ctx:
    """What a derivative rule sees of one application of its primitive.

    ``inputs`` are the operands (arrays, or Tensors when the rule's own work is recorded
    for a higher derivative), ``out`` the result, ``params`` the keyword parameters,
    ``shapes`` the operands' shapes and ``needs[i]`` whether input i wants a cotangent.
    """

    __slots__ = ("inputs", "out", "params", "shapes", "needs")

    def __init__(self, inputs: Sequence[Any], out: Any, params: dict, shapes: tuple,
                 needs: tuple = ()) -> None:
        self.inputs, self.out, self.params = inputs, out, params
        self.shapes, self.needs = shapes, needs


class Primitive:
    """One differentiable operation: numpy forward code plus its derivative rules.

    Each rule kind is a keyword argument:

    * ``vjp(ctx, g)`` -> one cotangent (or None) per input: reverse mode;
    * ``jvp(ctx, tangents)`` -> the output's tangent (None = zero): forward mode;
    * ``jet(ctx, series)`` -> the output's Taylor coefficients 1..K (None = zero) from the
      inputs' truncated Taylor series: Taylor mode (``taylor.py``).

    Rules receive raw numpy arrays when no higher-order graph is wanted, and Tensors when it
    is; they are written with primitives, so they work for both. ``kind`` places the
    primitive in the public API and the expression language: ``function`` (an elementwise
    function: ``gc.sin``, ``Tensor.sin``, the language's ``sin(x)``), ``operator``
    (``+ - * / ^`` and unary minus), ``compare`` (``<`` ...; no gradient) or ``internal``.
    """

    __slots__ = ("name", "fwd", "vjp", "jvp", "jet", "kind", "arity", "nondiff", "saves",
                 "grad_name", "form")

    def __init__(
        self,
        name: str,
        fwd: Callable[..., Any],
        *,
        vjp: Callable[[Ctx, Any], list] | None = None,
        jvp: Callable[[Ctx, list], Any] | None = None,
        jet: Callable[[Any, list], Any] | None = None,
        kind: str = "internal",
        arity: int | None = None,
        nondiff: bool = False,
        saves: bool = True,
        grad_name: str | None = None,
        form: str | tuple[str, ...] | None = None,
    ) -> None:
        self.name, self.fwd, self.vjp, self.jvp, self.jet = name, fwd, vjp, jvp, jet
        self.kind, self.arity, self.nondiff, self.saves = kind, arity, nondiff, saves
        camel = "".join(p[:1].upper() + p[1:] for p in name.split("_"))
        self.grad_name = grad_name or f"{camel}Backward0"
        # the derivative's expression form, per input, as text over the rule's own names
        # (x, or a and b; y is the result): read by the language (``lang/formula``), so the
        # engine never imports it
        self.form = (form,) if isinstance(form, str) else form

    def __call__(self, *args: Any, **params: Any) -> Any:
        """Apply to tensors (recording a node) or, when no argument is a Tensor, to arrays;
        to a multivariate Taylor coefficient (``Poly``) as a linear map, monomial by
        monomial, or for ``*`` and ``@`` as the polynomial product."""
        poly = False
        for a in args:
            if isinstance(a, Tensor):
                return apply(self, args, params)
            poly = poly or isinstance(a, Poly)
        if poly:
            return self.fwd(*args, **params) if self.fwd in BILINEAR else \
                per_monomial(self.fwd, args, params)
        table = reuse_table()
        if table is None or self.kind != "function" or params:
            return self.fwd(*args, **params)
        key = (self.name, *map(id, args))
        kept = table.get(key)
        if kept is None:
            kept = table[key] = (self.fwd(*args), args)  # args kept: ids stay theirs
        return kept[0]

    def __repr__(self) -> str:
        return f"<primitive {self.name}>"


class Node:
    """A recorded operation (``grad_fn``): what the backward and forward sweeps replay."""

    __slots__ = (
        "prim", "saved", "params", "edges", "shapes", "seq", "out_ref", "freed",
        "pre_hooks", "retained", "__weakref__",
    )

    def __init__(self, prim: Primitive, saved: tuple, params: dict, out: Tensor) -> None:
        self.prim = prim
        self.saved = saved
        self.params = params
        self.edges = tuple(_edge_of(a) for a in saved)
        self.shapes = tuple(np.shape(raw(a)) for a in saved)
        self.seq = next(_seq)
        self.out_ref = weakref.ref(out)
        self.freed = False
        self.pre_hooks: list[Callable[[Any], Any]] | None = None
        self.retained: weakref.ref | None = None

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
    arrays = [raw(a) for a in args]
    with quiet():
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
                ctx = Ctx(arrays, out, params, tuple(np.shape(a) for a in arrays))
                with quiet():
                    result.tangent = prim.jvp(ctx, tangents)
    tape = active_tape()
    if tape is not None:
        tape.append((prim, args, params, result))
    return result


def _result_dtype(arrays: list) -> np.dtype:
    for a in arrays:
        if isinstance(a, np.ndarray) and a.dtype.kind == "f":
            return a.dtype
    return np.dtype(np.float64)


