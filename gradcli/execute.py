"""One executor: every request runs here, whoever built it.

A :class:`~gradcli.request.Request` names what it asks in ``what``: a computation of the
table (``plan/computations.py``: eval, grad, jacobian, ..., taylor), run by the
evaluation stage, or an application, run by its room. Each application is one record of
:data:`APPLICATIONS`: its name (the command's), the function that runs a request (named
``"module:function"``, imported only when that application runs, so the executor costs
nothing at start-up) and what it returns. The command line, the library functions
(``gradcli.critical``, ``gradcli.plot``...), the session and the explorer build the same
requests and call :func:`execute`; a front end adds only context that changes no value
(a progress bar, a sink rows stream into, its words for a hint).
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

from gradcli.request import Request

__all__ = ["Application", "APPLICATIONS", "execute", "application"]


class Application(NamedTuple):
    """An application: ``name`` (what a request asks), ``run`` (``"module:function"``
    taking the request and the front end's context) and ``returns``, what that gives."""

    name: str
    run: str
    returns: str


#: every application, by name (the computation table holds the rest of what may be asked)
APPLICATIONS: dict[str, Application] = {a.name: a for a in (
    Application("propagate", "gradcli.uncertainty.propagation:propagate_request",
                "a Propagated (the estimate, its uncertainty, the budget or Monte Carlo)"),
    Application("critical", "gradcli.fields.paths:critical_request", "an Outcome of rows"),
    Application("descend", "gradcli.fields.paths:descend_request", "an Outcome of rows"),
    Application("flow", "gradcli.fields.paths:flow_request", "an Outcome of rows"),
    Application("implicit", "gradcli.fields.implicit:implicit_request", "an Outcome of rows"),
    Application("integrate", "gradcli.fields.integrate:integrate_request",
                "an Outcome of one row"),
    Application("curvilinear", "gradcli.fields.curvilinear:curvilinear_request",
                "an Outcome of rows"),
    Application("graph", "gradcli.graph.nodes:graph_request",
                "an Outcome: the nodes and the output (facts)"),
    Application("formula", "gradcli.formulas.derivative_formulas:formula_request",
                "the formulas ({column: text}) or the backward program's text"),
    Application("plot", "gradcli.plot.pipeline:plot_request",
                "a PlotResult (the field, notes, non-finite count)"),
)}


def application(what: str) -> Application | None:
    """The application ``what`` names, or None (a computation of the table)."""
    return APPLICATIONS.get(what)


def execute(request: Request, **context: Any) -> Any:
    """Run ``request``. A computation of the table is prepared and run by the evaluation
    stage (``evaluation.evaluate_request``: an ``Evaluated``; ``context`` may give the
    ``prepared`` request, a ``sink``, ``progress`` and a Dask ``client``); an application
    runs by its record's ``run`` with ``context``. Raises what the stages raise
    (ExpressionError, EvaluationError...), an unknown ``what`` naming the choices."""
    record = APPLICATIONS.get(request.what)
    if record is None:
        from gradcli.evaluation import evaluate_request
        from gradcli.plan.computations import names

        if request.what not in names():
            from gradcli.errors import EvaluationError

            raise EvaluationError(f"unknown what={request.what!r}: a computation "
                                  f"({', '.join(names())}) or an application "
                                  f"({', '.join(APPLICATIONS)})")
        return evaluate_request(request, **context)
    module, _, function = record.run.partition(":")
    return getattr(importlib.import_module(module), function)(request, **context)
