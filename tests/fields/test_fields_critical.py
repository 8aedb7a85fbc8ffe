"""``gradcli critical``: every critical point, its type and eigenvalues, to 1e-9.

Truth: Himmelblau's function and the six-hump camel from mpmath at 40 digits (Newton on
hand-written gradients; tests/reference/make_critical.py made
tests/reference/critical_points.json); closed forms for the rest: x³ − 3x + y³ − 3y at
(±1, ±1), the monkey saddle x³ − 3xy² at 0 (Hessian 0: degenerate), the damped pendulum
[y, −sin x − y/2] at (kπ, 0) with eigenvalues −1/4 ± i√15/4 (even k, stable foci) and
(−1/2 ± √(17)/2)/2 (odd k, saddles).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.cli.main import main

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" /
                        "critical_points.json").read_text())["functions"]


def run(cli, *argv: str) -> tuple[int, list[str], list[list[str]], str]:
    status, out, err = cli("critical", *argv)
    rows = list(csv.reader(io.StringIO(out)))
    return status, rows[0] if rows else [], rows[1:], err


def numbers(rows: list[list[str]], j: int) -> list[float]:
    return [float(r[j]) for r in rows]


@pytest.mark.parametrize("name, seeds", [("himmelblau", 50), ("camel", 41)])
def test_against_mpmath_to_1e_9(cli, name, seeds):
    ref = REFERENCE[name]
    lo, hi = ref["box"]
    status, header, rows, err = run(cli, ref["expression"], "--grid", f"x={lo}:{hi}:{seeds}",
                                    "--grid", f"y={lo}:{hi}:{seeds}")
    assert status == 0 and err == ""
    assert header == ["x", "y", "f", "|grad f|", "eig[0]", "eig[1]", "vec[0][0]", "vec[0][1]",
                      "vec[1][0]", "vec[1][1]", "type"]
    assert len(rows) == len(ref["points"])
    for row, point in zip(rows, ref["points"], strict=True):  # both sorted by x, then y
        got = [float(v) for v in row[:6]]
        want = [float(point["x"]), float(point["y"]), float(point["f"])]
        assert got[0] == pytest.approx(want[0], abs=1e-9)
        assert got[1] == pytest.approx(want[1], abs=1e-9)
        assert got[2] == pytest.approx(want[2], abs=1e-9, rel=1e-12)
        assert got[3] <= 1e-9
        eig = [float(e) for e in point["eig"]]
        assert got[4:6] == pytest.approx(eig, rel=1e-9)
        assert row[-1] == point["type"]


def test_himmelblau_has_four_minima_one_maximum_four_saddles(cli):
    _, _, rows, _ = run(cli, REFERENCE["himmelblau"]["expression"], "--grid", "x=-5:5:50",
                        "--grid", "y=-5:5:50")
    types = [r[-1] for r in rows]
    assert sorted(types) == ["maximum"] + ["minimum"] * 4 + ["saddle"] * 4
    assert [r[:2] for r in rows if r[-1] == "minimum"][2] == ["3.0", "2.0"]


def test_the_issue_example_and_a_table(cli):
    status, header, rows, _ = run(cli, "x^3 - 3x + y^3 - 3y", "--grid", "x=-3:3:13",
                                  "--grid", "y=-3:3:13")
    assert status == 0
    # the Hessian is diag(6x, 6y): its eigenvectors are the axes, (1, 0) with 6x
    x_first, y_first = ["1.0", "0.0", "0.0", "1.0"], ["0.0", "1.0", "1.0", "0.0"]
    assert rows == [["-1.0", "-1.0", "4.0", "0.0", "-6.0", "-6.0", *x_first, "maximum"],
                    ["-1.0", "1.0", "0.0", "0.0", "-6.0", "6.0", *x_first, "saddle"],
                    ["1.0", "-1.0", "0.0", "0.0", "-6.0", "6.0", *y_first, "saddle"],
                    ["1.0", "1.0", "-4.0", "0.0", "6.0", "6.0", *x_first, "minimum"]]


def test_monkey_saddle_is_degenerate(cli):
    status, _, rows, _ = run(cli, "x^3 - 3x*y^2", "--grid", "x=-1:1:21", "--grid",
                             "y=-1:1:21")
    assert status == 0 and len(rows) == 1
    x, y, f, g, e0, e1 = (float(v) for v in rows[0][:6])
    assert abs(x) <= 1e-9 and abs(y) <= 1e-9 and abs(f) <= 1e-27
    assert abs(e0) <= 1e-8 and abs(e1) <= 1e-8
    assert rows[0][-1] == "degenerate"


@pytest.mark.parametrize("formula, grid", [
    ("x^4 + y^2", ["--grid", "x=-1:1:6", "--grid", "y=-1:1:6"]),
    ("x^2 + y^4", ["--grid", "x=-1:1:6", "--grid", "y=-1:1:6"]),
    ("x^4 + y^4 + z^2", ["--grid", "x=-1:1:4", "--grid", "y=-1:1:4", "--grid", "z=-1:1:4"]),
])
def test_a_degenerate_minimum_curved_in_one_direction_is_one_point_at_0(cli, formula,
                                                                         grid):
    # one direction's Hessian entry vanishes (12x² at 0) while the other's stays 2: a damping
    # floor scaled to the whole Hessian stalled those seeds near ±2e-5, and two were kept
    status, header, rows, _ = run(cli, formula, *grid)
    assert status == 0 and len(rows) == 1
    n = header.index("f")
    point = [float(v) for v in rows[0][:n]]
    assert max(abs(v) for v in point) <= 1e-9
    assert rows[0][-1] == "degenerate"


def test_damped_pendulum_foci_and_saddles(cli):
    status, header, rows, _ = run(cli, "[y, -sin(x) - 0.5y]", "--grid", "x=-7:7:29",
                                  "--grid", "y=-3:3:13")
    assert status == 0
    assert header == ["x", "y", "|F|", "re[0]", "im[0]", "re[1]", "im[1]", "vec[0][0]",
                      "vec[0][1]", "vec[1][0]", "vec[1][1]", "type"]
    assert len(rows) == 5
    root = math.sqrt(4.25)
    for k, row in zip(range(-2, 3), rows, strict=True):
        v = [float(c) for c in row[:7]]
        assert v[0] == pytest.approx(k * math.pi, abs=1e-9) and abs(v[1]) <= 1e-9
        if k % 2 == 0:
            assert row[11] == "stable focus"
            assert v[3:7] == pytest.approx([-0.25, -math.sqrt(15) / 4, -0.25,
                                            math.sqrt(15) / 4], abs=1e-9)
        else:
            assert row[11] == "saddle"
            assert v[3:7] == pytest.approx([(-0.5 - root) / 2, 0, (-0.5 + root) / 2, 0],
                                            abs=1e-9)


PENDULUM = ["[y, -sin(x) - 0.5y]", "--grid", "x=-4:4:17", "--grid", "y=-2:2:9"]


def test_rounding_at_the_pendulums_saddles_prints_as_zero(cli):
    """The iteration leaves y at ±1.5e-23 on an AVX-512 CPU (OpenBLAS's SkylakeX kernel) and
    at 0 elsewhere, and |F| = |sin(fl(π))| = 1.2e-16 (or 1.2246467261769868e-16 with that
    y): rounding, printed as 0 on every machine. 1.2e-16 is below 4ε·‖J‖·‖x‖ = 4.2e-15 (‖J‖
    = 1.5, ‖x‖ = π)."""
    status, _, rows, _ = run(cli, *PENDULUM)
    assert status == 0 and [r[-1] for r in rows] == ["saddle", "stable focus", "saddle"]
    assert [r[1] for r in rows] == ["0.0", "0.0", "0.0"]  # y
    assert [r[2] for r in rows] == ["0.0", "0.0", "0.0"]  # |F|
    assert numbers(rows, 0) == pytest.approx([-math.pi, 0, math.pi], rel=1e-15)


def test_a_degenerate_point_left_at_2e_14_prints_as_the_origin(cli):
    """x⁴ + y² from seeds that miss 0: the linear convergence stops at x = -2.0e-14 (1.5e-15
    of the box's diagonal, 13.9), which prints as 0, with f, |grad f| and the eigenvalues at
    the origin: 0, 0, (0, 2). The Hessian's 12x² = 5e-27 there was an eigenvalue the type
    already counted as 0."""
    status, _, rows, _ = run(cli, "x^4 + y^2", "--grid", "x=-5:5:10", "--grid",
                             "y=-4.7:5:10")
    assert status == 0 and len(rows) == 1
    assert rows[0][:6] == ["0.0", "0.0", "0.0", "0.0", "0.0", "2.0"]
    assert rows[0][-1] == "degenerate"


@pytest.mark.parametrize("root, x", [("1e-9", "1e-09"), ("1e-14", "0.0")])
def test_only_a_coordinate_within_1e_13_of_the_box_is_zero(cli, root, x):
    """The box [-1, 1]² has a diagonal of 2.83: a root at 1e-9 is a position and printed as
    found; one at 1e-14 is within 1e-13·2.83 of 0, printed as 0 with the residual there
    (1e-14, above the rounding floor, which is 0 at the origin), not hidden."""
    status, _, rows, _ = run(cli, f"[x - {root}, y]", "--grid", "x=-1:1:5", "--grid",
                             "y=-1:1:5")
    assert status == 0 and len(rows) == 1
    assert rows[0][0] == x and rows[0][1] == "0.0"
    assert float(rows[0][2]) == (0.0 if x != "0.0" else float(root))


def _avx512() -> str:
    """numpy's AVX-512 code paths this CPU runs (as .ci/kernels.py names them)."""
    from numpy._core._multiarray_umath import __cpu_dispatch__ as targets
    from numpy._core._multiarray_umath import __cpu_features__ as features

    return " ".join(k for k in targets if ("AVX512" in k or k == "X86_V4") and features.get(k))


def test_the_pendulum_prints_the_same_bytes_under_every_kernel():
    """The documented example under OpenBLAS's Haswell kernel, its SkylakeX kernel (where the
    CPU has AVX-512: the one that left y = 1.5e-23) and numpy's AVX-512 code switched off:
    the same output, byte for byte, in the columns the page shows (the table)."""
    envs = [{"OPENBLAS_CORETYPE": "Haswell"}]
    if _avx512():
        envs += [{"OPENBLAS_CORETYPE": "SkylakeX"}, {"NPY_DISABLE_CPU_FEATURES": _avx512()}]
    outs = set()
    for extra in envs:
        env = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES")}
        done = subprocess.run([sys.executable, "-m", "gradcli", "critical", *PENDULUM, "-f",
                               "table"], env=env | extra | {"COLUMNS": "100"},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outs.add(done.stdout)
    assert len(outs) == 1
    cells = {line.split("│")[1].strip(): line.split("│")[2:-1]
             for line in outs.pop().splitlines() if line.startswith("│")}
    assert [c.strip() for c in cells["y"] + cells["|F|"]] == ["0"] * 6


@pytest.mark.parametrize("field, kind", [
    ("[-x, -2y]", "stable node"), ("[x, 2y]", "unstable node"), ("[x, -y]", "saddle"),
    ("[-x - y, x - y]", "stable focus"), ("[x - y, x + y]", "unstable focus"),
    ("[-y, x]", "center"), ("[x^2, y]", "degenerate"),
])
def test_every_field_type(cli, field, kind):
    status, _, rows, _ = run(cli, field, "--grid", "x=-1:1:5", "--grid", "y=-1:1:5")
    assert status == 0 and [r[-1] for r in rows] == [kind]


def test_one_and_three_variables(cli):
    _, header, rows, _ = run(cli, "x^3 - 3x", "--grid", "x=-3:3:31")
    assert header == ["x", "f", "|grad f|", "eig[0]", "vec[0][0]", "type"]
    assert rows == [["-1.0", "2.0", "0.0", "-6.0", "1.0", "maximum"],
                    ["1.0", "-2.0", "0.0", "6.0", "1.0", "minimum"]]
    _, header, rows, _ = run(cli, "x^2 + y^2 - z^2 + x*z", "--grid", "x=-1:1:5",
                             "--grid", "y=-1:1:5", "--grid", "z=-1:1:5")
    assert header[5:8] == ["eig[0]", "eig[1]", "eig[2]"] and header[-1] == "type"
    assert len(rows) == 1 and rows[0][-1] == "saddle"
    # eigenvalues of [[2,0,1],[0,2,0],[1,0,-2]]: 2 and ±sqrt(5)
    assert [float(v) for v in rows[0][5:8]] == pytest.approx([-math.sqrt(5), 2, math.sqrt(5)],
                                                             rel=1e-12)


def test_only_points_inside_the_box(cli):
    # x³ − 3x has critical points at ±1; the box 0..3 holds one of them
    _, _, rows, _ = run(cli, "x^3 - 3x", "--grid", "x=0:3:7")
    assert [r[0] for r in rows] == ["1.0"]


def test_nothing_found_says_so_and_exits_0(cli):
    status, header, rows, err = run(cli, "x^2 + 1", "--grid", "x=3:5:5")
    assert status == 0 and rows == []
    assert header == ["x", "f", "|grad f|", "eig[0]", "vec[0][0]", "type"]
    assert err == "no critical points found inside the grid's box\n"
    status, header, rows, err = run(cli, "exp(x)", "--grid", "x=-5:5:11")
    assert status == 0 and rows == [] and "no critical points" in err


def test_seeds_from_a_points_file_and_held_parameters(cli, tmp_path):
    seeds = tmp_path / "seeds.csv"
    seeds.write_text("x,y\n0.9,0.8\n-0.7,1.3\n1.1,1.2\n")
    status, _, rows, _ = run(cli, "x^3 - 3x + y^3 - 3y", "--points", str(seeds))
    assert status == 0
    assert [r[:2] + [r[-1]] for r in rows] == [["-1.0", "1.0", "saddle"],
                                                ["1.0", "1.0", "minimum"]]
    _, _, rows, _ = run(cli, "x^2 + a*y^2", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5",
                        "--at", "a=-1")
    assert [r[-1] for r in rows] == ["saddle"]


def test_the_same_command_gives_the_same_rows(cli):
    argv = ["sin(x)*sin(y)", "--grid", "x=-4:4:33", "--grid", "y=-4:4:33"]
    first = run(cli, *argv)
    second = run(cli, *argv)
    assert first == second
    xs = [(float(r[0]), float(r[1])) for r in first[2]]
    assert xs == sorted(xs)
    # saddles at (jπ, kπ) for j, k in -1..1; extrema at (±π/2, ±π/2)
    types = [r[-1] for r in first[2]]
    assert types.count("saddle") == 9
    assert types.count("minimum") == 2 and types.count("maximum") == 2


def test_bad_requests(capsys):
    assert main(["critical", "[x, y, x*y]", "--grid", "x=-1:1:3", "--grid", "y=-1:1:3"]) == 2
    assert "critical needs a scalar formula f or a vector field" in capsys.readouterr().err
    assert main(["critical", "x^2"]) == 2
    assert "no seeds given" in capsys.readouterr().err
    assert main(["critical", "x^2 + y^2", "--grid", "x=-1:1:3"]) == 2
    assert ("variable 'y' is not bound (sample it with --grid y=START:STOP:COUNT, or hold it "
            "fixed with --at y=VALUE)") in capsys.readouterr().err
    assert main(["critical", "x^2", "--grid", "x=0:1:3", "-o", "out.txt"]) == 2
    assert "unknown output extension" in capsys.readouterr().err


def test_npz_and_table_output(capsys, tmp_path):
    target = tmp_path / "crit.npz"
    assert main(["critical", "x^3 - 3x", "--grid", "x=-3:3:31", "-o", str(target)]) == 0
    with np.load(target, allow_pickle=False) as data:
        assert data["x"].tolist() == [-1.0, 1.0]
        assert data["type"].tolist() == ["maximum", "minimum"]
    assert main(["critical", "x^3 - 3x", "--grid", "x=-3:3:31", "-f", "table"]) == 0
    out = capsys.readouterr().out
    assert "maximum" in out and "eig[0]" in out


def _vectors(header: list[str], row: list[str], n: int) -> np.ndarray:
    return np.array([[float(row[header.index(f"vec[{i}][{k}]")]) for k in range(n)]
                     for i in range(n)])


def test_eigenvectors_of_a_saddle_are_the_diagonals_signed_by_their_largest_component(cli):
    """f = x*y: Hessian [[0, 1], [1, 0]], eigenvalue -1 along (1, -1)/sqrt(2) and +1 along
    (1, 1)/sqrt(2); on a tie of magnitudes the first component is the positive one."""
    status, header, rows, _ = run(cli, "x*y", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5")
    assert status == 0 and len(rows) == 1
    r = 1 / math.sqrt(2)
    np.testing.assert_allclose(_vectors(header, rows[0], 2), [[r, -r], [r, r]], atol=1e-15)


def test_eigenvectors_of_the_pendulums_saddle_and_none_for_its_focus(cli):
    """[y, -sin(x) - 0.5y] at (pi, 0): J = [[0, 1], [1, -0.5]], eigenvalues
    l = (-0.5 -+ sqrt(4.25))/2, eigenvectors along (1, l). For l = -1.28 the second
    component is the largest, so the sign turns it positive: (-1, -l)/|.|; for l = 0.78 it
    is (1, l)/|.|. The focus at 0 has complex eigenvalues: nan."""
    status, header, rows, _ = run(cli, "[y, -sin(x) - 0.5y]", "--grid", "x=-4:4:17",
                                  "--grid", "y=-2:2:9")
    assert status == 0 and [r[-1] for r in rows] == ["saddle", "stable focus", "saddle"]
    low, high = (-0.5 - math.sqrt(4.25)) / 2, (-0.5 + math.sqrt(4.25)) / 2
    want = [np.array([-1, -low]) / math.hypot(1, low), np.array([1, high]) / math.hypot(1, high)]
    for row in (rows[0], rows[2]):
        got = _vectors(header, row, 2)
        np.testing.assert_allclose(got, want, atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-15)
    assert np.isnan(_vectors(header, rows[1], 2)).all()


def test_eigenvectors_in_three_variables_are_orthonormal_eigenvectors(cli):
    """x^2 + y^2 - z^2 + x*z: Hessian [[2, 0, 1], [0, 2, 0], [1, 0, -2]]; by hand the
    eigenvalue 2 has (0, 1, 0) and +-sqrt(5) have (1, 0, sqrt(5) - 2) and
    (sqrt(5) - 2, 0, -1) up to length and sign."""
    _, header, rows, _ = run(cli, "x^2 + y^2 - z^2 + x*z", "--grid", "x=-1:1:5",
                             "--grid", "y=-1:1:5", "--grid", "z=-1:1:5")
    got = _vectors(header, rows[0], 3)
    s5 = math.sqrt(5)
    low = np.array([s5 - 2, 0, -1]) / math.hypot(s5 - 2, 1)  # largest is -1: flipped
    high = np.array([1, 0, s5 - 2]) / math.hypot(1, s5 - 2)
    np.testing.assert_allclose(got, [-low, [0, 1, 0], high], atol=1e-12)
