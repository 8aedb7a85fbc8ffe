"""The parameter table: every parameter a computation may take, declared once.

A :class:`Parameter` says everything about one of the library's computation parameters
(``wrt``, ``order``, ``norm``, ``vector``, ``direction``, ``unit``): its name (the keyword
of ``gradcli.evaluate`` and the field of a ``Request``), its kind, its text syntax (how
the command line's text becomes its value: ``read``), its check (how ``prepare`` turns the
value into what the kernel reads: ``check``), its help, the example a message shows, and
the flags the CLI gives it. Everything that lists the parameters reads this table: the
computation records (which name the parameters they take), ``Request`` and
``evaluate``/``prepare`` (the keywords accepted and their checks), the history line
(``Request.call``), the error messages (a missing or misplaced parameter is named through
``ref``, so the CLI shows its flag) and the CLI (``cli/definition.py`` makes each
parameter's option from its record; ``build_request`` reads its text with ``read``).

Adding a parameter is one :func:`declare` call; a computation names it in its record's
``parameters`` and its kernel reads ``plan.params[name]``.

This is the one module of the library that spells command-line flags (``--wrt``): the
table declares them, so the CLI's options derive from it. Everywhere else the library
names parameters, and messages name them with ``ref``
(tests/evaluation/test_layering_greps.py checks both).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.request.binding import real_array

__all__ = ["Parameter", "TABLE", "declare", "parameter", "names", "needs"]

#: kinds of parameter values: names (``"x,y"``), a whole number, a flag, an array shaped
#: like the formula's value, a point (one value per variable)
KINDS = ("names", "whole", "flag", "array", "point", "units")


class Context:
    """What a parameter's check may look at: the plan being made (its program, variables
    and the parameters checked before this one, ``plan.params``), the binding, and the
    computation's name."""

    __slots__ = ("plan", "binding", "what")

    def __init__(self, plan: Any, binding: Any, what: str) -> None:
        self.plan, self.binding, self.what = plan, binding, what


class Parameter:
    """One computation parameter.

    ``kind`` is one of :data:`KINDS`. ``help`` is its description (the CLI's default
    help; a command may word it for itself). ``flags``, ``metavar`` and ``example`` are the
    CLI's option for it; ``required``: a command that takes it cannot run without it
    (``needs`` says so, naming it). ``typed`` and ``python`` are an example value as typed
    on the command line and as given to the library, for messages. ``read(text, files)``
    turns the command line's text (a list for a repeated option) into the library's value
    (``files`` reads ``@FILE``); None: the value as given. ``check(value, context)`` turns
    the library's value into what the kernel reads (``plan.params[name]``), raising an
    EvaluationError that names the parameter; None: the value as given. ``noun`` is how a
    message calls it (``a direction u``; default: its name). A plain class with slots:
    declared at start-up, where a NamedTuple or dataclass would cost a class build each.
    """

    __slots__ = ("name", "kind", "help", "flags", "example", "metavar", "required", "typed",
                 "python", "read", "check", "repeat", "low", "high", "noun", "every")

    def __init__(self, name: str, kind: str, help: str,  # noqa: A002 - the field's name
                 flags: tuple[str, ...], example: str, *, metavar: str = "",
                 required: bool = False, typed: str = "", python: str = "",
                 read: Callable[[Any, Any], Any] | None = None,
                 check: Callable[[Any, Context], Any] | None = None, repeat: bool = False,
                 low: float | None = None, high: float | None = None,
                 noun: str = "", every: bool = False) -> None:
        self.name, self.kind, self.help, self.flags, self.example = (name, kind, help, flags,
                                                                      example)
        self.metavar, self.required, self.typed, self.python = metavar, required, typed, python
        self.read, self.check, self.repeat, self.low, self.high = (read, check, repeat, low,
                                                                   high)
        self.noun = noun
        self.every = every  # every computation takes it (units, to)

    def given(self, value: Any) -> bool:
        """Whether ``value`` is a value for it (not None, not False for a flag); an array
        value is never compared (its truth is ambiguous)."""
        return value is not None and value is not False

    def example_ref(self) -> str:
        """A reference to the parameter with its example value (``ref``)."""
        return ref(self.name, text=self.typed or None, python=self.python or None)


#: every parameter, by name, in declaration order (the order checks run in)
TABLE: dict[str, Parameter] = {}


def declare(p: Parameter) -> Parameter:
    """Add (or replace) a parameter."""
    if p.kind not in KINDS:
        raise ValueError(f"parameter '{p.name}': unknown kind '{p.kind}'")
    TABLE[p.name] = p
    return p


def names() -> tuple[str, ...]:
    """The parameters' names, in declaration order."""
    return tuple(TABLE)


def parameter(name: str) -> Parameter:
    """The parameter ``name`` (KeyError for an unknown one)."""
    return TABLE[name]


def needs(what: str, name: str) -> EvaluationError:
    """The error for a computation run without a parameter it needs, naming that
    parameter: ``jvp needs a direction u: direction={"x": 1, "y": 0}`` (the CLI:
    ``--direction "x=1,y=0"``)."""
    p = TABLE[name]
    return EvaluationError(f"{what} needs {p.noun or ref(name)}: {p.example_ref()}")


# --- the built-in parameters ---------------------------------------------------------------

def _read_names(text: Any, files: Any = None) -> list[str]:
    items = [text] if isinstance(text, str) else list(text)
    return [name.strip() for spec in items for name in str(spec).split(",")]


def _read_units(text: Any, files: Any = None) -> dict[str, str]:
    """``"V=V,I=mA"`` (or a list of them) -> ``{"V": "V", "I": "mA"}``."""
    items = [text] if isinstance(text, str) else list(text)
    out: dict[str, str] = {}
    for spec in items:
        for part in str(spec).split(","):
            if not part.strip():
                continue
            name, sep, unit = part.partition("=")
            if not sep or not name.strip() or not unit.strip():
                raise EvaluationError(f"{ref('units', text=repr(str(spec)))}: expected "
                                      f"NAME=UNIT, got '{part.strip()[:40]}'")
            out[name.strip()] = unit.strip()
    return out


def every() -> tuple[str, ...]:
    """The parameters every computation takes (units, to)."""
    return tuple(n for n, p in TABLE.items() if p.every)


def _read_vector(text: Any, files: Any = None) -> Any:
    from gradcli.lang.spec_text import parse_vector

    return parse_vector(text, files=files)


def _read_point(name: str) -> Callable[[Any, Any], Any]:
    def read(text: Any, files: Any = None) -> Any:
        from gradcli.lang.spec_text import parse_point

        return parse_point(text, name, files=files)
    return read


def _check_vector(vector: Any, ctx: Context) -> list[Any]:
    """v for vjp, shaped like f: one entry per output block."""
    program = ctx.plan.program
    if vector is None:
        raise needs(ctx.what, "vector")
    try:
        arr = real_array(vector, "the vector")
    except EvaluationError:
        raise
    except ValueError:
        raise EvaluationError("the vector is ragged: every row needs the same length") \
            from None
    if arr.shape != program.shape:
        raise EvaluationError(f"the vector has shape {arr.shape} but f has shape "
                              f"{program.shape}: v must have one entry per component of f")
    if len(program.outputs) == 1:
        return [arr if arr.shape else float(arr)]
    return [float(v) for v in arr.reshape(-1)]


def _check_point(name: str) -> Callable[[Any, Context], dict[str, Any]]:
    """A point-valued parameter (``direction``): one array per variable, shaped like it
    (missing variables: zero)."""

    def check(point: Mapping[str, Any] | None, ctx: Context) -> dict[str, Any]:
        binding = ctx.binding
        if not point:
            raise needs(ctx.what, name)
        out = {}
        for var, value in point.items():
            if var not in binding.shapes:
                raise EvaluationError(f"the {ref(name)} names '{var}', which is not a variable "
                                      f"here (variables: {', '.join(binding.names)})")
            what = f"the {ref(name)} for '{var}'"
            try:
                arr = real_array(value, what)
            except EvaluationError:
                raise
            except ValueError:
                raise EvaluationError(f"{what} is ragged") from None
            want = binding.shapes[var]
            if arr.shape != want:
                if arr.size != int(np.prod(want)):
                    raise EvaluationError(f"{what} has {arr.size} entries, the variable has "
                                          f"{int(np.prod(want))}")
                raise EvaluationError(f"{what} has shape {arr.shape}, the variable {want}")
            out[var] = arr if arr.shape else float(arr)
        return out
    return check


def _check_unit(unit: bool, ctx: Context) -> bool:
    """``unit``: the direction (checked before it) scaled to length 1 over every
    component."""
    if unit:
        u = ctx.plan.params.get("direction") or {}
        parts = [np.abs(np.asarray(v, dtype=float)).reshape(-1) for v in u.values()]
        length = float(np.hypot.reduce(np.concatenate(parts))) if parts else 0.0
        if not np.isfinite(length) or length == 0.0:
            raise EvaluationError(f"{ref('unit')}: the direction has length {length:g}, so "
                                  "it cannot be made a unit vector")
        ctx.plan.params["direction"] = {n: v / length for n, v in u.items()}
    return bool(unit)


declare(Parameter(
    "norm", "flag", "Also write |grad f|, the Euclidean norm of the gradient, after the "
    "partials.", ("--norm",), "--norm", check=lambda v, ctx: bool(v)))
declare(Parameter(
    "vector", "array", 'v shaped like f: "1,0", or "[[1,0],[0,1]]" for a matrix, or @v.npy.',
    ("--vector", "-v"), '--vector "1,0"', metavar="V", required=True, typed='"1,0"',
    python="[1, 0]", read=_read_vector, check=_check_vector, noun="a vector v shaped like f"))
declare(Parameter(
    "direction", "point", "The tangent u; variables not named get 0; a vector may come from "
    "a file (x=@u.npy).", ("--direction", "-d"), '--direction "x=1,y=0"', metavar="U",
    required=True, typed='"x=1,y=0"', python='{"x": 1, "y": 0}',
    read=_read_point("direction"), check=_check_point("direction"), noun="a direction u"))
declare(Parameter(
    "unit", "flag", "Normalise the direction to unit length: jvp is then the directional "
    "derivative (hvp: H·u for the unit u).", ("--unit-vector",),
    '--direction "x=3,y=4" --unit-vector', check=_check_unit))
declare(Parameter(
    "units", "units", "Physical units: NAME=UNIT for a variable, a program's step or a "
    "constant step (comma-separated, or repeat): V=V,I=mA; units are pint's (m, km/h, ohm, "
    "degC, deg, m/s^2...).", ("--unit",), '--unit "V=V,I=mA"', metavar="NAME=UNIT",
    repeat=True, typed='"V=V,I=mA"', python='{"V": "V", "I": "mA"}', read=_read_units,
    every=True))
declare(Parameter(
    "to", "units", "Show a result column in a compatible unit: f=kohm, \"df/dI=ohm/mA\" "
    "(repeat for more).", ("--to",), '--to f=kohm', metavar="COLUMN=UNIT", repeat=True,
    typed="f=kohm", python='{"f": "kohm"}', read=_read_units, every=True))
declare(Parameter(
    "wrt", "names", "Differentiate by these variables or named steps only (comma-separated, "
    "or repeat); by a step m, df/dm holds m's inputs fixed (PyTorch's retain_grad).",
    ("--wrt", "-w"), 'gradcli grad "m = x^2; y = m + x; p = 4*y" --at x=3 --wrt m',
    metavar="NAMES", repeat=True, typed="x,y", python="'x,y'", read=_read_names))
declare(Parameter(
    "order", "whole", "The order.", ("--order", "-k"), "--order 2", metavar="K", low=0,
    high=100))
