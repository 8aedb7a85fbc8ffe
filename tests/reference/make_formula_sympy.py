"""Write tests/reference/formula_sympy.json: sympy's derivatives of the seeds' examples and
of 100 random expressions, beside gradcli's printed formulas.

For every formula it records gradcli's text, sympy's unsimplified ``diff`` (in gradcli's
syntax, so the test can evaluate it with gradcli), and whether ``simplify(gradcli - sympy)``
is 0. Run from the repository root with sympy installed (it is needed only here):

    PYTHONPATH=. python tests/reference/make_formula_sympy.py

It prints the size ratios: gradcli's length against sympy's unsimplified length + 20.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import sympy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

from formula_random import SMOOTH, expressions  # noqa: E402

import gradcli as gc  # noqa: E402

#: the seeds' examples: (gradcli expression, what, at, sympy expression)
SEEDS = [
    ("sin(x)", "grad", None, "sin(x)"),
    ("sin(x)*cos(y)", "grad", None, "sin(x)*cos(y)"),
    ("x^2", "grad", None, "x**2"),
    ("3*x^2 + 5*y^2", "grad", None, "3*x**2 + 5*y**2"),
    ("-x^2 + y^2", "grad", None, "-x**2 + y**2"),
    ("[-x^3, 5x]", "jacobian", None, "[-x**3, 5*x]"),
    ("[sum(x), sum(x^2)]", "jacobian", {"x": [1.0, 2.0, 3.0]},
     "[x_0 + x_1 + x_2, x_0**2 + x_1**2 + x_2**2]"),
    ("x^2 + 3x + 1", "grad", None, "x**2 + 3*x + 1"),
    ("x*y", "grad", None, "x*y"),
    ("x^2 + x + exp(x)", "grad", None, "x**2 + x + exp(x)"),
    ("m = x^2; y = m + x; p = 4*y", "grad", None, "4*(x**2 + x)"),
    ("m = x^2; y = m + x; p = 4*y; q = 2*y; p + q", "grad", None, "6*(x**2 + x)"),
]


def to_sympy(text: str) -> sympy.Expr:
    """gradcli text (the smooth functions, + - * / ^, x[i]) as a sympy expression."""
    text = re.sub(r"([A-Za-z_]\w*)\[(\d+)\]", r"\1_\2", text).replace("^", "**")
    return sympy.sympify(text, locals={"y": sympy.Symbol("y"), "x": sympy.Symbol("x")},
                         rational=True)


def to_gradcli(expr: sympy.Expr) -> str:
    """sympy's printed expression in gradcli's syntax."""
    text = sympy.sstr(expr).replace("**", "^")
    return re.sub(r"\b([A-Za-z])_(\d+)\b", r"\1[\2]", text)


def entry(expression: str, what: str, at: dict | None, reference: str) -> dict:
    ours = gc.formula(expression, what, at=at)
    exprs = to_sympy(reference)
    items = list(exprs) if isinstance(exprs, (list, tuple)) else [exprs]
    items = [sympy.sympify(i) for i in items]
    columns = []
    for column, text in ours.items():
        if "/" not in column:
            continue  # a step the formulas use
        m = re.fullmatch(r"df(?:\[(\d+)\])?/d(.+)", column)
        assert m, column
        f = items[int(m.group(1) or 0)]
        name = m.group(2)
        steps = {k: v for k, v in ours.items() if "/" not in k}
        full = text
        for step, value in reversed(list(steps.items())):  # steps into the formula
            full = re.sub(rf"\b{step}\b", f"({value})", full)
        # a vector variable's gradient on one line (2*x): compared per component, x_j
        # for x (the seeds' grouped formulas are elementwise in x)
        size = len(at[name]) if at and name in at and isinstance(at[name], list) else 0
        for j in range(size) if size else [None]:
            var = sympy.Symbol(re.sub(r"\[(\d+)\]", r"_\1", name) if j is None
                               else f"{name}_{j}")
            theirs = sympy.diff(f, var)
            mine = full if j is None else re.sub(rf"\b{name}\b(?!\[)", f"{name}_{j}", full)
            zero = sympy.simplify(to_sympy(mine) - theirs) == 0
            columns.append({"column": column, "component": j, "gradcli": text,
                            "sympy": to_gradcli(theirs), "simplifies_to_zero": bool(zero)})
    return {"expression": expression, "what": what, "at": at, "columns": columns}


def main() -> None:
    seeds = [entry(*s) for s in SEEDS]
    random = [entry(e, "grad", {"x": 0.0, "y": 0.0}, e.replace("^", "**"))
              for e in expressions(11, 100, unary=SMOOTH, binary=(), wheres=False, depth=3,
                                  powers=("2", "3", "-1", "0.5"))]
    out = {"sympy": sympy.__version__, "script": "tests/reference/make_formula_sympy.py",
           "seeds": seeds, "random": random}
    path = ROOT / "tests" / "reference" / "formula_sympy.json"
    path.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    for name, group in (("seeds", seeds), ("random", random)):
        cols = [c for e in group for c in e["columns"]]
        within = sum(len(c["gradcli"]) <= 1.5 * len(c["sympy"]) + 20 for c in cols)
        ratios = sorted(len(c["gradcli"]) / (len(c["sympy"]) + 20) for c in cols)
        zero = sum(c["simplifies_to_zero"] for c in cols)
        print(f"{name}: {len(cols)} formulas, {zero} equal to sympy's, {within} "
              f"({100 * within / len(cols):.0f} %) within 1.5x sympy's length + 20; "
              f"length / (sympy's + 20): median {ratios[len(ratios) // 2]:.2f}, "
              f"max {ratios[-1]:.2f}")


if __name__ == "__main__":
    main()
