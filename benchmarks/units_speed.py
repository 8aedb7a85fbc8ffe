"""The "units" section (physical units): what a unit costs.

- Cold start: a fresh one-point ``grad`` of R = V/I without units and with them (pint
  imported, its registry made, the expression's units inferred), beside ``python -c
  "import numpy"`` (goal: the run with units under 2.5× it), run round-robin.
- A 1000 × 1000 grid (10⁶ points) of ``x*y`` to ``.npy`` without and with ``--unit
  x=m,y=s`` (goal: within 1.1×: units are inferred once per request, not per point), run
  round-robin; every output is checked (R = V/I and its partials, the grid's last row).
- The same grid warm, in one process: ``gradcli.evaluate`` without and with ``units=``
  after pint is imported and its registry made (one call of each first), round-robin,
  medians: the per-request cost of units apart from pint's one-off import (goal: within
  1.1×; the units are inferred once per request, not per point).

Also runnable alone: ``python -m benchmarks.units_speed``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from .cold import _interleaved, _numbers, gradcli_cmd
from .measure import Row

PY = sys.executable
TITLES = {
    "units_cold": "Units: one-point grad of V/I, cold start (fresh process, median)",
    "units_grid": "Units: grad of x*y on a 10⁶-point grid to .npz (fresh process, median)",
    "units_warm": "Units: gradcli.evaluate grad of x*y on a 10⁶-point grid, warm (one process, "
                  "pint loaded, median)",
}

#: the warm run: one child process times both requests round-robin and prints the times
_WARM = '''
import json, sys, time
import numpy as np
import gradcli
n, runs = int(sys.argv[1]), int(sys.argv[2])
grid = {"x": (0, 1, n), "y": (0, 1, n)}
cases = {"none": {}, "units": {"units": {"x": "m", "y": "s"}}}
times = {k: [] for k in cases}
ok = {}
for _ in range(runs + 1):  # the first round warms up (pint's import, the registry, caches)
    for k, extra in cases.items():
        t = time.perf_counter()
        r = gradcli.evaluate("x*y", "grad", grid=grid, **extra)
        f, d = np.asarray(r["f"]), np.asarray(r["df/dx"])
        times[k].append(time.perf_counter() - t)
        ok[k] = f.shape == (n, n) and float(np.broadcast_to(d, (n, n))[-1, -1]) == 1.0 and \
            (not extra or r.units.get("df/dx") == "s")
print(json.dumps({k: {"times": v[1:], "ok": ok[k]} for k, v in times.items()}))
'''


def _warm_rows(n: int, runs: int) -> list[Row]:
    """The warm in-process table: evaluate's time without and with units."""
    import json
    import subprocess

    done = subprocess.run([PY, "-c", _WARM, str(n), str(runs)], capture_output=True,
                          text=True, timeout=600)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return [Row(name, "error", note=last) for name in ("evaluate, no units",
                                                           "evaluate, x in m, y in s")]
    got = json.loads(done.stdout)
    return [Row(f"gradcli.evaluate x*y, {n}², no units", "ok", got["none"]["times"],
                correct=got["none"]["ok"]),
            Row(f"gradcli.evaluate x*y, {n}², x in m, y in s", "ok", got["units"]["times"],
                correct=got["units"]["ok"])]

# R = 4.999 V / 19.661 mA: f = 0.25426 V/mA, df/dV = 1/19.661, df/dI = -4.999/19.661²
_R = (4.999 / 19.661, 1 / 19.661, -4.999 / 19.661 ** 2)


def _r_ok(out: str) -> bool:
    nums = _numbers(out.splitlines()[-1]) if out.strip() else []
    return len(nums) == 5 and all(abs(a - b) <= 1e-12 * abs(b) for a, b in zip(nums[2:], _R,
                                                                              strict=True))


def _grid_ok(path: Path, n: int) -> bool:
    import numpy as np

    try:
        with np.load(path) as z:
            ok = z["f"].shape == (n, n) and float(z["df/dx"][-1, -1]) == 1.0
    except (OSError, KeyError, ValueError):
        return False
    path.unlink(missing_ok=True)
    return ok


def units_tables(quick: bool, runs: int) -> dict[str, list[Row]]:
    """Both tables."""
    gc = gradcli_cmd()
    n = 100 if quick else 1000
    cold = [
        ('python -c "import numpy"', [PY, "-c", "import numpy"], lambda r: True),
        ("gradcli grad V/I, no units",
         [*gc, "grad", "V/I", "--at", "V=4.999, I=19.661", "-f", "csv"],
         lambda r: _r_ok(r.stdout)),
        ("gradcli grad V/I, V in V, I in mA",
         [*gc, "grad", "V/I", "--at", "V=4.999 V, I=19.661 mA", "-f", "csv"],
         lambda r: _r_ok(r.stdout)),
    ]
    tables = {"units_cold": _interleaved(cold, max(2, runs))}
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-units-") as tmp:
        out = Path(tmp) / "g.npz"
        grid = ["grad", "x*y", "--grid", f"x=0:1:{n}", "--grid", f"y=0:1:{n}", "-o", str(out),
                "-q"]
        specs = [(f"gradcli grad x*y, {n}², no units", [*gc, *grid],
                  lambda r: _grid_ok(out, n)),
                 (f"gradcli grad x*y, {n}², x in m, y in s",
                  [*gc, *grid, "--unit", "x=m,y=s"], lambda r: _grid_ok(out, n))]
        tables["units_grid"] = _interleaved(specs, max(2, runs))
    tables["units_warm"] = _warm_rows(n, max(5, runs))
    return tables


def main(argv: list[str] | None = None) -> int:
    from . import report

    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--runs", type=int, default=9)
    a = p.parse_args(argv)
    for key, rows in units_tables(a.quick, a.runs).items():
        print(report.table(TITLES[key], rows, rows[0].tool, rows[0].tool), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
