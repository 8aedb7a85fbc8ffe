"""Values at hard points (pow at exponent 0, prod at exact zeros, PyTorch parity of messages
and edge values): each against a closed form, mpmath digits
or PyTorch's own message, through the library and (where the CLI is involved) in process
through ``main(argv)``.

mpmath values below were computed with mpmath 1.3.0 at 50 digits (``mp.mp.dps = 50``).
"""

from __future__ import annotations

import csv
import io
import math
import warnings

import numpy as np
import pytest

import gradcli
import gradcli as gc

F = gc.functional


def columns(cli, *argv: str) -> dict[str, list[float]]:
    status, out, err = cli(*argv)
    assert status == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    return {name: [float(r[i]) for r in rows[1:]] for i, name in enumerate(rows[0])}


# --- item 1: Hessians of a power whose exponent is exactly 0 --------------------------------

def test_hessian_of_exp_x_to_the_x_at_0_is_2(cli):
    """exp(x)^x = exp(x²): f'' = (2 + 4x²)·exp(x²) = 2 at 0, the same as just beside 0."""
    for at in ("x=0", "x=1e-9"):
        assert columns(cli, "hessian", "exp(x)^x", "--at", at)["d2f/dxdx"][0] == \
            pytest.approx(2.0, rel=1e-12)
    h = F.hessian(lambda t: gc.exp(t) ** t, 0.0)
    assert h.item() == pytest.approx(2.0, rel=1e-15)


def test_hessian_of_x_to_the_y_at_exponent_0(cli):
    """x^y at (2, 0): ∂²/∂x∂y = x^(y-1)(1 + y ln x) = 1/2 both ways round; ∂²/∂y² = ln²2."""
    got = columns(cli, "hessian", "x^y", "--at", "x=2,y=0", "--check")
    assert got["d2f/dxdy"] == [0.5] and got["d2f/dydx"] == [0.5]
    assert got["d2f/dxdx"] == [0.0]
    assert got["d2f/dydy"][0] == pytest.approx(math.log(2.0) ** 2, rel=1e-15)


def test_first_derivative_of_x_to_the_0_keeps_pytorch_convention():
    """d/dx x^0 at x = 0 stays 0 for a constant and for a tensor exponent (PyTorch)."""
    for exponent in (0.0, gc.tensor(0.0, requires_grad=True)):
        x = gc.tensor(0.0, requires_grad=True)
        (x ** exponent).backward()
        assert x.grad.item() == 0.0


# --- item 2: division by a constant that folds to 0 -----------------------------------------

@pytest.mark.parametrize("expr", ["x/0", "x/(1-1)", "x/ceil(log2(1))"])
@pytest.mark.parametrize("command", ["grad", "jacobian", "hessian", "jvp", "vjp"])
def test_division_by_a_folded_zero(cli, expr, command):
    extra = {"jvp": ["--direction", "x=1"], "vjp": ["--vector", "1"]}.get(command, [])
    got = columns(cli, command, expr, "--at", "x=1", *extra)
    assert got["f"] == [math.inf]
    first = {"grad": "df/dx", "jacobian": "df/dx", "jvp": "jvp", "vjp": "vjp/dx"}
    if command in first:
        assert got[first[command]] == [math.inf]  # d/dx x/0 = 1/0 (torch and JAX: inf)
    else:
        assert got["d2f/dxdx"] == [0.0]


# --- item 3: sigmoid and softplus in stable two-branch forms -----------------------------

# mpmath: σ(x) = 1/(1 + e^-x) and σ'(x) = σ(1 - σ) at x = -30 and -40
SIGMOID = {-30.0: (9.357622968839298953839563e-14, 9.357622968838423302763293e-14),
           -40.0: (4.248354255291588977280721e-18, 4.248354255291588959232207e-18)}


def test_sigmoid_is_accurate_for_negative_x():
    """0.5·(1 + tanh(x/2)) had a relative error of 1.7e-4 at -30 and gave 0 at -40."""
    x = gc.tensor(list(SIGMOID), requires_grad=True)
    y = gc.sigmoid(x)
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), [v for v, _ in SIGMOID.values()], rtol=4e-16)
    np.testing.assert_allclose(x.grad.numpy(), [d for _, d in SIGMOID.values()], rtol=4e-16)


def test_softplus_gradient_is_accurate_for_negative_x():
    x = gc.tensor(-40.0, requires_grad=True)
    gc.softplus(x).backward()
    assert x.grad.item() == pytest.approx(SIGMOID[-40.0][0], rel=4e-16)  # softplus' = σ


@pytest.mark.parametrize("x", [-40.0, -745.0, -1000.0, -1e300, 0.0, 40.0, 1e300])
def test_log_sigmoid_stays_finite(cli, x):
    """log(sigmoid(x)) = -log(1 + e^-x): x - log1p(e^x) → x for x ≪ 0, with derivative
    1 - σ(x) → 1; finite for every finite x."""
    got = columns(cli, "grad", "log(sigmoid(x))", "--at", f"x={x!r}")
    f, d = got["f"][0], got["df/dx"][0]
    assert math.isfinite(f) and math.isfinite(d)
    want = -math.log1p(math.exp(-x)) if x > -700 else x
    assert f == pytest.approx(want, rel=1e-15, abs=1e-300)
    assert d == pytest.approx(1.0 / (1.0 + math.exp(x)) if x < 700 else 0.0, rel=1e-15)


# --- item 4: see test_awkward_points.py (one point, one answer) -----------------------------

# --- item 5: select, not mask ------------------------------------------------------------------

@pytest.mark.parametrize("expr,at,column,want", [
    ("sqrt(relu(x))", "x=-1", "df/dx", 0.0),          # relu' selects 0: 0·inf never happens
    ("log(relu(x))", "x=-1", "df/dx", 0.0),
    ("log(floor(x)) + y", "x=0.5,y=0", "df/dx", 0.0),  # floor' = 0 whatever arrives
    ("log(ceil(x)) + y", "x=-0.5,y=0", "df/dx", 0.0),
    ("log(sign(x)) + y", "x=0,y=0", "df/dx", 0.0),
    ("sqrt(min(x, y))", "x=-1,y=2", "df/dy", 0.0),    # the losing side gets exactly 0
    ("sqrt(max(x, y))", "x=-1,y=-2", "df/dy", 0.0),
    ("sqrt(max(x, y))", "x=-1,y=-2", "df/dx", math.nan),  # the winner: sqrt'(-1) = nan
])
def test_select_rules_never_turn_zero_times_inf_into_nan(cli, expr, at, column, want):
    got = columns(cli, "grad", expr, "--at", at)[column][0]
    assert got == want or (math.isnan(want) and math.isnan(got))
    lib = gradcli.evaluate(expr, "grad", at=[{k: float(v) for k, v in
                                             (p.split("=") for p in at.split(","))}])
    assert np.array_equal(lib[column], [want], equal_nan=True)


def test_clamp_selects_in_both_modes():
    x = gc.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    gc.sqrt(gc.clamp(x, min=0.0, max=1.0) - 1.0).sum().backward()  # sqrt'(-1) = nan ...
    assert np.isnan(x.grad.numpy()[1])
    x = gc.tensor([-2.0, 3.0], requires_grad=True)
    gc.log(gc.clamp(x, min=0.0, max=1.0) * 0.0).sum().backward()  # log'(0) = inf, clamp' = 0
    assert x.grad.tolist() == [0.0, 0.0]
    _, t = F.jvp(lambda a: gc.clamp(a, min=0.0, max=1.0), (np.array([-2.0, 0.5]),),
                 (np.array([np.inf, 1.0]),))
    assert t.tolist() == [0.0, 1.0]  # forward mode selects too: inf never meets a 0 mask


# --- item 6: norm is the engine's norm -------------------------------------------------------

def test_norm_in_the_language_is_the_engines_norm(cli):
    got = columns(cli, "grad", "norm(x)", "--at", "x=[0,0]", "--at", "x=[1e-200,0]",
              "--at", "x=[3,4]")
    # x·(g/‖x‖) with g/‖x‖ selected to 0 at ‖x‖ = 0, as torch 2.13 (where x·x underflows
    # at 1e-200, ‖x‖ is 0 too); sqrt(sum(x*x)) gave nan and inf here
    assert got["df/dx[0]"] == [0.0, 0.0, 0.6]
    assert got["df/dx[1]"] == [0.0, 0.0, 0.8]
    x = gc.tensor([0.0, 0.0], requires_grad=True)
    gc.norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0]


# --- prod at exact zeros, first and second order ----------------------------

@pytest.mark.parametrize("x,grad,hess", [
    ([0.0, 2.0, 3.0], [6.0, 0.0, 0.0], [[0, 3, 2], [3, 0, 0], [2, 0, 0]]),
    ([0.0, 0.0, 3.0], [0.0, 0.0, 0.0], [[0, 3, 0], [3, 0, 0], [0, 0, 0]]),
    ([2.0, 3.0, 4.0], [12.0, 8.0, 6.0], [[0, 4, 3], [4, 0, 2], [3, 2, 0]]),
])
def test_prod_at_zeros_library_and_cli(cli, x, grad, hess):
    """∂prod/∂xᵢ = ∏_{j≠i} xⱼ and ∂²prod/∂xᵢ∂xⱼ = ∏_{k≠i,j} xₖ (0 on the diagonal)."""
    t = gc.tensor(x, requires_grad=True)
    gc.prod(t).backward()
    assert t.grad.tolist() == grad
    np.testing.assert_array_equal(F.hessian(lambda a: gc.prod(a), x).numpy(), hess)
    at = "x=[" + ",".join(map(str, x)) + "]"
    g = columns(cli, "grad", "prod(x)", "--at", at)
    assert [g[f"df/dx[{i}]"][0] for i in range(3)] == grad
    h = columns(cli, "hessian", "prod(x)", "--at", at)
    assert [[h[f"d2f/dx[{i}]dx[{j}]"][0] for j in range(3)] for i in range(3)] == hess


def test_prod_along_a_dimension_with_zeros():
    t = gc.tensor([[0.0, 2.0], [3.0, 0.0], [4.0, 5.0]], requires_grad=True)
    gc.prod(t, dim=0).sum().backward()  # columns [0, 3, 4] and [2, 0, 5]
    assert t.grad.tolist() == [[12.0, 0.0], [0.0, 10.0], [0.0, 0.0]]


# --- PyTorch parity --------------------------------------------------------

def test_in_place_on_a_leaf_that_requires_grad_raises_pytorchs_error():
    a = gc.tensor([1.0, 2.0], requires_grad=True)
    for op in ("__iadd__", "__isub__", "__imul__", "__itruediv__"):
        with pytest.raises(RuntimeError) as err:
            getattr(a, op)(1)
        assert str(err.value) == ("a leaf Variable that requires grad is being used in an "
                                  "in-place operation.")
    with gc.no_grad():  # as in PyTorch: an update step under no_grad is in place
        before = a
        a -= 0.5
    assert a is before and a.tolist() == [0.5, 1.5] and a.requires_grad


def test_in_place_without_a_graph_is_in_place():
    a = gc.tensor([1.0, 2.0])
    alias = a
    a += 1
    a *= gc.tensor([2.0, 3.0])
    assert alias is a and a.tolist() == [4.0, 9.0]


def test_integer_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError) as err:
        gc.tensor([1, 2], requires_grad=True)
    assert str(err.value) == "Only Tensors of floating point and complex dtype can require " \
                             "gradients"
    assert gc.tensor([1, 2]).tolist() == [1.0, 2.0]  # without grad, ints still become floats


def test_no_warnings_at_awkward_points():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradcli.evaluate("x/0 + log(x) + sqrt(x)", "hessian", at=[{"x": 0.0}, {"x": -1.0}])
