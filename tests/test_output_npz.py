"""NPZ writer, NpyStream and assemble_npz."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.output import OutputError
from gradcli.output.npz_writer import NpyStream, assemble_npz, write_npz


def test_keys_exact_and_grid_broadcast(tmp_path) -> None:
    xs, ys = np.linspace(0, 1, 4), np.linspace(-1, 1, 3)
    cols = {"x": xs[:, None], "y": ys[None, :], "df/dx": 2 * xs[:, None] + 0 * ys,
            "df[0]/dy": np.full((4, 3), np.nan), "file": np.zeros((4, 3))}
    path = tmp_path / "g.npz"
    write_npz(path, cols)
    with np.load(path) as data:
        assert list(data.keys()) == ["x", "y", "df/dx", "df[0]/dy", "file"]
        gx, gy = np.meshgrid(xs, ys, indexing="ij")
        assert np.array_equal(data["x"], gx)
        assert np.array_equal(data["y"], gy)
        assert np.array_equal(data["df/dx"], 2 * gx)
        assert np.isnan(data["df[0]/dy"]).all() and data["df[0]/dy"].shape == (4, 3)
    assert [p.name for p in tmp_path.iterdir()] == ["g.npz"]


def test_stream_three_columns_round_trip(tmp_path) -> None:
    shape = (50, 40)
    rng = np.random.default_rng(0)
    full = {name: rng.standard_normal(shape) for name in ("x", "y", "df/dx")}
    parts = {}
    for i, (name, arr) in enumerate(full.items()):
        parts[name] = tmp_path / f"part{i}.npy"
        with NpyStream(parts[name], shape) as stream:
            flat = arr.reshape(-1)
            for start in range(0, flat.size, 333):  # blocks not aligned to rows
                stream.write(flat[start:start + 333])
        assert np.array_equal(np.load(parts[name]), arr)
    out = tmp_path / "big.npz"
    assemble_npz(out, parts, remove=True)
    with np.load(out) as data:
        assert list(data.keys()) == list(full)
        for name, arr in full.items():
            assert np.array_equal(data[name], arr)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.npz"]


def test_stream_size_validation(tmp_path) -> None:
    path = tmp_path / "s.npy"
    stream = NpyStream(path, (2, 3), np.float32)
    stream.write(np.ones(4))
    with pytest.raises(OutputError, match="expected 6"):
        stream.close()
    assert not path.exists()
    with pytest.raises(OutputError, match="more than"), NpyStream(path, (2,)) as s:
        s.write(np.ones(3))
    assert not path.exists()


def test_assemble_missing_source(tmp_path) -> None:
    with pytest.raises(OutputError, match="cannot read"):
        assemble_npz(tmp_path / "o.npz", {"a": tmp_path / "missing.npy"})
    assert list(tmp_path.iterdir()) == []
