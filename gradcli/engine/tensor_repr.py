"""PyTorch-style ``repr`` for tensors: ``tensor(29., grad_fn=<AddBackward0>)``."""

from __future__ import annotations

from typing import Any

import numpy as np

#: ``core.Tensor`` (which imports this module to show itself)
Tensor = Any


def _format(arr: np.ndarray) -> str:
    finite = arr[np.isfinite(arr)]
    integral = finite.size == 0 or bool(np.all(finite == np.round(finite)))
    big = finite.size > 0 and float(np.max(np.abs(finite))) >= 1e8
    small = finite.size > 0 and 0 < float(np.min(np.abs(finite[finite != 0]), initial=1)) < 1e-4
    if integral and not big:
        opts = dict(floatmode="maxprec", precision=0)
    elif big or small:
        return np.array2string(arr, separator=", ", prefix="tensor(",
                               formatter={"float_kind": lambda v: f"{v:.4e}"})
    else:
        opts = dict(floatmode="fixed", precision=4)
    return np.array2string(arr, separator=", ", prefix="tensor(", **opts)


def tensor_repr(t: Tensor) -> str:
    """Render values like PyTorch, then the autograd state and a non-default dtype."""
    body = _format(t.arr)
    extras = []
    if t.arr.dtype != np.float64:
        extras.append(f"dtype={t.arr.dtype.name}")
    if t.grad_fn is not None:
        extras.append(f"grad_fn=<{t.grad_fn.name()}>")
    elif t.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"
