"""Tensor constructors mirroring PyTorch's (``gc.tensor``, ``gc.linspace``, ``gc.meshgrid``...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcli.engine import ops
from gradcli.engine.core import Tensor, as_array

float64 = np.float64
float32 = np.float32


def _leaf(arr: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._make(arr)
    return t.requires_grad_() if requires_grad else t


def _size(size: Sequence[Any]) -> tuple[int, ...]:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(int(s) for s in size)


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (float64 unless float32 is asked for).

    Integer and boolean data become float64; asking such data to require grad is PyTorch's
    error, as ``torch.tensor([1, 2], requires_grad=True)`` is."""
    if requires_grad and dtype is None and not isinstance(data, Tensor) and \
            np.asarray(data).dtype.kind in "biu":
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return _leaf(np.array(as_array(data, dtype), copy=True), requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with a float numpy array."""
    if array.dtype not in (np.float64, np.float32):
        return Tensor._make(array.astype(np.float64))
    return Tensor._make(array)


def zeros(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of zeros."""
    return _leaf(np.zeros(_size(size), dtype=dtype or np.float64), requires_grad)


def ones(*size: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of ones."""
    return _leaf(np.ones(_size(size), dtype=dtype or np.float64), requires_grad)


def full(size: Sequence[int], fill_value: float, dtype: Any = None,
         requires_grad: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``."""
    return _leaf(np.full(tuple(size), fill_value, dtype=dtype or np.float64), requires_grad)


def zeros_like(t: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Zeros with the shape (and dtype) of ``t``."""
    arr = t.arr if isinstance(t, Tensor) else as_array(t)
    return _leaf(np.zeros_like(arr, dtype=dtype), requires_grad)


def ones_like(t: Any, dtype: Any = None, requires_grad: bool = False) -> Tensor:
    """Ones with the shape (and dtype) of ``t``."""
    arr = t.arr if isinstance(t, Tensor) else as_array(t)
    return _leaf(np.ones_like(arr, dtype=dtype), requires_grad)


def linspace(start: float, end: float, steps: int, dtype: Any = None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive."""
    return _leaf(np.linspace(start, end, int(steps), dtype=dtype or np.float64), requires_grad)


def arange(start: float, end: float | None = None, step: float = 1, dtype: Any = None,
           requires_grad: bool = False) -> Tensor:
    """Values from ``start`` up to (not including) ``end`` in steps of ``step``."""
    if end is None:
        start, end = 0, start
    return _leaf(np.arange(start, end, step, dtype=as_array(0.0, dtype).dtype), requires_grad)


def meshgrid(*tensors: Any, indexing: str = "ij") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors; differentiable (gradients sum back to the axes)."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    ts = [t if isinstance(t, Tensor) else tensor(t) for t in tensors]
    n = len(ts)
    sizes = [t.numel() for t in ts]
    order = list(range(n))
    if indexing == "xy" and n >= 2:
        order[0], order[1] = 1, 0
    shape = tuple(sizes[i] for i in order)
    out = []
    for i, t in enumerate(ts):
        view = [1] * n
        view[order.index(i)] = sizes[i]
        out.append(ops.broadcast_to(ops.reshape(t, tuple(view)), shape))
    return tuple(out)
