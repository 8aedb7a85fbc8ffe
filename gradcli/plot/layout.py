"""Geometry without drawing: where arrows go, how long they are, where the axes sit.

The axes are placed by hand in inches rather than by a layout engine: a constrained or
tight layout costs a whole extra draw per save, and knowing the axes size up front lets
the arrows be scaled exactly (the longest one fills ARROW_FILL of the arrow spacing, as
seen on screen, whatever the aspect).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ARROW_FILL", "Box", "arrow_scale", "default_every", "lattice", "normalized",
           "place"]

ARROW_FILL = 0.9
LEFT, BOTTOM, TOP, TOP_TITLE, RIGHT = 0.8, 0.55, 0.2, 0.45, 0.3  # margins, inches
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
          title: bool) -> Box:
    """Lay out one axes (and a colorbar to its right) on a figure of ``size`` inches;
    with equal aspect, shrink the axes to the data's shape and centre the group."""
    fw, fh = size
    top = TOP_TITLE if title else TOP
    extra = CBAR_PAD + CBAR_WIDTH + CBAR_LABELS if colorbar else 0.0
    w = max(fw - LEFT - RIGHT - extra, MIN_AXES)
    h = max(fh - BOTTOM - top, MIN_AXES)
    left, bottom = LEFT, BOTTOM
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


def arrow_scale(u: np.ndarray, v: np.ndarray, spacing: float, ratio: float) -> float:
    """quiver ``scale`` (arrow units per data unit) that makes the longest arrow, as
    displayed, ARROW_FILL of ``spacing`` (x data units); ``ratio`` from Box.ratio."""
    lengths = np.hypot(u, v / ratio)
    lengths = lengths[np.isfinite(lengths)]
    longest = float(lengths.max()) if lengths.size else 0.0
    return longest / (ARROW_FILL * spacing) if longest > 0 else 1.0


def normalized(u: np.ndarray, v: np.ndarray, ratio: float) -> tuple[np.ndarray, np.ndarray]:
    """Arrows of equal displayed length (unit length on equal axes); zeros stay zero."""
    n = np.hypot(u, v / ratio)
    safe = np.where(n > 0, n, 1.0)
    return u / safe, v / safe
