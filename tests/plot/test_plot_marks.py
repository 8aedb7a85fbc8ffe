"""The pictures' critical points, paths, flows and basins, at the data level.

Truths: Himmelblau's critical points from mpmath (tests/reference/critical_points.json);
x³ − 3x's at (±1, ∓2); gradient descent on x² + y² with lr 1/4 halves the point each
step; the rotation field's trajectory is the unit circle (to RK4's error).
"""

from __future__ import annotations

import importlib
import json
import re
from pathlib import Path

import numpy as np
import pytest

from gradcli.cli.main import main
from gradcli.cli.messages import usage_words
from gradcli.errors import EvaluationError
from gradcli.plot import PlotOptions, build_figure, compute_field, parse_options
from gradcli.plot.marks import with_marks

HIMMELBLAU = json.loads((Path(__file__).parents[1] / "reference" /
                         "critical_points.json").read_text())["functions"]["himmelblau"]
H_TEXT = HIMMELBLAU["expression"]
MINIMA = np.array([[float(p["x"]), float(p["y"])] for p in HIMMELBLAU["points"]
                   if p["type"] == "minimum"])


def _field(expr: str, grid: dict, **opts):
    options = parse_options(**opts)
    return with_marks(compute_field(expr, grid), options), options


def _scatter(ax, label_start: str) -> np.ndarray:
    hits = [c for c in ax.collections if str(c.get_label()).startswith(label_start)]
    assert len(hits) == 1, [c.get_label() for c in ax.collections]
    return np.asarray(hits[0].get_offsets())


def test_himmelblau_has_four_basins_around_its_minima():
    fl, opts = _field(H_TEXT, {"x": (-5, 5, 61), "y": (-5, 5, 61)}, basins=True)
    basins = fl.marks.basins
    assert basins.method == "newton"
    order = np.lexsort(MINIMA.T[::-1])
    np.testing.assert_allclose(basins.points, MINIMA[order], atol=1e-9)
    labels = basins.labels
    assert set(np.unique(labels[np.isfinite(labels)])) == {0.0, 1.0, 2.0, 3.0}
    assert np.isfinite(labels).mean() > 0.99
    x = np.linspace(-5, 5, 61)
    X, Y = np.meshgrid(x, x, indexing="ij")
    for k, p in enumerate(basins.points):  # every grid point near a minimum is in its basin
        near = np.hypot(X - p[0], Y - p[1]) < 0.8
        assert near.any() and (labels[near] == k).all()
    fig, drawn = build_figure(fl, opts)
    assert drawn.colorbar.ax.get_ylabel() == "basin (newton)"
    ticks = [t.get_text() for t in drawn.colorbar.ax.get_yticklabels()]
    assert ticks == ["(-3.78, -3.28)", "(-2.81, 3.13)", "(3, 2)", "(3.58, -1.85)"]


def test_basins_by_gradient_descent_agree_with_newton_away_from_the_edges():
    grid = {"x": (-5, 5, 41), "y": (-5, 5, 41)}
    newton, _ = _field(H_TEXT, grid, basins=True)
    gd, _ = _field(H_TEXT, grid, basins=True, method="gd", lr=0.005, steps=4000)
    a, b = newton.marks.basins, gd.marks.basins
    np.testing.assert_allclose(a.points, b.points, atol=1e-6)
    both = np.isfinite(a.labels) & np.isfinite(b.labels)
    assert (a.labels[both] == b.labels[both]).mean() > 0.85


def test_mark_critical_on_a_plane_and_on_a_curve():
    fl, opts = _field(H_TEXT, {"x": (-5, 5, 51), "y": (-5, 5, 51)}, mark_critical=True)
    fig, drawn = build_figure(fl, opts)
    minima = _scatter(drawn.ax, "minimum (4)")
    np.testing.assert_allclose(np.sort(minima, axis=0), np.sort(MINIMA, axis=0), atol=1e-9)
    assert len(_scatter(drawn.ax, "maximum (1)")) == 1
    assert len(_scatter(drawn.ax, "saddle (4)")) == 4
    labels = [t.get_text() for t in drawn.legend.get_texts()]
    assert labels == ["minimum (4)", "maximum (1)", "saddle (4)", "unstable direction",
                      "stable direction"]
    fl, opts = _field("x^3 - 3x", {"x": (-2.5, 2.5, 101)}, mark_critical=True)
    fig, drawn = build_figure(fl, opts)
    assert _scatter(drawn.ax, "minimum").tolist() == [[1.0, -2.0]]
    assert _scatter(drawn.ax, "maximum").tolist() == [[-1.0, 2.0]]


def test_a_field_marks_its_fixed_points_by_type():
    fl, opts = _field("[y, -sin(x) - 0.5y]", {"x": (-7, 7, 57), "y": (-3, 3, 25)},
                      mark_critical=True)
    fig, drawn = build_figure(fl, opts)
    foci = _scatter(drawn.ax, "stable focus (3)")
    np.testing.assert_allclose(sorted(foci[:, 0]), [-2 * np.pi, 0, 2 * np.pi], atol=1e-9)
    assert len(_scatter(drawn.ax, "saddle (2)")) == 2


def test_path_from_draws_the_descent():
    fl, opts = _field("x^2 + y^2", {"x": (-2, 2, 21), "y": (-2, 2, 21)},
                      path_from=["x=1,y=2"], lr=0.25, steps=5)
    (method, path), = fl.marks.paths
    assert method == "gd"
    assert path.X.tolist() == [[1 / 2 ** k, 2 / 2 ** k] for k in range(6)]
    fig, drawn = build_figure(fl, opts)
    line = next(ln for ln in drawn.ax.lines if ln.get_label() == "gd from (1, 2)")
    assert np.asarray(line.get_xdata()).tolist() == [1 / 2 ** k for k in range(6)]
    assert np.asarray(line.get_ydata()).tolist() == [2 / 2 ** k for k in range(6)]


def test_a_path_per_method_each_with_its_own_learning_rate():
    fl, opts = _field("x^2 + y^2", {"x": (-2, 2, 21), "y": (-2, 2, 21)},
                      path_from=["x=1,y=2"], method=["gd", "momentum", "adam"],
                      lr=[0.25, 0.1, 0.5], steps=3)
    assert [m for m, _ in fl.marks.paths] == ["gd", "momentum", "adam"]
    gd, momentum, adam = (p for _, p in fl.marks.paths)
    assert gd.X[:, 0].tolist() == [1, 0.5, 0.25, 0.125]
    # momentum 0.9, lr 0.1 on x²: buf = g first, then 0.9·buf + g; x -= 0.1·buf
    x, buf, xs = 1.0, None, [1.0]
    for _ in range(3):
        g = 2 * x
        buf = g if buf is None else 0.9 * buf + g
        x = x + (-0.1) * buf
        xs.append(x)
    assert momentum.X[:, 0].tolist() == xs
    assert adam.X[1, 0] == pytest.approx(0.5, rel=1e-7)  # Adam's first step is lr·sign(g)
    fig, drawn = build_figure(fl, opts)
    labels = [t.get_text() for t in drawn.legend.get_texts()]
    assert labels == ["gd from (1, 2)", "momentum from (1, 2)", "adam from (1, 2)"]
    with pytest.raises(EvaluationError) as got:
        parse_options(path_from=["x=1,y=2"], method=["gd", "momentum", "adam"],
                      lr=[0.1, 0.2])
    assert "2 --lr for 3 --method" in usage_words(got.value)  # as the command line shows it
    with pytest.raises(EvaluationError) as got:
        parse_options(basins=True, method=["gd", "adam"])
    assert "--basins colours by one descent" in usage_words(got.value)


def test_path_on_a_curve_follows_f():
    fl, opts = _field("x^2", {"x": (-2, 2, 41)}, path_from=["x=1"], lr=0.25, steps=3)
    fig, drawn = build_figure(fl, opts)
    line = next(ln for ln in drawn.ax.lines if ln.get_label() == "gd from (1)")
    assert np.asarray(line.get_ydata()).tolist() == [1.0, 0.25, 0.0625, 0.015625]


def test_flow_from_draws_the_trajectory():
    fl, opts = _field("[-y, x]", {"x": (-2, 2, 21), "y": (-2, 2, 21)},
                      flow_from=["x=1,y=0"], t="0:2pi:401")
    flows = fl.marks.flows
    np.testing.assert_allclose(np.hypot(flows.X[:, 0], flows.X[:, 1]), 1.0, atol=1e-9)
    fig, drawn = build_figure(fl, opts)
    line = next(ln for ln in drawn.ax.lines if ln.get_label().startswith("flow, t = 0 to"))
    assert len(line.get_xdata()) == 401


@pytest.mark.parametrize("expr, opts, grid, message", [
    ("x*y*z", {"mark_critical": True}, {"x": (0, 1, 5), "y": (0, 1, 5), "z": (0, 1, 5)},
     "--mark-critical needs one or two grid variables"),
    ("x^2", {"basins": True}, {"x": (0, 1, 5)}, "--basins needs two grid variables"),
    ("x*y", {"path_from": ["x=0,z=1"]}, {"x": (0, 1, 5), "y": (0, 1, 5)},
     "give a value for each drawn variable"),
])
def test_what_cannot_be_drawn(expr, opts, grid, message):
    options = parse_options(**opts)
    with pytest.raises(EvaluationError) as got:
        fl = compute_field(expr, grid)
        options.check(len(fl.names))
        build_figure(with_marks(fl, options), options)
    assert message in usage_words(got.value)  # as the command line says it


@pytest.mark.parametrize("opts, message", [
    ({"lr": 0.1}, "--lr sets the descent of --path-from and --basins"),
    ({"method": ["adam"]}, "--method sets the descent"),
    ({"t": "0:1:11"}, "--t is the time grid of --flow-from"),
    ({"path_from": ["x=1"], "betas": "0.9,0.99"}, "--betas is a hyper-parameter of adam"),
    ({"mark_critical": True, "animate": "t=0:1:3"}, "not with --animate"),
])
def test_option_mistakes_fail_before_any_work(opts, message):
    with pytest.raises(EvaluationError) as got:
        parse_options(**opts)
    assert re.search(message, usage_words(got.value))  # the message the command line shows


def test_fields_and_paths_that_do_not_fit(capsys):
    assert main(["plot", "[-y, x]", "--grid", "x=-1:1:11", "--grid", "y=-1:1:11",
                 "--path-from", "x=1,y=0", "-o", "never.png"]) == 2
    assert "--path-from descends a scalar f" in capsys.readouterr().err
    assert main(["plot", "[-y, x]", "--grid", "x=-1:1:11", "--grid", "y=-1:1:11",
                 "--basins", "-o", "never.png"]) == 2
    assert "--basins colours where descent on a scalar f leads" in capsys.readouterr().err
    assert not Path("never.png").exists()


def test_the_command_line_and_the_page(capsys, tmp_path):
    importlib.import_module("plotly")
    png, page = tmp_path / "b.png", tmp_path / "b.html"
    argv = ["plot", H_TEXT, "--grid", "x=-5:5:41", "--grid", "y=-5:5:41", "--basins",
            "--mark-critical", "--path-from", "x=0,y=0", "--method", "adam", "--lr", "0.1",
            "--steps", "300"]
    assert main([*argv, "-o", str(png)]) == 0
    assert png.stat().st_size > 10_000
    assert main([*argv, "-o", str(page)]) == 0
    text = page.read_text()
    spec = json.loads(text[text.index("const spec = ") + 13:text.index(";\nPlotly.newPlot(")])
    names = [t.get("name") for t in spec["data"]]
    assert "minimum (4)" in names and "saddle (4)" in names and "adam from (0, 0)" in names
    heat = spec["data"][0]
    assert heat["colorbar"]["ticktext"] == ["(-3.78, -3.28)", "(-2.81, 3.13)", "(3, 2)",
                                            "(3.58, -1.85)"]
    assert heat["zmin"] == -0.5 and heat["zmax"] == 3.5


def test_plot_options_default_to_no_marks():
    opts = PlotOptions()
    assert not (opts.mark_critical or opts.path_from or opts.flow_from or opts.basins)
    assert opts.descent("gd").method == "gd" and opts.descent("newton").lr == 1.0


def test_basins_where_no_descent_ends_draw_f_with_a_note(capsys, tmp_path):
    target = tmp_path / "plane.png"
    assert main(["plot", "x + y", "--grid", "x=-1:1:21", "--grid", "y=-1:1:21", "--basins",
                 "-o", str(target)]) == 0
    assert "--basins: no descent from the grid ends at a critical point" in \
        capsys.readouterr().err
    assert target.exists()
