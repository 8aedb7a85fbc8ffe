"""The memory budget: sizes as text, blocks sized from it, and peak memory measured.

The peak-memory tests run each measure in a fresh wrapper process whose only child is the
measured run, and read ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`` there (the
largest resident set of the waited-for children, in KiB on Linux): every run stays under
its budget plus ``budget.FIXED_OVERHEAD``, on 1, 2 and 8 threads. Before the budget, the
long expression took 3.4 GB on 8 threads (60 ops × 2^18 points × 8 bytes × 2 × 8 threads
at least), the 5,000-vector Hessian about 3 GB and the 10⁹-time flow 7.8 GB.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gradcli
from gradcli.errors import EvaluationError
from gradcli.evaluation import prepare
from gradcli.plan.kernels import rows_per_block
from gradcli.request.budget import (
    DEFAULT_MEMORY,
    FIXED_OVERHEAD,
    memory_budget,
    parse_size,
)

ROOT = Path(__file__).resolve().parents[2]
LONG = "*".join(["sin(x)"] * 60)


@pytest.mark.parametrize(("text", "value"), [("2G", 2 << 30), ("512M", 512 << 20),
                                             ("1.5GiB", 3 << 29), ("64mb", 64 << 20),
                                             ("1048576", 1 << 20), (1 << 24, 1 << 24)])
def test_sizes_read_as_powers_of_1024(text, value):
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["2X", "G", "-1G", "1e9", "", "100K"])
def test_sizes_that_are_not_sizes_or_too_small_are_refused(text):
    with pytest.raises(EvaluationError, match="memory"):
        parse_size(text)


def test_the_budget_is_the_argument_else_the_environment_else_1_gib(monkeypatch):
    monkeypatch.delenv("GRADCLI_MEMORY", raising=False)
    assert memory_budget() == DEFAULT_MEMORY == 1 << 30
    monkeypatch.setenv("GRADCLI_MEMORY", "300M")
    assert memory_budget() == 300 << 20
    assert memory_budget("2G") == 2 << 30
    monkeypatch.setenv("GRADCLI_MEMORY", "lots")
    with pytest.raises(EvaluationError, match="GRADCLI_MEMORY 'lots'"):
        memory_budget()


def test_blocks_shrink_with_the_budget_the_threads_and_the_expression():
    """Rows per block follow budget / (threads × measured cost per row): halving the budget
    or doubling the threads halves them (to rounding), a longer expression makes them fewer,
    and a cheap expression keeps the cache-sized cap of 2^18 points."""
    grid = {"x": (0.0, 1.0, 1_000_000)}
    long = prepare(LONG, "grad", grid=grid)
    rows = {(m, t): rows_per_block(long.plan, long.binding, m << 20, t)
            for m, t in ((64, 1), (32, 1), (64, 2))}
    assert 0.4 < rows[32, 1] / rows[64, 1] < 0.6
    assert 0.4 < rows[64, 2] / rows[64, 1] < 0.6
    # 60 products: at least 60 arrays of 8 bytes per point are recorded, and each row costs
    # that on each thread
    assert rows[64, 1] * 60 * 8 < 64 << 20
    short = prepare("sin(x)", "grad", grid=grid)
    assert rows_per_block(short.plan, short.binding, 64 << 20, 1) > rows[64, 1] * 3
    assert rows_per_block(short.plan, short.binding, 1 << 30, 1) == 1 << 18


def test_results_do_not_depend_on_the_budget():
    grid = {"x": (0.0, 1.0, 20_001)}
    small = gradcli.evaluate(LONG, "grad", grid=grid, memory="1M", threads=2)
    large = gradcli.evaluate(LONG, "grad", grid=grid, memory="4G", threads=2)
    x = np.linspace(0, 1, 20_001)
    assert np.array_equal(small["df/dx"], large["df/dx"])
    assert np.allclose(small["f"], np.sin(x) ** 60, rtol=1e-13, atol=0)


def test_a_bad_memory_option_is_one_line_and_exit_2(capsys):
    from gradcli.cli.main import main

    status = main(["grad", "x^2", "--at", "x=1", "--memory", "2X"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    assert err == ("gradcli: error: memory '2X': expected a size such as 512M or 2G (bytes, "
                   "or K, M, G, T: powers of 1024)\n")


# --- peak memory, measured in child processes -------------------------------------------

_WRAPPER = textwrap.dedent("""
    import resource, subprocess, sys
    done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(peak, done.returncode, done.stderr.decode()[-300:].replace(chr(10), ' '))
""")


def peak_of(*argv: str) -> int:
    """The peak resident memory, in bytes, of one fresh child running ``argv``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GRADCLI_MEMORY", None)
    out = subprocess.run([sys.executable, "-c", _WRAPPER, *argv], capture_output=True,
                         text=True, env=env, timeout=300, check=True).stdout
    peak, status, err = out.split(" ", 2)
    assert status == "0", err
    return int(peak)


_LIBRARY = textwrap.dedent("""
    import sys, gradcli
    expression, threads, memory = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    r = gradcli.evaluate(expression, "grad", grid={"x": (0.0, 1.0, 1_000_000)},
                         threads=threads, memory=memory)
    assert r["df/dx"].shape == (1_000_000,)
""")


@pytest.mark.parametrize("threads", [1, 2, 8])
def test_a_long_expression_on_a_million_points_stays_within_the_budget(threads):
    budget = 64 << 20
    peak = peak_of(sys.executable, "-c", _LIBRARY, LONG, str(threads), "64M")
    assert peak < budget + FIXED_OVERHEAD


def test_the_hessian_of_a_long_vector_stays_within_the_budget(tmp_path):
    """The 5,000-vector Hessian is 200 MB: written to .npz it is streamed by rows and peaks
    under a 32 MiB budget + the fixed overhead (it took 15× its output before)."""
    np.save(tmp_path / "v.npy", np.linspace(-1, 1, 5000))
    out = tmp_path / "h.npz"
    peak = peak_of(sys.executable, "-m", "gradcli", "hessian", "sum(x^2)", "--at",
                   f"x=@{tmp_path / 'v.npy'}", "-o", str(out), "--memory", "32M")
    assert peak < (32 << 20) + FIXED_OVERHEAD
    with np.load(out) as got:
        h = got["d2f/dxdx"]
        assert h.shape == (1, 5000, 5000)
        assert np.count_nonzero(h) == 5000 and np.all(np.diagonal(h[0]) == 2.0)


def test_a_flow_over_a_billion_times_stays_within_the_budget(tmp_path):
    out = tmp_path / "f.csv"
    peak = peak_of(sys.executable, "-m", "gradcli", "flow", "[1 + 0*x]", "--from", "x=0",
                   "--t", "0:1e3:1e9", "--box", "x=-1:0.001", "--every", "100000000",
                   "-o", str(out))
    assert peak < (64 << 20) + FIXED_OVERHEAD
    assert out.read_text().splitlines()[0] == "t,x,|F|"
    assert len(out.read_text().splitlines()) == 3


def test_a_zarr_store_is_chunked_by_the_budgets_blocks(tmp_path):
    """A .zarr output's chunks are the blocks' rows, so they follow the budget too (they
    were always 2^18 points, whatever the expression)."""
    zarr = importlib.import_module("zarr")
    from gradcli.cli.main import main

    out = tmp_path / "z.zarr"
    assert main(["grad", LONG, "--grid", "x=0:1:300000", "--memory", "4M", "-q",
                 "-o", str(out)]) == 0
    store = zarr.open(str(out), mode="r")
    x = np.linspace(0, 1, 300_000)
    assert store["df_dx"].chunks[0] < 300_000 // 4
    assert np.allclose(store["f"][:], np.sin(x) ** 60, rtol=1e-13, atol=0)


def test_a_hessian_streamed_by_rows_has_every_block_right(tmp_path):
    """f = y·Σx² + y³·x[2] at one point, x a 300-vector: by rows (a 1 MiB budget) and whole,
    the blocks are the hand-derived 2y·I, 2x + 3y²·e₂ (both mixed blocks) and 6y·x[2]."""
    from gradcli.cli.main import main

    x = np.linspace(-1, 1, 300)
    y = 1.5
    np.save(tmp_path / "x.npy", x)
    f = "sum(x^2)*y + y^3*x[2]"
    for memory, name in (("1M", "rows.npz"), ("1G", "whole.npz")):
        assert main(["hessian", f, "--at", f"x=@{tmp_path / 'x.npy'},y={y}", "--memory",
                     memory, "-q", "-o", str(tmp_path / name)]) == 0
    rows, whole = np.load(tmp_path / "rows.npz"), np.load(tmp_path / "whole.npz")
    mixed = 2 * x
    mixed[2] += 3 * y**2
    assert np.array_equal(rows["d2f/dxdx"][0], 2 * y * np.eye(300))
    assert np.allclose(rows["d2f/dxdy"][0], mixed, rtol=1e-15, atol=0)
    assert np.allclose(rows["d2f/dydx"][0], mixed, rtol=1e-15, atol=0)
    assert np.isclose(rows["d2f/dydy"][0], 6 * y * x[2], rtol=1e-15, atol=0)
    assert np.isclose(rows["f"][0], y * np.sum(x**2) + y**3 * x[2], rtol=1e-15, atol=0)
    for key in whole.files:
        assert np.array_equal(rows[key], whole[key]), key


def test_dask_tasks_are_sized_from_the_budget_too(tmp_path):
    """With --scheduler, each task's block fits the budget on its worker, and a Zarr
    store's chunks follow (they were 2^18 points whatever the expression)."""
    zarr = importlib.import_module("zarr")
    importlib.import_module("distributed")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "d.zarr"
    subprocess.run([sys.executable, "-m", "gradcli", "grad", LONG, "--grid", "x=0:1:300000",
                    "--scheduler", "local:2", "--memory", "4M", "-q", "-o", str(out)],
                   env=env, check=True, timeout=300)
    store = zarr.open(str(out), mode="r")
    x = np.linspace(0, 1, 300_000)
    assert store["df_dx"].chunks[0] < 300_000 // 4
    assert np.allclose(store["f"][:], np.sin(x) ** 60, rtol=1e-13, atol=0)


def test_probes_that_show_no_growth_give_an_upper_bound_not_the_cap(monkeypatch):
    """tracemalloc counts every thread's allocations, so a Dask client's event loop can
    inflate the smaller probe of a pair: the pair then shows no growth and, before, the
    block grew to the 2^18-point cap whatever the budget (seen as a Zarr store chunked at
    262,144 rows under --memory 4M). Probes that all peak at 10 MB (no growth at all)
    now give 10 MB / 256 points per point: 4 MiB holds about a hundred rows."""
    from gradcli.plan import kernels

    monkeypatch.setattr(kernels, "peak_bytes", lambda plan, values: 10_000_000)
    grid = {"x": (0.0, 1.0, 1_000_000)}
    long = prepare(LONG, "grad", grid=grid)
    rows = rows_per_block(long.plan, long.binding, 4 << 20, 1)
    per_point = 10_000_000 / 256
    assert rows == int((4 << 20) // (per_point + 16))  # 16: f and df/dx kept per row
