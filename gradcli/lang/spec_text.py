"""The text forms of points, grids and vectors: ``x=1,y=pi/2``, ``x=0:2pi:100``, ``1,0``.

Shared by the CLI's options for ``at``, ``grid``, ``vector`` and ``direction`` and the
plot options that name a variable (a slice ``z=0``, an animation ``t=0:2pi:48``), which is
why it sits below both. Messages name the parameter a text was given for with
``binding.ref`` (the CLI shows its option's flag there). Values and bounds are constant
expressions of gradcli's own language, parsed and folded by it (:func:`parse_constant`):
nothing a user types is executed as Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import EvaluationError, ref

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def split_top(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets and parentheses."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _assignments(spec: str, parameter: str) -> list[tuple[str, str]]:
    out = []
    given = ref(parameter, text=f"'{spec}'")
    for part in split_top(spec, ","):
        if "=" not in part:
            raise EvaluationError(f"{given}: expected name=value, got '{part.strip()}'")
        name, _, value = part.partition("=")
        name = name.strip()
        if not _NAME.match(name):
            raise EvaluationError(f"{given}: '{name}' is not a variable name")
        if not value.strip():
            raise EvaluationError(f"{given}: no value for '{name}'")
        out.append((name, value))
    return out


#: reads the vector or matrix a value ``@FILE`` names: ``files(path, what)`` (the command
#: line supplies it; this layer reads no files)
Files = Callable[[str, str], Any]


def _value(text: str, what: str, files: Files | None) -> Any:
    """A constant expression's value, or the array a ``@FILE`` value names."""
    if text.strip().startswith("@"):
        if files is None:
            raise EvaluationError(f"{what}: a value from a file (@FILE) is not accepted here")
        return files(text.strip()[1:], what)
    try:
        return parse_constant(text, what)
    except EvaluationError:
        from gradcli.lang.units import WithUnit, split_value

        split = split_value(text)  # "4.999 V": a number with its unit
        if split is None:
            raise
        return WithUnit(float(split[0]), split[1])


def parse_point(spec: str, parameter: str = "at", files: Files | None = None
                ) -> dict[str, Any]:
    """``"x=1,y=pi/2"``, ``"x=[0,1,2]"`` or ``"x=@vec.npy"`` -> ``{"x": 1.0, ...}``; a
    value ``@FILE`` is read by ``files``. ``parameter`` is what the text was given for
    (its messages name it)."""
    point: dict[str, Any] = {}
    for name, value in _assignments(spec, parameter):
        if name in point:
            raise EvaluationError(f"{ref(parameter, text=repr(spec))}: '{name}' is given "
                                  "twice")
        point[name] = _value(value, ref(parameter, name), files)
    return point


def parse_grid(spec: str, parameter: str = "grid") -> tuple[str, Any]:
    """``"x=0:2pi:100"`` -> ``("x", (0, 6.28.., 100))``; ``"z=0.5"`` holds z fixed; a name
    alone, ``"x"``, is ``("x", None)``: x on the default range. ``parameter`` is what the
    spec was given for (its messages name it)."""
    if _NAME.match(spec.strip()):
        return spec.strip(), None
    pairs = _assignments(spec, parameter)
    given = ref(parameter, text=f"'{spec}'")
    if len(pairs) != 1:
        raise EvaluationError(f"{given}: give one variable per {ref(parameter)} "
                              f"(repeat {ref(parameter)} for more)")
    name, value = pairs[0]
    given = ref(parameter, name, f"'{spec}'")
    parts = split_top(value, ":")
    if len(parts) == 1:
        at = ref(parameter, name, name)
        return name, _scalar(parse_constant(parts[0], at), at)
    if len(parts) != 3:
        raise EvaluationError(f"{given}: expected start:stop:count, e.g. x=0:2pi:100")
    start, stop, count = (
        _scalar(parse_constant(part, f"{ref(parameter, name, name)} {what}"),
                f"{ref(parameter, name, name)} {what}")
        for part, what in zip(parts, ("start", "stop", "count"), strict=True))
    if not float(count).is_integer() or count < 1:
        raise EvaluationError(f"{given}: the count must be a whole number >= 1, "
                              f"got {parts[2].strip()}")
    return name, (start, stop, int(count))


def _scalar(value: Any, what: str) -> float:
    if isinstance(value, list):
        raise EvaluationError(f"{what}: expected a number, got a vector")
    if not np.isfinite(value):
        raise EvaluationError(f"{what}: expected a finite number, got {value}")
    return float(value)


def parse_vector(spec: str, files: Files | None = None) -> Any:
    """``"1,0"``, ``"[1,0]"`` or ``"[[1,0],[0,1]]"`` -> nested lists of floats; ``"@v.npy"``
    -> the array ``files`` reads."""
    text = spec.strip()
    if len(split_top(text, ",")) > 1:
        text = f"[{text}]"
    return _value(text, ref("vector"), files)


#: the names a constant value may use besides the language's constants, as a points file
#: may hold them: ``x=inf`` typed on a command line, ``{"x": "-inf"}``
_NON_FINITE = {"inf": np.inf, "nan": np.nan}


_PLAIN = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*\Z")


def parse_constant(text: str, what: str) -> Any:
    """The value of a constant expression of gradcli's language: a float, or nested lists
    of floats for brackets (``"pi/2"``, ``"[0, 2pi]"``, ``"-inf"``).

    The text is parsed and folded by gradcli's own parser, never executed as Python; a
    problem is an EvaluationError that starts with ``what`` (where the text came from).
    A plain decimal number (``0``, ``-1.5e3``) is read as a number without a program.
    """
    if _PLAIN.match(text):
        value = float(text)
        if value not in (np.inf, -np.inf):  # too large: the parser says so, with a caret
            return value
    from gradcli.lang import ExpressionError, free_variables, parse
    from gradcli.lang.compile import compile_expression

    try:
        tree = parse(text)
    except ExpressionError as exc:
        shown = exc.render().splitlines()[:-1]  # the value and its caret, without a 2nd message
        raise EvaluationError("\n".join([f"{what}: {exc.message}", *shown])) from None
    names = free_variables(tree)
    unknown = [n for n in names if n not in _NON_FINITE]
    if unknown:
        uses = "" if [text.strip()] == unknown else f" (it uses {', '.join(unknown)})"
        raise EvaluationError(f"{what}: '{text.strip()}' is not a number or a constant "
                              f"expression{uses}")
    program = compile_expression(tree, text, dict.fromkeys(names, ()))
    with quiet():  # inf - inf is nan here, as in a points file
        value = program.run({n: np.float64(_NON_FINITE[n]) for n in names})
    return np.asarray(value, dtype=np.float64).tolist() if names else value


def split_uncertainty(text: str) -> tuple[str, str | None]:
    """``"4.999+-0.0032"`` -> ``("4.999", "0.0032")``: the first ``+-`` or ``±`` outside
    brackets and parentheses separates an estimate from its standard uncertainty (inside
    them it stays arithmetic: ``(1+-0.1)`` is 0.9)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0:
            for sep in _SEPARATORS:
                if text.startswith(sep, i):
                    return text[:i], text[i + len(sep):]
    return text, None


_SEPARATORS = ("+-", "±")


def parse_times(text: str, limit: int) -> tuple[float, float, int]:
    """``0:20:2001`` -> ``(0.0, 20.0, 2001)``: a time grid (``t``) of at least 2 times
    between two different finite ends (constant expressions: ``0:2pi:629``), at most
    ``limit`` times."""
    parts = split_top(text, ":")
    if len(parts) == 3:
        a, b, n = (parse_constant(p, f"{ref('t')} {what}")
                   for p, what in zip(parts, ("start", "stop", "count"), strict=True))
        numbers = all(isinstance(v, float) and np.isfinite(v) for v in (a, b, n))
        if numbers and float(n).is_integer() and n >= 2 and a != b:
            if n > limit:
                raise EvaluationError(f"times '{text}': {int(n):,} is over the limit of "
                                      f"{limit:,} (10^9 steps, as for descend)")
            return float(a), float(b), int(n)
    raise EvaluationError(f"{ref('t', text=repr(text))}: expected start:stop:count with two "
                          "different finite ends and a whole count >= 2, e.g. "
                          f"{ref('t', text='0:20:2001', python=repr('0:20:2001'))}")


def parse_box(text: str, parameter: str = "box") -> dict[str, tuple[float, float]]:
    """``x=-5:5,y=-5:5`` -> ``{"x": (-5.0, 5.0), "y": (-5.0, 5.0)}``: a box, two finite
    bounds per variable, the lower first."""
    out: dict[str, tuple[float, float]] = {}
    for part in split_top(text, ","):
        name, eq, rest = part.partition("=")
        name = name.strip()
        ends = split_top(rest, ":") if eq else []
        if not name or len(ends) != 2:
            raise EvaluationError(f"{ref(parameter, text=repr(text))}: expected "
                                  "NAME=LOW:HIGH per variable, e.g. "
                                  f"{ref(parameter, text='x=-5:5,y=-5:5')}")
        low, high = (parse_constant(e, f"{ref(parameter)} {name}") for e in ends)
        if not all(isinstance(v, float) and np.isfinite(v) for v in (low, high)) or \
                low >= high:
            raise EvaluationError(f"{ref(parameter)} {name}={rest}: two finite bounds, "
                                  "the lower first")
        if name in out:
            raise EvaluationError(f"{ref(parameter)} names '{name}' twice")
        out[name] = (low, high)
    return out


_BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_BYTES = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kmgt]?)(?:i?b)?\s*", re.IGNORECASE)


def parse_bytes(text: Any, what: str = "memory") -> int:
    """``"2G"`` -> 2147483648: a number of bytes, with an optional binary unit K, M, G or
    T (``KB``/``KiB`` alike); an int is taken as bytes."""
    if isinstance(text, bool):
        raise EvaluationError(f"{what}: expected a size such as 512M or 2G, not {text!r}")
    if isinstance(text, int):
        return text
    match = _BYTES.fullmatch(str(text))
    if match is None:
        raise EvaluationError(f"{what} '{text}': expected a size such as 512M or 2G "
                              "(bytes, or K, M, G, T: powers of 1024)")
    return int(float(match.group(1)) * _BYTE_UNITS[match.group(2).lower()])
