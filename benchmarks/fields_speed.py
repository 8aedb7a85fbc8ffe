"""Where the field leads (issue 16): the "fields" section of ``make bench``.

Every row is a fresh process under the launcher; each tool runs once untimed (imports,
torch's first-call set-up), then ``repeat`` times timed, and prints its final iterate(s),
which must agree between the tools (every tool computes the same float64 iterates; they
agree to rounding, see tests/fields/test_fields_descend_torch.py):

- adam: 10,000 Adam steps (lr 1e-3) on Rosenbrock from (-1.2, 1). gradcli's time includes
  parsing, compiling and tracing the formula (``FieldFunction`` + ``descend``); torch's is
  the usual loop (zero_grad, f(x, y).backward(), step) on two 0-d float64 parameters.
- grid: Adam (lr 1e-3) from a 100 × 100 lattice of starts over [-2, 2] × [-1, 3], 1,000
  steps, as one vectorised computation: gradcli's ``descend`` (every=1000) against the
  same loop in torch with the starts as (N,) parameters x and y (f(x, y).sum() backward),
  and with one (N, 2) parameter.
- critical: ``gradcli critical`` on Himmelblau's function with 50 × 50 seeds, the whole
  command in a fresh process (start-up included), against an absolute 0.5 s.

Alone: ``python -m benchmarks.fields_speed [--quick]``. The torch rows run in the same
interpreter unless ``GRADCLI_PEERS_PYTHON`` names another (a venv with torch, such as the
peers' venv when the bench venv has none).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .cold import gradcli_cmd
from .measure import Row, repeat_command, run_command

PY = sys.executable
PEERS = os.environ.get("GRADCLI_PEERS_PYTHON") or PY
ROSENBROCK = "(1-x)^2 + 100(y-x^2)^2"
HIMMELBLAU = "(x^2+y-11)^2 + (x+y^2-7)^2"

_TIMER = """
import json, sys, time
def timed(fn, repeat):
    fn()
    times, out = [], None
    for _ in range(repeat):
        out = None
        t = time.perf_counter(); out = fn(); times.append(time.perf_counter() - t)
    return times, out
"""

TOOLS = {
    "adam": {
        "gradcli descend": """
import numpy as np
from gradcli.fields.descend import descend
from gradcli.fields.function import FieldFunction
from gradcli.fields.optim import settings
def run():
    fn = FieldFunction(EXPR, {"x": -1.2, "y": 1.0})
    return descend(fn, np.array([[-1.2, 1.0]]), settings("adam", lr=1e-3), steps=STEPS,
                   every=STEPS).X[-1:].tolist()
times, out = timed(run, REPEAT)
print(json.dumps({"times": times, "result": out}))
""",
        "torch (loop)": """
import torch
torch.set_num_threads(2)
def run():
    x = torch.tensor(-1.2, dtype=torch.float64, requires_grad=True)
    y = torch.tensor(1.0, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([x, y], lr=1e-3)
    for _ in range(STEPS):
        opt.zero_grad()
        ((1 - x) ** 2 + 100 * (y - x ** 2) ** 2).backward()
        opt.step()
    return [[x.item(), y.item()]]
times, out = timed(run, REPEAT)
print(json.dumps({"times": times, "result": out}))
""",
    },
    "grid": {
        "gradcli descend": """
import numpy as np
from gradcli.fields.descend import descend
from gradcli.fields.function import FieldFunction
from gradcli.fields.optim import settings
from gradcli.fields.starts import from_lattice
def run():
    starts = from_lattice({"x": (-2.0, 2.0, SIDE), "y": (-1.0, 3.0, SIDE)}, 10**9)
    fn = FieldFunction(EXPR, starts.variables)
    path = descend(fn, starts.X, settings("adam", lr=1e-3), steps=STEPS, every=STEPS)
    return path.ends()
times, out = timed(run, REPEAT)
print(json.dumps({"times": times, "result": out[::997].tolist()}))
""",
        "torch (x, y of shape (N,))": """
import torch
torch.set_num_threads(2)
def run():
    g = torch.linspace(-2, 2, SIDE, dtype=torch.float64)
    h = torch.linspace(-1, 3, SIDE, dtype=torch.float64)
    X, Y = torch.meshgrid(g, h, indexing="ij")
    x = X.reshape(-1).clone().requires_grad_()
    y = Y.reshape(-1).clone().requires_grad_()
    opt = torch.optim.Adam([x, y], lr=1e-3)
    for _ in range(STEPS):
        opt.zero_grad()
        ((1 - x) ** 2 + 100 * (y - x ** 2) ** 2).sum().backward()
        opt.step()
    return torch.stack([x, y], 1).detach()
times, out = timed(run, REPEAT)
print(json.dumps({"times": times, "result": out[::997].tolist()}))
""",
        "torch (one (N, 2) parameter)": """
import torch
torch.set_num_threads(2)
def run():
    g = torch.linspace(-2, 2, SIDE, dtype=torch.float64)
    h = torch.linspace(-1, 3, SIDE, dtype=torch.float64)
    p = torch.stack(torch.meshgrid(g, h, indexing="ij"), -1).reshape(-1, 2).clone()
    p.requires_grad_()
    opt = torch.optim.Adam([p], lr=1e-3)
    for _ in range(STEPS):
        opt.zero_grad()
        x, y = p[:, 0], p[:, 1]
        ((1 - x) ** 2 + 100 * (y - x ** 2) ** 2).sum().backward()
        opt.step()
    return p.detach()
times, out = timed(run, REPEAT)
print(json.dumps({"times": times, "result": out[::997].tolist()}))
""",
    },
}

TITLES = {
    "adam": "Adam on Rosenbrock from one start (fresh process per tool)",
    "grid": "Adam from a lattice of starts as one vectorised computation",
    "critical": "gradcli critical on Himmelblau's function, 50 × 50 seeds (fresh process, "
                "start-up included)",
}


def sizes(quick: bool) -> dict[str, int]:
    return {"steps": 1000 if quick else 10_000, "side": 30 if quick else 100,
            "grid_steps": 100 if quick else 1000, "seeds": 50}


def names(quick: bool) -> dict[str, str]:
    z = sizes(quick)
    return {"adam": f"{z['steps']:,} Adam steps",
            "grid": f"{z['side'] ** 2:,} starts × {z['grid_steps']:,} steps"}


def _row(tool: str, source: str, values: dict[str, object], repeat: int) -> tuple[Row, list]:
    script = _TIMER + "".join(f"{k} = {v!r}\n" for k, v in values.items()) + source
    r = run_command([PY if tool.startswith("gradcli") else PEERS, "-c", script], timeout=1800)
    if r.failure:
        missing = "ModuleNotFoundError" in r.stderr
        return Row(tool, "not installed" if missing else "error", note=r.failure), []
    rep = json.loads(r.stdout.strip().splitlines()[-1])
    return Row(tool, "ok", rep["times"], r.peak_mib), rep["result"]


def _agree(rows: list[Row], results: list[list]) -> None:
    """Mark each row correct when its final iterates equal gradcli's to 1e-9 relative."""
    import numpy as np

    if not results or not results[0]:
        return
    ref = np.array(results[0])
    for row, got in zip(rows, results, strict=True):
        if row.status != "ok" or not got:
            continue
        got = np.array(got)
        rel = float(np.max(np.linalg.norm(got - ref, axis=1) / np.linalg.norm(ref, axis=1)))
        row.rel_err, row.correct = rel, rel <= 1e-9


def fields_tables(quick: bool, repeat: int) -> dict[str, list[Row]]:
    """The three tables of the section."""
    z = sizes(quick)
    tables: dict[str, list[Row]] = {}
    for key, values in (("adam", {"EXPR": ROSENBROCK, "STEPS": z["steps"]}),
                        ("grid", {"EXPR": ROSENBROCK, "STEPS": z["grid_steps"],
                                  "SIDE": z["side"]})):
        rows, results = [], []
        for tool, source in TOOLS[key].items():
            row, result = _row(tool, source, {**values, "REPEAT": repeat}, repeat)
            rows.append(row)
            results.append(result)
        _agree(rows, results)
        tables[key] = rows
    n = z["seeds"]
    cmd = [*gradcli_cmd(), "critical", HIMMELBLAU, "--grid", f"x=-5:5:{n}", "--grid",
           f"y=-5:5:{n}", "-q"]
    runs, failed = repeat_command(cmd, 3 if quick else 11)
    row = Row("gradcli critical", "ok" if not failed else "error",
              [r.seconds for r in runs], max((r.peak_mib for r in runs), default=None),
              note=failed.failure if failed else "")
    if runs:
        lines = runs[-1].stdout.strip().splitlines()
        row.correct = len(lines) == 10 and sorted(ln.rsplit(",", 1)[1] for ln in lines[1:]) \
            == ["maximum"] + ["minimum"] * 4 + ["saddle"] * 4
    tables["critical"] = [row]
    return tables


def main() -> None:
    from . import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    tables = fields_tables(args.quick, args.repeat)
    for key, rows in tables.items():
        print(report.table(TITLES[key], rows, rows[0].tool, "gradcli"))
    print(report.goals_section(report.fields_goals(args.quick), tables)[0])


if __name__ == "__main__":
    main()
