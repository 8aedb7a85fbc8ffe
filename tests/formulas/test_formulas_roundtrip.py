"""Every printed formula parses back to what it prints: print -> parse -> evaluate gives
the value of the formula itself, evaluated from its nodes by an evaluator of its own here
(not through the text), over many formulas at many points.

This checks the printer against the parser: precedence and parentheses (``-x^2``,
``a/(b*c)``, ``(a - b)^c``), signs and fractions (``x/2``, ``-(...)``), numbers as the
language reads them (``1e+20``, ``inf``, and nan, which has no name: ``nan`` would be read
as a variable), selections and comparisons. The formulas' variables must be the
expression's: a printed word that is not a variable is a defect.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc
from gradcli.lang import free_variables, parse
from gradcli.lang.names import CONSTANTS
from gradcli.lang.symbolic import _COMPARE, _ELEMENTWISE, Expr, Symbolic

sys.path.insert(0, str(Path(__file__).parents[1]))
from formula_random import expressions  # noqa: E402

RNG = np.random.default_rng(20261128)
POINTS = {"x": RNG.normal(0, 2, 60), "y": RNG.normal(0, 2, 60)}
#: constants that fold to inf and nan, and numbers past 1e16, mixed into random formulas
FOLDING = ["x*(0*(1/0))", "y/0", "x^((-8)^(1/3))", "(1/0 - 1/0)*y", "1e20*x*y",
           "-(1/0)*x", "x*(-8)^(1/3) + y", "x*1e-300*1e-300 + 2.5e-7*y", "where(x > 0, 0/0, y)"]


def value(e: Expr, memo: dict[int, tuple[np.ndarray, np.ndarray]]) -> tuple:
    """(value, size) of a formula's node at POINTS: the node's own meaning, from its kind
    and arguments; size is the sum of the terms' magnitudes, which bounds rounding."""
    if id(e) in memo:
        return memo[id(e)]
    args = [value(a, memo) for a in e.args]
    vals = [v for v, _ in args]
    with np.errstate(all="ignore"):
        if e.kind == "num":
            v = np.full(60, e.data)
            s = np.abs(v)
        elif e.kind == "const":
            v = np.full(60, CONSTANTS[e.data])
            s = np.abs(v)
        elif e.kind == "var":
            v = POINTS[e.data]
            s = np.abs(v)
        elif e.kind == "add":
            const, coefs = e.data
            v = const + sum(c * x for c, x in zip(coefs, vals, strict=True))
            s = abs(const) + sum(abs(c) * z for c, (_, z) in zip(coefs, args, strict=True))
        elif e.kind == "mul":
            coef, exps = e.data
            v = coef * math.prod(np.power(x, p) if p != 1 else x
                                 for x, p in zip(vals, exps, strict=True))
            s = abs(coef) * math.prod(np.power(z, p) if p != 1 else z
                                      for (_, z), p in zip(args, exps, strict=True))
        elif e.kind == "pow":
            v = np.power(*vals)
            s = np.abs(v)
        elif e.kind == "cmp":
            v = _COMPARE[e.data](*vals).astype(float)
            s = np.abs(v)
        elif e.kind == "call" and e.data == "where":
            c, a, b = args
            v = np.where(c[0] != 0, a[0], b[0])
            s = np.where(c[0] != 0, a[1], b[1])
        elif e.kind == "call":
            v = np.asarray(_ELEMENTWISE[e.data].fwd(*vals), float)
            s = np.abs(v)
        else:
            raise AssertionError(f"no evaluator for {e.kind}")
    memo[id(e)] = (np.broadcast_to(v, (60,)), np.broadcast_to(s, (60,)))
    return memo[id(e)]


def _formulas(count: int) -> list[str]:
    """Random expressions (every function, selections with constant branches), some with
    a folding constant added."""
    out = expressions(101, count, constant=0.2, depth=3)
    return [f"{t} + {FOLDING[i % len(FOLDING)]}" if i % 3 == 0 else t
            for i, t in enumerate(out)]


@pytest.mark.parametrize("block", range(3))
def test_printed_formulas_parse_back_to_their_own_value(block: int) -> None:
    """300 expressions, their value and both first derivatives and two second ones: each
    printed text parses, names no variable the expression lacks, and evaluates (gradcli
    eval) to its node's value: the same nan points, the rest equal to 1e-9 of the terms'
    size (the two orders of adding differ by rounding only)."""
    checked = 0
    for text in _formulas(300)[block * 100:(block + 1) * 100]:
        sym = Symbolic(parse(text), limit=1 << 23)
        dx = sym.derivative(sym.result, ("var", "x"))
        dy = sym.derivative(sym.result, ("var", "y"))
        nodes = [sym.result, dx, dy, sym.derivative(dx, ("var", "y")),
                 sym.derivative(dy, ("var", "y"))]
        memo: dict = {}
        for e in nodes:
            if e.text is None:
                continue
            assert "nan" not in e.text.replace("tan", ""), e.text
            assert set(free_variables(parse(e.text))) <= {"x", "y"}, (text, e.text)
            mine, size = value(e, memo)
            with np.errstate(all="ignore"):
                printed = gc.evaluate(f"{e.text} + 0*x + 0*y", "eval", points=POINTS)["f"]
            printed = np.asarray(printed, float)
            mine = np.asarray(mine, float)
            judged = np.isfinite(size) & (np.abs(size) < 1e300)
            assert (np.isnan(mine) == np.isnan(printed))[judged].all(), (text, e.text)
            both = judged & np.isfinite(mine) & np.isfinite(printed)
            gap = np.abs(mine[both] - printed[both])
            assert (gap <= 1e-9 * np.maximum(np.abs(mine), size)[both] + 1e-300).all(), (
                text, e.text)
            checked += int(both.sum())
    assert checked > 10_000


def test_numbers_print_as_the_language_reads_them() -> None:
    """nan folds print as (0/0), infinities as inf, large and tiny numbers in e-notation;
    each evaluates to the number it stands for."""
    cases = {"x*(0*(1/0))": "(0/0)", "-(1/0)*x": "-inf", "1e20*x": "1e+20",
             "2.5e-7*x": "2.5e-07", "x/3": "0.3333333333333333"}
    for text, derivative in cases.items():
        printed = gc.formula(text)["df/dx"]
        assert printed == derivative, (text, printed)
        with np.errstate(all="ignore"):
            got = gc.evaluate(f"{printed} + 0*x", "eval", at={"x": 1.0})["f"]
        expected = {"(0/0)": math.nan, "-inf": -math.inf}.get(printed) or float(printed)
        assert np.array_equal(np.asarray(got, float).reshape(-1), [expected],
                              equal_nan=True), (text, printed, got)
