"""``gradcli.evaluate``'s point arguments: one point as a dict, values as constant
expressions in strings, variables held fixed beside points or a grid, and a TypeError
that says what ``at=`` takes."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradcli
from gradcli.errors import EvaluationError
from gradcli.lang import ExpressionWarning, parse
from gradcli.lang.spec_text import parse_constant


def test_one_point_as_a_dict() -> None:
    r = gradcli.evaluate("x^2", "grad", at={"x": 1})
    assert r["df/dx"].tolist() == [2.0] and r["f"].tolist() == [1.0]


@pytest.mark.parametrize("at, got", [
    (1, "int"), ("x=1", "str"), ([1, 2], "a list holding int"), ({1, 2}, "set"),
    ([{"x": 1}, [("x", 2)]], "a list holding list"),
])
def test_anything_else_is_a_type_error_saying_what_at_takes(at, got) -> None:
    with pytest.raises(TypeError, match="at= takes one point as a dict") as info:
        gradcli.evaluate("x^2", "grad", at=at)
    assert f"got {got}" in str(info.value)


@pytest.mark.parametrize("value", [None, [1.0, None]])
def test_a_missing_value_is_refused_not_read_as_nan(value) -> None:
    # numpy turns None into nan, so a point built from a row with a gap evaluated to nan
    with pytest.raises(ValueError, match="variable 'x': expected a number, a "
                       "vector or a matrix of numbers, got"):
        gradcli.evaluate("sum(x)", "grad", at={"x": value})


def test_point_values_may_be_constant_expressions() -> None:
    r = gradcli.evaluate("sin(x)*y", "grad", at={"x": "pi/2", "y": "2^3"})
    assert r["x"].tolist() == [math.pi / 2] and r["y"].tolist() == [8.0]
    assert r["df/dy"].tolist() == [1.0]
    v = gradcli.evaluate("sum(x)", "grad", at={"x": ["pi", "2e0", 1]})
    assert v["x"].tolist() == [[math.pi, 2.0, 1.0]] and v["f"].tolist() == [math.pi + 3]
    g = gradcli.evaluate("x*z", "eval", grid={"x": (0, "2pi", 3), "z": "1/2"})
    assert np.ravel(g["x"]).tolist() == [0.0, math.pi, 2 * math.pi]
    assert np.ravel(g["f"]).tolist() == [0.0, math.pi / 2, math.pi]


def test_a_string_that_is_no_constant_is_an_evaluation_error() -> None:
    """A value that uses a name says it is not a number or a constant expression, and
    which names it uses when that is not the whole value."""
    with pytest.raises(EvaluationError, match=r"'2\*y' is not a number or a constant "
                       r"expression \(it uses y\)"):
        gradcli.evaluate("x", at={"x": "2*y"})
    with pytest.raises(EvaluationError, match=r"variable 'x': 'abc' is not a number or a constant "
                       r"expression$"):
        gradcli.evaluate("x", at={"x": "abc"})


def test_inf_and_nan_are_constants_of_point_values() -> None:
    assert parse_constant("-inf", "v") == -math.inf
    assert math.isnan(parse_constant("nan", "v"))
    assert parse_constant("[1, inf]", "v") == [1.0, math.inf]
    assert parse_constant("pi", "v") == math.pi


def test_fixed_beside_points() -> None:
    xs = np.array([1.0, 2.0, -3.0])
    r = gradcli.evaluate("a*x^2", "grad", points={"x": xs}, fixed={"a": 3})
    assert list(r) == ["x", "a", "f", "df/dx", "df/da"]
    assert r["a"].tolist() == [3.0] * 3
    assert r["f"].tolist() == (3 * xs**2).tolist()
    assert r["df/dx"].tolist() == (6 * xs).tolist()
    assert r["df/da"].tolist() == (xs**2).tolist()


def test_fixed_vector_beside_a_grid() -> None:
    r = gradcli.evaluate("dot(w, [x, y])", "grad", grid={"x": (0, 1, 2), "y": (0, 1, 3)},
                         fixed={"w": [2, "1/2"]})
    x, y = np.meshgrid([0.0, 1.0], [0.0, 0.5, 1.0], indexing="ij")
    assert np.array_equal(r["f"], 2 * x + y / 2)
    assert np.array_equal(np.broadcast_to(r["df/dw"][..., 1], y.shape), y)  # one block
    assert np.ravel(r["df/dx"]).tolist() == [2.0] * 6


def test_fixed_with_at_and_conflicts() -> None:
    r = gradcli.evaluate("a*x", "grad", at=[{"x": 1}, {"x": 2}], fixed={"a": 5})
    assert r["f"].tolist() == [5.0, 10.0] and r["df/da"].tolist() == [1.0, 2.0]
    with pytest.raises(EvaluationError, match="'x' is held fixed and also given"):
        gradcli.evaluate("x", points={"x": np.ones(2)}, fixed={"x": 1})
    with pytest.raises(EvaluationError, match="constant"):
        gradcli.evaluate("x", points={"x": np.ones(2)}, fixed={"pi": 1})


def test_held_values_are_not_copied_per_point() -> None:
    prepared = gradcli.evaluation.prepare("a*x", "eval", points={"x": np.ones(10**6)},
                                          fixed={"a": 2})
    held = prepared.binding.values["a"]
    assert held.shape == (10**6,) and held.strides == (0,)


def test_parser_warns_about_implicit_multiplication_after_division() -> None:
    with pytest.warns(ExpressionWarning, match=r"'/2pi' divides by 2 only"):
        parse("x/2pi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse("x/(2pi) + 2x/y")


@pytest.mark.parametrize("kwargs, words", [
    ({"grid": {"x": (0, 10**400, 3)}}, ["grid 'x'", "too large for a float"]),
    ({"grid": {"x": (0, 1, 10**400)}}, ["the grid has 1.00e+400 points", "over the limit"]),
    ({"grid": {"x": (0, 1j, 3)}}, ["grid 'x'", "complex numbers are not supported"]),
    ({"grid": {"x": 1j}}, ["grid 'x'", "complex"]),
    ({"points": {"x": np.array([1 + 2j, 3 + 4j])}}, ["column 'x'", "complex"]),
    ({"points": {"x": [1, 10**400]}}, ["column 'x'", "too large for a float"]),
    ({"at": {"x": 1 + 2j}}, ["variable 'x'", "complex"]),
    ({"at": {"x": [1.0, np.complex128(2)]}}, ["variable 'x'", "complex"]),
    ({"at": {"x": 10**400}}, ["variable 'x'", "too large for a float"]),
    ({"at": {"x": 1}, "fixed": {"y": 1j}}, ["variable 'y'", "complex"]),
])
def test_complex_and_overflowing_inputs_are_evaluation_errors_naming_the_parameter(
        kwargs, words) -> None:
    """Complex values are refused on every path (numpy would keep their real part with
    only a warning) and integers past float range are refused, each with an
    EvaluationError that names the parameter; never a bare OverflowError or TypeError."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning on the way
        with pytest.raises(EvaluationError) as info:
            gradcli.evaluate("x^2", "grad", **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))


@pytest.mark.parametrize("what, kwargs, words", [
    ("vjp", {"vector": 1j}, ["the vector", "complex"]),
    ("jvp", {"direction": {"x": 1j}}, ["the direction for 'x'", "complex"]),
])
def test_complex_vectors_and_directions_are_refused(what, kwargs, words) -> None:
    """vjp's vector and jvp's direction refuse complex values too."""
    with pytest.raises(EvaluationError) as info:
        gradcli.evaluate("x^2", what, at={"x": 1.0}, **kwargs)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("kwargs, words", [
    ({"at": {"x": 1}, "dtype": "nonsense"}, ["dtype must be float64 or float32", "nonsense"]),
    ({"at": {"x": 1}, "dtype": "int32"}, ["dtype must be float64 or float32"]),
    ({"at": {"x": 1}, "max_points": "a"}, ["max_points must be a whole number"]),
    ({"at": {"x": 1}, "max_points": -1}, ["max_points must be a whole number"]),
    ({"at": {"x": 1}, "wrt": 5}, ["wrt must be names"]),
    ({"grid": {"x": (0, 1, 10**400)}, "max_points": 10**500}, ["more than any array"]),
])
def test_bad_parameters_are_evaluation_errors_naming_them(kwargs, words) -> None:
    """A bad dtype, max_points or wrt, or an unallocatable grid, is an EvaluationError
    that names the parameter (not numpy's TypeError or ValueError)."""
    with pytest.raises(EvaluationError) as info:
        gradcli.evaluate("x^2", "grad", **kwargs)
    for word in words:
        assert word in str(info.value), (word, str(info.value))
