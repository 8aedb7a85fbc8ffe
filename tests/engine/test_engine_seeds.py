"""The seeds' worked examples (PyTorch notebooks in /work/shared/seeds), with the values
they print, replayed on gradcli's engine."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import gradcli as gc


def test_square_at_one():
    x = gc.tensor(1.0, requires_grad=True)
    y = x ** 2
    y.backward()
    assert x.grad.shape == ()
    assert x.grad.item() == 2.0
    assert repr(x.grad.data) == "tensor(2.)"


@pytest.mark.parametrize("how", ["ones_like", "sum"])
def test_square_at_many_points(how):
    x = gc.linspace(-2, 2, 5, requires_grad=True)
    if how == "ones_like":
        y = x ** 2
        y.backward(gc.ones_like(y))
    else:
        (x ** 2).sum().backward()
    assert x.grad.tolist() == [-4.0, -2.0, 0.0, 2.0, 4.0]
    assert repr(x.grad.data) == "tensor([-4., -2.,  0.,  2.,  4.])"


def test_weighted_squares_gradient():
    x = gc.tensor([-1.0, 2.0], requires_grad=True)
    w = gc.tensor([3.0, 5.0])
    (x * x * w).sum().backward()
    assert x.grad.tolist() == [-6.0, 20.0]


def test_weighted_squares_at_many_points():
    x = gc.arange(6.0).view(3, 2).requires_grad_(True)
    w = gc.tensor([-1, 1])
    y = (x * x * w).sum(1)
    assert y.tolist() == [1.0, 5.0, 9.0]
    y.backward(gc.ones_like(y))
    assert x.grad.tolist() == [[-0.0, 2.0], [-4.0, 6.0], [-8.0, 10.0]]
    assert math.copysign(1.0, x.grad.tolist()[0][0]) == -1.0  # the seed prints -0.


def test_vector_valued_univariate_one_hot():
    x = gc.tensor(1.0, requires_grad=True)
    y = gc.stack([-x ** 3, 5 * x])
    y.backward(gc.tensor([1.0, 0.0]), retain_graph=True)
    assert x.grad.item() == -3.0
    x.grad.zero_()
    y.backward(gc.tensor([0.0, 1.0]))
    assert x.grad.item() == 5.0


def _one_hot(shape, i):
    ranges = [range(n) for n in shape]
    return gc.tensor([1.0 if idx[0] == i else 0.0
                      for idx in itertools.product(*ranges)]).view(*shape)


def test_vector_valued_univariate_many_points():
    x = gc.arange(3, dtype=float, requires_grad=True)
    y = gc.stack([-x ** 3, 5 * x])
    y.backward(_one_hot(y.shape, 0), retain_graph=True)
    assert x.grad.tolist() == [0.0, -3.0, -12.0]
    x.grad.zero_()
    y.backward(_one_hot(y.shape, 1))
    assert x.grad.tolist() == [5.0, 5.0, 5.0]


def test_vector_valued_multivariate():
    x = gc.arange(4, dtype=float, requires_grad=True)
    y = gc.stack([x.sum(), (x ** 2).sum()])
    assert tuple(x.data.tolist()) == (0.0, 1.0, 2.0, 3.0)
    assert tuple(y.data.tolist()) == (6.0, 14.0)
    y.backward(gc.tensor([1.0, 0.0]), retain_graph=True)
    assert tuple(x.grad.data.tolist()) == (1.0, 1.0, 1.0, 1.0)
    x.grad.zero_()
    y.backward(gc.tensor([0.0, 1.0]))
    assert tuple(x.grad.data.tolist()) == (0.0, 2.0, 4.0, 6.0)


def test_vector_valued_multivariate_many_points():
    x = gc.arange(4 * 3, dtype=float).view(-1, 4).requires_grad_(True)
    y = gc.stack([x.sum(1), (x ** 2).sum(1)])
    assert y.data.tolist() == [[6.0, 22.0, 38.0], [14.0, 126.0, 366.0]]
    y.backward(_one_hot(y.shape, 0), retain_graph=True)
    assert x.grad.tolist() == np.ones((3, 4)).tolist()
    x.grad.zero_()
    y.backward(_one_hot(y.shape, 1))
    assert x.grad.tolist() == (2 * np.arange(12.0).reshape(3, 4)).tolist()


def test_matrix_valued_univariate():
    expected = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]  # d/dx x**i at x = 1 is i
    x = gc.tensor(1.0, requires_grad=True)
    y = gc.stack([x ** i for i in range(6)]).view(3, 2)
    got = np.zeros((3, 2))
    for i, j in itertools.product(range(3), range(2)):
        v = gc.zeros(3, 2)
        v[i, j] = 1.0
        x.grad = None
        y.backward(v, retain_graph=True)
        got[i, j] = x.grad.item()
    assert got.tolist() == expected
    jac = gc.functional.jacobian(lambda t: gc.stack([t ** i for i in range(6)]).view(3, 2),
                                 gc.tensor(1.0))
    assert jac.shape == (3, 2)
    assert jac.tolist() == expected


def test_quadratic_value_grad_and_repr():
    x = gc.tensor(4.0, requires_grad=True)
    y = x ** 2 + 3 * x + 1
    assert y.item() == 29.0
    assert y.grad_fn.name() == "AddBackward0"
    assert repr(y) == "tensor(29., grad_fn=<AddBackward0>)"
    assert repr(x) == "tensor(4., requires_grad=True)"
    y.backward()
    assert x.grad.item() == 11.0


def test_leaf_backward_accumulates_and_resets():
    x = gc.tensor(3.0, requires_grad=True)
    x.backward()
    assert repr((x, x.grad)) == "(tensor(3., requires_grad=True), tensor(1.))"
    x.backward()
    assert x.grad.item() == 2.0
    x.grad.zero_()
    x.backward()
    assert x.grad.item() == 1.0
    x.grad.data.zero_()  # .data shares memory with the gradient
    x.backward()
    assert x.grad.item() == 1.0
    x.grad = None
    x.backward()
    assert x.grad.item() == 1.0


def test_graph_is_freed_after_backward():
    x = gc.tensor(3.0, requires_grad=True)
    m = x ** 2
    assert repr(m) == "tensor(9., grad_fn=<PowBackward0>)"
    m.backward()
    assert x.grad.item() == 6.0
    x.grad.zero_()
    with pytest.raises(RuntimeError) as err:
        m.backward()
    msg = str(err.value)
    assert "Trying to backward through the graph a second time" in msg
    assert "retain_graph=True" in msg
    # recomputing makes it work again; retain_graph keeps it usable
    m = x ** 2
    x.grad.zero_()
    m.backward(retain_graph=True)
    assert x.grad.item() == 6.0
    x.grad.zero_()
    m.backward()
    assert x.grad.item() == 6.0


def test_staged_computation():
    x = gc.tensor(3.0, requires_grad=True)
    m = x ** 2
    y = m + x
    p = 4 * y
    q = 2 * y
    assert f"x={x.item()} m={m.item()} y={y.item()} p={p.item()} q={q.item()}" == (
        "x=3.0 m=9.0 y=12.0 p=48.0 q=24.0")
    x.grad = None
    p.backward(retain_graph=True)
    assert x.grad.item() == 28.0
    x.grad = None
    q.backward()
    assert x.grad.item() == 14.0


def test_staged_pieces():
    y = gc.tensor(12.0, requires_grad=True)
    (4 * y).backward()
    assert y.grad.item() == 4.0
    y = gc.tensor(12.0, requires_grad=True)
    (2 * y).backward()
    assert y.grad.item() == 2.0
    x = gc.tensor(3.0, requires_grad=True)
    (x ** 2).backward()
    assert x.grad.item() == 6.0  # dm/dx
    x.backward()
    assert x.grad.item() == 7.0  # dy/dx = dm/dx + dx/dx


def test_no_graph_without_requires_grad():
    x = gc.tensor(9.0)
    y = x ** 2 + x + gc.exp(x)
    z = y + 2
    # 90 + e⁹ = 8193.08392757...: gradcli is float64, so 4 decimals give ...0839 where the
    # seed's float32 PyTorch prints 8193.0840 (float32 rounds it to 8193.083984375)
    assert repr((x, y, z)) == "(tensor(9.), tensor(8193.0839), tensor(8195.0839))"
    x32 = gc.tensor(9.0, dtype=gc.float32)
    y32 = x32 ** 2 + x32 + gc.exp(x32)
    assert y32.dtype == np.float32 and y32.item() == 8193.083984375
    assert repr(y32) == "tensor(8193.0840, dtype=float32)"
    assert y.grad_fn is None and z.grad_fn is None
    y.requires_grad_()
    z = y + 2
    assert repr(y) == "tensor(8193.0839, requires_grad=True)"
    assert repr(z) == "tensor(8195.0839, grad_fn=<AddBackward0>)"
    assert (x.grad, y.grad, z.grad) == (None, None, None)
    z.backward()
    assert x.grad is None and z.grad is None
    assert y.grad.item() == 1.0


def test_non_scalar_backward_error():
    x = gc.linspace(-2, 2, 5, requires_grad=True)
    y = x ** 2
    with pytest.raises(RuntimeError) as err:
        y.backward()
    msg = str(err.value)
    assert msg.startswith("grad can be implicitly created only for scalar outputs")
    assert "(5,)" in msg
    assert ".sum()" in msg and "gradient=" in msg
    assert x.grad is None


def test_wrong_shape_gradient_error():
    x = gc.linspace(-2, 2, 5, requires_grad=True)
    y = x ** 2
    with pytest.raises(RuntimeError) as err:
        y.backward(gc.ones(3))
    msg = str(err.value)
    assert "[3]" in msg and "[5]" in msg


def test_backward_without_requires_grad_error():
    x = gc.tensor(2.0)
    with pytest.raises(RuntimeError,
                       match="element 0 of tensors does not require grad and does not have a "
                             "grad_fn"):
        (x ** 2).backward()


def test_sin_cos_meshgrid_like_seed_000():
    n = 100
    X, Y = np.meshgrid(np.linspace(0.0, 2.0 * np.pi, n), np.linspace(0.0, 2.0 * np.pi, n))
    X = gc.from_numpy(X.T)
    Y = gc.from_numpy(Y.T)
    X.requires_grad = True
    Y.requires_grad = True
    F = gc.sin(X) * gc.cos(Y)
    F.sum().backward()
    xa, ya = X.detach().numpy(), Y.detach().numpy()
    assert np.all(xa[:, 0] == np.linspace(0.0, 2.0 * np.pi, n))  # X varies along axis 0
    np.testing.assert_allclose(X.grad.numpy(), np.cos(xa) * np.cos(ya), rtol=0, atol=1e-12)
    np.testing.assert_allclose(Y.grad.numpy(), -np.sin(xa) * np.sin(ya), rtol=0, atol=1e-12)


def test_sin_cos_gc_meshgrid_ij():
    n = 100
    x = gc.linspace(0.0, 2.0 * np.pi, n, requires_grad=True)
    y = gc.linspace(0.0, 2.0 * np.pi, n, requires_grad=True)
    X, Y = gc.meshgrid(x, y, indexing="ij")
    X.retain_grad()
    Y.retain_grad()
    F = gc.sin(X) * gc.cos(Y)
    F.sum().backward()
    xa, ya = np.meshgrid(np.linspace(0, 2 * np.pi, n), np.linspace(0, 2 * np.pi, n),
                         indexing="ij")
    np.testing.assert_allclose(X.grad.numpy(), np.cos(xa) * np.cos(ya), rtol=0, atol=1e-12)
    np.testing.assert_allclose(Y.grad.numpy(), -np.sin(xa) * np.sin(ya), rtol=0, atol=1e-12)
    # the 1-D axes receive the row/column sums (meshgrid's broadcast reversed)
    np.testing.assert_allclose(x.grad.numpy(), (np.cos(xa) * np.cos(ya)).sum(1), atol=1e-10)
    np.testing.assert_allclose(y.grad.numpy(), (-np.sin(xa) * np.sin(ya)).sum(0), atol=1e-10)
