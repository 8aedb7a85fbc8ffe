"""Generate tests/reference/awkward.npz: torch and JAX values, first derivatives and Hessians
of every primitive of the expression language and of every pair of them, at awkward points.

Run with the peers' venv (torch, JAX, mpmath), from the repository root:

    JAX_PLATFORMS=cpu /work/peers-venv/bin/python tests/reference/make_awkward.py

The tests never import torch or JAX: they read the .npz this writes. Each expression is
written three times below from one table: gradcli's text, a torch function and a JAX
function (and an mpmath one, used only where torch and JAX disagree, to find out whether
the point is smooth and which of them has the mathematics right).

Tables (every value float64):

torch has no cbrt: its column uses ``TorchCbrt``, JAX's rule inside torch's autograd.

* ``unary``: f(x) and f(g(x)) for every unary primitive f, g, at the points ``P``;
  columns f, df/dx, d2f/dxdx. torch by ``autograd.grad`` twice (reverse over reverse, as
  ``torch.autograd.functional.hessian``), JAX by ``grad`` and ``hessian``.
* ``binary``: b(x, y) for every binary primitive at all pairs of ``P`` (ties included);
  columns f, df/dx, df/dy, d2f/dxdx, d2f/dxdy, d2f/dydx, d2f/dydy.
* ``pairs``: f(b(x, y)) and b(f(x), y) at all pairs of the smaller set ``Q``.

For each value where torch and JAX disagree, ``*_math`` holds the mpmath derivative (60+
digits) when one-sided differences from both sides agree (a smooth point), else nan.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import mpmath as mp  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

jax.config.update("jax_enable_x64", True)
torch.set_default_dtype(torch.float64)
mp.mp.dps = 60
OUT = Path(__file__).with_name("awkward.npz")

P = [0.0, 0.5, -0.5, 1.0, -1.0, 2.0, 1e-300, -1e-300, 1e300, -1e300, 5e-324, -5e-324,
     1e-310, float("nan")]
Q = [0.0, 1.0, -1.0, 0.5, 2.0, 1e-300, 1e300, float("nan")]
TF = torch.nn.functional


def _real(f):
    """An mpmath function that is nan off its real domain (mpmath would go complex)."""
    def g(*a):
        try:
            v = f(*a)
        except (ValueError, ZeroDivisionError, OverflowError):
            return mp.nan
        return v if isinstance(v, mp.mpf) else mp.nan
    return g


def _mp_sign(x):
    return mp.nan if mp.isnan(x) else mp.mpf(0) if x == 0 else mp.mpf(1) if x > 0 else mp.mpf(-1)


def _mp_sigmoid(x):
    return 1 / (1 + mp.exp(-x))


class TorchCbrt(torch.autograd.Function):
    """torch has no cbrt: this one applies JAX's rule, g·(1/3)·y⁻², with torch's own autograd
    (to any order: the backward is written with differentiable torch operations)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return torch.from_numpy(np.cbrt(x.detach().numpy()))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ((1.0 / 3.0) * TorchCbrt.apply(x) ** -2.0)


# name: (gradcli text with {} for the argument, torch, JAX, mpmath)
UNARY = {
    "sin": ("sin({})", torch.sin, jnp.sin, mp.sin),
    "cos": ("cos({})", torch.cos, jnp.cos, mp.cos),
    "tan": ("tan({})", torch.tan, jnp.tan, mp.tan),
    "asin": ("asin({})", torch.asin, jnp.arcsin, lambda x: mp.asin(x) if abs(x) <= 1 else mp.nan),
    "acos": ("acos({})", torch.acos, jnp.arccos, lambda x: mp.acos(x) if abs(x) <= 1 else mp.nan),
    "atan": ("atan({})", torch.atan, jnp.arctan, mp.atan),
    "sinh": ("sinh({})", torch.sinh, jnp.sinh, mp.sinh),
    "cosh": ("cosh({})", torch.cosh, jnp.cosh, mp.cosh),
    "tanh": ("tanh({})", torch.tanh, jnp.tanh, mp.tanh),
    "asinh": ("asinh({})", torch.asinh, jnp.arcsinh, mp.asinh),
    "acosh": ("acosh({})", torch.acosh, jnp.arccosh, lambda x: mp.acosh(x) if x >= 1 else mp.nan),
    "atanh": ("atanh({})", torch.atanh, jnp.arctanh,
              lambda x: mp.atanh(x) if abs(x) < 1 else mp.nan),
    "exp": ("exp({})", torch.exp, jnp.exp, mp.exp),
    "expm1": ("expm1({})", torch.expm1, jnp.expm1, mp.expm1),
    "log": ("log({})", torch.log, jnp.log, lambda x: mp.log(x) if x > 0 else mp.nan),
    "log1p": ("log1p({})", torch.log1p, jnp.log1p, lambda x: mp.log1p(x) if x > -1 else mp.nan),
    "log2": ("log2({})", torch.log2, jnp.log2, lambda x: mp.log(x, 2) if x > 0 else mp.nan),
    "log10": ("log10({})", torch.log10, jnp.log10, lambda x: mp.log10(x) if x > 0 else mp.nan),
    "sqrt": ("sqrt({})", torch.sqrt, jnp.sqrt, lambda x: mp.sqrt(x) if x >= 0 else mp.nan),
    "cbrt": ("cbrt({})", TorchCbrt.apply, jnp.cbrt,
             lambda x: mp.cbrt(x) if x >= 0 else -mp.cbrt(-x)),
    "abs": ("abs({})", torch.abs, jnp.abs, abs),
    "sign": ("sign({})", torch.sign, jnp.sign, _mp_sign),
    "relu": ("relu({})", torch.relu, jax.nn.relu, lambda x: max(x, 0)),
    "sigmoid": ("sigmoid({})", torch.sigmoid, jax.nn.sigmoid, _mp_sigmoid),
    "softplus": ("softplus({})", TF.softplus, jax.nn.softplus, lambda x: mp.log1p(mp.exp(x))),
    "logsigmoid": ("logsigmoid({})", TF.logsigmoid, jax.nn.log_sigmoid,
                   lambda x: -mp.log1p(mp.exp(-x))),
    "floor": ("floor({})", torch.floor, jnp.floor, mp.floor),
    "ceil": ("ceil({})", torch.ceil, jnp.ceil, mp.ceil),
    "neg": ("-({})", torch.neg, jnp.negative, lambda x: -x),
    "square": ("({})^2", lambda t: t ** 2.0, lambda t: t ** 2.0, lambda x: x ** 2),
    "cube": ("({})^3", lambda t: t ** 3.0, lambda t: t ** 3.0, lambda x: x ** 3),
    "pow0": ("({})^0", lambda t: t ** 0.0, lambda t: t ** 0.0, lambda x: mp.mpf(1)),
    "pow_half": ("({})^0.5", lambda t: t ** 0.5, lambda t: t ** 0.5,
                 lambda x: mp.sqrt(x) if x >= 0 else mp.nan),
    "recip": ("({})^(-1)", lambda t: t ** -1.0, lambda t: t ** -1.0, lambda x: 1 / x),
    "exp2": ("2^({})", lambda t: torch.pow(2.0, t), lambda t: 2.0 ** t, lambda x: mp.mpf(2) ** x),
}
BINARY = {
    "add": ("({})+({})", torch.add, jnp.add, lambda a, b: a + b),
    "sub": ("({})-({})", torch.sub, jnp.subtract, lambda a, b: a - b),
    "mul": ("({})*({})", torch.mul, jnp.multiply, lambda a, b: a * b),
    "div": ("({})/({})", torch.div, jnp.divide, lambda a, b: a / b),
    "pow": ("({})^({})", torch.pow, lambda a, b: a ** b,
            lambda a, b: a ** b if a > 0 else mp.nan),
    "min": ("min({},{})", torch.minimum, jnp.minimum, min),
    "max": ("max({},{})", torch.maximum, jnp.maximum, max),
    "atan2": ("atan2({},{})", torch.atan2, jnp.arctan2, mp.atan2),
    "hypot": ("hypot({},{})", torch.hypot, jnp.hypot, mp.hypot),
}
for _table in (UNARY, BINARY):
    for _k, (_t, _tf, _jf, _mf) in list(_table.items()):
        _table[_k] = (_t, _tf, _jf, _real(_mf))


def _unary_exprs() -> list[tuple[str, object, object, object]]:
    """(text, torch f, JAX f, mpmath f) for every f(x) and f(g(x))."""
    out = [(t.format("x"), tf, jf, (mf, "x")) for t, tf, jf, mf in UNARY.values()]
    for (tf_, ttf, tjf, tmf), (tg, ttg, tjg, tmg) in itertools.product(UNARY.values(), repeat=2):
        out.append((tf_.format(tg.format("x")), lambda t, f=ttf, g=ttg: f(g(t)),
                    lambda t, f=tjf, g=tjg: f(g(t)),
                    (tmf, (tmg, "x"))))
    return out


def _pair_exprs() -> list[tuple[str, object, object, object]]:
    """f(b(x, y)) and b(f(x), y) for every unary f and binary b."""
    out = []
    for (tf_, ttf, tjf, tmf), (tb, ttb, tjb, tmb) in itertools.product(UNARY.values(),
                                                                       BINARY.values()):
        out.append((tf_.format(tb.format("x", "y")),
                    lambda a, b, f=ttf, o=ttb: f(o(a, b)),
                    lambda a, b, f=tjf, o=tjb: f(o(a, b)),
                    (tmf, (tmb, "x", "y"))))
        out.append((tb.format(tf_.format("x"), "y"),
                    lambda a, b, f=ttf, o=ttb: o(f(a), b),
                    lambda a, b, f=tjf, o=tjb: o(f(a), b),
                    (tmb, (tmf, "x"), "y")))
    return out


def _torch_values(f, cols: list[np.ndarray]) -> np.ndarray:
    """Per point: f, its gradient, its Hessian (reverse over reverse), flattened."""
    n, k = len(cols[0]), len(cols)
    xs = [torch.tensor(c, requires_grad=True) for c in cols]
    y = f(*xs)
    gs = torch.autograd.grad(y.sum(), xs, create_graph=True, allow_unused=True)
    out = [y.detach().numpy()]
    out += [np.zeros(n) if g is None else g.detach().numpy(force=True) for g in gs]
    for g in gs:
        if g is None or not g.requires_grad:
            out += [np.zeros(n)] * k
            continue
        hs = torch.autograd.grad(g.sum(), xs, retain_graph=True, allow_unused=True)
        out += [np.zeros(n) if h is None else h.detach().numpy(force=True) for h in hs]
    return np.stack(out, axis=1)


def _jax_values(f, cols: list[np.ndarray]) -> np.ndarray:
    k = len(cols)

    def scalar(v):
        return f(*[v[i] for i in range(k)])

    pts = jnp.stack([jnp.asarray(c) for c in cols], axis=1)
    val = jax.vmap(scalar)(pts)
    grad = jax.vmap(jax.grad(scalar))(pts)
    hess = jax.vmap(jax.hessian(scalar))(pts)
    return np.concatenate([np.asarray(val)[:, None], np.asarray(grad),
                           np.asarray(hess).reshape(len(cols[0]), k * k)], axis=1)


def agree(a: np.ndarray, b: np.ndarray, rtol: float = 1e-9) -> np.ndarray:
    """Same nan/inf pattern, finite values equal to rtol relative (or both below 1e-300)."""
    with np.errstate(all="ignore"):
        same = (a == b) | (np.isnan(a) & np.isnan(b))
        close = np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b)) + 1e-300
    return same | (np.isfinite(a) & np.isfinite(b) & close)


def _mp_eval(tree, env: dict):
    if isinstance(tree, str):
        return env[tree]
    return tree[0](*[_mp_eval(c, env) for c in tree[1:]])


def _steps(x: list) -> list:
    """Relative step sizes, so that a subnormal point is not stepped across zero."""
    scale = max([abs(v) for v in x if v != 0] or [mp.mpf(1)])
    return [scale * mp.mpf("1e-15"), scale * mp.mpf("1e-20")]


def _one_sided(f, x: list, order: tuple) -> list:
    """The partial derivative ``order`` of f at x from the right and from the left, at two
    step sizes each: four numbers that agree at a smooth point."""
    got = []
    for direction in (1, -1):
        for h in _steps(x):
            try:
                d = mp.diff(f, x if len(x) > 1 else x[0], order if len(x) > 1 else order[0],
                            direction=direction, h=h)
            except (ValueError, ZeroDivisionError, OverflowError, TypeError, RecursionError):
                d = mp.nan
            got.append(d)
    return got


def _settled(got: list) -> bool:
    """The four one-sided estimates agree: to 1e-8 relative, or shrinking with the step
    from both sides (a derivative of 0, seen through the O(h) error of one-sided steps)."""
    if not all(isinstance(d, mp.mpf) and mp.isfinite(d) for d in got):
        return False
    ref = got[1]
    if all(abs(d - ref) <= mp.mpf("1e-8") * max(abs(ref), mp.mpf("1e-30")) for d in got):
        return True
    return max(abs(got[1]), abs(got[3])) <= mp.mpf("1e-4") * max(abs(got[0]), abs(got[2]))


def _value(got: list) -> float:
    return float(got[1]) if abs(got[1] - got[3]) <= mp.mpf("1e-8") * abs(got[1]) else 0.0


def _orders(k: int) -> list[tuple]:
    first = [tuple(int(i == j) for i in range(k)) for j in range(k)]
    return first + [tuple(int(i == a) + int(i == b) for i in range(k)) for a in range(k)
                    for b in range(k)]


def _smooth_everywhere(tree, env: dict) -> bool:
    """Every primitive of the expression is smooth (to second order) at its arguments:
    then the expression is, and a kink convention can never be the reason for a value."""
    if isinstance(tree, str):
        return True
    args = [_mp_eval(c, env) for c in tree[1:]]
    if not all(isinstance(a, mp.mpf) and mp.isfinite(a) for a in args):
        return False
    f = tree[0]
    if not all(_settled(_one_sided(f, args, o)) for o in _orders(len(args))):
        return False
    return all(_smooth_everywhere(c, env) for c in tree[1:])


def _mp_derivatives(tree, point: list[float]) -> list[float]:
    """f, gradient and Hessian of the expression by mpmath (60 digits, more for a tiny
    point) where every primitive in it is smooth at its argument; all nan elsewhere (a kink,
    a pole, a point off the real domain, or a huge argument where overflow decides)."""
    k = len(point)
    nothing = [float("nan")] * (1 + k + k * k)
    if not all(np.isfinite(v) and abs(v) < 1e10 for v in point):
        return nothing
    # enough digits that a step of 1e-20 relative, at a point as small as 1e-300, still
    # resolves differences of f ~ 1 (cos(cbrt(x)) = 1 - 1e-200/2 at 1e-300)
    scale = max([abs(math.log10(abs(v))) for v in point if v != 0] + [0.0])
    with mp.workdps(60 + int(2 * scale)):
        return _mp_derivatives_at(tree, point)


def _mp_derivatives_at(tree, point: list[float]) -> list[float]:
    k = len(point)
    nothing = [float("nan")] * (1 + k + k * k)
    names = ["x", "y"][:k]
    env = {n: mp.mpf(v) for n, v in zip(names, point, strict=True)}
    try:
        fx = _mp_eval(tree, env)
        if not (isinstance(fx, mp.mpf) and mp.isfinite(fx) and abs(fx) < 1e100) or \
                not _smooth_everywhere(tree, env):
            return nothing
    except (RecursionError, ValueError, ZeroDivisionError, OverflowError):
        return nothing

    def f(*v):
        return _mp_eval(tree, dict(zip(names, v, strict=True)))

    out = [float(fx)]
    for order in _orders(k):
        got = _one_sided(f, list(env.values()), order)
        out.append(_value(got) if _settled(got) else float("nan"))
    return out


def _table(exprs, cols: list[np.ndarray]) -> dict[str, np.ndarray]:
    tv, jv = [], []
    for i, (text, tf, jf, _) in enumerate(exprs):
        tv.append(_torch_values(tf, cols))
        jv.append(_jax_values(jf, cols))
        if i % 100 == 0:
            print(f"  {i}/{len(exprs)} {text}", file=sys.stderr)
    t, j = np.stack(tv), np.stack(jv)
    math = np.full(t.shape, np.nan)
    # the mathematics where torch and JAX disagree
    for e, p in zip(*np.nonzero((~agree(t, j)).any(axis=2)), strict=True):
        math[e, p] = _mp_derivatives(exprs[e][3], [float(c[p]) for c in cols])
    return {"exprs": np.array([e[0] for e in exprs]), "torch": t, "jax": j, "math": math,
            "points": np.stack(cols, axis=1)}


# --- the conventions table: singular cases, each one point -------------------------------
# (label, gradcli expression, command, point {name: number or list}, torch f, JAX f); f takes
# one argument per variable component, in the point's order (x[0], x[1] for a vector x)
SINGULAR = [
    ("|x|' at 0", "abs(x)", "grad", {"x": 0.0}, torch.abs, jnp.abs),
    ("relu' at 0", "relu(x)", "grad", {"x": 0.0}, torch.relu, jax.nn.relu),
    ("relu' at nan", "relu(x)", "grad", {"x": float("nan")}, torch.relu, jax.nn.relu),
    ("sign at nan", "sign(x)", "grad", {"x": float("nan")}, torch.sign, jnp.sign),
    ("sqrt' at 0", "sqrt(x)", "grad", {"x": 0.0}, torch.sqrt, jnp.sqrt),
    ("log' at 0", "log(x)", "grad", {"x": 0.0}, torch.log, jnp.log),
    ("cbrt' at 0", "cbrt(x)", "grad", {"x": 0.0}, TorchCbrt.apply, jnp.cbrt),
    ("asin' at 1", "asin(x)", "grad", {"x": 1.0}, torch.asin, jnp.arcsin),
    ("acosh' at 1", "acosh(x)", "grad", {"x": 1.0}, torch.acosh, jnp.arccosh),
    ("sqrt(x^2)' at 0", "sqrt(x^2)", "grad", {"x": 0.0}, lambda x: torch.sqrt(x ** 2.0),
     lambda x: jnp.sqrt(x ** 2.0)),
    ("sqrt(relu(x))' at -1", "sqrt(relu(x))", "grad", {"x": -1.0},
     lambda x: torch.sqrt(torch.relu(x)), lambda x: jnp.sqrt(jax.nn.relu(x))),
    ("log(relu(x))' at -1", "log(relu(x))", "grad", {"x": -1.0},
     lambda x: torch.log(torch.relu(x)), lambda x: jnp.log(jax.nn.relu(x))),
    ("log(floor(x)) + y at x=0.5", "log(floor(x)) + y", "grad", {"x": 0.5, "y": 0.0},
     lambda x, y: torch.log(torch.floor(x)) + y, lambda x, y: jnp.log(jnp.floor(x)) + y),
    ("sqrt(max(x, y)) at (-1, -2)", "sqrt(max(x, y))", "grad", {"x": -1.0, "y": -2.0},
     lambda x, y: torch.sqrt(torch.maximum(x, y)), lambda x, y: jnp.sqrt(jnp.maximum(x, y))),
    ("min at a tie", "min(x, y)", "grad", {"x": 1.0, "y": 1.0}, torch.minimum, jnp.minimum),
    ("max at a tie", "max(x, y)", "grad", {"x": 1.0, "y": 1.0}, torch.maximum, jnp.maximum),
    ("max at (nan, 1)", "max(x, y)", "grad", {"x": float("nan"), "y": 1.0}, torch.maximum,
     jnp.maximum),
    ("hypot at the origin", "hypot(x, y)", "grad", {"x": 0.0, "y": 0.0}, torch.hypot, jnp.hypot),
    ("atan2 at the origin", "atan2(y, x)", "grad", {"x": 0.0, "y": 0.0},
     lambda x, y: torch.atan2(y, x), lambda x, y: jnp.arctan2(y, x)),
    ("where(x > 0, sqrt(x), 0) at -1", "where(x > 0, sqrt(x), 0) + y", "grad",
     {"x": -1.0, "y": 0.0}, lambda x, y: torch.where(x > 0, torch.sqrt(x), 0.0) + y,
     lambda x, y: jnp.where(x > 0, jnp.sqrt(x), 0.0) + y),
    ("norm at 0", "norm(x)", "grad", {"x": [0.0, 0.0]},
     lambda a, b: torch.linalg.vector_norm(torch.stack([a, b]), dim=0),
     lambda a, b: jnp.linalg.norm(jnp.stack([a, b]))),
    ("x^0 at 0", "x^0", "grad", {"x": 0.0}, lambda x: x ** 0.0, lambda x: x ** 0.0),
    ("pow(x, y) at (0, 0)", "x^y", "grad", {"x": 0.0, "y": 0.0}, torch.pow, lambda a, b: a ** b),
    ("x/0", "x/0", "grad", {"x": 1.0}, lambda x: x / 0.0, lambda x: x / 0.0),
    ("sigmoid at -40", "sigmoid(x)", "grad", {"x": -40.0}, torch.sigmoid, jax.nn.sigmoid),
    ("log(sigmoid(x)) at -40", "log(sigmoid(x))", "grad", {"x": -40.0},
     lambda x: torch.log(torch.sigmoid(x)), lambda x: jnp.log(jax.nn.sigmoid(x))),
    ("log(sigmoid(x)) at -1000", "log(sigmoid(x))", "grad", {"x": -1000.0},
     lambda x: torch.log(torch.sigmoid(x)), lambda x: jnp.log(jax.nn.sigmoid(x))),
    ("prod at [0, 2, 3]", "prod(x)", "hessian", {"x": [0.0, 2.0, 3.0]},
     lambda a, b, c: torch.prod(torch.stack([a, b, c]), dim=0),
     lambda a, b, c: jnp.prod(jnp.stack([a, b, c]))),
    ("prod at [0, 0, 3]", "prod(x)", "hessian", {"x": [0.0, 0.0, 3.0]},
     lambda a, b, c: torch.prod(torch.stack([a, b, c]), dim=0),
     lambda a, b, c: jnp.prod(jnp.stack([a, b, c]))),
    ("exp(x)^x at 0", "exp(x)^x", "hessian", {"x": 0.0}, lambda x: torch.exp(x) ** x,
     lambda x: jnp.exp(x) ** x),
    ("x^y at (2, 0)", "x^y", "hessian", {"x": 2.0, "y": 0.0}, torch.pow, lambda a, b: a ** b),
    ("sqrt(x^2+y^2) at (1e200, 1e200)", "sqrt(x^2+y^2)", "hessian", {"x": 1e200, "y": 1e200},
     lambda x, y: torch.sqrt(x ** 2.0 + y ** 2.0), lambda x, y: jnp.sqrt(x ** 2.0 + y ** 2.0)),
    ("norm at 0, second order", "norm(x)", "hessian", {"x": [0.0, 0.0]},
     lambda a, b: torch.linalg.vector_norm(torch.stack([a, b]), dim=0),
     lambda a, b: jnp.linalg.norm(jnp.stack([a, b]))),
]


def _columns(point: dict, command: str) -> list[str]:
    names = [n if not isinstance(v, list) else f"{n}[{i}]" for n, v in point.items()
             for i in (range(len(v)) if isinstance(v, list) else [0])]
    if command == "grad":
        return ["f"] + [f"df/d{n}" for n in names]
    return ["f"] + [f"d2f/d{a}d{b}" for a in names for b in names]


def _singular() -> list[dict]:
    rows = []
    for label, text, command, point, tf, jf in SINGULAR:
        comps = [[float(c)] for v in point.values() for c in (v if isinstance(v, list) else [v])]
        k = len(comps)
        keep = [0] + list(range(1, 1 + k)) if command == "grad" else [0] + list(
            range(1 + k, 1 + k + k * k))
        cols = _columns(point, command)
        t = _torch_values(tf, [np.array(c) for c in comps])[0][keep]
        j = _jax_values(jf, [np.array(c) for c in comps])[0][keep]
        rows.append({"label": label, "expression": text, "command": command, "point": point,
                     "columns": cols, "torch": t.tolist(),
                     "jax": j.tolist()})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description="write tests/reference/awkward.npz")
    parser.add_argument("--tables", default="unary,binary,pairs,singular",
                        help="tables to recompute; the others are kept from the existing file")
    wanted = parser.parse_args().tables.split(",")
    kept = dict(np.load(OUT)) if OUT.exists() else {}
    arrays = {k: v for k, v in kept.items()
              if k != "meta" and k.split("_")[0] not in wanted}
    p = np.array(P)
    xy = np.array(list(itertools.product(P, P)))
    qq = np.array(list(itertools.product(Q, Q)))
    make = {
        "unary": lambda: _table(_unary_exprs(), [p]),
        "binary": lambda: _table([(t.format("x", "y"), tf, jf, (mf, "x", "y"))
                                  for t, tf, jf, mf in BINARY.values()], [xy[:, 0], xy[:, 1]]),
        "pairs": lambda: _table(_pair_exprs(), [qq[:, 0], qq[:, 1]]),
    }
    for name in wanted:
        print(f"{name}:", file=sys.stderr)
        if name == "singular":
            arrays["singular"] = np.array(json.dumps(_singular()))
            continue
        arrays.update({f"{name}_{k}": v for k, v in make[name]().items()})
    meta = {"torch": torch.__version__, "jax": jax.__version__, "mpmath": mp.__version__,
            "numpy": np.__version__, "python": sys.version.split()[0],
            "generator": "tests/reference/make_awkward.py"}
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(OUT, **arrays)
    print(f"wrote {OUT} ({OUT.stat().st_size:,} bytes): {meta}")


if __name__ == "__main__":
    main()
