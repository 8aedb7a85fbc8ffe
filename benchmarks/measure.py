"""Fresh-process measurements through ``launch.py``: wall time, peak RSS, output.

This module imports nothing heavy (no numpy): the harness process stays small, although
the launcher already shields children from its size.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LAUNCH = HERE / "launch.py"


@dataclass
class Run:
    rc: int
    seconds: float
    peak_mib: float
    stdout: str
    stderr: str
    killed: str | None = None

    @property
    def failure(self) -> str:
        """'' if the command succeeded, else a one-line reason."""
        if self.killed:
            return f"killed: {self.killed}"
        if self.rc != 0:
            last = (self.stderr.strip().splitlines() or ["(no stderr)"])[-1]
            return f"exit {self.rc}: {last[:160]}"
        return ""


@dataclass
class Row:
    """One line of a results table."""

    tool: str
    status: str = "ok"           # ok | not installed | error | skipped
    times: list[float] = field(default_factory=list)
    peak_mib: float | None = None
    import_mib: float | None = None
    correct: bool | None = None
    rel_err: float | None = None
    note: str = ""

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None


def child_env() -> dict[str, str]:
    """The environment every measured process gets: ours, plus CPU-only JAX and the repo
    on the path. OPENBLAS_* are passed through untouched."""
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def run_command(cmd: list[str], *, timeout: float = 600.0, rss_limit_mib: float = 0.0,
                cwd: Path = ROOT) -> Run:
    """Run ``cmd`` once in a fresh process under the launcher."""
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-") as tmp:
        report = os.path.join(tmp, "report.json")
        launcher = [sys.executable, "-S", str(LAUNCH), report, str(timeout),
                    str(rss_limit_mib), "--", *cmd]
        subprocess.run(launcher, env=child_env(), cwd=cwd, stdin=subprocess.DEVNULL,
                       check=False)
        try:
            with open(report) as fh:
                info = json.load(fh)
        except (OSError, ValueError):
            return Run(-1, 0.0, 0.0, "", "the launcher failed", "launcher failed")
        out = Path(report + ".out").read_text(errors="replace")
        err = Path(report + ".err").read_text(errors="replace")
    return Run(info["rc"], info["seconds"], info["peak_kib"] / 1024, out, err, info["killed"])


def repeat_command(cmd: list[str], runs: int, **kw) -> tuple[list[Run], Run | None]:
    """``runs`` fresh runs; stops at the first failure, which is returned second."""
    done = []
    for _ in range(runs):
        r = run_command(cmd, **kw)
        if r.failure:
            return done, r
        done.append(r)
    return done, None


def run_worker(case_key: str, tool: str, *, quick: bool, warmup: int, repeat: int,
               timeout: float = 1800.0, suite: str = "") -> Row:
    """Time one tool on one workload case in a fresh ``benchmarks.worker`` process
    (``suite``: the module whose cases these are, when not ``workloads``)."""
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-") as tmp:
        out = os.path.join(tmp, "worker.json")
        spec = json.dumps({"case": case_key, "tool": tool, "quick": quick,
                           "warmup": warmup, "repeat": repeat, "suite": suite})
        r = run_command([sys.executable, "-m", "benchmarks.worker", spec, out],
                        timeout=timeout)
        try:
            with open(out) as fh:
                rep = json.load(fh)
        except (OSError, ValueError):
            return Row(tool, "error", note=r.failure or "worker wrote no report",
                       peak_mib=r.peak_mib)
    if rep["status"] != "ok":
        return Row(tool, rep["status"], note=rep.get("note", ""))
    return Row(tool, "ok", rep["times"], rep["peak_kib"] / 1024, rep["import_kib"] / 1024,
               rep["correct"], rep["rel_err"], rep.get("note", ""))
