"""Checks run after parsing, once the caller knows which variables exist.

Parsing accepts any unknown name as a free variable; :func:`check_names` turns names the
evaluator cannot bind into an :class:`ExpressionError` with a caret and a suggestion.
"""

from __future__ import annotations

from collections.abc import Iterable

from .ast import Node, Var, walk
from .errors import ExpressionError
from .names import CONSTANTS, suggest

__all__ = ["check_names", "suggest"]


def check_names(node: Node, expression: str, allowed_vars: Iterable[str] | None) -> None:
    """Raise :class:`ExpressionError` at the first variable not in ``allowed_vars``.

    ``allowed_vars=None`` means "any variable is fine" and the check passes. The hint
    suggests the closest allowed variable, else lists them, so ``--at x=1`` with
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
