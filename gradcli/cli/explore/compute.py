"""What the explorer's page asks for, computed by gradcli's own engine: one function per
kind of request, a JSON-ready dict in, a JSON-ready dict out.

These run inside the worker process (``worker.py``), never in the server's threads, so a
slow request can be cut off by ending the process. Every value comes from the same
functions the commands call (``plot``'s field, ``grad``'s values, ``graph``'s nodes,
``--formula``'s text, ``descend``/``flow``/``critical``'s rows), and the texts a request
carries (grid specs, held values) are read by the command line's own readers, so a
message about them is the command line's message. Nothing here reads or writes a file:
values are read without a file reader, and the expression is text, never ``@FILE``.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.lang import ExpressionError, free_variables, parse

__all__ = ["HANDLERS", "handle", "Refused", "DEFAULT_COUNT", "MAX_STEPS", "MAX_TIMES"]

#: grid points per sampled axis when the page gives none (one axis, two axes)
DEFAULT_COUNT = {1: 401, 2: 121}
#: the most descent steps and flow times one request may ask for (the page's own bound;
#: the path comes back whole)
MAX_STEPS, MAX_TIMES = 100_000, 100_001
#: seeds per axis for the critical points of the visible region
CRITICAL_SEEDS = 15
#: the variables a page can draw at once (a slice of the others: one slider each)
DRAWN = 2


class Refused(Exception):
    """A request the page should not have sent (a missing or mistyped field): 400."""


def _text(payload: Mapping[str, Any], key: str, default: str | None = None) -> str:
    value = payload.get(key, default)
    if not isinstance(value, str):
        raise Refused(f"'{key}' must be text")
    return value


def _texts(payload: Mapping[str, Any], key: str) -> list[str]:
    value = payload.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise Refused(f"'{key}' must be a list of texts")
    return value


def _number(value: Any, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise Refused(f"'{key}' must be a number")
    return float(value)


def _whole(payload: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = payload.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EvaluationError(f"{ref(key)} must be a whole number from {low} to {high:,} "
                              "here")
    return value


def _max_points(payload: Mapping[str, Any]) -> int:
    """--max-points, as the server sets it on every request."""
    from gradcli.evaluation import DEFAULT_MAX_POINTS

    value = payload.get("max_points", DEFAULT_MAX_POINTS)
    return value if isinstance(value, int) and not isinstance(value, bool) \
        else DEFAULT_MAX_POINTS


def _physical(payload: Mapping[str, Any], time: bool = False) -> dict[str, Any]:
    """The request's units and to (the command line's, set by the server), as the
    parameter table's mappings; empty without them. ``t=UNIT`` is flow's time unit
    (``time``) when t is no variable of the expression; every other request leaves it
    out."""
    out = {}
    for key in ("units", "to"):
        value = payload.get(key)
        if value:
            if not isinstance(value, Mapping) or not all(
                    isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
                raise EvaluationError(f"{ref(key)}: name=unit texts")
            out[key] = dict(value)
    if not time and "t" in out.get("units", {}):
        expression = payload.get("expression")
        if isinstance(expression, str) and "t" not in free_variables(parse(expression)):
            out["units"] = {k: v for k, v in out["units"].items() if k != "t"}
            if not out["units"]:
                del out["units"]
    return out


def _columns(table: Any) -> dict[str, Any]:
    """A row table's columns for the page: numbers as base64 floats, ``type`` as texts;
    with ``units`` (column -> unit) when a column has one, for the page's labels."""
    columns = {k: (b64(np.asarray(v, dtype=float)) if k != "type" else
                   [str(t) for t in v]) for k, v in table.items()}
    units = {b.name: b.unit for b in getattr(table, "blocks", ()) if b.unit}
    return {"columns": columns, "notes": table.notes} | ({"units": units} if units else {})


def _point(payload: Mapping[str, Any], key: str = "point") -> dict[str, float]:
    value = payload.get(key)
    if not isinstance(value, dict) or not value:
        raise Refused(f"'{key}' must map variable names to numbers")
    return {str(k): _number(v, f"{key}.{k}") for k, v in value.items()}


def _held(specs: list[str]) -> dict[str, Any]:
    """``--at`` texts as the command line reads them, with no file reader: a value
    ``@FILE`` is refused (the --no-files rule for everything a page sends)."""
    from gradcli.lang.spec_text import parse_point

    held: dict[str, Any] = {}
    for spec in specs:
        for name, value in parse_point(spec).items():
            if name in held:
                raise EvaluationError(f"--at '{name}' is given twice")
            held[name] = value
    return held


def b64(a: Any) -> str:
    """A float64 array as base64 of its little-endian bytes: exact, and cheap to send
    (JSON text of 10⁵ floats costs more to write than to compute)."""
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f8").tobytes()).decode("ascii")


def _finite(v: Any) -> Any:
    """A number for JSON: nan and ±inf as the strings graph's JSON uses."""
    if isinstance(v, list):
        return [_finite(x) for x in v]
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return v


def _layout(expression: str, grid_specs: list[str], held: Mapping[str, Any]
            ) -> tuple[dict[str, Any], list[str], list[str]]:
    """The grid to sample (the page's specs, defaults filled in), the drawn variables and
    the free variables held at a slider's value. Variables neither sampled nor held are
    held at 0 (the page then offers a slider for each); without any spec the first two
    variables (by name) are sampled on the command line's default range."""
    from gradcli.cli.grid_option import DEFAULT_RANGE
    from gradcli.lang.spec_text import parse_grid

    names = free_variables(parse(expression))
    grid: dict[str, Any] = {}
    for spec in grid_specs:
        name, value = parse_grid(spec)
        if name in grid:
            raise EvaluationError(f"--grid '{name}' is given twice")
        if name in held:
            raise EvaluationError(f"'{name}' is given by --at and by --grid: give only one "
                                  "of them")
        grid[name] = value
    sampled = [n for n, v in grid.items() if isinstance(v, tuple) or v is None]
    if len(sampled) > DRAWN:
        raise EvaluationError(f"the explorer draws one or two variables, but {len(sampled)} "
                              f"are sampled ({', '.join(sampled)}): hold the others with "
                              "--at, and move them with their sliders")
    if not sampled:
        free = sorted(n for n in names if n not in held and n not in grid)
        sampled = free[:DRAWN]
        grid |= {n: None for n in sampled}
    count = DEFAULT_COUNT[max(1, len(sampled))]
    for name, value in list(grid.items()):
        if value is None:
            grid[name] = (DEFAULT_RANGE[0], DEFAULT_RANGE[1], count)
    sliders = [n for n in names if n not in grid and n not in held]
    for name in sliders:
        grid[name] = 0.0
    return grid, sampled, sliders


def field(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The field on the page's grid: values and gradient (a scalar f), or components and
    the ``color`` quantity (a vector field), as ``gradcli plot`` samples it."""
    from gradcli.plot.data import compute_field
    from gradcli.plot.options import COLOR_FIELDS

    expression = _text(payload, "expression")
    grid_specs, at_specs = _texts(payload, "grid"), _texts(payload, "at")
    if payload.get("loose"):  # a new formula: keep the ranges and values of its variables
        names = set(free_variables(parse(expression)))
        grid_specs = [g for g in grid_specs if g.split("=")[0].strip() in names]
        at_specs = [a for a in at_specs if a.split("=")[0].strip() in names]
    held = _held(at_specs)
    color = payload.get("color") or None
    if color is not None and color not in COLOR_FIELDS:
        raise EvaluationError(f"--color '{color}': choose one of {', '.join(COLOR_FIELDS)}")
    grid, sampled, sliders = _layout(expression, grid_specs, held)
    if not sampled:
        raise EvaluationError("the formula has no variable to draw: give it one, e.g. "
                              "sin(x)")
    fl = compute_field(expression, grid, color=color, fixed=held,
                       max_points=_max_points(payload), **_physical(payload))
    # a value held by a grid spec (z=0.5) comes back as a held value, with a slider
    at_specs = at_specs + [f"{n}={_g(v)}" for n, v in grid.items()
                           if n not in sampled and n not in sliders]
    out: dict[str, Any] = {
        "kind": fl.kind, "names": list(fl.names),
        "coords": [b64(c) for c in fl.coords],
        "grid": [f"{n}={_g(c[0])}:{_g(c[-1])}:{len(c)}" for n, c in
                 zip(fl.names, fl.coords, strict=True)],
        "held": {n: _finite(v) if np.ndim(v) == 0 else _finite(np.asarray(v).tolist())
                 for n, v in fl.held.items()},
        "sliders": sliders, "labels": list(fl.labels), "at": at_specs,
        "columns": {name: b64(np.broadcast_to(a, tuple(len(c) for c in fl.coords)))
                    for name, a in fl.columns.items()},
        "color": color, "units": dict(fl.units)}
    if fl.kind == "scalar" and fl.columns.get("f") is not None:
        out["heat"] = "f" if color is None else color
    return out


def _g(v: float) -> str:
    """A grid end as the page writes it back: the shortest text that reads as the same
    number."""
    return repr(float(v)).removesuffix(".0") if float(v).is_integer() and abs(v) < 1e15 \
        else repr(float(v))


def _whole_point(expression: str, point: Mapping[str, float], held: Mapping[str, Any]
                 ) -> dict[str, Any]:
    """The pinned point and the held values, as one point (each variable given once)."""
    clash = next((n for n in point if n in held), None)
    if clash is not None:
        raise EvaluationError(f"'{clash}' is given by the point and by --at")
    return dict(point) | dict(held)


#: the panel's computation and what the page calls it, for a scalar formula (True) or a
#: vector one (False)
_DERIVATIVE = {True: ("grad", "gradient"), False: ("jacobian", "Jacobian")}


def panel(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Everything the side panel shows at one point: the values ``gradcli grad`` (or
    ``jacobian``) prints there, the derivative as formulas (``--formula``), the graph's
    nodes with values and adjoints (``gradcli graph``), and the backward program
    (``--formula program``) with the value of each of its steps there."""
    from gradcli.evaluation import evaluate, prepare
    from gradcli.formulas.derivative_formulas import formula
    from gradcli.lang.formula_printer import TooLong

    expression = _text(payload, "expression")
    at = _whole_point(expression, _point(payload), _held(_texts(payload, "at")))
    physical = _physical(payload)
    scalar = prepare(expression, "eval", at=at, **physical).program.shape == ()
    what, derivative = _DERIVATIVE[scalar]
    values = evaluate(expression, what, at=at, **physical)
    inputs = set(at)
    point = {k: _finite(v) if np.ndim(v) == 0 else _finite(np.asarray(v).tolist())
             for k, v in at.items()}
    out: dict[str, Any] = {"what": what, "derivative": derivative, "point": point,
                           "values": {}}
    if physical:  # each value's unit, by name (the point's and the results')
        out["units"] = dict(getattr(values, "units", None) or {})
    for name, a in values.items():
        if name in inputs:
            continue
        arr = np.asarray(a, dtype=float)[0]
        out["values"][name] = _finite(arr.tolist() if arr.ndim else float(arr))
    try:
        found = formula(expression, what, at=at)
        out["formula"] = {k: (None if isinstance(v, TooLong) else v) for k, v in found.items()}
        out["formula_notes"] = {k: str(v) for k, v in found.items() if isinstance(v, TooLong)}
    except EvaluationError as exc:
        out["formula_error"] = exc.render(_words)
    if not scalar:
        out["graph_error"] = "the graph and the backward program need a scalar formula " \
            "(adjoints are ∂f/∂node)"
        return out
    from gradcli.graph.nodes import build_graph

    nodes, output = build_graph(expression, at, **physical)
    out["graph"] = {"output": output, "nodes": [
        {"id": n.id, "op": n.op, "inputs": n.inputs, "value": _finite(n.value),
         "adjoint": None if n.adjoint is None else _finite(n.adjoint)}
        | ({"unit": n.unit, "adjoint_unit": n.adjoint_unit} if n.unit else {})
        for n in nodes]}
    try:
        program = formula(expression, "grad", form="program", at=at)
    except EvaluationError as exc:
        out["program_error"] = exc.render(_words)
        return out
    assert isinstance(program, str)
    out["program"] = program
    out["steps"] = program_values(program, at)
    return out


def program_values(program: str, at: Mapping[str, Any]) -> dict[str, Any]:
    """The value of every step of a program at one point, in order: one run of the
    compiled program (the same steps ``gradcli eval "PROGRAM\\nSTEP"`` computes, each
    read from its register instead of asked for one by one)."""
    from gradcli.engine.core import Tensor, raw
    from gradcli.engine.grad_mode import no_grad, quiet
    from gradcli.evaluation import prepare

    last = program.rsplit("\n", 1)[-1].split(" = ", 1)[0]
    prepared = prepare(f"{program}\n{last}", "eval", at=[dict(at)])
    compiled, binding = prepared.program, prepared.binding
    leaves = {name: Tensor._make(binding.values[name][0]) for name in binding.names}
    with no_grad(), quiet():
        regs = compiled.run_all(leaves)
    out: dict[str, Any] = {}
    for name, slot in compiled.named.items():
        value = np.asarray(raw(compiled.value(regs, slot)), dtype=float)
        out[name] = _finite(value.tolist() if value.ndim else float(value))
    return out


def _starts_text(start: Mapping[str, float]) -> str:
    return ",".join(f"{k}={v!r}" for k, v in start.items())


def descend(payload: Mapping[str, Any]) -> dict[str, Any]:
    """A descent path from the pinned point, as ``gradcli descend`` runs it (the method's
    torch.optim update, iterate for iterate), in the command line's units: the point in
    its variables' units, f in its own, |grad f| in unit(f)/unit(x) (``units``)."""
    from gradcli.api import descend as run

    expression = _text(payload, "expression")
    start = _point(payload, "start")
    held = _held(_texts(payload, "at"))
    method = _text(payload, "method", "gd")
    steps = _whole(payload, "steps", 100, 0, MAX_STEPS)
    hyper: dict[str, Any] = {}
    if payload.get("lr") is not None:
        hyper["lr"] = _number(payload["lr"], "lr")
    table = run(expression, start, at=held, method=method, steps=steps,
                max_points=_max_points(payload), **_physical(payload), **hyper)
    return _columns(table)


def flow(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The trajectory of the field (-∇f for a scalar f) from the pinned point, by RK4 over
    ``t``, ending where it leaves ``box`` (the visible region), as ``gradcli flow``; with
    units, the time in ``t=UNIT`` of the command line's ``--unit`` (else unit(x)/unit(F)),
    the point in its variables' units and |F| in unit(x)/unit(t) (``units``)."""
    from gradcli.api import flow as run
    from gradcli.lang.spec_text import parse_grid

    expression = _text(payload, "expression")
    start = _point(payload, "start")
    held = _held(_texts(payload, "at"))
    t = _text(payload, "t", "0:10:1001")
    from gradcli.lang.spec_text import parse_times

    times = parse_times(t, MAX_TIMES)
    if times[2] > MAX_TIMES:
        raise EvaluationError(f"--t {t}: at most {MAX_TIMES:,} times on the page")
    box: dict[str, Any] = {}
    for spec in _texts(payload, "box"):
        name, value = parse_grid(spec, "box")
        if not isinstance(value, tuple):
            raise Refused("'box' specs are NAME=LOW:HIGH:COUNT")
        box[name] = value[:2]
    table = run(expression, start, at=held, t=t, box=box or None,
                max_points=_max_points(payload), **_physical(payload, time=True))
    out = _columns(table)
    if len(start) == 1:  # a curve: the path is drawn on it, at f of each state
        from gradcli.evaluation import evaluate

        name = next(iter(start))
        got = evaluate(expression, "eval", points={name: np.asarray(table[name])},
                       fixed=held, max_points=_max_points(payload), **_physical(payload))
        if "f" in got:
            out["columns"]["f"] = b64(np.asarray(got["f"], dtype=float))
            unit = (getattr(got, "units", None) or {}).get("f")
            if unit:
                out.setdefault("units", {})["f"] = unit
    return out


def critical(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The critical points of the visible region (its grid's specs: the seeds and the
    box), classified, as ``gradcli critical`` finds them; with units, the points in the
    variables' units, f in its own, the eigenvalues in unit(f)/unit(x)² when the
    variables share one unit (``units``)."""
    from gradcli.api import critical as run
    from gradcli.lang.spec_text import parse_grid

    expression = _text(payload, "expression")
    held = _held(_texts(payload, "at"))
    grid: dict[str, Any] = {}
    for spec in _texts(payload, "grid"):
        name, value = parse_grid(spec)
        grid[name] = value
    table = run(expression, grid=grid, at=held, max_points=_max_points(payload),
                **_physical(payload))
    return _columns(table)


HANDLERS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "field": field, "point": panel, "descend": descend, "flow": flow, "critical": critical}


def _words(parameter: str, key: str, text: str, python: str = "") -> str:
    from gradcli.cli.messages import option_words

    return option_words(parameter, key, text, python)


def error_body(exc: BaseException) -> dict[str, Any]:
    """The command line's own message for a refused request: three lines (the formula, a
    caret, ``error: ...``) for a mistake in the formula, one ``gradcli: error: ...``
    line otherwise."""
    from gradcli.cli.messages import UsageProblem

    if isinstance(exc, ExpressionError):
        return {"error": exc.render(_words), "position": exc.position,
                "kind": "expression"}
    if isinstance(exc, EvaluationError):
        return {"error": f"gradcli: error: {exc.render(_words)}", "kind": "evaluation"}
    if isinstance(exc, (UsageProblem, Refused, TypeError, ValueError)):
        return {"error": f"gradcli: error: {exc}", "kind": "usage"}
    if isinstance(exc, MemoryError):
        return {"error": "gradcli: error: out of memory: use fewer grid points (a smaller "
                "resolution) or a larger --memory", "kind": "memory"}
    if isinstance(exc, RecursionError):
        return {"error": "gradcli: error: the formula is nested too deeply", "kind": "usage"}
    return {"error": f"gradcli: internal error: {type(exc).__name__}: {exc}",
            "kind": "internal"}


def handle(kind: str, payload: Any) -> tuple[int, dict[str, Any]]:
    """(HTTP status, body) for one request: 200 and the answer, 400 and the command
    line's message for a request it refuses, 500 for an internal error."""
    import warnings

    from gradcli.engine.grad_mode import quiet

    handler = HANDLERS.get(kind)
    if handler is None:
        return 404, {"error": f"gradcli: error: no such request '{kind[:40]}'"}
    if not isinstance(payload, dict):
        return 400, {"error": "gradcli: error: the request must be a JSON object"}
    from gradcli.lang import ExpressionWarning

    try:
        with warnings.catch_warnings(record=True) as caught, quiet():
            warnings.simplefilter("ignore")
            warnings.simplefilter("always", ExpressionWarning)
            body = handler(payload)
        said = list(dict.fromkeys(f"warning: {w.message}" for w in caught
                                  if issubclass(w.category, ExpressionWarning)))
        return 200, body | ({"warnings": said} if said else {})
    except Exception as exc:  # every failure is an answer; the worker goes on
        body = error_body(exc)
        return (500 if body["kind"] == "internal" else 400), body
