"""Awkward points: every primitive and every pair of primitives against torch and
JAX, and one answer per point whichever way the point is given.

The reference values are torch 2.13.0 and JAX 0.10.2 (float64; mpmath 1.3.0 to settle a
disagreement at a smooth point), written by tests/reference/make_awkward.py into
tests/reference/awkward.npz; ``awkward.py`` applies the README's rule to them. Every value
must match, or belong to one of the documented classes of difference below (each with
its reason); ``python tests/reference/report_awkward.py`` prints the counts.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import pytest
from awkward import COLUMNS, META, REFERENCE, TABLES, agree, classify, gradcli_table, target

import gradcli
from gradcli.cli.main import main


def test_reference_was_made_by_the_stated_tools():
    assert META["torch"].startswith("2.13.0") and META["jax"] == "0.10.2"
    assert META["generator"] == "tests/reference/make_awkward.py"


@pytest.mark.parametrize("table", TABLES)
def test_every_primitive_and_pair_follows_the_rule(table):
    """gradcli.evaluate (grad and hessian over all points at once) against the target the
    rule picks; a difference must belong to a documented class."""
    ours = gradcli_table(table)
    want, source = target(table)
    ok = agree(ours, want, derivative=np.arange(ours.shape[2]) > 0)
    exprs, points = REFERENCE[f"{table}_exprs"], REFERENCE[f"{table}_points"]
    torch, jax = REFERENCE[f"{table}_torch"], REFERENCE[f"{table}_jax"]
    unexplained = []
    for e, p, c in zip(*np.nonzero(~ok), strict=True):
        if classify(str(exprs[e]), points[p], ours[e, p, c], want[e, p, c],
                     str(source[e, p, c]), torch[e, p, c], jax[e, p, c], c) is None:
            unexplained.append((str(exprs[e]), points[p].tolist(), COLUMNS[points.shape[1]][c],
                                float(ours[e, p, c]), float(want[e, p, c]), str(source[e, p, c])))
    assert not unexplained, f"{len(unexplained)} unexplained, e.g. {unexplained[:10]}"
    assert ok.mean() > 0.99  # the classes stay exceptions


# --- one point, one answer ----------------------------------------------------------------

ONE_POINT = [  # (expression, command, point) where modes, orders or overflow could split
    ("where(x > 0, sqrt(x), 0) + y", "grad", {"x": -1.0, "y": 0.0}),
    ("where(x > 0, sqrt(x), 0) + y", "hessian", {"x": 0.0, "y": 2.0}),
    ("sqrt(x^2+y^2)", "hessian", {"x": 1e200, "y": 1e200}),
    ("sqrt(x^2+y^2)", "grad", {"x": 0.0, "y": 0.0}),
    ("sqrt(relu(x)) * y", "grad", {"x": -1.0, "y": 0.0}),
    ("log(floor(x)) + y", "jacobian", {"x": 0.5, "y": 1.0}),
    ("max(x, y) * exp(x*y)", "hessian", {"x": 1.0, "y": 1.0}),
    ("min(x, y) / x", "grad", {"x": 0.0, "y": 0.0}),
    ("exp(x)^y", "hessian", {"x": 0.0, "y": 0.0}),
    ("x^y * sqrt(y)", "hessian", {"x": 2.0, "y": 0.0}),
    ("atan2(y, x) + hypot(x, y)", "hessian", {"x": 0.0, "y": 0.0}),
    ("[x*y, 1e300*x*y, sqrt(x)*y]", "jacobian", {"x": 1e300, "y": 1e-300}),
    ("exp(x) * exp(y) * 0", "grad", {"x": 1000.0, "y": -1000.0}),
    ("sin(x) * 1e300 * 1e300 * y", "hessian", {"x": 1.0, "y": 0.0}),
    ("sigmoid(x) * softplus(y)", "jvp", {"x": -40.0, "y": 800.0}),
    ("log(sigmoid(x*y))", "hessian", {"x": -1e300, "y": 1.0}),
    ("[sqrt(x) - sqrt(y), x/y]", "vjp", {"x": 0.0, "y": 0.0}),
]
TOLERANCE = 1e-12  # finite values equal to |a - b| <= 1e-12·max(|a|, |b|): rounding only


def _cli(capsys, argv: list[str]) -> dict[str, float]:
    status = main(argv)
    out, err = capsys.readouterr()
    assert status == 0, err
    rows = list(csv.reader(io.StringIO(out)))
    assert len(rows) == 2, out
    return {name: float(v) for name, v in zip(rows[0], rows[1], strict=True)}


def _extra(command: str, point: dict, expr: str) -> tuple[list[str], dict]:
    if command == "jvp":
        return ["--direction", "x=1,y=-1"], {"direction": {"x": 1, "y": -1}}
    if command == "vjp":
        return ["--vector", "1,-1"], {"vector": [1, -1]}
    return [], {}


@pytest.mark.parametrize("expr,command,point", ONE_POINT, ids=[c[0] for c in ONE_POINT])
def test_one_point_one_answer(capsys, tmp_path, expr, command, point):
    """--at, a held --grid, a sampled grid cut into blocks of one point (and hoisted), and
    --points: the same value, the same nan and inf pattern."""
    flags, kwargs = _extra(command, point, expr)
    text = ",".join(f"{k}={v!r}" for k, v in point.items())
    results = {"--at": _cli(capsys, [command, expr, "--at", text, *flags])}
    held = [a for k, v in point.items() for a in ("--grid", f"{k}={v!r}")]
    results["--grid held"] = _cli(capsys, [command, expr, *held, *flags])
    csv_file = tmp_path / "p.csv"
    csv_file.write_text(",".join(point) + "\n" + ",".join(repr(v) for v in point.values()) + "\n")
    results["--points"] = _cli(capsys, [command, expr, "--points", str(csv_file), *flags])
    # sampled: each variable's axis holds the point and a neighbour; blocks of one point
    grid = {k: (v, v + 1.0, 2) if math.isfinite(v) and abs(v) < 1e300 else (v, v, 2)
            for k, v in point.items()}
    sampled = gradcli.evaluate(expr, command, grid=grid, block_size=1, **kwargs)
    shape = np.broadcast_shapes(*(np.shape(v) for v in sampled.values()))
    results["grid, block 1"] = {k: float(np.broadcast_to(v, shape)[(0,) * len(shape)])
                                for k, v in sampled.items()}
    reference = results["--at"]
    for how, got in results.items():
        assert list(got) == list(reference), how
        a, b = np.array(list(got.values())), np.array(list(reference.values()))
        same = agree(a, b, rtol=TOLERANCE)
        assert same.all(), f"{how}: {got} vs --at {reference}"


FINITE = [0.0, 0.5, -1.0, 2.0, 1e-300, 1e300, 5e-324]  # consecutive pairs span grid axes


def test_one_point_one_answer_on_grids_of_awkward_points():
    """Every binary primitive, first and second order: 2×2 grids whose axes run between
    two awkward values (linspace keeps both ends exact), cut into blocks of one point,
    against the same four points given as a point set."""
    pairs = list(zip(FINITE, FINITE[1:], strict=False))
    for expr in map(str, REFERENCE["binary_exprs"]):
        for command in ("grad", "hessian"):
            for (x0, x1), (y0, y1) in [(a, b) for a in pairs for b in pairs]:
                grid = gradcli.evaluate(expr, command, grid={"x": (x0, x1, 2), "y": (y0, y1, 2)},
                                        block_size=1)
                pts = gradcli.evaluate(expr, command, points={
                    "x": np.array([x0, x0, x1, x1]), "y": np.array([y0, y1, y0, y1])})
                for col, values in pts.items():
                    got = np.broadcast_to(grid[col], (2, 2)).reshape(-1)
                    assert agree(got, values, rtol=TOLERANCE).all(), (expr, command, col, got,
                                                                      values)


# --- the conventions table: singular cases through the library and the CLI ---------------

SINGULAR = json.loads(str(REFERENCE["singular"]))
# where the rule picks neither torch's nor JAX's value: mpmath's (50 digits) at a smooth
# point where torch is wrong, and the fused log(sigmoid) (finite for every finite x)
OVERRIDE = {
    "exp(x)^x at 0": {"d2f/dxdx": 2.0},                    # (2 + 4x²)e^(x²) at 0
    "x^y at (2, 0)": {"d2f/dxdy": 0.5, "d2f/dydx": 0.5},  # x^(y-1)(1 + y ln x) at (2, 0)
    "log(sigmoid(x)) at -1000": {"f": -1000.0, "df/dx": 1.0},
}


def _expected(case: dict) -> dict[str, float]:
    out = dict(zip(case["columns"], case["torch"], strict=True))
    out.update(OVERRIDE.get(case["label"], {}))
    return out


def _component(result: dict, column: str) -> float:
    """A scalar column of ``gradcli.evaluate``'s result at its one point: ``d2f/dx[0]dx[1]``
    is ``result["d2f/dxdx"][0, 0, 1]`` (one array per block, components last)."""
    index = tuple(int(k) for k in re.findall(r"\[(\d+)\]", column))
    return float(result[re.sub(r"\[\d+\]", "", column)][(0, *index)])


def _point_text(point: dict) -> str:
    return ",".join(f"{k}=[{','.join(map(repr, v))}]" if isinstance(v, list) else f"{k}={v!r}"
                    for k, v in point.items())


@pytest.mark.parametrize("case", SINGULAR, ids=[c["label"] for c in SINGULAR])
def test_singular_case_library_and_cli(capsys, tmp_path, case):
    """Each row of the README's conventions table, through gradcli.evaluate and through the
    CLI in process, against torch 2.13's value (mpmath's where the README says gradcli
    follows the mathematics, and the fused log(sigmoid))."""
    want = _expected(case)
    lib = gradcli.evaluate(case["expression"], case["command"], at=[case["point"]])
    has_nan = any(isinstance(v, float) and math.isnan(v) for v in case["point"].values())
    if has_nan:  # --at takes numbers; a points file takes nan
        path = tmp_path / "p.csv"
        path.write_text(",".join(case["point"]) + "\n" +
                        ",".join(repr(v) for v in case["point"].values()) + "\n")
        where = ["--points", str(path)]
    else:
        where = ["--at", _point_text(case["point"])]
    got = _cli(capsys, [case["command"], case["expression"], *where])
    for col, value in want.items():
        for how, ours in (("library", _component(lib, col)), ("CLI", got[col])):
            assert agree(ours, value, derivative=col != "f"), (how, col, ours, value)
