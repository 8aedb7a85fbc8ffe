"""``gradcli.formula``: each derivative a command computes, as an expression of its own.

The application of the formula printer (``lang/formula_printer.py``) to one request: which
computation (its record's ``formula``), where (a point's shapes), how much work the memory
budget allows, and in which form (an expression, the backward program, LaTeX).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, FormulaError
from gradcli.lang import free_variables, parse, symbolic
from gradcli.lang.formula_printer import (
    Derivatives,
    TooLarge,
    backward_program,
    render,
    split_names,
)
from gradcli.lang.symbolic import Symbolic
from gradcli.request import Request
from gradcli.request.budget import memory_budget, size_text

__all__ = ["FORMS", "formula", "whats"]


#: the forms formulas print in
FORMS = ("expr", "program", "latex")


def whats() -> tuple[str, ...]:
    """The computations that have formulas: those whose record has ``formula``."""
    from gradcli.plan.computations import TABLE, names

    names()
    return tuple(name for name, record in TABLE.items() if record.formula is not None)


def __getattr__(name: str) -> Any:
    """``WHATS``: :func:`whats` (the table may grow at run time)."""
    if name == "WHATS":
        return whats()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def formula(expression: str, what: str = "grad", wrt: Any = None, form: str = "expr", *,
            at: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
            direction: Mapping[str, Any] | None = None, order: int | None = None,
            unit: bool = False, vector: Any = None,
            memory: Any = None) -> dict[str, str] | str:
    """The derivatives ``what`` computes, as text in gradcli's language.

    Returns ``{column name: formula}`` in the command's column order, preceded by the
    program's steps the formulas use (``{"m": "x^2", ..., "df/dx": ...}``); ``form="latex"``
    gives LaTeX instead; ``form="program"`` (grad only) returns the backward program's
    text. ``wrt`` means what it means for ``evaluate``; ``at`` (a point, or a list whose
    first point counts) gives vector variables their length; ``direction`` is jvp's and
    hvp's tangent (``unit=True`` normalises it); ``order`` is diff's; ``vector`` vjp's v.
    Which computations have formulas, and how, is their records' ``formula``. ``memory``
    is the budget (``"512M"``; default ``$GRADCLI_MEMORY``, else 1 GiB): building takes
    at most one step of work per ``symbolic.STEP_BYTES`` of it.
    Raises :class:`EvaluationError` naming the parameter or the part with no formula;
    :class:`TooLarge` (one of them) past a limit on the formulas' size.
    """
    from gradcli.plan.computations import TABLE, names

    names()
    record = TABLE.get(what)
    if record is None or record.formula is None:
        raise EvaluationError(f"what={what!r} has no formulas: use one of "
                              f"{', '.join(whats())}")
    if form not in FORMS:
        raise EvaluationError(f"form={form!r}: use one of {', '.join(FORMS)}")
    if form == "program" and not record.backward_program:
        having = [n for n, r in TABLE.items() if r.backward_program]
        raise EvaluationError(f"form='program' is the backward program of "
                              f"{', '.join(having)}, not of {what}")
    tree = parse(expression)
    point = _point(at)
    names = free_variables(tree)
    shapes = {n: np.shape(v) if not isinstance(v, str) else () for n, v in point.items()}
    budget = memory_budget(memory)
    try:
        sym = Symbolic(tree, shapes, limit=budget // symbolic.STEP_BYTES)
        if form == "program":
            return backward_program(sym, tree, names)
        asked = {"wrt": split_names(wrt) if wrt is not None else None, "direction": direction,
                 "order": order, "unit": unit, "vector": vector}
        made = Derivatives(sym, names, point, tree)
        columns = made.count(record.formula(made, asked))
        return render(sym, tree, names, columns, form)
    except symbolic.TooLarge as exc:
        raise TooLarge(f"building the formulas takes more than {exc.limit:,} steps, the limit "
                       f"of the memory budget ({size_text(budget)}, memory=): ask for fewer "
                       "derivatives, or name shared parts as steps") from None
    except FormulaError as exc:
        raise EvaluationError(f"{exc}") from None


def _point(at: Any) -> dict[str, Any]:
    if at is None:
        return {}
    if isinstance(at, Mapping):
        return dict(at)
    points = list(at)
    return dict(points[0]) if points else {}


def formula_request(request: Request, **_: Any) -> dict[str, str] | str:
    """``formula`` (``gradcli.execute``): ``parameters`` ``computation`` (whose
    derivatives), ``form``, ``wrt``, ``direction``, ``order``, ``unit``, ``vector``;
    ``at`` gives vector variables their length; the request's ``memory`` bounds the
    work."""
    p = dict(request.parameters or {})
    return formula(request.expression, p.pop("computation", "grad"), p.pop("wrt", None),
                   p.pop("form", "expr"), at=request.at, memory=request.memory, **p)
