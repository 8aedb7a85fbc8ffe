"""Degrees of freedom (gradcli.uncertainty.welch): Student's t quantiles against mpmath
(values made by tests/reference/make_student_t.py, mpmath 1.4.1) and GUM Table G.2;
Welch–Satterthwaite against hand-computed cases and GUM H.1's published ν_eff and U₉₉."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from gradcli import propagate
from gradcli.uncertainty.propagation import PropagationError
from gradcli.uncertainty.welch import coverage_factor, effective_dof, t_cdf, t_quantile

T_QUANTILES = [
    (0.5, 0.6, 0.39797542678479069),
    (0.5, 0.975, 164.55767348048853),
    (0.5, 0.995, 4113.9645888041812),
    (0.5, 0.9995, 411396.46252617139),
    (0.5, 0.99999, 1028491156.31634),
    (1, 0.6, 0.32491969623290633),
    (1, 0.975, 12.706204736174705),
    (1, 0.995, 63.656741162871581),
    (1, 0.9995, 636.61924876871962),
    (1, 0.99999, 31830.988607907092),
    (2, 0.6, 0.28867513459481288),
    (2, 0.975, 4.3026527297494639),
    (2, 0.995, 9.9248432009182931),
    (2, 0.9995, 31.599054576443621),
    (2, 0.99999, 223.6034436340372),
    (3, 0.6, 0.27667066233268991),
    (3, 0.975, 3.1824463052837096),
    (3, 0.995, 5.8409093097333573),
    (3, 0.9995, 12.923978636687483),
    (3, 0.99999, 47.927728375933924),
    (4.5, 0.6, 0.2687518355421752),
    (4.5, 0.975, 2.6589123472044038),
    (4.5, 0.995, 4.272823993011293),
    (4.5, 0.9995, 7.580740499372559),
    (4.5, 0.99999, 18.567279910697767),
    (9, 0.6, 0.26095533647391101),
    (9, 0.975, 2.2621571627982055),
    (9, 0.995, 3.2498355415921263),
    (9, 0.9995, 4.7809125859311391),
    (9, 0.99999, 8.1020578793948218),
    (16, 0.6, 0.25759919485514196),
    (16, 0.975, 2.1199052992212547),
    (16, 0.995, 2.9207816224251),
    (16, 0.9995, 4.0149963271840555),
    (16, 0.99999, 5.9594416710554771),
    (16.7, 0.6, 0.25741946635046009),
    (16.7, 0.975, 2.1127064206595908),
    (16.7, 0.995, 2.904680938429359),
    (16.7, 0.9995, 3.9793557757192399),
    (16.7, 0.99999, 5.8682775833055699),
    (30, 0.6, 0.25560536495191277),
    (30, 0.975, 2.0422724563012383),
    (30, 0.995, 2.7499956535672253),
    (30, 0.9995, 3.6459586350420218),
    (30, 0.99999, 5.0540324214464941),
    (100, 0.6, 0.25402218245822782),
    (100, 0.975, 1.9839715185235523),
    (100, 0.995, 2.6258905214380179),
    (100, 0.9995, 3.3904913111642299),
    (100, 0.99999, 4.4784269029927365),
    (1000, 0.6, 0.25341451583949876),
    (1000, 0.975, 1.9623390808264085),
    (1000, 0.995, 2.5807546980659511),
    (1000, 0.9995, 3.3002826484239129),
    (1000, 0.99999, 4.2854376826529579),
    (1e6, 0.6, 0.25334717053784168),
    (1e6, 0.975, 1.959966356814107),
    (1e6, 0.995, 2.5758342201053342),
    (1e6, 0.9995, 3.2905364612486911),
    (1e6, 0.99999, 4.2649112540696597),
]

# GUM Table G.2 (t_p(ν) to the printed two decimals): (ν, p in %, t); its 68.27 % and
# 99.73 % are the normal's ±1σ and ±3σ (its note a): 2Φ(1) - 1 and 2Φ(3) - 1 exactly
P1 = 100 * (2 * NormalDist().cdf(1) - 1)
P3 = 100 * (2 * NormalDist().cdf(3) - 1)
GUM_G2 = [(1, 95, 12.71), (1, 99, 63.66), (1, P3, 235.80), (2, 95, 4.30), (2, 99, 9.92),
          (3, 95, 3.18), (3, 99, 5.84), (10, 95, 2.23), (10, 99, 3.17), (16, 99, 2.92),
          (20, 95, 2.09), (20, 99, 2.85), (50, 95, 2.01), (100, 99, 2.63),
          (math.inf, P1, 1.00), (math.inf, 95, 1.96), (math.inf, 99, 2.58),
          (math.inf, P3, 3.00), (2, P3, 19.21), (10, P3, 3.96)]

H1 = "ls + d - ls*(da*th + als*dth)"
# GUM H.1, Table H.1: each input with its published degrees of freedom (θ and αs: ∞)
H1_AT = {"ls": "50000623+-25;nu=18", "d": "215+-9.7;nu=25.6", "da": "0+-0.58e-6;nu=50",
         "th": "-0.1+-0.41", "als": "11.5e-6+-1.2e-6", "dth": "0+-0.029;nu=2"}


@pytest.mark.parametrize("nu, p, want", T_QUANTILES)
def test_t_quantiles_equal_mpmath(nu, p, want):
    """To 1e-12 relative plus what p's own rounding makes: p as a double is off by up to
    1.1e-16, a relative error of 1.1e-16/(1 - p) in the tail probability, which a tail
    ~ t^-ν turns into 1/ν times that in t (1e-11 relative at p = 0.99999, ν = 1)."""
    rel = 1e-12 + 1e-15 / ((1 - p) * min(nu, 1.0))
    assert t_quantile(p, nu) == pytest.approx(want, rel=rel)
    assert t_quantile(1 - p, nu) == pytest.approx(-want, rel=1e-9)  # symmetry (1-p rounds)
    # the CDF's continued fraction loses about three digits at ν/2 = 5e5 (the quantile
    # uses its 1/ν series there)
    assert t_cdf(want, nu) == pytest.approx(p, rel=1e-13 if nu <= 1000 else 1e-11)


@pytest.mark.parametrize("nu, percent, want", GUM_G2)
def test_t_quantiles_round_to_gum_table_g2(nu, percent, want):
    """GUM Table G.2's t_p(ν), two decimals: k_p for coverage p."""
    assert round(coverage_factor(percent / 100, nu), 2) == want


def test_coverage_factor_truncates_nu_eff():
    """GUM G.4.1 note 1: a non-integer ν_eff is truncated to the next lower integer."""
    assert coverage_factor(0.99, 16.7) == t_quantile(0.995, 16)
    assert coverage_factor(0.95, 0.3) == t_quantile(0.975, 1)


def test_welch_satterthwaite_by_hand():
    """Independent: ν_eff = u⁴/Σ(cᵢuᵢ)⁴/νᵢ (GUM G.2b). f = x + 2y, u = 1, 1, ν = 4, 9:
    u(f)² = 5, ν_eff = 25/(1/4 + 16/9) = 900/73. Correlated (Castrup): f = x + y, u = 1, 2,
    ρ = 0.5, ν = 4, 9: Σc = (2, 5), u(f)² = 7, ν_eff = 49/(2²/4 + 5²/9) = 441/34. Every ν
    infinite: inf."""
    jac = np.array([[1.0, 2.0]])
    got = effective_dof(jac, jac * np.array([1.0, 1.0]), np.array([4.0, 9.0]))
    assert got[0] == pytest.approx(900 / 73, rel=1e-14)
    cov = np.array([[1.0, 1.0], [1.0, 4.0]])
    ones = np.array([[1.0, 1.0]])
    assert effective_dof(ones, ones @ cov, np.array([4.0, 9.0]))[0] == \
        pytest.approx(441 / 34, rel=1e-14)
    assert effective_dof(ones, ones @ cov, np.array([np.inf, np.inf]))[0] == np.inf
    lib = propagate("x + y", at={"x": "0+-1;nu=4", "y": (0, 2, 9)},
                    corr={("x", "y"): 0.5})
    assert lib["nu_eff"][0] == pytest.approx(441 / 34, rel=1e-14)
    assert lib["k"][0] == 2.0  # no coverage asked: k stays 2


def test_gum_h1_nu_eff_and_u99():
    """GUM H.1.6: ν_eff = 16.7 (truncated to 16), t₉₉(16) = 2.92, U₉₉ = 93 nm."""
    got = propagate(H1, at=H1_AT, coverage=0.99)
    assert round(float(got["nu_eff"][0]), 1) == 16.7
    assert round(float(got["k"][0]), 2) == 2.92
    assert round(float(got["U(f)"][0])) == 93
    same = propagate(H1, at={n: v.partition(";")[0] for n, v in H1_AT.items()},
                     nu={"ls": 18, "d": 25.6, "da": 50, "dth": 2}, coverage=0.99)
    assert same["nu_eff"][0] == got["nu_eff"][0]
    fixed = propagate(H1, at=H1_AT, coverage=0.99, k=3)
    assert fixed["k"][0] == 3.0 and fixed["U(f)"][0] == 3 * got["u(f)"][0]


def test_coverage_with_type_b_inputs_is_the_normals_k():
    """Every ν infinite: k_p is the normal's (GUM G.6.6), 1.960 for 95 %."""
    got = propagate("x*y", at={"x": "1+-0.1", "y": "2+-0.1"}, coverage=0.95)
    assert got["nu_eff"][0] == np.inf
    assert got["k"][0] == pytest.approx(1.959963984540054, rel=1e-14)


def test_vector_output_gets_nu_eff_per_component():
    """f = [x, x + y]: ν_eff of f[0] is x's; of f[1] by G.2b, (1+1)²/(1/4 + 1/9)."""
    got = propagate("[x, x + y]", at={"x": "0+-1;nu=4", "y": "0+-1;nu=9"})
    np.testing.assert_allclose(got["nu_eff"], [4.0, 4 / (1 / 4 + 1 / 9)], rtol=1e-14)


@pytest.mark.parametrize("kwargs, param, words", [
    (dict(at={"x": "1+-0.1;nu=0"}), "at", "> 0"),
    (dict(at={"x": "1+-0.1;nu=-3"}), "at", "> 0"),
    (dict(at={"x": "1+-0.1;mu=3"}), "at", "nu=DEGREES"),
    (dict(at={"x": 1.0}, nu={"x": 3}), "nu", "without an uncertainty"),
    (dict(at={"x": "1+-0.1;nu=3"}, nu={"x": 3}), "nu", "give them once"),
    (dict(at={"x": "1+-0.1"}, nu={"y": 3}), "nu", "no estimate"),
])
def test_bad_degrees_of_freedom(kwargs, param, words):
    with pytest.raises(PropagationError) as err:
        propagate("x", **kwargs)
    assert err.value.param == param and words in err.value.detail


def test_cli_coverage_and_nu(cli):
    """--coverage 0.99 with ;nu= in --at and --nu: the H.1 row with nu_eff and k."""
    at = ", ".join(f"{n}={v}" for n, v in H1_AT.items() if n != "dth")
    status, out, err = cli("propagate", H1, "--at", at + ", dth=0+-0.029", "--nu", "dth=2",
                           "--coverage", "0.99")
    assert status == 0, err
    head, row = out.strip().splitlines()
    values = dict(zip(head.split(","), row.split(","), strict=True))
    assert round(float(values["nu_eff"]), 1) == 16.7 and round(float(values["U(f)"])) == 93
    status, out, err = cli("propagate", "x", "--at", "x=1+-0.1;nu=0")
    assert status == 2 and out == ""
    assert err.strip().splitlines() == [
        "gradcli: error: --at x: the degrees of freedom nu must be > 0 (or inf), one or one "
        "per component, not 0"]


def test_inputs_of_one_unit_pool_their_terms():
    """Willink's units: x, y from the same readings (ν = 4 each), z apart (ν = 9). f =
    x + y + z, u = 1, 1, 2, r(x,y) = 0.5: the unit's part is 1 + 1 + 2·0.5 = 3, z's 4;
    ν_eff = 7²/(3²/4 + 4²/9) by hand. Alone, the unit gives its own ν."""
    cov = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 4.0]])
    jac = np.ones((1, 3))
    nu = np.array([4.0, 4.0, 9.0])
    got = effective_dof(jac, jac @ cov, nu, np.array([0, 0, 2]))
    assert got[0] == pytest.approx(49 / (9 / 4 + 16 / 9), rel=1e-14)
    two = np.ones((1, 2))
    alone = effective_dof(two, two @ cov[:2, :2], nu[:2], np.array([0, 0]))
    assert alone[0] == pytest.approx(4.0, rel=1e-14)
    assert coverage_factor(0.95, alone[0] * (1 - 1e-15)) == t_quantile(0.975, 4)


def test_nu_eff_of_many_output_components_streams_the_jacobian():
    """More than 50 output components: J is not kept, ν_eff comes from its rows a block at
    a time. f = x·c + y (c = 1..60), u = 1, 2, ν = 4, 9: ν_eff(c) = (c² + 4)²/(c⁴/4 +
    16/9) by hand."""
    c = np.arange(1.0, 61.0)
    got = propagate("x*c + y", at={"x": "0+-1;nu=4", "y": "0+-2;nu=9", "c": c.tolist()})
    want = (c**2 + 4) ** 2 / (c**4 / 4 + 16 / 9)
    np.testing.assert_allclose(got["nu_eff"], want, rtol=1e-13)


def test_an_infinite_nu_eff_is_not_a_non_finite_warning():
    """Type B inputs' ν_eff = inf is a result, not a failure: no non-finite warning."""
    got = propagate("x", at={"x": "1+-0.1;nu=inf"}, coverage=0.95)
    assert got["nu_eff"][0] == np.inf and got.notes == []
    assert propagate("x", at={"x": "1+-0.1"}, coverage=0.95, budget=True).notes == []
