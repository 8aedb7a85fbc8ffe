"""``gradcli descend``: steps, stops, runs and every option, against closed forms.

Gradient descent on f = a·x² with learning rate η is x_k = (1 − 2aη)^k·x₀; with η = 1/4 on
x² that is x₀/2^k, exact in binary, so stop steps and values are known exactly. Newton on
a quadratic lands on the minimum in one step.
"""

from __future__ import annotations

import csv
import io
import json
import math
import sys

import numpy as np
import pytest

from gradcli.cli.main import main
from gradcli.fields.descend import descend
from gradcli.fields.function import FieldFunction
from gradcli.fields.optim import settings


def run(cli, *argv: str) -> tuple[int, list[str], list[list[float]], str]:
    status, out, err = cli(*argv)
    rows = list(csv.reader(io.StringIO(out)))
    header = rows[0] if rows else []
    return status, header, [[float(c) for c in r] for r in rows[1:]], err


def test_columns_step_zero_and_the_closed_form(cli):
    status, header, rows, err = run(cli, "descend", "x^2", "--from", "x=1", "--lr", "0.25",
                                    "--steps", "6")
    assert status == 0
    assert header == ["step", "x", "f", "|grad f|"]
    assert [r[0] for r in rows] == [0, 1, 2, 3, 4, 5, 6]
    assert [r[1] for r in rows] == [2.0 ** -k for k in range(7)]
    assert [r[2] for r in rows] == [4.0 ** -k for k in range(7)]
    assert [r[3] for r in rows] == [2.0 ** (1 - k) for k in range(7)]
    assert err == "stopped at step 6: --steps 6 reached (|grad f| = 0.0312)\n"


def test_every_writes_every_kth_step_and_the_last(cli):
    _, _, rows, _ = run(cli, "descend", "x^2", "--from", "x=1", "--lr", "0.1",
                        "--steps", "10", "--every", "3")
    assert [r[0] for r in rows] == [0, 3, 6, 9, 10]
    np.testing.assert_allclose([r[1] for r in rows], [0.8 ** k for k in (0, 3, 6, 9, 10)],
                               rtol=1e-14)


def test_tol_stops_at_the_first_step_with_a_small_gradient(cli):
    # |grad| = 2·2^-k <= 1e-3 first at k = 11
    status, _, rows, err = run(cli, "descend", "x^2", "--from", "x=1", "--lr", "0.25",
                               "--tol", "1e-3", "--every", "5")
    assert status == 0
    assert [r[0] for r in rows] == [0, 5, 10, 11]
    assert rows[-1][1] == 2.0 ** -11
    assert err.strip() == "stopped at step 11: |grad f| = 0.000977 <= --tol 0.001"


def test_divergence_exits_1_naming_the_step(cli):
    # lr 2 on x²: x_k = (-3)^k, so f = 9^k leaves the doubles at the first k with
    # 9^k > DBL_MAX; that row (f = inf) is the last written
    k = next(k for k in range(1000) if 9 ** k > sys.float_info.max)
    status, _, rows, err = run(cli, "descend", "x^2", "--from", "x=1", "--lr", "2",
                               "--steps", "2000", "--every", "100")
    assert status == 1
    assert err.strip() == f"diverged at step {k}: a value is no longer finite"
    assert rows[-1][0] == k and math.isinf(rows[-1][2])
    assert rows[-2][0] == (k // 100) * 100 and math.isfinite(rows[-2][2])


def test_several_starts_add_a_run_column(cli):
    status, header, rows, err = run(cli, "descend", "x^2 + y^2", "--from", "x=1,y=2",
                                    "--from", "x=-4,y=0", "--lr", "0.25", "--steps", "2")
    assert status == 0
    assert header == ["run", "step", "x", "y", "f", "|grad f|"]
    assert [r[:4] for r in rows] == [[0, 0, 1, 2], [0, 1, 0.5, 1], [0, 2, 0.25, 0.5],
                                     [1, 0, -4, 0], [1, 1, -2, 0], [1, 2, -1, 0]]
    assert err.strip() == "2 runs: 2 ran --steps 2 (by step 2)"


def test_from_grid_is_a_lattice_first_variable_slowest(cli):
    status, header, rows, _ = run(cli, "descend", "x^2 + y^2", "--from-grid", "x=-1:1:3",
                                  "--from-grid", "y=0:1:2", "--steps", "0")
    assert status == 0
    assert header[0] == "run"
    assert [r[2:4] for r in rows] == [[-1, 0], [-1, 1], [0, 0], [0, 1], [1, 0], [1, 1]]
    assert [r[0] for r in rows] == [0, 1, 2, 3, 4, 5]


def test_a_large_lattice_stopping_at_different_steps(cli):
    # 101 starts x0 = -10..10: each stops at the first k with 2|x0|/2^k <= 1e-6 (the
    # batch shrinks as runs finish); its last row is x0/2^k
    status, _, rows, err = run(cli, "descend", "x^2", "--from-grid", "x=-10:10:101",
                               "--lr", "0.25", "--tol", "1e-6", "--every", "1000")
    assert status == 0
    x0 = np.linspace(-10, 10, 101)
    rows = np.array(rows)
    for r, start in enumerate(x0):
        mine = rows[rows[:, 0] == r]
        k = 0 if start == 0 else next(k for k in range(200) if 2 * abs(start) / 2 ** k <= 1e-6)
        assert mine[-1, 1] == k
        assert mine[-1, 2] == start / 2 ** k
    assert err.startswith("101 runs: 101 reached --tol (by step 25)")


def test_held_values_and_vector_variables(cli):
    _, header, rows, _ = run(cli, "descend", "a*x^2", "--from", "x=1", "--at", "a=0.5",
                             "--lr", "0.5", "--steps", "3")
    assert header == ["step", "x", "f", "|grad f|"]
    assert [r[1] for r in rows] == [1.0, 0.5, 0.25, 0.125]
    _, header, rows, _ = run(cli, "descend", "(v[0] - 1)^2 + (v[1] - 2)^2",
                             "--from", "v=[0,0]", "--lr", "0.25", "--steps", "2")
    assert header == ["step", "v[0]", "v[1]", "f", "|grad f|"]
    assert [r[1:3] for r in rows] == [[0, 0], [0.5, 1], [0.75, 1.5]]


def test_newton_solves_a_quadratic_in_one_step(cli):
    status, _, rows, err = run(cli, "descend", "(x-1)^2 + 10(y+2)^2", "--from", "x=5,y=5",
                               "--method", "newton")
    assert status == 0
    assert [r[:3] for r in rows] == [[0, 5, 5], [1, 1, -2]]
    assert err.strip() == "stopped at step 1: no step lowers f (|grad f| = 0)"


def test_newton_maximizing_says_no_step_raises_f(cli):
    status, _, rows, err = run(cli, "descend", "-(x-1)^2", "--from", "x=3", "--method",
                               "newton", "--maximize")
    assert status == 0 and [r[:2] for r in rows] == [[0, 3], [1, 1]]
    assert err.strip() == "stopped at step 1: no step raises f (|grad f| = 0)"


def test_newton_leaves_a_saddle_for_a_minimum():
    # f = x² − y² + y⁴/4: a saddle at 0, minima at (0, ±√2); plain Newton would go to the
    # saddle, the |eigenvalue| step goes downhill
    fn = FieldFunction("x^2 - y^2 + y^4/4", {"x": 0.0, "y": 0.0})
    path = descend(fn, np.array([[1.0, 0.1]]), settings("newton"), steps=100)
    assert path.stop[0] == "stalled"
    np.testing.assert_allclose(path.X[-1], [0.0, math.sqrt(2)], atol=1e-12)
    assert np.all(np.diff(path.f) <= 0)  # every accepted step lowers f


def test_maximize_climbs(cli):
    _, _, rows, _ = run(cli, "descend", "-x^2", "--from", "x=1", "--lr", "0.25",
                        "--steps", "3", "--maximize")
    assert [r[1] for r in rows] == [1.0, 0.5, 0.25, 0.125]


@pytest.mark.parametrize("method", ["adam", "newton"])
def test_a_replay_that_is_not_finite_is_settled_by_the_engine(method):
    class Flaky(FieldFunction):
        """A replay that gives nan once (as prod's rule at a zero would)."""

        calls = 0

        def _spoil(self, G):
            Flaky.calls += 1
            if Flaky.calls == 3:
                G = G.copy()
                G[0] = np.nan
            return G

        def gradient(self, X):
            f, G = super().gradient(X)
            return f, self._spoil(G)

        def hessian(self, X):
            f, G, H = super().hessian(X)
            return f, self._spoil(G), H

    expression = "x^4 + sin(y) + x*y"
    plain = FieldFunction(expression, {"x": 0.0, "y": 0.0})
    flaky = Flaky(expression, {"x": 0.0, "y": 0.0})
    start = np.array([[1.0, 0.5]])
    a = descend(plain, start, settings(method), steps=5)
    b = descend(flaky, start, settings(method), steps=5)
    assert Flaky.calls >= 3 and b.stop[0] == a.stop[0] != "diverged"
    np.testing.assert_array_equal(a.X, b.X)


@pytest.mark.parametrize("argv, message", [
    (["--method", "gd", "--betas", "0.9,0.99"],
     "--betas is a hyper-parameter of adam and adamw, not of --method gd"),
    (["--method", "adam", "--momentum", "0.9"],
     "--momentum is a hyper-parameter of momentum and rmsprop, not of --method adam"),
    (["--method", "momentum", "--nesterov", "--dampening", "0.1"],
     "--nesterov requires a momentum > 0 and zero dampening"),
    (["--method", "adam", "--betas", "1.0,0.9"], "--betas: beta1 must be in [0, 1)"),
    (["--method", "adam", "--betas", "0.9"], "--betas takes two numbers"),
    (["--lr", "-1"], "expected a finite number >= 0, got '-1'"),
    (["--method", "sgd"], "expected one of gd, momentum, adam, adamw, rmsprop, newton"),
    (["--every", "0"], "expected a whole number >= 1"),
    (["--from-grid", "x=0:1:3"], "use --from (points) or --from-grid (a lattice), not both"),
    (["--max-points", "10"], "would record up to 1,002 rows, over the limit of 10"),
])
def test_bad_options_are_one_line_usage_errors(capsys, argv, message):
    status = main(["descend", "x^2", "--from", "x=1", *argv])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert message in err and "Traceback" not in err


def test_other_bad_requests(capsys):
    assert main(["descend", "x^2 + y^2"]) == 2
    assert "no start given: add --from x=1,y=2" in capsys.readouterr().err
    assert main(["descend", "[x, y]", "--from", "x=1,y=2"]) == 2
    assert "descend needs a scalar formula f" in capsys.readouterr().err
    assert main(["descend", "x*a", "--from", "x=1"]) == 2
    err = capsys.readouterr().err
    assert "  x*a\n    ^\n" in err
    assert ("variable 'a' is not bound (give it a start in --from (...,a=VALUE) or "
            "--from-grid, or hold it fixed with --at a=VALUE)") in err
    assert main(["descend", "x^2", "--from", "x=1", "--from", "y=2"]) == 2
    assert "every point must bind the same variables" in capsys.readouterr().err


def test_json_and_npz_output(capsys, tmp_path):
    assert main(["descend", "x^2", "--from", "x=1", "--lr", "0.25", "--steps", "2",
                 "-f", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["columns"] == ["step", "x", "f", "|grad f|"]
    assert doc["rows"][-1] == [2.0, 0.25, 0.0625, 0.5]
    target = tmp_path / "path.npz"
    assert main(["descend", "x^2", "--from", "x=1", "--from", "x=2", "--lr", "0.25",
                 "--steps", "2", "-o", str(target), "-q"]) == 0
    with np.load(target) as data:
        assert data["run"].tolist() == [0, 0, 0, 1, 1, 1]
        assert data["x"].tolist() == [1.0, 0.5, 0.25, 2.0, 1.0, 0.5]
