"""gradcli.propagate against independent truth: the GUM's worked examples H.1 and H.2, the
`uncertainties` package (reference values in tests/reference/propagate_refs.json, made by
tests/reference/make_propagate_refs.py), closed forms derived by hand, and the exact
distributions Monte Carlo must reproduce within its sampling error."""

from __future__ import annotations

import json
import math
import os
from statistics import NormalDist

import numpy as np
import pytest

from gradcli import propagate
from gradcli.uncertainty import propagation as P
from gradcli.uncertainty.propagation import PropagationError, split_uncertainty

HERE = os.path.dirname(os.path.dirname(__file__))  # tests/
REFS = json.load(open(os.path.join(HERE, "reference", "propagate_refs.json"),
                      encoding="utf-8"))

# GUM H.2, Table H.2: five simultaneous observations of V (V), I (A) and phi (rad)
H2_V = [5.007, 4.994, 5.005, 4.990, 4.999]
H2_I = [19.663e-3, 19.639e-3, 19.640e-3, 19.685e-3, 19.678e-3]
H2_PHI = [1.0456, 1.0438, 1.0468, 1.0428, 1.0433]
H2_F = "[V/I*cos(phi), V/I*sin(phi), V/I]"


def _corr_pairs(names, corr):
    return {(a, b): corr[i][j] for i, a in enumerate(names) for j, b in enumerate(names)
            if i < j} if corr else None


@pytest.mark.parametrize("case", REFS["cases"], ids=[c["expression"] for c in REFS["cases"]])
def test_first_order_equals_the_uncertainties_package(case):
    """f, u(f) and the outputs' correlations equal uncertainties 3.2.3's to 1e-12."""
    at = {n: (v, case["u"][n]) if n in case["u"] else v for n, v in case["at"].items()}
    got = propagate(case["expression"], at=at, corr=_corr_pairs(list(case["u"]),
                                                                case["corr"]))
    np.testing.assert_allclose(got["f"], case["f"], rtol=1e-12)
    np.testing.assert_allclose(got["u(f)"], case["u(f)"], rtol=1e-12)
    r = case["r"]
    for i in range(len(r)):
        for j in range(i + 1, len(r)):
            np.testing.assert_allclose(got[f"r(f[{i}],f[{j}])"], r[i][j], rtol=1e-12)


def _h2_from_observations():
    data = np.array([H2_V, H2_I, H2_PHI])
    cov = np.cov(data) / data.shape[1]  # the covariance of the means (GUM H.2.3, eq. 17)
    at = dict(zip(("V", "I", "phi"), data.mean(axis=1), strict=True))
    return at, cov


def test_gum_h2_resistance_and_reactance_at_the_printed_digits():
    """GUM H.2 (Table H.3): R = 127.732, X = 219.847, Z = 254.260 Ω; u = 0.071, 0.295,
    0.236 Ω; r(R,X) = -0.588, r(R,Z) = -0.485, r(X,Z) = 0.993 — from the unrounded
    observations of Table H.2 through cov= (a bare matrix in at= order). The GUM prints
    its approach 2's values and says approach 1 (this law of propagation) agrees; every
    value rounds to the printed one except u(X) = 0.29558, within one unit of the last
    printed digit of 0.295."""
    at, cov = _h2_from_observations()
    got = propagate(H2_F, at=at, cov=cov)
    assert list(got["output"]) == ["f[0]", "f[1]", "f[2]"]
    assert [round(v, 3) for v in got["f"]] == [127.732, 219.847, 254.260]
    assert round(got["u(f)"][0], 3) == 0.071
    assert abs(got["u(f)"][1] - 0.295) < 0.001
    assert round(got["u(f)"][2], 3) == 0.236
    assert round(got["r(f[0],f[1])"][0], 3) == -0.588
    assert round(got["r(f[0],f[2])"][0], 3) == -0.485
    assert round(got["r(f[1],f[2])"][0], 3) == 0.993
    # the correlations as a CSV's names in another order give the same numbers
    names = ["phi", "V", "I"]
    perm = [2, 0, 1]
    same = propagate(H2_F, at=at, cov=(names, cov[np.ix_(perm, perm)]))
    np.testing.assert_allclose(same["u(f)"], got["u(f)"], rtol=1e-14)


H1_AT = {"ls": "50000623+-25", "d": "215+-9.7", "da": "0+-0.58e-6", "th": "-0.1+-0.41",
         "als": "11.5e-6+-1.2e-6", "dth": "0+-0.029"}
H1_F = "ls + d - ls*(da*th + als*dth)"  # GUM H.1.2 eq. H.3, in nm and °C


def test_gum_h1_end_gauge_first_and_second_order():
    """GUM H.1: l = 50 000 838 nm with u_c(l) = 32 nm (H.1.6), and 34 nm with the
    second-order terms of H.1.7 (u²(δα)u²(θ)l_s² and u²(α_s)u²(δθ)l_s²)."""
    got = propagate(H1_F, at=H1_AT, order=2)
    assert round(got["f"][0]) == 50000838
    assert round(got["u(f)"][0]) == 32
    assert round(got["u2(f)"][0]) == 34
    # by hand: 25² + 9.7² + (l_s θ u(δα))² + (l_s α_s u(δθ))², then H.1.7's two terms
    ls = 50000623.0
    first = 25**2 + 9.7**2 + (ls * 0.1 * 0.58e-6) ** 2 + (ls * 11.5e-6 * 0.029) ** 2
    assert got["u(f)"][0] == pytest.approx(math.sqrt(first), rel=1e-12)
    second = (ls * 0.58e-6 * 0.41) ** 2 + (ls * 1.2e-6 * 0.029) ** 2
    # and the small mixed terms with l_s: (θ u(l_s) u(δα))² and (α_s u(l_s) u(δθ))²
    small = (0.1 * 25 * 0.58e-6) ** 2 + (11.5e-6 * 25 * 0.029) ** 2
    assert got["u2(f)"][0] == pytest.approx(math.sqrt(first + second + small), rel=1e-12)
    assert got["U(f)"][0] == pytest.approx(2 * got["u2(f)"][0], rel=1e-15)


def test_bilinear_second_order_variance_is_exact():
    """f = x·y, independent normals: u2² = μx²σy² + μy²σx² + σx²σy² (exact), E2 = μxμy."""
    got = propagate("x*y", at={"x": "2+-0.3", "y": "-3+-0.5"}, order=2)
    assert got["u2(f)"][0] ** 2 == pytest.approx(4 * 0.25 + 9 * 0.09 + 0.09 * 0.25,
                                                 rel=1e-13)
    assert got["E2(f)"][0] == pytest.approx(-6.0, rel=1e-15)


def test_correlated_bilinear_in_decorrelated_coordinates():
    """f = x·y with corr ρ: the exact variance μx²σy² + μy²σx² + 2μxμyρσxσy +
    σx²σy²(1 + ρ²) and mean μxμy + ρσxσy come out of eq. 14 applied to f(x̂ + L z)."""
    mx, my, sx, sy, rho = 2.0, -3.0, 0.3, 0.5, 0.6
    got = propagate("x*y", at={"x": (mx, sx), "y": (my, sy)}, corr={("x", "y"): rho},
                    order=2)
    exact = (mx**2 * sy**2 + my**2 * sx**2 + 2 * mx * my * rho * sx * sy
             + sx**2 * sy**2 * (1 + rho**2))
    assert got["u2(f)"][0] ** 2 == pytest.approx(exact, rel=1e-13)
    assert got["E2(f)"][0] == pytest.approx(mx * my + rho * sx * sy, rel=1e-14)


def test_cubic_uses_the_third_derivative_term():
    """f = x³, normal x: eq. 14 gives 9μ⁴σ² + ½(6μ)²σ⁴ + 3μ²·6·σ⁴ = 9μ⁴σ² + 36μ²σ⁴."""
    mu, s = 1.5, 0.2
    got = propagate("x^3", at={"x": (mu, s)}, order=2)
    assert got["u2(f)"][0] ** 2 == pytest.approx(9 * mu**4 * s**2 + 36 * mu**2 * s**4,
                                                 rel=1e-13)
    assert got["E2(f)"][0] == pytest.approx(mu**3 + 3 * mu * s**2, rel=1e-14)


def test_exp_second_order_and_monte_carlo_against_the_log_normal():
    """exp(x), x ~ N(μ, σ²): E2 = e^μ(1 + σ²/2), u2 = e^μ·sqrt(σ² + 3σ⁴/2); Monte Carlo's
    mean, sd and interval ends match the log-normal's exact ones within 5 standard
    errors."""
    mu, s, n = 0.5, 0.2, 400_000
    got = propagate("exp(x)", at={"x": (mu, s)}, order=2, monte_carlo=n, seed=7)
    assert got["E2(f)"][0] == pytest.approx(math.exp(mu) * (1 + s**2 / 2), rel=1e-14)
    assert got["u2(f)"][0] == pytest.approx(math.exp(mu) * math.sqrt(s**2 + 1.5 * s**4),
                                            rel=1e-14)
    mean = math.exp(mu + s**2 / 2)
    var = (math.exp(s**2) - 1) * math.exp(2 * mu + s**2)
    assert abs(got["mean"][0] - mean) < 5 * math.sqrt(var / n)
    m4 = var**2 * (math.exp(4 * s**2) + 2 * math.exp(3 * s**2) + 3 * math.exp(2 * s**2) - 3)
    se_sd = math.sqrt((m4 - var**2) / n) / (2 * math.sqrt(var))
    assert abs(got["sd"][0] - math.sqrt(var)) < 5 * se_sd
    for p, end in ((0.025, "low"), (0.975, "high")):
        q = NormalDist(mu, s).inv_cdf(p)
        density = NormalDist(mu, s).pdf(q) / math.exp(q)
        se_q = math.sqrt(p * (1 - p) / n) / density
        assert abs(got[end][0] - math.exp(q)) < 5 * se_q


def test_linear_model_monte_carlo_matches_its_exact_normal():
    """f = 2x - 3y + 1 with correlated normal inputs is exactly normal: mean f, sd u(f),
    interval f ± 1.95996·u(f); Monte Carlo lands within its sampling error and the note
    says the law of propagation agrees."""
    n = 300_000
    got = propagate("2x - 3y + 1", at={"x": "1+-0.2", "y": "2+-0.1"},
                    corr={("x", "y"): 0.5}, monte_carlo=n, seed=3)
    u = math.sqrt(4 * 0.04 + 9 * 0.01 - 2 * 2 * 3 * 0.5 * 0.2 * 0.1)
    assert got["u(f)"][0] == pytest.approx(u, rel=1e-14)
    assert abs(got["mean"][0] - (-3.0)) < 5 * u / math.sqrt(n)
    assert abs(got["sd"][0] - u) < 5 * u / math.sqrt(2 * n)
    kp = NormalDist().inv_cdf(0.975)
    se_q = math.sqrt(0.025 * 0.975 / n) / NormalDist(0, u).pdf(kp * u)
    assert abs(got["low"][0] - (-3.0 - kp * u)) < 5 * se_q
    assert abs(got["high"][0] - (-3.0 + kp * u)) < 5 * se_q
    assert len(got.notes) == 1 and "agrees with Monte Carlo" in got.notes[0]


def test_uniform_input_and_the_disagreement_it_reports():
    """A rectangular input of half-width a has u = a/√3 in the law of propagation, and a
    95 % interval ±0.95a by Monte Carlo, not ±1.96·a/√3: the note says they disagree."""
    a, n = 0.3, 200_000
    got = propagate("x", at={"x": 1.0}, dist={"x": f"uniform:{a}"}, monte_carlo=n, seed=5)
    assert got["u(f)"][0] == pytest.approx(a / math.sqrt(3), rel=1e-14)
    assert got["low"][0] == pytest.approx(1 - 0.95 * a, abs=5e-3)
    assert got["high"][0] == pytest.approx(1 + 0.95 * a, abs=5e-3)
    assert "does NOT agree" in got.notes[0]
    tri = propagate("x", at={"x": 0.0}, dist={"x": ("triangular", 0.6)})
    assert tri["u(f)"][0] == pytest.approx(0.6 / math.sqrt(6), rel=1e-14)


def test_budget_shares_add_up_to_100_with_correlations():
    """The budget of GUM H.2's example: c is the Jacobian, u_i(f) = |c|·u(x), and
    share = 100·cᵢ(Σc)ᵢ/u(f)² adds up to 100 per output, negative parts included."""
    at = {"V": "4.9990+-0.0032", "I": "19.6610e-3+-0.0095e-3", "phi": "1.04446+-0.00075"}
    corr = {("V", "I"): -0.36, ("V", "phi"): 0.86, ("I", "phi"): -0.65}
    got = propagate(H2_F, at=at, corr=corr, budget=True)
    assert list(got["input"]) == ["V", "I", "phi", "total"] * 3
    assert list(got["output"]) == ["f[0]"] * 4 + ["f[1]"] * 4 + ["f[2]"] * 4
    shares = np.asarray(got["share"]).reshape(3, 4)
    np.testing.assert_allclose(shares[:, :3].sum(axis=1), 100.0, rtol=1e-12)
    assert list(shares[:, 3]) == [100.0] * 3
    assert shares[0].min() < 0  # correlations make some parts negative
    v, i, phi = 4.999, 19.661e-3, 1.04446
    assert got["c"][0] == pytest.approx(math.cos(phi) / i, rel=1e-14)  # ∂R/∂V
    assert got["c"][2] == pytest.approx(-v / i * math.sin(phi), rel=1e-14)  # ∂R/∂phi
    rows = got["input"] != "total"
    np.testing.assert_allclose(got["u_i(f)"][rows], np.abs(got["c"] * got["u(x)"])[rows],
                               rtol=1e-15)
    total = propagate(H2_F, at=at, corr=corr)
    np.testing.assert_allclose(got["u_i(f)"][~rows], total["u(f)"], rtol=1e-15)
    np.testing.assert_allclose(got["U(f)"][~rows], total["U(f)"], rtol=1e-15)
    independent = propagate("x + 2y", at={"x": "1+-3", "y": "1+-2"}, budget=True)
    np.testing.assert_allclose(independent["share"], [36.0, 64.0, 100.0], rtol=1e-14)


def test_vector_variable_uncertainties():
    """sum(x²) of a vector with a vector of uncertainties: u = sqrt(Σ(2xᵢuᵢ)²); a single
    uncertainty applies to every component."""
    got = propagate("sum(x^2)", at={"x": "[1, 2, 3]+-[0.1, 0.1, 0.2]"})
    assert got["u(f)"][0] == pytest.approx(math.sqrt(0.2**2 + 0.4**2 + 1.2**2), rel=1e-14)
    assert [got[f"x[{i}]"][0] for i in range(3)] == [1.0, 2.0, 3.0]
    same = propagate("sum(x^2)", at={"x": [1, 2, 3]}, u={"x": 0.1})
    assert same["u(f)"][0] == pytest.approx(math.sqrt(0.04 + 0.16 + 0.36), rel=1e-14)
    corr = propagate("x[0] + x[1]", at={"x": "[1, 2]+-[0.1, 0.2]"},
                     corr={("x[0]", "x[1]"): 1.0})
    assert corr["u(f)"][0] == pytest.approx(0.3, rel=1e-14)


def test_the_first_top_level_plus_minus_separates_value_and_uncertainty():
    """+- and ± split at the first one outside brackets; inside they are arithmetic."""
    assert split_uncertainty("4.999+-0.0032") == ("4.999", "0.0032")
    assert split_uncertainty("1±0.1") == ("1", "0.1")
    assert split_uncertainty("(1+-0.1)") == ("(1+-0.1)", None)
    assert split_uncertainty("[1,2]+-[0.1,0.2]") == ("[1,2]", "[0.1,0.2]")
    assert split_uncertainty("-1+-2+-3") == ("-1", "2+-3")
    got = propagate("x", at={"x": "(1+-0.5)+-0.25"})
    assert (got["f"][0], got["u(f)"][0]) == (0.5, 0.25)


def test_a_seed_gives_the_same_numbers_on_any_number_of_threads(monkeypatch):
    """Each block draws from its own seed: one thread and three give identical values."""
    from gradcli.evaluation import runner

    args = dict(at={"x": "1+-0.1", "y": "2+-0.3"}, monte_carlo=700_000, seed=11)
    monkeypatch.setattr(runner, "default_threads", lambda: 1)
    one = propagate("x*exp(y)", **args)
    monkeypatch.setattr(runner, "default_threads", lambda: 3)
    three = propagate("x*exp(y)", **args)
    for col in ("mean", "sd", "low", "high"):
        assert one[col][0] == three[col][0]
    other = propagate("x*exp(y)", **{**args, "seed": 12})
    assert other["mean"][0] != one["mean"][0]


def test_bracketed_order_statistics_equal_keeping_every_value(monkeypatch):
    """The pilot's brackets give exactly the order statistics that keeping every sample
    gives (the same samples: same seed)."""
    args = dict(at={"x": "1+-0.1", "y": "2+-0.3"}, monte_carlo=50_000, seed=2,
                coverage=0.9)
    kept = propagate("x*exp(y) - y^2", **args)
    monkeypatch.setattr(P, "_KEEP_ALL", 1000)
    monkeypatch.setattr(P, "_PILOT", 4096)
    bracketed = propagate("x*exp(y) - y^2", **args)
    for col in ("mean", "sd", "low", "high"):
        assert bracketed[col][0] == kept[col][0]


def test_coverage_ranks_follow_jcgm_101():
    """JCGM 101 7.7.2: q = pM rounded, r = (M - q)/2 (or (M - q + 1)/2), high = r + q."""
    assert P._ranks(10**6, 0.95) == (25000, 975000)
    assert P._ranks(1000, 0.95) == (25, 975)
    assert P._ranks(999, 0.95) == (25, 974)


@pytest.mark.parametrize("kwargs, param, key, words", [
    (dict(at={"x": "1+-0.1", "y": "1+-0.1"}, corr={("x", "y"): 1.2}), "corr", ("x", "y"),
     "outside [-1, 1]"),
    (dict(at={"x": "1+-0.1", "y": "1+-0.1", "z": "1+-1"},
          corr={("x", "y"): 0.9, ("x", "z"): 0.9, ("y", "z"): -0.9}), "corr", None,
     "not positive semi-definite"),
    (dict(at={"x": "1+--0.1"}), "at", "x", "negative"),
    (dict(at={"x": 1.0}, u={"x": -2}), "u", "x", "negative"),
    (dict(at={"x": "1+-0.1", "y": 2}, corr={("x", "y"): 0.5}), "corr", ("x", "y"),
     "no uncertainty"),
    (dict(at={"x": "1+-0.1"}, dist={"x": "uniform:1"}, monte_carlo=10), "dist", "x",
     "give one of them"),
    (dict(at={"x": "1+-0.1"}, u={"x": 0.1}), "u", "x", "give it once"),
    (dict(at={"x": "[1,2]+-[0.1,0.2,0.3]"}), "at", "x", "3 uncertainties"),
    (dict(at={"x": "1+-0.1", "y": "1+-0.1"}, cov=[[1, 0.5], [0.4, 1]]), "cov", None,
     "not symmetric"),
    (dict(at={"x": "1+-0.1"}, monte_carlo=1), "monte_carlo", None, "from 2"),
    (dict(at={"x": "1+-0.1"}, coverage=1.0), "coverage", None, "between 0 and 1"),
    (dict(at={"x": "1+-0.1"}, order=3), "order", None, "1 or 2"),
])
def test_bad_requests_name_the_parameter(kwargs, param, key, words):
    """Each bad request is a PropagationError naming the parameter and entry at fault."""
    with pytest.raises(PropagationError) as err:
        propagate("x + x*0", **kwargs) if "y" not in kwargs["at"] and "z" not in \
            kwargs["at"] else propagate("x + y", **kwargs) if "z" not in kwargs["at"] \
            else propagate("x + y + z", **kwargs)
    assert (err.value.param, err.value.key) == (param, key)
    assert words in err.value.detail


def test_the_library_signature_is_the_issues():
    """gradcli.propagate(expression, at, u, corr, cov, order=1, k=None (2, or t_P(ν_eff)
    with coverage), budget=False, monte_carlo=None, dist=None, coverage=None (0.95 for
    Monte Carlo), seed=None, nu=None, readings=None, inputs=None, interval="symmetric",
    digits=2), then the units issue's units=None, to=None."""
    import inspect

    import gradcli

    params = inspect.signature(gradcli.propagate).parameters
    assert list(params) == ["expression", "at", "u", "corr", "cov", "order", "k", "budget",
                            "monte_carlo", "dist", "coverage", "seed", "nu",
                            "readings", "inputs", "interval", "digits", "units", "to"]
    defaults = {n: p.default for n, p in params.items() if n not in ("expression", "at", "u",
                                                                     "corr", "cov")}
    assert defaults == {"order": 1, "k": None, "budget": False, "monte_carlo": None,
                        "dist": None, "coverage": None, "seed": None, "nu": None,
                        "readings": None, "inputs": None, "interval": "symmetric",
                        "digits": 2, "units": None, "to": None}
    assert "<table>" in gradcli.propagate("x", at={"x": "1+-0.1"})._repr_html_()


def test_second_order_of_vector_variables():
    """sum(x²), independent normal components: u2² = Σ(4μᵢ²σᵢ² + 2σᵢ⁴) (exact); and a
    product of two correlated components of a vector equals the same product of two
    correlated scalars."""
    mu, s = np.array([1.0, -2.0, 0.5]), np.array([0.1, 0.3, 0.2])
    got = propagate("sum(x^2)", at={"x": (mu, s)}, order=2)
    assert got["u2(f)"][0] ** 2 == pytest.approx(np.sum(4 * mu**2 * s**2 + 2 * s**4),
                                                 rel=1e-13)
    assert got["E2(f)"][0] == pytest.approx(np.sum(mu**2 + s**2), rel=1e-14)
    vec = propagate("x[0]*x[1]", at={"x": "[2, -3]+-[0.3, 0.5]"},
                    corr={("x[0]", "x[1]"): 0.6}, order=2)
    sca = propagate("a*b", at={"a": "2+-0.3", "b": "-3+-0.5"}, corr={("a", "b"): 0.6},
                    order=2)
    for col in ("f", "u(f)", "u2(f)", "E2(f)"):
        assert vec[col][0] == pytest.approx(sca[col][0], rel=1e-14)


def test_monte_carlo_of_many_correlated_vector_components():
    """sum(x) of ten equally correlated components (ρ = 0.3, σ = 0.2, more than the
    written-out L·z handles): u² = σ²(n + n(n-1)ρ), and Monte Carlo's sd matches it
    within 5 standard errors."""
    n, rho, s, count = 10, 0.3, 0.2, 100_000
    corr = {(f"x[{i}]", f"x[{j}]"): rho for i in range(n) for j in range(i + 1, n)}
    got = propagate("sum(x)", at={"x": (np.arange(n, dtype=float), s)}, corr=corr,
                    monte_carlo=count, seed=9)
    u = s * math.sqrt(n + n * (n - 1) * rho)
    assert got["u(f)"][0] == pytest.approx(u, rel=1e-13)
    assert abs(got["sd"][0] - u) < 5 * u / math.sqrt(2 * count)
    assert abs(got["mean"][0] - 45.0) < 5 * u / math.sqrt(count)


def test_many_output_components_leave_out_their_correlations():
    """A vector f of more than 50 components: u(f) per component, no r(f[i],f[j])
    columns (there would be m(m-1)/2), and a note saying so."""
    got = propagate("2*x", at={"x": (np.arange(60.0), 0.5)})
    np.testing.assert_allclose(got["u(f)"], 1.0, rtol=1e-15)
    assert not [c for c in got if c.startswith("r(")]
    assert got.notes == ["note: the outputs' correlations r(f[i],f[j]) are left out: f has "
                         "60 components, over 50 (1,770 columns)"]
    few = propagate("2*x", at={"x": (np.arange(3.0), 0.5)})
    assert [c for c in few if c.startswith("r(")] == ["r(f[0],f[1])", "r(f[0],f[2])",
                                                     "r(f[1],f[2])"]


def test_a_budget_past_its_bound_is_refused():
    """A budget of more than 10⁶ rows (outputs × inputs) is refused before it is made."""
    with pytest.raises(PropagationError) as err:
        propagate("x", at={"x": (np.zeros(1001), 0.1)}, budget=True)
    assert err.value.param == "budget" and "1,001 × 1,002 rows" in err.value.detail


def test_cov_may_name_a_vectors_components():
    """cov=(["x[0]", "x[1]"], Σ) makes those components uncertain with Σ, beside y's +-U:
    u² = Σ₀₀ + Σ₁₁ + 2Σ₀₁ + u(y)²."""
    got = propagate("x[0] + x[1] + y", at={"x": [1.0, 2.0], "y": "1+-0.5"},
                    cov=(["x[0]", "x[1]"], [[0.01, 0.005], [0.005, 0.04]]))
    assert got["u(f)"][0] == pytest.approx(math.sqrt(0.01 + 0.04 + 0.01 + 0.25), rel=1e-14)


# JCGM 101 9.3 (mass calibration), in mg and kg/m³: the air-buoyancy inputs ρa, ρW, ρR are
# rectangular (half-widths 0.10, 1000, 50) and their first-order sensitivities are 0
MASS = "(mRc + dmRc)*(1 + (ra - 1.2)*(1/rW - 1/rR)) - 100000"
MASS_AT = {"mRc": "100000+-0.050", "dmRc": "1.234+-0.020", "ra": 1.2, "rW": 8000, "rR": 8000}
MASS_DIST = {"ra": "uniform:0.10", "rW": "uniform:1000", "rR": "uniform:50"}


def test_budget_has_a_total_row_with_nu_eff_k_and_U():
    """The total row: f, u(f), ν_eff (900/73 by G.2b, truncated to 12), k, U(f) = k·u(f);
    the inputs' rows have no k or U(f) (nan), their shares add up to 100."""
    got = propagate("x + 2y", at={"x": "1+-1;nu=4", "y": "2+-1;nu=9"}, coverage=0.95,
                    budget=True)
    assert list(got["input"]) == ["x", "y", "total"]
    assert got["value"][2] == 5.0 and got["u_i(f)"][2] == pytest.approx(math.sqrt(5), 1e-15)
    np.testing.assert_allclose(got["nu"], [4, 9, 900 / 73], rtol=1e-14)
    assert got["share"][:2].sum() == pytest.approx(100.0, rel=1e-14)
    assert np.isnan(got["k"][:2]).all() and np.isnan(got["U(f)"][:2]).all()
    # t_0.975(12) by tests/reference/make_student_t.py's bisection (mpmath 1.4.1)
    assert got["k"][2] == pytest.approx(2.1788128296672289, rel=1e-13)
    assert got["U(f)"][2] == pytest.approx(got["k"][2] * math.sqrt(5), rel=1e-15)
    assert "nu" not in propagate("x", at={"x": "1+-1"}, budget=True)


def test_second_order_budget_shows_air_buoyancy_jcgm_101_9_3():
    """JCGM 101 9.3: u(δm) = 0.0539 mg to first order, 0.0750 mg with eq. 14's terms;
    the pair (ρa, ρW) carries (m/ρW²·u(ρa)u(ρW))², 48 % of u2², though every
    first-order sensitivity of the air-buoyancy inputs is 0."""
    first = propagate(MASS, at=MASS_AT, dist=MASS_DIST)
    assert round(first["u(f)"][0], 4) == 0.0539
    got = propagate(MASS, at=MASS_AT, dist=MASS_DIST, order=2, budget=True)
    rows = {name: i for i, name in enumerate(got["input"])}
    assert list(rows) == ["mRc", "dmRc", "ra", "rW", "rR", "ra*rW", "ra*rR", "total"]
    u2 = got["u_i(f)"][rows["total"]]
    assert round(u2, 4) == 0.0750
    m, ua, uw, ur = 100001.234, 0.1 / math.sqrt(3), 1000 / math.sqrt(3), 50 / math.sqrt(3)
    pair = (m / 8000**2 * ua * uw) ** 2
    assert got["share"][rows["ra*rW"]] == pytest.approx(100 * pair / u2**2, rel=1e-10)
    assert round(got["share"][rows["ra*rW"]]) == 48
    assert got["c"][rows["ra*rW"]] == pytest.approx(-m / 8000**2, rel=1e-12)
    assert got["u_i(f)"][rows["ra*rR"]] == pytest.approx(m / 8000**2 * ua * ur, rel=1e-10)
    assert [got["share"][rows[n]] for n in ("ra", "rW", "rR")] == [0.0, 0.0, 0.0]
    assert got["share"][:-1].sum() == pytest.approx(100.0, rel=1e-12)


def test_second_order_budget_of_gum_h1_by_hand():
    """GUM H.1.7's terms: the pairs (δα, θ) and (αs, δθ) carry (ls·u(δα)u(θ))² and
    (ls·u(αs)u(δθ))²; the inputs' shares add them up to 100 % of u2²."""
    got = propagate(H1_F, at=H1_AT, order=2, budget=True)
    rows = {name: i for i, name in enumerate(got["input"])}
    u2 = got["u_i(f)"][rows["total"]]
    ls = 50000623.0
    assert got["u_i(f)"][rows["da*th"]] == pytest.approx(ls * 0.58e-6 * 0.41, rel=1e-12)
    assert got["u_i(f)"][rows["als*dth"]] == pytest.approx(ls * 1.2e-6 * 0.029, rel=1e-12)
    assert got["share"][:-1].sum() == pytest.approx(100.0, rel=1e-12)
    assert u2 == pytest.approx(propagate(H1_F, at=H1_AT, order=2)["u2(f)"][0], rel=1e-14)


def test_flat_first_order_gets_a_note():
    """x² at x = 0: every sensitivity is 0, u(f) = 0, and a note says why and what helps."""
    got = propagate("x^2", at={"x": "0+-1"})
    assert got["u(f)"][0] == 0.0
    assert len(got.notes) == 1 and "every first-order sensitivity is 0" in got.notes[0]
    assert "second order" in got.notes[0] and "Monte Carlo" in got.notes[0]
    assert propagate("x^2", at={"x": "0+-1"}, order=2).notes == []
    assert propagate("x^2", at={"x": "1+-1"}).notes == []


def test_second_order_budget_of_correlated_inputs_is_refused():
    with pytest.raises(PropagationError) as err:
        propagate("x*y", at={"x": "1+-0.1", "y": "2+-0.1"}, corr={("x", "y"): 0.5},
                  order=2, budget=True)
    assert err.value.param == "budget" and "independent inputs" in err.value.detail
@pytest.mark.parametrize("block", [1, 5, 1 << 20])
def test_jacobian_rows_in_blocks_give_the_closed_forms(monkeypatch, block):
    """u(f) from the Jacobian taken a few rows at a time (one row, a few, all at once),
    by hand: f = [x0 + x1, x0 - x1, 3·y, y·x0] with corr(x0, x1) = ρ, y independent:
    u² = s0² + s1² ± 2ρ s0 s1, 9 s_y², x0² s_y² + y² s0²; r(f0, f1) = (s0² - s1²)/(u0 u1)."""
    monkeypatch.setattr(P, "_ROWS_BLOCK", block)
    s0, s1, sy, rho, x0, y = 0.3, 0.2, 0.1, 0.4, 2.0, -1.5
    got = propagate("[x[0] + x[1], x[0] - x[1], 3*y, y*x[0]]",
                    at={"x": ([x0, 5.0], [s0, s1]), "y": (y, sy)},
                    corr={("x[0]", "x[1]"): rho})
    u0 = math.sqrt(s0**2 + s1**2 + 2 * rho * s0 * s1)
    u1 = math.sqrt(s0**2 + s1**2 - 2 * rho * s0 * s1)
    want = [u0, u1, 3 * sy, math.sqrt(x0**2 * sy**2 + y**2 * s0**2)]
    np.testing.assert_allclose(got["u(f)"], want, rtol=1e-14, atol=0)
    assert got["r(f[0],f[1])"][0] == pytest.approx((s0**2 - s1**2) / (u0 * u1), rel=1e-13)
    # a vector f: the scalar y's estimate is a column, the vector x's is not repeated
    assert "y" in got and "x" not in got
    budget = propagate("[x[0] + x[1], x[0] - x[1], 3*y, y*x[0]]",
                       at={"x": ([x0, 5.0], [s0, s1]), "y": (y, sy)}, budget=True)
    inputs_rows = np.asarray(budget["input"]) != "total"  # each output's total row aside
    np.testing.assert_array_equal(np.asarray(budget["c"])[inputs_rows],
                                  [1, 1, 0, 1, -1, 0, 0, 0, 3, y, 0, x0])
