"""NPZ writer and NpyStream."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.output import OutputError
from gradcli.output.npz_writer import NpyStream, write_npz


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


def test_stream_round_trip_in_unaligned_pieces(tmp_path) -> None:
    shape = (50, 40)
    arr = np.random.default_rng(0).standard_normal(shape)
    path = tmp_path / "part.npy"
    with NpyStream(path, shape) as stream:
        flat = arr.reshape(-1)
        for start in range(0, flat.size, 333):  # blocks not aligned to rows
            stream.write(flat[start:start + 333])
    assert np.array_equal(np.load(path), arr)


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
