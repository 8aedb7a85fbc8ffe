"""Taylor mode in the engine: a jet rule beside every primitive's first-order
rules, checked against known series, against mpmath for every function of the language,
against exact polynomial arithmetic for the array primitives, and against forward mode
(a jet of order 1 is forward mode, at every awkward point).

mpmath's values (mpmath 1.3.0, 50 digits) are in tests/reference/taylor.json, written by
tests/reference/make_taylor.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import gradcli
import gradcli as gc
from gradcli.cli.main import main
from gradcli.engine import rules as R
from gradcli.engine.interpolate import directions, graded, simplex, weights
from gradcli.engine.primitive import Primitive
from gradcli.engine.taylor import MissingTaylorRule, Series, jet

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" / "taylor.json").read_text())
FACT = math.factorial
K = 12


def coefficients(expression: str, x0: float, order: int) -> np.ndarray:
    return gradcli.evaluate(expression, "taylor", at={"x": x0}, order=order)["coefficient"][0]


def test_every_differentiable_primitive_has_a_jet_rule() -> None:
    """Every one but those listed, whose higher derivatives are an error naming them
    (``test_a_primitive_without_a_jet_rule_is_an_error_naming_it``)."""
    missing = [n for n, p in R.PRIMITIVES.items() if not p.nondiff and p.jet is None]
    assert sorted(missing) == ["cofactor"]  # only in det's first-order rules
    assert len([p for p in R.PRIMITIVES.values() if not p.nondiff]) >= 55


KNOWN = {  # f(x) at 0: its Maclaurin series, order 12
    "exp(x)": [1 / FACT(k) for k in range(K + 1)],
    "sin(x)": [0.0 if k % 2 == 0 else (-1) ** (k // 2) / FACT(k) for k in range(K + 1)],
    "log1p(x)": [0.0] + [(-1) ** (k + 1) / k for k in range(1, K + 1)],
    "1/(1 - x)": [1.0] * (K + 1),
    "atan(x)": [0.0 if k % 2 == 0 else (-1) ** (k // 2) / k for k in range(K + 1)],
    "cos(x)": [0.0 if k % 2 else (-1) ** (k // 2) / FACT(k) for k in range(K + 1)],
    "tan(x)": [0, 1, 0, 1 / 3, 0, 2 / 15, 0, 17 / 315, 0, 62 / 2835, 0, 1382 / 155925, 0],
    "sqrt(1 + x)": [math.prod(0.5 - r for r in range(k)) / FACT(k) for k in range(K + 1)],
}


@pytest.mark.parametrize("expression", KNOWN)
def test_known_series_to_order_12(expression: str) -> None:
    got = coefficients(expression, 0.0, K)
    want = np.array(KNOWN[expression], dtype=float)
    assert np.all(np.abs(got - want) <= 1e-12 * np.abs(want)), (got, want)


@pytest.mark.parametrize(("expression", "want"), REFERENCE["cases"],
                         ids=[c[0] for c in REFERENCE["cases"]])
def test_every_function_matches_mpmath(expression: str, want: list[float]) -> None:
    """Order 8 at x = 0.1 through an inner u(x) with three nonzero coefficients: every
    coefficient to 1e-12 of itself (or of the series' largest, where it is near 0)."""
    got = coefficients(expression, REFERENCE["x0"], REFERENCE["order"])
    want_ = np.array(want)
    scale = np.maximum(np.abs(want_), 1e-3 * np.abs(want_).max())
    assert np.all(np.abs(got - want_) <= 1e-12 * scale), (got, want_)


def test_reference_was_made_by_mpmath() -> None:
    assert REFERENCE["generator"] == "tests/reference/make_taylor.py"
    assert REFERENCE["mpmath"] == "1.3.0" and REFERENCE["digits"] == 50


def test_whole_powers_are_exact_at_zero() -> None:
    """x² is smooth at 0: repeated squaring, not the recurrence that divides by u₀."""
    assert coefficients("x^2", 0.0, 4).tolist() == [0, 0, 1, 0, 0]
    assert coefficients("(x - 1)^5", 1.0, 6).tolist() == [0, 0, 0, 0, 0, 1, 0]
    assert coefficients("x^0", 0.0, 2).tolist() == [1, 0, 0]


def _series(value: float, *rest: float) -> Series:
    return Series([np.float64(value), *[np.float64(r) for r in rest]])


def test_series_arithmetic() -> None:
    a, b = _series(1.0, 2.0, 3.0), _series(2.0, -1.0, 0.5)
    assert (a * b).c == [2.0, 3.0, 4.5]             # (1+2t+3t²)(2-t+t²/2)
    q = (a / b).c                                   # q·b = a
    assert np.allclose((Series(q) * b).c, a.c, rtol=1e-15, atol=0)
    assert np.allclose(((a * a) ** 0.5).c, a.c, rtol=1e-15, atol=0)
    assert (a - 1.0).c == [0.0, 2.0, 3.0] and (1.0 - a).c == [0.0, -2.0, -3.0]
    # y' = y·u' with u = t: exp(t)
    assert np.allclose(_series(0.0, 1.0, 0.0, 0.0).ode(np.float64(1.0), 0, 1, 0).c,
                       [1, 1, 1 / 2, 1 / 6], rtol=1e-15)


def _poly(coeffs: list[np.ndarray]) -> list[np.ndarray]:
    return [np.asarray(c, dtype=float) for c in coeffs]


def test_array_primitives_against_exact_polynomials() -> None:
    """matmul, stack, cat, reshape, index, permute, sums, means, prod and broadcasting on
    polynomial paths, whose coefficients are computed exactly by convolution."""
    rng = np.random.default_rng(7)
    a = [rng.integers(-3, 4, (2, 3)).astype(float) for _ in range(3)]   # A(t), degree 2
    b = [rng.integers(-3, 4, (3, 2)).astype(float) for _ in range(2)]   # B(t), degree 1
    value, got = jet(lambda p, q: gc.matmul(p, q), [a[0], b[0]], [a[1:], b[1:]], order=4)
    want = [sum((a[i] @ b[k - i] for i in range(3) if 0 <= k - i < 2), np.zeros((2, 2)))
            for k in range(5)]
    assert np.array_equal(value, want[0]) and all(
        np.array_equal(g, w) for g, w in zip(got, want[1:], strict=True))

    v = [rng.integers(-3, 4, (4,)).astype(float) for _ in range(2)]     # v(t), degree 1
    value, got = jet(lambda p: gc.prod(p), [v[0]], [v[1:]], order=4)
    poly = np.polynomial.polynomial
    want = np.array([1.0])
    for i in range(4):
        want = poly.polymul(want, [v[0][i], v[1][i]])
    assert value == want[0] and [float(g) for g in got] == list(want[1:5])

    ops = [
        lambda p: gc.sum(p * p, dim=1), lambda p: gc.mean(p, dim=0),
        lambda p: p.reshape(3, 2).T[1], lambda p: gc.stack([p[0], p[1] * p[1]], dim=0),
        lambda p: gc.cat([p[0], p[1]], dim=0) * 2.0, lambda p: gc.broadcast_to(p, (2, 2, 3)),
    ]
    for op in ops:  # each coefficient of a polynomial path, against numpy on the polynomial
        value, got = jet(op, [a[0]], [a[1:]], order=4)
        ts = np.linspace(-1, 1, 9)
        samples = [op(gc.tensor(a[0] + a[1] * t + a[2] * t * t)).numpy() for t in ts]
        fitted = np.polynomial.polynomial.polyfit(ts, np.reshape(samples, (9, -1)), 4)
        for k, g in enumerate([value, *got]):
            assert np.allclose(np.ravel(g), fitted[k], atol=1e-9), (op, k)


def test_norm_clamp_and_the_backward_primitives() -> None:
    t0 = 0.3
    value, got = jet(lambda x: gc.norm(gc.stack([x, x * x, gc.tensor(1.0) + x * 0])),
                     [t0], [[1.0]], order=5)
    # |(t, t², 1)| = sqrt(1 + t² + t⁴): its series at 0.3 by the same recurrence, independently
    want = jet(lambda x: (1.0 + x * x + x ** 4).sqrt(), [t0], [[1.0]], order=5)
    assert np.allclose([value, *got], [want[0], *want[1]], rtol=1e-14)
    inside = jet(lambda x: gc.clamp(x * x, min=0.0, max=1.0), [0.5], [[1.0]], order=3)
    outside = jet(lambda x: gc.clamp(x * x, min=0.0, max=0.1), [0.5], [[1.0]], order=3)
    assert [float(c) for c in inside[1]] == [1.0, 1.0, 0.0]
    assert [float(c) for c in outside[1]] == [0.0, 0.0, 0.0]
    # tanh_backward(g, y) = g·(1 - y²), sigmoid_backward(g, y) = g·(1 - y)·y, threshold
    for prim, plain in ((R.tanh_backward, lambda g, y: g * (1.0 - y * y)),
                        (R.sigmoid_backward, lambda g, y: g * (1.0 - y) * y)):
        got = jet(lambda x, p=prim: p(x.sin(), x.cos()), [0.4], [[1.0]], order=6)
        want = jet(lambda x, p=plain: p(x.sin(), x.cos()), [0.4], [[1.0]], order=6)
        assert np.allclose(got[1], want[1], rtol=1e-14, atol=1e-16)
    got = jet(lambda x: R.threshold_backward(x.exp(), x - 1.0), [0.5], [[1.0]], order=3)
    assert [float(c) for c in got[1]] == [0.0, 0.0, 0.0]  # y = -0.5 <= 0: selected away


def test_a_primitive_without_a_jet_rule_is_an_error_naming_it(monkeypatch, capsys) -> None:
    mystery = Primitive("mystery", np.sin, vjp=lambda ctx, g: [g * np.cos(ctx.inputs[0])],
                        jvp=lambda ctx, ts: ts[0] * np.cos(ctx.inputs[0]))
    with pytest.raises(MissingTaylorRule, match="'mystery' has no Taylor-mode rule"):
        jet(lambda x: mystery(x) * 2.0, [0.1], [[1.0]], order=2)
    monkeypatch.setattr(R.tan, "jet", None)
    for argv in (["diff", "tan(x)*y", "--wrt", "x", "--order", "2", "--at", "x=0.1,y=2"],
                 ["laplacian", "tan(x)", "--at", "x=0.1"],
                 ["taylor", "tan(x)", "--at", "x=0.1", "--order", "3"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "'tan' has no Taylor-mode rule" in err and "Traceback" not in err
    assert main(["grad", "tan(x)", "--at", "x=0.1"]) == 0  # first order does not need it


def test_interpolation_recovers_every_coefficient() -> None:
    """The weights give back every coefficient of random polynomials from their values
    along the lattice directions, exactly up to rounding."""
    rng = np.random.default_rng(3)
    for n, order in ((1, 12), (2, 8), (3, 6), (4, 4)):
        lattice = directions(n, order)
        assert len(lattice) == math.comb(n + order - 1, order)
        for p in range(order + 1):
            alphas = simplex(n, p)
            d = rng.normal(size=len(alphas))
            values = [sum(c * math.prod(s ** a for s, a in zip(dir_, al, strict=True))
                          for c, al in zip(d, alphas, strict=True)) for dir_ in lattice]
            got = [sum(w * values[i] for i, w in row) for row in weights(n, order, p)]
            assert np.allclose(got, d, rtol=0, atol=1e-12 * np.abs(d).max()), (n, order, p)
    assert graded(2, 2) == [(0, 0), (1, 0), (0, 1), (2, 0), (1, 1), (0, 2)]
