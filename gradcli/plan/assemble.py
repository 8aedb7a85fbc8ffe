"""A request's result layout, and the inputs' own blocks.

The blocks of a result are declared by the plan (``kernels.Plan.blocks``): for every
variable v of shape s, ``df/dv`` has shape s, ``d{o}/dv`` (each output block o of shape t)
has shape t + s, ``vjp/dv`` has shape s, ``d2f/dadb`` has shape ``s_a + s_b``. Building the
layout never goes through one name per component, so a 10⁶-vector costs a few blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError
from gradcli.plan.blocks import INPUT, TEXT, Block, Layout, Result
from gradcli.plan.kernels import Plan
from gradcli.request.binding import Binding


def result_layout(plan: Plan, binding: Binding | None = None) -> Layout:
    """The result blocks of ``plan``, their scalar columns in the plan's column order."""
    blocks = plan.blocks()
    try:
        # a Hessian's column order has one entry per scalar column: made only when asked
        return Layout(blocks, plan.order if plan.computation.streams else plan.order())
    except ValueError:
        names = [b.name for b in blocks]
        twice = next(n for n in names if names.count(n) > 1)
        raise EvaluationError(f"two result columns would both be named '{twice}': "
                              "rename one of the variables") from None


def input_result(binding: Binding, carry: Mapping[str, Any] | None = None) -> Result:
    """The carried text columns (first) and the variables' own blocks, as a Result.

    A variable's array is its value as bound: an ``ogrid`` axis on a grid, ``(N, n)`` for a
    vector variable at N points.
    """
    blocks: list[Block] = []
    arrays: dict[str, Any] = {}
    for name, col in (carry or {}).items():
        blocks.append(Block(name, kind=TEXT))
        arrays[name] = np.asarray(col, dtype=object)
    for name in binding.names:
        if name in arrays:
            raise EvaluationError(f"column '{name}' is both carried and a variable")
        blocks.append(Block.template([name, binding.shapes[name]], INPUT))
        arrays[name] = binding.values[name]
    return Result(Layout(blocks), arrays, binding.batch_shape)
