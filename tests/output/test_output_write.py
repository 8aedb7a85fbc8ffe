"""gradcli.output.write dispatch, the format table's extensions, count_nonfinite."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest

from gradcli.output import count_nonfinite, formats, write


def test_extensions_pick_formats_from_the_format_table() -> None:
    """Each extension means one format (case-insensitive); one that no rows format has
    means none; .npy is the record-array format."""
    assert formats.by_extension(".csv") == "csv"
    assert formats.by_extension(".JSON") == "json"
    assert formats.by_extension(".jsonl") == "jsonl"
    assert formats.by_extension(".npz") == "npz"
    assert formats.by_extension(".npy") == "npy"
    assert formats.by_extension(".nc") == "nc"
    assert formats.by_extension(".zarr") == "zarr"
    assert formats.by_extension(".parquet") == "parquet"
    assert formats.by_extension(".xyz") is None
    assert formats.by_extension(".png") is None  # a picture, not rows
    assert formats.by_extension(".png", (formats.PICTURE,)) == "png"


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
    with pytest.raises(ValueError, match="npz output needs a file"):
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
