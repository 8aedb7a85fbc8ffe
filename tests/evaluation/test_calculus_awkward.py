"""Taylor mode at singular points: diff, laplacian and taylor against the
awkward-point reference of torch 2.13 and JAX 0.10.2 (tests/reference/awkward.npz, made by
tests/reference/make_awkward.py; ``awkward.py`` applies the README's rule to it).

Taylor mode is a forward mode: its first order *is* ``jvp``'s value, bit for bit, at every
point. To second order it gives the rule's value except in documented classes:

* float64's range (|x| ≤ 1e-154 or ≥ 1e154, subnormals), as for grad and hessian;
* forward against reverse mode: where a select or a zero derivative meets an inf or nan,
  the two modes already differ at first order (``sqrt(relu(x))`` at -1: jvp nan, grad 0);
* both non-finite: inf where the reference has nan, or the other way;
* polarization: a mixed partial ∂²f/∂x∂y comes from jets along combined directions, which
  carry the pure partials; where one of those is not finite, so is the mixed one;
* a nan argument.
"""

from __future__ import annotations

import numpy as np
import pytest
from awkward import COLUMNS, REFERENCE, agree, target

import gradcli

ev = gradcli.evaluate


def _columns(expression: str, cols: dict, names: list[str], n: int) -> dict[str, np.ndarray]:
    out = {}
    for name in COLUMNS[len(names)][1:]:
        wrt = ",".join(name.split("/")[1][1:].split("d"))
        r = ev(expression, "diff", points=cols, wrt=wrt)
        out[name] = np.broadcast_to(next(v for k, v in r.items() if k.startswith("d")), (n,))
    return out


def _classify(table: str) -> tuple[int, int, dict[str, int], list]:
    points = REFERENCE[f"{table}_points"]
    n, k = points.shape
    names = ["x", "y"][:k]
    cols = {v: points[:, i] for i, v in enumerate(names)}
    want, _ = target(table)
    extreme = np.any((np.abs(points) <= 1e-154) | (np.abs(points) >= 1e154), axis=1)
    nan_input = np.any(np.isnan(points), axis=1)
    counts: dict[str, int] = {}
    unexplained, total, matched = [], 0, 0
    for e, expression in enumerate(map(str, REFERENCE[f"{table}_exprs"])):
        ours = _columns(expression, cols, names, n)
        grad = ev(expression, "grad", points=cols)
        differ = np.zeros(n, dtype=bool)
        for v in names:
            forward = ev(expression, "jvp", points=cols, direction={v: 1.0})["jvp"]
            # jvp gives the other variables a zero tangent (torch's and JAX's rule), so 0·∞
            # from another variable's non-finite partial is nan where the partial
            # derivative (the others held) is not; everywhere else, first order is jvp's
            others = np.zeros(n, dtype=bool)
            for w in names:
                if w != v:
                    others |= ~np.isfinite(ours[f"df/d{w}"])
            assert np.array_equal(np.broadcast_to(forward, (n,))[~others],
                                  ours[f"df/d{v}"][~others], equal_nan=True), (expression, v)
            differ |= ~agree(np.broadcast_to(forward, (n,)),
                             np.broadcast_to(grad[f"df/d{v}"], (n,)))
        pure_bad = ~np.all([np.isfinite(ours[f"d2f/d{v}d{v}"]) for v in names], axis=0)
        for c, name in enumerate(COLUMNS[k][1:], 1):
            ok = agree(ours[name], want[e, :, c], derivative=True)
            total += ok.size
            matched += int(ok.sum())
            for p in np.nonzero(~ok)[0]:
                if extreme[p]:
                    cls = "float64 range"
                elif differ[p]:
                    cls = "forward against reverse"
                elif not np.isfinite(ours[name][p]) and not np.isfinite(want[e, p, c]):
                    cls = "both non-finite"
                elif name in ("d2f/dxdy", "d2f/dydx") and pure_bad[p]:
                    cls = "polarization"
                elif nan_input[p]:
                    cls = "nan argument"
                else:
                    unexplained.append((expression, points[p].tolist(), name,
                                        float(ours[name][p]), float(want[e, p, c])))
                    continue
                counts[cls] = counts.get(cls, 0) + 1
    return total, matched, counts, unexplained


@pytest.mark.parametrize(("table", "share"), [("unary", 0.95), ("binary", 0.95),
                                              ("pairs", 0.9)])
def test_taylor_mode_follows_the_rule_or_a_documented_class(table: str, share: float) -> None:
    """Every primitive and pair of primitives, to second order (pure and mixed partials)."""
    total, matched, counts, unexplained = _classify(table)
    assert not unexplained, f"{len(unexplained)} unexplained, e.g. {unexplained[:10]}"
    assert matched / total > share, counts


NAN, INF = float("nan"), float("inf")
# the README's conventions table, through Taylor mode: (expression, point, what, column, value)
CONVENTIONS = [
    ("abs(x)", {"x": 0.0}, "diff", "df/dx", 0.0),
    ("abs(x)", {"x": 0.0}, "laplacian", "laplacian", 0.0),
    ("relu(x)", {"x": 0.0}, "diff", "df/dx", 0.0),
    ("relu(x)", {"x": NAN}, "diff", "df/dx", 1.0),
    ("sign(x)", {"x": NAN}, "diff", "df/dx", 0.0),
    ("sqrt(x)", {"x": 0.0}, "diff", "df/dx", INF),
    ("log(x)", {"x": 0.0}, "diff", "df/dx", INF),
    ("asin(x)", {"x": 1.0}, "diff", "df/dx", INF),
    ("acosh(x)", {"x": 1.0}, "diff", "df/dx", INF),
    ("cbrt(x)", {"x": 0.0}, "diff", "df/dx", INF),
    ("sqrt(x^2)", {"x": 0.0}, "diff", "df/dx", NAN),
    ("log(floor(x)) + y", {"x": 0.5, "y": 1.0}, "diff", "df/dx", 0.0),
    ("min(x, y)", {"x": 1.0, "y": 1.0}, "diff", "df/dx", 0.5),
    ("max(x, y)", {"x": NAN, "y": 1.0}, "diff", "df/dx", 1.0),
    ("hypot(x, y)", {"x": 0.0, "y": 0.0}, "diff", "df/dx", NAN),
    ("atan2(y, x)", {"x": 0.0, "y": 0.0}, "diff", "df/dx", 0.0),
    ("atan2(y, x)", {"x": 1e-300, "y": 1e-300}, "diff", "df/dx", 0.0),
    ("norm([x, y])", {"x": 0.0, "y": 0.0}, "diff", "df/dx", 0.0),
    ("x^0", {"x": 0.0}, "diff", "df/dx", 0.0),
    ("x/0", {"x": 1.0}, "diff", "df/dx", INF),
    ("exp(x)^x", {"x": 0.0}, "diff", "d2f/dx2", 2.0),
    ("x^y", {"x": 2.0, "y": 0.0}, "diff", "d2f/dxdy", 0.5),
    ("log(sigmoid(x))", {"x": -1000.0}, "diff", "df/dx", 1.0),
    ("prod([x, 2, 3])", {"x": 0.0}, "diff", "df/dx", 6.0),
    ("sqrt(x^2 + y^2)", {"x": 1e200, "y": 1e200}, "laplacian", "laplacian", 0.0),
    # where forward and reverse mode differ (README): Taylor mode gives forward mode's
    ("where(x > 0, sqrt(x), 0)", {"x": -1.0}, "diff", "df/dx", 0.0),
    ("sqrt(relu(x))", {"x": -1.0}, "diff", "df/dx", NAN),
]


@pytest.mark.parametrize(("expression", "point", "what", "column", "value"), CONVENTIONS)
def test_conventions_at_singular_points(expression, point, what, column, value) -> None:
    wrt = {"d2f/dxdy": "x,y", "d2f/dx2": "x,x"}.get(column, "x")
    kw = {"wrt": wrt} if what == "diff" else {}
    got = ev(expression, what, at=[point], **kw)[column][0]
    assert np.array_equal(got, value, equal_nan=True), got
    if what == "diff" and column == "df/dx":  # the jvp command's value, in every row
        jvp = ev(expression, "jvp", at=[point], direction={"x": 1.0})["jvp"]
        assert np.array_equal(np.broadcast_to(jvp, (1,))[0], got, equal_nan=True)
