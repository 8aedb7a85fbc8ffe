"""The text forms of points, grids and vectors: ``x=1,y=pi/2``, ``x=0:2pi:100``, ``1,0``.

Shared by the CLI's options (``--at``, ``--grid``, ``--vector``, ``--direction``) and the
plot options that name a variable (``--slice z=0``, ``--animate t=0:2pi:48``), which is why
it sits below both. Values and bounds are constant expressions of gradcli's own language,
parsed and folded by it (:func:`parse_constant`): nothing a user types is executed as
Python.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .binding import EvaluationError, parse_constant

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


def _assignments(spec: str, option: str) -> list[tuple[str, str]]:
    out = []
    for part in split_top(spec, ","):
        if "=" not in part:
            raise EvaluationError(f"{option} '{spec}': expected name=value, got '{part.strip()}'")
        name, _, value = part.partition("=")
        name = name.strip()
        if not _NAME.match(name):
            raise EvaluationError(f"{option} '{spec}': '{name}' is not a variable name")
        if not value.strip():
            raise EvaluationError(f"{option} '{spec}': no value for '{name}'")
        out.append((name, value))
    return out


def parse_point(spec: str, option: str = "--at") -> dict[str, Any]:
    """``"x=1,y=pi/2"`` or ``"x=[0,1,2]"`` -> ``{"x": 1.0, "y": 1.5707...}``."""
    point: dict[str, Any] = {}
    for name, value in _assignments(spec, option):
        if name in point:
            raise EvaluationError(f"{option} '{spec}': '{name}' is given twice")
        point[name] = parse_constant(value, f"{option} {name}")
    return point


def parse_grid(spec: str) -> tuple[str, Any]:
    """``"x=0:2pi:100"`` -> ``("x", (0, 6.28.., 100))``; ``"z=0.5"`` holds z fixed; a name
    alone, ``"x"``, is ``("x", None)``: x on the default range."""
    if _NAME.match(spec.strip()):
        return spec.strip(), None
    pairs = _assignments(spec, "--grid")
    if len(pairs) != 1:
        raise EvaluationError(f"--grid '{spec}': give one variable per --grid "
                              "(repeat --grid for more)")
    name, value = pairs[0]
    parts = split_top(value, ":")
    if len(parts) == 1:
        return name, _scalar(parse_constant(parts[0], f"--grid {name}"), f"--grid {name}")
    if len(parts) != 3:
        raise EvaluationError(f"--grid '{spec}': expected start:stop:count, e.g. x=0:2pi:100")
    start = _scalar(parse_constant(parts[0], f"--grid {name} start"), f"--grid {name} start")
    stop = _scalar(parse_constant(parts[1], f"--grid {name} stop"), f"--grid {name} stop")
    count = _scalar(parse_constant(parts[2], f"--grid {name} count"), f"--grid {name} count")
    if not float(count).is_integer() or count < 1:
        raise EvaluationError(f"--grid '{spec}': the count must be a whole number >= 1, "
                              f"got {parts[2].strip()}")
    return name, (start, stop, int(count))


def _scalar(value: Any, what: str) -> float:
    if isinstance(value, list):
        raise EvaluationError(f"{what}: expected a number, got a vector")
    if not np.isfinite(value):
        raise EvaluationError(f"{what}: expected a finite number, got {value}")
    return float(value)


def parse_vector(spec: str) -> Any:
    """``"1,0"``, ``"[1,0]"`` or ``"[[1,0],[0,1]]"`` -> nested lists of floats."""
    text = spec.strip()
    if len(split_top(text, ",")) > 1:
        text = f"[{text}]"
    return parse_constant(text, "--vector")
