"""Forward mode: tangents pushed through the JVP rules.

Two ways to run it, both from the same rule table:

* ``dual_jvp`` — dual numbers: inputs carry a tangent and every operation computes its
  output tangent as it runs (one forward sweep, no graph needed).
* ``Linearized`` — record the forward pass once, then replay only the tangent sweep for
  as many directions as wanted. Partial derivatives (cos x for sin x, ...) are cached on
  the nodes, so Jacobian and Hessian sweeps share one forward pass. A tangent of ``None``
  is a symbolic zero: work that cannot reach an output is skipped, which keeps tangents
  of broadcast grid axes at their small shapes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .core import Node, Tensor, _quiet, as_array, collect_nodes
from .grad_mode import _push_forward, enable_grad, no_grad
from .products import Product, settle


def dual_jvp(fn: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any]) -> tuple:
    """Evaluate ``fn`` on dual numbers; return (outputs, output tangents)."""
    inputs = []
    for x, u in zip(primals, tangents, strict=True):
        t = Tensor._make(as_array(x))
        if u is not None:
            ut = as_array(u, t.dtype)
            if ut.shape != t.shape:
                raise RuntimeError(
                    f"jvp: tangent of shape {ut.shape} does not match primal of shape {t.shape}"
                )
            t.tangent = ut
        inputs.append(t)
    _push_forward(1)
    try:
        with no_grad(), _quiet():
            out = fn(*inputs)
    finally:
        _push_forward(-1)
    return out, _map(out, lambda o: _full_tangent(o.tangent, o.arr))


def _full_tangent(t: Any, like: np.ndarray) -> np.ndarray:
    if t is None:
        return np.zeros_like(like)
    return np.broadcast_to(np.asarray(t, dtype=like.dtype), like.shape).copy()


def _map(out: Any, f: Callable[[Tensor], Any]) -> Any:
    if isinstance(out, Tensor):
        return f(out)
    return type(out)(_map(o, f) for o in out)


def graph_nodes(outputs: Sequence[Tensor]) -> list[Node]:
    """Nodes reachable from ``outputs``, in creation (topological) order."""
    return collect_nodes(o.grad_fn for o in outputs if o.grad_fn is not None)


class Linearized:
    """A recorded forward pass from ``leaves`` to ``outputs`` that replays tangent sweeps."""

    def __init__(self, leaves: Sequence[Tensor], outputs: Sequence[Tensor]) -> None:
        self.leaves = list(leaves)
        self.outputs = list(outputs)
        self.nodes = graph_nodes(self.outputs)
        for node in self.nodes:
            if node.cache is None:
                node.cache = {}

    def jvp(self, tangents: Sequence[Any], create_graph: bool = False) -> list[Any]:
        """Output tangents for the given leaf tangents (``None`` = zero direction).

        Results are arrays (or Tensors recorded on the graph when ``create_graph``), possibly
        of a smaller broadcastable shape than the output, or None when identically zero.
        """
        tan: dict[int, Any] = {}
        for leaf, t in zip(self.leaves, tangents, strict=True):
            if t is not None:
                tan[id(leaf)] = t
        mode = enable_grad() if create_graph else no_grad()
        with mode, _quiet():
            for node in self.nodes:
                saved = node.saved
                if saved is None:
                    raise RuntimeError("linearize: the graph's saved values were freed")
                ts = [tan.get(id(a.grad_fn) if a.grad_fn is not None else id(a))
                      if isinstance(a, Tensor) else None for a in saved]
                if all(t is None for t in ts):
                    continue
                if create_graph:
                    xs, out = saved, node.out_ref()
                    cache = None
                else:
                    xs = [a.arr if isinstance(a, Tensor) else a for a in saved]
                    out, cache = node.out_ref().arr, node.cache
                    # elementwise rules only multiply and add: let them defer (products.py)
                    defer = node.prim.partials is not None
                    ts = [None if t is None else Product.of(t) if defer else settle(t)
                          for t in ts]
                res = node.prim.jvp(ts, out, xs, node.params, cache)
                if res is not None:
                    tan[id(node)] = res
            # settled inside _quiet(): deferred products may meet inf * 0 here
            return [settle(tan.get(id(o.grad_fn) if o.grad_fn is not None else id(o)))
                    for o in self.outputs]


def linearize(fn: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """Run ``fn`` once and return (outputs, jvp_fn); ``jvp_fn(*tangents)`` replays only the
    tangent sweep, reusing the recorded forward pass (as ``jax.linearize``)."""
    leaves = [Tensor(x).requires_grad_() if not isinstance(x, Tensor)
              else Tensor._make(x.arr).requires_grad_() for x in primals]
    with enable_grad():
        out = fn(*leaves)
    outs = [out] if isinstance(out, Tensor) else list(out)
    lin = Linearized(leaves, outs)

    def jvp_fn(*tangents: Any) -> Any:
        got = lin.jvp([None if t is None else as_array(t) for t in tangents])
        full = [_full_tangent(g.arr if isinstance(g, Tensor) else g, o.arr)
                for g, o in zip(got, outs, strict=True)]
        return full[0] if isinstance(out, Tensor) else type(out)(full)

    return _map(out, lambda o: o.detach()), jvp_fn
