"""Derivative formulas against the engine: every printed formula, evaluated by gradcli's own
evaluator, gives the engine's derivative (1e-12 relative where both are finite).

The formulas come from the rule table's expression forms and the simplifier; the values
they are compared with come from the engine's numeric rules, a separate path. Where the
engine's value is not finite, the formula may be finite only where the simplifier removed
an indeterminate form (``x/x`` is 1, ``0*log(0)`` is 0); a finite engine value must never
meet a non-finite formula.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc
from gradcli.evaluation import EvaluationError
from gradcli.lang.formula import NO_FORMULA, REDUCTIONS
from gradcli.lang.names import FUNCTIONS

sys.path.insert(0, str(Path(__file__).parent))
from formula_random import BINARY, UNARY, expressions  # noqa: E402

RNG = np.random.default_rng(20261125)
#: comparisons made and those over 1e-12 relative (the random expressions' tally)
COUNTS = {"compared": 0, "over 1e-12": 0}
#: random points plus awkward ones: zeros, kinks, ties, ±1, large and tiny values
AWKWARD = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, 1e3, -1e3, 1e-8, -1e-8, 40.0]


def _points(n: int = 40, large: float = 1e150, tiny: bool = True) -> dict[str, np.ndarray]:
    awkward = [*(a for a in AWKWARD if tiny or abs(a) != 1e-8), large, -large]
    xs = np.concatenate([RNG.normal(0, 2, n), awkward, awkward[::-1], awkward])
    ys = np.concatenate([RNG.normal(0, 2, n), awkward, awkward, np.array(awkward) * 0.5])
    return {"x": xs, "y": ys}


def _program(result: dict[str, str], column: str, change=lambda t: t) -> str:  # noqa: ANN001
    """The formula of ``column`` as a program: the steps it uses, then its right side."""
    steps = [f"{k} = {change(v)}" for k, v in result.items() if "/" not in k and
             k.isidentifier() and k not in ("laplacian", "div", "curl", "jvp")]
    return "; ".join([*steps, change(result[column])]) + " + 0*x + 0*y"


def _magnitude(text: str) -> str:
    """``text`` with every sum and difference ``a ± b`` made ``abs(a) + abs(b)``: the size of
    the terms a floating-point evaluation adds, which bounds its rounding error. Where
    terms of 1e8 cancel to 0.5 (at x = 1e-8), float64 leaves 1e-8 of 0.5 exact in either
    evaluation, and the comparison allows for it."""
    from gradcli.lang import Binary, Call, Compare, Unary, parse, to_text
    from gradcli.lang.ast import fold, with_children

    def combine(node, parts):  # type: ignore[no-untyped-def]
        # (the node as it was, the node made a magnitude): comparisons keep their operands
        kept = with_children(node, [p[0] for p in parts])
        if isinstance(node, Compare):
            return kept, kept
        sizes = [p[1] for p in parts]
        if isinstance(node, Binary) and node.op in "+-":
            return kept, Binary("+", Call("abs", (sizes[0],)), Call("abs", (sizes[1],)))
        if isinstance(node, Unary):
            return kept, sizes[0]
        return kept, with_children(node, sizes)

    tree = parse(text)
    return to_text(fold(tree, combine)[1], minimal=True)


def _compare(engine: np.ndarray, formula: np.ndarray, what: str,
             f: np.ndarray | None = None, size: np.ndarray | None = None,
             rtol: float = 1e-12) -> None:
    """Where f itself is a number, the formula's value equals the engine's derivative."""
    engine, formula = np.broadcast_arrays(np.asarray(engine, float), np.asarray(formula, float))
    if f is not None:  # where f is nan (0/0, log of a negative) neither is meaningful
        keep = np.broadcast_to(~np.isnan(np.asarray(f, float)), engine.shape)
        engine, formula = engine[keep], formula[keep]
        size = None if size is None else np.broadcast_to(size, keep.shape)[keep]
    both = np.isfinite(engine) & np.isfinite(formula)
    gap = np.abs(engine - formula)
    scale = np.maximum(np.abs(engine), np.abs(formula))
    if size is not None:
        size = np.broadcast_to(np.abs(np.asarray(size, float)), scale.shape)
        scale = np.where(np.isfinite(size), np.maximum(scale, size), scale)
    bad = both & (gap > rtol * scale + 1e-12)
    assert not bad.any(), (what, engine[bad][:3], formula[bad][:3])
    COUNTS["compared"] += int(both.sum())
    COUNTS["over 1e-12"] += int((both & (gap > 1e-12 * scale + 1e-12)).sum())
    # a product of large factors may overflow in the formula's order where the engine's
    # order stays finite: only beyond 1e150 is that allowed
    lost = np.isfinite(engine) & ~np.isfinite(formula) & ~(
        np.isinf(formula) & (np.abs(engine) > 1e150))
    assert not lost.any(), (what, "engine finite, formula not", engine[lost][:3],
                            formula[lost][:3])
    # an infinite engine value is met by the same infinity (or nan, where the formula's
    # order of operations meets inf - inf or 0*inf first); a nan may become anything
    infinite = np.isinf(engine) & ~(np.abs(formula) > 1e150)
    assert (~np.isfinite(formula) | ~infinite).all(), (what, "engine infinite, formula "
                                                       "finite", formula[infinite])


def _check_grad(expression: str, points: dict[str, np.ndarray], rtol: float = 1e-12) -> None:
    with np.errstate(all="ignore"):
        engine = gc.evaluate(expression, "grad", points=points, wrt="x,y")
        result = gc.formula(expression, "grad", at={"x": 0.0, "y": 0.0})
        for column in ("df/dx", "df/dy"):
            value = gc.evaluate(_program(result, column), "eval", points=points)
            size = gc.evaluate(_program(result, column, _magnitude), "eval", points=points)
            _compare(engine[column], value["f"], f"{expression}: {column} = {result[column]}",
                     engine["f"], size["f"], rtol)


def test_every_language_function_has_a_formula_or_says_it_has_none() -> None:
    """Each function of the language differentiates by a rule form, by a vector rule, or
    is refused with a message naming it."""
    for name, spec in FUNCTIONS.items():
        if spec.kind in ("elementwise", "binary") and spec.arity <= 2 and name not in (
                "min", "max", "pow"):
            from gradcli.engine.rules import PRIMITIVES

            assert PRIMITIVES[spec.engine].form is not None, name
        elif name in NO_FORMULA:
            args = ", ".join(["A"] * spec.arity)
            with pytest.raises(EvaluationError, match=f"no formula yet for {name}"):
                gc.formula(f"sum({name}({args}))", at={"A": [[1.0, 0.0], [0.0, 1.0]]})
        else:
            assert name in (*REDUCTIONS, "softmax", "where", "pow", "min", "max"), name


@pytest.mark.parametrize("name", UNARY)
def test_unary_rule_forms_agree_with_the_numeric_rules(name: str) -> None:
    """d/dx f(x) printed from the form equals the engine's rule at random points and at
    0, ±1 and other kinks (abs'(0) = 0, relu'(0) = 0, sign' = 0: PyTorch's conventions)."""
    _check_grad(f"{name}(x)", _points())
    _check_grad(f"{name}(x*y)", _points())


@pytest.mark.parametrize("name", [*BINARY, "pow"])
def test_binary_rule_forms_agree_with_the_numeric_rules(name: str) -> None:
    """Both partials of max, min (ties split evenly), atan2 (0 at the origin), hypot and
    pow (0^0, 0^y) equal the engine's, including at ties and zeros."""
    _check_grad(f"{name}(x, y)", _points())
    _check_grad(f"{name}(x, 2)", _points())
    _check_grad(f"{name}(2, y)", _points())


def test_where_and_comparisons_take_the_engine_branch_at_the_kink() -> None:
    """where's derivative selects like the engine's, at the boundary included."""
    for text in ("where(x > 0, x^2, -x)", "where(x >= y, sin(x), x*y)", "relu(x - y)",
                 "abs(x)*y", "max(x, 0)", "(x > 1)*x^2"):
        _check_grad(text, _points())


def test_the_formula_of_x2_3x_1_is_2x_3() -> None:
    """The seed's example prints in its textbook form."""
    assert gc.formula("x^2 + 3x + 1") == {"df/dx": "2*x + 3"}
    assert gc.formula("sin(x)*cos(y)") == {"df/dx": "cos(x)*cos(y)",
                                           "df/dy": "-sin(x)*sin(y)"}


@pytest.mark.parametrize("block", range(4))
def test_200_random_expressions_agree_with_the_engine(block: int) -> None:
    """200 random expressions over every function (50 per block): each formula equals the
    engine's gradient at random and awkward points (0, kinks, ties, ±1, 1e3, 1e6; not
    1e-8, where the engine's own x/x loses 8 digits that the simplified formula keeps)."""
    COUNTS.update({"compared": 0, "over 1e-12": 0})
    for text in expressions(7, 200)[block * 50:(block + 1) * 50]:
        _check_grad(text, _points(20, large=1e6, tiny=False), rtol=1e-7)
    # ill-conditioned points (terms of 1e10 cancelling) may differ beyond 1e-12 in the
    # engine's digits, never beyond 1e-7; they are rare
    assert COUNTS["over 1e-12"] <= 0.002 * COUNTS["compared"], COUNTS
