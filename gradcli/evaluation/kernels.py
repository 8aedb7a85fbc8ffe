"""Per-block derivative kernels: what each command computes on one block of points.

Every kernel runs the compiled program once and reuses that recorded forward pass for all
its sweeps. Forward sweeps start from a scalar tangent ``1.0`` on one input, so over a
grid a tangent keeps the small broadcast shape of its axis until it meets another
variable: the per-point derivatives come out at full grid shape without ever reducing
over a broadcast axis. Reverse sweeps are used for point sets when there are fewer
outputs than inputs (every input there has the full batch shape, so the seeds'
``backward(ones)`` gives per-point values).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.backward import run_backward
from ..engine.core import Tensor
from ..engine.forward import Linearized, graph_nodes
from ..engine.grad_mode import enable_grad, no_grad
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
    reverse: bool = False                        # reverse sweeps (point sets, m < n)
    var_sizes: list[tuple[str, int | None]] | None = None  # components per variable

    def sweeps(self) -> int:
        """How many passes over the recorded graph the kernel makes (its cost per op)."""
        m, n = len(self.outputs), len(self.inputs)
        if self.what in ("eval", "jvp"):
            return 1
        if self.what in ("grad", "vjp"):
            return 1 if self.reverse else n
        if self.what == "jacobian":
            return m if self.reverse else n
        return n + n * n  # hessian: n first-order sweeps, then n over their n-fold graph

    def columns(self) -> list[str]:
        """The result columns after the variables' own, in output order."""
        ins = [c for c, _, _ in self.inputs]
        if self.what == "eval":
            return list(self.outputs)
        if self.what == "grad":
            return ["f"] + [f"df/d{i}" for i in ins]
        if self.what == "jacobian":
            return self.outputs + [f"d{o}/d{i}" for o in self.outputs for i in ins]
        if self.what == "vjp":
            return self.outputs + [f"vjp/d{i}" for i in ins]
        if self.what == "jvp":
            return self.outputs + ["jvp" + o[1:] for o in self.outputs]
        return ["f"] + [f"d2f/d{a}d{b}" for a in ins for b in ins]


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
    with mode, np.errstate(all="ignore"):
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
    with enable_grad(), np.errstate(all="ignore"):
        outs = [o for o in _flatten(plan.program.run(_env(plan, leaves))) if _live(o)]
    made = [node.out_ref() for node in graph_nodes(outs)]
    return sum(1 for t in made if t is not None and int(np.size(t.arr)) >= size)


def _raw(v: Any) -> Any:
    return v.arr if isinstance(v, Tensor) else v


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
        with no_grad(), np.errstate(all="ignore"):
            out = plan.program.run(_env(plan, arrays), memo)
        return dict(zip(plan.outputs, _flatten(out), strict=True))
    leaves = [a for name, _ in plan.var_sizes or [] for a in
              (shared.leaves[name] if shared and name in shared.leaves else
               [Tensor._make(c).requires_grad_() for c in comps[name]])]
    with enable_grad(), np.errstate(all="ignore"):
        outs = _flatten(plan.program.run(_env(plan, leaves), memo))
    result: dict[str, Any] = {name: _raw(o) for name, o in zip(plan.outputs, outs, strict=True)}
    cols = plan.columns()[len(plan.outputs):]
    if plan.what == "hessian":
        values = _hessian(leaves, outs[0])
    elif plan.what == "jvp":
        values = _forward(leaves, outs, [[None if u == 0 else float(u) for u in plan.direction]])[0]
    elif plan.what == "vjp":
        values = _vjp(plan, leaves, outs)
    else:
        jac = _reverse_jacobian(leaves, outs) if plan.reverse else _forward_jacobian(leaves, outs)
        values = [jac[i][j] for i in range(len(outs)) for j in range(len(leaves))]
    result.update(zip(cols, values, strict=True))
    return result


def _onehots(n: int) -> list[list[Any]]:
    return [[1.0 if k == j else None for k in range(n)] for j in range(n)]


def _forward(leaves: list[Tensor], outs: list[Any], directions: list[list[Any]],
             create_graph: bool = False) -> list[list[Any]]:
    """Output tangents per direction (one sweep each over one recorded pass)."""
    live = [o for o in outs if _live(o)]
    lin = Linearized(leaves, live)
    result = []
    for d in directions:
        got = iter(lin.jvp(d, create_graph=create_graph)) if live else iter(())
        result.append([next(got) if _live(o) else None for o in outs])
    return result


def _forward_jacobian(leaves: list[Tensor], outs: list[Any]) -> list[list[Any]]:
    cols = _forward(leaves, outs, _onehots(len(leaves)))
    return [[_raw(cols[j][i]) for j in range(len(leaves))] for i in range(len(outs))]


def _reverse_jacobian(leaves: list[Tensor], outs: list[Any]) -> list[list[Any]]:
    rows = []
    for o in outs:
        if not _live(o):
            rows.append([None] * len(leaves))
            continue
        rows.append(run_backward([o], [np.ones_like(o.arr)], True, False, leaves))
    return rows


def _vjp(plan: Plan, leaves: list[Tensor], outs: list[Any]) -> list[Any]:
    v = plan.vector or []
    if plan.reverse:
        roots = [(o, vi) for o, vi in zip(outs, v, strict=True) if _live(o) and vi != 0]
        if not roots:
            return [None] * len(leaves)
        return run_backward([o for o, _ in roots], [np.full_like(o.arr, vi) for o, vi in roots],
                            False, False, leaves)
    jac = _forward_jacobian(leaves, outs)
    values = []
    for j in range(len(leaves)):
        terms = [vi * jac[i][j] for i, vi in enumerate(v) if vi != 0 and jac[i][j] is not None]
        values.append(sum(terms[1:], terms[0]) if terms else None)
    return values


def _hessian(leaves: list[Tensor], f: Any) -> list[Any]:
    """Forward-over-forward: first derivatives recorded as a graph, then linearized once."""
    n = len(leaves)
    if not _live(f):
        return [None] * (n * n)
    firsts = [col[0] for col in _forward(leaves, [f], _onehots(n), create_graph=True)]
    seconds = _forward(leaves, firsts, _onehots(n))      # seconds[b][a] = ∂²f/∂a∂b
    return [_raw(seconds[b][a]) for a in range(n) for b in range(n)]
