"""The grid a run samples: ``--grid`` specs in, with the default range filled in.

The spec syntax itself (``x=0:2pi:100``, ``x=1,y=pi/2``) is ``gradcli.lang.spec_text``,
shared with the plot options; this adds what only the command line does: a bare ``--grid``
or a name alone samples a variable on the default range, announced on stderr.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from gradcli.cli.definition import BARE_GRID
from gradcli.cli.messages import UsageProblem, note
from gradcli.lang import free_variables, parse
from gradcli.lang.spec_text import parse_grid

#: where a bare --grid (or a name alone) samples a variable
DEFAULT_RANGE = (-5.0, 5.0)


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
    if defaulted:
        lo, hi = (_fmt_number(v) for v in DEFAULT_RANGE)
        note("using " + " ".join(f"--grid {n}={lo}:{hi}:{count}" for n in defaulted), quiet)
    return grid
