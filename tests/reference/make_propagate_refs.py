"""Reference values for tests/uncertainty/test_uncertainty_propagate.py from the
`uncertainties` package.

First-order propagation (the GUM's law of propagation, eq. 13) of a set of formulas, each
written twice: in gradcli's language (what the test propagates) and as a Python function
over `uncertainties` numbers (what made the reference). Run with the package installed:

    pip install uncertainties==3.2.3
    python tests/reference/make_propagate_refs.py > tests/reference/propagate_refs.json

The test needs only the JSON file.
"""

from __future__ import annotations

import json
import sys

import uncertainties
from uncertainties import correlated_values, ufloat
from uncertainties import umath as m

H2_CORR = [[1.0, -0.36, 0.86], [-0.36, 1.0, -0.65], [0.86, -0.65, 1.0]]

# (gradcli expression, estimates, standard uncertainties, correlations, python formula)
CASES = [
    ("V/I*cos(phi)", {"V": 4.999, "I": 19.661e-3, "phi": 1.04446},
     {"V": 0.0032, "I": 0.0095e-3, "phi": 0.00075}, H2_CORR,
     lambda V, I, phi: [V / I * m.cos(phi)]),
    ("[V/I*cos(phi), V/I*sin(phi), V/I]", {"V": 4.999, "I": 19.661e-3, "phi": 1.04446},
     {"V": 0.0032, "I": 0.0095e-3, "phi": 0.00075}, H2_CORR,
     lambda V, I, phi: [V / I * m.cos(phi), V / I * m.sin(phi), V / I]),
    ("sin(x)*exp(y)/z", {"x": 0.7, "y": -1.3, "z": 2.5}, {"x": 0.01, "y": 0.2, "z": 0.05},
     None, lambda x, y, z: [m.sin(x) * m.exp(y) / z]),
    ("log(x) + sqrt(y)*atan(y/x)", {"x": 3.0, "y": 2.0}, {"x": 0.3, "y": 0.1}, None,
     lambda x, y: [m.log(x) + m.sqrt(y) * m.atan(y / x)]),
    ("x^3 - 2*x*y + y^2", {"x": 1.5, "y": -0.5}, {"x": 0.05, "y": 0.02},
     [[1.0, 0.4], [0.4, 1.0]], lambda x, y: [x**3 - 2 * x * y + y**2]),
    ("[x*y/(x+y), tanh(x)*cosh(y), x - y]", {"x": 2.0, "y": 0.5},
     {"x": 0.1, "y": 0.05}, [[1.0, -0.7], [-0.7, 1.0]],
     lambda x, y: [x * y / (x + y), m.tanh(x) * m.cosh(y), x - y]),
    ("a*exp(-b*t) + c", {"a": 10.0, "b": 0.5, "t": 3.0, "c": 1.0},
     {"a": 0.2, "b": 0.01, "c": 0.05}, None,
     lambda a, b, c, t: [a * m.exp(-b * t) + c]),
]


def main() -> None:
    out = {"package": f"uncertainties {uncertainties.__version__}",
           "script": "tests/reference/make_propagate_refs.py", "cases": []}
    for expression, at, u, corr, formula in CASES:
        names = list(u)
        if corr is None:
            values = [ufloat(at[n], u[n]) for n in names]
        else:
            cov = [[corr[i][j] * u[a] * u[b] for j, b in enumerate(names)]
                   for i, a in enumerate(names)]
            values = list(correlated_values([at[n] for n in names], cov))
        constants = [at[n] for n in at if n not in u]
        ys = formula(*values, *constants)
        corr_out = uncertainties.correlation_matrix(ys) if len(ys) > 1 else [[1.0]]
        out["cases"].append({
            "expression": expression, "at": at, "u": u, "corr": corr,
            "f": [y.nominal_value for y in ys], "u(f)": [y.std_dev for y in ys],
            "r": [[float(v) for v in row] for row in corr_out]})
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
