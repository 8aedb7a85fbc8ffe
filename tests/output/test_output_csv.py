"""CSV writer: bit-exact shortest round trip, header quoting, grid row order."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from gradcli.output._floatfmt import format_rows
from gradcli.output.csv_writer import csv_header, write_csv, write_csv_path

SPECIAL = [0.0, -0.0, 0.1, 1 / 3, 29.0, 1e308, -1e308, 5e-324, 2.2250738585072014e-308,
           1.7976931348623157e308, 1e16, 1e15, 9999999999999998.0, 1e-4, 1e-5, 1e22, 1e23,
           2.0**53, 2.0**60, 123456789012345678.0, 5e-310, 100.0, 1e-7, -1.5e-300]


def _random_values(n: int = 20000) -> np.ndarray:
    rng = np.random.default_rng(42)
    bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    scaled = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 25, n)
    subnormal = rng.integers(1, 2**52, n // 10).view(np.float64)
    vals = np.concatenate([bits, scaled, rng.random(n), subnormal, SPECIAL,
                           [np.nan, np.inf, -np.inf]])
    return vals


def _parse(text: str) -> tuple[list[str], np.ndarray]:
    lines = text.splitlines()
    rows = [[float(v) for v in line.split(",")] for line in lines[1:]]
    return lines[0].split(","), np.array(rows, dtype=np.float64)


def test_round_trip_is_bit_exact_and_matches_repr() -> None:
    vals = _random_values()
    buf = io.StringIO()
    assert write_csv(buf, {"v": vals}) == vals.size
    lines = buf.getvalue().splitlines()
    assert lines[0] == "v"
    expected = ["nan" if np.isnan(v) else repr(v) for v in vals.tolist()]
    assert lines[1:] == expected
    back = np.array([float(s) for s in lines[1:]])
    finite = np.isfinite(vals)
    assert np.array_equal(back[finite].view(np.int64), vals[finite].view(np.int64))
    assert np.isnan(back[np.isnan(vals)]).all()
    assert list(back[np.isinf(vals)]) == [np.inf, -np.inf]


def test_specific_texts() -> None:
    text = format_rows(np.array([[0.1, 29.0, -0.0, 1e-05, 1e16, np.nan, -np.inf]])).decode()
    assert text == "0.1,29.0,-0.0,1e-05,1e+16,nan,-inf\n"


def test_multi_column_rows_and_header() -> None:
    rng = np.random.default_rng(1)
    cols = {"x": rng.random(1000), "y": rng.standard_normal(1000), "f": rng.random(1000) * 1e-9}
    buf = io.StringIO()
    write_csv(buf, cols, chunk_rows=97)  # odd chunking must not change anything
    header, data = _parse(buf.getvalue())
    assert header == ["x", "y", "f"]
    assert np.array_equal(data, np.column_stack(list(cols.values())))


def test_header_quoting_rfc4180() -> None:
    names = ["x", "df/dx", "a,b", 'say "hi"', "x[0]"]
    assert csv_header(names) == 'x,df/dx,"a,b","say ""hi""",x[0]\n'
    buf = io.StringIO()
    write_csv(buf, {n: np.arange(2.0) for n in names})
    assert next(csv.reader(io.StringIO(buf.getvalue()))) == names


def test_broadcast_grid_rows_in_c_order() -> None:
    xs = np.linspace(-1, 1, 7)
    ys = np.linspace(0, 3, 5)
    cols = {"x": xs[:, None], "y": ys[None, :], "f": xs[:, None] ** 2 + ys[None, :]}
    buf = io.StringIO()
    write_csv(buf, cols, chunk_rows=4)
    _, data = _parse(buf.getvalue())
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    assert data.shape == (35, 3)
    assert np.array_equal(data[:, 0], gx.ravel())
    assert np.array_equal(data[:, 1], gy.ravel())
    assert np.array_equal(data[:, 2], (gx**2 + gy).ravel())


def test_binary_file_and_path(tmp_path) -> None:
    buf = io.BytesIO()
    write_csv(buf, {"a": np.array([1.5, 2.0])})
    assert buf.getvalue() == b"a\n1.5\n2.0\n"
    target = tmp_path / "out.csv"
    assert write_csv_path(target, {"a": np.array([3.0]), "b": np.array([np.inf])}) == 1
    assert target.read_text() == "a,b\n3.0,inf\n"


def test_float32_and_int_columns_round_trip() -> None:
    f32 = np.array([0.1, 1 / 3, 3.4e38], dtype=np.float32)
    buf = io.StringIO()
    write_csv(buf, {"a": f32, "i": np.array([1, 2, 3])})
    _, data = _parse(buf.getvalue())
    assert np.array_equal(data[:, 0].astype(np.float32), f32)
    assert list(data[:, 1]) == [1.0, 2.0, 3.0]


def test_complex_rejected() -> None:
    with pytest.raises(TypeError, match="complex"):
        write_csv(io.StringIO(), {"z": np.array([1j])})
