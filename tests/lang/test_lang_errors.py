"""Errors of the expression language: messages, caret columns, limits, hostile input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcli.lang import MAX_LENGTH, ExpressionError, parse

# input, exact message (reason + hint), 0-based caret position
ERRORS = [
    # unexpected character
    ("x $ y", "unexpected character '$'", 2),
    ("x\x00", "unexpected character '\\x00'", 1),
    ("\u0445 + 1", "unexpected character '\u0445' (U+0445, not ASCII)", 0),
    ("1 = x", "unexpected '=' (use '==' to compare; NAME = expression names a step, at the "
     "start of a statement)", 2),
    ("x == y = 1", "unexpected '=' (use '==' to compare; NAME = expression names a step, at "
     "the start of a statement)", 7),
    ("!x", "unexpected character '!' (use '!=' for 'not equal')", 0),
    ("x.y", "unexpected character '.' ('.' may only appear inside a number such as 0.5)", 1),
    ("2 \u2212 x", "unexpected character '\u2212' (U+2212, not ASCII) "
     "(use the ASCII minus '-')", 2),
    # unexpected token / end of input
    ("x + * 2", "unexpected '*': expected a number, a name, '(' or '['", 4),
    ("x +", "unexpected end of input after '+': expected a number, a name, '(' or '['", 3),
    ("()", "unexpected ')': expected a number, a name, '(' or '['", 1),
    ("[1, ]", "unexpected ']': expected a number, a name, '(' or '['", 4),
    ("x y", "missing operator between 'x' and 'y' (write x*y to multiply)", 2),
    ("2 3", "missing operator between '2' and '3' (write 2*3 to multiply)", 2),
    ("x, y", "unexpected ',' (commas only separate function arguments and vector elements)", 1),
    ("(1, 2)", "unexpected ',' (commas only separate function arguments and vector elements)", 2),
    ("a < b < c", "comparisons cannot be chained (use parentheses, e.g. (a < b) == 1)", 6),
    # unbalanced brackets
    ("sin(x) + cos(y", "unbalanced '(': expected ')' to match it", 12),
    ("(x + 1", "unbalanced '(': expected ')' to match it", 0),
    ("[1, 2", "unbalanced '[': expected ']' to match it", 0),
    ("x[0", "unbalanced '[': expected ']' to match it", 1),
    ("sin(", "unbalanced '(': expected ')' to match it", 3),
    ("x + 1)", "unbalanced ')': there is no matching '('", 5),
    ("x]", "unbalanced ']': there is no matching '['", 1),
    ("(x]", "unbalanced ']': the '(' at column 1 must be closed with ')' first", 2),
    ("[x)", "unbalanced ')': the '[' at column 1 must be closed with ']' first", 2),
    # functions and constants
    ("sinn(x)", "unknown function 'sinn' (did you mean 'sin'?)", 0),
    ("2 + coss(x)", "unknown function 'coss' (did you mean 'cos'?)", 4),
    ("x(1)", "unknown function 'x' (write x*(...) to multiply)", 0),
    ("pi(2)", "pi is a constant, not a function (write pi*(...) to multiply)", 0),
    ("sin + 1", "sin is a function: call it as sin(...)", 0),
    ("1 + ln", "ln is a function: call it as ln(...)", 4),
    ("sin(x, y)", "sin takes 1 argument, got 2", 0),
    ("sin()", "sin takes 1 argument, got 0", 0),
    ("y + atan2(x)", "atan2 takes 2 arguments, got 1", 4),
    ("where(x, 1)", "where takes 3 arguments, got 2", 0),
    # vectors and indexing
    ("[]", "empty vector '[]' (a vector needs at least one element)", 0),
    ("[[1, 2], [3]]", "ragged matrix: this element has shape (1,) but the first has shape (2,)", 9),
    ("[1, [2]]", "cannot mix scalars and vectors in one '[...]' "
     "(write [a, b] for a vector, [[a, b], [c, d]] for a matrix)", 4),
    ("x[-]", "invalid index ']' (an index is an integer (x[0], x[-1]) or a slice (x[1:3], "
     "x[::2]))", 3),
    ("x[i]", "invalid index name 'i' (an index is an integer (x[0], x[-1]) or a slice (x[1:3], "
     "x[::2]))", 2),
    ("x[1.5]", "invalid index number '1.5' (an index is an integer (x[0], x[-1]) or a slice "
     "(x[1:3], x[::2]))", 2),
    ("x[0 1]", "unexpected number '1': expected ']' after the index (an index is an integer "
     "(x[0], x[-1]) or a slice (x[1:3], x[::2]))", 4),
    ("x[::0]", "a slice step cannot be zero", 4),
    ("x[9999999999]", "index 9999999999 is too large", 2),
    ("2[0]", "cannot index a number", 1),
    ("pi[0]", "cannot index the constant pi", 2),
    # numbers, empty input, nesting
    ("1e999", "number too large: 1e999 (the largest number is about 1.8e308)", 0),
    ("", "empty expression", 0),
    ("   ", "empty expression", 0),
    ("(" * 201 + "x" + ")" * 201, "expression nests deeper than 200 levels", 200),
    ("-" * 201 + "x", "expression nests deeper than 200 levels", 200),
    ("2^" * 201 + "2", "expression nests deeper than 200 levels", 401),
    ("[" * 201 + "1" + "]" * 201, "expression nests deeper than 200 levels", 200),
    ("sin(" * 201 + "x" + ")" * 201, "expression nests deeper than 200 levels", 803),
]


@pytest.mark.parametrize(("text", "message", "position"), ERRORS)
def test_error_message_and_caret(text: str, message: str, position: int) -> None:
    with pytest.raises(ExpressionError) as info:
        parse(text)
    err = info.value
    assert err.message == message
    assert err.position == position
    assert err.expression == text
    assert f"at column {position + 1}" in str(err)


def test_render_three_lines_with_caret() -> None:
    with pytest.raises(ExpressionError) as info:
        parse("sin(x) + cos(y")
    assert info.value.render() == (
        "  sin(x) + cos(y\n"
        "              ^\n"
        "error: unbalanced '(': expected ')' to match it"
    )
    assert str(info.value) == "unbalanced '(': expected ')' to match it at column 13"


def test_str_names_what_and_where() -> None:
    with pytest.raises(ExpressionError) as info:
        parse("sinn(x)")
    assert str(info.value) == "unknown function 'sinn' at column 1 (did you mean 'sin'?)"
    assert isinstance(info.value, ValueError)


def test_render_windows_long_expressions_and_keeps_the_caret_aligned() -> None:
    text = "x + " * 100 + "@ + " + "y + " * 100 + "1"
    with pytest.raises(ExpressionError) as info:
        parse(text)
    lines = info.value.render().split("\n")
    assert len(lines) == 3
    assert len(lines[0]) <= 90
    assert lines[0].startswith("  ...") and lines[0].endswith("...")
    assert lines[0][lines[1].index("^")] == "@"


def test_render_replaces_control_characters() -> None:
    with pytest.raises(ExpressionError) as info:
        parse("x +\t\x00")
    lines = info.value.render().split("\n")
    assert len(lines) == 3
    assert lines[0] == "  x + ?"
    assert lines[1].index("^") == 6


def test_too_long_has_no_caret() -> None:
    text = "x" * (MAX_LENGTH + 1)
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert info.value.message == "expression is 10001 characters long; the limit is 10000"
    assert info.value.position is None
    assert info.value.render() == "error: expression is 10001 characters long; the limit is 10000"
    parse("x" * MAX_LENGTH)  # exactly at the limit is fine


@pytest.mark.parametrize(
    "text",
    [
        "(" * 10_000,
        "(" * 5000 + ")" * 5000,
        "-" * 5000 + "x",
        "2^" * 3000 + "2",
        "[" * 5000,
        "sin(" * 2000,
        "+-" * 5000,
        "x" + "[0]" * 3333,
    ],
)
def test_pathological_inputs_fail_fast_without_recursion_error(text: str) -> None:
    try:  # iterative parser: neither RecursionError nor anything but ExpressionError
        parse(text)
    except ExpressionError:
        pass


HOSTILE = [
    "__import__('os').system('echo hi')",
    "().__class__",
    "x.__class__",
    "lambda: 1",
    "[i for i in x]",
    '"abc"',
    "b'x'",
    'f"{x}"',
    "(y := 2)",
    "x\x00",
    "x; import os",
    "open('/etc/passwd').read()",
    "x if y else z",
    "{1: 2}",
    "x#comment\ny",
    "$x",
    "`x`",
    "\\x",
    "eval(1)",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_strings_raise_expression_error(text: str) -> None:
    with pytest.raises(ExpressionError):
        parse(text)


_ALPHABET = st.sampled_from(
    list("xyz0123456789.eE+-*/^()[],<>=! _") + ["sin", "pi", "**", "\x00", "\u0445", "where"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_fuzz_only_expression_error(text: str) -> None:
    try:
        parse(text)
    except ExpressionError as err:
        assert err.position is None or 0 <= err.position <= len(text)
        assert len(err.render().split("\n")) == 3


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_fuzz_arbitrary_unicode(text: str) -> None:
    try:
        parse(text)
    except ExpressionError:
        pass
