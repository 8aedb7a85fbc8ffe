"""Every primitive's VJP (reverse) and JVP (dual numbers and linearize) against central
finite differences, plus its second derivative through create_graph.

Error budget for the finite differences (float64, eps = 1e-6): the central difference
(f(x+eps) - f(x-eps)) / (2 eps) has truncation error eps²/6 · |f'''| ≈ 2e-13 · |f'''| and
rounding error ≈ ulp(f) / eps ≈ 2.2e-16 · |f| / 1e-6 ≈ 2e-10 · |f|. The domains below keep
|f|, |f'''| below ~1e2 (away from poles and kinks), so the FD error is < ~1e-7 and a
tolerance of 1e-6 absolute + 1e-6 relative cannot be met by a wrong derivative (any
genuine mistake is O(1)) while never failing on FD noise.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import gradcli as gc

EPS = 1e-6
RTOL = ATOL = 1e-6
F = gc.functional


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def fd_jacobian(f, xs: list[np.ndarray], eps: float = EPS) -> list[np.ndarray]:
    """Central-difference Jacobian blocks, each shaped out.shape + x.shape (no engine AD)."""
    xs = [np.array(x, dtype=np.float64) for x in xs]
    out = f(*[gc.tensor(x) for x in xs]).detach().numpy()
    blocks = []
    for x in xs:
        block = np.zeros(out.shape + x.shape)
        flat = x.reshape(-1)
        for k in range(flat.size):
            keep = flat[k]
            flat[k] = keep + eps
            hi = f(*[gc.tensor(a) for a in xs]).detach().numpy()
            flat[k] = keep - eps
            lo = f(*[gc.tensor(a) for a in xs]).detach().numpy()
            flat[k] = keep
            idx = np.unravel_index(k, x.shape) if x.shape else ()
            block[(Ellipsis,) + tuple(idx)] = (hi - lo) / (2 * eps)
        blocks.append(block)
    return blocks


def check_vjp_jvp(f, xs: list[np.ndarray], seed: int = 1) -> None:
    """VJP by backward(gradient=v) and autograd.grad, JVP by functional.jvp and linearize."""
    rng = _rng(seed)
    jac = fd_jacobian(f, xs)
    leaves = [gc.tensor(x, requires_grad=True) for x in xs]
    y = f(*leaves)
    v = rng.standard_normal(y.shape)
    us = [rng.standard_normal(np.shape(x)) for x in xs]
    out_nd = y.ndim
    # reverse: vᵀJ
    y.backward(gradient=gc.tensor(v), retain_graph=True)
    for leaf, block in zip(leaves, jac, strict=True):
        expected = np.tensordot(v, block, axes=out_nd)
        np.testing.assert_allclose(leaf.grad.numpy(), expected, rtol=RTOL, atol=ATOL)
    grads = gc.autograd.grad(y, leaves, grad_outputs=gc.tensor(v), allow_unused=True)
    for g, block in zip(grads, jac, strict=True):
        expected = np.tensordot(v, block, axes=out_nd)
        got = np.zeros_like(expected) if g is None else g.numpy()
        np.testing.assert_allclose(got, expected, rtol=RTOL, atol=ATOL)
    # forward: J·u
    expected_t = sum(np.tensordot(block, u, axes=np.ndim(u)) for block, u in
                     zip(jac, us, strict=True))
    out, tangent = F.jvp(f, tuple(xs), tuple(us))
    np.testing.assert_allclose(out.numpy(), y.detach().numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(tangent.numpy(), expected_t, rtol=RTOL, atol=ATOL)
    out_l, jvp_fn = F.linearize(f, *xs)
    np.testing.assert_allclose(out_l.numpy(), y.detach().numpy(), rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(jvp_fn(*us)), expected_t, rtol=RTOL, atol=ATOL)
    # linearize replays: a second direction must not reuse the first one's tangents
    us2 = [rng.standard_normal(np.shape(x)) for x in xs]
    expected_t2 = sum(np.tensordot(block, u, axes=np.ndim(u)) for block, u in
                      zip(jac, us2, strict=True))
    np.testing.assert_allclose(np.asarray(jvp_fn(*us2)), expected_t2, rtol=RTOL, atol=ATOL)


def uniform(lo: float, hi: float, shape=(3, 4), seed: int = 0) -> np.ndarray:
    return _rng(seed).uniform(lo, hi, size=shape)


def away_from_zero(lo: float, hi: float, shape=(3, 4), seed: int = 0) -> np.ndarray:
    rng = _rng(seed)
    return rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], size=shape)


def off_integer(shape=(3, 4), seed: int = 0) -> np.ndarray:
    rng = _rng(seed)
    return rng.integers(-3, 3, size=shape) + rng.uniform(0.1, 0.9, size=shape)


def _math(fn):  # noqa: ANN001, ANN202 - a scalar function of Python's math, elementwise
    return np.vectorize(fn, otypes=[float])


def _erfinv_newton(y: float) -> float:
    """The x with math.erf(x) = y, by Newton's method (|y| <= 0.9: quadratic from 0)."""
    x = 0.0
    for _ in range(60):
        x -= (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
    return x


def _digamma_series(x: float) -> float:
    """ψ(x) = ψ(x + n) - Σ 1/(x + k), with the asymptotic series at x + n >= 12."""
    total = 0.0
    while x < 12.0:
        total -= 1.0 / x
        x += 1.0
    z = 1.0 / (x * x)
    return total + math.log(x) - 0.5 / x - z * (1 / 12 - z * (1 / 120 - z * (
        1 / 252 - z * (1 / 240 - z * (1 / 132)))))


# name, numpy reference, input sampler (kept inside the domain, away from kinks/poles)
UNARY = [
    ("sin", np.sin, lambda: uniform(-3, 3)),
    ("cos", np.cos, lambda: uniform(-3, 3)),
    ("tan", np.tan, lambda: uniform(-1.2, 1.2)),
    ("asin", np.arcsin, lambda: uniform(-0.9, 0.9)),
    ("acos", np.arccos, lambda: uniform(-0.9, 0.9)),
    ("atan", np.arctan, lambda: uniform(-3, 3)),
    ("sinh", np.sinh, lambda: uniform(-2, 2)),
    ("cosh", np.cosh, lambda: uniform(-2, 2)),
    ("tanh", np.tanh, lambda: uniform(-2, 2)),
    ("asinh", np.arcsinh, lambda: uniform(-3, 3)),
    ("acosh", np.arccosh, lambda: uniform(1.1, 3)),
    ("atanh", np.arctanh, lambda: uniform(-0.9, 0.9)),
    ("exp", np.exp, lambda: uniform(-2, 2)),
    ("expm1", np.expm1, lambda: uniform(-2, 2)),
    ("log", np.log, lambda: uniform(0.1, 3)),
    ("log1p", np.log1p, lambda: uniform(-0.9, 3)),
    ("log2", np.log2, lambda: uniform(0.1, 3)),
    ("log10", np.log10, lambda: uniform(0.1, 3)),
    ("sqrt", np.sqrt, lambda: uniform(0.1, 3)),
    ("cbrt", np.cbrt, lambda: away_from_zero(0.2, 2)),
    ("abs", np.abs, lambda: away_from_zero(0.1, 2)),
    ("sign", np.sign, lambda: away_from_zero(0.1, 2)),
    ("relu", lambda a: np.maximum(a, 0.0), lambda: away_from_zero(0.1, 2)),
    ("sigmoid", lambda a: 1.0 / (1.0 + np.exp(-a)), lambda: uniform(-3, 3)),
    ("softplus", lambda a: np.log1p(np.exp(a)), lambda: uniform(-3, 3)),
    ("logsigmoid", lambda a: -np.log1p(np.exp(-a)), lambda: uniform(-3, 3)),
    ("floor", np.floor, off_integer),
    ("ceil", np.ceil, off_integer),
    ("neg", np.negative, lambda: uniform(-3, 3)),
    # the special functions against Python's math (or a formula over it)
    ("erf", _math(math.erf), lambda: uniform(-2, 2)),
    ("erfc", _math(math.erfc), lambda: uniform(-2, 2)),
    ("erfinv", _math(_erfinv_newton), lambda: uniform(-0.9, 0.9)),
    ("gamma", _math(math.gamma), lambda: uniform(0.5, 4)),
    ("lgamma", _math(math.lgamma), lambda: uniform(0.5, 4)),
    ("digamma", _math(_digamma_series), lambda: uniform(0.5, 3)),
    ("ncdf", _math(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0))), lambda: uniform(-3, 3)),
    ("npdf", _math(lambda v: math.exp(-v * v / 2) / math.sqrt(2 * math.pi)),
     lambda: uniform(-3, 3)),
]


def test_unary_table_covers_every_elementwise_function():
    from gradcli.engine import ops

    assert {name for name, _, _ in UNARY} == set(ops._ELEMENTWISE)


@pytest.mark.parametrize("name,ref,sample", UNARY, ids=[u[0] for u in UNARY])
def test_unary_value_vjp_jvp(name, ref, sample):
    fn = getattr(gc, name)
    x = sample()
    np.testing.assert_allclose(fn(gc.tensor(x)).numpy(), ref(x), rtol=1e-14, atol=1e-15)
    # the Tensor method is the same function
    np.testing.assert_array_equal(getattr(gc.tensor(x), name)().numpy(), fn(gc.tensor(x)).numpy())
    check_vjp_jvp(fn, [x])
    assert F.gradcheck(fn, x, atol=1e-6, rtol=1e-6)


@pytest.mark.parametrize("name,ref,sample", UNARY, ids=[u[0] for u in UNARY])
def test_unary_second_derivative_create_graph(name, ref, sample):
    """d²f/dx² by grad-of-grad equals the central difference of the (already checked)
    first derivative; same FD budget as above with f' in place of f."""
    fn = getattr(gc, name)
    x = sample()

    def first(t):
        t = t if t.requires_grad else gc.tensor(t.detach().numpy(), requires_grad=True)
        return gc.autograd.grad(fn(t).sum(), t, create_graph=True)[0]

    xt = gc.tensor(x, requires_grad=True)
    g = first(xt)
    if g.requires_grad:
        (h,) = gc.autograd.grad(g.sum(), xt, allow_unused=True)
        got = np.zeros_like(x) if h is None else h.numpy()
    else:  # the first derivative is a constant (neg, sign, relu, floor...)
        got = np.zeros_like(x)
    d1 = lambda a: first(gc.tensor(a)).detach().numpy()
    fd = (d1(x + EPS) - d1(x - EPS)) / (2 * EPS)
    np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-5)
    # forward-over-reverse agrees with reverse-over-reverse
    _, (hv,) = F.hvp(lambda t: fn(t).sum(), (x,), (np.ones_like(x),))
    np.testing.assert_allclose(hv.numpy(), fd, rtol=1e-5, atol=1e-5)


def _pos(shape, seed):
    return uniform(0.5, 2.0, shape, seed)


def _any(shape, seed):
    return uniform(-2.0, 2.0, shape, seed)


def _separated(shape_a, shape_b):
    """Pairs far from ties: a near integers, b near half-integers, so |a - b| >= 0.3."""
    rng = _rng(3)
    a = rng.integers(-3, 3, size=shape_a) + rng.uniform(-0.1, 0.1, size=shape_a)
    b = rng.integers(-3, 3, size=shape_b) + 0.5 + rng.uniform(-0.1, 0.1, size=shape_b)
    return a, b


SHAPES = [((3, 4), (3, 4)), ((3, 1), (1, 4)), ((3, 4), (4,)), ((), (2, 3))]
BINARY = [
    ("add", lambda a, b: a + b, _any, _any),
    ("sub", lambda a, b: a - b, _any, _any),
    ("mul", lambda a, b: a * b, _any, _any),
    ("div", lambda a, b: a / b, _any, _pos),
    ("pow_tensor", lambda a, b: a ** b, _pos, _any),
    ("atan2", gc.atan2, _pos, _any),
    ("hypot", gc.hypot, _pos, _any),
    ("beta", gc.beta, _pos, _pos),
    ("lbeta", gc.lbeta, _pos, _pos),
]


@pytest.mark.parametrize("shapes", SHAPES, ids=[str(s) for s in SHAPES])
@pytest.mark.parametrize("name,fn,sa,sb", BINARY, ids=[b[0] for b in BINARY])
def test_binary_vjp_jvp(name, fn, sa, sb, shapes):
    a, b = sa(shapes[0], 1), sb(shapes[1], 2)
    out = fn(gc.tensor(a, requires_grad=True), gc.tensor(b, requires_grad=True))
    assert out.shape == np.broadcast_shapes(a.shape, b.shape)
    check_vjp_jvp(fn, [a, b])
    # only one input requiring grad: its VJP is still reduced to its own shape
    bt = gc.tensor(b, requires_grad=True)
    fn(gc.tensor(a), bt).sum().backward()
    np.testing.assert_allclose(bt.grad.numpy(), fd_jacobian(
        lambda t: fn(gc.tensor(a), t).sum(), [b])[0], rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("name", ["minimum", "maximum"])
@pytest.mark.parametrize("shapes", SHAPES[:3], ids=[str(s) for s in SHAPES[:3]])
def test_minimum_maximum_away_from_ties(name, shapes):
    a, b = _separated(*shapes)
    assert np.min(np.abs(a - b)) > 0.25
    check_vjp_jvp(getattr(gc, name), [a, b])


@pytest.mark.parametrize("c", [3.0, 2.5, -2.0, 0.5, 1.0])
def test_pow_scalar_exponent(c):
    x = uniform(0.3, 2.0)
    f = lambda t: t ** c
    check_vjp_jvp(f, [x])
    xt = gc.tensor(x, requires_grad=True)
    (xt ** c).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), c * x ** (c - 1), rtol=1e-13)
    # reflected pow: constant base, tensor exponent → d/dx c**x = c**x log c
    if c > 0:
        check_vjp_jvp(lambda t: c ** t, [x])


def test_pow_integer_exponent_negative_base():
    check_vjp_jvp(lambda t: t ** 3, [uniform(-2, 2)])
    check_vjp_jvp(lambda t: gc.pow(t, 2), [uniform(-2, 2)])


REDUCTIONS = [
    (red, dim, keep)
    for red in ("sum", "mean", "prod", "norm")
    for dim in (None, 0, 1, -1, (0, 2))
    for keep in (False, True)
]


@pytest.mark.parametrize("red,dim,keepdim", REDUCTIONS, ids=[str(r) for r in REDUCTIONS])
def test_reductions(red, dim, keepdim):
    x = away_from_zero(0.5, 1.5, (2, 3, 2), seed=5)
    fn = lambda t: getattr(gc, red)(t, dim=dim, keepdim=keepdim)
    axis = dim
    ref = {"sum": np.sum, "mean": np.mean, "prod": np.prod,
           "norm": lambda a, axis, keepdims: np.sqrt(np.sum(a * a, axis=axis, keepdims=keepdims))}
    np.testing.assert_allclose(fn(gc.tensor(x)).numpy(),
                               ref[red](x, axis=axis, keepdims=keepdim), rtol=1e-14)
    check_vjp_jvp(fn, [x])
    # the method form
    meth = lambda t: getattr(t, red)(dim=dim, keepdim=keepdim)
    np.testing.assert_array_equal(meth(gc.tensor(x)).numpy(), fn(gc.tensor(x)).numpy())


def test_prod_gradient_closed_form():
    x = np.array([2.0, 3.0, 5.0])
    xt = gc.tensor(x, requires_grad=True)
    gc.prod(xt).backward()
    np.testing.assert_allclose(xt.grad.numpy(), [15.0, 10.0, 6.0], rtol=1e-15)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_stack(dim):
    a, b, c = _any((3, 2), 1), _any((3, 2), 2), _any((3, 2), 3)
    f = lambda x, y, z: gc.stack([x, y * y, gc.sin(z)], dim=dim)
    assert f(gc.tensor(a), gc.tensor(b), gc.tensor(c)).shape == np.stack([a, b, c], dim).shape
    check_vjp_jvp(f, [a, b, c])


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat(dim):
    a = _any((2, 3), 1)
    b = _any((2, 3), 2) if dim == 0 else _any((2, 1), 2)
    if dim == 0:
        b = _any((1, 3), 2)
    f = lambda x, y: gc.cat([x * x, y, gc.exp(y)], dim=dim)
    np.testing.assert_allclose(f(gc.tensor(a), gc.tensor(b)).numpy(),
                               np.concatenate([a * a, b, np.exp(b)], axis=dim))
    check_vjp_jvp(f, [a, b])


MATMUL = [((3, 4), (4, 2)), ((3, 4), (4,)), ((4,), (4,)), ((4,), (4, 3)), ((2, 3, 4), (4, 2)),
          ((2, 3, 4), (2, 4, 5))]


@pytest.mark.parametrize("sa,sb", MATMUL, ids=[str(m) for m in MATMUL])
def test_matmul(sa, sb):
    a, b = _any(sa, 1), _any(sb, 2)
    np.testing.assert_allclose(gc.matmul(gc.tensor(a), gc.tensor(b)).numpy(), a @ b)
    check_vjp_jvp(gc.matmul, [a, b])
    check_vjp_jvp(lambda x, y: x @ y, [a, b])


def test_matmul_closed_form_and_dot():
    a = np.arange(6.0).reshape(2, 3)
    b = np.arange(12.0).reshape(3, 4) - 5
    at, bt = gc.tensor(a, requires_grad=True), gc.tensor(b, requires_grad=True)
    (at @ bt).sum().backward()
    # d sum(AB)/dA = 1·Bᵀ, d/dB = Aᵀ·1
    np.testing.assert_allclose(at.grad.numpy(), np.ones((2, 4)) @ b.T)
    np.testing.assert_allclose(bt.grad.numpy(), a.T @ np.ones((2, 4)))
    u = gc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    gc.dot(u, gc.tensor([4.0, 5.0, 6.0])).backward()
    assert u.grad.tolist() == [4.0, 5.0, 6.0]


def test_where():
    a, b = away_from_zero(0.2, 2, (3, 4), 1), _any((3, 4), 2)
    f = lambda x, y: gc.where(x > 0, x * x, gc.sin(y))
    np.testing.assert_allclose(f(gc.tensor(a), gc.tensor(b)).numpy(),
                               np.where(a > 0, a * a, np.sin(b)))
    check_vjp_jvp(f, [a, b])
    # broadcast branch: a (3,1) column against a (3,4) tensor
    c = _any((3, 1), 3)
    check_vjp_jvp(lambda x, y: gc.where(y > 0, x, y), [c, b])


def test_clamp():
    x = _any((3, 4), 7)
    x[np.abs(np.abs(x) - 1.0) < 0.1] = 0.5  # stay off the boundary for FD
    check_vjp_jvp(lambda t: gc.clamp(t, min=-1.0, max=1.0), [x])
    check_vjp_jvp(lambda t: gc.clamp(t, min=-1.0), [x])
    check_vjp_jvp(lambda t: t.clamp(max=1.0), [x])
    xt = gc.tensor(x, requires_grad=True)
    gc.clamp(xt, min=-1.0, max=1.0).sum().backward()
    np.testing.assert_array_equal(xt.grad.numpy(), (np.abs(x) < 1.0).astype(float))


INDEX_KEYS = [
    (slice(1, 3),), ([0, 0, 2],), (slice(None), 1), (1, slice(None, None, -2)),
    (np.array([[0, 1], [2, 2]]),), (Ellipsis, [3, 0, 3]),
]


@pytest.mark.parametrize("key", INDEX_KEYS, ids=[str(k) for k in INDEX_KEYS])
def test_index(key):
    x = _any((3, 4), 1)
    key = key[0] if len(key) == 1 else key
    f = lambda t: t[key] * t[key]
    np.testing.assert_allclose(f(gc.tensor(x)).numpy(), x[key] * x[key])
    check_vjp_jvp(f, [x])


def test_index_with_boolean_mask():
    x = _any((3, 4), 1)
    mask = x > 0  # a numpy bool array (gradcli comparisons give float 0/1 tensors)
    xt = gc.tensor(x, requires_grad=True)
    (xt[mask] ** 2).sum().backward()
    np.testing.assert_allclose(xt.grad.numpy(), np.where(x > 0, 2 * x, 0.0))


RESHAPES = [(12,), (4, 3), (2, 2, 3), (-1, 6)]


@pytest.mark.parametrize("shape", RESHAPES, ids=[str(s) for s in RESHAPES])
def test_reshape_view(shape):
    x = _any((3, 4), 1)
    check_vjp_jvp(lambda t: gc.sin(t.reshape(shape)) * gc.arange(12.0).reshape(shape), [x])
    check_vjp_jvp(lambda t: gc.sin(t.view(*shape)) * gc.arange(12.0).view(shape), [x])


@pytest.mark.parametrize("axes", [(1, 0, 2), (2, 0, 1), (0, 2, 1), (2, 1, 0)])
def test_permute(axes):
    x = _any((2, 3, 4), 1)
    w = gc.tensor(_any(np.transpose(x, axes).shape, 2))
    f = lambda t: gc.permute(t * t, axes) * w
    np.testing.assert_allclose(f(gc.tensor(x)).numpy(), np.transpose(x * x, axes) * w.numpy())
    check_vjp_jvp(f, [x])
    check_vjp_jvp(lambda t: t.permute(*axes) * w, [x])


def test_transpose_T_and_broadcast_to():
    x = _any((3, 4), 1)
    check_vjp_jvp(lambda t: t.T * gc.arange(12.0).reshape(4, 3), [x])
    check_vjp_jvp(lambda t: gc.transpose(t, 0, 1) ** 2, [x])
    check_vjp_jvp(lambda t: gc.broadcast_to(t[:, :1], (2, 3, 4)) ** 2, [x])
    check_vjp_jvp(lambda t: t.unsqueeze(1).squeeze().flatten() ** 3, [x])


def test_composite_function_gradcheck():
    """A function mixing many primitives, including broadcasting, as one more FD check."""
    rng = _rng(11)
    a, b = rng.uniform(0.5, 1.5, (3, 1)), rng.uniform(0.5, 1.5, (4,))

    def f(x, y):
        z = gc.exp(-x * y) + gc.log1p(x ** 2) * gc.tanh(y) / gc.hypot(x, y)
        return gc.stack([z.sum(0), (z ** 2).mean(0), gc.norm(z, dim=0)], dim=1)

    check_vjp_jvp(f, [a, b])
    assert F.gradcheck(f, a, b, atol=1e-6, rtol=1e-6)


SECOND_ORDER = [
    *[(b[0], b[1], b[2], b[3]) for b in BINARY],
    ("minimum", gc.minimum, lambda s, k: _separated(s, s)[0], lambda s, k: _separated(s, s)[1]),
    ("maximum", gc.maximum, lambda s, k: _separated(s, s)[0], lambda s, k: _separated(s, s)[1]),
    ("clamp", lambda a, b: gc.clamp(a * b, min=-1.0, max=1.0) * a,
     lambda s, k: away_from_zero(0.3, 0.9, s, k), lambda s, k: uniform(0.2, 1.0, s, k)),
    ("where", lambda a, b: gc.where(a > 0, a * b * b, b ** 3),
     lambda s, k: away_from_zero(0.2, 2.0, s, k), _any),
    ("norm", lambda a, b: gc.norm(a * b, dim=1) * gc.norm(a, dim=0, keepdim=True)[0, :3],
     _any, _any),
    ("prod", lambda a, b: gc.prod(a + b, dim=0) ** 2, _pos, _pos),
    ("matmul", lambda a, b: (a @ b.T) ** 2, _any, _any),
]


@pytest.mark.parametrize("name,fn,sa,sb", SECOND_ORDER, ids=[s[0] for s in SECOND_ORDER])
def test_binary_second_order(name, fn, sa, sb):
    """Hessian blocks (reverse-over-reverse with create_graph, and functional.hessian's
    forward-over-reverse) against central differences of the first-order gradient, which
    the tests above verify; FD budget as in the module docstring, applied to f'."""
    a, b = sa((3, 3), 1), sb((3, 3), 2)
    scalar = lambda x, y: (fn(x, y) * gc.tensor(uniform(0.5, 1.5, (3, 3), 9))[:, :1]).sum()

    def grads(x, y):
        xt, yt = gc.tensor(x, requires_grad=True), gc.tensor(y, requires_grad=True)
        ga, gb = gc.autograd.grad(scalar(xt, yt), [xt, yt], allow_unused=True)
        return [np.zeros(9) if g is None else g.detach().numpy().reshape(-1) for g in (ga, gb)]

    z = np.concatenate([a.reshape(-1), b.reshape(-1)])
    fd = np.zeros((18, 18))
    for k in range(18):
        hi, lo = z.copy(), z.copy()
        hi[k] += EPS
        lo[k] -= EPS
        gh = np.concatenate(grads(hi[:9].reshape(3, 3), hi[9:].reshape(3, 3)))
        gl = np.concatenate(grads(lo[:9].reshape(3, 3), lo[9:].reshape(3, 3)))
        fd[:, k] = (gh - gl) / (2 * EPS)
    xt, yt = gc.tensor(a, requires_grad=True), gc.tensor(b, requires_grad=True)
    ga, gb = gc.autograd.grad(scalar(xt, yt), [xt, yt], create_graph=True)
    flat = gc.cat([ga.reshape(-1), gb.reshape(-1)])
    rows = []
    for i in range(18):
        if not flat.requires_grad:  # a gradient that is constant in the inputs (add, max...)
            rows.append(np.zeros(18))
            continue
        hs = gc.autograd.grad(flat[i], [xt, yt], retain_graph=True, allow_unused=True)
        rows.append(np.concatenate([np.zeros(9) if h is None else h.numpy().reshape(-1)
                                    for h in hs]))
    np.testing.assert_allclose(np.array(rows), fd, rtol=1e-5, atol=1e-5)
    h = F.hessian(scalar, a, b)
    full = np.block([[h[i][j].numpy().reshape(9, 9) for j in range(2)] for i in range(2)])
    np.testing.assert_allclose(full, fd, rtol=1e-5, atol=1e-5)


def test_norm_with_dim_zero_row_gets_zero_gradient():
    """A row of zeros has norm 0 and (PyTorch's choice) gradient 0; the other rows get
    x / |x|. On a square matrix a mis-broadcast zero mask would hit a column instead."""
    x = np.array([[3.0, 4.0, 0.0], [0.0, 0.0, 0.0], [1.0, 2.0, 2.0]])
    xt = gc.tensor(x, requires_grad=True)
    n = gc.norm(xt, dim=1)
    assert n.tolist() == [5.0, 0.0, 3.0]
    n.sum().backward()
    expected = [[0.6, 0.8, 0.0], [0.0, 0.0, 0.0], [1 / 3, 2 / 3, 2 / 3]]
    np.testing.assert_allclose(xt.grad.numpy(), expected, rtol=1e-15)
    xk = gc.tensor(x, requires_grad=True)
    gc.norm(xk, dim=1, keepdim=True).sum().backward()
    np.testing.assert_allclose(xk.grad.numpy(), expected, rtol=1e-15)
