"""The power-of-ten tables of the CSV writer and the points reader's parser, built with
integer arithmetic at start-up, equal the exact values computed independently with
fractions.Fraction."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from gradcli.output import _floatfmt


def test_power_of_ten_tables_are_exact() -> None:
    hi, hi_hi, hi_lo, lo, binexp = _floatfmt.pow10_table()
    for i, s in enumerate(range(_floatfmt.POW10_MIN, _floatfmt.POW10_MAX + 1)):
        t = Fraction(10) ** s
        b = int(binexp[i])
        m = t / Fraction(2) ** b
        assert 1 <= m < 2, s
        assert hi[i] == float(m)                      # correctly rounded mantissa
        assert lo[i] == float(m - Fraction(hi[i]))    # and its rounding error
        assert hi_hi[i] + hi_lo[i] == hi[i] and np.float64(hi_hi[i]).view(np.int64) & 0x7FFFFFF == 0
