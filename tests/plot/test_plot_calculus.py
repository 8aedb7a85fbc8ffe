"""Pictures of the calculus commands: ``--color laplacian|magnitude`` under a scalar's
gradient arrows, and ``--taylor x=a --order ...`` over a curve, checked at the data level
against closed forms (not pixels)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli.cli.main import main
from gradcli.errors import EvaluationError
from gradcli.plot import PlotOptions, build_figure, compute_field, parse_options

GRID = {"x": (-2.0, 2.0, 41), "y": (-1.5, 1.5, 31)}


def _draw(expr: str, grid: dict, **raw):
    opts = parse_options(**raw)
    from gradcli.plot.pipeline import taylor_request

    field_ = compute_field(expr, grid, color=opts.color, taylor=taylor_request(opts))
    return build_figure(field_, opts)


def test_laplacian_heatmap_is_the_closed_form_under_the_gradient_arrows() -> None:
    fig, drawn = _draw("exp(-(x^2+y^2))", GRID, color="laplacian")
    x = np.linspace(-2, 2, 41)[:, None]
    y = np.linspace(-1.5, 1.5, 31)[None, :]
    r2 = x * x + y * y
    want = (4 * r2 - 4) * np.exp(-r2)  # where it crosses 0, round-off is painted as 0
    np.testing.assert_allclose(drawn.heat, want, rtol=1e-13, atol=1e-12 * np.abs(want).max())
    label = drawn.colorbar.ax.get_ylabel()
    assert label.startswith("∇²f = ∂²f/∂x² + ∂²f/∂y², f = exp(")
    assert drawn.colors.vmin == -drawn.colors.vmax  # signed: centred at 0
    q = drawn.quiver  # the arrows are still f's gradient
    np.testing.assert_allclose(np.asarray(q.U), -2 * q.X * np.exp(-(q.X**2 + q.Y**2)),
                               atol=1e-12)


def test_laplacian_of_a_harmonic_function_is_painted_zero() -> None:
    fig, drawn = _draw("exp(x)*cos(y)", GRID, color="laplacian")
    assert np.all(drawn.heat == 0.0)  # round-off against the second partials


def test_magnitude_heatmap_is_the_gradient_norm() -> None:
    fig, drawn = _draw("x^2*y + y^3", GRID, color="magnitude")
    x = np.linspace(-2, 2, 41)[:, None]
    y = np.linspace(-1.5, 1.5, 31)[None, :]
    np.testing.assert_allclose(drawn.heat, np.hypot(2 * x * y, x * x + 3 * y * y), rtol=1e-14)
    assert drawn.colorbar.ax.get_ylabel().startswith("|∇f|, f = x^2*y + y^3")


def test_taylor_polynomials_over_the_curve() -> None:
    fig, drawn = _draw("cos(x)", {"x": (-4.0, 4.0, 400)}, taylor="x=0", order="2,4,6")
    polys = drawn.lines[1:]
    assert [p.get_label() for p in polys] == [
        f"Taylor polynomial of order {k} at x = 0" for k in (2, 4, 6)]
    x = np.linspace(-4, 4, 400)
    for line, k in zip(polys, (2, 4, 6), strict=True):
        want = sum((-1) ** (j // 2) * x**j / math.factorial(j) for j in range(0, k + 1, 2))
        np.testing.assert_allclose(line.get_ydata(), want, rtol=1e-13, atol=1e-13)
    lo, hi = drawn.ax.get_ylim()
    assert -1.3 < lo < -1.0 and 1.0 < hi < 1.3  # fixed by f, not by x^6/720 at x = 4
    assert drawn.legend is not None


def test_taylor_at_another_point_with_a_held_variable() -> None:
    fig, drawn = _draw("exp(a*x)", {"x": (-1.0, 2.0, 31), "a": 0.5}, taylor="x=1",
                       order="1")
    x = np.linspace(-1, 2, 31)
    e = math.exp(0.5)
    np.testing.assert_allclose(drawn.lines[1].get_ydata(), e + 0.5 * e * (x - 1), rtol=1e-14)


def test_default_orders_and_the_page(tmp_path) -> None:
    assert PlotOptions(taylor=("x", 0.0)).taylor_orders() == (1, 2, 3)
    page = tmp_path / "t.html"
    assert main(["plot", "exp(x)", "--grid", "x=-1:1:21", "--taylor", "x=0", "-o",
                 str(page)]) == 0
    text = page.read_text()
    assert all(f"Taylor polynomial of order {k} at x = 0" in text for k in (1, 2, 3))


@pytest.mark.parametrize(("argv", "message"), [
    (["x*y", "--grid", "x=0:1:5", "--grid", "y=0:1:5", "--taylor", "x=0"],
     "needs one grid variable"),
    (["cos(x)", "--grid", "x=0:1:5", "--order", "2"], "add --taylor"),
    (["cos(x)", "--grid", "x=0:1:5", "--taylor", "y=0"], "expand in the grid variable"),
    (["[x, x^2]", "--grid", "x=0:1:5", "--taylor", "x=0"], "scalar f"),
    (["cos(x)", "--grid", "x=0:1:5", "--taylor", "x=0", "--order", "2,x"], "whole numbers"),
    (["cos(x)", "--grid", "x=0:1:5", "--taylor", "x=0", "--order", "31"], "0 to 30"),
    (["cos(x)", "--grid", "x=0:1:5", "--taylor", "x=0", "--preview"], "terminal preview"),
    (["x*y", "--grid", "x=0:1:5", "--grid", "y=0:1:5", "--color", "divergence"],
     "--color divergence is for vector fields"),
    (["[x, y]", "--grid", "x=0:1:5", "--grid", "y=0:1:5", "--color", "laplacian"],
     "--color laplacian is for a scalar f"),
])
def test_bad_requests_are_refused(argv, message, capsys, tmp_path) -> None:
    target = tmp_path / "p.png"
    status = main(["plot", *argv, "-o", str(target)])
    err = capsys.readouterr().err
    assert status == 2 and message in err, err
    assert not target.exists()


def test_field_without_coefficients_has_no_polynomial() -> None:
    with pytest.raises(ValueError):
        compute_field("x", {"x": (0.0, 1.0, 5)}).polynomial(2)
    with pytest.raises(EvaluationError):
        compute_field("x", {"x": (0.0, 1.0, 5)}, taylor=("x", float("inf"), 2))
