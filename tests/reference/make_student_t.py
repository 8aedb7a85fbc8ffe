"""Reference values of Student's t quantiles for tests/uncertainty/test_uncertainty_welch.py,
from mpmath (50 significant digits, the quantile by bisection on mpmath's own
regularized incomplete beta). Run with mpmath installed:

    pip install mpmath==1.4.1
    python tests/reference/make_student_t.py

and paste the printed list into the test (T_QUANTILES).
"""

from __future__ import annotations

import mpmath as mp

mp.mp.dps = 50


def t_cdf(t, nu):
    x = nu / (nu + t * t)
    tail = mp.betainc(nu / 2, mp.mpf(1) / 2, 0, x, regularized=True) / 2
    return 1 - tail if t >= 0 else tail


def t_quantile(p, nu):
    """Bisection (the CDF is increasing) to 50 digits."""
    lo, hi = mp.mpf(0), mp.mpf(1)
    while t_cdf(hi, nu) < p:
        lo, hi = hi, hi * 2
    for _ in range(400):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, nu) < p else (lo, mid)
    return (lo + hi) / 2


print(f"# mpmath {mp.__version__}")
print("T_QUANTILES = [")
for nu in ("0.5", "1", "2", "3", "4.5", "9", "16", "16.7", "30", "100", "1000", "1e6"):
    for p in ("0.6", "0.975", "0.995", "0.9995", "0.99999"):
        q = t_quantile(mp.mpf(p), mp.mpf(nu))
        print(f"    ({nu}, {p}, {mp.nstr(q, 17)}),")
print("]")
