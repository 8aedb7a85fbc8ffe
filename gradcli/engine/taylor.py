"""Taylor mode: truncated Taylor series (jets) pushed through the rule table.

A jet of order K follows a straight line through the inputs, x(t) = x₀ + s·t, and carries
for every recorded value y(t) = f(x(t)) its Taylor coefficients y₀, y₁, ..., y_K, where
y_k = (1/k!)·dᵏy/dtᵏ at t = 0. One sweep gives every derivative of order ≤ K along s:
dᵏf/dtᵏ = k!·y_k (Griewank & Walther, *Evaluating Derivatives*, ch. 13). Mixed partials
come from one multivariate sweep (``Jets.multivariate``): x(t) = x₀ + Σ eᵢtᵢ, each y_k a
homogeneous polynomial of degree k in t (``homogeneous.Poly``), through the same rules.

Each primitive of the table declares its jet rule once, as the keyword ``jet=`` beside its
``vjp=`` and ``jvp=`` (``rules.py``), mostly through the generic forms below: every
coefficient through the first-order rule (linear and piecewise-linear primitives), the
Cauchy product, the quotient recurrence, ``y' = w(y)·u'`` (exp, tan, tanh, sigmoid) and
``y' = w(u)·u'`` with w written in series arithmetic (atan, log, asin...). These are the
standard recurrences of Taylor arithmetic, O(K²) per operation; no rule is differentiated
per order. A rule returns ``[y₁, ..., y_K]`` (None for an exactly zero coefficient, or None
for all); y₁ is what the first-order rule gives, so a jet of order 1 *is* forward mode,
with the same values at singular points.

A series is a list ``[c₀, c₁, ..., c_K]`` of arrays that broadcast against the value
(None = exactly zero); an input that does not depend on the direction has no series
(None). ``Jets`` replays a recorded forward pass for as many directions as wanted, as
``forward.Linearized`` replays tangent sweeps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from gradcli.engine.core import Tensor, as_array, raw
from gradcli.engine.grad_mode import enable_grad, quiet
from gradcli.engine.homogeneous import Poly, variables
from gradcli.engine.primitive import Ctx, Node, collect_nodes

__all__ = ["Jets", "MissingTaylorRule", "Series", "jet", "per_coefficient", "product",
           "quotient", "via_output", "via_input", "sin_cos", "sinh_cosh", "power_rule",
           "sqrt_rule", "composite", "first", "full_series", "integral", "weighted",
           "ode_fill", "JetCtx", "moving"]


class MissingTaylorRule(NotImplementedError):
    """A recorded primitive has no ``jet=`` rule: higher derivatives cannot go through it."""

    def __init__(self, name: str, why: str = "has no Taylor-mode rule") -> None:
        super().__init__(f"the primitive '{name}' {why}, so derivatives above the first "
                         "cannot be taken through it")
        self.primitive = name


class JetCtx(Ctx):
    """A rule's view of one recorded operation in a Taylor sweep: ``Ctx`` plus the
    primitive, the order K, a memo of values that do not depend on the direction (cos x₀
    for sin), kept across the directions of one ``Jets``, and ``top``: only y_K of this
    operation is wanted (an output nothing else consumes, in a sweep asked for the top
    order only), so a rule may leave the lower coefficients out (None)."""

    __slots__ = ("prim", "order", "memo", "top")

    def __init__(self, node: Node) -> None:
        out = node.out_ref()
        super().__init__([raw(a) for a in node.saved], raw(out), node.params, node.shapes)
        self.prim, self.order, self.memo, self.top = node.prim, 0, {}, False

    def cached(self, key: str, make: Callable[[], Any]) -> Any:
        """``make()``, computed once per operation for every direction."""
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]


# --- coefficient arithmetic with None as an exact zero --------------------------------------
def _plus(a: Any, b: Any) -> Any:
    if a is None:
        return b
    return a if b is None else a + b


def _minus(a: Any, b: Any) -> Any:
    if b is None:
        return a
    return -b if a is None else a - b


def _times(a: Any, b: Any) -> Any:
    return None if a is None or b is None else a * b


def _scaled(c: Any, a: Any) -> Any:
    return None if a is None else (a if c == 1 else c * a)


def cauchy(a: Sequence[Any], b: Sequence[Any], k: int, lo: int = 0,
           mul: Callable[[Any, Any], Any] | None = None) -> Any:
    """Σ a_j·b_{k-j} over lo ≤ j ≤ k - lo: coefficient k of a product."""
    total = None
    for j in range(lo, k - lo + 1):
        if a[j] is None or b[k - j] is None:
            continue
        term = a[j] * b[k - j] if mul is None else mul(a[j], b[k - j])
        total = term if total is None else total + term
    return total


def weighted(u: Sequence[Any]) -> list[Any]:
    """[None, 1·u₁, 2·u₂, ...]: the coefficients of t·u'(t), reused by every recurrence."""
    return [None] + [_scaled(j, c) for j, c in enumerate(u[1:], 1)]


def integral(du: Sequence[Any], w: Sequence[Any], k: int) -> Any:
    """y_k of y' = w·u': (1/k)·Σ_{j=1..k} j·u_j·w_{k-j}. In a term with a number for a
    factor (u along a straight line), 1/k goes into the number: a pass over the block
    saved. Only numbers: which terms fold must not depend on how the points are given
    (a grid axis is smaller than the block, the same values as points are not), or one
    point could get two answers."""
    plain = folded = None
    for j in range(1, k + 1):
        a, b = du[j], w[k - j]
        if a is None or b is None:
            continue
        if k > 1 and (np.ndim(a) == 0 or np.ndim(b) == 0):
            term = (a / k) * b if np.ndim(a) == 0 else a * (b / k)
            folded = term if folded is None else folded + term
        else:
            term = a * b
            plain = term if plain is None else plain + term
    if plain is not None and k > 1:
        plain = plain / k
    return _plus(plain, folded)


def moving(c: Any) -> Any:
    """Where a coefficient is not zero (along any variable, for a multivariate one)."""
    return (c != 0).any_monomial() if isinstance(c, Poly) else c != 0


def _full(u: Sequence[Any] | None, primal: Any, order: int) -> list[Any]:
    return list(u) if u is not None else [primal] + [None] * order


class Series:
    """A truncated Taylor series c₀ + c₁t + ... + c_K t^K of arrays (None = 0), with the
    arithmetic that jet rules are written in: ``+ - * /`` with series or numbers, ``**``
    a number, ``sqrt``, and ``ode`` for y' = (a + b·y + c·y²)·u'."""

    __slots__ = ("c",)

    def __init__(self, coefficients: Sequence[Any]) -> None:
        self.c = list(coefficients)

    @property
    def order(self) -> int:
        return len(self.c) - 1

    def __getitem__(self, k: int) -> Any:
        return self.c[k]

    def __add__(self, other: Any) -> Series:
        if isinstance(other, Series):
            return Series([self.c[0] + other.c[0]]
                          + [_plus(a, b) for a, b in zip(self.c[1:], other.c[1:], strict=True)])
        return Series([self.c[0] + other] + self.c[1:])

    __radd__ = __add__

    def __neg__(self) -> Series:
        return Series([None if a is None else -a for a in self.c])

    def __sub__(self, other: Any) -> Series:
        return self + (-other)

    def __rsub__(self, other: Any) -> Series:
        return (-self) + other

    def __mul__(self, other: Any) -> Series:
        if isinstance(other, Series):
            return Series([cauchy(self.c, other.c, k) for k in range(self.order + 1)])
        return Series([None if a is None else a * other for a in self.c])

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> Series:
        if isinstance(other, Series):
            return Series(_quotient(self.c, other.c, self.c[0] / other.c[0]))
        return Series([None if a is None else a / other for a in self.c])

    def __rtruediv__(self, other: Any) -> Series:
        return Series(_quotient([other] + [None] * self.order, self.c, other / self.c[0]))

    def __pow__(self, r: float) -> Series:
        return Series(_power(self.c, float(r), self.c[0] ** float(r)))

    def sqrt(self) -> Series:
        y = [self.c[0] ** 0.5]
        return Series(_sqrt(self.c, y, 1))

    def derivative(self) -> Series:
        """The series of du/dt, one order shorter."""
        slope = [_scaled(j, a) for j, a in enumerate(self.c[1:], 1)]
        if slope[0] is None:  # a zero of u₁'s degree: 1 in several variables
            poly = next((c for c in self.c if isinstance(c, Poly)), None)
            slope[0] = 0.0 if poly is None else Poly.zero(1, poly.cap)
        return Series(slope)

    def truncated(self, order: int) -> Series:
        return Series(self.c[:order + 1])

    def ode(self, y0: Any, a: float, b: float, c: float) -> Series:
        """The series of y with y(0) = y0 and y' = (a + b·y + c·y²)·u', u being self."""
        y = [y0]
        ode_fill(weighted(self.c), y, a, b, c, self.order)
        return Series(y)


def _quotient(a: Sequence[Any], b: Sequence[Any], q0: Any, start: int = 1) -> list[Any]:
    """q = a/b: q_k = (a_k - Σ_{j<k} q_j·b_{k-j}) / b₀, extending [q₀, ...] from ``start``."""
    q = [q0]
    for k in range(1, len(a)):
        if k < start:
            continue
        acc = a[k]
        for j in range(k):
            acc = _minus(acc, _times(q[j], b[k - j]))
        q.append(None if acc is None else acc / b[0])
    return q


def _power(u: Sequence[Any], r: Any, y0: Any, y1: Any = None) -> list[Any]:
    """u^r for a number (or an array of them) r. A whole number 0 ≤ r ≤ 64 by repeated
    squaring (exact at u₀ = 0, where x² is smooth); otherwise the recurrence
    k·u₀·y_k = Σ_{j=1..k} (r·j - (k - j))·u_j·y_{k-j}."""
    order = len(u) - 1
    if isinstance(r, float) and r == 2.0:  # the common square: only the coefficients used
        return [y0, y1 if y1 is not None else cauchy(u, u, 1)] + [
            cauchy(u, u, k) for k in range(2, order + 1)]
    if isinstance(r, float) and r.is_integer() and 0 <= r <= 64:
        result: Series | None = None
        base, n = Series(u), int(r)
        while n:
            if n & 1:
                result = base if result is None else result * base
            n >>= 1
            if n:
                base = base * base
        return [y0] + (result.c[1:] if result is not None else [None] * order)
    if not isinstance(r, float):  # per point: whole exponents by squaring there too
        return _power_per_point(u, np.asarray(r), y0, y1)
    return _recurrence(u, r, y0, y1)


def _recurrence(u: Sequence[Any], r: Any, y0: Any, y1: Any) -> list[Any]:
    """u^r by k·u₀·y_k = Σ_{j=1..k} (r·j - (k - j))·u_j·y_{k-j} (y₁ kept when given)."""
    y = [y0]
    for k in range(1, len(u)):
        if k == 1 and y1 is not None:  # the first-order rule's value, kept
            y.append(y1)
            continue
        acc = None
        for j in range(1, k + 1):
            if u[j] is None or y[k - j] is None:
                continue
            term = (r * j - (k - j)) * u[j] * y[k - j]
            acc = term if acc is None else acc + term
        y.append(None if acc is None else acc / (k * u[0]))
    return y


def _power_per_point(u: Sequence[Any], r: np.ndarray, y0: Any, y1: Any) -> list[Any]:
    """u^r with r an array (a held exponent): the recurrence, and at the points where r
    is a whole number 0..64 the repeated squaring, which needs no division by u₀."""
    y = _recurrence(u, r, y0, y1)
    whole = (r == np.floor(r)) & (r >= 0) & (r <= 64)
    for value in np.unique(r[whole]):
        exact = _power(u, float(value), y0)
        here = r == value
        y = [y[0]] + [b if k == 1 and y1 is not None else
                      np.where(here, 0.0 if e is None else e, 0.0 if b is None else b)
                      for k, (e, b) in enumerate(zip(exact[1:], y[1:], strict=True), 1)]
    return y


def _sqrt(u: Sequence[Any], y: list[Any], start: int) -> list[Any]:
    """√u: y_k = (u_k - Σ_{0<j<k} y_j·y_{k-j}) / (2·y₀), extending y from ``start``."""
    for k in range(start, len(u)):
        acc = _minus(u[k], cauchy(y + [None], y + [None], k, lo=1))
        y.append(None if acc is None else acc / (2.0 * y[0]))
    return y


def ode_fill(du: Sequence[Any], y: list[Any], a: float, b: float, c: float,
              order: int) -> None:
    """Extend y (y₀ and maybe y₁ given) for y' = (a + b·y + c·y²)·u'."""
    w = [_plus(_plus(a or None, _scaled(b, y[0]) if b else None),
               _scaled(c, y[0] * y[0]) if c else None)]
    for k in range(1, order + 1):
        if k >= len(y):
            y.append(integral(du, w, k))
        square = cauchy(y, y, k) if c else None
        w.append(_plus(_scaled(b, y[k]) if b else None, _scaled(c, square)))


# --- the generic rule forms the table uses --------------------------------------------------
def first(ctx: JetCtx, us: Sequence[Any]) -> Any:
    """y₁: the first-order (JVP) rule applied to the inputs' first coefficients."""
    ts = [None if u is None else u[1] for u in us]
    return None if all(t is None for t in ts) else ctx.prim.jvp(ctx, ts)


def per_coefficient(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
    """Linear and piecewise-linear primitives (sums, reshapes, selects, abs, relu, min,
    max): every Taylor coefficient maps through the first-order rule, as the tangent does."""
    out = []
    for k in range(1, ctx.order + 1):
        ts = [None if u is None else u[k] for u in us]
        out.append(None if all(t is None for t in ts) else ctx.prim.jvp(ctx, ts))
    return out


def product(mul: Callable[[JetCtx, Any, Any], Any] | None = None
            ) -> Callable[..., list[Any]]:
    """A bilinear primitive (``*``, matmul): the Cauchy product y_k = Σ mul(a_j, b_{k-j})
    (``mul(ctx, a, b)``; plain ``*`` when None)."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        a, b = (_full(u, x, ctx.order) for u, x in zip(us, ctx.inputs, strict=True))
        pair = None if mul is None else (lambda p, q: mul(ctx, p, q))
        if ctx.top:
            return [None] * (ctx.order - 1) + [cauchy(a, b, ctx.order, mul=pair)]
        return [first(ctx, us)] + [cauchy(a, b, k, mul=pair) for k in range(2, ctx.order + 1)]

    return rule


def quotient(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
    """a/b: y_k = (a_k - Σ_{j<k} y_j·b_{k-j}) / b₀."""
    a, b = (_full(u, x, ctx.order) for u, x in zip(us, ctx.inputs, strict=True))
    y = [ctx.out, first(ctx, us)]
    for k in range(2, ctx.order + 1):
        acc = a[k]
        for j in range(k):
            acc = _minus(acc, _times(y[j], b[k - j]))
        y.append(None if acc is None else acc / b[0])
    return y[1:]


def via_output(a: float, b: float, c: float) -> Callable[..., list[Any]]:
    """y' = (a + b·y + c·y²)·u': exp (0, 1, 0), expm1 (1, 1, 0), tan (1, 0, 1),
    tanh (1, 0, -1), sigmoid (0, 1, -1)."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        y = [ctx.out, first(ctx, us)]
        ode_fill(weighted(us[0]), y, a, b, c, ctx.order)
        return y[1:]

    return rule


def via_input(w: Callable[[Series], Series]) -> Callable[..., list[Any]]:
    """y' = w(u)·u' with w written in series arithmetic (atan: ``1 / (u*u + 1)``): w's
    series to order K-1, then y_k = (1/k)·Σ j·u_j·w_{k-j}."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        u = us[0]
        y1 = first(ctx, us)
        if ctx.order == 1:
            return [y1]
        ws = w(Series(u[:ctx.order])).c
        du = weighted(u)
        return [y1] + [integral(du, ws, k) for k in range(2, ctx.order + 1)]

    return rule


def sin_cos(partner: Callable[[Any], Any], is_sin: bool) -> Callable[..., list[Any]]:
    """sin (partner cos) or cos (partner sin): s' = c·u', c' = -s·u'."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        s0 = ctx.out if is_sin else ctx.cached("partner", lambda: partner(ctx.inputs[0]))
        c0 = ctx.cached("partner", lambda: partner(ctx.inputs[0])) if is_sin else ctx.out
        s, c = [s0], [c0]
        du = weighted(us[0])
        minus = [None if d is None else -d for d in du]  # c' = -s·u': the sign goes here
        for k in range(1, ctx.order + 1):
            if is_sin or k < ctx.order:
                s.append(integral(du, c, k))
            if not is_sin or k < ctx.order:
                c.append(integral(minus, s, k))
        return (s if is_sin else c)[1:]

    return rule


def sinh_cosh(partner: Callable[[Any], Any], is_sinh: bool) -> Callable[..., list[Any]]:
    """sinh (partner cosh) or cosh (partner sinh): each one's derivative is the other."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        mine = [ctx.out]
        other = [ctx.cached("partner", lambda: partner(ctx.inputs[0]))]
        du = weighted(us[0])
        for k in range(1, ctx.order + 1):
            mine.append(integral(du, other, k))
            if k < ctx.order:
                other.append(integral(du, mine, k))
        return mine[1:]

    return rule


def power_rule(exponent: Callable[[JetCtx], float]) -> Callable[..., list[Any]]:
    """u^r for a constant r (``exponent(ctx)``): see ``_power``; y₁ from the first-order
    rule, so a jet of order 1 is forward mode."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        r = exponent(ctx)
        if isinstance(r, float) and r == 0:  # zeros, as the first-order rule gives them
            return per_coefficient(ctx, us)
        y1 = first(ctx, us)
        return [y1] + _power(us[0], r, ctx.out, y1)[2:]

    return rule


def full_series(u: Sequence[Any] | None, primal: Any, order: int) -> list[Any]:
    """An input's series, or a constant's ([x₀, None, ...]) when it has none."""
    return _full(u, primal, order)


def composite(fn: Callable[..., Series]) -> Callable[..., list[Any]]:
    """A primitive that is a short formula of its inputs, written in series arithmetic
    (tanh_backward: ``g * (1 - y*y)``); y₁ from the first-order rule."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        ins = [Series(_full(u, x, ctx.order)) for u, x in zip(us, ctx.inputs, strict=True)]
        return [first(ctx, us)] + fn(*ins).c[2:]

    return rule


def sqrt_rule(square: Callable[[JetCtx, Sequence[Any]], list[Any]]) -> Callable[..., list[Any]]:
    """√s for a series ``square(ctx, us)`` (sqrt: the input; hypot: a² + b²; norm: Σx²):
    y_k = (s_k - Σ_{0<j<k} y_j·y_{k-j}) / (2·y₀), y₁ from the first-order rule."""

    def rule(ctx: JetCtx, us: Sequence[Any]) -> list[Any]:
        y = [ctx.out, first(ctx, us)]
        if ctx.order > 1:
            _sqrt(square(ctx, us), y, 2)
        return y[1:]

    return rule


# --- sweeps ---------------------------------------------------------------------------------
def _key(t: Tensor) -> int:
    return id(t.grad_fn) if t.grad_fn is not None else id(t)


class Jets:
    """A recorded forward pass from ``leaves`` to ``outputs`` that replays Taylor sweeps.

    ``sweep(seeds, order)``: ``seeds[i]`` is leaf i's direction component (a number or an
    array: x(t) = x₀ + s·t), a full list [s₁, ..., s_K] of its coefficients, or None;
    returns each output's series [y₀, y₁, ..., y_K] (None where it does not depend on the
    direction). Values of one operation that do not depend on the direction (cos x₀ for
    sin) are computed once for all sweeps; a value's series is dropped once its last
    consumer has run, so memory stays at what is live. With ``top_only`` only y_K of the
    outputs is wanted: their lower coefficients may come back as None.
    """

    def __init__(self, leaves: Sequence[Tensor], outputs: Sequence[Any]) -> None:
        self.leaves = list(leaves)
        self.outputs = list(outputs)
        live = [o for o in self.outputs if isinstance(o, Tensor) and o.grad_fn is not None]
        self.nodes = collect_nodes(o.grad_fn for o in live)
        self._ctx: dict[int, JetCtx] = {}
        self._uses: dict[int, int] = {}
        for node in self.nodes:
            for a in node.saved or ():
                if isinstance(a, Tensor):
                    self._uses[_key(a)] = self._uses.get(_key(a), 0) + 1

    def sweep(self, seeds: Sequence[Any], order: int, top_only: bool = False
              ) -> list[list[Any] | None]:
        series: dict[int, list[Any]] = {}
        for leaf, s in zip(self.leaves, seeds, strict=True):
            if s is None:
                continue
            coeffs = list(s) if isinstance(s, (list, tuple)) else [s]
            series[id(leaf)] = [leaf.arr] + (coeffs + [None] * order)[:order]
        keep = {_key(o) for o in self.outputs if isinstance(o, Tensor)}
        left = dict(self._uses)
        with quiet():
            for node in self.nodes:
                saved = node.saved
                if saved is None:
                    raise RuntimeError("jets: the graph's saved values were freed")
                keys = [_key(a) if isinstance(a, Tensor) else None for a in saved]
                us = [series.get(k) if k is not None else None for k in keys]
                if any(u is not None for u in us):
                    self._apply(node, us, order, series,
                                top_only and self._uses.get(id(node), 0) == 0)
                for k in keys:
                    if k is None:
                        continue
                    left[k] -= 1
                    if not left[k] and k not in keep:
                        series.pop(k, None)
        return [series.get(_key(o)) if isinstance(o, Tensor) else None for o in self.outputs]

    def multivariate(self, units: Sequence[Sequence[Any]], order: int,
                     top_only: bool = False, cap: Sequence[int] | None = None
                     ) -> list[list[Any] | None]:
        """The multivariate Taylor series in n variables t₁..t_n: ``units[m][i]`` is leaf
        i's change along variable m (a number or an array; None: none), so that leaf i
        follows x₀ + Σ_m units[m][i]·t_m. Returns each output's series [y₀, y₁, ..., y_K]
        with y_k a ``Poly`` of degree k (``y_k.monomial(α)`` = ∂^α f / α!), None where
        exactly zero; ``top_only`` as in ``sweep``. ``cap``: the highest power kept of
        each variable (all, by default): a single ∂^α f needs only the monomials ≤ α."""
        limit = tuple(cap) if cap is not None else (order,) * len(units)
        seeds = []
        for i in range(len(self.leaves)):
            along = [u[i] for u in units]
            seeds.append(None if all(s is None for s in along) else variables(along, limit))
        return self.sweep(seeds, order, top_only)

    def _apply(self, node: Node, us: list[Any], order: int, series: dict[int, list],
               top: bool) -> None:
        rule = node.prim.jet
        if rule is None and order == 1:  # a jet of order 1 is forward mode: every rule has it
            rule = lambda ctx, us: [first(ctx, us)]  # noqa: E731
        if rule is None:
            raise MissingTaylorRule(node.prim.name)
        ctx = self._ctx.get(id(node))
        if ctx is None:
            ctx = self._ctx[id(node)] = JetCtx(node)
        ctx.order, ctx.top = order, top
        got = rule(ctx, us)
        if got is not None and any(c is not None for c in got):
            series[id(node)] = [ctx.out] + list(got)


def jet(fn: Callable[..., Any], primals: Sequence[Any], series: Sequence[Any],
        order: int | None = None) -> tuple[Any, list[Any]]:
    """``jax.experimental.jet`` for the engine: f's Taylor coefficients along a path.

    ``primals`` are the inputs x₀; ``series[i]`` lists input i's coefficients [x₁, ...,
    x_K] (or is None: a constant input). Returns (f(x₀), [y₁, ..., y_K]) as arrays, with
    y_k = (1/k!)·dᵏ/dtᵏ f(x(t)) at t = 0; a coefficient that is exactly zero comes back as
    zeros. ``order`` defaults to the longest input series.
    """
    k = order if order is not None else max((len(s) for s in series if s is not None),
                                            default=0)
    leaves = [Tensor._make(np.array(as_array(x))).requires_grad_() for x in primals]
    with enable_grad(), quiet():
        out = fn(*leaves)
    got = Jets(leaves, [out]).sweep([None if s is None else [as_array(c) for c in s]
                                     for s in series], k)[0]
    value = raw(out)
    coeffs = (got or [value] + [None] * k)[1:]
    return value, [np.zeros_like(value) if c is None else
                   np.broadcast_to(np.asarray(c, dtype=np.asarray(value).dtype),
                                   np.shape(value)).copy() for c in coeffs]
