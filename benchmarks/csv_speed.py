"""CSV writer speed vs ``np.savetxt(fmt='%.17g')`` on 1,000,000 x 4 random float64.

Why: the requirement is >= 3x faster than savetxt in the same run while being
bit-exact (shortest round trip).  Both write to an in-memory buffer so disk
speed does not matter; runs alternate.  ``make bench`` reports it as the "csv"
section; alone:

    .venv/bin/python -m benchmarks.csv_speed [--rows N] [--repeat R]
"""

from __future__ import annotations

import argparse
import io
import time

import numpy as np

from gradcli.output.csv_writer import write_csv

from .measure import Row


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(rows: int, repeat: int) -> tuple[list[float], list[float], bool]:
    """(savetxt times, gradcli times, bit-exact round trip) on ``rows`` x 4 random floats."""
    rng = np.random.default_rng(0)
    arr = rng.random((rows, 4))
    columns = {name: arr[:, j].copy() for j, name in enumerate("abcd")}
    saves, ours = [], []
    for _ in range(repeat):  # interleaved: a burst of load hits both sides alike
        ours.append(_time(lambda: write_csv(io.BytesIO(), columns)))
        saves.append(_time(lambda: np.savetxt(io.BytesIO(), arr, fmt="%.17g", delimiter=",")))
    buf = io.BytesIO()
    write_csv(buf, columns)
    lines = buf.getvalue().decode().splitlines()[1:]
    back = np.array([[float(v) for v in line.split(",")] for line in lines[:100_000]])
    exact = np.array_equal(back.view(np.int64), arr[: len(back)].view(np.int64))
    return saves, ours, exact


def csv_rows(rows: int = 1_000_000, repeat: int = 5) -> list[Row]:
    """The "csv" section of ``make bench``: the two writers on the same columns."""
    saves, ours, exact = measure(rows, repeat)
    return [Row("gradcli CSV writer", times=ours, correct=exact,
                note="re-read values equal bit for bit" if exact else "NOT bit-exact"),
            Row("numpy.savetxt %.17g", times=saves, correct=True)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    saves, ours, exact = measure(args.rows, args.repeat)
    t_save, t_ours = min(saves), min(ours)
    print(f"rows={args.rows} cols=4  savetxt {t_save:.3f}s  gradcli {t_ours:.3f}s  "
          f"ratio {t_save / t_ours:.2f}x  bit-exact(first 100k rows)={exact}")


if __name__ == "__main__":
    main()
