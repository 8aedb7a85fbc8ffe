"""The rows ``critical``, ``descend`` and ``flow`` write, built once for every front end.

The command line writes these columns to its tables and files, and the library's
``gradcli.critical``/``descend``/``flow`` return them: one function per command, so the
columns (their names, order and dtypes) cannot drift apart between the two.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["critical_rows", "descend_rows", "flow_rows"]


def critical_rows(found: Any, n: int) -> dict[str, Any]:
    """One row per critical point (``CriticalPoints``, over ``n`` input columns): the
    point, then for a function f, |grad f| and the Hessian's eigenvalues; for a field,
    |F| and the Jacobian's eigenvalues' real and imaginary parts; each eigenvalue's unit
    eigenvector when there are some; the type."""
    columns: dict[str, Any] = {c: found.X[:, j] for j, c in enumerate(found.columns)}
    if found.kind == "scalar":
        columns["f"] = found.f
        columns["|grad f|"] = found.residual
        columns |= {f"eig[{i}]": found.eig[:, i] + 0.0 for i in range(n)}
    else:
        columns["|F|"] = found.residual
        for i in range(n):
            columns[f"re[{i}]"] = found.eig[:, i].real + 0.0
            columns[f"im[{i}]"] = found.eig[:, i].imag + 0.0
    if found.vec is not None:  # each eigenvalue's unit eigenvector, component by variable
        columns |= {f"vec[{i}][{k}]": found.vec[:, i, k] + 0.0 for i in range(n)
                    for k in range(n)}
    columns["type"] = np.asarray(found.types, dtype=object)
    return columns


def descend_rows(path: Any, many: bool) -> dict[str, Any]:
    """One row per recorded step of a descent (``Path``): ``run`` (with ``many`` starts),
    ``step``, the point, ``f`` and ``|grad f|``."""
    columns: dict[str, Any] = {"run": path.run} if many else {}
    columns["step"] = path.step
    columns |= {c: path.X[:, j] for j, c in enumerate(path.columns)}
    columns["f"], columns["|grad f|"] = path.f, path.gnorm
    return columns


def flow_rows(paths: Any, many: bool) -> dict[str, Any]:
    """One row per recorded time of a flow (``Trajectories``): ``run`` (with ``many``
    starts), ``t``, the point and ``|F|``."""
    columns: dict[str, Any] = {"run": paths.run} if many else {}
    columns["t"] = paths.t
    columns |= {c: paths.X[:, j] for j, c in enumerate(paths.columns)}
    columns["|F|"] = paths.speed
    return columns
