"""Multivariate Taylor coefficients to full accuracy: ``taylor`` and mixed ``diff`` run one
multivariate jet whose coefficients are homogeneous polynomials (engine/homogeneous.py).

Truths are closed forms written here: 1/(1 - Σxᵢ) has the multinomial coefficients
|α|!/α! / (1 - s)^(|α|+1) (exact integers at 0), exp(Σcᵢxᵢ) has e^(c·x₀)·Πcᵢ^αᵢ/αᵢ!, and
sin(x)·cos(y) the product of the one-variable series. The accuracy asked is 1e-13 of the
largest coefficient of each order up to 20; interpolation over directions gave 1.7e-9 for
1/(1-x-y) at order 20 and up to 2.5e-7 for exp(x+2y+3z).

Every primitive is checked against the other way of getting the same numbers: one-variable
jets along the lattice directions (the expression rewritten in one variable t) combined by
the exact interpolation weights, well conditioned at order 4.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from cli_rows import ok

import gradcli
from gradcli.engine.homogeneous import Poly, monomials
from gradcli.engine.interpolate import directions, graded, weights

ev = gradcli.evaluate
F = math.factorial
TOL = 1e-13


def multinomial(alpha: tuple[int, ...]) -> int:
    return F(sum(alpha)) // math.prod(F(a) for a in alpha)


def worst_per_order(got: np.ndarray, want: np.ndarray, indices: list[tuple[int, ...]]
                    ) -> float:
    """The largest error of an order's coefficients relative to its largest coefficient,
    over the orders."""
    degree = np.array([sum(a) for a in indices])
    worst = 0.0
    for p in range(int(degree.max()) + 1):
        here = degree == p
        scale = np.max(np.abs(want[here]))
        worst = max(worst, float(np.max(np.abs(got[here] - want[here]))) / scale)
    return worst


@pytest.mark.parametrize("order", [8, 12, 16, 20])
def test_reciprocal_of_one_minus_a_sum_has_binomial_coefficients(order: int) -> None:
    """1/(1-x-y) at 0: the coefficient of x^a y^b is C(a+b, a), an integer; and of
    1/(1-x-y-z) the multinomial (a+b+c)!/(a! b! c!)."""
    for names in ("xy", "xyz"):
        expr = "1/(1-" + "-".join(names) + ")"
        got = ev(expr, "taylor", at={v: 0.0 for v in names}, order=order)["coefficient"][0]
        indices = graded(len(names), order)
        want = np.array([multinomial(a) for a in indices], dtype=float)
        assert worst_per_order(got, want, indices) <= TOL, (names, order)
    if order == 20:
        got = ev("1/(1-x-y)", "taylor", at={"x": 0.0, "y": 0.0}, order=20)["coefficient"][0]
        assert got[graded(2, 20).index((10, 10))] == 184756.0


def test_exp_of_a_weighted_sum_and_a_product_of_sines_to_order_20() -> None:
    """exp(x+2y) at 0: 2^b/(a! b!); exp(x+2y+3z) at a point: e^(x₀+2y₀+3z₀)·2^b 3^c/(a! b! c!);
    sin(x)·cos(y) at (0.4, 1.1): sin⁽ᵃ⁾(0.4)/a! · cos⁽ᵇ⁾(1.1)/b!."""
    indices = graded(2, 20)
    got = ev("exp(x+2*y)", "taylor", at={"x": 0.0, "y": 0.0}, order=20)["coefficient"][0]
    want = np.array([2.0 ** b / (F(a) * F(b)) for a, b in indices])
    assert worst_per_order(got, want, indices) <= TOL

    point = (0.1, 0.2, -0.15)
    indices3 = graded(3, 20)
    got = ev("exp(x+2*y+3*z)", "taylor", at=dict(zip("xyz", point, strict=True)),
             order=20)["coefficient"][0]
    scale = math.exp(point[0] + 2 * point[1] + 3 * point[2])
    want = np.array([scale * 2.0 ** b * 3.0 ** c / (F(a) * F(b) * F(c))
                     for a, b, c in indices3])
    assert worst_per_order(got, want, indices3) <= TOL

    def d_sin(k: int, x: float) -> float:
        return (math.sin(x), math.cos(x), -math.sin(x), -math.cos(x))[k % 4]

    got = ev("sin(x)*cos(y)", "taylor", at={"x": 0.4, "y": 1.1}, order=20)["coefficient"][0]
    want = np.array([d_sin(a, 0.4) / F(a) * d_sin(b + 1, 1.1) / F(b) for a, b in indices])
    assert worst_per_order(got, want, indices) <= TOL


def test_a_kink_away_from_the_point_does_not_reach_the_series() -> None:
    """|x - 2|·e^y + max(y, 3) near 0 is (2 - x)·e^y + 3: coefficient (0, b) is 2/b!
    (plus 3 at b = 0), (1, b) is -1/b!, every other 0 exactly."""
    indices = graded(2, 16)
    got = ev("abs(x - 2)*exp(y) + max(y, 3)", "taylor", at={"x": 0.0, "y": 0.0},
             order=16)["coefficient"][0]
    want = np.array([(2.0 / F(b) + (3.0 if b == 0 else 0.0)) if a == 0 else
                     -1.0 / F(b) if a == 1 else 0.0 for a, b in indices])
    assert worst_per_order(got, want, indices) <= TOL
    assert np.all(got[[a >= 2 for a, _ in indices]] == 0.0)


def test_grid_and_points_give_every_point_its_own_accurate_series() -> None:
    """1/(1-x-y) at (x₀, y₀): C(a+b, a)/(1-x₀-y₀)^(a+b+1), order 20, over a grid and over
    points (the same numbers: a point has one answer however it is given)."""
    indices = graded(2, 20)
    grid = ev("1/(1-x-y)", "taylor", grid={"x": (-0.5, 0.25, 4), "y": (-0.3, 0.3, 3)},
              order=20)
    xs, ys = np.linspace(-0.5, 0.25, 4), np.linspace(-0.3, 0.3, 3)
    coefficients = np.asarray(grid["coefficient"])
    assert coefficients.shape == (4, 3, len(indices))
    for i, x0 in enumerate(xs):
        for j, y0 in enumerate(ys):
            want = np.array([math.comb(a + b, a) / (1 - x0 - y0) ** (a + b + 1)
                             for a, b in indices])
            assert worst_per_order(coefficients[i, j], want, indices) <= TOL, (x0, y0)
    px, py = np.meshgrid(xs, ys, indexing="ij")
    points = ev("1/(1-x-y)", "taylor", points={"x": px.ravel(), "y": py.ravel()}, order=20)
    assert np.array_equal(np.asarray(points["coefficient"]),
                          coefficients.reshape(12, len(indices)))


def test_mixed_partials_of_high_order_through_diff() -> None:
    """∂^α 1/(1 - s) = |α|!/(1 - s)^(|α|+1): the x¹⁰y¹⁰ partial at 0 is 20!, and
    ∂⁶/∂x∂y²∂z³ of 1/(1-x-y-z) at (0.1, 0.2, 0.3) is 6!/0.4⁷."""
    r = ev("1/(1-x-y)", "diff", at={"x": 0.0, "y": 0.0}, wrt=",".join("x" * 10 + "y" * 10))
    assert r["d20f/dx10dy10"][0] == pytest.approx(float(F(20)), rel=TOL)
    r = ev("1/(1-x-y-z)", "diff", at={"x": 0.1, "y": 0.2, "z": 0.3}, wrt="x,y,y,z,z,z")
    assert r["d6f/dxdy2dz3"][0] == pytest.approx(F(6) / 0.4 ** 7, rel=TOL)


def test_through_the_command_line(cli) -> None:
    """The CLI prints the same exact binomial coefficients and mixed partial."""
    header, rows = ok(cli, "taylor", "1/(1-x-y)", "--at", "x=0,y=0", "--order", "20")
    col = {name: i for i, name in enumerate(header)}
    for row in rows:
        a, b = int(row[col["deg(x)"]]), int(row[col["deg(y)"]])
        assert row[col["coefficient"]] == math.comb(a + b, a), (a, b)
    assert len(rows) == len(graded(2, 20))
    header, rows = ok(cli, "diff", "exp(x+2*y)", "--at", "x=0,y=0", "--wrt",
                      ",".join("x" * 8 + "y" * 8))
    assert rows[0][-1] == pytest.approx(2.0 ** 8, rel=TOL)


def test_the_work_bound_is_visible_and_refuses_with_a_message(cli) -> None:
    """A multivariate jet past the bound on monomial products is refused, naming it."""
    status, out, err = cli("taylor", "x*y*z*w*v", "--at", "x=0,y=0,z=0,w=0,v=0",
                           "--order", "20")
    assert status == 2 and out == "" and "too many to combine" in err
    assert "Traceback" not in err


# --- every primitive, against one-variable jets along directions ---------------------------
EXPRESSIONS = [
    # the functions of the language, each on an argument moving with x and y
    "sin(0.3*x + 0.7*y) * cos(x*y)", "tan(0.2*x - 0.3*y + 0.1)", "asin(0.2*x + 0.3*y)",
    "acos(0.2*x - 0.1*y + 0.3)", "atan(x*y + x)", "sinh(x - y) * cosh(x + 0.5*y)",
    "tanh(x + 2*y) + asinh(x*y + y)", "acosh(2 + x*y + x)", "atanh(0.3*x - 0.2*y)",
    "exp(x*y) + expm1(x - y)", "log(2 + x + y*y) + log1p(x*y) + log2(3 + y) + log10(4 + x)",
    "sqrt(2 + x + x*y) * cbrt(3 + y)", "abs(x - y - 1) * sign(x + 2) + floor(x + 5) * y",
    "ceil(y + 5) * x + relu(x + y + 1) * x", "sigmoid(x - y) + softplus(x*y) + logsigmoid(y)",
    "atan2(x + 1, y + 2) * hypot(x + 1, y - 2)", "min(x*y, 3) + max(x, -5) * y",
    "(1.5 + x)^(0.5 + y)", "(2 + x*y)^3 + (1 + x)^(-2.5) + x^2*y^0",
    "where(x > y, x*y^2, exp(x + y)) + where(y > 5, x, y^3)",
    # the array functions
    "det([[1 + x, y, 0.5], [x*y, 2 + x, y], [0.3, x, 1 + y*y]])",
    "inv([[2 + x, y], [x*y, 3]])[0][1] + solve([[2 + x, y], [1, 3 + x]], [x, 1 + y])[1]",
    "logsumexp([x, y, x*y]) + softmax([x, 2*y])[0] + log_softmax([x, y, 1])[2]",
    "cross_entropy([x, y, 0.5], 1) + norm([x, y, 1]) + norm([x + 1, y, 1], 3)",
    "prod([1 + x, 2 + y, 1 + x*y]) + max([x, y + 1]) * min([x*y, 2])",
    "cumsum([x, y, x*y])[2]^2 + sum(outer([x, y], [y, 1])) * mean([x, y])",
    "dot([x, y], [y, x]) * transpose([[x, y], [1, 2]])[0][1] + trace([[x, 1], [2, y]])^2",
]


def along_directions(expression: str, point: tuple[float, float], order: int) -> np.ndarray:
    """Every coefficient of order ≤ K from one-variable taylor runs along the lattice
    directions s (x = x₀ + s₁t, y = y₀ + s₂t), combined by the interpolation weights."""
    lattice = directions(2, order)
    series = []
    for s in lattice:
        program = f"x = {point[0]!r} + {s[0]}*t; y = {point[1]!r} + {s[1]}*t; {expression}"
        series.append(ev(program, "taylor", at={"t": 0.0}, order=order)["coefficient"][0])
    out = [series[0][0]]
    for p in range(1, order + 1):
        out += [sum(w * series[i][p] for i, w in row) for row in weights(2, order, p)]
    return np.array(out)


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_every_primitive_agrees_with_jets_along_directions(expression: str) -> None:
    """Order 4 in two variables at a point away from every kink; and diff's partial (which
    keeps only the monomials below its multi-index) is taylor's coefficient times α!."""
    point, order = (0.15, -0.35), 4
    got = ev(expression, "taylor", at={"x": point[0], "y": point[1]}, order=order)
    coefficients = np.asarray(got["coefficient"][0])
    want = along_directions(expression, point, order)
    indices = graded(2, order)
    assert np.all(np.isfinite(coefficients))
    degree = np.array([sum(a) for a in indices])
    for p in range(order + 1):
        here = degree == p
        scale = max(1.0, float(np.max(np.abs(want[here]))))
        assert np.allclose(coefficients[here], want[here], rtol=0, atol=1e-11 * scale), p
    for alpha in ((2, 1), (1, 3), (2, 2)):
        wrt = ",".join("x" * alpha[0] + "y" * alpha[1])
        r = ev(expression, "diff", at={"x": point[0], "y": point[1]}, wrt=wrt)
        partial = next(v for k, v in r.items() if k.startswith("d"))[0]
        expected = coefficients[indices.index(alpha)] * F(alpha[0]) * F(alpha[1])
        assert partial == pytest.approx(expected, rel=1e-12, abs=1e-12)


# --- the coefficient type ------------------------------------------------------------------
def test_poly_products_are_polynomial_products_and_linear_maps_act_per_monomial() -> None:
    """(x + 2y)·(3x - y) = 3x² + 5xy - 2y² with array slices; a sum over an axis, an index
    and np.where act on each monomial's slice; a cap drops the monomials beyond it."""
    cap = (2, 2)
    a = Poly(np.array([[1.0, 10.0], [2.0, 20.0]]), 1, cap)
    b = Poly(np.array([3.0, -1.0]), 1, cap)
    c = a * b
    assert c.deg == 2 and monomials(cap, 2) == [(2, 0), (1, 1), (0, 2)]
    assert c.arr.tolist() == [[3.0, 30.0], [5.0, 50.0], [-2.0, -20.0]]
    assert np.sum(c, axis=-1).arr.tolist() == [33.0, 55.0, -22.0]
    assert c[..., 1].arr.tolist() == [30.0, 50.0, -20.0]
    picked = np.where(np.array([True, False]), c, 0.0)
    assert picked.arr.tolist() == [[3.0, 0.0], [5.0, 0.0], [-2.0, 0.0]]
    capped = Poly(np.array([1.0, 2.0]), 1, (1, 1)) * Poly(np.array([3.0, -1.0]), 1, (1, 1))
    assert capped.arr.tolist() == [5.0]  # only xy is kept: x² and y² are beyond the cap
    with pytest.raises(TypeError, match="cannot divide"):
        _ = 1.0 / a


def test_a_mixed_diff_does_not_depend_on_its_blocks() -> None:
    """∂⁵/∂x²∂y³ keeps 12 numbers per value and point (the monomials below x²y³: 1 + 2 +
    3 + 3 + 2 + 1 by degree); the memory budget sizes its blocks from that measured cost
    (``blocks.rows_per_block``), and the numbers do not depend on the blocks."""
    grid = {"x": (-1.0, 1.0, 40), "y": (-1.0, 1.0, 30)}
    assert sum(len(monomials((2, 3), k)) for k in range(6)) == 12
    whole = ev("exp(x)*sin(y)", "diff", grid=grid, wrt="x,x,y,y,y")["d5f/dx2dy3"]
    small = ev("exp(x)*sin(y)", "diff", grid=grid, wrt="x,x,y,y,y", block_size=97)
    assert np.array_equal(whole, small["d5f/dx2dy3"])
    xs, ys = np.meshgrid(np.linspace(-1, 1, 40), np.linspace(-1, 1, 30), indexing="ij")
    assert np.allclose(whole, np.exp(xs) * -np.cos(ys), rtol=1e-14, atol=1e-15)


def test_a_tenth_partial_in_ten_variables() -> None:
    """∂¹⁰/∂a∂b...∂j of e^(a+b+...+j)·sin(a·j): the eight middle variables each keep the
    exponential, leaving e^S·(sin(aj)·(1 - aj) + (a + j + 1)·cos(aj)) (hand derivation);
    the jet keeps only the 2¹⁰ square-free monomials, so it is allowed and fast."""
    names = "abcdkqghmj"
    expression = f"exp({'+'.join(names)})*sin(a*j)"
    r = ev(expression, "diff", at={v: 0.1 for v in names}, wrt=",".join(names))
    aj = 0.01
    want = math.e * (math.sin(aj) * (1 - aj) + 1.2 * math.cos(aj))
    assert next(v for k, v in r.items() if k.startswith("d10f"))[0] == pytest.approx(
        want, rel=1e-14)


def test_pure_coefficients_at_a_singular_point_are_the_pure_partials() -> None:
    """Where a partial in one variable is infinite, the pure coefficients of the others
    are still their partials (the others held), as diff gives them: asin(x) + y at x = 1
    has ∂f/∂y = 1 and ∂²f/∂y² = 0 (∂f/∂x is inf); sin(x^y) at (-1, 1), where log(x) is
    nan, has ∂f/∂x = cos(-1)·y·x^(y-1) = cos(1) and ½∂²f/∂x² = sin(1)/2."""
    got = ev("asin(x) + y", "taylor", at={"x": 1.0, "y": 0.0}, order=2)["coefficient"][0]
    indices = graded(2, 2)
    assert got[indices.index((0, 1))] == 1.0 and got[indices.index((0, 2))] == 0.0
    assert np.isinf(got[indices.index((1, 0))])
    got = ev("sin(x^y)", "taylor", at={"x": -1.0, "y": 1.0}, order=2)["coefficient"][0]
    assert got[indices.index((1, 0))] == pytest.approx(math.cos(1.0), rel=1e-15)
    assert got[indices.index((2, 0))] == pytest.approx(math.sin(1.0) / 2, rel=1e-15)
    pure = ev("sin(x^y)", "diff", at={"x": -1.0, "y": 1.0}, wrt="x", order=2)["d2f/dx2"][0]
    assert got[indices.index((2, 0))] == pure / 2
