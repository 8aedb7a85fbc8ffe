"""Vectorised shortest round-trip formatting of float64 arrays as ASCII text.

Why: CSV/JSON output of millions of values is dominated by float-to-text
conversion.  Python's ``repr`` (0.5 µs/value) and numpy's Dragon4 casts are
too slow, so this module computes the *same digits as* ``repr(float)``
(shortest string that reads back bit-identically, nearest to the value when
several exist) with whole-array numpy arithmetic:

1. scale ``|x|`` by a power of ten into [1e16, 1e17) in double-double
   arithmetic (~106 bits, error < 1e-14 units of the 17th digit);
2. the rounding interval of ``x`` (half-way to its float neighbours), scaled
   the same way, gives an integer range ``[L, H]`` of 17-digit candidates;
3. the largest power ``10**t`` with a multiple inside ``[L, H]`` gives the
   shortest digit string; among those multiples the one nearest ``x`` is used;
4. the digits are laid out in fixed-width NUL-padded byte fields in the exact
   ``repr`` layout (``0.1``, ``29.0``, ``1e-05``, ``-1.5e+300``); writers
   remove the NUL bytes in one vectorised compaction.

Any value whose decision lies within 1e-9 units of a boundary or a tie (never
seen for random data, possible for contrived values) is formatted with
``repr`` instead, so the output is always exactly ``repr(float(x))``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

_SUB = 16384
FIELD = 48  # bytes per value: sign, int 16, dot, frac 20+4, exp 6 (overlaps), separator
SEP = FIELD - 1
POW10_MIN, POW10_MAX = -350, 345
_EPS = 1e-9
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp splitter
_P10 = np.array([10**k for k in range(19)], dtype=np.int64)
_tables: tuple[np.ndarray, ...] | None = None


def pow10_table() -> tuple[np.ndarray, ...]:
    """(hi, hi_hi, hi_lo, lo, binexp) indexed by ``s - POW10_MIN``, for s in
    [POW10_MIN, POW10_MAX]: 10**s == (hi + lo) * 2**binexp, hi in [1, 2) correctly rounded,
    lo the rounded rest (a double-double, ~106 bits), hi_hi + hi_lo == hi split in halves
    for exact products. Shared by the formatter and the points reader's parser."""
    global _tables
    if _tables is None:
        rows = []
        for s in range(POW10_MIN, POW10_MAX + 1):  # exact integers: 10**s = num/den
            num, den = (10**s, 1) if s >= 0 else (1, 10**-s)
            b = num.bit_length() - den.bit_length()
            if (num << -b if b < 0 else num) < (den << b if b > 0 else den):
                b -= 1
            mn, md = (num, den << b) if b >= 0 else (num << -b, den)  # m = mn/md in [1, 2)
            hi = mn / md  # int / int is correctly rounded
            hn, hd = hi.as_integer_ratio()
            lo = (mn * hd - hn * md) / (md * hd)  # m - hi, correctly rounded
            c = _SPLIT * hi
            hh = c - (c - hi)
            rows.append((hi, hh, hi - hh, lo, float(b)))
        arr = np.array(rows, dtype=np.float64)
        _tables = (arr[:, 0], arr[:, 1], arr[:, 2], arr[:, 3], arr[:, 4].astype(np.int64))
    return _tables


def _luts() -> tuple[np.ndarray, ...]:
    """Lookup tables, built lazily on first use.

    digits4: uint32 of the 4 ASCII digits of 0..9999 (little-endian bytes);
    int_mask: 2 uint64 arrays; [n] masks the 16-byte integer field to its last n digits;
    frac_mask: 3 uint64 arrays; [n] masks the 24-byte fraction field to n digits;
    exp_tab[e + _E_OFF]: uint64 of bytes ``00e-05..`` / ``00e+308.``, all NUL
    where repr uses positional notation (e in [-4, 16)).
    """
    global _lut_cache
    if _lut_cache is None:
        r = np.arange(10000)
        pw = np.array([1000, 100, 10, 1])
        digits4 = (48 + (r[:, None] // pw) % 10).astype(np.uint8).view("<u4").ravel()
        ones = np.full(24, 255, np.uint8)
        int_mask = np.array([np.where(np.arange(16) >= 16 - n, ones[:16], 0)
                             for n in range(17)], np.uint8).view("<u8")
        frac_mask = np.array([np.where(np.arange(24) < n, ones, 0)
                              for n in range(21)], np.uint8).view("<u8")
        exp_tab = np.zeros((2 * _E_OFF + 1, 8), np.uint8)
        for e in range(-_E_OFF, _E_OFF + 1):
            if not -4 <= e < 16:
                text = f"e{'-' if e < 0 else '+'}{abs(e):02d}".encode()
                exp_tab[e + _E_OFF, 2:2 + len(text)] = list(text)
        exp_tab = exp_tab.view("<u8").ravel()
        int_mask = (int_mask[:, 0].copy(), int_mask[:, 1].copy())
        frac_mask = tuple(frac_mask[:, i].copy() for i in range(3))
        _lut_cache = (digits4, int_mask, frac_mask, exp_tab)
    return _lut_cache


_E_OFF = 400
_lut_cache: tuple[np.ndarray, ...] | None = None


def _scale(m: np.ndarray, ea: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Double-double (hi, lo) of m * 2**ea * 10**s."""
    th, thh, thl, tl, tb = pow10_table()
    i = s - POW10_MIN
    t_h, t_hh, t_hl = th[i], thh[i], thl[i]
    p = m * t_h
    c = _SPLIT * m
    mh = c - (c - m)
    ml = m - mh
    err = ((mh * t_hh - p) + mh * t_hl + ml * t_hh) + ml * t_hl
    low = err + m * tl[i]
    hi = p + low
    lo = low - (hi - p)
    sc = np.ldexp(1.0, ea + tb[i])
    return hi * sc, lo * sc


def _shortest(a: np.ndarray, single: bool = False) -> tuple[np.ndarray, ...]:
    """Digits D (int64), digit count, decimal exponent and an 'uncertain' mask for a > 0;
    with ``single`` the shortest digits that read back as the same float32 (``a`` holds
    float32 values, exactly, as float64): only the width of the rounding interval
    differs."""
    m, ea = np.frexp(a)
    ea = ea.astype(np.int64)
    e10 = np.floor(np.log10(a)).astype(np.int64)
    s = 16 - e10
    hi, lo = _scale(m, ea, s)
    for _ in range(3):  # log10 can be off by one near powers of ten
        bad = (hi < 1e16) | (hi >= 1e17)
        if not bad.any():
            break
        s[bad] += np.where(hi[bad] < 1e16, 1, -1)
        hi[bad], lo[bad] = _scale(m[bad], ea[bad], s[bad])
    e10 = 16 - s
    ival = hi.astype(np.int64)
    fl = np.floor(lo)
    ival += fl.astype(np.int64)
    f = lo - fl
    # half gaps to the float neighbours, scaled like v: v * 2**(gap - 1) / |x|
    mant, emin = (24, -125) if single else (53, -1021)  # bits; exponent of the least normal
    hu = hi / m * 2.0**-(mant + 1)
    tiny = ea < emin  # subnormals: the gap is fixed at 2**(emin - mant)
    if tiny.any():
        hu[tiny] = np.ldexp(hi[tiny] / m[tiny], emin - mant - 1 - ea[tiny])
    hd = np.where((m == 0.5) & (ea > emin), 0.5 * hu, hu)  # powers of two: half gap below
    y = f - hd
    fy = np.floor(y)
    z = f + hu
    fz = np.floor(z)
    ly, lz = y - fy, z - fz
    unc = (ly < _EPS) | (ly > 1 - _EPS) | (lz < _EPS) | (lz > 1 - _EPS)
    lo_c = ival + fy.astype(np.int64) + 1
    hi_c = ival + fz.astype(np.int64)
    unc |= hi_c < lo_c
    best = np.zeros(a.shape, np.int64)
    for t in (1, 2):  # most values stop here: plain whole-array passes
        ok = (hi_c // _P10[t]) * _P10[t] >= lo_c
        best += ok
    if ok.any():  # nice numbers (0.1, 29.0): keep removing digits on the subset
        idx = np.flatnonzero(ok)
        lo_s, hi_s = lo_c[idx], hi_c[idx]
        for t in range(3, 18):
            p = _P10[t]
            ok = (hi_s // p) * p >= lo_s
            idx, lo_s, hi_s = idx[ok], lo_s[ok], hi_s[ok]
            if not idx.size:
                break
            best[idx] = t
    pt = _P10[best]
    rem = ival % pt
    val = (2 * rem - pt).astype(np.float64) + 2.0 * f
    unc |= np.abs(val) < _EPS
    c = ival - rem + np.where(val > 0, pt, 0)
    c += np.where(c < lo_c, pt, 0)
    c -= np.where(c > hi_c, pt, 0)
    digits = c // pt
    ndc = 16 + (c >= _P10[16]) + (c >= _P10[17])
    return digits, ndc - best, e10 + ndc - 17, unc


def shortest_text(v: float, single: bool = False) -> str:
    """``repr(v)``, or with ``single`` the shortest text that reads back as the same
    float32 (numpy's ``str(np.float32(v))``, in the same layout as ``repr``)."""
    return str(np.float32(v)) if single else repr(v)


def _int_fields(x: np.ndarray, out: np.ndarray) -> None:
    """Decimal text of the integers ``x`` (int64) into out[:, :SEP], NUL-padded."""
    text = np.asarray(x, dtype=np.int64).astype("S20")
    out[:, :SEP] = 0
    out[:, :20] = text.view(np.uint8).reshape(-1, 20)


def format_fields(x: np.ndarray, out: np.ndarray, quote_nonfinite: bool = False,
                  kind: str = "f") -> None:
    """Write ``repr``-identical text of the 1-D array x into out[:, :SEP].

    ``kind`` is ``f`` (float64: ``repr``), ``f4`` (float32 values: the shortest text
    that reads back as the same float32) or ``i`` (integers, as integers).
    ``out`` is a (len(x), >= SEP) uint8 array (rows may be strided) whose unused
    bytes become NUL.  With ``quote_nonfinite`` NaN/inf are written as the JSON
    strings ``"nan"``, ``"inf"``, ``"-inf"``.  Layout: [0] sign, [1:17] integer digits, [17] dot,
    [18:38] fraction digits, [42:47] exponent, [47] left for the separator.
    """
    if kind == "i":
        if x.size:
            _int_fields(x, out)
        return
    single = kind == "f4"
    x = np.asarray(x, dtype=np.float64)
    n = x.size
    if n == 0:
        return
    digits4, int_mask, frac_mask, exp_tab = _luts()
    neg = np.signbit(x)
    a = np.abs(x)
    finite = np.isfinite(a)
    special = ~finite | (a == 0)
    a = np.where(special, 1.0, a)
    digits, nd, e10, unc = _shortest(a, single)
    zero = special & finite
    digits[zero], nd[zero], e10[zero] = 0, 1, 0
    pos = (e10 >= -4) & (e10 < 16)
    k = np.where(pos, nd - 1 - e10, nd - 1)
    kp = _P10[np.clip(k, 0, 18)]
    q = digits // kp
    rem = digits - q * kp
    ip = q * _P10[np.clip(-k, 0, 18)]
    nf = np.maximum(k, 0)
    big = nf > 8
    dv = _P10[np.where(big, nf - 8, 0)]
    fhi = np.where(big, rem // dv, rem * _P10[np.clip(8 - nf, 0, 18)])
    flo = np.where(big, (rem - fhi * dv) * _P10[np.clip(20 - nf, 0, 18)], 0)

    out[:, 0] = neg * np.uint8(45)
    o_int = out[:, 1:17].view("<u4")
    o_frac = out[:, 18:38].view("<u4")
    v = ip
    for j in range(4):  # integer digits, right to left, 4 at a time
        if j and not v.any():
            o_int[:, :4 - j] = 0
            break
        q = v // 10000
        o_int[:, 3 - j] = digits4[v - q * 10000]
        v = q
    nint = np.where(pos & (e10 > 0), e10 + 1, 1)
    o_int8 = out[:, 1:17].view("<u8")
    o_int8[:, 0] &= int_mask[0][nint]
    o_int8[:, 1] &= int_mask[1][nint]
    out[:, 17] = (pos | (nd > 1)) * np.uint8(46)
    for v, groups, col in ((flo, 3, 4), (fhi, 2, 1)):  # fraction digits
        for j in range(groups):
            q = v // 10000
            o_frac[:, col - j] = digits4[v - q * 10000]
            v = q
    o_frac8 = out[:, 18:42].view("<u8")
    nfm = np.where(pos, np.maximum(nf, 1), nf)
    for i in range(3):
        o_frac8[:, i] &= frac_mask[i][nfm]
    out[:, 40:48].view("<u8")[:, 0] = exp_tab[e10 + _E_OFF]
    patch = np.flatnonzero(~finite | (unc & ~special))
    if patch.size:
        q = '"' if quote_nonfinite else ""
        text = [(q + repr(v) + q if not math.isfinite(v) else shortest_text(v, single))
                .encode("ascii")
                for v in x[patch].tolist()]
        out[patch, :SEP] = np.array(text, dtype=f"S{SEP}").view(np.uint8).reshape(-1, SEP)


def column_kind(dtype: np.dtype) -> str:
    """How a column of ``dtype`` is written: ``i`` integers, ``f4`` float32, ``f``."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        return "i"
    return "f4" if dtype == np.float32 else "f"


def field_table(x: np.ndarray, quote_nonfinite: bool = False) -> np.ndarray:
    """``(len(x), FIELD)`` NUL-padded fields of the values ``x``, for formatting once and
    copying into many rows (a grid axis repeats each of its values many times)."""
    kind = column_kind(np.asarray(x).dtype)
    x = np.asarray(x, dtype=np.int64 if kind == "i" else np.float64).reshape(-1)
    out = np.zeros((x.size, FIELD), dtype=np.uint8)
    for r0 in range(0, x.size, _SUB):
        format_fields(x[r0:r0 + _SUB], out[r0:r0 + _SUB], quote_nonfinite, kind)
    return out


def _format_sub(block: np.ndarray, sep: int, end: int, quote_nonfinite: bool,
                fixed: Mapping[int, np.ndarray], kinds: Sequence[str]) -> bytes:
    n, k = block.shape
    canvas = np.empty((n, k, FIELD), dtype=np.uint8)
    if k > n and not fixed and len(set(kinds)) == 1:  # a wide table (a long vector's
        # columns): in runs of values, not one numpy pass per column (10⁴ columns of one
        # row took 1.3 s that way)
        values, fields = block.reshape(-1), canvas.reshape(n * k, FIELD)
        for i in range(0, n * k, _SUB):
            format_fields(values[i:i + _SUB], fields[i:i + _SUB], quote_nonfinite, kinds[0])
    else:
        for j in range(k):  # column by column, straight into the canvas (rows are strided)
            if j in fixed:
                canvas[:, j] = fixed[j]
            else:
                format_fields(block[:, j], canvas[:, j], quote_nonfinite, kinds[j])
    canvas[:, :, SEP] = sep
    canvas[:, -1, SEP] = end
    flat = canvas.reshape(-1)
    return flat[flat != 0].tobytes()


def format_rows(
    block: np.ndarray, sep: int = 44, end: int = 10, quote_nonfinite: bool = False,
    fixed: Mapping[int, np.ndarray] | None = None, kinds: Sequence[str] | None = None,
) -> bytes:
    """Format a 2-D (rows, columns) array as delimited text lines, one per row.

    ``fixed`` maps column indices to ready ``(rows, FIELD)`` fields (from ``field_table``)
    used instead of formatting that column of ``block``; ``kinds`` says per column how its
    values are written (``column_kind``; default: every column float64). Rows are
    formatted in sub-blocks of about 16K rows, a column at a time: each numpy call works on
    enough values to amortise its overhead, and the temporaries stay in cache.
    """
    block = np.asarray(block, dtype=np.float64)
    n, k = block.shape
    if n == 0 or k == 0:
        return b"\n" * n if k == 0 else b""
    fixed = fixed or {}
    kinds = list(kinds) if kinds is not None else ["f"] * k
    return b"".join([
        _format_sub(block[r0:r0 + _SUB], sep, end, quote_nonfinite,
                    {j: rows[r0:r0 + _SUB] for j, rows in fixed.items()}, kinds)
        for r0 in range(0, n, _SUB)])
