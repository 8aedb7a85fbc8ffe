"""The special functions (erf, erfc, erfinv, gamma, lgamma, digamma, polygamma, beta,
lbeta, ncdf, npdf) against mpmath: values, first and second derivatives at 1,000 points
across each domain, Taylor coefficients to order 10.

mpmath's values (mpmath 1.3.0, 40 digits) are in tests/reference/special.npz, written by
tests/reference/make_special.py at the doubles stored beside them. Each bound is in
units of eps = 2⁻⁵² on an error scale stated per function: the value itself (relative
error), or, where the function or its formula has zeros or cancels, the size of what is
computed (lgamma and ψ are absolute below 1, near their zeros; ∂B/∂a = B·(ψ(a) - ψ(a + b))
is measured against B·(|ψ(a)| + |ψ(a + b)|), the terms it subtracts; erfinv' = c·e^(y²)
against its condition 1 + 2y², the amplification of y's own rounding). The bounds are
the measured maxima (listed in the comments) with a margin for other CPUs' exp and log.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc
from gradcli.engine import rules as R

REF = np.load(Path(__file__).parents[1] / "reference" / "special.npz")
META = json.loads(str(REF["meta"]))
EPS = 2.0 ** -52


def _relative(want: np.ndarray, **_: np.ndarray) -> np.ndarray:
    return np.abs(want)


def _floor_one(want: np.ndarray, **_: np.ndarray) -> np.ndarray:
    """Absolute below 1: the function has zeros (lgamma at 1 and 2, ψ at 1.46 and once
    between each pair of negative integers), where no method is relatively accurate."""
    return np.maximum(np.abs(want), 1.0)


def _gamma_d1(want: np.ndarray, f: np.ndarray, **_: np.ndarray) -> np.ndarray:
    """Γ·ψ: absolute in ψ below 1 (ψ's zeros)."""
    return np.maximum(np.abs(want), np.abs(f))


def _erfinv_d(want: np.ndarray, f: np.ndarray, **_: np.ndarray) -> np.ndarray:
    """c·e^(y²): y's rounding is amplified 2y² times."""
    return np.abs(want) * (1.0 + 2.0 * f * f)


def _npdf_d2(want: np.ndarray, f: np.ndarray, x: np.ndarray, **_: np.ndarray) -> np.ndarray:
    """(x² - 1)·npdf: the two terms cancel at |x| = 1."""
    return np.abs(f) * (1.0 + x * x)


#: (function, reference column, engine column, error scale, bound in eps); measured max
CASES = [
    ("erf", "f", "f", _relative, 3),              # 1.45
    ("erf", "d1", "df/dx", _relative, 3),          # 1.51
    ("erf", "d2", "d2f/dxdx", _relative, 3),       # 1.72
    ("erfc", "f", "f", _relative, 5),              # 2.94
    ("erfc", "d1", "df/dx", _relative, 3),         # 1.69
    ("erfc", "d2", "d2f/dxdx", _relative, 3),      # 1.72
    ("erfinv", "f", "f", _relative, 3),            # 1.21
    ("erfinv", "d1", "df/dx", _erfinv_d, 3),       # 1.13
    ("erfinv", "d2", "d2f/dxdx", _erfinv_d, 5),    # 3.00
    ("gamma", "f", "f", _relative, 4),             # 1.99
    ("gamma", "d1", "df/dx", _gamma_d1, 6),        # 3.63
    ("gamma", "d2", "d2f/dxdx", _relative, 6),     # 3.35
    ("lgamma", "f", "f", _floor_one, 3),           # 1.56
    ("lgamma", "d1", "df/dx", _floor_one, 5),      # 3.00
    ("lgamma", "d2", "d2f/dxdx", _relative, 5),    # 3.27
    ("digamma", "f", "f", _floor_one, 5),          # 2.76
    ("digamma", "d1", "df/dx", _relative, 5),      # 3.25
    ("digamma", "d2", "d2f/dxdx", _relative, 12),  # 7.23
    ("ncdf", "f", "f", _relative, 5),              # 3.40
    ("ncdf", "d1", "df/dx", _relative, 3),         # 1.66
    ("ncdf", "d2", "d2f/dxdx", _relative, 3),      # 1.85
    ("npdf", "f", "f", _relative, 3),              # 1.73
    ("npdf", "d1", "df/dx", _relative, 4),         # 2.09
    ("npdf", "d2", "d2f/dxdx", _npdf_d2, 4),       # 2.60
]
MEASURED: dict[str, float] = {}


def _unary(name: str) -> dict[str, np.ndarray]:
    x = REF[f"{name}/x"]
    got = gc.evaluate(f"{name}(x)", "hessian", points={"x": x})
    grad = gc.evaluate(f"{name}(x)", "grad", points={"x": x})
    return {"f": grad["f"].reshape(-1), "df/dx": grad["df/dx"].reshape(-1),
            "d2f/dxdx": got["d2f/dxdx"].reshape(-1), "x": x}


def _check(what: str, got: np.ndarray, want: np.ndarray, scale: np.ndarray,
           bound: float) -> float:
    """Finite values within bound·eps of the scale; non-finite ones the same (±inf, nan)."""
    finite = np.isfinite(want)
    assert (np.isfinite(got) == finite).all(), (what, got[~finite], want[~finite])
    assert (got[~finite].astype(str) == want[~finite].astype(str)).all(), what
    error = np.abs(got[finite] - want[finite]) / scale[finite] / EPS
    worst = float(error.max())
    MEASURED[what] = worst
    assert worst <= bound, (what, worst)
    return worst


@pytest.mark.parametrize(("name", "key", "column", "scale", "bound"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_unary_against_mpmath_at_1000_points(name: str, key: str, column: str, scale,
                                             bound: float) -> None:  # noqa: ANN001
    got = _unary(name)
    want = REF[f"{name}/{key}"]
    assert len(want) == 1000
    _check(f"{name} {key}", got[column], want,
           scale(want=want, f=REF[f"{name}/f"], x=REF[f"{name}/x"]), bound)


@pytest.mark.parametrize("name", ["beta", "lbeta"])
def test_beta_and_lbeta_against_mpmath(name: str) -> None:
    """B(a, b) and log|B(a, b)| over a, b in (1e-3, 100) and negative a. scipy computes
    them from lgamma(a) + lgamma(b) - lgamma(a + b), which cancel: lbeta's absolute error
    and beta's relative error are measured against 1 + Σ|lgamma| + |ψ(a + b)·(a + b)|
    (326 eps relative for beta at a = 68, b = 94; 111 eps of lbeta's size at a = -3.5,
    b = 0.54, where a + b is 0.0016 from Γ's pole at -3: within 7 eps of the terms). The
    partials B·(ψ(a) - ψ(a + b)) cancel too where b ≪ a:
    against B·(|ψ(a)| + |ψ(a + b)| + |ψ⁽¹⁾(a + b)·(a + b)|), plus B's own error times
    the difference."""
    a, b = REF[f"{name}/a"], REF[f"{name}/b"]
    got = gc.evaluate(f"{name}(a, b)", "grad", points={"a": a, "b": b})
    f = REF[f"{name}/f"]
    # the lgamma terms, and the rounding of a + b (amplified by ψ(a + b) near a pole)
    terms = 1.0 + sum(np.abs(REF[f"{name}/lgamma_{k}"]) for k in ("a", "b", "ab")) + \
        np.abs(REF[f"{name}/psi_ab"] * (a + b))
    size = np.abs(f) if name == "beta" else np.ones_like(f)
    _check(f"{name} f", got["f"].reshape(-1), f, size * terms, 8)
    for key in ("a", "b"):
        psi, psi_ab = REF[f"{name}/psi_{key}"], REF[f"{name}/psi_ab"]
        rounding = np.abs(REF[f"{name}/psi1_ab"] * (a + b))  # a + b rounded, into ψ(a + b)
        scale = size * (np.abs(psi) + np.abs(psi_ab) + rounding
                        + (terms * np.abs(psi - psi_ab) if name == "beta" else 0.0))
        _check(f"{name} d{key}", got[f"df/d{key}"].reshape(-1), REF[f"{name}/d{key}"],
               scale, 8)


def test_polygamma_against_mpmath() -> None:
    """ψ⁽ⁿ⁾(x), n = 0..6, x in (1e-3, 100) and negative x; absolute below 1 (ψ's zeros)."""
    n, x = REF["polygamma/n"], REF["polygamma/x"]
    got = gc.evaluate("polygamma(n, x)", "grad", points={"n": n, "x": x})
    f, dx = REF["polygamma/f"], REF["polygamma/dx"]
    # measured 13.1 (n = 6 at x = -4.5006, where the reflection's terms cancel) and 8.5
    _check("polygamma f", got["f"].reshape(-1), f, np.maximum(np.abs(f), 1.0), 20)
    _check("polygamma dx", got["df/dx"].reshape(-1), dx, np.maximum(np.abs(dx), 1.0), 14)
    assert (got["df/dn"] == 0).all()  # n is a whole number: no derivative


@pytest.mark.parametrize("case", META["taylor"], ids=[c["text"] + f" at {c['x0']}"
                                                      for c in META["taylor"]])
def test_taylor_coefficients_to_order_10_against_mpmath(case: dict) -> None:
    """Every coefficient f⁽ᵏ⁾(x0)/k!, k ≤ 10, to 1e-12 of itself (or of the series'
    largest where it is near 0): the recurrences, not a per-order formula."""
    got = gc.evaluate(case["text"], "taylor", at={"x": case["x0"]},
                      order=META["order"])["coefficient"][0]
    want = np.array(case["coefficients"])
    scale = np.maximum(np.abs(want), 1e-3 * np.abs(want).max())
    assert np.all(np.abs(got - want) <= 1e-12 * scale), (got, want)


def test_reference_was_made_by_mpmath() -> None:
    assert META["generator"] == "tests/reference/make_special.py"
    assert META["mpmath"] == "1.3.0" and META["digits"] == 40 and META["order"] == 10


def test_every_special_function_is_in_the_table_and_the_api() -> None:
    """One rule entry each: gc.NAME, Tensor.NAME and the language's NAME(...) derive from it."""
    x = gc.tensor([0.25, 0.5], requires_grad=True)
    for name in ("erf", "erfc", "erfinv", "gamma", "lgamma", "digamma", "ncdf", "npdf"):
        assert R.FUNCTIONS[name].jet is not None and R.FUNCTIONS[name].form is not None
        np.testing.assert_array_equal(getattr(gc, name)(x).detach().numpy(),
                                      getattr(x, name)().detach().numpy())
    for name in ("beta", "lbeta", "polygamma"):
        assert R.FUNCTIONS[name].arity == 2


def test_forward_mode_equals_reverse_mode() -> None:
    """JVP and VJP come from one rule per input: the same derivative at every point."""
    x = np.linspace(0.05, 0.95, 7)
    for name in ("erf", "erfc", "erfinv", "gamma", "lgamma", "digamma", "ncdf", "npdf"):
        fn = getattr(gc, name)
        _, (vjp,) = gc.functional.vjp(fn, gc.tensor(x), v=gc.tensor(np.ones_like(x)))
        _, jvp = gc.functional.jvp(fn, (gc.tensor(x),), (gc.tensor(np.ones_like(x)),))
        np.testing.assert_array_equal(vjp.numpy(), jvp.numpy())


def test_closed_forms_and_edges() -> None:
    """Known values: Φ(0) = 1/2, Γ(5) = 24, Γ(1/2) = √π, ψ(1) = -γ, B(2, 3) = 1/12,
    ψ⁽¹⁾(1) = π²/6; the edges as mpmath has them: erfinv(±1) = ±inf, erfinv beyond is nan,
    Γ's and lgamma's poles, polygamma of a non-whole or negative order is nan."""
    v = [float(gc.evaluate(text, "eval", at={})["f"][0]) for text in (
        "ncdf(0)", "gamma(5)", "gamma(0.5)", "digamma(1)", "beta(2, 3)", "polygamma(1, 1)",
        "npdf(0)", "erf(0)")]
    want = [0.5, 24.0, math.sqrt(math.pi), -0.5772156649015329, 1 / 12, math.pi ** 2 / 6,
            1 / math.sqrt(2 * math.pi), 0.0]
    np.testing.assert_allclose(v, want, rtol=4 * EPS, atol=0)
    with np.errstate(all="ignore"):
        assert gc.erfinv(gc.tensor([1.0, -1.0])).tolist() == [math.inf, -math.inf]
        assert np.isnan(gc.erfinv(gc.tensor(1.5)).item())
        assert gc.lgamma(gc.tensor([0.0, -2.0])).tolist() == [math.inf, math.inf]
        assert np.isnan(gc.polygamma(gc.tensor([1.5, -1.0]), gc.tensor(2.0)).numpy()).all()
        # the poles, as docs/reference/conventions.md says
        g = gc.gamma(gc.tensor([0.0, -0.0, -1.0])).numpy()
        assert g[0] == math.inf and g[1] == -math.inf and np.isnan(g[2])
        d = gc.digamma(gc.tensor([0.0, -0.0, -1.0])).numpy()
        assert d[0] == -math.inf and d[1] == math.inf and np.isnan(d[2])
    # erfc and ncdf far in their tails: normal numbers to a few ulps, not 0 (mpmath 1.3.0)
    assert abs(float(gc.erfc(gc.tensor(26.0))) / 5.663192408856143e-296 - 1) < 8 * EPS
    assert abs(float(gc.ncdf(gc.tensor(-37.0))) / 5.725571222524577e-300 - 1) < 8 * EPS


def test_formula_prints_the_textbook_derivatives() -> None:
    assert gc.formula("erf(x)") == {"df/dx": "2*exp(-x^2)/sqrt(pi)"}
    assert gc.formula("lgamma(x)", "hessian") == {"d2f/dxdx": "polygamma(1, x)"}
    assert gc.formula("ncdf(x)") == {"df/dx": "npdf(x)"}


def test_an_expression_without_special_functions_does_not_import_scipy() -> None:
    """scipy's import (0.1 s and more) is paid only by expressions that use it."""
    code = ("import sys; from gradcli.cli.main import main\n"
            "import contextlib, io\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['grad', 'x^2*sin(x)', '--at', 'x=4', '--format', 'csv'])\n"
            "    except SystemExit: pass\n"
            "print('scipy' in sys.modules)\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: main(['grad', 'erf(x)', '--at', 'x=4', '--format', 'csv'])\n"
            "    except SystemExit: pass\n"
            "print('scipy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True"]


def test_multivariate_taylor_mode_agrees_with_the_hessian() -> None:
    """Mixed partials through every special function in one multivariate sweep (the
    rules on homogeneous polynomials) equal reverse over reverse, to rounding."""
    text = ("erf(x*y) + erfc(x - y) + gamma(x + y) + erfinv(x/3) + beta(x, y) + "
            "lbeta(y, x*y) + npdf(x - y) + ncdf(x*y) + polygamma(2, x + 1) + digamma(y) + "
            "lgamma(x*y)")
    at = {"x": 0.7, "y": 1.3}
    # the derivatives by degree: 1; x, y; x², xy, y²
    got = gc.evaluate(text, "taylor", at=at, order=2)["derivative"][0][3:]
    hessian = gc.evaluate(text, "hessian", at=at)
    for value, column in zip(got, ("d2f/dxdx", "d2f/dxdy", "d2f/dydy"), strict=True):
        want = float(hessian[column][0])
        assert abs(value - want) <= 1e-13 * abs(want), (column, value, want)
