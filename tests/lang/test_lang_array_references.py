"""The functions of vectors and matrices against mpmath: value, gradient and Hessian of an
expression around each (logsumexp, cross_entropy, softmax, log_softmax, cumsum, det, inv,
solve, trace, transpose, outer), at three points.

mpmath's values (mpmath 1.3.0, 40 digits) are in tests/reference/arrays.json, written by
tests/reference/make_arrays.py from its own implementations of each function.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc

REFERENCE = json.loads((Path(__file__).parents[1] / "reference" / "arrays.json").read_text())


@pytest.mark.parametrize("case", REFERENCE["cases"],
                         ids=[f"{c['expression']} at {list(c['at'].values())}"
                              for c in REFERENCE["cases"]])
def test_value_gradient_and_hessian_match_mpmath(case: dict) -> None:
    """Every entry to 1e-12 of the case's largest (a few ulps of rounding in sums of
    terms of that size; an entry that is exactly 0 in mpmath is 0 to that scale)."""
    got = gc.evaluate(case["expression"], "hessian", at=case["at"])
    grad = gc.evaluate(case["expression"], "grad", at=case["at"])
    names = "xyz"
    want = [case["f"], *case["gradient"], *np.ravel(case["hessian"])]
    have = [float(grad["f"][0]), *(float(grad[f"df/d{v}"][0]) for v in names),
            *(float(got[f"d2f/d{a}d{b}"][0]) for a in names for b in names)]
    scale = max(abs(w) for w in want)
    assert np.allclose(have, want, rtol=0, atol=1e-12 * scale), (have, want)


def test_reference_was_made_by_mpmath() -> None:
    assert REFERENCE["generator"] == "tests/reference/make_arrays.py"
    assert REFERENCE["mpmath"] == "1.3.0" and REFERENCE["digits"] == 40
