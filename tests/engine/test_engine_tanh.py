"""tanh is correctly rounded near saturation, so atanh(tanh(x)) keeps its derivative 1 where
numpy's tanh rounds to 1 too soon.

Reference values: mpmath 1.3.0 at 200 bits, correctly rounded to float64, made by

    import numpy as np, mpmath
    mpmath.mp.prec = 200
    rng = np.random.default_rng(20261125)
    xs = np.concatenate([rng.uniform(3, 19.1, 40), -rng.uniform(3, 19.1, 10),
                         [19.0, -19.0, 18.5, 10.0, 5.0, 3.0]])
    for x in xs:
        print((float(x).hex(), float(mpmath.tanh(mpmath.mpf(float(x)))).hex()))
"""

from __future__ import annotations

import numpy as np
import pytest

import gradcli
import gradcli as gc

MPMATH = [
    ('0x1.16e7a46cbbdd7p+3', '0x1.fffffe320d7dap-1'),
    ('0x1.cc9ff629f0dcap+1', '0x1.ff3be5c0cd633p-1'),
    ('0x1.fee5ef72c485cp+2', '0x1.fffff82eeee2dp-1'),
    ('0x1.c14232c28f55cp+3', '0x1.fffffffffd306p-1'),
    ('0x1.ad20fdd5ae918p+2', '0x1.ffff9b5c3565fp-1'),
    ('0x1.981aae3d90a7ap+1', '0x1.fe42e3d88ccbap-1'),
    ('0x1.61b4a91b89a12p+3', '0x1.fffffffbb13c7p-1'),
    ('0x1.f494289f5eb5ap+3', '0x1.ffffffffffe2ep-1'),
    ('0x1.f20c4ff366580p+3', '0x1.ffffffffffddep-1'),
    ('0x1.6fbe8644f5c10p+2', '0x1.fffd52bb8cec6p-1'),
    ('0x1.b54d4813e65fap+1', '0x1.fee5c48e53875p-1'),
    ('0x1.f7fcc1e3bff11p+3', '0x1.ffffffffffe88p-1'),
    ('0x1.f42b0b26bd370p+3', '0x1.ffffffffffe22p-1'),
    ('0x1.122fee06fc590p+2', '0x1.ffce32022ec12p-1'),
    ('0x1.808b705f84c88p+3', '0x1.ffffffff5f866p-1'),
    ('0x1.91e149e69e767p+1', '0x1.fe15830f845a8p-1'),
    ('0x1.e6ee6ae6fe5a6p+3', '0x1.ffffffffffbbbp-1'),
    ('0x1.313d1e5cecbb1p+2', '0x1.ffed1fdd23e8ep-1'),
    ('0x1.e010695eb6caap+1', '0x1.ff6f3cc5fae1ap-1'),
    ('0x1.0aaf57fd1dd0ep+3', '0x1.fffffc2085efcp-1'),
    ('0x1.2dfdcd13d091ap+4', '0x1.fffffffffffffp-1'),
    ('0x1.00f7c1944d873p+4', '0x1.fffffffffff36p-1'),
    ('0x1.0bb1b027dc76ep+3', '0x1.fffffc5d206e2p-1'),
    ('0x1.48441d2972692p+3', '0x1.ffffffeae0721p-1'),
    ('0x1.29df805497ba2p+3', '0x1.ffffff72d56fap-1'),
    ('0x1.a9fdd0d706b55p+3', '0x1.fffffffff3f76p-1'),
    ('0x1.1e139ea496bb2p+3', '0x1.fffffed8edf6bp-1'),
    ('0x1.0177b6dbfe5ccp+4', '0x1.fffffffffff42p-1'),
    ('0x1.e3ba724ce83e2p+2', '0x1.ffffedba9da9bp-1'),
    ('0x1.07c0da763b5ecp+4', '0x1.fffffffffffa9p-1'),
    ('0x1.55feb98331b2ap+3', '0x1.fffffff70b486p-1'),
    ('0x1.17496f36eddbap+2', '0x1.ffd587f3523e5p-1'),
    ('0x1.b980983c3039cp+3', '0x1.fffffffffb6f8p-1'),
    ('0x1.d1a9f698ddb42p+2', '0x1.ffffdfde67189p-1'),
    ('0x1.0658f2d5b3fafp+3', '0x1.fffffaebc7e61p-1'),
    ('0x1.50ad4bc77baa8p+3', '0x1.fffffff3834dep-1'),
    ('0x1.8c51d37401941p+3', '0x1.ffffffffb31f9p-1'),
    ('0x1.26987cf9c4448p+4', '0x1.ffffffffffffep-1'),
    ('0x1.8f5f3ae023ad3p+3', '0x1.ffffffffc079ap-1'),
    ('0x1.060e763dad6dcp+4', '0x1.fffffffffff95p-1'),
    ('-0x1.1841d16412b18p+4', '-0x1.ffffffffffff5p-1'),
    ('-0x1.95fbfd332ff12p+2', '-0x1.ffff3090e5553p-1'),
    ('-0x1.aeb253755203ep+2', '-0x1.ffffa02bfb660p-1'),
    ('-0x1.e0bf227a066d6p+3', '-0x1.ffffffffff9b7p-1'),
    ('-0x1.5e3be9ca7ac53p+3', '-0x1.fffffffaa6042p-1'),
    ('-0x1.754fcc054de58p+3', '-0x1.fffffffebc2d1p-1'),
    ('-0x1.2d4733c70ae2fp+3', '-0x1.ffffff8de5121p-1'),
    ('-0x1.0ac53382ce799p+4', '-0x1.fffffffffffc5p-1'),
    ('-0x1.944fdc6eeb16bp+3', '-0x1.ffffffffd1597p-1'),
    ('-0x1.45f006b76985cp+2', '-0x1.fff61d54c7964p-1'),
    ('0x1.3000000000000p+4', '0x1.fffffffffffffp-1'),
    ('-0x1.3000000000000p+4', '-0x1.fffffffffffffp-1'),
    ('0x1.2800000000000p+4', '0x1.ffffffffffffep-1'),
    ('0x1.4000000000000p+3', '0x1.ffffffdc96f35p-1'),
    ('0x1.4000000000000p+2', '0x1.fff419668df11p-1'),
    ('0x1.8000000000000p+1', '0x1.fd77d111a0b00p-1'),
]
XS = np.array([float.fromhex(x) for x, _ in MPMATH])
TANH = np.array([float.fromhex(y) for _, y in MPMATH])


def test_tanh_is_correctly_rounded_from_three_on() -> None:
    """Every reference point, positive and negative, as an array and one by one."""
    got = gc.tensor(XS).tanh().numpy()
    assert np.array_equal(got, TANH)
    for x, want in zip(XS, TANH, strict=True):
        assert gc.tensor(float(x)).tanh().item() == want


def test_tanh_keeps_its_limits_and_nan() -> None:
    """±1 beyond saturation, ±1 at ±inf, nan at nan, exact 0 at 0, the sign of -0."""
    got = gc.tensor([40.0, -40.0, np.inf, -np.inf, np.nan, 0.0, -0.0]).tanh().numpy()
    assert got[:4].tolist() == [1.0, -1.0, 1.0, -1.0]
    assert np.isnan(got[4]) and got[5] == 0.0 and np.signbit(got[6])


@pytest.mark.parametrize("x", [19.0, -19.0, 18.5, 12.0])
def test_atanh_of_tanh_has_derivative_one_near_saturation(x: float) -> None:
    """torch 2.13.0 and JAX 0.10.2 both give 1.0 for d/dx atanh(tanh(x)) at x = 19 (numpy's
    tanh(19.0) = 1.0 gave nan); mathematically it is 1 wherever tanh(x) < 1 in float64."""
    got = gradcli.evaluate("atanh(tanh(x))", "grad", at={"x": x})["df/dx"][0]
    assert got == pytest.approx(1.0, rel=1e-15)
