"""The peers, each used as its documentation suggests: torch, torch.func, JAX (jit), autograd.

Each ``*_tool(case)`` imports its library (ImportError means "not installed"), does any
one-time set-up, and returns a no-argument function that does the timed work: build the
inputs from the grid spec (or take W3's numpy points), differentiate, and hand back numpy
arrays named like gradcli's columns.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .workloads import Case, Columns, axes_1d, formula, points

TORCH_THREADS = 2


def versions() -> dict[str, str]:
    """Installed peer versions, read from package metadata (nothing imported)."""
    from importlib import metadata

    out = {}
    for name in ("numpy", "torch", "jax", "jaxlib", "autograd", "matplotlib"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


# ---- torch ----

def _torch():
    import torch

    torch.set_num_threads(TORCH_THREADS)
    return torch


def torch_tool(case: Case) -> Callable[[], Columns]:
    """Grids: meshgrid leaves requiring grad, F.sum().backward(). W3: the sum trick, one
    backward pass per output with retain_graph."""
    torch = _torch()
    if not case.axes:
        pts = points(case)

        def run_points() -> Columns:
            xs = [torch.from_numpy(p).requires_grad_() for p in pts]
            outs = formula("W3", torch, *xs)
            res: Columns = {}
            for i, fi in enumerate(outs):
                res[f"f[{i}]"] = fi.detach().numpy()
                grads = torch.autograd.grad(fi.sum(), xs, retain_graph=i < len(outs) - 1,
                                            allow_unused=True)
                for n, g in zip("xyz", grads, strict=True):
                    res[f"df[{i}]/d{n}"] = np.zeros_like(pts[0]) if g is None else g.numpy()
            return res
        return run_points

    def run() -> Columns:
        axes = [torch.linspace(lo, hi, n, dtype=torch.float64) for _, lo, hi, n in case.axes]
        grids = [g.contiguous().requires_grad_() for g in torch.meshgrid(*axes, indexing="ij")]
        F = formula(case.workload, torch, *grids)
        F.sum().backward()
        res = {"f": F.detach().numpy()}
        for name, g in zip(case.names, grids, strict=True):
            res[f"df/d{name}"] = g.grad.numpy()
        return res
    return run


def torch_func_tool(case: Case) -> Callable[[], Columns]:
    """W3 only: torch.func.vmap(jacrev(f)) over the (n, 3) points, plus vmap(f) values."""
    torch = _torch()
    from torch.func import jacrev, vmap

    def f(p):
        return torch.stack(formula("W3", torch, p[0], p[1], p[2]))

    jac, val = vmap(jacrev(f)), vmap(f)
    stacked = np.stack(points(case), axis=1)

    def run() -> Columns:
        P = torch.from_numpy(stacked)
        J = jac(P).numpy()                   # (n, 4, 3)
        V = val(P).numpy()                   # (n, 4)
        res = {f"f[{i}]": V[:, i] for i in range(4)}
        for i in range(4):
            for j, n in enumerate("xyz"):
                res[f"df[{i}]/d{n}"] = J[:, i, j]
        return res
    return run


# ---- JAX ----

def _jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def jax_tool(case: Case) -> Callable[[], Columns]:
    """Grids: jit of jnp.vectorize(value_and_grad) over a meshgrid built inside the jit.
    W3: jit(vmap(p -> (f(p), jacfwd(f)(p)))). The caller warms up once (compile)."""
    jax = _jax()
    import jax.numpy as jnp

    if not case.axes:
        def f(p):
            return jnp.stack(formula("W3", jnp, p[0], p[1], p[2]))

        kernel = jax.jit(jax.vmap(lambda p: (f(p), jax.jacfwd(f)(p))))
        stacked = np.stack(points(case), axis=1)

        def run_points() -> Columns:
            V, J = jax.block_until_ready(kernel(stacked))
            V, J = np.asarray(V), np.asarray(J)
            res = {f"f[{i}]": V[:, i] for i in range(4)}
            for i in range(4):
                for j, n in enumerate("xyz"):
                    res[f"df[{i}]/d{n}"] = J[:, i, j]
            return res
        return run_points

    k = len(case.axes)
    vg = jnp.vectorize(jax.value_and_grad(lambda *v: formula(case.workload, jnp, *v),
                                          argnums=tuple(range(k))))

    @jax.jit
    def kernel(*axes):
        return vg(*jnp.meshgrid(*axes, indexing="ij"))

    def run() -> Columns:
        val, grads = jax.block_until_ready(kernel(*axes_1d(case)))
        res = {"f": np.asarray(val)}
        for name, g in zip(case.names, grads, strict=True):
            res[f"df/d{name}"] = np.asarray(g)
        return res
    return run


# ---- HIPS autograd ----

def autograd_tool(case: Case) -> Callable[[], Columns]:
    """Grids: make_vjp over every meshgrid argument, pulled back with ones (one forward,
    one backward). W3: make_vjp of the stacked outputs, four pull-backs with unit rows."""
    import autograd.numpy as anp
    from autograd import make_vjp

    if not case.axes:
        P = np.stack(points(case))           # (3, n)

        def F(p):
            return anp.stack(formula("W3", anp, p[0], p[1], p[2]))

        def run_points() -> Columns:
            vjp, ans = make_vjp(F)(P)
            res = {f"f[{i}]": ans[i] for i in range(4)}
            for i in range(4):
                v = np.zeros_like(ans)
                v[i] = 1.0
                g = vjp(v)
                for j, n in enumerate("xyz"):
                    res[f"df[{i}]/d{n}"] = g[j]
            return res
        return run_points

    k = len(case.axes)

    def run() -> Columns:
        grids = np.meshgrid(*axes_1d(case), indexing="ij")
        vjp, ans = make_vjp(lambda *v: formula(case.workload, anp, *v),
                            argnum=tuple(range(k)))(*grids)
        grads = vjp(np.ones_like(ans))
        res = {"f": ans}
        for name, g in zip(case.names, grads, strict=True):
            res[f"df/d{name}"] = g
        return res
    return run
