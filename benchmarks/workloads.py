"""The workloads: sizes, analytic truth, and the gradcli and hand-written numpy versions.

Every tool's function takes no arguments and returns ``{column: ndarray}`` with gradcli's
column names (``f``, ``df/dx``; ``f[0]``, ``df[0]/dx`` for W3), grid-shaped with the first
grid variable on axis 0. Timed work starts from the grid spec (or from the numpy input
points for W3) and ends with numpy arrays, so building the grid and converting tensors
to numpy are part of every tool's time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import pi

import numpy as np

Columns = dict[str, np.ndarray]


@dataclass(frozen=True)
class Case:
    workload: str                                   # "W1"
    label: str                                      # "N=4000"
    expression: str                                 # gradcli syntax
    what: str                                       # "grad" | "jacobian"
    axes: tuple[tuple[str, float, float, int], ...] = ()   # grid: (name, lo, hi, count)
    n_points: int = 0                               # points workloads (W3)

    @property
    def key(self) -> str:
        return f"{self.workload} {self.label}"

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(a[3] for a in self.axes) if self.axes else (self.n_points,)

    @property
    def names(self) -> list[str]:
        return [a[0] for a in self.axes] if self.axes else ["x", "y", "z"]


def _sq(name: str, lo: float, hi: float, n: int, k: int) -> tuple:
    return tuple((v, lo, hi, n) for v in name[:k])


def cases(quick: bool = False) -> list[Case]:
    """Every workload case in running order (small sizes for ``--quick``)."""
    n1, n2 = (100, 400) if quick else (1000, 4000)
    n3d, npts, n6 = (30, 10_000, 300) if quick else (200, 1_000_000, 4000)
    w1 = "sin(x)*cos(y)"
    return [
        Case("W1", f"N={n1}", w1, "grad", _sq("xy", 0.0, 2 * pi, n1, 2)),
        Case("W1", f"N={n2}", w1, "grad", _sq("xy", 0.0, 2 * pi, n2, 2)),
        Case("W2", f"{n3d}³", "exp(-(x^2+y^2+z^2))*sin(x*y) + log(1+z^2)/(1+x^2)", "grad",
             _sq("xyz", -2.0, 2.0, n3d, 3)),
        Case("W3", f"{npts:.0e} points".replace("e+0", "e"),
             "[x*y*z, sin(x) + cos(y), exp(z)*x, x^2 - y^2]", "jacobian", n_points=npts),
        Case("W6", f"N={n6}", "sin(x*y)*exp(-(x^2+y^2)/8)", "grad",
             _sq("xy", -3.0, 3.0, n6, 2)),
    ]


def find_case(key: str, quick: bool) -> Case:
    for case in cases(quick):
        if case.key == key:
            return case
    raise KeyError(key)


# ---- the formulas, written once over a namespace ``m`` (numpy, torch, jax.numpy, ...) ----

def formula(workload: str, m, *v):
    """f itself (a list of outputs for W3), in any numpy-like namespace."""
    if workload == "W1":
        x, y = v
        return m.sin(x) * m.cos(y)
    if workload == "W2":
        x, y, z = v
        return m.exp(-(x**2 + y**2 + z**2)) * m.sin(x * y) + m.log(1 + z**2) / (1 + x**2)
    if workload == "W3":
        x, y, z = v
        return [x * y * z, m.sin(x) + m.cos(y), m.exp(z) * x, x**2 - y**2]
    if workload == "W6":
        x, y = v
        return m.sin(x * y) * m.exp(-(x**2 + y**2) / 8)
    raise KeyError(workload)


def analytic(workload: str, *v: np.ndarray) -> Columns:
    """Hand-written f and derivatives (broadcasting numpy): the truth for every check."""
    if workload == "W1":
        x, y = v
        sx, cx, sy, cy = np.sin(x), np.cos(x), np.sin(y), np.cos(y)
        return {"f": sx * cy, "df/dx": cx * cy, "df/dy": -sx * sy}
    if workload == "W2":
        x, y, z = v
        e = np.exp(-(x * x + y * y + z * z))
        s, c = np.sin(x * y), np.cos(x * y)
        d = 1 + x * x
        lz = np.log(1 + z * z)
        return {"f": e * s + lz / d,
                "df/dx": e * (y * c - 2 * x * s) - 2 * x * lz / (d * d),
                "df/dy": e * (x * c - 2 * y * s),
                "df/dz": -2 * z * e * s + 2 * z / ((1 + z * z) * d)}
    if workload == "W3":
        x, y, z = v
        zero = np.zeros_like(x)
        ez = np.exp(z)
        vals = [x * y * z, np.sin(x) + np.cos(y), ez * x, x * x - y * y]
        jac = [[y * z, x * z, x * y], [np.cos(x), -np.sin(y), zero],
               [ez, zero, ez * x], [2 * x, -2 * y, zero]]
        out = {f"f[{i}]": vals[i] for i in range(4)}
        for i in range(4):
            for j, n in enumerate("xyz"):
                out[f"df[{i}]/d{n}"] = jac[i][j]
        return out
    if workload == "W6":
        x, y = v
        e = np.exp(-(x * x + y * y) / 8)
        s, c = np.sin(x * y), np.cos(x * y)
        return {"f": s * e, "df/dx": e * (y * c - x * s / 4), "df/dy": e * (x * c - y * s / 4)}
    raise KeyError(workload)


def columns(case: Case) -> list[str]:
    """The columns every tool must return for ``case``."""
    if case.workload == "W3":
        return [f"f[{i}]" for i in range(4)] + [
            f"df[{i}]/d{n}" for i in range(4) for n in "xyz"]
    return ["f"] + [f"df/d{n}" for n in case.names]


def axes_1d(case: Case) -> list[np.ndarray]:
    return [np.linspace(lo, hi, n) for _, lo, hi, n in case.axes]


def open_axes(case: Case) -> list[np.ndarray]:
    """The grid axes as broadcastable open arrays (``np.ogrid`` style)."""
    k = len(case.axes)
    return [a.reshape([-1 if i == j else 1 for j in range(k)])
            for i, a in enumerate(axes_1d(case))]


def points(case: Case) -> list[np.ndarray]:
    """W3's inputs: fixed random points, made before timing starts."""
    rng = np.random.default_rng(12345)
    return list(rng.uniform(-2.0, 2.0, size=(3, case.n_points)))


# ---- correctness: compare block by block, so checking adds little to peak RSS ----

def check(case: Case, result: Columns) -> tuple[bool, float, str]:
    """(passed, max relative error, note); relative to each column's max |truth| (1 if 0)."""
    want = columns(case)
    missing = [c for c in want if c not in result]
    if missing:
        return False, float("nan"), f"missing columns {missing}"
    for c in want:
        arr = result[c]
        if arr.shape != case.shape or arr.dtype != np.float64:
            return False, float("nan"), f"{c}: shape {arr.shape} {arr.dtype}, want {case.shape}"
    err = dict.fromkeys(want, 0.0)
    big = dict.fromkeys(want, 0.0)
    if case.axes:
        ax = axes_1d(case)
        rows = case.shape[0]
        step = max(1, (1 << 16) // max(1, int(np.prod(case.shape[1:]))))
        for r in range(0, rows, step):
            sub = [ax[0][r:r + step]] + ax[1:]
            k = len(sub)
            opened = [a.reshape([-1 if i == j else 1 for j in range(k)])
                      for i, a in enumerate(sub)]
            _accumulate(analytic(case.workload, *opened),
                        {c: result[c][r:r + step] for c in want}, err, big)
    else:
        pts = points(case)
        for s in range(0, case.n_points, 1 << 16):
            block = [p[s:s + (1 << 16)] for p in pts]
            _accumulate(analytic(case.workload, *block),
                        {c: result[c][s:s + (1 << 16)] for c in want}, err, big)
    rel = {c: err[c] / (big[c] if big[c] > 0 else 1.0) for c in want}
    worst = max(rel, key=lambda c: (np.isnan(rel[c]), rel[c]))
    value = rel[worst]
    ok = bool(value < 1e-9)
    return ok, float(value), "" if ok else f"worst column {worst}"


def _accumulate(truth: Columns, got: Columns, err: dict, big: dict) -> None:
    for c, g in got.items():
        t = np.broadcast_to(truth[c], g.shape)
        diff = np.abs(g - t)
        e = float(diff.max()) if diff.size else 0.0
        err[c] = e if np.isnan(e) else max(err[c], e)
        big[c] = max(big[c], float(np.abs(t).max()) if t.size else 0.0)


# ---- gradcli and the hand-written numpy versions ----

def gradcli_tool(case: Case) -> Callable[[], Columns]:
    import gradcli

    want = columns(case)
    if case.axes:
        grid = {name: (lo, hi, n) for name, lo, hi, n in case.axes}

        def run() -> Columns:
            out = gradcli.evaluate(case.expression, case.what, grid=grid)
            return {c: out[c] for c in want}
    else:
        x, y, z = points(case)

        def run() -> Columns:
            out = gradcli.evaluate(case.expression, case.what,
                                   points={"x": x, "y": y, "z": z})
            return {c: out[c] for c in want}
    return run


def numpy_tool(case: Case) -> Callable[[], Columns]:
    """Analytic derivatives with broadcasting (open grids), full-shape results."""
    if not case.axes:
        pts = points(case)
        return lambda: analytic("W3", *pts)

    def run() -> Columns:
        out = analytic(case.workload, *open_axes(case))
        return {c: np.broadcast_to(v, case.shape).copy() if v.shape != case.shape else v
                for c, v in out.items()}
    return run


def numpy_meshgrid_tool(case: Case) -> Callable[[], Columns]:
    """W1 (a): the naive version every tutorial shows, on full meshgrid arrays."""
    def run() -> Columns:
        X, Y = np.meshgrid(*axes_1d(case), indexing="ij")
        return {"f": np.sin(X) * np.cos(Y), "df/dx": np.cos(X) * np.cos(Y),
                "df/dy": -np.sin(X) * np.sin(Y)}
    return run


def numpy_separable_tool(case: Case) -> Callable[[], Columns]:
    """W1 (b): the separable limit, outer products of 1-D sin/cos vectors."""
    def run() -> Columns:
        x, y = axes_1d(case)
        sx, cx, sy, cy = np.sin(x), np.cos(x), np.sin(y), np.cos(y)
        return {"f": np.multiply.outer(sx, cy), "df/dx": np.multiply.outer(cx, cy),
                "df/dy": np.multiply.outer(-sx, sy)}
    return run
