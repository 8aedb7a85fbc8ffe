"""Every output format gradcli writes, one record each: the one table of formats.

Why one table: which extension means which format, which extra a format needs, whether it
needs a file, whether the evaluation can stream into it and what it can hold used to be
written out in five places that disagreed. Everything that needs one of these facts reads
it here: the command line's format choices, help texts and extension rule
(``gradcli.cli``), the docs' format page, the requirement check (:func:`require`), the
choice of a streaming sink (``gradcli.output.sink_for``) and ``gradcli.output.write``'s
dispatch.

A record says what a format can hold (``holds``): ``rows`` (a table of rows: every
command that produces rows writes every ``rows`` format), ``polynomial`` (taylor's
polynomial as text), ``graph`` (``gradcli graph``), ``picture`` and ``animation``
(``gradcli plot``). A command declares the kinds it writes; its formats are the records
holding one of them, in the order registered. Adding a format is one :func:`register`
call with its writer (``tests/output/test_output_formats.py`` registers a toy one at run time).

Writers are named ``"module:function"`` and imported when used, so a one-point CSV pays
for no other writer. A rows writer is called as ``writer(columns, request)`` with a
:class:`WriteRequest`; it returns notes for stderr. A sink factory (``sink``) is called
as ``factory(request)`` and returns an evaluation sink (``gradcli.evaluation.runner``)
that writes rows as they are computed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = ["Format", "WriteRequest", "FORMATS", "KINDS", "register", "unregister", "get",
           "holding", "by_extension", "extensions", "require", "resolve", "ROWS",
           "POLYNOMIAL", "GRAPH", "PICTURE", "ANIMATION"]

ROWS, POLYNOMIAL, GRAPH, PICTURE, ANIMATION = "rows", "polynomial", "graph", "picture", \
    "animation"
FORMULA = "formula"
#: what each kind of content is, for the docs
KINDS = {ROWS: "a table of rows (every command that produces rows)",
         POLYNOMIAL: "taylor's polynomial as text",
         FORMULA: "derivative formulas (--formula): one line, entry or LaTeX line each",
         GRAPH: "the computation graph (gradcli graph)",
         PICTURE: "a picture (gradcli plot)",
         ANIMATION: "an animation (gradcli plot of a formula over time)"}


@dataclass
class Format:
    """One output format.

    ``name`` is what the library's ``fmt=`` (and the command line) takes; ``extensions``
    the file names that pick it (lower case, with the dot; empty for a format chosen only
    by name); ``holds`` the kinds of content it can hold (see the module doc);
    ``extra`` the pip extra it needs and ``modules`` what that extra provides (checked
    before any work); ``file_only`` that it cannot go to standard output; ``streams``
    that rows are written as they are produced; ``writer`` and ``sink`` are
    ``"module:function"`` (or a callable) for rows; ``text`` is the writer of text content
    (taylor's polynomial, formulas, the graph's source), called as ``text(content,
    request)``; ``summary`` is the docs' line.
    """

    name: str
    extensions: tuple[str, ...]
    holds: tuple[str, ...]
    summary: str
    extra: str | None = None
    modules: tuple[str, ...] = ()
    file_only: bool = False
    streams: bool = False
    writer: str | Callable[..., list[str]] | None = None
    sink: str | Callable[..., Any] | None = None
    text: str | Callable[..., list[str]] | None = None


@dataclass
class WriteRequest:
    """Where and how a rows writer writes: ``path`` (None: ``stdout``), the result's
    description (``expression``, ``variables``, ``notes``, ``origin``, ``history``), the
    table options (``precision``, ``max_rows``, ``title``, ``console``), ``progress``
    (rows written, total rows) and ``overwrite`` (a store's foreign entries may go)."""

    fmt: str
    path: str | None = None
    stdout: TextIO | None = None
    expression: str = ""
    variables: Sequence[str] = ()
    notes: Sequence[str] = ()
    precision: int = 6
    console: Any = None
    max_rows: int = 40
    title: str | None = None
    progress: Callable[[int, int], None] | None = None
    origin: Any = None
    history: str = ""
    overwrite: bool = False  # a .zarr store may replace one holding others' entries
    extras: dict[str, Any] = field(default_factory=dict)


#: every format, by name, in registration order (the order help texts list them in)
FORMATS: dict[str, Format] = {}


def register(fmt: Format) -> Format:
    """Add ``fmt`` to the table (replacing a record of the same name); return it."""
    for other in FORMATS.values():
        clash = set(other.extensions) & set(fmt.extensions)
        if other.name != fmt.name and clash:
            raise ValueError(f"extension {sorted(clash)[0]} already means {other.name}")
    FORMATS[fmt.name] = fmt
    return fmt


def unregister(name: str) -> None:
    """Remove a format (tests that registered one at run time)."""
    FORMATS.pop(name, None)


def get(name: str) -> Format:
    """The record of ``name`` (ValueError naming the known ones)."""
    try:
        return FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown output format '{name}': use one of "
                         f"{', '.join(FORMATS)}") from None


def holding(kinds: Sequence[str]) -> list[Format]:
    """The formats that can hold one of ``kinds``, in table order."""
    return [f for f in FORMATS.values() if any(k in f.holds for k in kinds)]


def extensions(kinds: Sequence[str]) -> dict[str, str]:
    """Extension -> format name for the formats holding one of ``kinds``."""
    return {ext: f.name for f in holding(kinds) for ext in f.extensions}


def by_extension(ext: str, kinds: Sequence[str] = (ROWS,)) -> str | None:
    """The format ``ext`` (``.csv``) picks among those holding ``kinds``, or None."""
    return extensions(kinds).get(ext.lower())


def resolve(spec: str | Callable[..., Any]) -> Callable[..., Any]:
    """A ``"module:function"`` spec (or a callable) as the callable."""
    if callable(spec):
        return spec
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def require(name: str) -> None:
    """Raise ``MissingExtra`` (exit 2, naming the extra) when format ``name`` needs an
    optional dependency that is not installed: said before evaluating, not after."""
    fmt = FORMATS.get(name)
    if fmt is None or not fmt.modules:
        return
    from gradcli.evaluation.extras import NEEDS, MissingExtra

    missing = []
    for module in fmt.modules:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module.split(".")[0])
    if missing:
        # how the user asked for it, as the extras' table says it; else the format's name
        asked = NEEDS[name][0] if name in NEEDS else f"the {name} format"
        raise MissingExtra(f"{asked} needs {' and '.join(missing)}, which "
                           f"{'is' if len(missing) == 1 else 'are'} not installed: "
                           f"pip install 'gradcli[{fmt.extra}]'")


_W = "gradcli.output.writers:"
for _record in (
    Format("table", (), (ROWS, GRAPH), "A table for people (rich); the default on a "
           "terminal. With -o, a text file as wide as the table.", writer=_W + "write_table"),
    Format("csv", (".csv",), (ROWS,), "Comma-separated values: a header, then one line per "
           "row; numbers as the shortest text that reads back exactly in their dtype.",
           writer=_W + "write_csv_rows"),
    Format("json", (".json",), (ROWS, GRAPH, FORMULA), "One JSON document: expression, variables, "
           "columns, notes and rows; nan and inf as the strings \"nan\", \"inf\", \"-inf\".",
           writer=_W + "write_json_rows", text=_W + "write_text"),
    Format("jsonl", (".jsonl",), (ROWS,), "JSON Lines: one JSON object per row, written as "
           "rows are produced (for pipes); nan and inf as in JSON.", streams=True,
           writer=_W + "write_jsonl_rows", sink=_W + "jsonl_sink"),
    Format("npz", (".npz",), (ROWS,), "NumPy archive: one array per result block (a "
           "vector's derivatives as one (..., n) array); integer columns stay integers.",
           file_only=True, streams=True, writer=_W + "write_npz_rows",
           sink=_W + "stream_sink"),
    Format("npy", (".npy",), (ROWS,), "NumPy record array: one field per column or block, "
           "streamed in row order.", file_only=True, streams=True,
           writer=_W + "write_npy_rows", sink=_W + "stream_sink"),
    Format("nc", (".nc",), (ROWS,), "NetCDF-4 through xarray: a grid's dimensions are its "
           "variables; a table of rows has a row dimension.", extra="data",
           modules=("xarray", "h5netcdf"), file_only=True, writer=_W + "write_nc_rows"),
    Format("zarr", (".zarr",), (ROWS,), "A Zarr v3 store (a directory or an fsspec URL), "
           "laid out as the NetCDF file; a grid is streamed.", extra="data",
           modules=("zarr", "fsspec"), file_only=True, streams=True,
           writer=_W + "write_zarr_rows", sink=_W + "zarr_sink"),
    Format("parquet", (".parquet",), (ROWS,), "Apache Parquet through pyarrow: the CSV's "
           "columns, typed.", extra="data", modules=("pyarrow",), file_only=True,
           writer=_W + "write_parquet_rows"),
    Format("text", (".txt",), (POLYNOMIAL, FORMULA), "Plain text: taylor's polynomial, one "
           "line per point, or derivative formulas, in gradcli's expression language.",
           text=_W + "write_text"),
    Format("latex", (".tex",), (FORMULA,), "LaTeX: derivative formulas (--formula), one "
           "equation per line.", text=_W + "write_text"),
    Format("dot", (".dot", ".gv"), (GRAPH,), "Graphviz source of the computation graph.",
           text=_W + "write_text"),
    Format("png", (".png",), (PICTURE,), "A PNG picture (matplotlib)."),
    Format("svg", (".svg",), (PICTURE,), "An SVG picture (matplotlib)."),
    Format("pdf", (".pdf",), (PICTURE,), "A PDF picture (matplotlib)."),
    Format("html", (".html",), (PICTURE,), "An interactive page (plotly).", extra="html",
           modules=("plotly",)),
    Format("gif", (".gif",), (ANIMATION,), "An animated GIF."),
    Format("mp4", (".mp4",), (ANIMATION,), "An MP4 movie (needs ffmpeg)."),
):
    register(_record)
del _record
