"""Deferred products: forward-mode tangents kept as a list of factors until needed.

Why: on a grid, a tangent is often a small array (one axis) times a chain of full-size
partials. Pushed through ``exp(u) * v``, the tangent ``(e * t_u) * v + e * t_v`` costs four
full-size passes when done eagerly; kept as factors it is ``e * (t_u * v + t_v)``: the
common factor ``e`` is pulled out of the sum and the small factors are multiplied first,
so one full-size pass remains. The rules are unchanged: they compute ``t * d`` and
``total + term`` as before, and this type records instead of computing.

Only the tangent sweep of ``Linearized`` (plain numpy, no higher-order graph) uses it, and
only through elementwise rules; every other consumer gets ``value()``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_MAX_FACTORS = 6  # past this, multiply out: long chains gain nothing from waiting


def _size(a: Any) -> int:
    return int(np.size(a))


def _is_scalar(a: Any) -> bool:
    return np.ndim(a) == 0


def _is_one(a: Any) -> bool:
    return isinstance(a, (int, float, np.floating)) and a == 1


class Product:
    """The product of ``factors`` (arrays or scalars), not yet computed."""

    __slots__ = ("factors",)

    def __init__(self, factors: tuple) -> None:
        self.factors = factors

    @staticmethod
    def of(value: Any) -> Product:
        return value if isinstance(value, Product) else Product((value,))

    def value(self) -> Any:
        """Multiply out, smallest factors first, so intermediates stay small."""
        ordered = sorted(self.factors, key=_size)
        result = ordered[0]
        for f in ordered[1:]:
            result = result * f
        return result

    def __mul__(self, other: Any) -> Any:
        if isinstance(other, Product):
            factors = self.factors + other.factors
        elif _is_one(other):
            return self
        else:
            factors = self.factors + (other,)
        return Product(factors) if len(factors) <= _MAX_FACTORS else Product(
            (Product(factors).value(),))

    __rmul__ = __mul__

    def __add__(self, other: Any) -> Any:
        other = Product.of(other)
        # pull out the factors both terms share (the same array object, e.g. exp's output):
        # e*a + e*b = e*(a + b) never takes more full-size passes, often far fewer
        rest_a, rest_b, common = list(self.factors), list(other.factors), []
        i = 0
        while i < len(rest_a):
            j = next((j for j, g in enumerate(rest_b) if g is rest_a[i]), None)
            if j is None or _is_scalar(rest_a[i]):
                i += 1
                continue
            common.append(rest_a.pop(i))
            del rest_b[j]
        if not common:
            return self.value() + other.value()
        inner = Product(tuple(rest_a) or (1.0,)).value() + Product(tuple(rest_b) or (1.0,)).value()
        return Product((*common, inner))

    __radd__ = __add__


def settle(value: Any) -> Any:
    """A plain array or scalar for anything that may be a deferred product."""
    return value.value() if isinstance(value, Product) else value
