"""The "propagate" section (issue 29): measurement uncertainty through a formula.

- First order through ``sum(x^2)`` of a 10⁴-vector (and a 10⁵-vector) with independent
  uncertainties, read from ``.npy`` files, as a fresh ``gradcli propagate`` process
  writing CSV and as a fresh Python process calling ``gradcli.propagate``, beside the
  ``uncertainties`` package doing the same in a fresh process (load, ``unumpy.uarray``,
  the sum, write f and u). All are checked against the closed form
  u = sqrt(Σ(2xᵢuᵢ)²).
- GUM H.2 (three outputs, correlated inputs) by Monte Carlo with 10⁷ samples, a fresh
  process, its peak memory, and its mean and sd checked against the law of propagation
  (linear enough here: within 1 % of u).

Also runnable alone: ``python -m benchmarks.propagate_speed``.
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import sys
import tempfile
from pathlib import Path

from .measure import Row, repeat_command

PY = sys.executable
TITLES = {
    "propagate": "First-order propagation through sum(x^2) of a long vector with independent "
                 "uncertainties (fresh process, median)",
    "propagate_mc": "GUM H.2 by Monte Carlo (fresh process, median)",
}

UNCERTAINTIES = """
import sys, numpy as np
from uncertainties import unumpy
x = unumpy.uarray(np.load(sys.argv[1]), np.load(sys.argv[2]))
f = (x**2).sum()
open(sys.argv[3], "w").write(f"f,u(f)\\n{f.nominal_value!r},{f.std_dev!r}\\n")
"""

LIBRARY = """
import sys, numpy as np
import gradcli
r = gradcli.propagate("sum(x^2)", at={"x": (np.load(sys.argv[1]), np.load(sys.argv[2]))})
open(sys.argv[3], "w").write(f"f,u(f)\\n{float(r['f'][0])!r},{float(r['u(f)'][0])!r}\\n")
"""

H2 = ["[V/I*cos(phi), V/I*sin(phi), V/I]", "--at",
      "V=4.9990+-0.0032, I=19.6610e-3+-0.0095e-3, phi=1.04446+-0.00075",
      "--corr", "V,I=-0.36", "--corr", "V,phi=0.86", "--corr", "I,phi=-0.65"]


def sizes(quick: bool) -> tuple[list[int], int]:
    """(vector lengths, Monte Carlo samples)."""
    return ([10**3], 10**6) if quick else ([10**4, 10**5], 10**7)


def names(quick: bool, n: int | None = None) -> dict[str, str]:
    lengths, mc = sizes(quick)
    n = lengths[0] if n is None else n
    return {"gradcli": f"gradcli propagate: {n:,}-vector",
            "library": f"gradcli.propagate (Python): {n:,}-vector",
            "uncertainties": f"uncertainties (unumpy): {n:,}-vector",
            "mc": f"gradcli propagate H.2 --monte-carlo {mc:,}",
            "shortest": f"gradcli propagate H.2 --monte-carlo {mc:,} --interval shortest",
            "adaptive": "gradcli propagate H.2 --monte-carlo adaptive (JCGM 101 7.9)"}


def _last_row(path: Path) -> dict[str, str]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))[-1]


def _vector_row(name: str, cmd: list[str], runs: int, out: Path, truth: float) -> Row:
    done, failed = repeat_command(cmd, runs, timeout=300)
    if failed is not None:
        return Row(name, "error", peak_mib=failed.peak_mib, note=failed.failure)
    got = float(_last_row(out)["u(f)"])
    err = abs(got - truth) / truth
    return Row(name, "ok", [r.seconds for r in done], max(r.peak_mib for r in done),
               correct=err < 1e-12, rel_err=err)


def propagate_tables(quick: bool, runs: int) -> dict[str, list[Row]]:
    """Both tables: the vector beside uncertainties, and H.2 by Monte Carlo."""
    import numpy as np

    lengths, samples = sizes(quick)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-propagate-") as name:
        tmp = Path(name)
        for n in lengths:
            label = names(quick, n)
            rng = np.random.default_rng(29)
            x, u = rng.standard_normal(n), rng.uniform(0.01, 0.1, n)
            xs, us = tmp / f"x{n}.npy", tmp / f"u{n}.npy"
            np.save(xs, x)
            np.save(us, u)
            truth = float(np.sqrt(np.sum((2 * x * u) ** 2)))
            out = tmp / "gradcli.csv"
            cmd = [PY, "-m", "gradcli", "propagate", "sum(x^2)", "--at", f"x=@{xs}+-@{us}",
                   "-o", str(out)]
            rows.append(_vector_row(label["gradcli"], cmd, runs, out, truth))
            out = tmp / "library.csv"
            rows.append(_vector_row(label["library"], [PY, "-c", LIBRARY, str(xs), str(us),
                                                       str(out)], runs, out, truth))
            if importlib.util.find_spec("uncertainties") is None:
                rows.append(Row(label["uncertainties"], "not installed"))
                continue
            out = tmp / "uncertainties.csv"
            rows.append(_vector_row(label["uncertainties"],
                                    [PY, "-c", UNCERTAINTIES, str(xs), str(us), str(out)],
                                    runs, out, truth))
        label = names(quick)
        out = tmp / "mc.csv"
        cmd = [PY, "-m", "gradcli", "propagate", *H2, "--monte-carlo", str(samples),
               "--seed", "1", "-q", "-o", str(out)]
        done, failed = repeat_command(cmd, max(1, min(runs, 3)), timeout=600)
        if failed is not None:
            mc = Row(label["mc"], "error", peak_mib=failed.peak_mib, note=failed.failure)
        else:
            with open(out, newline="") as fh:
                table = list(csv.DictReader(fh))
            err = max(max(abs(float(r["mean"]) - float(r["f"])),
                          abs(float(r["sd"]) - float(r["u(f)"]))) / float(r["u(f)"])
                      for r in table)
            mc = Row(label["mc"], "ok", [r.seconds for r in done],
                     max(r.peak_mib for r in done), correct=err < 0.01, rel_err=err,
                     note="mean and sd against the law of propagation, relative to u")
        extra = [_mc_row(label["shortest"], [*cmd[:-2], "--interval", "shortest", "-o",
                                             str(out)], runs, out)]
        adaptive = [PY, "-m", "gradcli", "propagate", *H2, "--monte-carlo", "adaptive",
                    "--seed", "1", "-q", "-o", str(out)]
        extra.append(_mc_row(label["adaptive"], adaptive, runs, out))
    return {"propagate": rows, "propagate_mc": [mc, *extra]}


def _mc_row(name: str, cmd: list[str], runs: int, out: Path) -> Row:
    """A Monte Carlo run of H.2: its time and peak; an adaptive run's M in the note."""
    done, failed = repeat_command(cmd, max(1, min(runs, 3)), timeout=600)
    if failed is not None:
        return Row(name, "error", peak_mib=failed.peak_mib, note=failed.failure)
    with open(out, newline="") as fh:
        table = list(csv.DictReader(fh))
    err = max(abs(float(r["sd"]) - float(r["u(f)"])) / float(r["u(f)"]) for r in table)
    note = "sd against u(f), relative"
    if "M" in table[0]:
        note += f"; M = {int(float(table[0]['M'])):,} samples"
    return Row(name, "ok", [r.seconds for r in done], max(r.peak_mib for r in done),
               correct=err < 0.01, rel_err=err, note=note)


def propagate_goals(quick: bool) -> list:
    """Issue 29's speed goals."""
    from .report import Goal

    n = names(quick)
    big = names(quick, sizes(quick)[0][-1])
    return [
        Goal("29: first-order propagation of sum(x^2), 10⁴-vector, fresh process ≤ 0.5 s",
             "propagate", n["gradcli"], (), 0.5),
        Goal("29: the same ≤ 1.0× the uncertainties package's time (fresh processes)",
             "propagate", n["gradcli"], (n["uncertainties"],), 1.0),
        Goal("29: the same from Python (gradcli.propagate) ≤ 1.0× uncertainties", "propagate",
             n["library"], (n["uncertainties"],), 1.0),
        Goal("29: the command at 10⁵ components ≤ 1.0× uncertainties", "propagate",
             big["gradcli"], (big["uncertainties"],), 1.0),
        Goal("29: GUM H.2 by Monte Carlo, 10⁷ samples ≤ 3 s", "propagate_mc", n["mc"], (),
             3.0),
        Goal("29: the same, peak memory ≤ 500 MB", "propagate_mc", n["mc"], (), 500 / 1.048576,
             metric="rss"),
        Goal("36: GUM H.2 by Monte Carlo, 10⁷ samples ≤ 1 s", "propagate_mc", n["mc"], (),
             1.0),
        Goal("36: the same, peak memory ≤ 150 MiB", "propagate_mc", n["mc"], (), 150.0,
             metric="rss"),
        Goal("36: the shortest interval, 10⁷ samples ≤ 150 MiB", "propagate_mc",
             n["shortest"], (), 150.0, metric="rss"),
    ]


def main() -> None:
    from . import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tables = propagate_tables(args.quick, args.runs)
    for key, rows in tables.items():
        print(report.table(TITLES[key], rows, rows[0].tool, "gradcli"))
    print(report.goals_section(propagate_goals(args.quick), tables)[0])


if __name__ == "__main__":
    main()
