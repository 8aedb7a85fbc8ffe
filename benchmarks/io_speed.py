"""Input and output at scale (issues 12.6, 12.8, 12.23 and 18): the "io" section of
``make bench``.

Every row is a fresh process under the launcher (wall time of the timed part, peak RSS of
the whole process), with the same files for every tool:

- read: a 1,000,000 × 3 points CSV written by ``numpy.savetxt``: gradcli's reader,
  ``numpy.loadtxt``, ``polars.read_csv``
  (skipped with a note when polars is not installed), and the reader of the starting commit
  (the baseline, from ``git archive``). Every tool's values must equal loadtxt's bit for bit.
- write: a 2000² ``grad`` (4M rows × 5 columns) to CSV: gradcli's writer, polars'
  ``write_csv`` on the same columns, and the baseline writer; gradcli's bytes must equal
  the baseline's (the byte contract). Also the whole command, as the issue timed it.
- npz: a one-point ``grad`` of a 3,000-vector from ``-p`` to ``.npz``: files opened (an audit
  hook) and time, now and at the baseline; then 100,000 elements (issue 12.6's goal).
- wide: a points file of 50,000 and 200,000 columns, one named in the expression; the
  baseline is given 60 s (10 s with --quick).

Alone: ``python -m benchmarks.io_speed [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from .measure import ROOT, Row, run_command

PY = sys.executable
BASE_COMMIT = "9a066a4"  # the starting commit of this work: the baseline

# Each tool script: argv = (case args..., repeat); prints {"times": [...], "digest": ...}
_TIMER = """
import hashlib, json, sys, time
def timed(fn, repeat):
    fn()  # warm-up: imports and first-touch pages are not the thing timed
    times, out = [], None
    for _ in range(repeat):
        out = None  # one result alive at a time: the peak is one run's
        t = time.perf_counter(); out = fn(); times.append(time.perf_counter() - t)
    return times, out
def digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        import numpy as np
        h.update(np.ascontiguousarray(a, dtype=np.float64).tobytes())
    return h.hexdigest()
"""

READERS = {
    "gradcli read_points": """
from gradcli.cli.points_file import read_points
f = lambda: read_points(PATH, ["x", "y", "z"], 10**8).variables
times, v = timed(f, REPEAT)
print(json.dumps({"times": times, "digest": digest([v["x"], v["y"], v["z"]])}))
""",
    "numpy.loadtxt": """
import numpy as np
times, a = timed(lambda: np.loadtxt(PATH, delimiter=",", skiprows=1), REPEAT)
print(json.dumps({"times": times, "digest": digest([a[:, 0], a[:, 1], a[:, 2]])}))
""",
    "polars.read_csv": """
import polars as pl
times, df = timed(lambda: pl.read_csv(PATH), REPEAT)
print(json.dumps({"times": times, "digest": digest([df[c].to_numpy() for c in df.columns])}))
""",
    f"baseline reader ({BASE_COMMIT})": """
from gradcli.lang.spec_text import read_points_csv
def f():
    with open(PATH, encoding="utf-8") as fh:
        return read_points_csv(fh.read(), PATH)
times, v = timed(f, REPEAT)
print(json.dumps({"times": times, "digest": digest([v["x"], v["y"], v["z"]])}))
""",
}

_GRID = ('import gradcli\nr = gradcli.evaluate("sin(x)*cos(y)", "grad", grid={"x": (0, '
         '6.283185307179586, N), "y": (0, 6.283185307179586, N)})\n')
WRITERS = {
    "gradcli write_csv": _GRID + """
from gradcli.output.csv_writer import write_csv_path
times, _ = timed(lambda: write_csv_path(PATH, r), REPEAT)
print(json.dumps({"times": times, "digest": hashlib.sha256(open(PATH, "rb").read()).hexdigest()}))
""",
    "polars write_csv": _GRID + """
import numpy as np, polars as pl
df = pl.DataFrame({k: np.broadcast_to(v, (N, N)).reshape(-1) for k, v in r.items()})
times, _ = timed(lambda: df.write_csv(PATH), REPEAT)
print(json.dumps({"times": times, "digest": ""}))
""",
    f"baseline writer ({BASE_COMMIT})": _GRID + """
from gradcli.output.csv_writer import write_csv_path
times, _ = timed(lambda: write_csv_path(PATH, r), REPEAT)
print(json.dumps({"times": times, "digest": hashlib.sha256(open(PATH, "rb").read()).hexdigest()}))
""",
}

OPENS = """
import json, sys, time
opened = []
sys.addaudithook(lambda event, args: opened.append(args[0])
                 if event == "open" and str(args[0]).startswith(OUTDIR) else None)
from gradcli.cli.main import main
t = time.perf_counter()
code = main(["grad", "log(sum(exp(x)))", "-p", PATH, "-o", OUTDIR + "/v.npz"])
print(json.dumps({"times": [time.perf_counter() - t], "opens": len(opened), "code": code}))
"""


def baseline_tree(tmp: Path) -> Path | None:
    """The starting commit's gradcli package, extracted with ``git archive``."""
    dest = tmp / "baseline"
    dest.mkdir()
    try:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", BASE_COMMIT, "gradcli"],
                                 capture_output=True, check=True, timeout=60).stdout
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return dest


def _script(body: str, **consts: object) -> str:
    head = "".join(f"{k} = {v!r}\n" for k, v in consts.items())
    return _TIMER + head + body


def _in_tree(cmd: list[str], tree: Path | None) -> dict:
    """run_command arguments running ``cmd`` on the package in ``tree`` (None: this one).
    The working directory comes first on ``sys.path``, so it must be the tree itself."""
    if tree is None:
        return {"cmd": cmd}
    return {"cmd": ["env", f"PYTHONPATH={tree}", *cmd], "cwd": tree}


def _tool_row(name: str, code: str, *, pythonpath: Path | None = None,
              timeout: float = 900) -> tuple[Row, dict]:
    r = run_command(**_in_tree([PY, "-c", code], pythonpath), timeout=timeout)
    if r.failure:
        return Row(name, "error", peak_mib=r.peak_mib, note=r.failure), {}
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    return Row(name, "ok", rep["times"], r.peak_mib), rep


def _unavailable(name: str, base: Path | None) -> Row | None:
    """The row of a tool that cannot run here (polars not installed, no baseline tree)."""
    import importlib.util

    if name.startswith("polars") and importlib.util.find_spec("polars") is None:
        return Row(name, "not installed", note="pip install polars to compare")
    if name.startswith("baseline") and base is None:
        return Row(name, "skipped", note="git archive of the baseline failed")
    return None


def make_points(path: Path, rows: int) -> float:
    """A rows × 3 CSV as ``numpy.savetxt`` writes it (``%.18e``, about 25 bytes a value, as
    in issue 26.21's 68 MB file), under the header ``x,y,z``; its size in MiB."""
    import numpy as np

    rng = np.random.default_rng(12)
    np.savetxt(path, rng.standard_normal((rows, 3)), delimiter=",", header="x,y,z",
               comments="")
    return path.stat().st_size / 2**20


def _run_tools(tools: dict[str, str], base: Path | None, repeat: int,
               **consts: object) -> tuple[list[Row], dict[str, str | None]]:
    """A row per tool (the baseline runs once, on its own tree) and each tool's digest."""
    out, digests = [], {}
    for name, body in tools.items():
        missing = _unavailable(name, base)
        if missing is not None:
            out.append(missing)
            continue
        is_base = name.startswith("baseline")
        row, rep = _tool_row(name, _script(body, REPEAT=1 if is_base else repeat, **consts),
                             pythonpath=base if is_base else None)
        digests[name] = rep.get("digest")
        out.append(row)
    return out, digests


def read_rows(tmp: Path, base: Path | None, rows: int, repeat: int) -> tuple[list[Row], float]:
    path = tmp / "points.csv"
    mib = make_points(path, rows)
    out, digests = _run_tools(READERS, base, repeat, PATH=str(path))
    reference = digests.get("numpy.loadtxt")
    for row in out:
        if row.status == "ok" and reference:
            row.correct = digests[row.tool] == reference
            row.note = f"{mib:.0f} MiB file; values {'equal' if row.correct else 'DIFFER from'}" \
                       " loadtxt's bit for bit"
    return out, mib


def write_rows(tmp: Path, base: Path | None, n: int, repeat: int) -> list[Row]:
    path = tmp / "written.csv"
    out, digests = _run_tools(WRITERS, base, repeat, PATH=str(path), N=n)
    path.unlink(missing_ok=True)
    ours = digests.get("gradcli write_csv")
    base_digest = digests.get(f"baseline writer ({BASE_COMMIT})")
    for row in out:
        if row.tool == "gradcli write_csv" and base_digest:
            row.correct = ours == base_digest
            row.note = "same bytes as the baseline" if row.correct else "bytes DIFFER"
    cmd = [PY, "-m", "gradcli", "grad", "sin(x)*cos(y)", "--grid", f"x=0:2pi:{n}", "--grid",
           f"y=0:2pi:{n}", "-o", str(tmp / "cmd.csv")]
    r = run_command(cmd, timeout=900)
    out.append(Row(f"gradcli grad ... {n}² -o out.csv (whole command)",
                   "error" if r.failure else "ok", [r.seconds], r.peak_mib, note=r.failure))
    return out


def npz_rows(tmp: Path, base: Path | None, sizes: list[int]) -> list[Row]:
    out = []
    for n in sizes:
        path = tmp / f"vec{n}.csv"
        path.write_text(",".join(f"x[{i}]" for i in range(n)) + "\n"
                        + ",".join(repr(i / n) for i in range(n)) + "\n")
        trees = [("gradcli", None)] + ([(f"baseline ({BASE_COMMIT})", base)]
                                       if base is not None and n <= 3000 else [])
        for label, tree in trees:
            outdir = tmp / f"out-{label[:8]}-{n}"
            outdir.mkdir()
            row, rep = _tool_row(_npz_name(label, n),
                                 _script(OPENS, PATH=str(path), OUTDIR=str(outdir)),
                                 pythonpath=tree, timeout=300)
            if rep:
                row.note = f"{rep['opens']:,} files opened"
                row.correct = rep["code"] == 0
            out.append(row)
    return out


def wide_rows(tmp: Path, base: Path | None, widths: list[int],
              base_timeout: float = 60) -> list[Row]:
    out = []
    for ncol in widths:
        names = [f"c{j}" for j in range(ncol)]
        names[ncol // 2] = "x"
        path = tmp / f"wide{ncol}.csv"
        path.write_text(",".join(names) + "\n" + "\n".join(
            ",".join(str(r * ncol + j) for j in range(ncol)) for r in range(3)) + "\n")
        trees = [("gradcli", None)] + ([(f"baseline ({BASE_COMMIT})", base)]
                                       if base is not None and ncol == max(widths) else [])
        for label, tree in trees:
            cmd = [PY, "-m", "gradcli", "grad", "x^2", "-p", str(path)]
            r = run_command(**_in_tree(cmd, tree), timeout=base_timeout if tree else 600)
            name = _wide_name(label, ncol)
            if r.failure:
                out.append(Row(name, "error", [r.seconds] if r.killed else [], r.peak_mib,
                               note=r.failure))
                continue
            header = r.stdout.split("\n", 1)[0].split(",")
            ok = len(header) == ncol + 2 and header[-3:] == ["x", "f", "df/dx"]
            out.append(Row(name, "ok", [r.seconds], r.peak_mib, correct=ok))
    return out


TITLES = {
    "read": "Points file to arrays (fresh process, median)",
    "write": "2000² grad to CSV: the writers on the same columns (fresh process, median)",
    "npz": "One-point grad of a long vector from -p to .npz (fresh process, one run)",
    "wide": "Wide points files: one column of many named in the expression (one run)",
}


def _sizes(quick: bool) -> dict[str, int | list[int]]:
    return {"rows": 100_000 if quick else 1_000_000, "grid": 400 if quick else 2000,
            "vectors": [300, 3000] if quick else [3000, 100_000],
            "widths": [5_000, 20_000] if quick else [50_000, 200_000]}


def _npz_name(label: str, n: int) -> str:
    return f"{label}: grad log(sum(exp(x))), {n:,}-vector -p → .npz"


def _wide_name(label: str, ncol: int) -> str:
    return f"{label}: grad x^2, {ncol:,} columns × 3 rows"


def io_names(quick: bool) -> dict[str, str]:
    """The row names and sizes the goals refer to."""
    z = _sizes(quick)
    vec, (narrow, wide) = z["vectors"][-1], z["widths"]  # type: ignore[index, misc]
    return {"rows": f"{z['rows']:,} × 3", "grid": f"{z['grid']}²", "vector": f"{vec:,}",
            "vector_row": _npz_name("gradcli", vec), "wide": f"{wide:,}",
            "narrow": f"{narrow:,}", "wide_row": _wide_name("gradcli", wide),
            "narrow_row": _wide_name("gradcli", narrow)}


def io_tables(quick: bool, repeat: int) -> tuple[dict[str, list[Row]], dict[str, float]]:
    """Every io table, and facts the goals need (the points file's size)."""
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-io-") as name:
        tmp = Path(name)
        base = baseline_tree(tmp)
        z = _sizes(quick)
        reads, mib = read_rows(tmp, base, z["rows"], repeat)  # type: ignore[arg-type]
        tables = {
            "read": reads,
            "write": write_rows(tmp, base, z["grid"], repeat),  # type: ignore[arg-type]
            "npz": npz_rows(tmp, base, z["vectors"]),  # type: ignore[arg-type]
            "wide": wide_rows(tmp, base, z["widths"], 10 if quick else 60),  # type: ignore[arg-type]
        }
    return tables, {"points_mib": mib}


def main() -> None:
    from . import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tables, facts = io_tables(args.quick, args.repeat)
    for key, rows in tables.items():
        print(report.table(TITLES[key], rows, rows[0].tool, "gradcli"))
    print(report.goals_section(report.io_goals(args.quick, facts["points_mib"]), tables)[0])


if __name__ == "__main__":
    main()
