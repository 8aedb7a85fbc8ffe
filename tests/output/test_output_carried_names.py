"""Carried text columns never take the name of a dimension of the written dataset."""

from __future__ import annotations

import importlib

import pytest

from gradcli.cli.main import main

xr = importlib.import_module("xarray")
importlib.import_module("h5netcdf")


@pytest.mark.parametrize("ext", [".nc", ".zarr"])
def test_a_carried_column_named_like_a_vector_axis_is_renamed(tmp_path, capsys, ext):
    """A points file with columns x_index, x[0], x[1]: the vector x has the dimension
    x_index, so the carried column becomes x_index_2 (with its own name kept as
    long_name), and .sel(x_index=...) works."""
    points = tmp_path / "d.csv"
    points.write_text("x_index,x[0],x[1]\n7,1,2\n8,3,4\n")
    target = tmp_path / f"d{ext}"
    assert main(["grad", "sum(x^2)", "-p", str(points), "-o", str(target), "-q"]) == 0
    if ext == ".zarr":
        importlib.import_module("zarr")
    ds = xr.open_dataset(target, engine="zarr" if ext == ".zarr" else None)
    try:
        assert ds.sizes["x_index"] == 2
        assert "x_index" not in ds.variables  # only the dimension has that name
        assert ds["x_index_2"].dims == ("point",)
        assert ds["x_index_2"].attrs["long_name"] == "x_index"
        assert ds["x_index_2"].values.tolist() == ["7", "8"]
        assert ds.sel(x_index=1)["x"].values.tolist() == [2.0, 4.0]
        assert ds.sel(x_index=0)["df_dx"].values.tolist() == [2.0, 6.0]
    finally:
        ds.close()
