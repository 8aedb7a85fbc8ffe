"""``gradcli.plot(expression, grid=..., at=..., **options)``: a picture made from Python.

The picture is drawn by the very request the ``plot`` command runs (``run_plot_request``,
options parsed by ``parse_options`` under the declaration's names), written to a private
temporary file and kept as bytes: so ``Picture.save(path)`` writes exactly what
``gradcli plot ... -o path`` writes for the same options, and Jupyter shows those bytes
(``_repr_png_``, ``_repr_svg_``; the interactive page, in an ``<iframe>``, through
``_repr_html_``; a GIF as an ``<img>``). A picture remembers its request, so ``save`` to
another extension draws that format again, as the command would for that ``-o``.
"""

from __future__ import annotations

import base64
import html
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from typing import Any

from gradcli.errors import EvaluationError, ref, render_references
from gradcli.evaluation import DEFAULT_MAX_POINTS
from gradcli.lang import ExpressionWarning
from gradcli.plot.options import FORMATS, parse_options

__all__ = ["Picture", "plot", "PICTURE_FORMATS"]

#: what ``format=`` takes: the picture extensions of the command (``.png`` -> ``png``)
PICTURE_FORMATS = tuple(dict.fromkeys(FORMATS.values()))
_MIME = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf",
         "html": "text/html", "gif": "image/gif", "mp4": "video/mp4"}


class Picture:
    """A picture's bytes in one format (``format``), what the command line would write;
    ``notes`` are the lines it would print beside it. Shows itself in Jupyter."""

    def __init__(self, data: bytes, format: str, expression: str = "",
                 notes: list[str] | None = None, nonfinite: int = 0,
                 redraw: Callable[[str], bytes] | None = None) -> None:
        self.data, self.format, self.expression = data, format, expression
        self.notes = list(notes or [])
        #: nan/inf result values in the picture (drawn blank)
        self.nonfinite = nonfinite
        # the same request drawn as another format (None: only these bytes are known)
        self._redraw = redraw

    @property
    def mimetype(self) -> str:
        return _MIME[self.format]

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the picture to ``path`` (atomically: a failed or interrupted write leaves
        no partial file) in the format its extension names: this picture's bytes, or the
        same request drawn again as that format (``fig.svg`` of a picture shown as PNG),
        byte for byte what ``gradcli plot ... -o fig.svg`` writes."""
        from gradcli.output.atomic import atomic_open
        from gradcli.plot.options import image_format

        wanted = image_format(os.fspath(path))
        data = self.data
        if wanted != self.format:
            if self._redraw is None:
                raise EvaluationError(f"this picture is {self.format}, so "
                                      f"'{os.fspath(path)}' needs the extension "
                                      f".{self.format}: draw it again with "
                                      f"{ref('format', text=wanted, python=repr(wanted))}")
            data = self._redraw(wanted)
        with atomic_open(os.fspath(path), "wb") as fh:
            fh.write(data)

    def _repr_png_(self) -> bytes | None:
        return self.data if self.format == "png" else None

    def _repr_svg_(self) -> str | None:
        return self.data.decode("utf-8") if self.format == "svg" else None

    def _repr_html_(self) -> str | None:
        if self.format == "html":
            # the whole page, isolated from the notebook's own: the attribute is escaped (it
            # cannot close the iframe) and the sandbox lets its scripts run but gives it an
            # opaque origin (no access to the notebook's page, cookies or storage)
            return (f'<iframe sandbox="allow-scripts" '
                    f'srcdoc="{html.escape(self.data.decode("utf-8"), quote=True)}" '
                    'style="width:100%;height:560px;border:none"></iframe>')
        if self.format == "gif":
            encoded = base64.b64encode(self.data).decode("ascii")
            return f'<img src="data:image/gif;base64,{encoded}">'
        return None

    def __repr__(self) -> str:
        lines = [f"<gradcli picture: {self.format} of {self.expression}, "
                 f"{len(self.data):,} bytes>"]
        return "\n".join(lines + [f"note: {n}" for n in self.notes])


def plot(expression: str, grid: Mapping[str, Any] | None = None,
         at: Mapping[str, Any] | None = None, *, format: str = "png",
         max_points: int = DEFAULT_MAX_POINTS, **options: Any) -> Picture:
    """Draw ``expression`` sampled on ``grid`` (``{"x": (start, stop, count)}``, as
    ``gradcli.evaluate`` takes it; ``{"z": value}`` holds z), with ``at`` holding more
    variables fixed (numbers, vectors, matrices), as a ``format`` picture: png (default),
    svg, pdf, html (the interactive page), gif or mp4 (with ``animate=``).

    ``options`` are the ``plot`` command's options by their declared names, with the
    values the command line takes (``color="magnitude"``, ``cmap="viridis"``,
    ``title="..."``, ``size="7x5"``, ``animate="t=0:2pi:48"``, ``path_from=["x=1,y=1"]``);
    an unknown name is a TypeError. Returns a :class:`Picture`.
    """
    from gradcli.execute import execute
    from gradcli.request import Output, Request

    if format not in PICTURE_FORMATS:
        raise EvaluationError(f"{ref('format', text=str(format), python=repr(format))}: a "
                              f"picture is one of {', '.join(PICTURE_FORMATS)}")
    if not grid:
        example = ref("grid", python="{'x': (-2, 2, 101)}")
        raise EvaluationError(f"plot needs {example}: the variables to sample, one or two "
                              "(three with a slice)")
    if options.get("preview"):
        raise EvaluationError(f"{ref('preview')} draws in a terminal; a picture from Python "
                              "is shown by the notebook")
    parse_options(**options)  # a bad option is said before anything is drawn
    grid, fixed = dict(grid), dict(at or {})

    def draw(fmt: str) -> tuple[bytes, Any]:
        with tempfile.TemporaryDirectory(prefix="gradcli-plot-") as folder:
            path = os.path.join(folder, f"picture.{fmt}")
            # matplotlib's own warnings (a missing glyph) are not the user's concern, as on
            # the command line; the picture's notes say what matters
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore")
                warnings.filterwarnings("always", category=ExpressionWarning)
                done = execute(Request(expression, "plot", grid=dict(grid),
                                       fixed=dict(fixed), max_points=max_points,
                                       parameters=dict(options), output=Output(path=path)))
            with open(path, "rb") as fh:
                return fh.read(), done

    data, done = draw(format)
    notes = [render_references(note) for note in done.notes]  # in the library's words
    return Picture(data, format, expression, notes, done.nonfinite,
                   redraw=lambda fmt: draw(fmt)[0])
