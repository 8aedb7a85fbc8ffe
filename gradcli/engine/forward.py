"""Forward mode: tangents pushed through the JVP rules.

Two ways to run it, both from the same rule table:

* ``dual_jvp`` — dual numbers: inputs carry a tangent and every operation computes its
  output tangent as it runs (one forward sweep, no graph needed).
* ``Linearized`` — record the forward pass once, then replay only the tangent sweep for
  as many directions as wanted. A tangent of ``None`` is a symbolic zero: work that cannot
  reach an output is skipped, and a tangent seeded as a scalar keeps the small shape of
  its grid axis until it meets another variable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcli.engine.core import Tensor, as_array, raw
from gradcli.engine.grad_mode import enable_grad, forward_ad, no_grad, quiet, set_grad_enabled
from gradcli.engine.primitive import Ctx, Node, collect_nodes


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
    with forward_ad(), no_grad(), quiet():
        out = fn(*inputs)
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


def _key(t: Tensor) -> int:
    return id(t.grad_fn) if t.grad_fn is not None else id(t)


class Linearized:
    """A recorded forward pass from ``leaves`` to ``outputs`` that replays tangent sweeps."""

    def __init__(self, leaves: Sequence[Tensor], outputs: Sequence[Tensor]) -> None:
        self.leaves = list(leaves)
        self.outputs = list(outputs)
        self.nodes = graph_nodes(self.outputs)

    def jvp(self, tangents: Sequence[Any], create_graph: bool = False) -> list[Any]:
        """Output tangents for the given leaf tangents (``None`` = zero direction).

        Results are arrays (or Tensors recorded on the graph when ``create_graph``), possibly
        of a smaller broadcastable shape than the output, or None when identically zero.
        """
        tan: dict[int, Any] = {}
        for leaf, t in zip(self.leaves, tangents, strict=True):
            if t is not None:
                tan[id(leaf)] = t
        with set_grad_enabled(create_graph), quiet():
            for node in self.nodes:
                saved = node.saved
                if saved is None:
                    raise RuntimeError("linearize: the graph's saved values were freed")
                ts = [tan.get(_key(a)) if isinstance(a, Tensor) else None for a in saved]
                if all(t is None for t in ts):
                    continue
                out = node.out_ref()
                if create_graph:
                    xs: Any = saved
                else:
                    xs, out = [raw(a) for a in saved], raw(out)
                res = node.prim.jvp(Ctx(xs, out, node.params, node.shapes), ts)
                if res is not None:
                    tan[id(node)] = res
        return [tan.get(_key(o)) for o in self.outputs]


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
        full = [_full_tangent(raw(g), o.arr) for g, o in zip(got, outs, strict=True)]
        return full[0] if isinstance(out, Tensor) else type(out)(full)

    return _map(out, lambda o: o.detach()), jvp_fn
