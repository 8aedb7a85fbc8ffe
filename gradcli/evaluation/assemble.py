"""Which scalar columns of a request form one block, and the inputs' own blocks.

The kernels name one column per scalar derivative (``df/dx[0]``, ``d2f/dx[0]dy[1]``); this
module groups them into the blocks of ``blocks.py`` from the variables' shapes: for every
variable v of shape s, ``df/dv`` has shape s, ``d{o}/dv`` (each output component o) has
shape s, ``vjp/dv`` has shape s, ``d2f/dadb`` has shape ``s_a + s_b``. Outputs and ``jvp``
columns stay scalar blocks. A column no pattern claims becomes a scalar block of its own,
so a new kind of column is written correctly before anyone teaches this module its shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .binding import Binding, EvaluationError
from .blocks import INPUT, TEXT, Block, Layout, Result
from .kernels import EXTRA, Plan


def _candidates(plan: Plan, variables: list[tuple[str, tuple[int, ...]]]) -> list[Block]:
    def per_variable(prefix: str) -> list[Block]:
        return [Block.template([prefix, v, s]) for v, s in variables]

    outs = [Block(o) for o in plan.outputs]
    extra = EXTRA.get(plan.what)
    if extra is not None and extra.blocks is not None:
        return outs + extra.blocks(plan, variables)
    if plan.what == "grad":
        return [Block("f"), *per_variable("df/d")]
    if plan.what == "jacobian":
        return outs + [b for o in plan.outputs for b in per_variable(f"d{o}/d")]
    if plan.what == "vjp":
        return outs + per_variable("vjp/d")
    if plan.what == "jvp":
        return outs + [Block("jvp" + o[1:]) for o in plan.outputs]
    if plan.what == "hessian":
        return [Block("f"), *[Block.template(["d2f/d", a, sa, "d", b, sb])
                              for a, sa in variables for b, sb in variables]]
    return outs


def result_layout(plan: Plan, binding: Binding) -> Layout:
    """The result blocks of ``plan``; their scalar columns in ``plan.columns()`` order."""
    variables = [(v, binding.shapes[v]) for v in binding.names]
    blocks = _candidates(plan, variables)
    where: dict[str, tuple[int, int]] = {}
    for i, block in enumerate(blocks):
        for k, name in enumerate(block.column_names()):
            if name in where:
                raise EvaluationError(f"two result columns would both be named '{name}': "
                                      "rename one of the variables")
            where[name] = (i, k)
    order: list[tuple[int, int]] = []
    for name in plan.columns():
        if name not in where:  # a column without a known block: a scalar block of its own
            where[name] = (len(blocks), 0)
            blocks.append(Block(name))
        order.append(where[name])
    used = {i for i, _ in order}
    if len(order) != sum(blocks[i].size for i in used):  # a block only partly computed
        raise EvaluationError("internal error: the result columns do not fill their blocks")
    keep = sorted(used)
    renumber = {old: new for new, old in enumerate(keep)}
    return Layout([blocks[i] for i in keep], [(renumber[i], k) for i, k in order])


def input_result(binding: Binding, carry: Mapping[str, Any] | None = None) -> Result:
    """The carried text columns (first) and the variables' own blocks, as a Result.

    A scalar variable's array is its component as bound (an ``ogrid`` axis on a grid); a
    vector variable's is its components stacked on a trailing axis.
    """
    blocks: list[Block] = []
    arrays: dict[str, Any] = {}
    for name, col in (carry or {}).items():
        blocks.append(Block(name, kind=TEXT))
        arrays[name] = np.asarray(col, dtype=object)
    for name in binding.names:
        shape, comps = binding.shapes[name], binding.components[name]
        if name in arrays:
            raise EvaluationError(f"column '{name}' is both carried and a variable")
        blocks.append(Block.template([name, shape], INPUT))
        arrays[name] = comps[0] if shape == () else np.stack(np.broadcast_arrays(*comps), -1)
    return Result(Layout(blocks), arrays, binding.batch_shape)
