"""The primitive table: every differentiable operation and its derivative, declared once.

Elementwise primitives declare their partial derivatives ∂out/∂input as one short lambda per
input, taking the inputs and the output ``y``; the engine derives both modes from them:
reverse mode (VJP) is ``unbroadcast(g · ∂)`` and forward mode (JVP) is ``Σ t · ∂``. Other
primitives declare a VJP and a JVP lambda. Rules are written with primitives, so the same
line serves plain numpy arrays (fast first order) and tensors (graphs for higher order).
Adding a function is one entry here plus its test.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .core import Primitive

ZERO = None  # a partial that is identically zero: sign, floor, ceil


def unary(name: str, fwd: Callable, partial: Callable | None, **kw: Any) -> Primitive:
    """An elementwise function of one input with derivative ``partial(x, y)``."""
    return elementwise(name, fwd, (partial,), **kw)


def binary(name: str, fwd: Callable, da: Callable, db: Callable, **kw: Any) -> Primitive:
    """An elementwise function of two broadcastable inputs with partials ``da``/``db``."""
    return elementwise(name, fwd, (da, db), **kw)


def elementwise(name: str, fwd: Callable, partials: tuple, **kw: Any) -> Primitive:
    def vjp(g, y, xs, params, needs, shapes):
        out = []
        for i, partial in enumerate(partials):
            if not needs[i]:
                out.append(None)
            elif partial is ZERO:
                out.append(unbroadcast(g * 0.0, shapes[i]))
            else:
                out.append(unbroadcast(g * partial(*xs, y, **params), shapes[i]))
        return out

    def jvp(tangents, y, xs, params, cache):
        total = None
        for i, t in enumerate(tangents):
            if t is None or partials[i] is ZERO:
                continue
            if cache is None:
                d = partials[i](*xs, y, **params)
            else:
                d = cache.get(i)
                if d is None:
                    d = cache[i] = partials[i](*xs, y, **params)
            term = t * d
            total = term if total is None else total + term
        return total

    return Primitive(name, fwd, vjp, jvp, partials=partials, **kw)


def unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum a cotangent down to an input's shape (the reverse of broadcasting)."""
    return g if np.shape(g) == shape else sum_to(g, shape=shape)


def _sum_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and a.shape[i + lead] != 1
    )
    out = a.sum(axis=axes, keepdims=True) if axes else a
    return out.reshape(shape)


def _nondiff(name: str, fwd: Callable) -> Primitive:
    return Primitive(name, fwd, nondiff=True)


def _reduced_shape_back(g: Any, shape: tuple, dim: Any, keepdim: bool) -> Any:
    """Reshape a reduction's cotangent so it broadcasts against the input."""
    if dim is None or keepdim:
        return g if dim is not None else reshape(g, shape=(1,) * len(shape))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    kept = list(shape)
    for d in dims:
        kept[d % len(shape)] = 1
    return reshape(g, shape=tuple(kept))


def _norm_fwd(a, dim=None, keepdim=False):
    return np.sqrt(np.sum(a * a, axis=dim, keepdims=keepdim))


def _index_put(g, key, shape):
    z = np.zeros(shape, dtype=np.result_type(g, np.float32))
    np.add.at(z, key, g)
    return z


def _matmul_vjp(g, y, xs, params, needs, shapes):
    a, b = xs
    a2 = reshape(a, shape=(1,) + shapes[0]) if len(shapes[0]) == 1 else a
    b2 = reshape(b, shape=shapes[1] + (1,)) if len(shapes[1]) == 1 else b
    out2 = np.broadcast_shapes(np.shape(a2)[:-2], np.shape(b2)[:-2]) + (
        np.shape(a2)[-2], np.shape(b2)[-1])
    g2 = reshape(g, shape=out2)
    ga = unbroadcast(matmul(g2, swap(b2)), np.shape(a2)) if needs[0] else None
    gb = unbroadcast(matmul(swap(a2), g2), np.shape(b2)) if needs[1] else None
    return [None if ga is None else reshape(ga, shape=shapes[0]),
            None if gb is None else reshape(gb, shape=shapes[1])]


def _add_tangents(*terms: Any) -> Any:
    live = [t for t in terms if t is not None]
    if not live:
        return None
    total = live[0]
    for t in live[1:]:
        total = total + t
    return total


def _stack_like(fn: Callable, tangents: list, xs: tuple, dim: int) -> Any:
    if all(t is None for t in tangents):
        return None
    filled = [broadcast_to(t, shape=np.shape(x)) if t is not None else np.zeros(np.shape(x))
              for t, x in zip(tangents, xs, strict=True)]
    return fn(*filled, dim=dim)


def _select(g: Any, dim: int, start: int, stop: int | None) -> Any:
    key = (slice(None),) * (dim % np.ndim(g)) + ((start if stop is None else slice(start, stop)),)
    return index(g, key=key)


def _cat_vjp(g, y, xs, params, needs, shapes):
    dim, out, start = params["dim"], [], 0
    for shape, need in zip(shapes, needs, strict=True):
        n = shape[dim]
        out.append(_select(g, dim, start, start + n) if need else None)
        start += n
    return out


def _norm_grad(x, y, dim, keepdim):
    y = _reduced_shape_back(y, np.shape(x), dim, keepdim)
    return where(y == 0, 0.0, x / y)


# --- elementwise arithmetic ------------------------------------------------------------
# name                  numpy forward    ∂/∂a                 ∂/∂b
add = binary("add", np.add, lambda a, b, y: 1.0, lambda a, b, y: 1.0, saves=False)
sub = binary("sub", np.subtract, lambda a, b, y: 1.0, lambda a, b, y: -1.0, saves=False)
mul = binary("mul", np.multiply, lambda a, b, y: b, lambda a, b, y: a)
div = binary("div", np.true_divide, lambda a, b, y: 1.0 / b, lambda a, b, y: -y / b)
# d/dx x**c at x = 0 with c = 0 is 0 (PyTorch masks exponent == 0); ∂/∂c is 0 where x = 0, c >= 0
pow = binary("pow", np.power,  # noqa: A001 - mirrors torch.pow
             lambda a, b, y: where(b == 0, 0.0, b * a ** (b - 1.0)),
             lambda a, b, y: where(logical_and(a == 0, b >= 0), 0.0, y * log(a)),
             grad_name="PowBackward1")
pow_scalar = unary("pow_scalar", lambda a, exponent: np.power(a, exponent),
                   lambda x, y, exponent: 0.0 if exponent == 0 else
                   exponent * x ** (exponent - 1.0), grad_name="PowBackward0")
neg = unary("neg", np.negative, lambda x, y: -1.0, saves=False)
# ties split the gradient evenly between the two inputs (PyTorch's choice)
minimum = binary("minimum", np.minimum, lambda a, b, y: (a < b) + 0.5 * (a == b),
                 lambda a, b, y: (b < a) + 0.5 * (a == b))
maximum = binary("maximum", np.maximum, lambda a, b, y: (a > b) + 0.5 * (a == b),
                 lambda a, b, y: (b > a) + 0.5 * (a == b))
atan2 = binary("atan2", np.arctan2, lambda a, b, y: b / (a * a + b * b),
               lambda a, b, y: -a / (a * a + b * b))
hypot = binary("hypot", np.hypot, lambda a, b, y: a / y, lambda a, b, y: b / y)

# --- elementwise functions of one input --------------------------------------------------
# name                      numpy forward    ∂y/∂x               edge-case choice
sin = unary("sin", np.sin, lambda x, y: cos(x))
cos = unary("cos", np.cos, lambda x, y: -sin(x))
tan = unary("tan", np.tan, lambda x, y: 1.0 + y * y)
asin = unary("asin", np.arcsin, lambda x, y: 1.0 / sqrt(1.0 - x * x))    # ±inf at |x| = 1
acos = unary("acos", np.arccos, lambda x, y: -1.0 / sqrt(1.0 - x * x))
atan = unary("atan", np.arctan, lambda x, y: 1.0 / (1.0 + x * x))
sinh = unary("sinh", np.sinh, lambda x, y: cosh(x))
cosh = unary("cosh", np.cosh, lambda x, y: sinh(x))
tanh = unary("tanh", np.tanh, lambda x, y: 1.0 - y * y)
asinh = unary("asinh", np.arcsinh, lambda x, y: 1.0 / sqrt(x * x + 1.0))
acosh = unary("acosh", np.arccosh, lambda x, y: 1.0 / sqrt(x * x - 1.0))  # +inf at x = 1
atanh = unary("atanh", np.arctanh, lambda x, y: 1.0 / (1.0 - x * x))
exp = unary("exp", np.exp, lambda x, y: y)
expm1 = unary("expm1", np.expm1, lambda x, y: y + 1.0)
log = unary("log", np.log, lambda x, y: 1.0 / x)                  # log'(0) = +inf
log1p = unary("log1p", np.log1p, lambda x, y: 1.0 / (x + 1.0), grad_name="Log1PBackward0")
log2 = unary("log2", np.log2, lambda x, y: 1.0 / (x * math.log(2.0)))
log10 = unary("log10", np.log10, lambda x, y: 1.0 / (x * math.log(10.0)))
sqrt = unary("sqrt", np.sqrt, lambda x, y: 0.5 / y)               # sqrt'(0) = +inf
cbrt = unary("cbrt", np.cbrt, lambda x, y: 1.0 / (3.0 * y * y))  # cbrt'(0) = +inf
abs = unary("abs", np.abs, lambda x, y: sign(x))  # noqa: A001 - |x|'(0) = 0
sign = unary("sign", np.sign, ZERO)                               # sign' = 0 everywhere
floor = unary("floor", np.floor, ZERO)                            # floor' = 0
ceil = unary("ceil", np.ceil, ZERO)                               # ceil' = 0
relu = unary("relu", lambda a: np.maximum(a, 0.0), lambda x, y: x > 0)  # relu'(0) = 0
sigmoid = unary("sigmoid", lambda a: 0.5 * (1.0 + np.tanh(0.5 * a)), lambda x, y: y * (1.0 - y))
softplus = unary("softplus", lambda a: np.logaddexp(0.0, a), lambda x, y: sigmoid(x))
# the gradient passes at the boundary: ∂/∂x clamp(x) = 1 for min <= x <= max
clamp = unary("clamp", lambda a, min=None, max=None: np.clip(a, min, max),  # noqa: A002
              lambda x, y, min=None, max=None: logical_and(  # noqa: A002
                  x >= (-np.inf if min is None else min), x <= (np.inf if max is None else max)),
              grad_name="ClampBackward1")

# --- comparisons: 0/1 values, no gradient ------------------------------------------------
lt = _nondiff("lt", np.less)
le = _nondiff("le", np.less_equal)
gt = _nondiff("gt", np.greater)
ge = _nondiff("ge", np.greater_equal)
eq = _nondiff("eq", np.equal)
ne = _nondiff("ne", np.not_equal)
logical_and = _nondiff("logical_and", np.logical_and)

# --- selection, shape and reductions ------------------------------------------------------
where = Primitive(
    "where", lambda c, a, b: np.where(c, a, b),
    lambda g, y, xs, p, needs, shapes: [
        None,
        unbroadcast(where(xs[0], g, 0.0), shapes[1]) if needs[1] else None,
        unbroadcast(where(xs[0], 0.0, g), shapes[2]) if needs[2] else None],
    lambda ts, y, xs, p, cache: None if ts[1] is None and ts[2] is None else where(
        xs[0], 0.0 if ts[1] is None else ts[1], 0.0 if ts[2] is None else ts[2]))
sum_to = Primitive(
    "sum_to", lambda a, shape: _sum_to(np.asarray(a), shape),
    lambda g, y, xs, p, needs, shapes: [broadcast_to(g, shape=shapes[0])],
    lambda ts, y, xs, p, cache: sum_to(broadcast_to(ts[0], shape=np.shape(xs[0])), **p),
    saves=False, grad_name="SumBackward1")
broadcast_to = Primitive(
    "broadcast_to", lambda a, shape: np.broadcast_to(a, shape),
    lambda g, y, xs, p, needs, shapes: [unbroadcast(g, shapes[0])],
    lambda ts, y, xs, p, cache: broadcast_to(ts[0], **p), saves=False,
    grad_name="ExpandBackward0")
reshape = Primitive(
    "reshape", lambda a, shape: np.reshape(a, shape),
    lambda g, y, xs, p, needs, shapes: [reshape(g, shape=shapes[0])],
    lambda ts, y, xs, p, cache: reshape(broadcast_to(ts[0], shape=np.shape(xs[0])), **p),
    saves=False, grad_name="ViewBackward0")
permute = Primitive(
    "permute", lambda a, axes: np.transpose(a, axes),
    lambda g, y, xs, p, needs, shapes: [permute(g, axes=tuple(np.argsort(p["axes"])))],
    lambda ts, y, xs, p, cache: permute(broadcast_to(ts[0], shape=np.shape(xs[0])), **p),
    saves=False)
swap = lambda a: permute(a, axes=tuple(range(np.ndim(a) - 2)) + (np.ndim(a) - 1, np.ndim(a) - 2))
index = Primitive(
    "index", lambda a, key: np.asarray(a)[key],
    lambda g, y, xs, p, needs, shapes: [index_put(g, key=p["key"], shape=shapes[0])],
    lambda ts, y, xs, p, cache: index(broadcast_to(ts[0], shape=np.shape(xs[0])), **p),
    saves=False, grad_name="IndexBackward0")
index_put = Primitive(
    "index_put", _index_put,
    lambda g, y, xs, p, needs, shapes: [index(g, key=p["key"])],
    lambda ts, y, xs, p, cache: index_put(ts[0], **p), saves=False)
sum = Primitive(  # noqa: A001 - mirrors torch.sum
    "sum", lambda a, dim=None, keepdim=False: np.sum(a, axis=dim, keepdims=keepdim),
    lambda g, y, xs, p, needs, shapes: [
        broadcast_to(_reduced_shape_back(g, shapes[0], **p), shape=shapes[0])],
    lambda ts, y, xs, p, cache: sum(broadcast_to(ts[0], shape=np.shape(xs[0])), **p),
    saves=False)
mean = Primitive(
    "mean", lambda a, dim=None, keepdim=False: np.mean(a, axis=dim, keepdims=keepdim),
    lambda g, y, xs, p, needs, shapes: [broadcast_to(
        _reduced_shape_back(g, shapes[0], **p) * (np.prod(np.shape(y)) / np.prod(shapes[0])),
        shape=shapes[0])],
    lambda ts, y, xs, p, cache: mean(broadcast_to(ts[0], shape=np.shape(xs[0])), **p),
    saves=False)
# ∂prod/∂xᵢ = prod / xᵢ; exact zeros are rare enough in derivatives that we accept nan there
prod = Primitive(
    "prod", lambda a, dim=None, keepdim=False: np.prod(a, axis=dim, keepdims=keepdim),
    lambda g, y, xs, p, needs, shapes: [
        _reduced_shape_back(g * y, shapes[0], **p) / xs[0]],
    lambda ts, y, xs, p, cache: sum(
        ts[0] * (_reduced_shape_back(y, np.shape(xs[0]), **p) / xs[0]), **p))
norm = Primitive(  # 2-norm; its gradient at 0 is 0 (PyTorch's choice)
    "norm", _norm_fwd,
    lambda g, y, xs, p, needs, shapes: [
        _reduced_shape_back(g, shapes[0], **p) * _norm_grad(xs[0], y, **p)],
    lambda ts, y, xs, p, cache: sum(ts[0] * _norm_grad(xs[0], y, **p), **p),
    grad_name="NormBackward1")
matmul = Primitive(
    "matmul", np.matmul, _matmul_vjp,
    lambda ts, y, xs, p, cache: _add_tangents(
        None if ts[0] is None else matmul(broadcast_to(ts[0], shape=np.shape(xs[0])), xs[1]),
        None if ts[1] is None else matmul(xs[0], broadcast_to(ts[1], shape=np.shape(xs[1])))),
    grad_name="MmBackward0")
stack = Primitive(
    "stack", lambda *a, dim=0: np.stack(np.broadcast_arrays(*a), axis=dim),
    lambda g, y, xs, p, needs, shapes: [
        unbroadcast(_select(g, p["dim"], i, None), shapes[i]) if needs[i] else None
        for i in range(len(shapes))],
    lambda ts, y, xs, p, cache: _stack_like(stack, ts, xs, p["dim"]), saves=False)
cat = Primitive(
    "cat", lambda *a, dim=0: np.concatenate(a, axis=dim), _cat_vjp,
    lambda ts, y, xs, p, cache: _stack_like(cat, ts, xs, p["dim"]), saves=False)

PRIMITIVES = {p.name: p for p in globals().values() if isinstance(p, Primitive)}
