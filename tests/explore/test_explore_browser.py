"""The explorer's page in a real headless browser (Debian's Chromium, driven by
Playwright, as the interactive-page tests do), served by a real ``gradcli explore``.

Truth is the command line: the hover and the panel say what ``gradcli grad``, ``gradcli
graph`` and the evaluated backward program (``--formula program``, each step run with
``gradcli eval``) print at that point; the Adam path's first iterates are ``gradcli
descend``'s; the commands the page shows, run, print the page's numbers. Without
Chromium or playwright these tests skip, naming what to install (``make test-browser``
makes a missing browser a failure). With GRADCLI_EXPLORE_SCREENSHOT=PATH the panel test
saves its screenshot there (``make samples``: samples/explore.png, the tutorial's).
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shlex
import signal
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from browser import chromium_context


@pytest.fixture(scope="module")
def browser(tmp_path_factory) -> Iterator[Any]:
    """A fresh Chromium profile, headless, with the network features off (the page is
    1280 × 960: the panel beside the picture)."""
    yield from chromium_context(tmp_path_factory.mktemp("chromium-profile"),
                                viewport={"width": 1280, "height": 960})


class Explore:
    """``gradcli explore ARGS --no-browser`` running; its address."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gradcli", "explore", *args, "--no-browser"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.process.stdout.readline()
        self.url = self.process.stdout.readline().strip()
        self.origin = self.url.split("/?")[0]

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert self.process.wait(10) == 143


class Page:
    """A page of the explorer, loaded; its console errors and the addresses it asked."""

    def __init__(self, context: Any, url: str) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page = context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text)
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.goto(url)
        self.page.wait_for_selector("body[data-ready='1']", timeout=30_000)
        self.settle()

    def settle(self) -> None:
        self.page.wait_for_function("() => document.body.dataset.busy === '0'",
                                    timeout=30_000)

    def at(self, x: float, y: float | None = None) -> list[float]:
        """Screen coordinates of data point (x, y) (a curve: y is f there)."""
        return self.page.evaluate(
            """([x, y]) => {
                const gd = document.getElementById('plot');
                const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
                const box = gd.getBoundingClientRect();
                return [box.left + xa._offset + xa.d2p(x),
                        box.top + ya._offset + ya.d2p(y === null ? 0 : y)];
            }""", [x, y])

    def hover(self, x: float, y: float) -> list[str]:
        self.page.mouse.move(*self.at(x, y))
        self.page.wait_for_selector(".hoverlayer .hovertext", timeout=10_000)
        return self.page.eval_on_selector(
            ".hoverlayer .hovertext",
            "e => Array.from(e.querySelectorAll('tspan.line')).map(t => t.textContent)")

    def click(self, x: float, y: float) -> None:
        self.page.mouse.click(*self.at(x, y))
        self.page.wait_for_selector("#values", timeout=10_000)
        self.settle()

    def rows(self, table: str) -> list[list[str]]:
        return self.page.eval_on_selector(
            f"#{table}", "t => Array.from(t.rows).map(r => Array.from(r.cells)"
            ".map(c => c.textContent))")

    def commands(self) -> list[str]:
        return self.page.eval_on_selector_all("#command code", "cs => cs.map(c => "
                                              "c.textContent)")

    def submit(self, expression: str) -> None:
        self.page.fill("#expression", expression)
        self.page.press("#expression", "Enter")
        self.page.wait_for_timeout(50)
        self.settle()


def _csv(out: str) -> list[dict[str, float]]:
    return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(out))]


def _run(cli, *argv: str) -> str:
    status, out, err = cli(*argv)
    assert status == 0, err
    return out


def _values(lines: list[str]) -> dict[str, float]:
    out = {}
    for line in lines:
        name, _, value = line.partition(" = ")
        out[name] = float(value.split(" ")[0])
    return out


@pytest.fixture(scope="module")
def explore() -> Iterator[Explore]:
    running = Explore("sin(x)*cos(y)", "--grid", "x=-3:3:61", "--grid", "y=-3:3:61")
    yield running
    running.stop()


def test_type_an_expression_and_see_the_field(browser, explore, cli):
    """The hover at a grid point is the engine's value and gradient there."""
    page = Page(browser, explore.url)
    expression = "x^2*y - y^3/3"
    page.submit(expression)
    assert page.page.evaluate("explorer.field.kind") == "scalar"
    x, y = -1.8, 0.6  # grid points of -3:3:61
    shown = _values(page.hover(x, y))
    assert list(shown) == ["x", "y", "f", "df/dx", "df/dy"]
    assert (shown["x"], shown["y"]) == pytest.approx((x, y), abs=1e-15)  # the grid's points
    point = f"x={shown['x']!r},y={shown['y']!r}"
    truth = _csv(_run(cli, "grad", expression, "--at", point, "-f", "csv"))[0]
    for name in ("f", "df/dx", "df/dy"):  # the same computation: equal to the last bit
        assert shown[name] == truth[name]
    assert page.errors == []
    assert all(r.startswith(explore.origin) for r in page.requests)  # nothing from elsewhere


def test_a_broken_expression_shows_the_clis_caret_message(browser, explore, cli):
    page = Page(browser, explore.url)
    page.submit("sin(x)*cos(y")
    shown = page.page.inner_text("#error")
    status, out, err = cli("grad", "sin(x)*cos(y", "--at", "x=1,y=1")
    assert status == 2
    assert shown == err.rstrip("\n")
    assert shown.splitlines()[1].index("^") == 2 + len("sin(x)*cos")
    # the last good picture stays
    assert page.page.evaluate("document.getElementById('plot').data[0].type") == "heatmap"
    assert page.page.evaluate("document.getElementById('plot').layout.title.text") == \
        "f(x, y) = sin(x)*cos(y)"
    assert [e for e in page.errors if "400 (Bad Request)" not in e] == []
    # a formula that parses but probably not as meant: the command line's warning line
    page.submit("sin(x/2pi)*y")
    status, out, err = cli("grad", "sin(x/2pi)*y", "--at", "x=1,y=1")
    assert status == 0 and err.startswith("warning: ")
    assert page.page.inner_text("#error.warning") == err.rstrip("\n")


def _panel(page: Page) -> dict[str, str]:
    return {row[0]: row[1] for row in page.rows("values")[1:]}


def test_the_panel_is_grad_graph_and_the_backward_program(browser, cli):
    """Click a point of a staged program: its gradient (gradcli grad), every node's value
    and adjoint (gradcli graph), each backward program step's value (the program run
    with gradcli eval) agree to the printed digits; an arrow key moves the point."""
    expression = "m = x*y; n = sin(m); n*x + m^2/4"
    server = Explore(expression, "--grid", "x=-2:2:41", "--grid", "y=-2:2:41")
    try:
        page = Page(browser, server.url)
        page.click(0.6, -1.3)
        panel = _panel(page)
        point = f"x={panel['x']},y={panel['y']}"
        # the pin is where the mouse was, to a pixel, rounded to a hundredth of the range
        assert (float(panel["x"]), float(panel["y"])) == pytest.approx((0.6, -1.3), abs=0.02)
        truth = _csv(_run(cli, "grad", expression, "--at", point, "-f", "csv"))[0]
        assert {k: float(v) for k, v in panel.items()} == truth
        graph = json.loads(_run(cli, "graph", expression, "--at", point, "-f", "json"))
        rows = page.rows("graph")[1:]
        assert [r[0].removesuffix(" (f)") for r in rows] == [n["id"] for n in graph["nodes"]]
        for row, node in zip(rows, graph["nodes"], strict=True):
            assert row[1] == node["op"] and row[2] == ", ".join(node["inputs"])
            assert float(row[3]) == node["value"] and float(row[4]) == node["adjoint"]
        program = _run(cli, "grad", expression, "--formula", "program").rstrip("\n")
        rows = page.rows("program")[1:]
        assert [r[0] for r in rows] == program.splitlines()
        for line, value in rows:
            step = line.split(" = ")[0]
            printed = _csv(_run(cli, "eval", f"{program}\n{step}", "--at", point, "-f",
                                "csv"))[0]["f"]
            assert float(value) == printed, step
        formula = page.page.inner_text("#formula")
        assert formula == _run(cli, "grad", expression, "--formula").rstrip("\n")
        if os.environ.get("GRADCLI_EXPLORE_SCREENSHOT"):
            page.page.click("#descend")
            page.page.wait_for_selector("#descend-table")
            page.settle()
            page.page.screenshot(path=os.environ["GRADCLI_EXPLORE_SCREENSHOT"])
            page.page.focus("#plot")  # the button took the keys
        page.page.keyboard.press("ArrowRight")  # the click gave the picture the keys: 0.1
        right = float(f"{float(panel['x']) + 0.1:.12g}")
        page.page.wait_for_function(f"() => explorer.state.p.x === {right!r}")
        page.settle()
        moved = _panel(page)
        assert float(moved["x"]) == right and moved["y"] == panel["y"]
        truth = _csv(_run(cli, "grad", expression, "--at", f"x={right!r},y={panel['y']}",
                          "-f", "csv"))[0]
        assert {k: float(v) for k, v in moved.items()} == truth
        assert page.errors == []
    finally:
        server.stop()


def test_adam_path_is_descends_and_the_commands_reproduce_the_page(browser, cli, tmp_path):
    expression = "(1-x)^2 + 5*(y-x^2)^2"
    server = Explore(expression, "--grid", "x=-2:2:41", "--grid", "y=-1:3:41",
                     "--point", "x=-1.2,y=1")
    try:
        page = Page(browser, server.url)
        page.page.select_option("#method", "adam")
        page.page.fill("#lr", "0.05")
        page.page.dispatch_event("#lr", "change")
        page.page.fill("#steps", "30")
        page.page.dispatch_event("#steps", "change")
        page.page.click("#descend")
        page.page.wait_for_selector("#descend-table")
        page.settle()
        rows = page.rows("descend-table")
        header, shown = rows[0], rows[1:12]  # steps 0 to 10
        truth = _csv(_run(cli, "descend", expression, "--from", "x=-1.2,y=1", "--method",
                          "adam", "--lr", "0.05", "--steps", "30", "-f", "csv"))
        assert [float(r[0]) for r in shown] == list(range(11))
        for row, want in zip(shown, truth[:11], strict=True):
            assert {k: float(v) for k, v in zip(header, row, strict=True)} == want
        # the commands the page shows, run as they are, print the page's numbers
        commands = page.commands()
        descend = next(c for c in commands if c.startswith("gradcli descend "))
        again = _csv(_run(cli, *shlex.split(descend)[1:], "-f", "csv"))
        assert again == truth
        grad = next(c for c in commands if c.startswith("gradcli grad ") and "--at" in c)
        again = _csv(_run(cli, *shlex.split(grad)[1:], "-f", "csv"))[0]
        assert {k: float(v) for k, v in _panel(page).items()} == again
        # the plot command's view, asked of gradcli grad, is the page's field, point for
        # point; and the command itself draws
        plot = shlex.split(commands[0])
        assert plot[:2] == ["gradcli", "plot"] and plot[-2:] == ["-o", "field.png"]
        rows = _csv(_run(cli, "grad", *plot[2:-2], "-f", "csv"))
        for name in ("f", "df/dx", "df/dy"):
            shown = page.page.evaluate(f"Array.from(explorer.field.columns[{name!r}])")
            assert shown == [r[name] for r in rows]
        assert cli(*plot[1:-1], str(tmp_path / "field.png"), "-q")[0] == 0
        # the share command names the same view
        share = page.page.inner_text("#share")
        assert share.startswith(f'gradcli explore "{expression}" --grid x=-2:2:41')
        assert "--point x=-1.2,y=1" in share
        # the address restores the view: expression, point, panel, path
        again_page = Page(browser, page.page.url)
        again_page.page.wait_for_selector("#descend-table")
        again_page.settle()
        assert again_page.page.input_value("#expression") == expression
        assert _panel(again_page) == _panel(page)
        assert again_page.rows("descend-table") == page.rows("descend-table")
        assert page.errors == [] and again_page.errors == []
    finally:
        server.stop()


def test_a_curve_has_its_derivative_and_the_tangent_at_the_point(browser, cli):
    server = Explore("x^3 - 2*x", "--grid", "x=-2:2:401", "--point", "x=1.5")
    try:
        page = Page(browser, server.url)
        page.page.wait_for_selector("#values")
        page.settle()
        names = page.page.evaluate("document.getElementById('plot').data.map(t => t.name)")
        assert names[:2] == ["f(x)", "df/dx"] and "tangent" in names
        truth = _csv(_run(cli, "grad", "x^3 - 2*x", "--at", "x=1.5", "-f", "csv"))[0]
        tangent = page.page.evaluate("document.getElementById('plot').data.find("
                                     "t => t.name === 'tangent')")
        slope = (tangent["y"][1] - tangent["y"][0]) / (tangent["x"][1] - tangent["x"][0])
        assert slope == pytest.approx(truth["df/dx"], rel=1e-12)  # two subtractions' rounding
        assert tangent["y"][0] == truth["f"] + truth["df/dx"] * (-2 - 1.5)
    finally:
        server.stop()


def test_three_variables_are_a_slice_with_a_slider(browser, cli):
    server = Explore("x*y + z^2*x", "--grid", "x=-1:1:21", "--grid", "y=-1:1:21")
    try:
        page = Page(browser, server.url)
        assert page.page.evaluate("explorer.field.held") == {"z": 0}
        page.page.eval_on_selector("#slider-z", "s => { s.value = '0.5'; "
                                   "s.dispatchEvent(new Event('input')); }")
        page.page.wait_for_function("() => explorer.field.held.z === 0.5")
        page.settle()
        shown = _values(page.hover(0.4, -0.2))
        assert shown["z"] == 0.5
        point = f"x={shown['x']!r},y={shown['y']!r},z=0.5"
        truth = _csv(_run(cli, "grad", "x*y + z^2*x", "--at", point, "-f", "csv"))[0]
        for name in ("f", "df/dx", "df/dy", "df/dz"):
            assert shown[name] == truth[name]
        assert "--at z=0.5" in page.commands()[0]
    finally:
        server.stop()


def test_zoom_re_evaluates_and_the_pin_drags(browser, cli):
    """Zooming asks the engine for the new range (a new grid, not a stretched picture);
    contours and the colour are drawn on request; dragging the pin moves the point."""
    server = Explore("x^2 + y^2", "--grid", "x=-2:2:41", "--grid", "y=-2:2:41",
                     "--point", "x=0.5,y=0.5")
    try:
        page = Page(browser, server.url)
        page.page.wait_for_selector("#values")
        page.settle()
        start, end = page.at(0.5, 0.5), page.at(1.0, -0.5)
        page.page.mouse.move(*start)
        page.page.mouse.down()
        page.page.mouse.move(*end, steps=5)
        page.page.mouse.up()
        page.page.wait_for_function("() => explorer.state.p.x > 0.9")
        page.settle()
        point = page.page.evaluate("explorer.state.p")
        assert point == pytest.approx({"x": 1.0, "y": -0.5}, abs=0.02)
        panel = _panel(page)
        truth = _csv(_run(cli, "grad", "x^2 + y^2", "--at",
                          f"x={panel['x']},y={panel['y']}", "-f", "csv"))[0]
        assert {k: float(v) for k, v in panel.items()} == truth
        page.page.evaluate("() => Plotly.relayout('plot', {'xaxis.range[0]': -1, "
                           "'xaxis.range[1]': 1, 'yaxis.range[0]': -0.5, "
                           "'yaxis.range[1]': 0.5})")
        page.page.wait_for_function("() => explorer.field.coords[1][0] === -0.5")
        page.settle()
        assert page.page.evaluate("explorer.state.g") == ["x=-1:1:41", "y=-0.5:0.5:41"]
        page.page.check("#contours")
        types = page.page.evaluate("document.getElementById('plot').data.map(t => t.type)")
        assert types[:2] == ["heatmap", "contour"]
        page.page.select_option("#color", "laplacian")
        page.page.wait_for_function("() => explorer.field.color === 'laplacian'")
        page.settle()
        z = page.page.evaluate("document.getElementById('plot').data[0].z")
        assert {v for row in z for v in row} == {4.0}  # ∇²(x² + y²) = 4 everywhere
        assert "--color laplacian --contour 14" in page.commands()[0]
        assert page.errors == []
    finally:
        server.stop()


def test_paths_and_critical_points_show_the_command_lines_units(browser, cli):
    """With --unit, the descent's, the flow line's and the critical points' tables head
    each column with its unit, as the command line's tables do, and hold its numbers."""
    expression = "k*(x^2 + y^2)"
    server = Explore(expression, "--grid", "x=-2:2:41", "--grid", "y=-2:2:41", "--at",
                     "k=3", "--unit", "x=m,y=m,k=J/m^2")
    try:
        page = Page(browser, server.url)
        page.click(1.0, 1.0)
        for kind in ("descend", "flow", "critical"):
            page.page.click(f"#{kind}")
            page.page.wait_for_selector(f"#{kind}-table")
            page.settle()
        head, first = page.rows("descend-table")[:2]
        assert head == ["step", "x [m]", "y [m]", "f [J]", "|grad f| [J/m]"]
        # the first row is the pinned point (hand): f = 3(x² + y²) J, |grad f| = 6|(x, y)|
        step, x, y, f, g = map(float, first)
        assert f == pytest.approx(3 * (x * x + y * y), rel=1e-5)  # 6 printed digits
        assert g == pytest.approx(6 * math.hypot(x, y), rel=1e-5)
        # the gradient flow's time is in m²/J (x over ∂f/∂x: m over J/m)
        assert page.rows("flow-table")[0] == ["t [m^2/J]", "x [m]", "y [m]", "|F| [J/m]"]
        head, row = page.rows("critical-table")
        assert head == ["x [m]", "y [m]", "f [J]", "type"]
        assert row[-1] == "minimum" and float(row[0]) == 0 and float(row[1]) == 0
        assert page.errors == []
    finally:
        server.stop()
