"""Derivatives at kinks, poles and domain edges: PyTorch's conventions, no warnings."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import gradcli as gc

F = gc.functional


@pytest.fixture(autouse=True)
def _warnings_are_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def grad_at(fn, value):
    x = gc.tensor(value, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.numpy()


def jvp_at(fn, value):
    return F.jvp(fn, (np.asarray(value, dtype=float),),
                 (np.ones_like(np.asarray(value, dtype=float)),))[1].numpy()


EDGES = [
    ("abs'(0)", gc.abs, 0.0, 0.0),
    ("relu'(0)", gc.relu, 0.0, 0.0),
    ("sqrt'(0)", gc.sqrt, 0.0, math.inf),
    ("log'(0)", gc.log, 0.0, math.inf),
    ("cbrt'(0)", gc.cbrt, 0.0, math.inf),
    ("x**0 at 0", lambda t: t ** 0, 0.0, 0.0),
    ("x**0 at 2", lambda t: t ** 0, 2.0, 0.0),
    ("x**1 at 0", lambda t: t ** 1, 0.0, 1.0),
    ("pow(x, 0.) tensor exponent at 0", lambda t: gc.pow(t, gc.tensor(0.0)), 0.0, 0.0),
    ("sign'", gc.sign, 0.0, 0.0),
    ("sign' away", gc.sign, -3.0, 0.0),
    ("floor' at integer", gc.floor, 2.0, 0.0),
    ("ceil' at integer", gc.ceil, 2.0, 0.0),
    ("floor' off integer", gc.floor, 2.5, 0.0),
    ("clamp at min", lambda t: gc.clamp(t, min=0.0, max=1.0), 0.0, 1.0),
    ("clamp at max", lambda t: gc.clamp(t, min=0.0, max=1.0), 1.0, 1.0),
    ("clamp outside", lambda t: gc.clamp(t, min=0.0, max=1.0), 1.5, 0.0),
    ("norm at 0", lambda t: gc.norm(t), [0.0, 0.0], [0.0, 0.0]),
    ("asin'(1)", gc.asin, 1.0, math.inf),
    ("acosh'(1)", gc.acosh, 1.0, math.inf),
]


@pytest.mark.parametrize("name,fn,x,expected", EDGES, ids=[e[0] for e in EDGES])
def test_edge_derivatives_reverse_and_forward(name, fn, x, expected):
    np.testing.assert_array_equal(grad_at(fn, x), expected)
    np.testing.assert_array_equal(jvp_at(fn, x), expected)


def test_pow_tensor_exponent_at_zero_base():
    # d/db 0**b = 0 for b > 0 (PyTorch masks the log(0) there); d/da 0**b = b·0**(b-1)
    a = gc.tensor(0.0, requires_grad=True)
    b = gc.tensor(2.0, requires_grad=True)
    (a ** b).backward()
    assert a.grad.item() == 0.0 and b.grad.item() == 0.0


@pytest.mark.parametrize("fn", [gc.maximum, gc.minimum])
def test_ties_split_gradient(fn):
    a = gc.tensor([1.0, 2.0, 3.0], requires_grad=True)
    b = gc.tensor([1.0, 0.0, 3.0], requires_grad=True)
    fn(a, b).sum().backward()
    win_a = 1.0 if fn is gc.maximum else 0.0
    assert a.grad.tolist() == [0.5, win_a, 0.5]
    assert b.grad.tolist() == [0.5, 1.0 - win_a, 0.5]
    _, t = F.jvp(fn, (a.detach(), b.detach()), (np.array([1.0, 1.0, 1.0]), np.zeros(3)))
    assert t.tolist() == [0.5, win_a, 0.5]


def test_no_runtime_warnings_forward_and_backward():
    x = gc.tensor([0.0, -1.0], requires_grad=True)
    y = gc.log(x)  # log(0) = -inf, log(-1) = nan
    assert y.tolist()[0] == -math.inf and math.isnan(y.tolist()[1])
    y.sum().backward()
    assert x.grad.tolist()[0] == math.inf and x.grad.tolist()[1] == -1.0

    x = gc.tensor(0.0, requires_grad=True)
    y = 1 / x
    assert y.item() == math.inf
    y.backward()
    assert x.grad.item() == -math.inf

    x = gc.tensor(-1.0, requires_grad=True)
    y = gc.sqrt(x)
    assert math.isnan(y.item())
    y.backward()
    assert math.isnan(x.grad.item())

    # and in forward mode
    assert jvp_at(gc.log, 0.0) == math.inf
    assert jvp_at(lambda t: 1 / t, 0.0) == -math.inf
    assert math.isnan(jvp_at(gc.sqrt, -1.0))


def test_inf_and_nan_values_do_not_poison_other_elements():
    x = gc.tensor([0.0, 4.0], requires_grad=True)
    gc.sqrt(x).sum().backward()
    assert x.grad.tolist() == [math.inf, 0.25]
