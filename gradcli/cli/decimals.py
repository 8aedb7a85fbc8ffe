"""Parse decimal numbers in a text buffer to float64, whole-array, correctly rounded.

Why: reading a points file of millions of numbers is dominated by text-to-float
conversion. Python's ``float`` (and numpy's string casts, ``loadtxt``, ``fromstring``) take
300-600 ns per value; this module takes a few dozen, with numpy arithmetic on all fields at
once, and gives exactly what ``float(text)`` gives:

1. each field (at most 24 bytes: any ``repr`` of a float fits) is loaded, right-aligned,
   as three little-endian 64-bit words straight from the buffer (unaligned strided
   views, no per-byte copying);
2. byte tricks on the words (SWAR) find the exponent, sign and decimal point and check that
   every other byte is a digit; eight digits at a time become an integer by three
   multiply-and-mask steps, giving the significand ``w`` (up to 18 digits) and the decimal
   exponent ``q``;
3. ``w * 10**q`` is computed in double-double arithmetic (~100 bits) from the same table
   of powers of ten the CSV writer uses; its rounding to float64 is exact unless the value
   lies within 2**-96 of a rounding boundary.

Fields it cannot decide exactly (other spellings: ``nan``, ``inf``, spaces, more than 18
significant digits, a tie, a subnormal or overflowing result, or anything that is not a
number) are reported back; the caller converts those few with ``float()``, which also
names the bad ones.
"""

from __future__ import annotations

import numpy as np

from ..output._floatfmt import POW10_MAX, POW10_MIN, pow10_table

__all__ = ["parse_decimals", "WIDTH"]

WIDTH = 24  # bytes per field this parser reads; longer fields are left to float()

_U = np.uint64
_ONES = _U(0x0101010101010101)
_HIGH = _U(0x8080808080808080)
_LOW7 = _U(0x7F7F7F7F7F7F7F7F)
_ZERO_CHAR = _U(0x30) * _ONES
_DOT = _U(ord(".") ^ 0x30) * _ONES
_E = _U(0x75) * _ONES  # "e" and "E" XOR "0", with 0x20 set
_CASE = _U(0x20) * _ONES
_NONDIGIT = _U(0x76) * _ONES  # adds into the high bit of any byte >= 10
_GATHER = _U(0x0102040810204080)  # (byte-wise 0/1 word * this) >> 56: one bit per byte
_SHIFT = (np.arange(3, dtype=_U) * _U(8))[:, None]
# _KEEP[k][n]: the bytes of word k that hold the last n characters of a field
_KEEP = np.array([[(0xFFFFFFFFFFFFFFFF << (8 * (8 - min(max(n - 8 * (2 - k), 0), 8))))
                   & 0xFFFFFFFFFFFFFFFF for n in range(WIDTH + 1)] for k in range(3)], dtype=_U)
_P10 = np.array([10**k for k in range(19)], dtype=np.int64)
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp splitter
_MARGIN = 2.0**-96
_LOG2_10 = 217706  # floor(q * log2(10)) == (q * _LOG2_10) >> 16 for |q| < 1650


def _byte_mask(t: np.ndarray) -> np.ndarray:
    """Bit ``8k + j`` set where byte j of word k has its high bit set: (3, n) -> (n,)."""
    bits = (((t >> _U(7)) & _ONES) * _GATHER) >> _U(56)
    return (bits << _SHIFT).sum(axis=0, dtype=_U)


def _zero_bytes(t: np.ndarray) -> np.ndarray:
    """0x80 in every byte of ``t`` that is zero, 0 elsewhere (exact: no carries)."""
    return ~(((t & _LOW7) + _LOW7) | t | _LOW7)


def _index(bits: np.ndarray) -> np.ndarray:
    """The index of the one set bit of each value (bits > 0, a power of two)."""
    return np.frexp(bits.astype(np.float64))[1].astype(np.int64) - 1


def _words(view: np.ndarray, ends: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """(3, n) words holding the ``lengths`` (<= WIDTH) characters before ``ends``,
    right-aligned, XORed with ASCII '0' (digits become their values), masked to the
    field."""
    out = np.empty((3, ends.size), dtype=_U)
    for k in range(3):
        out[k] = view[ends - 8 * (3 - k)]
        out[k] ^= _ZERO_CHAR
        out[k] &= _KEEP[k][lengths]
    return out


def _exponents(view: np.ndarray, words: np.ndarray, ends: np.ndarray, mant_len: np.ndarray,
               ok: np.ndarray) -> np.ndarray:
    """Find 'e'/'E': parse each exponent, shorten ``mant_len`` and re-read the mantissa's
    ``words`` in place; clear ``ok`` where the exponent is malformed."""
    exponent = np.zeros(ends.size, dtype=np.int64)
    e_bytes = _zero_bytes((words | _CASE) ^ _E)
    rows = np.flatnonzero(((e_bytes[0] | e_bytes[1] | e_bytes[2]) != 0) & ok)
    if not rows.size:
        return exponent
    mask = _byte_mask(e_bytes[:, rows])
    at = _index(mask)  # the 'e' is character `at` of 24
    count = 23 - at  # characters after it
    tail = words[2, rows] >> (_U(8) * (at - 15).clip(0, 8).astype(_U))
    sign = tail & _U(0xFF)
    minus, plus = sign == _U(ord("-") ^ 0x30), sign == _U(ord("+") ^ 0x30)
    signed = minus | plus
    tail = np.where(signed, tail >> _U(8), tail)
    digits = count - signed
    good = ((mask & (mask - _U(1))) == 0) & (at >= 16) & (digits >= 1) & (digits <= 4)
    value = np.zeros(rows.size, dtype=np.int64)
    for i in range(4):
        d = ((tail >> _U(8 * i)) & _U(0xFF)).astype(np.int64)
        inside = i < digits
        good &= ~inside | (d < 10)
        value = np.where(inside, value * 10 + d, value)
    ok[rows] &= good
    exponent[rows] = np.where(minus, -value, value)
    mant_len[rows] = np.maximum(mant_len[rows] - count - 1, 0)
    words[:, rows] = _words(view, ends[rows] - count - 1, mant_len[rows])
    return exponent


def parse_decimals(data: bytes, ends: np.ndarray, lengths: np.ndarray,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Values of the ASCII fields ``data[ends[i] - lengths[i]:ends[i]]``, and a mask of the
    fields parsed here; the others (value 0) must go to ``float()``. ``data`` must hold
    at least WIDTH bytes before the first field (the words are read right-aligned)."""
    n = ends.size
    values = np.zeros(n, dtype=np.float64)
    ok = (lengths > 0) & (lengths <= WIDTH)
    if not n:
        return values, ok
    view = np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    ends = ends.astype(np.int64)
    lengths = np.where(ok, lengths, 0).astype(np.int64)
    first = np.frombuffer(data, dtype=np.uint8)[ends - np.maximum(lengths, 1)]
    negative = first == ord("-")
    mant_len = lengths - (negative | (first == ord("+")))
    words = _words(view, ends, mant_len)
    exponent = (_exponents(view, words, ends, mant_len, ok) if b"e" in data or b"E" in data
                else 0)

    # digits and at most one '.'
    nondigit = ((words + _NONDIGIT) | words) & _HIGH  # bytes >= 10, and non-ASCII
    dots = _zero_bytes(words ^ _DOT) & nondigit
    other = nondigit ^ dots
    dot = _byte_mask(dots)
    ok &= ((other[0] | other[1] | other[2]) == 0) & ((dot & (dot - _U(1))) == 0)
    has_dot = dot != 0
    ok &= mant_len - has_dot >= 1
    fraction = np.where(has_dot, 23 - _index(dot | ~has_dot), 0)  # characters after '.'
    words &= ~((dots >> _U(7)) * _U(0xFF))
    words = (words * _U(10) + (words >> _U(8))) & _U(0x00FF00FF00FF00FF)
    words = (words * _U(100) + (words >> _U(16))) & _U(0x0000FFFF0000FFFF)
    words = (words * _U(10000) + (words >> _U(32))) & _U(0x00000000FFFFFFFF)
    ok &= words[0] < _U(922)  # keeps the whole below 2**63
    whole = (words[0] * _U(10**16) + words[1] * _U(10**8) + words[2]).view(np.int64)
    rest = np.where(fraction > 18, whole, whole % _P10[np.clip(fraction, 0, 18)])
    w = np.where(has_dot, (whole - rest) // 10 + rest, whole)
    q = exponent - fraction

    # w * 10**q, correctly rounded, in double-double
    ok &= (q >= POW10_MIN) & (q <= POW10_MAX)
    q = np.where(ok, q, 0)
    t_hi, t_hh, t_hl, t_lo, _ = pow10_table()
    i = q - POW10_MIN
    t_hi, t_hh, t_hl, t_lo = t_hi[i], t_hh[i], t_hl[i], t_lo[i]
    w_hi = w.astype(np.float64)
    w_lo = (w - w_hi.astype(np.int64)).astype(np.float64)
    c = _SPLIT * w_hi
    wh = c - (c - w_hi)
    wl = w_hi - wh
    p = w_hi * t_hi
    s = ((wh * t_hh - p) + wh * t_hl + wl * t_hh) + wl * t_hl + (w_hi * t_lo + w_lo * t_hi)
    hi = p + s
    lo = s - (hi - p)
    # the nearest rounding boundary: half a gap above, or below a power of two half of
    # the smaller gap below
    half_gap = 0.5 * np.spacing(hi)
    power_of_two = (hi.view(np.int64) & ((1 << 52) - 1)) == 0
    half_gap[power_of_two & (lo < 0)] *= 0.5
    ok &= np.abs(np.abs(lo) - half_gap) > _MARGIN * hi
    mant, scale = np.frexp(hi)
    scale += ((q * _LOG2_10) >> 16).astype(np.int32)  # the result is in [2**(scale-1), 2**scale)
    zero = w == 0
    ok &= zero | ((scale >= -1021) & (scale <= 1024))  # normal: one rounding, in range
    result = np.ldexp(mant, np.where(ok, scale, 0))
    result[zero] = 0.0
    result.view(np.int64)[...] |= negative.astype(np.int64) << 63
    values[ok] = result[ok]
    return values, ok
