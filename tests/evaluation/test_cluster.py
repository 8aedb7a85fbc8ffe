"""Evaluating on a Dask cluster (a LocalCluster of two worker processes here).

Results must be the local path's bit for bit (a 2000² grad, a 200³ Jacobian, a Hessian on
a partitioned point set), survive a worker killed mid-run, and fail clearly: an
unreachable scheduler names its address, an expression error comes before any task.
"""

from __future__ import annotations

import os
import pickle
import signal
import time

import numpy as np
import pytest
import xarray as xr

import gradcli
from gradcli.errors import EvaluationError
from gradcli.evaluation import cluster as cl
from gradcli.evaluation import prepare
from gradcli.lang import ExpressionError
from gradcli.output.zarr_sink import ZarrSink


def bits(a) -> np.ndarray:
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and np.array_equal(bits(a), bits(b))


@pytest.fixture(scope="module")
def client():
    client, close = cl.connect("local:2")
    yield client
    close()


def zarr_on_cluster(prepared, client, path, **sink):
    target = str(path)
    prepared.run(ZarrSink(target, prepared.origin(), history="h", **sink), client=client)
    return xr.open_zarr(target, chunks=None).load()


def zarr_locally(prepared, path):
    prepared.run(ZarrSink(str(path), prepared.origin(), history="h"), threads=2)
    return xr.open_zarr(str(path), chunks=None).load()


def test_grad_2000_squared_matches_the_local_path(client, tmp_path):
    grid = {"x": (-2, 2, 2000), "y": (0, 3, 2000)}
    expression = "sin(x)*cos(y) + exp(-x^2*y)"
    ref = gradcli.evaluate(expression, "grad", grid=grid)
    ds = zarr_on_cluster(prepare(expression, "grad", grid=grid), client, tmp_path / "d.zarr")
    local = zarr_locally(prepare(expression, "grad", grid=grid), tmp_path / "l.zarr")
    assert ds.identical(local)  # same coordinates, names and attributes
    for name in ("f", "df/dx", "df/dy"):
        assert same_bits(ds[name.replace("/", "_")].values,
                         np.broadcast_to(ref[name], (2000, 2000))), name
    X, Y = np.meshgrid(np.linspace(-2, 2, 2000), np.linspace(0, 3, 2000), indexing="ij")
    want = np.cos(X) * np.cos(Y) - 2 * X * Y * np.exp(-X**2 * Y)  # the closed form
    assert np.allclose(ds["df_dx"].values, want, rtol=1e-13, atol=1e-13)


def test_jacobian_200_cubed_matches_the_local_path(client, tmp_path):
    grid = {"x": (0, 1, 200), "y": (-1, 1, 200), "z": (1, 2, 200)}
    expression = "[x*y*z, sin(x+y)/z]"
    ref = gradcli.evaluate(expression, "jacobian", grid=grid)
    ds = zarr_on_cluster(prepare(expression, "jacobian", grid=grid), client,
                         tmp_path / "j.zarr")
    assert ds["jacobian"].dims == ("x", "y", "z", "component", "wrt")
    for i in range(2):
        for var in "xyz":
            got = ds["jacobian"].sel(component=f"f[{i}]", wrt=var).values
            assert same_bits(got, np.broadcast_to(ref[f"df[{i}]/d{var}"], (200,) * 3))
    assert np.array_equal(ds["jacobian"].sel(component="f[0]", wrt="z").values[3, 5, 7],
                          ds["x"].values[3] * ds["y"].values[5])  # d(xyz)/dz = xy


def test_hessian_on_partitioned_points_in_memory(client):
    rng = np.random.default_rng(3)
    points = {"x": rng.standard_normal(300_000), "y": rng.standard_normal(300_000)}
    expression = "x^2*y + sin(x*y)"
    ref = gradcli.evaluate(expression, "hessian", points=points)
    result = prepare(expression, "hessian", points=points).run(client=client)
    assert list(result) == list(ref.result)
    for name in ref.result:
        assert same_bits(result[name], ref.result[name]), name
    x, y = points["x"], points["y"]
    assert np.allclose(result["d2f/dxdy"], 2 * x + np.cos(x * y) - x * y * np.sin(x * y))


def test_lazy_results_have_the_local_names_and_shapes(client):
    grid = {"x": (0, 1, 700), "y": (0, 1, 500), "z": 0.25}
    ref = gradcli.evaluate("x*y*z + y^2", "grad", grid=grid)
    lazy = gradcli.evaluate("x*y*z + y^2", "grad", grid=grid, scheduler=client)
    assert list(lazy) == list(ref)
    for name in ref:
        assert lazy[name].shape == np.shape(ref[name]), name
    assert hasattr(lazy["df/dx"], "dask")  # not computed yet
    assert same_bits(lazy["df/dx"].compute(), ref["df/dx"])
    ds = gradcli.to_xarray(lazy, history="h")
    assert ds["df_dy"].chunks is not None  # still lazy as a dataset
    assert ds.load().identical(gradcli.to_xarray(ref, history="h"))


def test_worker_killed_mid_run_still_completes(client, tmp_path):
    grid = {"x": (0, 3, 900), "y": (0, 3, 900)}
    expression = "sin(x*y)*exp(-(x^2+y^2)/8)"
    pids = client.run(os.getpid)
    victim = sorted(pids.values())[0]
    killed = []

    def progress(done, total):
        if done == 5 and not killed:
            os.kill(victim, signal.SIGKILL)
            killed.append(done)

    prepared = prepare(expression, "grad", grid=grid)
    target = str(tmp_path / "k.zarr")
    sink = ZarrSink(target, prepared.origin(), history="h", block_size=5400)  # 150 tasks
    prepared.run(sink, client=client, progress=progress)
    assert killed == [5]
    ds = xr.open_zarr(target, chunks=None).load()
    ref = gradcli.evaluate(expression, "grad", grid=grid)
    for name in ("f", "df/dx", "df/dy"):
        assert same_bits(ds[name.replace("/", "_")].values,
                         np.broadcast_to(ref[name], (900, 900))), name
    assert ds.identical(zarr_locally(prepare(expression, "grad", grid=grid),
                                     tmp_path / "l.zarr"))
    client.wait_for_workers(2, timeout=60)  # the nanny restarts the killed worker


def test_results_too_large_for_the_client_need_zarr(client, monkeypatch, tmp_path):
    monkeypatch.setattr(cl, "physical_memory", lambda: 1 << 20)
    prepared = prepare("x*y", "grad", grid={"x": (0, 1, 300), "y": (0, 1, 300)})
    with pytest.raises(EvaluationError, match=r"-o FILE\.zarr"):
        prepared.run(client=client)


def test_unreachable_scheduler_names_the_address():
    started = time.monotonic()
    with pytest.raises(EvaluationError) as info:
        cl.connect("tcp://127.0.0.1:9", timeout=1)
    assert "tcp://127.0.0.1:9" in str(info.value) and "1 s" in str(info.value)
    assert time.monotonic() - started < 30  # the timeout is honoured (a hang guard)


def test_expression_error_before_any_connection_or_task():
    # the address cannot be reached: had anything been sent, that would be the error
    with pytest.raises(ExpressionError, match="unknown function 'sinn'"):
        gradcli.evaluate("sinn(x)", "grad", grid={"x": (0, 1, 5)},
                         scheduler="tcp://127.0.0.1:9", scheduler_timeout=1)


def test_what_travels_is_text_and_numbers():
    prepared = prepare("sin(x)*y", "grad", grid={"x": (0, 1, 10), "y": 2.0})
    job = cl.job_for(prepared)
    blob = pickle.dumps(job)
    assert b"sin(x)*y" in blob
    for module in (b"gradcli.lang", b"gradcli.engine", b"gradcli.plan.kernels"):
        assert module not in blob  # no compiled program, tensor or plan travels
    values = cl.block_task(pickle.loads(blob), 2, 5)
    local = gradcli.evaluate("sin(x)*y", "grad", grid={"x": (0, 1, 10), "y": 2.0})
    assert same_bits(values[1], np.broadcast_to(local["df/dx"], (10,))[2:5])


@pytest.mark.parametrize("spec", ["local:0", "local:x", "local:-1"])
def test_bad_local_spec(spec):
    with pytest.raises(EvaluationError, match="local:N"):
        cl.parse_local(spec)


def test_points_with_a_held_variable(client):
    xs = np.linspace(-3, 3, 1000)
    ref = gradcli.evaluate("x^3*y", "grad", points={"x": xs}, fixed={"y": -2.0})
    result = prepare("x^3*y", "grad", points={"x": xs}, fixed={"y": -2.0}).run(client=client)
    for name in ref.result:
        assert same_bits(result[name], ref.result[name]), name
    assert same_bits(result["df/dx"], -6 * xs**2)


def test_a_scheduler_address_with_and_without_workers():
    from distributed import LocalCluster

    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        with pytest.raises(EvaluationError, match="has no workers"):
            cl.connect(empty.scheduler_address, timeout=1)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=":0") as cluster:
        client, close = cl.connect(cluster.scheduler_address, timeout=10)
        try:
            result = prepare("x^2", "grad", grid={"x": (0, 1, 11)}).run(client=client)
            assert same_bits(result["df/dx"], 2 * np.linspace(0, 1, 11))
        finally:
            close()
