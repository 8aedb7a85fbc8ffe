"""Compile an expression's or a program's AST to a straight-line program of engine calls.

The program is a flat list of steps (no recursion when it runs, however deep the tree).
Values are engine operands: floats, numpy arrays or Tensors, with the points' batch axes
first. A vector or matrix value takes one of two forms:

* a bracket literal ``[P, Q]`` of scalars is a nested Python list, one entry per component:
  each keeps its own minimal broadcast shape over a grid (``[-y, x]`` on a 1000² grid is two
  axes of 1000, not two 10⁶ arrays), and indexing, ``sum`` and ``dot`` are arithmetic on
  components;
* everything else (vector and matrix variables, the results of ``softmax``, ``@``, slices of
  them) is one array whose component axes follow the batch axes (``(N, n)`` for an
  n-vector at N points), so that ``sum(x)`` of a 10⁶-vector is one numpy call, not 10⁶
  engine operations. ``lang/arrays.py`` builds these steps.

A literal meets an array by being stacked into one (``[a, b] + x``); a scalar meets one
with unit axes appended. Parts without variables are folded here in float64, so
``9^9^9^9`` is ``inf`` at once and never a big-integer computation. A program's steps
(``m = x^2``) are compiled once, in order, and named (``Program.named``: the graph's node
names, ``wrt``); its functions are inlined at each call.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gradcli.engine import rules as R
from gradcli.engine.grad_mode import quiet
from gradcli.errors import ExpressionError
from gradcli.lang import arrays
from gradcli.lang.ast import (
    Assign,
    Binary,
    Call,
    Compare,
    Const,
    Define,
    Index,
    Node,
    Num,
    Ref,
    Unary,
    Var,
    Vector,
    fold,
    walk,
)
from gradcli.lang.ast import Program as Statements
from gradcli.lang.names import CONSTANTS, FUNCTIONS
from gradcli.lang.slots import Shape, Slot

_BINARY = {"+": R.add, "-": R.sub, "*": R.mul, "/": R.div, "^": R.power}
_COMPARE = {"<": R.lt, "<=": R.le, ">": R.gt, ">=": R.ge, "==": R.eq, "!=": R.ne}
# the engine function behind each FunctionSpec.engine name; pow(a, b) is the operator ^
_ENGINE = {**R.PRIMITIVES, "pow": R.power}
#: the most steps a program may compile to once its functions are inlined
MAX_STEPS = 1_000_000
#: the deepest chain of functions calling functions (each level is a few Python frames)
MAX_CALLS = 100


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
    """A reduction of a bracket literal, on its components."""
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
    """A compiled expression or program: ``run(env)`` maps variable values to the result.

    ``env`` gives each variable its value: an operand for a scalar, an array with trailing
    component axes for a vector or matrix variable.
    """

    def __init__(self, steps: list, result: Slot, variables: list[str],
                 op_count: int = 0, named: Mapping[str, Slot] | None = None) -> None:
        self.steps = steps
        self.result = result
        self.variables = variables
        # engine operations one run records (a step on a literal is one per component, on
        # an array one); the evaluation layer uses it to refuse requests that would run
        # for hours
        self.op_count = op_count
        #: the program's steps by name, in definition order
        self.named = dict(named or {})

    @property
    def shape(self) -> Shape:
        """The result's component shape: () scalar, (m,) vector, (m, k) matrix."""
        return self.result.shape

    @property
    def outputs(self) -> list[tuple[str, Shape]]:
        """The result's blocks: ``f``; ``f[i]`` (``f[i][j]``) per component of a bracket
        literal; one ``f`` with the component shape for an array."""
        if self.result.array or self.shape == ():
            return [("f", self.shape)]
        return [("f" + "".join(f"[{i}]" for i in idx), ()) for idx in np.ndindex(*self.shape)]

    def flat(self, value: Any) -> list[Any]:
        """A result value as one value per output block (see ``outputs``)."""
        return [value] if self.result.array or self.shape == () else _flatten(value)

    def value(self, regs: list[Any], slot: Slot) -> Any:
        """The value of ``slot`` in a run's registers (``run_all``)."""
        return slot.const if slot.reg < 0 else regs[slot.reg]

    def run_all(self, env: Mapping[str, Any], memo: Mapping[int, Any] | None = None
                ) -> list[Any]:
        """Every step's value (the registers), with ``env`` giving the variables' values.

        ``memo`` holds values of steps computed earlier (see ``run_without``); they are
        reused instead of recomputed.
        """
        regs: list[Any] = [None] * len(self.steps)
        for i, (fn, args, _) in enumerate(self.steps):
            if memo is not None and i in memo:
                regs[i] = memo[i]
                continue
            regs[i] = fn(*[a.const if a.reg < 0 else regs[a.reg] for a in args], env)
        return regs

    def run(self, env: Mapping[str, Any], memo: Mapping[int, Any] | None = None) -> Any:
        """The result's value (a scalar operand, a nested list, or an array)."""
        return self.value(self.run_all(env, memo), self.result)

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


#: told of every node as it is compiled: the node, its parts' slots and its own slot (a
#: user function's call is told after its inlined body, and gets the body's slot)
Observer = Callable[[Node, list[Slot], Slot], None]


def compile_expression(tree: Node, text: str, shapes: Mapping[str, Shape],
                       observe: Observer | None = None) -> Program:
    """Compile ``tree`` (an expression or a program) given each variable's component shape
    (``()``, ``(n,)`` or ``(r, c)``). ``observe`` is told of each node and the slot it
    compiled to (``graph`` labels each node with its unit from them).

    Raises ExpressionError (with the offending position) for shape mismatches such as
    adding vectors of different lengths or indexing a scalar.
    """
    compiler = _Compiler(text, shapes)
    compiler.observe = observe
    return compiler.program(tree)


class _Compiler:
    """One compilation: the steps emitted so far, the named steps and the functions."""

    def __init__(self, text: str, shapes: Mapping[str, Shape]) -> None:
        self.text, self.shapes = text, shapes
        self.steps: list = []
        self.ops = 0
        self.named: dict[str, Slot] = {}
        self.functions: dict[str, Define] = {}
        self.variables: dict[str, Slot] = {}
        self.observe: Observer | None = None

    def err(self, msg: str, node: Node, hint: str | None = None) -> ExpressionError:
        return ExpressionError(msg, self.text, node.pos, hint)

    def emit(self, shape: Shape, fn: Callable[..., Any], args: list[Slot],
             array: bool = False) -> Slot:
        """A step computing ``fn(*args, env)``, folded now when every input is a constant."""
        if all(a.reg < 0 for a in args):
            with quiet():
                value = fn(*[a.const for a in args], {})
            return Slot(shape, const=_as_const(value, array), array=array)
        deps = frozenset().union(*(a.deps for a in args))
        self.steps.append((fn, args, deps))
        if len(self.steps) > MAX_STEPS:
            raise ExpressionError(f"the program needs more than {MAX_STEPS:,} steps once its "
                                  "functions are inlined", self.text, None)
        # one engine operation per component of the widest literal operand or result
        self.ops += 1 if array or any(a.array for a in args) else max(
            math.prod(s) for s in [shape, *(a.shape for a in args)])
        return Slot(shape, reg=len(self.steps) - 1, deps=deps, array=array)

    def program(self, tree: Node) -> Program:
        _check_size(tree, self.text)
        result = None
        for statement in tree.statements if isinstance(tree, Statements) else (tree,):
            if isinstance(statement, Define):
                self.functions[statement.name] = statement
            elif isinstance(statement, Assign):
                result = self.named[statement.name] = self.compile(statement.value, {})
                # a step is a tensor of its own (wrt, graph adjoints, PyTorch's
                # retain_grad): log(p) of p = sigmoid(z) must go through p, not be fused
                # past it to logsigmoid(z)
                result.call = None
            else:
                result = self.compile(statement, {})
        assert result is not None, "the parser ends every program with a value"
        return Program(self.steps, result, list(self.shapes), self.ops, self.named)

    def compile(self, node: Node, scope: Mapping[str, Slot]) -> Slot:
        observe = self.observe
        if observe is None:
            return fold(node, lambda n, parts: self.combine(n, parts, scope))

        def told(n: Node, parts: list[Slot]) -> Slot:
            slot = self.combine(n, parts, scope)
            observe(n, parts, slot)
            return slot

        return fold(node, told)

    def combine(self, node: Node, parts: list[Slot], scope: Mapping[str, Slot]) -> Slot:
        if isinstance(node, Num):
            if node.unit:  # the units pass (units.py) turns every such number into SI
                raise self.err("a number with a unit is read by the units pass only", node)
            return Slot((), const=float(node.value))
        if isinstance(node, Const):
            return Slot((), const=float(CONSTANTS[node.name]))
        if isinstance(node, Ref):
            return scope[node.name] if node.name in scope else self.named[node.name]
        if isinstance(node, Var):
            return self.variable(node)
        if isinstance(node, Unary):
            if node.op == "+":
                return parts[0]
            return self.emit(parts[0].shape, lambda a, env: _map(R.neg, a), parts,
                             parts[0].array)
        if isinstance(node, (Binary, Compare)):
            if isinstance(node, Binary) and node.op == "@":
                return arrays.matmul(self, node, *parts)
            prim = _BINARY[node.op] if isinstance(node, Binary) else _COMPARE[node.op]
            shape, parts, array = arrays.align(self, node, parts)
            return self.emit(shape, lambda a, b, env: _map(prim, a, b), parts, array)
        if isinstance(node, Vector):
            inner = {p.shape for p in parts}
            if len(inner) > 1:
                raise self.err("ragged brackets: items have different shapes "
                               + " and ".join(str(s) for s in sorted(inner)), node)
            return arrays.literal(self, node, parts)
        if isinstance(node, Index):
            return arrays.index(self, node, parts[0])
        if isinstance(node, Call) and node.func in self.functions:
            return self.inline(node, parts)
        return self.call(node, parts)

    def variable(self, node: Var) -> Slot:
        name = node.name
        if name not in self.shapes:
            raise self.err(f"variable '{name}' is not bound", node)
        if name not in self.variables:  # one step per variable, however often it is used
            deps = frozenset((name,))
            self.steps.append((lambda env: env[name], [], deps))
            shape = tuple(self.shapes[name])
            self.variables[name] = Slot(shape, reg=len(self.steps) - 1, deps=deps,
                                         array=shape != ())
        return self.variables[name]

    def inline(self, node: Call, parts: list[Slot]) -> Slot:
        """A call of the program's own function: its body compiled with the arguments."""
        define = self.functions[node.func]
        try:
            return self.compile(define.body, dict(zip(define.params, parts, strict=True)))
        except ExpressionError as exc:
            if exc.position is None or "(in " in exc.reason:  # the innermost call says it
                raise
            where = ExpressionError("", self.text, node.pos).location()
            raise ExpressionError(f"{exc.reason} (in {node.func}, called at {where})",
                                  self.text, exc.position, exc.hint) from None

    def call(self, node: Call, parts: list[Slot]) -> Slot:
        spec = FUNCTIONS[node.func]
        prim = _ENGINE.get(spec.engine)
        if spec.kind == "elementwise":
            if node.func == "log" and parts[0].call is not None and \
                    parts[0].call[0] == "sigmoid":
                # log(sigmoid(u)) as one primitive: finite for every finite u
                prim, parts = R.logsigmoid, [parts[0].call[1]]
            made = self.emit(parts[0].shape, lambda a, env: _map(prim, a), parts,
                             parts[0].array)
            made.call = (prim.name, parts[0])
            return made
        if spec.kind == "binary" and len(parts) == 2:
            shape, parts, array = arrays.align(self, node, parts)
            return self.emit(shape, lambda a, b, env: _map(prim, a, b), parts, array)
        if spec.kind == "select":
            shape, parts, array = arrays.align(self, node, parts)
            return self.emit(shape, lambda c, a, b, env: _map(R.where, c, a, b), parts, array)
        name = node.func
        literal = not any(p.array for p in parts)
        if name == "dot" and literal:
            if parts[0].shape != parts[1].shape or parts[0].shape == ():
                raise self.err(f"dot needs two vectors of one length, got shapes "
                               f"{parts[0].shape} and {parts[1].shape}", node)
            return self.emit((), lambda a, b, env: _dot(a, b), parts)
        if name in ("sum", "mean", "prod", "norm") and literal and len(parts) == 1:
            if parts[0].shape == ():
                raise self.err(f"{name} needs a vector argument, got a scalar", node)
            return self.emit((), lambda a, env: _reduce(name, a), parts)
        return arrays.call(self, node, parts)


def _check_size(tree: Node, text: str) -> None:
    """Refuse, before compiling, a program whose functions inline to more than MAX_STEPS
    operations (``g(x) = f(x) + f(x)`` nested 30 deep is 10⁹), or call each other more
    than MAX_CALLS deep: a function's size is its body's operations plus the sizes of the
    functions it calls, its depth one more than theirs."""
    sizes: dict[str, int] = {}
    depths: dict[str, int] = {}

    def measure(node: Node) -> tuple[int, int]:
        total, deepest = 0, 0
        for sub in walk(node):
            if isinstance(sub, Call) and sub.func in sizes:
                total += sizes[sub.func]
                deepest = max(deepest, depths[sub.func])
            elif not isinstance(sub, (Num, Const, Var, Ref)):
                total += 1
        return total, deepest

    total = 0
    for statement in tree.statements if isinstance(tree, Statements) else (tree,):
        size, deepest = measure(statement)
        if isinstance(statement, Define):
            sizes[statement.name], depths[statement.name] = size, deepest + 1
        else:
            total += size
        if deepest >= MAX_CALLS:
            raise ExpressionError(f"functions call each other more than {MAX_CALLS} levels "
                                  "deep", text, statement.pos)
        if total > MAX_STEPS:
            raise ExpressionError(f"the program needs more than {MAX_STEPS:,} steps once its "
                                  "functions are inlined", text, statement.pos)


def _as_const(value: Any, array: bool = False) -> Any:
    if array:
        return np.asarray(value, dtype=np.float64)
    if isinstance(value, list):
        return [_as_const(v) for v in value]
    return float(np.asarray(value))
