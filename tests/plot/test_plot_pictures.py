"""Pictures a new user expects: the figure follows the data's shape, labels are never cut,
legends cover no data, the axis and legend controls, a Taylor point on the picture, and
the stable and unstable directions drawn at saddles.

Truths: the blank margin is measured on the saved PNG's pixels (rows or columns with no
ink); the saddle directions of the damped pendulum [y, -sin(x) - 0.5y] at (pi, 0) are the
eigenvectors (1, l) of J = [[0, 1], [1, -0.5]], l = (-0.5 -+ sqrt(4.25))/2, by hand.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from PIL import Image

from gradcli.cli.main import main
from gradcli.plot import build_figure, compute_field, parse_options
from gradcli.plot.marks import with_marks

STRIP = ["sin(3x)*cos(2y) + 0.1*x", "--grid", "x=0:10:200", "--grid", "y=0:1:50",
         "--mark-critical"]
PENDULUM = ["[y, -sin(x) - 0.5y]", "--grid", "x=-7:7:41", "--grid", "y=-3:3:31",
            "--mark-critical", "--flow-from", "x=2,y=0"]
TALL = ["x^2 - y^2", "--grid", "x=-1:1:21", "--grid", "y=-6:6:61", "--mark-critical"]
MAX_BLANK = 0.25


def blank_margin(path) -> float:
    """The fraction of the picture in rows or columns without a single non-white pixel:
    the empty bands around (and between) what is drawn."""
    pixels = np.asarray(Image.open(path).convert("RGB"))
    white = (pixels >= 250).all(axis=2)
    return float((white.all(axis=1)[:, None] | white.all(axis=0)[None, :]).mean())


def _draw(expr: str, grid: dict, **raw):
    options = parse_options(**raw)
    return build_figure(with_marks(compute_field(expr, grid), options), options)


@pytest.mark.parametrize("args", [STRIP, PENDULUM, TALL], ids=["strip", "pendulum", "tall"])
def test_at_most_a_quarter_of_the_picture_is_blank_margin(tmp_path, capsys, args):
    """The figure takes the data's shape (a 10:1 strip is a wide, low picture) and is
    saved cropped to its content."""
    out = tmp_path / "p.png"
    assert main(["plot", *args, "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    assert blank_margin(out) <= MAX_BLANK
    assert (np.asarray(Image.open(out).convert("L")) < 250).any()


def test_the_strips_shape_follows_the_data(tmp_path, capsys):
    """x spans 10 and y 1 on equal axes: the picture is several times wider than high."""
    out = tmp_path / "strip.png"
    assert main(["plot", *STRIP, "-o", str(out), "-q"]) == 0
    w, h = Image.open(out).size
    assert w > 4 * h


def test_a_cut_colorbar_label_is_whole_in_the_title():
    """The strip's colour bar is too short for f(x, y) = ...: the bar shows the start and
    the title the whole text."""
    fig, drawn = _draw("sin(3x)*cos(2y) + 0.1*x", {"x": (0, 10, 200), "y": (0, 1, 50)})
    label = drawn.colorbar.ax.get_ylabel()
    assert label.endswith("…") and len(label) < len("f(x, y) = sin(3x)*cos(2y) + 0.1*x")
    assert drawn.ax.get_title() == "f(x, y) = sin(3x)*cos(2y) + 0.1*x"


def test_the_pendulums_colorbar_label_is_whole():
    fig, drawn = _draw("[y, -sin(x) - 0.5y]", {"x": (-7, 7, 41), "y": (-3, 3, 31)})
    assert drawn.colorbar.ax.get_ylabel() == "|F|, F = [y, -sin(x) - 0.5y]"
    assert drawn.ax.get_title() == ""


def _overlaps(a, b) -> bool:
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


@pytest.mark.parametrize("legend", ["auto", "outside"])
def test_a_planes_legend_covers_no_data(legend):
    """A heatmap has no empty corner: the legend goes below the axes, clear of them and
    of the colour bar."""
    fig, drawn = _draw("[y, -sin(x) - 0.5y]", {"x": (-7, 7, 41), "y": (-3, 3, 31)},
                       mark_critical=True, flow_from=["x=2,y=0"], legend=legend)
    renderer = fig.canvas.get_renderer()
    box = drawn.legend.get_window_extent(renderer)
    labels = [t.get_text() for t in drawn.legend.get_texts()]
    assert "saddle (2)" in labels and "flow, t = 0 to 10" in labels
    for axes in (drawn.ax, drawn.colorbar.ax):
        assert not _overlaps(box, axes.get_window_extent(renderer))
    assert not _overlaps(box, drawn.ax.get_tightbbox(renderer))  # nor the tick labels
    assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= fig.bbox.x1


def test_a_curves_legend_inside_by_default_below_when_asked_or_none():
    grid = {"x": (0, 2 * math.pi, 101)}
    fig, drawn = _draw("[sin(x), cos(x)]", grid)
    assert drawn.ax.get_legend() is drawn.legend is not None  # matplotlib's emptiest spot
    fig, drawn = _draw("[sin(x), cos(x)]", grid, legend="outside")
    assert drawn.ax.get_legend() is None and drawn.legend in fig.legends
    renderer = fig.canvas.get_renderer()
    assert drawn.legend.get_window_extent(renderer).y1 <= \
        drawn.ax.get_window_extent(renderer).y0
    fig, drawn = _draw("[sin(x), cos(x)]", grid, legend="none")
    assert drawn.legend is None and drawn.ax.get_legend() is None and not fig.legends


def test_axis_and_colorbar_labels():
    fig, drawn = _draw("x^2 + y^2", {"x": (-1, 1, 11), "y": (-1, 1, 11)},
                       xlabel="time (s)", ylabel="height (m)", colorbar_label="speed")
    assert (drawn.ax.get_xlabel(), drawn.ax.get_ylabel()) == ("time (s)", "height (m)")
    assert drawn.colorbar.ax.get_ylabel() == "speed"
    fig, drawn = _draw("sin(x)", {"x": (0, 1, 11)}, xlabel="t", ylabel="y(t)")
    assert (drawn.ax.get_xlabel(), drawn.ax.get_ylabel()) == ("t", "y(t)")


def test_labels_are_mathtext_between_dollar_signs():
    fig, drawn = _draw("x*y", {"x": (0, 1, 5), "y": (0, 1, 5)}, xlabel=r"$\alpha$ (rad)",
                       ylabel=r"price \$5")
    fig.canvas.draw()  # renders: no mathtext error
    assert drawn.ax.get_xlabel() == r"$\alpha$ (rad)"


def test_a_long_curve_label_is_whole_in_the_title():
    expr = " + ".join(f"sin({k}*x)/{k}" for k in range(1, 12))
    fig, drawn = _draw(expr, {"x": (0, 1, 21)})
    assert drawn.ax.get_ylabel().endswith("…")
    assert drawn.ax.get_title().replace("\n", " ") == f"f(x) = {expr}"


@pytest.mark.parametrize("argv, message", [
    (["cos(x)", "--grid", "x=-1:1:101", "--taylor", "x=5", "--order", "2"],
     "--taylor x=5 is outside the grid's range -1 to 1"),
    (["cos(x)", "--grid", "x=-1:1:101", "--taylor", "x=-1.5"],
     "--taylor x=-1.5 is outside the grid's range -1 to 1"),
    (["x^2", "--grid", "x=-1:1:11", "--legend", "corner"], "--legend"),
    (["sin(x)", "--grid", "x=0:1:11", "--colorbar-label", "v"],
     "--colorbar-label needs two grid variables"),
    (["x*y", "--grid", "x=0:1:5", "--grid", "y=0:1:5", "--xlabel", "$\\frac{$"],
     "--xlabel '$\\frac{$': the text between $ signs is not valid mathtext"),
    (["sin(x)", "--grid", "x=0:1:5", "--title", "$x^{$"], "--title '$x^{$'"),
])
def test_refused_with_one_line_and_no_file(tmp_path, capsys, argv, message):
    out = tmp_path / "p.png"
    assert main(["plot", *argv, "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_taylor_point_at_the_grids_end_is_drawn(tmp_path, capsys):
    out = tmp_path / "t.png"
    assert main(["plot", "cos(x)", "--grid", "x=-1:1:101", "--taylor", "x=1", "-o",
                 str(out), "-q"]) == 0


def test_saddles_get_lines_along_their_stable_and_unstable_directions():
    """At the pendulum's saddles (+-pi, 0) the stable line has the slope of the eigenvector
    of l = (-0.5 - sqrt(4.25))/2 (the flow comes in along it), the unstable one of
    l = (-0.5 + sqrt(4.25))/2: an eigenvector (1, l) has slope l."""
    fig, drawn = _draw("[y, -sin(x) - 0.5y]", {"x": (-7, 7, 41), "y": (-3, 3, 31)},
                       mark_critical=True)
    low, high = (-0.5 - math.sqrt(4.25)) / 2, (-0.5 + math.sqrt(4.25)) / 2
    for which, slope in (("stable", low), ("unstable", high)):
        lines = [ln for ln in drawn.ax.lines if ln.get_gid() == f"{which} direction"]
        assert len(lines) == 2
        centres = sorted(tuple(np.mean(ln.get_xydata(), axis=0)) for ln in lines)
        np.testing.assert_allclose(centres, [(-math.pi, 0), (math.pi, 0)], atol=1e-9)
        for ln in lines:
            (x0, y0), (x1, y1) = ln.get_xydata()
            assert (y1 - y0) / (x1 - x0) == pytest.approx(slope, rel=1e-9)


def test_a_scalar_saddles_stable_direction_is_where_f_curves_up():
    """x^2 - y^2 at 0: descent comes in along x (curvature +2) and leaves along y."""
    fig, drawn = _draw("x^2 - y^2", {"x": (-1, 1, 21), "y": (-1, 1, 21)}, mark_critical=True)
    stable, = [ln for ln in drawn.ax.lines if ln.get_gid() == "stable direction"]
    unstable, = [ln for ln in drawn.ax.lines if ln.get_gid() == "unstable direction"]
    assert np.ptp(stable.get_xydata()[:, 1]) == 0 and np.ptp(stable.get_xydata()[:, 0]) > 0
    assert np.ptp(unstable.get_xydata()[:, 0]) == 0 and np.ptp(unstable.get_xydata()[:, 1]) > 0


def test_log_curves_have_a_smooth_axis_with_the_linear_band_from_the_data():
    """exp(x) and exp(-x) keep one sign: the linear band lies below their smallest value
    (e^-5 on this grid) so they are straight lines all the way; the axis's slope is the
    same on both sides of the band's edge (no kink in a smooth curve), and the picture
    says where the axis is linear."""
    fig, drawn = _draw("[exp(x), exp(-x), x^3]", {"x": (-5, 5, 200)}, log=True)
    scale = drawn.ax.yaxis.get_scale()
    assert scale == "symlog"
    t = drawn.ax.yaxis._scale.linthresh
    assert 0 < t < math.exp(-5)
    forward = drawn.ax.yaxis.get_transform().transform
    h = t * 1e-6
    inside = (forward(np.array([t])) - forward(np.array([t - h])))[0] / h
    outside = (forward(np.array([t + h])) - forward(np.array([t])))[0] / h
    assert inside == pytest.approx(outside, rel=1e-4)
    texts = [tx.get_text() for tx in drawn.ax.texts]
    assert texts == [f"linear for |f(x)| < {t:.3g}, logarithmic beyond"]
    assert 0.0 in drawn.ax.get_yticks()


def test_a_formula_over_sixty_characters_is_whole_in_the_title():
    expr = "exp(-((x-1)^2+y^2)) + exp(-((x+1)^2+y^2)) - exp(-(x^2+(y-1.5)^2))"
    fig, drawn = _draw(expr, {"x": (-3, 3, 31), "y": (-2.5, 3, 31)}, color="magnitude")
    assert drawn.colorbar.ax.get_ylabel().endswith("…")
    assert drawn.ax.get_title().replace("\n", " ") == f"|∇f|, f = {expr}"


def test_an_asked_size_is_exact(tmp_path, capsys):
    """--size is the canvas the user asked for: not cropped, even with equal axes."""
    out = tmp_path / "s.png"
    assert main(["plot", *STRIP, "--size", "6x4", "--dpi", "50", "-o", str(out), "-q"]) == 0
    assert Image.open(out).size == (300, 200)


def test_the_page_draws_the_saddle_directions_too(tmp_path, capsys):
    """The interactive page's --mark-critical has the same lines: through (+-pi, 0) with
    the slopes of the hand-derived eigenvectors (1, l)."""
    import json

    importlib.import_module("plotly")
    out = tmp_path / "p.html"
    assert main(["plot", *PENDULUM[:5], "--mark-critical", "-o", str(out), "-q"]) == 0
    text = out.read_text(encoding="utf-8")
    spec = json.loads(text.split("const spec = ", 1)[1].split(";\nPlotly.newPlot(", 1)[0])
    low, high = (-0.5 - math.sqrt(4.25)) / 2, (-0.5 + math.sqrt(4.25)) / 2
    for which, slope in (("stable", low), ("unstable", high)):
        trace, = [t for t in spec["data"] if t.get("name") == f"{which} direction"]
        xs, ys = trace["x"], trace["y"]
        assert len(xs) == 6  # two saddles, a gap after each line
        for k in (0, 3):
            assert (ys[k + 1] - ys[k]) / (xs[k + 1] - xs[k]) == pytest.approx(slope, rel=1e-9)
            assert (xs[k] + xs[k + 1]) / 2 == pytest.approx([-math.pi, math.pi][k // 3])
