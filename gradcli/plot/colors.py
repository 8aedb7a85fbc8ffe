"""The scalar under the arrows and how it maps to colours, with numpy only.

Every backend (matplotlib, the interactive page, the terminal preview) asks this module
which scalar to paint (``heat``), and with which limits and scale (``color_scale``), so
they all show the same numbers. A new heatmap (``color laplacian``, basins) is one more
entry in ``HEATS``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcli.engine.grad_mode import quiet
from gradcli.errors import EvaluationError
from gradcli.plot.data import Field
from gradcli.plot.layout import short

__all__ = ["Heat", "HEATS", "heat", "ColorScale", "color_scale", "ROUNDOFF", "short",
           "held_text"]

#: values within this fraction of the field's scale are round-off and painted as 0
ROUNDOFF = 1e-12
SEQUENTIAL, DIVERGING = "viridis", "RdBu_r"


@dataclass
class Heat:
    """A scalar to paint: grid shaped (x on axis 0), its colorbar label, whether it is
    signed (a diverging map centred at 0), and its key in HEATS."""

    values: np.ndarray
    label: str
    signed: bool
    name: str


def held_text(fl: Field) -> str:
    """`` (z = 0.5)`` for the variables held fixed, or nothing."""
    if not fl.held:
        return ""
    return " (" + ", ".join(f"{n} = {value_text(v)}" for n, v in fl.held.items()) + ")"


def value_text(value: Any) -> str:
    """A held value as text: ``0.5``, ``[1, 2]``, ``[[2, 1], [1, 3]]`` (4 digits each)."""
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        return f"{float(a):g}"
    return "[" + ", ".join(value_text(row) for row in a) + "]"




def _finite_max(*arrays: np.ndarray) -> float:
    best = 0.0
    for a in arrays:
        a = np.abs(np.asarray(a))
        a = a[np.isfinite(a)]
        if a.size:
            best = max(best, float(a.max()))
    return best


def zero_roundoff(values: np.ndarray, *terms: np.ndarray) -> np.ndarray:
    """``values`` with entries within ROUNDOFF of the scale of ``terms`` (the quantities it
    was computed from, e.g. the Jacobian entries a curl subtracts) set to exactly 0: the
    curl of an irrotational field is round-off, and must not be painted as colour."""
    scale = _finite_max(*terms) if terms else _finite_max(values)
    tiny = ROUNDOFF * scale
    return np.where(np.abs(values) <= tiny, 0.0, values)


def _divergence(fl: Field) -> np.ndarray:
    """div F, round-off against the Jacobian's entries painted as 0."""
    return zero_roundoff(fl.divergence(), *fl.jacobian())


def _curl(fl: Field) -> np.ndarray:
    """The curl across the plane, round-off against the Jacobian's entries painted as 0
    (an irrotational field is white)."""
    return zero_roundoff(fl.curl(), *fl.jacobian())


def _laplacian(fl: Field) -> np.ndarray:
    """∇²f over the drawn axes, round-off against its pure second partials painted as 0
    (a harmonic function is white)."""
    return zero_roundoff(fl.laplacian(), *(fl.columns[f"d2f/d{n}2"] for n in fl.names[:2]))


def _normal(fl: Field) -> np.ndarray:
    assert fl.normal is not None
    return zero_roundoff(fl.normal, *fl.arrows(), fl.normal)


def _normal_label(fl: Field) -> str:
    z = fl.slice_name
    what = f"∂f/∂{z}" if fl.kind == "scalar" else "w"
    return f"{what} (across the slice {z} = {fl.held[z]:g})"


# name -> (the scalar, colorbar label, signed); the label gets the formula appended
HEATS: dict[str, tuple[Callable[[Field], np.ndarray], Callable[[Field], str], bool]] = {
    "f": (lambda fl: fl.values[0], lambda fl: f"f({', '.join(fl.names)})", False),
    "magnitude": (Field.magnitude, lambda fl: "|∇f|" if fl.kind == "scalar" else "|F|", False),
    "laplacian": (_laplacian, lambda fl: "∇²f = ∂²f/∂{}² + ∂²f/∂{}²".format(*fl.names[:2]),
                  True),
    "divergence": (_divergence, lambda fl: "div F = " + " + ".join(
        f"∂{c}/∂{n}" for c, n in zip("uvw", fl.pairs or fl.names[:2], strict=False)), True),
    "curl": (_curl, lambda fl: "curl F = ∂v/∂{} − ∂u/∂{}".format(*fl.names[:2]), True),
    "normal": (_normal, _normal_label, True),
    # basins: the index of the point each grid point's descent reaches (marks.py)
    "basins": (lambda fl: fl.marks.basins.labels, lambda fl: "basin", False),
}


def heat_name(fl: Field, color: str | None) -> str | None:
    """Which entry of HEATS a 2-D field paints: its basins when drawn, the color asked
    for, else a slice's normal component, a scalar's f, or none for a bare vector field
    (its arrows are coloured instead)."""
    if getattr(fl.marks, "basins", None) is not None:
        return "basins"
    if color is not None:
        return color
    if fl.normal is not None:
        return "normal"
    return "f" if fl.kind == "scalar" else None


def heat(fl: Field, name: str | None, full: bool = False) -> Heat | None:
    """The scalar ``name`` (a key of HEATS) of a 2-D field, labelled with the formula (cut
    to 60 characters unless ``full``)."""
    if name is None:
        return None
    compute, label, signed = HEATS[name]
    form = "" if name == "f" else ", F = " if fl.kind == "vector" else ", f = "
    formula = fl.expression if full else short(fl.expression)
    text = f"{label(fl)}{' = ' if name == 'f' else form}{formula}{held_text(fl)}"
    unit = _heat_unit(fl, name)
    return Heat(np.asarray(compute(fl), dtype=float), text + (f" [{unit}]" if unit else ""),
                signed, name)


def _heat_unit(fl: Field, name: str) -> str:
    """The physical unit of a heatmap's quantity when one unit says it: f's own; |∇f| or
    |F| in its components' unit, the first one's when they are compatible but differ
    (``Field.magnitude_unit``; none when their dimensions differ)."""
    units = getattr(fl, "units", {})
    if not units:
        return ""
    if name == "f":
        return units.get("f", "")
    if name == "magnitude":
        return fl.magnitude_unit()
    return ""


@dataclass
class ColorScale:
    """Colour limits and mapping: linear, log (positive data) or symlog (data that is not
    all positive: linear within ``linthresh`` of 0, logarithmic beyond)."""

    kind: str
    vmin: float
    vmax: float
    linthresh: float = 1.0
    cmap: str = SEQUENTIAL

    def transform(self, a: np.ndarray) -> np.ndarray:
        """Values mapped so that equal steps are equal colour steps (log10 or symlog)."""
        a = np.asarray(a, dtype=float)
        with quiet():
            if self.kind == "log":
                return np.log10(np.where(a > 0, a, np.nan))
            if self.kind == "symlog":
                t = self.linthresh
                return np.sign(a) * np.where(np.abs(a) <= t, np.abs(a) / t,
                                             1 + np.log10(np.abs(a) / t))
        return a

    def fraction(self, a: np.ndarray) -> np.ndarray:
        """Position of each value along the colour map, 0 to 1 (clipped; nan stays)."""
        lo, hi = self.transform(np.array([self.vmin, self.vmax]))
        with quiet():
            return np.clip((self.transform(a) - lo) / (hi - lo), 0.0, 1.0)


def finite_values(arrays: Sequence[np.ndarray]) -> np.ndarray:
    """Every finite value of ``arrays``, flattened; an error if there are none."""
    vals = np.concatenate([np.ravel(a)[np.isfinite(np.ravel(a))] for a in arrays])
    if vals.size == 0:
        raise EvaluationError("nothing to draw: f is nan or inf at every grid point")
    return vals


def color_scale(arrays: Sequence[np.ndarray], signed: bool, *, log: bool = False,
                vmin: float | None = None, vmax: float | None = None,
                cmap: str | None = None) -> ColorScale:
    """Limits for ``arrays`` (all frames of an animation at once, so the scale is fixed):
    the data's range, symmetric about 0 for a signed field so 0 sits at the diverging
    map's white middle; ``vmin``/``vmax`` override; ``log`` picks log or symlog."""
    vals = finite_values(arrays)
    lo, hi = float(vals.min()), float(vals.max())
    if signed:
        m = max(abs(lo), abs(hi))
        lo, hi = -m, m
    lo = vmin if vmin is not None else lo
    hi = vmax if vmax is not None else hi
    if hi <= lo:  # a constant field (or limits on one side of it): widen around it
        if vmin is not None and vmax is None:
            hi = lo + max(abs(lo), 1.0)
        elif vmax is not None and vmin is None:
            lo = hi - max(abs(hi), 1.0)
        else:
            pad = max(abs(lo) * 0.5, 1.0) if lo == hi else 0.0
            lo, hi = lo - pad, hi + pad
    name = cmap or (DIVERGING if signed else SEQUENTIAL)
    if not log:
        return ColorScale("linear", lo, hi, cmap=name)
    if lo > 0:
        return ColorScale("log", lo, hi, cmap=name)
    nonzero = np.abs(vals[vals != 0])
    big = max(abs(lo), abs(hi))
    # linear within the smallest tenth of the magnitudes: a few decades stay visible
    t = float(np.percentile(nonzero, 10)) if nonzero.size else big
    t = min(max(t, big * 1e-12), big) if big > 0 else 1.0
    return ColorScale("symlog", lo, hi, linthresh=t, cmap=name)


#: symlog's linscale (decades of display per linear region side) that makes the axis
#: smooth: the linear part's slope equals the logarithmic part's at the threshold
#: (matplotlib's symlog maps |a| <= t to a * linscale / (1 - 1/10) / t, beyond to
#: 1 + ... + log10(|a|/t) decades; the slopes match when linscale = (1 - 1/10) / ln 10),
#: so a smooth curve gets no kink where it enters the linear region
SMOOTH_LINSCALE = (1 - 1 / 10) / math.log(10)


def curve_linthresh(arrays: Sequence[np.ndarray]) -> float:
    """The linear threshold of a curve's symlog axis, from the data: below the smallest
    |f| of every curve that keeps one sign (exp(x) is logarithmic all the way, so its
    decades stay straight lines), and at most the smallest tenth of all magnitudes (a
    curve through 0 still shows its decades); a half-decade margin under that |f|."""
    scale = color_scale(arrays, False, log=True)
    t = scale.linthresh
    for a in arrays:
        vals = np.ravel(a)[np.isfinite(np.ravel(a))]
        if vals.size and ((vals > 0).all() or (vals < 0).all()):
            t = min(t, float(np.abs(vals).min()) / 10 ** 0.5)
    return t
