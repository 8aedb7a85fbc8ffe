"""``--check``: compare the engine's derivatives with central finite differences.

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

from .kernels import Plan
from .runner import ArraySink, run

_EPS = {"grad": 1e-6, "jacobian": 1e-6, "hessian": 1e-5}


class CheckResult(NamedTuple):
    """The largest gaps between the engine and central differences over the entries where
    both are finite, and the entries no tolerance covers: those where exactly one of the
    two is finite, and those where both are non-finite but differ (inf against nan)."""

    worst_abs: float
    worst_rel: float
    not_comparable: int
    both_nonfinite: int = 0


def _shifted(prepared: Any, var: str, k: int, sign: float, eps: float) -> Any:
    binding = prepared.binding
    comps = {name: [np.asarray(c, dtype=np.float64) for c in cs]
             for name, cs in binding.components.items()}
    base = comps[var][k]
    comps[var][k] = base + sign * eps * np.maximum(1.0, np.abs(base))
    return replace(binding, components=comps)


def _evaluate(prepared: Any, plan: Plan, binding: Any) -> dict[str, np.ndarray]:
    sink = ArraySink()
    run(plan, binding, sink, dtype=np.dtype(np.float64))
    return sink.result()


def finite_difference_check(prepared: Any, columns: dict[str, Any]) -> CheckResult:
    """Compare the engine's derivative columns with central differences (see
    CheckResult); a relative gap is |gap| / max(1, |difference quotient|)."""
    what = prepared.plan.what
    eps = _EPS[what]
    base_what = "grad" if what == "hessian" else "eval"
    base = replace(prepared.plan, what=base_what)
    worst_abs = worst_rel = 0.0
    not_comparable = both_nonfinite = 0
    for col, var, k in prepared.plan.inputs:
        comp = 0 if k is None else k
        hi = _evaluate(prepared, base, _shifted(prepared, var, comp, +1.0, eps))
        lo = _evaluate(prepared, base, _shifted(prepared, var, comp, -1.0, eps))
        x = np.asarray(prepared.binding.components[var][comp], dtype=np.float64)
        step = 2.0 * eps * np.maximum(1.0, np.abs(x))
        for name in base.columns()[len(base.outputs):] if what == "hessian" else base.outputs:
            fd = (hi[name] - lo[name]) / step
            target = (f"d2f/d{name[4:]}d{col}" if what == "hessian" else f"d{name}/d{col}")
            engine = np.broadcast_to(columns[target], fd.shape)
            finite_engine, finite_fd = np.isfinite(engine), np.isfinite(fd)
            not_comparable += int(np.count_nonzero(finite_engine != finite_fd))
            neither = ~finite_engine & ~finite_fd
            both_nonfinite += int(np.count_nonzero(
                neither & ~((engine == fd) | (np.isnan(engine) & np.isnan(fd)))))
            gap = np.abs(engine - fd)
            finite = np.isfinite(gap)
            if not finite.any():
                continue
            worst_abs = max(worst_abs, float(gap[finite].max()))
            rel = gap[finite] / np.maximum(1.0, np.abs(fd[finite]))
            worst_rel = max(worst_rel, float(rel.max()))
    return CheckResult(worst_abs, worst_rel, not_comparable, both_nonfinite)
