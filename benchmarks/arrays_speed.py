"""The "arrays" section (issue 14): long vectors as whole commands, beside torch.

A one-point ``grad "logsumexp(x)"`` of a 10⁶-vector read from a file (``--at
x=@vec.npy``, and ``@vec.csv`` of ``repr`` text) to ``.npz``, each a fresh process, as a
user runs it; torch does the same work in a fresh process (load the .npy, logsumexp,
backward, ``numpy.savez``). Every result is checked against softmax(x) computed by numpy
(max relative error). Also runnable alone: ``python -m benchmarks.arrays_speed``.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import tempfile
from pathlib import Path

from .measure import Row, repeat_command

PY = sys.executable
TITLES = {"arrays": "One-point grad of logsumexp(x), a long vector from a file to .npz "
                    "(fresh process, median)"}

TORCH = """
import sys, numpy as np, torch
torch.set_num_threads(2)
x = torch.from_numpy(np.load(sys.argv[1])).requires_grad_()
f = torch.logsumexp(x, 0)
f.backward()
np.savez(sys.argv[2], x=x.detach().numpy()[None], f=f.detach().numpy()[None],
         **{"df/dx": x.grad.numpy()[None]})
"""


def _size(quick: bool) -> int:
    return 10**5 if quick else 10**6


def row_name(tool: str, quick: bool) -> str:
    """The table's row for ``tool`` (the goals refer to it by name)."""
    return f"{tool}: {_size(quick):,}-vector"


def _check(path: Path, x: object) -> tuple[bool, float]:
    import numpy as np

    got = np.load(path)["df/dx"][0]
    s = np.exp(x - x.max())  # type: ignore[operator]
    truth = s / s.sum()
    err = float(np.max(np.abs(got - truth)) / np.max(truth))
    return err < 1e-12, err


def _row(name: str, cmd: list[str], runs: int, out: Path, x: object) -> Row:
    done, failed = repeat_command(cmd, runs, timeout=300)
    if failed is not None:
        return Row(name, "error", peak_mib=failed.peak_mib, note=failed.failure)
    ok, err = _check(out, x)
    return Row(name, "ok", [r.seconds for r in done], max(r.peak_mib for r in done),
               correct=ok, rel_err=err)


def arrays_tables(quick: bool, runs: int) -> dict[str, list[Row]]:
    """The arrays table: gradcli from .npy and .csv, torch from .npy."""
    import numpy as np

    n = _size(quick)
    rows = []
    with tempfile.TemporaryDirectory(prefix="gradcli-bench-arrays-") as name:
        tmp = Path(name)
        x = np.random.default_rng(14).standard_normal(n) * 30.0
        np.save(tmp / "vec.npy", x)
        (tmp / "vec.csv").write_text("\n".join(map(repr, x.tolist())) + "\n")
        for ext in ("npy", "csv"):
            out = tmp / f"{ext}.npz"
            cmd = [PY, "-m", "gradcli", "grad", "logsumexp(x)", "--at",
                   f"x=@{tmp / f'vec.{ext}'}", "-o", str(out)]
            rows.append(_row(row_name(f"gradcli --at x=@vec.{ext}", quick), cmd, runs, out, x))
        name_torch = row_name("torch (load .npy, logsumexp, backward, savez)", quick)
        if importlib.util.find_spec("torch") is None:
            rows.append(Row(name_torch, "not installed"))
        else:
            out = tmp / "torch.npz"
            rows.append(_row(name_torch, [PY, "-c", TORCH, str(tmp / "vec.npy"), str(out)],
                             runs, out, x))
    return {"arrays": rows}


def main() -> None:
    from . import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    tables = arrays_tables(args.quick, args.runs)
    print(report.table(TITLES["arrays"], tables["arrays"], tables["arrays"][0].tool,
                       "gradcli"))
    print(report.goals_section(report.arrays_goals(args.quick), tables)[0])


if __name__ == "__main__":
    main()
