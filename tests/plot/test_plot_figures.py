"""gradcli.plot at the data level: the arrows, colors and labels a figure holds, checked
against closed-form derivatives, not pixels."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.cli.messages import option_words, usage_words
from gradcli.errors import EvaluationError, render_references
from gradcli.plot import PlotOptions, build_figure, compute_field, lattice
from gradcli.plot.layout import ARROW_FILL

TWO_PI = 2 * np.pi


def _cli_words(notes: list[str]) -> list[str]:
    """Notes as the command line prints them (parameters named by their flags)."""
    return [render_references(n, option_words) for n in notes]


def _draw(expr: str, grid: dict, **opts):
    field_ = compute_field(expr, grid, color=opts.get("color"))
    return build_figure(field_, PlotOptions(**opts))


def test_gradient_arrows_are_the_engine_gradient_at_the_lattice():
    n = 41
    fig, drawn = _draw("sin(x)*cos(y)", {"x": (0, TWO_PI, n), "y": (0, TWO_PI, n)}, every=4)
    q = drawn.quiver
    grid = np.linspace(0, TWO_PI, n)
    X, Y, U, V = q.X, q.Y, np.asarray(q.U), np.asarray(q.V)
    assert len(X) == (n // 4) ** 2
    assert np.isin(np.round(X, 12), np.round(grid, 12)).all()
    assert np.isin(np.round(Y, 12), np.round(grid, 12)).all()
    np.testing.assert_allclose(U, np.cos(X) * np.cos(Y), atol=1e-12)
    np.testing.assert_allclose(V, -np.sin(X) * np.sin(Y), atol=1e-12)
    assert (q.angles, q.scale_units) == ("xy", "xy")


@pytest.mark.parametrize(("every", "expected"), [(1, 20), (3, 6), (5, 4), (10, 2)])
def test_arrow_count_follows_every(every, expected):
    fig, drawn = _draw("x^2 + y^2", {"x": (-1, 1, 20), "y": (-1, 1, 20)}, every=every)
    assert len(drawn.quiver.X) == expected ** 2
    assert drawn.every == every
    assert drawn.notes == []


def test_every_beyond_the_grid_is_clamped_with_a_note():
    fig, drawn = _draw("x^2 + y^2", {"x": (-1, 1, 20), "y": (-1, 1, 20)}, every=50)
    assert drawn.every == 10 and len(drawn.quiver.X) == 4  # two per axis, not one giant
    assert _cli_words(drawn.notes) == [
        "--every 50 is more than the grid allows (20 points along its shortest axis): using "
        "--every 10"]


def test_default_arrow_count_is_20_to_30_per_axis():
    fig, drawn = _draw("x*y", {"x": (-1, 1, 100), "y": (-1, 1, 100)})
    per_axis = round(len(drawn.quiver.X) ** 0.5)
    assert 20 <= per_axis <= 30


def test_longest_arrow_fills_0_9_of_the_spacing_on_equal_axes():
    n, every = 50, 5
    fig, drawn = _draw("x^2 - y^2", {"x": (-2, 2, n), "y": (-2, 2, n)}, every=every)
    q = drawn.quiver
    longest = np.max(np.hypot(q.U, q.V)) / q.scale
    spacing = 4 / (n - 1) * every
    assert longest == pytest.approx(ARROW_FILL * spacing)


def test_normalize_gives_unit_arrows():
    fig, drawn = _draw("exp(-(x^2+y^2))", {"x": (-2, 2, 21), "y": (-2, 2, 21)},
                       normalize=True, every=2)
    lengths = np.hypot(drawn.quiver.U, drawn.quiver.V)
    np.testing.assert_allclose(lengths[lengths > 0], 1.0)


def test_heatmap_colorbar_and_axes_labels():
    fig, drawn = _draw("sin(x)*cos(y)", {"x": (0, TWO_PI, 30), "y": (0, 3, 20)})
    assert drawn.colorbar.ax.get_ylabel() == "f(x, y) = sin(x)*cos(y)"
    assert (drawn.ax.get_xlabel(), drawn.ax.get_ylabel()) == ("x", "y")
    image = np.asarray(drawn.image.get_array())
    assert image.shape == (20, 30)  # rows are y: x runs along the horizontal axis
    x, y = np.linspace(0, TWO_PI, 30), np.linspace(0, 3, 20)
    np.testing.assert_allclose(image, np.outer(np.cos(y), np.sin(x)), atol=1e-12)
    assert drawn.ax.get_aspect() == 1.0


def test_aspect_auto_and_contours():
    fig, drawn = _draw("x^2 - y^2", {"x": (-1, 1, 15), "y": (-1, 1, 15)}, aspect="auto",
                       contour=7, arrows=False)
    assert drawn.ax.get_aspect() == "auto"
    assert len(drawn.contour.levels) == 7
    assert drawn.quiver is None


def test_stream_draws_streamlines_not_arrows():
    fig, drawn = _draw("x^2 - y^2", {"x": (-1, 1, 15), "y": (-1, 1, 15)}, stream=True)
    assert drawn.stream is not None and drawn.quiver is None
    assert len(drawn.stream.lines.get_segments()) > 0


@pytest.mark.parametrize(("color", "closed_form"), [
    ("divergence", lambda X, Y: Y - 1),  # d(xy)/dx + d(x-y)/dy
    ("curl", lambda X, Y: 1 - X),  # d(x-y)/dx - d(xy)/dy
    ("magnitude", lambda X, Y: np.hypot(X * Y, X - Y)),
])
def test_vector_field_colors_are_closed_form(color, closed_form):
    grid = {"x": (-2, 2, 9), "y": (-1, 3, 11)}
    fig, drawn = _draw("[x*y, x-y]", grid, color=color)
    X, Y = np.meshgrid(np.linspace(-2, 2, 9), np.linspace(-1, 3, 11), indexing="ij")
    np.testing.assert_allclose(drawn.heat, closed_form(X, Y), atol=1e-12)
    np.testing.assert_allclose(np.asarray(drawn.image.get_array()), closed_form(X, Y).T,
                               atol=1e-12)
    prefix = {"divergence": "div F", "curl": "curl F", "magnitude": "|F|"}[color]
    assert drawn.colorbar.ax.get_ylabel().startswith(prefix)
    if color != "magnitude":  # signed: a diverging map, white at 0
        assert drawn.image.norm(0.0) == pytest.approx(0.5)
        assert drawn.image.cmap.name == "RdBu_r"


def test_bare_vector_field_arrows_colored_by_magnitude():
    fig, drawn = _draw("[-y, x]", {"x": (-1, 1, 10), "y": (-1, 1, 10)}, every=1)
    q = drawn.quiver
    np.testing.assert_allclose(q.U, -q.Y)
    np.testing.assert_allclose(q.V, q.X)
    np.testing.assert_allclose(q.get_array(), np.hypot(q.X, q.Y))
    assert drawn.image is None


def test_curve_tangent_arrows_and_derivative_line():
    fig, drawn = _draw("sin(x)", {"x": (0, TWO_PI, 100)}, derivative=True)
    q = drawn.quiver
    assert 15 <= len(q.X) <= 25
    np.testing.assert_allclose(q.Y, np.sin(q.X), atol=1e-12)
    np.testing.assert_allclose(q.U, 1.0)
    np.testing.assert_allclose(q.V, np.cos(q.X), atol=1e-12)
    f_line, df_line = drawn.lines
    np.testing.assert_allclose(df_line.get_ydata(), np.cos(f_line.get_xdata()), atol=1e-12)


def test_held_variable_is_named_and_not_an_axis():
    fig, drawn = _draw("sin(x)*z", {"x": (0, 1, 11), "z": 2.0})
    assert "z = 2" in drawn.lines[0].get_label()
    np.testing.assert_allclose(drawn.quiver.V, 2 * np.cos(drawn.quiver.X), atol=1e-12)


def test_lattice_is_centred():
    assert list(lattice(10, 3)) == [1, 4, 7]
    assert list(lattice(100, 4)) == list(range(2, 100, 4))
    assert list(lattice(3, 5)) == [1]


@pytest.mark.parametrize(("expr", "grid", "message"), [
    ("w+x+y+z", {"w": (0, 1, 3), "x": (0, 1, 3), "y": (0, 1, 3), "z": (0, 1, 3)},
     "--grid z=VALUE"),
    ("[[x, x]]", {"x": (0, 1, 3)}, "scalar formula or a vector"),
    ("[x, y, x]", {"x": (0, 1, 3), "y": (0, 1, 3)}, "[u, v]"),
    ("x", {"x": (0, 1, 1)}, "at least 2"),
    ("x", {"x": 1.0}, "one, two or three"),
    ("x", {"x": (1, 1, 5)}, "start and stop are equal"),
])
def test_what_cannot_be_drawn(expr, grid, message):
    with pytest.raises(EvaluationError) as got:  # as the command line says it
        compute_field(expr, grid)
    assert message in usage_words(got.value)
