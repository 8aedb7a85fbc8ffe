"""Mixed partial derivatives from Taylor series along several directions.

A jet along the direction s (a vector of whole numbers) gives, at order p, the homogeneous
polynomial y_p(s) = Σ_{|α|=p} D_α·s^α, whose coefficients D_α = ∂^α f / α! are the
multivariate Taylor coefficients. Evaluated at enough directions, the polynomial is
determined and each D_α is a fixed linear combination of the y_p(s): Griewank, Utke and
Walther, "Evaluating higher derivative tensors by forward propagation of univariate Taylor
series" (Math. Comp. 69, 2000). Jets of order K along the directions |s| = K (the lattice
S_K, C(n+K-1, K) of them) give every coefficient of every order p ≤ K: the directions
s ∈ S_K with s_n ≥ K - p restricted to the plane |s| = K are a principal lattice of order p,
on which interpolation is unique, with the Lagrange basis in closed form

    H_s(t) = Π_{m<n} Π_{r<s_m} (t_m - r|t|/K)/(s_m - r)
             · Π_{r<s_n-(K-p)} (t_n - (K-p+r)|t|/K)/(s_n - (K-p) - r),

homogeneous of degree p with H_s(s') = δ_{ss'} on that lattice. D_α is then Σ_s [t^α]H_s·
y_p(s). The coefficients [t^α]H_s are computed exactly in integers (every factor times K)
and rounded once, so the only rounding is that of the jets themselves.

The commands no longer combine directions: the weights cancel at high order (1.7e-9 of
the largest coefficient at order 20 in two variables), and one multivariate jet
(``homogeneous.py``) gives every coefficient with the rounding of the recurrences only.
``simplex`` and ``graded`` are the order of the coefficients everywhere; the directions
and weights stay as an independent cross-check (the tests).
"""

from __future__ import annotations

from functools import lru_cache

__all__ = ["simplex", "graded", "directions", "weights"]

Index = tuple[int, ...]


def simplex(n: int, degree: int) -> list[Index]:
    """Every multi-index of n whole numbers summing to ``degree``, in lexicographic order
    from the first variable's highest power down (x², xy, y² for n = 2, degree 2)."""
    if n <= 1:
        return [(degree,)] if n else ([()] if degree == 0 else [])
    return [(a, *rest) for a in range(degree, -1, -1) for rest in simplex(n - 1, degree - a)]


def graded(n: int, order: int) -> list[Index]:
    """Every multi-index with |α| ≤ order in graded lexicographic order: by total degree,
    then lexicographically (1, x, y, x², xy, y², ...)."""
    return [a for p in range(order + 1) for a in simplex(n, p)]


def directions(n: int, order: int) -> list[Index]:
    """The directions whose jets of ``order`` give every coefficient of every order up to
    it: the lattice S_K, or for one variable the unit direction (nothing to separate)."""
    return [(1,)] if n == 1 else simplex(n, order)


def _times_linear(poly: dict[Index, int], m: int, c: int, big: int) -> dict[Index, int]:
    """``poly`` times (big·t_m - c·Σ t_q)."""
    n = len(next(iter(poly)))
    out: dict[Index, int] = {}
    for exps, coef in poly.items():
        for q in range(n):
            factor = (big if q == m else 0) - c
            if factor == 0:
                continue
            key = exps[:q] + (exps[q] + 1,) + exps[q + 1:]
            out[key] = out.get(key, 0) + coef * factor
    return out


@lru_cache(maxsize=64)
def weights(n: int, order: int, p: int) -> tuple[tuple[tuple[int, float], ...], ...]:
    """For each α with |α| = p (in ``simplex(n, p)`` order), the pairs (index into
    ``directions(n, order)``, weight) with D_α = Σ weight·y_p(direction); zero weights are
    left out."""
    if n == 1:
        return (((0, 1.0),),)
    lattice = directions(n, order)
    where = {s: i for i, s in enumerate(lattice)}
    shift = order - p
    alphas = simplex(n, p)
    rows: list[list[tuple[int, float]]] = [[] for _ in alphas]
    for base in simplex(n, p):
        s = base[:-1] + (base[-1] + shift,)
        poly: dict[Index, int] = {(0,) * n: 1}
        denominator = 1
        for m in range(n):
            offset = shift if m == n - 1 else 0
            for r in range(base[m]):
                poly = _times_linear(poly, m, offset + r, order)
                denominator *= order * (base[m] - r)
        for row, alpha in zip(rows, alphas, strict=True):
            coef = poly.get(alpha, 0)
            if coef:
                row.append((where[s], coef / denominator))
    return tuple(tuple(r) for r in rows)
