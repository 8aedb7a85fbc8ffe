"""JSON writer: strict JSON, schema, exact values, non-finite as strings."""

from __future__ import annotations

import io
import json

import numpy as np

from gradcli.output.json_writer import dumps_json, write_json, write_json_path


def _strict_loads(text: str) -> dict:
    def reject(token: str) -> None:
        raise AssertionError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=reject)


def test_schema_and_values() -> None:
    cols = {"x": np.array([0.1, 2.0, -0.0]), "f": np.array([1 / 3, np.nan, -np.inf]),
            "df/dx": np.array([np.inf, 1e-300, 5e-324])}
    text = dumps_json(cols, expression="x**2", variables=["x"], notes=["v: shape (2,)"])
    doc = _strict_loads(text)
    assert doc["expression"] == "x**2"
    assert doc["variables"] == ["x"]
    assert doc["columns"] == ["x", "f", "df/dx"]
    assert doc["notes"] == ["v: shape (2,)"]
    assert doc["rows"] == [[0.1, 1 / 3, "inf"], [2.0, "nan", 1e-300], [-0.0, "-inf", 5e-324]]
    assert str(doc["rows"][2][0]) == "-0.0"


def test_bit_exact_random_and_grid() -> None:
    rng = np.random.default_rng(3)
    xs = rng.standard_normal(13) * 1e5
    ys = rng.random(11)
    cols = {"x": xs[:, None], "y": ys[None, :], "f": np.sin(xs[:, None]) * ys[None, :]}
    buf = io.BytesIO()
    assert write_json(buf, cols, expression="sin(x)*y", variables=["x", "y"], chunk_rows=10) == 143
    doc = _strict_loads(buf.getvalue().decode("utf-8"))
    rows = np.array(doc["rows"])
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    assert rows.shape == (143, 3)
    assert np.array_equal(rows[:, 0].view(np.int64), gx.ravel().view(np.int64))
    assert np.array_equal(rows[:, 1], gy.ravel())
    assert np.array_equal(rows[:, 2], (np.sin(gx) * gy).ravel())


def test_empty_and_unicode(tmp_path) -> None:
    doc = _strict_loads(dumps_json({"vᵀJ": np.array([])}, notes=["vᵀJ: shape (0,)"]))
    assert doc["rows"] == [] and doc["columns"] == ["vᵀJ"]
    target = tmp_path / "r.json"
    write_json_path(target, {"a": np.array([1.0])}, expression="a")
    assert _strict_loads(target.read_text(encoding="utf-8"))["rows"] == [[1.0]]
