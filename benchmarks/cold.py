"""Whole-command measurements: cold start, the plot command, and the 10⁸-point scale run.

Each run is a fresh process under the launcher (wall time and peak RSS); rows report
the median over runs and check the output (numbers, PNG header, .npy contents).
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import shutil
import struct
import sys
import tempfile
from pathlib import Path
from typing import Any

from .measure import Row, run_command

ONE_POINT = "x^2 + 3x + 1"          # at x=4: f = 29, df/dx = 11
PY = sys.executable

PEERS = [
    ("torch one-point grad", "torch",
     "import torch\nx = torch.tensor(4.0, dtype=torch.float64, requires_grad=True)\n"
     "y = x**2 + 3*x + 1\ny.backward()\nprint(y.item(), x.grad.item())\n"),
    ("jax one-point grad", "jax",
     "import jax\njax.config.update('jax_enable_x64', True)\n"
     "f = lambda x: x**2 + 3*x + 1\nprint(float(f(4.0)), float(jax.grad(f)(4.0)))\n"),
    ("autograd one-point grad", "autograd",
     "from autograd import grad\nf = lambda x: x**2 + 3*x + 1\n"
     "print(f(4.0), grad(f)(4.0))\n"),
]

PLOT_SCRIPT = """\
import sys
import numpy as np
from matplotlib.figure import Figure

x = np.linspace(0, 2 * np.pi, 100)
y = np.linspace(0, 2 * np.pi, 100)
X, Y = x[:, None], y[None, :]
F, DX, DY = np.sin(X) * np.cos(Y), np.cos(X) * np.cos(Y), -np.sin(X) * np.sin(Y)
fig = Figure(figsize=(7.0, 6.0), dpi=100)
ax = fig.add_subplot()
im = ax.imshow(F.T, origin="lower", extent=(0, 2 * np.pi, 0, 2 * np.pi), cmap="viridis")
fig.colorbar(im, ax=ax, label="f(x, y) = sin(x)*cos(y)")
s = slice(None, None, 4)                     # 25 x 25 arrows
gx, gy = np.meshgrid(x[s], y[s], indexing="ij")
ax.quiver(gx, gy, DX[s, s], DY[s, s], color="k")
ax.set_xlabel("x")
ax.set_ylabel("y")
fig.savefig(sys.argv[1], format="png")
"""


def gradcli_cmd() -> list[str]:
    """The console script beside this interpreter, else ``python -m gradcli.cli.main``."""
    script = Path(PY).parent / "gradcli"
    return [str(script)] if script.exists() else [PY, "-m", "gradcli.cli.main"]


def installed(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def _numbers(text: str) -> list[float]:
    return [float(t) for t in re.findall(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?", text)]


def _one_point_ok(out: str) -> bool:
    nums = _numbers(out)
    return all(any(abs(v - want) <= 1e-9 * want for v in nums) for want in (29.0, 11.0))


def _interleaved(specs: list[tuple[str, list[str], Any]], runs: int, **kw) -> list[Row]:
    """Run every (name, command, check) once per round, ``runs`` rounds: a drift in the
    machine's speed (this VM's memory daemon, other tenants) then hits every tool alike,
    and the ratios between medians stay fair. A tool stops at its first failure."""
    done: dict[str, list[Any]] = {name: [] for name, _, _ in specs}
    failed: dict[str, Any] = {}
    correct: dict[str, bool] = {}
    for _ in range(runs):
        for name, cmd, check in specs:
            if name in failed:
                continue
            r = run_command(cmd, **kw)
            if r.failure:
                failed[name] = r
                continue
            done[name].append(r)
            correct[name] = bool(check(r))
    rows = []
    for name, _, _ in specs:
        secs = [r.seconds for r in done[name]]
        if name in failed:
            rows.append(Row(name, "error", secs, failed[name].peak_mib,
                            note=failed[name].failure))
        else:
            rows.append(Row(name, "ok", secs, max(r.peak_mib for r in done[name]),
                            correct=correct[name]))
    return rows


def _bare_grid_ok(out: str) -> bool:
    """A bare --grid on sin(x)*cos(y): 101 × 101 rows, the last at x = y = 5."""
    lines = out.splitlines()
    if len(lines) != 10_202 or lines[0] != "x,y,f,df/dx,df/dy":
        return False
    x, y, f, fx, fy = map(float, lines[-1].split(","))
    return (x, y) == (5.0, 5.0) and abs(f - math.sin(5) * math.cos(5)) <= 1e-15 and abs(
        fx - math.cos(5) ** 2) <= 1e-15 and abs(fy + math.sin(5) ** 2) <= 1e-15


def _file_taken(path: Path) -> bool:
    """Check the CSV a run just wrote, then remove it so the next run must write its own."""
    try:
        ok = _one_point_ok(path.read_text())
    except OSError:
        return False
    path.unlink(missing_ok=True)
    return ok


#: numeric command lines whose start-up is measured against ``python -c "import numpy"``
#: (issue 13's goal: at most 1.5× it, whatever the options)
COLD_LINES = [
    ["grad", ONE_POINT, "--at", "x=4"],
    ["grad", ONE_POINT, "--at", "x=4", "--format", "csv", "-q"],
    ["grad", "sin(x)*cos(y)", "--grid"],
    ["grad", ONE_POINT, "--at", "x=4", "-o", "OUT"],
]


def cold_name(args: list[str]) -> str:
    """The row name of one of :data:`COLD_LINES`, as a user would type it."""
    import shlex

    return "gradcli " + shlex.join(args).replace("OUT", "out.csv")


def cold_rows(runs: int) -> list[Row]:
    """Fresh-process start-up: bare Python, numpy import, gradcli, and the peers."""
    gc = gradcli_cmd()
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-cold-") as tmp:
        out = Path(tmp) / "out.csv"
        specs = [
            ("python -c pass", [PY, "-c", "pass"], lambda r: True),
            ('python -c "import numpy"', [PY, "-c", "import numpy"], lambda r: True),
            ("gradcli --help", [*gc, "--help"], lambda r: "Usage" in r.stdout),
        ]
        for args in COLD_LINES:
            argv = [str(out) if a == "OUT" else a for a in args]
            if "--grid" in args:
                check = lambda r: _bare_grid_ok(r.stdout)  # noqa: E731
            elif "OUT" in args:
                check = lambda r: _file_taken(out)  # noqa: E731
            else:
                check = lambda r: _one_point_ok(r.stdout)  # noqa: E731
            specs.append((cold_name(args), [*gc, *argv], check))
        missing = []
        for name, module, script in PEERS:
            if installed(module):
                specs.append((name, [PY, "-c", script], lambda r: _one_point_ok(r.stdout)))
            else:
                missing.append(Row(name, "not installed"))
        return _interleaved(specs, runs) + missing


def _png_taken(path: Path) -> bool:
    """Check the picture a run just wrote, then remove it so the next run must write its own."""
    ok = _png_ok(path)
    path.unlink(missing_ok=True)
    return ok


def _png_ok(path: Path) -> bool:
    try:
        head = path.read_bytes()[:24]
    except OSError:
        return False
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    width, height = struct.unpack(">II", head[16:24])
    return width >= 100 and height >= 100


def plot_rows(runs: int) -> tuple[list[Row], str]:
    """``gradcli plot`` against the same figure drawn by a bare matplotlib script, and the
    same field as an interactive page (``-o field.html``) against the PNG."""
    gc = gradcli_cmd()
    probe = run_command([*gc, "plot", "--help"], timeout=120)
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-") as tmp:
        png = Path(tmp) / "x.png"
        script = Path(tmp) / "bare_plot.py"
        script.write_text(PLOT_SCRIPT)
        rows = []
        bare = [PY, str(script), str(png)]
        bare_spec = ("bare matplotlib (Figure API)", bare, lambda r: _png_taken(png))
        if probe.failure:
            note = f"gradcli plot unavailable ({probe.failure}): skipped"
            rows.append(Row("gradcli plot", "skipped", note=note))
            rows += _interleaved([bare_spec], runs)
        else:
            note = ""
            cmd = [*gc, "plot", "sin(x)*cos(y)", "--grid", "x=0:2pi:100", "--grid",
                   "y=0:2pi:100", "-o", str(png)]
            specs = [("gradcli plot", cmd, lambda r: _png_taken(png)), bare_spec]
            page = Path(tmp) / "field.html"
            if installed("plotly"):
                specs.append(("gradcli plot -o field.html", [*cmd[:-1], str(page)],
                              lambda r: _page_taken(page)))
            rows += _interleaved(specs, runs)
            if not installed("plotly"):
                rows.append(Row("gradcli plot -o field.html", "not installed",
                                note="pip install 'gradcli[html]'"))
    return rows, note


def _page_taken(path: Path) -> bool:
    """A page that embeds plotly.js and the 100×100 heatmap's hover text; then removed."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    path.unlink(missing_ok=True)
    return text.startswith("<!DOCTYPE html>") and "plotly.js v" in text and \
        text.count("df/dy = ") == 100 * 100


CHECK_NPY = """\
import json, sys
import numpy as np
path, n = sys.argv[1], int(sys.argv[2])
a = np.load(path, mmap_mode="r")
names = ["f", "df/dx", "df/dy"]
x = np.linspace(0, 1, n)
if a.dtype.names and a.shape == (n, n):
    if {"x", "y"} <= set(a.dtype.names):       # the variables' own columns, if present
        names += ["x", "y"]
    cols = {k: a[k] for k in names if k in a.dtype.names}
elif a.shape == (3, n, n):
    cols = dict(zip(names, a))
elif a.shape == (n, n, 3):
    cols = {k: a[..., i] for i, k in enumerate(names)}
else:
    print(json.dumps({"ok": False, "note": f"layout {a.shape} {a.dtype} not understood"}))
    sys.exit()
err = 0.0
for r in np.linspace(0, n - 1, 50).astype(int):
    X, Y = x[r], x
    t = {"f": np.sin(X) * np.cos(Y), "df/dx": np.cos(X) * np.cos(Y),
         "df/dy": -np.sin(X) * np.sin(Y), "x": X, "y": Y}
    for k in names:
        err = max(err, float(np.abs(np.asarray(cols[k][r]) - t[k]).max()))
ok = len(cols) == len(names) and err < 1e-9
print(json.dumps({"ok": ok, "note": f"max abs err {err:.1e} on 50 sampled rows"}))
"""


def scale_row(n: int, timeout: float, rss_limit_mib: float) -> Row:
    """``gradcli grad ... -o big.npy`` on an n×n grid: peak RSS is the number that matters."""
    name = f"gradcli grad sin(x)*cos(y) {n}×{n} -o big.npy"
    tmpdir = Path(tempfile.mkdtemp(prefix="gradcli-bench-scale-"))
    try:
        need = 5 * 8 * n * n * 1.1      # x, y, f, df/dx, df/dy as float64
        if shutil.disk_usage(tmpdir).free < need:
            return Row(name, "skipped", note=f"needs {need / 2**30:.1f} GiB free in {tmpdir}")
        out = tmpdir / "big.npy"
        cmd = [*gradcli_cmd(), "grad", "sin(x)*cos(y)", "--grid", f"x=0:1:{n}", "--grid",
               f"y=0:1:{n}", "--max-points", str(n * n), "-o", str(out)]
        r = run_command(cmd, timeout=timeout, rss_limit_mib=rss_limit_mib)
        if r.failure:
            return Row(name, "error", [r.seconds], r.peak_mib, note=r.failure)
        chk = run_command([PY, "-c", CHECK_NPY, str(out), str(n)], timeout=timeout)
        try:
            verdict = json.loads(chk.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            verdict = {"ok": False, "note": f"check failed: {chk.failure}"}
        return Row(name, "ok", [r.seconds], r.peak_mib, correct=verdict["ok"],
                   note=verdict["note"])
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)
