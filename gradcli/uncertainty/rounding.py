"""Rounding a propagate result for a report, as GUM 7.2.6 recommends: the uncertainties
to two significant digits, the estimate (and the interval ends) to the decimal place of
the expanded uncertainty U's last digit. Half-way cases round away from zero, on the
decimal value as printed (``repr``), not on its binary neighbour.

Only for showing: the command line rounds its table and CSV by the ``round`` parameter; files for
machines (JSON, NetCDF, Zarr, Parquet, NPZ) keep the exact numbers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import numpy as np

__all__ = ["to_place", "significant", "gum_rounded", "UNCERTAINTIES", "AT_U_PLACE"]

#: the columns rounded to two significant digits
UNCERTAINTIES = ("u(f)", "u2(f)", "U(f)", "sd", "u(x)", "u_i(f)")
#: the columns rounded to U(f)'s last digit's decimal place, row by row
AT_U_PLACE = ("f", "E2(f)", "mean", "low", "high", "low_shortest", "high_shortest")


def _decimal(x: float, place: int) -> Decimal:
    return Decimal(repr(x)).quantize(Decimal(1).scaleb(place), rounding=ROUND_HALF_UP)


def to_place(x: float, place: int) -> float:
    """``x`` rounded to a multiple of 10**place (half away from zero)."""
    if not math.isfinite(x):
        return x
    return float(_decimal(x, place))


def _text(x: float, place: int | None, digits: int = 17) -> str:
    """``x`` rounded to ``place`` as positional decimal text that keeps its trailing
    zeros (0.30, 1500); when not rounded, to ``digits`` significant digits."""
    if place is None or not math.isfinite(x):
        return f"{float(x):.{digits}g}"
    return format(_decimal(x, place), "f")


def _place(u: float, digits: int = 2) -> int | None:
    """The decimal place of ``u``'s last of ``digits`` significant digits (None for 0 or
    not finite); rounding may carry into a new digit (0.0996 -> 0.10), which keeps it."""
    if not (math.isfinite(u) and u != 0.0):
        return None
    place = math.floor(math.log10(abs(u))) - (digits - 1)
    if abs(to_place(u, place)) >= 10.0 ** (place + digits):  # 99.6 -> 100: one digit up
        place += 1
    return place


def significant(x: float, digits: int = 2) -> float:
    """``x`` to ``digits`` significant digits."""
    place = _place(x, digits)
    return x if place is None else to_place(x, place)


def gum_rounded(columns: Mapping[str, Any], text: bool = False,
                digits: int = 17) -> dict[str, Any]:
    """The columns of a propagate result (or budget) rounded as GUM 7.2.6 says; other
    columns as they are. ``text``: the rounded columns as decimal text, which keeps the
    trailing zeros a report shows (0.30), instead of numbers; the values of such a column
    that are not rounded (a budget's inputs' estimates) get ``digits`` significant
    digits."""
    out = dict(columns)
    big_u = np.asarray(columns.get("U(f)", []), dtype=np.float64)
    places = [_place(float(v)) for v in big_u]
    for name in UNCERTAINTIES:
        if name in out:
            values = np.asarray(out[name], dtype=np.float64)
            own = [_place(float(v)) for v in values]
            out[name] = np.array([_text(float(v), q, digits) for v, q in zip(values, own,
                                                                              strict=True)],
                                 dtype=object) if text else \
                np.array([significant(float(v)) for v in values])
    total = None
    if "input" in out:  # a budget: the estimate is the total row's value
        total = np.asarray(out["input"]) == "total"
    for name in AT_U_PLACE + (("value",) if total is not None else ()):
        if name not in out or not places:
            continue
        values = np.array(out[name], dtype=np.float64)
        shown: list[Any] = []
        for i, place in enumerate(places):
            use = place if name != "value" or (total is not None and total[i]) else None
            shown.append(_text(float(values[i]), use, digits) if text else
                         values[i] if use is None else to_place(float(values[i]), use))
        out[name] = np.array(shown, dtype=object if text else np.float64)
    return out
