"""Implicit differentiation (``gradcli implicit``, ``gradcli.implicit``) against explicit
derivatives where y(x) is known (the circle y = ±√(1 - x²); the folium of Descartes
x³ + y³ = 3xy through its parametrization x = 3t/(1 + t³), y = 3t²/(1 + t³); the circle
where a sphere meets a plane, a system), against sympy's ``idiff`` (sympy 1.14.0, values
in tests/reference/implicit_sympy.json written by tests/reference/make_implicit_sympy.py),
and its refusals: a point off the curve, dF/dy = 0, equations and unknowns that do not
match.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc
from gradcli.errors import EvaluationError

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" /
                        "implicit_sympy.json").read_text())


@pytest.mark.parametrize("case", REFERENCE["cases"],
                         ids=[f"{c['expression']} d{c['solve_for']}/d{c['wrt']} at "
                              f"{list(c['at'].values())}" for c in REFERENCE["cases"]])
def test_derivatives_match_sympy_idiff(case: dict) -> None:
    """Every order to 1e-12 of itself: the point is sympy's exact point rounded to
    doubles (an error of 1e-16 relative, amplified by the curve's conditioning, far
    below 1e-12 at these points)."""
    order = len(case["derivatives"])
    got = gc.implicit(case["expression"], case["solve_for"], case["at"], wrt=case["wrt"],
                      order=order)
    y, x = case["solve_for"], case["wrt"]
    names = [f"d{y}/d{x}"] + [f"d{k}{y}/d{x}{k}" for k in range(2, order + 1)]
    have = np.array([float(got[n][0]) for n in names])
    want = np.array(case["derivatives"])
    np.testing.assert_allclose(have, want, rtol=1e-12, atol=0)


def test_reference_was_made_by_sympy() -> None:
    assert REFERENCE["sympy"] == "1.14.0"
    assert REFERENCE["script"] == "tests/reference/make_implicit_sympy.py"


def test_circle_against_the_explicit_branches() -> None:
    """y = ±√(1 - x²): y' = -x/y, y'' = -1/y³, y''' = -3x/y⁵, y'''' = -3(1 + 4x²)/y⁷, at
    40 points on both branches, in one call."""
    x = np.linspace(-0.95, 0.95, 20)
    x = np.concatenate([x, x])
    y = np.concatenate([np.sqrt(1 - x[:20] ** 2), -np.sqrt(1 - x[20:] ** 2)])
    got = gc.implicit("x^2 + y^2 - 1", "y", {"x": x, "y": y}, order=4)
    want = {"dy/dx": -x / y, "d2y/dx2": -1 / y**3, "d3y/dx3": -3 * x / y**5,
            "d4y/dx4": -3 * (1 + 4 * x**2) / y**7}
    for column, value in want.items():
        np.testing.assert_allclose(got[column], value, rtol=1e-12, atol=0, err_msg=column)


def test_folium_of_descartes_against_its_parametrization() -> None:
    """x³ + y³ = 3xy at x = 3t/(1 + t³), y = 3t²/(1 + t³): dy/dx = t(2 - t³)/(1 - 2t³)
    and d²y/dx² = 2(1 + t³)⁴/(3(1 - 2t³)³) (differentiating dy/dx by t and dividing by
    x'(t) = 3(1 - 2t³)/(1 + t³)²); at t = 1, the published point (3/2, 3/2), the tangent
    has slope -1 and y'' = -32/3."""
    t = np.array([0.25, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, -0.5])
    x, y = 3 * t / (1 + t**3), 3 * t**2 / (1 + t**3)
    got = gc.implicit("x^3 + y^3 - 3x*y", "y", {"x": x, "y": y}, order=2)
    np.testing.assert_allclose(got["dy/dx"], t * (2 - t**3) / (1 - 2 * t**3), rtol=1e-12)
    np.testing.assert_allclose(got["d2y/dx2"], 2 * (1 + t**3) ** 4 / (3 * (1 - 2 * t**3) ** 3),
                               rtol=1e-12)
    assert got["dy/dx"][3] == -1.0 and abs(got["d2y/dx2"][3] + 32 / 3) < 1e-13


def test_a_system_the_circle_where_a_sphere_meets_a_plane() -> None:
    """x² + y² + z² = 1 and x + y + z = 0 with y, z unknown: y, z = (-x ± √(2 - 3x²))/2,
    and differentiating both equations, y' = (z - x)/(y - z), z' = (x - y)/(y - z)."""
    x = np.linspace(-0.75, 0.75, 9)
    root = np.sqrt(2 - 3 * x**2)
    y, z = (-x + root) / 2, (-x - root) / 2
    got = gc.implicit("[x^2 + y^2 + z^2 - 1, x + y + z]", "y,z", {"x": x, "y": y, "z": z},
                      order=2)
    np.testing.assert_allclose(got["dy/dx"], (z - x) / (y - z), rtol=1e-12)
    np.testing.assert_allclose(got["dz/dx"], (x - y) / (y - z), rtol=1e-12)
    # y'' from differentiating y' = (z - x)/(y - z) once more, with y' and z' above
    yp, zp = (z - x) / (y - z), (x - y) / (y - z)
    ypp = ((zp - 1) * (y - z) - (z - x) * (yp - zp)) / (y - z) ** 2
    np.testing.assert_allclose(got["d2y/dx2"], ypp, rtol=1e-11)
    np.testing.assert_allclose(got["d2y/dx2"] + got["d2z/dx2"], 0.0, atol=1e-12)


def test_a_surface_gives_a_partial_per_independent_variable() -> None:
    """z(x, y) on the sphere: dz/dx = -x/z, dz/dy = -y/z."""
    got = gc.implicit("x^2 + y^2 + z^2 - 1", "z", {"x": 1 / 3, "y": 2 / 3, "z": 2 / 3})
    assert list(got) == ["x", "y", "z", "|F|", "dz/dx", "dz/dy"]
    np.testing.assert_allclose([got["dz/dx"][0], got["dz/dy"][0]], [-0.5, -1.0], rtol=1e-15)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"at": {"x": 0.6, "y": 0.9}}, "x=0.6, y=0.9 is not on the curve F = 0: |F| = 0.17"),
    ({"at": {"x": 1.0, "y": 0.0}}, "dF/dy = 0: the curve is not the graph of a function"),
    ({"at": {"x": 0.6, "y": 0.8}, "order": 0}, "order must be a whole number from 1 to 30"),
    ({"at": {"x": 0.6}}, "the point needs a value of 'y'"),
    ({"at": {"x": 0.6, "y": 0.8, "q": 1.0}}, "'q' is not a variable of the formula"),
    ({"at": {"x": 0.6, "y": 0.8}, "solve_for": "x,y"}, "every variable of the formula is an "
     "unknown: nothing to differentiate by"),
    ({"at": {"x": 0.6, "y": 0.8}, "solve_for": "w"}, "'w' is not a variable of the formula"),
])
def test_refusals_name_what_is_wrong(kwargs: dict, message: str) -> None:
    kwargs = {"solve_for": "y", **kwargs}
    with pytest.raises(EvaluationError, match=message):
        gc.implicit("x^2 + y^2 - 1", **kwargs)


def test_singular_system_and_two_variables_at_higher_order() -> None:
    with pytest.raises(EvaluationError, match="1 equation and 2 unknowns"):
        gc.implicit("x^2 + y^2 + z^2 - 1", "y,z", {"x": 1 / 3, "y": 2 / 3, "z": 2 / 3})
    with pytest.raises(EvaluationError, match=r"dF/d\(y, z\) is singular"):
        gc.implicit("[y + z - x, 2y + 2z]", "y,z", {"x": 0.0, "y": 1.0, "z": -1.0})
    with pytest.raises(EvaluationError, match="order above 1 needs one independent variable"):
        gc.implicit("x^2 + y^2 + z^2 - 1", "z", {"x": 1 / 3, "y": 2 / 3, "z": 2 / 3}, order=2)


def test_cli_writes_rows_in_every_format_and_refuses_with_one_line(cli, tmp_path) -> None:  # noqa: ANN001
    status, out, err = cli("implicit", "x^2 + y^2 - 1", "--solve-for", "y", "--at",
                           "x=0.6,y=0.8", "--at", "x=0,y=-1", "--order", "2", "-f", "csv")
    assert status == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "x,y,|F|,dy/dx,d2y/dx2"
    assert [float(v) for v in lines[2].split(",")] == [0.0, -1.0, 0.0, 0.0, 1.0]
    status, out, _ = cli("implicit", "x^2 + y^2 - 1", "--solve-for", "y", "--at",
                         "x=0.6,y=0.8", "-f", "json")
    assert status == 0 and json.loads(out)["columns"] == ["x", "y", "|F|", "dy/dx"]
    path = tmp_path / "slopes.npz"
    status, _, _ = cli("implicit", "x^2 + y^2 - 1", "--solve-for", "y", "--at",
                       "x=0.6,y=0.8", "-o", str(path))
    assert status == 0 and abs(float(np.load(path)["dy/dx"][0]) + 0.75) < 1e-15
    status, out, err = cli("implicit", "x^2 + y^2 - 1", "--solve-for", "y", "--at",
                           "x=0.6,y=0.9")
    assert status == 2 and out == "" and "Traceback" not in err
    assert err.strip().splitlines() == [
        "gradcli: error: the point x=0.6, y=0.9 is not on the curve F = 0: |F| = 0.17 > "
        "--tol 1e-09"]
    status, _, err = cli("implicit", "x^2 + y^2 - 1", "--solve-for", "y", "--at",
                         "x=0.6,y=0.9", "--tol", "0.2")
    assert status == 0


def test_more_points_than_max_points_is_refused_before_any_work() -> None:
    x = np.zeros(11)
    with pytest.raises(EvaluationError, match="11 points, over the limit of 10"):
        gc.implicit("x^2 + y^2 - 1", "y", {"x": x, "y": x + 1}, max_points=10)


def test_critical_points_tracked_along_a_parameter(cli) -> None:  # noqa: ANN001
    """f = (x - a)² + 3(y - a²)² + xy has its minimum at x = (12a - 6a²)/11,
    y = 2a - 2x, so dx/da = (12 - 12a)/11 and dy/da = 2 - 2·dx/da; the field
    [y - a, x² - a·y] vanishes at (±a, a): dx/da = ±1, dy/da = 1."""
    a = 1.5
    got = gc.critical("(x - a)^2 + 3*(y - a^2)^2 + x*y", {"x": (-3, 3, 7), "y": (-3, 3, 7)},
                      at={"a": a}, track="a")
    dx = (12 - 12 * a) / 11
    np.testing.assert_allclose([got["dx/da"][0], got["dy/da"][0]], [dx, 2 - 2 * dx],
                               rtol=1e-12)
    assert list(got)[-1] == "type"
    status, out, _ = cli("critical", "[y - a, x^2 - a*y]", "--grid", "x=-3:3:7", "--grid",
                         "y=-3:3:7", "--at", "a=2", "--track", "a", "-f", "json")
    rows = json.loads(out)
    columns = rows["columns"]
    tracked = sorted((r[columns.index("x")], r[columns.index("dx/da")],
                      r[columns.index("dy/da")]) for r in rows["rows"])
    np.testing.assert_allclose(tracked, [(-2.0, -1.0, 1.0), (2.0, 1.0, 1.0)], rtol=1e-12)
    status, out, err = cli("critical", "x^2 + y^2", "--grid", "x=-1:1:3", "--grid",
                           "y=-1:1:3", "--track", "a")
    assert status == 2 and out == "" and "'a' must be a parameter held fixed with --at" in err
