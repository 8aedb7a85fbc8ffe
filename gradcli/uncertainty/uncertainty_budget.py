"""The uncertainty budget of ``propagate``: per output component, one row per uncertain
input, with ``order=2`` one row per pair of inputs whose second-order terms are not zero,
and a total row.

First order (GUM eq. 13), an input's part of u(f)² is cᵢ(Σc)ᵢ (cᵢ²uᵢ² when independent):
the shares add up to 100 with correlations too. Second order (GUM eq. 14, independent
inputs) adds, in the coordinates zᵢ = (xᵢ − x̂ᵢ)/uᵢ, the terms
S[i, j] = ½(∂²f/∂zᵢ∂zⱼ)² + ∂f/∂zᵢ·∂³f/∂zᵢ∂zⱼ²: the input's row gets S[i, i], the pair's
row S[i, j] + S[j, i], and the shares are of u2(f)² (they add up to 100 again). A pair's
``c`` is ∂²f/∂xᵢ∂xⱼ and its ``u_i(f)`` the square root of its terms (nan when the
third-derivative part makes them negative). The total row carries f, u(f) (or u2(f)),
ν_eff, k and U(f); on the other rows those two columns are nan (not applicable).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["budget_columns", "TOTAL"]

#: the ``input`` of the total row
TOTAL = "total"


def budget_columns(outputs: list[str], f: np.ndarray, jac: np.ndarray, sigma_c: np.ndarray,
                   labels: list[str], estimates: np.ndarray, u: np.ndarray,
                   nu: np.ndarray | None, used: np.ndarray, nu_eff: np.ndarray,
                   k: np.ndarray, terms: dict[int, np.ndarray] | None) -> dict[str, Any]:
    """The budget's columns. ``jac`` (m, n) sensitivities, ``sigma_c`` (m, n) rows Σ·cᵀ,
    ``used`` u(f) or u2(f) per output, ``terms`` eq. 14's (S, Hessian in z) per
    output (order 2, None otherwise), ``nu`` the inputs' degrees of freedom (None: no
    ``nu`` column)."""
    m, n = jac.shape
    names = ("output", "input", "value", "u(x)", "nu", "c", "u_i(f)", "share", "k", "U(f)")
    parts: dict[str, list[Any]] = {name: [] for name in names}
    dofs = np.full(n, np.inf) if nu is None else nu
    first = jac * sigma_c  # cᵢ(Σc)ᵢ
    with np.errstate(divide="ignore", invalid="ignore"):
        for j in range(m):
            var = used[j] ** 2
            s, hess = terms[j] if terms is not None and j in terms else (None, None)
            part = first[j] + (np.diag(s) if s is not None else 0.0)
            pairs: list[tuple[int, int, float]] = []
            if s is not None:
                both = np.triu(s + s.T, 1)
                pairs = [(a, b, both[a, b]) for a, b in zip(*np.nonzero(both), strict=True)]
            count = n + len(pairs) + 1
            nan = np.full(len(pairs), np.nan)
            pair_part = np.array([p for _, _, p in pairs])
            columns = (
                [outputs[j]] * count,
                labels + [f"{labels[a]}*{labels[b]}" for a, b, _ in pairs] + [TOTAL],
                np.concatenate([estimates, nan, [f[j]]]),
                np.concatenate([u, nan, [np.nan]]),
                np.concatenate([dofs, nan, [nu_eff[j]]]),
                # a pair's c: ∂²f/∂xᵢ∂xⱼ from z's Hessian, ∂²g/∂zᵢ∂zⱼ = ∂²f/∂xᵢ∂xⱼ·uᵢuⱼ
                np.concatenate([jac[j], [hess[a, b] / (u[a] * u[b]) for a, b, _ in pairs],
                                [np.nan]]),
                np.concatenate([np.abs(jac[j] * u),
                                np.where(pair_part >= 0, np.sqrt(np.abs(pair_part)), np.nan),
                                [used[j]]]),
                np.concatenate([100.0 * part / var, 100.0 * pair_part / var,
                                [100.0 if var > 0 else np.nan]]),
                np.concatenate([np.full(count - 1, np.nan), [k[j]]]),
                np.concatenate([np.full(count - 1, np.nan), [k[j] * used[j]]]),
            )
            for name, column in zip(names, columns, strict=True):
                parts[name].append(column)
    rows = {name: [v for chunk in chunks for v in chunk] if name in ("output", "input")
            else np.concatenate(chunks) for name, chunks in parts.items()}
    cols: dict[str, Any] = {}
    if outputs != ["f"]:
        cols["output"] = np.array(rows["output"], dtype=object)
    cols["input"] = np.array(rows["input"], dtype=object)
    for name in names[2:]:
        if name != "nu" or nu is not None:
            cols[name] = rows[name]
    return cols
