"""Every command that produces rows writes every format its --help lists, and the values
read back are the CSV's; integer columns are integers in every format; float32 results
print float32's shortest text; JSON Lines streams."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcli.cli.definition import BY_NAME

#: one small run of every command that produces rows
ROW_COMMANDS = {
    "eval": ["eval", "x*y", "--at", "x=1,y=2", "--at", "x=3,y=-1"],
    "grad": ["grad", "x*y", "--at", "x=1,y=2", "--at", "x=3,y=-1"],
    "jacobian": ["jacobian", "[x*y, x-y]", "--at", "x=1,y=2", "--at", "x=3,y=-1"],
    "vjp": ["vjp", "[x*y, x-y]", "--vector", "1,2", "--at", "x=1,y=2"],
    "jvp": ["jvp", "x*y", "--direction", "x=1,y=0", "--at", "x=1,y=2"],
    "hessian": ["hessian", "x^2*y", "--at", "x=1,y=2"],
    "div": ["div", "[x*y, x-y]", "--at", "x=1,y=2"],
    "curl": ["curl", "[-y, x]", "--at", "x=1,y=2"],
    "laplacian": ["laplacian", "x^2*y", "--at", "x=1,y=2"],
    "hvp": ["hvp", "x^2*y", "--direction", "x=1,y=0", "--at", "x=1,y=2"],
    "diff": ["diff", "x^3*y", "--wrt", "x", "--order", "2", "--at", "x=1,y=2"],
    "taylor": ["taylor", "exp(x)*y", "--at", "x=0,y=1", "--order", "2"],
    "critical": ["critical", "x^3 - 3x + y^2", "--grid", "x=-2:2:5", "--grid", "y=-1:1:3"],
    "descend": ["descend", "x^2 + y^2", "--from", "x=1,y=1", "--from", "x=2,y=0",
                "--steps", "3"],
    "flow": ["flow", "[-y, x]", "--from", "x=1,y=0", "--t", "0:1:3"],
}
#: the integer columns of each command's rows
INTEGERS = {"taylor": ["order", "deg(x)", "deg(y)"], "descend": ["run", "step"],
            "flow": []}


def listed_formats(cli, command: str) -> list[str]:
    """The formats -f's --help text names for ``command``."""
    status, out, _ = cli([command, "--help"])
    assert status == 0
    text = " ".join(out.split())
    found = re.search(r"Formats: ([a-z0-9 ]+?)(?:, and with -o FILE ([a-z0-9 ]+))?\.", text)
    assert found, text
    return found.group(1).split() + (found.group(2) or "").split()


def csv_columns(text: str) -> dict[str, list[str]]:
    rows = list(csv.reader(io.StringIO(text)))
    return {name: [r[j] for r in rows[1:]] for j, name in enumerate(rows[0])}


def as_number(cell: object) -> object:
    if isinstance(cell, (bytes, np.bytes_)):
        cell = cell.decode()
    if isinstance(cell, str):
        try:
            return float(cell)
        except ValueError:
            return cell
    return float(cell) if not isinstance(cell, (bool, np.bool_)) else cell


def read_back(fmt: str, path: Path) -> dict[str, list[object]]:
    """Every scalar column a file holds, by its CSV name (blocks by their component)."""
    if fmt in ("csv",):
        return {k: list(map(as_number, v)) for k, v in csv_columns(path.read_text()).items()}
    if fmt == "json":
        doc = json.loads(path.read_text())
        return {c: [as_number(r[j]) for r in doc["rows"]] for j, c in enumerate(doc["columns"])}
    if fmt == "jsonl":
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        return {c: [as_number(r[c]) for r in rows] for c in rows[0]}
    if fmt in ("npz", "npy"):
        if fmt == "npz":
            with np.load(path) as data:
                arrays = {k: data[k] for k in data.files}
        else:
            rec = np.load(path)
            arrays = {k: rec[k] for k in rec.dtype.names}
        out = {}
        for k, arr in arrays.items():
            if arr.ndim <= 1:
                out[k] = [as_number(v) for v in np.atleast_1d(arr).tolist()]
        return out
    if fmt in ("nc", "zarr"):
        import xarray as xr

        ds = xr.open_dataset(path) if fmt == "nc" else xr.open_zarr(path)
        out = {}
        for name in ds.variables:
            var = ds[name]
            if var.ndim == 1 and var.dims[0] in ("row", "point"):
                out[var.attrs.get("long_name", name)] = [as_number(v) for v in
                                                         var.values.tolist()]
        ds.close()
        return out
    if fmt == "parquet":
        import pandas as pd

        frame = pd.read_parquet(path)
        return {c: [as_number(v) for v in frame[c].tolist()] for c in frame.columns}
    raise AssertionError(fmt)


def same(a: list[object], b: list[object]) -> bool:
    return all((x == y) or (isinstance(x, float) and isinstance(y, float) and np.isnan(x)
                            and np.isnan(y)) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("command", list(ROW_COMMANDS))
def test_every_listed_format_works_for_every_row_command(cli, tmp_path, command) -> None:
    """--help lists exactly the command's formats; each one writes the CSV's values."""
    listed = listed_formats(cli, command)
    assert sorted(listed) == sorted(BY_NAME[command].formats)
    assert {"csv", "json", "jsonl", "npz", "npy", "nc", "zarr", "parquet"} <= set(listed)
    argv = ROW_COMMANDS[command]
    status, out, err = cli([*argv, "-f", "csv", "-q"])
    assert status == 0, err
    truth = {k: list(map(as_number, v)) for k, v in csv_columns(out).items()}
    for fmt in listed:
        if fmt == "text":  # taylor's polynomial
            target = tmp_path / "p.txt"
            assert cli([*argv, "--polynomial", "-o", str(target)])[0] == 0
            # exp(x)·y at (0, 1): (1 + x + x²/2)(1 + (y - 1)) to order 2
            assert target.read_text() == "1 + x + (y - 1) + 0.5 * x ^ 2 + x * (y - 1)\n"
            continue
        if fmt == "table":
            status, out, err = cli([*argv, "-f", "table", "-q"])
            assert status == 0, err
            assert all(name.split("[")[0] in out for name in truth)
            continue
        ext = BY_NAME[command].files[[f for _, f in BY_NAME[command].files].index(fmt)][0]
        target = tmp_path / f"out{ext}"
        status, out, err = cli([*argv, "-q", "-o", str(target)])
        assert status == 0, f"{fmt}: {err}"
        got = read_back(fmt, target)
        shared = [c for c in truth if c in got]
        assert shared, (fmt, list(got))
        if fmt in ("csv", "json", "jsonl", "parquet"):
            assert shared == list(truth), fmt  # the CSV's columns, all of them, in order
        for name in shared:
            assert same(got[name], truth[name]), (fmt, name, got[name], truth[name])


@pytest.mark.parametrize("argv, shown", [
    (["taylor", "exp(x)*sin(y)", "--at", "x=0,y=0", "--order", "2"], "t.nc"),
    (["critical", "x^3 - 3x + y^3 - 3y", "--grid", "x=-3:3:13", "--grid", "y=-3:3:13"],
     "c.nc"),
    (["descend", "x^2 + 10y^2", "--from", "x=1,y=1", "--steps", "4"], "d.parquet"),
])
def test_row_tables_go_to_netcdf_and_parquet(cli, tmp_path, argv, shown) -> None:
    """The commands once refused as 'unknown' formats write tables that read back."""
    target = tmp_path / shown
    status, _, err = cli([*argv, "-q", "-o", str(target)])
    assert status == 0, err
    if shown.endswith(".nc"):
        import xarray as xr

        with xr.open_dataset(target) as ds:
            assert tuple(ds.sizes) == ("row",)
            if argv[0] == "taylor":  # exp(x)sin(y) = y + xy + ...: order 1 coefficient of y
                assert ds["order"].dtype == np.int64
                assert ds["order"].values.tolist() == [0, 1, 1, 2, 2, 2]
                assert ds["coefficient"].values.tolist() == [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]
            else:  # x^3-3x+y^3-3y: critical points at x, y = ±1
                pts = sorted(zip(ds["x"].values.round(12).tolist(),
                                 ds["y"].values.round(12).tolist(),
                                 ds["type"].values.tolist(), strict=True))
                assert pts == [(-1.0, -1.0, "maximum"), (-1.0, 1.0, "saddle"),
                               (1.0, -1.0, "saddle"), (1.0, 1.0, "minimum")]
    else:
        import pandas as pd

        frame = pd.read_parquet(target)
        assert list(frame.columns) == ["step", "x", "y", "f", "|grad f|"]
        assert frame["step"].dtype == np.int64 and frame["step"].tolist() == [0, 1, 2, 3, 4]
        # gd with lr 1e-3: x -> x(1 - 2e-3) per step, y -> y(1 - 2e-2)
        assert frame["x"].tolist()[1] == 1 - 2e-3 and frame["y"].tolist()[1] == 1 - 2e-2


@pytest.mark.parametrize("command", sorted(INTEGERS))
def test_integer_columns_are_integers_everywhere(cli, tmp_path, command) -> None:
    """descend's run and step, flow's run, taylor's order and deg(x): integers in CSV,
    JSON, JSON Lines, .npz, .npy, .nc and .parquet."""
    argv = ROW_COMMANDS[command] + (["--from", "x=0,y=1"] if command == "flow" else [])
    names = INTEGERS[command] + (["run"] if command == "flow" else [])
    _, out, _ = cli([*argv, "-q", "-f", "csv"])
    columns = csv_columns(out)
    for name in names:
        assert all(re.fullmatch(r"-?\d+", v) for v in columns[name]), (name, columns[name])
    _, out, _ = cli([*argv, "-q", "-f", "json"])
    doc = json.loads(out)
    for name in names:
        j = doc["columns"].index(name)
        assert all(type(r[j]) is int for r in doc["rows"])
    _, out, _ = cli([*argv, "-q", "-f", "jsonl"])
    for line in out.splitlines():
        assert all(type(json.loads(line)[name]) is int for name in names)
    for ext in ("npz", "npy", "nc", "parquet"):
        target = tmp_path / f"o.{ext}"
        assert cli([*argv, "-q", "-o", str(target)])[0] == 0
        if ext == "npz":
            with np.load(target) as data:
                kinds = {n: data[n].dtype.kind for n in names}
        elif ext == "npy":
            rec = np.load(target)
            kinds = {n: rec.dtype[n].kind for n in names}
        elif ext == "nc":
            import xarray as xr

            with xr.open_dataset(target) as ds:
                by_long = {ds[v].attrs["long_name"]: ds[v] for v in ds.variables}
                kinds = {n: by_long[n].dtype.kind for n in names}
        else:
            import pandas as pd

            frame = pd.read_parquet(target)
            kinds = {n: frame[n].dtype.kind for n in names}
        assert set(kinds.values()) <= {"i"}, (ext, kinds)


def test_integer_table_cells_have_no_decimals(cli) -> None:
    """A table shows descend's step 1000 as 1000, not 1e+03 or 1000.0."""
    status, out, _ = cli(["descend", "x^2", "--from", "x=1", "--steps", "1000",
                                  "--every", "1000", "-q", "-f", "table"])
    assert status == 0
    cells = [line.split("│")[1].strip() for line in out.splitlines() if line.count("│") > 2]
    assert cells == ["0", "1000"], cells


def test_float32_results_print_float32_digits(cli, tmp_path) -> None:
    """The shortest text that reads back as the same float32: sin(1)cos(2) in float32 is
    -0.35017547 (numpy 2: str(np.float32(np.sin(np.float32(1)) * np.cos(np.float32(2))))),
    and 1/6 in float32 is 0.16666667."""
    argv = ["grad", "sin(x)*cos(y)", "--at", "x=1,y=2", "--dtype", "float32"]
    _, out, _ = cli([*argv, "-f", "csv"])
    assert out.splitlines()[1].split(",")[:3] == ["1.0", "2.0", "-0.35017547"]
    for value in out.splitlines()[1].split(","):
        assert str(np.float32(value)) == value  # shortest for float32
    _, out, _ = cli([*argv, "-f", "json"])
    assert '"-0.35017547"' not in out and "-0.35017547," in out
    _, out, _ = cli([*argv, "-f", "jsonl"])
    assert json.loads(out)["f"] == float("-0.35017547")
    _, out, _ = cli(["taylor", "exp(x)", "--at", "x=0", "--order", "4", "--dtype",
                             "float32", "--polynomial"])
    assert out == "1 + x + 0.5 * x ^ 2 + 0.16666667 * x ^ 3 + 0.041666668 * x ^ 4\n"
    _, out, _ = cli(["taylor", "exp(x)", "--at", "x=0", "--order", "3", "--dtype",
                             "float32", "-f", "csv"])
    assert out.splitlines()[-1] == "0.0,3,3,0.16666667,1.0"


def test_float64_text_is_unchanged(cli) -> None:
    """float64 keeps repr's digits."""
    _, out, _ = cli(["grad", "sin(x)*cos(y)", "--at", "x=1,y=2", "-f", "csv"])
    f = np.sin(1.0) * np.cos(2.0)
    assert out.splitlines()[1].split(",")[2] == repr(float(f))


def test_float32_grid_uses_the_vectorised_formatter(cli) -> None:
    """A grid large enough for the vectorised path gives the same float32 texts."""
    _, out, _ = cli(["eval", "x/3", "--grid", "x=0:1:5001", "--dtype", "float32",
                             "-f", "csv"])
    lines = out.splitlines()[1:]
    assert len(lines) == 5001
    xs = np.linspace(0, 1, 5001)
    expect = [str(np.float32(x) / np.float32(3)) for x in xs]
    got = [line.split(",")[1] for line in lines]
    assert sum(g != e for g, e in zip(got, expect, strict=True)) == 0


def test_jsonl_rows_and_non_finite_values(cli) -> None:
    """One object per row in column order; nan and inf as JSON's strings."""
    status, out, _ = cli(["eval", "log(x)", "--at", "x=0", "--at", "x=-1", "--at",
                                  "x=1", "-f", "jsonl", "-q"])
    assert status == 0
    assert out == ('{"x": 0.0, "f": "-inf"}\n{"x": -1.0, "f": "nan"}\n'
                   '{"x": 1.0, "f": 0.0}\n')


def test_jsonl_by_extension_is_atomic(cli, tmp_path) -> None:
    """-o out.jsonl writes the file whole; a missing directory leaves nothing."""
    target = tmp_path / "out.jsonl"
    assert cli(["grad", "x*y", "--grid", "x=0:1:3", "--grid", "y=0:1:2", "-o",
                        str(target)])[0] == 0
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert len(rows) == 6 and rows[-1] == {"x": 1.0, "y": 1.0, "f": 1.0, "df/dx": 1.0,
                                           "df/dy": 1.0}
    status, out, err = cli(["grad", "x*y", "--grid", "x=0:1:3", "--grid", "y=0:1:2",
                                    "-o", str(tmp_path / "no" / "out.jsonl")])
    assert status == 1 and out == ""
    assert err.startswith(f"gradcli: error: cannot write '{tmp_path / 'no' / 'out.jsonl'}'")
    assert sorted(os.listdir(tmp_path)) == ["out.jsonl"]


def test_jsonl_needs_no_file_and_npz_does(cli) -> None:
    """-f jsonl goes to standard output; -f npz without -o is refused naming the fix."""
    status, _, err = cli(["descend", "x^2", "--from", "x=1", "-f", "npz"])
    assert status == 2 and err == "gradcli: error: npz output needs a file: add -o out.npz\n"


def test_jsonl_streams_a_large_grid(tmp_path) -> None:
    """The first line arrives while the process is still computing the rest."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradcli", "grad", "sin(x)*cos(y)*exp(x*y)", "--grid",
         "x=0:1:4000", "--grid", "y=0:1:2000", "-f", "jsonl", "-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    try:
        first = proc.stdout.readline()
        still_running = proc.poll() is None
    finally:
        proc.kill()
        proc.communicate()
    # d/dx sin(x)cos(y)exp(xy) at 0 is cos(0) = 1; d/dy there is sin(0)(...) = 0
    assert json.loads(first) == {"x": 0.0, "y": 0.0, "f": 0.0, "df/dx": 1.0, "df/dy": 0.0}
    assert still_running


def test_jsonl_streams_a_long_descent(tmp_path) -> None:
    """One run's rows go out as they are recorded: step 0 arrives while it descends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "gradcli", "descend", "x^2 + 10y^2", "--from", "x=1,y=1",
         "--steps", "5000000", "--every", "1000", "-f", "jsonl"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    try:
        first = proc.stdout.readline()
        still_running = proc.poll() is None
    finally:
        proc.kill()
        proc.communicate()
    # f = 1 + 10 = 11 and |grad f| = |(2, 20)| at the start
    assert json.loads(first) == {"step": 0, "x": 1.0, "y": 1.0, "f": 11.0,
                                 "|grad f|": float(np.hypot(2.0, 20.0))}
    assert still_running


def test_a_streamed_descent_equals_the_written_file(cli, tmp_path) -> None:
    """The rows streamed to standard output are the bytes -o FILE.jsonl holds."""
    argv = ["descend", "x^2 + 10y^2", "--from", "x=1,y=1", "--steps", "50", "--every", "7",
            "--method", "newton", "-q"]
    status, streamed, _ = cli([*argv, "-f", "jsonl"])
    assert status == 0
    assert cli([*argv, "-o", str(tmp_path / "d.jsonl")])[0] == 0
    assert streamed == (tmp_path / "d.jsonl").read_text()
    assert [json.loads(line)["step"] for line in streamed.splitlines()][:2] == [0, 1]
