"""Homogeneous polynomials as Taylor coefficients: multivariate Taylor mode.

A multivariate Taylor series of f at x₀ in n variables, f(x₀ + t) = Σ_k y_k(t), groups its
terms by total degree: y_k is a homogeneous polynomial of degree k in t = (t₁, ..., t_n).
The recurrences of univariate Taylor arithmetic (``taylor.py``: the Cauchy product, the
quotient, y' = w·u' through t·d/dt) hold verbatim for these y_k when products of
coefficients are products of polynomials, because the Euler operator Σ tᵢ∂ᵢ is a
derivation that multiplies a degree-k part by k, as t·d/dt does to t^k. So a coefficient
type that adds like an array and multiplies like a polynomial runs the table's ``jet=``
rules unchanged and gives every ∂^α f / α! exactly, with the rounding of the recurrences
only (no interpolation over directions, whose weights cancel at high order).

``Poly`` is that type: ``arr`` holds one array per monomial of degree ``deg`` (leading axis,
in ``monomials(cap, deg)`` order), each shaped as a univariate coefficient would be. A
monomial t^β is kept only if β ≤ ``cap`` in every variable: the product of two monomials
only raises exponents, so the coefficient of t^α needs no monomial beyond α (``diff``
keeps only those; ``taylor`` of order K keeps all, cap = (K, ..., K)). numpy
sees it through ``__array_ufunc__`` and ``__array_function__``: a product of two Polys
(``*``, ``matmul``) is the polynomial product; anything else a rule does to a coefficient
(a sum, a reshape, an index, a select, a solve with a fixed matrix) is linear in it and
applies monomial by monomial, as it applies coefficient by coefficient in one variable.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from gradcli.engine.interpolate import simplex

__all__ = ["Poly", "simplex", "monomials", "per_monomial", "variables", "BILINEAR"]

Index = tuple[int, ...]

#: the ufuncs that multiply two coefficients: polynomial products
BILINEAR = (np.multiply, np.matmul)


@lru_cache(maxsize=1024)
def monomials(cap: Index, degree: int) -> list[Index]:
    """The multi-indices β of ``degree`` with β ≤ ``cap``, in ``simplex`` order."""
    return [a for a in simplex(len(cap), degree)
            if all(p <= c for p, c in zip(a, cap, strict=True))]


@lru_cache(maxsize=1024)
def _where(cap: Index, degree: int) -> dict[Index, int]:
    return {a: i for i, a in enumerate(monomials(cap, degree))}


Map = tuple[Any, Any]


def _index(ix: list[int]) -> Any:
    """A list of indices as a slice when it is a run (a view, an in-place add without a
    gather), else as an index array."""
    if ix and ix == list(range(ix[0], ix[0] + len(ix))):
        return slice(ix[0], ix[0] + len(ix))
    return np.array(ix, dtype=np.intp)


@lru_cache(maxsize=4096)
def _product_map(cap: Index, i: int, j: int) -> tuple[Map | None, ...]:
    """For each monomial a of degree i: which monomials b of degree j have a + b within
    the cap (``src``, None for all) and where a + b goes among those of degree i + j
    (``dst``): distinct for fixed a, so ``out[dst] += A[a]·B[src]`` adds without
    collisions. None for an a that meets none."""
    target = _where(cap, i + j)
    maps: list[Map | None] = []
    bs = monomials(cap, j)
    for a in monomials(cap, i):
        pairs = [(k, target.get(tuple(p + q for p, q in zip(a, b, strict=True))))
                 for k, b in enumerate(bs)]
        kept = [(k, d) for k, d in pairs if d is not None]
        if not kept:
            maps.append(None)
            continue
        src = None if len(kept) == len(bs) else _index([k for k, _ in kept])
        maps.append((src, _index([d for _, d in kept])))
    return tuple(maps)


def _pad(arr: np.ndarray, ndim: int) -> np.ndarray:
    """``arr`` (monomials first) with unit axes after the monomial axis, so that each
    monomial's slice broadcasts against ``ndim``-axis arrays as the slice alone would."""
    extra = ndim - (arr.ndim - 1)
    return arr if extra <= 0 else arr.reshape(arr.shape[:1] + (1,) * extra + arr.shape[1:])


def _degree(polys: Sequence[Poly]) -> tuple[Index, int]:
    first = polys[0]
    for p in polys[1:]:
        if p.deg != first.deg or p.cap != first.cap:
            raise TypeError(f"homogeneous coefficients of degrees {first.deg} and {p.deg} "
                            "cannot be combined linearly")
    return first.cap, first.deg


def _substitute(args: Any, m: int) -> Any:
    """``args`` with every Poly (also inside one level of list or tuple) replaced by its
    slice m."""
    if isinstance(args, Poly):
        return args.arr[m]
    if isinstance(args, (list, tuple)):
        return type(args)(_substitute(a, m) for a in args)
    if isinstance(args, dict):
        return {k: _substitute(v, m) for k, v in args.items()}
    return args


def _polys_in(args: Any) -> list[Poly]:
    found: list[Poly] = []
    for a in args:
        if isinstance(a, Poly):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(b for b in a if isinstance(b, Poly))
    return found


def per_monomial(fn: Callable[..., Any], args: Sequence[Any],
                 kwargs: dict[str, Any] | None = None) -> Any:
    """``fn(*args, **kwargs)`` for a function linear in its Poly arguments: applied to each
    monomial's slice and stacked (a function without Poly arguments is just called)."""
    kwargs = kwargs or {}
    polys = _polys_in(list(args) + list(kwargs.values()))
    if not polys:
        return fn(*args, **kwargs)
    cap, deg = _degree(polys)
    parts = [fn(*_substitute(args, m), **_substitute(kwargs, m))
             for m in range(len(polys[0].arr))]
    first = parts[0]
    if isinstance(first, (list, tuple)) and first and isinstance(first[0], np.ndarray):
        return type(first)(Poly(np.stack([p[i] for p in parts]), deg, cap)
                           for i in range(len(first)))
    if isinstance(first, (np.ndarray, np.generic)) and not isinstance(first, np.dtype):
        return Poly(np.stack(parts), deg, cap)
    if all(p == first for p in parts[1:]):  # a property of the slices (a shape, a dtype)
        return first
    raise TypeError(f"{getattr(fn, '__name__', fn)} is not linear in a Taylor coefficient")


def _product(ufunc: np.ufunc, a: Poly, b: Poly) -> Poly:
    """The polynomial product of two homogeneous coefficients, each pair of slices
    multiplied by ``ufunc`` (``*`` or ``@``)."""
    if a.cap != b.cap:
        raise TypeError("homogeneous coefficients in different sets of monomials")
    if ufunc is np.multiply:
        if len(a.arr) * len(b.arr) * math.prod(np.broadcast_shapes(a.shape, b.shape)) \
                <= _SMALL:
            return _small_product(a, b)
        groups = _by_destination(a.cap, a.deg, b.deg)
        if groups is not None:
            return _fused_product(a, b, groups)
    swap = len(a.arr) > len(b.arr)  # loop over the shorter one
    small, big = (b, a) if swap else (a, b)
    maps = _product_map(a.cap, small.deg, big.deg)
    count = len(monomials(a.cap, a.deg + b.deg))
    out = None
    for s, where in zip(small.arr, maps, strict=True):
        if where is None:
            continue
        src, dst = where
        others = big.arr if src is None else big.arr[src]
        if ufunc is np.multiply:
            nd = max(s.ndim, others.ndim - 1)
            term = _pad(others, nd) * s if swap else s * _pad(others, nd)
        else:
            term = np.stack([ufunc(q, s) if swap else ufunc(s, q) for q in others])
        if out is None:
            out = np.zeros((count,) + term.shape[1:], dtype=term.dtype)
        elif term.shape[1:] != out.shape[1:]:
            shape = np.broadcast_shapes(term.shape[1:], out.shape[1:])
            out = np.broadcast_to(out, out.shape[:1] + shape).copy()
        out[dst] += term
    if out is None:  # no pair within the cap: an exact zero of the product's degree
        out = np.zeros((count,) + np.broadcast_shapes(a.shape, b.shape),
                       dtype=np.result_type(a.arr, b.arr))
    return Poly(out, a.deg + b.deg, a.cap)


#: below this many numbers in all products of slices, one vectorized pass (one point)
_SMALL = 4096


@lru_cache(maxsize=4096)
def _grouped(cap: Index, i: int, j: int) -> tuple[np.ndarray, np.ndarray, int]:
    """The pairs (a, b) of monomials of degrees i and j whose product is within the cap,
    as flat indices a·len(b's) + b sorted by the product's monomial, with where each
    product's run starts (``np.add.reduceat``'s offsets)."""
    target = _where(cap, i + j)
    bs = monomials(cap, j)
    pairs = sorted((d, ka * len(bs) + kb) for ka, a in enumerate(monomials(cap, i))
                   for kb, b in enumerate(bs)
                   if (d := target.get(tuple(p + q for p, q in zip(a, b, strict=True))))
                   is not None)
    dests = [d for d, _ in pairs]
    starts = [dests.index(d) for d in range(len(target))]
    return np.array([f for _, f in pairs], dtype=np.intp), np.array(starts, dtype=np.intp), \
        len(target)


def _run(ix: list[int]) -> slice | None:
    """Indices in arithmetic progression as a slice (a view), else None."""
    if len(ix) == 1:
        return slice(ix[0], ix[0] + 1)
    step = ix[1] - ix[0]
    if step == 0 or any(q - p != step for p, q in zip(ix, ix[1:], strict=False)):
        return None
    stop = ix[-1] + step
    return slice(ix[0], None if stop < 0 else stop, step)


@lru_cache(maxsize=4096)
def _by_destination(cap: Index, i: int, j: int) -> tuple[tuple[slice, slice], ...] | None:
    """For each monomial d of degree i + j: the monomials a of degree i and b of degree j
    with a + b = d, in step, as two slices of the factors' monomial axes; None when some
    are not runs (the monomials of two variables always are)."""
    bs = _where(cap, j)
    groups = []
    for d in monomials(cap, i + j):
        pa, pb = [], []
        for ka, a in enumerate(monomials(cap, i)):
            b = tuple(p - q for p, q in zip(d, a, strict=True))
            if b in bs:
                pa.append(ka)
                pb.append(bs[b])
        sa, sb = (_run(pa), _run(pb)) if pa else (None, None)
        if sa is None or sb is None:
            return None
        groups.append((sa, sb))
    return tuple(groups)


def _fused_product(a: Poly, b: Poly, groups: tuple[tuple[slice, slice], ...]) -> Poly:
    """The polynomial product with each monomial of the result one sum of products over
    views (``einsum``): no temporary per pair of monomials."""
    nd = max(a.ndim, b.ndim)
    pa, pb = _pad(a.arr, nd), _pad(b.arr, nd)
    out = np.empty((len(groups),) + np.broadcast_shapes(pa.shape[1:], pb.shape[1:]),
                   dtype=np.result_type(pa, pb))
    for k, (sa, sb) in enumerate(groups):
        np.einsum("i...,i...->...", pa[sa], pb[sb], out=out[k, ...])
    return Poly(out, a.deg + b.deg, a.cap)


def _small_product(a: Poly, b: Poly) -> Poly:
    """The polynomial product in one pass: every pair of slices multiplied, then summed
    per monomial of the product (each product of monomials within the cap is reached)."""
    nd = max(a.ndim, b.ndim)
    pa, pb = _pad(a.arr, nd), _pad(b.arr, nd)
    pairs = pa[:, None] * pb[None, :]
    flat, starts, _ = _grouped(a.cap, a.deg, b.deg)
    picked = pairs.reshape((-1,) + pairs.shape[2:])[flat]
    return Poly(np.add.reduceat(picked, starts, axis=0), a.deg + b.deg, a.cap)


def _sum_with_zero(ufunc: np.ufunc, a: Poly, b: Poly) -> Poly:
    """a ± b for coefficients of different degrees, one of them zero: a recurrence may
    stand for a zero coefficient of one degree by a zero of another (the 0 of u' when u
    is constant, times u's coefficient of degree k, has degree k), harmless as the sum
    is the other term."""
    za, zb = not np.any(a.arr), not np.any(b.arr)
    if not (za or zb):
        _degree([a, b])  # raises: a true mix of degrees is a bug in a rule
    keep = (-b if ufunc is np.subtract else b) if za else a
    shape = np.broadcast_shapes(a.shape, b.shape)
    return Poly(np.broadcast_to(_pad(keep.arr, len(shape)), keep.arr.shape[:1] + shape),
                keep.deg, keep.cap)


class Poly:
    """A homogeneous polynomial of degree ``deg`` in ``len(cap)`` variables whose
    coefficients are arrays: ``arr[m]`` belongs to the monomial ``monomials(cap, deg)[m]``
    (the others, beyond ``cap``, are not kept). Numpy functions act
    on it as on a univariate Taylor coefficient (``shape``, ``ndim`` and ``dtype`` are a
    slice's), products of two Polys being polynomial products."""

    __slots__ = ("arr", "deg", "cap")
    __array_priority__ = 1000

    def __init__(self, arr: np.ndarray, deg: int, cap: Index) -> None:
        self.arr, self.deg, self.cap = arr, deg, cap

    @classmethod
    def zero(cls, deg: int, cap: Index) -> Poly:
        """The zero coefficient of degree ``deg`` (each slice a 0-d zero)."""
        return cls(np.zeros(len(monomials(cap, deg))), deg, cap)

    @property
    def n(self) -> int:
        return len(self.cap)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.arr.shape[1:])

    @property
    def ndim(self) -> int:
        return self.arr.ndim - 1

    @property
    def dtype(self) -> np.dtype:
        return self.arr.dtype

    def __repr__(self) -> str:
        return f"Poly(deg={self.deg}, cap={self.cap}, shape={self.shape})"

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
                        ) -> Any:
        if method != "__call__" or kwargs:
            return NotImplemented
        if len(inputs) == 2 and ufunc is not np.matmul:  # the common cases first
            a, b = inputs  # a coefficient and a value no larger than its slices, or a sum
            if type(a) is Poly and type(b) is not Poly and getattr(b, "ndim", 0) < a.arr.ndim:
                return Poly(ufunc(a.arr, b), a.deg, a.cap)
            if type(b) is Poly and type(a) is not Poly and getattr(a, "ndim", 0) < b.arr.ndim \
                    and ufunc is not np.true_divide and ufunc is not np.floor_divide:
                return Poly(ufunc(a, b.arr), b.deg, b.cap)
            if type(a) is Poly and type(b) is Poly and a.cap == b.cap and a.deg == b.deg \
                    and a.arr.ndim == b.arr.ndim and ufunc in (np.add, np.subtract):
                return Poly(ufunc(a.arr, b.arr), a.deg, a.cap)
        polys = [x for x in inputs if isinstance(x, Poly)]
        if ufunc in BILINEAR and len(polys) == 2:
            return _product(ufunc, inputs[0], inputs[1])
        if ufunc in (np.true_divide, np.floor_divide) and isinstance(inputs[1], Poly):
            raise TypeError("a Taylor coefficient cannot divide")
        if ufunc is np.matmul:
            return per_monomial(ufunc, inputs, kwargs)
        if ufunc in (np.add, np.subtract) and len(polys) == 2 and polys[0].deg != polys[1].deg:
            return _sum_with_zero(ufunc, inputs[0], inputs[1])
        cap, deg = _degree(polys)
        nd = max(x.ndim if hasattr(x, "ndim") else np.ndim(x) for x in inputs)
        arrays = [_pad(x.arr, nd) if isinstance(x, Poly) else x for x in inputs]
        return Poly(ufunc(*arrays), deg, cap)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if func is np.shape:
            return self.shape
        if func is np.ndim:
            return self.ndim
        if func is np.size:
            return int(np.prod(self.shape, dtype=np.int64))
        return per_monomial(func, args, kwargs)

    def __getitem__(self, key: Any) -> Poly:
        return per_monomial(lambda a: a[key], [self])

    def reshape(self, *shape: Any) -> Poly:
        return per_monomial(lambda a: a.reshape(*shape), [self])

    def astype(self, dtype: Any, copy: bool = True) -> Poly:
        return Poly(self.arr.astype(dtype, copy=copy), self.deg, self.cap)

    # the operators the recurrences use most go straight to the arithmetic (no dispatch)
    def _like(self, other: Any) -> bool:
        return type(other) is Poly and other.deg == self.deg and other.cap == self.cap \
            and other.arr.ndim == self.arr.ndim

    def __add__(self, other: Any) -> Any:
        if self._like(other):
            return Poly(self.arr + other.arr, self.deg, self.cap)
        return np.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return np.add(other, self)

    def __sub__(self, other: Any) -> Any:
        if self._like(other):
            return Poly(self.arr - other.arr, self.deg, self.cap)
        return np.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return np.subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        if type(other) is Poly:
            return _product(np.multiply, self, other)
        if type(other) is float or type(other) is int:
            return Poly(self.arr * other, self.deg, self.cap)
        return np.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        if type(other) is float or type(other) is int:
            return Poly(other * self.arr, self.deg, self.cap)
        return np.multiply(other, self)

    def __matmul__(self, other: Any) -> Any:
        return np.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return np.matmul(other, self)

    def __truediv__(self, other: Any) -> Any:
        if type(other) is float or type(other) is int:
            return Poly(self.arr / other, self.deg, self.cap)
        return np.true_divide(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return np.true_divide(other, self)

    def __neg__(self) -> Poly:
        return Poly(-self.arr, self.deg, self.cap)

    def __pos__(self) -> Poly:
        return self

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        return np.not_equal(self, other)

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return np.equal(self, other)

    def __or__(self, other: Any) -> Any:
        return np.logical_or(self, other)

    def __ror__(self, other: Any) -> Any:
        return np.logical_or(other, self)

    def __and__(self, other: Any) -> Any:
        return np.logical_and(self, other)

    def __rand__(self, other: Any) -> Any:
        return np.logical_and(other, self)

    __hash__ = None  # type: ignore[assignment]

    def __bool__(self) -> bool:
        raise TypeError("the truth of a multivariate Taylor coefficient is ambiguous")

    def any_monomial(self) -> np.ndarray:
        """Where any monomial's slice is true (a reduction over the monomial axis)."""
        return np.any(self.arr, axis=0)

    def monomial(self, alpha: Index) -> np.ndarray:
        """The coefficient of t^alpha."""
        return self.arr[_where(self.cap, self.deg)[tuple(alpha)]]


def variables(seeds: Sequence[Any], cap: Index) -> Poly:
    """The degree-1 coefficient Σ_m seeds[m]·t_m of one input: ``seeds[m]`` is its change
    along variable m (an array or number, None for none); every cap is at least 1."""
    given = [s for s in seeds if s is not None]
    shape = np.broadcast_shapes(*(np.shape(s) for s in given))
    dtype = np.result_type(*given)
    arr = np.zeros((len(seeds),) + shape, dtype=dtype)
    for m, s in enumerate(seeds):
        if s is not None:
            arr[m] = s
    return Poly(arr, 1, tuple(cap))
