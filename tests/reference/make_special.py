"""Generate tests/reference/special.npz: the special functions of the engine's rule table
(erf, erfc, erfinv, gamma, lgamma, digamma, polygamma, beta, lbeta, ncdf, npdf), their
first and second derivatives at 1,000 points across each domain, and their Taylor
coefficients to order 10, all by mpmath (40 digits), for tests/engine/test_engine_special.py.

Run from the repository root with any Python that has mpmath and numpy (a scratch venv
outside the repository: ``python -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install
mpmath numpy``):

    /tmp/refvenv/bin/python tests/reference/make_special.py

The derivatives are the textbook closed forms evaluated by mpmath (erf' = 2/√π·e^(-x²),
Γ' = Γψ, ψ⁽ⁿ⁾' = ψ⁽ⁿ⁺¹⁾, ...); each closed form is first checked here against mpmath's
own numerical differentiation (``mpmath.diff``) at a few points, so a wrong formula
cannot make a reference. The points are the doubles stored beside the values, so the
test evaluates gradcli at exactly the arguments mpmath saw. Taylor coefficients come from
``mpmath.taylor`` of the function itself, at three points each, and of the function of
u(x) = x0 + 0.3x + 0.2x² (an input series with several nonzero coefficients).
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath as mp
import numpy as np

mp.mp.dps = 40
OUT = Path(__file__).with_name("special.npz")
N, ORDER = 1000, 10
RNG = np.random.default_rng(20261128)
F = mp.mpf


def _uniform(lo: float, hi: float, n: int) -> np.ndarray:
    return RNG.uniform(lo, hi, n)


def _log_uniform(lo: float, hi: float, n: int) -> np.ndarray:
    return np.exp(RNG.uniform(np.log(lo), np.log(hi), n))


def _off_poles(x: np.ndarray) -> np.ndarray:
    """Negative arguments at least 1e-3 from Γ's poles (0, -1, -2, ...)."""
    return x[(x > 0) | (np.abs(x - np.round(x)) > 1e-3)]


def _points(kind: str) -> np.ndarray:
    """1,000 arguments across the function's domain, the awkward parts included."""
    parts = {
        "erf": [_uniform(-6, 6, 700), _log_uniform(1e-300, 1, 150), -_log_uniform(1e-12, 1, 150)],
        "erfc": [_uniform(-6, 26.5, 700), _log_uniform(1e-12, 1, 150),
                 -_log_uniform(1e-12, 6, 150)],
        "erfinv": [_uniform(-1, 1, 600), _log_uniform(1e-300, 1e-3, 100),
                   1 - _log_uniform(1e-15, 1e-2, 150), -(1 - _log_uniform(1e-15, 1e-2, 150))],
        "gamma": [_uniform(-10, 10, 400), _log_uniform(1e-6, 171, 400),
                  _uniform(0.5, 3, 200)],
        "lgamma": [_uniform(-10, 10, 300), _log_uniform(1e-6, 1e6, 400), _uniform(0.5, 3, 300)],
        "digamma": [_uniform(-10, 10, 300), _log_uniform(1e-6, 1e6, 400),
                    _uniform(0.5, 3, 300)],
        "ncdf": [_uniform(-37, 9, 700), _uniform(-3, 3, 300)],
        "npdf": [_uniform(-37, 37, 700), _uniform(-3, 3, 300)],
    }[kind]
    x = _off_poles(np.concatenate(parts)) if kind in ("gamma", "lgamma", "digamma") else \
        np.concatenate(parts)
    while len(x) < N:  # replace the pole-side points dropped
        x = np.concatenate([x, _off_poles(_uniform(-10, 10, N))])[:N]
    return x[:N]


def _pairs() -> tuple[np.ndarray, np.ndarray]:
    a = np.concatenate([_log_uniform(1e-3, 100, 800), _off_poles(_uniform(-5, 0, 400))[:200]])
    b = np.concatenate([_log_uniform(1e-3, 100, 800), _log_uniform(0.1, 5, 200)])
    return a[:N], b[:N]


def npdf(x):
    return mp.exp(-x * x / 2) / mp.sqrt(2 * mp.pi)


def ncdf(x):
    return mp.erfc(-x / mp.sqrt(2)) / 2


def lbeta(a, b):
    return mp.log(abs(mp.beta(a, b)))


def lgamma(x):
    return mp.log(abs(mp.gamma(x)))


#: name -> (f, f', f'') as mpmath functions of x (the closed forms)
UNARY = {
    "erf": (mp.erf, lambda x: 2 / mp.sqrt(mp.pi) * mp.exp(-x * x),
            lambda x: -4 * x / mp.sqrt(mp.pi) * mp.exp(-x * x)),
    "erfc": (mp.erfc, lambda x: -2 / mp.sqrt(mp.pi) * mp.exp(-x * x),
             lambda x: 4 * x / mp.sqrt(mp.pi) * mp.exp(-x * x)),
    "erfinv": (mp.erfinv, lambda x: mp.sqrt(mp.pi) / 2 * mp.exp(mp.erfinv(x) ** 2),
               lambda x: 2 * mp.erfinv(x) * (mp.sqrt(mp.pi) / 2 * mp.exp(mp.erfinv(x) ** 2)) ** 2),
    "gamma": (mp.gamma, lambda x: mp.gamma(x) * mp.digamma(x),
              lambda x: mp.gamma(x) * (mp.digamma(x) ** 2 + mp.polygamma(1, x))),
    "lgamma": (lgamma, mp.digamma, lambda x: mp.polygamma(1, x)),
    "digamma": (mp.digamma, lambda x: mp.polygamma(1, x), lambda x: mp.polygamma(2, x)),
    "ncdf": (ncdf, npdf, lambda x: -x * npdf(x)),
    "npdf": (npdf, lambda x: -x * npdf(x), lambda x: (x * x - 1) * npdf(x)),
}


def _beta_parts(log: bool):
    def f(a, b):
        return lbeta(a, b) if log else mp.beta(a, b)

    def da(a, b):
        d = mp.digamma(a) - mp.digamma(a + b)
        return d if log else mp.beta(a, b) * d

    def db(a, b):
        d = mp.digamma(b) - mp.digamma(a + b)
        return d if log else mp.beta(a, b) * d

    return f, da, db


BINARY = {"beta": _beta_parts(False), "lbeta": _beta_parts(True)}


def _check_closed_forms() -> None:
    """Each closed form against mpmath's numerical derivative at a few points."""
    for name, (f, d1, d2) in UNARY.items():
        for x in (F("0.3"), F("-0.45"), F("0.8")) if name != "erfinv" else (F("0.3"), F("-0.6")):
            for d, k in ((d1, 1), (d2, 2)):
                want = mp.diff(f, x, k)
                assert abs(d(x) - want) <= mp.mpf(10) ** -25 * (1 + abs(want)), (name, k, x)
    for name, (f, da, db) in BINARY.items():
        for a, b in ((F("0.7"), F("2.5")), (F("-0.5"), F("1.2"))):
            along_a = mp.diff(lambda t, f=f, b=b: f(t, b), a)
            along_b = mp.diff(lambda t, f=f, a=a: f(a, t), b)
            assert abs(da(a, b) - along_a) < mp.mpf(10) ** -25, name
            assert abs(db(a, b) - along_b) < mp.mpf(10) ** -25, name
    for n in (1, 3):
        x = F("0.7")
        want = mp.diff(lambda t, n=n: mp.polygamma(n, t), x)
        assert abs(mp.polygamma(n + 1, x) - want) < mp.mpf(10) ** -25 * abs(want)


def _value(v) -> float:
    """A double, inf or nan for what mpmath gives (a pole: inf; complex: nan)."""
    if isinstance(v, mp.mpc):
        return float("nan")
    return float(v)


def _taylor_cases() -> list[tuple[str, list[float], float]]:
    """(gradcli text in x, coefficients 0..ORDER, x0)."""
    cases: list[tuple[str, list[float], float]] = []
    plain = {"erf": (0.3, -1.7, 3.2), "erfc": (0.3, -1.7, 3.2), "erfinv": (0.3, -0.8, 0.97),
             "gamma": (0.4, 3.7, -2.5), "lgamma": (0.4, 3.7, -2.5),
             "digamma": (0.4, 3.7, -2.5), "ncdf": (0.3, -4.0, 2.5), "npdf": (0.3, -4.0, 2.5)}
    for name, points in plain.items():
        f = UNARY[name][0]
        for x0 in points:
            coeffs = mp.taylor(f, F(x0), ORDER)
            cases.append((f"{name}(x)", [_value(c) for c in coeffs], x0))
        # through an inner series: f(x0 + 0.3x + 0.2x²) at x = 0.1
        base = points[0]
        inner = lambda x, f=f, base=base: f(F(base) + F(0.3) * x + F(0.2) * x ** 2)  # noqa: E731
        coeffs = mp.taylor(inner, F(0.1), ORDER)
        cases.append((f"{name}({base} + 0.3*x + 0.2*x^2)", [_value(c) for c in coeffs], 0.1))
    for n, x0 in ((1, 0.7), (3, 2.5), (2, -1.5)):
        coeffs = mp.taylor(lambda x, n=n: mp.polygamma(n, x), F(x0), ORDER)
        cases.append((f"polygamma({n}, x)", [_value(c) for c in coeffs], x0))
    for text, fn in (("beta(x, 2.5)", lambda x: mp.beta(x, F(2.5))),
                     ("beta(0.7 + 0.3*x, 1.5 - 0.2*x)",
                      lambda x: mp.beta(F(0.7) + F(0.3) * x, F(1.5) - F(0.2) * x)),
                     ("lbeta(x, 2.5)", lambda x: lbeta(x, F(2.5))),
                     ("lbeta(0.7 + 0.3*x, 1.5 - 0.2*x)",
                      lambda x: lbeta(F(0.7) + F(0.3) * x, F(1.5) - F(0.2) * x))):
        coeffs = mp.taylor(fn, F(0.4), ORDER)
        cases.append((text, [_value(c) for c in coeffs], 0.4))
    return cases


def main() -> None:
    _check_closed_forms()
    arrays: dict[str, np.ndarray] = {}
    for name, parts in UNARY.items():
        x = _points(name)
        arrays[f"{name}/x"] = x
        for key, fn in zip(("f", "d1", "d2"), parts, strict=True):
            arrays[f"{name}/{key}"] = np.array([_value(fn(F(float(v)))) for v in x])
    for name, parts in BINARY.items():
        a, b = _pairs()
        arrays[f"{name}/a"], arrays[f"{name}/b"] = a, b
        for key, fn in zip(("f", "da", "db"), parts, strict=True):
            arrays[f"{name}/{key}"] = np.array([_value(fn(F(float(p)), F(float(q))))
                                                for p, q in zip(a, b, strict=True)])
        # ψ and lgamma of a, b and a + b: the size of the terms the values and the
        # derivatives add and subtract
        for key, of in (("_a", lambda p, q: p), ("_b", lambda p, q: q),
                        ("_ab", lambda p, q: p + q)):
            for fn, prefix in ((mp.digamma, "psi"), (lgamma, "lgamma")):
                arrays[f"{name}/{prefix}{key}"] = np.array(
                    [_value(fn(of(F(float(p)), F(float(q))))) for p, q in zip(a, b, strict=True)])
        arrays[f"{name}/psi1_ab"] = np.array([_value(mp.polygamma(1, F(float(p)) + F(float(q))))
                                              for p, q in zip(a, b, strict=True)])
    n = RNG.integers(0, 7, N).astype(float)
    x = np.concatenate([_log_uniform(1e-3, 100, 800), _off_poles(_uniform(-5, 0, 400))[:200]])
    arrays["polygamma/n"], arrays["polygamma/x"] = n, x
    arrays["polygamma/f"] = np.array([_value(mp.polygamma(int(k), F(float(v))))
                                      for k, v in zip(n, x, strict=True)])
    arrays["polygamma/dx"] = np.array([_value(mp.polygamma(int(k) + 1, F(float(v))))
                                       for k, v in zip(n, x, strict=True)])
    taylor = _taylor_cases()
    meta = {"generator": "tests/reference/make_special.py", "mpmath": mp.__version__,
            "digits": mp.mp.dps, "order": ORDER,
            # the expressions whose values and derivatives the arrays hold, by prefix
            "values": {**{name: f"{name}(x)" for name in UNARY},
                       **{name: f"{name}(a, b)" for name in BINARY},
                       "polygamma": "polygamma(n, x)"},
            "taylor": [{"text": t, "x0": x0, "coefficients": c} for t, c, x0 in taylor]}
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({len(taylor)} Taylor cases)")


if __name__ == "__main__":
    main()
