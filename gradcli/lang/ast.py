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
from dataclasses import dataclass, field, fields, replace
from itertools import zip_longest
from typing import TypeVar

T = TypeVar("T")

__all__ = [
    "Assign",
    "Binary",
    "Call",
    "Compare",
    "Const",
    "Define",
    "Index",
    "Node",
    "Num",
    "Program",
    "Ref",
    "Slice",
    "Unary",
    "Var",
    "Vector",
    "children",
    "fold",
    "free_variables",
    "walk",
    "with_children",
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
    """A finite, non-negative number literal (``2``, ``.5``, ``1e-3``), with the unit
    written after it in quotes (``9.81 'm/s^2'``; empty for a pure number)."""

    value: float
    pos: int = field(default=0, compare=False)
    unit: str = ""


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


@dataclass(frozen=True)
class Slice:
    """``start:stop:step`` inside an index, each an integer literal or None (as Python's)."""

    start: int | None = None
    stop: int | None = None
    step: int | None = None

    def as_slice(self) -> slice:
        return slice(self.start, self.stop, self.step)


#: what one index position holds: an integer literal (negative counts from the end) or a slice
Key = int | Slice


@dataclass(frozen=True, eq=False, repr=False)
class Index(_Node):
    """``target[index]``: an integer literal (``x[0]``, ``x[-1]``), a slice (``x[1:3]``,
    ``x[::2]``) or a tuple of them, one per axis (``A[0, 1]``, ``A[:, 0]``); ``pos`` is the
    '['."""

    target: Node
    index: Key | tuple[Key, ...]
    pos: int = field(default=0, compare=False)

    @property
    def keys(self) -> tuple[Key, ...]:
        """The index as a tuple, one entry per indexed axis."""
        return self.index if isinstance(self.index, tuple) else (self.index,)


@dataclass(frozen=True, eq=False, repr=False)
class Ref(_Node):
    """A name a program defines: a step (``m`` after ``m = x^2``) or, inside a function's
    body, one of its parameters. Never a free variable."""

    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Assign(_Node):
    """A program's step ``name = value``; ``pos`` is the name's."""

    name: str
    value: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Define(_Node):
    """A function ``name(params) = body``, inlined where it is called."""

    name: str
    params: tuple[str, ...]
    body: Node
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, eq=False, repr=False)
class Program(_Node):
    """Statements separated by ``;`` or newlines; the value is the last one's (an expression
    or a step)."""

    statements: tuple[Node, ...]
    pos: int = field(default=0, compare=False)


Node = (Num | Const | Var | Unary | Binary | Compare | Call | Vector | Index | Ref | Assign
        | Define | Program)


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
    if isinstance(node, Assign):
        return (node.value,)
    if isinstance(node, Define):
        return (node.body,)
    if isinstance(node, Program):
        return node.statements
    return ()


_CHILD_FIELDS = {Unary: ("operand",), Binary: ("left", "right"), Compare: ("left", "right"),
                 Index: ("target",), Assign: ("value",), Define: ("body",)}


def with_children(node: Node, kids: list[Node]) -> Node:
    """``node`` with its direct sub-nodes replaced by ``kids`` (in ``children`` order)."""
    if isinstance(node, Call):
        return replace(node, args=tuple(kids))
    if isinstance(node, Vector):
        return replace(node, items=tuple(kids))
    if isinstance(node, Program):
        return replace(node, statements=tuple(kids))
    names = _CHILD_FIELDS.get(type(node), ())
    return replace(node, **dict(zip(names, kids, strict=True))) if names else node


def walk(node: Node) -> Iterator[Node]:
    """Yield every node in pre-order (parent first, children left to right), iteratively."""
    stack: list[Node] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def free_variables(node: Node) -> list[str]:
    """Names of the variables in ``node`` in order of first appearance in the text.

    Constants (``pi``), function names, a program's steps and its functions' parameters
    (``Ref`` nodes) are never included.
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
        if f.compare and not (f.name == "unit" and not node.unit)
        and f.name not in ("operand", "left", "right", "args", "items", "target",
                                        "value", "body", "statements")
    ]


def _signatures(node: Node) -> Iterator[tuple[object, ...]]:
    """Pre-order (type, scalars, arity) records; equal sequences <=> equal trees."""
    for sub in walk(node):
        yield (type(sub), *_scalars(sub), len(children(sub)))


def _repr_one(node: Node, parts: list[str]) -> str:
    values = [repr(v) for v in _scalars(node)]
    if isinstance(node, (Call, Vector, Program)):
        values.append("(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")")
    else:
        values[len(values):] = parts
    if isinstance(node, Index):  # target comes before the index
        values = [parts[0], repr(node.index)]
    return f"{type(node).__name__}({', '.join(values)})"
