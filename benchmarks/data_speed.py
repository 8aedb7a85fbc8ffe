"""Gridded data and Dask (issues 18 and 19): the "data" and "dask" sections of ``make bench``.

- data: a 2000² ``grad`` written by the command to each format (.csv .npz .nc .zarr
  .parquet), each read back by its standard reader (numpy, xarray, pandas) and checked
  against the analytic derivative; then a 10,000² ``grad`` to ``.zarr``, whose peak RSS
  must stay under 1 GiB (it streams block by block).
- dask: a 1000³ ``grad`` (10⁹ points) to ``.zarr``, by the local threaded path and on
  ``--scheduler local:2`` (two worker processes of one thread), in the same run: wall time
  of the whole command (cluster start included), peak RSS of every process (client,
  scheduler, each worker: each reads its own ``VmHWM``), points per second per core, and
  a check of sampled slabs of the store against the analytic derivative.

Every run is a fresh process under the launcher. Alone: ``python -m benchmarks.data_speed
[--quick]``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from .cold import gradcli_cmd
from .measure import Row, run_command

PY = sys.executable
FORMATS = (".csv", ".npz", ".nc", ".zarr", ".parquet")
EXPR2 = "sin(x)*cos(y)"
# a 3-D field with some work per point (about 20 array passes for f and its gradient)
EXPR3 = "exp(-(x^2+y^2+z^2))*sin(x*y) + log(1+z^2)/(1+x^2)"

CHECK2 = """\
import json, sys
import numpy as np
path, n = sys.argv[1], int(sys.argv[2])
ext = path.rsplit(".", 1)[1]
if ext == "csv":
    import pandas as pd
    d = pd.read_csv(path)
    get = lambda k: d[k].to_numpy().reshape(n, n)
elif ext == "parquet":
    import pandas as pd
    d = pd.read_parquet(path)
    get = lambda k: d[k].to_numpy().reshape(n, n)
elif ext == "npz":
    d = np.load(path)
    get = lambda k: np.broadcast_to(d[k], (n, n))
else:
    import xarray as xr
    d = xr.open_dataset(path, engine="h5netcdf") if ext == "nc" else xr.open_zarr(path, chunks=None)
    get = lambda k: d[k.replace("/", "_")].values
x = np.linspace(0, 1, n)
X, Y = x[:, None], x[None, :]
truth = {"f": np.sin(X) * np.cos(Y), "df/dx": np.cos(X) * np.cos(Y),
         "df/dy": -np.sin(X) * np.sin(Y)}
err = max(float(np.abs(get(k) - v).max()) for k, v in truth.items())
print(json.dumps({"ok": err < 1e-12, "note": f"read back: max abs err {err:.1e}"}))
"""

# the run itself, by the library path the command takes (prepare, then a Zarr sink),
# reporting every process's own peak RSS; argv: mode (local | local:N), n, store
DASK_RUN = """\
import json, sys, time
def vmhwm():
    with open("/proc/self/status") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("VmHWM")) / 1024
if __name__ == "__main__":
    from gradcli.evaluation import prepare
    from gradcli.output.zarr_sink import ZarrSink
    mode, n, store = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    grid = {v: (-2, 2, n) for v in "xyz"}
    prepared = prepare(EXPR, "grad", grid=grid, max_points=n**3)
    peaks = {}
    t = time.perf_counter()
    if mode == "local":
        prepared.run(ZarrSink(store, prepared.origin()))
    else:
        from gradcli.evaluation.cluster import connect
        client, close = connect(mode)
        prepared.run(ZarrSink(store, prepared.origin()), client=client)
        for i, (addr, mib) in enumerate(sorted(client.run(vmhwm).items())):
            peaks[f"worker {i}"] = mib
        peaks["scheduler"] = client.run_on_scheduler(vmhwm)
        close()
    peaks["client"] = vmhwm()
    print(json.dumps({"seconds": time.perf_counter() - t, "peaks": peaks}))
"""

# the same grid computed and thrown away, on this process's threads: the compute rate
# alone; argv: n, threads
COMPUTE_ONLY = """\
import json, sys, time
from gradcli.evaluation import prepare
class Discard:
    def open(self, layout, shape, dtype, inputs): self.inputs = inputs
    def write(self, start, stop, values): pass
    def result(self): return self.inputs
n, threads = int(sys.argv[1]), int(sys.argv[2])
prepared = prepare(EXPR, "grad", grid={v: (-2, 2, n) for v in "xyz"}, max_points=n**3)
t = time.perf_counter()
prepared.run(Discard(), threads=threads)
print(json.dumps({"seconds": time.perf_counter() - t}))
"""

CHECK3 = """\
import json, sys
import numpy as np, zarr
store, n = sys.argv[1], int(sys.argv[2])
g = zarr.open_group(store, mode="r")
x = np.linspace(-2, 2, n)
err = 0.0
for i in np.linspace(0, n - 1, 7).astype(int):
    X = x[i]
    Y, Z = np.meshgrid(x, x, indexing="ij")
    e, s, c = np.exp(-(X**2 + Y**2 + Z**2)), np.sin(X * Y), np.cos(X * Y)
    t = {"f": e * s + np.log(1 + Z**2) / (1 + X**2),
         "df_dx": e * (-2 * X * s + Y * c) - np.log(1 + Z**2) * 2 * X / (1 + X**2)**2,
         "df_dy": e * (-2 * Y * s + X * c),
         "df_dz": -2 * Z * e * s + 2 * Z / ((1 + Z**2) * (1 + X**2))}
    for k, v in t.items():
        err = max(err, float(np.abs(g[k][i] - v).max()))
print(json.dumps({"ok": err < 1e-12, "note": f"7 slabs read back: max abs err {err:.1e}"}))
"""


def _checked(row: Row, cmd: list[str]) -> Row:
    chk = run_command(cmd, timeout=900)
    try:
        verdict = json.loads(chk.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        verdict = {"ok": False, "note": f"check failed: {chk.failure}"}
    row.correct = verdict["ok"]
    row.note = "; ".join(p for p in (row.note, verdict["note"]) if p)
    return row


def format_rows(tmp: Path, n: int) -> list[Row]:
    """The command writing an n² grad to each format, each file read back and checked."""
    rows = []
    for ext in FORMATS:
        out = tmp / f"g{ext}"
        cmd = [*gradcli_cmd(), "grad", EXPR2, "--grid", f"x=0:1:{n}", "--grid", f"y=0:1:{n}",
               "-o", str(out)]
        r = run_command(cmd, timeout=900)
        name = f"gradcli grad {n}² -o out{ext}"
        if r.failure:
            rows.append(Row(name, "error", [r.seconds], r.peak_mib, note=r.failure))
            continue
        size = sum(p.stat().st_size for p in out.rglob("*")) if out.is_dir() else \
            out.stat().st_size
        rows.append(_checked(Row(name, "ok", [r.seconds], r.peak_mib,
                                 note=f"{size / 2**20:.0f} MiB"),
                             [PY, "-c", CHECK2, str(out), str(n)]))
        shutil.rmtree(out) if out.is_dir() else out.unlink()
    return rows


def zarr_scale_row(tmp: Path, n: int) -> Row:
    """An n² grad streamed to .zarr by the command: peak RSS is what matters."""
    out = tmp / "big.zarr"
    name = f"gradcli grad {n}² -o big.zarr"
    need = 5 * 8 * n * n * 1.1
    if shutil.disk_usage(tmp).free < need:
        return Row(name, "skipped", note=f"needs {need / 2**30:.1f} GiB free in {tmp}")
    cmd = [*gradcli_cmd(), "grad", EXPR2, "--grid", f"x=0:1:{n}", "--grid", f"y=0:1:{n}",
           "--max-points", str(max(n * n, 50_000_000)), "-o", str(out)]
    r = run_command(cmd, timeout=1800, rss_limit_mib=8192)
    if r.failure:
        return Row(name, "error", [r.seconds], r.peak_mib, note=r.failure)
    row = _checked(Row(name, "ok", [r.seconds], r.peak_mib),
                   [PY, "-c", CHECK2, str(out), str(n)])
    shutil.rmtree(out, ignore_errors=True)
    return row


def dask_rows(tmp: Path, n: int, workers: int = 2) -> tuple[list[Row], dict[str, float]]:
    """The n³ grad to .zarr locally and on local:N; facts for the goals."""
    rows, facts = [], {}
    need = 4 * 8 * n**3 * 1.05
    for mode in ("local", f"local:{workers}"):
        name = (f"threaded, {n}³ grad -o out.zarr" if mode == "local" else
                f"--scheduler {mode}, {n}³ grad -o out.zarr")
        if shutil.disk_usage(tmp).free < need:
            rows.append(Row(name, "skipped", note=f"needs {need / 2**30:.0f} GiB free in {tmp}"))
            continue
        store = tmp / "d.zarr"
        code = f"EXPR = {EXPR3!r}\n" + DASK_RUN
        r = run_command([PY, "-c", code, mode, str(n), str(store)], timeout=3600)
        if r.failure:
            rows.append(Row(name, "error", [r.seconds], r.peak_mib, note=r.failure))
            shutil.rmtree(store, ignore_errors=True)
            continue
        rep = json.loads(r.stdout.strip().splitlines()[-1])
        peaks = rep["peaks"]
        peak = max([*peaks.values(), r.peak_mib])
        cores = workers if mode != "local" else _cores()
        rate = n**3 / r.seconds / cores
        facts[mode] = r.seconds
        facts[f"{mode} per core"] = rate
        each = ", ".join(f"{k} {v:.0f}" for k, v in peaks.items())
        rows.append(_checked(
            Row(name, "ok", [r.seconds], peak,
                note=f"{rate / 1e6:.1f}M points/s/core; peak MiB: {each}"),
            [PY, "-c", CHECK3, str(store), str(n)]))
        shutil.rmtree(store, ignore_errors=True)
    for threads in (1, _cores()):
        name = f"compute only, {n}³ grad, {threads} thread{'s' if threads > 1 else ''}"
        code = f"EXPR = {EXPR3!r}\n" + COMPUTE_ONLY
        r = run_command([PY, "-c", code, str(n), str(threads)], timeout=3600)
        if r.failure:
            rows.append(Row(name, "error", [r.seconds], r.peak_mib, note=r.failure))
            continue
        seconds = json.loads(r.stdout.strip().splitlines()[-1])["seconds"]
        rate = n**3 / seconds / threads
        rows.append(Row(name, "ok", [seconds], r.peak_mib,
                        note=f"{rate / 1e6:.1f}M points/s/core; results discarded"))
    return rows, facts


def data_goals(quick: bool) -> list[Any]:
    """The goals of issues 18 and 19, keyed to this run's row names."""
    from .report import Goal

    n = data_sizes(quick)
    dask = f"--scheduler local:2, {n['dask']}³ grad -o out.zarr"
    return [
        Goal(f"18: {n['zarr']}² grad to .zarr, peak RSS ≤ 1024 MiB", "zarr scale",
             f"gradcli grad {n['zarr']}² -o big.zarr", (), 1024.0, "rss"),
        Goal(f"19: {n['dask']}³ grad to .zarr on local:2, peak RSS of every process ≤ "
             "1024 MiB", "dask", dask, (), 1024.0, "rss"),
        Goal(f"19: {n['dask']}³ grad to .zarr on local:2 ≤ 1.3× the local threaded path",
             "dask", dask, (f"threaded, {n['dask']}³ grad -o out.zarr",), 1.3),
    ]


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0))


TITLES = {
    "formats": "2000² grad written by the command to each format, read back and checked",
    "zarr scale": "10,000² grad streamed to .zarr (fresh process, one run)",
    "dask": "1000³ grad (10⁹ points) to .zarr: local threads vs a LocalCluster (one run each)",
}


def data_tables(quick: bool, sections: list[str]) -> tuple[dict[str, list[Row]], dict]:
    """The rows of the "data" and "dask" sections and the facts their goals need."""
    tables: dict[str, list[Row]] = {}
    facts: dict[str, float] = {}
    sizes = data_sizes(quick)
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-data-", dir=_bench_dir()) as tmp:
        if "data" in sections:
            tables["formats"] = format_rows(Path(tmp), sizes["formats"])
            tables["zarr scale"] = [zarr_scale_row(Path(tmp), sizes["zarr"])]
        if "dask" in sections:
            tables["dask"], facts = dask_rows(Path(tmp), sizes["dask"])
    return tables, facts


def data_sizes(quick: bool) -> dict[str, int]:
    return {"formats": 300 if quick else 2000, "zarr": 1000 if quick else 10_000,
            "dask": 100 if quick else 1000}


def _bench_dir() -> str | None:
    """Where the big stores go: $GRADCLI_BENCH_DIR, else the system's temporary folder."""
    import os

    return os.environ.get("GRADCLI_BENCH_DIR") or None


def main(argv: list[str] | None = None) -> int:
    from . import report

    p = argparse.ArgumentParser(prog="python -m benchmarks.data_speed")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--only", default="data,dask")
    a = p.parse_args(argv)
    tables, _ = data_tables(a.quick, [s.strip() for s in a.only.split(",")])
    for key, rows in tables.items():
        print(report.table(TITLES[key], rows, rows[0].tool, "the first row"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
