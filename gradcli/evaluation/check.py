"""The derivative check: compare the engine's derivatives with central finite differences.

First derivatives are checked against differences of f; second derivatives against
differences of the engine's own gradient (as PyTorch's gradgradcheck does), which keeps
the step error of order h² instead of the much noisier second difference of f. The
differences are computed in float64 whatever the run's dtype, so the step suits float64
and a float32 run is compared with a reference more precise than itself.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.evaluation.runner import ArraySink, run
from gradcli.plan.blocks import Result
from gradcli.plan.computations import computation
from gradcli.plan.kernels import Plan


class CheckResult(NamedTuple):
    """The largest gaps between the engine and central differences over the entries where
    both are finite, and the entries no tolerance covers: those where exactly one of the
    two is finite, and those where both are non-finite but differ (inf against nan)."""

    worst_abs: float
    worst_rel: float
    not_comparable: int
    both_nonfinite: int = 0
    compared: int = 0  # entries where both are finite: what the gaps are over


def _components(value: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """A variable's value with its component axes flattened into one: (batch..., size)."""
    return value.reshape(value.shape[:value.ndim - len(shape)] + (-1,))


def _shifted(binding: Any, var: str, k: int, sign: float, eps: float) -> Any:
    """The binding with component ``k`` (flat) of variable ``var`` moved by ±eps·max(1, |x|)."""
    values = {name: np.asarray(v, dtype=np.float64) for name, v in binding.values.items()}
    moved = values[var].copy()
    flat = _components(moved, binding.shapes[var])
    flat[..., k] += sign * eps * np.maximum(1.0, np.abs(flat[..., k]))
    values[var] = moved
    return replace(binding, values=values)


def _evaluate(plan: Plan, binding: Any) -> Result:
    sink = ArraySink()
    run(plan, binding, sink, dtype=np.dtype(np.float64))
    return sink.result()


def _block(result: Result, name: str) -> np.ndarray:
    """Block ``name`` at every point, its component axes flattened: (batch..., size)."""
    block = next(b for b in result.blocks if b.name == name)
    full = np.broadcast_to(np.asarray(result.arrays[name], dtype=np.float64),
                           result.batch_shape + block.shape)
    return full.reshape(result.batch_shape + (block.size,))


def finite_difference_check(prepared: Any, columns: Result) -> CheckResult:
    """Compare the engine's derivative blocks with central differences (see
    CheckResult); a relative gap is |gap| / max(1, |difference quotient|)."""
    plan, binding = prepared.plan, prepared.binding
    if any(name not in binding.shapes for name, _ in plan.targets):
        raise EvaluationError(f"{ref('check')} differences the variables: it cannot move a "
                              f"step of the program (drop {ref('check')}, or "
                              f"{ref('wrt')} the variables)")
    eps = plan.computation.check_step
    differenced = plan.computation.check_differences
    base = replace(plan, what=differenced, params={}, record=computation(differenced))
    outs = len(base.outputs)
    # the differenced computation's derivative blocks (the gradient), or its values
    differenced = base.blocks()[outs:] if base.computation.records else \
        base.blocks()[:outs]
    derivatives = plan.blocks()[len(plan.outputs):]
    pairs = _pairs(plan, len(derivatives), len(differenced))
    found = CheckResult(0.0, 0.0, 0, 0, 0)
    for t, (var, shape) in enumerate(plan.targets):
        x = _components(np.asarray(binding.values[var], dtype=np.float64), shape)
        mine = [(d, o) for d, o, v in pairs if v == t]
        for k in range(x.shape[-1] if mine else 0):
            hi = _evaluate(base, _shifted(binding, var, k, +1.0, eps))
            lo = _evaluate(base, _shifted(binding, var, k, -1.0, eps))
            step = 2.0 * eps * np.maximum(1.0, np.abs(x[..., k]))
            for d, o in mine:
                out = differenced[o]
                fd = (_block(hi, out.name) - _block(lo, out.name)) / step[..., None]
                engine = _block(columns, derivatives[d].name)
                engine = engine.reshape(engine.shape[:-1] + (out.size, -1))[..., k]
                gaps = _compare(np.broadcast_to(engine, fd.shape), fd)
                found = CheckResult(max(found[0], gaps[0]), max(found[1], gaps[1]),
                                    found[2] + gaps[2], found[3] + gaps[3],
                                    found[4] + gaps[4])
    return found


def _pairs(plan: Any, derivatives: int, differenced: int) -> list[tuple[int, int, int]]:
    """(derivative block, differenced block, variable) per derivative block the check
    compares: the record's ``pairs``, else one derivative block per (differenced block,
    variable) in that order; a pairing that names a block the computation does not have is
    refused with the record's name, not an IndexError."""
    record, targets = plan.computation, len(plan.targets)
    if record.pairs is not None:
        pairs = list(record.pairs(plan))
    else:
        pairs = [(o * targets + t, o, t) for o in range(differenced) for t in range(targets)]
    bad = next((p for p in pairs if not (0 <= p[0] < derivatives and 0 <= p[1] < differenced
                                         and 0 <= p[2] < targets)), None)
    if bad is not None:
        raise EvaluationError(
            f"{ref('check')}: {record.name} gives {derivatives} derivative block(s) for "
            f"{differenced} differenced block(s) and {targets} variable(s), so its pairing "
            f"{bad} names a block it does not have: give its record pairs=")
    return pairs


def _compare(engine: np.ndarray, fd: np.ndarray) -> CheckResult:
    """The largest gaps of one block, and its entries no tolerance covers."""
    finite_engine, finite_fd = np.isfinite(engine), np.isfinite(fd)
    not_comparable = int(np.count_nonzero(finite_engine != finite_fd))
    neither = ~finite_engine & ~finite_fd
    both = int(np.count_nonzero(neither & ~((engine == fd) | (np.isnan(engine) & np.isnan(fd)))))
    gap = np.abs(engine - fd)
    finite = np.isfinite(gap)
    compared = int(np.count_nonzero(finite))
    if not compared:
        return CheckResult(0.0, 0.0, not_comparable, both, 0)
    rel = gap[finite] / np.maximum(1.0, np.abs(fd[finite]))
    return CheckResult(float(gap[finite].max()), float(rel.max()), not_comparable, both,
                       compared)
