"""gradcli.plot from Python: the plot command's options by name, a picture that shows
itself in Jupyter, and save() writing exactly the bytes of gradcli plot -o."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import gradcli
from gradcli.errors import EvaluationError

ROOT = Path(__file__).resolve().parents[2]
GRID = {"x": (-2, 2, 21), "y": (-2, 2, 21)}
OPTIONS = {"color": "magnitude", "cmap": "viridis", "title": "sin(x)·cos(y)"}
FLAGS = ["--grid", "x=-2:2:21", "--grid", "y=-2:2:21", "--color", "magnitude",
         "--cmap", "viridis", "--title", "sin(x)·cos(y)"]


def cli_plot(path: Path, *args: str) -> bytes:
    done = subprocess.run([sys.executable, "-m", "gradcli", "plot", *args, "-o", str(path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr
    return path.read_bytes()


@pytest.mark.parametrize("fmt", ["png", "svg", "html"])
def test_save_writes_the_bytes_the_command_writes(tmp_path: Path, fmt: str) -> None:
    """Same expression, grid and options: the picture's bytes, the saved file and the
    command's -o file are identical."""
    if fmt == "html":
        importlib.import_module("plotly")
    picture = gradcli.plot("sin(x)*cos(y)", grid=GRID, format=fmt, **OPTIONS)
    picture.save(tmp_path / f"library.{fmt}")
    expected = cli_plot(tmp_path / f"cli.{fmt}", "sin(x)*cos(y)", *FLAGS)
    assert (tmp_path / f"library.{fmt}").read_bytes() == picture.data == expected


def test_held_values_and_list_options_are_the_commands(tmp_path: Path) -> None:
    """at= holds a variable as --at does; a repeatable option takes a list."""
    picture = gradcli.plot("a*x^2 + y^2", grid=GRID, at={"a": 2}, format="svg",
                           path_from=["x=1,y=1"], steps=20)
    expected = cli_plot(tmp_path / "cli.svg", "a*x^2 + y^2", "--grid", "x=-2:2:21",
                        "--grid", "y=-2:2:21", "--at", "a=2", "--path-from", "x=1,y=1",
                        "--steps", "20")
    assert picture.data == expected


def test_a_picture_shows_itself_in_its_format() -> None:
    """PNG bytes through _repr_png_, SVG text through _repr_svg_, the page in an iframe
    through _repr_html_; each returns None for the other formats."""
    png = gradcli.plot("x^2", grid={"x": (-1, 1, 11)})
    assert png._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")
    assert png._repr_svg_() is None and png._repr_html_() is None
    assert repr(png).startswith("<gradcli picture: png of x^2, ")
    svg = gradcli.plot("x^2", grid={"x": (-1, 1, 11)}, format="svg")
    assert "<svg" in svg._repr_svg_() and svg._repr_png_() is None
    importlib.import_module("plotly")
    page = gradcli.plot("x^2", grid={"x": (-1, 1, 11)}, format="html")
    assert page._repr_html_().startswith('<iframe sandbox="allow-scripts" '
                                         'srcdoc="&lt;!DOCTYPE html&gt;')
    assert page._repr_png_() is None


def test_the_page_is_shown_in_a_sandboxed_iframe() -> None:
    """The notebook's frame runs the page's scripts in an opaque origin: the iframe tag
    carries sandbox="allow-scripts" (and nothing that would lift it: allow-same-origin)."""
    import html.parser

    importlib.import_module("plotly")
    page = gradcli.plot("x^2", grid={"x": (-1, 1, 11)}, format="html")
    tags: list[tuple[str, dict[str, str | None]]] = []

    class Tags(html.parser.HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            tags.append((tag, dict(attrs)))

    Tags().feed(page._repr_html_())
    assert [t for t, _ in tags] == ["iframe"]  # the page is the attribute's text only
    attrs = tags[0][1]
    assert attrs["sandbox"] == "allow-scripts"
    assert attrs["srcdoc"].encode() == page.data


def test_gradcli_plot_is_callable_however_it_was_imported() -> None:
    """Importing a submodule of the plot package leaves gradcli.plot callable."""
    import gradcli.plot.options  # noqa: F401

    assert callable(gradcli.plot)
    assert gradcli.plot("x", grid={"x": (0, 1, 3)}).format == "png"


def test_bad_requests_are_refused_with_the_library_names(tmp_path: Path) -> None:
    """An unknown option, an unknown format, no grid, a wrong extension on save."""
    with pytest.raises(TypeError, match="unknown plot options: colour"):
        gradcli.plot("x^2", grid={"x": (-1, 1, 5)}, colour="magnitude")
    with pytest.raises(EvaluationError, match="format=.jpeg.: a picture is one of png"):
        gradcli.plot("x^2", grid={"x": (-1, 1, 5)}, format="jpeg")
    with pytest.raises(EvaluationError, match=r"plot needs grid=\{'x': \(-2, 2, 101\)\}"):
        gradcli.plot("x^2")
    with pytest.raises(EvaluationError, match="color must be"):
        gradcli.plot("x^2", grid={"x": (-1, 1, 5)}, color="rainbow")
    picture = gradcli.plot("x^2", grid={"x": (-1, 1, 5)})
    with pytest.raises(EvaluationError, match=r"unknown picture extension '\.jpeg'"):
        picture.save(tmp_path / "a.jpeg")
    assert not (tmp_path / "a.jpeg").exists()
    from gradcli.plot.picture import Picture

    bare = Picture(picture.data, "png", "x^2")  # bytes alone cannot become another format
    with pytest.raises(EvaluationError, match=r"this picture is png, so '.*a\.svg'"):
        bare.save(tmp_path / "a.svg")
    assert not (tmp_path / "a.svg").exists()


@pytest.mark.parametrize("fmt", ["svg", "pdf"])
def test_save_writes_the_format_the_extension_names(tmp_path: Path, fmt: str) -> None:
    """A picture shown as PNG saved as .svg (.pdf) is that format, byte for byte the
    command's -o file of the same request; the picture itself stays PNG."""
    picture = gradcli.plot("sin(x)*cos(y)", grid=GRID, **OPTIONS)
    picture.save(tmp_path / f"library.{fmt}")
    expected = cli_plot(tmp_path / f"cli.{fmt}", "sin(x)*cos(y)", *FLAGS)
    assert (tmp_path / f"library.{fmt}").read_bytes() == expected
    assert picture.format == "png" and picture.data.startswith(b"\x89PNG")
