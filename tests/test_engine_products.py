"""Deferred tangent products (engine/products.py): the same numbers as eager arithmetic,
less full-size work."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine.products import Product, settle

RNG = np.random.default_rng(7)
SMALL = RNG.uniform(-1, 1, (4, 1, 1))
ROW = RNG.uniform(-1, 1, (1, 5, 1))
FULL = RNG.uniform(-1, 1, (4, 5, 6))


def test_value_multiplies_every_factor() -> None:
    p = Product.of(SMALL) * ROW * FULL * 2.0
    np.testing.assert_allclose(settle(p), SMALL * ROW * FULL * 2.0, rtol=1e-15)
    assert Product.of(SMALL) * 1.0 is not None and settle(Product.of(3.0) * 1) == 3.0


def test_sum_with_a_shared_factor_pulls_it_out() -> None:
    e = FULL
    a, b = Product.of(SMALL) * e * ROW, Product.of(ROW) * e
    total = a + b
    assert isinstance(total, Product) and any(f is e for f in total.factors)
    assert all(np.size(f) < e.size for f in total.factors if f is not e)  # inner stays small
    np.testing.assert_allclose(settle(total), SMALL * e * ROW + ROW * e, rtol=1e-14,
                               atol=1e-15)


def test_sum_without_a_shared_array_is_computed() -> None:
    total = Product.of(SMALL) * 2.0 + Product.of(ROW) * 2.0  # equal scalars are not shared
    assert isinstance(total, np.ndarray)
    np.testing.assert_array_equal(total, SMALL * 2.0 + ROW * 2.0)


def test_long_chains_are_multiplied_out() -> None:
    p = Product.of(2.0)
    for _ in range(20):
        p = p * SMALL
    assert len(p.factors) <= 6
    np.testing.assert_allclose(settle(p), 2.0 * SMALL**20, rtol=1e-13)


@pytest.mark.parametrize("expr", [
    lambda x, y, z: (gc.exp(-(x * x + y * y + z * z)) * gc.sin(x * y)
                     + gc.log(1 + z * z) / (1 + x * x)),
    lambda x, y, z: gc.sin(x * y) * gc.exp(-(x * x + y * y) / 8) * z,
    lambda x, y, z: (x * y * z) * gc.exp(z) + gc.cos(y) * gc.exp(z),
])
def test_linearized_jvp_equals_dual_numbers(expr) -> None:
    """Forward mode replayed over a recorded pass (deferred products) against dual numbers
    (eager), on broadcast grid axes, for each direction."""
    axes = [RNG.uniform(-1, 1, s) for s in ((4, 1, 1), (1, 5, 1), (1, 1, 6))]
    _, jvp_fn = gc.functional.linearize(expr, *axes)
    for k in range(3):
        units = [np.zeros_like(a) if j != k else np.ones_like(a) for j, a in enumerate(axes)]
        _, want = gc.functional.jvp(expr, tuple(axes), tuple(units))
        got = jvp_fn(*units)
        np.testing.assert_allclose(np.broadcast_to(got, (4, 5, 6)), want.numpy()
                                   if hasattr(want, "numpy") else want, rtol=1e-13, atol=1e-15)


def test_settling_inf_times_zero_is_quiet(recwarn) -> None:
    """exp(x)*y at x = 1000 (exp overflows) gives inf * 0 in the deferred product: nan comes
    out as a value, never as a RuntimeWarning on the terminal."""
    x, y = np.array([1000.0, 0.0]), np.array([0.0, 2.0])
    _, jvp_fn = gc.functional.linearize(lambda a, b: gc.exp(a) * b, x, y)
    with np.errstate(all="raise"):
        out = jvp_fn(np.ones(2), np.zeros(2))
    assert np.isnan(out[0]) and out[1] == 2.0
    assert not [w for w in recwarn.list if issubclass(w.category, RuntimeWarning)]
