"""The expression language front end: tokenizer, parser, AST, printer, checks, errors.

Typical use::

    from gradcli.lang import parse, to_text, free_variables, ExpressionError
    tree = parse("2x^2 + sin(y)")
    free_variables(tree)   # ['x', 'y']
    to_text(tree)          # '((2 * (x ^ 2)) + sin(y))'
    free_variables(parse("m = x^2; y = m + x; p = 4*y"))   # ['x']: m, y, p are steps

Every problem with user text raises :class:`ExpressionError`; nothing here ever
evaluates user text with Python.
"""

from gradcli.errors import ExpressionError, ExpressionWarning
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
    free_variables,
    walk,
)
from gradcli.lang.checks import check_names
from gradcli.lang.names import (
    ALIASES,
    CONSTANTS,
    FUNCTIONS,
    FunctionSpec,
    resolve_function,
    suggest,
)
from gradcli.lang.parser import MAX_DEPTH, MAX_LENGTH
from gradcli.lang.printer import to_text
from gradcli.lang.program import MAX_FILE, ProgramText, parse

__all__ = [
    "ALIASES",
    "Assign",
    "Binary",
    "CONSTANTS",
    "Call",
    "Compare",
    "Const",
    "Define",
    "ExpressionError",
    "ExpressionWarning",
    "FUNCTIONS",
    "FunctionSpec",
    "Index",
    "MAX_DEPTH",
    "MAX_FILE",
    "MAX_LENGTH",
    "Node",
    "Num",
    "Program",
    "ProgramText",
    "Ref",
    "Slice",
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
