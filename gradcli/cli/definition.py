"""Every command and option of gradcli, declared once, as data.

The typer application (``app.py``), the argv rewrites (``argv.py``), the defaults a run
receives and the README's option tables (``readme.py``) are all generated from
:data:`COMMANDS`. Adding an option is one :class:`Option` in a command's ``options``;
adding a command is one :class:`Command` (plus the function it runs). Nothing here imports
typer or click: the argv rewrites and the README read it without them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gradcli.fields import defaults as fields_defaults
from gradcli.output import formats as format_table
from gradcli.request.binding import DEFAULT_MAX_POINTS
from gradcli.request.budget import DEFAULT_MEMORY, size_text

#: value kinds: how an option's text becomes its value (``values.py`` converts them)
KINDS = ("flag", "text", "choice", "whole", "real")
#: the largest --max-points: a point count must fit numpy's 64-bit sizes
MAX_COUNT = 2**63 - 1


class _PlotDefault:
    """Stands for a plot drawing option's default: that of the PlotOptions field of the
    same name (``gradcli.plot.OPTION_DEFAULTS``, the one definition), looked up only when
    the plot command is built or listed, so the other commands never import the plot
    package."""

    def __repr__(self) -> str:
        return "PLOT_DEFAULT"


#: the declared default of every plot drawing option (see :class:`_PlotDefault`)
PLOT_DEFAULT: Any = _PlotDefault()


@dataclass
class Option:
    """One command-line option.

    ``name`` is the keyword the command's run function receives. ``kind`` is one of
    :data:`KINDS`; ``whole`` and ``real`` accept gradcli's constant syntax (``1e9``,
    ``2^20``, ``pi/2``), within ``low``..``high`` when given. ``repeat`` collects every
    use into a list; ``once`` refuses a second use instead of letting the last one win.
    ``bare`` is the value an option stands for when given without one (``--grid``).
    ``shown_default`` replaces the default in --help and the README when the default is
    decided at run time. ``to_writer`` names the rows writer's keyword an output option
    feeds (its value travels in the request's output part). ``help`` may be a function
    giving the text when it is shown (the format options' texts are read from the format
    table then). A ``default`` of
    :data:`PLOT_DEFAULT` is PlotOptions' own (:attr:`default_value` looks it up). (Not
    frozen only because frozen dataclasses cost start-up time: nothing changes a
    declaration after it is made.)
    """

    name: str
    flags: tuple[str, ...]
    kind: str
    default: Any
    help: str | Callable[[], str]
    example: str
    metavar: str = ""
    choices: Sequence[str] = ()
    low: float | None = None
    high: float | None = None
    repeat: bool = False
    once: bool = False
    required: bool = False
    bare: str | None = None
    shown_default: str | None = None
    suggest: tuple[str, ...] = ()  # values shell completion offers (choices are offered too)
    #: the rows writer's keyword this option's value goes to (``output.write(title=...)``):
    #: it travels in the request's output part, so no command body names it
    to_writer: str | None = None

    @property
    def takes_value(self) -> bool:
        return self.kind != "flag"

    @property
    def text(self) -> str:
        """The help text (computed now when ``help`` is a function)."""
        return self.help() if callable(self.help) else self.help

    @property
    def default_value(self) -> Any:
        """The value a run receives when the option is not given (``default``, or for
        :data:`PLOT_DEFAULT` the plot options' own)."""
        if self.default is PLOT_DEFAULT:
            from gradcli.plot.options import OPTION_DEFAULTS

            return OPTION_DEFAULTS[self.name]
        return self.default


@dataclass
class Command:
    """One command: ``gradcli NAME EXPRESSION [OPTIONS]``.

    ``run`` names the function that does the work as ``package.module:function``
    (imported only when the command runs); it is called as ``function(name,
    expression=..., **options)`` and returns the exit status. ``writes`` names the kinds
    of content it produces (``gradcli.output.formats``: ``rows``, ``polynomial``...): its
    formats and the extensions that pick them are the format table's records holding
    them; ``auto`` is the format used when none is chosen, on a terminal and elsewhere.
    ``group`` is the README table it is listed in.
    """

    name: str
    help: str
    run: str
    options: tuple[Option, ...]
    examples: tuple[str, ...]
    group: str
    writes: tuple[str, ...] = ()
    auto: tuple[str, str] = ("table", "csv")
    takes_expression: bool = True  # False: ``gradcli NAME [OPTIONS]`` (repl)
    #: its rows of the docs' "Commands and their columns": (shown, columns, notes)
    columns: tuple[tuple[str, str, str], ...] = ()
    expression_default: str | None = None  # an expression that may be left out (explore)

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)

    @property
    def files(self) -> tuple[tuple[str, str], ...]:
        """(extension, format) for every file extension the command writes."""
        return tuple(format_table.extensions(self.writes).items())

    @property
    def formats(self) -> tuple[str, ...]:
        """The names of the formats the command writes."""
        return tuple(f.name for f in format_table.holding(self.writes))


#: colormaps shell completion offers for --cmap (any matplotlib name is accepted; importing
#: matplotlib to list them all would make a completion call slow)
COLORMAPS = ("viridis", "plasma", "inferno", "magma", "cividis", "RdBu_r", "RdBu", "coolwarm",
             "bwr", "seismic", "twilight", "turbo", "Greys", "gray", "Blues", "Reds",
             "YlGnBu", "Spectral")

# --- where to evaluate ------------------------------------------------------------------
BARE_GRID = "*"  # a bare --grid: every other variable of the expression on the default range

AT = Option(
    "at", ("--at", "-a"), "text", None, repeat=True, metavar="POINT",
    help="One point; repeat for more. Beside --grid or --points it holds that variable "
    "fixed for every point. Values are constant expressions (inf and nan are accepted), "
    "vectors [1,2,3], matrices [[1,2],[3,4]], or a file: x=@vec.npy, x=@vec.csv (one value "
    "per line, or a matrix as rows).",
    example='--at "x=1,y=pi/2"')
GRID = Option(
    "grid", ("--grid", "-g"), "text", None, repeat=True, metavar="SPEC", bare=BARE_GRID,
    help="start:stop:count per variable, rows in C order (first grid variable slowest); "
    "z=0.5 holds z fixed; a name alone samples it on -5:5; a bare --grid samples every "
    "variable of the expression on -5:5.",
    example="--grid x=0:2pi:100")
POINTS = Option(
    "points", ("--points", "-p"), "text", None, once=True, metavar="FILE",
    help="CSV file (or - for stdin) whose header names the variables; x[0], x[1] columns "
    "form a vector variable x, A[0][0], A[0][1]... a matrix A; other columns (ids, labels) "
    "are carried to the output as text, before the variables.",
    example="--points pts.csv")

# --- what to write ------------------------------------------------------------------------
class Derived(Sequence[str]):
    """Choices read from their one definition whenever asked, not copied here: a format
    or colour added there is a valid choice, and nothing is imported at start-up."""

    def __init__(self, names: Callable[[], Sequence[str]]) -> None:
        self._source = names

    def _names(self) -> tuple[str, ...]:
        return tuple(self._source())

    def __getitem__(self, index: Any) -> Any:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, item: object) -> bool:
        return item in self._names()

    def __repr__(self) -> str:
        return repr(self._names())


class Choices(Derived):
    """The names of the formats holding ``kinds``, from the format table (so a format
    registered at run time is a valid -f choice), after ``first``."""

    def __init__(self, kinds: Sequence[str], first: Sequence[str] = ("auto",)) -> None:
        self.kinds, self.first = tuple(kinds), tuple(first)
        super().__init__(lambda: self.first + tuple(
            f.name for f in format_table.holding(self.kinds)))


def _plot_colors() -> tuple[str, ...]:
    from gradcli.plot.options import COLORS  # the one list of --color quantities

    return COLORS


ROWS = (format_table.ROWS,)


def _format_help(kinds: tuple[str, ...]) -> Callable[[], str]:
    """--format's text for a command writing ``kinds``, from the format table."""
    def text() -> str:
        names = [f.name for f in format_table.holding(kinds) if not f.file_only]
        files = [f.name for f in format_table.holding(kinds) if f.file_only]
        return ("auto is a table on a terminal and CSV otherwise; with -o the extension "
                "decides, and a -f that contradicts it is an error. Formats: "
                + " ".join(names) + (", and with -o FILE " + " ".join(files) if files else "")
                + ".")
    return text


def _output_help(kinds: tuple[str, ...], lead: str = "Write to FILE (atomically)"
                 ) -> Callable[[], str]:
    """-o's text for a command writing ``kinds``: every extension, from the format table
    (those needing an extra after it)."""
    def text() -> str:
        plain, extra = [], {}
        for f in format_table.holding(kinds):
            exts = " ".join(f.extensions)
            if exts and f.extra:
                extra.setdefault(f.extra, []).append(exts)
            elif exts:
                plain.append(exts)
        tail = "".join(f", and with gradcli[{name}] {' '.join(exts)}"
                       for name, exts in extra.items())
        return f"{lead}; its extension picks the format: {' '.join(plain)}{tail}."
    return text


FORMAT = Option(
    "fmt", ("--format", "-f"), "choice", "auto", metavar="FORMAT",
    choices=Choices(ROWS), help=_format_help(ROWS), example="-f json")
OUTPUT = Option(
    "output", ("--output", "-o"), "text", None, metavar="FILE",
    help=_output_help(ROWS), example="-o grad.nc")
OVERWRITE = Option(
    "overwrite", ("--overwrite",), "flag", False,
    help="Replace a .zarr store even if it holds files gradcli did not write (without it "
    "such a store is named and left alone); what was replaced is said on stderr.",
    example="--overwrite")
PRECISION = Option(
    "precision", ("--precision",), "whole", 6, low=1, high=17, metavar="DIGITS",
    help="Significant digits in tables (files always hold exact values).",
    example="--precision 10")
STRICT = Option(
    "strict", ("--strict",), "flag", False,
    help="Exit 1 if any result is nan or inf (the output is still written).",
    example="--strict")
QUIET = Option(
    "quiet", ("--quiet", "-q"), "flag", False,
    help="No notes or warnings on stderr (errors are still reported).", example="-q")
MAX_POINTS = Option(
    "max_points", ("--max-points",), "whole", DEFAULT_MAX_POINTS, low=0, high=MAX_COUNT,
    metavar="N", help="Refuse more points than this, before anything is allocated.",
    example="--max-points 1e9")
DTYPE = Option(
    "dtype", ("--dtype",), "choice", "float64", choices=("float64", "float32"),
    metavar="DTYPE", help="Floating-point type of the computation.",
    example="--dtype float32")

# --- where to compute ---------------------------------------------------------------------
SCHEDULER = Option(
    "scheduler", ("--scheduler",), "text", None, metavar="ADDRESS",
    shown_default="$GRADCLI_SCHEDULER, else Dask's scheduler-address "
    "($DASK_SCHEDULER_ADDRESS), else this process's threads",
    help="Run on a Dask cluster (needs gradcli[dask]): a scheduler's address, or local:N "
    "for N local worker processes for this command; one task per block, results "
    "identical to a local run. Large results go to -o FILE.zarr, written by the workers.",
    example="--scheduler tcp://head:8786 -o field.zarr")
SCHEDULER_FILE = Option(
    "scheduler_file", ("--scheduler-file",), "text", None, once=True, metavar="PATH",
    help="Run on the Dask cluster whose address is in this scheduler file (JSON, as "
    "written by 'dask scheduler --scheduler-file', dask-jobqueue and dask-mpi).",
    example="--scheduler-file scheduler.json")
SCHEDULER_TIMEOUT = Option(
    "scheduler_timeout", ("--scheduler-timeout",), "real", 10.0, low=0, metavar="SECONDS",
    help="How long to wait for the --scheduler to answer before giving up.",
    example="--scheduler-timeout 30")

CSV_SAFE = Option(
    "csv_safe", ("--csv-safe",), "flag", False,
    help="Columns carried from --points whose text a spreadsheet would run as a formula "
    "(starting with = + - @, not a number) are written with a leading ' (OWASP's advice), "
    "header names too: for output opened in a spreadsheet.",
    example="-p untrusted.csv --csv-safe -o result.csv")
MEMORY = Option(
    "memory", ("--memory",), "text", None, metavar="SIZE",
    shown_default=f"$GRADCLI_MEMORY, else {size_text(DEFAULT_MEMORY)}",
    help="Working memory to stay within (512M, 2G: powers of 1024): blocks of points are "
    "sized so every thread's fits, and --formula's work is bounded by it; the interpreter "
    "and results kept whole are extra.",
    example="--memory 2G")
#: the numeric commands' -f: their rows' formats, and where the command has --formula (its
#: computation's record has formulas) the formulas' ones
NUMERIC_FORMAT = replace(FORMAT, choices=Choices(ROWS), help=_format_help(ROWS))
FORMULA_FORMAT = replace(FORMAT, choices=Choices(ROWS + (format_table.FORMULA,)),
                         help=lambda: _format_help(ROWS)() + " With --formula: "
                         + " ".join(f.name for f in format_table.holding((format_table.FORMULA,)))
                         + ".")
NUMERIC = (AT, GRID, POINTS, NUMERIC_FORMAT, OUTPUT, OVERWRITE, PRECISION, STRICT, QUIET,
           MAX_POINTS, DTYPE, SCHEDULER, SCHEDULER_FILE, SCHEDULER_TIMEOUT, MEMORY, CSV_SAFE)

# --- --check ------------------------------------------------------------------------------
# each computation's default tolerance per dtype is its record's ``check``
# (``gradcli.plan.computations``); see ``check_tolerance``


def _sci(value: float) -> str:
    return f"{value:.0e}".replace("e-0", "e-")


def _check(tol: dict[str, float]) -> tuple[Option, Option]:
    shown = f"{_sci(tol['float64'])} (float64), {_sci(tol['float32'])} (float32)"
    return (
        Option("check", ("--check",), "flag", False,
               help="Also compute central differences (in float64) and report the largest "
               "discrepancy on stderr; exit 1 above --check-tol or where only one of the "
               "two is finite.", example="--check"),
        Option("check_tol", ("--check-tol",), "real", None, low=0, metavar="TOL",
               shown_default=shown,
               help="Relative tolerance for --check (a finite number >= 0).",
               example="--check --check-tol 1e-8"),
    )


FORMULA = Option(
    "formula", ("--formula",), "choice", None, choices=("expr", "program"), bare="expr",
    metavar="FORM",
    help="Print the derivatives as formulas in gradcli's language instead of values, one "
    "'name = formula' per line, from the engine's own rules (no points needed; --at gives "
    "a vector or matrix variable its shape); -f json is one object, -f latex LaTeX. "
    "'program' (grad): the reverse-mode program, forward steps then one adjoint v_bar per "
    "step.",
    example='gradcli grad "sin(x)*cos(y)" --formula')

# --- vector calculus and higher order -------------------------------------------------
#: how the components of div's and curl's field pair with the variables
PAIRING = ("Components pair with the variables in the order the command line binds them: "
           "grid order, --at order, or points-file column order; --wrt x,y,z states the "
           "pairing and takes precedence.")
# each computation parameter's option is made from its declaration (the parameter table,
# ``gradcli.request.parameters``); a command words it for itself here
FIELD_WRT = dict(
    help="The variables the field's components pair with, in order (default: the bound "
    "variables in binding order; a vector or matrix variable gives its components in "
    "turn, v[0], v[1]...).", example="--wrt x,y,z")
LAPLACIAN_WRT = dict(help="Sum over these variables only (default: every bound variable; a "
                     "vector variable is all its components, x[1] one of them).",
                     example="--wrt x,y")
DIFF_WRT = dict(
    help="The variables of the partial: x,x,y is the third partial d3f/dx2dy; one variable "
    "with --order k is d^k f/dx^k (default: the only bound variable; x[1] names a "
    "component).", example="--wrt x,x,y")
DIFF_ORDER = dict(
    low=1, shown_default="1, or the number of --wrt names",
    help="The order k of the pure partial d^k f/dx^k of the one --wrt variable (1 to 100).",
    example="--wrt x --order 3")
TAYLOR_WRT = dict(help="The variables of the polynomial (default: every bound variable; the "
                  "others keep their values).", example="--wrt x,y")
TAYLOR_ORDER = dict(
    default=2, help="The total order K: every multi-index with |alpha| <= K (0 to 100).",
    example="--order 8")
POLYNOMIAL = Option(
    "polynomial", ("--polynomial",), "flag", False,
    help="Print the Taylor polynomial instead, in gradcli's expression language in powers of "
    "(x - a), one line per point; gradcli reads it back. -o FILE.txt saves it.",
    example="--polynomial")
TAYLOR_WRITES = (format_table.ROWS, format_table.POLYNOMIAL)
TAYLOR_FORMAT = replace(FORMAT, choices=Choices(TAYLOR_WRITES),
                        help=_format_help(TAYLOR_WRITES))
TAYLOR_OUTPUT = replace(OUTPUT, help=_output_help(TAYLOR_WRITES), example="-o t.nc")

# --- graph --------------------------------------------------------------------------------
GRAPH_AT = Option(
    "at", ("--at", "-a"), "text", None, repeat=True, metavar="POINT",
    help="The one point to evaluate at (a vector may come from a file: x=@vec.npy).",
    example='--at "x=3"')
GRAPH_FORMAT = Option(
    "fmt", ("--format", "-f"), "choice", "auto", metavar="FORMAT",
    choices=Choices((format_table.GRAPH,)),
    help="auto is a table, or what the -o extension says; dot is Graphviz source.",
    example="-f dot")
GRAPH_OUTPUT = Option(
    "output", ("--output", "-o"), "text", None, metavar="FILE",
    help=_output_help((format_table.GRAPH,), "Write to FILE"), example="-o graph.dot")

# --- plot ---------------------------------------------------------------------------------


def _plot_output_help() -> str:
    """-o's text for plot: the picture and animation formats of the format table."""
    def exts(kind: str) -> list[str]:
        return [" ".join(f.extensions) + (f" (needs gradcli[{f.extra}])" if f.extra else "")
                for f in format_table.holding((kind,))]
    return ("The picture; its extension picks the format: "
            + " ".join(exts(format_table.PICTURE)) + ", "
            + " ".join(exts(format_table.ANIMATION)) + " (with --animate); - previews in "
            "the terminal. Needed unless --preview.")


PLOT_OUTPUT = Option(
    "output", ("--output", "-o"), "text", None, metavar="FILE", help=_plot_output_help,
    example="-o field.png")
PLOT_GRID = Option(
    "grid", ("--grid", "-g"), "text", None, repeat=True, metavar="SPEC", bare=BARE_GRID,
    help="start:stop:count for the one, two or three drawn variables; z=0.5 holds z fixed; "
    "without any --grid every variable is sampled on -5:5.",
    example="--grid x=0:2pi:100")
#: what the picture looks like: each goes to ``gradcli.plot.parse_options`` by name, as
#: typed; its default and its meaning are those of the PlotOptions field of that name
PLOT_DRAWING = (
    Option("every", ("--every",), "whole", PLOT_DEFAULT, metavar="R",
           help="An arrow at every R-th grid point (default: about 20 along a curve, 25 "
           "per axis); clamped to at least 2 arrows per axis.", example="--every 5"),
    Option("derivative", ("--derivative",), "flag", PLOT_DEFAULT,
           help="One variable: also draw f' (per component).", example="--derivative"),
    Option("normalize", ("--normalize",), "flag", PLOT_DEFAULT,
           help="Unit arrows: direction only.", example="--normalize"),
    Option("stream", ("--stream",), "flag", PLOT_DEFAULT,
           help="Streamlines instead of arrows.", example="--stream"),
    Option("contour", ("--contour",), "whole", PLOT_DEFAULT, metavar="N",
           help="Overlay N contour lines of the heatmap.", example="--contour 10"),
    Option("arrows", ("--arrows",), "choice", PLOT_DEFAULT, choices=("arrows", "none"),
           metavar="ARROWS", help="Draw the gradient arrows, or none.",
           example="--arrows none"),
    Option("color", ("--color",), "choice", PLOT_DEFAULT,
           choices=Derived(_plot_colors), metavar="QUANTITY",
           help="This quantity as the heatmap, from the engine's derivatives: a vector field's "
           "magnitude, divergence or curl; a scalar f's magnitude |grad f| or laplacian, under "
           "the gradient arrows.", example="--color laplacian"),
    Option("cmap", ("--cmap",), "text", PLOT_DEFAULT, metavar="NAME", suggest=COLORMAPS,
           help="Colormap (default viridis; RdBu_r centred at 0 for divergence, curl and "
           "slices).", example="--cmap inferno"),
    Option("title", ("--title",), "text", PLOT_DEFAULT, metavar="TEXT",
           help="Title above the plot.", example='--title "f(x, y)"'),
    Option("xlabel", ("--xlabel",), "text", PLOT_DEFAULT, metavar="TEXT",
           help="Label of the x axis (default: the variable's name).",
           example='--xlabel "time (s)"'),
    Option("ylabel", ("--ylabel",), "text", PLOT_DEFAULT, metavar="TEXT",
           help="Label of the y axis (default: the variable's name, or f(x) = ... for a "
           "curve).", example='--ylabel "height (m)"'),
    Option("colorbar_label", ("--colorbar-label",), "text", PLOT_DEFAULT, metavar="TEXT",
           help="Label of the colour bar (default: the quantity drawn; cut to fit, with the "
           "whole text then in the title).", example='--colorbar-label "speed"'),
    Option("legend", ("--legend",), "choice", PLOT_DEFAULT,
           choices=("auto", "outside", "none"), metavar="WHERE",
           help="auto (a curve's on its emptiest spot, a plane's below the axes, off the "
           "data), outside (below the axes) or none.", example="--legend outside"),
    Option("dpi", ("--dpi",), "real", PLOT_DEFAULT, metavar="DPI", help="Pixels per inch.",
           example="--dpi 150"),
    Option("size", ("--size",), "text", PLOT_DEFAULT, metavar="WxH",
           help="Width x height in inches (default 8x4.5 for a curve, 7x5.4 for a field).",
           example="--size 7x5"),
    Option("aspect", ("--aspect",), "choice", PLOT_DEFAULT, choices=("equal", "auto"),
           metavar="ASPECT", help="equal or auto (default: equal for two variables, auto "
           "when their ranges differ more than 10x).", example="--aspect auto"),
    Option("scale", ("--scale",), "real", PLOT_DEFAULT, metavar="S",
           help="The magnitude drawn at full arrow length; longer arrows are clipped and "
           "drawn magenta (default: the 95th percentile, or the longest when no arrow is "
           "over twice that).", example="--scale 2"),
    Option("log", ("--log",), "flag", PLOT_DEFAULT,
           help="Logarithmic colours (a curve: y axis); symlog when the values are not all "
           "positive.", example="--log"),
    Option("vmin", ("--vmin",), "real", PLOT_DEFAULT, metavar="LOW",
           help="Bottom of the colour scale.", example="--vmin -1"),
    Option("vmax", ("--vmax",), "real", PLOT_DEFAULT, metavar="HIGH",
           help="Top of the colour scale.", example="--vmax 1"),
    Option("ylim", ("--ylim",), "text", PLOT_DEFAULT, metavar="LOW:HIGH",
           help="One variable: the y-range (default: the data's, from percentiles near "
           "poles).", example="--ylim -5:5"),
    Option("slice", ("--slice",), "text", PLOT_DEFAULT, metavar="VAR=VALUE",
           help="A 3-D field: draw the plane VAR=VALUE, the component across it as "
           "colour.", example="--slice z=0"),
    Option("animate", ("--animate",), "text", PLOT_DEFAULT,
           metavar="VAR=START:STOP:FRAMES",
           help="Animate over VAR (2-1000 frames) with a fixed colour scale, to -o NAME.gif "
           "or NAME.mp4, or NAME.html (a page with a Play button and a slider).",
           example="--animate t=0:2pi:48"),
    Option("fps", ("--fps",), "real", PLOT_DEFAULT, metavar="FPS",
           help="Frames per second of an --animate movie or page's Play (default 12).",
           example="--fps 24"),
    Option("preview", ("--preview",), "flag", PLOT_DEFAULT,
           help="Also draw the picture in the terminal (colours and arrow glyphs; honours "
           "NO_COLOR).", example="--preview"),
    Option("taylor", ("--taylor",), "text", PLOT_DEFAULT, metavar="VAR=POINT",
           help="One variable: also draw f's Taylor polynomials at that point (the y-range "
           "stays f's).", example="--taylor x=0 --order 2,4,6"),
    Option("order", ("--order",), "text", PLOT_DEFAULT, metavar="K,K,...",
           help="The orders of the --taylor polynomials (default 1,2,3; up to 8 orders, "
           "each 0 to 30).", example="--taylor x=0 --order 2,4,6"),
)

# --- critical, descend, flow: where the field leads ---------------------------------------
START = Option(
    "start", ("--from",), "text", None, repeat=True, metavar="POINT",
    help="A start point; repeat for more starts, numbered by a leading run column. A vector "
    "variable takes a list.",
    example="--from x=-1.2,y=1")
START_GRID = Option(
    "start_grid", ("--from-grid",), "text", None, repeat=True, metavar="SPEC",
    help="start:stop:count per variable: a lattice of starts (first variable slowest), one "
    "run each; y=0 starts every run at y = 0.",
    example="--from-grid x=-2:2:21")
HOLD = Option(
    "at", ("--at", "-a"), "text", None, repeat=True, metavar="POINT",
    help="Hold these variables fixed at these values (the formula's parameters).",
    example='--at "b=0.5"')
FIELDS_OUTPUT = replace(OUTPUT, example="-o path.csv")
SEED_GRID = replace(
    GRID, help="start:stop:count per variable: every point is a seed, and the box is "
    "searched; z=0.5 holds z fixed; a bare --grid seeds every variable on -5:5.",
    example="--grid x=-3:3:13")
SEED_POINTS = replace(
    POINTS, help="CSV file (or - for stdin) of seeds, its header naming the variables "
    "(other columns are ignored); every converged point is kept.",
    example="--points seeds.csv")
FIELDS_WRITE = (FORMAT, FIELDS_OUTPUT, PRECISION, QUIET, MAX_POINTS)
TRACK = Option(
    "track", ("--track",), "text", None, once=True, metavar="P",
    help="Also how each critical point moves with the parameter P (held with --at): "
    "columns dx/dP..., by the implicit function theorem on grad f = 0 (nan where the "
    "point is degenerate).", example="--at a=2 --track a")
_METHODS = fields_defaults.METHODS
DESCEND_METHOD = Option(
    "method", ("--method", "-m"), "choice", "gd", choices=_METHODS, metavar="METHOD",
    help="gd and momentum (torch.optim.SGD), adam (Adam), adamw (AdamW), rmsprop (RMSprop), "
    "newton (damped, exact Hessian).",
    example="--method adam")
#: torch.optim's hyper-parameters; None (or off) means the method's own default
HYPER = (
    Option("lr", ("--lr",), "real", None, low=0, metavar="LR",
           shown_default="1e-3 (gd, momentum, adam, adamw), 1e-2 (rmsprop), 1 (newton)",
           help="Learning rate (lr); for newton the first trial step of its line search.",
           example="--lr 1e-2"),
    Option("momentum", ("--momentum",), "real", None, low=0, metavar="M",
           shown_default="0.9 (momentum), 0 (rmsprop)",
           help="Momentum factor (SGD's and RMSprop's momentum).", example="--momentum 0.5"),
    Option("dampening", ("--dampening",), "real", None, metavar="D", shown_default="0",
           help="Dampening of the momentum (SGD's dampening).", example="--dampening 0.1"),
    Option("nesterov", ("--nesterov",), "flag", False,
           help="Nesterov momentum (SGD's nesterov; needs zero dampening).",
           example="--method momentum --nesterov"),
    Option("weight_decay", ("--weight-decay",), "real", None, low=0, metavar="WD",
           shown_default="0; 1e-2 (adamw)",
           help="L2 penalty (weight_decay), decoupled for adamw.",
           example="--weight-decay 1e-4"),
    Option("betas", ("--betas",), "text", None, metavar="B1,B2", shown_default="0.9,0.999",
           help="Adam's and AdamW's betas: the running averages' coefficients.",
           example="--betas 0.8,0.99"),
    Option("eps", ("--eps",), "real", None, low=0, metavar="EPS", shown_default="1e-8",
           help="Added to the denominator (eps) of adam, adamw and rmsprop.",
           example="--eps 1e-10"),
    Option("amsgrad", ("--amsgrad",), "flag", False,
           help="The AMSGrad variant of adam and adamw (amsgrad).", example="--amsgrad"),
    Option("alpha", ("--alpha",), "real", None, low=0, metavar="A", shown_default="0.99",
           help="RMSprop's smoothing constant (alpha).", example="--alpha 0.9"),
    Option("centered", ("--centered",), "flag", False,
           help="RMSprop normalised by the gradient's estimated variance (centered).",
           example="--method rmsprop --centered"),
    Option("maximize", ("--maximize",), "flag", False,
           help="Climb instead: maximise f (torch.optim's maximize).", example="--maximize"),
)
STEPS = Option(
    "steps", ("--steps",), "whole", fields_defaults.STEPS, low=0, high=10**9, metavar="N",
    help="Updates at most, per run.", example="--steps 5000")
TOL = Option(
    "tol", ("--tol",), "real", None, low=0, metavar="TOL",
    help="Stop a run at the first step where |grad f| <= TOL.", example="--tol 1e-8")
STEP_EVERY = Option(
    "every", ("--every",), "whole", 1, low=1, metavar="K",
    help="Write every K-th step (time), plus each run's last.", example="--every 100")
FLOW_METHOD = Option(
    "method", ("--method", "-m"), "choice", "rk4", choices=fields_defaults.FLOW_METHODS,
    metavar="METHOD", help="rk4 (classical Runge-Kutta) or euler, with the grid's fixed steps; "
    "dopri5: adaptive Dormand-Prince 5(4) within --rtol/--atol, rows at the grid's times "
    "(the steps it took go to stderr).",
    example="--method dopri5")
FLOW_TOL = Option(
    "tol", ("--tol",), "real", None, low=0, metavar="TOL",
    help="End a run where |F| <= TOL: a fixed point reached.", example="--tol 1e-8")
FLOW_BOX = Option(
    "box", ("--box",), "text", None, metavar="BOX",
    help="End a run where its state leaves the box (variables not named are free).",
    example="--box x=-5:5,y=-5:5")
FLOW_RTOL = Option(
    "rtol", ("--rtol",), "real", None, low=0, metavar="RTOL",
    shown_default=f"{fields_defaults.RTOL:g}",
    help="dopri5's relative tolerance per step.", example="--method dopri5 --rtol 1e-9")
FLOW_ATOL = Option(
    "atol", ("--atol",), "real", None, low=0, metavar="ATOL",
    shown_default=f"{fields_defaults.ATOL:g}",
    help="dopri5's absolute tolerance per step.", example="--method dopri5 --atol 1e-12")
_T0, _T1, _TN = fields_defaults.TIMES
TIMES = Option(
    "t", ("--t",), "text", None, metavar="START:STOP:COUNT",
    shown_default=f"{_T0:g}:{_T1:g}:{_TN}",
    help="The time grid: COUNT times from START to STOP (COUNT-1 fixed steps).",
    example="--t 0:20:2001")
#: the picture's overlays of where the field leads (gradcli.plot.PlotOptions fields)
PLOT_FIELDS = (
    Option("mark_critical", ("--mark-critical",), "flag", PLOT_DEFAULT,
           help="Mark each critical point (from the grid's points as seeds) with a symbol "
           "per type, and a legend; on the curve for one variable.", example="--mark-critical"),
    Option("path_from", ("--path-from",), "text", PLOT_DEFAULT, repeat=True, metavar="POINT",
           help="Overlay the descent path from POINT (repeat for more), with start and end "
           "markers; --method, --lr, --steps and the other descend options apply.",
           example="--path-from x=-1.2,y=1 --method adam --lr 1e-2"),
    Option("flow_from", ("--flow-from",), "text", PLOT_DEFAULT, repeat=True, metavar="POINT",
           help="Overlay the trajectory of the field (-grad f for a scalar f) from POINT "
           "(repeat for more), by RK4 over --t.", example="--flow-from x=2,y=0"),
    Option("basins", ("--basins",), "flag", PLOT_DEFAULT,
           help="Colour each grid point by the point its descent reaches (--method newton "
           "unless given), and mark those points.", example="--basins --method gd --lr 1e-2"),
    Option("method", ("--method", "-m"), "choice", PLOT_DEFAULT, choices=_METHODS,
           metavar="METHOD", repeat=True,
           help="The optimiser of --path-from (default gd) and --basins (default newton), as "
           "descend's; repeat for a path per method from each start.",
           example="--method gd --method adam"),
    replace(HYPER[0], default=PLOT_DEFAULT, repeat=True,
            help="Learning rate (lr); repeated, the k-th goes with the k-th --method.",
            example="--method gd --lr 1e-3 --method adam --lr 1e-2"),
    *(replace(o, default=PLOT_DEFAULT) for o in (*HYPER[1:], STEPS, TOL, TIMES)),
)

# --- propagate: measurement uncertainty through the formula (GUM, JCGM 101) ---------------
def _distribution_list() -> str:
    """The distributions' usages, from their table (read when the help is shown)."""
    from gradcli.uncertainty.distributions import DISTRIBUTIONS

    return ", ".join(d.usage for d in DISTRIBUTIONS.values())


PROPAGATE_AT = Option(
    "at", ("--at", "-a"), "text", None, repeat=True, metavar="ESTIMATES",
    help="The estimates, NAME=VALUE, and their standard uncertainties, NAME=VALUE+-U (or "
    "±): here the first +- or ± outside brackets separates the two (in the other commands "
    "1+-0.1 is arithmetic). A vector takes a list of uncertainties or one for every "
    "component: x=[1,2]+-[0.1,0.2], x=[1,2]+-0.1, x=@x.npy+-@u.npy. A variable without one "
    "is a constant. Repeatable.",
    example='--at "V=4.9990+-0.0032, I=19.6610e-3+-0.0095e-3"')
PROPAGATE = (
    PROPAGATE_AT,
    Option("u", ("--u",), "text", None, repeat=True, metavar="UNCERTAINTIES",
           help="Standard uncertainties by name instead of +-; a vector takes a list or "
           "@u.npy.", example='--u "V=0.0032,I=9.5e-6"'),
    Option("nu", ("--nu",), "text", None, repeat=True, metavar="DEGREES",
           help="Degrees of freedom of the uncertainties by name (or x=1+-0.1;nu=9 in "
           "--at); infinite when not given (Type B). Adds nu_eff, u(f)'s effective degrees "
           "of freedom (Welch-Satterthwaite).", example='--nu "ls=18,d=25.6"'),
    Option("inputs", ("--inputs",), "text", None, once=True, metavar="FILE",
           help="The inputs from a file: a .csv with a row per input (columns name, value, "
           "and any of u, nu, dist, unit, description, corr: B=R;C=R) or a .toml with "
           "[inputs.NAME] tables of the same keys and [correlations] \"A,B\" = R. An input "
           "both there and in --at, --u, --nu or --dist is an error.",
           example="--inputs budget.toml"),
    Option("readings", ("--readings",), "text", None, once=True, metavar="FILE",
           help="Repeated readings, Type A (GUM 4.2, 5.2.3): a CSV whose header names the "
           "variables, one row per observation (simultaneous ones on one row; an empty cell "
           "is a missing reading). Each variable's estimate is the mean, u = s/sqrt(n), "
           "nu = n-1; variables observed together are correlated as their readings are.",
           example="--readings readings.csv"),
    Option("corr", ("--corr",), "text", None, repeat=True, metavar="A,B=R",
           help="The correlation coefficient of two inputs, -1 to 1 (repeat for more "
           "pairs; x[0] names a vector's component); together they must be positive "
           "semi-definite.", example="--corr V,I=-0.36"),
    Option("cov", ("--cov",), "text", None, once=True, metavar="FILE",
           help="A covariance matrix instead of --corr: a CSV whose header names the "
           "variables in any order (its rows follow the header; a vector's name stands for "
           "its components, x[0] for one), or a .npy over every component of the --at "
           "variables in --at order. It gives those variables' uncertainties.",
           example="--cov cov.csv"),
    Option("order", ("--order",), "whole", 1, low=1, high=2, metavar="1|2",
           help="2 adds u2(f), with GUM eq. 14's second-order terms for normal inputs "
           "(correlated ones in decorrelated coordinates), and E2(f) = f + tr(H Sigma)/2; "
           "U(f) is then k·u2(f).", example="--order 2"),
    Option("k", ("--k",), "real", None, low=0, metavar="K", shown_default="2, or "
           "t_P(nu_eff) with --coverage",
           help="The coverage factor: U(f) = k·u(f); it overrides --coverage's.",
           example="--k 1.96"),
    Option("budget", ("--budget",), "flag", False,
           help="Write the uncertainty budget instead: per input (and output component) "
           "input, value, u(x), c = df/dx, u_i(f) = |c|·u(x), and share, its part of u(f)² "
           "in per cent (c_i(Sigma c)_i/u(f)² with correlations: the shares add up to 100); "
           "then a total row with f, u(f), k and U(f) (and nu, nu_eff with degrees of "
           "freedom). With --order 2, eq. 14's terms: per input and per pair a*b of inputs "
           "(independent inputs), shares of u2(f)².",
           example="--budget"),
    Option("monte_carlo", ("--monte-carlo",), "text", None, metavar="N|adaptive",
           suggest=("adaptive",),
           help="Also propagate N samples (JCGM 101; 2 to 10^8) in blocks, on every core, in "
           "bounded memory: adds mean, sd and the --coverage interval low, high; says on "
           "stderr whether the law of propagation agrees with it to JCGM 101 §8's tolerance "
           "(or that Monte Carlo's ends are not yet stable enough to say). adaptive: JCGM "
           "101 7.9's procedure, batches until stable to --digits (adds M, the samples it "
           "took).", example="--monte-carlo 1e6"),
    Option("interval", ("--interval",), "choice", "symmetric",
           choices=("symmetric", "shortest", "both"),
           help="Monte Carlo's coverage interval: probabilistically symmetric or shortest "
           "(JCGM 101 7.7); both adds the shortest as low_shortest, high_shortest.",
           example="--interval shortest"),
    Option("digits", ("--digits",), "whole", 2, low=1, high=6, metavar="NDIG",
           help="Significant digits of sd that adaptive Monte Carlo makes stable, and of "
           "the tolerance of the comparison with the law of propagation (JCGM 101 7.9.2).",
           example="--digits 3"),
    Option("dist", ("--dist",), "text", None, repeat=True, metavar="NAME=KIND:PARAMS",
           help=lambda: "Monte Carlo draws NAME from a distribution (JCGM 101 6.4) instead "
           f"of a normal: {_distribution_list()} (a the half-width); it makes NAME "
           "uncertain with that distribution's u (a +-U that disagrees is an error).",
           example="--dist T=uniform:0.05"),
    Option("coverage", ("--coverage",), "real", None, low=0, high=1, metavar="P",
           shown_default="0.95",
           help="The coverage probability (between 0 and 1): given, it sets k = t_P(nu_eff) "
           "(Student's t for u(f)'s effective degrees of freedom, the normal's when they are "
           "infinite) and adds nu_eff; and of Monte Carlo's interval.",
           example="--coverage 0.99"),
    Option("seed", ("--seed",), "whole", None, low=0, high=MAX_COUNT, metavar="SEED",
           shown_default="a fresh one each run",
           help="The seed of Monte Carlo's samples: the same command writes the same bytes, "
           "on any number of cores.", example="--seed 1"),
    Option("round", ("--round",), "flag", False,
           help="Round the table and CSV as GUM 7.2.6 recommends: uncertainties (u, U, sd) "
           "to two significant digits, the estimate and interval ends to U(f)'s last "
           "digit's place; files for machines (JSON, .nc, .zarr, .parquet, .npz) keep the "
           "exact numbers.", example="--round"),
    FORMAT, replace(OUTPUT, help="Write to FILE (atomically); its extension picks the "
                    "format: .csv .json .npz (one array per column); JSON notes, and the "
                    "history of .nc, .zarr and .parquet, keep the inputs, correlations, "
                    "order, samples, seed, coverage and interval (the context).",
                    example="-o u.csv"),
    PRECISION, QUIET,
)

RUN_FIELDS = "gradcli.cli.commands.field_commands"


def _with(options: tuple[Option, ...], *variants: Option) -> tuple[Option, ...]:
    """``options`` with each option named like one of ``variants`` replaced by it."""
    by_name = {v.name: v for v in variants}
    return tuple(by_name.get(o.name, o) for o in options)


#: the function every numeric command runs: it hands the command's name to
#: ``gradcli.evaluate`` as ``what``
RUN_NUMERIC = "gradcli.cli.commands.numeric_commands:run_numeric"

#: the CLI's words for the built-in numeric commands (help with their flags, and example
#: command lines); a computation registered elsewhere shows its record's own
NUMERIC_WORDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "eval": (
        "Values of the formula: column f (f[i] for a vector, f[i][j] for a matrix).",
        ('gradcli eval "x^2 + 3x + 1" --at x=4',
         'gradcli eval "[x*y, x-y]" --grid x=0:1:3 --grid y=0:1:3 -f json')),
    "grad": (
        "Gradient of a scalar formula: f, then df/dx for each variable.",
        ('gradcli grad "x^2 + 3x + 1" --at x=4',
         'gradcli grad "x^2 + y^2" --at x=3,y=4 --norm',
         'gradcli grad "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 -o grad.csv',
         'gradcli grad "sin(x)*cos(y)" --grid',
         'gradcli grad "a*x^2" --points xs.csv --at a=3',
         'gradcli grad "z = w*x + b; p = sigmoid(z); -(t*log(p) + (1-t)*log(1-p))" '
         '--at w=0.5,x=2,b=0.1,t=1',
         'gradcli grad @loss.gc --at x=@x.npy --wrt m',
         'gradcli grad "logsumexp(x)" --at x=@vec.npy -o grad.npz',
         'gradcli grad "sin(x)*cos(y)" --grid x=0:1:2000 --grid y=0:1:2000 -o field.nc',
         'gradcli grad "exp(-x^2-y^2)" --grid x=-2:2:4000 --grid y=-2:2:4000 '
         '--scheduler local:2 -o field.zarr')),
    "jacobian": (
        "Every derivative: the values, then df[i]/dx per component and variable.",
        ('gradcli jacobian "[-x^3, 5x]" --at x=0 --at x=1 --at x=2',
         'gradcli jacobian "[sum(x), sum(x^2)]" --at "x=[0,1,2,3]"',
         'gradcli jacobian "A @ x" --at "A=[[1,2],[3,4]],x=[1,1]"')),
    "vjp": (
        "Vector-Jacobian product vᵀJ (PyTorch's backward(gradient=v)): vjp/dx per variable.",
        ('gradcli vjp "[-x^3, 5x]" --vector "1,0" --at x=1',
         'gradcli vjp "softmax(x)" --vector "1,0,0" --at "x=[1,2,3]"')),
    "jvp": (
        "Jacobian-vector product J·u by forward mode: jvp (jvp[i] for a vector f).",
        ('gradcli jvp "sin(x)*cos(y)" --direction "x=1,y=0" --at x=1,y=2',
         'gradcli jvp "x*y" --direction "x=3,y=4" --unit-vector --at x=1,y=2')),
    "hessian": (
        "Second derivatives of a scalar formula: f, then d2f/dadb for every ordered pair.",
        ('gradcli hessian "x^2*y + y^3" --at x=1,y=2',
         'gradcli hessian "x^2*y*z + z^3" --at x=1,y=2,z=3 --wrt x,y')),
    "div": (
        "Divergence of a vector field [P, Q, ...]: the components f[i], then div = sum of "
        "df[i]/dx_i. " + PAIRING,
        ('gradcli div "[x*y, x-y, z^2]" --at x=1,y=2,z=3',
         'gradcli div "[-y, x]" --grid x=-1:1:5 --grid y=-1:1:5',
         'gradcli div "[a*x, a*y]" --at x=1,y=2,a=3 --wrt x,y')),
    "curl": (
        "Curl of a vector field: [P, Q] gives curl = dQ/dx - dP/dy; [P, Q, R] gives "
        "curl[0], curl[1], curl[2]; other sizes are an error. " + PAIRING,
        ('gradcli curl "[-y, x]" --at x=1,y=2',
         'gradcli curl "[x*y, x-y, z^2]" --at x=1,y=2,z=3')),
    "laplacian": (
        "Laplacian: f, then laplacian = sum of d2f/dx_i2 over the bound variables (or "
        "--wrt); f[i], laplacian[i] for a vector f. Taylor mode.",
        ('gradcli laplacian "exp(-(x^2+y^2))" --at x=0.5,y=0',
         'gradcli laplacian "x^2 - y^2" --grid x=-1:1:5 --grid y=-1:1:5')),
    "hvp": (
        "Hessian-vector product H·u by forward over reverse (the values of "
        "torch.autograd.functional.hvp): f, then hvp/dx for each variable.",
        ('gradcli hvp "x^2*y + y^3" --direction "x=1,y=0" --at x=1,y=2',)),
    "diff": (
        "A partial derivative of any order (Taylor mode): --wrt x --order 3 gives d3f/dx3, "
        "--wrt x,x,y gives d3f/dx2dy; f first (f[i] for a vector f).",
        ('gradcli diff "sin(x)*exp(y)" --wrt x --order 3 --at x=1,y=0',
         'gradcli diff "sin(x)*exp(y)" --wrt x,x,y --at x=1,y=0',
         'gradcli diff "exp(-x^2)" --order 4 --grid x=-2:2:9')),
    "taylor": (
        "Multivariate Taylor coefficients up to total order K (Taylor mode): one row per "
        "multi-index in graded lexicographic order, with the point, order, deg(x)..., "
        "coefficient (d^alpha f / alpha!) and derivative (d^alpha f); --polynomial prints "
        "the polynomial instead.",
        ('gradcli taylor "exp(x)*sin(y)" --at x=0,y=0 --order 3',
         'gradcli taylor "cos(x)" --at x=0 --order 6 --polynomial',
         'gradcli taylor "sqrt(1+x+y)" --at x=0,y=0 --order 2 -o coefficients.csv')),
}

#: the docs' table "Commands and their columns" (``cli/reference.py``): per row the
#: command as shown, its columns after the variables, and notes. A computation registered
#: elsewhere is listed with its record's help.
NUMERIC_COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    'eval': (
        ('eval',
         '`f` (scalar), `f[i]` (vector), `f[i][j]` (matrix)',
         'values only'),
    ),
    'grad': (
        ('grad',
         '`f`, `df/dx` for each variable (`df/dx[k]`, `df/dA[i][j]` for vector '
         'and matrix variables); `--norm` adds `|grad f|` after them',
         'scalar-valued expressions only; `--wrt m` by a named step; `|grad f|`'
         ' is the Euclidean norm of the gradient'),
    ),
    'jacobian': (
        ('jacobian',
         'the values, then `df[i]/dx` for each component and variable, '
         'components slowest',
         '`df/dx` for a scalar f, `df[i][j]/dx` for a matrix, `df[i]/dx[k]` for'
         ' a vector variable'),
    ),
    'vjp': (
        ('vjp --vector V',
         'the values, then `vjp/dx` for each variable: vᵀJ',
         "PyTorch's `backward(gradient=v)`; v is shaped like f"),
    ),
    'jvp': (
        ('jvp --direction U',
         'the values, then `jvp` (scalar f) or `jvp[i]`: J·u by forward mode',
         'variables not named in U get 0; `--unit-vector` normalises u to length 1: '
         'the directional derivative'),
    ),
    'hessian': (
        ('hessian',
         '`f`, then `d2f/dadb` for every ordered pair of variables',
         'scalar-valued only'),
    ),
    'hvp': (
        ('hvp --direction U',
         '`f`, then `hvp/dx` for each variable: H·u',
         'forward over reverse (the values of `torch.autograd.functional.hvp`);'
         ' scalar-valued only; `--unit-vector` as for jvp'),
    ),
    'div': (
        ('div "[P, Q, ...]"',
         '`f[i]`..., `div` = ∑ ∂f[i]/∂x_i',
         'any dimension; components pair with variables (below)'),
    ),
    'curl': (
        ('curl "[P, Q]"',
         '`f[0]`, `f[1]`, `curl` = ∂Q/∂x − ∂P/∂y',
         '2-D'),
        ('curl "[P, Q, R]"',
         '`f[0..2]`, `curl[0]`, `curl[1]`, `curl[2]`',
         '3-D; any other dimension is an error'),
    ),
    'laplacian': (
        ('laplacian',
         '`f`, `laplacian` = ∑ ∂²f/∂x_i²; for a vector f: `f[i]`, '
         '`laplacian[i]`',
         'over the bound variables, or over `--wrt`'),
        ('`grad`, `div`, `curl`, `laplacian` with `--coords SYSTEM`',
         '`grad_r`, `grad_theta`..., `div`, `curl` (polar) or `curl_r`..., `laplacian`',
         'in polar, cylindrical or spherical coordinates, physical components; see '
         '[Curvilinear coordinates](../how-to/curvilinear.md)'),
    ),
    'diff': (
        ('diff --wrt x --order 3',
         '`f`, `d3f/dx3`',
         '`--wrt x,x,y` gives `d3f/dx2dy`; `f[i]` and `d3f[i]/dx2dy` for a '
         'vector f'),
    ),
    'taylor': (
        ('taylor --order K',
         'one row per multi-index α, |α| ≤ K: the point, `order`, `deg(x)`..., '
         '`coefficient` = ∂^αf/α!, `derivative` = ∂^αf',
         'graded lexicographic order; `--polynomial` prints the polynomial '
         'instead'),
    ),
}

#: how a command words one of its computation's parameters (changes to the option made
#: from the parameter's declaration)
COMMAND_OPTIONS: dict[tuple[str, str], dict[str, Any]] = {
    ("div", "wrt"): FIELD_WRT, ("curl", "wrt"): FIELD_WRT, ("laplacian", "wrt"): LAPLACIAN_WRT,
    ("diff", "wrt"): DIFF_WRT, ("diff", "order"): DIFF_ORDER, ("taylor", "wrt"): TAYLOR_WRT,
    ("taylor", "order"): TAYLOR_ORDER}
COORDS = Option(
    "coords", ("--coords",), "text", None, metavar="SYSTEM",
    help="The variables are coordinates: polar (r,theta), cylindrical (r,phi,z) or "
    "spherical (r,theta,phi; theta from +z, phi the azimuth, ISO 80000-2); "
    "spherical:rho,t,p renames them. A field's components and the results are physical "
    "ones, in the orthonormal basis: columns grad_r, grad_theta..., curl_r... .",
    example="--coords spherical")
#: options a numeric command has besides its computation's parameters and --formula (which
#: every computation whose record has formulas gets, before these)
EXTRA_OPTIONS: dict[str, tuple[Option, ...]] = {
    "taylor": (POLYNOMIAL,), **dict.fromkeys(("grad", "laplacian", "div", "curl"), (COORDS,))}
#: what a numeric command writes, where not rows, and the -f/-o variants that say so
NUMERIC_WRITES_OF: dict[str, tuple[str, ...]] = {"taylor": TAYLOR_WRITES}
NUMERIC_VARIANTS_OF: dict[str, tuple[Option, ...]] = {"taylor": (TAYLOR_FORMAT, TAYLOR_OUTPUT)}
#: the CLI's value kind of each kind of parameter
_PARAMETER_KINDS = {"names": "text", "whole": "whole", "flag": "flag", "array": "text",
                    "point": "text", "units": "text"}


def parameter_option(parameter: Any) -> Option:
    """The option of a computation parameter, made from its declaration
    (``gradcli.request.parameters.Parameter``: name, flags, help, example, bounds)."""
    kind = _PARAMETER_KINDS[parameter.kind]
    return Option(parameter.name, parameter.flags, kind, False if kind == "flag" else None,
                  help=parameter.help, example=parameter.example, metavar=parameter.metavar,
                  repeat=parameter.repeat, required=parameter.required, low=parameter.low,
                  high=parameter.high)


def _wrt(help: str, example: str) -> Option:  # noqa: A002 - the declaration's field name
    """The ``wrt`` parameter's option (its declaration) worded for a command that is not a
    computation of the table (implicit, integrate)."""
    from gradcli.request.parameters import TABLE

    return replace(parameter_option(TABLE["wrt"]), help=help, example=example)


def _parameter_option(command: str, parameter: str) -> Option:
    from gradcli.request.parameters import TABLE

    return replace(parameter_option(TABLE[parameter]),
                   **COMMAND_OPTIONS.get((command, parameter), {}))


def numeric_command(record: Any) -> Command:
    """The CLI command of a computation (``gradcli.plan.computations.Computation``):
    the common options, its parameters' options (wrt and order last), --check when it has
    a tolerance, then the command's own presentation options."""
    help_text, examples = NUMERIC_WORDS.get(record.name, (record.help, record.examples))
    first = [p for p in record.parameters if p not in ("wrt", "order")]
    last = [p for p in ("wrt", "order") if p in record.parameters]
    formulas = record.formula is not None
    common = _with(NUMERIC, *((FORMULA_FORMAT,) if formulas else ()),
                   *NUMERIC_VARIANTS_OF.get(record.name, ()))
    options = (*common, *(_parameter_option(record.name, p) for p in first),
               *(_check(record.check) if record.check else ()),
               *(_parameter_option(record.name, p) for p in last),
               *((FORMULA,) if formulas else ()), *EXTRA_OPTIONS.get(record.name, ()),
               NO_FILES)
    columns = NUMERIC_COLUMNS.get(record.name, ((record.name, record.help, ""),))
    return Command(name=record.name, help=help_text, run=RUN_NUMERIC, options=options,
                   group="numeric", examples=examples,
                   writes=NUMERIC_WRITES_OF.get(record.name, ROWS), columns=columns)


def check_tolerance(command: str, dtype: str) -> float:
    """--check's default relative tolerance for ``command`` at ``dtype``."""
    from gradcli.plan.computations import computation

    return (computation(command).check or {})[dtype]


# --- implicit -------------------------------------------------------------------------------
SOLVE_FOR = Option(
    "solve_for", ("--solve-for",), "text", None, required=True, metavar="NAMES",
    help="The unknowns y that F = 0 defines as functions of the other variables, "
    "comma-separated (a system [F1, F2] needs one per equation).",
    example="--solve-for y")
IMPLICIT_AT = Option(
    "at", ("--at", "-a"), "text", None, repeat=True, metavar="POINT",
    help="A point on the curve, every variable given; repeat for more points. A point with "
    "|F| above --tol is an error.", example='--at "x=0.6,y=0.8"')
IMPLICIT_WRT = _wrt("The independent variables (default: every variable that is not an "
                    "unknown; the others are held at the point's values).", "--wrt x")
IMPLICIT_ORDER = Option(
    "order", ("--order", "-k"), "whole", 1, low=1, high=30, metavar="K",
    help="Also the derivatives d^k y/dx^k up to K (one independent variable).",
    example="--order 3")
IMPLICIT_TOL = Option(
    "tol", ("--tol",), "real", None, low=0, metavar="TOL", shown_default="1e-9",
    help="How far from 0 |F| may be at the point (the largest |F_i| of a system).",
    example="--tol 1e-6")
IMPLICIT = Command(
    name="implicit", help="Implicit differentiation: the derivatives of y(x) defined by "
    "F(x, y) = 0 at points on the curve, dy/dx = -(dF/dy)^-1 dF/dx (a system [F1, F2] "
    "with y a vector too); columns: the variables, |F|, dy/dx per unknown and variable, "
    "and with --order K d2y/dx2 ... dKy/dxK.",
    run="gradcli.cli.commands.implicit_command:run_implicit",
    options=(SOLVE_FOR, IMPLICIT_AT, IMPLICIT_WRT, IMPLICIT_ORDER, IMPLICIT_TOL, FORMAT,
             OUTPUT, PRECISION, QUIET),
    group="implicit", writes=ROWS,
    examples=('gradcli implicit "x^2 + y^2 - 1" --solve-for y --at x=0.6,y=0.8 --order 3',
              'gradcli implicit "x^3 + y^3 - 3x*y" --solve-for y --at x=1.5,y=1.5',
              'gradcli implicit "[x^2 + y^2 + z^2 - 1, x + y + z]" --solve-for y,z '
              '--at x=0,y=0.7071067811865476,z=-0.7071067811865476'))

# --- integrate ------------------------------------------------------------------------------
PATH = Option(
    "path", ("--path",), "text", None, once=True, metavar="SPEC",
    help="The path: 't: [x(t), y(t)], t=LO:HI' (or three components); they pair with the "
    "field's variables x, y(, z), or with --wrt.", example='--path "t: [cos(t), sin(t)], t=0:2pi"')
DISC = Option(
    "disc", ("--disc",), "text", None, once=True, metavar="CX,CY,R",
    help="The boundary of a disc, counter-clockwise, as the path (then --check green "
    "knows the region).", example="--disc 0,0,1")
BOX = Option(
    "box", ("--box",), "text", None, once=True, metavar="X0:X1,Y0:Y1",
    help="The boundary of a rectangle, counter-clockwise, as the path.",
    example="--box 0:1,0:2")
SURFACE = Option(
    "surface", ("--surface",), "text", None, once=True, metavar="SPEC",
    help="Instead of a path, the flux of a field [P, Q, R] through a parametric surface: "
    "'u,v: [x, y, z], u=LO:HI, v=LO:HI', normal r_u x r_v.",
    example='--surface "u,v: [u, v, 1 - u^2], u=0:1, v=0:1"')
BALL = Option(
    "ball", ("--ball",), "text", None, once=True, metavar="CX,CY,CZ,R",
    help="The sphere bounding a ball, outward, as the surface (then --check divergence "
    "knows the region).", example="--ball 0,0,0,1")
FLUX = Option(
    "flux", ("--flux",), "flag", False,
    help="The flux of a plane field [P, Q] through the path (outward for a "
    "counter-clockwise closed path): the integral of P dy - Q dx.", example="--flux")
INTEGRATE_CHECK = Option(
    "check", ("--check",), "choice", None, choices=("green", "stokes", "divergence"),
    metavar="THEOREM",
    help="Also the theorem's other side with its error estimate: green over the --disc or "
    "--box (the area integral of the curl, of the divergence with --flux); stokes on a "
    "--surface (the circulation around its boundary, and the flux of curl F); "
    "divergence over the --ball (the volume integral of div F); exit 1 if the two "
    "differ by more than their estimates.", example="--disc 0,0,1 --check green")
INTEGRATE_TOL = Option(
    "tol", ("--tol",), "real", None, low=0, metavar="TOL", shown_default="1e-10",
    help="Relative tolerance of the adaptive Gauss-Kronrod quadrature (the error estimate "
    "is a column beside the result).", example="--tol 1e-12")
INTEGRATE_WRT = _wrt("The field's variables the path's components pair with (default x, "
                     "y, z).", "--wrt u,v")
INTEGRATE = Command(
    name="integrate", help="Line integrals: the work of a vector field along a path (its "
    "circulation on a closed one), the integral of a scalar field over arc length, or "
    "with --flux the flux of a plane field through the path, or the flux of a field in "
    "space through a --surface, by adaptive Gauss-Kronrod (G7-K15); columns: work, "
    "circulation, flux or integral, error (the estimate), and with --check the other "
    "side of Green's or the divergence theorem and its estimate.",
    run="gradcli.cli.commands.integrate_command:run_integrate",
    options=(PATH, DISC, BOX, SURFACE, BALL, FLUX, INTEGRATE_CHECK, INTEGRATE_TOL,
             INTEGRATE_WRT, HOLD,
             FORMAT, OUTPUT, PRECISION, QUIET),
    group="integrate", writes=ROWS,
    examples=('gradcli integrate "[-y, x]" --path "t: [cos(t), sin(t)], t=0:2pi"',
              'gradcli integrate "[x^2*y, sin(x) + y]" --box 0:1,0:2 --check green',
              'gradcli integrate "[x, y]" --disc 0,0,2 --flux --check green',
              'gradcli integrate "[x, y, z]" --ball 0,0,0,1 --check divergence'))

#: plot's paths and surfaces over the field: integrate's options, repeatable (their specs
#: read by integrate's parsers; gradcli.plot.PlotOptions fields of the same names)
PLOT_TRACED = (
    replace(PATH, default=PLOT_DEFAULT, once=False, repeat=True,
            help="Draw the path 't: [x(t), y(t)], t=LO:HI' over a plane (three components "
            "over a 3-D field's page), its components pairing with the drawn variables, at "
            "a fixed number of points from the engine (see the limits); a start marker and "
            "an arrowhead at the end show its orientation. Repeatable."),
    replace(DISC, default=PLOT_DEFAULT, once=False, repeat=True,
            help="Draw the boundary of a disc, counter-clockwise, as a --path."),
    replace(BOX, default=PLOT_DEFAULT, once=False, repeat=True,
            help="Draw the boundary of a rectangle, counter-clockwise, as a --path."),
    replace(SURFACE, default=PLOT_DEFAULT, once=False, repeat=True,
            help="Draw the surface 'u,v: [x, y, z], u=LO:HI, v=LO:HI' over a 3-D field's "
            "cones (-o *.html), translucent, with a cone along r_u x r_v at the centre of "
            "its (u, v) rectangle; a flat picture cannot show it."),
    replace(BALL, default=PLOT_DEFAULT, once=False, repeat=True,
            help="Draw the sphere bounding a ball as a --surface (outward normal)."),
)

#: repl's -f: the format every line without its own -f or -o is answered in
REPL_FORMAT = Option(
    "fmt", ("--format", "-f"), "choice", "auto", metavar="FORMAT",
    choices=Choices(ROWS),
    help="The format of every answer whose line gives no -f or -o (auto: each command's "
    "own choice).", example="-f jsonl")

OTHER_COMMANDS: tuple[Command, ...] = (
    Command(
        name="graph", help="The computation graph at one point: each node's operation, "
        "inputs, value and adjoint ∂f/∂node.",
        run="gradcli.cli.commands.graph_command:run_graph",
        options=(GRAPH_AT, GRAPH_FORMAT, GRAPH_OUTPUT, PRECISION, QUIET), group="graph",
        writes=(format_table.GRAPH,), auto=("table", "table"),
        examples=('gradcli graph "m = x^2; y = m + x; p = 4*y" --at x=3',
                  'gradcli graph "sin(x)*y" --at x=1,y=2 -o g.dot && dot -Tpng g.dot > g.png')),
    Command(
        name="plot", help="A picture of the formula and its gradient: curves with tangent "
        "arrows (one variable), a heatmap with gradient arrows or streamlines (two), a slice "
        "or interactive cones (three), an animation, or a terminal preview.",
        run="gradcli.cli.commands.plot_command:run_plot",
        options=(PLOT_OUTPUT, PLOT_GRID, HOLD, *PLOT_DRAWING, *PLOT_FIELDS, *PLOT_TRACED,
                 QUIET,
                 MAX_POINTS),
        group="plot", writes=(format_table.PICTURE, format_table.ANIMATION),
        examples=('gradcli plot "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 '
                  '-o field.png',
                  'gradcli plot "sin(x)" --grid x=0:2pi:100 --derivative -o sin.svg',
                  'gradcli plot "[-y, x]" --grid x=-2:2:41 --grid y=-2:2:41 --color curl '
                  '-o curl.png',
                  'gradcli plot "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 '
                  '-o field.html',
                  'gradcli plot "sin(x-t)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 '
                  '--animate t=0:2pi:48 -o wave.gif',
                  'gradcli plot "sin(x)*cos(y)" --grid --preview',
                  'gradcli plot "sin(x)*cos(y)*exp(-(x^2+y^2)/8)" --grid x=-4:4:81 '
                  '--grid y=-4:4:81 --color laplacian -o laplacian.png',
                  'gradcli plot "cos(x)" --grid x=-4:4:400 --taylor x=0 --order 2,4,6 '
                  '-o taylor.png',
                  'gradcli plot "(x^2+y-11)^2 + (x+y^2-7)^2" --grid x=-5:5:101 --grid '
                  'y=-5:5:101 --basins --mark-critical -o basins.png',
                  'gradcli plot "(1-x)^2 + 100(y-x^2)^2" --grid x=-2:2:101 --grid y=-1:3:101 '
                  '--path-from x=-1.2,y=1 --method adam --lr 1e-2 --log -o path.png',
                  'gradcli plot "[-y, x]" --grid x=-2:2:41 --grid y=-2:2:41 --color curl '
                  '--path "t: [cos(t), sin(t)], t=0:2pi" -o circulation.png')),
    Command(
        name="critical", help="Critical points: where grad f = 0 (or F = 0 for a vector "
        "field [P, Q, ...]), by damped Newton from the grid's points (or --points) as seeds; "
        "columns: the variables, f, |grad f|, eig[i] (the Hessian's eigenvalues, ascending), "
        "vec[i][k] (component k of eig[i]'s unit eigenvector, its largest component "
        "positive), type (minimum, maximum, saddle, degenerate); for a field |F|, re[i], "
        "im[i], vec[i][k] (nan for a complex eigenvalue) and type (stable/unstable node or "
        "focus, saddle, center, degenerate).",
        run=f"{RUN_FIELDS}:run_critical",
        options=(SEED_GRID, SEED_POINTS, HOLD, TRACK, *FIELDS_WRITE), group="fields",
        writes=ROWS,
        examples=('gradcli critical "x^3 - 3x + y^3 - 3y" --grid x=-3:3:13 --grid y=-3:3:13',
                  'gradcli critical "[y, -sin(x) - 0.5y]" --grid x=-7:7:29 --grid y=-3:3:13',
                  'gradcli critical "x^2 + a*y^2" --grid x=-1:1:5 --grid y=-1:1:5 --at a=-1')),
    Command(
        name="propagate", help="Measurement uncertainty through the formula by the GUM's "
        "law of propagation: one row per output component with the estimates, f, u(f), "
        "U(f) = k·u(f), k and, for a vector f, output (its name) and the correlations "
        "r(f[i],f[j]); --order 2 adds second-order terms, --budget writes the uncertainty "
        "budget, --monte-carlo N checks it by Monte Carlo (JCGM 101).",
        run="gradcli.cli.commands.propagate_command:run_propagate", options=PROPAGATE,
        group="propagate",
        writes=ROWS,
        examples=('gradcli propagate "V/I" --at "V=4.9990+-0.0032, I=19.6610e-3+-0.0095e-3" '
                  '--corr V,I=-0.36',
                  'gradcli propagate "[V/I*cos(phi), V/I*sin(phi), V/I]" --at "V=4.9990+-0.0032, '
                  'I=19.6610e-3+-0.0095e-3, phi=1.04446+-0.00075" --corr V,I=-0.36 '
                  '--corr V,phi=0.86 --corr I,phi=-0.65 --budget',
                  'gradcli propagate "exp(x)" --at x=1+-0.3 --order 2 --monte-carlo 1e6 '
                  '--seed 1',
                  'gradcli propagate "x + 2y" --at x=1+-0.1,y=0 --dist y=uniform:0.3 '
                  '--monte-carlo 1e6 --seed 1',
                  'gradcli propagate "sum(x^2)" --at "x=[1,2,3]+-[0.1,0.1,0.2]"')),
    Command(
        name="descend", help="Descent paths, iterate for iterate as torch.optim: columns "
        "[run,] step, the variables, f, |grad f|; step 0 is the start. Stops after --steps, "
        "at |grad f| <= --tol, or on a non-finite value (exit 1); the reason goes to stderr.",
        run=f"{RUN_FIELDS}:run_descend",
        options=(START, START_GRID, HOLD, DESCEND_METHOD, *HYPER, STEPS, TOL, STEP_EVERY,
                 *FIELDS_WRITE), group="fields", writes=ROWS,
        examples=('gradcli descend "(1-x)^2 + 100(y-x^2)^2" --from x=-1.2,y=1 --method adam '
                  '--lr 1e-3 --steps 5000 --every 500',
                  'gradcli descend "x^2 + 10y^2" --from x=1,y=1 --from x=-1,y=2 --method '
                  'momentum --nesterov --tol 1e-8',
                  'gradcli descend "(x^2+y-11)^2 + (x+y^2-7)^2" --from-grid x=-5:5:11 '
                  '--from-grid y=-5:5:11 --method newton --every 1000 -o ends.csv')),
    Command(
        name="flow", help="Trajectories x' = F(x) of a vector field (or -grad f of a scalar "
        "f) by fixed-step RK4 on the time grid --t (or adaptive dopri5): columns [run,] t, "
        "the variables, |F|. A run ends at the last time, at |F| <= --tol, outside --box, or "
        "on a non-finite value (exit 1); the reason goes to stderr.",
        run=f"{RUN_FIELDS}:run_flow",
        options=(START, START_GRID, HOLD, TIMES, FLOW_METHOD, STEP_EVERY, FLOW_TOL, FLOW_BOX,
                 FLOW_RTOL, FLOW_ATOL, *FIELDS_WRITE),
        group="fields", writes=ROWS,
        examples=('gradcli flow "[y, -sin(x) - 0.5y]" --from x=2,y=0 --t 0:20:2001',
                  'gradcli flow "[-y, x]" --from-grid x=0.5:2:4 --from-grid y=0 --t 0:2pi:629 '
                  '--every 157')),
    IMPLICIT,
    INTEGRATE,
    Command(
        name="repl", help="A line-by-line session: each line is a gradcli command line "
        "without the leading gradcli (grad sin(x)*cos(y) --at x=1,y=2; an expression with "
        "spaces needs no quotes), answered in this process as the command would answer it; "
        "f(x, y) = ... and m = ... define functions and steps later lines use. A bad line "
        "prints its error and the session goes on; the exit status is the worst line's; "
        "help (or ?) lists the commands. On a terminal: line editing and history, Ctrl-C "
        "stops the line being answered; from a pipe: one answer per line, in order.",
        run="gradcli.cli.commands.repl_command:run_session", options=(REPL_FORMAT, QUIET),
        group="repl", takes_expression=False,
        examples=("gradcli repl",
                  "printf 'f(x, y) = sin(x)*cos(y)\\ngrad f(x, y) --at x=1,y=2\\n' | "
                  "gradcli repl -f csv")),
)


# --- explore: the gradient in the browser, one compact block ---------------------------------
EXPLORE = Command(
    name="explore", help="A local web page to touch the gradient: the field (curve, heatmap "
    "with gradient arrows, a slice with sliders), a pinned point's gradient, formula, graph "
    "(values, adjoints) and backward program, descent paths, flow lines and critical points, "
    "all computed by the engine, with the gradcli command that reproduces each. Serves on "
    "127.0.0.1 with a token in the printed address until Ctrl-C.",
    run="gradcli.cli.commands.explore_command:run_explore", group="explore",
    expression_default="sin(x)*cos(y)",
    options=(replace(PLOT_GRID, help="start:stop:count of the one or two drawn variables "
                     "(default -5:5); z=0.5 holds z fixed."), HOLD,
             Option("point", ("--point",), "text", None, metavar="POINT",
                    help="Pin this point when the page opens.", example="--point x=1,y=0.5"),
             replace(next(o for o in PLOT_DRAWING if o.name == "color"), default=None),
             Option("contour", ("--contour",), "flag", False, help="Draw contour lines.",
                    example="--contour"),
             Option("port", ("--port",), "whole", 0, low=0, high=65535, metavar="PORT",
                    shown_default="a free port", help="The port to listen on.",
                    example="--port 8765"),
             Option("host", ("--host",), "text", None, metavar="ADDRESS",
                    shown_default="127.0.0.1", help="Listen on this address instead (a "
                    "warning says when other machines can reach it).",
                    example="--host 0.0.0.0"),
             Option("no_browser", ("--no-browser",), "flag", False,
                    help="Print the address only; do not open a browser.",
                    example="--no-browser"),
             Option("request_timeout", ("--request-timeout",), "real", 5.0, low=0,
                    metavar="SECONDS", help="Stop a computation that runs longer than this "
                    "(the page says so; the next request works).",
                    example="--request-timeout 20"),
             Option("save", ("--save",), "text", None, metavar="FILE",
                    help="Write the static page of this view (as plot -o FILE.html) and "
                    "exit instead of serving.", example="--save view.html"),
             MEMORY, QUIET, MAX_POINTS),
    examples=('gradcli explore "sin(x)*cos(y)"',
              'gradcli explore "x^2 + 3*y^2" --grid x=-2:2:201 --grid y=-2:2:201 '
              '--point x=1.5,y=1',
              'gradcli explore "[-y, x]" --color curl --no-browser',
              'gradcli explore "sin(x)*cos(y)" --save view.html'))
OTHER_COMMANDS += (EXPLORE,)

# --- reading files --------------------------------------------------------------------------
NO_FILES = Option(
    "no_files", ("--no-files",), "flag", False, shown_default="off ($GRADCLI_NO_FILES=1: on)",
    help="Refuse every argument that would read a file (@FILE, x=@FILE, --vector @FILE, "
    "--points FILE), as a service passing on other people's text needs; standard input "
    "(@-, --points -) is still read.",
    example="GRADCLI_NO_FILES=1 (the same, from the environment)")
for _command in OTHER_COMMANDS:  # every command is handed text that may name a file
    _command.options = (*_command.options, NO_FILES)


#: the same rows for the other commands
OTHER_COLUMNS: dict[str, tuple[tuple[str, str, str], ...]] = {
    'graph': (
        ('graph',
         'a node table: operation, inputs, value, adjoint ∂f/∂node',
         'one point; `-f table|json|dot`'),
    ),
    'plot': (
        ('plot',
         'a picture (PNG/SVG/PDF), an interactive page (HTML), an animation '
         '(GIF/MP4) or a terminal preview',
         'see [Pictures](plot.md)'),
    ),
    'critical': (
        ('critical',
         '`f`, `|grad f|`, `eig[0]`..`eig[n-1]`, `type`; for a field `[P, Q, '
         '...]`: `|F|`, `re[i]`, `im[i]`, `type`',
         'where ∇f = 0 (F = 0); see [Where the field leads](fields.md)'),
    ),
    'descend': (
        ('descend',
         '`[run,] step`, the variables, `f`, `|grad f|` (the variables come '
         'after `step`)',
         "torch.optim's optimisers, iterate for iterate"),
    ),
    'flow': (
        ('flow',
         '`[run,] t`, the variables, `|F|` (the variables come after `t`)',
         'RK4 or Euler trajectories of a field'),
    ),
    'integrate': (
        ('integrate --path SPEC',
         '`work` (`circulation` on a closed path), `integral` (a scalar field, over arc '
         'length) or `flux` (`--flux`), `error`; `--check green` adds `green`, '
         '`green_error`',
         'adaptive Gauss–Kronrod; see [Line integrals and flux](../how-to/line-integrals.md)'),
    ),
    'implicit': (
        ('implicit --solve-for y',
         '`|F|`, `dy/dx` for each unknown and independent variable; `--order K` adds '
         '`d2y/dx2`..`dKy/dxK`',
         'y(x) defined by F = 0; see [Implicit curves](../how-to/implicit-curves.md)'),
    ),
}
for _command in OTHER_COMMANDS:
    _command.columns = OTHER_COLUMNS.get(_command.name, ())


def all_commands() -> tuple[Command, ...]:
    """Every command: one per registered computation (in the table's order), then the
    others. Built when asked for, so a computation registered at run time is a command."""
    from gradcli.plan.computations import TABLE, names

    names()  # the built-ins first
    return (*(numeric_command(r) for r in TABLE.values()),
            *(_with_every(c) for c in OTHER_COMMANDS))


#: the other commands that take the parameters every computation takes (units, to)
EVERY_PARAMETER_COMMANDS = ("propagate", "plot", "critical", "descend", "flow", "graph",
                            "implicit", "integrate", "explore")


def _with_every(other: Command) -> Command:
    """``other`` with the options of the parameters every computation takes (``--unit``,
    ``--to``: the parameter table's) when it is one of EVERY_PARAMETER_COMMANDS."""
    if other.name not in EVERY_PARAMETER_COMMANDS:
        return other
    from gradcli.request.parameters import every

    extra = tuple(_parameter_option(other.name, p) for p in every())
    return replace(other, options=(*other.options[:-1], *extra, other.options[-1])
                   if other.options and other.options[-1] is NO_FILES
                   else (*other.options, *extra))


def command(name: str) -> Command | None:
    """The command ``name`` (None for an unknown one), building only that command."""
    other = next((c for c in OTHER_COMMANDS if c.name == name), None)
    if other is not None:
        return _with_every(other)
    from gradcli.plan.computations import TABLE, names

    names()
    record = TABLE.get(name)
    return None if record is None else numeric_command(record)


def flag_of(parameter: str) -> str:
    """The option a library parameter is given with on the command line: the first flag
    of the declared option of that name (``max_points`` -> ``--max-points``)."""
    from gradcli.request.parameters import TABLE

    if parameter in TABLE:  # a computation parameter: its declared flags
        return TABLE[parameter].flags[0]
    for c in all_commands():
        for o in c.options:
            if o.name == parameter:
                return o.flags[0]
    return "--" + parameter.replace("_", "-")


class _ByName(dict):
    """``BY_NAME[name]``: the command of that name, built on use."""

    def __missing__(self, name: str) -> Command:
        found = command(name)
        if found is None:
            raise KeyError(name)
        return found

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        found = command(name)
        return default if found is None else found


BY_NAME: dict[str, Command] = _ByName()


def __getattr__(name: str) -> Any:
    """``COMMANDS``: every command, built when asked for (see :func:`all_commands`)."""
    if name == "COMMANDS":
        return all_commands()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
