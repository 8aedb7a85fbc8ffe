"""The interactive page in a real headless browser: Debian's Chromium, driven by Playwright
(the Python package, pointed at that Chromium: Playwright's own browser download is not
used). The page must load without console errors and without fetching anything, and the
tooltip read back from a real mouse hover must say what ``gradcli grad`` says at that
point.

Without Chromium or playwright these tests skip, naming what to install; ``make
test-browser`` installs both and runs them with GRADCLI_REQUIRE_BROWSER=1, where a
missing browser is a failure instead. With GRADCLI_SCREENSHOT=PATH the hover test also
saves its screenshot there (``make samples`` uses it for samples/html_field.png).
"""

from __future__ import annotations

import importlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import chromium_context

from gradcli.cli.main import main

importlib.import_module("plotly")


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Any]:
    """A fresh Chromium profile, headless, with the network features off."""
    yield from chromium_context(tmp_path_factory.mktemp("chromium-profile"))


class Page:
    """A loaded page with the console errors and requests it made."""

    def __init__(self, context: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text)
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.url = path.resolve().as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("#gradcli-plot .main-svg", timeout=30_000)

    def hover(self, x: float, y: float, axes: str = "") -> list[str]:
        """Move the mouse over data point (x, y); return the tooltip's lines."""
        at = self.page.evaluate(
            """([x, y, axes]) => {
                const gd = document.getElementById('gradcli-plot');
                const xa = gd._fullLayout['xaxis' + axes], ya = gd._fullLayout['yaxis' + axes];
                const box = gd.getBoundingClientRect();
                return [box.left + xa._offset + xa.d2p(x), box.top + ya._offset + ya.d2p(y)];
            }""", [x, y, axes])
        self.page.mouse.move(*at)
        self.page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
        return self.page.eval_on_selector(
            ".hoverlayer .hovertext",
            "e => Array.from(e.querySelectorAll('tspan.line')).map(t => t.textContent)")


def _values(lines: list[str]) -> dict[str, float]:
    out = {}
    for line in lines:
        name, _, value = line.partition(" = ")
        out[name] = float(value.split(" ")[0])
    return out


def _grad(capsys, expr: str, point: str) -> dict[str, float]:
    capsys.readouterr()
    assert main(["grad", expr, "--at", point, "-f", "csv"]) == 0
    header, row = capsys.readouterr().out.strip().splitlines()
    return dict(zip(header.split(","), map(float, row.split(",")), strict=True))


def _page(tmp_path, capsys, args: list[str]) -> Path:
    out = tmp_path / "page.html"
    assert main(["plot", *args, "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    return out


def test_field_page_hover_shows_the_engines_gradient(browser, tmp_path, capsys):
    import numpy as np

    expr = "sin(x)*cos(y)"
    out = _page(tmp_path, capsys, [expr, "--grid", "x=0:2pi:60", "--grid", "y=0:2pi:60"])
    page = Page(browser, out)
    x = np.linspace(0, 2 * np.pi, 60)
    px, py = float(x[13]), float(x[41])
    shown = _values(page.hover(px, py))
    assert list(shown) == ["x", "y", "f", "df/dx", "df/dy"]
    assert (shown["x"], shown["y"]) == (px, py)
    truth = _grad(capsys, expr, f"x={px!r},y={py!r}")
    for name in ("f", "df/dx", "df/dy"):
        assert shown[name] == pytest.approx(truth[name], rel=1e-14, abs=1e-15)
    shot = tmp_path / "html_field.png"
    page.page.screenshot(path=str(shot))
    if os.environ.get("GRADCLI_SCREENSHOT"):
        shutil.copyfile(shot, os.environ["GRADCLI_SCREENSHOT"])
    assert page.errors == []
    assert page.requests == [page.url]  # the page fetched nothing but itself


def test_curve_page_hover_shows_f_and_its_derivative(browser, tmp_path, capsys):
    import numpy as np

    out = _page(tmp_path, capsys, ["[sin(x), x^3]", "--grid", "x=-1:1:41"])
    page = Page(browser, out)
    x = float(np.linspace(-1, 1, 41)[30])
    shown = _values(page.hover(x, float(np.sin(x))))
    assert shown["x"] == x
    truth = _grad(capsys, "sin(x)", f"x={x!r}")
    assert shown["f[0]"] == pytest.approx(truth["f"], rel=1e-15)
    assert shown["df[0]/dx"] == pytest.approx(truth["df/dx"], rel=1e-15)
    assert shown["df[1]/dx"] == pytest.approx(3 * x * x, rel=1e-15)
    assert page.errors == [] and page.requests == [page.url]


def test_cone_page_loads_without_errors(browser, tmp_path, capsys):
    out = _page(tmp_path, capsys, ["x*y*z", "--grid", "x=-1:1:6", "--grid", "y=-1:1:6",
                                   "--grid", "z=-1:1:6"])
    page = Page(browser, out)
    page.page.wait_for_selector("#gradcli-plot .gl-container canvas", state="attached",
                                timeout=30_000)
    assert page.errors == [] and page.requests == [page.url]


def test_animated_page_slider_moves_to_a_frame_whose_hover_is_the_engines(browser, tmp_path,
                                                                          capsys):
    """--animate t=0:2pi:12 to .html: a Play button and a slider over t; dragging the slider
    to the 8th frame shows t there, and the tooltip of a grid point then says what
    ``gradcli grad`` says at (x, y, t); the colour scale is the same in every frame."""
    import json

    import numpy as np

    expr = "sin(x-t)*cos(y)"
    out = _page(tmp_path, capsys, [expr, "--grid", "x=0:2pi:30", "--grid", "y=0:2pi:30",
                                   "--animate", "t=0:2pi:12"])
    page = Page(browser, out)
    assert page.page.locator(".updatemenu-button").count() == 2  # Play, Pause
    frames = page.page.evaluate("() => document.getElementById('gradcli-plot')"
                                "._transitionData._frames.length")
    assert frames == 12
    # drag the slider's grip from frame 0 to frame 7 with the mouse
    rail = page.page.locator(".slider-rail-rect").bounding_box()
    grip = page.page.locator(".slider-grip-rect").bounding_box()
    k = 7
    page.page.mouse.move(grip["x"] + grip["width"] / 2, grip["y"] + grip["height"] / 2)
    page.page.mouse.down()
    page.page.mouse.move(rail["x"] + rail["width"] * k / 11, grip["y"] + grip["height"] / 2,
                         steps=8)
    page.page.mouse.up()
    t = float(np.linspace(0, 2 * np.pi, 12)[k])
    page.page.wait_for_function(
        "t => Array.from(document.querySelectorAll('.slider-container .slider-label'))"
        ".some(e => e.textContent === t)", arg=f"t = {t:.4g}", timeout=10_000)
    x = np.linspace(0, 2 * np.pi, 30)
    px, py = float(x[9]), float(x[20])
    page.page.mouse.move(0, 0)
    shown = _values(page.hover(px, py))
    assert (shown["x"], shown["y"], shown["t"]) == (px, py, t)
    truth = _grad(capsys, expr, f"x={px!r},y={py!r},t={t!r}")
    for name in ("f", "df/dx", "df/dy"):
        assert shown[name] == pytest.approx(truth[name], rel=1e-14, abs=1e-15)
    spec = json.loads(out.read_text().split("const spec = ", 1)[1].split(";\nPlotly", 1)[0])
    limits = {(f["data"][0]["zmin"], f["data"][0]["zmax"]) for f in spec["frames"]}
    assert len(limits) == 1  # one colour scale for every frame
    assert page.errors == [] and page.requests == [page.url]
