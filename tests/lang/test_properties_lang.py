"""Property-based tests (hypothesis) of the expression language and the engine behind it.

* Well-formed expressions: the parser builds exactly the tree the text means, and
  parse -> to_text -> parse is stable.
* The engine's gradient (reverse mode at points, forward mode on a grid) matches central
  differences of the engine's own values wherever the function is smooth.
* Hostile text: ``parse`` answers with a tree or an ExpressionError -- never any other
  exception, never slowly -- and the error renders as at most three printable lines.

The strategies live in ``fuzz/grammar.py``; ``fuzz/run.py`` runs the same properties (and
the CLI) at a much higher example count. Here the counts are small and the runs
derandomized, so the normal suite stays fast and deterministic.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gradcli import evaluate
from gradcli.lang import ExpressionError, Node, parse, to_text

_GRAMMAR = Path(__file__).resolve().parents[2] / "fuzz" / "grammar.py"


def _load_grammar():
    name = "gradcli_fuzz_grammar"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, _GRAMMAR)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


grammar = _load_grammar()

FAST = settings(max_examples=100, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])



# --- well-formed expressions -----------------------------------------------------------------

@FAST
@given(grammar.expressions())
def test_parser_builds_the_tree_the_text_means(pair: tuple[Node, str]) -> None:
    tree, text = pair
    assert parse(text) == tree, text


@FAST
@given(grammar.expressions())
def test_parse_print_parse_is_stable(pair: tuple[Node, str]) -> None:
    _, text = pair
    first = parse(text)
    printed = to_text(first)
    again = parse(printed)
    assert again == first
    assert to_text(again) == printed  # the canonical text is a fixed point
    minimal = to_text(first, minimal=True)  # only the parentheses precedence needs
    assert parse(minimal) == first
    assert len(minimal) <= len(printed)


# --- derivatives against central differences ---------------------------------------------------

def _central(expr: str, point: dict[str, float], var: str, scale: float) -> tuple[float, float]:
    """Central differences with steps h and 2h (h = scale * max(1, |v|)), from the engine's
    own values. The step actually taken is (v+h) - (v-h) as rounded, not 2h."""
    v = point[var]
    steps = [scale * max(1.0, abs(v)), 2 * scale * max(1.0, abs(v))]
    at = []
    for h in steps:
        at += [{**point, var: v + h}, {**point, var: v - h}]
    f = np.asarray(evaluate(expr, "eval", at=at)["f"], dtype=float).reshape(-1)
    out = []
    for k, h in enumerate(steps):
        out.append((f[2 * k] - f[2 * k + 1]) / ((v + h) - (v - h)))
    return out[0], out[1]


coordinate = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(grammar.smooth_expressions(), coordinate, coordinate)
def test_gradient_matches_central_differences(expr: str, x: float, y: float) -> None:
    """Tolerance: relative 1e-5 (floor 1). With h = 1e-6 * max(1, |v|) the truncation error
    h^2 |f'''| / 6 is ~1e-13 |f'''| and the rounding error ~ulp(f) / h ~ 2e-10 |f|; values are
    limited to |f| <= 1e3 and |grad| <= 1e4, so both are far below 1e-5 unless f''' is huge
    or f is evaluated with heavy cancellation -- which the h/2h comparison detects (the two
    estimates then disagree and the point is skipped, not failed)."""
    point = {"x": x, "y": y}
    rev = evaluate(expr, "grad", at=[point])
    fwd = evaluate(expr, "grad", grid={"x": (x, x, 1), "y": (y, y, 1)})
    f = float(np.asarray(rev["f"]).reshape(-1)[0])
    if not math.isfinite(f) or abs(f) > 1e3:
        return
    for var in ("x", "y"):
        g = float(np.asarray(rev[f"df/d{var}"]).reshape(-1)[0])
        g_fwd = float(np.asarray(fwd[f"df/d{var}"]).reshape(-1)[0])
        if not math.isfinite(g) or abs(g) > 1e4:
            return
        # forward and reverse mode apply the same rules in different orders
        assert math.isclose(g_fwd, g, rel_tol=1e-9, abs_tol=1e-9 * max(1.0, abs(f))), (expr, var)
        fd_h, fd_2h = _central(expr, point, var, 1e-6)
        scale = max(1.0, abs(g), abs(fd_h))
        if not (math.isfinite(fd_h) and math.isfinite(fd_2h)) or abs(fd_h - fd_2h) > 2e-6 * scale:
            continue  # the finite-difference estimate itself is unstable here
        assert abs(g - fd_h) <= 1e-5 * scale, (expr, var, point, g, fd_h)


# --- hostile text ------------------------------------------------------------------------------

def _parse_or_error(text: str) -> Node | ExpressionError:
    # no wall-clock bound here (timed assertions fail on a loaded machine); the fuzz run
    # (make fuzz) reports slow parses
    try:
        result: Node | ExpressionError = parse(text)
    except ExpressionError as exc:  # the only exception parse may raise
        result = exc
    return result


def _check_answer(text: str, result: Node | ExpressionError) -> None:
    if isinstance(result, ExpressionError):
        assert result.position is None or 0 <= result.position <= len(text)
        lines = result.render().split("\n")
        assert len(lines) in (1, 3)
        assert lines[-1].startswith("error: ")
        for line in lines:  # nothing that could drive a terminal: no NUL, ESC, CR, ...
            assert line.isprintable(), repr(line)
        if len(lines) == 3:
            assert lines[1].strip() == "^"
    else:  # anything accepted round-trips
        assert parse(to_text(result, minimal=True)) == result


@settings(max_examples=300, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(grammar.junk_text)
def test_hostile_text_gives_a_tree_or_an_expression_error(text: str) -> None:
    _check_answer(text, _parse_or_error(text))


@settings(max_examples=100, deadline=None, derandomize=True, database=None)
@given(st.text(min_size=0, max_size=20))
def test_random_unicode_gives_a_tree_or_an_expression_error(text: str) -> None:
    _check_answer(text, _parse_or_error(text))


def test_hostile_snippets_each_alone_and_around_an_expression() -> None:
    for snippet in grammar.HOSTILE_SNIPPETS:
        for text in (snippet, f"x{snippet}", f"{snippet}x", f"sin({snippet})", f"[x, {snippet}]"):
            _check_answer(text, _parse_or_error(text))


@pytest.mark.parametrize("text", ["+".join(["x"] * 202), "*".join(["x"] * 300),
                                  "-" * 101 + "x", "+" * 150 + "x", "2^" * 101 + "2"],
                         ids=["sum-202", "product-300", "minus-101", "plus-150", "power-101"])
def test_round_trip_of_long_chains(text: str) -> None:
    """Fully parenthesised text of such a chain nests past the parser's limit; the minimal
    text keeps the nesting the user typed."""
    tree = parse(text)  # accepted: within the documented 200 levels
    assert parse(to_text(tree, minimal=True)) == tree
