"""One request: what was asked, as one value that flows from the front end to the workers.

Every command builds one (the numeric commands, ``graph``, ``critical``, ``descend``,
``flow``, ``propagate``, ``plot``, ``implicit``, ``integrate``, the curvilinear
operators, the formulas), and so does every library function (``gradcli.evaluate``,
``gradcli.critical``...): ``what`` names a computation of the table or an application
(``execute.APPLICATIONS``), and ``gradcli.execute.execute`` runs it, whoever built it.
The same object is prepared (``prepare_request``), travels to Dask workers
(``cluster.Job``), and describes itself for a file's ``history`` (:meth:`Request.call`).
Its fields are the library's parameter names. Its :class:`Output` part says where and how
the result is written (format, path, precision, overwrite, history): the writers read it,
a computation never does. A front end's own options travel in ``options``, as given, so
that a command line can be written back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from gradcli.request.binding import DEFAULT_MAX_POINTS

__all__ = ["Request", "Output", "Outcome", "WHERE", "describe_call"]

#: the parameters that say where to evaluate (exactly one of them), and ``fixed`` beside
WHERE = ("at", "grid", "points")


class Output(NamedTuple):
    """The request's output part: where and how its result is written, read by the writers
    only (a computation never sees it). ``format`` is a name of the format table (``auto``:
    from the path's extension, else the terminal's table); ``path`` None is standard
    output; ``history`` is the line a file records about how it was made."""

    format: str = "auto"
    path: str | None = None
    precision: int = 6
    overwrite: bool = False
    history: str = ""
    quiet: bool = False
    #: the writer's keywords a front end's output options give (a table's ``title``)
    extras: Mapping[str, Any] | None = None

    def replace(self, **changes: Any) -> Output:
        """This output part with some fields changed."""
        return self._replace(**changes)


@dataclass
class Outcome:
    """What an application returns for a request (``gradcli.execute``): its rows (a
    mapping of columns) or ``text``, a ``title``, its ``notes`` (parameter references
    in them, named by each front end in its own words), whether a run failed (``failed``:
    a descent or trajectory that stopped being finite; the command exits 1) and
    ``facts`` a writer may need (the columns' ``variables``)."""

    columns: Any = None
    title: str = ""
    notes: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    facts: dict[str, Any] = field(default_factory=dict)
    text: str | None = None


class Request(NamedTuple):
    """Everything one command or library call asked: the expression, ``what`` (a name of
    the computation table, or an application's), where (``at``, ``grid`` or ``points``;
    ``fixed`` holds more variables; ``carry`` passes a points file's text columns through), the
    computation's ``parameters`` by name (the parameter table, ``parameters.py``: ``wrt``,
    ``vector``, ``direction``...; :meth:`get` reads one), the numbers (``dtype``,
    ``max_points``), how to run (``threads``, ``block_size``, ``scheduler``,
    ``scheduler_timeout``, ``memory``: they never change a value), the front end's
    ``options`` and the :class:`Output` part. Immutable (a NamedTuple, cheap to define at
    start-up): change one with :meth:`replace`."""

    expression: str
    what: str = "eval"
    at: Any = None
    grid: Mapping[str, Any] | None = None
    points: Mapping[str, Any] | None = None
    fixed: Mapping[str, Any] | None = None
    carry: Mapping[str, Any] | None = None
    parameters: Mapping[str, Any] | None = None
    dtype: Any = None
    max_points: int = DEFAULT_MAX_POINTS
    threads: int | None = None
    block_size: int | None = None
    scheduler: Any = None
    scheduler_timeout: float = 10.0
    memory: Any = None
    options: Mapping[str, Any] | None = None
    output: Output = Output()

    def replace(self, **changes: Any) -> Request:
        """This request with some fields changed."""
        return self._replace(**changes)

    def option(self, name: str, default: Any = None) -> Any:
        """A front-end option as given (``fmt``, ``output``, ``precision``...)."""
        return (self.options or {}).get(name, default)

    def get(self, parameter: str, default: Any = None) -> Any:
        """A computation parameter's value (``wrt``, ``vector``...), ``default`` if not
        given."""
        return (self.parameters or {}).get(parameter, default)

    def for_worker(self) -> Request:
        """The request as a Dask worker receives it: without the points (they travel per
        block), the carried text columns and the front end's options."""
        return self._replace(at=None, points=None, carry=None, options=None, scheduler=None,
                             output=Output())

    def call(self) -> str:
        """``gradcli.evaluate('sin(x)', 'grad', grid={'x': (0, 1, 11)})``: the library's
        equivalent of a command line, for a file's ``history``."""
        from gradcli.request.parameters import TABLE

        given = {name: value for name, value in (self.parameters or {}).items()
                 if name not in TABLE or TABLE[name].given(value)}
        return describe_call(self.expression, self.what, at=self.at, grid=self.grid,
                             points=self.points, fixed=self.fixed, dtype=self.dtype, **given)


def _short(value: Any) -> str:
    """``repr`` of an argument, with arrays summarised (history stays one short line)."""
    if isinstance(value, type):  # dtype=numpy.float32
        return repr(value.__name__)
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and int(getattr(value, "size", 0)) > 8:
        return f"<array {tuple(shape)}>"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {_short(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return f"<{len(value)} values>"
    return repr(value)


def describe_call(expression: str, what: str, **kwargs: Any) -> str:
    """``gradcli.evaluate('sin(x)', 'grad', grid={'x': (0, 1, 11)})``: the library's
    equivalent of a command line, for a file's ``history``."""
    args = [repr(expression), repr(what)]
    args += [f"{k}={_short(v)}" for k, v in kwargs.items() if v is not None]
    return f"gradcli.evaluate({', '.join(args)})"
