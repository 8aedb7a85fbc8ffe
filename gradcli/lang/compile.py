"""Compile an expression's AST to a straight-line program of engine calls.

The program is a flat list of steps (no recursion when it runs, however deep the tree).
Values are engine operands — floats, numpy arrays or Tensors — and vectors/matrices are
nested Python lists of them, one entry per component. Keeping components separate lets
each keep its own minimal broadcast shape over a grid, and makes indexing, ``sum`` and
``dot`` plain arithmetic on components. Parts without variables are folded here in
float64, so ``9^9^9^9`` is ``inf`` at once and never a big-integer computation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine import rules as R
from ..engine.grad_mode import quiet
from .ast import Binary, Call, Compare, Const, Index, Node, Num, Unary, Var, Vector, fold
from .errors import ExpressionError
from .names import CONSTANTS, FUNCTIONS

Shape = tuple[int, ...]
_BINARY = {"+": R.add, "-": R.sub, "*": R.mul, "/": R.div, "^": R.power}
_COMPARE = {"<": R.lt, "<=": R.le, ">": R.gt, ">=": R.ge, "==": R.eq, "!=": R.ne}
# the engine function behind each FunctionSpec.engine name; pow(a, b) is the operator ^
_ENGINE = {**R.PRIMITIVES, "pow": R.power}


@dataclass
class _Slot:
    """A compile-time value: a folded constant, or the register a step will fill."""

    shape: Shape
    const: Any = None
    reg: int = -1
    deps: frozenset[str] = frozenset()  # the variables this value depends on
    call: tuple[str, _Slot] | None = None  # a function applied to one argument: (name, arg)


def _map(fn: Callable[..., Any], *vals: Any) -> Any:
    """Apply a scalar function componentwise, broadcasting scalars against lists."""
    lists = [v for v in vals if isinstance(v, list)]
    if not lists:
        return fn(*vals)
    n = len(lists[0])
    return [_map(fn, *[v[i] if isinstance(v, list) else v for v in vals]) for i in range(n)]


def _flatten(v: Any) -> list[Any]:
    out, stack = [], [v]
    while stack:
        cur = stack.pop()
        if isinstance(cur, list):
            stack.extend(reversed(cur))
        else:
            out.append(cur)
    return out


def _total(items: list[Any], prim: Any) -> Any:
    acc = items[0]
    for item in items[1:]:
        acc = prim(acc, item)
    return acc


def _reduce(name: str, v: Any) -> Any:
    items = _flatten(v)
    if name == "sum":
        return _total(items, R.add)
    if name == "mean":
        return R.div(_total(items, R.add), float(len(items)))
    if name == "prod":
        return _total(items, R.mul)
    return R.norm(R.stack(*items, dim=-1), dim=-1)  # components on the last axis


def _dot(a: Any, b: Any) -> Any:
    return _total([R.mul(x, y) for x, y in zip(_flatten(a), _flatten(b), strict=True)], R.add)


class Program:
    """A compiled expression: ``run(env)`` maps variable values to the result value."""

    def __init__(self, steps: list, result: _Slot, variables: list[str],
                 op_count: int = 0) -> None:
        self.steps = steps
        self.result = result
        self.variables = variables
        # engine operations one run records (a step on vectors is one per component); the
        # evaluation layer uses it to refuse requests that would run for hours
        self.op_count = op_count

    @property
    def shape(self) -> Shape:
        """The result's component shape: () scalar, (m,) vector, (m, k) matrix."""
        return self.result.shape

    def run(self, env: Mapping[str, Any], memo: Mapping[int, Any] | None = None) -> Any:
        """Evaluate with ``env`` giving each variable's value (a list for vectors).

        ``memo`` holds values of steps computed earlier (see ``run_without``); they are
        reused instead of recomputed.
        """
        regs: list[Any] = [None] * len(self.steps)
        for i, (fn, args, _) in enumerate(self.steps):
            if memo is not None and i in memo:
                regs[i] = memo[i]
                continue
            regs[i] = fn(*[a.const if a.reg < 0 else regs[a.reg] for a in args], env)
        r = self.result
        return r.const if r.reg < 0 else regs[r.reg]

    def run_without(self, env: Mapping[str, Any], excluded: str) -> dict[int, Any]:
        """Compute every step that does not depend on variable ``excluded``.

        Over a grid blocked along ``excluded``'s axis these values are the same for every
        block, so they are computed once and passed to ``run`` as its ``memo``.
        """
        regs: dict[int, Any] = {}
        for i, (fn, args, deps) in enumerate(self.steps):
            if excluded in deps:
                continue
            regs[i] = fn(*[a.const if a.reg < 0 else regs[a.reg] for a in args], env)
        return regs


def compile_expression(tree: Node, text: str, shapes: Mapping[str, Shape]) -> Program:
    """Compile ``tree`` given each variable's shape (``()`` or ``(k,)``).

    Raises ExpressionError (with the offending position) for shape mismatches such as
    adding vectors of different lengths or indexing a scalar.
    """
    steps: list = []
    ops = [0]

    def err(msg: str, node: Node) -> ExpressionError:
        return ExpressionError(msg, text, node.pos)

    def emit(shape: Shape, fn: Callable[..., Any], args: list[_Slot]) -> _Slot:
        if all(a.reg < 0 for a in args):  # every input is a constant: fold now
            with quiet():
                value = fn(*[a.const for a in args], {})
            return _Slot(shape, const=_as_const(value))
        deps = frozenset().union(*(a.deps for a in args))
        steps.append((fn, args, deps))
        # one engine operation per component of the widest operand or result
        ops[0] += max(int(np.prod(s, dtype=np.int64)) for s in [shape, *(a.shape for a in args)])
        return _Slot(shape, reg=len(steps) - 1, deps=deps)

    def broadcast(node: Node, parts: list[_Slot]) -> Shape:
        shapes_ = {p.shape for p in parts if p.shape != ()}
        if len(shapes_) > 1:
            raise err("operands have different shapes "
                      + " and ".join(str(s) for s in sorted(shapes_)), node)
        return shapes_.pop() if shapes_ else ()

    def combine(node: Node, parts: list[_Slot]) -> _Slot:
        if isinstance(node, Num):
            return _Slot((), const=float(node.value))
        if isinstance(node, Const):
            return _Slot((), const=float(CONSTANTS[node.name]))
        if isinstance(node, Var):
            if node.name not in shapes:
                raise err(f"variable '{node.name}' is not bound", node)
            return _var_slot(steps, node.name, shapes[node.name])
        if isinstance(node, Unary):
            if node.op == "+":
                return parts[0]
            return emit(parts[0].shape, lambda a, env: _map(R.neg, a), parts)
        if isinstance(node, Binary):
            shape = broadcast(node, parts)
            prim = _BINARY[node.op]
            return emit(shape, lambda a, b, env: _map(prim, a, b), parts)
        if isinstance(node, Compare):
            prim = _COMPARE[node.op]
            return emit(broadcast(node, parts), lambda a, b, env: _map(prim, a, b), parts)
        if isinstance(node, Vector):
            inner = {p.shape for p in parts}
            if len(inner) > 1:
                raise err("ragged brackets: items have different shapes "
                          + " and ".join(str(s) for s in sorted(inner)), node)
            shape = (len(parts),) + parts[0].shape
            return emit(shape, lambda *a: list(a[:-1]), parts)
        if isinstance(node, Index):
            (target,) = parts
            if target.shape == ():
                raise err("cannot index a scalar", node)
            if node.index >= target.shape[0]:
                raise err(f"index {node.index} is out of range for length {target.shape[0]}",
                          node)
            k = node.index
            return emit(target.shape[1:], lambda a, env: a[k], parts)
        return _call(node, parts, emit, broadcast, err)

    result = fold(tree, combine)
    return Program(steps, result, list(shapes), op_count=ops[0])


def _var_slot(steps: list, name: str, shape: Shape) -> _Slot:
    deps = frozenset((name,))
    steps.append((lambda env: env[name], [], deps))
    return _Slot(shape, reg=len(steps) - 1, deps=deps)


def _call(node: Call, parts: list[_Slot], emit: Callable, broadcast: Callable,
          err: Callable) -> _Slot:
    spec = FUNCTIONS[node.func]
    prim = _ENGINE.get(spec.engine)
    if spec.kind == "elementwise":
        if node.func == "log" and parts[0].call is not None and parts[0].call[0] == "sigmoid":
            # log(sigmoid(u)) as one primitive: finite for every finite u
            prim, parts = R.logsigmoid, [parts[0].call[1]]
        made = emit(parts[0].shape, lambda a, env: _map(prim, a), parts)
        made.call = (prim.name, parts[0])
        return made
    if spec.kind == "binary":
        return emit(broadcast(node, parts), lambda a, b, env: _map(prim, a, b), parts)
    if spec.kind == "select":
        shape = broadcast(node, parts)
        return emit(shape, lambda c, a, b, env: _map(R.where, c, a, b), parts)
    name = node.func
    if name == "dot":
        if parts[0].shape != parts[1].shape or parts[0].shape == ():
            raise err(f"dot needs two vectors of one length, got shapes {parts[0].shape} "
                      f"and {parts[1].shape}", node)
        return emit((), lambda a, b, env: _dot(a, b), parts)
    if parts[0].shape == ():
        raise err(f"{name} needs a vector argument, got a scalar", node)
    return emit((), lambda a, env: _reduce(name, a), parts)


def _as_const(value: Any) -> Any:
    if isinstance(value, list):
        return [_as_const(v) for v in value]
    return float(np.asarray(value))
