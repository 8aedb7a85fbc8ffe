"""Reverse mode: the iterative graph walk behind ``backward`` and ``autograd.grad``.

Nodes carry a creation sequence number, and every consumer is created after its
producers, so processing the reachable nodes in decreasing sequence order is a valid
reverse topological order (``core.collect_nodes``). No recursion: a chain of 100,000
operations is fine.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcli.engine import core
from gradcli.engine.core import AccumulateGrad, Tensor, as_array, raw
from gradcli.engine.grad_mode import batch_ndim, forward_level, quiet, set_grad_enabled
from gradcli.engine.primitive import Ctx, Node, collect_nodes
from gradcli.engine.rules import broadcast_to

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward."
)


def _initial_gradient(out: Tensor, grad: Any, tensor_mode: bool) -> Any:
    if grad is None:
        if out.arr.size != 1:
            raise RuntimeError(
                "grad can be implicitly created only for scalar outputs\n"
                f"hint: the output has shape {tuple(out.shape)}; either reduce it to a scalar "
                f"first (e.g. y.sum().backward()) or pass gradient= a tensor of shape "
                f"{tuple(out.shape)} (e.g. y.backward(gradient=gc.ones_like(y)))"
            )
        g = np.ones_like(out.arr)
    elif batch_ndim() and isinstance(grad, np.generic) and grad.dtype == out.dtype:
        g = grad  # a per-point seed (kernels' scalar 1.0): kept as given, it broadcasts
    else:
        g = grad if isinstance(grad, Tensor) and tensor_mode else as_array(grad, out.dtype)
        shape = np.shape(raw(g))
        if shape != out.shape and not (batch_ndim() and _broadcasts(shape, out.shape)):
            raise RuntimeError(
                f"Mismatch in shape: grad_output[0] has a shape of torch.Size({list(shape)}) "
                f"and output[0] has a shape of torch.Size({list(out.shape)})."
            )
    if tensor_mode and not isinstance(g, Tensor):
        g = Tensor._make(np.array(g))
    return g


def _broadcasts(shape: tuple, target: tuple) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def run_backward(
    outputs: Sequence[Tensor],
    grad_outputs: Sequence[Any] | None,
    retain_graph: bool | None,
    create_graph: bool,
    capture: Sequence[Tensor] | None = None,
) -> list[Any] | None:
    """Propagate cotangents from ``outputs`` to the leaves.

    With ``capture`` (autograd.grad), the gradients of those tensors are returned and no
    ``.grad`` is touched; otherwise leaves accumulate into ``.grad``.
    """
    if retain_graph is None:
        retain_graph = create_graph
    tensor_mode = create_graph or forward_level() > 0
    pending: dict[int, Any] = {}
    roots: list[Node] = []
    captured: dict[int, Any] = {}
    want = {id(t.grad_fn) if t.grad_fn is not None else id(t): i
            for i, t in enumerate(capture or ())}
    for i, out in enumerate(outputs):
        if not out.requires_grad:
            raise RuntimeError(
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        g = _initial_gradient(out, None if grad_outputs is None else grad_outputs[i],
                              tensor_mode)
        if out.grad_fn is None:
            _deliver_leaf(out, g, capture is not None, want, captured, create_graph)
            continue
        key = id(out.grad_fn)
        pending[key] = g if key not in pending else pending[key] + g
        roots.append(out.grad_fn)
    nodes = collect_nodes(roots)[::-1]  # consumers before producers
    with set_grad_enabled(create_graph), quiet():
        for node in nodes:
            g = pending.pop(id(node), None)
            if g is None:
                continue
            g = _run_hooks(node.pre_hooks, g, tensor_mode)
            if node.retained is not None and capture is None:
                kept = node.retained()
                if kept is not None:
                    _accumulate(kept, g, create_graph)
            if id(node) in want:
                captured[id(node)] = g
            if node.freed:
                raise RuntimeError(_FREED)
            grads = _node_vjp(node, g, tensor_mode)
            for edge, gi in zip(node.edges, grads, strict=True):
                if edge is None or gi is None:
                    continue
                if isinstance(edge, AccumulateGrad):
                    _deliver_leaf(edge.variable, gi, capture is not None, want, captured,
                                  create_graph)
                else:
                    key = id(edge)
                    pending[key] = gi if key not in pending else pending[key] + gi
    if not retain_graph:
        for node in nodes:
            if node.prim.saves:
                node.freed = True
                node.saved = None
    if capture is None:
        return None
    return [captured.get(id(t.grad_fn) if t.grad_fn is not None else id(t)) for t in capture]


def _node_vjp(node: Node, g: Any, tensor_mode: bool) -> list[Any]:
    saved = node.saved
    out = node.out_ref()
    if tensor_mode:
        xs = saved
        if out is None:
            out = Tensor._make(node.prim.fwd(*[raw(a) for a in saved], **node.params))
    else:
        xs = [raw(a) for a in saved]
        out = out.arr if out is not None else node.prim.fwd(*xs, **node.params)
    needs = tuple(e is not None for e in node.edges)
    return node.prim.vjp(Ctx(xs, out, node.params, node.shapes, needs), g)


def _run_hooks(hooks: list | None, g: Any, tensor_mode: bool) -> Any:
    if not hooks:
        return g
    for hook in list(hooks):
        gt = g if isinstance(g, Tensor) else Tensor._make(np.asarray(g))
        new = hook(gt)
        if new is not None:
            g = new if tensor_mode else as_array(new)
    return g


def _deliver_leaf(leaf: Tensor, g: Any, capturing: bool, want: dict, captured: dict,
                  create_graph: bool) -> None:
    if leaf._acc is not None:
        g = _run_hooks(leaf._acc.hooks, g, isinstance(g, Tensor))
    if capturing:
        if id(leaf) in want:
            key = id(leaf)
            captured[key] = g if key not in captured else captured[key] + g
        return
    _accumulate(leaf, g, create_graph)


def _accumulate(t: Tensor, g: Any, create_graph: bool) -> None:
    """Add ``g`` into ``t.grad`` (in place, as PyTorch does, unless building a graph)."""
    if isinstance(g, Tensor):
        if g.shape != t.shape:
            g = Tensor._make(np.broadcast_to(g.arr, t.shape))
        if t.grad is None:
            t.grad = g if create_graph else Tensor._make(g.arr.astype(t.dtype, copy=True))
        else:
            t.grad = t.grad + g if create_graph else _add_inplace(t.grad, g.arr)
        return
    arr = np.broadcast_to(np.asarray(g), t.shape)
    if t.grad is None:
        t.grad = Tensor._make(arr.astype(t.dtype, copy=True))
    else:
        _add_inplace(t.grad, arr)


def _add_inplace(grad: Tensor, arr: np.ndarray) -> Tensor:
    if grad.requires_grad:
        return Tensor._make(grad.arr + arr)
    grad.arr += arr
    return grad


def backward(
    tensors: Sequence[Tensor],
    grad_tensors: Sequence[Any] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: Any = None,
) -> None:
    """``torch.autograd.backward``: accumulate VJPs into the leaves' ``.grad``."""
    if inputs is not None:
        targets = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        grads = run_backward(tensors, grad_tensors, retain_graph, create_graph, targets)
        for t, g in zip(targets, grads or [], strict=True):
            if g is not None:
                _accumulate(t, g, create_graph)
        return
    run_backward(tensors, grad_tensors, retain_graph, create_graph)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
    """``torch.autograd.grad``: the VJP of ``outputs`` w.r.t. ``inputs``, leaving ``.grad``
    untouched. Unreachable inputs raise unless ``allow_unused`` (then their entry is None)."""
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    if grad_outputs is not None and not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs]
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    got = run_backward(outs, grad_outputs, retain_graph, create_graph, ins) or []
    result: list[Tensor | None] = []
    for i, g in enumerate(got):
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"One of the differentiated Tensors (input {i}) appears to not have been "
                    "used in the graph. Set allow_unused=True if this is the desired behavior."
                )
            result.append(None)
            continue
        if not isinstance(g, Tensor):
            g = Tensor._make(np.broadcast_to(g, ins[i].shape).astype(ins[i].dtype))
        elif g.shape != ins[i].shape:
            g = broadcast_to(g, shape=ins[i].shape)
        result.append(g)
    return tuple(result)

core.install(sweep=backward)  # Tensor.backward runs this sweep
