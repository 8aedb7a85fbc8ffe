"""gradcli against hand-written numpy, torch, JAX and autograd: ``python -m benchmarks.run``.

Every (workload, tool) is timed in its own fresh process (median over ``--repeat`` runs
after ``--warmup`` untimed ones; JAX compiles in the warm-up), its peak RSS taken from
that process alone, and its result checked against the analytic derivatives in the same
run. Prints one markdown table per workload, then the goals computed from those rows.

    python -m benchmarks.run                   # everything at full size (several minutes)
    python benchmarks/run.py                   # the same
    python -m benchmarks.run --quick           # small sizes, 1 repeat: a smoke test
    python -m benchmarks.run --only W1,cold --repeat 7 --json out.json
    python -m benchmarks.run --only scale --scale   # the 10⁸-point streaming run
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

if not __package__:  # run as a script: python benchmarks/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import report, workloads  # noqa: E402
from benchmarks.cold import COLD_LINES, cold_name, cold_rows, plot_rows, scale_row  # noqa: E402
from benchmarks.measure import ROOT, Row, run_worker  # noqa: E402
from benchmarks.worker import LIBRARY, PLAN  # noqa: E402

SECTIONS = ("W1", "W2", "W3", "W6", "cold", "plot", "calculus", "io", "arrays", "data",
            "dask", "fields", "propagate", "explore", "units", "scale")


def machine() -> dict[str, str]:
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next((ln.split(":", 1)[1].strip() for ln in fh
                        if ln.startswith("model name")), cpu)
    except OSError:
        pass
    mem = "unknown"
    try:
        with open("/proc/meminfo") as fh:
            kib = int(next(ln for ln in fh if ln.startswith("MemTotal")).split()[1])
        mem = f"{kib / 2**20:.1f} GiB"
    except (OSError, StopIteration):
        pass
    info = {"cpu": cpu, "cores": str(len(os.sched_getaffinity(0))), "memory": mem,
            "python": f"{platform.python_version()} ({sys.executable})"}
    for name in ("numpy", "torch", "jax", "jaxlib", "autograd", "matplotlib"):
        try:
            info[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            info[name] = "not installed"
    git = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    info["gradcli commit"] = git.stdout.strip() or "unknown"
    info["load average at start"] = " ".join(f"{v:.2f}" for v in os.getloadavg())
    info["OPENBLAS_CORETYPE / L2_SIZE"] = (f"{os.environ.get('OPENBLAS_CORETYPE', '-')} / "
                                           f"{os.environ.get('OPENBLAS_L2_SIZE', '-')}")
    return info


def _installed(module: str) -> bool:
    try:
        metadata.version(module)
        return True
    except metadata.PackageNotFoundError:
        return False


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.run",
                                description="gradcli vs numpy/torch/JAX/autograd")
    p.add_argument("--quick", action="store_true", help="small sizes, 1 repeat, few runs")
    p.add_argument("--repeat", type=int, default=None, help="timed runs per tool (default 5)")
    p.add_argument("--warmup", type=int, default=1, help="untimed runs first (default 1)")
    p.add_argument("--cold-runs", type=int, default=None, help="fresh starts (default 10)")
    p.add_argument("--plot-runs", type=int, default=None, help="plot runs (default 5)")
    p.add_argument("--only", default="", help=f"comma list of {','.join(SECTIONS)}")
    p.add_argument("--json", metavar="FILE", help="also write every number as JSON")
    p.add_argument("--scale", action="store_true", help="run the 10⁸-point .npy scale test")
    p.add_argument("--scale-n", type=int, default=None, help="scale grid side (10000)")
    p.add_argument("--scale-timeout", type=float, default=900.0)
    p.add_argument("--scale-rss-limit", type=float, default=8192.0,
                   help="kill the scale run above this many MiB (default 8192)")
    a = p.parse_args(argv)
    a.repeat = a.repeat or (1 if a.quick else 5)
    a.cold_runs = a.cold_runs or (2 if a.quick else 10)
    a.plot_runs = a.plot_runs or (1 if a.quick else 5)
    a.scale_n = a.scale_n or (2000 if a.quick else 10_000)
    only = {s.strip().lower() for s in a.only.split(",") if s.strip()}
    unknown = only - {s.lower() for s in SECTIONS}
    if unknown:
        p.error(f"--only: unknown {sorted(unknown)}; choose from {', '.join(SECTIONS)}")
    a.sections = [s for s in SECTIONS if not only or s.lower() in only]
    if "scale" in a.sections and not a.scale:
        a.sections.remove("scale")
        if only:
            a.scale = True            # --only scale asks for it explicitly
            a.sections.append("scale")
    return a


def _progress(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def run_cases(args: argparse.Namespace, tables: dict[str, list[Row]]) -> None:
    for case in workloads.cases(args.quick):
        if case.workload not in args.sections:
            continue
        rows = []
        for tool in PLAN[case.workload]:
            lib = LIBRARY.get(tool)
            if lib and not _installed(lib):
                rows.append(Row(tool, "not installed"))
                continue
            _progress(f"  {case.key}: {tool} ...")
            row = run_worker(case.key, tool, quick=args.quick, warmup=args.warmup,
                             repeat=args.repeat)
            rows.append(row)
            _progress(f"    {row.status} median {row.median} s, peak {row.peak_mib} MiB, "
                      f"correct {row.correct} {row.note}")
        tables[case.key] = rows
        title = f"{case.key}: {case.what} of `{case.expression}`"
        print(report.table(title, rows, "gradcli", "gradcli"), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    info = machine()
    header = ["## gradcli benchmarks" + (" (--quick: small sizes, goals not meaningful)"
                                         if args.quick else ""), ""]
    header += [f"- {k}: {v}" for k, v in info.items()]
    header += [f"- repeats: {args.repeat} timed after {args.warmup} warm-up, each tool in a "
               f"fresh process; torch threads 2, gradcli threads default (all cores); "
               f"times include building the grid and returning numpy arrays", ""]
    print("\n".join(header), flush=True)
    tables: dict[str, list[Row]] = {}
    run_cases(args, tables)
    if "cold" in args.sections:
        _progress("  cold start ...")
        tables["cold"] = cold_rows(args.cold_runs)
        print(report.table(f"Cold start (fresh process, median of {args.cold_runs})",
                           tables["cold"], 'python -c "import numpy"', "import numpy"),
              flush=True)
    if "plot" in args.sections:
        _progress("  plot ...")
        tables["plot"], note = plot_rows(args.plot_runs)
        text = report.table(f"Plot, 100×100 grid to PNG and HTML (fresh process, median of "
                            f"{args.plot_runs})", tables["plot"], "gradcli plot", "gradcli")
        print(text + (f"\nNote: {note}\n" if note else ""), flush=True)
    if "calculus" in args.sections:
        _progress("  calculus (W8 laplacian, W9 hessian, W10 diff, cold taylor) ...")
        from benchmarks import calculus

        for key, rows in calculus.calculus_tables(args, _installed, _progress).items():
            tables[key] = rows
            print(report.table(calculus.title(key), rows, rows[0].tool, rows[0].tool),
                  flush=True)
    facts: dict[str, float] = {}
    if "io" in args.sections:
        _progress("  io (points files, CSV, .npz, wide files) ...")
        from benchmarks.io_speed import TITLES, io_tables

        io, facts = io_tables(args.quick, min(args.repeat, 3))
        for key, rows in io.items():
            tables[key] = rows
            print(report.table(TITLES[key], rows, rows[0].tool, "gradcli"), flush=True)
    if "arrays" in args.sections:
        _progress("  arrays (a 10⁶-vector from a file, beside torch) ...")
        from benchmarks.arrays_speed import TITLES as ARRAY_TITLES
        from benchmarks.arrays_speed import arrays_tables

        for key, rows in arrays_tables(args.quick, args.repeat).items():
            tables[key] = rows
            print(report.table(ARRAY_TITLES[key], rows, rows[0].tool, "gradcli"), flush=True)
    if "data" in args.sections or "dask" in args.sections:
        _progress("  data formats, .zarr at scale, Dask (issues 18, 19) ...")
        from benchmarks.data_speed import TITLES as DATA_TITLES
        from benchmarks.data_speed import data_tables

        data, _ = data_tables(args.quick, args.sections)
        for key, rows in data.items():
            tables[key] = rows
            print(report.table(DATA_TITLES[key], rows, rows[0].tool, "the first row"),
                  flush=True)
    if "fields" in args.sections:
        _progress("  fields (descend against torch.optim, critical) ...")
        from benchmarks.fields_speed import TITLES as FIELD_TITLES
        from benchmarks.fields_speed import fields_tables

        for key, rows in fields_tables(args.quick, min(args.repeat, 3)).items():
            tables[key] = rows
            print(report.table(FIELD_TITLES[key], rows, rows[0].tool, "gradcli"), flush=True)
    if "propagate" in args.sections:
        _progress("  propagate (a 10⁴-vector beside uncertainties, H.2 by Monte Carlo) ...")
        from benchmarks.propagate_speed import TITLES as PROPAGATE_TITLES
        from benchmarks.propagate_speed import propagate_tables

        for key, rows in propagate_tables(args.quick, min(args.repeat, 5)).items():
            tables[key] = rows
            print(report.table(PROPAGATE_TITLES[key], rows, rows[0].tool, "gradcli"),
                  flush=True)
    if "units" in args.sections:
        _progress("  units (cold start with units; a 10⁶-point grid with and without, cold "
                  "and warm) ...")
        from benchmarks.units_speed import TITLES as UNITS_TITLES
        from benchmarks.units_speed import units_tables

        for key, rows in units_tables(args.quick, max(args.cold_runs, 2)).items():
            tables[key] = rows
            print(report.table(UNITS_TITLES[key], rows, rows[0].tool, rows[0].tool),
                  flush=True)
    if "explore" in args.sections:
        _progress("  explore (a 200×200 field, a click's panel, start-up) ...")
        from benchmarks.explore_speed import TITLES as EXPLORE_TITLES
        from benchmarks.explore_speed import explore_tables

        for key, rows in explore_tables(args.quick, args.repeat).items():
            tables[key] = rows
            print(report.table(EXPLORE_TITLES[key], rows, rows[0].tool, rows[0].tool),
                  flush=True)
    if "scale" in args.sections:
        _progress(f"  scale {args.scale_n}² ...")
        row = scale_row(args.scale_n, args.scale_timeout, args.scale_rss_limit)
        tables["scale"] = [row]
        print(report.table("Scale (fresh process, one run)", [row], row.tool, "itself"), flush=True)
    keys = {c.workload: c.key for c in workloads.cases(args.quick)}
    w1_big = [c.key for c in workloads.cases(args.quick) if c.workload == "W1"][-1]
    from benchmarks.calculus import goals as calculus_goals
    from benchmarks.data_speed import data_goals
    from benchmarks.explore_speed import explore_goals
    from benchmarks.propagate_speed import propagate_goals

    text, goal_data = report.goals_section(
        report.goals(w1_big, keys["W2"], keys["W3"], keys["W6"], args.scale_n,
                     [cold_name(line) for line in COLD_LINES], args.quick,
                     facts.get("points_mib", 0.0)) + calculus_goals(args.quick)
        + data_goals(args.quick) + propagate_goals(args.quick)
        + explore_goals(args.quick), tables)
    print(text, flush=True)
    print(f"_total wall time {time.perf_counter() - started:.0f} s_", flush=True)
    if args.json:
        data = {"machine": info, "args": {k: v for k, v in vars(args).items()},
                "tables": {k: [{**vars(r), "median": r.median} for r in rows]
                           for k, rows in tables.items()},
                "goals": goal_data}
        with open(args.json, "w") as fh:
            json.dump(data, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
