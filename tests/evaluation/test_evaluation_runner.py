"""The runner's two speed devices keep results exact and never alias the caller's arrays:
one uncopied block for output-bound grids (sin(x)cos(y): every full-size array is an
output), and the allocator tuning for blocked runs."""

from __future__ import annotations

import sys

import numpy as np
import pytest

import gradcli
from gradcli.evaluation import prepare
from gradcli.evaluation.runner import _output_bound
from gradcli.plan.kernels import full_size_ops
from gradcli.support.allocator import keep_freed_memory

GX, GY = (0.0, 2 * np.pi, 37), (-1.0, 3.0, 29)
X, Y = np.meshgrid(np.linspace(*GX), np.linspace(*GY), indexing="ij")


@pytest.mark.parametrize("expr, bound", [
    ("sin(x)*cos(y)", True),          # the product is the only full-size array
    ("exp(x)*y", True),
    ("sin(x*y)", False),              # x*y and sin(x*y): two full-size arrays
    ("sin(x)*cos(y) + x*y", False),
])
def test_output_bound_detection(expr, bound) -> None:
    prepared = prepare(expr, "grad", grid={"x": GX, "y": GY})
    assert _output_bound(prepared.plan, prepared.binding) is bound


def test_full_size_ops_counts_the_probe_blocks_operations() -> None:
    prepared = prepare("sin(x*y)*exp(-(x^2+y^2)/8)", "grad", grid={"x": GX, "y": GY})
    probe = prepared.binding.block(0, 2)
    # x*y, sin, x^2 + y^2, /8, neg, exp, product: seven arrays of the probe's 2 x 29
    assert full_size_ops(prepared.plan, probe, 2 * 29) == 7


@pytest.mark.parametrize("block_size", [None, 29, 100])
def test_output_bound_grid_matches_the_closed_form(block_size) -> None:
    out = gradcli.evaluate("sin(x)*cos(y)", "grad", grid={"x": GX, "y": GY},
                           block_size=block_size)
    np.testing.assert_array_equal(out["f"], np.sin(X) * np.cos(Y))
    np.testing.assert_array_equal(out["df/dx"], np.cos(X) * np.cos(Y))
    np.testing.assert_array_equal(out["df/dy"], np.sin(X) * -np.sin(Y))
    for name in ("f", "df/dx", "df/dy"):
        assert out[name].shape == (37, 29) and out[name].flags.writeable
    assert len({id(out[n]) for n in ("f", "df/dx", "df/dy")}) == 3


def test_results_never_alias_the_callers_points() -> None:
    x = np.linspace(-1.0, 1.0, 50)
    y = np.linspace(2.0, 3.0, 50)
    out = gradcli.evaluate("x + y", "grad", points={"x": x, "y": y})
    assert not np.shares_memory(out["df/dx"], out["df/dy"])
    for name, col in out.items():
        assert name == "x" or not np.shares_memory(col, x), name
    out["df/dx"][:] = 7.0  # the caller may write into a result ...
    np.testing.assert_array_equal(out["df/dy"], np.ones(50))  # ... without touching another
    for xs in (x, np.array([2.0])):  # one point: the whole column is the block, unsliced
        ident = gradcli.evaluate("x", "eval", points={"x": xs})  # f is x in the engine
        assert not np.shares_memory(ident["f"], xs)
        before = xs.copy()
        ident["f"][:] = 0.0  # writing into the result leaves the caller's array alone
        np.testing.assert_array_equal(xs, before)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_allocator_tuning_applies_on_linux() -> None:
    import ctypes.util

    if ctypes.util.find_library("c") is None:
        pytest.skip("no C library found")
    assert keep_freed_memory() is True
    assert keep_freed_memory() is True  # once per process; idempotent


@pytest.mark.parametrize("what, expr, extra", [
    ("grad", "exp(x*cos(y)) * z + sin(y)", {}),
    ("jacobian", "[exp(x*cos(y)) + z, sin(y)*x*x*z]", {}),
    ("vjp", "[exp(x*cos(y)) + z, sin(y)*x*x*z]", {"vector": [1.0, -2.0]}),
    ("jvp", "[exp(x*cos(y)) + z, sin(y)*x*x*z]", {"direction": {"x": 1.0, "y": 0.5}}),
    ("hessian", "exp(x*cos(y)) * z + sin(y)", {}),
])
def test_hoisted_blocks_give_the_one_block_result(what, expr, extra) -> None:
    """Blocks of two rows share the hoisted y-only work (cos(y), sin(y)) on worker threads:
    every command gives exactly the one-block result and the point-set result (vjp used to
    free the shared nodes after the first block)."""
    grid = {"x": GX, "y": GY, "z": 0.5}
    blocked = gradcli.evaluate(expr, what, grid=grid, block_size=2 * GY[2], threads=2, **extra)
    whole = gradcli.evaluate(expr, what, grid=grid, block_size=10**9, **extra)
    pts = gradcli.evaluate(expr, what, points={"x": X.ravel(), "y": Y.ravel(),
                                                 "z": np.full(X.size, 0.5)}, **extra)
    for col in whole:
        if col in ("x", "y", "z"):
            continue
        np.testing.assert_array_equal(np.broadcast_to(blocked[col], X.shape),
                                      np.broadcast_to(whole[col], X.shape), err_msg=col)
        np.testing.assert_allclose(np.broadcast_to(whole[col], X.shape).ravel(), pts[col],
                                   rtol=1e-14, atol=1e-15, err_msg=col)
