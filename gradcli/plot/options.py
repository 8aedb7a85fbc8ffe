"""What the picture should look like, checked before any number is computed.

Everything a user can get wrong (a size like ``7by5``, a dpi of 0, an unknown colormap,
an unknown file extension) is rejected here with one clear EvaluationError, so a bad
command fails fast and leaves no file behind.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..evaluation import EvaluationError

__all__ = ["PlotOptions", "image_format", "parse_size", "FORMATS"]

FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}
MAX_PIXELS_PER_SIDE = 16_000  # Agg refuses 2**16; far below that a picture is a mistake


@dataclass
class PlotOptions:
    """Drawing choices; ``None`` means "pick a sensible default for this kind of plot"."""

    every: int | None = None
    derivative: bool = False
    normalize: bool = False
    stream: bool = False
    contour: int = 0
    arrows: bool = True
    color: str | None = None
    cmap: str | None = None
    title: str | None = None
    dpi: float = 100.0
    size: tuple[float, float] | None = None
    aspect: str | None = None

    def check(self, n_vars: int | None = None) -> None:
        """Reject contradictory or out-of-range choices (EvaluationError, exit 2)."""
        if self.every is not None and self.every < 1:
            raise EvaluationError(f"--every must be a whole number >= 1, got {self.every}")
        if self.contour < 0:
            raise EvaluationError(f"--contour must be >= 0, got {self.contour}")
        if not (1 <= self.dpi <= 2400):
            raise EvaluationError(f"--dpi must be between 1 and 2400, got {self.dpi:g}")
        if self.aspect not in (None, "equal", "auto"):
            raise EvaluationError(f"--aspect must be equal or auto, got '{self.aspect}'")
        if self.stream and not self.arrows:
            raise EvaluationError("--stream draws streamlines instead of arrows; "
                                  "--arrows none draws neither: give one of them")
        if self.size is not None:
            w, h = self.size
            if max(w, h) * self.dpi > MAX_PIXELS_PER_SIDE:
                raise EvaluationError(
                    f"--size {w:g}x{h:g} at --dpi {self.dpi:g} is "
                    f"{w * self.dpi:.0f}x{h * self.dpi:.0f} pixels, over "
                    f"{MAX_PIXELS_PER_SIDE} per side: lower --size or --dpi")
        if n_vars == 1:
            for flag, used in (("--stream", self.stream), ("--contour", self.contour > 0),
                               ("--color", self.color is not None)):
                if used:
                    raise EvaluationError(f"{flag} needs two grid variables "
                                          "(a heatmap); this plot has one")
        if n_vars == 2 and self.derivative:
            raise EvaluationError("--derivative draws f' next to f for one grid variable; "
                                  "with two, the arrows are the gradient")


def parse_size(text: str) -> tuple[float, float]:
    """``"7x5"`` (inches) -> ``(7.0, 5.0)``."""
    parts = text.lower().replace("×", "x").split("x")
    try:
        if len(parts) != 2:
            raise ValueError
        w, h = float(parts[0]), float(parts[1])
    except ValueError:
        raise EvaluationError(f"--size '{text}': expected WIDTHxHEIGHT in inches, "
                              "e.g. 7x6") from None
    if not (0 < w <= 200 and 0 < h <= 200):
        raise EvaluationError(f"--size '{text}': width and height must be between 0 "
                              "and 200 inches")
    return w, h


def image_format(path: str) -> str:
    """The image format named by ``path``'s extension: png, svg or pdf."""
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        if not ext:
            raise EvaluationError(f"'{path}' has no image extension: use .png, .svg or .pdf")
        raise EvaluationError(f"unknown image extension '{ext}': use .png, .svg or .pdf")
    return FORMATS[ext]
