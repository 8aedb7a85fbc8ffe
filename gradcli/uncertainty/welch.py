"""Degrees of freedom: Student's t quantiles, Welch–Satterthwaite, the coverage factor.

numpy has no t quantile and scipy is not a dependency, so the t distribution's CDF is the
regularized incomplete beta function (a continued fraction, Lentz's method, as in
*Numerical Recipes* §6.4) and its quantile the CDF's inverse by safeguarded Newton steps.
Both are accurate to about 1e-13 relative for ν ≥ 1 (1e-11 for ν < 1 far in the tail)
(``tests/uncertainty/test_uncertainty_welch.py`` checks them against GUM Table G.2 and
mpmath).

The effective degrees of freedom of u(f) follow GUM G.4 (eq. G.2b) for independent inputs.
With correlated inputs the generalisation is H. Castrup's ("A Welch–Satterthwaite relation
for correlated errors", Measurement Science Conference, Pasadena, 2010): u(f)² =
Σᵢ cᵢ(Σc)ᵢ, each uᵢ estimated with νᵢ degrees of freedom and the correlations held fixed,
so to first order var(u(f)²) = Σᵢ 2[cᵢ(Σc)ᵢ]²/νᵢ and

    ν_eff = u(f)⁴ / Σᵢ [cᵢ(Σc)ᵢ]² / νᵢ,

which is eq. G.2b when Σ is diagonal (cᵢ(Σc)ᵢ = cᵢ²uᵢ²). The terms cᵢ(Σc)ᵢ are the
budget's shares (times u(f)²/100).

Inputs evaluated together from the same n simultaneous readings (Type A, GUM 5.2.3) are
one unit: their joint part Σ_{i∈g} cᵢ(Σc)ᵢ is the sample variance of one linear
combination of the readings, a scaled χ² with n − 1 degrees of freedom, as R. Willink
shows ("A generalization of the Welch–Satterthwaite formula for use with correlations
between uncertainty components", Metrologia 44 (2007) 340–349); the sum above then runs
over units, each with its ν. For GUM H.2 (V, I, φ from five readings) that gives
ν_eff = 4, GUM H.2.4's ν for R, X and Z, where the per-input sum would give ν_eff ≈ 1.
"""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

__all__ = ["t_cdf", "t_quantile", "coverage_factor", "effective_dof"]

_EPS = 1e-16
_TINY = 1e-300


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > _TINY else _TINY)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > _TINY else _TINY)
        c = 1.0 + aa / c
        c = c if abs(c) > _TINY else _TINY
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < _EPS:
            break
    return h


def _log_gamma_ratio(a: float, b: float) -> float:
    """log(Γ(a + b)/Γ(a)). For b = ½ and a large (a t with many degrees of freedom) the
    difference of two lgamma values near a·log a would lose their digits: the asymptotic
    series ½log a − 1/(8a) + 1/(192a³) − 1/(640a⁵) + 17/(14336a⁷) is used instead
    (relative error below 1e-18 from a = 50)."""
    if b == 0.5 and a >= 50.0:
        return (0.5 * math.log(a) - 1 / (8 * a) + 1 / (192 * a**3) - 1 / (640 * a**5)
                + 17 / (14336 * a**7))
    return math.lgamma(a + b) - math.lgamma(a)


def _betainc(a: float, b: float, x: float, y: float) -> float:
    """I_x(a, b), the regularized incomplete beta function; y = 1 - x, given separately
    so that an x near 1 keeps 1 - x's digits."""
    if x <= 0.0:
        return 0.0
    if y <= 0.0:
        return 1.0
    lbeta = _log_gamma_ratio(a, b) - math.lgamma(b)
    log_x = math.log1p(-y) if y < 0.5 else math.log(x)  # the one near 1 from its complement
    log_y = math.log1p(-x) if x < 0.5 else math.log(y)
    front = math.exp(lbeta + a * log_x + b * log_y)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def _t_tail(t: float, nu: float) -> float:
    """P(T > t) for t >= 0."""
    return 0.5 * _betainc(nu / 2.0, 0.5, nu / (nu + t * t), t * t / (nu + t * t))


def t_cdf(t: float, nu: float) -> float:
    """P(T <= t) for Student's t with ``nu`` degrees of freedom (``inf``: the normal)."""
    if math.isinf(nu):
        return NormalDist().cdf(t)
    return 1.0 - _t_tail(t, nu) if t >= 0 else _t_tail(-t, nu)


def _t_pdf(t: float, nu: float) -> float:
    return math.exp(math.lgamma((nu + 1) / 2) - math.lgamma(nu / 2)
                    - 0.5 * math.log(nu * math.pi)
                    - (nu + 1) / 2 * math.log1p(t * t / nu))


def t_quantile(p: float, nu: float) -> float:
    """t with P(T <= t) = p for ``nu`` > 0 degrees of freedom (real; ``inf``: normal)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p = {p!r} is not between 0 and 1")
    if not nu > 0:
        raise ValueError(f"nu = {nu!r} is not > 0")
    if math.isinf(nu):
        return NormalDist().inv_cdf(p)
    if nu >= 1e5:  # Cornish–Fisher in 1/ν (Abramowitz & Stegun 26.7.5): next term ~ν⁻⁴
        z = NormalDist().inv_cdf(p)
        z2 = z * z
        return z * (1 + (z2 + 1) / (4 * nu) + (5 * z2**2 + 16 * z2 + 3) / (96 * nu**2)
                    + (3 * z2**3 + 19 * z2**2 + 17 * z2 - 15) / (384 * nu**3))
    if p < 0.5:
        return -t_quantile(1.0 - p, nu)
    if p == 0.5:
        return 0.0
    if nu == 1.0:
        return math.tan(math.pi * (p - 0.5))
    if nu == 2.0:
        return (2 * p - 1) / math.sqrt(2 * p * (1 - p))
    tail = 1.0 - p  # solve P(T > t) = tail on [lo, hi]
    lo, hi = 0.0, max(1.0, NormalDist().inv_cdf(p))
    while _t_tail(hi, nu) > tail:
        lo, hi = hi, hi * 2.0
        if hi > 1e300:
            return math.inf
    t = 0.5 * (lo + hi)
    for _ in range(200):
        g = _t_tail(t, nu) - tail
        if g > 0:
            lo = t
        else:
            hi = t
        step = g / _t_pdf(t, nu)  # d(tail)/dt = -pdf: Newton's t + g/pdf
        new = t + step
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - t) <= 1e-15 * abs(new) or hi - lo <= 1e-15 * hi:
            return new
        t = new
    return t


def coverage_factor(coverage: float, nu_eff: float) -> float:
    """k_p = t_p(ν) for a coverage probability p (GUM G.3, G.4): ν is ν_eff truncated to
    the next lower integer, as GUM G.4.1 note 1 does (at least 1); infinite: the normal's
    k_p."""
    if math.isnan(nu_eff):
        return math.nan
    # the relative 1e-9 keeps a ratio that should be whole (4 from one unit of ν = 4) from
    # losing a degree to its rounding
    nu = math.inf if math.isinf(nu_eff) else max(1.0, math.floor(nu_eff * (1 + 1e-9)))
    return t_quantile(0.5 + coverage / 2.0, nu)


def effective_dof(jac: np.ndarray, sigma_c: np.ndarray, nu: np.ndarray,
                  unit: np.ndarray | None = None) -> np.ndarray:
    """ν_eff per output component: Welch–Satterthwaite (GUM eq. G.2b), generalised to
    correlated inputs as Castrup's (see the module's docstring). ``jac`` (m, n) are the
    sensitivities, ``sigma_c`` (m, n) the rows Σ·cᵀ, ``nu`` (n,) the inputs' degrees of
    freedom (``inf`` for Type B), ``unit`` (n,) which unit each input belongs to (inputs
    from the same readings share one; None: each its own). A u(f) of 0 has ν_eff = inf
    (no uncertainty to count)."""
    terms = jac * sigma_c  # cᵢ(Σc)ᵢ
    var = terms.sum(axis=1)
    if unit is not None and len(set(unit.tolist())) < unit.size:
        ids, first = np.unique(unit, return_index=True)
        pooled = np.zeros((terms.shape[0], ids.size))
        for col, which in enumerate(np.searchsorted(ids, unit)):
            pooled[:, which] += terms[:, col]
        terms, nu = pooled, nu[first]
    finite = np.isfinite(nu)
    if not finite.any():
        return np.full(var.shape, np.inf)
    denom = np.sum(terms[:, finite] ** 2 / nu[finite], axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(denom > 0, var**2 / np.where(denom > 0, denom, 1.0), np.inf)
    return out
