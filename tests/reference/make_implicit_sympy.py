"""Generate tests/reference/implicit_sympy.json: implicit derivatives d^k y/dx^k of curves
and surfaces F = 0 by sympy's ``idiff``, for tests/fields/test_fields_implicit.py.

Run from the repository root with any Python that has sympy (a scratch venv outside the
repository: ``python -m venv /tmp/refvenv && /tmp/refvenv/bin/pip install sympy``):

    /tmp/refvenv/bin/python tests/reference/make_implicit_sympy.py

Each case is gradcli's text of F, the unknown, the independent variable and a point on
the curve given exactly (rationals; the decimal constants of F read as the exact decimals
they are); ``idiff(F, y, x, k)`` is sympy's k-th derivative of y by x (the other symbols
held), evaluated at the point to 30 digits. The tests give gradcli the point's doubles.
"""

from __future__ import annotations

import json
from pathlib import Path

import sympy as sp

OUT = Path(__file__).with_name("implicit_sympy.json")
x, y, z = sp.symbols("x y z")
R = sp.Rational

#: (gradcli text, sympy F, unknown, independent, point, highest order)
CASES = [
    ("x^2 + y^2 - 1", x**2 + y**2 - 1, y, x, {x: R(3, 5), y: R(4, 5)}, 4),
    ("x^2 + y^2 - 1", x**2 + y**2 - 1, y, x, {x: R(-5, 13), y: R(-12, 13)}, 4),
    ("x^3 + y^3 - 3*x*y", x**3 + y**3 - 3 * x * y, y, x, {x: R(3, 2), y: R(3, 2)}, 4),
    ("x^3 + y^3 - 3*x*y", x**3 + y**3 - 3 * x * y, y, x, {x: R(4, 3), y: R(2, 3)}, 4),
    ("x^2/4 + y^2 - 1", x**2 / 4 + y**2 - 1, y, x, {x: 1, y: sp.sqrt(3) / 2}, 3),
    ("sin(x*y) + y^3 - x - 0.979425538604203",
     sp.sin(x * y) + y**3 - x - sp.Rational("0.979425538604203"), y, x,
     {x: R(1, 2), y: 1}, 3),
    ("x^2 + y^2 + z^2 - 1", x**2 + y**2 + z**2 - 1, z, x, {x: R(1, 3), y: R(2, 3), z: R(2, 3)},
     3),
    ("x^2 + y^2 + z^2 - 1", x**2 + y**2 + z**2 - 1, z, y, {x: R(1, 3), y: R(2, 3), z: R(2, 3)},
     1),
]


def main() -> None:
    cases = []
    for text, F, unknown, by, point, order in CASES:
        values = []
        for k in range(1, order + 1):
            value = sp.idiff(F, unknown, by, k).subs(point)
            values.append(float(sp.N(value, 30)))
        cases.append({"expression": text, "solve_for": str(unknown), "wrt": str(by),
                      "at": {str(s): float(sp.N(v, 30)) for s, v in point.items()},
                      "derivatives": values})
    OUT.write_text(json.dumps({"sympy": sp.__version__,
                               "script": "tests/reference/make_implicit_sympy.py",
                               "cases": cases}, indent=1) + "\n")
    print(f"wrote {OUT} ({len(cases)} cases)")


if __name__ == "__main__":
    main()
