"""Bounds a user can meet, each with a clear message: out of memory, local workers,
pictures, carried text columns."""

from __future__ import annotations

import importlib
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gradcli.cli import messages as errors
from gradcli.cli.main import main
from gradcli.cli.messages import option_words
from gradcli.errors import render_references
from gradcli.evaluation.cluster import local_worker_limit, parse_local
from gradcli.output.cf import MAX_CARRIED
from gradcli.plot.layout import MAX_ARROWS_PER_AXIS, clamp_every
from gradcli.plot.options import MAX_CONTOUR_LEVELS

ROOT = Path(__file__).resolve().parents[2]


def _numpy_memory_error() -> MemoryError:
    try:
        np.empty((10**13,))  # refused by numpy before anything is allocated
    except MemoryError as exc:
        return exc
    pytest.skip("this machine allocates 80 TB")


@pytest.mark.parametrize(("argv", "says", "never"), [
    (["grad", "x", "--grid", "x=0:1:9", "-o", "o.npz"], "lower --memory", "-o out.npz"),
    (["grad", "x", "--grid", "x=0:1:9", "-o", "o.csv"], "-o out.npz", None),
    (["grad", "x", "--grid", "x=0:1:9"], "-o out.npz", None),
    (["plot", "x", "--grid", "x=0:1:9"], "fewer grid points", "-o out.npz"),
    (["flow", "[-x]", "--from", "x=1", "--t", "0:1:9"], "--every K", "-o out.npz"),
    (["critical", "x^2", "--grid", "x=0:1:9"], "fewer seeds", "-o out.npz"),
])
def test_out_of_memory_says_what_needed_it_and_what_would_reduce_it(capsys, argv, says,
                                                                     never):
    errors.COMMAND_LINE[:] = argv
    status = errors.report(_numpy_memory_error())
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1
    assert err.startswith("gradcli: error: out of memory (72.8 TiB for an array of shape "
                          "(10000000000000,)): ")
    assert says in err
    if never:
        assert never not in err


def test_out_of_memory_in_a_real_run_is_one_line(tmp_path):
    """Under an address-space limit, a grid too large for it ends with the message (and no
    file), not a traceback."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    out = tmp_path / "o.npz"
    done = subprocess.run([sys.executable, "-m", "gradcli", "grad", "x", "--grid",
                           "x=0:1:300000000", "--max-points", "1e9", "-o", str(out)],
                          capture_output=True, text=True, preexec_fn=limit, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("gradcli: error: out of memory (2.24 GiB for an array of "
                                  "shape (300000000,))")
    assert "-o out.npz" not in done.stderr and done.stderr.count("\n") == 1
    assert not out.exists()


def test_local_workers_are_bounded_by_the_machine(capsys):
    most, why = local_worker_limit()
    assert 1 <= most <= max(2, len(os.sched_getaffinity(0)))
    assert parse_local(f"local:{most}") == most
    status = main(["grad", "x", "--at", "x=1", "--scheduler", f"local:{most + 1}"])
    err = capsys.readouterr().err
    assert status == 2
    assert err == (f"gradcli: error: scheduler 'local:{most + 1}': this machine can run at "
                   f"most {most} local worker{'s' if most != 1 else ''} ({why}); use "
                   f"local:{most} or fewer, or a scheduler's address\n")


def test_arrows_are_capped_per_axis_with_a_note():
    every, note = clamp_every(1, (1000, 1000))
    assert every == 1000 // MAX_ARROWS_PER_AXIS == 10
    assert render_references(note, option_words) == (  # as the command line prints it
        "--every 1 would draw 1,000,000 arrows: using --every 10 (at most 100 per axis)")
    assert clamp_every(10, (1000, 1000)) == (10, None)


def test_contour_levels_are_capped_with_a_note(capsys, tmp_path):
    status = main(["plot", "x*y", "--grid", "x=0:1:40", "--grid", "y=0:1:40", "--contour",
                   "100000", "-o", str(tmp_path / "c.png")])
    err = capsys.readouterr().err
    assert status == 0
    assert (f"note: --contour 100,000: drawing {MAX_CONTOUR_LEVELS} levels, the most a "
            "picture shows (closer lines run together)") in err


def test_a_picture_larger_than_the_budget_is_refused_before_computing(capsys, monkeypatch,
                                                                        tmp_path):
    monkeypatch.setenv("GRADCLI_MEMORY", "64M")
    status = main(["plot", "x*y", "--grid", "x=0:1:1000", "--grid", "y=0:1:1000", "-o",
                   str(tmp_path / "p.png")])
    err = capsys.readouterr().err
    assert status == 2 and not (tmp_path / "p.png").exists()
    assert err == ("gradcli: error: a picture of 1,000,000 grid points needs about 122 MiB, "
                   "over the memory budget of 64 MiB (GRADCLI_MEMORY): at most 524,288 points "
                   "(about 724 per axis on a plane); use a coarser --grid\n")


def _wide(path: Path, carried: int) -> Path:
    header = ",".join(["x", *(f"c{i}" for i in range(carried))])
    rows = "\n".join(",".join([str(r), *(["a"] * carried)]) for r in range(2))
    path.write_text(header + "\n" + rows + "\n")
    return path


@pytest.mark.parametrize("suffix", ["nc", "zarr"])
def test_carried_text_columns_of_a_dataset_are_bounded(capsys, tmp_path, suffix):
    """A .nc or .zarr dataset holds at most MAX_CARRIED carried columns (each a variable of
    its own); CSV carries any number, its size following the input's."""
    importlib.import_module("xarray")
    ok = _wide(tmp_path / "ok.csv", MAX_CARRIED)
    assert main(["grad", "x^2", "-p", str(ok), "-o", str(tmp_path / f"ok.{suffix}")]) == 0
    capsys.readouterr()
    wide = _wide(tmp_path / "wide.csv", 20_000)
    status = main(["grad", "x^2", "-p", str(wide), "-o", str(tmp_path / f"w.{suffix}")])
    err = capsys.readouterr().err
    assert status == 2 and not (tmp_path / f"w.{suffix}").exists()
    assert err == ("gradcli: error: 20,000 carried text columns: a .nc or .zarr dataset holds "
                   "at most 256 (each is a variable of its own); write CSV, JSON or .npz, or "
                   "drop the columns you do not need from the points file\n")
    assert main(["grad", "x^2", "-p", str(wide), "-o", str(tmp_path / "w.csv")]) == 0


@pytest.mark.parametrize("suffix", ["nc", "zarr"])
def test_too_many_carried_columns_are_refused_from_the_header(capsys, tmp_path, suffix):
    """The bound is checked when the header is read, before any row: a file whose second
    line is not even a number (which reading the rows would report) gets the columns'
    message, and a large one gets it at once."""
    header = ",".join(["x", *(f"c{i}" for i in range(20_000))])
    bad = tmp_path / "bad.csv"
    bad.write_text(header + "\n" + ",".join(["oops", *(["a"] * 20_000)]) + "\n")
    assert main(["grad", "x^2", "-p", str(bad), "-o", str(tmp_path / f"w.{suffix}")]) == 2
    assert capsys.readouterr().err.startswith("gradcli: error: 20,000 carried text columns:")
    big = tmp_path / "big.csv"  # 20,000 text columns x 2,000 rows: 80 MB of cells
    row = ",".join(["1", *(["a"] * 20_000)]) + "\n"
    with big.open("w") as fh:
        fh.write(header + "\n")
        fh.writelines(row for _ in range(2_000))
    started = time.monotonic()
    assert main(["grad", "x^2", "-p", str(big), "-o", str(tmp_path / f"b.{suffix}")]) == 2
    took = time.monotonic() - started
    assert capsys.readouterr().err.startswith("gradcli: error: 20,000 carried text columns:")
    assert took < 5  # reading the rows took 10 s and more: the header alone is a few ms


def test_the_limits_page_lists_every_bound_from_the_code():
    """docs/reference/limits.md's table is what the constants that enforce the bounds say."""
    from gradcli.cli.limits import limits_table

    page = (ROOT / "docs" / "reference" / "limits.md").read_text(encoding="utf-8")
    table = page.split("<!-- limits:begin -->")[1].split("<!-- limits:end -->")[0]
    assert table.strip() == limits_table().strip()
