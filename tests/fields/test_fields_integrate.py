"""Line integrals and flux (``gradcli integrate``) against closed forms: the circulation
of (-y, x) around the unit circle is 2π, the work of a gradient field is the potential
difference, arc lengths, the flux of (x, y) through a circle of radius R is 2πR² and of
r̂/r in the plane 2π; Green's theorem's two sides agree within their printed estimates,
and fail to where the field is singular inside the region. The quadrature's constants are
checked by the degrees they integrate exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli as gc
from gradcli.errors import EvaluationError
from gradcli.fields.integrate import GAUSS, KRONROD, NODES, adaptive, adaptive2


def test_the_rule_integrates_the_degrees_it_should_exactly() -> None:
    """K15 is exact to degree 22 and G7 to degree 13 on [-1, 1] (∫xᵏ = 2/(k + 1) for
    even k, 0 for odd): a mistyped node or weight fails here."""
    for k in range(23):
        want = 2 / (k + 1) if k % 2 == 0 else 0.0
        assert abs((KRONROD * NODES**k).sum() - want) < 1e-15, k
        if k <= 13:
            assert abs((GAUSS * NODES**k).sum() - want) < 1e-15, k
    assert abs((GAUSS * NODES**14).sum() - 2 / 15) > 1e-6  # and no further


@pytest.mark.parametrize(("fn", "a", "b", "exact"), [
    (np.exp, 0.0, 3.0, math.exp(3) - 1),
    (lambda t: 1 / (1 + 25 * t * t), -1.0, 1.0, 2 * math.atan(5) / 5),
    (lambda t: np.sin(20 * t) ** 2, 0.0, math.pi, math.pi / 2),
    (lambda t: np.sqrt(t), 0.0, 1.0, 2 / 3),
])
def test_adaptive_meets_the_tolerance_and_its_estimate_bounds_the_error(fn, a, b, exact):  # noqa: ANN001
    value, error, _, done = adaptive(fn, a, b, 1e-10)
    assert done and abs(value - exact) <= error + 4e-16 * abs(exact)
    assert error <= 1e-10 * abs(exact)


def test_adaptive2_on_a_rectangle() -> None:
    value, error, _, done = adaptive2(lambda u, v: np.exp(u) * np.cos(v), (0, 1, 0, 2),
                                      1e-12)
    exact = (math.e - 1) * math.sin(2)
    assert done and abs(value - exact) <= error + 1e-15


def test_circulation_of_the_rotation_field_is_2_pi() -> None:
    got = gc.integrate("[-y, x]", "t: [cos(t), sin(t)], t=0:2pi")
    assert list(got) == ["circulation", "error"]
    assert abs(got["circulation"][0] - 2 * math.pi) <= got["error"][0] + 1e-15


def test_work_of_a_gradient_field_is_the_potential_difference() -> None:
    """φ = x²y + sin(yz) along the twisted cubic r(t) = (t, t², t³), t = 0..1.3."""
    field = "[2*x*y, x^2 + z*cos(y*z), y*cos(y*z)]"
    got = gc.integrate(field, "t: [t, t^2, t^3], t=0:1.3")
    t = 1.3
    exact = t**2 * t**2 + math.sin(t**2 * t**3)
    assert list(got)[0] == "work"
    assert abs(got["work"][0] - exact) <= got["error"][0] + 4e-16 * abs(exact)


def test_scalar_integrals_over_arc_length() -> None:
    """The helix (cos t, sin t, t) is 2π√2 long over one turn; ∫y ds over the upper unit
    half circle is 2."""
    got = gc.integrate("1", "t: [cos(t), sin(t), t], t=0:2pi")
    assert abs(got["integral"][0] - 2 * math.pi * math.sqrt(2)) < 1e-14
    got = gc.integrate("y", "t: [cos(t), sin(t)], t=0:pi")
    assert abs(got["integral"][0] - 2.0) < 1e-14


def test_flux_through_circles() -> None:
    """(x, y) through the circle of radius 2 about (1, -1): div = 2 times the area 4π;
    r̂/r = (x, y)/(x² + y²) through the unit circle about the origin: 2π."""
    got = gc.integrate("[x, y]", "t: [1 + 2cos(t), -1 + 2sin(t)], t=0:2pi", flux=True)
    assert abs(got["flux"][0] - 8 * math.pi) < 1e-13
    got = gc.integrate("[x/(x^2 + y^2), y/(x^2 + y^2)]", disc="0,0,1", flux=True)
    assert abs(got["flux"][0] - 2 * math.pi) < 1e-14


@pytest.mark.parametrize(("field", "region", "flux"), [
    ("[x^2*y, sin(x) + y]", {"box": "0:1,0:2"}, False),
    ("[exp(x)*cos(y), x*y^3]", {"disc": "0.5,-0.25,1.5"}, False),
    ("[x^3 - y, x*y^2]", {"disc": "0,0,2"}, True),
    ("[sin(x*y), cos(x + y)]", {"box": "-1:2,0:1"}, True),
])
def test_greens_theorem_sides_agree_within_their_estimates(field: str, region: dict,
                                                           flux: bool) -> None:
    got = gc.integrate(field, **region, flux=flux, check="green")
    first = list(got)[0]
    gap = abs(got[first][0] - got["green"][0])
    assert gap <= got["error"][0] + got["green_error"][0] + 1e-14 * abs(got["green"][0])


def test_a_singular_field_breaks_greens_theorem_and_the_cli_says_so(cli) -> None:  # noqa: ANN001
    """(-y, x)/(x² + y²) circulates 2π around the origin, where it is not defined; its
    curl is 0 everywhere else, so the area integral is 0: exit 1, with the numbers."""
    status, out, err = cli("integrate", "[-y/(x^2 + y^2), x/(x^2 + y^2)]", "--disc",
                           "0,0,1", "--check", "green", "-f", "csv")
    assert status == 1
    assert out.splitlines()[0] == "circulation,error,green,green_error"
    assert "check: FAILED: the circulation and the area integral differ by 6.28" in err
    status, _, err = cli("integrate", "[-y, x]", "--disc", "0,0,1", "--check", "green")
    assert status == 0 and "check: Green's theorem holds" in err


@pytest.mark.parametrize(("args", "kwargs", "message"), [
    (("[-y, x]", "t: [cos(t), sin(t)]"), {}, "write the path as"),
    (("[-y, x]", "t: [cos(t), sin(t)], s=0:1"), {}, "end it with the parameter's range"),
    (("[-y, x]", "t: [cos(t), sin(t)], t=1:1"), {}, "two different finite ends"),
    (("[-y, x]", "t: [cos(t), sin(t)], t=0:1"), {"check": "green"}, "needs the region"),
    (("x*y", "t: [t, t], t=0:1"), {"flux": True}, "flux of a plane field"),
    (("[-y, x, 1]", "t: [t, t], t=0:1"), {}, "a field of 3 components along a path of 2"),
    (("[-y, a]", "t: [t, t], t=0:1"), {}, "'a' has no value"),
    (("[-y, x]", "t: [t, s], t=0:1"), {}, "'s' has no value"),
    (("[-y, x]",), {"disc": "0,0,-1"}, "a radius > 0"),
    (("[-y, x]",), {"box": "1:0,0:1"}, "each low end first"),
    (("[-y, x]",), {}, "give one of path, disc, box, surface or ball"),
])
def test_refusals(args: tuple, kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        gc.integrate(*args, **kwargs)


def test_held_values_and_renamed_variables() -> None:
    got = gc.integrate("[-k*v, k*u]", "t: [cos(t), sin(t)], t=0:2pi", wrt="u,v",
                       at={"k": 3.0})
    assert abs(got["circulation"][0] - 6 * math.pi) < 1e-13


def test_flux_of_the_coulomb_field_through_a_sphere_is_4_pi() -> None:
    """r̂/r² through the unit sphere, and through a sphere off the origin that still
    encloses it: 4π, whatever the sphere; a graph z = u² + v² over the unit square has
    flux 1 of the field (0, 0, 1) (r_u × r_v = (-2u, -2v, 1))."""
    coulomb = "[x/(x^2+y^2+z^2)^1.5, y/(x^2+y^2+z^2)^1.5, z/(x^2+y^2+z^2)^1.5]"
    for ball in ("0,0,0,1", "0.3,-0.2,0.1,2"):
        got = gc.integrate(coulomb, ball=ball)
        assert abs(got["flux"][0] - 4 * math.pi) <= got["error"][0] + 1e-13
    got = gc.integrate("[0, 0, 1]", surface="u,v: [u, v, u^2 + v^2], u=0:1, v=0:1")
    assert abs(got["flux"][0] - 1.0) < 1e-14


@pytest.mark.parametrize("field", ["[x^3, y*z^2, sin(x) + z]", "[x*y, y*z, z*x]",
                                   "[exp(x)*y, cos(z), x*y*z]"])
def test_divergence_theorem_sides_agree_within_their_estimates(field: str) -> None:
    got = gc.integrate(field, ball="0.5,0,-0.5,1", check="divergence")
    gap = abs(got["flux"][0] - got["divergence"][0])
    assert gap <= got["error"][0] + got["divergence_error"][0] + 1e-14 * abs(got["flux"][0])


def test_the_coulomb_field_breaks_the_divergence_theorem(cli) -> None:  # noqa: ANN001
    coulomb = "[x/(x^2+y^2+z^2)^1.5, y/(x^2+y^2+z^2)^1.5, z/(x^2+y^2+z^2)^1.5]"
    status, _, err = cli("integrate", coulomb, "--ball", "0,0,0,1", "--check", "divergence")
    assert status == 1 and "the flux and the volume integral differ by 12.6" in err
    status, _, err = cli("integrate", "[x, y, z]", "--ball", "0,0,0,1", "--check",
                         "divergence")
    assert status == 0 and "check: the divergence theorem holds" in err


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"surface": "u,v: [u, v], u=0:1, v=0:1"}, "a bracket of 3 components"),
    ({"surface": "u,v: [u, v, 0], u=0:1"}, "write the surface as"),
    ({"surface": "u,v: [u, v, 0], u=1:0, v=0:1"}, "the lower first"),
    ({"surface": "u,v: [u, v, 0], u=0:1, v=0:1", "check": "divergence"}, "give ball"),
    ({"ball": "0,0,0,0"}, "a radius > 0"),
    ({"ball": "0,0,0,1", "check": "green"}, "a surface checks stokes"),
])
def test_surface_refusals(kwargs: dict, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        gc.integrate("[x, y, z]", **kwargs)


def test_stokes_theorem_on_a_hemisphere_and_a_saddle() -> None:
    """The rotation (-y, x, 0) around the upper unit hemisphere's equator: 2π both ways
    (curl = (0, 0, 2) through the hemisphere, whose shadow is the unit disc). F = (yz, x²,
    sin(xy)) on z = uv over [0, 1]²: curl F·(r_u × r_v) = 2u - 2uv there (worked by hand),
    whose integral is 1/2, and so is the circulation."""
    got = gc.integrate("[-y, x, 0]", check="stokes",
                       surface="u,v: [sin(u)*cos(v), sin(u)*sin(v), cos(u)], u=0:pi/2, "
                       "v=0:2pi")
    assert list(got) == ["circulation", "error", "stokes", "stokes_error"]
    for column in ("circulation", "stokes"):
        assert abs(got[column][0] - 2 * math.pi) < 1e-10
    got = gc.integrate("[y*z, x^2, sin(x*y)]", surface="u,v: [u, v, u*v], u=0:1, v=0:1",
                       check="stokes")
    for column in ("circulation", "stokes"):
        assert abs(got[column][0] - 0.5) < 1e-12
    gap = abs(got["circulation"][0] - got["stokes"][0])
    assert gap <= got["error"][0] + got["stokes_error"][0] + 1e-15


def test_stokes_needs_a_surface_with_a_boundary() -> None:
    with pytest.raises(EvaluationError, match="stokes needs a surface with a boundary"):
        gc.integrate("[x, y, z]", ball="0,0,0,1", check="stokes")
