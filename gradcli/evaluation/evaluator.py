"""``gradcli.evaluate`` and ``prepare``: an expression, where to look, what to compute ->
named arrays.

This is the one path from text to numbers; the CLI calls it too. A result is made of
blocks (``blocks.py``), named as the CLI names them: ``f``, ``f[0]``, ``df/dx``,
``df[0]/dy``, ``vjp/dx``, ``jvp``, ``d2f/dxdy``; a vector variable's derivative is one
block with a trailing component axis. Grid results are grid-shaped (first grid variable on
the first axis); the grid variables' own columns come back as broadcastable axes, as
``numpy.ogrid`` gives.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.evaluation.origin import Evaluated, Origin, shape_notes, shown_rows
from gradcli.evaluation.runner import ArraySink, Sink, run
from gradcli.lang import ExpressionError, Var, parse, walk
from gradcli.lang.compile import Program, compile_expression
from gradcli.plan.assemble import input_result, result_layout
from gradcli.plan.blocks import Block, Result
from gradcli.plan.computations import Computation, accepting, computation
from gradcli.plan.kernels import Plan
from gradcli.request import Request
from gradcli.request.binding import (
    DEFAULT_MAX_POINTS,
    Binding,
    bind_grid,
    bind_points,
    bind_table,
    check_limit,
    count_text,
    hold,
    point_list,
    unused_text,
    warn_unused,
    wrt_names,
)

# Sweeps x recorded operations bounds the Python-level work per point, and the values of
# one point bound its memory: a hessian of a 20,000-vector is 4·10⁸ values per point, so
# it is refused before any work starts.
MAX_SWEEP_OPS = 100_000_000

def output_names(shape: tuple[int, ...]) -> list[str]:
    """``f`` for a scalar, ``f[i]`` for a vector, ``f[i][j]`` for a matrix (C order)."""
    return ["f" + "".join(f"[{i}]" for i in idx) for idx in np.ndindex(*shape)]


class Prepared:
    """A parsed, bound and compiled request, ready to run (or to inspect, for ``graph``).

    ``carry`` holds text columns (a points file's columns that name no variable) that the
    result carries through unchanged, before the variables.
    """

    def __init__(self, expression: str, program: Program, binding: Binding, plan: Plan,
                 dtype: np.dtype, carry: Mapping[str, Any] | None = None,
                 request: Request | None = None, units: Any = None) -> None:
        self.expression, self.program, self.binding = expression, program, binding
        self.plan, self.dtype = plan, dtype
        self.carry = dict(carry or {})
        #: what was asked (a Dask worker prepares the same evaluation from it)
        self.request = request if request is not None else Request(expression, plan.what)
        n = binding.size
        for name, col in self.carry.items():
            if binding.kind != "points" or len(col) != n:
                raise EvaluationError(f"the carried column '{name}' needs one value per point")
        self.layout = result_layout(plan)
        #: the request's units (``units.py``), None when no unit is in play
        self.units = units
        if units is not None:
            from gradcli.evaluation.request_units import label_blocks

            self.layout = label_blocks(self.layout, units, plan)
        results = {b.name for b in self.layout.blocks}
        named = next((n for n in binding.names if n in results), None)
        if named is not None:  # a variable f beside the value f: one name, two columns
            raise EvaluationError(f"variable '{named}' has the name of a result column: "
                                  "give the variable another name")
        self.inputs = input_result(binding, self.carry)
        if units is not None:
            from gradcli.evaluation.request_units import label_inputs

            self.inputs = label_inputs(self.inputs, units)
        variables = [b for b in self.inputs.blocks if b.name not in self.carry]
        clash = [n for n in self.carry if self.layout.locate(n) is not None or
                 any(b.component_of(n) is not None for b in variables)]
        if clash:
            raise EvaluationError(f"the points file's column '{clash[0]}' has the name of a "
                                  "result column: rename it in the file")

    def origin(self, call: str = "") -> Origin:
        """How this result was asked for (dimension names and labels for .nc/.zarr)."""
        binding = self.binding
        inputs = [c for name, shape in self.plan.targets
                  for c in Block.template([name, shape]).column_names()]
        outputs = [c for name, shape in self.program.outputs
                   for c in Block.template([name, shape]).column_names()]
        return Origin(self.expression, self.plan.what, binding.kind, tuple(binding.axes),
                      tuple((n, tuple(binding.shapes[n])) for n in binding.names),
                      tuple(outputs), tuple(inputs), call,
                      tuple(self.request.fixed or ()))

    @classmethod
    def of(cls, request: Request) -> Prepared:
        """``request`` prepared (``prepare_request``): how a Dask worker prepares a job's
        request again (``cluster.Job``)."""
        return prepare_request(request)

    def run(self, sink: Sink | None = None, *, threads: int | None = None,
            block_size: int | None = None,
            progress: Callable[[int, int], None] | None = None,
            client: Any = None, memory: Any = None) -> Result:
        """Compute every block; return the carried columns, the variables, then the results
        (a Result: a mapping of scalar columns whose ``arrays`` are the blocks).

        With ``client`` (a ``distributed.Client``) every block is a task on its cluster
        (``cluster.run_on_cluster``), computed by the same kernel. ``memory`` is the
        working-memory budget (bytes, or a size such as ``"2G"``; ``budget.py``)."""
        sink = sink or ArraySink()
        if self.units is not None and self.units.factors:
            from gradcli.evaluation.request_units import ScaledSink

            names = [b.name for b in self.layout.blocks]
            sink = ScaledSink(sink, {names.index(n): k for n, k in self.units.factors.items()})
        if client is not None:
            from gradcli.evaluation.cluster import run_on_cluster

            return run_on_cluster(self, sink, client, progress, memory)
        run(self.plan, self.binding, sink, dtype=self.dtype, threads=threads,
            block_size=block_size, progress=progress, layout=self.layout, inputs=self.inputs,
            memory=memory)
        return sink.result()


def _quoted(text: str) -> str:
    return '"' + text + '"'


def _unbound_error(expression: str, tree: Any, name: str, binding: Binding) -> ExpressionError:
    from gradcli.lang.names import split_suggestion

    pos = next(n.pos for n in walk(tree) if isinstance(n, Var) and n.name == name)
    reading = split_suggestion(name, binding.names)
    if reading is not None:
        return ExpressionError(f"variable '{name}' is not bound", expression, pos,
                               hint=f"did you mean {reading}? names written together are "
                               "one name")
    how = (f"{ref('grid', text=f'{name}=0:1:11', python=f'{{{name!r}: (0, 1, 11)}}')} or "
           f"{ref('grid', text=f'{name}=VALUE', python=f'{{{name!r}: VALUE}}')}"
           if binding.kind == "grid" else
           f"{ref('at', text=_quoted(f'...,{name}=VALUE'), python=f'{{..., {name!r}: VALUE}}')}"
           f" or a {name} column in {ref('points', python='{...}')}")
    free = set(_free(tree))
    unused = [n for n in binding.names if n not in free]
    also = f"; {unused_text(unused)}" if unused else ""
    return ExpressionError(f"variable '{name}' is not bound", expression, pos,
                           hint=f"give it a value with {how}{also}")


def prepare(expression: str, what: str = "eval", *,
            at: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
            grid: Mapping[str, Any] | None = None, points: Mapping[str, Any] | None = None,
            fixed: Mapping[str, Any] | None = None, dtype: Any = None,
            max_points: int = DEFAULT_MAX_POINTS,
            carry: Mapping[str, Any] | None = None, **parameters: Any) -> Prepared:
    """Parse, bind and compile; raise ExpressionError/EvaluationError for bad requests
    (TypeError for an ``at=`` that is neither a point nor a list of points, or a keyword
    that is no parameter of the table).

    ``fixed``: variables held at one value for every point (see :func:`evaluate`).
    ``carry``: text columns passed through to the result before the variables (a points
    file's other columns), each as long as the point set. ``parameters``: the
    computation's (``wrt``, ``order``, ``vector``...: see :func:`evaluate`). The arguments
    become one :class:`Request` (``prepare_request``).
    """
    return prepare_request(Request(
        expression, what, at=at, grid=grid, points=points, fixed=fixed, carry=carry,
        parameters=_parameters("prepare", parameters), dtype=dtype, max_points=max_points))


def _parameters(function: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """The keywords of ``evaluate``/``prepare`` that are parameters of the table
    (TypeError for another, as Python says of an unknown keyword)."""
    from gradcli.request.parameters import TABLE

    unknown = next((name for name in given if name not in TABLE), None)
    if unknown is not None:
        raise TypeError(f"{function}() got an unexpected keyword argument '{unknown}'")
    return dict(given)


def prepare_request(request: Request) -> Prepared:
    """Parse, bind and compile one :class:`Request` (see :func:`prepare`)."""
    r = request
    expression, what, at, grid, points = r.expression, r.what, r.at, r.grid, r.points
    fixed, dtype, max_points, carry = r.fixed, r.dtype, r.max_points, r.carry
    wrt = r.get("wrt")
    record = computation(what)
    given = [a for a in (at, grid, points) if a is not None]
    if len(given) != 1:
        raise EvaluationError("give exactly one of at=, grid= or points=")
    try:
        dt = np.dtype(np.float64 if dtype is None else dtype)
    except TypeError:
        dt = None
    if dt not in (np.float64, np.float32):
        raise EvaluationError(f"dtype must be float64 or float32, got {dtype!r:.40}")
    if isinstance(max_points, (float, np.floating)) and float(max_points).is_integer():
        max_points = int(max_points)  # 1e9 is a whole number
    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) \
            or max_points < 0:
        raise EvaluationError(f"max_points must be a whole number >= 0, got "
                              f"{max_points!r:.40}")
    tree = parse(expression)
    compiled_tree, units = tree, None
    if _units_in_play(r, tree):  # else the units module (and pint) is never imported
        from gradcli.evaluation.request_units import apply_units

        steps = [s.name for s in getattr(tree, "statements", ())
                 if type(s).__name__ == "Assign"]
        given_names = [n for w in (at, grid, points, fixed)
                       for p in (w if isinstance(w, (list, tuple)) else [w])
                       if isinstance(p, Mapping) for n in p]
        compiled_tree, units, where = apply_units(tree, expression, r, given_names, steps)
        at, grid, points, fixed = (where["at"], where["grid"], where["points"],
                                   where["fixed"])
    if grid is not None:
        binding = bind_grid(grid, dt, max_points)
    elif at is not None:
        binding = bind_points(point_list(at), dt)
    else:
        binding = bind_table(points or {}, dt)
    binding = hold(binding, fixed or {}, dt)
    check_limit(binding, max_points)
    for name in _free(tree):
        if name not in binding.shapes:
            raise _unbound_error(expression, tree, name, binding)
    program = compile_expression(compiled_tree, expression, binding.shapes)
    step = next((n for n in binding.names if n in program.named), None)
    if step is not None:
        raise EvaluationError(f"'{step}' is a step of the program (it is assigned there), so "
                              "it cannot also be given a value: rename one of them")
    free = set(_free(tree))
    warn_unused([n for n in binding.names if n not in free])
    _check_options(record, r.parameters or {})
    names = None if wrt is None or record.specify is not None else wrt_names(wrt)
    plan = Plan(program, what, [(n, binding.shapes[n]) for n in binding.names],
                wrt=_wrt(names, program, binding), record=record)
    if record.scalar and program.shape != ():
        hint = f": {record.scalar_hint}" if record.scalar_hint else ""
        raise EvaluationError(f"{what} needs a scalar-valued expression, but this one has "
                              f"shape {program.shape}{hint}")
    _check_parameters(record, plan, binding, r)
    if record.specify is not None:
        plan.spec = record.specify(plan, wrt=wrt, order=r.get("order"))
    _check_work(plan, binding.size, max_points)
    given = dict(r.parameters or {})
    if wrt is not None:
        given["wrt"] = wrt_names(wrt)
    return Prepared(expression, program, binding, plan, dt, carry, request.replace(
        fixed=dict(fixed or {}), dtype=dt.name, parameters=given), units)


def _units_in_play(request: Request, tree: Any) -> bool:
    """Whether a request may have units: ``units=``/``to=``, a number with a unit in the
    expression, or a value that may carry one (a pint Quantity, a ``WithUnit``, a text
    that is no plain number): a cheap look, so a unit-free request pays nothing."""
    if request.get("units") or request.get("to"):
        return True
    if any(getattr(n, "unit", "") for n in walk(tree)):
        return True

    def may(value: Any) -> bool:
        if isinstance(value, str):
            return _PLAIN.fullmatch(value.strip()) is None
        return type(value).__name__ in ("WithUnit", "Quantity")

    for where in (request.at, request.grid, request.points, request.fixed):
        for point in where if isinstance(where, (list, tuple)) else [where]:
            if not isinstance(point, Mapping):
                continue
            for value in point.values():
                items = value[:8] if isinstance(value, (list, tuple)) else [value]
                if any(may(v) for v in items):
                    return True
    return False


#: a plain decimal number's text (a value that cannot carry a unit)
_PLAIN = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _check_parameters(record: Computation, plan: Plan, binding: Binding,
                      request: Request) -> None:
    """Each parameter the computation takes, checked by its declaration (in the table's
    order: ``unit`` scales the ``direction`` checked before it) into ``plan.params``."""
    from gradcli.request.parameters import TABLE, Context

    context = Context(plan, binding, record.name)
    for name, p in TABLE.items():
        if name in record.parameters and p.check is not None:
            value = request.get(name)
            if p.required or p.given(value):
                plan.params[name] = p.check(value, context)


def _check_work(plan: Plan, points: int, max_points: int) -> None:
    """Refuse a request whose derivative work, result per point or rows (the record's
    ``rows``: taylor's one per point and multi-index) are absurd, before any work starts."""
    rows = plan.computation.rows
    per_point, what = rows(plan) if rows is not None else (1, "")
    if points * per_point > max_points:
        raise EvaluationError(
            f"{plan.what} here writes {count_text(points * per_point)} rows "
            f"({count_text(points)} points × {per_point} {what}), over the limit "
            f"of {max_points:,}; raise it with {ref('max_points')}")
    work = plan.sweeps() * max(1, plan.program.op_count)
    if work > MAX_SWEEP_OPS:
        raise EvaluationError(
            f"{plan.what} here needs {count_text(plan.sweeps())} derivative sweeps over "
            f"{count_text(plan.program.op_count)} operations, over the limit of "
            f"{MAX_SWEEP_OPS:,} operations per point: ask for a product instead "
            f"(vjp {ref('vector')}, jvp {ref('direction')}) or use fewer vector components")
    values = sum(b.size for b in plan.blocks())
    if values > MAX_SWEEP_OPS:
        raise EvaluationError(
            f"{plan.what} here gives {count_text(values)} values per point, over the limit "
            f"of {MAX_SWEEP_OPS:,}: ask for a product instead (vjp {ref('vector')}, jvp "
            f"{ref('direction')}) or use fewer vector components")


def _check_options(record: Computation, given: Mapping[str, Any]) -> None:
    """Refuse a parameter the computation does not take (the table says which do)."""
    from gradcli.request.parameters import TABLE

    for name, value in given.items():
        p = TABLE.get(name)
        if p is None:
            raise EvaluationError(f"unknown parameter '{name}' (known: {', '.join(TABLE)})")
        if p.given(value) and name not in record.parameters:
            raise EvaluationError(f"{name}= is for {', '.join(accepting(name))}, not "
                                  f"{record.name}")


def _wrt(wrt: list[str] | None, program: Program,
         binding: Binding) -> list[tuple[str, tuple[int, ...]]] | None:
    """The variables and steps named by ``wrt`` (grad, jacobian, vjp), with their
    component shapes."""
    if wrt is None:
        return None
    out: list[tuple[str, tuple[int, ...]]] = []
    for name in wrt:
        if any(name == n for n, _ in out):
            raise EvaluationError(f"{ref('wrt')} names '{name}' twice")
        if name in binding.shapes:
            out.append((name, binding.shapes[name]))
            continue
        step = program.named.get(name)
        if step is None:
            known = [*binding.names, *program.named]
            raise EvaluationError(f"{ref('wrt', text=name)}: not a variable or a step of the "
                                  "program "
                                  f"(these are: {', '.join(known) or 'none'})")
        if not step.deps:
            raise EvaluationError(f"{ref('wrt', text=name)}: the step '{name}' does not "
                                  "depend on any variable; make it a variable "
                                  f"({ref('at', text=f'{name}=...', python=f'{{{name!r}: ...}}')})"
                                  " to differentiate by it")
        if step.shape != () and not step.array:
            raise EvaluationError(f"{ref('wrt', text=name)}: the step '{name}' is a bracket "
                                  "literal; "
                                  "name its components as steps to differentiate by them")
        out.append((name, step.shape))
    return out


def _free(tree: Any) -> list[str]:
    from gradcli.lang import free_variables

    return free_variables(tree)


def evaluate(expression: str, what: str = "eval", *,
             at: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
             grid: Mapping[str, Any] | None = None, points: Mapping[str, Any] | None = None,
             fixed: Mapping[str, Any] | None = None, dtype: Any = None,
             max_points: int = DEFAULT_MAX_POINTS, threads: int | None = None,
             block_size: int | None = None, scheduler: Any = None,
             scheduler_timeout: float = 10.0, memory: Any = None,
             **parameters: Any) -> dict[str, Any]:
    """Evaluate ``expression`` and its derivatives; return ``{name: array}``, one array per
    block.

    ``what`` is one of eval, grad (``norm=True`` adds ``|grad f|``), jacobian, vjp (needs
    ``vector``), jvp (needs ``direction``; ``unit=True`` makes it a unit vector), hessian,
    div, curl, laplacian, hvp (needs ``direction``; ``unit=`` too), diff, taylor.
    ``wrt`` (``"x,y"`` or a list of names) means what the command needs: the variables or
    named steps to differentiate by (grad, jacobian, vjp: a step's derivative holds its
    inputs fixed, as PyTorch's ``retain_grad``); the variables a field's components pair
    with (div, curl); the variables summed over or expanded in (laplacian, taylor); a
    partial's variables (diff: ``"x,x,y"``, or ``"x"`` with ``order=3``). A vector
    variable stands for its components in turn, ``x[1]`` names one (calculus commands).
    ``order`` is a diff's or taylor's order.
    taylor returns blocks ``coefficient`` and ``derivative`` of shape ``(..., M)``, one
    entry per multi-index α (|α| ≤ order) in graded lexicographic order
    (``gradcli.engine.interpolate.graded``). Give the points as ``at={"x": 1.0}`` (one point) or
    ``at=[{"x": 1.0}, ...]``, as ``grid={"x": (start, stop, count), "z": value}`` or as
    ``points={"x": array}``; ``fixed={"y": 2.0}`` holds more variables at one value for
    every point. Values may be constant expressions given as strings (``"pi/2"``); a
    variable's value may be a number, a vector or a matrix (``{"A": [[1, 2], [3, 4]]}``,
    ``points={"A": array (N, r, c)}``).

    Shapes, with ``...`` the batch (``(N,)`` for N points, the grid's shape for a grid;
    grid variables come back as broadcastable ``ogrid`` axes), for a variable v of
    component shape s (``()``, ``(n,)`` or ``(r, c)``):

    - ``v`` itself, ``df/dv``, ``vjp/dv``: ``(...) + s``;
    - the value: ``f`` ``(...)`` for a scalar; one array per component of a bracket literal
      (``f[0]``, ``f[1]``: ``(...)``); one array ``f`` of shape ``(...) + t`` for any other
      value of shape t (``x^2``, ``softmax(x)``, ``A @ x``); ``jvp`` likewise;
    - ``jacobian``: ``df[i]/dv`` ``(...) + s`` per component of a literal, else one
      ``df/dv`` of shape ``(...) + t + s``;
    - Hessian blocks ``d2f/dadb``: ``(...) + s_a + s_b``.

    CSV, JSON and tables show each component as its own column: ``df/dx[k]`` is
    ``result["df/dx"][..., k]``, ``d2f/dx[i]dy[j]`` is ``result["d2f/dxdy"][..., i, j]``,
    ``df/dA[i][j]`` is ``result["df/dA"][..., i, j]``.

    ``scheduler`` (a Dask scheduler's address ``tcp://host:8786``, ``"local:N"`` for a
    LocalCluster of N processes kept until exit, or a ``distributed.Client``) makes the
    results lazy dask arrays, one task per block, of the same names and shapes (needs
    ``pip install 'gradcli[dask]'``); ``scheduler_timeout`` bounds the wait for it.
    ``gradcli.to_xarray(result)`` labels any result as a dataset. ``memory`` bounds the
    working memory (bytes, or ``"512M"``, ``"2G"``; default ``$GRADCLI_MEMORY``, else
    1 GiB): blocks of points are sized so that every thread's block fits in it.
    """
    return evaluate_request(Request(
        expression, what, at=at, grid=grid, points=points, fixed=fixed,
        parameters=_parameters("evaluate", parameters), dtype=dtype, max_points=max_points,
        threads=threads, block_size=block_size, scheduler=scheduler,
        scheduler_timeout=scheduler_timeout, memory=memory))


def evaluate_request(request: Request, *, prepared: Prepared | None = None,
                     sink: Sink | None = None, progress: Any = None,
                     client: Any = None) -> Evaluated:
    """Evaluate one :class:`Request` (what :func:`evaluate` does with its arguments; the
    executor runs every computation of the table here). A front end may give the request
    already ``prepared`` (it chose its writer from the plan), a ``sink`` the rows stream
    into as they are computed, ``progress`` and a Dask ``client``; none changes a value.
    Without a client, a ``scheduler`` makes the result lazy Dask arrays."""
    prepared = prepared if prepared is not None else prepare_request(request)
    if request.scheduler is not None and client is None:  # checked and compiled above:
        from gradcli.evaluation.cluster import lazy_result, shared_client  # errors first

        shared_client(request.scheduler, request.scheduler_timeout)
        result = lazy_result(prepared)
    else:
        result = prepared.run(sink, threads=request.threads, block_size=request.block_size,
                              progress=progress, client=client, memory=request.memory)
    history = request.output.history or request.call()
    return Evaluated(result.arrays, result, prepared.origin(history),
                     shape_notes(prepared), shown_rows(prepared, result))
