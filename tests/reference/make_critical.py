"""Generate tests/reference/critical_points.json: critical points to 30 digits by mpmath.

Run with the peers' venv (mpmath), from the repository root:

    /work/peers-venv/bin/python tests/reference/make_critical.py

Each point is polished by mpmath's multidimensional Newton (``findroot``) at 40 digits on
the exact gradient written by hand below (not by gradcli), from a rough guess; the
Hessian's eigenvalues come from ``mpmath.eigsy`` and set the type. The tests never
import mpmath: ``tests/fields/test_fields_critical.py`` reads this file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import mpmath as mp

mp.mp.dps = 40
OUT = Path(__file__).with_name("critical_points.json")


def himmelblau_grad(x, y):
    a, b = x * x + y - 11, x + y * y - 7
    return [4 * x * a + 2 * b, 2 * a + 4 * y * b]


def himmelblau_hess(x, y):
    a, b = x * x + y - 11, x + y * y - 7
    return [[4 * a + 8 * x * x + 2, 4 * x + 4 * y], [4 * x + 4 * y, 2 + 4 * b + 8 * y * y]]


def himmelblau(x, y):
    return (x * x + y - 11) ** 2 + (x + y * y - 7) ** 2


def camel(x, y):
    return (4 - mp.mpf("2.1") * x ** 2 + x ** 4 / 3) * x ** 2 + x * y + (-4 + 4 * y ** 2) * y ** 2


def camel_grad(x, y):
    return [8 * x - mp.mpf("8.4") * x ** 3 + 2 * x ** 5 + y, x - 8 * y + 16 * y ** 3]


def camel_hess(x, y):
    return [[8 - mp.mpf("25.2") * x ** 2 + 10 * x ** 4, 1], [1, -8 + 48 * y ** 2]]


#: name -> (gradcli's text, f, gradient, Hessian, box, rough guesses)
FUNCTIONS = {
    "himmelblau": ("(x^2+y-11)^2 + (x+y^2-7)^2", himmelblau, himmelblau_grad, himmelblau_hess,
                   [-5, 5], [(3, 2), (-2.8, 3.1), (-3.8, -3.3), (3.6, -1.8), (-0.27, -0.92),
                             (-3.07, -0.08), (-0.13, -1.95), (0.09, 2.88), (3.39, 0.07)]),
    "camel": ("(4 - 2.1x^2 + x^4/3)x^2 + x*y + (-4 + 4y^2)y^2", camel, camel_grad, camel_hess,
              [-2, 2], [(0.0898, -0.7127), (-0.0898, 0.7127), (1.7036, -0.7961),
                        (-1.7036, 0.7961), (1.6071, 0.5687), (-1.6071, -0.5687),
                        (1.2302, 0.1623), (-1.2302, -0.1623), (0, 0), (1.1092, -0.7683),
                        (-1.1092, 0.7683), (1.6381, 0.2287), (-1.6381, -0.2287),
                        (1.2961, 0.6051), (-1.2961, -0.6051)]),
}


def kind(eigs) -> str:
    if all(e > 0 for e in eigs):
        return "minimum"
    if all(e < 0 for e in eigs):
        return "maximum"
    return "saddle"


def main() -> int:
    doc = {"generator": "tests/reference/make_critical.py", "mpmath": mp.__version__,
           "digits": 40, "functions": {}}
    for name, (text, f, grad, hess, box, guesses) in FUNCTIONS.items():
        points = []
        for guess in guesses:
            x, y = mp.findroot(grad, [mp.mpf(g) for g in guess])
            eigs = sorted(mp.eigsy(mp.matrix(hess(x, y)))[0])
            points.append({"x": mp.nstr(x, 30), "y": mp.nstr(y, 30), "f": mp.nstr(f(x, y), 30),
                           "eig": [mp.nstr(e, 30) for e in eigs], "type": kind(eigs)})
        points.sort(key=lambda p: (float(p["x"]), float(p["y"])))
        doc["functions"][name] = {"expression": text, "box": box, "points": points}
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    sys.stdout.write(f"wrote {OUT}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
