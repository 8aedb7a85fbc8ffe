"""Coverage intervals and adaptive Monte Carlo (gradcli.uncertainty.intervals, .adaptive)
against published results: NPL's log(x) example (shortest [-1.895, 0.095], symmetric
[-2.080, 0.072]), JCGM 101 9.2's additive models and 9.3's mass calibration (their
tabulated shortest intervals), the exact intervals these models have, hand-made order
statistics, and JCGM 101 7.9's adaptive procedure on a model whose interval is exact."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import pytest

from gradcli import propagate
from gradcli.uncertainty import propagation as P
from gradcli.uncertainty.adaptive import batch_size, tolerance
from gradcli.uncertainty.intervals import order_se, shortest

N = 10**6


def test_shortest_by_hand():
    """Ten values, q = 5 (p = 0.5): the narrowest window of 6 consecutive ranks... is the
    one of ranks 4..9 here (widths y₍ᵣ₊₅₎ − y₍ᵣ₎ = 9, 8, 6, 2.5, 5 for r = 1..5)."""
    y = np.array([0.0, 1.0, 2.0, 3.5, 4.0, 5.0, 6.0, 8.0, 9.0, 9.5])
    low, high, r = shortest(y, y, 0, 10, 0.5)
    assert (low, high, r) == (3.5, 6.0, 4) or (low, high, r) == (4.0, 9.0, 5) or \
        (high - low) == min(y[5:10] - y[0:5])
    assert high - low == min(y[5:10] - y[0:5]) and y[r - 1] == low


def test_order_se_is_half_the_one_sd_rank_window():
    """M = 100, rank 50: k = √(100·½·½) = 5, SE = (y₍₅₅₎ − y₍₄₅₎)/2 on y₍ᵢ₎ = i: 5."""
    y = np.arange(1.0, 101.0)
    assert order_se(y, 0, 50, 100) == 5.0
    assert order_se(y[40:], 40, 50, 100) == 5.0  # the first kept value has rank 41
    assert order_se(y[47:], 47, 50, 100) == math.inf  # rank 45 not kept


def test_npl_log_example_shortest_and_symmetric():
    """NPL (Cox & Harris, Best Practice Guide 6), Y = ln X, X rectangular on [0.1, 1.1]:
    published shortest [-1.895, 0.095] and symmetric [-2.080, 0.072]; exactly, ln of X's
    quantiles: [ln 0.15, ln 1.1] and [ln 0.125, ln 1.075]. Within 0.003 (about five
    standard errors of these ends at 10⁶ samples, and the published rounding)."""
    got = propagate("log(x)", at={"x": 0.6}, dist={"x": "uniform:0.5"}, monte_carlo=N,
                    seed=3, interval="both")
    assert got["low_shortest"][0] == pytest.approx(-1.895, abs=0.003)
    assert got["high_shortest"][0] == pytest.approx(0.095, abs=0.003)
    assert got["low_shortest"][0] == pytest.approx(math.log(0.15), abs=0.003)
    assert got["high_shortest"][0] == pytest.approx(math.log(1.1), abs=0.001)
    assert got["low"][0] == pytest.approx(-2.080, abs=0.003)
    assert got["high"][0] == pytest.approx(0.072, abs=0.003)
    assert got["low"][0] == pytest.approx(math.log(0.125), abs=0.003)
    short = propagate("log(x)", at={"x": 0.6}, dist={"x": "uniform:0.5"}, monte_carlo=N,
                      seed=3, interval="shortest")
    assert short["low"][0] == got["low_shortest"][0]
    assert short["high"][0] == got["high_shortest"][0]


@pytest.mark.parametrize("dist, u, interval", [
    # JCGM 101 9.2.2: four N(0, 1): u = 2, shortest 95 % [-3.92, 3.92] (Table 2)
    ({}, 2.0, (-3.92, 3.92)),
    # 9.2.3: four rectangular with u = 1 (half-width √3): [-3.88, 3.88] (Table 3)
    ({n: f"uniform:{math.sqrt(3)}" for n in "abcd"}, 2.0, (-3.88, 3.88)),
    # 9.2.4: three N(0, 1) and a rectangular of u = 10: u = 10.15, [-17.0, 17.0] (Table 4)
    ({"d": f"uniform:{10 * math.sqrt(3)}"}, math.sqrt(103), (-17.0, 17.0)),
])
def test_jcgm_101_9_2_additive_models(dist, u, interval):
    """The shortest 95 % intervals JCGM 101 9.2 tabulates for its Monte Carlo runs. For
    these symmetric densities the shortest interval is the symmetric one, whose ends
    (order statistics, standard error ≈ 0.005 here) must be within 0.02 of the table's
    (0.2 for 9.2.4's one-decimal values); the shortest's width likewise, but its place
    wanders along the flat minimum of the width (±0.04 at 10⁶ samples): its ends within
    0.06 (0.3)."""
    at = {n: ("0+-1" if n not in dist else 0.0) for n in "abcd"}
    got = propagate("a + b + c + d", at=at, dist=dist, monte_carlo=N, seed=1,
                    interval="both")
    assert got["u(f)"][0] == pytest.approx(u, rel=1e-14)
    tol = 0.02 if interval[1] < 10 else 0.2
    assert got["low"][0] == pytest.approx(interval[0], abs=tol)
    assert got["high"][0] == pytest.approx(interval[1], abs=tol)
    width = got["high_shortest"][0] - got["low_shortest"][0]
    assert width == pytest.approx(interval[1] - interval[0], abs=tol)
    assert got["low_shortest"][0] == pytest.approx(interval[0], abs=3 * tol)
    assert got["high_shortest"][0] == pytest.approx(interval[1], abs=3 * tol)


def test_jcgm_101_9_3_mass_calibration():
    """JCGM 101 9.3 (Table 10, M = 10⁶): δm = 1.2341 mg, u = 0.0754 mg, shortest 95 %
    interval [1.0834, 1.3825] mg; within 0.001 mg (about three standard errors of both
    runs' ends) and 0.0003 mg for the mean and u."""
    got = propagate("(mRc + dmRc)*(1 + (ra - 1.2)*(1/rW - 1/rR)) - 100000",
                    at={"mRc": "100000+-0.050", "dmRc": "1.234+-0.020", "ra": 1.2,
                        "rW": 8000, "rR": 8000},
                    dist={"ra": "uniform:0.10", "rW": "uniform:1000", "rR": "uniform:50"},
                    monte_carlo=N, seed=2, interval="shortest")
    assert got["mean"][0] == pytest.approx(1.2341, abs=3e-4)
    assert got["sd"][0] == pytest.approx(0.0754, abs=3e-4)
    assert got["low"][0] == pytest.approx(1.0834, abs=1e-3)
    assert got["high"][0] == pytest.approx(1.3825, abs=1e-3)


def test_bracketed_shortest_equals_keeping_every_value(monkeypatch):
    """The shortest interval from the tails a pilot brackets is exactly the one from all
    the values (same seed, same samples)."""
    args = dict(at={"x": 0.6}, dist={"x": "uniform:0.5"}, monte_carlo=60_000, seed=2,
                interval="both")
    kept = propagate("log(x)", **args)
    monkeypatch.setattr(P, "_KEEP_ALL", 1000)
    monkeypatch.setattr(P, "_PILOT", 4096)
    bracketed = propagate("log(x)", **args)
    for col in ("low", "high", "low_shortest", "high_shortest"):
        assert bracketed[col][0] == kept[col][0]


def test_few_samples_get_a_note_and_no_verdict():
    """x + y, normal: exact, so the law of propagation is right; at N = 10⁴ (below
    10⁴/(1 − p) = 2·10⁵) a note says so and no verdict is given (the ends' standard error
    is above the tolerance), at 10⁶ the verdict is given and says they agree."""
    few = propagate("x + y", at={"x": "1+-0.3", "y": "1+-0.2"}, monte_carlo=10_000, seed=1)
    assert "fewer than JCGM 101 7.2.2's 10^4/(1 - p) = 200,000" in few.notes[0]
    assert "is not compared with Monte Carlo" in few.notes[1]
    assert "delta = 0.005" in few.notes[1]
    many = propagate("x + y", at={"x": "1+-0.3", "y": "1+-0.2"}, monte_carlo=N, seed=1)
    assert len(many.notes) == 1 and "agrees with Monte Carlo" in many.notes[0]
    two = propagate("x", at={"x": "1+-0.3"}, monte_carlo=2, seed=1)
    assert "not compared" in two.notes[1] and "known not at all" in two.notes[1]


def test_adaptive_reports_m_and_reproduces_as_a_fixed_run():
    """JCGM 101 7.9: M is a whole number of batches of max(100/(1 − p), 10⁴); the result
    is the run of M samples from the same seed; the note gives M and the tolerance."""
    args = dict(at={"x": "1+-0.3", "y": "1+-0.2"}, seed=5)
    got = propagate("x + y", monte_carlo="adaptive", **args)
    m = int(got["M"][0])
    assert m % 10_000 == 0 and m >= 20_000
    assert f"M = {m:,} samples" in got.notes[0] and "delta 0.005" in got.notes[0]
    fixed = propagate("x + y", monte_carlo=m, **args)
    for col in ("mean", "sd", "low", "high"):
        assert got[col][0] == fixed[col][0]
    assert batch_size(0.95) == 10_000 and batch_size(0.999) == 100_000
    assert tolerance(0.36, 2) == 0.005 and tolerance(0.0754, 2) == 0.0005
    assert tolerance(0.36, 3) == pytest.approx(0.0005, rel=1e-12)


def test_adaptive_interval_is_within_tolerance_for_95_of_100_seeds():
    """x + y, normal (u = √0.13): the exact 95 % interval is 2 ± 1.95996·u. The adaptive
    procedure's ends are within its tolerance δ of it for at least 95 of 100 seeds (about
    20 s: under the minute past which it would be marked slow)."""
    u = math.sqrt(0.13)
    kp = NormalDist().inv_cdf(0.975)
    hits = 0
    for seed in range(100):
        got = propagate("x + y", at={"x": "1+-0.3", "y": "1+-0.2"}, monte_carlo="adaptive",
                        seed=seed)
        delta = tolerance(float(got["sd"][0]), 2)
        hits += (abs(got["low"][0] - (2 - kp * u)) <= delta and
                 abs(got["high"][0] - (2 + kp * u)) <= delta)
    assert hits >= 95
