"""The evaluation layer: ``gradcli.evaluate`` (``evaluator.py``) and what it is built from.

This package only re-exports; see ``evaluator.py`` for the path from text to numbers.
"""

from __future__ import annotations

from typing import Any

from gradcli.evaluation.evaluator import (
    MAX_SWEEP_OPS,
    Prepared,
    evaluate,
    evaluate_request,
    output_names,
    prepare,
    prepare_request,
)
from gradcli.evaluation.origin import Evaluated, Origin
from gradcli.plan.computations import Computation, register
from gradcli.request import Request
from gradcli.request.binding import DEFAULT_MAX_POINTS, EvaluationError, parse_constant

__all__ = ["evaluate", "prepare", "EvaluationError", "DEFAULT_MAX_POINTS", "WHATS",
           "output_names", "Prepared", "parse_constant", "Origin", "Evaluated", "Computation",
           "register", "Request", "prepare_request", "evaluate_request", "MAX_SWEEP_OPS"]


def __getattr__(name: str) -> Any:
    """``WHATS``: the names of the registered computations (the table may grow at run
    time, so it is read when asked for)."""
    if name == "WHATS":
        from gradcli.plan.computations import names

        return names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
