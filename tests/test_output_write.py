"""gradcli.output.write dispatch, format_from_extension, count_nonfinite."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest

from gradcli.output import count_nonfinite, format_from_extension, write


def test_format_from_extension() -> None:
    assert format_from_extension("a/b.csv") == "csv"
    assert format_from_extension("r.JSON") == "json"
    assert format_from_extension("g.npz") == "npz"
    assert format_from_extension("g.nc") == "nc"
    assert format_from_extension("s3://bucket/field.zarr/") == "zarr"
    assert format_from_extension("t.parquet") == "parquet"
    with pytest.raises(ValueError) as info:
        format_from_extension("out.xyz")
    assert str(info.value) == ("unknown output extension '.xyz': use .csv, .json, .npz, .nc, "
                               ".zarr or .parquet")
    with pytest.raises(ValueError, match="'.npy'"):
        format_from_extension("out.npy")
    with pytest.raises(ValueError, match="no extension"):
        format_from_extension("out")


def test_write_dispatch_stdout_and_files(tmp_path) -> None:
    cols = {"x": np.array([1.0, 2.0]), "f": np.array([0.5, np.nan])}
    out = io.StringIO()
    write(cols, fmt="csv", stdout=out)
    assert out.getvalue() == "x,f\n1.0,0.5\n2.0,nan\n"
    out = io.StringIO()
    write(cols, fmt="json", stdout=out, expression="1/x", variables=["x"], notes=["n"])
    assert json.loads(out.getvalue())["rows"] == [[1.0, 0.5], [2.0, "nan"]]
    write(cols, fmt="npz", path=str(tmp_path / "a.npz"))
    with np.load(tmp_path / "a.npz") as data:
        assert np.array_equal(data["x"], cols["x"])
    write(cols, fmt="table", path=str(tmp_path / "t.txt"), notes=["shape note"])
    text = (tmp_path / "t.txt").read_text()
    assert "0.5" in text and "shape note" in text


def test_table_to_stdout_and_errors() -> None:
    out = io.StringIO()
    write({"x": np.array([np.pi])}, fmt="table", stdout=out, precision=3)
    assert "3.14" in out.getvalue() and "3.142" not in out.getvalue()
    with pytest.raises(ValueError, match="npz output needs -o FILE"):
        write({"x": np.zeros(1)}, fmt="npz")
    with pytest.raises(ValueError, match="unknown output format"):
        write({"x": np.zeros(1)}, fmt="xml")


def test_count_nonfinite_counts_broadcast_cells() -> None:
    assert count_nonfinite({"x": np.array([1.0, np.nan, np.inf]), "i": np.arange(3)}) == 2
    cols = {"x": np.array([[np.nan], [1.0]]), "y": np.array([[1.0, 2.0, -np.inf]]),
            "f": np.zeros((2, 3))}
    assert count_nonfinite(cols) == 3 + 2


def test_import_is_light() -> None:
    code = ("import sys, gradcli.output; "
            "print(any(m.split('.')[0] in ('rich', 'matplotlib') for m in sys.modules))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == "False"
