"""Printer: AST -> text that re-parses to an equal AST.

Two styles. The default gives every unary, binary and comparison node its own
parentheses, so precedence is visible: ``-x^2`` prints as ``(-(x ^ 2))``. ``minimal=True``
writes only the parentheses precedence needs (``-x ^ 2``): a chain the parser accepted
(``x+x+...`` of 300 terms, 150 unary signs) stays within the parser's nesting limit, which
fully parenthesised text would exceed. Both are iterative, so very long chains print fine.
"""

from __future__ import annotations

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
    Program,
    Ref,
    Slice,
    Unary,
    Var,
    Vector,
    fold,
)
from gradcli.lang.names import PRECEDENCE, UNARY_PRECEDENCE

__all__ = ["format_number", "to_text"]

# the parser's binding strengths; atoms (numbers, names, calls, brackets) bind tightest
_COMPARE_PREC, _UNARY_PREC, _POWER_PREC = PRECEDENCE["<"], UNARY_PRECEDENCE, PRECEDENCE["^"]
_ATOM_PREC = max(PRECEDENCE.values()) + 1


def format_number(value: float) -> str:
    """Shortest text that parses back to exactly ``value``.

    Whole numbers below 1e16 print without ``.0`` (``2``, ``2000``); everything else
    uses ``repr`` (``0.5``, ``1e-05``, ``1e+20``). Literals are always finite and
    non-negative because the parser rejects overflowing literals.
    """
    if value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def _index_text(node: Index) -> str:
    """``0``, ``-1``, ``1:3``, ``::2``, ``0, 1``: the text between the brackets."""
    def one(key: int | Slice) -> str:
        if isinstance(key, int):
            return str(key)
        parts = ["" if v is None else str(v) for v in (key.start, key.stop, key.step)]
        return ":".join(parts if key.step is not None else parts[:2])
    return ", ".join(one(k) for k in node.keys)


def _format(node: Node, parts: list[str]) -> str:
    if isinstance(node, Num):
        return format_number(node.value) + (f" '{node.unit}'" if node.unit else "")
    if isinstance(node, (Const, Var, Ref)):
        return node.name
    if isinstance(node, Assign):
        return f"{node.name} = {parts[0]}"
    if isinstance(node, Define):
        return f"{node.name}({', '.join(node.params)}) = {parts[0]}"
    if isinstance(node, Program):
        return "; ".join(parts)
    if isinstance(node, Unary):
        return f"({node.op}{parts[0]})"
    if isinstance(node, (Binary, Compare)):
        return f"({parts[0]} {node.op} {parts[1]})"
    if isinstance(node, Call):
        return f"{node.func}({', '.join(parts)})"
    if isinstance(node, Vector):
        return f"[{', '.join(parts)}]"
    if isinstance(node, Index):
        return f"{parts[0]}[{_index_text(node)}]"
    raise TypeError(f"not an expression node: {node!r}")


def _wrap(part: tuple[str, int], needs_parens: bool) -> str:
    return f"({part[0]})" if needs_parens else part[0]


def _format_minimal(node: Node, parts: list[tuple[str, int]]) -> tuple[str, int]:
    """(text, binding strength) with parentheses only where precedence needs them."""
    if isinstance(node, Unary):
        (operand,) = parts  # -x ^ 2 is -(x ^ 2); -(x * y) needs its parentheses
        return f"{node.op}{_wrap(operand, operand[1] < _UNARY_PREC)}", _UNARY_PREC
    if isinstance(node, Compare):  # comparisons do not chain: nested ones keep parentheses
        left, right = parts
        text = f"{_wrap(left, left[1] <= _COMPARE_PREC)} {node.op} " \
               f"{_wrap(right, right[1] <= _COMPARE_PREC)}"
        return text, _COMPARE_PREC
    if isinstance(node, Binary):
        prec, (left, right) = PRECEDENCE[node.op], parts
        if prec == _POWER_PREC:  # right-associative: (a ^ b) ^ c and a ^ (-b) keep theirs
            left_parens, right_parens = left[1] <= prec, right[1] < prec
        else:  # left-associative: a - (b - c) keeps its parentheses
            left_parens, right_parens = left[1] < prec, right[1] <= prec
        return f"{_wrap(left, left_parens)} {node.op} {_wrap(right, right_parens)}", prec
    if isinstance(node, Index):  # (x + y)[0] keeps its parentheses
        return f"{_wrap(parts[0], parts[0][1] < _ATOM_PREC)}[{_index_text(node)}]", _ATOM_PREC
    return _format(node, [text for text, _ in parts]), _ATOM_PREC


def to_text(node: Node, *, minimal: bool = False) -> str:
    """Text of ``node`` (fully parenthesised unless ``minimal``); ``parse(to_text(n)) == n``."""
    if minimal:
        return fold(node, _format_minimal)[0]
    return fold(node, _format)
