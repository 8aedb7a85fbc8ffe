"""Checks run after parsing, once the caller knows which variables exist.

Parsing accepts any unknown name as a free variable; :func:`check_names` turns names the
evaluator cannot bind into an :class:`ExpressionError` with a caret and a suggestion.
:func:`check_rectangular` is the parser's bracket-literal shape check, kept here because
it is a semantic rule rather than syntax.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from gradcli.errors import ExpressionError
from gradcli.lang.ast import Node, Var, Vector, walk
from gradcli.lang.names import CONSTANTS, suggest

__all__ = ["check_names", "check_rectangular", "literal_shape", "suggest"]


def check_names(node: Node, expression: str, allowed_vars: Iterable[str] | None) -> None:
    """Raise :class:`ExpressionError` at the first variable not in ``allowed_vars``.

    ``allowed_vars=None`` means "any variable is fine" and the check passes. The hint
    suggests the closest allowed variable, else lists them, so ``x=1`` given with
    ``sin(y)`` reports ``unknown variable 'y'`` under the ``y``.
    """
    if allowed_vars is None:
        return
    allowed = set(allowed_vars)
    for sub in walk(node):
        if isinstance(sub, Var) and sub.name not in allowed:
            close = suggest(sub.name, allowed | set(CONSTANTS))
            if close is not None:
                hint: str | None = f"did you mean '{close}'?"
            elif allowed:
                hint = "known variables: " + ", ".join(sorted(allowed))
            else:
                hint = "no variables are defined"
            raise ExpressionError(f"unknown variable '{sub.name}'", expression, sub.pos, hint)


def literal_shape(node: Node) -> tuple[int, ...]:
    """Shape of a rectangular bracket literal (``[[1, 2], [3, 4]]`` -> ``(2, 2)``).

    Anything that is not a :class:`Vector` has shape ``()`` here (its runtime shape is
    unknown before evaluation). Assumes inner literals were already checked.
    """
    dims: list[int] = []
    while isinstance(node, Vector):
        dims.append(len(node.items))
        node = node.items[0]
    return tuple(dims)


def check_rectangular(items: Sequence[Node], positions: Sequence[int], expression: str) -> None:
    """Reject ``[1, [2]]`` (mixed levels) and ``[[1, 2], [3]]`` (ragged) at the bad element.

    ``positions`` holds each element's first character, for the caret.
    """
    first_is_vector = isinstance(items[0], Vector)
    first_shape = literal_shape(items[0])
    for item, pos in zip(items, positions, strict=True):
        if isinstance(item, Vector) != first_is_vector:
            raise ExpressionError(
                "cannot mix scalars and vectors in one '[...]'", expression, pos,
                "write [a, b] for a vector, [[a, b], [c, d]] for a matrix")
        shape = literal_shape(item)
        if shape != first_shape:
            raise ExpressionError(
                f"ragged matrix: this element has shape {shape} "
                f"but the first has shape {first_shape}", expression, pos)
