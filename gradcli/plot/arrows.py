"""Which arrows a plane shows and how long: the lattice, clamping and robust scaling that
every backend (picture, animation, page, terminal) shares. numpy only."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradcli.errors import Namer, ref, render_references
from gradcli.plot.data import Field
from gradcli.plot.layout import (
    ArrowFit,
    clamp_every,
    default_every,
    fit_arrows,
    lattice,
    normalized,
)
from gradcli.plot.options import PlotOptions

__all__ = ["PLANE_ARROWS", "CURVE_ARROWS", "Lattice", "plane_lattice", "fit_plane",
           "clip_note", "PlaneArrows"]

CURVE_ARROWS, PLANE_ARROWS = 20, 25  # default arrows along the curve / per axis


@dataclass
class Lattice:
    """The arrow positions of a plane and the vectors there (frames kept on a last axis)."""

    ix: np.ndarray
    iy: np.ndarray
    every: int
    note: str | None

    def take(self, a: np.ndarray) -> np.ndarray:
        """``a`` at the lattice points, shape (len(ix), len(iy), ...)."""
        return a[np.ix_(self.ix, self.iy)] if a.ndim == 2 else a[self.ix][:, self.iy]


def plane_lattice(fl: Field, opts: PlotOptions) -> Lattice:
    """Every ``every``-th grid point (about 25 per axis by default), clamped to the grid."""
    counts = tuple(len(c) for c in fl.coords[:2])
    every, note = clamp_every(opts.every or default_every(max(counts), PLANE_ARROWS), counts)
    return Lattice(lattice(counts[0], every), lattice(counts[1], every), every, note)


def spacing(fl: Field, every: int, ratio: float) -> float:
    """Distance between neighbouring arrows, in x data units as displayed."""
    (x, y) = fl.coords[:2]
    return min((x[1] - x[0]) * every, (y[1] - y[0]) * every / ratio)


def shown_lengths(fl: Field, lat: Lattice, ratio: float) -> np.ndarray:
    """Displayed arrow lengths at the lattice (every frame, for a fixed animation scale)."""
    u, v = (lat.take(a) for a in fl.arrows()[:2])
    return np.hypot(u, v / ratio)


@dataclass
class PlaneArrows:
    """The finite arrows of a plane, flattened in C order of the lattice: positions, the
    fit (drawn vectors, clipped ones), and which lattice points they are (``ok``)."""

    x: np.ndarray
    y: np.ndarray
    fit: ArrowFit
    ok: np.ndarray


def fit_plane(fl: Field, opts: PlotOptions, lat: Lattice, ratio: float,
              lengths: np.ndarray | None = None) -> PlaneArrows:
    """Arrows at the lattice, scaled and clipped (``fit_arrows``); non-finite vectors get
    no arrow."""
    x, y = fl.coords[:2]
    px, py = np.meshgrid(x[lat.ix], y[lat.iy], indexing="ij")
    su, sv = (lat.take(a) for a in fl.arrows()[:2])
    ok = (np.isfinite(su) & np.isfinite(sv)).ravel()
    su, sv = su.ravel()[ok], sv.ravel()[ok]
    if opts.normalize:
        su, sv = normalized(su, sv, ratio)
    fit = fit_arrows(su, sv, spacing(fl, lat.every, ratio), ratio,
                     None if opts.normalize else opts.scale,
                     None if opts.normalize else lengths)
    return PlaneArrows(px.ravel()[ok], py.ravel()[ok], fit, ok)


def clip_note(fit: ArrowFit, what: str, words: Namer | None = None) -> str | None:
    """The caption for clipped arrows: how many, from what length, and how to change it
    (the ``scale`` parameter, named in the front end's ``words``: PlotOptions.words)."""
    n = int(np.count_nonzero(fit.clipped))
    if n == 0:
        return None
    return render_references(f"{n}/{fit.clipped.size} arrows over {what} = {fit.full:.3g} "
                             f"({fit.by}) clipped to full length (magenta); {ref('scale')} "
                             "sets it", words)
