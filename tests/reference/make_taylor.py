"""Generate tests/reference/taylor.json: Taylor coefficients of every function of the
expression language, by mpmath, for the Taylor-mode tests (tests/engine/test_taylor_mode.py).

Run from the repository root with any Python that has mpmath (the peers' venv has it):

    /work/peers-venv/bin/python tests/reference/make_taylor.py

Each case is gradcli's text of a one-variable function and the same function written with
mpmath below; ``mpmath.taylor`` gives its coefficients f^(k)(x0)/k!, k = 0..ORDER, at 50
digits. The inner function u(x) = 0.4 + 0.3x + 0.2x^2 makes every rule see an input series
with several nonzero coefficients, not only a straight line. Constants are the doubles
gradcli parses (mpf of the float), so the two compute the same function.
"""

from __future__ import annotations

import json
from pathlib import Path

import mpmath as mp

mp.mp.dps = 50
OUT = Path(__file__).with_name("taylor.json")
X0, ORDER = 0.1, 8
F = mp.mpf


def u(x):
    return F(0.4) + F(0.3) * x + F(0.2) * x ** 2


def v(x):
    return F(1) - F(0.3) * x


def sigmoid(a):
    return 1 / (1 + mp.exp(-a))


#: (gradcli text, mpmath function of x)
CASES = [
    ("sin(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.sin(u(x))),
    ("cos(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.cos(u(x))),
    ("tan(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.tan(u(x))),
    ("asin(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.asin(u(x))),
    ("acos(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.acos(u(x))),
    ("atan(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.atan(u(x))),
    ("sinh(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.sinh(u(x))),
    ("cosh(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.cosh(u(x))),
    ("tanh(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.tanh(u(x))),
    ("asinh(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.asinh(u(x))),
    ("acosh(1.2 + 0.3*x + 0.2*x^2)", lambda x: mp.acosh(F(1.2) + F(0.3) * x + F(0.2) * x**2)),
    ("atanh(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.atanh(u(x))),
    ("exp(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.exp(u(x))),
    ("expm1(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.expm1(u(x))),
    ("log(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.log(u(x))),
    ("log1p(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.log1p(u(x))),
    ("log2(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.log(u(x), 2)),
    ("log10(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.log10(u(x))),
    ("sqrt(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.sqrt(u(x))),
    ("cbrt(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.cbrt(u(x))),
    ("cbrt(-0.4 - 0.3*x)", lambda x: -mp.cbrt(F(0.4) + F(0.3) * x)),
    ("abs(-0.4 - 0.3*x - 0.2*x^2)", lambda x: u(x)),
    ("relu(0.4 + 0.3*x + 0.2*x^2)", lambda x: u(x)),
    ("relu(-0.4 - 0.3*x) + x^2", lambda x: x**2),
    ("sign(x) + floor(x) + ceil(x) + x^3", lambda x: 1 + 0 + 1 + x**3),
    ("sigmoid(0.4 + 0.3*x + 0.2*x^2)", lambda x: sigmoid(u(x))),
    ("softplus(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.log(1 + mp.exp(u(x)))),
    ("logsigmoid(0.4 + 0.3*x + 0.2*x^2)", lambda x: mp.log(sigmoid(u(x)))),
    ("log(sigmoid(-3 + x))", lambda x: mp.log(sigmoid(x - 3))),
    ("-(0.4 + 0.3*x + 0.2*x^2)", lambda x: -u(x)),
    ("(0.4 + 0.3*x + 0.2*x^2)^2.5", lambda x: u(x) ** F(2.5)),
    ("(0.4 + 0.3*x + 0.2*x^2)^3", lambda x: u(x) ** 3),
    ("(0.4 + 0.3*x + 0.2*x^2)^(-2)", lambda x: u(x) ** -2),
    ("(0.4 + 0.3*x + 0.2*x^2)^0", lambda x: F(1)),
    ("2^(0.4 + 0.3*x + 0.2*x^2)", lambda x: F(2) ** u(x)),
    ("pow(0.4 + 0.3*x + 0.2*x^2, 1 - 0.3*x)", lambda x: u(x) ** v(x)),
    ("(0.4 + 0.3*x + 0.2*x^2)/(1 - 0.3*x)", lambda x: u(x) / v(x)),
    ("(1 + x)*(2 - x)*(0.4 + 0.3*x + 0.2*x^2)", lambda x: (1 + x) * (2 - x) * u(x)),
    ("min(0.4 + 0.3*x + 0.2*x^2, 1 - 0.3*x)", lambda x: u(x)),
    ("max(0.4 + 0.3*x + 0.2*x^2, 1 - 0.3*x)", lambda x: v(x)),
    ("atan2(0.4 + 0.3*x + 0.2*x^2, 1 - 0.3*x)", lambda x: mp.atan2(u(x), v(x))),
    ("atan2(-0.4 - 0.3*x, -1 + 0.3*x^2)", lambda x: mp.atan2(-F(0.4) - F(0.3) * x,
                                                             -1 + F(0.3) * x**2)),
    ("hypot(0.4 + 0.3*x + 0.2*x^2, 1 - 0.3*x)", lambda x: mp.hypot(u(x), v(x))),
    ("where(x > 0, x^3, -x)", lambda x: x**3),
    ("norm([0.4 + 0.3*x + 0.2*x^2, 2*x^2, 1])", lambda x: mp.sqrt(u(x)**2 + 4 * x**4 + 1)),
    ("prod([1 + x, 2 - x, 0.4 + 0.3*x + 0.2*x^2])", lambda x: (1 + x) * (2 - x) * u(x)),
    ("sum([x^2, sin(x)])", lambda x: x**2 + mp.sin(x)),
    ("mean([x, exp(x)])", lambda x: (x + mp.exp(x)) / 2),
    ("dot([x, 1], [2, x^3])", lambda x: 2 * x + x**3),
    ("exp(sin(0.4 + 0.3*x + 0.2*x^2))", lambda x: mp.exp(mp.sin(u(x)))),
    ("tanh(log(0.4 + 0.3*x + 0.2*x^2))", lambda x: mp.tanh(mp.log(u(x)))),
    ("sqrt(1 + atan(x)^2)*cos(x)/(2 + sinh(x))", lambda x: mp.sqrt(1 + mp.atan(x) ** 2)
     * mp.cos(x) / (2 + mp.sinh(x))),
]


def main() -> None:
    cases = []
    for text, fn in CASES:
        coefficients = mp.taylor(fn, F(X0), ORDER)
        cases.append([text, [float(c) for c in coefficients]])
    OUT.write_text(json.dumps({
        "generator": "tests/reference/make_taylor.py", "mpmath": mp.__version__,
        "digits": mp.mp.dps, "x0": X0, "order": ORDER, "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
