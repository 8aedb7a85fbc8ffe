"""``gradcli flow --method dopri5``, ``--tol`` and ``--box``, and time grids never built.

Closed forms: x' = −x gives x₀e^{−t}; the rotation [−y, x] from (1, 0) gives (cos t, sin t);
the logistic x' = x(1 − x) from x₀ gives 1/(1 + (1/x₀ − 1)e^{−t}); the constant field
x' = 1 from 0 gives x = t. The damped pendulum has no closed form: dopri5 at tight
tolerances is checked against fixed-step RK4 at h = 1e-4, whose global error there is
about 1e-14 (RK4 is fourth order: 1e-16 per unit time at this step).
"""

from __future__ import annotations

import csv
import io
import math

import numpy as np


def run(cli, *argv: str) -> tuple[int, list[str], np.ndarray, str]:
    status, out, err = cli("flow", *argv)
    rows = list(csv.reader(io.StringIO(out)))
    data = np.array([[float(c) for c in r] for r in rows[1:]]) if len(rows) > 1 else None
    return status, rows[0] if rows else [], data, err


def test_dopri5_follows_exponential_decay_at_every_grid_time(cli):
    """dopri5's rows sit at exactly the grid's times, within its tolerances of x₀e^{−t}."""
    status, header, rows, err = run(cli, "[-x]", "--from", "x=1", "--t", "0:5:11",
                                    "--method", "dopri5", "--rtol", "1e-10", "--atol", "1e-12")
    assert status == 0 and header == ["t", "x", "|F|"]
    assert np.array_equal(rows[:, 0], np.linspace(0, 5, 11))
    assert np.max(np.abs(rows[:, 1] - np.exp(-rows[:, 0]))) < 1e-10
    assert np.allclose(rows[:, 2], np.abs(rows[:, 1]), rtol=1e-15, atol=0)
    assert err.startswith("dopri5: ") and "steps taken" in err


def test_dopri5_takes_far_fewer_steps_than_the_grid_has_times(cli):
    """Adaptive steps are not the grid's: 10,001 output times of the rotation take a few
    hundred steps, and the circle is kept to 1e-9 (cos t, sin t) at every written time."""
    status, _, rows, err = run(cli, "[-y, x]", "--from", "x=1,y=0", "--t", "0:2pi:10001",
                               "--method", "dopri5", "--rtol", "1e-11", "--atol", "1e-13")
    assert status == 0 and rows.shape == (10001, 4)
    t = rows[:, 0]
    assert np.max(np.hypot(rows[:, 1] - np.cos(t), rows[:, 2] - np.sin(t))) < 1e-9
    taken = int(err.split("dopri5: ")[1].split(" steps")[0].replace(",", ""))
    assert 10 < taken < 2000


def test_dopri5_logistic_growth_against_its_closed_form(cli):
    status, _, rows, _ = run(cli, "[x*(1-x)]", "--from", "x=0.1", "--t", "0:12:25",
                             "--method", "dopri5", "--rtol", "1e-10", "--atol", "1e-12", "-q")
    t = rows[:, 0]
    assert status == 0
    assert np.max(np.abs(rows[:, 1] - 1 / (1 + 9 * np.exp(-t)))) < 1e-9


def test_dopri5_agrees_with_fine_fixed_step_rk4_on_the_damped_pendulum(cli):
    _, _, fine, _ = run(cli, "[y, -sin(x) - 0.5y]", "--from", "x=2,y=0", "--t",
                        "0:10:100001", "--every", "10000")
    _, _, adaptive, _ = run(cli, "[y, -sin(x) - 0.5y]", "--from", "x=2,y=0", "--t",
                            "0:10:11", "--method", "dopri5", "--rtol", "1e-11", "--atol",
                            "1e-13", "-q")
    assert fine.shape == adaptive.shape == (11, 4)
    assert np.array_equal(fine[:, 0], adaptive[:, 0])
    assert np.max(np.abs(fine[:, 1:3] - adaptive[:, 1:3])) < 1e-8


def test_a_fixed_point_reached_ends_the_run(cli):
    """--tol: the run ends at the first state whose |F| is under it; x = e^{-t} there, so
    the time is at least ln(1000) (RK4's fixed steps end on the grid's first such time)."""
    status, _, rows, err = run(cli, "[-x]", "--from", "x=1", "--t", "0:100:10001",
                               "--tol", "1e-3")
    assert status == 0
    t_end, x_end = rows[-1, 0], rows[-1, 1]
    assert x_end <= 1e-3 < rows[-2, 1]
    assert math.log(1000) <= t_end < math.log(1000) + 0.01 + 1e-12
    assert abs(x_end - math.exp(-t_end)) < 1e-9
    assert f"stopped at t = {t_end:g}: |F| <= --tol 0.001" in err


def test_leaving_the_box_ends_the_run_on_the_first_state_outside(cli):
    """x' = 1 from 0 is x = t: with --box x=-1:0.5 and steps of 0.01 the last row is t = 0.51."""
    status, _, rows, err = run(cli, "[1 + 0*x]", "--from", "x=0", "--t", "0:10:1001",
                               "--box", "x=-1:0.5")
    assert status == 0 and len(rows) == 52
    assert rows[-1, 0] == np.linspace(0, 10, 1001)[51] and abs(rows[-1, 1] - 0.51) < 1e-12
    assert "left the --box" in err
    status, _, rows, _ = run(cli, "[1 + 0*x]", "--from", "x=0", "--t", "0:10:1001",
                             "--box", "x=-1:0.5", "--method", "dopri5", "-q")
    assert status == 0 and rows[-1, 1] > 0.5 and abs(rows[-1, 1] - rows[-1, 0]) < 1e-12
    assert np.all(rows[:-1, 1] <= 0.5)


def test_a_billion_times_are_never_built(cli):
    """--t 0:1e3:1e9 allocates nothing per time: the run leaves its box after 1,000 steps of
    1e3/(1e9 − 1) and the rows are the start and that state (this took 7.8 GB when the grid
    was an array)."""
    status, _, rows, _ = run(cli, "[1 + 0*x]", "--from", "x=0", "--t", "0:1e3:1e9",
                             "--box", "x=-1:0.001", "--every", "100000000", "-q")
    assert status == 0 and rows.shape == (2, 3)
    assert rows[1, 1] > 0.001 and abs(rows[1, 1] - 1000 * 1e3 / (1e9 - 1)) < 1e-15


def test_time_counts_and_tolerances_out_of_range_are_refused(cli):
    status, _, _, err = run(cli, "[-x]", "--from", "x=1", "--t", "0:1:1e10")
    assert status == 2 and "over the limit of 1,000,000,001" in err
    status, _, _, err = run(cli, "[-x]", "--from", "x=1", "--rtol", "1e-3")
    assert status == 2 and err == "gradcli: error: --rtol sets dopri5's tolerance: add " \
        "--method dopri5\n"
    status, _, _, err = run(cli, "[-x]", "--from", "x=1", "--box", "y=0:1")
    assert status == 2 and "'y' is not a variable of the flow" in err
    status, _, _, err = run(cli, "[-x]", "--from", "x=1", "--box", "x=1:0")
    assert status == 2 and "the lower first" in err
