"""A computation's record (:class:`Computation`) and what its blocks' component axes mean
(:class:`Axes`): the types of the computation table (``computations.py``), apart from
the table so that the built-in records (``builtin.py``) are written without importing it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["Computation", "Axes"]


class Axes:
    """One data variable of a gridded file made of a computation's blocks: ``name``,
    its ``long_name`` (for a scalar f, and for a vector f: templates naming the axes in
    braces), its axes (of ``component``: f's components, dropped for a scalar f; ``wrt``
    and ``wrt2``: the variables), and ``column(component=, wrt=, wrt2=)`` the scalar column
    at one label of each. (A plain class: cheaper to define at start-up than a
    NamedTuple.)"""

    __slots__ = ("name", "long_name", "dims", "column")

    def __init__(self, name: str, long_name: tuple[str, str], dims: tuple[str, ...],
                 column: Callable[..., str]) -> None:
        self.name, self.long_name, self.dims, self.column = name, long_name, dims, column


def _one_sweep(plan: Any) -> int:
    return 1


class Computation(NamedTuple):
    """One computation.

    ``blocks(plan, outs)`` gives every result block, ``outs`` being the value's own blocks
    (most computations return ``outs`` followed by their derivative blocks). ``kernel(plan,
    targets, outs, num)`` computes one block's derivative blocks (those after the value's
    when ``blocks`` keeps them first), one array, scalar or None (identically zero) each;
    ``None`` for a computation that only evaluates (no graph is recorded then).
    ``sweeps(plan)`` is its cost in passes over the recorded graph (bounds the work per
    point); ``order(plan)`` the column order as (block, component) pairs when it is not
    block by block. ``specify(plan, wrt=, order=)`` checks a request and returns the
    ``Plan.spec`` the kernel reads; without it, ``wrt`` (when accepted) selects the
    variables or named steps derivatives are taken by (``Plan.wrt``). ``scalar``: the
    expression must be scalar-valued (``scalar_hint`` follows the refusal). ``blocked``:
    never run a grid as one whole-grid block (many sweeps per point). ``check``: the
    relative tolerance of a finite-difference check per dtype name (None: no check),
    ``check_step`` its relative difference step and ``check_differences`` the computation
    whose results are differenced (``eval`` for first derivatives, ``grad`` for second:
    the engine's own gradient, as PyTorch's gradgradcheck). ``rows(plan)``: how many table
    rows one point's results make when more than one, and what they are (taylor: one per
    multi-index, "coefficients"), bounded with the points by ``max_points``. ``help`` and
    ``examples`` describe it (the CLI shows them; the CLI's own words for the built-in
    commands take precedence). ``formula(columns, asked)``: its derivatives as formulas
    (``gradcli.formula`` and the CLI's formula option; ``lang/formula_printer.py``), None:
    it has none. ``shown(result, plan)``: the table a front end shows instead of the
    blocks' columns (taylor's long table, one row per multi-index). ``axes``: what the
    component axes of its blocks mean, for gridded files (:class:`Axes`; read by the
    NetCDF/Zarr plan). ``streams``: its column order is made only when asked (one entry
    per scalar column: the Hessian's rows are streamed). ``pairs(plan)``: for the
    derivative check (``check.py``), (derivative block, differenced block, variable) per
    derivative block, the block differenced being one of ``check_differences``' own and
    the variable an index of ``plan.targets`` (default: one derivative block per
    (differenced block, variable), in that order). ``notes(prepared)``: the lines a table
    of its result says under it (vjp: the shapes of v, J and vᵀJ). ``backward_program``:
    its formula also has the backward program's form (``form="program"``).
    ``units(name, units, plan)``: the unit of one of its blocks that the column's name
    does not say (``plan/block_units.py``: vjp's, jvp's, the Laplacian's...).
    A NamedTuple: immutable, and cheap to define at start-up.
    """

    name: str
    help: str
    blocks: Callable[[Any, list], list]
    kernel: Callable[[Any, list, list, type], list] | None = None
    parameters: tuple[str, ...] = ()
    scalar: bool = False
    scalar_hint: str = ""
    sweeps: Callable[[Any], int] = _one_sweep
    order: Callable[[Any], list[tuple[int, int]] | None] | None = None
    specify: Callable[..., Any] | None = None
    blocked: bool = False
    check: dict[str, float] | None = None
    check_step: float = 1e-6
    check_differences: str = "eval"
    rows: Callable[[Any], tuple[int, str]] | None = None
    examples: tuple[str, ...] = ()
    formula: Callable[[Any, Any], list] | None = None
    shown: Callable[[Any, Any], Any] | None = None
    axes: tuple[Axes, ...] = ()
    streams: bool = False
    pairs: Callable[[Any], list[tuple[int, int, int]]] | None = None
    notes: Callable[[Any], list[str]] | None = None
    backward_program: bool = False
    units: Callable[[str, Any, Any], Any] | None = None

    @property
    def records(self) -> bool:
        """Whether a run records the graph (every computation that takes derivatives)."""
        return self.kernel is not None
