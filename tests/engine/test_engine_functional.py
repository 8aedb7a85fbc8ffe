"""gc.functional against closed forms: grad, vjp, jvp, linearize, jacobian (both modes,
batched), hessian and hvp."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli as gc

F = gc.functional
RNG = np.random.default_rng(42)


def poly(p):
    return p[0] ** 2 * p[1] + p[1] ** 3


def poly_hessian(p):
    x0, x1 = p
    return np.array([[2 * x1, 2 * x0], [2 * x0, 6 * x1]])


@pytest.mark.parametrize("point", [RNG.uniform(-2, 2, 2) for _ in range(3)])
def test_hessian_polynomial(point):
    h = F.hessian(poly, point)
    assert h.shape == (2, 2)
    np.testing.assert_allclose(h.numpy(), poly_hessian(point), rtol=1e-13, atol=1e-13)
    g = F.grad(poly)(point)
    x0, x1 = point
    np.testing.assert_allclose(g.numpy(), [2 * x0 * x1, x0 ** 2 + 3 * x1 ** 2], rtol=1e-13)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_hessian_sin_cos_two_inputs(seed):
    x, y = np.random.default_rng(seed).uniform(-3, 3, 2)
    f = lambda a, b: gc.sin(a) * gc.cos(b)
    h = F.hessian(f, x, y)
    s, c, sy, cy = np.sin(x), np.cos(x), np.sin(y), np.cos(y)
    expected = [[-s * cy, -c * sy], [-c * sy, -s * cy]]
    got = [[h[i][j].item() for j in range(2)] for i in range(2)]
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)


def test_hessian_vector_input_is_diagonal():
    x, y = RNG.uniform(-3, 3, 4), RNG.uniform(-3, 3, 4)
    f = lambda a, b: (gc.sin(a) * gc.cos(b)).sum()
    h = F.hessian(f, x, y)
    assert h[0][1].shape == (4, 4)
    np.testing.assert_allclose(h[0][0].numpy(), np.diag(-np.sin(x) * np.cos(y)), atol=1e-14)
    np.testing.assert_allclose(h[0][1].numpy(), np.diag(-np.cos(x) * np.sin(y)), atol=1e-14)
    np.testing.assert_allclose(h[1][0].numpy(), np.diag(-np.cos(x) * np.sin(y)), atol=1e-14)
    np.testing.assert_allclose(h[1][1].numpy(), np.diag(-np.sin(x) * np.cos(y)), atol=1e-14)


def test_hvp_matches_closed_form():
    p, v = RNG.uniform(-2, 2, 2), RNG.standard_normal(2)
    out, (hv,) = F.hvp(poly, (p,), (v,))
    assert out.item() == pytest.approx(p[0] ** 2 * p[1] + p[1] ** 3, rel=1e-14)
    np.testing.assert_allclose(hv.numpy(), poly_hessian(p) @ v, rtol=1e-13, atol=1e-13)
    # a quadratic form: H = A + Aᵀ everywhere
    a = RNG.standard_normal((3, 3))
    x, u = RNG.standard_normal(3), RNG.standard_normal(3)
    q = lambda t: t @ (gc.tensor(a) @ t)
    _, (hq,) = F.hvp(q, (x,), (u,))
    np.testing.assert_allclose(hq.numpy(), (a + a.T) @ u, rtol=1e-12, atol=1e-12)


def test_create_graph_grad_of_grad_sin_cos():
    x, y = RNG.uniform(-3, 3, 2)
    a = gc.tensor(x, requires_grad=True)
    b = gc.tensor(y, requires_grad=True)
    f = gc.sin(a) * gc.cos(b)
    ga, gb = gc.autograd.grad(f, [a, b], create_graph=True)
    assert ga.item() == pytest.approx(np.cos(x) * np.cos(y), rel=1e-14)
    haa, hab = gc.autograd.grad(ga, [a, b], retain_graph=True)
    hba, hbb = gc.autograd.grad(gb, [a, b])
    np.testing.assert_allclose(
        [[haa.item(), hab.item()], [hba.item(), hbb.item()]],
        [[-np.sin(x) * np.cos(y), -np.cos(x) * np.sin(y)],
         [-np.cos(x) * np.sin(y), -np.sin(x) * np.cos(y)]], rtol=1e-13, atol=1e-14)


def test_jacobian_reverse_mode_m_less_than_n():
    x = RNG.standard_normal(5)
    f = lambda t: gc.stack([t.sum(), (t ** 2).sum()])  # m = 2 < n = 5
    j = F.jacobian(f, x)
    assert j.shape == (2, 5)
    np.testing.assert_allclose(j.numpy(), np.stack([np.ones(5), 2 * x]), rtol=1e-15)


def test_jacobian_forward_mode_m_greater_than_n():
    x = RNG.standard_normal(2)
    f = lambda t: gc.stack([t[0] * t[1], gc.sin(t[0]), t[1] ** 2, gc.exp(t[0] + t[1]), t[0]])
    j = F.jacobian(f, x)
    a, b = x
    e = np.exp(a + b)
    expected = [[b, a], [np.cos(a), 0.0], [0.0, 2 * b], [e, e], [1.0, 0.0]]
    assert j.shape == (5, 2)
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-14, atol=1e-15)


def test_jacobian_several_inputs_and_matrix_shapes():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    ja, jb = F.jacobian(lambda x, y: x * y, a, b)  # reverse mode: m = 6 < n = 9
    assert ja.shape == (2, 3, 2, 3) and jb.shape == (2, 3, 3)
    np.testing.assert_allclose(ja.numpy(), np.einsum("ik,jl->ijkl", np.eye(2),
                                                     np.diag(b)).reshape(2, 3, 2, 3))
    np.testing.assert_allclose(jb.numpy(), np.einsum("ij,jl->ijl", a, np.eye(3)))
    # the same with forward mode (m = 6 > n = 4)
    c, d = RNG.standard_normal((2, 1)), RNG.standard_normal(2)
    jc, jd = F.jacobian(lambda x, y: x * y + x, c, d)
    assert jc.shape == (2, 2, 2, 1) and jd.shape == (2, 2, 2)
    expected_c = np.zeros((2, 2, 2, 1))
    expected_d = np.zeros((2, 2, 2))
    for i in range(2):
        for k in range(2):
            expected_c[i, k, i, 0] = d[k] + 1
            expected_d[i, k, k] = c[i, 0]
    np.testing.assert_allclose(jc.numpy(), expected_c)
    np.testing.assert_allclose(jd.numpy(), expected_d)


def test_jacobian_batched_forward_mode():
    p = RNG.uniform(-2, 2, (1000, 2))

    def f(q):
        return gc.stack([q[:, 0] * q[:, 1], gc.sin(q[:, 0]), q[:, 1] ** 2], dim=1)

    j = F.jacobian(f, p, batched=True)  # m = 3 > n = 2 per point
    assert j.shape == (1000, 3, 2)
    x, y = p[:, 0], p[:, 1]
    expected = np.zeros((1000, 3, 2))
    expected[:, 0, 0], expected[:, 0, 1] = y, x
    expected[:, 1, 0] = np.cos(x)
    expected[:, 2, 1] = 2 * y
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-14, atol=1e-15)


def test_jacobian_batched_reverse_mode():
    p = RNG.uniform(-2, 2, (1000, 3))

    def f(q):
        return gc.stack([q[:, 0] * q[:, 1] * q[:, 2], (q ** 2).sum(1)], dim=1)

    j = F.jacobian(f, p, batched=True)  # m = 2 < n = 3 per point
    assert j.shape == (1000, 2, 3)
    x, y, z = p.T
    expected = np.stack([np.stack([y * z, x * z, x * y], 1), 2 * p], 1)
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-14, atol=1e-15)


def test_functional_vjp():
    x = RNG.standard_normal(3)
    v = RNG.standard_normal(3)
    out, (g,) = F.vjp(lambda t: gc.sin(t) * t, x, v=v)
    np.testing.assert_allclose(out.numpy(), np.sin(x) * x)
    np.testing.assert_allclose(g.numpy(), v * (np.cos(x) * x + np.sin(x)), rtol=1e-14)
    a, b = RNG.standard_normal(2)
    out, (ga, gb) = F.vjp(lambda s, t: s * t ** 2, a, b)
    assert ga.item() == pytest.approx(b ** 2) and gb.item() == pytest.approx(2 * a * b)
    # an input the function does not use gets a zero gradient
    _, (ga, gb) = F.vjp(lambda s, t: s * 3, a, b)
    assert ga.item() == 3.0 and gb.item() == 0.0


def test_functional_jvp_and_linearize():
    x, u = RNG.standard_normal(3), RNG.standard_normal(3)
    f = lambda t: gc.exp(t) * gc.cos(t)
    out, t = F.jvp(f, (x,), (u,))
    np.testing.assert_allclose(out.numpy(), np.exp(x) * np.cos(x))
    expected = u * np.exp(x) * (np.cos(x) - np.sin(x))
    np.testing.assert_allclose(t.numpy(), expected, rtol=1e-14, atol=1e-15)
    out_l, jvp_fn = F.linearize(f, x)
    np.testing.assert_allclose(out_l.numpy(), out.numpy())
    np.testing.assert_allclose(jvp_fn(u), expected, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(jvp_fn(2 * u), 2 * expected, rtol=1e-14, atol=1e-15)
    # two inputs, one direction None
    out, t = F.jvp(lambda a, b: a * b, (x, x + 1), (u, np.zeros(3)))
    np.testing.assert_allclose(t.numpy(), u * (x + 1))
    _, jvp2 = F.linearize(lambda a, b: a * b, x, x + 1)
    np.testing.assert_allclose(jvp2(None, u), u * x)


def test_jvp_rejects_wrong_tangent_shape():
    with pytest.raises(RuntimeError, match="tangent"):
        F.jvp(gc.sin, (np.zeros(3),), (np.zeros(2),))


def test_functional_grad_argnums():
    g = F.grad(lambda a, b: a * gc.sin(b), argnums=(0, 1))(2.0, 0.5)
    assert g[0].item() == pytest.approx(np.sin(0.5), rel=1e-15)
    assert g[1].item() == pytest.approx(2.0 * np.cos(0.5), rel=1e-15)
    assert F.grad(lambda a, b: a * b, argnums=1)(3.0, 4.0).item() == 3.0


def test_gradcheck_passes_a_correct_function():
    """True, as torch.autograd.gradcheck returns; also with PyTorch's tuple of inputs."""
    x = RNG.standard_normal(4)
    assert F.gradcheck(lambda t: gc.sin(t) * t ** 2, x, atol=1e-8, rtol=1e-8) is True
    assert F.gradcheck(lambda t: gc.sin(t) * t ** 2, (gc.tensor(x),)) is True


def test_gradcheck_flags_a_wrong_rule():
    """A primitive whose declared derivative is wrong (sin with ∂ = 2 instead of cos):
    GradcheckError, a RuntimeError as in PyTorch, or False when asked not to raise."""
    bad = gc.Primitive("bad_sin", np.sin, vjp=lambda ctx, g: [g * 2.0],
                       jvp=lambda ctx, ts: ts[0] * 2.0)
    x = np.array([0.1, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to "
                                           "input 0") as err:
        F.gradcheck(lambda t: bad(t), x)
    assert isinstance(err.value, F.GradcheckError)
    assert F.gradcheck(lambda t: bad(t), x, raise_exception=False) is False
    # the disagreement is 2 - cos(x) <= 2.42 here: a tolerance above it passes
    assert F.gradcheck(lambda t: bad(t), x, atol=2.5, rtol=0.0) is True
