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
in ``simplex(n, deg)`` order), each shaped as a univariate coefficient would be. numpy
sees it through ``__array_ufunc__`` and ``__array_function__``: a product of two Polys
(``*``, ``matmul``) is the polynomial product; anything else a rule does to a coefficient
(a sum, a reshape, an index, a select, a solve with a fixed matrix) is linear in it and
applies monomial by monomial, as it applies coefficient by coefficient in one variable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = ["Poly", "simplex", "per_monomial", "is_poly", "BILINEAR"]

Index = tuple[int, ...]

#: the ufuncs that multiply two coefficients: polynomial products
BILINEAR = (np.multiply, np.matmul)


def simplex(n: int, degree: int) -> list[Index]:
    """Every multi-index of n whole numbers summing to ``degree``, in lexicographic order
    from the first variable's highest power down (x², xy, y² for n = 2, degree 2)."""
    if n <= 1:
        return [(degree,)] if n else ([()] if degree == 0 else [])
    return [(a, *rest) for a in range(degree, -1, -1) for rest in simplex(n - 1, degree - a)]


@lru_cache(maxsize=1024)
def _where(n: int, degree: int) -> dict[Index, int]:
    return {a: i for i, a in enumerate(simplex(n, degree))}


@lru_cache(maxsize=4096)
def _product_map(n: int, i: int, j: int) -> tuple[np.ndarray, ...]:
    """For each monomial a of degree i, the indices of a + b (b of degree j) among the
    monomials of degree i + j: distinct for fixed a, so ``out[map[a]] += A[a]·B`` adds
    without collisions."""
    target = _where(n, i + j)
    bs = simplex(n, j)
    return tuple(np.array([target[tuple(p + q for p, q in zip(a, b, strict=True))]
                           for b in bs], dtype=np.intp) for a in simplex(n, i))


def is_poly(a: Any) -> bool:
    return isinstance(a, Poly)


def _pad(arr: np.ndarray, ndim: int) -> np.ndarray:
    """``arr`` (monomials first) with unit axes after the monomial axis, so that each
    monomial's slice broadcasts against ``ndim``-axis arrays as the slice alone would."""
    extra = ndim - (arr.ndim - 1)
    return arr if extra <= 0 else arr.reshape(arr.shape[:1] + (1,) * extra + arr.shape[1:])


def _degree(polys: Sequence[Poly]) -> tuple[int, int]:
    first = polys[0]
    for p in polys[1:]:
        if p.deg != first.deg or p.n != first.n:
            raise TypeError(f"homogeneous coefficients of degrees {first.deg} and {p.deg} "
                            "cannot be combined linearly")
    return first.n, first.deg


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
    n, deg = _degree(polys)
    parts = [fn(*_substitute(args, m), **_substitute(kwargs, m))
             for m in range(len(polys[0].arr))]
    first = parts[0]
    if isinstance(first, (list, tuple)) and first and isinstance(first[0], np.ndarray):
        return type(first)(Poly(np.stack([p[i] for p in parts]), deg, n)
                           for i in range(len(first)))
    if isinstance(first, (np.ndarray, np.generic)) and not isinstance(first, np.dtype):
        return Poly(np.stack(parts), deg, n)
    if all(p == first for p in parts[1:]):  # a property of the slices (a shape, a dtype)
        return first
    raise TypeError(f"{getattr(fn, '__name__', fn)} is not linear in a Taylor coefficient")


def _product(ufunc: np.ufunc, a: Poly, b: Poly) -> Poly:
    """The polynomial product of two homogeneous coefficients, each pair of slices
    multiplied by ``ufunc`` (``*`` or ``@``)."""
    if a.n != b.n:
        raise TypeError("homogeneous coefficients in different numbers of variables")
    swap = len(a.arr) > len(b.arr)  # loop over the shorter one
    small, big = (b, a) if swap else (a, b)
    maps = _product_map(a.n, small.deg, big.deg)
    out = None
    for s, where in zip(small.arr, maps, strict=True):
        if ufunc is np.multiply:
            nd = max(s.ndim, big.arr.ndim - 1)
            term = _pad(big.arr, nd) * s if swap else s * _pad(big.arr, nd)
        else:
            term = np.stack([ufunc(q, s) if swap else ufunc(s, q) for q in big.arr])
        if out is None:
            out = np.zeros((len(_where(a.n, a.deg + b.deg)),) + term.shape[1:],
                           dtype=term.dtype)
        elif term.shape[1:] != out.shape[1:]:
            shape = np.broadcast_shapes(term.shape[1:], out.shape[1:])
            out = np.broadcast_to(out, out.shape[:1] + shape).copy()
        out[where] += term
    assert out is not None
    return Poly(out, a.deg + b.deg, a.n)


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
                keep.deg, keep.n)


class Poly:
    """A homogeneous polynomial of degree ``deg`` in ``n`` variables whose coefficients are
    arrays: ``arr[m]`` belongs to the monomial ``simplex(n, deg)[m]``. Numpy functions act
    on it as on a univariate Taylor coefficient (``shape``, ``ndim`` and ``dtype`` are a
    slice's), products of two Polys being polynomial products."""

    __slots__ = ("arr", "deg", "n")
    __array_priority__ = 1000

    def __init__(self, arr: np.ndarray, deg: int, n: int) -> None:
        self.arr, self.deg, self.n = arr, deg, n

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
        return f"Poly(deg={self.deg}, n={self.n}, shape={self.shape})"

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any
                        ) -> Any:
        if method != "__call__" or kwargs.get("out") is not None:
            return NotImplemented
        polys = [x for x in inputs if isinstance(x, Poly)]
        if ufunc in BILINEAR and len(polys) == 2:
            return _product(ufunc, inputs[0], inputs[1])
        if ufunc in (np.true_divide, np.floor_divide) and isinstance(inputs[1], Poly):
            raise TypeError("a Taylor coefficient cannot divide")
        if ufunc is np.matmul:
            return per_monomial(ufunc, inputs, kwargs)
        if ufunc in (np.add, np.subtract) and len(polys) == 2 and polys[0].deg != polys[1].deg:
            return _sum_with_zero(ufunc, inputs[0], inputs[1])
        n, deg = _degree(polys)
        nd = max([p.ndim for p in polys] + [np.ndim(x) for x in inputs
                                             if not isinstance(x, Poly)])
        arrays = [_pad(x.arr, nd) if isinstance(x, Poly) else x for x in inputs]
        return Poly(ufunc(*arrays, **kwargs), deg, n)

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
        return Poly(self.arr.astype(dtype, copy=copy), self.deg, self.n)

    def __add__(self, other: Any) -> Any:
        return np.add(self, other)

    def __radd__(self, other: Any) -> Any:
        return np.add(other, self)

    def __sub__(self, other: Any) -> Any:
        return np.subtract(self, other)

    def __rsub__(self, other: Any) -> Any:
        return np.subtract(other, self)

    def __mul__(self, other: Any) -> Any:
        return np.multiply(self, other)

    def __rmul__(self, other: Any) -> Any:
        return np.multiply(other, self)

    def __matmul__(self, other: Any) -> Any:
        return np.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:
        return np.matmul(other, self)

    def __truediv__(self, other: Any) -> Any:
        return np.true_divide(self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return np.true_divide(other, self)

    def __neg__(self) -> Poly:
        return Poly(-self.arr, self.deg, self.n)

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
        return self.arr[_where(self.n, self.deg)[tuple(alpha)]]


def variables(seeds: Sequence[Any]) -> Poly:
    """The degree-1 coefficient Σ_m seeds[m]·t_m of one input: ``seeds[m]`` is its change
    along variable m (an array or number, None for none)."""
    given = [s for s in seeds if s is not None]
    shape = np.broadcast_shapes(*(np.shape(s) for s in given))
    dtype = np.result_type(*given)
    arr = np.zeros((len(seeds),) + shape, dtype=dtype)
    for m, s in enumerate(seeds):
        if s is not None:
            arr[m] = s
    return Poly(arr, 1, len(seeds))
