"""``--check``: compare the engine's derivatives with central finite differences.

First derivatives are checked against differences of f; second derivatives against
differences of the engine's own gradient (as PyTorch's gradgradcheck does), which keeps
the step error of order h² instead of the much noisier second difference of f.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from .kernels import Plan
from .runner import ArraySink, run

_EPS = {"grad": 1e-6, "jacobian": 1e-6, "hessian": 1e-5}


def _shifted(prepared: Any, var: str, k: int, sign: float, eps: float) -> Any:
    binding = prepared.binding
    comps = dict(binding.components)
    arrs = list(comps[var])
    base = arrs[k]
    arrs[k] = base + sign * eps * np.maximum(1.0, np.abs(base))
    comps[var] = arrs
    return replace(binding, components=comps)


def _evaluate(prepared: Any, plan: Plan, binding: Any) -> dict[str, np.ndarray]:
    sink = ArraySink()
    run(plan, binding, sink, dtype=np.dtype(np.float64))
    return sink.result()


def finite_difference_check(prepared: Any, columns: dict[str, Any]) -> tuple[float, float]:
    """Largest (absolute, relative) gap between the engine's derivative columns and
    central differences; relative is |gap| / max(1, |difference quotient|)."""
    what = prepared.plan.what
    eps = _EPS[what]
    base_what = "grad" if what == "hessian" else "eval"
    base = replace(prepared.plan, what=base_what)
    worst_abs = worst_rel = 0.0
    for col, var, k in prepared.plan.inputs:
        comp = 0 if k is None else k
        hi = _evaluate(prepared, base, _shifted(prepared, var, comp, +1.0, eps))
        lo = _evaluate(prepared, base, _shifted(prepared, var, comp, -1.0, eps))
        x = prepared.binding.components[var][comp]
        step = 2.0 * eps * np.maximum(1.0, np.abs(x))
        for name in base.columns()[len(base.outputs):] if what == "hessian" else base.outputs:
            fd = (hi[name] - lo[name]) / step
            target = (f"d2f/d{name[4:]}d{col}" if what == "hessian" else f"d{name}/d{col}")
            gap = np.abs(np.broadcast_to(columns[target], fd.shape) - fd)
            finite = np.isfinite(gap)
            if not finite.any():
                continue
            worst_abs = max(worst_abs, float(gap[finite].max()))
            rel = gap[finite] / np.maximum(1.0, np.abs(fd[finite]))
            worst_rel = max(worst_rel, float(rel.max()))
    return worst_abs, worst_rel
