"""The array primitives (``rules_axes.py``, ``rules_linalg.py``, the trailing-axis
shape primitives): VJP and JVP against central differences, second order against central
differences of the checked first order (the budgets of ``test_engine_primitives.py``), and
values against closed forms where a closed form is the point: logsumexp, softmax and
cross_entropy at ±1000 and mixed signs; det, inv and solve against numpy's values and
their gradients against the textbook formulas on well-conditioned and nearly singular
matrices; singular matrices give nan, never an exception.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_engine_primitives import EPS, check_vjp_jvp

import gradcli as gc
from gradcli.engine import rules as R

F = gc.functional


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def well_conditioned(n: int, seed: int, batch: tuple[int, ...] = ()) -> np.ndarray:
    """A random matrix plus n·I: eigenvalues far from 0."""
    return _rng(seed).uniform(-1, 1, batch + (n, n)) + n * np.eye(n)


def _spaced(shape: tuple[int, ...], seed: int) -> np.ndarray:
    """Values at least 0.1 apart along the last axis (no ties for max, min, inf-norm)."""
    rng = _rng(seed)
    base = rng.permutation(shape[-1]).astype(float) * 0.3
    return np.broadcast_to(base, shape) + rng.uniform(-0.05, 0.05, shape)


# name, function of the inputs, input samplers: every new primitive, at batch shapes
PRIMITIVES = [
    ("logsumexp", lambda a: R.logsumexp(a, dim=-1), [lambda: _rng(1).normal(size=(3, 4))]),
    ("logsumexp keepdim", lambda a: R.logsumexp(a, dim=(0, 2), keepdim=True),
     [lambda: _rng(2).normal(size=(2, 3, 2))]),
    ("softmax", lambda a: R.softmax(a, dim=-1), [lambda: _rng(3).normal(size=(3, 4))]),
    ("softmax dim 0", lambda a: R.softmax(a, dim=0), [lambda: _rng(4).normal(size=(3, 4))]),
    ("log_softmax", lambda a: R.log_softmax(a, dim=-1), [lambda: _rng(5).normal(size=(3, 4))]),
    ("cross_entropy", lambda a: R.cross_entropy(a, np.array([0.0, 3.0, 1.0])),
     [lambda: _rng(6).normal(size=(3, 4))]),
    ("amax", lambda a: R.amax(a, dim=(-1,)), [lambda: _spaced((3, 5), 7)]),
    ("amin matrix", lambda a: R.amin(a, dim=(-2, -1)), [lambda: _spaced((2, 3, 4), 8)]),
    ("vector_norm 1", lambda a: R.vector_norm(a, ord=1.0, dim=(-1,)),
     [lambda: _rng(9).uniform(0.2, 1, (3, 4)) * _rng(10).choice([-1, 1], (3, 4))]),
    ("vector_norm 3", lambda a: R.vector_norm(a, ord=3.0, dim=(-1,)),
     [lambda: _rng(11).normal(size=(3, 4))]),
    ("vector_norm 1.5", lambda a: R.vector_norm(a, ord=1.5, dim=(-2, -1)),
     [lambda: _rng(12).uniform(0.2, 1, (2, 3, 2))]),
    ("vector_norm inf", lambda a: R.vector_norm(a, ord=math.inf, dim=(-1,)),
     [lambda: _spaced((3, 5), 13)]),
    ("cumsum", lambda a: R.cumsum(a, dim=-1), [lambda: _rng(14).normal(size=(3, 4))]),
    ("cumsum reverse", lambda a: R.cumsum(a, dim=0, reverse=True),
     [lambda: _rng(15).normal(size=(3, 4))]),
    ("unsqueeze", lambda a: R.unsqueeze(a, dim=(-3, -1)) * np.ones((4, 1, 1)),
     [lambda: _rng(16).normal(size=(3, 4))]),
    ("squeeze", lambda a: R.squeeze(a, dim=-2), [lambda: _rng(17).normal(size=(3, 1, 4))]),
    ("matrix_transpose", lambda a: R.matrix_transpose(a) * np.arange(6.0).reshape(3, 2),
     [lambda: _rng(18).normal(size=(2, 2, 3))]),
    ("take", lambda a: R.take(a, key=(slice(1, 3), 0)) * R.take(a, key=(-1, slice(None, None, 2))),
     [lambda: _rng(19).normal(size=(2, 3, 4))]),
    ("take diagonal", lambda a: R.take(a, key=(np.arange(3), np.arange(3))),
     [lambda: _rng(20).normal(size=(2, 3, 3))]),
    ("put", lambda a: R.put(a, key=(slice(0, 2),), comp=(5,), ndim=2),
     [lambda: _rng(21).normal(size=(3, 2))]),
    ("det", R.det, [lambda: well_conditioned(3, 22, (2,))]),
    ("cofactor", R.cofactor, [lambda: well_conditioned(3, 23)]),
    ("inv", R.inv, [lambda: well_conditioned(3, 24, (2,))]),
    ("solve", R.solve, [lambda: well_conditioned(3, 25, (2,)),
                        lambda: _rng(26).normal(size=(2, 3, 2))]),
    ("solve broadcast", R.solve, [lambda: well_conditioned(2, 27),
                                  lambda: _rng(28).normal(size=(3, 2, 1))]),
]


@pytest.mark.parametrize("name,fn,samplers", PRIMITIVES, ids=[p[0] for p in PRIMITIVES])
def test_first_order_against_central_differences(name, fn, samplers):
    check_vjp_jvp(fn, [s() for s in samplers])


@pytest.mark.parametrize("name,fn,samplers", PRIMITIVES, ids=[p[0] for p in PRIMITIVES])
def test_second_order_against_differences_of_the_first(name, fn, samplers):
    """d²(w·f)/dx² by reverse over reverse (and functional.hessian's forward over reverse)
    equals central differences of the engine's gradient, which the test above checks."""
    xs = [s() for s in samplers]
    w = _rng(99).uniform(0.5, 1.5, np.shape(fn(*[gc.tensor(x) for x in xs])))

    def scalar(*ts):
        return (fn(*ts) * gc.tensor(w)).sum()

    def grads(*arrays):
        leaves = [gc.tensor(a, requires_grad=True) for a in arrays]
        got = gc.autograd.grad(scalar(*leaves), leaves, allow_unused=True)
        return np.concatenate([np.zeros(a.size) if g is None else g.detach().numpy().ravel()
                               for g, a in zip(got, arrays, strict=True)])

    sizes = [x.size for x in xs]
    z = np.concatenate([x.ravel() for x in xs])

    def split(flat):
        return [p.reshape(x.shape) for p, x in
                zip(np.split(flat, np.cumsum(sizes)[:-1]), xs, strict=True)]

    fd = np.empty((z.size, z.size))
    for k in range(z.size):
        hi, lo = z.copy(), z.copy()
        hi[k] += EPS
        lo[k] -= EPS
        fd[:, k] = (grads(*split(hi)) - grads(*split(lo))) / (2 * EPS)
    leaves = [gc.tensor(x, requires_grad=True) for x in xs]
    firsts = gc.autograd.grad(scalar(*leaves), leaves, create_graph=True, allow_unused=True)
    flat = gc.cat([g.reshape(-1) for g in firsts])
    rows = []
    for i in range(z.size):
        if not flat.requires_grad:  # a gradient that does not depend on the inputs
            rows.append(np.zeros(z.size))
            continue
        hs = gc.autograd.grad(flat[i], leaves, retain_graph=True, allow_unused=True)
        rows.append(np.concatenate([np.zeros(x.size) if h is None else h.numpy().ravel()
                                    for h, x in zip(hs, xs, strict=True)]))
    np.testing.assert_allclose(np.array(rows), fd, rtol=1e-5, atol=1e-5)
    h = F.hessian(scalar, *xs)
    blocks = h if len(xs) > 1 else ((h,),)
    full = np.block([[np.asarray(blocks[i][j].numpy()).reshape(xs[i].size, xs[j].size)
                      for j in range(len(xs))] for i in range(len(xs))])
    np.testing.assert_allclose(full, fd, rtol=1e-5, atol=1e-5)


# --- stable reductions at extreme inputs, against closed forms -------------------------------

def test_logsumexp_at_a_thousand_is_a_thousand_plus_log_two():
    x = gc.tensor([1000.0, 1000.0], requires_grad=True)
    y = gc.logsumexp(x, dim=0)
    assert y.item() == 1000.0 + math.log(2.0)
    y.backward()
    assert x.grad.tolist() == [0.5, 0.5]


@pytest.mark.parametrize("v", [[1000.0, -1000.0], [-1000.0, -1000.0, -999.0],
                               [1000.0, 999.0, -1000.0, 0.0], [-1e300, 1.0]])
def test_logsumexp_softmax_log_softmax_at_extremes(v):
    """Closed forms with the largest element m factored out: lse = m + log Σ e^(vᵢ-m) (the
    sum is a few terms of 1 and e^-1, e^-1000 = 0 to double precision)."""
    a = np.array(v)
    m = a.max()
    terms = [math.exp(t - m) for t in v]
    lse = m + math.log(math.fsum(terms))
    soft = np.array(terms) / math.fsum(terms)
    x = gc.tensor(a, requires_grad=True)
    y = gc.logsumexp(x, dim=0)
    assert y.item() == pytest.approx(lse, rel=1e-15, abs=0)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), soft, rtol=1e-15, atol=1e-300)
    np.testing.assert_allclose(gc.softmax(gc.tensor(a), dim=0).numpy(), soft, rtol=1e-15,
                               atol=1e-300)
    np.testing.assert_allclose(gc.log_softmax(gc.tensor(a), dim=0).numpy(), a - lse,
                               rtol=1e-15)
    assert np.isfinite(gc.log_softmax(gc.tensor(a), dim=0).numpy()).all()


@pytest.mark.parametrize("k", [0, 1])
def test_cross_entropy_at_extremes_is_lse_minus_the_logit_and_softmax_minus_one_hot(k):
    a = np.array([1000.0, -1000.0])
    x = gc.tensor(a, requires_grad=True)
    loss = R.cross_entropy(x, np.float64(k))
    # lse = 1000 (e^-2000 is 0); the loss is 1000 - a[k]: 0 for k = 0, 2000 for k = 1
    assert loss.item() == [0.0, 2000.0][k]
    loss.backward()
    # softmax [1, 0] (e^-2000 = 0) minus the one-hot of k
    assert x.grad.tolist() == [[0.0, 0.0], [1.0, -1.0]][k]


def test_cross_entropy_of_a_class_that_is_not_one_is_nan():
    for k in (2.0, -1.0, 0.5, np.nan):
        assert np.isnan(R.cross_entropy(np.array([1.0, 2.0]), np.float64(k)))


def test_softmax_of_an_infinite_logit_is_nan_as_torch():
    """torch 2.13: softmax([inf, 1]) = [nan, nan]; logsumexp([inf, 1]) = inf."""
    assert np.isnan(gc.softmax(gc.tensor([np.inf, 1.0]), dim=0).numpy()).all()
    assert gc.logsumexp(gc.tensor([np.inf, 1.0]), dim=0).item() == np.inf
    assert gc.logsumexp(gc.tensor([-np.inf, -np.inf]), dim=0).item() == -np.inf


def test_max_of_a_vector_shares_the_gradient_between_ties_as_torch():
    """torch 2.13: torch.max(tensor([1., 3., 3.])).backward() gives [0, 0.5, 0.5]; with a
    nan the nan gets it all ([nan, 1, 2]: [1, 0, 0])."""
    x = gc.tensor([1.0, 3.0, 3.0], requires_grad=True)
    gc.amax(x).backward()
    assert x.grad.tolist() == [0.0, 0.5, 0.5]
    x = gc.tensor([np.nan, 1.0, 2.0], requires_grad=True)
    gc.amax(x).backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0]
    x = gc.tensor([-2.0, 5.0, -2.0], requires_grad=True)
    gc.amin(x).backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5]


def test_p_norms_at_zero_and_at_ties():
    """torch 2.13: vector_norm's gradient at 0 is 0 for p = 1, 3 and inf; inf-norm ties
    share it ([1, 3, 3]: [0, 0.5, 0.5]); values without overflow at 1e200."""
    for p in (1.0, 3.0, math.inf):
        x = gc.tensor([0.0, 0.0], requires_grad=True)
        gc.vector_norm(x, p).backward()
        assert x.grad.tolist() == [0.0, 0.0]
    x = gc.tensor([1.0, -3.0, 3.0], requires_grad=True)
    gc.vector_norm(x, math.inf).backward()
    assert x.grad.tolist() == [0.0, -0.5, 0.5]
    big = np.array([3e200, 4e200])
    assert gc.vector_norm(big, 3).item() == pytest.approx((27 + 64) ** (1 / 3) * 1e200,
                                                          rel=1e-15)
    assert gc.vector_norm(big, 1).item() == 7e200


# --- det, inv, solve ----------------------------------------------------------------------

NEARLY_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0 + 1e-9]])


@pytest.mark.parametrize("a", [well_conditioned(3, 30), well_conditioned(4, 31),
                               NEARLY_SINGULAR], ids=["3x3", "4x4", "nearly singular"])
def test_det_inv_solve_match_numpy_and_their_gradients_the_closed_forms(a):
    n = a.shape[0]
    b = _rng(32).normal(size=n)
    assert gc.det(a).item() == np.linalg.det(a)
    np.testing.assert_array_equal(gc.inverse(a).numpy(), np.linalg.inv(a))
    np.testing.assert_array_equal(gc.solve(a, b).numpy(), np.linalg.solve(a, b))
    # d det/dA = det · A⁻ᵀ = the cofactor matrix; for 2x2 [[d, -c], [-b, a]] exactly
    A = gc.tensor(a, requires_grad=True)
    gc.det(A).backward()
    if n == 2:
        np.testing.assert_allclose(A.grad.numpy(), [[a[1, 1], -a[1, 0]], [-a[0, 1], a[0, 0]]],
                                   rtol=1e-6)
    else:
        np.testing.assert_allclose(A.grad.numpy(), np.linalg.det(a) * np.linalg.inv(a).T,
                                   rtol=1e-12)
    # d inv/dA_ij = -A⁻¹ e_i e_jᵀ A⁻¹: the VJP of W is -A⁻ᵀ W A⁻ᵀ
    w = _rng(33).normal(size=(n, n))
    A = gc.tensor(a, requires_grad=True)
    (gc.inverse(A) * gc.tensor(w)).sum().backward()
    ai = np.linalg.inv(a)
    np.testing.assert_allclose(A.grad.numpy(), -ai.T @ w @ ai.T, rtol=1e-9)
    # x = A⁻¹b: ∂(wᵀx)/∂b = A⁻ᵀw, ∂/∂A = -(A⁻ᵀw)xᵀ
    A, B = gc.tensor(a, requires_grad=True), gc.tensor(b, requires_grad=True)
    v = _rng(34).normal(size=n)
    (gc.solve(A, B) * gc.tensor(v)).sum().backward()
    gb = np.linalg.solve(a.T, v)
    np.testing.assert_allclose(B.grad.numpy(), gb, rtol=1e-9)
    np.testing.assert_allclose(A.grad.numpy(), -np.outer(gb, np.linalg.solve(a, b)), rtol=1e-9)


def test_det_gradient_at_a_singular_matrix_is_its_cofactor_matrix():
    """det is a polynomial: its gradient at [[1, 2], [2, 4]] is [[4, -2], [-2, 1]] (JAX
    0.10.2 agrees; torch 2.13 gives zeros there), and 0 at the zero matrix; a rank-1 3x3
    matrix's cofactors are its 2x2 minors."""
    A = gc.tensor([[1.0, 2.0], [2.0, 4.0]], requires_grad=True)
    gc.det(A).backward()
    np.testing.assert_allclose(A.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-14)
    A = gc.tensor(np.zeros((2, 2)), requires_grad=True)
    gc.det(A).backward()
    assert A.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])
    minors = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                        for j in range(3)] for i in range(3)])
    A = gc.tensor(a, requires_grad=True)
    gc.det(A).backward()
    np.testing.assert_allclose(A.grad.numpy(), minors, atol=1e-13)


def test_singular_inverse_and_solve_are_nan_without_an_exception():
    s = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert np.isnan(gc.inverse(s).numpy()).all()
    assert np.isnan(gc.solve(s, [1.0, 1.0]).numpy()).all()
    stack = np.stack([s, np.eye(2)])  # one singular matrix in a batch spoils only itself
    got = gc.inverse(stack).numpy()
    assert np.isnan(got[0]).all() and (got[1] == np.eye(2)).all()
    A = gc.tensor(s, requires_grad=True)
    gc.inverse(A).sum().backward()
    assert np.isnan(A.grad.numpy()).all()
    assert np.isnan(gc.det(np.array([[np.nan, 1.0], [1.0, 1.0]])).item())  # numpy says 0


def test_trace_and_outer_closed_forms():
    a = _rng(40).normal(size=(3, 3))
    A = gc.tensor(a, requires_grad=True)
    gc.trace(A).backward()
    assert gc.trace(a).item() == pytest.approx(np.trace(a), rel=1e-15)
    np.testing.assert_array_equal(A.grad.numpy(), np.eye(3))
    u, v = gc.tensor([1.0, 2.0], requires_grad=True), gc.tensor([3.0, 4.0, 5.0],
                                                                  requires_grad=True)
    gc.outer(u, v).sum().backward()
    assert u.grad.tolist() == [12.0, 12.0] and v.grad.tolist() == [3.0, 3.0, 3.0]


def test_batch_axes_keep_per_point_cotangents_of_shared_inputs():
    """Inside batch_axes a value shared by every point (leading axes of 1) receives the
    per-point cotangent: d(y·sum(A@w))/dA at three points is y·outer(1, w) per point."""
    from gradcli.engine.backward import run_backward
    from gradcli.engine.grad_mode import batch_axes

    y = gc.tensor(np.array([1.0, 2.0, 3.0]), requires_grad=True)
    A = gc.tensor(np.arange(4.0).reshape(1, 2, 2), requires_grad=True)
    w = gc.tensor(np.array([[1.0, -1.0]]), requires_grad=True)
    out = y * R.sum(R.squeeze(R.matmul(A, R.unsqueeze(w, dim=-1)), dim=-1), dim=-1)
    with batch_axes(1):  # as the evaluation kernels sweep
        ga, gw = (gc.tensor(g) for g in run_backward([out], [np.float64(1.0)], True, False,
                                                      [A, w]))
    want = np.array([1.0, 2.0, 3.0])[:, None, None] * np.array([[1.0, -1.0], [1.0, -1.0]])
    np.testing.assert_array_equal(np.broadcast_to(ga.numpy(), (3, 2, 2)), want)
    np.testing.assert_array_equal(np.broadcast_to(gw.numpy(), (3, 2)),
                                  np.array([1.0, 2.0, 3.0])[:, None] * [2.0, 4.0])
