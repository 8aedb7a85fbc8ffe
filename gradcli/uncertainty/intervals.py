"""Coverage intervals of a Monte Carlo run from order statistics (JCGM 101:2008 7.7), in
bounded memory.

The probabilistically symmetric interval (7.7.2 note 1: ranks r and r + q, q = ⌊pM + ½⌋,
r = ⌊(M − q + 1)/2⌋ at least 1) needs two order statistics; the shortest (7.7.2:
the r* of the smallest y₍ᵣ₊q₎ − y₍ᵣ₎ over r = 1..M − q) needs the values of ranks 1..M − q
and q + 1..M, the two tails, (1 − p)·M values each, never all M. A run keeps, per *end*,
the values in a bracket around the ranks it needs (``propagate``'s pilot sets them) and
counts those below it; :class:`End` says which ranks an end needs and whether its bracket
is open below (the shortest interval's lower tail) or above (its upper tail).

An order statistic's standard error is estimated without a model, from the spacing of the
order statistics one binomial standard deviation k = √(Mp(1 − p)) of rank either side:
SE(y₍ᵣ₎) ≈ (y₍ᵣ₊ₖ₎ − y₍ᵣ₋ₖ₎)/2 (the distribution-free ≈68 % confidence interval of a
quantile, e.g. Hahn & Meeker, *Statistical Intervals*, 5.2). ``propagate`` withholds the
comparison with the law of propagation when twice it exceeds the numerical tolerance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["KINDS", "End", "ends_for", "symmetric_ranks", "shortest_q", "shortest",
           "order_se"]

#: the interval kinds ``interval=`` takes (``both``: the symmetric and the shortest)
KINDS = ("symmetric", "shortest", "both")


@dataclass(frozen=True)
class End:
    """An end a run keeps values for: ``rank`` (1-based) the order statistic its bracket
    is centred on; ``open`` "" (bracketed both sides), "below" (keep everything up to
    the bracket's top) or "above" (everything from its bottom)."""

    rank: int
    open: str = ""


def symmetric_ranks(count: int, coverage: float) -> tuple[int, int]:
    """JCGM 101 7.7.2: the 1-based ranks of the probabilistically symmetric interval."""
    q = shortest_q(count, coverage)
    r = max(1, (count - q + 1) // 2)
    return r, min(count, r + q)


def shortest_q(count: int, coverage: float) -> int:
    """q = pM rounded (JCGM 101 7.7.1): the interval's number of values."""
    return int(math.floor(coverage * count + 0.5))


def ends_for(kind: str, count: int, coverage: float) -> list[End]:
    """The ends a run keeps: the symmetric interval's two, the shortest's two tails, or
    all four (``both``: symmetric first)."""
    out: list[End] = []
    if kind in ("symmetric", "both"):
        out += [End(r) for r in symmetric_ranks(count, coverage)]
    if kind in ("shortest", "both"):
        q = shortest_q(count, coverage)
        out += [End(max(1, count - q), "below"), End(min(count, q + 1), "above")]
    return out


def shortest(lower: np.ndarray, upper: np.ndarray, below_upper: int, count: int,
             coverage: float) -> tuple[float, float, int] | None:
    """(low, high, r*) of the shortest interval from the sorted lower tail (ranks 1...)
    and the sorted upper tail (its first value of rank ``below_upper`` + 1); None when
    the tails kept do not reach the ranks needed."""
    q = shortest_q(count, coverage)
    n = count - q  # r = 1..M - q
    if n < 1:
        return float(lower[0]), float(upper[-1]), 1
    start = q - below_upper  # index of rank q + 1 in upper
    if lower.size < n or start < 0 or upper.size < start + n:
        return None
    widths = upper[start:start + n] - lower[:n]
    r = int(np.argmin(widths))  # the first of equally short ones
    return float(lower[r]), float(upper[start + r]), r + 1


def order_se(kept: np.ndarray, below: int, rank: int, count: int) -> float:
    """The standard error of the order statistic of ``rank`` (see the module's
    docstring) from the sorted values ``kept`` (the first of rank ``below`` + 1); inf
    when the values a binomial standard deviation either side are not kept."""
    p = min(max(rank / count, 1.0 / count), 1.0 - 1.0 / count) if count > 1 else 0.5
    k = max(1, math.ceil(math.sqrt(count * p * (1 - p))))
    lo, hi = rank - k - below - 1, rank + k - below - 1  # indexes in kept
    if lo < 0 or hi >= kept.size:
        return math.inf
    return 0.5 * float(kept[hi] - kept[lo])
