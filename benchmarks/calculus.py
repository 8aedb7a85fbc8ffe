"""Vector calculus and higher order (issue 15): the "calculus" section of ``make bench``.

- W8: ``laplacian "sin(x*y)*exp(-(x^2+y^2)/8)"`` on a 2000² grid, against JAX jit (the
  trace of ``hessian``, and the sum of forward-over-reverse HVPs along x and y) and
  torch.func (the same sum, vmapped). Goal: ≤ 0.5× the faster JAX.
- W9: the Hessian of W2's function at 10⁶ points, against JAX ``jit(vmap(hessian))`` and
  torch.func ``vmap(hessian)``. Goal: ≤ 1.0× JAX.
- W10: ``diff --order 4`` of ``exp(-x^2/2)*sin(3x)`` on a grid of 10⁶ points, against JAX
  nested ``jacfwd`` and ``jet``. Goal: ≤ 1.0× the faster JAX.
- taylor cold: ``gradcli taylor "exp(x)*sin(y)" --at x=0,y=0 --order 8`` in a fresh process
  against the fresh one-point ``grad`` of the cold section. Goal: ≤ 1.5×.

Each (case, tool) runs in a fresh ``benchmarks.worker`` process (``suite="calculus"``) and is
checked against closed forms here, as the other workloads are.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .measure import Row, run_worker
from .report import Goal

Columns = dict[str, np.ndarray]
W9_EXPR = "exp(-(x^2+y^2+z^2))*sin(x*y) + log(1+z^2)/(1+x^2)"


@dataclass(frozen=True)
class Case:
    key: str
    expression: str
    tools: tuple[str, ...]
    size: int


def cases(quick: bool) -> list[Case]:
    n8, n9, n10 = (300, 20_000, 20_000) if quick else (2000, 1_000_000, 1_000_000)
    return [
        Case(f"W8 N={n8}", "sin(x*y)*exp(-(x^2+y^2)/8)",
             ("gradcli", "jax jit hessian trace", "jax jit hvp sum", "torch.func hvp sum"), n8),
        Case(f"W9 {n9:.0e} points".replace("e+0", "e"), W9_EXPR,
             ("gradcli", "jax jit vmap(hessian)", "torch.func vmap(hessian)"), n9),
        Case(f"W10 {n10:.0e} points".replace("e+0", "e"), "exp(-x^2/2)*sin(3*x)",
             ("gradcli", "jax jit nested jacfwd", "jax jit jet"), n10),
    ]


TITLES = {"W8": "laplacian of `sin(x*y)*exp(-(x^2+y^2)/8)` on a square grid",
          "W9": f"hessian of `{W9_EXPR}` at random points",
          "W10": "diff --order 4 of `exp(-x^2/2)*sin(3*x)` on a 1-D grid"}


def _case(key: str, quick: bool) -> Case:
    return next(c for c in cases(quick) if c.key == key)


# --- inputs and truth ---------------------------------------------------------------------

def _axis(n: int) -> np.ndarray:
    return np.linspace(-3.0, 3.0, n)


def _points(n: int) -> list[np.ndarray]:
    return list(np.random.default_rng(12345).uniform(-2.0, 2.0, size=(3, n)))


def _w8_truth(x: np.ndarray, y: np.ndarray) -> Columns:
    """f = sin(xy)·E, E = exp(-(x²+y²)/8): ∇²f = E·(-sin(xy)(15(x²+y²)/16 + 1/2) - xy·cos(xy))."""
    e = np.exp(-(x * x + y * y) / 8)
    s, c = np.sin(x * y), np.cos(x * y)
    r2 = x * x + y * y
    return {"f": s * e, "laplacian": e * (-s * (15 * r2 / 16 + 0.5) - x * y * c)}


def _w9_truth(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> Columns:
    """The Hessian of exp(-r²)·sin(xy) + log(1+z²)/(1+x²), by hand."""
    e = np.exp(-(x * x + y * y + z * z))
    s, c = np.sin(x * y), np.cos(x * y)
    ev = {"x": x, "y": y, "z": z}
    grad_e = {v: -2 * a * e for v, a in ev.items()}
    grad_s = {"x": y * c, "y": x * c, "z": 0.0}
    hess_s = {("x", "x"): -y * y * s, ("x", "y"): c - x * y * s, ("y", "y"): -x * x * s}
    d = 1 + x * x
    log_z = np.log(1 + z * z)
    hess_b = {("x", "x"): log_z * (6 * x * x - 2) / d**3,
              ("x", "z"): 2 * z / (1 + z * z) * (-2 * x / d**2),
              ("z", "z"): 2 * (1 - z * z) / (1 + z * z) ** 2 / d}
    out: Columns = {"f": e * s + log_z / d}
    for a in "xyz":
        for b in "xyz":
            key = tuple(sorted((a, b)))
            hess_e = (4 * ev[a] * ev[b] - (2.0 if a == b else 0.0)) * e
            value = (hess_e * s + grad_e[a] * grad_s[b] + grad_e[b] * grad_s[a]
                     + e * hess_s.get(key, 0.0) + hess_b.get(key, 0.0))
            out[f"d2f/d{a}d{b}"] = np.broadcast_to(value, x.shape)
    return out


def _w10_truth(x: np.ndarray) -> Columns:
    """Im of h = exp(-x²/2 + 3ix): h'''' = (p⁴ - 6p² + 3)·h with p = 3i - x."""
    p = 3j - x
    h = np.exp(-x * x / 2 + 3j * x)
    return {"f": h.imag, "d4f/dx4": ((p**4 - 6 * p**2 + 3) * h).imag}


def _truth(case: Case) -> Callable[[], Columns]:
    if case.key.startswith("W8"):
        a = _axis(case.size)
        return lambda: _w8_truth(a[:, None], a[None, :])
    if case.key.startswith("W9"):
        return lambda: _w9_truth(*_points(case.size))
    return lambda: _w10_truth(np.linspace(-4.0, 4.0, case.size))


def check(case: Case, result: Columns) -> tuple[bool, float, str]:
    """(passed, max relative error, note) against the closed form, per column."""
    truth = _truth(case)()
    worst, note = 0.0, ""
    for name, want in truth.items():
        if name not in result:
            return False, float("nan"), f"missing {name}"
        got = np.broadcast_to(result[name], np.shape(want))
        err = float(np.max(np.abs(got - want))) / max(float(np.max(np.abs(want))), 1e-300)
        if not err <= worst:
            worst, note = err, name
    ok = worst < 1e-9
    return ok, worst, "" if ok else f"worst column {note}"


# --- the tools ----------------------------------------------------------------------------

def _gradcli(case: Case) -> Callable[[], Columns]:
    import gradcli

    if case.key.startswith("W8"):
        grid = {"x": (-3.0, 3.0, case.size), "y": (-3.0, 3.0, case.size)}
        return lambda: gradcli.evaluate(case.expression, "laplacian", grid=grid)
    if case.key.startswith("W9"):
        x, y, z = _points(case.size)
        return lambda: gradcli.evaluate(case.expression, "hessian",
                                        points={"x": x, "y": y, "z": z})
    grid1 = {"x": (-4.0, 4.0, case.size)}
    return lambda: gradcli.evaluate(case.expression, "diff", grid=grid1, order=4)


def _jax() -> Any:
    from .peers import _jax as setup

    return setup()


def _jax_tool(case: Case, variant: str) -> Callable[[], Columns]:
    jax = _jax()
    import jax.numpy as jnp

    if case.key.startswith("W8"):
        def f(x, y):
            return jnp.sin(x * y) * jnp.exp(-(x * x + y * y) / 8)

        def point(a, b):
            if variant == "hessian trace":
                h = jax.hessian(lambda p: f(p[0], p[1]))(jnp.stack([a, b]))
                return f(a, b), jnp.trace(h)
            fxx = jax.jvp(lambda u: jax.grad(f, 0)(u, b), (a,), (1.0,))[1]
            fyy = jax.jvp(lambda v: jax.grad(f, 1)(a, v), (b,), (1.0,))[1]
            return f(a, b), fxx + fyy

        @jax.jit
        def kernel(ax):
            gx, gy = jnp.meshgrid(ax, ax, indexing="ij")
            return jnp.vectorize(point)(gx, gy)

        a = _axis(case.size)

        def run8() -> Columns:
            value, lap = jax.block_until_ready(kernel(a))
            return {"f": np.asarray(value), "laplacian": np.asarray(lap)}
        return run8
    if case.key.startswith("W9"):
        def g(p):
            x, y, z = p[0], p[1], p[2]
            return jnp.exp(-(x * x + y * y + z * z)) * jnp.sin(x * y) + jnp.log(
                1 + z * z) / (1 + x * x)

        kernel9 = jax.jit(jax.vmap(lambda p: (g(p), jax.hessian(g)(p))))
        stacked = np.stack(_points(case.size), axis=1)

        def run9() -> Columns:
            value, h = jax.block_until_ready(kernel9(stacked))
            h = np.asarray(h)
            out = {"f": np.asarray(value)}
            for i, a in enumerate("xyz"):
                for j, b in enumerate("xyz"):
                    out[f"d2f/d{a}d{b}"] = h[:, i, j]
            return out
        return run9

    def f1(x):
        return jnp.exp(-x * x / 2) * jnp.sin(3 * x)

    if variant == "jet":
        from jax.experimental import jet

        def d4(x):
            one, zero = jnp.ones_like(x), jnp.zeros_like(x)
            y0, (_, _, _, y4) = jet.jet(f1, (x,), ((one, zero, zero, zero),))
            return y0, y4  # jet's terms are derivatives, not coefficients
    else:
        fourth = jax.vmap(jax.jacfwd(jax.jacfwd(jax.jacfwd(jax.jacfwd(f1)))))

        def d4(x):
            return f1(x), fourth(x)
    kernel10 = jax.jit(d4)
    xs = np.linspace(-4.0, 4.0, case.size)

    def run10() -> Columns:
        value, fourth_ = jax.block_until_ready(kernel10(xs))
        return {"f": np.asarray(value), "d4f/dx4": np.asarray(fourth_)}
    return run10


def _torch_tool(case: Case) -> Callable[[], Columns]:
    from .peers import _torch

    torch = _torch()
    from torch.func import grad, hessian, jvp, vmap

    if case.key.startswith("W8"):
        def f(x, y):
            return torch.sin(x * y) * torch.exp(-(x * x + y * y) / 8)

        def point(a, b):
            fxx = jvp(lambda u: grad(f, 0)(u, b), (a,), (torch.ones_like(a),))[1]
            fyy = jvp(lambda v: grad(f, 1)(a, v), (b,), (torch.ones_like(b),))[1]
            return f(a, b), fxx + fyy

        batched = vmap(point)
        a = torch.from_numpy(_axis(case.size))

        def run8() -> Columns:
            gx, gy = torch.meshgrid(a, a, indexing="ij")
            value, lap = batched(gx.reshape(-1), gy.reshape(-1))
            n = case.size
            return {"f": value.reshape(n, n).numpy(), "laplacian": lap.reshape(n, n).numpy()}
        return run8

    def g(p):
        x, y, z = p[0], p[1], p[2]
        return torch.exp(-(x * x + y * y + z * z)) * torch.sin(x * y) + torch.log(
            1 + z * z) / (1 + x * x)

    kernel = vmap(lambda p: (g(p), hessian(g)(p)))
    stacked = torch.from_numpy(np.stack(_points(case.size), axis=1))

    def run9() -> Columns:
        value, h = kernel(stacked)
        h = h.numpy()
        out = {"f": value.numpy()}
        for i, a in enumerate("xyz"):
            for j, b in enumerate("xyz"):
                out[f"d2f/d{a}d{b}"] = h[:, i, j]
        return out
    return run9


TOOLS: dict[str, Callable[[Case], Callable[[], Columns]]] = {
    "gradcli": _gradcli,
    "jax jit hessian trace": lambda c: _jax_tool(c, "hessian trace"),
    "jax jit hvp sum": lambda c: _jax_tool(c, "hvp"),
    "torch.func hvp sum": _torch_tool,
    "jax jit vmap(hessian)": lambda c: _jax_tool(c, "hessian"),
    "torch.func vmap(hessian)": _torch_tool,
    "jax jit nested jacfwd": lambda c: _jax_tool(c, "jacfwd"),
    "jax jit jet": lambda c: _jax_tool(c, "jet"),
}
LIBRARY = {t: ("jax" if t.startswith("jax") else "torch") for t in TOOLS if t != "gradcli"}


def measure_case(key: str, tool: str, quick: bool, warmup: int, repeat: int) -> dict:
    """One measurement in this (fresh, worker) process."""
    from .worker import timed

    case = _case(key, quick)
    return timed(lambda: TOOLS[tool](case), lambda r: check(case, r), warmup, repeat)


# --- the cold taylor command ----------------------------------------------------------------

TAYLOR = ["taylor", "exp(x)*sin(y)", "--at", "x=0,y=0", "--order", "8"]


def _taylor_ok(text: str) -> bool:
    """45 rows (|α| ≤ 8 in two variables) whose coefficients are those of eˣ·sin y."""
    rows = list(csv.DictReader(io.StringIO(text)))
    if len(rows) != 45:
        return False
    got: dict[tuple[int, int], float] = {}
    for r in rows:
        got[int(float(r["deg(x)"])), int(float(r["deg(y)"]))] = float(r["coefficient"])
    want = {(a, b): [0, 1, 0, -1][b % 4] / (math.factorial(a) * math.factorial(b))
            for a, b in got}
    for (a, b), value in got.items():  # a zero to 1e-12 of its order's largest coefficient
        scale = max(abs(w) for (p, q), w in want.items() if p + q == a + b) or 1.0
        if abs(value - want[a, b]) > 1e-12 * (abs(want[a, b]) or scale):
            return False
    return True


def taylor_rows(runs: int) -> list[Row]:
    from .cold import ONE_POINT, _interleaved, _one_point_ok, cold_name, gradcli_cmd

    gc = gradcli_cmd()
    grad = ["grad", ONE_POINT, "--at", "x=4"]
    return _interleaved([(cold_name(grad), [*gc, *grad], lambda r: _one_point_ok(r.stdout)),
                         (cold_name(TAYLOR), [*gc, *TAYLOR], lambda r: _taylor_ok(r.stdout))],
                        runs)


# --- the section --------------------------------------------------------------------------

def calculus_tables(args: Any, installed: Callable[[str], bool],
                    progress: Callable[[str], None]) -> dict[str, list[Row]]:
    """Every table of the section: W8, W9, W10 (one row per tool) and the cold taylor."""
    tables: dict[str, list[Row]] = {}
    for case in cases(args.quick):
        rows = []
        for tool in case.tools:
            lib = LIBRARY.get(tool)
            if lib and not installed(lib):
                rows.append(Row(tool, "not installed"))
                continue
            progress(f"  {case.key}: {tool} ...")
            rows.append(run_worker(case.key, tool, quick=args.quick, warmup=args.warmup,
                                   repeat=args.repeat, suite="calculus"))
        tables[case.key] = rows
    progress("  taylor cold start ...")
    tables["taylor cold"] = taylor_rows(args.cold_runs)
    return tables


def title(key: str) -> str:
    if key == "taylor cold":
        return "Fresh-process taylor against the one-point grad (median of the cold runs)"
    return f"{key}: {TITLES[key.split()[0]]}"


def goals(quick: bool) -> list[Goal]:
    from .cold import ONE_POINT, cold_name

    w8, w9, w10 = (c.key for c in cases(quick))
    grad = cold_name(["grad", ONE_POINT, "--at", "x=4"])
    return [
        Goal(f"{w8}: laplacian ≤ 0.5× JAX jit", w8, "gradcli",
             ("jax jit hessian trace", "jax jit hvp sum"), 0.5),
        Goal(f"{w9}: hessian ≤ 1.0× JAX vmap(hessian)", w9, "gradcli",
             ("jax jit vmap(hessian)",), 1.0),
        Goal(f"{w9}: hessian ≤ 1.0× torch.func vmap(hessian)", w9, "gradcli",
             ("torch.func vmap(hessian)",), 1.0),
        Goal(f"{w10}: diff --order 4 ≤ 1.0× JAX (nested jacfwd or jet)", w10, "gradcli",
             ("jax jit nested jacfwd", "jax jit jet"), 1.0),
        Goal("fresh `gradcli taylor \"exp(x)*sin(y)\" --at x=0,y=0 --order 8` ≤ 1.5× the "
             "fresh one-point grad", "taylor cold", cold_name(TAYLOR), (grad,), 1.5),
    ]
