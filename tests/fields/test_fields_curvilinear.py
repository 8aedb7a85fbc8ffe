"""grad, div, curl and the Laplacian in polar, cylindrical and spherical coordinates
(``--coords``) against textbook closed forms, and against the Cartesian result at the
same physical point rotated into the orthonormal basis (ê_r, ê_θ, ê_φ), at 100 random
points per system and operator, 1e-12 of the result's scale.

The Cartesian fields are written once as templates over {x}, {y}, {z}; the curvilinear
formula is the same template with x = r·sin θ·cos φ (...) put in, so both describe one
field. The comparison scale is the size of the Cartesian derivatives (their largest
magnitude over the components, and the Laplacian's terms), the rounding both carry.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.errors import EvaluationError
from gradcli.fields.curvilinear import curvilinear_columns, curvilinear_formulas

RNG = np.random.default_rng(20261128)
N = 100

#: system -> (coordinate names, x, y, z of the coordinates as text, sampler of points)
SYSTEMS = {
    "polar": (("r", "theta"), ("(r*cos(theta))", "(r*sin(theta))"),
              lambda: {"r": RNG.uniform(0.2, 3, N), "theta": RNG.uniform(-np.pi, np.pi, N)}),
    "cylindrical": (("r", "phi", "z"), ("(r*cos(phi))", "(r*sin(phi))", "(z)"),
                    lambda: {"r": RNG.uniform(0.2, 3, N), "phi": RNG.uniform(-np.pi, np.pi, N),
                             "z": RNG.uniform(-2, 2, N)}),
    "spherical": (("r", "theta", "phi"),
                  ("(r*sin(theta)*cos(phi))", "(r*sin(theta)*sin(phi))", "(r*cos(theta))"),
                  lambda: {"r": RNG.uniform(0.2, 3, N), "theta": RNG.uniform(0.1, 3.0, N),
                           "phi": RNG.uniform(-np.pi, np.pi, N)}),
}
SCALAR = {2: "{x}^2*{y} + sin({x} - {y}) + exp(0.3*{y})",
          3: "{x}^2*{y} + sin({z})*{x} + exp(0.3*{y}*{z}) + {z}^3"}
FIELD = {2: ["{x}*{y}^2 + cos({y})", "sin({x}) - {x}^3*{y}"],
         3: ["{y}*{z} + {x}^2", "sin({x}*{z}) - {y}", "{x}*{y}*{z} + exp(0.2*{x})"]}


def _basis(system: str, p: dict[str, np.ndarray]) -> np.ndarray:
    """The orthonormal basis vectors (rows: ê_1, ê_2[, ê_3]) in Cartesian components,
    (n, n, N)."""
    if system == "polar":
        t = p["theta"]
        return np.array([[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]])
    if system == "cylindrical":
        f, one, zero = p["phi"], np.ones(N), np.zeros(N)
        return np.array([[np.cos(f), np.sin(f), zero], [-np.sin(f), np.cos(f), zero],
                         [zero, zero, one]])
    t, f = p["theta"], p["phi"]
    return np.array([[np.sin(t) * np.cos(f), np.sin(t) * np.sin(f), np.cos(t)],
                     [np.cos(t) * np.cos(f), np.cos(t) * np.sin(f), -np.sin(t)],
                     [-np.sin(f), np.cos(f), np.zeros(N)]])


def _cartesian(system: str, p: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    if system == "polar":
        return {"x": p["r"] * np.cos(p["theta"]), "y": p["r"] * np.sin(p["theta"])}
    if system == "cylindrical":
        return {"x": p["r"] * np.cos(p["phi"]), "y": p["r"] * np.sin(p["phi"]), "z": p["z"]}
    return {"x": p["r"] * np.sin(p["theta"]) * np.cos(p["phi"]),
            "y": p["r"] * np.sin(p["theta"]) * np.sin(p["phi"]),
            "z": p["r"] * np.cos(p["theta"])}


def _cartesian_eval(text: str, what: str, xyz: dict[str, np.ndarray]) -> dict:
    import gradcli as gc

    return gc.evaluate(text, what, points=xyz, wrt=list(xyz))


def _close(got: np.ndarray, want: np.ndarray, scale: np.ndarray, what: str) -> None:
    gap = np.abs(got - want) / scale
    assert gap.max() <= 1e-12, (what, gap.max())


@pytest.mark.parametrize("system", SYSTEMS)
def test_gradient_equals_the_cartesian_gradient_rotated_into_the_basis(system: str) -> None:
    names, xyz_text, sample = SYSTEMS[system]
    n = len(names)
    keys = dict(zip("xyz", xyz_text, strict=False))
    p = sample()
    got = curvilinear_columns(SCALAR[n].format(**keys), "grad", system, {"points": p})
    xyz = _cartesian(system, p)
    cart = _cartesian_eval(SCALAR[n].format(x="x", y="y", z="z"), "grad", xyz)
    g = np.stack([cart[f"df/d{c}"] for c in "xyz"[:n]])
    E = _basis(system, p)
    scale = np.abs(g).max(axis=0) + 1e-300
    for i, q in enumerate(names):
        _close(got[f"grad_{q}"], (E[i] * g).sum(axis=0), scale, f"grad_{q}")


@pytest.mark.parametrize("system", SYSTEMS)
def test_divergence_and_curl_equal_the_cartesian_ones(system: str) -> None:
    """The field's physical components are G·ê_i of the Cartesian field G, as text; div
    is a scalar (the same in both), curl a vector rotated like the gradient (2-D: the
    scalar ∂Q/∂x - ∂P/∂y)."""
    names, xyz_text, sample = SYSTEMS[system]
    n = len(names)
    keys = dict(zip("xyz", xyz_text, strict=False))
    basis_text = _basis_text(system, names)
    G = [c.format(**keys) for c in FIELD[n]]
    components = [" + ".join(f"({b})*({g})" for b, g in zip(row, G, strict=True))
                  for row in basis_text]
    field = "[" + ", ".join(components) + "]"
    p = sample()
    xyz = _cartesian(system, p)
    cart_text = "[" + ", ".join(c.format(x="x", y="y", z="z") for c in FIELD[n]) + "]"
    jac = _cartesian_eval(cart_text, "jacobian", xyz)
    Jc = np.array([[jac[f"df[{i}]/d{c}"] for c in "xyz"[:n]] for i in range(n)])
    scale = np.abs(Jc).max(axis=(0, 1)) + 1e-300
    div = curvilinear_columns(field, "div", system, {"points": p})
    _close(div["div"], np.trace(Jc), scale, "div")
    curl = curvilinear_columns(field, "curl", system, {"points": p})
    if n == 2:
        _close(curl["curl"], Jc[1, 0] - Jc[0, 1], scale, "curl")
        return
    c = np.stack([Jc[2, 1] - Jc[1, 2], Jc[0, 2] - Jc[2, 0], Jc[1, 0] - Jc[0, 1]])
    E = _basis(system, p)
    for i, q in enumerate(names):
        _close(curl[f"curl_{q}"], (E[i] * c).sum(axis=0), scale, f"curl_{q}")


def _basis_text(system: str, names: tuple[str, ...]) -> list[list[str]]:
    """ê_i's Cartesian components as text over the coordinates (rows of ``_basis``)."""
    if system == "polar":
        t = names[1]
        return [[f"cos({t})", f"sin({t})"], [f"-sin({t})", f"cos({t})"]]
    if system == "cylindrical":
        f = names[1]
        return [[f"cos({f})", f"sin({f})", "0"], [f"-sin({f})", f"cos({f})", "0"],
                ["0", "0", "1"]]
    t, f = names[1], names[2]
    return [[f"sin({t})*cos({f})", f"sin({t})*sin({f})", f"cos({t})"],
            [f"cos({t})*cos({f})", f"cos({t})*sin({f})", f"-sin({t})"],
            [f"-sin({f})", f"cos({f})", "0"]]


@pytest.mark.parametrize("system", SYSTEMS)
def test_laplacian_equals_the_cartesian_laplacian(system: str) -> None:
    names, xyz_text, sample = SYSTEMS[system]
    n = len(names)
    keys = dict(zip("xyz", xyz_text, strict=False))
    p = sample()
    got = curvilinear_columns(SCALAR[n].format(**keys), "laplacian", system, {"points": p})
    xyz = _cartesian(system, p)
    hess = _cartesian_eval(SCALAR[n].format(x="x", y="y", z="z"), "hessian", xyz)
    terms = np.stack([hess[f"d2f/d{c}d{c}"] for c in "xyz"[:n]])
    grad = _cartesian_eval(SCALAR[n].format(x="x", y="y", z="z"), "grad", xyz)
    size = np.abs(terms).sum(axis=0) + np.stack(
        [np.abs(grad[f"df/d{c}"]) for c in "xyz"[:n]]).sum(axis=0) / p["r"]
    _close(got["laplacian"], terms.sum(axis=0), size, "laplacian")


def test_textbook_closed_forms() -> None:
    """∇²(1/r) = 0 and ∇·(r̂/r²) = 0 away from the origin; ∇(r² sin θ cos φ) = (2r sin θ
    cos φ, r cos θ cos φ, -r sin φ); the curl of φ̂/r (cylindrical) is 0; the rigid
    rotation r sin θ φ̂ has curl 2ẑ = (2 cos θ, -2 sin θ, 0); ∇²(r³ cos 3θ) = 0 (polar)."""
    p = SYSTEMS["spherical"][2]()
    r, t, f = p["r"], p["theta"], p["phi"]
    assert np.abs(curvilinear_columns("1/r", "laplacian", "spherical",
                                      {"points": p})["laplacian"]).max() <= 1e-12 / 0.2**3
    assert np.abs(curvilinear_columns("[1/r^2, 0, 0]", "div", "spherical",
                                      {"points": p})["div"]).max() <= 1e-12 / 0.2**3
    got = curvilinear_columns("r^2*sin(theta)*cos(phi)", "grad", "spherical", {"points": p})
    for column, want in (("grad_r", 2 * r * np.sin(t) * np.cos(f)),
                         ("grad_theta", r * np.cos(t) * np.cos(f)),
                         ("grad_phi", -r * np.sin(f))):
        np.testing.assert_allclose(got[column], want, rtol=1e-14, atol=1e-14 * r.max())
    got = curvilinear_columns("[0, 0, r*sin(theta)]", "curl", "spherical", {"points": p})
    np.testing.assert_allclose(got["curl_r"], 2 * np.cos(t), rtol=0, atol=1e-14)
    np.testing.assert_allclose(got["curl_theta"], -2 * np.sin(t), rtol=0, atol=1e-14)
    np.testing.assert_allclose(got["curl_phi"], 0.0, atol=1e-14)
    c = SYSTEMS["cylindrical"][2]()
    got = curvilinear_columns("[0, 1/r, 0]", "curl", "cylindrical", {"points": c})
    for q in ("r", "phi", "z"):
        assert np.abs(got[f"curl_{q}"]).max() <= 1e-14 / 0.2**2
    q = SYSTEMS["polar"][2]()
    got = curvilinear_columns("r^3*cos(3*theta)", "laplacian", "polar", {"points": q})
    assert np.abs(got["laplacian"]).max() <= 1e-12 * 27


def test_on_an_axis_the_formulas_divide_by_zero() -> None:
    """At r = 0 the Laplacian of 1/r is nan (1/H with H = 0); on the z axis (θ = 0)
    grad_phi of a formula without φ is 0/0 = nan: the engine's honest result."""
    got = curvilinear_columns("1/r", "laplacian", "spherical",
                              {"at": [{"r": 0.0, "theta": 1.0, "phi": 0.0}]})
    assert np.isnan(got["laplacian"][0])
    got = curvilinear_columns("r^2", "grad", "spherical",
                              {"at": [{"r": 1.0, "theta": 0.0, "phi": 0.0}]})
    assert got["grad_r"][0] == 2.0 and np.isnan(got["grad_phi"][0])


def test_renamed_coordinates_and_formulas() -> None:
    got = curvilinear_columns("rho^2*cos(t)", "grad", "spherical:rho,t,p",
                              {"at": [{"rho": 2.0, "t": 0.5, "p": 0.0}]})
    assert list(got) == ["rho", "t", "p", "f", "grad_rho", "grad_t", "grad_p"]
    assert curvilinear_formulas("r^2*cos(theta)", "laplacian", "spherical") == {
        "laplacian": "4*cos(theta)"}
    assert curvilinear_formulas("[1/r^2, 0, 0]", "div", "spherical") == {"div": "0"}
    assert curvilinear_formulas("[0, r]", "curl", "polar") == {"curl": "2"}
    assert curvilinear_formulas("r^2*sin(theta)*cos(phi)", "grad", "spherical") == {
        "grad_r": "2*r*cos(phi)*sin(theta)", "grad_theta": "r*cos(phi)*cos(theta)",
        "grad_phi": "-r*sin(phi)"}


@pytest.mark.parametrize(("args", "message"), [
    (("1/r", "grad", "elliptic", {"at": [{"r": 1.0}]}), "unknown coordinate system"),
    (("1/r", "grad", "spherical", {"at": [{"r": 1.0}]}), "add theta"),
    (("1/r", "grad", "spherical:a,b", {"at": [{"r": 1.0}]}), "needs 3 different names"),
    (("[1, 0]", "div", "spherical", {"at": [{"r": 1.0, "theta": 1.0, "phi": 0.0}]}),
     "takes a field of 3 components"),
    (("[1, 0, 0]", "grad", "spherical", {"at": [{"r": 1.0, "theta": 1.0, "phi": 0.0}]}),
     "takes a scalar formula"),
    (("r", "hessian", "polar", {"at": [{"r": 1.0, "theta": 1.0}]}), "applies to grad"),
])
def test_refusals(args: tuple, message: str) -> None:
    with pytest.raises(EvaluationError, match=message):
        curvilinear_columns(*args)


def test_cli(cli) -> None:  # noqa: ANN001
    status, out, err = cli("grad", "r^2*sin(theta)*cos(phi)", "--coords", "spherical",
                           "--at", "r=2,theta=0.7,phi=0.3", "-f", "csv")
    assert status == 0 and err == ""
    assert out.splitlines()[0] == "r,theta,phi,f,grad_r,grad_theta,grad_phi"
    status, out, _ = cli("curl", "[0, r]", "--coords", "polar", "--grid", "r=1:2:3",
                         "--grid", "theta=0:1:2", "-f", "csv")
    assert status == 0 and [line.split(",")[-1] for line in out.splitlines()[1:]] == \
        ["2.0"] * 6
    status, out, _ = cli("laplacian", "r^2*cos(theta)", "--coords", "spherical", "--formula")
    assert status == 0 and out == "laplacian = 4*cos(theta)\n"
    status, out, err = cli("grad", "1/r", "--coords", "spherical", "--at", "r=2")
    assert status == 2 and out == "" and err.startswith("gradcli: error: a point in "
                                                         "spherical coordinates")
