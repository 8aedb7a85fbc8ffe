"""3-D slices, animations, the terminal preview, and what ``gradcli plot`` says on stderr
(nan/inf warnings, notes, a degenerate range refused before anything is drawn)."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from gradcli.cli.main import main
from gradcli.plot import PlotOptions, build_figure, compute_field
from gradcli.plot.terminal import GLYPHS, RAMP, preview

CUBE = ["--grid", "x=-1:1:9", "--grid", "y=-1:1:9", "--grid", "z=-1:1:9"]
WAVE = ["sin(x-t)*cos(y)", "--grid", "x=0:2pi:24", "--grid", "y=0:2pi:24",
        "--size", "3x2.5", "--dpi", "40"]


def run(args, capsys) -> tuple[int, str, str]:
    status = main(["plot", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_slice_draws_the_plane_with_the_normal_component_as_colour():
    grid = {"x": (-1, 1, 9), "y": (-2, 2, 9), "z": (-1, 1, 5)}
    fl = compute_field("x^2*y + z^3*x", grid, slice_=("z", 0.5))
    fig, drawn = build_figure(fl, PlotOptions(every=1))
    X, Y = np.meshgrid(np.linspace(-1, 1, 9), np.linspace(-2, 2, 9), indexing="ij")
    np.testing.assert_allclose(drawn.heat, 3 * 0.25 * X, atol=1e-12)  # df/dz at z = 0.5
    q = drawn.quiver
    np.testing.assert_allclose(q.U / np.hypot(q.U, q.V),
                               (2 * q.X * q.Y + 0.125) / np.hypot(2 * q.X * q.Y + 0.125,
                                                                  q.X ** 2), atol=1e-12)
    assert drawn.image.cmap.name == "RdBu_r" and drawn.image.norm(0.0) == pytest.approx(0.5)
    assert drawn.colorbar.ax.get_ylabel().startswith("∂f/∂z (across the slice z = 0.5)")


def test_slice_of_a_vector_field_colours_by_w():
    fl = compute_field("[y, -x, x*y]", {"x": (-1, 1, 5), "y": (-1, 1, 5), "z": (0, 1, 3)},
                       slice_=("z", 1.0))
    X, Y = np.meshgrid(np.linspace(-1, 1, 5), np.linspace(-1, 1, 5), indexing="ij")
    np.testing.assert_allclose(fl.normal, X * Y)
    np.testing.assert_allclose(fl.values[0], Y)


def test_3d_png_without_a_slice_is_a_clear_error(tmp_path, capsys):
    status, _, err = run(["x*y*z", *CUBE, "-o", str(tmp_path / "f.png")], capsys)
    assert status == 2
    assert "--slice z=VALUE" in err and "-o field.html" in err
    assert err.count("\n") == 1 and os.listdir(tmp_path) == []


@pytest.mark.parametrize(("extra", "needle"), [
    (["--slice", "z=3"], "outside the grid's range"),
    (["--slice", "w=0"], "must be one of the sampled grid variables"),
])
def test_bad_slices(tmp_path, capsys, extra, needle):
    status, _, err = run(["x*y*z", *CUBE, *extra, "-o", str(tmp_path / "f.png")], capsys)
    assert status == 2 and needle in err


def test_slice_png(tmp_path, capsys):
    out = tmp_path / "s.png"
    status, _, err = run(["x*y*z", *CUBE, "--slice", "z=0.5", "--size", "3x2.5", "-o",
                          str(out)], capsys)
    assert (status, err) == (0, "") and out.read_bytes()[:4] == b"\x89PNG"


def test_animation_frames_share_one_colour_scale():
    from gradcli.plot.animate import shared_limits

    fl = compute_field("exp(t)*sin(x)*cos(y)", {"x": (0, 6, 13), "y": (0, 6, 13)},
                       animate=("t", (0.0, 1.0, 3)))
    assert fl.frames is not None and len(fl.frames) == 3
    limits = shared_limits(fl, PlotOptions())
    f = np.sin(np.linspace(0, 6, 13))[:, None] * np.cos(np.linspace(0, 6, 13))[None, :]
    assert (limits.colors.vmin, limits.colors.vmax) == pytest.approx((np.e * f.min(),
                                                                      np.e * f.max()))
    for k in range(3):
        fig, drawn = build_figure(fl.frame(k), PlotOptions(), limits)
        assert (drawn.image.norm.vmin, drawn.image.norm.vmax) == (limits.colors.vmin,
                                                                  limits.colors.vmax)
        np.testing.assert_allclose(drawn.heat, np.exp(fl.frames[k]) * f, atol=1e-12)


def test_gif_has_every_frame_and_the_same_bytes_every_run(tmp_path, capsys):
    from PIL import Image

    out = tmp_path / "wave.gif"
    args = [*WAVE, "--animate", "t=0:2pi:6", "-o", str(out)]
    assert run(args, capsys)[:3:2] == (0, "")
    first = out.read_bytes()
    with Image.open(out) as im:
        assert im.n_frames == 6 and im.size == (120, 100)
        assert im.info["duration"] == 80 and im.info["loop"] == 0  # 12 fps in 1/100 s
    assert run(args, capsys)[0] == 0
    assert out.read_bytes() == first
    assert os.listdir(tmp_path) == ["wave.gif"]


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="needs ffmpeg (apt-get install "
                    "ffmpeg); its absence is tested below")
def test_mp4_through_ffmpeg_is_reproducible(tmp_path, capsys):
    out = tmp_path / "wave.mp4"
    args = [*WAVE, "--animate", "t=0:2pi:4", "--fps", "8", "-o", str(out)]
    assert run(args, capsys)[:3:2] == (0, "")
    first = out.read_bytes()
    assert first[4:8] == b"ftyp"
    assert run(args, capsys)[0] == 0
    assert out.read_bytes() == first


def test_mp4_without_ffmpeg_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    status, _, err = run([*WAVE, "--animate", "t=0:1:3", "-o", str(tmp_path / "w.mp4")],
                         capsys)
    assert status == 2 and "needs ffmpeg" in err and "-o NAME.gif" in err
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(("extra", "needle"), [
    (["--animate", "t=0:1:3", "-o", "w.png"], "--animate writes a movie"),
    (["-o", "w.gif"], "add --animate"),
    (["--animate", "x=0:1:3", "-o", "w.gif"], "also given with --grid"),
    # a frame rate without a movie was silently ignored, unlike --lr or --order alone
    (["--fps", "5", "-o", "w.png"], "--fps sets the frame rate of an --animate movie: add "
                                    "--animate VAR=START:STOP:FRAMES"),
])
def test_animation_misuse(tmp_path, capsys, monkeypatch, extra, needle):
    monkeypatch.chdir(tmp_path)
    status, _, err = run([*WAVE, *extra], capsys)
    assert status == 2 and needle in err


def _preview(expr, grid, **opts) -> str:
    stream = io.StringIO()
    preview(compute_field(expr, grid), PlotOptions(**opts), stream)
    return stream.getvalue()


def test_preview_fits_the_width_and_shows_directions(monkeypatch):
    monkeypatch.setenv("COLUMNS", "50")
    text = _preview("x", {"x": (-1, 1, 101), "y": (-1, 1, 101)})
    lines = text.splitlines()
    assert max(len(line) for line in lines[1:]) <= 50
    body = "".join(lines[1:-1])
    assert set(c for c in body if c in GLYPHS) == {"→"}  # grad x = (1, 0) everywhere
    assert "\x1b[" not in text  # not a terminal: no colour codes


def test_preview_directions_of_a_rotation():
    text = _preview("x^2 + y^2", {"x": (-1, 1, 41), "y": (-1, 1, 41)})
    rows = text.splitlines()[1:-1]
    half = len(rows[0]) // 2
    assert "↗" in rows[0][half + 3:]  # top right points away from the centre
    assert "↙" in "".join(r[:half - 3] for r in rows[-2:])  # and bottom left


def test_preview_colour_and_no_color(monkeypatch):
    from rich.console import Console

    grid = {"x": (0, 6.3, 60), "y": (0, 6.3, 60)}
    fl = compute_field("sin(x)*cos(y)", grid)
    stream = io.StringIO()
    import gradcli.plot.terminal as terminal

    monkeypatch.delenv("NO_COLOR", raising=False)
    real = Console
    monkeypatch.setattr("rich.console.Console",
                        lambda **kw: real(**kw, force_terminal=True, color_system="truecolor",
                                          width=70))
    terminal.preview(fl, PlotOptions(), stream)
    assert "\x1b[" in stream.getvalue() and "48;2;" in stream.getvalue()  # backgrounds
    monkeypatch.setenv("NO_COLOR", "1")
    stream = io.StringIO()
    terminal.preview(fl, PlotOptions(), stream)
    assert "48;2;" not in stream.getvalue()
    assert any(c in stream.getvalue() for c in RAMP[2:])  # the heat as characters


def test_preview_on_the_command_line(capsys):
    status, out, err = run(["sin(x)", "--grid", "x=0:2pi:100", "--preview"], capsys)
    assert status == 0 and out.startswith("f(x) = sin(x)")
    assert run(["x*y", "--grid", "x=0:1:5", "--grid", "y=0:1:5", "-o", "-"], capsys)[0] == 0


def test_plot_needs_an_output_or_a_preview(capsys):
    status, _, err = run(["x", "--grid", "x=0:1:5"], capsys)
    assert status == 2 and "--preview" in err


def test_nan_and_inf_are_counted_like_the_other_commands(tmp_path, capsys):
    assert main(["grad", "log(x)", "--grid", "x=-1:1:5", "-f", "csv"]) == 0
    grad_err = capsys.readouterr().err
    n = int(grad_err.split()[1])
    assert n > 0
    status, _, err = run(["log(x)", "--grid", "x=-1:1:5", "-o", str(tmp_path / "l.png")],
                         capsys)
    assert status == 0
    assert f"warning: {n} non-finite result values (nan or inf) in the picture" in err
    assert run(["log(x)", "--grid", "x=-1:1:5", "-q", "-o", str(tmp_path / "l.png")],
               capsys)[2] == ""


def test_degenerate_range_is_refused_before_drawing_with_no_warning_leaking(tmp_path):
    out = tmp_path / "x.png"
    # every warning shown, but the deprecations typer's own import may raise with newer click
    warn = ["-W", "default", "-W", "ignore::DeprecationWarning:typer"]
    done = subprocess.run([sys.executable, *warn, "-m", "gradcli", "plot", "x",
                           "--grid", "x=1:1:5", "-o", str(out)], capture_output=True,
                          text=True)
    assert done.returncode == 2
    assert done.stderr == ("gradcli: error: --grid x=1:1:5: start and stop are equal, so "
                           "there is no range to draw; give two different ends, e.g. "
                           "x=1:2\n")
    assert not out.exists()


def test_every_sample_is_listed_with_its_command_and_the_gif_is_small():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "samples")
    readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    pictures = sorted(f for f in os.listdir(root) if f.endswith((".png", ".gif")))
    for name in pictures:
        assert f"({name})" in readme, f"{name} is not shown in samples/README.md"
        if name not in ("html_field.png", "explore.png"):  # taken by the browser tests,
            # whose commands are listed
            assert f"-o samples/{name}" in readme, f"no command writes {name}"
    assert os.path.getsize(os.path.join(root, "wave.gif")) < 2 * 1024 * 1024
