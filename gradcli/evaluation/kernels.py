"""Per-block derivative kernels: what each command computes on one block of points.

The derivative mode follows from the request, never from how the points were given, so
``--at``, ``--grid`` (any block size, hoisted or not) and ``--points`` run the very same
sweeps and give the same value at the same point:

* ``grad``, ``jacobian``, ``vjp``: reverse mode, one sweep per output (``vjp``: one sweep);
* ``hessian``: reverse over reverse (the gradient recorded, then one sweep per variable),
  as ``torch.autograd.functional.hessian``;
* ``jvp``: forward mode, one tangent sweep.

Sweeps run inside ``batch_axes``: the block's axes are independent points, so a reverse
sweep never sums a cotangent over them. The cotangent reaching a grid variable's axis
(shape (n, 1)) is then the block-shaped per-point derivative. Seeds are the scalar 1.0
(or vᵢ, uⱼ), so cotangents and tangents stay as small as the values they meet.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.backward import run_backward
from ..engine.core import Tensor, raw
from ..engine.forward import Linearized, graph_nodes
from ..engine.grad_mode import batch_axes, enable_grad, no_grad, quiet, reused_values
from ..lang.compile import Program, _flatten

WHATS = ("eval", "grad", "jacobian", "vjp", "jvp", "hessian")


@dataclass
class Plan:
    """What to compute and how the result columns are named."""

    program: Program
    what: str
    inputs: list[tuple[str, str, int | None]]   # (column, variable, component)
    outputs: list[str]                           # f, f[0], f[0][1], ...
    vector: list[float] | None = None            # vjp: v, one entry per output
    direction: list[float] | None = None         # jvp: u, one entry per input
    var_sizes: list[tuple[str, int | None]] | None = None  # components per variable
    norm: bool = False                           # grad: also |grad f|
    spec: Any = None                             # what a kernel of EXTRA needs besides

    def sweeps(self) -> int:
        """How many passes over the recorded graph the kernel makes (its cost per op)."""
        if self.what in EXTRA:
            return EXTRA[self.what].sweeps(self)
        if self.what == "jacobian":
            return len(self.outputs)
        if self.what == "hessian":
            # one sweep records the gradient, one sweep of it per variable, and n² entries
            # each handled on its own: bounded by n + n² sweeps
            n = len(self.inputs)
            return n + n * n
        return 1

    def columns(self) -> list[str]:
        """The result columns after the variables' own, in output order."""
        ins = [c for c, _, _ in self.inputs]
        if self.what in EXTRA:
            return EXTRA[self.what].columns(self)
        if self.what == "eval":
            return list(self.outputs)
        if self.what == "grad":
            return ["f"] + [f"df/d{i}" for i in ins] + (["|grad f|"] if self.norm else [])
        if self.what == "jacobian":
            return self.outputs + [f"d{o}/d{i}" for o in self.outputs for i in ins]
        if self.what == "vjp":
            return self.outputs + [f"vjp/d{i}" for i in ins]
        if self.what == "jvp":
            return self.outputs + ["jvp" + o[1:] for o in self.outputs]
        return ["f"] + [f"d2f/d{a}d{b}" for a in ins for b in ins]


@dataclass(frozen=True)
class Kernel:
    """A command whose kernel lives in another module (``calculus.py``): its result
    columns after the outputs' own, its cost in sweeps, the per-block computation (as the
    kernels below: ``run(plan, leaves, outs, num)``), the blocks its columns form
    (``blocks(plan, variables)``, for ``assemble.py``) and whether a grid must always be
    cut into blocks (many sweeps per point: never one whole-grid block)."""

    columns: Callable[[Plan], list[str]]
    sweeps: Callable[[Plan], int]
    run: Callable[[Plan, list, list, type], list]
    blocks: Callable[[Plan, list], list] | None = None
    blocked: bool = False


#: the kernels registered by other modules, by ``what``
EXTRA: dict[str, Kernel] = {}


def _env(plan: Plan, values: list[Any]) -> dict[str, Any]:
    """Map each variable to its value: one operand, or a list of them for a vector."""
    env: dict[str, Any] = {}
    i = 0
    for name, size in plan.var_sizes or []:
        if size is None:
            env[name] = values[i]
            i += 1
        else:
            env[name] = values[i:i + size]
            i += size
    return env


@dataclass
class Hoist:
    """Work shared by every block of a grid: the values (and, being recorded, the tangents)
    of everything that does not depend on the variable whose axis the blocks cut."""

    blocked: str
    leaves: dict[str, list[Any]]
    memo: dict[int, Any]


def hoist(plan: Plan, components: dict[str, list[np.ndarray]], blocked: str) -> Hoist:
    """Compute the block-independent steps once (the y-only part of sin(x)*cos(y))."""
    recording = plan.what != "eval"
    leaves = {name: [Tensor._make(a).requires_grad_() if recording else a
                     for a in components[name]]
              for name, _ in plan.var_sizes or [] if name != blocked}
    env = {name: (vals if size is not None else vals[0])
           for (name, size) in plan.var_sizes or [] if name != blocked
           for vals in [leaves[name]]}
    mode = enable_grad() if recording else no_grad()
    with mode, quiet():
        memo = plan.program.run_without(env, blocked)
    return Hoist(blocked, leaves, memo)


def full_size_ops(plan: Plan, comps: dict[str, list[np.ndarray]], size: int) -> int:
    """How many recorded operations of one block produce an array of ``size`` elements (the
    block's size).

    Run on a probe block (two rows of a grid, so work on the other axes alone stays
    smaller than the block): when this is no more than the number of
    outputs, every full-size array a block makes is an output (sin(x)*cos(y): the product),
    so the whole grid can be one block whose arrays become the outputs without a copy.
    """
    leaves = [Tensor._make(c).requires_grad_() for name, _ in plan.var_sizes or []
              for c in comps[name]]
    with enable_grad(), quiet():
        outs = [o for o in _flatten(plan.program.run(_env(plan, leaves))) if _live(o)]
    made = [node.out_ref() for node in graph_nodes(outs)]
    return sum(1 for t in made if t is not None and int(np.size(t.arr)) >= size)


def _live(v: Any) -> bool:
    return isinstance(v, Tensor) and v.requires_grad


def compute_block(plan: Plan, comps: dict[str, list[np.ndarray]],
                  shared: Hoist | None = None) -> dict[str, Any]:
    """Evaluate one block. Values are arrays broadcastable to the block, scalars, or None
    for an identically zero derivative. ``shared`` supplies the hoisted work of a grid."""
    memo = shared.memo if shared is not None else None
    if plan.what == "eval":
        arrays = [a for name, _ in plan.var_sizes or [] for a in
                  (shared.leaves[name] if shared and name in shared.leaves else comps[name])]
        with no_grad(), quiet():
            out = plan.program.run(_env(plan, arrays), memo)
        return dict(zip(plan.outputs, _flatten(out), strict=True))
    leaves = [a for name, _ in plan.var_sizes or [] for a in
              (shared.leaves[name] if shared and name in shared.leaves else
               [Tensor._make(c).requires_grad_() for c in comps[name]])]
    with enable_grad(), quiet():
        outs = _flatten(plan.program.run(_env(plan, leaves), memo))
    result: dict[str, Any] = {name: raw(o) for name, o in zip(plan.outputs, outs, strict=True)}
    arrays = [c for cs in comps.values() for c in cs]
    dtype = arrays[0].dtype if arrays else np.dtype(np.float64)
    with batch_axes(max((c.ndim for c in arrays), default=0)), quiet():
        kernel = _KERNELS.get(plan.what) or EXTRA[plan.what].run
        values = kernel(plan, leaves, outs, dtype.type)
    result.update(zip(plan.columns()[len(plan.outputs):], values, strict=True))
    return result


class _One64(np.float64):
    """The seed 1.0 whose product with an array is that array: a sweep starting from it
    makes no copy of the first partial it meets (exp(u)·1 is exp(u))."""

    def __mul__(self, other: Any) -> Any:
        return other if isinstance(other, np.ndarray) else np.float64.__mul__(self, other)


class _One32(np.float32):
    __doc__ = _One64.__doc__

    def __mul__(self, other: Any) -> Any:
        return other if isinstance(other, np.ndarray) else np.float32.__mul__(self, other)


def _one(num: type) -> Any:
    return (_One32 if num is np.float32 else _One64)(1.0)


def _grad(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """∂f[i]/∂x[j], outputs slowest: one reverse sweep per output."""
    values: list[Any] = []
    for o in outs:
        if _live(o):
            values += [raw(g) for g in run_backward([o], [_one(num)], True, False, leaves)]
        else:
            values += [None] * len(leaves)
    if plan.norm:
        values.append(euclidean_norm(values))
    return values


def euclidean_norm(parts: list[Any]) -> Any:
    """√(Σ pᵢ²) of arrays (None = 0), without overflow or underflow in the squares
    (hypot), and nan where any part is nan."""
    total = None
    for p in parts:
        if p is None:
            continue
        total = np.abs(p) if total is None else np.hypot(total, p)
        if np.any(np.isnan(p)):
            total = np.where(np.isnan(p), np.nan, total)
    return total


def _vjp(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """vᵀJ: one reverse sweep seeded with vᵢ at output i."""
    roots = [(o, vi) for o, vi in zip(outs, plan.vector or [], strict=True)
             if _live(o) and vi != 0]
    if not roots:
        return [None] * len(leaves)
    # retain_graph: a grid's hoisted nodes are shared by every block
    got = run_backward([o for o, _ in roots], [num(vi) for _, vi in roots], True, False, leaves)
    return [raw(g) for g in got]


def _jvp(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """J·u: one forward tangent sweep from uⱼ at variable j."""
    live = [o for o in outs if _live(o)]
    seeds = [None if u == 0 else num(u) for u in plan.direction or []]
    got = iter(Linearized(leaves, live).jvp(seeds)) if live else iter(())
    return [raw(next(got)) if _live(o) else None for o in outs]


def _hessian(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """∂²f/∂a∂b = ∂(∂f/∂a)/∂b: the gradient recorded by one reverse sweep, then one
    reverse sweep of it per variable (reverse over reverse, as PyTorch's hessian)."""
    f, n = outs[0], len(leaves)
    if not _live(f):
        return [None] * (n * n)
    firsts = run_backward([f], [num(1.0)], True, True, leaves)
    values: list[Any] = []
    with reused_values():  # the sweeps recompute the same cos(x), sin(x): once each
        for g in firsts:
            if isinstance(g, Tensor) and g.requires_grad:
                values += [raw(h) for h in run_backward([g], [num(1.0)], True, False, leaves)]
            else:
                values += [None] * n
    return values


_KERNELS = {"grad": _grad, "jacobian": _grad, "vjp": _vjp, "jvp": _jvp, "hessian": _hessian}
