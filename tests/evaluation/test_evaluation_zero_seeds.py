"""A zero in a VJP's vector or a JVP's direction is a number like any other: 0·∞ is nan
in vᵀJ and J·u, as in torch's backward(gradient=v) and JAX's vjp/jvp.

Peer values (float64): torch 2.13.0 (`y.backward(gradient=v)`, `torch.func.jvp`) and JAX
0.10.2 (`jax.vjp`, `jax.jvp`) give the same nan/finite pattern for every case here; the
finite entries are hand derivations (d/dy log(y) = 1/y, d/dy x·y = x, ...)."""

from __future__ import annotations

import math

import pytest

import gradcli

NAN = math.nan

VJP = [  # expression, point, v, {column: peers' value}
    ("[sqrt(x), log(y), x*y]", {"x": 0, "y": 1}, [0, 1, 1], {"vjp/dx": NAN, "vjp/dy": 1.0}),
    ("[x/y, y/x]", {"x": 0, "y": 1}, [1, 0], {"vjp/dx": NAN, "vjp/dy": NAN}),
    ("[x^2, y^2]", {"x": 3, "y": 2}, [0, 1], {"vjp/dx": 0.0, "vjp/dy": 4.0}),
]
JVP = [  # expression, point, u, jvp
    ("log(x)*y", {"x": 0, "y": 0}, {"y": 1}, NAN),
    ("log(x)*y", {"x": 0, "y": 0}, {"x": 0, "y": 1}, NAN),
    ("sin(x)*cos(y)", {"x": 1, "y": 2}, {"x": 1}, math.cos(1) * math.cos(2)),
]


def _same(got: float, want: float) -> bool:
    return math.isnan(want) and math.isnan(got) or got == pytest.approx(want, rel=1e-15)


@pytest.mark.parametrize("expression, point, v, want", VJP)
def test_vjp_seeds_zeros_like_torch(expression, point, v, want) -> None:
    """vᵀJ with zeros in v: nan where a zero meets an infinite partial, else the product."""
    result = gradcli.evaluate(expression, "vjp", at=point, vector=v)
    for column, value in want.items():
        assert _same(float(result[column][0]), value), (column, result[column])


@pytest.mark.parametrize("expression, point, u, want", JVP)
def test_jvp_gives_every_variable_a_tangent(expression, point, u, want) -> None:
    """J·u where u has no (or a zero) component for a variable with an infinite partial."""
    result = gradcli.evaluate(expression, "jvp", at=point, direction=u)
    assert _same(float(result["jvp"][0]), want), result["jvp"]
