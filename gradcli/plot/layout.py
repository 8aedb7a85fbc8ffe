"""Geometry without drawing: where arrows go, how long they are, where the axes sit.

The axes are placed by hand in inches rather than by a layout engine (which could move
them after the arrows are scaled): knowing the axes size up front lets the arrows be
scaled exactly (a full-length arrow fills ARROW_FILL of the arrow spacing, as seen on
screen, whatever the aspect). Without size the figure is sized to the data's shape
(figures.plane_size) and the saved picture is then cropped to its content, which costs
one extra draw (about 0.1 s) and leaves no blank band. Every backend uses these numbers,
so the picture, the interactive page and the terminal preview agree on the arrows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import ref

__all__ = ["ARROW_FILL", "Box", "ArrowFit", "fit_arrows", "default_every", "lattice",
           "normalized", "place", "clamp_every", "choose_aspect", "y_range", "ASPECT_LIMIT",
           "CURVE_PERCENTILE"]

ARROW_FILL = 0.9
ARROW_PERCENTILE = 95  # the default full arrow length: this percentile of the lengths
CURVE_PERCENTILE = 75  # ... of a curve's few tangent arrows
OUTLIER_RATIO = 2.0  # ... unless the longest is within this factor of it (no outliers)
ASPECT_LIMIT = 10.0  # ranges differing by more than this are drawn on auto aspect
LEFT, BOTTOM, TOP, TOP_TITLE, RIGHT = 0.8, 0.55, 0.2, 0.45, 0.3  # margins, inches
CAPTION = 0.3  # inches below the x label for a caption line
CBAR_PAD, CBAR_WIDTH, CBAR_LABELS = 0.15, 0.22, 0.95
MIN_AXES = 0.5  # inches: below this the picture cannot hold a plot


@dataclass
class Box:
    """Axes and (optional) colorbar rectangles in figure fractions, and the axes size."""

    axes: tuple[float, float, float, float]
    cbar: tuple[float, float, float, float] | None
    width: float  # inches
    height: float

    def ratio(self, xr: float, yr: float) -> float:
        """y data units per x data unit on screen (1 on equal axes)."""
        return (yr / self.height) / (xr / self.width)


def place(size: tuple[float, float], aspect: str, xr: float, yr: float, colorbar: bool,
          title: bool, caption: bool = False) -> Box:
    """Lay out one axes (and a colorbar to its right) on a figure of ``size`` inches,
    leaving a line below for a caption if asked; with equal aspect, shrink the axes to
    the data's shape and centre the group."""
    fw, fh = size
    top = TOP_TITLE if title else TOP
    bottom = BOTTOM + (CAPTION if caption else 0.0)
    extra = CBAR_PAD + CBAR_WIDTH + CBAR_LABELS if colorbar else 0.0
    w = max(fw - LEFT - RIGHT - extra, MIN_AXES)
    h = max(fh - bottom - top, MIN_AXES)
    left = LEFT
    if aspect == "equal" and xr > 0 and yr > 0:
        shape = yr / xr
        if h / w > shape:
            new_h = w * shape
            bottom += (h - new_h) / 2
            h = new_h
        else:
            new_w = h / shape
            left += (w - new_w) / 2
            w = new_w
    axes = (left / fw, bottom / fh, w / fw, h / fh)
    cbar = ((left + w + CBAR_PAD) / fw, bottom / fh, CBAR_WIDTH / fw, h / fh) \
        if colorbar else None
    return Box(axes, cbar, w, h)


def default_every(n: int, target: int) -> int:
    """Every how many grid points to draw an arrow so about ``target`` fit along n."""
    return max(1, round(n / target))


def lattice(n: int, every: int) -> np.ndarray:
    """Indices of the arrows along an axis of n points: one per block of ``every``
    points, at the block's centre, the blocks centred in the range (n // every arrows)."""
    m = n // every
    if m == 0:
        return np.array([n // 2])
    return (n - m * every) // 2 + every // 2 + every * np.arange(m)


#: the most arrows drawn along one axis: past this they overlap (and a 1000² grid at
#: every 1 wrote a 249 MB SVG)
MAX_ARROWS_PER_AXIS = 100


def clamp_every(every: int, counts: tuple[int, ...]) -> tuple[int, str | None]:
    """``every`` clamped so that at least two arrows fit along the shortest axis (one
    arrow a whole range long says nothing) and at most :data:`MAX_ARROWS_PER_AXIS` along
    the longest, with a note saying so."""
    most = max(1, min(counts) // 2)
    least = -(-max(counts) // MAX_ARROWS_PER_AXIS)
    if every < least:
        arrows = int(np.prod([-(-n // every) for n in counts]))
        chosen = min(least, most)
        return chosen, (f"{ref('every', text=str(every))} would draw {arrows:,} arrows: using "
                        f"{ref('every', text=str(chosen))} (at most {MAX_ARROWS_PER_AXIS} per "
                        "axis)")
    if every <= most:
        return every, None
    return most, (f"{ref('every', text=str(every))} is more than the grid allows "
                  f"({min(counts)} points along its shortest axis): using "
                  f"{ref('every', text=str(most))}")


def choose_aspect(names: tuple[str, ...], spans: tuple[float, float],
                  asked: str | None) -> tuple[str, str | None]:
    """Equal axes for a plane unless its two ranges (the grid's own, ``stop - start``, as
    the note quotes them) differ by more than ASPECT_LIMIT (equal axes would make it a
    sliver): then auto, with a note. ``asked`` wins."""
    if asked is not None:
        return asked, None
    xr, yr = spans
    if max(xr, yr) > ASPECT_LIMIT * min(xr, yr):
        return "auto", (f"{names[0]} spans {xr:.4g} and {names[1]} spans {yr:.4g}, more "
                        f"than {ASPECT_LIMIT:g}x apart: drawn with "
                        f"{ref('aspect', text='auto')} ({ref('aspect', text='equal')} forces "
                        "equal axes)")
    return "equal", None


@dataclass
class ArrowFit:
    """How the arrows are drawn: ``full`` is the length (as displayed, in x data units
    per unit of ``scale``) drawn at full length; longer arrows are ``clipped`` to it."""

    u: np.ndarray  # the drawn vectors (clipped ones shortened to full length)
    v: np.ndarray
    clipped: np.ndarray  # bool, one per arrow
    full: float  # the magnitude drawn at full length (the scale value)
    quiver_scale: float  # matplotlib quiver ``scale``: arrow units per x data unit
    by: str  # the scale parameter (``ref``), "longest" or "95th pct.": what set ``full``


def fit_arrows(u: np.ndarray, v: np.ndarray, spacing: float, ratio: float,
               scale: float | None = None, lengths: np.ndarray | None = None,
               percentile: float = ARROW_PERCENTILE) -> ArrowFit:
    """Scale arrows so that a vector of magnitude ``full`` is drawn ARROW_FILL of
    ``spacing`` long (x data units), and clip longer ones to that length.

    ``full`` is ``scale`` when given; else the 95th percentile of the displayed lengths,
    or the longest arrow when it is within 2x of that percentile (no outliers: nothing is
    clipped). One singular point then no longer shrinks every other arrow to a dot.
    ``lengths`` (the displayed lengths over all frames of an animation) fixes the scale
    across frames. ``ratio`` is
    Box.ratio: lengths are measured as displayed. A curve's score of tangent arrows passes
    a lower ``percentile``: among 20 arrows the 95th is the longest but one."""
    shown = np.hypot(u, v / ratio)
    pool = np.ravel(lengths) if lengths is not None else shown
    pool = pool[np.isfinite(pool)]
    if scale is not None:
        full, by = float(scale), ref("scale")
    elif pool.size == 0 or float(pool.max()) == 0.0:
        full, by = 1.0, "longest"
    else:
        longest = float(pool.max())
        high = float(np.percentile(pool, percentile))
        if high > 0 and longest > OUTLIER_RATIO * high:
            full, by = high, f"{percentile:g}th pct."
        else:
            full, by = longest, "longest"
    with quiet():
        clipped = np.isfinite(shown) & (shown > full * (1 + 1e-9))
        shrink = np.where(clipped, full / np.where(clipped, shown, 1.0), 1.0)
    return ArrowFit(u * shrink, v * shrink, clipped, full, full / (ARROW_FILL * spacing), by)


def y_range(arrays: list[np.ndarray], asked: tuple[float, float] | None = None,
            log: bool = False) -> tuple[tuple[float, float], str | None]:
    """The y-range of a curve: ``asked``, else the data's range with 8% padding; where
    |f| is huge next to most of the curve (its range is over 4x the 5th to 95th
    percentiles: poles), those percentiles widened by a quarter each side, so the poles
    do not flatten the rest. Returns it and, when it cut the data, a note saying so."""
    vals = np.concatenate([np.ravel(a)[np.isfinite(np.ravel(a))] for a in arrays])
    if asked is not None:
        return asked, None
    if vals.size == 0:
        return (-1.0, 1.0), None
    lo, hi = float(vals.min()), float(vals.max())
    if log and lo > 0:  # a log axis pads by factors
        return ((lo / 1.3, hi * 1.3) if hi > lo else (lo / 2, hi * 2)), None
    q_lo, q_hi = (float(q) for q in np.percentile(vals, [5, 95]))
    span = q_hi - q_lo
    if span > 0 and (hi - lo) > 4 * span and not log:
        cut = (max(lo, q_lo - span / 4), min(hi, q_hi + span / 4))
        big = float(np.abs(vals).max())
        return cut, (f"|f| reaches {big:.3g}: the y-range {cut[0]:.4g} to {cut[1]:.4g} "
                     f"comes from the 5th-95th percentiles; {ref('ylim', text='LOW:HIGH')} "
                     "sets it")
    if hi <= lo:
        return (lo - 1.0, hi + 1.0), None
    pad = 0.08 * (hi - lo)
    return (lo - pad, hi + pad), None


def normalized(u: np.ndarray, v: np.ndarray, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """Arrows of equal displayed length (unit length on equal axes); zeros stay zero."""
    n = np.hypot(u, v / ratio)
    safe = np.where(n > 0, n, 1.0)
    return u / safe, v / safe


def json_numbers(a: Any) -> list[Any]:
    """A nested list of floats with nan/inf as null (JSON has neither)."""
    arr = np.asarray(a, dtype=float)
    out = np.where(np.isfinite(arr), arr, 0.0).tolist()
    if not np.isfinite(arr).all():
        mask = (~np.isfinite(arr)).tolist()
        out = _nulls(out, mask)
    return out


def _nulls(values: Any, mask: Any) -> Any:
    if isinstance(values, list):
        return [_nulls(v, m) for v, m in zip(values, mask, strict=True)]
    return None if mask else values


def short(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[:limit - 1] + "…"
