"""Gridded data and clusters through the command line: -o .nc/.zarr/.parquet and
--scheduler.

In process through ``main(argv)``; files are read back with xarray, pandas and polars.
"""

from __future__ import annotations

import hashlib
import os
import sys

import numpy as np
import pandas as pd
import polars as pl
import xarray as xr

import gradcli


def bits(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


GRID = ["--grid", "x=0:1:40", "--grid", "y=-1:1:30", "--grid", "z=0.5"]
EXPR = "sin(x)*cos(y)*z"


def test_every_format_from_the_command_line(cli, tmp_path):
    ref = gradcli.evaluate(EXPR, "grad", grid={"x": (0, 1, 40), "y": (-1, 1, 30), "z": 0.5})
    paths = {}
    for ext in ("nc", "zarr", "parquet"):
        paths[ext] = str(tmp_path / f"g.{ext}")
        status, out, err = cli("grad", EXPR, *GRID, "-o", paths[ext])
        assert (status, out, err) == (0, "", "")
    history = (f"gradcli grad '{EXPR}' --grid x=0:1:40 --grid y=-1:1:30 --grid z=0.5 "
               f"--output {tmp_path}/g.")
    nc = xr.open_dataset(paths["nc"], engine="h5netcdf").load()
    zarr = xr.open_zarr(paths["zarr"], chunks=None).load()
    for ds, ext in ((nc, "nc"), (zarr, "zarr")):
        assert ds.attrs["history"] == history + ext
        assert ds.attrs["title"] == EXPR and ds.attrs["Conventions"] == "CF-1.11"
        assert float(ds["z"]) == 0.5 and ds["df_dx"].dims == ("x", "y")
        assert np.array_equal(bits(ds["df_dx"].values), bits(ref["df/dx"]))
        expect = gradcli.to_xarray(ref, history=history + ext)
        assert ds.identical(expect)
    X, Y = np.meshgrid(np.linspace(0, 1, 40), np.linspace(-1, 1, 30), indexing="ij")
    assert np.allclose(nc["df_dy"].values, -np.sin(X) * np.sin(Y) * 0.5, rtol=0, atol=1e-16)
    for frame in (pd.read_parquet(paths["parquet"]), pl.read_parquet(paths["parquet"])):
        assert list(frame.columns) == ["x", "y", "z", "f", "df/dx", "df/dy", "df/dz"]
        assert np.array_equal(bits(np.asarray(frame["df/dx"])),
                              bits(np.broadcast_to(ref["df/dx"], (40, 30)).ravel()))
    assert sorted(os.listdir(tmp_path)) == ["g.nc", "g.parquet", "g.zarr"]


def test_same_command_same_nc_bytes(cli, tmp_path):
    digests = set()
    for _ in range(2):
        assert cli("hessian", "x^2*y + exp(x)", *GRID[:4], "-o",
                   str(tmp_path / "h.nc"))[0] == 0
        digests.add(hashlib.sha256((tmp_path / "h.nc").read_bytes()).hexdigest())
    assert len(digests) == 1


def test_points_file_with_text_to_nc_and_parquet(cli, tmp_path):
    src = tmp_path / "runs.csv"
    src.write_text('id,x,label,y\n007,1.5,"Smith, J.",2\na-12,-2,other,0.5\n')
    for ext in ("nc", "parquet"):
        status, _, err = cli("grad", "x*y", "-p", str(src), "-o",
                             str(tmp_path / f"r.{ext}"))
        assert status == 0, err
    ds = xr.open_dataset(tmp_path / "r.nc", engine="h5netcdf")
    assert [str(v) for v in ds["label"].values] == ["Smith, J.", "other"]
    assert [str(v) for v in ds["id"].values] == ["007", "a-12"]
    assert list(ds["df_dx"].values) == [2.0, 0.5] and ds["df_dx"].dims == ("point",)
    frame = pl.read_parquet(tmp_path / "r.parquet")
    assert frame.columns == ["id", "label", "x", "y", "f", "df/dx", "df/dy"]
    assert frame["id"].to_list() == ["007", "a-12"]
    assert frame["df/dy"].to_list() == [1.5, -2.0]


def test_missing_extra_exits_2_naming_it_before_evaluating(cli, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "h5netcdf", None)  # `import h5netcdf` now fails
    evaluated = []
    monkeypatch.setattr(gradcli.evaluation.Prepared, "run",
                        lambda *a, **k: evaluated.append(1))
    status, out, err = cli("grad", EXPR, *GRID, "-o", str(tmp_path / "g.nc"))
    assert status == 2 and out == ""
    assert err == ("gradcli: error: -o FILE.nc needs h5netcdf, which is not installed: "
                   "pip install 'gradcli[data]'\n")
    assert evaluated == [] and os.listdir(tmp_path) == []


def test_interrupted_zarr_leaves_no_store(cli, tmp_path, monkeypatch):
    from gradcli.output import zarr_sink

    real = zarr_sink.ChunkWriter.write
    calls = []

    def write(self, start, stop, values):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(start)
        return real(self, start, stop, values)

    monkeypatch.setattr(zarr_sink.ChunkWriter, "write", write)
    status, _, err = cli("grad", "x*y", "--grid", "x=0:1:3000", "--grid",
                         "y=0:1:300", "-o", str(tmp_path / "s.zarr"))
    assert status == 130 and "interrupted" in err
    assert os.listdir(tmp_path) == []


def test_interrupt_while_another_block_is_being_written_leaves_no_store(cli, tmp_path,
                                                                        monkeypatch):
    """Blocks are written from several threads: the store is removed only once the write
    under way in another thread has finished (it once recreated chunk directories after
    the removal, leaving a partial hidden store behind)."""
    import threading
    import time

    from gradcli.output import zarr_sink

    real = zarr_sink.ChunkWriter.write
    lock, calls, slow_started = threading.Lock(), [], threading.Event()

    def write(self, start, stop, values):
        with lock:
            calls.append(start)
            n = len(calls)
        if n == 2:
            slow_started.wait(5)
            raise KeyboardInterrupt
        if n == 3:
            slow_started.set()
            time.sleep(0.3)  # still writing when the interrupt's cleanup starts
        return real(self, start, stop, values)

    monkeypatch.setattr(zarr_sink.ChunkWriter, "write", write)
    status, _, err = cli("grad", "x*y", "--grid", "x=0:1:3000", "--grid",
                         "y=0:1:300", "-o", str(tmp_path / "s.zarr"))
    assert status == 130 and "interrupted" in err
    assert os.listdir(tmp_path) == []


def test_zarr_destination_that_is_not_a_store_is_refused(cli, tmp_path):
    (tmp_path / "keep.zarr").mkdir()
    (tmp_path / "keep.zarr" / "mine.txt").write_text("x")
    status, _, err = cli("grad", "x", "--grid", "x=0:1:5", "-o",
                         str(tmp_path / "keep.zarr"))
    assert status == 1 and "not a Zarr store" in err
    assert os.listdir(tmp_path / "keep.zarr") == ["mine.txt"]


# --- --scheduler ---------------------------------------------------------------------------

def test_scheduler_local_writes_the_same_store(cli, tmp_path):
    grid = ["--grid", "x=-1:1:500", "--grid", "y=0:2:300"]
    expr = "exp(-x^2)*sin(3*y) + x*y"
    assert cli("grad", expr, *grid, "-o", str(tmp_path / "l.zarr"))[0] == 0
    status, out, err = cli("grad", expr, *grid, "--scheduler", "local:2", "-o",
                           str(tmp_path / "d.zarr"))
    assert (status, out) == (0, ""), err
    local = xr.open_zarr(tmp_path / "l.zarr", chunks=None).load()
    remote = xr.open_zarr(tmp_path / "d.zarr", chunks=None).load()
    assert remote.attrs["history"].endswith("--scheduler local:2")
    assert remote.drop_attrs().identical(local.drop_attrs())
    for name in ("f", "df_dx", "df_dy"):
        assert np.array_equal(bits(remote[name].values), bits(local[name].values))


def test_unreachable_scheduler_exits_2_naming_it(cli, tmp_path):
    status, _, err = cli("grad", "x*y", "--grid", "x=0:1:5", "--grid", "y=0:1:5",
                         "--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "1",
                         "-o", str(tmp_path / "u.zarr"))
    assert status == 2
    assert err.startswith("gradcli: error: cannot reach the Dask scheduler at "
                          "tcp://127.0.0.1:9 within 1 s (the scheduler timeout)")
    assert os.listdir(tmp_path) == []


def test_expression_error_comes_before_the_scheduler(cli, monkeypatch):
    monkeypatch.setenv("GRADCLI_SCHEDULER", "tcp://127.0.0.1:9")
    status, _, err = cli("grad", "sinn(x)", "--grid", "x=0:1:5")
    assert status == 2 and "unknown function 'sinn'" in err and "scheduler" not in err


def test_check_with_a_scheduler_is_refused(cli):
    status, _, err = cli("grad", "x", "--grid", "x=0:1:5", "--check",
                         "--scheduler", "local:1")
    assert status == 2 and "--check" in err


def test_bad_local_worker_count(cli, monkeypatch):
    monkeypatch.setenv("GRADCLI_SCHEDULER", "local:0")
    status, _, err = cli("grad", "x", "--grid", "x=0:1:5")
    assert status == 2 and "local:N" in err


def test_scheduler_partitions_a_points_file(cli, tmp_path):
    rng = np.random.default_rng(5)
    xs, ys = rng.standard_normal(2000), rng.standard_normal(2000)
    src = tmp_path / "p.csv"
    src.write_text("id,x,y\n" + "".join(f"r{i},{float(a)!r},{float(b)!r}\n"
                                        for i, (a, b) in enumerate(zip(xs, ys, strict=True))))
    argv = ["hessian", "x^2*y + cos(x*y)", "-p", str(src)]
    assert cli(*argv, "-o", str(tmp_path / "l.npz"))[0] == 0
    status, _, err = cli(*argv, "--scheduler", "local:2", "-o", str(tmp_path / "d.npz"))
    assert status == 0, err
    with np.load(tmp_path / "l.npz") as local, np.load(tmp_path / "d.npz") as remote:
        assert list(remote) == list(local)
        for name in local:
            assert np.array_equal(remote[name], local[name]), name
        assert np.allclose(remote["d2f/dxdy"], 2 * xs - np.sin(xs * ys)
                           - xs * ys * np.cos(xs * ys))


def test_zarr_to_an_fsspec_url_from_the_command_line(cli):
    import fsspec

    url = "memory://gradcli-cli/field.zarr"
    status, _, err = cli("grad", "x*y", "--grid", "x=0:1:20", "--grid", "y=0:1:10",
                         "-o", url)
    assert status == 0, err
    ds = xr.open_zarr(url, chunks=None)
    assert np.array_equal(ds["df_dx"].values, np.broadcast_to(np.linspace(0, 1, 10), (20, 10)))
    fsspec.filesystem("memory").rm("/gradcli-cli", recursive=True)


def test_missing_dask_extra_names_it(cli, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)
    status, _, err = cli("grad", "x", "--grid", "x=0:1:5", "--scheduler", "local:2")
    assert status == 2
    assert err == ("gradcli: error: --scheduler needs distributed, which is not installed: "
                   "pip install 'gradcli[dask]'\n")
