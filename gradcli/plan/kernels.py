"""Per-block derivative kernels: what each command computes on one block of points.

The derivative mode follows from the request, never from how the points were given, so
``at``, ``grid`` (any block size, hoisted or not) and ``points`` run the very same
sweeps and give the same value at the same point:

* ``grad``, ``jacobian``, ``vjp``: reverse mode, one sweep per output component
  (``vjp``: one sweep);
* ``hessian``: reverse over reverse (the gradient recorded, then one sweep per component
  of it), as ``torch.autograd.functional.hessian``;
* ``jvp``: forward mode, one tangent sweep.

Sweeps run inside ``batch_axes``: the block's axes are independent points, so a reverse
sweep never sums a cotangent over them. The cotangent reaching a grid variable's axis
(shape (n, 1)) is then the block-shaped per-point derivative. Seeds are the scalar 1.0
(or vᵢ, uⱼ), so cotangents and tangents stay as small as the values they meet; an array
output's seed is a one-hot array of its component shape. A vector or matrix variable is
one leaf, so one sweep gives its whole derivative block (``df/dx`` of a 10⁶-vector).

What a computation produces is declared once, in its record of the computation table
(``computations.py``, built-ins in ``builtin.py``): its result blocks and its kernel, which
returns one value per derivative block, in that order.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.engine.backward import run_backward
from gradcli.engine.core import Tensor, raw
from gradcli.engine.forward import Linearized, graph_nodes
from gradcli.engine.grad_mode import batch_axes, enable_grad, no_grad, quiet, reused_values
from gradcli.lang.compile import Program
from gradcli.plan.blocks import Block

Shape = tuple[int, ...]


@dataclass
class Plan:
    """What to compute, and the blocks of the result.

    ``variables`` are the bound variables and their component shapes, in binding order;
    ``wrt`` the variables and steps derivatives are taken by (default: the variables).
    ``params`` holds the computation's parameters as their checks made them (the
    parameter table, ``parameters.py``): ``vector`` (vjp) v, one array per output block;
    ``direction`` (jvp) u, one array per variable (absent: zero); ``norm`` (grad) adds
    ``|grad f|``. ``spec`` is what the computation's ``specify`` found
    (``calculus.Spec``).
    """

    program: Program
    what: str
    variables: list[tuple[str, Shape]]
    wrt: list[tuple[str, Shape]] | None = None
    params: dict[str, Any] = field(default_factory=dict)
    spec: Any = None
    #: the record of the computation table (``computations.computation(what)``), given by
    #: whoever makes the plan, so the kernels never look it up
    record: Any = field(default=None, repr=False, compare=False)

    @property
    def vector(self) -> list[np.ndarray] | None:
        """vjp's v, one array per output block (``params['vector']``)."""
        return self.params.get("vector")

    @property
    def direction(self) -> dict[str, np.ndarray] | None:
        """jvp's and hvp's u, one array per variable (``params['direction']``)."""
        return self.params.get("direction")

    @property
    def norm(self) -> bool:
        """grad's ``norm``: add ``|grad f|``."""
        return bool(self.params.get("norm"))

    @property
    def targets(self) -> list[tuple[str, Shape]]:
        """What the derivatives are taken by: ``wrt``, else every variable."""
        return self.variables if self.wrt is None else self.wrt

    @property
    def outputs(self) -> list[str]:
        """The names of the output blocks: ``f``, or ``f[0]``, ``f[1]``... for a literal."""
        return [name for name, _ in self.program.outputs]

    @property
    def computation(self) -> Any:
        """This plan's record of the computation table."""
        return self.record

    def blocks(self) -> list[Block]:
        """The result blocks: the outputs, then the derivative blocks the kernel returns."""
        outs = [Block.template([name, shape]) for name, shape in self.program.outputs]
        return self.computation.blocks(self, outs)

    def order(self) -> list[tuple[int, int]] | None:
        """The column order as (block, component) pairs when it is not block by block."""
        order = self.computation.order
        return None if order is None else order(self)

    def sweeps(self) -> int:
        """How many passes over the recorded graph the kernel makes (its cost per op)."""
        return self.computation.sweeps(self)

    def columns(self) -> list[str]:
        """The scalar result columns, in column order (one name per component: use the
        blocks for long vectors)."""
        blocks = self.blocks()
        names = [b.column_names() for b in blocks]
        order = self.order() or [(i, k) for i, b in enumerate(blocks) for k in range(b.size)]
        return [names[i][k] for i, k in order]


def _per_target(prefix: str, plan: Plan) -> list[Block]:
    return [Block.template([prefix, v, s]) for v, s in plan.targets]


def blocks_eval(plan: Plan, outs: list[Block]) -> list[Block]:
    return outs


def blocks_grad(plan: Plan, outs: list[Block]) -> list[Block]:
    return [Block("f"), *_per_target("df/d", plan), *([Block("|grad f|")] if plan.norm else [])]


def blocks_jacobian(plan: Plan, outs: list[Block]) -> list[Block]:
    return outs + [Block.template(["d", o, so, "/d", v, sv])
                   for o, so in plan.program.outputs for v, sv in plan.targets]


def blocks_vjp(plan: Plan, outs: list[Block]) -> list[Block]:
    return outs + _per_target("vjp/d", plan)


def blocks_jvp(plan: Plan, outs: list[Block]) -> list[Block]:
    return outs + [Block.template(["jvp" + o[1:], so]) for o, so in plan.program.outputs]


def blocks_hessian(plan: Plan, outs: list[Block]) -> list[Block]:
    return [Block("f"), *[Block.template(["d2f/d", a, sa, "d", b, sb])
                          for a, sa in plan.targets for b, sb in plan.targets]]


def order_hessian(plan: Plan) -> list[tuple[int, int]]:
    """A Hessian's columns run over b for each a (``d2f/dx[0]dx[..]``, ``d2f/dx[0]dy``)."""
    sizes = [math.prod(s) for _, s in plan.targets]
    order = [(0, 0)]
    for a, na in enumerate(sizes):
        for i in range(na):
            order += [(1 + a * len(sizes) + b, i * nb + j)
                      for b, nb in enumerate(sizes) for j in range(nb)]
    return order


def sweeps_jacobian(plan: Plan) -> int:
    """One reverse sweep per output component."""
    return sum(math.prod(s) for _, s in plan.program.outputs)


def sweeps_hessian(plan: Plan) -> int:
    """One sweep records the gradient, one per component of it."""
    return 1 + sum(math.prod(s) for _, s in plan.targets)


def _leaves(plan: Plan, values: dict[str, np.ndarray], recording: bool,
            shared: Hoist | None = None) -> dict[str, Any]:
    """Each variable's value for a run: a leaf tensor when recording."""
    out = {}
    for name, _ in plan.variables:
        if shared is not None and name in shared.leaves:
            out[name] = shared.leaves[name]
        else:
            out[name] = Tensor._make(values[name]).requires_grad_() if recording else \
                values[name]
    return out


@dataclass
class Hoist:
    """Work shared by every block of a grid: the values (and, being recorded, the tangents)
    of everything that does not depend on the variable whose axis the blocks cut."""

    blocked: str
    leaves: dict[str, Any]
    memo: dict[int, Any]


def hoist(plan: Plan, values: dict[str, np.ndarray], blocked: str) -> Hoist:
    """Compute the block-independent steps once (the y-only part of sin(x)*cos(y))."""
    recording = plan.computation.records
    leaves = {name: leaf for name, leaf in _leaves(plan, values, recording).items()
              if name != blocked}
    mode = enable_grad() if recording else no_grad()
    with mode, quiet():
        memo = plan.program.run_without(leaves, blocked)
    return Hoist(blocked, leaves, memo)


def full_size_ops(plan: Plan, values: dict[str, np.ndarray], size: int) -> int:
    """How many recorded operations of one block produce an array of ``size`` elements (the
    block's size).

    Run on a probe block (two rows of a grid, so work on the other axes alone stays
    smaller than the block): when this is no more than the number of
    outputs, every full-size array a block makes is an output (sin(x)*cos(y): the product),
    so the whole grid can be one block whose arrays become the outputs without a copy.
    """
    env = _leaves(plan, values, True)
    with enable_grad(), quiet():
        outs = [o for o in plan.program.flat(plan.program.run(env)) if _live(o)]
    made = [node.out_ref() for node in graph_nodes(outs)]
    return sum(1 for t in made if t is not None and int(np.size(t.arr)) >= size)


def _live(v: Any) -> bool:
    return isinstance(v, Tensor) and v.requires_grad


def compute_block(plan: Plan, values: dict[str, np.ndarray],
                  shared: Hoist | None = None,
                  part: tuple[int, int, int] | None = None) -> list[Any]:
    """Evaluate one block: one value per result block (``plan.blocks()``), each an array
    broadcastable to the block's rows and the block's component shape, a scalar, or None
    for an identically zero derivative. ``shared`` supplies the hoisted work of a grid."""
    memo = shared.memo if shared is not None else None
    program = plan.program
    computation = plan.computation
    recording = computation.records
    env = _leaves(plan, values, recording, shared)
    with (enable_grad() if recording else no_grad()), quiet():
        regs = program.run_all(env, memo)
    outs = program.flat(program.value(regs, program.result))
    result: list[Any] = [raw(o) for o in outs]
    if not recording:
        return result
    targets = [env[name] if name in env else program.value(regs, program.named[name])
               for name, _ in plan.targets]
    batch = next((np.ndim(values[n]) - len(s) for n, s in plan.variables), 0)
    dtype = next((v.dtype for v in values.values()), np.dtype(np.float64))
    with batch_axes(batch), quiet():
        if part is not None:  # a Hessian by rows (hessian_part)
            return result + hessian(plan, targets, outs, dtype.type, part)
        result += computation.kernel(plan, targets, outs, dtype.type)
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


def _shaped(seed: np.ndarray, like: Any, shape: Shape) -> np.ndarray:
    """A seed of component ``shape`` with unit axes in front, as many as ``like`` has."""
    return seed.reshape((1,) * (np.ndim(raw(like)) - len(shape)) + shape)


def _seeds(out: Any, shape: Shape, num: type, first: Any) -> list[Any]:
    """One seed per component of an output of component ``shape``: ``first`` (the scalar
    1) for a scalar, else one-hot arrays, as large as the output (broadcast views), so
    that every cotangent of the sweep has the batch's extent along its leading axes."""
    return list(_seed_iter(out, shape, num, first))


def _seed_iter(out: Any, shape: Shape, num: type, first: Any, start: int = 0,
               stop: int | None = None) -> Iterator[Any]:
    """``_seeds`` one at a time (components ``start:stop``): a Hessian of an n-vector needs
    n one-hot seeds, and an identity of n² entries (800 MB at n = 10⁴) was made for them."""
    if shape == ():
        yield first
        return
    size = math.prod(shape)
    for k in range(start, size if stop is None else stop):
        hot = np.zeros(size, dtype=num)
        hot[k] = 1
        yield np.broadcast_to(_shaped(hot, out, shape), np.shape(raw(out)))


class _Joiner:
    """``_join`` filled one component at a time, so a block's per-component results are
    never all held beside the block (a Hessian's sweeps were held whole, then copied)."""

    def __init__(self, lead: Shape, inner: Shape, num: type) -> None:
        self.lead, self.inner, self.num = lead, inner, num
        self.size = math.prod(lead)
        self.first: Any = None
        self.out: np.ndarray | None = None
        self.batch: Shape = ()

    def put(self, k: int, part: Any) -> None:
        if self.lead == ():
            self.first = part
            return
        if part is None:
            return
        p = np.asarray(part)
        full = np.broadcast_shapes(p.shape, self.batch + self.inner)
        batch = full[:len(full) - len(self.inner)]
        if self.out is None or batch != self.batch:
            grown = np.zeros(batch + (self.size,) + self.inner, dtype=self.num)
            if self.out is not None:
                grown[...] = self.out
            self.out, self.batch = grown, batch
        self.out[(Ellipsis, k, *(slice(None),) * len(self.inner))] = p

    def result(self) -> Any:
        if self.lead == ():
            return self.first
        if self.out is None:
            return None
        return self.out.reshape(self.batch + self.lead + self.inner)


def _sweep(outs: list[Any], seeds: list[Any], targets: list[Any],
           create_graph: bool = False) -> list[Any]:
    """One reverse sweep from ``outs`` (seeded) to each target (None where unreached)."""
    live = [t for t in targets if _live(t)]
    if not live:
        return [None] * len(targets)
    got = iter(run_backward(outs, seeds, True, create_graph, live) or [])
    return [next(got) if _live(t) else None for t in targets]


def _join(parts: list[Any], lead: Shape, inner: Shape, num: type) -> Any:
    """One block from per-component results: ``parts[k]`` is the derivative for component
    k of ``lead`` (broadcastable to batch + ``inner``) or None; the block has ``lead`` then
    ``inner`` after the batch axes."""
    if lead == ():
        return parts[0]
    given = [np.asarray(p) for p in parts if p is not None]
    if not given:
        return None
    full = np.broadcast_shapes(*(p.shape for p in given), inner)
    batch = full[:len(full) - len(inner)]
    out = np.zeros(batch + (len(parts),) + inner, dtype=num)
    tail = (slice(None),) * len(inner)
    for k, p in enumerate(parts):
        if p is not None:
            out[(Ellipsis, k, *tail)] = p
    return out.reshape(batch + lead + inner)


def grad(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    """∂f[i]/∂x, outputs slowest: one reverse sweep per output component."""
    values: list[Any] = []
    shapes = [s for _, s in plan.targets]
    for o, (_, shape) in zip(outs, plan.program.outputs, strict=True):
        if not _live(o):
            values += [None] * len(targets)
            continue
        joins = [_Joiner(shape, inner, num) for inner in shapes]
        for k, seed in enumerate(_seed_iter(o, shape, num, _one(num))):
            swept = _sweep([o], [seed], targets)
            for t, join in enumerate(joins):
                join.put(k, raw(swept[t]))
        values += [join.result() for join in joins]
    if plan.norm:
        values.append(euclidean_norm([(v, len(s)) for v, s in zip(values, shapes, strict=True)]))
    return values


def euclidean_norm(parts: list[tuple[Any, int]]) -> Any:
    """√(Σ p²) over every component of the arrays ``parts`` (each with its number of
    trailing component axes; None = 0), without overflow or underflow in the squares
    (hypot), and nan where any component is nan."""
    total = None
    for p, axes in parts:
        if p is None:
            continue
        p = np.asarray(p)
        if axes:
            flat = p.reshape(p.shape[:p.ndim - axes] + (-1,))
            nan = np.isnan(flat).any(axis=-1)
            p = np.where(nan, np.nan, np.hypot.reduce(flat, axis=-1))
        total = np.abs(p) if total is None else np.hypot(total, p)
        if np.any(np.isnan(p)):
            total = np.where(np.isnan(p), np.nan, total)
    return total


def vjp(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    """vᵀJ: one reverse sweep seeded with v.

    A zero in v is seeded like any other number, as torch's ``backward(gradient=v)`` and
    JAX's ``vjp`` do: 0·∞ in vᵀJ is nan, so an infinite partial is never hidden."""
    roots = []
    for o, v, (_, shape) in zip(outs, plan.vector or [], plan.program.outputs, strict=True):
        if _live(o):
            roots.append((o, num(v) if shape == () else _shaped(np.asarray(v, num), o, shape)))
    if not roots:
        return [None] * len(targets)
    # retain_graph (in _sweep): a grid's hoisted nodes are shared by every block
    return [raw(g) for g in _sweep([o for o, _ in roots], [s for _, s in roots], targets)]


def jvp(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    """J·u: one forward tangent sweep from u.

    Every variable carries its tangent, 0 where u has none, as JAX's ``jvp`` and
    ``torch.func.jvp`` take one per primal: 0·∞ in J·u is nan, never a hidden term."""
    live = [o for o in outs if _live(o)]
    seeds = []
    for (name, shape), leaf in zip(plan.variables, targets, strict=True):
        u = (plan.direction or {}).get(name)
        if u is None:
            seeds.append(num(0.0) if shape == () else _shaped(np.zeros(shape, num), leaf, shape))
        else:
            seeds.append(num(u) if shape == () else _shaped(np.asarray(u, num), leaf, shape))
    got = iter(Linearized(targets, live).jvp(seeds)) if live else iter(())
    return [raw(next(got)) if _live(o) else None for o in outs]


def hessian(plan: Plan, targets: list[Any], outs: list[Any], num: type,
            part: tuple[int, int, int] | None = None) -> list[Any]:
    """∂²f/∂a∂b = ∂(∂f/∂a)/∂b: the gradient recorded by one reverse sweep, then one
    reverse sweep of it per component (reverse over reverse, as PyTorch's hessian).

    ``part = (a, i0, i1)``: only the rows i0:i1 (flat components of target a) of the
    blocks (a, b) for every b, each of shape batch + (i1 − i0,) + b's shape."""
    f, n = outs[0], len(targets)
    if not _live(f):
        return [None] * (n if part is not None else n * n)
    firsts = _sweep([f], [num(1.0)], targets, create_graph=True)
    values: list[Any] = []
    shapes = [s for _, s in plan.targets]
    with reused_values():  # the sweeps recompute the same cos(x), sin(x): once each
        for a, (g, sa) in enumerate(zip(firsts, shapes, strict=True)):
            if part is not None and a != part[0]:
                continue
            if not _live(g):
                values += [None] * n
                continue
            lead, first, stop = sa, 0, math.prod(sa)
            if part is not None:
                lead, first, stop = (part[2] - part[1],), part[1], part[2]
            joins = [_Joiner(lead, sb, num) for sb in shapes]
            for k, seed in enumerate(_seed_iter(g, sa, num, num(1.0), first, stop)):
                swept = _sweep([g], [seed], targets)
                for b, join in enumerate(joins):
                    join.put(k, raw(swept[b]))
            values += [join.result() for join in joins]
    return values


def peak_bytes(plan: Plan, values: dict[str, np.ndarray]) -> int:
    """The most memory one block's computation holds at once, in bytes: the block kernel
    run on ``values`` (a small probe block) with allocations traced. The blocks of a run
    are sized from the difference between two probes (``blocks.rows_per_block``), so the
    per-row cost counts every recorded operation, every sweep and the outputs, whatever
    the expression."""
    import tracemalloc

    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = compute_block(plan, values)
        peak = tracemalloc.get_traced_memory()[1]
        del out
    finally:
        if started:
            tracemalloc.stop()
    return max(0, peak - before)


def rows_per_block(plan: Any, binding: Any, budget: int, threads: int, window: int = 0,
                   kept: int = 0, most_points: int = 1 << 18) -> int:
    """The rows of the batch's first axis in each block, so that a run stays within
    ``budget`` bytes of working memory: ``threads`` blocks being computed at once, each
    holding what its recorded operations and sweeps make, plus ``window`` finished blocks
    waiting to be written, less ``kept`` bytes of results held in memory whole.

    The cost of a point is measured, not guessed: the block kernel runs on small probe
    blocks (1 and 2 points, then 64 and 256 when a point is cheap) with allocations
    traced, and the difference between two probes is the cost of the points added, so
    it counts every recorded operation, every sweep and the outputs, whatever the
    expression and the values per point. At most ``most_points`` points per block
    (blocks small enough for the caches), at least one row.
    """

    shape = binding.batch_shape
    if not shape:
        return 1
    per_row = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
    cap = max(1, most_points // max(per_row, 1))
    if shape[0] == 1:  # one row: nothing to cut
        return 1
    if min(shape[0] * per_row, most_points) * _bound_per_point(plan) * max(threads, 1) \
            <= budget // 4:
        return cap  # far within the budget even at a generous bound: no probe needed

    def probe(points: int) -> tuple[int, int]:
        """The peak bytes of a block of about ``points`` points, and its point count."""
        rows = min(shape[0], points)
        across = min(shape[1], -(-points // rows)) if len(shape) > 1 else 1
        cut = [rows] + ([across] + [1] * (len(shape) - 2) if len(shape) > 1 else [])
        values = {}
        for name, v in binding.values.items():
            index = tuple(slice(0, n) if axis < np.ndim(v) and np.shape(v)[axis] != 1
                          else slice(None) for axis, n in enumerate(cut))
            values[name] = v[index] if np.ndim(v) else v
        return peak_bytes(plan, values), rows * across

    def slope(a: tuple[int, int], b: tuple[int, int]) -> float:
        if b[1] > a[1]:
            return max(b[0] - a[0], 0) / (b[1] - a[1])
        return b[0] / max(b[1], 1)

    one = probe(1)
    if shape[0] * per_row <= 256:  # a small batch: one point's whole cost, an upper bound
        per_point = one[0] / max(one[1], 1)
    else:
        per_point = slope(one, probe(2))
    if shape[0] * per_row > 256 and per_point * 256 < budget / 16:  # cheap: larger probes
        per_point = max(per_point, slope(probe(64), probe(256)))
    if per_point <= 0:
        # A point always costs something (its outputs at least), so no growth means a
        # smaller probe was inflated: tracemalloc counts every thread's allocations, and a
        # Dask client's event loop allocates beside the probes. Probe once more; if it
        # still shows none, the larger probe's whole cost per point (an upper bound).
        big = probe(256)
        per_point = slope(probe(64), big) or big[0] / max(big[1], 1)
    out_row = _result_bytes(plan, binding) * per_row
    row_bytes = per_point * per_row
    cost = max(threads, 1) * (row_bytes + out_row) + window * out_row
    rows = int(max(budget - kept, 0) // cost) if cost > 0 else cap
    return max(1, min(rows, cap))


def _bound_per_point(plan: Any) -> int:
    """A generous bound on a point's working bytes, from the program alone: every recorded
    operation and its partials on every sweep, each as large as the square of all the
    variables' and outputs' components (so a small run needs no probe)."""
    values = sum(math.prod(s) for _, s in plan.variables) + \
        sum(math.prod(s) for _, s in plan.program.outputs)
    ops = max(plan.program.op_count, len(plan.program.steps), 1)
    return ops * max(values, 1) ** 2 * 8 * 2 * (plan.sweeps() + 1)


def _result_bytes(plan: Any, binding: Any) -> int:
    """Bytes of one point's results (every result block's components)."""
    itemsize = next((np.asarray(v).dtype.itemsize for v in binding.values.values()), 8)
    return sum(b.size for b in plan.blocks()) * max(itemsize, 8)
