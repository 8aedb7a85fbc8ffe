"""The primitive table, fourth part: the special functions (erf, Γ and their family).

numpy has none of these, so the forwards are scipy.special's ufuncs (Cephes and Boost
underneath), imported inside each forward: an expression without a special function
never imports scipy, and one with them pays its import (about 0.1 s) once, at its first
value. ``npdf`` is written here (exp of a square split so that x² is exact), the rest
are scipy's; their accuracy against mpmath is measured per function by
``tests/engine/test_engine_special.py`` (bounds stated there).

The derivatives are the textbook ones, written with primitives so they differentiate
again: erf' = (2/√π)·e^(-x²), erfinv' = (√π/2)·e^(y²), Γ' = Γ·ψ, lgamma' = ψ,
ψ' = ψ⁽¹⁾, ψ⁽ⁿ⁾' = ψ⁽ⁿ⁺¹⁾, ∂B/∂a = B·(ψ(a) - ψ(a + b)), ncdf' = npdf, npdf' = -x·npdf.
``polygamma(n, x)`` is in the language so that every derivative has a form: its n is a
whole number ≥ 0 (nan otherwise) and, being discrete, has derivative 0, as floor's.

Taylor mode: erf, erfc and ncdf are y' = w(u)·u' with w = c·exp(v) for a square v (the
series of exp(v) by E' = E·v'); npdf is y' = y·v'; erfinv couples y' = (√π/2)·E·u' with
E = exp(y²), E' = E·(y²)', one coefficient of each at a time. The gamma family composes
the known derivatives at u₀ (ψ⁽ⁿ⁾(u₀)/n!, the Taylor coefficients of ψ) with the powers
of u - u₀ (``_compose``: Faà di Bruno by series powers, O(K³), K ≤ a few tens); Γ and B
are then exp of lgamma's and lbeta's series (y' = y·L').
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.engine import taylor as T
from gradcli.engine.rules_elementwise import ZERO, binary, exp, unary

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
HALF_SQRT_PI = math.sqrt(math.pi) / 2.0
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_HALF = math.sqrt(0.5)


def _special() -> Any:
    """scipy.special, imported by the first forward that needs it (not at start-up)."""
    from scipy import special

    return special


def _erf(a: Any) -> Any:
    return _special().erf(a)


def _erfc(a: Any) -> Any:
    """erfc, from a = 1 on as e^(-a²)·erfcx(a) (x² exact, the scaled erfcx to an ulp):
    scipy's erfc rounds a² inside its exponential, 250 ulps off at a = 25."""
    special = _special()
    a = np.asarray(a)
    y = special.erfc(a)
    far = a >= 1.0
    if far.any():
        y = np.where(far, _gaussian(a, 1.0) * special.erfcx(np.where(far, a, 1.0)), y)
    return y[()] if y.ndim == 0 else y


def _erfinv(a: Any) -> Any:
    return _special().erfinv(a)


def _gamma(a: Any) -> Any:
    """Γ(a), its poles as conventions.md says whatever scipy's version: ±inf at ±0 (the
    zero's sign), nan at the negative integers (the two sides' limits differ). scipy
    before 1.15 gave +inf at both."""
    y = _special().gamma(a)
    poles = a <= 0
    if not np.any(poles):
        return y
    at = np.where(a == 0, np.copysign(np.inf, a), np.nan)
    return np.where(poles & (a == np.floor(a)), at, y)


def _lgamma(a: Any) -> Any:
    """log|Γ(a)| (torch.lgamma, math.lgamma): real for negative a too."""
    return _special().gammaln(a)


def _digamma(a: Any) -> Any:
    """ψ; below 0 by the reflection ψ(a) = ψ(1 - a) - π·cot(π·r) with r = a - round(a)
    (exact), where scipy's π·a rounding costs |a| ulps absolute (24 at a = -7.7)."""
    special = _special()
    a = np.asarray(a)
    y = special.psi(a)
    r = a - np.round(a)
    negative = (a < 0) & (r != 0)
    if negative.any():
        with np.errstate(all="ignore"):
            y = np.where(negative, special.psi(1.0 - a) - np.pi / np.tan(np.pi * r), y)
    return y[()] if y.ndim == 0 else y


def _polygamma(n: Any, a: Any) -> Any:
    """ψ⁽ⁿ⁾(a) for whole n ≥ 0 (ψ itself at n = 0), nan for any other n."""
    special = _special()
    n, a = np.broadcast_arrays(np.asarray(n, dtype=float), np.asarray(a))
    whole = (n >= 0) & (n == np.floor(n)) & (n <= 1000)
    m = np.where(whole, n, 1.0)
    with np.errstate(all="ignore"):
        y = np.where(m == 0, _digamma(a), (-1.0) ** (m + 1.0) * special.gamma(m + 1.0)
                     * special.zeta(m + 1.0, a))
    y = np.where(whole, y, np.nan).astype(np.result_type(a, np.float32))
    return y[()] if y.ndim == 0 else y


def _beta(a: Any, b: Any) -> Any:
    return _special().beta(a, b)


def _lbeta(a: Any, b: Any) -> Any:
    """log|B(a, b)|."""
    return _special().betaln(a, b)


def _ncdf(a: Any) -> Any:
    """Φ(a) = erfc(-a/√2)/2: scipy's ndtr, and below a = -1 e^(-a²/2)·erfcx(-a/√2)/2 (a²
    exact; erfcx changes slowly, so rounding a/√2 costs no more than an ulp), where ndtr
    is 900 ulps off at a = -33."""
    special = _special()
    a = np.asarray(a)
    y = special.ndtr(a)
    far = a <= -1.0
    if far.any():
        t = np.where(far, a, -1.0) * -SQRT_HALF
        y = np.where(far, 0.5 * _gaussian(a, 0.5) * special.erfcx(t), y)
    return y[()] if y.ndim == 0 else y


def _gaussian(a: Any, k: float) -> Any:
    """e^(-k·a²) for k = 1 or 1/2, with a² split into an exact head and a small tail (a =
    h + l, h with 26 bits, so k·h² is exact): e^(-k·h²)·e^(-k·(2hl + l²)) loses no digits
    to the rounding of a², which costs 2·k·a² ulps (130 at a = 5.7) in e^(-k·a²)."""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        a = a.astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        split = a * 134217729.0  # 2²⁷ + 1: Veltkamp's split
        h = np.where(np.isfinite(split), split - (split - a), a)
        lo = a - h
        y = np.exp(-k * (h * h)) * np.exp(-k * (2.0 * h * lo + lo * lo))
    return y[()] if y.ndim == 0 else y


def _npdf(a: Any) -> Any:
    """e^(-a²/2)/√(2π)."""
    return _gaussian(a, 0.5) * INV_SQRT_2PI


# --- Taylor-mode helpers ------------------------------------------------------------------
def _gauss(c: float, k: float) -> Any:
    """w(u) = c·e^(-k·u²) for y' = w(u)·u': the series of E = e^v, v = -k·u², by E' = E·v',
    from E₀ with u₀² exact (``_gaussian``)."""
    def w(u: T.Series) -> T.Series:
        return c * (-k * (u * u)).ode(_gaussian(u[0], k), 0.0, 1.0, 0.0)
    return w


def _exp_of_square(k: float) -> Any:
    """The jet of c·e^(-k·u²) (npdf, gauss): y' = y·v' with v = -k·u²."""
    def rule(ctx: T.JetCtx, us: list) -> list:
        u = T.Series(us[0])
        y = [ctx.out, T.first(ctx, us)]
        T.ode_fill(T.weighted((-k * (u * u)).c), y, 0.0, 1.0, 0.0, ctx.order)
        return y[1:]
    return rule


def _erfinv_jet(ctx: T.JetCtx, us: list) -> list:
    """erfinv(u): y' = (√π/2)·E·u' and E' = E·(y²)', E = exp(y²), a coefficient of y,
    then of y², E and w = (√π/2)·E, in turn."""
    du = T.weighted(us[0])
    y = [ctx.out, T.first(ctx, us)]
    e0 = ctx.cached("exp(y^2)", lambda: np.exp(ctx.out * ctx.out))
    e, w, dsq = [e0], [HALF_SQRT_PI * e0], [None]
    for k in range(1, ctx.order + 1):
        if k >= len(y):
            y.append(T.integral(du, w, k))
        if k == ctx.order:
            break
        square = T.cauchy(y, y, k)
        dsq.append(None if square is None else k * square)
        ek = T.integral(dsq, e, k)
        e.append(ek)
        w.append(None if ek is None else HALF_SQRT_PI * ek)
    return y[1:]


def _compose(u: list, derivative: list) -> list:
    """f(u(t))'s coefficients 0..K from ``derivative[n]`` = f⁽ⁿ⁾(u₀)/n! and u's series:
    Σ_n derivative[n]·(u - u₀)ⁿ, the powers by Cauchy products."""
    order = len(u) - 1
    delta = [None, *u[1:]]
    out: list = [derivative[0]] + [None] * order
    power = delta
    for n in range(1, order + 1):
        if n > 1:
            power = [T.cauchy(power, delta, k) for k in range(order + 1)]
        for k in range(n, order + 1):
            if power[k] is not None:
                term = derivative[n] * power[k]
                out[k] = term if out[k] is None else out[k] + term
    return out


def _taylor_of(shift: int) -> Any:
    """The Taylor coefficients at x₀ of ψ⁽ˢʰⁱᶠᵗ⁻¹⁾ (shift 0: lgamma; 1: ψ; n + 1: ψ⁽ⁿ⁾):
    [f(x₀), f'(x₀), f''(x₀)/2!, ...], f⁽ᵏ⁾ = ψ⁽ˢʰⁱᶠᵗ⁺ᵏ⁻¹⁾."""
    def coefficients(x0: Any, order: int, start: Any = 0.0) -> list:
        s = np.asarray(start, dtype=float) + shift
        first = _lgamma(x0) if shift == 0 else None
        out = [first if first is not None else _polygamma(s - 1.0, x0)]
        for k in range(1, order + 1):
            out.append(_polygamma(s + (k - 1), x0) / math.factorial(k))
        return out
    return coefficients


_LGAMMA_TAYLOR = _taylor_of(0)


def _lgamma_series(ctx: T.JetCtx, u: list | None, x0: Any, key: str) -> list:
    """lgamma(u(t))'s series (None coefficients where u is constant)."""
    full = T.full_series(u, x0, ctx.order)
    if all(c is None for c in full[1:]):
        return [None] * (ctx.order + 1)
    at = ctx.cached(f"{key}{ctx.order}", lambda: _LGAMMA_TAYLOR(x0, ctx.order))
    return _compose(full, at)


def _family_jet(shift: int) -> Any:
    """lgamma (shift 0), ψ (1) and ψ⁽ⁿ⁾ (n + 1, n the first input): composition with
    ψ's known Taylor coefficients at u₀."""
    taylor_at = _taylor_of(shift)

    def rule(ctx: T.JetCtx, us: list) -> list:
        x_series, x0 = us[-1], ctx.inputs[-1]
        y1 = T.first(ctx, us)
        if x_series is None:  # only n moves: its derivative is 0
            return [y1] + [None] * (ctx.order - 1)
        start = ctx.inputs[0] if len(us) == 2 else 0.0
        at = ctx.cached(f"at{ctx.order}", lambda: taylor_at(x0, ctx.order, start))
        return [y1] + _compose(T.full_series(x_series, x0, ctx.order), at)[2:]

    return rule


def _exp_of(ctx: T.JetCtx, us: list, log_series: list) -> list:
    """y with y' = y·L' (Γ = ±exp(lgamma), B = ±exp(lbeta)), y₁ from the first-order rule."""
    y = [ctx.out, T.first(ctx, us)]
    T.ode_fill(T.weighted(log_series), y, 0.0, 1.0, 0.0, ctx.order)
    return y[1:]


def _gamma_jet(ctx: T.JetCtx, us: list) -> list:
    return _exp_of(ctx, us, _lgamma_series(ctx, us[0], ctx.inputs[0], "a"))


def _lbeta_series(ctx: T.JetCtx, us: list) -> list:
    """lbeta(a, b)'s series: lgamma(a) + lgamma(b) - lgamma(a + b)."""
    (a, b), order = ctx.inputs, ctx.order
    sa, sb = (T.full_series(u, x, order) for u, x in zip(us, ctx.inputs, strict=True))
    total = (T.Series(sa) + T.Series(sb)).c
    parts = (_lgamma_series(ctx, us[0], a, "a"), _lgamma_series(ctx, us[1], b, "b"),
             _lgamma_series(ctx, total, a + b, "a+b"))
    out: list = [None]
    for k in range(1, order + 1):
        out.append(T._minus(T._plus(parts[0][k], parts[1][k]), parts[2][k]))
    return out


def _beta_jet(ctx: T.JetCtx, us: list) -> list:
    return _exp_of(ctx, us, _lbeta_series(ctx, us))


def _lbeta_jet(ctx: T.JetCtx, us: list) -> list:
    return [T.first(ctx, us)] + _lbeta_series(ctx, us)[2:]


# --- the entries ----------------------------------------------------------------------------
# name                        forward     derivative applied to g            edge case
# e^(-x²) with x² exact: erf's and erfc's derivative to 2 ulps where exp(-(x*x)) loses 2x²
gauss = unary("gauss", lambda a: _gaussian(a, 1.0), lambda g, x, y: g * (-2.0 * (x * y)),
              jet=_exp_of_square(1.0))
erf = unary("erf", _erf, lambda g, x, y: g * (TWO_OVER_SQRT_PI * gauss(x)),
            form="2*exp(-x^2)/sqrt(pi)", kind="function",
            jet=T.via_input(_gauss(TWO_OVER_SQRT_PI, 1.0)))
erfc = unary("erfc", _erfc, lambda g, x, y: g * (-TWO_OVER_SQRT_PI * gauss(x)),
             form="-2*exp(-x^2)/sqrt(pi)", kind="function",
             jet=T.via_input(_gauss(-TWO_OVER_SQRT_PI, 1.0)))
erfinv = unary("erfinv", _erfinv, lambda g, x, y: g * (HALF_SQRT_PI * exp(y * y)),  # inf at ±1
               form="sqrt(pi)/2*exp(y^2)", kind="function", jet=_erfinv_jet)
gamma = unary("gamma", _gamma, lambda g, x, y: g * (y * digamma(x)),  # poles at 0, -1, ...
              form="y*digamma(x)", kind="function", jet=_gamma_jet)
lgamma = unary("lgamma", _lgamma, lambda g, x, y: g * digamma(x), form="digamma(x)",
               kind="function", jet=_family_jet(0))
digamma = unary("digamma", _digamma, lambda g, x, y: g * polygamma(1.0, x),
                form="polygamma(1, x)", kind="function", jet=_family_jet(1))
# n is a whole number: its derivative is 0, as floor's (the forward is nan elsewhere)
polygamma = binary("polygamma", _polygamma, ZERO,
                   lambda g, n, x, y: g * polygamma(n + 1.0, x),
                   form=("0", "polygamma(a + 1, b)"), kind="function", jet=_family_jet(1))
beta = binary("beta", _beta, lambda g, a, b, y: g * (y * (digamma(a) - digamma(a + b))),
              lambda g, a, b, y: g * (y * (digamma(b) - digamma(a + b))),
              form=("y*(digamma(a) - digamma(a + b))", "y*(digamma(b) - digamma(a + b))"),
              kind="function", jet=_beta_jet)
lbeta = binary("lbeta", _lbeta, lambda g, a, b, y: g * (digamma(a) - digamma(a + b)),
               lambda g, a, b, y: g * (digamma(b) - digamma(a + b)),
               form=("digamma(a) - digamma(a + b)", "digamma(b) - digamma(a + b)"),
               kind="function", jet=_lbeta_jet)
ncdf = unary("ncdf", _ncdf, lambda g, x, y: g * npdf(x), form="npdf(x)", kind="function",
             jet=T.via_input(_gauss(INV_SQRT_2PI, 0.5)))
npdf = unary("npdf", _npdf, lambda g, x, y: g * (-(x * y)), form="-x*y", kind="function",
             jet=_exp_of_square(0.5))
