"""A compile-time value (:class:`Slot`) and a value's component shape: what the compiler
(``compile.py``) and its array steps (``arrays.py``) pass between them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Shape", "Slot"]

#: a value's component shape: () for a scalar, (n,) for a vector, (r, c) for a matrix
Shape = tuple[int, ...]


@dataclass
class Slot:
    """A compile-time value: a folded constant, or the register a step will fill.

    ``array`` marks the one-array form of a vector or matrix (see ``compile.py``'s
    docstring); on a scalar it marks a scalar given unit component axes to meet an
    array."""

    shape: Shape
    const: Any = None
    reg: int = -1
    deps: frozenset[str] = frozenset()  # the variables this value depends on
    call: tuple[str, Slot] | None = None  # a function applied to one argument: (name, arg)
    array: bool = False
