"""The computation table: one record per thing ``gradcli.evaluate`` can compute.

A :class:`Computation` says everything the rest of gradcli needs to know about a
computation, in one place: its name (``what=``, and the CLI command of that name), the
parameters it accepts besides the points (names of the parameter table,
``parameters.py``), whether it needs a scalar-valued expression, how it checks a
request and fills ``Plan.spec`` (``specify``), its result blocks, its cost in sweeps, its
column order, its kernel, whether a grid must be cut into blocks, its ``check``
tolerance per dtype and difference step, and its help text.

Everything that used to switch on the string ``what`` reads this table instead:
``Plan.blocks/order/sweeps`` and ``compute_block`` (``kernels.py``), the whole-grid
decision (``runner.py``), the option and scalar checks of ``prepare``, ``check.py``'s
step, the CLI's numeric commands and their check options (``cli/definition.py``), and
the plot's colour quantities that are derivatives (``div``, ``curl``, ``laplacian``).

Adding a computation is one :func:`register` call with its kernel (see docs/DESIGN.md,
"How to add a computation"); it is then a ``what=`` value, a CLI command with its help,
and (scalar kernels only) nothing more to wire.
"""

from __future__ import annotations

from gradcli.errors import EvaluationError
from gradcli.plan.records import Axes, Computation

__all__ = ["Axes", "Computation", "TABLE", "register", "unregister", "names",
           "computation", "accepting"]








#: every registered computation, by name, in registration order
TABLE: dict[str, Computation] = {}


def register(computation: Computation) -> Computation:
    """Add (or replace) a computation: it becomes a ``what=`` of ``gradcli.evaluate`` and,
    in a process whose CLI is built after this call, a command."""
    from gradcli.request.parameters import TABLE as PARAMETERS

    unknown = [p for p in computation.parameters if p not in PARAMETERS]
    if unknown:
        raise ValueError(f"computation '{computation.name}': unknown parameter "
                         f"'{unknown[0]}' (known: {', '.join(PARAMETERS)}; declare a new one "
                         "with parameters.declare)")
    _builtins()
    extra = tuple(p for p, d in PARAMETERS.items() if d.every and p not in computation.parameters)
    if extra:  # units and to: every computation takes them

        computation = computation._replace(
                                          parameters=(*computation.parameters, *extra))
    TABLE[computation.name] = computation
    return computation


def unregister(name: str) -> None:
    """Remove a computation registered at run time (tests)."""
    TABLE.pop(name, None)


def names() -> tuple[str, ...]:
    """The registered computations' names, in registration order."""
    _builtins()
    return tuple(TABLE)


def computation(name: str) -> Computation:
    """The record of ``name``; EvaluationError naming the choices for an unknown one."""
    _builtins()
    found = TABLE.get(name)
    if found is None:
        raise EvaluationError(f"unknown computation '{name}': choose one of "
                              f"{', '.join(TABLE)}")
    return found


def accepting(parameter: str) -> tuple[str, ...]:
    """The computations that accept ``parameter``."""
    _builtins()
    return tuple(c.name for c in TABLE.values() if parameter in c.parameters)


_loaded = False


def _builtins() -> None:
    """Register the built-in computations on first use (their kernels' modules import the
    engine: only a run that computes pays for them)."""
    global _loaded
    if not _loaded:
        _loaded = True
        from gradcli.plan.builtin import BUILTINS

        for record in BUILTINS:
            register(record)
