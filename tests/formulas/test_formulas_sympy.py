"""Derivative formulas against sympy: the seeds' examples and 100 random expressions.

sympy's derivatives are in tests/reference/formula_sympy.json, written by
tests/reference/make_formula_sympy.py with sympy 1.14.0 (sympy is not needed here). For
every formula the script checked that simplify(gradcli's - sympy's) is 0; the tests pin
that gradcli still prints exactly those formulas, and evaluate each against sympy's
unsimplified derivative with gradcli at random points.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" / "formula_sympy.json")
                       .read_text(encoding="utf-8"))
ENTRIES = [("seeds", e) for e in REFERENCE["seeds"]] + [
    ("random", e) for e in REFERENCE["random"]]


def _values(program: str, points: dict) -> np.ndarray:
    vector = np.ndim(points["x"]) > 1  # every variable appears, so every point binds
    tail = " + 0*sum(x) + 0*y" if vector else " + 0*x + 0*y"
    with np.errstate(all="ignore"):
        return np.asarray(gc.evaluate(program + tail, "eval", points=points)["f"], float)


@pytest.mark.parametrize(("group", "entry"), ENTRIES,
                         ids=[f"{g}-{i}" for i, (g, _) in enumerate(ENTRIES)])
def test_formula_equals_sympys_derivative(group: str, entry: dict) -> None:
    """gradcli prints the formula sympy verified, and it evaluates to sympy's derivative."""
    ours = gc.formula(entry["expression"], entry["what"], at=entry["at"])
    steps = "".join(f"{k} = {v}; " for k, v in ours.items() if "/" not in k)
    rng = np.random.default_rng(len(entry["expression"]))
    if entry["at"] and "x" in entry["at"] and np.ndim(entry["at"]["x"]):
        n = len(entry["at"]["x"])
        points = {"x": rng.uniform(0.2, 2.0, (30, n)), "y": np.zeros(30)}
    else:
        points = {"x": rng.uniform(0.2, 2.0, 30), "y": rng.uniform(0.2, 2.0, 30)}
    for column in entry["columns"]:
        assert column["simplifies_to_zero"], column
        assert ours[column["column"]] == column["gradcli"]
        mine = _values(steps + column["gradcli"], points)
        if column["component"] is not None:  # a vector variable's gradient on one line
            mine = np.broadcast_to(mine, points["x"].shape)[:, column["component"]]
        theirs = _values(column["sympy"], points)
        finite = np.isfinite(mine) & np.isfinite(theirs)
        assert (finite == np.isfinite(theirs)).all()
        np.testing.assert_allclose(mine[finite], theirs[finite], rtol=1e-9, atol=1e-12)


def test_formulas_are_at_most_about_sympys_length() -> None:
    """At least 90 % of the printed derivatives are at most 1.5x the length of sympy's
    unsimplified diff plus 20 characters (the seeds' examples: all of them)."""
    for group in ("seeds", "random"):
        cols = [c for e in REFERENCE[group] for c in e["columns"]]
        within = sum(len(c["gradcli"]) <= 1.5 * len(c["sympy"]) + 20 for c in cols)
        assert within >= 0.9 * len(cols), (group, within, len(cols))
    assert all(len(c["gradcli"]) <= 1.5 * len(c["sympy"]) + 20
               for e in REFERENCE["seeds"] for c in e["columns"])
