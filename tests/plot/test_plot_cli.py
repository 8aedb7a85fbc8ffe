"""``gradcli plot`` end to end: formats, sizes, reproducible bytes, and the error contract
(exit 2 for bad input, exit 1 for an unwritable path, never a file left behind)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys

import pytest

from gradcli.cli.main import main

FIELD = ["sin(x)*cos(y)", "--grid", "x=0:2pi:21", "--grid", "y=0:2pi:21"]
SMALL = ["--size", "3x2.5", "--dpi", "40"]


def run(args: list[str], capsys) -> tuple[int, str]:
    status = main(["plot", *args])
    return status, capsys.readouterr().err


def png_size(path) -> tuple[int, int]:
    with open(path, "rb") as handle:
        head = handle.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_png_size_is_size_times_dpi(tmp_path, capsys):
    out = tmp_path / "f.png"
    status, err = run([*FIELD, "--size", "4x3", "--dpi", "50", "-o", str(out)], capsys)
    assert (status, err) == (0, "")
    assert png_size(out) == (200, 150)


@pytest.mark.parametrize(("ext", "magic"), [("png", b"\x89PNG"), ("pdf", b"%PDF"),
                                            ("svg", b"<svg")])
def test_format_follows_extension_and_bytes_are_reproducible(tmp_path, capsys, ext, magic):
    out = tmp_path / f"f.{ext.upper() if ext == 'pdf' else ext}"
    assert run([*FIELD, *SMALL, "--contour", "3", "-o", str(out)], capsys)[0] == 0
    first = out.read_bytes()
    assert magic in first[:400]
    assert run([*FIELD, *SMALL, "--contour", "3", "-o", str(out)], capsys)[0] == 0
    assert out.read_bytes() == first
    assert os.listdir(tmp_path) == [out.name]  # no temporary files left beside it


@pytest.mark.parametrize("extra", [
    ["--stream"], ["--normalize", "--every", "3"], ["--arrows", "none", "--title", "T"],
    ["--aspect", "auto", "--cmap", "magma"],
])
def test_field_options(tmp_path, capsys, extra):
    out = tmp_path / "f.png"
    assert run([*FIELD, *SMALL, *extra, "-o", str(out)], capsys) == (0, "")
    assert png_size(out) == (120, 100)


@pytest.mark.parametrize("args", [
    ["sin(x)", "--grid", "x=0:2pi:50", "--derivative", "--every", "5"],
    ["[x*y, x-y]", "--grid", "x=-1:1:11", "--grid", "y=-1:1:11", "--color", "curl"],
    ["[-y, x]", "--grid", "x=-1:1:11", "--grid", "y=-1:1:11", "--stream"],
])
def test_curves_and_vector_fields(tmp_path, capsys, args):
    out = tmp_path / "p.svg"
    assert run([*args, *SMALL, "-o", str(out)], capsys) == (0, "")
    assert out.read_bytes().count(b"<svg") == 1


def test_no_grid_samples_every_variable_on_minus5_5(tmp_path, capsys):
    out = tmp_path / "f.png"
    status, err = run(["x*y", *SMALL, "-o", str(out)], capsys)
    assert status == 0
    assert "--grid x=-5:5:101 --grid y=-5:5:101" in err
    assert run(["x*y", *SMALL, "-q", "-o", str(out)], capsys) == (0, "")


@pytest.mark.parametrize(("args", "needle"), [
    (["x+y+z", "--grid", "x=0:1:5", "--grid", "y=0:1:5", "--grid", "z=0:1:5"],
     "add --slice z=VALUE to draw one plane"),
    (["x", "--grid", "x=1:1:5"], "start and stop are equal"),
    (["x*y", "--grid", "x=0:1:5", "--grid", "y=0:1:5", "--slice", "y=0"],
     "--slice draws one plane of a 3-D field"),
    ([*FIELD, "--ylim", "0:1"], "--ylim sets the y-range of a curve"),
    (["x", "--grid", "x=0:1:5", "--ylim", "2:1"], "LOW must be below HIGH"),
    (["x", "--grid", "x=0:1:5", "--vmin", "1"], "--vmin needs two grid variables"),
    # a curve has no colour map: --cmap was silently ignored there
    (["x", "--grid", "x=0:1:5", "--cmap", "inferno"], "--cmap needs two grid variables"),
    ([*FIELD, "--vmin", "1", "--vmax", "0"], "--vmin 1 must be below --vmax 0"),
    ([*FIELD, "--scale", "0"], "--scale must be a finite number > 0"),
    ([*FIELD, "--animate", "t=0:1:1"], "number of frames"),
    ([*FIELD, "--color", "curl"], "--color curl is for vector fields"),
    ([*FIELD, "--stream", "--arrows", "none"], "--stream"),
    ([*FIELD, "--arrows", "sideways"], "--arrows"),
    ([*FIELD, "--size", "big"], "--size 'big'"),
    ([*FIELD, "--cmap", "nosuchmap"], "unknown colormap 'nosuchmap'"),
    ([*FIELD, "--every", "0"], "--every"),
    (["sin(x", "--grid", "x=0:1:5"], "sin(x"),
    (["sin(x)*y", "--grid", "x=0:1:5"], "'y' is not bound"),
    (["sin(x)", "--grid", "x=0:1:5", "--contour", "4"], "two grid variables"),
    (["sin(x)", "--grid", "x=0:1:5", "--grid", "x=0:2:5"], "twice"),
])
def test_bad_input_is_exit_2_with_one_clear_line_and_no_file(tmp_path, capsys, args,
                                                              needle):
    out = tmp_path / "f.png"
    status, err = run([*SMALL, *args, "-o", str(out)], capsys)  # later options win
    assert status == 2
    assert needle in err
    assert "Traceback" not in err
    assert os.listdir(tmp_path) == []


def test_unknown_extension(tmp_path, capsys):
    out = tmp_path / "f.xyz"
    status, err = run([*FIELD, "-o", str(out)], capsys)
    assert status == 2
    assert ("unknown picture extension '.xyz': use .png, .svg, .pdf, .html, .gif, .mp4"
            in err)
    assert os.listdir(tmp_path) == []


def test_unwritable_path_is_exit_1_naming_the_path(capsys):
    status, err = run([*FIELD, "-o", "/nonexistent/dir/x.png"], capsys)
    assert status == 1
    assert "/nonexistent/dir/x.png" in err
    assert err.count("\n") == 1


def test_failed_save_leaves_nothing_behind(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from gradcli.output import OutputError
    from gradcli.plot import save_figure

    def broken(self, fname, **kwargs):
        fname.write(b"half a picture")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(OutputError, match="No space left on device"):
        save_figure(Figure(), str(tmp_path / "x.png"))
    assert os.listdir(tmp_path) == []


def test_matplotlib_is_not_imported_by_the_cli_until_plot_runs():
    code = ("import sys, gradcli, gradcli.cli.app, gradcli.cli.commands.plot_command; "
            "gradcli.cli.app.build(); print('matplotlib' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "False"
