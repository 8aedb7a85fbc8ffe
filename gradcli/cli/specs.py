"""Parse the CLI's point specifications: ``x=1,y=pi/2``, ``x=0:2pi:100``, ``1,0``, CSV files.

Values and bounds are constant expressions of gradcli's own language, parsed and folded
by it (``gradcli.evaluation.parse_constant``): nothing a user types is executed as Python.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import Any

import numpy as np

from ..evaluation import EvaluationError, parse_constant
from ..lang import free_variables, parse
from .declare import BARE_GRID
from .errors import UsageProblem, say

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: where a bare --grid (or a name alone) samples a variable
DEFAULT_RANGE = (-5.0, 5.0)


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


def _fmt_number(v: float) -> str:
    return f"{v:g}"


def resolve_grid(expression: str, specs: list[str], quiet: bool,
                 force_default: bool = False, held: Iterable[str] = ()) -> dict[str, Any]:
    """Grid entries from ``--grid`` specs, in the order given.

    A name alone samples that variable on the default range; a bare ``--grid`` (or
    ``force_default``) samples every other free variable of the expression there (except
    those ``held`` fixed by ``--at``), and the grid then orders the expression's variables
    by name (x before y: x is horizontal), wherever they were given. Each sampled variable
    gets 101 points when at most two are sampled, else 21. The choice is announced on
    stderr, in the syntax the user could have typed, unless ``quiet``.
    """
    grid: dict[str, Any] = {}
    bare = force_default
    for spec in specs:
        if spec == BARE_GRID:
            bare = True
            continue
        name, value = parse_grid(spec)
        if name in grid:
            raise UsageProblem(f"--grid '{name}' is given twice")
        if name in held:
            raise UsageProblem(f"'{name}' is given by --at and by --grid: give only one of "
                               "them")
        grid[name] = value
    if bare:
        names = sorted(n for n in free_variables(parse(expression)) if n not in held)
        grid = {n: grid.get(n) for n in names} | {n: v for n, v in grid.items()
                                                  if n not in names}
    defaulted = [n for n, v in grid.items() if v is None]
    sampled = sum(v is None or isinstance(v, tuple) for v in grid.values())
    count = 101 if sampled <= 2 else 21  # variables held fixed are not sampled
    for name in defaulted:
        grid[name] = (DEFAULT_RANGE[0], DEFAULT_RANGE[1], count)
    if defaulted and not quiet:
        lo, hi = (_fmt_number(v) for v in DEFAULT_RANGE)
        say("using " + " ".join(f"--grid {n}={lo}:{hi}:{count}" for n in defaulted))
    return grid


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


def read_points_csv(text: str, source: str) -> dict[str, np.ndarray]:
    """Columns of a CSV whose header names the variables (``x[0]``, ``x[1]`` make a
    vector variable ``x``)."""
    import csv  # only for --points

    rows = list(csv.reader(io.StringIO(text)))
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise EvaluationError(f"{source}: empty CSV (expected a header naming the variables)")
    header = [h.strip() for h in rows[0]]
    groups: dict[str, list[tuple[int, int]]] = {}
    for col, h in enumerate(header):
        if h in header[:col]:
            raise EvaluationError(f"{source}: header column {col + 1} '{h}' appears twice "
                                  f"(first as column {header.index(h) + 1})")
        m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?", h)
        if not m:
            raise EvaluationError(f"{source}: header column {col + 1} '{h}' is not a "
                                  "variable name")
        groups.setdefault(m.group(1), []).append((int(m.group(2) or -1), col))
    data = np.empty((len(rows) - 1, len(header)))
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise EvaluationError(f"{source}: line {i} has {len(row)} fields, the header "
                                  f"has {len(header)}")
        for j, cell in enumerate(row):
            try:
                data[i - 2, j] = float(cell)
            except ValueError:
                raise EvaluationError(f"{source}: line {i}, column '{header[j]}': "
                                      f"'{cell.strip()}' is not a number") from None
    out = {}
    for name, cols in groups.items():
        if len(cols) == 1 and cols[0][0] == -1:
            out[name] = data[:, cols[0][1]]
        else:
            cols.sort()
            if [k for k, _ in cols] != list(range(len(cols))):
                raise EvaluationError(f"{source}: columns of '{name}' must be "
                                      f"{name}[0], {name}[1], ... without gaps")
            out[name] = data[:, [c for _, c in cols]]
    return out
