""".nc, .zarr and .parquet, read back with the ecosystem's own readers.

Every format is read by xarray (``.nc``, ``.zarr``), pandas and polars (``.parquet``,
``.csv``), and checked for coordinates, names, attributes and values against closed-form
derivatives, for a grid, a point set, a Jacobian and a Hessian; values are compared bit for
bit with ``gradcli.evaluate``. Output is atomic for every format.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
import pandas as pd
import polars as pl
import pytest
import xarray as xr

import gradcli
from gradcli import output
from gradcli.output import OutputError
from gradcli.output.cf import cf_name

GLOBAL = {"Conventions": "CF-1.11", "source": f"gradcli {gradcli.__version__}"}


def bits(a) -> np.ndarray:
    """The IEEE bits of float values (so -0.0 != 0.0 and nan == nan)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return a.view(np.uint64)


def assert_bits(got, want) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    assert np.array_equal(bits(got), bits(want))


def write_all(tmp_path, r, history="gradcli test run"):
    """Write an evaluate() result in each gridded format; read each back."""
    paths = {fmt: str(tmp_path / f"out.{fmt}") for fmt in ("nc", "zarr", "parquet")}
    for fmt, path in paths.items():
        output.write(r.result, fmt=fmt, path=path, origin=r.origin, history=history)
    nc = xr.open_dataset(paths["nc"], engine="h5netcdf").load()
    zarr = xr.open_zarr(paths["zarr"]).load()
    return nc, zarr, paths["parquet"]


def check_both(nc, zarr, expect) -> None:
    """Both files hold exactly the dataset ``gradcli.to_xarray`` makes."""
    for ds in (nc, zarr):
        assert ds.identical(expect), ds
        for name, var in expect.variables.items():
            if var.dtype.kind == "f":
                assert_bits(ds[name].values, var.values)


# --- names -------------------------------------------------------------------------------

@pytest.mark.parametrize("text, name", [("df/dx", "df_dx"), ("d2f/dxdy", "d2f_dxdy"),
                                        ("vjp/dx[0]", "vjp_dx_0_"), ("x", "x"),
                                        ("_t", "v_t"), ("0abc", "v0abc")])
def test_cf_names(text, name):
    assert cf_name(text) == name


# --- a grid ------------------------------------------------------------------------------

def test_grid_grad_every_format(tmp_path):
    grid = {"x": (0, 2, 5), "y": (-1, 1, 4), "z": 0.5}
    r = gradcli.evaluate("sin(x)*cos(y) + z^2", "grad", grid=grid)
    nc, zarr, pq = write_all(tmp_path, r)
    x, y = np.linspace(0, 2, 5), np.linspace(-1, 1, 4)
    X, Y = np.meshgrid(x, y, indexing="ij")
    expect = gradcli.to_xarray(r, history="gradcli test run")
    check_both(nc, zarr, expect)
    for ds in (nc, zarr):
        assert ds.attrs == {**GLOBAL, "title": "sin(x)*cos(y) + z^2",
                            "history": "gradcli test run"}
        assert dict(ds.sizes) == {"x": 5, "y": 4}
        assert list(ds["f"].dims) == ["x", "y"]  # grid order: first variable first
        assert_bits(ds["x"].values, x)
        assert_bits(ds["y"].values, y)
        assert ds["z"].dims == () and float(ds["z"]) == 0.5  # held: a scalar coordinate
        assert set(ds.data_vars) == {"f", "df_dx", "df_dy", "df_dz"}
        assert ds["df_dx"].attrs["long_name"] == "df/dx"
        assert np.allclose(ds["f"], np.sin(X) * np.cos(Y) + 0.25, rtol=0, atol=1e-15)
        assert np.allclose(ds["df_dx"], np.cos(X) * np.cos(Y), rtol=0, atol=1e-15)
        assert np.allclose(ds["df_dy"], -np.sin(X) * np.sin(Y), rtol=0, atol=1e-15)
        assert np.all(ds["df_dz"].values == 1.0)
        assert_bits(ds["df_dx"].values, r["df/dx"])
    # parquet: the flattened grid, CSV's columns, rows in C order
    for frame in (pd.read_parquet(pq), pl.read_parquet(pq).to_pandas()):
        assert list(frame.columns) == ["x", "y", "z", "f", "df/dx", "df/dy", "df/dz"]
        assert_bits(frame["x"], X.ravel())
        assert_bits(frame["y"], Y.ravel())
        assert_bits(frame["z"], np.full(20, 0.5))
        for col in ("f", "df/dx", "df/dy", "df/dz"):
            assert_bits(frame[col], np.broadcast_to(r[col], (5, 4)).ravel())


def test_nc_same_bytes_twice(tmp_path):
    r = gradcli.evaluate("x*exp(-y)", "grad", grid={"x": (0, 1, 6), "y": (0, 1, 3)})
    digests = []
    for name in ("a.nc", "b.nc"):
        output.write(r.result, fmt="nc", path=tmp_path / name, origin=r.origin,
                     history="gradcli grad ...")
        digests.append(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest())
    assert digests[0] == digests[1]


# --- a point set -------------------------------------------------------------------------

def test_point_set_every_format(tmp_path):
    xs = np.array([0.5, -1.25, 3.0, 1e-300])
    ys = np.array([2.0, 0.1, -0.0, -7.0])
    r = gradcli.evaluate("x^2*y + log(y)", "grad", points={"x": xs, "y": ys})
    nc, zarr, pq = write_all(tmp_path, r)
    check_both(nc, zarr, gradcli.to_xarray(r, history="gradcli test run"))
    for ds in (nc, zarr):
        assert dict(ds.sizes) == {"point": 4}
        assert ds["x"].dims == ("point",) and ds["y"].dims == ("point",)
        assert "x" in ds.coords and "y" in ds.coords
        assert_bits(ds["x"].values, xs)
        assert_bits(ds["df_dx"].values, 2 * xs * ys)
        finite = [0, 1, 3]
        assert np.allclose(ds["df_dy"].values[finite], xs[finite]**2 + 1 / ys[finite],
                           rtol=1e-15)
        assert ds["df_dy"].values[2] == -np.inf  # 1/(-0.0): IEEE values, not fill values
        assert ds["f"].values[2] == -np.inf      # log(-0.0)
        assert np.isnan(ds["f"].values[3])       # log(-7)
    for frame in (pd.read_parquet(pq), pl.read_parquet(pq).to_pandas()):
        assert list(frame.columns) == ["x", "y", "f", "df/dx", "df/dy"]
        for col in frame.columns:
            assert_bits(frame[col], r.result[col])


def test_point_set_vector_variable(tmp_path):
    r = gradcli.evaluate("sum(x^2)*y", "grad", at=[{"x": [1, 2, 3], "y": 2},
                                                    {"x": [0, -1, 0.5], "y": -3}])
    nc, zarr, pq = write_all(tmp_path, r)
    check_both(nc, zarr, gradcli.to_xarray(r, history="gradcli test run"))
    for ds in (nc, zarr):
        assert ds["x"].dims == ("point", "x_index")
        assert ds["df_dx"].dims == ("point", "x_index")
        assert_bits(ds["df_dx"].values, [[4, 8, 12], [-0.0, 6, -3]])  # 2*0*(-3) = -0
        assert_bits(ds["df_dy"].values, [14, 1.25])
    frame = pl.read_parquet(pq)
    assert frame.columns == ["x[0]", "x[1]", "x[2]", "y", "f", "df/dx[0]", "df/dx[1]",
                             "df/dx[2]", "df/dy"]
    assert_bits(frame["df/dx[1]"].to_numpy(), [8, 6])


def test_carried_text_columns_are_string_coordinates(tmp_path):
    from gradcli.evaluation import prepare

    ids = np.array(["007", "Smith, J.", "ü/β"], dtype=object)
    prepared = prepare("x*y", "grad", points={"x": [1.0, 2.0, 3.0], "y": [0.5, 0.25, -1.0]},
                       carry={"id tag": ids})
    result = prepared.run()
    paths = {fmt: str(tmp_path / f"t.{fmt}") for fmt in ("nc", "zarr", "parquet")}
    for fmt, path in paths.items():
        output.write(result, fmt=fmt, path=path, origin=prepared.origin(), history="h")
    for ds in (xr.open_dataset(paths["nc"], engine="h5netcdf"), xr.open_zarr(paths["zarr"])):
        assert ds["id_tag"].dims == ("point",) and "id_tag" in ds.coords
        assert ds["id_tag"].attrs["long_name"] == "id tag"
        assert [str(v) for v in ds["id_tag"].values] == list(ids)
        assert_bits(ds["df_dx"].values, [0.5, 0.25, -1.0])
    for frame in (pd.read_parquet(paths["parquet"]), pl.read_parquet(paths["parquet"])):
        assert list(frame.columns) == ["id tag", "x", "y", "f", "df/dx", "df/dy"]
        assert list(frame["id tag"]) == list(ids)


# --- a Jacobian and a Hessian ------------------------------------------------------------

def test_jacobian_uses_component_and_wrt(tmp_path):
    grid = {"x": (0.5, 2, 4), "y": (-1, 1, 3)}
    r = gradcli.evaluate("[x*y, x^2, sin(y)]", "jacobian", grid=grid)
    nc, zarr, pq = write_all(tmp_path, r)
    check_both(nc, zarr, gradcli.to_xarray(r, history="gradcli test run"))
    X, Y = np.meshgrid(np.linspace(0.5, 2, 4), np.linspace(-1, 1, 3), indexing="ij")
    want = np.zeros((4, 3, 3, 2))
    want[..., 0, 0], want[..., 0, 1] = Y, X        # d(xy)
    want[..., 1, 0] = 2 * X                        # d(x^2)
    want[..., 2, 1] = np.cos(Y)                    # d(sin y)
    for ds in (nc, zarr):
        assert set(ds.data_vars) == {"f", "jacobian"}  # not one variable per entry
        assert ds["jacobian"].dims == ("x", "y", "component", "wrt")
        assert ds["f"].dims == ("x", "y", "component")
        assert [str(c) for c in ds["component"].values] == ["f[0]", "f[1]", "f[2]"]
        assert [str(w) for w in ds["wrt"].values] == ["x", "y"]
        assert ds["jacobian"].attrs["long_name"] == "d{component}/d{wrt}"
        assert np.allclose(ds["jacobian"].values, want, rtol=0, atol=1e-15)
        assert_bits(ds["jacobian"].sel(component="f[0]", wrt="y").values, r["df[0]/dy"])
        assert_bits(ds["f"].sel(component="f[2]").values,
                    np.broadcast_to(r["f[2]"], (4, 3)))
    frame = pd.read_parquet(pq)
    assert list(frame.columns) == ["x", "y", "f[0]", "f[1]", "f[2]", "df[0]/dx", "df[0]/dy",
                                   "df[1]/dx", "df[1]/dy", "df[2]/dx", "df[2]/dy"]
    assert_bits(frame["df[0]/dx"], Y.ravel())


def test_hessian_uses_wrt_and_wrt2(tmp_path):
    xs, ys = np.array([1.0, -2.0, 0.5]), np.array([2.0, 3.0, -1.0])
    r = gradcli.evaluate("x^2*y + y^3", "hessian", points={"x": xs, "y": ys})
    nc, zarr, pq = write_all(tmp_path, r)
    check_both(nc, zarr, gradcli.to_xarray(r, history="gradcli test run"))
    want = np.stack([np.stack([2 * ys, 2 * xs], -1), np.stack([2 * xs, 6 * ys], -1)], -2)
    for ds in (nc, zarr):
        assert ds["hessian"].dims == ("point", "wrt", "wrt2")
        assert [str(w) for w in ds["wrt2"].values] == ["x", "y"]
        assert ds["hessian"].attrs["long_name"] == "d2f/d{wrt}d{wrt2}"
        assert_bits(ds["hessian"].values, want)
        assert_bits(ds["f"].values, xs**2 * ys + ys**3)
    for frame in (pd.read_parquet(pq), pl.read_parquet(pq).to_pandas()):
        assert list(frame.columns) == ["x", "y", "f", "d2f/dxdx", "d2f/dxdy", "d2f/dydx",
                                       "d2f/dydy"]
        assert_bits(frame["d2f/dydy"], 6 * ys)


def test_float32_stays_float32(tmp_path):
    r = gradcli.evaluate("x*y", "grad", grid={"x": (0, 1, 3), "y": (0, 1, 2)},
                         dtype="float32")
    nc, zarr, pq = write_all(tmp_path, r)
    for ds in (nc, zarr):
        assert ds["df_dx"].dtype == np.float32 and ds["x"].dtype == np.float32
    assert pl.read_parquet(pq).schema["df/dx"] == pl.Float32


# --- to_xarray ---------------------------------------------------------------------------

def test_to_xarray_history_defaults_to_the_call():
    r = gradcli.evaluate("x^2", "grad", grid={"x": (0, 1, 3)})
    ds = gradcli.to_xarray(r)
    assert ds.attrs["history"] == "gradcli.evaluate('x^2', 'grad', grid={'x': (0, 1, 3)})"
    assert ds.attrs["title"] == "x^2"
    assert_bits(ds["df_dx"].values, [0, 1, 2])


def test_plain_mapping_is_a_table_over_point():
    ds = gradcli.to_xarray({"a": np.arange(3.0), "b/c": np.ones(3)})
    assert ds["b_c"].dims == ("point",) and ds["b_c"].attrs["long_name"] == "b/c"


# --- atomic output -----------------------------------------------------------------------

def _leftovers(folder) -> list[str]:
    return sorted(os.listdir(folder))


def test_failed_nc_leaves_nothing(tmp_path, monkeypatch):
    r = gradcli.evaluate("x", "grad", grid={"x": (0, 1, 3)})

    def boom(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(xr.Dataset, "to_netcdf", boom)
    with pytest.raises(KeyboardInterrupt):
        output.write(r.result, fmt="nc", path=tmp_path / "f.nc", origin=r.origin)
    assert _leftovers(tmp_path) == []


def test_interrupted_parquet_leaves_nothing(tmp_path, monkeypatch):
    from gradcli.output import parquet_writer

    monkeypatch.setattr(parquet_writer, "ROW_GROUP", 10)
    r = gradcli.evaluate("x*y", "grad", grid={"x": (0, 1, 10), "y": (0, 1, 10)})

    def stop(done, total):
        if done >= 30:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        output.write(r.result, fmt="parquet", path=tmp_path / "f.parquet", progress=stop)
    assert _leftovers(tmp_path) == []


def _interrupting_sink(sink, after: int):
    """Make ``sink.write`` raise KeyboardInterrupt once ``after`` blocks are written."""
    written = []
    real = sink.write

    def write(start, stop, values):
        if len(written) >= after:
            raise KeyboardInterrupt
        written.append(start)
        real(start, stop, values)

    sink.write = write
    return sink


def test_interrupted_zarr_leaves_nothing_and_keeps_the_old_store(tmp_path):
    from gradcli.evaluation import prepare
    from gradcli.output.zarr_sink import ZarrSink

    target = str(tmp_path / "f.zarr")
    old = gradcli.evaluate("x+y", "grad", grid={"x": (0, 1, 4), "y": (0, 1, 3)})
    output.write(old.result, fmt="zarr", path=target, origin=old.origin)
    prepared = prepare("x*y", "grad", grid={"x": (0, 1, 40), "y": (0, 1, 30)})
    sink = _interrupting_sink(ZarrSink(target, prepared.origin(), block_size=300), after=2)
    with pytest.raises(KeyboardInterrupt):
        prepared.run(sink, threads=1)
    assert _leftovers(tmp_path) == ["f.zarr"]  # no temporary directory left behind
    kept = xr.open_zarr(target).load()      # the old store, untouched
    assert kept.attrs["title"] == "x+y" and dict(kept.sizes) == {"x": 4, "y": 3}


def test_zarr_streams_in_block_chunks(tmp_path):
    from gradcli.evaluation import prepare
    from gradcli.output.zarr_sink import ZarrSink

    prepared = prepare("sin(x)*exp(y)", "grad", grid={"x": (0, 1, 50), "y": (0, 1, 40)})
    target = str(tmp_path / "s.zarr")
    sink = ZarrSink(target, prepared.origin(), history="h", block_size=400)
    prepared.run(sink, threads=2)
    ds = xr.open_zarr(target)
    assert ds["df_dx"].encoding["chunks"] == (10, 40)  # blocks of 400 points: 10 rows
    ref = gradcli.evaluate("sin(x)*exp(y)", "grad", grid={"x": (0, 1, 50), "y": (0, 1, 40)})
    assert ds.load().identical(gradcli.to_xarray(ref, history="h").assign_attrs(history="h"))
    assert_bits(ds["df_dx"].values, ref["df/dx"])
    assert _leftovers(tmp_path) == ["s.zarr"]


def test_zarr_to_an_fsspec_url_writes_the_root_last(tmp_path):
    import fsspec

    from gradcli.evaluation import prepare
    from gradcli.output.zarr_sink import ZarrSink

    fs = fsspec.filesystem("memory")
    url = "memory://gradcli-test/field.zarr"
    prepared = prepare("x-y", "grad", grid={"x": (0, 1, 30), "y": (0, 1, 20)})
    sink = _interrupting_sink(ZarrSink(url, prepared.origin(), block_size=100), after=3)
    with pytest.raises(KeyboardInterrupt):
        prepared.run(sink, threads=1)
    assert not fs.exists("/gradcli-test/field.zarr/zarr.json")
    sink = ZarrSink(url, prepared.origin(), block_size=100)
    prepared.run(sink, threads=1)
    ds = xr.open_zarr(url).load()
    assert_bits(ds["f"].values, np.broadcast_to(gradcli.evaluate(
        "x-y", "grad", grid={"x": (0, 1, 30), "y": (0, 1, 20)})["f"], (30, 20)))
    fs.rm("/gradcli-test", recursive=True)


def test_zarr_refuses_to_replace_a_directory_that_is_not_a_store(tmp_path):
    folder = tmp_path / "mine.zarr"
    folder.mkdir()
    (folder / "notes.txt").write_text("keep me")
    r = gradcli.evaluate("x", "eval", grid={"x": (0, 1, 3)})
    with pytest.raises(OutputError, match="not a Zarr store"):
        output.write(r.result, fmt="zarr", path=str(folder), origin=r.origin)
    assert (folder / "notes.txt").read_text() == "keep me"
    assert _leftovers(tmp_path) == ["mine.zarr"]


# --- without the extra -------------------------------------------------------------------

@pytest.mark.parametrize("fmt, module", [("nc", "h5netcdf"), ("zarr", "zarr"),
                                         ("parquet", "pyarrow")])
def test_missing_extra_names_it(tmp_path, monkeypatch, fmt, module):
    from gradcli.evaluation.extras import MissingExtra

    monkeypatch.setitem(__import__("sys").modules, module, None)  # `import` now fails
    r = gradcli.evaluate("x", "eval", grid={"x": (0, 1, 3)})
    with pytest.raises(MissingExtra, match=r"pip install 'gradcli\[data\]'"):
        output.write(r.result, fmt=fmt, path=str(tmp_path / f"f.{fmt}"), origin=r.origin)
    assert _leftovers(tmp_path) == []


def test_csv_round_trips_through_pandas_and_polars(tmp_path):
    rng = np.random.default_rng(7)
    xs = np.concatenate([rng.standard_normal(500) * 10.0 ** rng.integers(-300, 300, 500),
                         [0.0, -0.0, 5e-324, 1.7976931348623157e308, 0.1, 1 / 3]])
    r = gradcli.evaluate("x^3 - 2x", "grad", points={"x": xs})
    path = tmp_path / "p.csv"
    output.write(r.result, fmt="csv", path=path)
    frames = {"pandas": pd.read_csv(path), "polars": pl.read_csv(path).to_pandas()}
    for who, frame in frames.items():
        assert list(frame.columns) == ["x", "f", "df/dx"], who
        for col in frame.columns:
            got, want = frame[col].to_numpy(), np.asarray(r.result[col])
            nan = np.isnan(want)  # text "nan" has no sign: the one thing CSV cannot keep
            assert np.array_equal(np.isnan(got), nan), (who, col)
            assert_bits(got[~nan], want[~nan])


def test_a_variable_held_for_every_point_is_a_scalar_coordinate(tmp_path):
    xs = np.array([0.5, 1.0, 2.0])
    r = gradcli.evaluate("x*y^2", "grad", points={"x": xs}, fixed={"y": 3.0})
    nc, zarr, _ = write_all(tmp_path, r)
    for ds in (nc, zarr):
        assert ds["y"].dims == () and float(ds["y"]) == 3.0
        assert ds["x"].dims == ("point",)
        assert_bits(ds["df_dy"].values, 6 * xs)


@pytest.mark.parametrize("expression, what, where, extra", [
    ("2+3", "eval", {"at": [{}]}, {}),                                  # a constant
    ("z^2", "grad", {"grid": {"z": 0.5}}, {}),                          # every variable held
    ("[x*y, x]", "jvp", {"grid": {"x": (0, 1, 3), "y": (0, 1, 2)}}, {"direction": {"x": 1}}),
    ("[x*y, x]", "vjp", {"at": [{"x": 1, "y": 2}]}, {"vector": [1, 0]}),
])
def test_every_command_and_shape_round_trips(tmp_path, expression, what, where, extra):
    r = gradcli.evaluate(expression, what, **where, **extra)
    nc, zarr, pq = write_all(tmp_path, r)
    check_both(nc, zarr, gradcli.to_xarray(r, history="gradcli test run"))
    frame = pd.read_parquet(pq)
    assert list(frame.columns) == list(r.result)
    for col in frame.columns:
        assert_bits(frame[col], np.broadcast_to(r.result[col], r.result.batch_shape).ravel())
