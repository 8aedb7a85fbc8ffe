"""Every command and option of gradcli, declared once, as data.

The typer application (``app.py``), the argv rewrites (``argv.py``), the defaults a run
receives and the README's option tables (``readme.py``) are all generated from
:data:`COMMANDS`. Adding an option is one :class:`Option` in a command's ``options``;
adding a command is one :class:`Command` (plus the function it runs). Nothing here imports
typer or click: the argv rewrites and the README read it without them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..evaluation.binding import DEFAULT_MAX_POINTS
from ..evaluation.fields import defaults as fields_defaults

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
    decided at run time. A ``default`` of :data:`PLOT_DEFAULT` is PlotOptions' own
    (:attr:`default_value` looks it up). (Not frozen only because frozen dataclasses cost
    start-up time: nothing changes a declaration after it is made.)
    """

    name: str
    flags: tuple[str, ...]
    kind: str
    default: Any
    help: str
    example: str
    metavar: str = ""
    choices: tuple[str, ...] = ()
    low: float | None = None
    high: float | None = None
    repeat: bool = False
    once: bool = False
    required: bool = False
    bare: str | None = None
    shown_default: str | None = None

    @property
    def takes_value(self) -> bool:
        return self.kind != "flag"

    @property
    def default_value(self) -> Any:
        """The value a run receives when the option is not given (``default``, or for
        :data:`PLOT_DEFAULT` the plot options' own)."""
        if self.default is PLOT_DEFAULT:
            from ..plot.options import OPTION_DEFAULTS

            return OPTION_DEFAULTS[self.name]
        return self.default


@dataclass
class Command:
    """One command: ``gradcli NAME EXPRESSION [OPTIONS]``.

    ``run`` names the function that does the work as ``package.module:function``
    (imported only when the command runs); it is called as ``function(name,
    expression=..., **options)`` and returns the exit status. ``files``
    maps each output extension to the format it picks; ``auto`` is the format used when
    none is chosen, on a terminal and elsewhere. ``group`` is the README table it is
    listed in.
    """

    name: str
    help: str
    run: str
    options: tuple[Option, ...]
    examples: tuple[str, ...]
    group: str
    files: tuple[tuple[str, str], ...] = ()
    auto: tuple[str, str] = ("table", "csv")

    def option(self, name: str) -> Option:
        return next(o for o in self.options if o.name == name)


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
FORMAT = Option(
    "fmt", ("--format", "-f"), "choice", "auto", metavar="FORMAT",
    choices=("auto", "table", "csv", "json", "npz"),
    help="auto is a table on a terminal and CSV otherwise; with -o the extension "
    "decides, and a -f that contradicts it is an error.",
    example="-f json")
OUTPUT = Option(
    "output", ("--output", "-o"), "text", None, metavar="FILE",
    help="Write to FILE (atomically); its extension picks the format: .csv .json .npz "
    "(one array per result block) .npy (one record array, streamed), and with gradcli[data] "
    ".nc (NetCDF-4) .zarr (a Zarr store, streamed; a path or an fsspec URL) .parquet.",
    example="-o grad.nc")
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

NUMERIC = (AT, GRID, POINTS, FORMAT, OUTPUT, OVERWRITE, PRECISION, STRICT, QUIET, MAX_POINTS,
           DTYPE, SCHEDULER, SCHEDULER_FILE, SCHEDULER_TIMEOUT)
NUMERIC_FILES = ((".csv", "csv"), (".json", "json"), (".npz", "npz"), (".npy", "npy"),
                 (".nc", "nc"), (".zarr", "zarr"), (".parquet", "parquet"))

# --- --check ------------------------------------------------------------------------------
#: --check's default relative tolerance per command and dtype: float32 results carry about
#: 7 significant digits, so their derivatives cannot match differences to 1e-6
CHECK_TOLERANCE = {
    "grad": {"float64": 1e-6, "float32": 1e-4},
    "jacobian": {"float64": 1e-6, "float32": 1e-4},
    "hessian": {"float64": 1e-4, "float32": 1e-3},
}


def _sci(value: float) -> str:
    return f"{value:.0e}".replace("e-0", "e-")


def _check(command: str) -> tuple[Option, Option]:
    tol = CHECK_TOLERANCE[command]
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


VECTOR = Option(
    "vector", ("--vector", "-v"), "text", None, required=True, metavar="V",
    help='v shaped like f: "1,0", or "[[1,0],[0,1]]" for a matrix, or @v.npy.',
    example='--vector "1,0"')
DIRECTION = Option(
    "direction", ("--direction", "-d"), "text", None, required=True, metavar="U",
    help="The tangent u; variables not named get 0; a vector may come from a file "
    "(x=@u.npy).", example='--direction "x=1,y=0"')


def _wrt(help: str, example: str) -> Option:  # noqa: A002 - the declaration's field name
    """The one --wrt option: names, comma-separated or repeated; what they mean is the
    command's (its help says)."""
    return Option("wrt", ("--wrt", "-w"), "text", None, repeat=True, metavar="NAMES",
                  help=help, example=example)


WRT = _wrt("Differentiate by these variables or named steps only (comma-separated, or "
           "repeat); by a step m, df/dm holds m's inputs fixed (PyTorch's retain_grad).",
           'gradcli grad "m = x^2; y = m + x; p = 4*y" --at x=3 --wrt m')
UNIT = Option(
    "unit", ("--unit",), "flag", False,
    help="Normalise the direction to unit length: jvp is then the directional derivative "
    "(hvp: H·u for the unit u).", example='--direction "x=3,y=4" --unit')
NORM = Option(
    "norm", ("--norm",), "flag", False,
    help="Also write |grad f|, the Euclidean norm of the gradient, after the partials.",
    example="--norm")

# --- vector calculus and higher order -------------------------------------------------
#: how the components of div's and curl's field pair with the variables
PAIRING = ("Components pair with the variables in the order the command line binds them: "
           "grid order, --at order, or points-file column order; --wrt x,y,z states the "
           "pairing and takes precedence.")
FIELD_WRT = _wrt(
    "The variables the field's components pair with, in order (default: the bound "
    "variables in binding order; a vector or matrix variable gives its components in "
    "turn, v[0], v[1]...).", "--wrt x,y,z")
LAPLACIAN_WRT = _wrt("Sum over these variables only (default: every bound variable; a "
                     "vector variable is all its components, x[1] one of them).", "--wrt x,y")
DIFF_WRT = _wrt(
    "The variables of the partial: x,x,y is the third partial d3f/dx2dy; one variable "
    "with --order k is d^k f/dx^k (default: the only bound variable; x[1] names a "
    "component).", "--wrt x,x,y")
DIFF_ORDER = Option(
    "order", ("--order", "-k"), "whole", None, low=1, high=100, metavar="K",
    shown_default="1, or the number of --wrt names",
    help="The order k of the pure partial d^k f/dx^k of the one --wrt variable (1 to 100).",
    example="--wrt x --order 3")
TAYLOR_WRT = _wrt("The variables of the polynomial (default: every bound variable; the "
                  "others keep their values).", "--wrt x,y")
TAYLOR_ORDER = Option(
    "order", ("--order", "-k"), "whole", 2, low=0, high=100, metavar="K",
    help="The total order K: every multi-index with |alpha| <= K (0 to 100).",
    example="--order 8")
POLYNOMIAL = Option(
    "polynomial", ("--polynomial",), "flag", False,
    help="Print the Taylor polynomial instead, in gradcli's expression language in powers of "
    "(x - a), one line per point; gradcli reads it back. -o FILE.txt saves it.",
    example="--polynomial")
TAYLOR_FILES = ((".csv", "csv"), (".json", "json"), (".npz", "npz"), (".txt", "text"))

# --- graph --------------------------------------------------------------------------------
GRAPH_AT = Option(
    "at", ("--at", "-a"), "text", None, repeat=True, metavar="POINT",
    help="The one point to evaluate at (a vector may come from a file: x=@vec.npy).",
    example='--at "x=3"')
GRAPH_FORMAT = Option(
    "fmt", ("--format", "-f"), "choice", "auto", metavar="FORMAT",
    choices=("auto", "table", "json", "dot"),
    help="auto is a table, or what the -o extension says; dot is Graphviz source.",
    example="-f dot")
GRAPH_OUTPUT = Option(
    "output", ("--output", "-o"), "text", None, metavar="FILE",
    help="Write to FILE; its extension picks the format: .json .dot .gv (Graphviz).",
    example="-o graph.dot")

# --- plot ---------------------------------------------------------------------------------
PLOT_OUTPUT = Option(
    "output", ("--output", "-o"), "text", None, metavar="FILE",
    help="The picture; its extension picks the format: .png .svg .pdf, .html (interactive, "
    "needs gradcli[html]), .gif .mp4 (with --animate); - previews in the terminal. Needed "
    "unless --preview.",
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
           choices=("magnitude", "divergence", "curl", "laplacian"), metavar="QUANTITY",
           help="This quantity as the heatmap, from the engine's derivatives: a vector field's "
           "magnitude, divergence or curl; a scalar f's magnitude |grad f| or laplacian, under "
           "the gradient arrows.", example="--color laplacian"),
    Option("cmap", ("--cmap",), "text", PLOT_DEFAULT, metavar="NAME",
           help="Colormap (default viridis; RdBu_r centred at 0 for divergence, curl and "
           "slices).", example="--cmap inferno"),
    Option("title", ("--title",), "text", PLOT_DEFAULT, metavar="TEXT",
           help="Title above the plot.", example='--title "f(x, y)"'),
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
           "or NAME.mp4.", example="--animate t=0:2pi:48"),
    Option("fps", ("--fps",), "real", PLOT_DEFAULT, metavar="FPS",
           help="Frames per second of an --animate movie (default 12).", example="--fps 24"),
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
FIELDS_OUTPUT = replace(
    OUTPUT, help="Write to FILE (atomically); its extension picks the format: .csv .json "
    ".npz (one array per column).", example="-o path.csv")
FIELDS_FILES = ((".csv", "csv"), (".json", "json"), (".npz", "npz"))
SEED_GRID = replace(
    GRID, help="start:stop:count per variable: every point is a seed, and the box is "
    "searched; z=0.5 holds z fixed; a bare --grid seeds every variable on -5:5.",
    example="--grid x=-3:3:13")
SEED_POINTS = replace(
    POINTS, help="CSV file (or - for stdin) of seeds, its header naming the variables "
    "(other columns are ignored); every converged point is kept.",
    example="--points seeds.csv")
FIELDS_WRITE = (FORMAT, FIELDS_OUTPUT, PRECISION, QUIET, MAX_POINTS)
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
    metavar="METHOD", help="rk4 (classical Runge-Kutta) or euler, with the grid's fixed steps.",
    example="--method euler")
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
RUN_FIELDS = "gradcli.cli.fields_run"

#: the function every numeric command runs: it hands the command's name to
#: ``gradcli.evaluate`` as ``what``
RUN_NUMERIC = "gradcli.cli.execute:run_numeric"

COMMANDS: tuple[Command, ...] = (
    Command(
        name="eval",
        help="Values of the formula: column f (f[i] for a vector, f[i][j] for a matrix).",
        run=RUN_NUMERIC, options=NUMERIC, group="numeric", files=NUMERIC_FILES,
        examples=('gradcli eval "x^2 + 3x + 1" --at x=4',
                  'gradcli eval "[x*y, x-y]" --grid x=0:1:3 --grid y=0:1:3 -f json')),
    Command(
        name="grad", help="Gradient of a scalar formula: f, then df/dx for each variable.",
        run=RUN_NUMERIC, options=(*NUMERIC, NORM, *_check("grad"), WRT), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli grad "x^2 + 3x + 1" --at x=4',
                  'gradcli grad "x^2 + y^2" --at x=3,y=4 --norm',
                  'gradcli grad "sin(x)*cos(y)" --grid x=0:2pi:100 --grid y=0:2pi:100 '
                  '-o grad.csv',
                  'gradcli grad "sin(x)*cos(y)" --grid',
                  'gradcli grad "a*x^2" --points xs.csv --at a=3',
                  'gradcli grad "z = w*x + b; p = sigmoid(z); -(t*log(p) + (1-t)*log(1-p))" '
                  '--at w=0.5,x=2,b=0.1,t=1',
                  'gradcli grad @loss.gc --at x=@x.npy --wrt m',
                  'gradcli grad "logsumexp(x)" --at x=@vec.npy -o grad.npz',
                  'gradcli grad "sin(x)*cos(y)" --grid x=0:1:2000 --grid y=0:1:2000 '
                  '-o field.nc',
                  'gradcli grad "exp(-x^2-y^2)" --grid x=-2:2:4000 --grid y=-2:2:4000 '
                  '--scheduler local:2 -o field.zarr')),
    Command(
        name="jacobian",
        help="Every derivative: the values, then df[i]/dx per component and variable.",
        run=RUN_NUMERIC, options=(*NUMERIC, *_check("jacobian"), WRT), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli jacobian "[-x^3, 5x]" --at x=0 --at x=1 --at x=2',
                  'gradcli jacobian "[sum(x), sum(x^2)]" --at "x=[0,1,2,3]"',
                  'gradcli jacobian "A @ x" --at "A=[[1,2],[3,4]],x=[1,1]"')),
    Command(
        name="vjp", help="Vector-Jacobian product vᵀJ (PyTorch's backward(gradient=v)): "
        "vjp/dx per variable.",
        run=RUN_NUMERIC, options=(*NUMERIC, VECTOR, WRT), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli vjp "[-x^3, 5x]" --vector "1,0" --at x=1',
                  'gradcli vjp "softmax(x)" --vector "1,0,0" --at "x=[1,2,3]"')),
    Command(
        name="jvp", help="Jacobian-vector product J·u by forward mode: jvp (jvp[i] for a "
        "vector f).",
        run=RUN_NUMERIC, options=(*NUMERIC, DIRECTION, UNIT), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli jvp "sin(x)*cos(y)" --direction "x=1,y=0" --at x=1,y=2',
                  'gradcli jvp "x*y" --direction "x=3,y=4" --unit --at x=1,y=2')),
    Command(
        name="hessian", help="Second derivatives of a scalar formula: f, then d2f/dadb for "
        "every ordered pair.",
        run=RUN_NUMERIC, options=(*NUMERIC, *_check("hessian")), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli hessian "x^2*y + y^3" --at x=1,y=2',)),
    Command(
        name="div", help="Divergence of a vector field [P, Q, ...]: the components f[i], then "
        "div = sum of df[i]/dx_i. " + PAIRING,
        run=RUN_NUMERIC, options=(*NUMERIC, FIELD_WRT), group="numeric", files=NUMERIC_FILES,
        examples=('gradcli div "[x*y, x-y, z^2]" --at x=1,y=2,z=3',
                  'gradcli div "[-y, x]" --grid x=-1:1:5 --grid y=-1:1:5',
                  'gradcli div "[a*x, a*y]" --at x=1,y=2,a=3 --wrt x,y')),
    Command(
        name="curl", help="Curl of a vector field: [P, Q] gives curl = dQ/dx - dP/dy; "
        "[P, Q, R] gives curl[0], curl[1], curl[2]; other sizes are an error. " + PAIRING,
        run=RUN_NUMERIC, options=(*NUMERIC, FIELD_WRT), group="numeric", files=NUMERIC_FILES,
        examples=('gradcli curl "[-y, x]" --at x=1,y=2',
                  'gradcli curl "[x*y, x-y, z^2]" --at x=1,y=2,z=3')),
    Command(
        name="laplacian", help="Laplacian: f, then laplacian = sum of d2f/dx_i2 over the "
        "bound variables (or --wrt); f[i], laplacian[i] for a vector f. Taylor mode.",
        run=RUN_NUMERIC, options=(*NUMERIC, LAPLACIAN_WRT), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli laplacian "exp(-(x^2+y^2))" --at x=0.5,y=0',
                  'gradcli laplacian "x^2 - y^2" --grid x=-1:1:5 --grid y=-1:1:5')),
    Command(
        name="hvp", help="Hessian-vector product H·u by forward over reverse (the values of "
        "torch.autograd.functional.hvp): f, then hvp/dx for each variable.",
        run=RUN_NUMERIC, options=(*NUMERIC, DIRECTION, UNIT), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli hvp "x^2*y + y^3" --direction "x=1,y=0" --at x=1,y=2',)),
    Command(
        name="diff", help="A partial derivative of any order (Taylor mode): --wrt x --order 3 "
        "gives d3f/dx3, --wrt x,x,y gives d3f/dx2dy; f first (f[i] for a vector f).",
        run=RUN_NUMERIC, options=(*NUMERIC, DIFF_WRT, DIFF_ORDER), group="numeric",
        files=NUMERIC_FILES,
        examples=('gradcli diff "sin(x)*exp(y)" --wrt x --order 3 --at x=1,y=0',
                  'gradcli diff "sin(x)*exp(y)" --wrt x,x,y --at x=1,y=0',
                  'gradcli diff "exp(-x^2)" --order 4 --grid x=-2:2:9')),
    Command(
        name="taylor", help="Multivariate Taylor coefficients up to total order K (Taylor "
        "mode): one row per multi-index in graded lexicographic order, with the point, "
        "order, deg(x)..., coefficient (d^alpha f / alpha!) and derivative (d^alpha f); "
        "--polynomial prints the polynomial instead.",
        run=RUN_NUMERIC, options=(*NUMERIC, TAYLOR_WRT, TAYLOR_ORDER, POLYNOMIAL),
        group="numeric", files=TAYLOR_FILES,
        examples=('gradcli taylor "exp(x)*sin(y)" --at x=0,y=0 --order 3',
                  'gradcli taylor "cos(x)" --at x=0 --order 6 --polynomial',
                  'gradcli taylor "sqrt(1+x+y)" --at x=0,y=0 --order 2 -o coefficients.csv')),
    Command(
        name="graph", help="The computation graph at one point: each node's operation, "
        "inputs, value and adjoint ∂f/∂node.",
        run="gradcli.cli.graph_cmd:run_graph",
        options=(GRAPH_AT, GRAPH_FORMAT, GRAPH_OUTPUT, PRECISION, QUIET), group="graph",
        files=((".json", "json"), (".dot", "dot"), (".gv", "dot")), auto=("table", "table"),
        examples=('gradcli graph "m = x^2; y = m + x; p = 4*y" --at x=3',
                  'gradcli graph "sin(x)*y" --at x=1,y=2 -o g.dot && dot -Tpng g.dot > g.png')),
    Command(
        name="plot", help="A picture of the formula and its gradient: curves with tangent "
        "arrows (one variable), a heatmap with gradient arrows or streamlines (two), a slice "
        "or interactive cones (three), an animation, or a terminal preview.",
        run="gradcli.cli.plot_run:run_plot",
        options=(PLOT_OUTPUT, PLOT_GRID, *PLOT_DRAWING, *PLOT_FIELDS, QUIET, MAX_POINTS),
        group="plot",
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
                  '--path-from x=-1.2,y=1 --method adam --lr 1e-2 --log -o path.png')),
    Command(
        name="critical", help="Critical points: where grad f = 0 (or F = 0 for a vector "
        "field [P, Q, ...]), by damped Newton from the grid's points (or --points) as seeds; "
        "columns: the variables, f, |grad f|, eig[i] (the Hessian's eigenvalues, ascending), "
        "type (minimum, maximum, saddle, degenerate); for a field |F|, re[i], im[i] and "
        "type (stable/unstable node or focus, saddle, center, degenerate).",
        run=f"{RUN_FIELDS}:run_critical",
        options=(SEED_GRID, SEED_POINTS, HOLD, *FIELDS_WRITE), group="fields",
        files=FIELDS_FILES,
        examples=('gradcli critical "x^3 - 3x + y^3 - 3y" --grid x=-3:3:13 --grid y=-3:3:13',
                  'gradcli critical "[y, -sin(x) - 0.5y]" --grid x=-7:7:29 --grid y=-3:3:13',
                  'gradcli critical "x^2 + a*y^2" --grid x=-1:1:5 --grid y=-1:1:5 --at a=-1')),
    Command(
        name="descend", help="Descent paths, iterate for iterate as torch.optim: columns "
        "[run,] step, the variables, f, |grad f|; step 0 is the start. Stops after --steps, "
        "at |grad f| <= --tol, or on a non-finite value (exit 1); the reason goes to stderr.",
        run=f"{RUN_FIELDS}:run_descend",
        options=(START, START_GRID, HOLD, DESCEND_METHOD, *HYPER, STEPS, TOL, STEP_EVERY,
                 *FIELDS_WRITE), group="fields", files=FIELDS_FILES,
        examples=('gradcli descend "(1-x)^2 + 100(y-x^2)^2" --from x=-1.2,y=1 --method adam '
                  '--lr 1e-3 --steps 5000 --every 500',
                  'gradcli descend "x^2 + 10y^2" --from x=1,y=1 --from x=-1,y=2 --method '
                  'momentum --nesterov --tol 1e-8',
                  'gradcli descend "(x^2+y-11)^2 + (x+y^2-7)^2" --from-grid x=-5:5:11 '
                  '--from-grid y=-5:5:11 --method newton --every 1000 -o ends.csv')),
    Command(
        name="flow", help="Trajectories x' = F(x) of a vector field (or -grad f of a scalar "
        "f) by fixed-step RK4 on the time grid --t: columns [run,] t, the variables, |F|.",
        run=f"{RUN_FIELDS}:run_flow",
        options=(START, START_GRID, HOLD, TIMES, FLOW_METHOD, STEP_EVERY, *FIELDS_WRITE),
        group="fields", files=FIELDS_FILES,
        examples=('gradcli flow "[y, -sin(x) - 0.5y]" --from x=2,y=0 --t 0:20:2001',
                  'gradcli flow "[-y, x]" --from-grid x=0.5:2:4 --from-grid y=0 --t 0:2pi:629 '
                  '--every 157')),
)

BY_NAME = {c.name: c for c in COMMANDS}
