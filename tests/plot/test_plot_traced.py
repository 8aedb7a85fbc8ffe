"""``plot --path/--disc/--box/--surface/--ball``: the path or surface drawn over the field.

Truths: the drawn vertices are the path's closed form at the documented sample parameters
(``PATH_SAMPLES`` evenly spaced over the range, ends included); a disc's boundary is at
its radius from its centre; a box's boundary passes through its four corners in
counter-clockwise order; a sphere's points are at its radius; the normal r_u × r_v at
the (u, v) rectangle's centre is derived by hand for each surface below. The engine's
cos/sin and numpy's are the same libm calls on the same t, so the vertices agree to a few
ulp: 1e-14 absolute on coordinates of size 1 is the bound.
"""

from __future__ import annotations

import importlib
import json

import numpy as np
import pytest

import gradcli
from gradcli.cli.main import main
from gradcli.errors import EvaluationError
from gradcli.plot import build_figure, compute_field, parse_options
from gradcli.plot.marks import with_marks
from gradcli.plot.traced import MAX_TRACED, PATH_SAMPLES, SURFACE_SAMPLES

PLANE = ["[-y, x]", "--grid", "x=-2:2:21", "--grid", "y=-2:2:21"]
SPACE = ["[x, y, z]", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5", "--grid", "z=-1:1:5"]
CIRCLE = "t: [cos(t), sin(t)], t=0:2pi"
ULP = 1e-14


def _figure(expr: str, grid: dict, **opts):
    options = parse_options(**opts)
    fl = with_marks(compute_field(expr, grid), options)
    return fl, build_figure(fl, options)[1]


def _line(drawn, gid: str) -> np.ndarray:
    hits = [ln for ln in drawn.ax.lines if ln.get_gid() == gid]
    assert len(hits) == 1
    return np.asarray(hits[0].get_xydata())


def _arrow(drawn, gid: str):
    hits = [t for t in drawn.ax.texts if t.get_gid() == gid]
    assert len(hits) == 1
    return np.asarray(hits[0].xy, dtype=float), np.asarray(hits[0].xyann, dtype=float)


def page_spec(path) -> dict:
    text = path.read_text(encoding="utf-8")
    start = text.index("const spec = ") + len("const spec = ")
    return json.loads(text[start:text.index(";\nPlotly.newPlot(", start)])


def _trace(spec: dict, meta: str) -> dict:
    hits = [t for t in spec["data"] if t.get("meta") == meta]
    assert len(hits) == 1, [t.get("meta") for t in spec["data"]]
    return hits[0]


GRID = {"x": (-2, 2, 21), "y": (-2, 2, 21)}


def test_the_drawn_circle_is_the_path_at_the_sample_parameters_and_closes():
    fl, drawn = _figure("[-y, x]", GRID, path=[CIRCLE])
    t = np.linspace(0, 2 * np.pi, PATH_SAMPLES)
    xy = _line(drawn, "traced-1")
    np.testing.assert_allclose(xy, np.stack([np.cos(t), np.sin(t)], axis=1), rtol=0,
                               atol=ULP)
    np.testing.assert_allclose(xy[-1], xy[0], rtol=0, atol=ULP)  # closed: ends meet
    assert fl.marks.traced[0].closed
    # counter-clockwise: the arrowhead at the end, along the last step (upwards at (1, 0))
    tip, tail = _arrow(drawn, "traced-1-direction")
    np.testing.assert_allclose(tip, [1.0, 0.0], atol=ULP)
    np.testing.assert_allclose(tail, [np.cos(t[-2]), np.sin(t[-2])], atol=ULP)
    assert tail[1] < tip[1]
    assert drawn.ax.get_legend_handles_labels()[1] == [f"path {CIRCLE}"]


@pytest.mark.parametrize("spec, end, before", [
    ("t: [t, t^2], t=-1:1", (1.0, 1.0), (0.995, 0.990025)),
    ("t: [t, t^2], t=1:-1", (-1.0, 1.0), (-0.995, 0.990025)),  # the range sets the direction
])
def test_the_direction_marker_is_at_the_end_the_range_reaches(spec, end, before):
    fl, drawn = _figure("[-y, x]", GRID, path=spec)
    tip, tail = _arrow(drawn, "traced-1-direction")
    np.testing.assert_allclose(tip, end, atol=ULP)
    np.testing.assert_allclose(tail, before, atol=ULP)
    assert not fl.marks.traced[0].closed


def test_a_disc_and_a_box_are_their_counter_clockwise_boundaries():
    fl, drawn = _figure("[-y, x]", GRID, disc="0.5,-0.25,1.25", box=["-1:1,0:1.5"])
    disc, box = _line(drawn, "traced-1"), _line(drawn, "traced-2")
    np.testing.assert_allclose(np.hypot(disc[:, 0] - 0.5, disc[:, 1] + 0.25), 1.25,
                               rtol=1e-15 * 8)
    np.testing.assert_allclose(disc[0], [1.75, -0.25], atol=ULP)
    angle = np.unwrap(np.arctan2(disc[:, 1] + 0.25, disc[:, 0] - 0.5))
    assert (np.diff(angle) > 0).all()  # counter-clockwise all the way round
    corners = [(-1, 0), (1, 0), (1, 1.5), (-1, 1.5), (-1, 0)]
    at = [0, 100, 200, 300, 400]  # t = 0, 1, 2, 3, 4 of the box's 401 samples
    np.testing.assert_allclose(box[at], corners, atol=1e-12)
    assert [m.closed for m in fl.marks.traced] == [True, True]


def test_a_path_may_use_values_held_fixed(tmp_path, capsys):
    out = tmp_path / "held.html"
    assert main(["plot", "[-y, x]", "--grid", "x=-3:3:11", "--grid", "y=-3:3:11", "--at",
                 "a=2.5", "--path", "t: [a*cos(t), a*sin(t)], t=0:pi", "-o", str(out)]) == 0
    line = _trace(page_spec(out), "traced-1")
    t = np.linspace(0, np.pi, PATH_SAMPLES)
    np.testing.assert_allclose(line["x"], 2.5 * np.cos(t), atol=ULP * 3)
    np.testing.assert_allclose(line["y"], 2.5 * np.sin(t), atol=ULP * 3)


def test_the_page_draws_the_path_and_its_arrow_at_the_end(tmp_path, capsys):
    out = tmp_path / "p.html"
    assert main(["plot", *PLANE, "--path", CIRCLE, "-o", str(out)]) == 0
    spec = page_spec(out)
    t = np.linspace(0, 2 * np.pi, PATH_SAMPLES)
    line = _trace(spec, "traced-1")
    np.testing.assert_allclose(line["x"], np.cos(t), atol=ULP)
    np.testing.assert_allclose(line["y"], np.sin(t), atol=ULP)
    start = _trace(spec, "traced-1-start")
    assert (start["x"], start["y"]) == ([1.0], [0.0])
    arrow = _trace(spec, "traced-1-direction")
    assert arrow["marker"]["angleref"] == "previous"  # turned along the last step
    np.testing.assert_allclose(arrow["x"], [np.cos(t[-2]), 1.0], atol=ULP)
    np.testing.assert_allclose(arrow["y"], [np.sin(t[-2]), 0.0], atol=ULP)
    first = out.read_bytes()
    assert main(["plot", *PLANE, "--path", CIRCLE, "-o", str(out)]) == 0
    assert out.read_bytes() == first


def test_a_ball_and_a_surface_over_a_3d_fields_page_with_their_normals(tmp_path, capsys):
    out = tmp_path / "s.html"
    assert main(["plot", *SPACE, "--ball", "0.25,0,-0.5,0.75", "--surface",
                 "u,v: [u, v, 1 - u^2], u=0:1, v=0:1", "--path",
                 "t: [cos(t), sin(t), t/6], t=0:2pi", "-o", str(out)]) == 0
    spec = page_spec(out)
    # the path first (paths before surfaces), in space, with a cone at its end
    t = np.linspace(0, 2 * np.pi, PATH_SAMPLES)
    helix = _trace(spec, "traced-1")
    assert helix["type"] == "scatter3d"
    np.testing.assert_allclose(helix["z"], t / 6, atol=ULP)
    cone = _trace(spec, "traced-1-direction")
    np.testing.assert_allclose([cone["x"][0], cone["y"][0], cone["z"][0]],
                               [1.0, 0.0, np.pi / 3], atol=ULP)
    step = np.array([1 - np.cos(t[-2]), -np.sin(t[-2]), (t[-1] - t[-2]) / 6])
    np.testing.assert_allclose([cone["u"][0], cone["v"][0], cone["w"][0]],
                               step / np.linalg.norm(step), atol=1e-9)
    # the sphere: every point at the radius; r_u x r_v at (u, v) = (pi/2, pi) is
    # R^2 sin(u) times the outward unit vector, (-R^2, 0, 0) there
    sphere = _trace(spec, "traced-3")  # in kind order: path, disc, box, surface, ball
    pts = np.array([sphere["x"], sphere["y"], sphere["z"]], dtype=float)
    assert pts.shape == (3, SURFACE_SAMPLES, SURFACE_SAMPLES)
    r = np.sqrt((pts[0] - 0.25) ** 2 + pts[1] ** 2 + (pts[2] + 0.5) ** 2)
    np.testing.assert_allclose(r, 0.75, rtol=1e-14)
    normal = _trace(spec, "traced-3-direction")
    np.testing.assert_allclose([normal["x"][0], normal["y"][0], normal["z"][0]],
                               [-0.5, 0.0, -0.5], atol=ULP)
    np.testing.assert_allclose([normal["u"][0], normal["v"][0], normal["w"][0]],
                               [-0.5625, 0.0, 0.0], atol=ULP)
    # r = (u, v, 1 - u^2): r_u = (1, 0, -2u), r_v = (0, 1, 0), r_u x r_v = (2u, 0, 1)
    surface = _trace(spec, "traced-2")
    z = np.array(surface["z"], dtype=float)
    u = np.linspace(0, 1, SURFACE_SAMPLES)
    np.testing.assert_allclose(z, np.broadcast_to((1 - u ** 2)[:, None], z.shape), atol=ULP)
    normal = _trace(spec, "traced-2-direction")
    np.testing.assert_allclose([normal["u"][0], normal["v"][0], normal["w"][0]],
                               [1.0, 0.0, 1.0], atol=ULP)


def test_the_preview_draws_the_path_with_its_start_and_direction(capsys):
    assert main(["plot", *PLANE, "--path", "t: [t, 0.5], t=-1.5:1.5", "--preview"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "o" in line and "•" in line)
    assert row.index("o") < row.index("•") < row.index("→")  # left to right, arrow last


def test_the_png_is_the_same_bytes_every_run(tmp_path, capsys):
    out = tmp_path / "p.png"
    args = ["plot", *PLANE, "--path", CIRCLE, "--box", "0:1,0:1", "-o", str(out)]
    assert main(args) == 0
    first = out.read_bytes()
    assert main(args) == 0
    assert out.read_bytes() == first


def test_the_svg_names_the_path_and_its_arrow(tmp_path, capsys):
    out = tmp_path / "p.svg"
    assert main(["plot", *PLANE, "--path", CIRCLE, "-o", str(out)]) == 0
    text = out.read_text()
    assert 'id="traced-1"' in text and 'id="traced-1-direction"' in text


@pytest.mark.parametrize("extra, message", [
    (["--path", "t: [cos(t), sin(t)]"],
     "--path 't: [cos(t), sin(t)]': write the path as 't: [x(t), y(t)], t=0:2pi'"),
    (["--path", "t: [cos(t), sin(t), t], t=0:1"],
     "--path 't: [cos(t), sin(t), t], t=0:1': 3 components over a field of 2 drawn "
     "variables (x, y): they pair in order"),
    (["--path", "t: [cos(s), sin(t)], t=0:1"],
     "--path 't: [cos(s), sin(t)], t=0:1': 's' has no value (the spec may use only t and "
     "the values held fixed)"),
    (["--path", "t: cos(t), t=0:1"],
     "--path 't: cos(t), t=0:1': the points are a bracket [x, y] or [x, y, z]"),
    (["--surface", "u,v: [u, v, 0], u=0:1, v=0:1"],
     "--surface is drawn over a field of three grid variables (the page's cones); this "
     "plot has 2"),
    (["--disc", "0,0,-1"], "--disc '0,0,-1': a finite centre and a radius > 0"),
    (["--path", CIRCLE] * (MAX_TRACED + 1),
     f"{MAX_TRACED + 1} paths and surfaces: a picture draws at most {MAX_TRACED}"),
])
def test_bad_specs_are_one_line_exit_2_and_no_file(tmp_path, capsys, extra, message):
    out = tmp_path / "bad.png"
    assert main(["plot", *PLANE, *extra, "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"gradcli: error: {message}\n"
    assert not out.exists()


@pytest.mark.parametrize("args, message", [
    (["sin(x)", "--grid", "x=0:1:11", "--path", CIRCLE, "-o", "c.png"],
     "--path is drawn over a field of two grid variables (or three, on the page); this "
     "plot has one"),
    ([*SPACE, "--slice", "z=0", "--path", CIRCLE, "-o", "c.png"],
     "--path is drawn on a still picture of the whole field: not with --slice"),
    ([*SPACE, "--ball", "0,0,0,1", "-o", "c.png"],
     "a 3-D field has no flat picture"),
])
def test_where_a_picture_cannot_show_it_one_line_says_so(tmp_path, capsys, monkeypatch,
                                                       args, message):
    monkeypatch.chdir(tmp_path)
    assert main(["plot", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "c.png").exists()


def test_the_library_names_its_parameters():
    importlib.import_module("gradcli.plot")
    with pytest.raises(EvaluationError) as caught:
        gradcli.plot("[-y, x]", {"x": (-2, 2, 11), "y": (-2, 2, 11)}, path="t: [t], t=0:1")
    text = str(caught.value)
    assert "path='t: [t], t=0:1'" in text and "--path" not in text
    picture = gradcli.plot("[-y, x]", {"x": (-2, 2, 11), "y": (-2, 2, 11)}, format="svg",
                           path=CIRCLE, box=["0:1,0:1"])
    assert b'id="traced-2-direction"' in picture.data
