"""The elementwise half of the primitive table (``rules.py`` gathers every half).
The primitive table: every differentiable operation and its derivative, declared once.

An elementwise primitive declares, per input, its derivative applied to an incoming
gradient ``g``: one short lambda of ``(g, *inputs, out)`` (``g * cos(x)`` for sin). Since
an elementwise Jacobian is diagonal, the engine derives both modes from that one line
(as PyTorch's ``auto_element_wise`` does): reverse mode (VJP) applies it to a cotangent and
sums back over broadcast axes, forward mode (JVP) applies it to each input's tangent and
adds. Writing the rule on ``g`` rather than as a partial lets it select (``where(x > 0, g,
0)``) or divide (``g / x``) as PyTorch does, so inf and nan arriving in ``g`` meet the same
arithmetic. A linear primitive declares its transpose (``linear``); the others name their
VJP and JVP. Rules are written with primitives, so the same line serves plain numpy
arrays (first order) and Tensors (recorded, for higher orders).

Each entry also names its Taylor-mode rule, ``jet=`` (``taylor.py``): higher derivatives
through truncated Taylor series, mostly one of the generic forms there (every coefficient
through the first-order rule, a Cauchy product, y' = w(y)·u' or y' = w(u)·u' with w in
series arithmetic). A primitive without one is refused by Taylor mode, naming it.

Each function and operator also gives its derivative's expression form, ``form=``: the
partial per input as text in the language over the rule's own names (``x``, or ``a`` and
``b``; ``y`` is the result), ``cos(x)`` for sin. The language reads it to print derivative
formulas (``lang/symbolic.py``); it is text, so the engine never imports the language.

Adding a function is one entry here plus its test: ``kind="function"`` makes it ``gc.NAME``,
``Tensor.NAME`` and a function of the expression language.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcli.engine import taylor as T
from gradcli.engine.core import raw
from gradcli.engine.grad_mode import batch_ndim
from gradcli.engine.homogeneous import Poly, per_monomial
from gradcli.engine.primitive import Ctx, Primitive

ZERO = None  # a derivative that is identically zero (sign, floor, ceil): zeros, never g * 0


def elementwise(name: str, fwd: Callable, derivs: tuple, **kw: Any) -> Primitive:
    """An elementwise primitive; ``derivs[i](g, *inputs, out, **params)`` is its derivative
    with respect to input i applied to ``g`` (or ZERO)."""

    def vjp(ctx: Ctx, g: Any) -> list:
        grads: list = []
        for i, d in enumerate(derivs):
            if not ctx.needs[i]:
                grads.append(None)
            elif d is ZERO:
                grads.append(zeros(g, ctx.shapes[i]))
            else:
                grads.append(unbroadcast(d(g, *ctx.inputs, ctx.out, **ctx.params),
                                         ctx.shapes[i]))
        return grads

    def jvp(ctx: Ctx, tangents: list) -> Any:
        total = None
        for d, t in zip(derivs, tangents, strict=True):
            if t is None or d is ZERO:
                continue
            term = d(t, *ctx.inputs, ctx.out, **ctx.params)
            total = term if total is None else total + term
        return total

    return Primitive(name, fwd, vjp=vjp, jvp=jvp, arity=len(derivs), **kw)


def unary(name: str, fwd: Callable, d: Callable | None, **kw: Any) -> Primitive:
    """An elementwise function of one input."""
    return elementwise(name, fwd, (d,), **kw)


def binary(name: str, fwd: Callable, da: Callable, db: Callable, **kw: Any) -> Primitive:
    """An elementwise function of two broadcastable inputs."""
    return elementwise(name, fwd, (da, db), **kw)


def linear(name: str, fwd: Callable, transpose: Callable[[Ctx, Any], Any],
           **kw: Any) -> Primitive:
    """A primitive linear in its one input (sum, reshape, index...), as JAX's ``deflinear``:
    its JVP applies it to the tangent and ``transpose(ctx, g)`` is its VJP."""

    def vjp(ctx: Ctx, g: Any) -> list:
        return [transpose(ctx, g)]

    def jvp(ctx: Ctx, tangents: list) -> Any:
        return prim(broadcast_to(tangents[0], shape=ctx.shapes[0]), **ctx.params)

    prim = Primitive(name, fwd, vjp=vjp, jvp=jvp, jet=T.per_coefficient, arity=1,
                     saves=False, **kw)
    return prim


def _nondiff(name: str, fwd: Callable, kind: str = "internal") -> Primitive:
    return Primitive(name, fwd, nondiff=True, kind=kind, arity=2)


def zeros(g: Any, shape: tuple) -> np.ndarray:
    """The cotangent of an input whose derivative is identically zero: zeros, whatever
    ``g`` holds (PyTorch's ``zeros_like(grad)``: inf or nan in g never leak through)."""
    if isinstance(g, Poly):  # a multivariate Taylor coefficient: zeros of its degree
        return per_monomial(lambda c: zeros(c, shape), [g])
    dtype = getattr(raw(g), "dtype", np.dtype(np.float64))
    return np.zeros(shape, dtype=dtype if dtype.kind == "f" else np.float64)


def unbroadcast(g: Any, shape: tuple) -> Any:
    """Sum a cotangent down to an input's shape (the reverse of broadcasting).

    Inside ``batch_axes(b)`` the first b axes index independent points: the cotangent there
    is per point and is kept, and only the component axes after them are summed back.
    """
    gshape = np.shape(g)
    if gshape == shape:
        return g
    b = batch_ndim()
    if not b:
        return sum_to(g, shape=shape)
    if len(gshape) != len(shape):
        return g  # a seed smaller than the batch: it broadcasts
    axes = tuple(i for i in range(b, len(shape)) if shape[i] == 1 and gshape[i] != 1)
    return sum(g, dim=axes, keepdim=True) if axes else g


def power(a: Any, b: Any) -> Any:
    """``a ** b``. A constant exponent takes ``pow_scalar``, which has no exponent to
    differentiate; the one dispatch for ``^``, ``pow()``, ``gc.pow`` and ``Tensor ** c``."""
    if isinstance(b, numbers.Number) and not isinstance(a, numbers.Number):
        return pow_scalar(a, exponent=float(b))
    return pow(a, b)


def _pow_base(g: Any, a: Any, b: Any, y: Any) -> Any:
    """∂(a**b)/∂a applied to g: g·b·a^(b-1). At b = 0 PyTorch selects 0; selecting there
    would also cut the exponent's path, so only points where the product is not finite
    (a = 0, or inf in g) select, and the second derivative keeps ∂/∂b = g/a (JAX, mpmath)."""
    p = a ** (b - 1.0)
    return where(logical_and(b == 0, logical_not(isfinite(g * p))), 0.0, g * (b * p))


def _pow_jet(ctx: T.JetCtx, us: list) -> list:
    """a^b: a constant exponent through u^r; otherwise y' = y·(b·log a)'."""
    a, b = ctx.inputs
    if us[1] is None:
        r = float(np.asarray(b).reshape(-1)[0]) if np.size(b) == 1 else b
        return T.power_rule(lambda c: r)(ctx, us)
    base = T.full_series(us[0], a, ctx.order)
    inverse, slope = (1.0 / T.Series(base)).c, T.weighted(base)
    loga = T.Series([np.log(a)] + [T.integral(slope, inverse, k)
                                   for k in range(1, ctx.order + 1)])
    y = [ctx.out, T.first(ctx, us)]
    T.ode_fill(T.weighted((T.Series(us[1]) * loga).c), y, 0.0, 1.0, 0.0, ctx.order)
    return y[1:]


def _power_const(a: Any, exponent: float) -> Any:
    """``a ** exponent`` for a constant exponent, as numpy >= 2.3 computes it on every numpy
    the project supports: 0.5 as sqrt (so (-inf)**0.5 is nan, as in PyTorch) and -1 as 1/a
    (exactly rounded); older numpy calls pow for both."""
    if exponent == 0.5:
        return np.sqrt(a)
    if exponent == -1.0:
        return np.divide(1.0, a)
    return np.power(a, exponent)


LN2, LN10 = math.log(2.0), math.log(10.0)

# --- operators ----------------------------------------------------------------------------
# name                  numpy forward     d/da applied to g          d/db applied to g
add = binary("add", np.add, lambda g, a, b, y: g, lambda g, a, b, y: g, kind="operator",
             saves=False, jet=T.per_coefficient)
sub = binary("sub", np.subtract, lambda g, a, b, y: g, lambda g, a, b, y: -g,
             kind="operator", saves=False, jet=T.per_coefficient)
mul = binary("mul", np.multiply, lambda g, a, b, y: g * b, lambda g, a, b, y: g * a,
             kind="operator", jet=T.product())
div = binary("div", np.true_divide, lambda g, a, b, y: g / b,
             lambda g, a, b, y: -g * ((a / b) / b), kind="operator", jet=T.quotient)
# ∂/∂b is 0 where a = 0 and b >= 0 (PyTorch masks the log(0) there)
pow = binary("pow", np.power, _pow_base,  # noqa: A001 - mirrors torch.pow
             lambda g, a, b, y: g * where(logical_and(a == 0, b >= 0), 0.0, y * log(a)),
             # the forms select as the rules do: 0 at b = 0 only where a^(b-1) is not
             # finite (abs(...) < inf is false for inf and nan), so d/db keeps its path
             form=("where(abs(a^(b - 1)) < inf, b*a^(b - 1), where(b == 0, 0, b*a^(b - 1)))",
                   "where((a == 0)*(b >= 0), 0, y*log(a))"),
             kind="operator", grad_name="PowBackward1", jet=_pow_jet)
neg = unary("neg", np.negative, lambda g, x, y: -g, kind="operator", saves=False,
            jet=T.per_coefficient)
# a constant exponent: x**0 has derivative 0 everywhere (zeros, as PyTorch)
# x² (the common case) as g·(2x): x**1.0 is x, so the same values, one pass fewer per order
pow_scalar = unary("pow_scalar", lambda a, exponent: _power_const(a, exponent),
                   lambda g, x, y, exponent: zeros(g, np.shape(g)) if exponent == 0 else
                   g * (2.0 * x) if exponent == 2 else
                   g * (exponent * x ** (exponent - 1.0)), grad_name="PowBackward0",
                   jet=T.power_rule(lambda ctx: ctx.params["exponent"]))
rsqrt = unary("rsqrt", lambda a: 1.0 / np.sqrt(a), lambda g, x, y: -0.5 * g * y ** 3.0,
              jet=T.power_rule(lambda ctx: -0.5))

# --- elementwise functions of two inputs ----------------------------------------------------
# ties split the gradient evenly; elsewhere the losing input gets exactly 0 (selected)
minimum = binary("minimum", np.minimum,
                 lambda g, a, b, y: where(a > b, 0.0, where(a == b, g / 2.0, g)),
                 lambda g, a, b, y: where(a < b, 0.0, where(a == b, g / 2.0, g)),
                 form=("where(a > b, 0, where(a == b, 0.5, 1))",
                       "where(a < b, 0, where(a == b, 0.5, 1))"),
                 kind="function", jet=T.per_coefficient)
maximum = binary("maximum", np.maximum,
                 lambda g, a, b, y: where(a < b, 0.0, where(a == b, g / 2.0, g)),
                 lambda g, a, b, y: where(a > b, 0.0, where(a == b, g / 2.0, g)),
                 form=("where(a < b, 0, where(a == b, 0.5, 1))",
                       "where(a > b, 0, where(a == b, 0.5, 1))"),
                 kind="function", jet=T.per_coefficient)


def _atan2_jet(ctx: T.JetCtx, us: list) -> list:
    """atan2(a, b): y' = (b·a' - a·b') / (a² + b²), y₁ from the first-order rule."""
    y1 = T.first(ctx, us)
    if ctx.order == 1:
        return [y1]
    a, b = (T.Series(T.full_series(u, x, ctx.order)) for u, x in zip(us, ctx.inputs,
                                                                       strict=True))
    top = ctx.order - 1
    rate = (b.truncated(top) * a.derivative() - a.truncated(top) * b.derivative()) / (
        a.truncated(top) * a.truncated(top) + b.truncated(top) * b.truncated(top))
    return [y1] + [None if rate[k - 1] is None else rate[k - 1] / k
                   for k in range(2, ctx.order + 1)]


def _squares(ctx: T.JetCtx, us: list) -> list:
    a, b = (T.Series(T.full_series(u, x, ctx.order)) for u, x in zip(us, ctx.inputs,
                                                                       strict=True))
    return (a * a + b * b).c


atan2 = binary("atan2", np.arctan2, lambda g, a, b, y: g * b * _recip_r2(a, b),
               lambda g, a, b, y: g * -a * _recip_r2(a, b),
               form=("where(a^2 + b^2 == 0, 0, b/(a^2 + b^2))",
                     "where(a^2 + b^2 == 0, 0, -a/(a^2 + b^2))"),
               kind="function", jet=_atan2_jet)
hypot = binary("hypot", np.hypot, lambda g, a, b, y: g * a / y, lambda g, a, b, y: g * b / y,
               form=("a/y", "b/y"), kind="function", jet=T.sqrt_rule(_squares))


def _recip_r2(a: Any, b: Any) -> Any:
    """1/(a² + b²), selected to 0 where that is infinite: atan2's gradient at the origin is
    0, as PyTorch's (its formula, so also where a² + b² underflows)."""
    r = 1.0 / (a * a + b * b)
    return where(isinf(r), 0.0, r)


# --- elementwise functions of one input ----------------------------------------------------
# name                        numpy forward      derivative applied to g         edge case
sin = unary("sin", np.sin, lambda g, x, y: g * cos(x), form="cos(x)", kind="function",
            jet=T.sin_cos(np.cos, is_sin=True))
cos = unary("cos", np.cos, lambda g, x, y: g * -sin(x), form="-sin(x)", kind="function",
            jet=T.sin_cos(np.sin, is_sin=False))
tan = unary("tan", np.tan, lambda g, x, y: g * (1.0 + y ** 2.0), form="1 + y^2", kind="function",
            jet=T.via_output(1.0, 0.0, 1.0))
asin = unary("asin", np.arcsin, lambda g, x, y: g * rsqrt(1.0 - x * x),   # ±inf at |x| = 1
             form="1/sqrt(1 - x^2)", kind="function",
             jet=T.via_input(lambda u: 1.0 / (1.0 - u * u).sqrt()))
acos = unary("acos", np.arccos, lambda g, x, y: g * -rsqrt(1.0 - x * x),
             form="-1/sqrt(1 - x^2)", kind="function",
             jet=T.via_input(lambda u: -1.0 / (1.0 - u * u).sqrt()))
atan = unary("atan", np.arctan, lambda g, x, y: g / (x * x + 1.0),
             form="1/(x^2 + 1)", kind="function",
             jet=T.via_input(lambda u: 1.0 / (u * u + 1.0)))
sinh = unary("sinh", np.sinh, lambda g, x, y: g * cosh(x), form="cosh(x)", kind="function",
             jet=T.sinh_cosh(np.cosh, is_sinh=True))
cosh = unary("cosh", np.cosh, lambda g, x, y: g * sinh(x), form="sinh(x)", kind="function",
             jet=T.sinh_cosh(np.sinh, is_sinh=False))
def _tanh(a: Any) -> Any:
    """tanh, correctly rounded near saturation.

    numpy's tanh is off by an ulp at about one point in five, and rounds to ±1 too soon:
    tanh(19.0) = 1 - 6.3e-17 is 1 - 2⁻⁵³ correctly rounded, numpy gives 1.0, so
    atanh(tanh(19)) has the derivative (1 - y²)/(1 - y²) = 0/0. For |a| ≥ 1, 1 - 2t/(1 + t)
    with t = e^(-2|a|) rounds once where it matters (the small term is exact to a few
    ulps of itself): correctly rounded against mpmath from |a| = 3 on, and more often
    right than numpy from 1 (tests/engine/test_engine_tanh.py).
    """
    a = np.asarray(a)
    y = np.tanh(a)
    far = np.abs(a) >= 1.0
    if far.any():
        big = a[far]
        t = np.exp(-2.0 * np.abs(big))
        y = np.array(y, copy=True)
        y[far] = np.copysign(1.0 - 2.0 * t / (1.0 + t), big)
    return y[()] if y.ndim == 0 else y


tanh = unary("tanh", _tanh, lambda g, x, y: tanh_backward(g, y), form="1 - y^2",
             kind="function",
             jet=T.via_output(1.0, 0.0, -1.0))
asinh = unary("asinh", np.arcsinh, lambda g, x, y: g * rsqrt(x ** 2.0 + 1.0),
              form="1/sqrt(x^2 + 1)", kind="function",
              jet=T.via_input(lambda u: 1.0 / (u * u + 1.0).sqrt()))
acosh = unary("acosh", np.arccosh, lambda g, x, y: g * rsqrt(x * x - 1.0),  # +inf at x = 1
              form="1/sqrt(x^2 - 1)", kind="function",
              jet=T.via_input(lambda u: 1.0 / (u * u - 1.0).sqrt()))
atanh = unary("atanh", np.arctanh, lambda g, x, y: g / (1.0 - x ** 2.0),
              form="1/(1 - x^2)", kind="function",
              jet=T.via_input(lambda u: 1.0 / (1.0 - u * u)))
exp = unary("exp", np.exp, lambda g, x, y: g * y, form="y", kind="function",
            jet=T.via_output(0.0, 1.0, 0.0))
expm1 = unary("expm1", np.expm1, lambda g, x, y: g * (y + 1.0), form="y + 1", kind="function",
              jet=T.via_output(1.0, 1.0, 0.0))
log = unary("log", np.log, lambda g, x, y: g / x,
            form="1/x", kind="function",            # log'(0) = +inf
            jet=T.via_input(lambda u: 1.0 / u))
log1p = unary("log1p", np.log1p, lambda g, x, y: g / (x + 1.0), form="1/(x + 1)", kind="function",
              grad_name="Log1PBackward0", jet=T.via_input(lambda u: 1.0 / (u + 1.0)))
log2 = unary("log2", np.log2, lambda g, x, y: g / (x * LN2), form="1/(x*log(2))", kind="function",
             jet=T.via_input(lambda u: 1.0 / (u * LN2)))
log10 = unary("log10", np.log10, lambda g, x, y: g / (x * LN10),
              form="1/(x*log(10))", kind="function",
              jet=T.via_input(lambda u: 1.0 / (u * LN10)))
sqrt = unary("sqrt", np.sqrt, lambda g, x, y: g / (2.0 * y),
             form="1/(2*y)", kind="function",  # sqrt'(0) = inf
             jet=T.sqrt_rule(lambda ctx, us: us[0]))
# cbrt'(0) = inf; JAX's rule (torch has no cbrt), on cbrt(x) again rather than the result
cbrt = unary("cbrt", np.cbrt, lambda g, x, y: g * ((1.0 / 3.0) * cbrt(x) ** -2.0),
             form="1/(3*cbrt(x)^2)", kind="function", jet=T.power_rule(lambda ctx: 1.0 / 3.0))
def _sign(a: Any) -> Any:
    """-1, 0 or 1, and 0 at nan (PyTorch's sign: (0 < a) - (a < 0))."""
    return np.greater(a, 0).astype(np.result_type(a, np.float32)) - np.less(a, 0)


# abs' is g·sgn(x), with sgn a constant of the rule (PyTorch's sgn has no derivative path)
sgn = Primitive("sgn", _sign, nondiff=True, arity=1)
abs = unary("abs", np.abs, lambda g, x, y: g * sgn(x),
            form="sign(x)", kind="function",  # noqa: A001 - |x|'(0)=0
            jet=T.per_coefficient)
sign = unary("sign", _sign, ZERO, form="0", kind="function", jet=T.per_coefficient)
floor = unary("floor", np.floor, ZERO, form="0", kind="function", jet=T.per_coefficient)
ceil = unary("ceil", np.ceil, ZERO, form="0", kind="function", jet=T.per_coefficient)
# relu's rule is PyTorch's threshold_backward on the result: relu'(0) = 0, relu'(nan) = 1, and
# to second order zeros flow back into the result, as in PyTorch
threshold_backward = binary("threshold_backward", lambda g, y: np.where(y <= 0, 0.0, g),
                            lambda g2, g, y, out: where(y <= 0, 0.0, g2), ZERO,
                            jet=T.per_coefficient)
# tanh's and sigmoid's rules on the result, with PyTorch's second-order formulas (one product,
# so inf·(1 - 2y) is inf, never inf - inf)
tanh_backward = binary("tanh_backward", lambda g, y: g * (1.0 - y * y),
                       lambda h, g, y, out: tanh_backward(h, y),
                       lambda h, g, y, out: h * (-2.0 * y * g),
                       jet=T.composite(lambda g, y: g * (1.0 - y * y)))
sigmoid_backward = binary("sigmoid_backward", lambda g, y: g * (1.0 - y) * y,
                          lambda h, g, y, out: sigmoid_backward(h, y),
                          lambda h, g, y, out: h * g * (-2.0 * y + 1.0),
                          jet=T.composite(lambda g, y: g * (1.0 - y) * y))
relu = unary("relu", lambda a: np.maximum(a, 0.0), lambda g, x, y: threshold_backward(g, y),
             form="where(x <= 0, 0, 1)", kind="function", jet=T.per_coefficient)


def _sigmoid(a: Any) -> Any:
    """1/(1 + e^-a), through e^-|a| so that neither branch overflows or loses digits."""
    e = np.exp(-np.abs(a))
    return np.where(np.asarray(a) >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _logsigmoid(a: Any) -> Any:
    """log(sigmoid(a)) = min(a, 0) - log1p(e^-|a|): finite for every finite a."""
    return np.minimum(a, 0.0) - np.log1p(np.exp(-np.abs(a)))


sigmoid = unary("sigmoid", _sigmoid, lambda g, x, y: sigmoid_backward(g, y),
                form="y*(1 - y)", kind="function",
                jet=T.via_output(0.0, 1.0, -1.0))
softplus = unary("softplus", lambda a: np.logaddexp(0.0, a), lambda g, x, y: g * sigmoid(x),
                 form="sigmoid(x)", kind="function",
                 jet=T.via_input(lambda u: u.ode(_sigmoid(u[0]), 0.0, 1.0, -1.0)))
logsigmoid = unary("logsigmoid", _logsigmoid, lambda g, x, y: g * sigmoid(-x),
                   form="sigmoid(-x)", kind="function",
                   jet=T.via_input(lambda u: (-u).ode(_sigmoid(-u[0]), 0.0, 1.0, -1.0)))
# the gradient passes at the boundary: ∂/∂x clamp(x) = 1 for min <= x <= max
clamp = unary("clamp", lambda a, min=None, max=None: np.clip(a, min, max),  # noqa: A002
              lambda g, x, y, min=None, max=None: where(logical_and(  # noqa: A002
                  x >= (-np.inf if min is None else min), x <= (np.inf if max is None else max)),
                  g, 0.0), grad_name="ClampBackward1", jet=T.per_coefficient)

# --- comparisons and masks: booleans, no gradient ------------------------------------------
lt = _nondiff("lt", np.less, "compare")
le = _nondiff("le", np.less_equal, "compare")
gt = _nondiff("gt", np.greater, "compare")
ge = _nondiff("ge", np.greater_equal, "compare")
eq = _nondiff("eq", np.equal, "compare")
ne = _nondiff("ne", np.not_equal, "compare")
logical_and = _nondiff("logical_and", np.logical_and)
logical_not = Primitive("logical_not", np.logical_not, nondiff=True, arity=1)
isfinite = Primitive("isfinite", np.isfinite, nondiff=True, arity=1)
isinf = Primitive("isinf", np.isinf, nondiff=True, arity=1)


def _where_vjp(ctx: Ctx, g: Any) -> list:
    c, needs = ctx.inputs[0], ctx.needs
    return [None,
            unbroadcast(where(c, g, 0.0), ctx.shapes[1]) if needs[1] else None,
            unbroadcast(where(c, 0.0, g), ctx.shapes[2]) if needs[2] else None]


def _where_jvp(ctx: Ctx, tangents: list) -> Any:
    _, ta, tb = tangents
    if ta is None and tb is None:
        return None
    return where(ctx.inputs[0], 0.0 if ta is None else ta, 0.0 if tb is None else tb)


where = Primitive("where", lambda c, a, b: np.where(c, a, b), vjp=_where_vjp, jvp=_where_jvp,
                  jet=T.per_coefficient, arity=3)


Dim = int | tuple[int, ...]


def _negative(dim: Dim, ndim: int) -> tuple[int, ...]:
    """``dim`` as negative axes of an array of ``ndim`` axes (robust to leading axes)."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(d - ndim if d >= 0 else d for d in dims))


def _reduced_shape_back(g: Any, shape: tuple, dim: Any = None, keepdim: bool = False) -> Any:
    """A reduction's cotangent with unit axes where ``dim`` was reduced, so that it
    broadcasts against the input. The axes are inserted counting from the end, so ``g``
    may have fewer leading axes than the output (a scalar seed) or, inside ``batch_axes``,
    larger ones (a per-point cotangent of a shared input)."""
    if keepdim or not np.ndim(raw(g)):
        return g
    if dim is None:
        return reshape(g, shape=(1,) * len(shape))
    return unsqueeze(g, dim=_negative(dim, len(shape)))


def _sum_t(ctx: Ctx, g: Any) -> Any:
    back = _reduced_shape_back(g, ctx.shapes[0], **ctx.params)
    # a per-point cotangent of a shared input (inside batch_axes) keeps its leading axes
    return broadcast_to(back, shape=np.broadcast_shapes(np.shape(raw(back)), ctx.shapes[0]))


def _squeeze_fwd(a: Any, dim: Dim) -> Any:
    # a 0-d value is a broadcast scalar (a seed): it has no axes to remove
    return a if np.ndim(a) == 0 else np.squeeze(a, axis=dim)


# unit axes in and out, and the swap of the last two axes: whatever the leading axes are
unsqueeze = linear("unsqueeze", lambda a, dim: np.expand_dims(a, dim),
                   lambda ctx, g: squeeze(g, dim=ctx.params["dim"]))


squeeze = linear("squeeze", _squeeze_fwd, lambda ctx, g: unsqueeze(g, dim=ctx.params["dim"]),
                 grad_name="SqueezeBackward1")


sum_to = linear("sum_to", lambda a, shape: _sum_to(np.asarray(a), shape),
                lambda ctx, g: broadcast_to(g, shape=ctx.shapes[0]), grad_name="SumBackward1")


broadcast_to = linear("broadcast_to", lambda a, shape: np.broadcast_to(a, shape),
                      lambda ctx, g: unbroadcast(g, ctx.shapes[0]), grad_name="ExpandBackward0")


sum = linear("sum",  # noqa: A001 - mirrors torch.sum
             lambda a, dim=None, keepdim=False: np.sum(a, axis=dim, keepdims=keepdim), _sum_t)


def _sum_to(a: np.ndarray, shape: tuple) -> np.ndarray:
    lead = a.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(shape) if n == 1 and a.shape[i + lead] != 1
    )
    out = a.sum(axis=axes, keepdims=True) if axes else a
    return out.reshape(shape)


reshape = linear("reshape", lambda a, shape: np.reshape(a, shape),
                 lambda ctx, g: reshape(g, shape=ctx.shapes[0]), grad_name="ViewBackward0")
