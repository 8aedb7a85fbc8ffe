"""Trace once, replay many times: a function of tensors as a flat program of numpy calls.

``trace(fn, *examples)`` runs ``fn`` once on leaf tensors while ``primitive.apply``
appends every primitive it applies to a tensor (comparisons and masks included) to a
tape. Derivatives are part of what ``fn`` computes: ``with_derivatives(fn, order)``
returns a function that also gives the gradients of fn's outputs (and, for ``order=2``,
the gradients of those), taken by ``autograd.grad(create_graph=True)``: the reverse
sweeps run the rule table's VJP rules on tensors, so they land on the tape like any other
operation. The tape becomes a straight-line :class:`Traced` program: steps no output needs
are dropped, repeated steps shared, multiplications by the constant 1 (a sweep's seed),
powers of 1 and reshapes to the same shape removed, and steps whose operands are all
constants folded.
Replaying it calls each primitive's numpy forward code on plain arrays, with no Tensor,
node or graph walk per call: what an optimiser taking 10,000 steps needs (``jax.jit``'s
idea; ``torch.jit.trace``'s name).

The program is the recorded computation, so it gives the engine's values bit for bit
for inputs of the example's shapes (broadcasting, and the sweeps' sums over broadcast
axes, were decided for those shapes). A rule that branches on values replays the branch
taken when traced: prod's rule divides by x unless some x is 0, so a replay at a zero
gives nan or inf where the engine gives a number; callers settle non-finite results with
the engine.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcli.engine.backward import grad as autograd_grad
from gradcli.engine.core import Tensor, as_array
from gradcli.engine.grad_mode import batch_axes, enable_grad, quiet, taping

__all__ = ["Traced", "trace", "with_derivatives"]

#: primitives that return their input unchanged when the output has the input's shape
_SAME_SHAPE_IDENTITY = frozenset({"broadcast_to", "reshape", "sum_to"})
#: primitives that are the identity for these parameters (x ** 1 is x in IEEE arithmetic,
#: nan, infinities and -0 included): the first-order rule of every square
_IDENTITY_PARAMS = {"pow_scalar": ("exponent", 1.0)}


class _Const:
    """A value known when the program is built (a number, an array, a constant tensor)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def key(self) -> Any:
        v = self.value
        if isinstance(v, (float, int)) or (isinstance(v, np.generic)):
            return ("number", type(v).__name__, float(v))
        return ("object", id(v))


class Traced:
    """A recorded computation replayed on arrays: ``traced(*inputs)`` -> list of outputs.

    Each output is an array (possibly smaller than the batch: it broadcasts, as the
    evaluation kernels' values do), a constant, or None for an identically zero
    derivative. ``steps`` is the number of numpy calls one replay makes.
    """

    def __init__(self, n_inputs: int, template: list[Any], ops: list[Callable[[list], None]],
                 outputs: list[Any], shapes: list[tuple[int, ...]]) -> None:
        self.n_inputs = n_inputs
        self._template = template
        self._ops = ops
        self._outputs = outputs
        self.input_shapes = shapes

    @property
    def steps(self) -> int:
        return len(self._ops)

    def replay(self, inputs: Sequence[Any]) -> list[Any]:
        """Run the program on ``inputs`` without touching numpy's error state (for hot
        loops that set it once, inside ``grad_mode.quiet()``)."""
        r = self._template.copy()
        r[:self.n_inputs] = inputs
        for op in self._ops:
            op(r)
        return [None if o is None else r[o] if isinstance(o, int) else o.value
                for o in self._outputs]

    def __call__(self, *inputs: Any) -> list[Any]:
        if len(inputs) != self.n_inputs:
            raise TypeError(f"the traced program takes {self.n_inputs} inputs, "
                            f"got {len(inputs)}")
        arrays = [np.asarray(a) for a in inputs]
        for a, shape in zip(arrays, self.input_shapes, strict=True):
            if a.shape != shape:
                raise ValueError(f"the traced program was recorded for inputs of shape "
                                 f"{shape}, got {a.shape}: trace it again for these shapes")
        with quiet():
            return self.replay(arrays)


def _flatten(out: Any) -> list[Any]:
    items, stack = [], [out]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (list, tuple)):
            stack.extend(reversed(cur))
        else:
            items.append(cur)
    return items


def trace(fn: Callable[..., Any], *examples: Any, batch_ndim: int = 0) -> Traced:
    """Record ``fn`` applied to leaf tensors holding ``examples``; return the program.

    ``fn`` returns a tensor or (nested) lists of tensors, numbers or None; the program
    returns them flattened, in order. ``batch_ndim`` leading axes of the inputs are
    independent points (``grad_mode.batch_axes``): reverse sweeps inside ``fn`` keep a
    cotangent per point, as the evaluation kernels' sweeps do.
    """
    leaves = [Tensor._make(np.array(as_array(x))).requires_grad_() for x in examples]
    tape: list[tuple] = []
    with taping(tape), enable_grad(), batch_axes(batch_ndim), quiet():
        out = fn(*leaves)
    return _build(leaves, tape, _flatten(out))


def _build(leaves: list[Tensor], tape: list[tuple], outs: list[Any]) -> Traced:
    n = len(leaves)
    where: dict[int, Any] = {id(t): i for i, t in enumerate(leaves)}  # tensor -> reg | _Const
    values: list[Any] = [t.arr for t in leaves]  # the traced value in each register
    steps: list[tuple[Any, dict, int, list[Any]]] = []  # (primitive, params, dst, args)
    seen: dict[Any, int] = {}

    def spec(a: Any) -> Any:
        if isinstance(a, Tensor):
            got = where.get(id(a))
            return got if got is not None else _Const(a.arr)
        return _Const(a)

    for prim, args, params, result in tape:
        specs = [spec(a) for a in args]
        regs = [s for s in specs if isinstance(s, int)]
        if not regs:  # every operand known now: the traced value is the constant
            where[id(result)] = _Const(result.arr)
            continue
        alias = _identity_operand(prim.name, specs, values, result.arr, params)
        if alias is not None:
            where[id(result)] = alias
            continue
        key = _cse_key(prim, specs, params)
        if key is not None and key in seen:
            where[id(result)] = seen[key]
            continue
        dst = len(values)
        values.append(result.arr)
        steps.append((prim, params, dst, specs))
        where[id(result)] = dst
        if key is not None:
            seen[key] = dst
    outputs = [None if o is None else spec(o) for o in outs]
    return _assemble(n, values, steps, outputs, [t.shape for t in leaves])


def _identity_operand(name: str, specs: list[Any], values: list[Any], out: Any,
                      params: dict) -> int | None:
    """The register a step merely passes on: ``1 * a`` or ``a * 1`` (a sweep's unit seed),
    ``a ** 1``, a reshape or broadcast to a's own shape. Only when a's shape and dtype are the
    result's, so the replayed value is bit for bit the recorded one."""
    out = np.asarray(out)
    if name == "mul" and len(specs) == 2:
        for one, other in ((specs[0], specs[1]), (specs[1], specs[0])):
            if isinstance(one, _Const) and isinstance(other, int) and np.ndim(one.value) == 0 \
                    and one.value == 1.0 and _same(values[other], out):
                return other
    if name in _SAME_SHAPE_IDENTITY and isinstance(specs[0], int) \
            and _same(values[specs[0]], out):
        return specs[0]
    if name in _IDENTITY_PARAMS and isinstance(specs[0], int) and _same(values[specs[0]], out):
        key, value = _IDENTITY_PARAMS[name]
        if params.get(key) == value:
            return specs[0]
    return None


def _same(a: Any, b: np.ndarray) -> bool:
    a = np.asarray(a)
    return a.shape == b.shape and a.dtype == b.dtype


def _cse_key(prim: Any, specs: list[Any], params: dict) -> Any:
    try:
        key = (prim, tuple(s if isinstance(s, int) else s.key() for s in specs),
               tuple(sorted(params.items())))
        hash(key)
    except TypeError:  # an unhashable parameter: the step is kept as it is
        return None
    return key


def _assemble(n: int, values: list[Any], steps: list, outputs: list[Any],
              shapes: list[tuple[int, ...]]) -> Traced:
    """Drop the steps no output needs, put constants in registers, make the closures."""
    needed = {o for o in outputs if isinstance(o, int)}
    kept = []
    for step in reversed(steps):
        if step[2] in needed:
            kept.append(step)
            needed.update(s for s in step[3] if isinstance(s, int))
    kept.reverse()
    template: list[Any] = [None] * len(values)
    ops = []
    for prim, params, dst, specs in kept:
        idx = []
        for s in specs:
            if isinstance(s, _Const):
                template.append(s.value)
                idx.append(len(template) - 1)
            else:
                idx.append(s)
        fwd = functools.partial(prim.fwd, **params) if params else prim.fwd
        ops.append(_op(fwd, dst, idx))
    return Traced(n, template, ops, outputs, shapes)


def _op(fwd: Callable[..., Any], dst: int, idx: list[int]) -> Callable[[list], None]:
    """One step as a closure over its registers (no per-call argument lists for the
    common arities)."""
    if len(idx) == 1:
        (a,) = idx

        def op1(r: list) -> None:
            r[dst] = fwd(r[a])

        return op1
    if len(idx) == 2:
        a, b = idx

        def op2(r: list) -> None:
            r[dst] = fwd(r[a], r[b])

        return op2

    def opn(r: list) -> None:
        r[dst] = fwd(*[r[i] for i in idx])

    return opn


def with_derivatives(fn: Callable[..., Any], order: int = 1) -> Callable[..., list[Any]]:
    """``fn`` followed by its derivatives, for tracing: the wrapped function returns fn's
    outputs (flattened), then ∂out[i]/∂x[j] for every output i and input j (outputs
    slowest), and for ``order=2`` then ∂²out[i]/∂x[j]∂x[k] (the gradients of those, in the
    same order). None stands for an identically zero derivative.

    Each sweep is ``autograd.grad(create_graph=True)`` seeded with 1 per point, so inside
    ``trace(..., batch_ndim=b)`` a derivative is per point (reverse mode, as the
    evaluation kernels compute ``grad``, ``jacobian`` and ``hessian``).
    """
    if order not in (1, 2):
        raise ValueError("order must be 1 or 2")

    def wrapped(*leaves: Tensor) -> list[Any]:
        outs = _flatten(fn(*leaves))
        result, level = list(outs), outs
        for _ in range(order):
            level = [g for o in level for g in _gradients(o, leaves)]
            result += level
        return result

    return wrapped


def _gradients(out: Any, leaves: Sequence[Tensor]) -> list[Any]:
    if not isinstance(out, Tensor) or not out.requires_grad:
        return [None] * len(leaves)
    seed = out.dtype.type(1.0)
    return list(autograd_grad(out, list(leaves), seed, retain_graph=True, create_graph=True,
                              allow_unused=True))
