"""``plot ... --animate VAR=a:b:n -o page.html``: one page with a play button and a slider
over the variable (plotly frames), the colour scale fixed across frames, and every
frame's hover labels from the engine (closed forms of sin(x - t)·cos(y) and its partials
here; the real browser moves the slider in test_plot_browser.py)."""

from __future__ import annotations

import importlib
import json
import math

import numpy as np
import pytest

from gradcli.cli.main import main

importlib.import_module("plotly")

WAVE = ["sin(x-t)*cos(y)", "--grid", "x=0:2pi:12", "--grid", "y=0:2pi:10", "--animate",
        "t=0:2pi:6"]


def _spec(path) -> dict:
    text = path.read_text(encoding="utf-8")
    start = text.index("const spec = ") + len("const spec = ")
    return json.loads(text[start:text.index(";\nPlotly.newPlot(", start)])


def _write(tmp_path, capsys, args, name="wave.html"):
    out = tmp_path / name
    assert main(["plot", *args, "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    return out


def test_the_page_has_a_frame_per_value_a_play_button_and_a_slider(tmp_path, capsys):
    spec = _spec(_write(tmp_path, capsys, WAVE))
    ts = np.linspace(0, 2 * math.pi, 6)
    assert len(spec["frames"]) == 6
    buttons = spec["layout"]["updatemenus"][0]["buttons"]
    assert [b["label"] for b in buttons] == ["Play", "Pause"]
    assert buttons[0]["args"][1]["frame"]["duration"] == round(1000 / 12)  # --fps default
    slider = spec["layout"]["sliders"][0]
    assert slider["currentvalue"]["prefix"] == "t = "
    assert [s["label"] for s in slider["steps"]] == [f"{t:.4g}" for t in ts]
    assert [s["args"][0] for s in slider["steps"]] == [[f["name"]] for f in spec["frames"]]
    assert spec["data"] == spec["frames"][0]["data"]


def test_one_colour_scale_and_the_engines_values_in_every_frame(tmp_path, capsys):
    """The heatmap of frame k is sin(x - t_k)·cos(y); its hover label at a grid point says
    t_k held, f and both partials (cos(x - t)·cos(y), -sin(x - t)·sin(y))."""
    spec = _spec(_write(tmp_path, capsys, WAVE))
    x, y = np.linspace(0, 2 * math.pi, 12), np.linspace(0, 2 * math.pi, 10)
    limits = set()
    for k, t in enumerate(np.linspace(0, 2 * math.pi, 6)):
        heat = spec["frames"][k]["data"][0]
        limits.add((heat["zmin"], heat["zmax"]))
        z = np.array(heat["z"])  # y rows, x columns
        np.testing.assert_allclose(z, np.sin(x[None, :] - t) * np.cos(y[:, None]),
                                   atol=1e-15)
        label = heat["text"][7][4]
        lines = dict(line.split(" = ") for line in label.split("<br>"))
        assert lines["t"] == f"{float(t)!r} (held)"
        assert float(lines["x"]) == x[4] and float(lines["y"]) == y[7]
        assert float(lines["f"]) == pytest.approx(math.sin(x[4] - t) * math.cos(y[7]),
                                                  abs=1e-15)
        assert float(lines["df/dx"]) == pytest.approx(math.cos(x[4] - t) * math.cos(y[7]),
                                                      abs=1e-15)
        assert float(lines["df/dy"]) == pytest.approx(-math.sin(x[4] - t) * math.sin(y[7]),
                                                      abs=1e-15)
    assert len(limits) == 1
    lo, hi = limits.pop()
    assert lo == pytest.approx(-1, abs=0.05) and hi == pytest.approx(1, abs=0.05)


def test_the_page_is_byte_stable_and_curves_animate_too(tmp_path, capsys):
    a = _write(tmp_path, capsys, WAVE, "a.html").read_bytes()
    b = _write(tmp_path, capsys, WAVE, "b.html").read_bytes()
    assert a == b
    spec = _spec(_write(tmp_path, capsys, ["sin(x-t)", "--grid", "x=0:1:11", "--animate",
                                           "t=0:1:3", "--fps", "4"], "c.html"))
    assert len(spec["frames"]) == 3
    assert {tuple(f["data"][0]["y"][:1]) for f in spec["frames"]} == {
        (math.sin(-t),) for t in (0.0, 0.5, 1.0)}
    ranges = {tuple(spec["layout"]["yaxis"]["range"])}
    assert len(ranges) == 1
    assert spec["layout"]["updatemenus"][0]["buttons"][0]["args"][1]["frame"]["duration"] \
        == 250


@pytest.mark.parametrize("args, message", [
    (["x*y*z*t", "--grid", "x=0:1:4", "--grid", "y=0:1:4", "--grid", "z=0:1:4",
      "--animate", "t=0:1:3"], "a 3-D field's page has no slider"),
    (["sin(x-t)*y", "--grid", "x=0:1:100", "--grid", "y=0:1:100", "--animate",
      "t=0:1:30"], "in each of 30 frames is too many for a page"),
    (["x*t", "--grid", "x=0:1:5", "--animate", "t=0:1:3", "-o", "a.png"],
     "NAME.gif, NAME.mp4 or NAME.html"),
])
def test_refused(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    out = [] if "-o" in args else ["-o", "p.html"]
    assert main(["plot", *args, *out]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


def test_the_page_takes_the_label_and_legend_options(tmp_path, capsys):
    """--xlabel, --ylabel and --colorbar-label are the page's axis and colour bar titles
    (escaped: plotly renders HTML in them); --legend none hides the legend, outside puts
    it below the plot."""
    spec = _spec(_write(tmp_path, capsys, [
        "x^2 + y^2", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5", "--xlabel", "<b>t</b>",
        "--ylabel", "h (m)", "--colorbar-label", "E", "--legend", "none"], "a.html"))
    layout = spec["layout"]
    assert layout["xaxis"]["title"]["text"] == "&lt;b&gt;t&lt;/b&gt;"
    assert layout["yaxis"]["title"]["text"] == "h (m)"
    assert spec["data"][0]["colorbar"]["title"]["text"] == "E"
    assert layout["showlegend"] is False
    spec = _spec(_write(tmp_path, capsys, ["[sin(x), cos(x)]", "--grid", "x=0:1:5",
                                           "--ylabel", "y", "--legend", "outside"], "b.html"))
    assert spec["layout"]["yaxis"]["title"]["text"] == "y"
    assert spec["layout"]["legend"]["y"] < 0 and "showlegend" not in spec["layout"]
