"""Divergence and curl of a recorded vector field, by reverse mode.

The field's components F[i] and the variables x[j] they pair with are Tensors of one
recorded pass. One reverse sweep per component gives the entries of the Jacobian that
component contributes, so these are the very numbers ``jacobian`` computes, with its
conventions at singular points. With ``create_graph`` the results are recorded too, so
they can be differentiated again: div(curl F) and curl(grad f) are compositions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcli.engine.backward import run_backward
from gradcli.engine.core import Tensor

__all__ = ["divergence", "divergence_of", "curl", "curl_of", "partials"]


def _live(v: Any) -> bool:
    return isinstance(v, Tensor) and v.requires_grad


def partials(output: Any, wrt: Sequence[Tensor], seed: Any = None,
             create_graph: bool = False) -> list[Any]:
    """∂output/∂w for each w of ``wrt`` by one reverse sweep (None where it does not
    depend on w). ``seed`` is the cotangent (default: ones shaped like the output, so
    independent points each get their own derivative)."""
    if not _live(output):
        return [None] * len(wrt)
    g = np.ones_like(output.arr) if seed is None else seed
    return list(run_backward([output], [g], True, create_graph, list(wrt)))


def _sum(terms: Sequence[Any]) -> Any:
    total = None
    for t in terms:
        if t is not None:
            total = t if total is None else total + t
    return total


def _minus(a: Any, b: Any) -> Any:
    if b is None:
        return a
    return -b if a is None else a - b


def divergence(field: Sequence[Any], wrt: Sequence[Tensor], seed: Any = None,
               create_graph: bool = False) -> Any:
    """Σᵢ ∂F[i]/∂x[i] (None when identically zero): one reverse sweep per component."""
    if len(field) != len(wrt):
        raise ValueError(f"divergence: {len(field)} components but {len(wrt)} variables")
    return divergence_of(lambda i, j: partials(field[i], [wrt[j]], seed, create_graph)[0],
                         len(field))


def divergence_of(d: Callable[[int, int], Any], n: int) -> Any:
    """The divergence from the Jacobian's entries ``d(i, j)`` = ∂F[i]/∂x[j] (None = 0) of
    a field of ``n`` components: the one place that says which entries it sums (the
    ``div`` computation and :func:`divergence` both use it)."""
    return _sum([d(i, i) for i in range(n)])


def curl(field: Sequence[Any], wrt: Sequence[Tensor], seed: Any = None,
         create_graph: bool = False) -> list[Any]:
    """[∂Q/∂x - ∂P/∂y] for F = [P, Q]; [∂R/∂y - ∂Q/∂z, ∂P/∂z - ∂R/∂x, ∂Q/∂x - ∂P/∂y]
    for [P, Q, R] (None where identically zero): one reverse sweep per component."""
    if len(field) != len(wrt) or len(field) not in (2, 3):
        raise ValueError("curl: give 2 or 3 components and as many variables, "
                         f"got {len(field)} and {len(wrt)}")
    rows = [partials(f, wrt, seed, create_graph) for f in field]
    return curl_of(lambda i, j: rows[i][j], len(field))


def curl_of(d: Callable[[int, int], Any], n: int) -> list[Any]:
    """The curl from the Jacobian's entries ``d(i, j)`` = ∂F[i]/∂x[j] (None = 0) of a
    field of ``n`` = 2 or 3 components: the one place that says which entries it takes."""
    if n == 2:
        return [_minus(d(1, 0), d(0, 1))]
    return [_minus(d(2, 1), d(1, 2)), _minus(d(0, 2), d(2, 0)), _minus(d(1, 0), d(0, 1))]
