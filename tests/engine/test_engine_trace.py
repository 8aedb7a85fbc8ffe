"""engine.trace: a recorded program replays the engine's own computation, bit for bit.

Truth is the engine itself through ``gradcli.evaluate`` (the one path every command uses):
for every function of the language, values and first and second derivatives replayed
from a trace must equal what ``evaluate`` computes at the same points, exactly. Replaying
builds no graph (no node is created) and refuses inputs of other shapes.
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine import primitive
from gradcli.engine.rules import FUNCTIONS
from gradcli.engine.trace import trace, with_derivatives
from gradcli.evaluation import evaluate
from gradcli.fields.function import FieldFunction
from gradcli.lang.names import FUNCTIONS as LANGUAGE

# two-variable formulas around every elementwise function of the table, at points where
# each is defined and where some are not (the replay must give the same nan/inf there)
X = np.array([-2.5, -1.0, -0.3, 0.0, 0.4, 0.9, 1.7, 3.0])
Y = np.array([0.5, -2.0, 1.3, 0.7, -0.2, 2.2, -1.1, 0.0])
# every function of the language the rule table gives, by its arity
CASES = [f"{name}(x*y + 0.3) * (y - x) + {name}(y)" if spec.kind == "elementwise" else
         f"{name}(x*y + 0.3, y) * (y - x) + {name}(y, x)"
         for name, spec in sorted(LANGUAGE.items()) if spec.engine in FUNCTIONS] + [
    "atan2(y, x) + hypot(x, y)^2", "min(x, y) * max(x, 2y)",
    "where(x > y, x^2, sin(y)) + x*y", "(1-x)^2 + 100(y-x^2)^2", "sqrt(x^2 + y^2 + 1)",
    "norm([x, y, 1]) * sum([x, y])", "dot([x, y], [y, x]) + prod([x, y, 2])",
    "x^y + y^3", "-x / (y^2 + 1)", "sin(x)*cos(y)", "logsigmoid(x - y) + log(sigmoid(y))"]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    a, b = np.broadcast_arrays(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    return bool(np.array_equal(a, b, equal_nan=True))


@pytest.mark.parametrize("expression", CASES)
def test_replayed_gradient_and_hessian_equal_the_engine_bit_for_bit(expression):
    fn = FieldFunction(expression, {"x": 0.0, "y": 0.0})
    P = np.stack([X, Y])
    with np.errstate(all="ignore"):
        f, G, H = fn.hessian(P)
        f1, G1 = fn.gradient(P)
    grad = evaluate(expression, "grad", points={"x": X, "y": Y})
    hess = evaluate(expression, "hessian", points={"x": X, "y": Y})
    assert _same(f, grad["f"]) and _same(f1, grad["f"])
    for j, a in enumerate("xy"):
        assert _same(G[j], grad[f"df/d{a}"]), (expression, a)
        assert _same(G1[j], grad[f"df/d{a}"]), (expression, a)
        for i, b in enumerate("xy"):
            assert _same(H[j, i], hess[f"d2f/d{a}d{b}"]), (expression, a, b)


def test_replayed_jacobian_equals_the_engine():
    expression = "[y*exp(x), -sin(x) - 0.5y, x*y]"
    fn = FieldFunction("[y*exp(x), -sin(x) - 0.5y]", {"x": 0.0, "y": 0.0})
    F, J = fn.jacobian(np.stack([X, Y]))
    jac = evaluate(expression, "jacobian", points={"x": X, "y": Y})
    for i in range(2):
        assert _same(F[i], jac[f"f[{i}]"])
        for j, a in enumerate("xy"):
            assert _same(J[i, j], jac[f"df[{i}]/d{a}"])


def test_replay_builds_no_graph_and_is_a_flat_program():
    fn = FieldFunction("(1-x)^2 + 100(y-x^2)^2", {"x": 0.0, "y": 0.0})
    program = fn.traced(1, 8)
    before = next(primitive._seq)
    program.replay([X, Y])
    assert next(primitive._seq) == before + 1  # only this test's own draw: no node made
    # the forward pass and the sweep: 7 forward steps, the cotangents, no identity steps
    assert 10 <= program.steps <= 20


def test_derivatives_by_hand_and_a_vector_variable():
    # f = x0^2 x1 + sin(s): ∂f/∂x0 = 2 x0 x1, ∂f/∂x1 = x0^2, ∂f/∂s = cos(s)
    fn = FieldFunction("x[0]^2 * x[1] + sin(s)", {"x": [1.0, 2.0], "s": 0.5})
    assert fn.columns == ["x[0]", "x[1]", "s"]
    P = np.array([[1.0, -2.0], [2.0, 3.0], [0.5, 1.0]])
    f, G = fn.gradient(P)
    np.testing.assert_allclose(f, P[0] ** 2 * P[1] + np.sin(P[2]), rtol=1e-15)
    np.testing.assert_allclose(G, [2 * P[0] * P[1], P[0] ** 2, np.cos(P[2])], rtol=1e-15)


def test_held_values_are_constants_of_the_program():
    fn = FieldFunction("a*x^2", {"x": 1.0}, held={"a": 3.0})
    f, G = fn.gradient(np.array([[2.0]]))
    assert f.tolist() == [12.0] and G.tolist() == [[12.0]]


def test_trace_of_a_plain_function_and_shape_checks():
    def f(x, y):
        return [gc.exp(x) * y, x - y]

    program = trace(with_derivatives(f), np.zeros(3), np.zeros(3), batch_ndim=1)
    x, y = np.array([0.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0])
    out = program(x, y)
    np.testing.assert_array_equal(out[0], np.exp(x) * y)
    np.testing.assert_array_equal(out[2], np.exp(x) * y)  # ∂f0/∂x
    np.testing.assert_array_equal(np.broadcast_to(out[5], (3,)), -np.ones(3))  # ∂f1/∂y
    with pytest.raises(ValueError, match=r"recorded for inputs of shape \(3,\)"):
        program(np.zeros(4), np.zeros(4))
    with pytest.raises(TypeError, match="takes 2 inputs"):
        program(x)


def test_an_unused_input_has_no_derivative():
    program = trace(with_derivatives(lambda x, y: x * x), np.ones(2), np.ones(2),
                    batch_ndim=1)
    f, dx, dy = program(np.array([1.0, 3.0]), np.array([5.0, 6.0]))
    assert dy is None and np.asarray(dx).tolist() == [2.0, 6.0]


def test_a_rule_that_branches_on_values_replays_the_branch_it_was_traced_on():
    # prod's rule divides by x unless some x is 0: traced away from zeros, a replay at a
    # zero gives nan where the engine gives the product of the others (the documented
    # limitation that descend settles with the engine)
    def f(v):
        return gc.prod(v, dim=-1)

    program = trace(with_derivatives(f), np.array([[1.0, 2.0, 3.0]]), batch_ndim=1)
    _, g = program(np.array([[1.0, 2.0, 3.0]]))
    assert np.asarray(g).tolist() == [[6.0, 3.0, 2.0]]
    with np.errstate(all="ignore"):
        _, g0 = program(np.array([[0.0, 2.0, 3.0]]))
    assert np.isnan(np.asarray(g0)[0, 0])
    engine = gc.functional.grad(lambda v: gc.prod(v))(np.array([0.0, 2.0, 3.0]))
    assert engine.tolist() == [6.0, 0.0, 0.0]
