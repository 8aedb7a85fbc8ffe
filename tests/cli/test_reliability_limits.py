"""Deep and large input: no RecursionError anywhere, documented limits with clear errors.

The engine's own 100,000-operation chain and 100,000-term sum under ``backward()`` are in
test_engine_semantics.py; here the same depths go through the other paths: the
expression language and ``gradcli.evaluate`` (a 100,000-term ``sum``), forward mode and
second order in ``gradcli.functional``, and the longest chains the 10,000-character limit
allows, through the CLI.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

import gradcli as gc
from gradcli import evaluate
from gradcli.cli.main import main
from gradcli.errors import EvaluationError
from gradcli.lang import MAX_DEPTH, MAX_LENGTH, ExpressionError, parse

N = 100_000


def test_the_documented_limits() -> None:
    assert (MAX_LENGTH, MAX_DEPTH) == (10_000, 200)


# --- 100,000-deep graphs ----------------------------------------------------------------------

def test_sum_of_100000_terms_through_evaluate() -> None:
    """``sum(x)`` over a 100,000-component variable compiles to a chain of 99,999 additions:
    a graph 100,000 nodes deep, differentiated in reverse mode."""
    x = np.arange(N, dtype=float).reshape(1, N) / N
    limit = sys.getrecursionlimit()
    result = evaluate("sum(x)", "grad", points={"x": x})
    assert sys.getrecursionlimit() == limit  # not "fixed" by raising the recursion limit
    assert float(np.asarray(result["f"]).reshape(-1)[0]) == pytest.approx((N - 1) / 2)
    assert result["df/dx"].shape == (1, N)
    assert (result["df/dx"] == 1.0).all()


def test_forward_mode_through_a_100000_operation_chain() -> None:
    rate = 1.00001
    out, tangent = gc.functional.jvp(lambda t: _chain(t, N, rate), (1.0,), (1.0,))
    assert math.isclose(out.item(), rate**N, rel_tol=1e-9)
    assert math.isclose(tangent.item(), rate**N, rel_tol=1e-9)


def test_second_order_through_a_50000_operation_chain() -> None:
    """hessian = backward of a backward (create_graph) over 50,000 nodes, each backward
    graph 50 times deeper than Python's recursion limit.

    f(t) = (rate^n t)^2 / 2 has f'' = rate^(2n)."""
    n, rate = N // 2, 1.00001
    h = gc.functional.hessian(lambda t: _chain(t, n, rate) ** 2 / 2, 1.0)
    assert math.isclose(h.item(), rate ** (2 * n), rel_tol=1e-9)


def _chain(t, n: int, rate: float):
    for _ in range(n):
        t = t * rate
    return t


# --- the longest expressions the language accepts ---------------------------------------------

def test_longest_sum_and_product_through_the_cli(capsys) -> None:
    terms = (MAX_LENGTH + 1) // 2  # "x+x+...+x" is exactly 10,000 characters at most
    plus = "+".join(["x"] * terms)
    times = "*".join(["x"] * terms)
    assert len(plus) <= MAX_LENGTH
    assert main(["grad", plus, "--at", "x=2"]) == 0
    assert capsys.readouterr().out == f"x,f,df/dx\n2.0,{2.0 * terms},{float(terms)}\n"
    assert main(["hessian", times, "--at", "x=1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == f"1.0,1.0,{float(terms * (terms - 1))}"  # d2/dx2 x^n = n(n-1) at 1
    assert main(["grad", plus, "--grid", "x=0:1:1001"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1002


def test_nesting_exactly_at_the_limit_differentiates() -> None:
    depth = MAX_DEPTH
    expr = "sin(" * depth + "x" + ")" * depth
    result = evaluate(expr, "grad", at=[{"x": 0.5}])
    v, d = 0.5, 1.0  # the chain rule by hand
    for _ in range(depth):
        d *= math.cos(v)
        v = math.sin(v)
    assert math.isclose(float(np.asarray(result["f"]).reshape(-1)[0]), v, rel_tol=1e-12)
    assert math.isclose(float(np.asarray(result["df/dx"]).reshape(-1)[0]), d, rel_tol=1e-9)


@pytest.mark.parametrize("expr", [
    "(" * 201 + "x" + ")" * 201,
    "sin(" * 201 + "x" + ")" * 201,
    "-" * 201 + "x",
    "x^" * 201 + "x",
    "[" * 201 + "x" + "]" * 201,
])
def test_one_level_too_deep_is_the_documented_error(expr: str) -> None:
    with pytest.raises(ExpressionError) as info:
        evaluate(expr, "grad", at=[{"x": 0.5}])
    assert info.value.reason == "expression nests deeper than 200 levels"
    assert info.value.position is not None


def test_ten_thousand_deep_parentheses_are_refused_by_length(capsys) -> None:
    text = "(" * 10_000 + "x" + ")" * 10_000
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert info.value.message == "expression is 20001 characters long; the limit is 10000"
    assert main(["grad", text, "--at", "x=1"]) == 2
    assert capsys.readouterr().err == (
        "error: expression is 20001 characters long; the limit is 10000\n")


# --- point limits -----------------------------------------------------------------------------

def test_evaluate_refuses_an_oversized_grid_before_allocating() -> None:
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(EvaluationError) as info:
            evaluate("x*y", "grad", grid={"x": (0, 1, 10**6), "y": (0, 1, 10**6)})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "1,000,000,000,000 points" in str(info.value) and "max_points" in str(info.value)
    assert peak < 10 * 2**20


def test_points_over_max_points_are_refused(capsys, tmp_path) -> None:
    rows = "\n".join(str(i) for i in range(101))
    (tmp_path / "p.csv").write_text(f"x\n{rows}\n")
    assert main(["eval", "x", "--points", str(tmp_path / "p.csv"), "--max-points", "100"]) == 2
    err = capsys.readouterr().err
    assert "101 points" in err and "--max-points" in err and "100" in err


# --- work limits: refused by cost, not by column count ------------------------------------------

def test_hessian_of_a_long_vector_is_refused_by_its_size(monkeypatch) -> None:
    """A hessian of a 20,000-vector is 4·10⁸ values per point: refused before any work
    starts (a vector variable is one leaf, so it is only 20,001 sweeps)."""
    from gradcli.evaluation import evaluator

    def no_work(*args, **kwargs):
        raise AssertionError("evaluation started")

    monkeypatch.setattr(evaluator, "run", no_work)
    with pytest.raises(EvaluationError, match="values per point, over the limit"):
        evaluate("sum(x^2)", "hessian", at=[{"x": np.ones(20000)}])


def test_jacobian_of_many_outputs_is_refused_by_its_cost() -> None:
    """A jacobian of a 10⁶-vector output is 10⁶ sweeps over 10³ operations."""
    text = "x" + " + x" * 500
    with pytest.raises(EvaluationError, match="sweeps.*over the limit"):
        evaluate(f"softmax({text})", "jacobian", at=[{"x": np.ones(10**6)}])


def test_hessian_of_a_moderate_vector_still_runs() -> None:
    """sum(x^2) over 30 components: the Hessian is 2·I (closed form)."""
    x = np.linspace(-1.0, 1.0, 30)
    result = evaluate("sum(x^2)", "hessian", at=[{"x": x}])
    assert result["d2f/dxdx"].shape == (1, 30, 30)
    np.testing.assert_array_equal(result["d2f/dxdx"][0], 2.0 * np.eye(30))


def test_constants_are_refused_as_variable_names_by_the_api() -> None:
    for kwargs in ({"at": [{"pi": 1.0}]}, {"grid": {"e": (0, 1, 3)}},
                   {"points": {"tau": np.zeros(3)}}):
        with pytest.raises(EvaluationError, match="is a constant"):
            evaluate("pi + 1", "eval", **kwargs)
