"""Pictures of real functions: arrows that survive singularities, round-off
that paints no colour, log and fixed colour scales, curves broken at poles and jumps,
several components, aspect and --every notes. Checked against closed forms, not pixels."""

from __future__ import annotations

import numpy as np
import pytest

from gradcli.cli.messages import option_words
from gradcli.errors import render_references
from gradcli.plot import PlotOptions, build_figure, compute_field
from gradcli.plot.layout import ARROW_FILL

TWO_PI = 2 * np.pi


def _cli_words(notes: list[str]) -> list[str]:
    """Notes as the command line prints them (parameters named by their flags)."""
    return [render_references(n, option_words) for n in notes]


def _draw(expr: str, grid: dict, **opts):
    field_ = compute_field(expr, grid, color=opts.get("color"))
    return build_figure(field_, PlotOptions(**opts))


def _arrows(drawn):
    """Every drawn arrow (plain and clipped): positions and vectors in data units."""
    parts = [q for q in (drawn.quiver, drawn.clipped_quiver) if q is not None]
    X = np.concatenate([q.X for q in parts])
    Y = np.concatenate([q.Y for q in parts])
    U = np.concatenate([np.asarray(q.U) for q in parts]) / drawn.quiver.scale
    V = np.concatenate([np.asarray(q.V) for q in parts]) / drawn.quiver.scale
    return X, Y, U, V


def test_a_singularity_no_longer_shrinks_every_other_arrow():
    n, every = 40, 2
    fig, drawn = _draw("1/(x^2 + y^2)", {"x": (-1, 1, n), "y": (-1, 1, n)}, every=every)
    X, Y, U, V = _arrows(drawn)
    r4 = (X * X + Y * Y) ** 2
    gx, gy = -2 * X / r4, -2 * Y / r4  # the closed-form gradient
    mag = np.hypot(gx, gy)
    full = np.percentile(mag, 95)  # equal axes: displayed length is |grad f|
    assert drawn.arrows.full == pytest.approx(full, rel=1e-12)
    clipped = mag > full
    assert drawn.clipped_quiver is not None
    assert len(drawn.clipped_quiver.X) == clipped.sum() > 0
    spacing = 2 / (n - 1) * every
    lengths = np.hypot(U, V)
    # clipped arrows: full length, pointing along the gradient; the rest: to scale
    np.testing.assert_allclose(lengths[clipped], ARROW_FILL * spacing, rtol=1e-9)
    np.testing.assert_allclose(lengths[~clipped], ARROW_FILL * spacing * mag[~clipped] / full,
                               rtol=1e-9)
    cos = (U * gx + V * gy) / (lengths * mag)
    np.testing.assert_allclose(cos, 1.0, atol=1e-12)
    # scaled to the longest arrow, the median one would be 1/10,000 of the spacing
    by_longest = ARROW_FILL * spacing * np.median(mag) / mag.max()
    assert np.median(lengths) > 100 * by_longest
    assert drawn.caption.get_text().startswith(f"{clipped.sum()}/{len(X)} arrows over "
                                               "|∇f| = ")
    # the library names the parameter; the command line's words (PlotOptions.words) its flag
    assert drawn.caption.get_text().endswith("(magenta); scale sets it")
    fig, drawn = _draw("1/(x^2 + y^2)", {"x": (-1, 1, n), "y": (-1, 1, n)}, every=every,
                       words=option_words)
    assert drawn.caption.get_text().endswith("(magenta); --scale sets it")


def test_scale_sets_the_full_length_explicitly():
    fig, drawn = _draw("x^2 - y^2", {"x": (-2, 2, 21), "y": (-2, 2, 21)}, every=1, scale=3.0)
    X, Y, U, V = _arrows(drawn)
    mag = np.hypot(2 * X, -2 * Y)
    spacing = 4 / 20
    lengths = np.hypot(U, V)
    np.testing.assert_allclose(lengths, ARROW_FILL * spacing * np.minimum(mag, 3.0) / 3.0,
                               rtol=1e-9, atol=1e-15)
    assert len(drawn.clipped_quiver.X) == np.count_nonzero(mag > 3.0 * (1 + 1e-9))
    assert render_references(drawn.arrows.by) == "scale"
    assert render_references(drawn.arrows.by, option_words) == "--scale"
    assert "= 3 (scale) clipped" in drawn.caption.get_text()
    fig, drawn = _draw("x^2 - y^2", {"x": (-2, 2, 21), "y": (-2, 2, 21)}, every=1, scale=3.0,
                       words=option_words)
    assert "= 3 (--scale) clipped" in drawn.caption.get_text()


def test_smooth_fields_clip_nothing():
    fig, drawn = _draw("sin(x)*cos(y)", {"x": (0, TWO_PI, 50), "y": (0, TWO_PI, 50)})
    assert drawn.clipped_quiver is None and drawn.caption is None
    assert drawn.arrows.by == "longest"


def test_non_finite_points_get_no_arrow():
    fig, drawn = _draw("1/(x^2 + y^2)", {"x": (-1, 1, 21), "y": (-1, 1, 21)}, every=1)
    X, Y, _, _ = _arrows(drawn)
    assert len(X) == 21 * 21 - 1
    assert not np.any((np.abs(X) < 1e-12) & (np.abs(Y) < 1e-12))


def test_curl_of_an_irrotational_vortex_paints_no_round_off():
    grid = {"x": (-1, 1, 30), "y": (-1, 1, 30)}
    expr = "[-y/(x^2 + y^2), x/(x^2 + y^2)]"
    raw = compute_field(expr, grid, color="curl").curl()
    assert np.count_nonzero(raw[np.isfinite(raw)]) > 0  # the engine's round-off is there
    fig, drawn = _draw(expr, grid, color="curl")
    assert np.all(drawn.heat[np.isfinite(drawn.heat)] == 0.0)
    assert drawn.image.norm(0.0) == pytest.approx(0.5)  # centred: 0 is the white middle


def test_genuine_small_values_are_kept():
    fig, drawn = _draw("[x*y, 1e-6*x]", {"x": (-1, 1, 11), "y": (-1, 1, 11)}, color="curl")
    X = np.linspace(-1, 1, 11)[:, None] * np.ones((1, 11))
    np.testing.assert_allclose(drawn.heat, 1e-6 - X, atol=1e-15)


def test_log_colours_positive_and_signed():
    from matplotlib.colors import LogNorm, SymLogNorm

    fig, drawn = _draw("exp(x + y)", {"x": (0, 3, 11), "y": (0, 3, 11)}, log=True)
    assert isinstance(drawn.image.norm, LogNorm)
    assert (drawn.image.norm.vmin, drawn.image.norm.vmax) == pytest.approx((1.0, np.exp(6)))
    fig, drawn = _draw("x^3*y", {"x": (-2, 2, 11), "y": (-2, 2, 11)}, log=True)
    assert isinstance(drawn.image.norm, SymLogNorm)
    assert drawn.image.norm.vmin == -drawn.image.norm.vmax == pytest.approx(-16.0)


def test_vmin_vmax_fix_the_colour_limits():
    fig, drawn = _draw("x*y", {"x": (-2, 2, 11), "y": (-2, 2, 11)}, vmin=-1.0, vmax=0.5)
    assert (drawn.image.norm.vmin, drawn.image.norm.vmax) == (-1.0, 0.5)


def _segments(line) -> list[tuple[float, float]]:
    """(first x, last x) of each unbroken piece of a drawn line."""
    x, y = np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)
    ok = np.isfinite(x) & np.isfinite(y)
    pieces, start = [], None
    for i, good in enumerate(ok):
        if good and start is None:
            start = i
        if (not good or i == len(ok) - 1) and start is not None:
            end = i if good else i - 1
            pieces.append((x[start], x[end]))
            start = None
    return pieces


def test_tan_is_broken_at_its_poles_with_a_robust_y_range():
    fig, drawn = _draw("tan(x)", {"x": (0, TWO_PI, 400)})
    pieces = _segments(drawn.lines[0])
    assert len(pieces) == 3
    for (_, end), (start, _), pole in zip(pieces[:-1], pieces[1:], (np.pi / 2, 3 * np.pi / 2),
                                          strict=True):
        assert end < pole < start and start - end < TWO_PI / 399 * 1.01
    lo, hi = drawn.ax.get_ylim()
    assert -30 < lo < -5 and 5 < hi < 30  # the poles (|tan| ~ 250 here) do not flatten it
    assert drawn.ax.get_ylabel() == "f(x) = tan(x)"
    assert any("--ylim" in n for n in _cli_words(drawn.notes))


@pytest.mark.parametrize(("expr", "grid", "gaps"), [
    ("floor(x)", (-2.05, 2.05, 41), 5),     # jumps at -2, -1, 0, 1, 2
    ("1/x", (-1, 1, 20), 1),                # a pole with a sign change
    ("sin(x)", (0, TWO_PI, 100), 0),        # sign changes through zero: joined
    ("tanh(20x)", (-1, 1, 41), 0),          # steep but continuous: joined
    ("x^3 - 3x", (-2.2, 2.2, 221), 0),
])
def test_curves_break_only_at_poles_and_jumps(expr, grid, gaps):
    fig, drawn = _draw(expr, {"x": grid})
    assert len(_segments(drawn.lines[0])) == gaps + 1


def test_ylim_sets_the_range():
    fig, drawn = _draw("tan(x)", {"x": (0, TWO_PI, 100)}, ylim=(-3.0, 4.0))
    assert drawn.ax.get_ylim() == (-3.0, 4.0)


def test_vector_curves_one_per_component_with_derivatives_and_legend():
    fig, drawn = _draw("[sin(x), cos(x)]", {"x": (0, TWO_PI, 60)}, derivative=True)
    f0, f1, d0, d1 = drawn.lines
    x = np.asarray(f0.get_xdata())
    np.testing.assert_allclose(f0.get_ydata(), np.sin(x), atol=1e-12)
    np.testing.assert_allclose(f1.get_ydata(), np.cos(x), atol=1e-12)
    np.testing.assert_allclose(d0.get_ydata(), np.cos(x), atol=1e-12)
    np.testing.assert_allclose(d1.get_ydata(), -np.sin(x), atol=1e-12)
    legend = [t.get_text() for t in drawn.legend.get_texts()]
    assert legend == ["f[0](x) = sin(x)", "f[1](x) = cos(x)", "f[0]'(x) = df[0]/dx",
                      "f[1]'(x) = df[1]/dx"]
    # tangent arrows on both curves, (1, f[i]'(x)) up to the common scale
    q = drawn.quiver
    on_sin = np.isclose(q.Y, np.sin(q.X), atol=1e-12)
    on_cos = np.isclose(q.Y, np.cos(q.X), atol=1e-12)
    assert on_sin.any() and on_cos.any() and np.all(on_sin | on_cos)
    slope = np.asarray(q.V) / np.asarray(q.U)
    np.testing.assert_allclose(slope[on_sin & ~on_cos], np.cos(q.X[on_sin & ~on_cos]),
                               atol=1e-12)


def test_tangent_arrows_sit_on_top_with_a_halo():
    fig, drawn = _draw("sin(x)", {"x": (0, TWO_PI, 100)})
    assert drawn.quiver.get_zorder() > drawn.lines[0].get_zorder()
    np.testing.assert_allclose(drawn.quiver.get_edgecolor()[0], [1, 1, 1, 1])
    assert drawn.ax.get_ylabel() == "f(x) = sin(x)"


def test_unequal_ranges_use_auto_aspect_and_say_so():
    grid = {"x": (0, 1000, 30), "y": (0, 1, 30)}
    fig, drawn = _draw("x*y", grid)
    assert drawn.ax.get_aspect() == "auto"
    # the grid's own ranges, not the image's extent (half a cell more at each end)
    assert _cli_words(drawn.notes) == ["x spans 1000 and y spans 1, more than 10x apart: drawn "
                           "with --aspect auto (--aspect equal forces equal axes)"]
    fig, drawn = _draw("x*y", grid, aspect="equal")
    assert drawn.ax.get_aspect() == 1.0 and drawn.notes == []
