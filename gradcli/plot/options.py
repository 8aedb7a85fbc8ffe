"""What the picture should look like, checked before any number is computed.

Every plot option is declared here once: its parsing (``parse_options`` turns the
command line's raw values into a ``PlotOptions``), its default and its checks. Everything a
user can get wrong (a size like ``7by5``, a dpi of 0, ``ylim 3:1``, an unknown file
extension) is rejected with one clear EvaluationError, so a bad command fails fast and
leaves no file behind.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, fields
from typing import Any

from gradcli.errors import EvaluationError, Namer, ref
from gradcli.fields import defaults as fields_defaults
from gradcli.fields.optim import parse_betas
from gradcli.lang.spec_text import parse_constant, parse_grid, parse_point, split_top
from gradcli.output import formats as format_table
from gradcli.plot.traced import check_specs

__all__ = ["PlotOptions", "image_format", "parse_size", "parse_options", "FORMATS",
           "OPTION_DEFAULTS", "output_kind", "check_target", "DEFAULT_FPS"]

#: file extension -> format, from the format table's picture and animation records; the
#: picture formats go through matplotlib, html through the page writer, the animations
#: through the animation writer
FORMATS = format_table.extensions((format_table.PICTURE, format_table.ANIMATION))
MOVIES = tuple(f.name for f in format_table.holding((format_table.ANIMATION,)))
IMAGES = tuple(f.name for f in format_table.holding((format_table.PICTURE,))
               if f.name != "html")
EXTENSIONS = ", ".join(FORMATS)
MAX_PIXELS_PER_SIDE = 16_000  # Agg refuses 2**16; far below that a picture is a mistake
MAX_FRAMES = 1000
#: the most contour lines drawn: closer lines run together (100000 took a minute and 1.5 GB)
MAX_CONTOUR_LEVELS = 50
#: the memory a picture holds per grid point: the values, the gradient, |grad|, the colours
#: and the drawing's own copies (measured: about 16 float64 arrays of the grid)
PICTURE_BYTES_PER_POINT = 128


def typed(text: Any) -> str:
    """An option's text as typed, quoted, for a parameter reference (``ref(text=)``)."""
    return f"'{text}'"


def contour_note(asked: int) -> str:
    """The note when contour asks for more levels than are drawn."""
    return (f"{ref('contour', text=f'{asked:,}')}: drawing {MAX_CONTOUR_LEVELS} levels, the "
            "most a picture shows (closer lines run together)")
#: color, the one list of its quantities and the fields each is for: a vector field's
#: magnitude, divergence or curl; a scalar's |∇f| or ∇²f (the CLI's choices and the
#: plot's checks read this; ``colors.HEATS`` draws each)
COLOR_FIELDS = {"magnitude": ("vector", "scalar"), "divergence": ("vector",),
                "curl": ("vector",), "laplacian": ("scalar",)}
COLORS = tuple(COLOR_FIELDS)
#: the color quantities that are computations of the table (``plot/data.py`` runs
#: them: the numbers the commands print), by colour name
KERNEL_COLORS = {"divergence": "div", "curl": "curl", "laplacian": "laplacian"}
LEGENDS = ("auto", "outside", "none")  # legend
MAX_TAYLOR, MAX_POLYNOMIALS = 30, 8  # taylor: the highest order drawn, how many polynomials


#: frames per second of an animate movie when fps is not given
DEFAULT_FPS = 12.0


@dataclass
class PlotOptions:
    """Drawing choices; ``None`` means "pick a sensible default for this kind of plot"."""

    every: int | None = None
    derivative: bool = False
    normalize: bool = False
    stream: bool = False
    contour: int = 0
    arrows: bool = True
    color: str | None = None  # a heatmap: magnitude, divergence, curl (F), laplacian (f)
    cmap: str | None = None
    title: str | None = None
    xlabel: str | None = None  # the axis labels, instead of the variables' names
    ylabel: str | None = None
    colorbar_label: str | None = None  # instead of the heatmap's quantity
    legend: str = "auto"  # auto (inside on the emptiest spot of a curve, else outside),
    # outside (below the axes) or none
    dpi: float = 100.0
    size: tuple[float, float] | None = None
    aspect: str | None = None
    scale: float | None = None  # the magnitude drawn at full arrow length
    log: bool = False
    vmin: float | None = None
    vmax: float | None = None
    ylim: tuple[float, float] | None = None
    slice: tuple[str, float] | None = None  # (variable, value): a plane of a 3-D field
    animate: tuple[str, tuple[float, float, int]] | None = None  # (variable, (a, b, n))
    fps: float | None = None  # an animate movie's frame rate (None: DEFAULT_FPS)
    preview: bool = False
    taylor: tuple[str, float] | None = None  # (variable, point): Taylor polynomials of f
    order: tuple[int, ...] | None = None  # their orders (default 1, 2, 3)
    # physical units (the parameter table's units and to: {"x": "m"}, {"f": "K"})
    units: dict[str, str] | None = None
    to: dict[str, str] | None = None

    # where the field leads (drawn by plot/marks.py): critical points, paths, flows, basins
    mark_critical: bool = False
    path_from: tuple[dict[str, Any], ...] = ()  # parsed path_from points
    flow_from: tuple[dict[str, Any], ...] = ()
    basins: bool = False
    # the optimisers: gd for paths, newton for basins by default; several method give
    # each path_from start a path per method, the k-th lr going with the k-th method
    method: tuple[str, ...] = ()
    lr: tuple[float, ...] = ()
    momentum: float | None = None
    dampening: float | None = None
    nesterov: bool = False
    weight_decay: float | None = None
    betas: tuple[float, float] | None = None
    eps: float | None = None
    amsgrad: bool = False
    alpha: float | None = None
    centered: bool = False
    maximize: bool = False
    steps: int = fields_defaults.STEPS
    tol: float | None = None
    t: tuple[float, float, int] | None = None  # the flows' time grid
    # paths and surfaces drawn over the field, as typed (read by plot/traced.py)
    path: tuple[str, ...] = ()
    disc: tuple[str, ...] = ()
    box: tuple[str, ...] = ()
    surface: tuple[str, ...] = ()
    ball: tuple[str, ...] = ()
    # how the picture's own texts name parameters (a caption's "scale sets it"): the
    # front end's words (``lang.errors.Namer``; the command line's flags), else the
    # library's parameter names
    words: Namer | None = None

    def taylor_orders(self) -> tuple[int, ...]:
        """The orders of the taylor polynomials (1, 2 and 3 unless order says)."""
        return self.order or (1, 2, 3)

    def descents(self, default_method: str) -> list[Any]:
        """The optimiser settings of path_from (default gd) or basins (newton): one
        per method."""
        from gradcli.fields.optim import each_settings

        return each_settings(self.method or (default_method,), self.lr,
                             **{name: getattr(self, name) for name in HYPER if name != "lr"})

    def descent(self, default_method: str) -> Any:
        """The one optimiser of basins."""
        if len(self.method) > 1:
            raise EvaluationError(f"{ref('basins')} colours by one descent: give one "
                                  f"{ref('method')}")
        return self.descents(default_method)[0]

    def times(self) -> Any:
        """The flows' time grid (t) as (start, stop, count): never built as an array."""
        return tuple(self.t or fields_defaults.TIMES)

    def check(self, n_vars: int | None = None) -> None:
        """Reject contradictory or out-of-range choices (EvaluationError, exit 2)."""
        if self.every is not None and self.every < 1:
            raise EvaluationError(f"{ref('every')} must be a whole number >= 1, got {self.every}")
        if self.contour < 0:
            raise EvaluationError(f"{ref('contour')} must be >= 0, got {self.contour}")
        if not (1 <= self.dpi <= 2400):
            raise EvaluationError(f"{ref('dpi')} must be between 1 and 2400, got {self.dpi:g}")
        if self.legend not in LEGENDS:
            raise EvaluationError(f"{ref('legend')} must be auto, outside or none, got "
                                  f"'{self.legend}'")
        if self.aspect not in (None, "equal", "auto"):
            raise EvaluationError(f"{ref('aspect')} must be equal or auto, got '{self.aspect}'")
        if self.stream and not self.arrows:
            raise EvaluationError(f"{ref('stream')} draws streamlines instead of arrows; "
                                  f"{ref('arrows', text='none')} draws neither: give one of "
                                  "them")
        if self.scale is not None and not (math.isfinite(self.scale) and self.scale > 0):
            raise EvaluationError(f"{ref('scale')} must be a finite number > 0, got {self.scale:g}")
        for flag, value in (("vmin", self.vmin), ("vmax", self.vmax)):
            if value is not None and not math.isfinite(value):
                raise EvaluationError(f"{ref(flag)} must be a finite number, got {value:g}")
        if self.vmin is not None and self.vmax is not None and self.vmin >= self.vmax:
            raise EvaluationError(f"{ref('vmin', text=f'{self.vmin:g}')} must be below "
                                  f"{ref('vmax', text=f'{self.vmax:g}')}")
        if self.fps is not None and not (0 < self.fps <= 100):
            raise EvaluationError(f"{ref('fps')} must be between 0 and 100, got {self.fps:g}")
        if self.fps is not None and self.animate is None:
            raise EvaluationError(f"{ref('fps')} sets the frame rate of an {ref('animate')} "
                                  f"movie: add {ref('animate', text='VAR=START:STOP:FRAMES')}")
        if self.size is not None:
            w, h = self.size
            if max(w, h) * self.dpi > MAX_PIXELS_PER_SIDE:
                raise EvaluationError(
                    f"{ref('size', text=f'{w:g}x{h:g}')} at {ref('dpi', text=f'{self.dpi:g}')}"
                    f" is {w * self.dpi:.0f}x{h * self.dpi:.0f} pixels, over "
                    f"{MAX_PIXELS_PER_SIDE} per side: lower {ref('size')} or {ref('dpi')}")
        if n_vars == 1:
            for flag, used in (("stream", self.stream), ("contour", self.contour > 0),
                               ("color", self.color is not None),
                               ("cmap", self.cmap is not None),
                               ("colorbar_label", self.colorbar_label is not None),
                               ("vmin", self.vmin is not None),
                               ("vmax", self.vmax is not None)):
                if used:
                    hint = (f" (for the y-range of a curve use {ref('ylim')})" if "vm" in flag
                            else "")
                    raise EvaluationError(f"{ref(flag)} needs two grid variables "
                                          f"(a heatmap); this plot has one{hint}")
        if self.order is not None and self.taylor is None:
            raise EvaluationError(f"{ref('order')} sets the orders of the {ref('taylor')} "
                                  f"polynomials: add {ref('taylor', text='VAR=POINT')}, e.g. "
                                  f"{ref('taylor', text='x=0')} {ref('order', text='2,4,6')}")
        if self.taylor is not None and self.animate is not None:
            raise EvaluationError(f"{ref('taylor')} draws still pictures: leave out "
                                  f"{ref('animate')}")
        if self.taylor is not None and n_vars is not None and n_vars != 1:
            raise EvaluationError(f"{ref('taylor')} draws Taylor polynomials over a curve: it "
                                  "needs "
                                  f"one grid variable, this plot has {n_vars}")
        self._check_marks(n_vars)
        self._check_traced(n_vars)
        if n_vars is not None and n_vars >= 2:
            if self.derivative:
                raise EvaluationError(f"{ref('derivative')} draws f' next to f for one grid "
                                      "variable; with two, the arrows are the gradient")
            if self.ylim is not None:
                raise EvaluationError(f"{ref('ylim')} sets the y-range of a curve (one grid "
                                      "variable); for a heatmap's colours use "
                                      f"{ref('vmin')}/{ref('vmax')}")


    def _check_marks(self, n_vars: int | None) -> None:
        """What the overlays of critical points, paths, flows and basins need."""
        drawn = {"mark_critical": self.mark_critical, "path_from": bool(self.path_from),
                 "flow_from": bool(self.flow_from), "basins": self.basins}
        used = [ref(name) for name, on in drawn.items() if on]
        descent = bool(self.path_from) or self.basins
        tuned = [ref(n) for n in (*HYPER, "method", "steps", "tol")
                 if getattr(self, n) != _FIELD_DEFAULTS[n]]
        if tuned and not descent:
            raise EvaluationError(f"{tuned[0]} sets the descent of {ref('path_from')} and "
                                  f"{ref('basins')}: add one of them")
        if self.t is not None and not self.flow_from:
            raise EvaluationError(f"{ref('t')} is the time grid of {ref('flow_from')}: add "
                                  f"{ref('flow_from', text='POINT')}")
        if self.path_from:
            self.descents("gd")
        if self.basins:
            self.descent("newton")
        if not used:
            return
        if self.animate is not None or self.slice is not None:
            which = ref("animate" if self.animate is not None else "slice")
            raise EvaluationError(f"{used[0]} draws on a still picture of one or two "
                                  f"variables: not with {which}")
        if n_vars is not None and n_vars >= 3:
            raise EvaluationError(f"{used[0]} needs one or two grid variables; this plot has "
                                  f"{n_vars}")
        if n_vars == 1:
            for flag in ("flow_from", "basins"):
                if drawn[flag]:
                    raise EvaluationError(f"{ref(flag)} needs two grid variables (a plane); this "
                                          "plot has one")

    def _check_traced(self, n_vars: int | None) -> None:
        """Paths go over a plane (or a 3-D field's page), surfaces over a 3-D field's."""
        from gradcli.plot.traced import given

        kinds = [kind for kind, _ in given(self)]
        if not kinds:
            return
        if self.animate is not None or self.slice is not None:
            which = "animate" if self.animate is not None else "slice"
            raise EvaluationError(f"{ref(kinds[0])} is drawn on a still picture of the "
                                  f"whole field: not with {ref(which)}")
        if n_vars == 1:
            raise EvaluationError(f"{ref(kinds[0])} is drawn over a field of two grid "
                                  "variables (or three, on the page); this plot has one")


#: the hyper-parameters of the descents (torch.optim's names), as PlotOptions fields
HYPER = ("lr", "momentum", "dampening", "nesterov", "weight_decay", "betas", "eps", "amsgrad",
         "alpha", "centered", "maximize")
_FIELD_DEFAULTS = {f.name: f.default for f in fields(PlotOptions)}
#: the command line's option values as typed, before parse_options (the CLI's defaults):
#: PlotOptions' own (but ``words``, which is the front end's, not an option), with arrows
#: spelled as on the command line and the repeatable start points as not given
OPTION_DEFAULTS: dict[str, Any] = {k: v for k, v in _FIELD_DEFAULTS.items() if k != "words"} | {
    "arrows": "arrows", "path_from": None, "flow_from": None, "method": None, "lr": None,
    "path": None, "disc": None, "box": None, "surface": None, "ball": None}


def parse_options(**raw: Any) -> PlotOptions:
    """A checked PlotOptions from the command line's raw values (strings as typed for
    ``size 7x5``, ``ylim -5:5``, ``slice z=0``, ``animate t=0:2pi:48``,
    ``arrows arrows|none``); any option not given takes ``OPTION_DEFAULTS``."""
    unknown = set(raw) - set(OPTION_DEFAULTS)
    if unknown:
        raise TypeError(f"unknown plot options: {', '.join(sorted(unknown))}")
    values = {**OPTION_DEFAULTS, **raw}
    if values["arrows"] not in ("arrows", "none"):
        raise EvaluationError(f"{ref('arrows')} must be arrows or none, got '{values['arrows']}'")
    if values["color"] is not None and values["color"] not in COLORS:
        raise EvaluationError(f"{ref('color')} must be {', '.join(COLORS[:-1])} or {COLORS[-1]}, "
                              f"got '{values['color']}'")
    values["arrows"] = values["arrows"] == "arrows"
    if values["size"] is not None:
        values["size"] = parse_size(values["size"])
    if values["ylim"] is not None:
        values["ylim"] = parse_range(values["ylim"], "ylim")
    if values["slice"] is not None:
        values["slice"] = parse_held(values["slice"], "slice")
    if values["animate"] is not None:
        values["animate"] = parse_animate(values["animate"])
    if values["taylor"] is not None:
        values["taylor"] = parse_held(values["taylor"], "taylor")
    if values["order"] is not None:
        values["order"] = parse_orders(values["order"])
    for name in ("path_from", "flow_from"):
        values[name] = tuple(parse_point(spec, name) for spec in values[name] or ())
    for name in ("units", "to"):  # text as typed (NAME=UNIT), or a mapping from Python
        if values[name] is not None and not isinstance(values[name], dict):
            from gradcli.request.parameters import TABLE

            values[name] = TABLE[name].read(values[name], None) or None
    for name in ("method", "lr"):  # repeatable: a list as typed, or one value from Python
        value = values[name]
        values[name] = () if value is None else tuple(value) if isinstance(
            value, (list, tuple)) else (value,)
    values.update(check_specs(values))
    if values["betas"] is not None:
        values["betas"] = parse_betas(values["betas"])
    if values["t"] is not None and not isinstance(values["t"], tuple):
        from gradcli.fields.flow import MAX_TIMES
        from gradcli.lang.spec_text import parse_times

        values["t"] = parse_times(values["t"], MAX_TIMES)
    options = PlotOptions(**values)
    options.check()
    return options


def parse_orders(text: Any) -> tuple[int, ...]:
    """``"2,4,6"`` -> ``(2, 4, 6)``: the orders of the taylor polynomials."""
    if isinstance(text, (tuple, list)):
        text = ",".join(str(t) for t in text)
    parts = [p.strip() for p in str(text).split(",")]
    try:
        orders = tuple(int(p) for p in parts)
    except ValueError:
        raise EvaluationError(f"{ref('order', text=typed(text))}: expected whole numbers "
                              f"separated by commas, e.g. {ref('order', text='2,4,6')}") \
            from None
    if not 1 <= len(orders) <= MAX_POLYNOMIALS or not all(0 <= k <= MAX_TAYLOR for k in orders):
        raise EvaluationError(f"{ref('order', text=typed(text))}: give 1 to "
                              f"{MAX_POLYNOMIALS} orders, each from 0 to {MAX_TAYLOR}")
    return tuple(sorted(set(orders)))


def parse_size(text: str) -> tuple[float, float]:
    """``"7x5"`` (inches) -> ``(7.0, 5.0)``."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        if len(parts) != 2:
            raise ValueError
        w, h = float(parts[0]), float(parts[1])
    except ValueError:
        raise EvaluationError(f"{ref('size', text=typed(text))}: expected WIDTHxHEIGHT in inches, "
                              "e.g. 7x6") from None
    if not (0 < w <= 200 and 0 < h <= 200):
        raise EvaluationError(f"{ref('size', text=typed(text))}: width and height must be "
                              "between 0 and 200 inches")
    return w, h


def _number(text: str, what: str) -> float:
    value = parse_constant(text, ref(what))
    if isinstance(value, list) or not math.isfinite(value):
        raise EvaluationError(f"{ref(what)}: expected a finite number, got '{text.strip()}'")
    return float(value)


def parse_range(text: str, option: str) -> tuple[float, float]:
    """``"-5:5"`` or ``"-pi:pi"`` -> ``(-5.0, 5.0)``; the bottom must be below the top."""
    parts = split_top(text, ":")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise EvaluationError(f"{ref(option, text=typed(text))}: expected LOW:HIGH, e.g. "
                              f"{ref(option, text='-5:5')}")
    lo, hi = (_number(p, option) for p in parts)
    if lo >= hi:
        raise EvaluationError(f"{ref(option, text=typed(text))}: LOW must be below HIGH")
    return lo, hi


def parse_held(text: str, option: str) -> tuple[str, float]:
    """``"z=0"`` -> ``("z", 0.0)``: one variable held at one value."""
    point = parse_point(text, option)
    if len(point) != 1:
        raise EvaluationError(f"{ref(option, text=typed(text))}: give one variable, e.g. "
                              f"{ref(option, text='z=0')}")
    (name, value), = point.items()
    if isinstance(value, list) or not math.isfinite(value):
        raise EvaluationError(f"{ref(option, text=typed(text))}: expected one finite number, "
                              f"e.g. {ref(option, text=f'{name}=0')}")
    return name, float(value)


def parse_animate(text: str) -> tuple[str, tuple[float, float, int]]:
    """``"t=0:2pi:48"`` -> ``("t", (0.0, 6.28..., 48))``: the variable and its frames."""
    name, value = parse_grid(text, "animate")
    given = ref("animate", text=typed(text))
    if not isinstance(value, tuple):
        raise EvaluationError(f"{given}: expected start:stop:frames, e.g. "
                              f"{ref('animate', text=f'{name}=0:2pi:48')}")
    if not (2 <= value[2] <= MAX_FRAMES):
        raise EvaluationError(f"{given}: the number of frames must be between "
                              f"2 and {MAX_FRAMES}")
    if value[0] == value[1]:
        raise EvaluationError(f"{given}: start and stop are equal")
    return name, value


def image_format(path: str) -> str:
    """The format named by ``path``'s extension: png, svg, pdf, html, gif or mp4."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        if not ext:
            raise EvaluationError(f"'{path}' has no picture extension: use {EXTENSIONS}")
        raise EvaluationError(f"unknown picture extension '{ext}': use {EXTENSIONS}")
    return FORMATS[ext]


def output_kind(fmt: str, options: PlotOptions) -> str:
    """Check that ``fmt`` suits the options: a movie needs animate and vice versa."""
    if options.animate is not None and fmt not in (*MOVIES, "html"):
        raise EvaluationError(f"{ref('animate')} writes a movie or a page with a slider: use "
                              f"-o NAME.gif, NAME.mp4 or NAME.html, not .{fmt}")
    if fmt in MOVIES and options.animate is None:
        raise EvaluationError(f".{fmt} is an animation: add "
                              f"{ref('animate', text='VAR=start:stop:frames')}, e.g. "
                              f"{ref('animate', text='t=0:2pi:48')}")
    return "image" if fmt in IMAGES else fmt


def check_target(path: str) -> str:
    """The format for ``path`` (its extension); raise OSError early if its directory
    does not exist."""
    fmt = image_format(path)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(2, "No such directory", directory)
    return fmt
