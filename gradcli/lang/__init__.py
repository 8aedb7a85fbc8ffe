"""The expression language front end: tokenizer, parser, AST, printer, checks, errors.

Typical use::

    from gradcli.lang import parse, to_text, free_variables, ExpressionError
    tree = parse("2x^2 + sin(y)")
    free_variables(tree)   # ['x', 'y']
    to_text(tree)          # '((2 * (x ^ 2)) + sin(y))'

Every problem with user text raises :class:`ExpressionError`; nothing here ever
evaluates user text with Python.
"""

from .ast import (
    Binary,
    Call,
    Compare,
    Const,
    Index,
    Node,
    Num,
    Unary,
    Var,
    Vector,
    free_variables,
    walk,
)
from .checks import check_names
from .errors import ExpressionError, ExpressionWarning
from .names import ALIASES, CONSTANTS, FUNCTIONS, FunctionSpec, resolve_function, suggest
from .parser import MAX_DEPTH, MAX_LENGTH, parse
from .printer import to_text

__all__ = [
    "ALIASES",
    "Binary",
    "CONSTANTS",
    "Call",
    "Compare",
    "Const",
    "ExpressionError",
    "ExpressionWarning",
    "FUNCTIONS",
    "FunctionSpec",
    "Index",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "Node",
    "Num",
    "Unary",
    "Var",
    "Vector",
    "check_names",
    "free_variables",
    "parse",
    "resolve_function",
    "suggest",
    "to_text",
    "walk",
]
