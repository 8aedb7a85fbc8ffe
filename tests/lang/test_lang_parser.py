"""Parser, AST and printer of the expression language: precedence and round trips."""

from __future__ import annotations

import pytest

from gradcli.lang import (
    CONSTANTS,
    FUNCTIONS,
    Binary,
    Call,
    Compare,
    Const,
    ExpressionError,
    Index,
    Num,
    Unary,
    Var,
    Vector,
    check_names,
    free_variables,
    parse,
    suggest,
    to_text,
    walk,
)
from gradcli.lang.ast import fold

# input, fully parenthesised reading
PRECEDENCE = [
    ("-x^2", "(-(x ^ 2))"),
    ("2^3^2", "(2 ^ (3 ^ 2))"),
    ("2**3**2", "(2 ^ (3 ^ 2))"),
    ("2^-1", "(2 ^ (-1))"),
    ("2**-1", "(2 ^ (-1))"),
    ("2^-x^2", "(2 ^ (-(x ^ 2)))"),
    ("2 ^ 3 * 4", "((2 ^ 3) * 4)"),
    ("a-b-c", "((a - b) - c)"),
    ("a/b/c", "((a / b) / c)"),
    ("a-b+c", "((a - b) + c)"),
    ("a*b/c", "((a * b) / c)"),
    ("a+b*c", "(a + (b * c))"),
    ("2x", "(2 * x)"),
    ("2 x", "(2 * x)"),
    ("2(x+1)", "(2 * (x + 1))"),
    ("(x+1)(x-1)", "((x + 1) * (x - 1))"),
    ("2(x)(y)", "((2 * x) * y)"),
    ("2pi", "(2 * pi)"),
    ("2x^2", "(2 * (x ^ 2))"),
    ("x/2y", "((x / 2) * y)"),
    ("x*y^2", "(x * (y ^ 2))"),
    ("-x*y", "((-x) * y)"),
    ("-2x", "((-2) * x)"),
    ("--x", "(-(-x))"),
    ("+x", "(+x)"),
    ("x+1 < 2*y", "((x + 1) < (2 * y))"),
    ("x == -y", "(x == (-y))"),
    ("x != y + 1", "(x != (y + 1))"),
    ("(a<b) == c", "((a < b) == c)"),
    ("x[0]^2", "(x[0] ^ 2)"),
    ("-x[0]", "(-x[0])"),
    ("x^y[0]", "(x ^ y[0])"),
    ("x[0]y", "(x[0] * y)"),
    ("x[1][0]", "x[1][0]"),
    ("(x+y)[0]", "(x + y)[0]"),
    ("sin(x)^2", "(sin(x) ^ 2)"),
    ("2sin(x)", "(2 * sin(x))"),
    ("sin(x)cos(x)", "(sin(x) * cos(x))"),
    ("e^x", "(e ^ x)"),
    ("2e3", "2000"),
    ("2E+5", "200000"),
    ("2e", "(2 * e)"),
    ("1e", "(1 * e)"),
    ("2e-3", "0.002"),
    ("1e-3x", "(0.001 * x)"),
    (".5x", "(0.5 * x)"),
    ("2.5", "2.5"),
    ("1e-300", "1e-300"),
    ("ln(x)", "log(x)"),
    ("arcsin(x) + arccos(x) + arctan(x)", "((asin(x) + acos(x)) + atan(x))"),
    ("min(x, y) + max(x,y)", "(min(x, y) + max(x, y))"),
    ("where(x > 0, x, 0)", "where((x > 0), x, 0)"),
    ("atan2(y, x) * hypot(x, y)", "(atan2(y, x) * hypot(x, y))"),
    ("dot([1, 2], x) + sum(x)", "(dot([1, 2], x) + sum(x))"),
    ("[[1,2],[3,4]][0]", "[[1, 2], [3, 4]][0]"),
    ("xy + x1 + theta_2", "((xy + x1) + theta_2)"),
    ("2 * -x", "(2 * (-x))"),
]


@pytest.mark.parametrize(("text", "expected"), PRECEDENCE)
def test_precedence_table(text: str, expected: str) -> None:
    assert to_text(parse(text)) == expected


@pytest.mark.parametrize(("text", "expected"), PRECEDENCE)
def test_round_trip(text: str, expected: str) -> None:
    tree = parse(text)
    again = parse(to_text(tree))
    assert again == tree
    assert hash(again) == hash(tree)
    assert to_text(again) == expected


def test_ast_shapes_and_positions() -> None:
    tree = parse("-x^2 + sin(y)")
    minus_x_squared = Unary("-", Binary("^", Var("x"), Num(2.0)))
    assert tree == Binary("+", minus_x_squared, Call("sin", (Var("y"),)))
    assert tree.pos == 5
    assert tree.left.pos == 0 and tree.left.operand.pos == 2
    assert tree.right.pos == 7
    assert parse("2 <= pi") == Compare("<=", Num(2.0), Const("pi"))
    assert parse("[[1, 2], [3, 4]]") == Vector(
        (Vector((Num(1.0), Num(2.0))), Vector((Num(3.0), Num(4.0))))
    )
    assert parse("x[3]") == Index(Var("x"), 3)
    assert parse("x[3]").pos == 1
    assert isinstance(parse("1e3").value, float)


def test_equality_ignores_position_but_not_structure() -> None:
    assert parse("2*x") == parse(" 2 *  x")
    assert parse("2*x") != parse("2*y")
    assert parse("x+y") != parse("x-y")
    assert parse("x[0]") != parse("x[1]")
    assert parse("sum([1, 2])") != parse("sum([1, 2, 3])")
    assert Num(1.0) != 1.0
    assert len({parse("x+1"), parse("x + 1"), parse("1+x")}) == 2


def test_free_variables_in_order_of_appearance() -> None:
    assert free_variables(parse("y*x + sin(y) + pi + e*z")) == ["y", "x", "z"]
    assert free_variables(parse("2 + tau")) == []
    assert free_variables(parse("where(b > a, c[0], a)")) == ["b", "a", "c"]


def test_walk_is_preorder() -> None:
    kinds = [type(n).__name__ for n in walk(parse("sin(x) + 1"))]
    assert kinds == ["Binary", "Call", "Var", "Num"]


def test_tables() -> None:
    assert FUNCTIONS["sin"].arity == 1
    assert FUNCTIONS["where"].arity == 3
    assert FUNCTIONS["min"].engine == "minimum" and FUNCTIONS["max"].engine == "maximum"
    assert FUNCTIONS["dot"].kind == "reduction"
    assert set(CONSTANTS) == {"pi", "e", "tau", "inf"}
    assert "ln" not in FUNCTIONS  # aliases are resolved by the parser


def test_long_left_chain_is_fine_and_everything_is_iterative() -> None:
    text = "+".join(["x"] * 4999)
    tree = parse(text)
    assert tree == parse(text)
    assert hash(tree) == hash(parse(text))
    assert free_variables(tree) == ["x"]
    assert to_text(tree).count("+") == 4998
    assert repr(tree).startswith("Binary('+', Binary(")
    assert fold(tree, lambda node, parts: 1 + max(parts, default=0)) == 4999


def test_nesting_at_the_limit_is_accepted() -> None:
    assert parse("(" * 200 + "x" + ")" * 200) == Var("x")
    assert parse("-" * 200 + "x") is not None
    assert parse("2^" * 200 + "2") is not None
    assert parse("sin(" * 200 + "x" + ")" * 200) is not None


def test_check_names_and_suggest() -> None:
    text = "sin(x) + y"
    tree = parse(text)
    check_names(tree, text, None)
    check_names(tree, text, {"x", "y"})
    with pytest.raises(ExpressionError) as info:
        check_names(tree, text, {"x", "yy"})
    assert info.value.position == 9
    assert info.value.message == "unknown variable 'y' (did you mean 'yy'?)"
    assert suggest("sinn", FUNCTIONS) == "sin"
    assert suggest("Cos", FUNCTIONS) == "cos"
    assert suggest("qqq", FUNCTIONS) is None
