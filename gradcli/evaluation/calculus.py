"""Vector calculus and higher order: the kernels of div, curl, laplacian, hvp, diff, taylor.

Each command has one AD mode, whatever the binding (as every command, see ``kernels.py``):

* ``div``, ``curl``: reverse mode, one sweep per component (the entries ``jacobian`` gives);
* ``hvp``: forward over reverse (the gradient recorded, then one tangent sweep of it);
* ``laplacian``, ``diff``, ``taylor``: Taylor mode (``engine/taylor.py``), jets along the
  variables' directions; mixed partials from jets along several directions
  (``engine/interpolate.py``). Their first order is forward mode's.

Which variable is which component (div, curl): the components pair with the input columns
in binding order (grid order, ``--at`` order, points-file column order; a vector variable
gives its components in turn); ``wrt=`` names them explicitly. ``specify`` checks a request
and fills ``Plan.spec``; the commands register in ``kernels.EXTRA``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine.core import Tensor, raw
from ..engine.forward import Linearized
from ..engine.interpolate import directions, graded, simplex, weights
from ..engine.taylor import Jets, MissingTaylorRule
from ..engine.vector import curl, divergence
from .binding import EvaluationError, count_text
from .blocks import Block
from .kernels import EXTRA, Kernel, Plan, _live, _one

__all__ = ["Spec", "specify", "COMMANDS", "MAX_ORDER", "derivative_name"]

#: the highest order diff and taylor compute (factorials and the work stay sane below it)
MAX_ORDER = 100
#: a bound on the exact interpolation weights' cost, C(n+K-1, K)²·K·n integer products
#: for n variables and order K: about 5 s (order 12 in 4 variables), refused beyond
MAX_LATTICE_WORK = 10_000_000
COMMANDS = ("div", "curl", "laplacian", "hvp", "diff", "taylor")


@dataclass
class Spec:
    """What a calculus kernel needs: the input columns it works on (``pairs``: paired with
    the field's components, summed over, or a Taylor polynomial's variables), a diff's
    multi-index over them, and the order."""

    pairs: list[int]
    names: list[str]
    alpha: tuple[int, ...] = ()
    order: int = 0
    indices: list[tuple[int, ...]] = field(default_factory=list)


# --- requests -----------------------------------------------------------------------------
def _wrt_list(wrt: Any) -> list[str]:
    if isinstance(wrt, str):
        items = [w.strip() for w in wrt.split(",")]
    else:
        items = [str(w).strip() for w in wrt]
    if not items or any(not w for w in items):
        raise EvaluationError(f"--wrt '{wrt if isinstance(wrt, str) else ','.join(items)}': "
                              "give variable names separated by commas, e.g. --wrt x,y")
    return items


def _resolve(names: list[str], plan: Plan, expand: bool) -> list[int]:
    """Input column indices of ``names``: a scalar variable, a vector component ``x[1]``,
    or (``expand``) a whole vector variable, its components in turn."""
    columns = [c for c, _, _ in plan.inputs]
    variables = [v for _, v, _ in plan.inputs]
    out: list[int] = []
    for name in names:
        if name in columns:
            out.append(columns.index(name))
        elif name in variables and expand:
            out.extend(i for i, v in enumerate(variables) if v == name)
        elif name in variables:
            parts = ", ".join(c for c, v, _ in plan.inputs if v == name)
            raise EvaluationError(f"--wrt {name}: {name} is a vector; name one component "
                                  f"({parts})")
        else:
            bound = ", ".join(columns) or "none"
            raise EvaluationError(f"--wrt names '{name}', which is not a bound variable "
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


def _pairing(what: str, plan: Plan, wrt: Any) -> list[int]:
    m = len(plan.outputs)
    shape = plan.program.shape
    if len(shape) != 1:
        kind = "a scalar" if shape == () else f"an array of shape {shape}"
        raise EvaluationError(f"{what} needs a vector field \"[P, Q, ...]\", but this "
                              f"expression is {kind}")
    if what == "curl" and m not in (2, 3):
        raise EvaluationError(f"curl is defined for fields of 2 or 3 components; this one "
                              f"has {m}")
    pairs = _resolve(_wrt_list(wrt), plan, True) if wrt is not None else \
        list(range(len(plan.inputs)))
    if len(pairs) != m:
        given = "--wrt names" if wrt is not None else "the command line binds"
        names = ", ".join(plan.inputs[i][0] for i in pairs) or "none"
        hint = ("--wrt " + ",".join(c for c, _, _ in plan.inputs[:m])
                if len(plan.inputs) >= m else f"{m} variables")
        raise EvaluationError(
            f"{what}: the field has {m} components but {given} {len(pairs)} variables "
            f"({names}); components pair with variables in order, so name {m} of them, "
            f"e.g. {hint}")
    if len(set(pairs)) != len(pairs):
        raise EvaluationError(f"{what}: --wrt names a variable twice")
    return pairs


def specify(what: str, plan: Plan, *, wrt: Any = None, order: Any = None) -> Spec:
    """Check a calculus request and say what its kernel works on (EvaluationError for a
    request that does not make sense: wrong shape, counts, names or order)."""
    if what in ("div", "curl"):
        if order is not None:
            raise EvaluationError(f"{what} takes no order")
        pairs = _pairing(what, plan, wrt)
        return Spec(pairs, [plan.inputs[i][0] for i in pairs])
    if what in ("hvp", "taylor") and plan.program.shape != ():
        raise EvaluationError(f"{what} needs a scalar-valued expression, but this one has "
                              f"shape {plan.program.shape}")
    if what == "hvp":
        if wrt is not None or order is not None:
            raise EvaluationError("hvp takes a direction, not --wrt or --order")
        return Spec(list(range(len(plan.inputs))), [c for c, _, _ in plan.inputs])
    if what == "laplacian":
        if order is not None:
            raise EvaluationError("laplacian takes no order (it is second order)")
        pairs = _resolve(_wrt_list(wrt), plan, True) if wrt is not None else \
            list(range(len(plan.inputs)))
        if not pairs:
            raise EvaluationError("laplacian needs at least one variable")
        return Spec(pairs, [plan.inputs[i][0] for i in pairs])
    if what == "taylor":
        k = _order(2 if order is None else order, 0, "taylor")
        pairs = _resolve(_wrt_list(wrt), plan, True) if wrt is not None else \
            list(range(len(plan.inputs)))
        if len(set(pairs)) != len(pairs):
            raise EvaluationError("taylor: --wrt names a variable twice")
        _lattice_check(len(pairs), k, "taylor")
        return Spec(pairs, [plan.inputs[i][0] for i in pairs], order=k,
                    indices=graded(len(pairs), k))
    return _diff_spec(plan, wrt, order)


def _diff_spec(plan: Plan, wrt: Any, order: Any) -> Spec:
    if wrt is None:
        if len(plan.inputs) != 1:
            bound = ", ".join(c for c, _, _ in plan.inputs) or "none"
            raise EvaluationError(f"diff needs --wrt: which variables to differentiate by "
                                  f"(bound: {bound}), e.g. --wrt x --order 2 or --wrt x,y")
        wrt = plan.inputs[0][0]
    names = _wrt_list(wrt)
    cols = _resolve(names, plan, False)
    if order is not None:
        k = _order(order, 1, "diff")
        if len(names) == 1:
            cols = cols * k
        elif k != len(names):
            raise EvaluationError(f"diff --order {k} with --wrt {','.join(names)}: give one "
                                  "variable and an order (--wrt x --order 3), or list every "
                                  "variable of the partial (--wrt x,x,y)")
    elif len(cols) > MAX_ORDER:
        raise EvaluationError(f"diff: the order must be between 1 and {MAX_ORDER}, "
                              f"got {len(cols)}")
    pairs = list(dict.fromkeys(cols))
    alpha = tuple(cols.count(j) for j in pairs)
    if len(pairs) > 1:
        _lattice_check(len(pairs), len(cols), "diff")
    return Spec(pairs, [plan.inputs[j][0] for j in pairs], alpha=alpha, order=len(cols))


def _lattice_check(n: int, order: int, what: str) -> None:
    """Refuse a mixed request whose interpolation weights would take minutes to compute."""
    jets = math.comb(n + order - 1, order)
    if n > 1 and jets * jets * order * n > MAX_LATTICE_WORK:
        raise EvaluationError(
            f"{what} of order {order} in {n} variables needs {count_text(jets)} Taylor "
            "jets, too many to combine: lower the order or use fewer variables (--wrt)")


def derivative_name(output: str, names: Sequence[str], alpha: Sequence[int]) -> str:
    """``df/dx``, ``d3f/dx3``, ``d3f/dx2dy``, ``d2f[1]/dxdy``."""
    k = sum(alpha)
    parts = "".join(f"d{n}{a if a > 1 else ''}" for n, a in zip(names, alpha, strict=True))
    return f"d{k if k > 1 else ''}{output}/{parts}"


# --- columns, blocks, cost ---------------------------------------------------------------
def _columns(plan: Plan) -> list[str]:
    sp, outs = plan.spec, plan.outputs
    if plan.what == "div":
        return outs + ["div"]
    if plan.what == "curl":
        return outs + (["curl"] if len(outs) == 2 else ["curl[0]", "curl[1]", "curl[2]"])
    if plan.what == "laplacian":
        return outs + ["laplacian" + o[1:] for o in outs]
    if plan.what == "hvp":
        return ["f"] + [f"hvp/d{c}" for c, _, _ in plan.inputs]
    if plan.what == "diff":
        return outs + [derivative_name(o, sp.names, sp.alpha) for o in outs]
    m = len(sp.indices)
    return ["f"] + [f"coefficient[{i}]" for i in range(m)] + [
        f"derivative[{i}]" for i in range(m)]


def _blocks(plan: Plan, variables: list[tuple[str, tuple[int, ...]]]) -> list[Block]:
    if plan.what == "hvp":
        return [Block.template(["hvp/d", v, s]) for v, s in variables]
    m = (len(plan.spec.indices),)
    return [Block("coefficient", m), Block("derivative", m)]


def _jet_cost(order: int) -> int:
    return (order + 1) * (order + 2) // 2  # the Cauchy products of one jet, in sweeps


def _mixed(sp: Spec) -> list[tuple[int, float]]:
    """diff: (direction index, weight) pairs for the partial's coefficient."""
    row = simplex(len(sp.pairs), sp.order).index(sp.alpha)
    return list(weights(len(sp.pairs), sp.order, sp.order)[row])


def _sweeps(plan: Plan) -> int:
    sp = plan.spec
    if plan.what in ("div", "curl"):
        return len(plan.outputs)
    if plan.what == "hvp":
        return 3
    if plan.what == "laplacian":
        return len(sp.pairs) * _jet_cost(2)
    if plan.what == "diff":
        jets = 1 if len(sp.pairs) == 1 else len(_mixed(sp))
        return jets * _jet_cost(sp.order)
    return math.comb(len(sp.pairs) + sp.order - 1, sp.order) * _jet_cost(sp.order)


# --- kernels ------------------------------------------------------------------------------
def _div(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    return [raw(divergence(outs, [leaves[j] for j in plan.spec.pairs], _one(num)))]


def _curl(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    return [raw(c) for c in curl(outs, [leaves[j] for j in plan.spec.pairs], _one(num))]


def _hvp(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """H·u, forward over reverse: the gradient recorded by one reverse sweep, then one
    tangent sweep of it from u (``torch.func.hvp``'s order)."""
    from ..engine.backward import run_backward

    values: list[Any] = [None] * len(leaves)
    if not _live(outs[0]):
        return values
    firsts = run_backward([outs[0]], [num(1.0)], True, True, leaves)
    live = [(i, g) for i, g in enumerate(firsts) if _live(g)]
    seeds = [None if u == 0 else num(u) for u in plan.direction or []]
    if live and any(s is not None for s in seeds):
        got = Linearized(leaves, [g for _, g in live]).jvp(seeds)
        for (i, _), t in zip(live, got, strict=True):
            values[i] = raw(t)
    return values


def _seeds(n_leaves: int, pairs: Sequence[int], direction: Sequence[int], num: type
           ) -> list[Any]:
    seeds: list[Any] = [None] * n_leaves
    for j, s in zip(pairs, direction, strict=True):
        if s:
            seeds[j] = _one(num) if s == 1 else num(s)
    return seeds


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


def _laplacian(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """Σ ∂²f/∂xᵢ² = Σ 2·y₂ of the order-2 jets along each variable."""
    jets = Jets(leaves, outs)
    total: list[Any] = [None] * len(outs)
    for j in plan.spec.pairs:
        got = _sweep(jets, _seeds(len(leaves), [j], [1], num), 2, "laplacian")
        for i, series in enumerate(got):
            if series is not None:
                total[i] = _add(total[i], series[2])
    return [None if t is None else 2.0 * t for t in total]


def _coefficient(series: list[Any] | None, k: int) -> Any:
    return None if series is None else series[k]


def _diff(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """One jet of order k along x for ∂ᵏf/∂xᵏ (k!·y_k); for a mixed partial, jets along
    the lattice directions over its variables, combined by the interpolation weights."""
    sp, k = plan.spec, plan.spec.order
    jets = Jets(leaves, outs)
    scale = float(math.prod(math.factorial(a) for a in sp.alpha))
    if len(sp.pairs) == 1:
        plan_jets: list[tuple[tuple[int, ...], float]] = [((1,), 1.0)]
    else:
        lattice = directions(len(sp.pairs), k)
        plan_jets = [(lattice[i], w) for i, w in _mixed(sp)]
    total: list[Any] = [None] * len(outs)
    for direction, weight in plan_jets:
        got = _sweep(jets, _seeds(len(leaves), sp.pairs, direction, num), k, "diff")
        for i, series in enumerate(got):
            c = _coefficient(series, k)
            if c is not None:
                total[i] = _add(total[i], c if weight == 1.0 else weight * c)
    return [None if t is None else scale * t for t in total]


def _taylor(plan: Plan, leaves: list[Tensor], outs: list[Any], num: type) -> list[Any]:
    """Every ∂^α f / α! with |α| ≤ K: jets of order K along each direction of the lattice
    S_K, combined per order by the interpolation weights (``interpolate.py``)."""
    sp, order = plan.spec, plan.spec.order
    n = len(sp.pairs)
    jets = Jets(leaves, outs)
    series = [_sweep(jets, _seeds(len(leaves), sp.pairs, d, num), order, "taylor", False)[0]
              for d in (directions(n, order) if n else [])]
    coefficients: list[Any] = [raw(outs[0])]
    for p in range(1, order + 1):
        for row in weights(n, order, p):
            total = None
            for index, weight in row:
                c = _coefficient(series[index], p)
                if c is not None:
                    total = _add(total, weight * c)
            # + 0.0: a coefficient that cancels to -0.0 is written 0 (its sign means nothing)
            coefficients.append(total if total is None or n == 1 else total + 0.0)
    factorials = [float(math.prod(math.factorial(a) for a in alpha)) for alpha in sp.indices]
    derivatives = [None if c is None else (c if f == 1.0 else f * c)
                   for c, f in zip(coefficients, factorials, strict=True)]
    return coefficients + derivatives


_RUN = {"div": _div, "curl": _curl, "laplacian": _laplacian, "hvp": _hvp, "diff": _diff,
        "taylor": _taylor}
for _what in COMMANDS:
    EXTRA[_what] = Kernel(_columns, _sweeps, _RUN[_what],
                          _blocks if _what in ("hvp", "taylor") else None,
                          blocked=_what in ("laplacian", "hvp", "diff", "taylor"))
