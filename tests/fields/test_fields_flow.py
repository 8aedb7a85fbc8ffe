"""``gradcli flow``: fixed-step RK4 and Euler against exact solutions and error bounds.

On a linear field x' = Ax one RK4 step of size h multiplies by the Taylor polynomial
R(hA) = I + hA + (hA)²/2 + (hA)³/6 + (hA)⁴/24 (Euler: I + hA), so the n-th state is
R(hA)ⁿx₀, to rounding. Against the exact solution expm(tA)x₀ (here from A's
eigendecomposition) the error is at most n·e^{T‖A‖}·(h‖A‖)⁵/120·‖x₀‖ (telescoping
Rⁿ − Eⁿ with ‖R − E‖ <= (h‖A‖)⁵/5!·e^{h‖A‖}). The rotation [−y, x] keeps |x| = 1 up to
|R(ih)|ⁿ = (1 − h⁶/72 + h⁸/576)^{n/2}.
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from gradcli.cli.main import main


def run(cli, *argv: str) -> tuple[int, list[str], np.ndarray, str]:
    status, out, err = cli("flow", *argv)
    rows = list(csv.reader(io.StringIO(out)))
    return status, rows[0], np.array([[float(c) for c in r] for r in rows[1:]]), err


def _rk4(hA: np.ndarray) -> np.ndarray:
    eye = np.eye(len(hA))
    return eye + hA + hA @ hA / 2 + hA @ hA @ hA / 6 + hA @ hA @ hA @ hA / 24


def test_rotation_gives_circles(cli):
    n = 200
    status, header, rows, err = run(cli, "[-y, x]", "--from", "x=1,y=0", "--t",
                                    f"0:2pi:{n + 1}")
    assert status == 0 and err == ""
    assert header == ["t", "x", "y", "|F|"]
    t, x, y, speed = rows.T
    h = 2 * math.pi / n
    radius = (1 - h ** 6 / 72 + h ** 8 / 576) ** (np.arange(n + 1) / 2)
    np.testing.assert_allclose(np.hypot(x, y), radius, rtol=1e-13)
    np.testing.assert_allclose(speed, radius, rtol=1e-13)  # |F| = |(−y, x)| = r
    # phase: within T·h⁴/120 of the exact circle (cos t, sin t)
    assert np.max(np.hypot(x - np.cos(t), y - np.sin(t))) <= 2 * math.pi * h ** 4 / 120 * 1.01
    assert t[-1] == 2 * math.pi and len(t) == n + 1


@pytest.mark.parametrize("a, b, c, d", [(-0.5, 2.0, -1.0, -0.3), (0.2, 1.0, 0.5, -1.0)])
def test_linear_field_against_its_matrix_exponential(cli, a, b, c, d):
    A = np.array([[a, b], [c, d]])
    x0 = np.array([1.0, -0.5])
    T = 3.0
    errors = []
    for n in (60, 120):
        status, _, rows, _ = run(cli, f"[{a}x + {b}y, {c}x + {d}y]", "--from",
                                 f"x={x0[0]},y={x0[1]}", "--t", f"0:{T}:{n + 1}")
        assert status == 0
        h = T / n
        powers = [x0]
        step = _rk4(h * A)
        for _ in range(n):
            powers.append(step @ powers[-1])
        np.testing.assert_allclose(rows[:, 1:3], np.array(powers), rtol=1e-12, atol=1e-14)
        w, V = np.linalg.eig(A)
        exact = np.array([(V @ np.diag(np.exp(w * t)) @ np.linalg.solve(V, x0)).real
                          for t in rows[:, 0]])
        err = np.max(np.linalg.norm(rows[:, 1:3] - exact, axis=1))
        norm = np.linalg.norm(A, 2)
        bound = n * math.exp(T * norm) * (h * norm) ** 5 / 120 * np.linalg.norm(x0)
        assert err <= bound
        errors.append(err)
    assert 12 < errors[0] / errors[1] < 20  # fourth order: halving h divides by ~16


def test_euler_is_first_order(cli):
    status, _, rows, _ = run(cli, "[-x, -2y]", "--from", "x=1,y=1", "--t", "0:1:11",
                             "--method", "euler")
    assert status == 0
    k = np.arange(11)
    np.testing.assert_allclose(rows[:, 1], 0.9 ** k, rtol=1e-14)
    np.testing.assert_allclose(rows[:, 2], 0.8 ** k, rtol=1e-14)


def test_a_scalar_formula_flows_down_its_gradient(cli):
    # x' = −∂f/∂x = −2x: RK4 multiplies by R(−2h) each step
    status, header, rows, _ = run(cli, "x^2", "--from", "x=1", "--t", "0:1:11")
    assert status == 0 and header == ["t", "x", "|F|"]
    z = -0.2
    r = 1 + z + z * z / 2 + z ** 3 / 6 + z ** 4 / 24
    np.testing.assert_allclose(rows[:, 1], r ** np.arange(11), rtol=1e-14)
    np.testing.assert_allclose(rows[:, 2], 2 * rows[:, 1], rtol=1e-15)


def test_many_starts_every_and_held_values(cli):
    status, header, rows, err = run(cli, "[-k*y, k*x]", "--from-grid", "x=1:2:2",
                                    "--from-grid", "y=0", "--at", "k=2", "--t", "0:1:101",
                                    "--every", "40")
    assert status == 0 and err == ""
    assert header == ["run", "t", "x", "y", "|F|"]
    assert rows[:, 0].tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    np.testing.assert_allclose(rows[:, 1], [0, 0.4, 0.8, 1.0] * 2, rtol=1e-15)
    np.testing.assert_allclose(np.hypot(rows[:, 2], rows[:, 3]), [1] * 4 + [2] * 4,
                               rtol=1e-9)
    np.testing.assert_allclose(rows[-1, 2:4], [2 * math.cos(2), 2 * math.sin(2)], rtol=1e-8)


def test_blow_up_exits_1_at_the_time_it_happens(cli):
    # x' = x² from 1 is 1/(1 − t): infinite at t = 1; RK4's states pass every double and
    # overflow a little after
    status, _, rows, err = run(cli, "[x^2]", "--from", "x=1", "--t", "0:2:201")
    assert status == 1
    assert not np.isfinite(rows[-1, 1:]).all()
    assert np.isfinite(rows[:-1, 1:]).all()
    t_end = rows[-1, 0]
    assert 1.0 <= t_end <= 1.2
    assert err.strip() == (f"diverged: the trajectory leaves the finite numbers at "
                           f"t = {t_end:g} (time step {int(round(t_end * 100))})")


@pytest.mark.parametrize("argv, message", [
    (["[x, y, 1]", "--from", "x=1,y=1"], "flow needs a vector field with one component"),
    (["[y, -x]", "--from", "x=1,y=1", "--t", "0:1:1"], "--t '0:1:1': expected start:stop:count"),
    (["[y, -x]", "--from", "x=1,y=1", "--method", "rk5"], "expected one of rk4, euler"),
    (["[y, -x]"], "no start given"),
    (["[y, -x]", "--from-grid", "x"], "--from-grid 'x': give start:stop:count"),
    (["[y, -x]", "--from-grid", "x=0:1:3", "--from-grid", "y=0:1:3", "--max-points", "20"],
     "9 runs × 1,001 times would write up to 9,018 rows, over the limit of 20"),
])
def test_bad_requests(capsys, argv, message):
    status = main(["flow", *argv])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert message in err
