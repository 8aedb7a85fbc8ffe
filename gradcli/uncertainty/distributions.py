"""The input distributions of ``propagate`` (JCGM 101:2008 clause 6.4), one record each.

Each :class:`Distribution` says its parameters, its standard deviation (the standard
uncertainty the law of propagation uses), the mean it implies when it has one of its own
(exponential, gamma: the estimate must be that mean), and how Monte Carlo draws it: a
*standardized* sampler, zero mean and unit variance, which ``propagate`` scales by u and
shifts to the estimate. The other distributions are centred on the estimate. A half-width
``a`` is the distance from the estimate to the end of the support.

Adding a distribution is one record in :data:`DISTRIBUTIONS`: the ``dist``
parameter (both front ends), the input file, the messages and the reference's table all read it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Distribution", "DISTRIBUTIONS", "parse_params"]

Params = tuple[float, ...]


@dataclass(frozen=True)
class Distribution:
    """``name:p1,p2``: ``params`` their names, ``clause`` JCGM 101's, ``std(params)`` the
    standard deviation, ``mean(params)`` the mean when the distribution fixes it (else
    None: centred on the estimate), ``shape(params)`` the scale-free parameters the
    standardized sampler ``sample(rng, shape, size)`` needs, ``check(params)`` what is
    wrong with them (None when nothing)."""

    name: str
    params: tuple[str, ...]
    clause: str
    text: str
    std: Callable[[Params], float]
    check: Callable[[Params], str | None]
    sample: Callable[[np.random.Generator, Params, int], np.ndarray]
    shape: Callable[[Params], Params] = lambda p: ()
    mean: Callable[[Params], float] | None = None

    @property
    def usage(self) -> str:
        return f"{self.name}:{','.join(self.params)}"


def _positive(*names: str) -> Callable[[Params], str | None]:
    def check(p: Params) -> str | None:
        for name, v in zip(names, p, strict=True):
            if not v > 0:
                return f"{name} = {v:g} must be > 0"
        return None
    return check


def _half_width(p: Params) -> str | None:
    return None if p[0] >= 0 else f"the half-width a = {p[0]:g} is negative"


def _trapezoid_check(p: Params) -> str | None:
    if p[0] < 0:
        return f"the half-width a = {p[0]:g} is negative"
    if not 0 <= p[1] <= 1:
        return f"beta = {p[1]:g} (the top's width over the base's) must be in [0, 1]"
    return None


def _ctrapezoid_check(p: Params) -> str | None:
    if p[0] < 0:
        return f"the half-width a = {p[0]:g} is negative"
    if not 0 <= p[1] <= p[0]:
        return f"d = {p[1]:g} (how inexact the limits are) must be in [0, a]"
    return None


def _t_check(p: Params) -> str | None:
    if not p[0] > 2:
        return (f"nu = {p[0]:g}: a t distribution has a variance only for nu > 2 "
                "(JCGM 101 6.4.9.3)")
    return None if p[1] >= 0 else f"the scale {p[1]:g} is negative"


_SQRT3, _SQRT6, _SQRT2 = math.sqrt(3.0), math.sqrt(6.0), math.sqrt(2.0)


def _trapezoid(rng: np.random.Generator, shape: Params, size: int) -> np.ndarray:
    # JCGM 101 6.4.4.4: a + (b - a)/2·[(1 + β)r₁ + (1 − β)r₂], centred and standardized
    (beta,) = shape
    r = rng.random((2, size))
    x = (1 + beta) * r[0] + (1 - beta) * r[1] - 1.0
    return x * math.sqrt(6.0 / (1 + beta * beta))


def _ctrapezoid(rng: np.random.Generator, shape: Params, size: int) -> np.ndarray:
    # JCGM 101 6.4.3.4: the lower limit uniform on [-1 - ρ, -1 + ρ] (ρ = d/a), the upper
    # its mirror, then uniform between them; variance 1/3 + ρ²/9
    (rho,) = shape
    r = rng.random((2, size))
    low = -1.0 - rho + 2.0 * rho * r[1]
    return low * (1.0 - 2.0 * r[0]) / math.sqrt(1.0 / 3.0 + rho * rho / 9.0)


#: every distribution ``dist=`` accepts, by name
DISTRIBUTIONS: dict[str, Distribution] = {d.name: d for d in (
    Distribution("normal", ("u",), "6.4.7", "Gaussian N(x, u²): u is the standard "
                 "uncertainty", std=lambda p: p[0],
                 check=lambda p: None if p[0] >= 0 else f"u = {p[0]:g} is negative",
                 sample=lambda rng, s, n: rng.standard_normal(n)),
    Distribution("t", ("nu", "scale"), "6.4.9", "scaled and shifted Student t t_nu(x, "
                 "scale²): u = scale·√(nu/(nu−2)), nu > 2", std=lambda p: p[1] *
                 math.sqrt(p[0] / (p[0] - 2)), check=_t_check, shape=lambda p: (p[0],),
                 sample=lambda rng, s, n: rng.standard_t(s[0], n) /
                 math.sqrt(s[0] / (s[0] - 2))),
    Distribution("uniform", ("a",), "6.4.2", "rectangular on [x − a, x + a]: u = a/√3",
                 std=lambda p: p[0] / _SQRT3, check=_half_width,
                 sample=lambda rng, s, n: rng.uniform(-_SQRT3, _SQRT3, n)),
    Distribution("triangular", ("a",), "6.4.5", "triangular on [x − a, x + a]: u = a/√6",
                 std=lambda p: p[0] / _SQRT6, check=_half_width,
                 sample=lambda rng, s, n: rng.triangular(-_SQRT6, 0.0, _SQRT6, n)),
    Distribution("arcsine", ("a",), "6.4.6", "arc sine (U-shaped) on [x − a, x + a]: "
                 "u = a/√2", std=lambda p: p[0] / _SQRT2, check=_half_width,
                 sample=lambda rng, s, n: _SQRT2 * np.sin(2.0 * math.pi * rng.random(n))),
    Distribution("trapezoid", ("a", "beta"), "6.4.4", "trapezoidal on [x − a, x + a], "
                 "its top beta·a wide each side (0 ≤ beta ≤ 1; 0 triangular, 1 "
                 "rectangular): u = a·√((1 + beta²)/6)",
                 std=lambda p: p[0] * math.sqrt((1 + p[1] ** 2) / 6.0),
                 check=_trapezoid_check, shape=lambda p: (p[1],), sample=_trapezoid),
    Distribution("ctrapezoid", ("a", "d"), "6.4.3", "curvilinear trapezoid: rectangular "
                 "of half-width a whose limits are each inexact by ±d (0 ≤ d ≤ a): "
                 "u = √(a²/3 + d²/9)", std=lambda p: math.sqrt(p[0] ** 2 / 3 + p[1] ** 2 / 9),
                 check=_ctrapezoid_check, shape=lambda p: (p[1] / p[0] if p[0] else 0.0,),
                 sample=_ctrapezoid),
    Distribution("exponential", ("mean",), "6.4.10", "exponential of that mean (a "
                 "non-negative quantity known by its mean; the estimate must be it): "
                 "u = mean", std=lambda p: p[0], check=_positive("mean"),
                 mean=lambda p: p[0],
                 sample=lambda rng, s, n: rng.standard_exponential(n) - 1.0),
    Distribution("gamma", ("shape", "scale"), "6.4.11", "gamma of that shape and scale, "
                 "mean shape·scale (the estimate must be it; a count q gives gamma:q+1,1): "
                 "u = √shape·scale", std=lambda p: math.sqrt(p[0]) * p[1],
                 check=_positive("shape", "scale"), mean=lambda p: p[0] * p[1],
                 shape=lambda p: (p[0],),
                 sample=lambda rng, s, n: (rng.standard_gamma(s[0], n) - s[0]) /
                 math.sqrt(s[0])),
)}


def parse_params(dist: Distribution, values: list[np.ndarray], size: int
                 ) -> tuple[list[Params], str | None]:
    """Per component (``size`` of them) the parameters (one value each of
    ``dist.params``, a number or one per component); or what is wrong."""
    cols = []
    for name, v in zip(dist.params, values, strict=True):
        if v.size not in (1, size):
            return [], f"{v.size} values of {name} for a variable of {size} components"
        cols.append(np.broadcast_to(v.reshape(-1), (size,)))
    per = [tuple(float(c[i]) for c in cols) for i in range(size)]
    for p in per:
        wrong = dist.check(p)
        if wrong:
            return [], wrong
    return per, None
