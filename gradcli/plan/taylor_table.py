"""What ``taylor`` writes: one row per point and multi-index, or the polynomial as text.

The kernel gives per point the blocks ``coefficient`` and ``derivative`` (one entry per
multi-index α, |α| ≤ K, graded lexicographic order). ``long_table`` turns them into rows:
the point's columns (carried text, variables), ``order`` = |α|, ``deg(x)`` = α_x per
variable, ``coefficient`` = ∂^α f / α!, ``derivative`` = ∂^α f (with units, a text column
``unit`` gives both their unit on each row: unit(f)/Π unit(x)^α_x). ``polynomial`` writes
Σ c_α·Π (x - a)^α_x in gradcli's own expression language (built as a syntax tree and
printed by ``lang.printer``, so it parses back to the same polynomial).
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.lang.ast import Binary, Index, Node, Num, Unary, Var
from gradcli.lang.printer import to_text
from gradcli.plan.blocks import TEXT, Block, Layout, Result
from gradcli.plan.kernels import Plan

__all__ = ["long_table", "polynomials", "number_node"]


def _flat(arr: np.ndarray, batch: tuple[int, ...], tail: tuple[int, ...]) -> np.ndarray:
    """A block's array over the whole batch, the batch flattened to one axis."""
    full = np.broadcast_to(np.asarray(arr), batch + tail)
    return full.reshape((int(np.prod(batch, dtype=np.int64)),) + tail)


def long_table(result: Result, plan: Plan) -> Result:
    """The per-point blocks of a taylor result as rows: each point repeated once per
    multi-index, then order, deg(...), coefficient and derivative."""
    spec = plan.spec
    m = len(spec.indices)
    batch = result.batch_shape
    arrays: dict[str, np.ndarray] = {}
    blocks: list[Block] = []
    for block in result.blocks:
        if block.name in ("f", "coefficient", "derivative"):
            continue
        blocks.append(block)
        arrays[block.name] = np.repeat(_flat(result.arrays[block.name], batch, block.shape),
                                       m, axis=0)
    n_points = int(np.prod(batch, dtype=np.int64))
    degrees = np.asarray(spec.indices, dtype=np.int64).reshape(m, len(spec.names))
    columns = {"order": degrees.sum(axis=1)} | {
        f"deg({name})": degrees[:, i] for i, name in enumerate(spec.names)}
    for name, values in columns.items():
        blocks.append(Block(name))
        arrays[name] = np.tile(values, n_points)
    per = next((b.units for b in result.blocks if b.name == "coefficient"), ())
    for name in ("coefficient", "derivative"):
        blocks.append(Block(name))
        arrays[name] = _flat(result.arrays[name], batch, (m,)).reshape(-1)
    if per:  # with units: each row's coefficient and derivative in unit(f)/unit(x)^α
        blocks.append(Block("unit", kind=TEXT))
        arrays["unit"] = np.tile(np.array(per, dtype=object), n_points)
    return Result(Layout(blocks), arrays, (n_points * m,))


def number_node(value: float) -> Node:
    """A syntax tree whose value is ``value`` exactly: a literal, its negation, or 1/0,
    -1/0 and 0/0 for the non-finite values the language has no literal for."""
    if math.isnan(value):
        return Binary("/", Num(0.0), Num(0.0))
    if math.isinf(value):
        node: Node = Binary("/", Num(1.0), Num(0.0))
        return node if value > 0 else Unary("-", node)
    return Num(value) if math.copysign(1.0, value) > 0 else Unary("-", Num(-value))


def _variable(column: str) -> Node:
    name, _, rest = column.partition("[")
    return Index(Var(name), int(rest[:-1])) if rest else Var(name)


def _shifted(column: str, at: float) -> Node:
    var = _variable(column)
    if at == 0.0:
        return var
    if math.isfinite(at) and at < 0:
        return Binary("+", var, Num(-at))
    return Binary("-", var, number_node(at))


def _term(coefficient: float, alpha: tuple[int, ...], bases: list[Node]) -> Node:
    """coefficient·Π base^power, the sign kept in the coefficient (``-0.5 * x ^ 2``)."""
    factors: list[Node] = []
    for base, power in zip(bases, alpha, strict=True):
        if power:
            factors.append(base if power == 1 else Binary("^", base, Num(float(power))))
    if not factors:
        return number_node(coefficient)
    if abs(coefficient) == 1.0:
        node: Node = factors[0]
    else:
        node = Binary("*", number_node(coefficient), factors[0])
    for factor in factors[1:]:
        node = Binary("*", node, factor)
    return Unary("-", node) if coefficient == -1.0 else node


def _single_decimals(values: np.ndarray) -> np.ndarray:
    """float32 values as the float64 numbers of their shortest float32 text (1/6 in
    float32 prints as 0.16666667, not 0.1666666716337204), so the polynomial's text
    carries the digits the result's own dtype has and reads back as the same float32."""
    flat = [float(str(v)) for v in values.reshape(-1)]
    return np.asarray(flat, dtype=np.float64).reshape(values.shape)


def polynomials(result: Result, plan: Plan) -> list[str]:
    """The Taylor polynomial at each point, as text in gradcli's language (terms with a
    zero coefficient left out; ``0`` when every one is zero)."""
    spec = plan.spec
    batch = result.batch_shape
    coefficients = _flat(result.arrays["coefficient"], batch, (len(spec.indices),))
    if coefficients.dtype == np.float32:  # the shortest text that reads back as float32
        coefficients = _single_decimals(coefficients)
    points = []
    for j in spec.pairs:
        column = spec.columns[j]
        var, shape = plan.variables[column.variable]
        flat = _flat(result.arrays[var], batch, shape)
        points.append(flat[(slice(None), *column.index)])
    lines = []
    for row, values in enumerate(coefficients):
        bases = [_shifted(name, float(p[row])) for name, p in zip(spec.names, points,
                                                                  strict=True)]
        total: Node | None = None
        for alpha, c in zip(spec.indices, values.tolist(), strict=True):
            if c == 0.0:
                continue
            if total is None:
                total = _term(c, alpha, bases)
            else:  # the sign goes to the operator: ... - 0.5 * x ^ 2
                total = Binary("-" if c < 0 else "+", total, _term(abs(c), alpha, bases))
        lines.append("0" if total is None else to_text(total, minimal=True))
    return lines

