"""Printer: AST -> canonical, fully parenthesised text that re-parses to an equal AST.

Used for ``--explain``-style output, error context and round-trip tests. Every unary,
binary and comparison node gets its own parentheses, so precedence is visible:
``-x^2`` prints as ``(-(x ^ 2))``. Iterative, so very long chains print fine.
"""

from __future__ import annotations

from .ast import Binary, Call, Compare, Const, Index, Node, Num, Unary, Var, Vector, fold

__all__ = ["format_number", "to_text"]


def format_number(value: float) -> str:
    """Shortest text that parses back to exactly ``value``.

    Whole numbers below 1e16 print without ``.0`` (``2``, ``2000``); everything else
    uses ``repr`` (``0.5``, ``1e-05``, ``1e+20``). Literals are always finite and
    non-negative because the parser rejects overflowing literals.
    """
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _format(node: Node, parts: list[str]) -> str:
    if isinstance(node, Num):
        return format_number(node.value)
    if isinstance(node, (Const, Var)):
        return node.name
    if isinstance(node, Unary):
        return f"({node.op}{parts[0]})"
    if isinstance(node, (Binary, Compare)):
        return f"({parts[0]} {node.op} {parts[1]})"
    if isinstance(node, Call):
        return f"{node.func}({', '.join(parts)})"
    if isinstance(node, Vector):
        return f"[{', '.join(parts)}]"
    if isinstance(node, Index):
        return f"{parts[0]}[{node.index}]"
    raise TypeError(f"not an expression node: {node!r}")


def to_text(node: Node) -> str:
    """Fully parenthesised text of ``node``; ``parse(to_text(n)) == n``."""
    return fold(node, _format)
