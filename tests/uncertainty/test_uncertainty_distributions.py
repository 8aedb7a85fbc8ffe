"""The input distributions of propagate (gradcli.uncertainty.distributions) against JCGM
101:2008 clause 6.4: each standard uncertainty against the clause's closed-form variance,
the pdfs' variances by numerical integration where the clause gives the pdf, and each
standardized sampler's mean and variance within five standard errors of 0 and 1."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcli import propagate
from gradcli.uncertainty.distributions import DISTRIBUTIONS
from gradcli.uncertainty.propagation import PropagationError

# (name, parameters, the variance JCGM 101 6.4.x.3 states for them)
CASES = [
    ("normal", (0.3,), 0.3**2),
    ("t", (5.0, 0.2), 5 / 3 * 0.2**2),                        # 6.4.9.3: ν/(ν−2)·s²
    ("uniform", (0.5,), (2 * 0.5) ** 2 / 12),                 # 6.4.2.3: (b−a)²/12
    ("triangular", (0.5,), (2 * 0.5) ** 2 / 24),              # 6.4.5.3: (b−a)²/24
    ("arcsine", (0.5,), (2 * 0.5) ** 2 / 8),                  # 6.4.6.3: (b−a)²/8
    ("trapezoid", (0.5, 0.4), (2 * 0.5) ** 2 * (1 + 0.16) / 24),  # 6.4.4.3
    ("ctrapezoid", (0.5, 0.1), (2 * 0.5) ** 2 / 12 + 0.1**2 / 9),  # 6.4.3.3
    ("exponential", (0.7,), 0.7**2),                          # 6.4.10.3: x0²
    ("gamma", (4.0, 0.5), 4.0 * 0.5**2),                      # 6.4.11: αβ²
]


def test_every_distribution_is_tested():
    assert sorted(c[0] for c in CASES) == sorted(DISTRIBUTIONS)


@pytest.mark.parametrize("name, params, variance", CASES, ids=[c[0] for c in CASES])
def test_standard_uncertainty_is_the_clauses_variance(name, params, variance):
    assert DISTRIBUTIONS[name].std(params) ** 2 == pytest.approx(variance, rel=1e-14)


def _pdf_variance(pdf, half):
    """∫ξ²g(ξ)dξ over [−half, half] by the trapezoidal rule on 2·10⁶ intervals (error
    ~1e-12 for these piecewise smooth densities; the arcsine's integrable end
    singularities are removed by ξ = half·sin θ)."""
    x = np.linspace(-half, half, 2_000_001)
    g = pdf(x)
    return float(np.trapezoid(x * x * g, x)), float(np.trapezoid(g, x))


def test_trapezoid_pdf_variance():
    """JCGM 101 6.4.4.2's pdf: rising on [−a, −βa], flat at 1/(a(1+β)), falling on
    [βa, a]."""
    a, beta = 0.5, 0.4
    h = 1 / (a * (1 + beta))

    def pdf(x):
        return np.where(np.abs(x) <= beta * a, h, h * (a - np.abs(x)) / (a - beta * a))
    var, total = _pdf_variance(pdf, a)
    assert total == pytest.approx(1.0, abs=1e-9)
    assert var == pytest.approx(DISTRIBUTIONS["trapezoid"].std((a, beta)) ** 2, rel=1e-9)


def test_arcsine_pdf_variance():
    """JCGM 101 6.4.6.2: g(ξ) = 1/(π√(a² − ξ²)); with ξ = a sin θ, var = a²/π ∫ sin²θ dθ
    over [−π/2, π/2]."""
    a = 0.5
    theta = np.linspace(-math.pi / 2, math.pi / 2, 2_000_001)
    var = float(np.trapezoid(a * a * np.sin(theta) ** 2 / math.pi, theta))
    assert var == pytest.approx(DISTRIBUTIONS["arcsine"].std((a,)) ** 2, rel=1e-11)


@pytest.mark.parametrize("name, params, variance", CASES, ids=[c[0] for c in CASES])
def test_standardized_sampler_has_zero_mean_and_unit_variance(name, params, variance):
    """10⁶ draws: the mean within 5/√N of 0, the variance within five standard errors
    (from the draws' own fourth moment) of 1."""
    d = DISTRIBUTIONS[name]
    n = 10**6
    z = d.sample(np.random.default_rng(12345), d.shape(params), n)
    assert z.shape == (n,)
    assert abs(z.mean()) < 5 / math.sqrt(n)
    se_var = math.sqrt(np.var(z * z) / n)
    assert abs(np.var(z) - 1.0) < 5 * se_var


@pytest.mark.parametrize("name, params, low, high", [
    ("uniform", (0.5,), -0.5, 0.5), ("triangular", (0.5,), -0.5, 0.5),
    ("arcsine", (0.5,), -0.5, 0.5), ("trapezoid", (0.5, 0.4), -0.5, 0.5),
    ("ctrapezoid", (0.5, 0.1), -0.6, 0.6), ("exponential", (0.7,), 0.0, math.inf),
    ("gamma", (4.0, 0.5), 0.0, math.inf)])
def test_monte_carlo_draws_each_distribution_on_its_support(name, params, low, high):
    """propagate's Monte Carlo of f = x: sd ≈ u (within 1 %: 2·10⁵ draws), the mean is
    the estimate, and every draw within the support (the interval's ends inside it)."""
    d = DISTRIBUTIONS[name]
    mean = d.mean(params) if d.mean else 0.0
    spec = f"{name}:{','.join(str(p) for p in params)}"
    got = propagate("x", at={"x": mean}, dist={"x": spec}, monte_carlo=200_000, seed=4,
                    coverage=0.999)
    assert got["u(f)"][0] == pytest.approx(d.std(params), rel=1e-14)
    assert got["sd"][0] == pytest.approx(d.std(params), rel=0.01)
    assert abs(got["mean"][0] - mean) < 5 * d.std(params) / math.sqrt(200_000)
    assert low <= got["low"][0] and got["high"][0] <= high


def test_t_input_interval_is_the_t_quantile():
    """x ~ t₅(0, 1) (JCGM 101 6.4.9): the 95 % interval is ±t₀.₉₇₅(5) = ±2.57 (GUM Table
    G.2), within its sampling error (±0.02 at 4·10⁵ draws)."""
    got = propagate("x", at={"x": 0.0}, dist={"x": "t:5,1"}, monte_carlo=400_000, seed=9)
    assert got["high"][0] == pytest.approx(2.5706, abs=0.02)
    assert got["low"][0] == pytest.approx(-2.5706, abs=0.02)


@pytest.mark.parametrize("dist, words", [
    ("t:2,1", "nu > 2"), ("trapezoid:1,1.5", "in [0, 1]"), ("ctrapezoid:1,2", "in [0, a]"),
    ("uniform:-1", "negative"), ("trapezoid:1", "takes 2 parameters"),
    ("exponential:0.5", "give its mean as the estimate"), ("gamma:2,-1", "> 0"),
    ("normal:0.2", "give one of them"),
])
def test_bad_parameters_are_refused(dist, words):
    with pytest.raises(PropagationError) as err:
        propagate("x", at={"x": "1+-0.1" if dist.startswith("normal") else 1.0},
                  dist={"x": dist})
    assert err.value.param == "dist" and words in err.value.detail


def test_vector_parameters_per_component():
    """A vector variable takes one parameter or one per component."""
    got = propagate("sum(x)", at={"x": [0, 0]}, dist={"x": "trapezoid:[1,2],0.5"})
    want = math.sqrt((1 + 4) * (1 + 0.25) / 6)
    assert got["u(f)"][0] == pytest.approx(want, rel=1e-14)


def test_correlated_non_normal_inputs_are_refused_by_monte_carlo():
    """Decision: no copula is guessed; the law of propagation still runs."""
    args = dict(at={"x": 1.0, "y": "1+-0.1"}, dist={"x": "uniform:0.2"},
                corr={("x", "y"): 0.5})
    assert propagate("x + y", **args)["u(f)"][0] > 0
    with pytest.raises(PropagationError) as err:
        propagate("x + y", **args, monte_carlo=100)
    assert err.value.param == "dist" and err.value.key == "x"
    assert "multivariate normal" in err.value.detail


def test_cli_dist_with_parameters(cli):
    status, out, err = cli(["propagate", "x", "--at", "x=0", "--dist",
                            "x=trapezoid:1,0.5"])
    assert status == 0, err
    assert float(out.splitlines()[1].split(",")[2]) == pytest.approx(
        math.sqrt(1.25 / 6), rel=1e-15)
