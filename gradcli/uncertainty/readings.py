"""Type A evaluation from repeated readings (GUM 4.2 and 5.2.3), for ``propagate``.

Each variable's readings q₁..qₙ give its estimate, the mean q̄ (GUM eq. 3), its standard
uncertainty s(q̄) = s(q)/√n (eqs. 4, 5) and ν = n − 1 degrees of freedom (G.3.3). Two
variables observed together (a value on the same rows: simultaneous observations) give
the covariance of their means s(q̄, r̄) = Σ(qₖ − q̄)(rₖ − r̄)/(n(n − 1)) (eq. 17) and the
correlation coefficient r = s(q̄, r̄)/(s(q̄)s(r̄)) (eq. 14); variables observed on other
rows are independent. A missing reading is nan (an empty CSV cell).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["TypeA", "type_a", "MAX_READINGS"]

#: the most readings (rows) of one variable
MAX_READINGS = 10**7
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass
class TypeA:
    """Per variable (in the readings' order) the mean, s(q̄), ν = n − 1 and n; per pair
    observed together their correlation coefficient; ``together`` the groups (of two or
    more) of variables observed on the same rows."""

    mean: dict[str, float]
    u: dict[str, float]
    nu: dict[str, float]
    count: dict[str, int]
    corr: dict[tuple[str, str], float]
    together: list[list[str]]


class ReadingsError(ValueError):
    """A bad set of readings: ``name`` the variable at fault (or None), ``detail`` what."""

    def __init__(self, name: str | None, detail: str) -> None:
        self.name, self.detail = name, detail
        super().__init__(detail)


def _columns(readings: Any) -> dict[str, np.ndarray]:
    """{name: float array} from a mapping of sequences or a pandas DataFrame."""
    if hasattr(readings, "columns") and hasattr(readings, "__getitem__") and \
            not isinstance(readings, Mapping):  # a DataFrame, read without importing pandas
        names = list(readings.columns)
        items = [(n, readings[n]) for n in names]
    elif isinstance(readings, Mapping):
        items = list(readings.items())
    else:
        raise ReadingsError(None, "give the readings as a mapping of names to sequences of "
                            "readings, or a pandas DataFrame (one column per variable)")
    out: dict[str, np.ndarray] = {}
    for name, column in items:
        name = str(name).strip()
        if not _NAME.match(name):
            raise ReadingsError(name, f"'{name}' is not a variable name")
        if name in out:
            raise ReadingsError(name, f"'{name}' is given twice")
        try:
            arr = np.asarray(column, dtype=np.float64)
        except (TypeError, ValueError):
            raise ReadingsError(name, "the readings must be numbers") from None
        if arr.ndim != 1:
            raise ReadingsError(name, f"the readings must be a sequence, not an array of "
                                f"shape {arr.shape}")
        if arr.size > MAX_READINGS:
            raise ReadingsError(name, f"{arr.size:,} readings, over the limit of "
                                f"{MAX_READINGS:,}")
        if np.isinf(arr).any():
            raise ReadingsError(name, "a reading is infinite")
        out[name] = arr
    return out


def type_a(readings: Any) -> TypeA:
    """The Type A evaluation of ``readings`` (see the module's docstring)."""
    cols = _columns(readings)
    result = TypeA({}, {}, {}, {}, {}, [])
    present: dict[str, np.ndarray] = {}
    for name, arr in cols.items():
        have = ~np.isnan(arr)
        q = arr[have]
        n = q.size
        if n < 2:
            raise ReadingsError(name, f"{n} reading{'s' if n != 1 else ''}: a Type A "
                                "evaluation needs at least 2")
        mean = float(q.mean())
        s2 = float(np.sum((q - mean) ** 2)) / (n - 1)
        result.mean[name], result.u[name] = mean, math.sqrt(s2 / n)
        result.nu[name], result.count[name] = float(n - 1), n
        present[name] = have
    names = list(cols)
    rows: dict[bytes, list[str]] = {}
    for name in names:
        rows.setdefault(present[name].tobytes() + bytes(str(present[name].size), "ascii"),
                        []).append(name)
    result.together = [g for g in rows.values() if len(g) > 1]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            pa, pb = present[a], present[b]
            if pa.shape != pb.shape or not np.array_equal(pa, pb):
                continue  # not observed together: independent
            if result.u[a] == 0.0 or result.u[b] == 0.0:
                continue  # a constant has no correlation
            qa, qb = cols[a][pa], cols[b][pb]
            n = qa.size
            s_ab = float(np.sum((qa - result.mean[a]) * (qb - result.mean[b]))) / (n * (n - 1))
            r = s_ab / (result.u[a] * result.u[b])
            result.corr[(a, b)] = max(-1.0, min(1.0, r))  # rounding may pass ±1 by an ulp
    return result
