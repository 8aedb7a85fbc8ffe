"""AST node types of the expression language, plus iterative traversal helpers.

Nodes are frozen dataclasses. ``pos`` is the 0-based offset of the node's first or
operator character (used for carets in later errors) and is excluded from equality,
so ``parse("2*x") == parse("2 * x")``. Traversals here are iterative: long left-deep
chains such as ``x+x+...+x`` (thousands of terms) must not hit Python's recursion limit,
which is also why ``==``, ``hash`` and ``repr`` of nodes are hand-written and iterative
(the dataclass-generated ones recurse). Write recursive passes with :func:`fold`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from itertools import zip_longest
from typing import TypeVar

T = TypeVar("T")

__all__ = [
    "Binary",
    "Call",
    "Compare",
    "Const",
    "Index",
    "Node",
    "Num",
    "Unary",
    "Var",
    "Vector",
    "children",
    "fold",
    "free_variables",
    "walk",
]


class _Node:
    """Base of all nodes: structural ``==``/``hash`` (ignoring ``pos``) and ``repr``."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Node):
            return NotImplemented
        pairs = zip_longest(_signatures(self), _signatures(other))
        return all(a == b for a, b in pairs)

    def __hash__(self) -> int:
        return hash(tuple(_signatures(self)))

    def __repr__(self) -> str:
        return fold(self, _repr_one)  # type: ignore[arg-type]


@dataclass(frozen=True, eq=False, repr=False)
class Num(_Node):
    """A finite, non-negative number literal (``2``, ``.5``, ``1e-3``)."""

    value: float
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Const(_Node):
    """A reserved constant: ``pi``, ``e`` or ``tau``."""

    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Var(_Node):
    """A free variable, bound by the evaluator (``x``, ``theta``)."""

    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Unary(_Node):
    """Prefix ``-`` or ``+``."""

    op: str
    operand: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Binary(_Node):
    """Arithmetic ``+ - * / ^``. ``**`` and implicit multiplication are normalised."""

    op: str
    left: Node
    right: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Compare(_Node):
    """Comparison ``< <= > >= == !=``, giving 1.0 or 0.0 (no gradient)."""

    op: str
    left: Node
    right: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Call(_Node):
    """A call of a known function by canonical name (aliases already resolved)."""

    func: str
    args: tuple[Node, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Vector(_Node):
    """A bracket literal ``[a, b]``; nested vectors form a rectangular matrix/tensor."""

    items: tuple[Node, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Index(_Node):
    """``target[index]`` with a non-negative integer literal index; ``pos`` is the '['."""

    target: Node
    index: int
    pos: int = field(default=0, compare=False)


Node = Num | Const | Var | Unary | Binary | Compare | Call | Vector | Index


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-nodes of ``node``, left to right."""
    if isinstance(node, Unary):
        return (node.operand,)
    if isinstance(node, (Binary, Compare)):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Vector):
        return node.items
    if isinstance(node, Index):
        return (node.target,)
    return ()


def walk(node: Node) -> Iterator[Node]:
    """Yield every node in pre-order (parent first, children left to right), iteratively."""
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def free_variables(node: Node) -> list[str]:
    """Names of the variables in ``node`` in order of first appearance in the text.

    Constants (``pi``) and function names are never included.
    """
    seen: dict[str, None] = {}
    for sub in walk(node):
        if isinstance(sub, Var):
            seen.setdefault(sub.name, None)
    return list(seen)


def fold(node: Node, combine: Callable[[Node, list[T]], T]) -> T:
    """Bottom-up evaluation without recursion: ``combine(n, [results of n's children])``.

    Use this for compile/print/simplify passes so deep trees cannot overflow the stack.
    """
    out: list[T] = []
    stack: list[tuple[Node, bool]] = [(node, False)]
    while stack:
        current, ready = stack.pop()
        kids = children(current)
        if kids and not ready:
            stack.append((current, True))
            stack.extend((kid, False) for kid in reversed(kids))
            continue
        cut = len(out) - len(kids)
        parts = out[cut:]
        del out[cut:]
        out.append(combine(current, parts))
    return out[0]


def _scalars(node: Node) -> list[object]:
    """The compared, non-child field values of ``node`` (op, name, value, index...)."""
    return [
        getattr(node, f.name)
        for f in fields(node)  # type: ignore[arg-type]
        if f.compare and f.name not in ("operand", "left", "right", "args", "items", "target")
    ]


def _signatures(node: Node) -> Iterator[tuple[object, ...]]:
    """Pre-order (type, scalars, arity) records; equal sequences <=> equal trees."""
    for sub in walk(node):
        yield (type(sub), *_scalars(sub), len(children(sub)))


def _repr_one(node: Node, parts: list[str]) -> str:
    values = [repr(v) for v in _scalars(node)]
    if isinstance(node, (Call, Vector)):
        values.append("(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")")
    else:
        values[len(values):] = parts
    if isinstance(node, Index):  # target comes before the index
        values = [parts[0], repr(node.index)]
    return f"{type(node).__name__}({', '.join(values)})"
