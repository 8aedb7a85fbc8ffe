"""The interactive page (``-o field.html``): self-contained, reproducible, and its
embedded data and hover text are the engine's numbers (checked here against closed forms
and against ``gradcli grad`` at the same point). The real-browser test is
test_plot_browser.py."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from gradcli.cli.main import main

importlib.import_module("plotly")

FIELD = ["sin(x)*cos(y)", "--grid", "x=0:2pi:40", "--grid", "y=0:2pi:30"]


def page_spec(path) -> dict:
    """The figure (data, layout, config) embedded in a page written by gradcli."""
    text = path.read_text(encoding="utf-8")
    start = text.index("const spec = ") + len("const spec = ")
    end = text.index(";\nPlotly.newPlot(", start)
    return json.loads(text[start:end])


def hover_values(label: str) -> dict[str, float]:
    """``name = number`` lines of a hover label, as floats."""
    out = {}
    for line in label.split("<br>"):
        name, _, value = line.partition(" = ")
        out[name] = float(value.split(" ")[0])
    return out


def grad_at(capsys, expr: str, point: str) -> dict[str, float]:
    """What ``gradcli grad EXPR --at POINT`` prints, as {column: value}."""
    assert main(["grad", expr, "--at", point, "-f", "csv"]) == 0
    header, row = capsys.readouterr().out.strip().splitlines()
    return dict(zip(header.split(","), map(float, row.split(",")), strict=True))


def write(tmp_path, capsys, args, name="f.html") -> tuple:
    out = tmp_path / name
    status = main(["plot", *args, "-o", str(out)])
    return status, capsys.readouterr().err, out


def test_page_is_self_contained_and_the_same_bytes_every_time(tmp_path, capsys):
    status, err, out = write(tmp_path, capsys, FIELD)
    assert (status, err) == (0, "")
    first = out.read_bytes()
    text = first.decode()
    assert "plotly.js v" in text[:20_000]  # the library is embedded ...
    assert not re.search(r"<(script|link|img|iframe)[^>]*\b(src|href)\s*=", text)  # ... not fetched
    assert 'id="gradcli-plot"' in text
    assert write(tmp_path, capsys, FIELD)[0] == 0
    assert out.read_bytes() == first
    assert os.listdir(tmp_path) == ["f.html"]


def test_heatmap_and_hover_are_the_engines_numbers(tmp_path, capsys):
    out = write(tmp_path, capsys, FIELD)[2]
    heat = page_spec(out)["data"][0]
    x, y = np.array(heat["x"]), np.array(heat["y"])
    np.testing.assert_allclose(x, np.linspace(0, 2 * np.pi, 40), rtol=0, atol=1e-15)
    z = np.array(heat["z"])  # rows are y
    np.testing.assert_allclose(z, np.outer(np.cos(y), np.sin(x)), atol=1e-12)
    assert heat["hovertemplate"] == "%{text}<extra></extra>"
    for j, i in ((7, 11), (0, 0), (29, 39)):
        shown = hover_values(heat["text"][j][i])
        assert list(shown) == ["x", "y", "f", "df/dx", "df/dy"]
        assert (shown["x"], shown["y"]) == (x[i], y[j])
        truth = grad_at(capsys, "sin(x)*cos(y)", f"x={float(x[i])!r},y={float(y[j])!r}")
        for name in ("f", "df/dx", "df/dy"):
            assert shown[name] == pytest.approx(truth[name], rel=1e-14, abs=1e-15)


def _arrow_shafts(spec) -> tuple[np.ndarray, np.ndarray]:
    """Midpoints and directions of the drawn (black) arrows."""
    trace = next(t for t in spec["data"] if t["type"] == "scatter"
                 and t["line"]["color"] == "black")
    xs, ys = trace["x"], trace["y"]
    mids, dirs = [], []
    for k in range(0, len(xs), 7):  # tail, tip, gap, barb, tip, barb, gap
        (tx, hx), (ty, hy) = xs[k:k + 2], ys[k:k + 2]
        mids.append(((tx + hx) / 2, (ty + hy) / 2))
        dirs.append((hx - tx, hy - ty))
    return np.array(mids), np.array(dirs)


def test_arrows_point_along_the_gradient(tmp_path, capsys):
    out = write(tmp_path, capsys, [*FIELD, "--every", "3"])[2]
    mids, dirs = _arrow_shafts(page_spec(out))
    assert len(mids) == (40 // 3) * (30 // 3)  # every lattice point
    gx = np.cos(mids[:, 0]) * np.cos(mids[:, 1])
    gy = -np.sin(mids[:, 0]) * np.sin(mids[:, 1])
    cross = dirs[:, 0] * gy - dirs[:, 1] * gx
    dot = dirs[:, 0] * gx + dirs[:, 1] * gy
    np.testing.assert_allclose(cross, 0, atol=1e-12)
    assert np.all(dot >= 0)


def test_singular_field_page_marks_clipped_arrows(tmp_path, capsys):
    args = ["1/(x^2 + y^2)", "--grid", "x=-1:1:40", "--grid", "y=-1:1:40"]
    spec = page_spec(write(tmp_path, capsys, args)[2])
    clipped = [t for t in spec["data"] if t.get("showlegend")]
    assert len(clipped) == 1 and "clipped to full length" in clipped[0]["name"]


def test_curve_page_shows_f_and_its_derivative(tmp_path, capsys):
    out = write(tmp_path, capsys, ["[sin(x), x^2]", "--grid", "x=-1:1:21"])[2]
    traces = page_spec(out)["data"]
    assert [t["name"] for t in traces] == ["f[0] = sin(x)", "df[0]/dx", "f[1] = x^2",
                                           "df[1]/dx"]
    x = np.array(traces[0]["x"])
    for t, want in zip(traces, (np.sin(x), np.cos(x), x * x, 2 * x), strict=True):
        np.testing.assert_allclose(t["y"], want, atol=1e-12)
    label = hover_values(traces[0]["text"][5])
    assert list(label) == ["x", "f[0]", "f[1]", "df[0]/dx", "df[1]/dx"]
    assert label["df[1]/dx"] == pytest.approx(2 * label["x"], abs=1e-15)


def test_tan_page_breaks_at_the_poles(tmp_path, capsys):
    out = write(tmp_path, capsys, ["tan(x)", "--grid", "x=0:2pi:200"])[2]
    curve = page_spec(out)["data"][0]
    assert curve["y"].count(None) == 2


def test_3d_field_is_drawn_as_cones_with_engine_hover(tmp_path, capsys):
    args = ["x*y*z", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5", "--grid", "z=0:2:5"]
    spec = page_spec(write(tmp_path, capsys, args)[2])
    cones = [t for t in spec["data"] if t["type"] == "cone"]
    assert cones
    for t in cones:
        X, Y, Z = (np.array(t[k]) for k in "xyz")
        U, V, W = (np.array(t[k]) for k in "uvw")
        g = np.stack([Y * Z, X * Z, X * Y], axis=1)
        d = np.stack([U, V, W], axis=1)
        np.testing.assert_allclose(np.cross(d, g), 0, atol=1e-12)
        for k in (0, len(X) - 1):
            shown = hover_values(t["text"][k])
            assert list(shown) == ["x", "y", "z", "f", "df/dx", "df/dy", "df/dz"]
            assert shown["df/dz"] == pytest.approx(shown["x"] * shown["y"], abs=1e-15)
    assert sum(len(t["x"]) for t in cones) == 125  # one cone per grid point


def test_slice_page_paints_the_normal_component(tmp_path, capsys):
    args = ["x*y*z", "--grid", "x=-1:1:9", "--grid", "y=-1:1:9", "--grid", "z=-1:1:9",
            "--slice", "z=0.5"]
    heat = page_spec(write(tmp_path, capsys, args)[2])["data"][0]
    x, y = np.array(heat["x"]), np.array(heat["y"])
    np.testing.assert_allclose(heat["z"], np.outer(y, x), atol=1e-15)  # df/dz = x*y
    assert "across the slice z = 0.5" in heat["colorbar"]["title"]["text"]
    assert "z = 0.5 (held)" in heat["text"][0][0]


def test_without_plotly_the_page_is_refused_naming_the_extra(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "plotly" else real(name, *a))
    status, err, out = write(tmp_path, capsys, FIELD)
    assert status == 2
    assert "pip install 'gradcli[html]'" in err and err.count("\n") == 1
    assert os.listdir(tmp_path) == []


def test_the_page_does_not_load_matplotlib(tmp_path):
    code = ("import sys; from gradcli.cli.main import main; "
            f"main(['plot', 'x*y', '--grid', 'x=0:1:5', '--grid', 'y=0:1:5', '-o', "
            f"{str(tmp_path / 'p.html')!r}]); print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


def test_a_page_too_big_to_open_is_refused(tmp_path, capsys):
    status, err, out = write(tmp_path, capsys, ["x*y", "--grid", "x=0:1:600", "--grid",
                                                "y=0:1:500"])
    assert status == 2 and "300,000 grid points is too many for a page" in err
    assert os.listdir(tmp_path) == []
