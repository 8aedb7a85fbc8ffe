"""Autograd semantics mirroring PyTorch: leaves, retain_grad, hooks, grad modes, detach,
autograd.grad, accumulation, dtype, indexing/views, broadcasting and very deep graphs."""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli as gc


def test_non_leaf_grad_is_none_unless_retained():
    x = gc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    z = gc.sin(y)
    z.sum().backward()
    assert x.is_leaf and not y.is_leaf and not z.is_leaf
    assert y.grad is None and z.grad is None
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0, 4.0, 9.0]) * 2 * np.array([1, 2, 3]))

    x = gc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x * x
    y.retain_grad()
    assert y.retains_grad
    gc.sin(y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), np.cos([1.0, 4.0, 9.0]), rtol=1e-15)


def test_hooks_see_and_replace_gradients():
    seen = []
    x = gc.tensor([1.0, -2.0], requires_grad=True)
    y = x * 3.0
    y.register_hook(lambda g: seen.append(g.tolist()))
    handle = x.register_hook(lambda g: g * 2)
    (y * y).sum().backward()
    # dy²/dy = 2y = [6, -12]; dx = 3·that = [18, -36], doubled by the leaf hook
    assert seen == [[6.0, -12.0]]
    assert x.grad.tolist() == [36.0, -72.0]
    handle.remove()
    x.grad = None
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, -4.0]


def test_non_leaf_hook_replaces_gradient_upstream():
    x = gc.tensor(2.0, requires_grad=True)
    y = x ** 3
    y.register_hook(lambda g: g * 10)
    (y + 1).backward()
    assert x.grad.item() == 120.0  # 10 · 3x²


def test_register_hook_requires_grad():
    with pytest.raises(RuntimeError):
        gc.tensor(1.0).register_hook(lambda g: g)


def test_no_grad_context_and_decorator():
    x = gc.tensor(2.0, requires_grad=True)
    with gc.no_grad():
        y = x * x
        assert not gc.is_grad_enabled()
        with gc.enable_grad():
            w = x * x
    assert gc.is_grad_enabled()
    assert y.requires_grad is False and y.grad_fn is None and y.item() == 4.0
    assert w.requires_grad and w.grad_fn is not None
    w.backward()
    assert x.grad.item() == 4.0

    @gc.no_grad()
    def f(t):
        return t * 3

    @gc.enable_grad()
    def g(t):
        return t * 3

    z = f(x)
    assert z.requires_grad is False and z.grad_fn is None and z.item() == 6.0
    with gc.no_grad():
        u = g(x)
    assert u.requires_grad and u.grad_fn.name() == "MulBackward0"
    assert gc.is_grad_enabled()


def test_no_grad_restores_mode_after_exception():
    with pytest.raises(ValueError), gc.no_grad():
        raise ValueError("boom")
    assert gc.is_grad_enabled()


def test_detach():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    d = y.detach()
    assert d.requires_grad is False and d.grad_fn is None and d.is_leaf
    assert d.tolist() == [1.0, 4.0]
    (d * x).sum().backward()  # d is a constant: d/dx (d·x) = d
    assert x.grad.tolist() == [1.0, 4.0]


def test_is_leaf_and_requires_grad_():
    x = gc.tensor(1.0)
    assert x.is_leaf and not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    y = x * 2
    assert not y.is_leaf
    with pytest.raises(RuntimeError, match="leaf variables"):
        y.requires_grad_(False)
    c = gc.tensor(1.0) * 2  # computed from tensors not requiring grad: still a leaf
    assert c.is_leaf and c.grad_fn is None


def test_inplace_on_leaf_requiring_grad_raises():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        x.zero_()
    with gc.no_grad():
        x[0] = 5.0
    assert x.tolist() == [5.0, 2.0]


def test_autograd_grad_create_graph_grad_of_grad():
    x = gc.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x ** 3).sum()
    (g,) = gc.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * np.array([0.5, -1.0, 2.0]) ** 2)
    (h,) = gc.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(h.detach().numpy(), [3.0, -6.0, 12.0])  # 6x
    (t,) = gc.autograd.grad(h.sum(), x)
    np.testing.assert_allclose(t.numpy(), [6.0, 6.0, 6.0])
    assert x.grad is None  # autograd.grad never touches .grad


def test_backward_create_graph_then_differentiate_grad():
    x = gc.tensor(1.5, requires_grad=True)
    (gc.sin(x) * x).backward(create_graph=True)
    g = x.grad  # sin x + x cos x, itself differentiable
    assert g.requires_grad
    assert math.isclose(g.item(), math.sin(1.5) + 1.5 * math.cos(1.5), rel_tol=1e-15)
    (h,) = gc.autograd.grad(g, x)
    assert math.isclose(h.item(), 2 * math.cos(1.5) - 1.5 * math.sin(1.5), rel_tol=1e-14)


def test_autograd_grad_allow_unused_and_grad_outputs():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    z = gc.tensor(3.0, requires_grad=True)
    y = x * x
    with pytest.raises(RuntimeError, match="allow_unused=True"):
        gc.autograd.grad(y.sum(), [x, z], retain_graph=True)
    gx, gz = gc.autograd.grad(y.sum(), [x, z], allow_unused=True, retain_graph=True)
    assert gx.tolist() == [2.0, 4.0] and gz is None
    (gv,) = gc.autograd.grad(y, x, grad_outputs=gc.tensor([10.0, -1.0]))
    assert gv.tolist() == [20.0, -4.0]
    with pytest.raises(RuntimeError, match="does not require grad"):
        gc.autograd.grad(y, gc.tensor(1.0))


def test_autograd_grad_wrt_intermediate():
    x = gc.tensor(2.0, requires_grad=True)
    m = x ** 2
    y = gc.sin(m)
    (gm,) = gc.autograd.grad(y, m)
    assert math.isclose(gm.item(), math.cos(4.0), rel_tol=1e-15)


def test_node_used_twice():
    a = gc.tensor(1.5, requires_grad=True)
    b = a + a
    c = b + b
    c.backward()
    assert a.grad.item() == 4.0
    a = gc.tensor(1.5, requires_grad=True)
    b = a * a
    c = b * b
    c.backward()
    assert a.grad.item() == 4 * 1.5 ** 3


def test_diamond_graph():
    x = gc.tensor(0.7, requires_grad=True)
    u = gc.sin(x)
    v = u * u + gc.exp(u)  # u used by two consumers
    v.backward()
    s, c = math.sin(0.7), math.cos(0.7)
    assert math.isclose(x.grad.item(), (2 * s + math.exp(s)) * c, rel_tol=1e-15)


def test_accumulation_across_backward_calls():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (3 * x).sum().backward()
    assert x.grad.tolist() == [5.0, 7.0]
    g = x.grad
    (x * 0 + x).sum().backward()
    assert x.grad is g  # accumulated in place, as PyTorch does
    assert g.tolist() == [6.0, 8.0]


def test_float32_keeps_float32():
    x = gc.tensor([1.0, 2.0], requires_grad=True, dtype=gc.float32)
    y = (gc.sin(x) * 2.0 + x ** 2).sum()
    assert y.dtype == np.float32
    y.backward()
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos([1.0, 2.0]) + 2 * np.array([1, 2.0]),
                               rtol=1e-6)
    (g,) = gc.autograd.grad((x * x).sum(), x)
    assert g.dtype == np.float32


def test_indexing_and_slicing_gradients():
    x = gc.arange(5.0, requires_grad=True)
    (x[1:3] * gc.tensor([10.0, 20.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 10.0, 20.0, 0.0, 0.0]
    x.grad = None
    x[[0, 0, 2]].sum().backward()  # the repeated index accumulates
    assert x.grad.tolist() == [2.0, 0.0, 1.0, 0.0, 0.0]
    x.grad = None
    (x[-1] ** 2).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 8.0]
    x.grad = None
    (x[gc.tensor([4, 4, 1])] * gc.tensor([1.0, 2.0, 3.0])).sum().backward()
    assert x.grad.tolist() == [0.0, 3.0, 0.0, 0.0, 3.0]


def test_transpose_view_reshape_gradients():
    x = gc.arange(6.0).view(2, 3).requires_grad_()
    w = gc.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    (x.T * w).sum().backward()
    assert x.grad.tolist() == [[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]
    x.grad = None
    (x.view(3, 2) * w).sum().backward()
    assert x.grad.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    x.grad = None
    (x.reshape(-1) ** 2).sum().backward()
    assert x.grad.tolist() == (2 * np.arange(6.0).reshape(2, 3)).tolist()


def test_broadcasting_reduces_gradients():
    a = gc.tensor([[1.0], [2.0], [3.0]], requires_grad=True)  # (3, 1)
    b = gc.tensor([1.0, 10.0, 100.0, 1000.0], requires_grad=True)  # (4,)
    c = a * b + a
    assert c.shape == (3, 4)
    c.sum().backward()
    assert a.grad.shape == (3, 1) and b.grad.shape == (4,)
    assert a.grad.tolist() == [[1115.0], [1115.0], [1115.0]]  # Σb + 4
    assert b.grad.tolist() == [6.0, 6.0, 6.0, 6.0]  # Σa
    s = gc.tensor(2.0, requires_grad=True)  # 0-d against a vector
    (s * b).sum().backward()
    assert s.grad.shape == () and s.grad.item() == 1111.0


def test_gradient_as_numpy_and_list():
    x = gc.tensor([1.0, 2.0], requires_grad=True)
    y = x * x
    y.backward(np.array([1.0, 0.5]), retain_graph=True)
    assert x.grad.tolist() == [2.0, 2.0]
    y.backward([1.0, 1.0])
    assert x.grad.tolist() == [4.0, 6.0]


def test_hundred_thousand_operation_chain():
    n = 100_000
    x = gc.tensor(1.0, requires_grad=True)
    h = x
    for _ in range(n):
        h = h * 1.0001
    h.backward()
    # d/dx (1.0001ⁿ x) = 1.0001ⁿ; n roundings of ~1.1e-16 each bound the relative error by
    # ~n·ulp ≈ 2e-11
    assert math.isclose(h.item(), 1.0001 ** n, rel_tol=1e-9)
    assert math.isclose(x.grad.item(), 1.0001 ** n, rel_tol=1e-9)


def test_sin_chain_matches_hand_chain_rule():
    n = 100_000
    x0 = 1.0
    x = gc.tensor(x0, requires_grad=True)
    h = x
    for _ in range(n):
        h = gc.sin(h)
    h.backward()
    v, d = x0, 1.0  # the chain rule by hand, in plain floats
    for _ in range(n):
        d *= math.cos(v)
        v = math.sin(v)
    assert math.isclose(h.item(), v, rel_tol=1e-12)
    assert math.isclose(x.grad.item(), d, rel_tol=1e-9)


def test_sum_of_hundred_thousand_terms():
    n = 100_000
    x = gc.tensor(2.0, requires_grad=True)
    total = gc.tensor(0.0)
    for _ in range(n):
        total = total + x
    total.backward()
    assert x.grad.item() == n  # exact: integers below 2**53
    assert total.item() == 2.0 * n


def test_indexing_with_comparison_result_is_a_mask():
    x = gc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    sel = x[x > 1.5]
    assert sel.tolist() == [2.0, 3.0]
    sel.sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0]


def test_set_grad_enabled_as_call_context_and_decorator():
    """As torch.set_grad_enabled: it switches at once as a plain call, restores the
    previous mode on leaving a with block, and applies per call as a decorator."""
    x = gc.tensor(2.0, requires_grad=True)
    with gc.set_grad_enabled(False):
        assert not gc.is_grad_enabled() and not (x * x).requires_grad
        with gc.set_grad_enabled(True):
            assert (x * x).requires_grad
        assert not gc.is_grad_enabled()
    assert gc.is_grad_enabled()
    gc.set_grad_enabled(False)
    try:
        assert not gc.is_grad_enabled() and not (x * x).requires_grad
    finally:
        gc.set_grad_enabled(True)
    assert gc.is_grad_enabled()

    @gc.set_grad_enabled(False)
    def square(t):
        return t * t

    assert gc.is_grad_enabled()  # decorating does not switch the mode
    assert not square(x).requires_grad and gc.is_grad_enabled()


def test_tensor_arithmetic_is_defined_on_tensor():
    """Tensor's operators belong to the class (no module patches them in later), and the
    table's rules, written with them, work when the table is the first thing imported
    (checked in a fresh interpreter)."""
    import json
    import subprocess
    import sys

    for op in ("__add__", "__rsub__", "__mul__", "__truediv__", "__pow__", "__neg__",
               "__matmul__", "__lt__", "__iadd__", "__hash__", "sum", "reshape"):
        assert op in gc.Tensor.__dict__, op
    code = ("import json\n"
            "from gradcli.engine import rules as R\n"
            "from gradcli.engine.core import Tensor\n"
            "t = Tensor([1.0, 2.0], requires_grad=True)\n"
            "(R.sin(t) * t ** 2 - 1 / t).sum().backward()\n"
            "print(json.dumps([t.grad.tolist(), t.detach().sin().tolist()]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    grads, sines = json.loads(out)
    assert sines == [math.sin(1.0), math.sin(2.0)]
    assert grads == pytest.approx([math.cos(v) * v * v + 2 * v * math.sin(v) + 1 / v ** 2
                                   for v in (1.0, 2.0)], rel=1e-15)
