"""``gradcli.evaluate``: an expression, where to look, and what to compute -> named arrays.

This is the one path from text to numbers; the CLI calls it too. A result is made of
blocks (``blocks.py``), named as the CLI names them: ``f``, ``f[0]``, ``df/dx``,
``df[0]/dy``, ``vjp/dx``, ``jvp``, ``d2f/dxdy``; a vector variable's derivative is one
block with a trailing component axis. Grid results are grid-shaped (first grid variable on
the first axis); the grid variables' own columns come back as broadcastable axes, as
``numpy.ogrid`` gives.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..lang import ExpressionError, Var, parse, walk
from ..lang.compile import Program, _flatten, compile_expression
from .assemble import input_result, result_layout
from .binding import (
    DEFAULT_MAX_POINTS,
    Binding,
    EvaluationError,
    bind_grid,
    bind_points,
    bind_table,
    check_limit,
    count_text,
    hold,
    parse_constant,
    point_list,
)
from .blocks import Result
from .kernels import WHATS, Plan
from .origin import Evaluated, Origin, describe_call
from .runner import ArraySink, Sink, run

# Sweeps x recorded operations bounds the Python-level work per point: a hessian of a
# 2,000-vector is 4 million sweeps, hours of work, so it is refused before any starts.
MAX_SWEEP_OPS = 100_000_000

__all__ = ["evaluate", "prepare", "EvaluationError", "DEFAULT_MAX_POINTS", "WHATS",
           "output_names", "Prepared", "parse_constant", "Origin", "Evaluated"]


def output_names(shape: tuple[int, ...]) -> list[str]:
    """``f`` for a scalar, ``f[i]`` for a vector, ``f[i][j]`` for a matrix (C order)."""
    return ["f" + "".join(f"[{i}]" for i in idx) for idx in np.ndindex(*shape)]


class Prepared:
    """A parsed, bound and compiled request, ready to run (or to inspect, for ``graph``).

    ``carry`` holds text columns (a points file's columns that name no variable) that the
    result carries through unchanged, before the variables.
    """

    def __init__(self, expression: str, program: Program, binding: Binding, plan: Plan,
                 dtype: np.dtype, carry: Mapping[str, Any] | None = None) -> None:
        self.expression, self.program, self.binding = expression, program, binding
        self.plan, self.dtype = plan, dtype
        self.carry = dict(carry or {})
        # the request's own arguments besides the points (plain numbers and text): what a
        # Dask worker needs to prepare the same evaluation from the expression's text
        self.request: dict[str, Any] = {}
        n = binding.size
        for name, col in self.carry.items():
            if binding.kind != "points" or len(col) != n:
                raise EvaluationError(f"the carried column '{name}' needs one value per point")
        self.layout = result_layout(plan, binding)
        results = {b.name for b in self.layout.blocks}
        named = next((n for n in binding.names if n in results), None)
        if named is not None:  # a variable f beside the value f: one name, two columns
            raise EvaluationError(f"variable '{named}' has the name of a result column: "
                                  "give the variable another name")
        self.inputs = input_result(binding, self.carry)
        taken = set(self.inputs.layout.column_names()) - set(self.carry)
        clash = [n for n in self.carry if n in taken or self.layout.locate(n) is not None]
        if clash:
            raise EvaluationError(f"the points file's column '{clash[0]}' has the name of a "
                                  "result column: rename it in the file")

    def origin(self, call: str = "") -> Origin:
        """How this result was asked for (dimension names and labels for .nc/.zarr)."""
        binding = self.binding
        return Origin(self.expression, self.plan.what, binding.kind, tuple(binding.axes),
                      tuple((n, tuple(binding.shapes[n])) for n in binding.names),
                      tuple(self.plan.outputs), tuple(c for c, _, _ in self.plan.inputs), call,
                      tuple(self.request.get("fixed") or ()))

    def run(self, sink: Sink | None = None, *, threads: int | None = None,
            block_size: int | None = None,
            progress: Callable[[int, int], None] | None = None,
            client: Any = None) -> Result:
        """Compute every block; return the carried columns, the variables, then the results
        (a Result: a mapping of scalar columns whose ``arrays`` are the blocks).

        With ``client`` (a ``distributed.Client``) every block is a task on its cluster
        (``cluster.run_on_cluster``), computed by the same kernel."""
        sink = sink or ArraySink()
        if client is not None:
            from .cluster import run_on_cluster

            return run_on_cluster(self, sink, client, progress)
        run(self.plan, self.binding, sink, dtype=self.dtype, threads=threads,
            block_size=block_size, progress=progress, layout=self.layout, inputs=self.inputs)
        return sink.result()


def _unbound_error(expression: str, tree: Any, name: str, binding: Binding) -> ExpressionError:
    from ..lang.names import split_suggestion

    pos = next(n.pos for n in walk(tree) if isinstance(n, Var) and n.name == name)
    reading = split_suggestion(name, binding.names)
    if reading is not None:
        return ExpressionError(f"variable '{name}' is not bound", expression, pos,
                               hint=f"did you mean {reading}? names written together are "
                               "one name")
    how = (f'--grid {name}=0:1:11 or --grid {name}=VALUE' if binding.kind == "grid"
           else f'--at "...,{name}=VALUE" or a {name} column in --points')
    return ExpressionError(f"variable '{name}' is not bound", expression, pos,
                           hint=f"give it a value with {how}")


def prepare(expression: str, what: str = "eval", *,
            at: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
            grid: Mapping[str, Any] | None = None, points: Mapping[str, Any] | None = None,
            fixed: Mapping[str, Any] | None = None, vector: Any = None,
            direction: Mapping[str, Any] | None = None, dtype: Any = None,
            max_points: int = DEFAULT_MAX_POINTS,
            carry: Mapping[str, Any] | None = None) -> Prepared:
    """Parse, bind and compile; raise ExpressionError/EvaluationError for bad requests
    (TypeError for an ``at=`` that is neither a point nor a list of points).

    ``fixed``: variables held at one value for every point (see :func:`evaluate`).
    ``carry``: text columns passed through to the result before the variables (a points
    file's other columns), each as long as the point set.
    """
    if what not in WHATS:
        raise EvaluationError(f"unknown computation '{what}': choose one of {', '.join(WHATS)}")
    given = [a for a in (at, grid, points) if a is not None]
    if len(given) != 1:
        raise EvaluationError("give exactly one of at=, grid= or points=")
    dt = np.dtype(np.float64 if dtype is None else dtype)
    if dt not in (np.float64, np.float32):
        raise EvaluationError(f"dtype must be float64 or float32, got {dt}")
    tree = parse(expression)
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
    program = compile_expression(tree, expression, binding.shapes)
    outs = output_names(program.shape)
    inputs = binding.column_names()
    plan = Plan(program, what, inputs, outs,
                var_sizes=[(n, None if binding.shapes[n] == () else binding.shapes[n][0])
                           for n in binding.names])
    if what in ("grad", "hessian") and program.shape != ():
        raise EvaluationError(
            f"{what} needs a scalar-valued expression, but this one has shape "
            f"{program.shape}: use jacobian for every derivative, or vjp --vector for vᵀJ")
    if what == "vjp":
        plan.vector = _vector(vector, program.shape)
    if what == "jvp":
        plan.direction = _direction(direction, binding, inputs)
    work = plan.sweeps() * max(1, program.op_count)
    if work > MAX_SWEEP_OPS:
        raise EvaluationError(
            f"{what} here needs {count_text(plan.sweeps())} derivative sweeps over "
            f"{count_text(program.op_count)} operations, over the limit of "
            f"{MAX_SWEEP_OPS:,} operations per point: ask for a product instead "
            "(vjp --vector, jvp --direction) or use fewer vector components")
    prepared = Prepared(expression, program, binding, plan, dt, carry)
    prepared.request = {"grid": grid, "fixed": dict(fixed or {}), "vector": vector,
                        "direction": direction, "dtype": dt.name, "max_points": max_points}
    return prepared


def _free(tree: Any) -> list[str]:
    from ..lang import free_variables

    return free_variables(tree)


def _vector(vector: Any, shape: tuple[int, ...]) -> list[float]:
    if vector is None:
        raise EvaluationError("vjp needs a vector v shaped like f: --vector \"1,0\" "
                              "(Python: vector=[1, 0])")
    arr = np.asarray(vector, dtype=float) if not isinstance(vector, list) else None
    if arr is None:
        try:
            arr = np.asarray(vector, dtype=float)
        except ValueError:
            raise EvaluationError("the vector is ragged: every row needs the same length") \
                from None
    if arr.shape != shape:
        raise EvaluationError(f"the vector has shape {arr.shape} but f has shape {shape}: "
                              "v must have one entry per component of f")
    return [float(v) for v in arr.reshape(-1)]


def _direction(direction: Mapping[str, Any] | None, binding: Binding,
               inputs: list[tuple[str, str, int | None]]) -> list[float]:
    if not direction:
        raise EvaluationError('jvp needs a direction u: --direction "x=1,y=0" '
                              '(Python: direction={"x": 1, "y": 0})')
    for name in direction:
        if name not in binding.shapes:
            raise EvaluationError(f"the direction names '{name}', which is not a variable "
                                  f"here (variables: {', '.join(binding.names)})")
    out = []
    for _, var, k in inputs:
        value = direction.get(var, 0.0)
        flat = _flatten(value) if isinstance(value, list) else [value]
        want = 1 if k is None else binding.shapes[var][0]
        if len(flat) != want:
            raise EvaluationError(f"the direction for '{var}' has {len(flat)} entries, "
                                  f"the variable has {want}")
        out.append(float(flat[0 if k is None else k]))
    return out


def evaluate(expression: str, what: str = "eval", *,
             at: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
             grid: Mapping[str, Any] | None = None, points: Mapping[str, Any] | None = None,
             fixed: Mapping[str, Any] | None = None, vector: Any = None,
             direction: Mapping[str, Any] | None = None, dtype: Any = None,
             max_points: int = DEFAULT_MAX_POINTS, threads: int | None = None,
             block_size: int | None = None, scheduler: Any = None,
             scheduler_timeout: float = 10.0) -> dict[str, Any]:
    """Evaluate ``expression`` and its derivatives; return ``{name: array}``, one array per
    block.

    ``what`` is one of eval, grad, jacobian, vjp (needs ``vector``), jvp (needs
    ``direction``), hessian. Give the points as ``at={"x": 1.0}`` (one point) or
    ``at=[{"x": 1.0}, ...]``, as ``grid={"x": (start, stop, count), "z": value}`` or as
    ``points={"x": array}``; ``fixed={"y": 2.0}`` holds more variables at one value for
    every point. Values may be constant expressions given as strings (``"pi/2"``).

    Shapes, with ``...`` the batch (``(N,)`` for N points, the grid's shape for a grid;
    grid variables come back as broadcastable ``ogrid`` axes):

    - a scalar variable ``x``, ``f`` (or ``f[i]``, ``f[i][j]``: one array per output
      component), ``jvp``, and every derivative by scalar variables: ``(...)``;
    - a vector variable ``x`` of n components: ``x`` itself, ``df/dx``, ``vjp/dx`` and
      ``df[i]/dx`` (one array per output component i): ``(..., n)``;
    - Hessian blocks ``d2f/dxdy``: ``(..., n, m)`` for vectors x (n) and y (m), ``(..., n)``
      when y is scalar, ``(...)`` when both are.

    CSV, JSON and tables show each component as its own column: ``df/dx[k]`` is
    ``result["df/dx"][..., k]``, ``d2f/dx[i]dy[j]`` is ``result["d2f/dxdy"][..., i, j]``.

    ``scheduler`` (a Dask scheduler's address ``tcp://host:8786``, ``"local:N"`` for a
    LocalCluster of N processes kept until exit, or a ``distributed.Client``) makes the
    results lazy dask arrays, one task per block, of the same names and shapes (needs
    ``pip install 'gradcli[dask]'``); ``scheduler_timeout`` bounds the wait for it.
    ``gradcli.to_xarray(result)`` labels any result as a dataset.
    """
    prepared = prepare(expression, what, at=at, grid=grid, points=points, fixed=fixed,
                       vector=vector, direction=direction, dtype=dtype,
                       max_points=max_points)
    if scheduler is not None:  # checked and compiled above: errors come before any task
        from .cluster import lazy_result, shared_client

        shared_client(scheduler, scheduler_timeout)
        result = lazy_result(prepared)
    else:
        result = prepared.run(threads=threads, block_size=block_size)
    call = describe_call(expression, what, at=at, grid=grid, points=points, fixed=fixed,
                         vector=vector, direction=direction, dtype=dtype)
    return Evaluated(result.arrays, result, prepared.origin(call))
