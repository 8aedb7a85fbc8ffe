"""Vector calculus and higher order: the kernels of div, curl, laplacian, hvp, diff, taylor.

Each command has one AD mode, whatever the binding (as every command, see ``kernels.py``):

* ``div``, ``curl``: reverse mode, one sweep per component (the entries ``jacobian`` gives);
* ``hvp``: forward over reverse (the gradient recorded, then one tangent sweep of it);
* ``laplacian``, ``diff``, ``taylor``: Taylor mode (``engine/taylor.py``), jets along the
  variables' directions; mixed partials from one multivariate jet, whose coefficients are
  homogeneous polynomials (``engine/homogeneous.py``). Their first order is forward mode's.

Which variable is which component (div, curl): the components pair with the input columns
in binding order (grid order, the order of a point's names, points-file column order; a
vector or matrix variable gives its components in turn, ``v[0]``, ``v[1]``, ``A[0][1]``);
``wrt=`` names them explicitly. The ``specify_*`` functions check a request and fill
``Plan.spec``; the computations are registered in ``builtin.py`` (the computation table).

A variable is one array (one leaf); an input column is one of its components. A forward
or Taylor seed for column k is a one-hot array on its variable's leaf (a number for a
scalar variable), a reverse sweep's result for it is the component's slice of the
variable's gradient. An output block is a scalar (a bracket literal's component) or one
array whose trailing axes are its components (``softmax(x)``, ``A @ x``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.engine.backward import run_backward
from gradcli.engine.core import raw
from gradcli.engine.forward import Linearized
from gradcli.engine.interpolate import graded
from gradcli.engine.taylor import Jets, MissingTaylorRule
from gradcli.engine.vector import curl_of, divergence_of
from gradcli.errors import EvaluationError, ref
from gradcli.plan.blocks import Block
from gradcli.plan.kernels import Plan, _join, _live, _one, _shaped
from gradcli.plan.kernels import grad as _grad
from gradcli.request.binding import count_text, wrt_names

__all__ = ["Spec", "MAX_ORDER", "input_columns"]

#: the highest order diff and taylor compute (factorials and the work stay sane below it)
MAX_ORDER = 100
#: a bound on a multivariate jet's cost: a product of two series of order K in n variables
#: multiplies C(2n+K, K) pairs of monomials' slices (order 20 in 3 variables: 230230,
#: 0.4 s at a point; order 30 in 3 variables: 1947792, 2 s); refused beyond
MAX_LATTICE_WORK = 2_000_000


@dataclass
class Spec:
    """What a calculus kernel needs: the input columns it works on (``pairs``: paired with
    the field's components, summed over, or a Taylor polynomial's variables), a diff's
    multi-index over them, and the order."""

    pairs: list[int]
    names: list[str]
    columns: list[Column] = field(default_factory=list)
    alpha: tuple[int, ...] = ()
    order: int = 0
    indices: list[tuple[int, ...]] = field(default_factory=list)


@dataclass(frozen=True)
class Column:
    """One scalar input column: its name (``x``, ``v[1]``, ``A[0][1]``), its variable's
    index in ``plan.variables`` and the component's index in the variable (() for a
    scalar)."""

    name: str
    variable: int
    index: tuple[int, ...]


def input_columns(plan: Plan) -> list[Column]:
    """The scalar components of the variables, in binding order."""
    return [Column(name, v, idx) for v, (var, shape) in enumerate(plan.variables)
            for name, idx in zip(Block.template([var, shape]).column_names(),
                                 np.ndindex(*shape), strict=True)]


def _output_components(plan: Plan) -> list[tuple[int, tuple[int, ...]]]:
    """(output block, component index) for every scalar component of the value."""
    return [(b, idx) for b, (_, shape) in enumerate(plan.program.outputs)
            for idx in np.ndindex(*shape)]


# --- requests -----------------------------------------------------------------------------
def _resolve(names: list[str], plan: Plan, expand: bool) -> list[int]:
    """Input column indices of ``names``: a scalar variable, a vector component ``x[1]``,
    or (``expand``) a whole vector or matrix variable, its components in turn."""
    inputs = input_columns(plan)
    columns = [c.name for c in inputs]
    variables = [plan.variables[c.variable][0] for c in inputs]
    out: list[int] = []
    for name in names:
        if name in columns:
            out.append(columns.index(name))
        elif name in variables and expand:
            out.extend(i for i, v in enumerate(variables) if v == name)
        elif name in variables:
            parts = ", ".join(c for c, v in zip(columns, variables, strict=True)
                              if v == name)
            raise EvaluationError(f"{ref('wrt', text=name)}: {name} is a vector; name one "
                                  f"component ({parts})")
        else:
            bound = ", ".join(columns) or "none"
            raise EvaluationError(f"{ref('wrt')} names '{name}', which is not a bound variable "
                                  f"(bound: {bound})")
    return out


def _order(order: Any, low: int, what: str) -> int:
    try:
        k = int(order)
        if k != float(order):
            raise ValueError
    except (TypeError, ValueError):
        raise EvaluationError(f"{what}: the order must be a whole number, got {order!r}") \
            from None
    if not low <= k <= MAX_ORDER:
        raise EvaluationError(f"{what}: the order must be between {low} and {MAX_ORDER}, "
                              f"got {k}")
    return k


def _pairing(what: str, plan: Plan, wrt: Any, inputs: list[Column],
             sizes: tuple[int, ...] | None = None) -> list[int]:
    m = math.prod(plan.program.shape)
    shape = plan.program.shape
    if len(shape) != 1:
        kind = "a scalar" if shape == () else f"an array of shape {shape}"
        raise EvaluationError(f"{what} needs a vector field \"[P, Q, ...]\", but this "
                              f"expression is {kind}")
    if sizes is not None and m not in sizes:
        raise EvaluationError(f"{what} is defined for fields of "
                              f"{' or '.join(map(str, sizes))} components; this one has {m}")
    pairs = _resolve(wrt_names(wrt), plan, True) if wrt is not None else \
        list(range(len(inputs)))
    if len(pairs) != m:
        given = f"{ref('wrt')} names" if wrt is not None else "the command line binds"
        names = ", ".join(inputs[i].name for i in pairs) or "none"
        first = ",".join(c.name for c in inputs[:m])
        hint = (ref("wrt", text=first, python=repr(first))
                if len(inputs) >= m else f"{m} variables")
        raise EvaluationError(
            f"{what}: the field has {m} components but {given} {len(pairs)} variables "
            f"({names}); components pair with variables in order, so name {m} of them, "
            f"e.g. {hint}")
    if len(set(pairs)) != len(pairs):
        raise EvaluationError(f"{what}: {ref('wrt')} names a variable twice")
    return pairs


def _inputs_spec(plan: Plan, pairs: list[int], **kw: Any) -> Spec:
    inputs = input_columns(plan)
    return Spec(pairs, [inputs[i].name for i in pairs], inputs, **kw)


def specify_field(what: str, sizes: tuple[int, ...] | None = None) -> Any:
    """div's and curl's check: a vector field (of ``sizes`` components, when given) whose
    components pair with variables."""
    def specify(plan: Plan, *, wrt: Any = None, order: Any = None) -> Spec:
        if order is not None:
            raise EvaluationError(f"{what} takes no order")
        return _inputs_spec(plan, _pairing(what, plan, wrt, input_columns(plan), sizes))
    return specify


def specify_hvp(plan: Plan, *, wrt: Any = None, order: Any = None) -> Spec:
    """hvp works on every input column (its direction names the variables)."""
    if wrt is not None or order is not None:
        raise EvaluationError(f"hvp takes a direction, not {ref('wrt')} or {ref('order')}")
    return _inputs_spec(plan, list(range(len(input_columns(plan)))))


def specify_laplacian(plan: Plan, *, wrt: Any = None, order: Any = None) -> Spec:
    """The columns the Laplacian sums over (default: every one)."""
    if order is not None:
        raise EvaluationError("laplacian takes no order (it is second order)")
    every = list(range(len(input_columns(plan))))
    pairs = _resolve(wrt_names(wrt), plan, True) if wrt is not None else every
    if not pairs:
        raise EvaluationError("laplacian needs at least one variable")
    if len(set(pairs)) != len(pairs):
        raise EvaluationError(f"laplacian: {ref('wrt')} names a variable twice")
    return _inputs_spec(plan, pairs)


def specify_taylor(plan: Plan, *, wrt: Any = None, order: Any = None) -> Spec:
    """The polynomial's variables, its order and its multi-indices."""
    k = _order(2 if order is None else order, 0, "taylor")
    every = list(range(len(input_columns(plan))))
    pairs = _resolve(wrt_names(wrt), plan, True) if wrt is not None else every
    if len(set(pairs)) != len(pairs):
        raise EvaluationError(f"taylor: {ref('wrt')} names a variable twice")
    _lattice_check(len(pairs), k, "taylor")
    return _inputs_spec(plan, pairs, order=k, indices=graded(len(pairs), k))


def specify_diff(plan: Plan, *, wrt: Any = None, order: Any = None) -> Spec:
    """The partial's columns and multi-index."""
    return _diff_spec(plan, wrt, order, input_columns(plan))


def _diff_spec(plan: Plan, wrt: Any, order: Any, inputs: list[Column]) -> Spec:
    if wrt is None:
        if len(inputs) != 1:
            bound = ", ".join(c.name for c in inputs) or "none"
            raise EvaluationError(
                f"diff needs {ref('wrt')}: which variables to differentiate by "
                f"(bound: {bound}), e.g. {ref('wrt', text='x', python=repr('x'))} "
                f"{ref('order', text='2', python='2')} or "
                f"{ref('wrt', text='x,y', python=repr('x,y'))}")
        wrt = inputs[0].name
    names = wrt_names(wrt)
    cols = _resolve(names, plan, False)
    if order is not None:
        k = _order(order, 1, "diff")
        if len(names) == 1:
            cols = cols * k
        elif k != len(names):
            listed = ",".join(names)
            raise EvaluationError(
                f"diff {ref('order', text=str(k), python=str(k))} with "
                f"{ref('wrt', text=listed, python=repr(listed))}: give one variable and an "
                f"order ({ref('wrt', text='x', python=repr('x'))} "
                f"{ref('order', text='3', python='3')}), or list every variable of the "
                f"partial ({ref('wrt', text='x,x,y', python=repr('x,x,y'))})")
    elif len(cols) > MAX_ORDER:
        raise EvaluationError(f"diff: the order must be between 1 and {MAX_ORDER}, "
                              f"got {len(cols)}")
    pairs = list(dict.fromkeys(cols))
    alpha = tuple(cols.count(j) for j in pairs)
    if len(pairs) > 1:
        _lattice_check(len(pairs), len(cols), "diff", alpha)
    return Spec(pairs, [inputs[j].name for j in pairs], inputs, alpha=alpha,
                order=len(cols))


def _pairs(n: int, order: int, alpha: tuple[int, ...] = ()) -> int:
    """The products of monomial slices in one product of two multivariate series: pairs
    (a, b) with |a + b| ≤ K, C(2n+K, K); for a diff's jet, which keeps only monomials
    below its α, pairs with a + b ≤ α, Π C(αᵢ+2, 2)."""
    if alpha:
        return math.prod(math.comb(a + 2, 2) for a in alpha)
    return math.comb(2 * n + order, order)


def _lattice_check(n: int, order: int, what: str, alpha: tuple[int, ...] = ()) -> None:
    """Refuse a mixed request whose multivariate jet would take minutes per operation."""
    work = _pairs(n, order, alpha)
    if n > 1 and work > MAX_LATTICE_WORK:
        raise EvaluationError(
            f"{what} of order {order} in {n} variables multiplies {count_text(work)} pairs "
            "of Taylor coefficients per product, too many to combine: lower the order or "
            f"use fewer variables ({ref('wrt')})")


# --- blocks, cost ------------------------------------------------------------------------
def _each_output(prefix: str, plan: Plan) -> list[Block]:
    """One block per output block, named ``prefix`` + the output's index text
    (``laplacian``, ``laplacian[0]``), of the output's component shape."""
    return [Block.template([prefix + name[1:], shape]) for name, shape in plan.program.outputs]


def blocks_div(plan: Plan, outs: list[Block]) -> list[Block]:
    return outs + [Block("div")]


def blocks_curl(plan: Plan, outs: list[Block]) -> list[Block]:
    sp = plan.spec
    return outs + ([Block("curl")] if len(sp.pairs) == 2 else
                   [Block(f"curl[{i}]") for i in range(3)])


def blocks_laplacian(plan: Plan, outs: list[Block]) -> list[Block]:
    return outs + _each_output("laplacian", plan)


def blocks_hvp(plan: Plan, outs: list[Block]) -> list[Block]:
    return outs + [Block.template(["hvp/d", v, s]) for v, s in plan.variables]


def blocks_diff(plan: Plan, outs: list[Block]) -> list[Block]:
    """d3f/dx2dy, d2f[1]/dxdy: one block per output block."""
    sp = plan.spec
    k = sum(sp.alpha)
    parts = "".join(f"d{n}{a if a > 1 else ''}" for n, a in zip(sp.names, sp.alpha,
                                                                   strict=True))
    return outs + [Block.template([f"d{k if k > 1 else ''}{name}", shape, f"/{parts}"])
                   for name, shape in plan.program.outputs]


def blocks_taylor(plan: Plan, outs: list[Block]) -> list[Block]:
    m = (len(plan.spec.indices),)
    return outs + [Block("coefficient", m), Block("derivative", m)]


def _jet_cost(order: int) -> int:
    return (order + 1) * (order + 2) // 2  # the Cauchy products of one jet, in sweeps


def sweeps_field(plan: Plan) -> int:
    """div, curl: one reverse sweep per output component."""
    return len(_output_components(plan))


def sweeps_laplacian(plan: Plan) -> int:
    return len(plan.spec.pairs) * _jet_cost(2)


def sweeps_diff(plan: Plan) -> int:
    """One jet; in n > 1 variables its products multiply pairs of monomials' slices."""
    sp = plan.spec
    n = max(1, len(sp.pairs))
    return _jet_cost(sp.order) if n == 1 else _pairs(n, sp.order, sp.alpha)


def sweeps_taylor(plan: Plan) -> int:
    """One multivariate jet, and one jet per variable for the pure coefficients."""
    sp = plan.spec
    n = max(1, len(sp.pairs))
    if n == 1:
        return _jet_cost(sp.order)
    return _pairs(n, sp.order) + n * _jet_cost(sp.order)


# --- kernels ------------------------------------------------------------------------------
def _pick(value: Any, index: tuple[int, ...]) -> Any:
    """A component's slice of an array whose trailing axes are components (None = 0)."""
    return value if value is None or not index else np.asarray(value)[(Ellipsis, *index)]


def _jacobian(plan: Plan, targets: list[Any], outs: list[Any], num: type
              ) -> Any:
    """∂F[i]/∂(column j) as a function of (i, j), from ``jacobian``'s kernel: one reverse
    sweep per output component, over every variable."""
    blocks = _grad(plan, targets, outs, num)
    comps, cols, n = _output_components(plan), plan.spec.columns, len(targets)

    def entry(i: int, j: int) -> Any:
        b, oi = comps[i]
        col = cols[plan.spec.pairs[j]]
        return _pick(blocks[b * n + col.variable], oi + col.index)

    return entry


def div(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    return [divergence_of(_jacobian(plan, targets, outs, num), len(plan.spec.pairs))]


def curl(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    return [None if c is None else raw(c)
            for c in curl_of(_jacobian(plan, targets, outs, num), len(plan.spec.pairs))]


def hvp(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    """H·u, forward over reverse: the gradient recorded by one reverse sweep, then one
    tangent sweep of it from u (``torch.func.hvp``'s order)."""
    values: list[Any] = [None] * len(targets)
    if not _live(outs[0]):
        return values
    live_leaves = [t for t in targets if _live(t)]
    got = iter(run_backward([outs[0]], [num(1.0)], True, True, live_leaves) or [])
    firsts = [next(got) if _live(t) else None for t in targets]
    live = [(i, g) for i, g in enumerate(firsts) if _live(g)]
    seeds = []
    for (name, shape), leaf in zip(plan.variables, targets, strict=True):
        u = (plan.direction or {}).get(name)
        if u is None or not np.any(np.asarray(u) != 0):
            seeds.append(None)
        else:
            seeds.append(num(u) if shape == () else _shaped(np.asarray(u, num), leaf, shape))
    if live and any(s is not None for s in seeds):
        tangents = Linearized(targets, [g for _, g in live]).jvp(seeds)
        for (i, _), t in zip(live, tangents, strict=True):
            values[i] = raw(t)
    return values


def _seeds(plan: Plan, targets: list[Any], direction: Sequence[int], num: type
           ) -> list[Any]:
    """A jet's direction over the columns ``plan.spec.pairs`` as one seed per variable:
    a number for a scalar variable (1 as ``_one``), an array of its component shape with
    the direction's entries (unit axes in front, as many as the leaf's batch axes)."""
    sp = plan.spec
    seeds: list[Any] = [None] * len(targets)
    for j, s in zip(sp.pairs, direction, strict=True):
        if not s:
            continue
        col = sp.columns[j]
        shape = plan.variables[col.variable][1]
        if not shape:
            seeds[col.variable] = _one(num) if s == 1 else num(s)
            continue
        if seeds[col.variable] is None:
            seeds[col.variable] = np.zeros(shape, dtype=num)
        seeds[col.variable][col.index] = s
    return [_shaped(s, t, plan.variables[v][1]) if isinstance(s, np.ndarray) else s
            for v, (s, t) in enumerate(zip(seeds, targets, strict=True))]


def _sweep(jets: Jets, seeds: list[Any], order: int, what: str, top_only: bool = True
           ) -> list[Any]:
    try:
        return jets.sweep(seeds, order, top_only)
    except MissingTaylorRule as exc:
        raise EvaluationError(f"{what}: {exc}") from None


def _add(a: Any, b: Any) -> Any:
    if b is None:
        return a
    return b if a is None else a + b


def laplacian(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    """Σ ∂²f/∂xᵢ² = Σ 2·y₂ of the order-2 jets along each column (per output block, whole
    arrays: an array output's components at once)."""
    jets = Jets(targets, outs)
    total: list[Any] = [None] * len(outs)
    for j in plan.spec.pairs:
        got = _sweep(jets, _seeds(plan, targets, [1 if p == j else 0 for p in plan.spec.pairs],
                                  num), 2, "laplacian")
        for i, series in enumerate(got):
            if series is not None:
                total[i] = _add(total[i], series[2])
    return [None if t is None else 2.0 * t for t in total]


def _coefficient(series: list[Any] | None, k: int) -> Any:
    return None if series is None else series[k]


def _multivariate(plan: Plan, jets: Jets, targets: list[Any], num: type, what: str,
                  top_only: bool, cap: tuple[int, ...] | None = None) -> list[Any]:
    """The multivariate jet over the columns ``plan.spec.pairs`` (one variable t_m per
    column): each output's series of homogeneous coefficients (``Jets.multivariate``)."""
    n, order = len(plan.spec.pairs), plan.spec.order
    units = [_seeds(plan, targets, [1 if p == m else 0 for p in range(n)], num)
             for m in range(n)]
    try:
        return jets.multivariate(units, order, top_only, cap)
    except MissingTaylorRule as exc:
        raise EvaluationError(f"{what}: {exc}") from None


def _monomial(series: list[Any] | None, alpha: tuple[int, ...]) -> Any:
    """∂^α f / α! from a multivariate series (None = 0); + 0.0: a coefficient that is -0.0
    is written 0 (its sign means nothing)."""
    c = None if series is None else series[sum(alpha)]
    return None if c is None else c.monomial(alpha) + 0.0


def diff(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    """One jet of order k along x for ∂ᵏf/∂xᵏ (k!·y_k); for a mixed partial, one
    multivariate jet over its variables, the coefficient of its monomial times α!."""
    sp, k = plan.spec, plan.spec.order
    jets = Jets(targets, outs)
    scale = float(math.prod(math.factorial(a) for a in sp.alpha))
    if len(sp.pairs) == 1:
        got = _sweep(jets, _seeds(plan, targets, (1,), num), k, "diff")
        total = [_coefficient(series, k) for series in got]
    else:
        got = _multivariate(plan, jets, targets, num, "diff", True, sp.alpha)
        total = [_monomial(series, sp.alpha) for series in got]
    return [None if t is None else scale * t for t in total]


def taylor(plan: Plan, targets: list[Any], outs: list[Any], num: type) -> list[Any]:
    """Every ∂^α f / α! with |α| ≤ K: one jet of order K (one variable), or one
    multivariate jet whose coefficient of order p is the homogeneous polynomial
    Σ_{|α|=p} (∂^α f / α!)·t^α (``engine/homogeneous.py``)."""
    sp, order = plan.spec, plan.spec.order
    n = len(sp.pairs)
    jets = Jets(targets, outs)
    coefficients: list[Any] = [raw(outs[0])]
    if n == 1:
        series = _sweep(jets, _seeds(plan, targets, (1,), num), order, "taylor", False)[0]
        coefficients += [_coefficient(series, p) for p in range(1, order + 1)]
    elif n > 1:
        series = _multivariate(plan, jets, targets, num, "taylor", False)[0]
        coefficients += [_monomial(series, alpha) for alpha in sp.indices[1:]]
        # the pure coefficients ∂ᵏf/∂xᵢᵏ/k! from a jet along xᵢ alone, as diff computes
        # them: the other variables do not move there, so where a partial in one of them
        # is not finite (asin(x) + y at x = 1) it does not reach xᵢ's (0·inf in a
        # monomial that does not involve them)
        where = {alpha: i for i, alpha in enumerate(sp.indices)}
        for i in range(n):
            unit = [1 if m == i else 0 for m in range(n)]
            pure = _sweep(jets, _seeds(plan, targets, unit, num), order, "taylor", False)[0]
            for p in range(1, order + 1):
                c = _coefficient(pure, p)
                coefficients[where[tuple(p * u for u in unit)]] = None if c is None else c + 0.0
    factorials = [float(math.prod(math.factorial(a) for a in alpha)) for alpha in sp.indices]
    derivatives = [None if c is None else (c if f == 1.0 else f * c)
                   for c, f in zip(coefficients, factorials, strict=True)]
    m = (len(coefficients),)
    return [_join(coefficients, m, (), num), _join(derivatives, m, (), num)]
