"""The computation table: one record per computation, from which the library's ``what=``
values, the CLI's numeric commands, their --help and --check derive; and the Hessian
block over some variables (``hessian --wrt``)."""

from __future__ import annotations

import numpy as np
import pytest

import gradcli
from gradcli.cli.definition import BY_NAME, check_tolerance
from gradcli.engine.core import raw
from gradcli.errors import EvaluationError
from gradcli.plan.blocks import Block
from gradcli.plan.computations import Computation, computation, names, register, unregister
from gradcli.plan.kernels import grad


def _slope_sum(plan, targets, outs, num):
    """The toy's kernel: f's partials (reverse mode, grad's kernel) summed, plus 2·f."""
    partials = grad(plan, targets, outs, num)
    total = 2.0 * raw(outs[0])
    for p in partials:
        if p is not None:
            total = total + p
    return [total]


@pytest.fixture
def toy():
    """A computation registered at run time: f, then 'toy' = 2f + sum of df/dx_i."""
    record = register(Computation(
        "toy", "Twice f plus the sum of its partials (a toy).",
        blocks=lambda plan, outs: outs + [Block("toy")], kernel=_slope_sum, scalar=True,
        examples=('gradcli toy "x*y" --at x=2,y=3',)))
    yield record
    unregister("toy")


def test_a_computation_registered_at_run_time_is_a_library_value(toy) -> None:
    """evaluate(what=) accepts the new record and runs its kernel: for x*y at (2, 3),
    2·6 + (y + x) = 17."""
    result = gradcli.evaluate("x*y", "toy", at={"x": 2.0, "y": 3.0})
    assert list(result) == ["x", "y", "f", "toy"]
    assert float(result["toy"][0]) == 17.0
    assert "toy" in gradcli.evaluation.WHATS
    with pytest.raises(EvaluationError, match="toy needs a scalar-valued expression"):
        gradcli.evaluate("[x, y]", "toy", at={"x": 2.0, "y": 3.0})


def test_a_computation_registered_at_run_time_is_a_command_with_help(toy, cli) -> None:
    """The CLI builds a command from the record: its --help shows the record's help and
    examples, and it runs with the common where-options and writers."""
    status, out, _ = cli("toy", "--help")
    assert status == 0
    assert "Twice f plus the sum of its partials" in out
    assert 'gradcli toy "x*y" --at x=2,y=3' in out
    assert "--grid" in out and "--points" in out
    status, out, _ = cli("toy", "x^2", "--at", "x=3", "-f", "csv")
    assert status == 0 and out == "x,f,toy\n3.0,9.0,24.0\n"  # 2·9 + 2·3
    status, out, _ = cli("toy", "x*y", "--grid", "x=0:1:2", "--at", "y=2",
                         "-f", "csv")
    assert status == 0 and out.splitlines()[1:] == ["0.0,2.0,0.0,2.0", "1.0,2.0,2.0,7.0"]
    status, _, err = cli("toy", "x^2", "--at", "x=3", "--wrt", "x")
    assert status == 2 and "--wrt" in err  # the toy takes no wrt: typer refuses the flag
    status, out, _ = cli()
    assert " toy " in out  # listed among the commands


def test_unknown_computation_names_the_registered_ones() -> None:
    """An unknown what= is refused with the table's names, in registration order."""
    with pytest.raises(EvaluationError, match="unknown computation 'nope': choose one of "
                       "eval, grad, jacobian, vjp, jvp, hessian, div, curl, laplacian, hvp, "
                       "diff, taylor"):
        gradcli.evaluate("x", "nope", at={"x": 1.0})
    assert names()[:12] == ("eval", "grad", "jacobian", "vjp", "jvp", "hessian", "div",
                            "curl", "laplacian", "hvp", "diff", "taylor")


def test_check_options_and_tolerances_come_from_the_records() -> None:
    """--check is declared exactly for the computations whose record has a tolerance,
    with that tolerance."""
    with_check = {n for n in names()[:12]
                  if any(o.name == "check" for o in BY_NAME[n].options)}
    assert with_check == {"grad", "jacobian", "hessian"}
    assert check_tolerance("hessian", "float32") == computation("hessian").check["float32"] \
        == 1e-3
    assert check_tolerance("grad", "float64") == 1e-6


def test_parameters_a_computation_does_not_take_are_refused_naming_those_that_do() -> None:
    """order= is for diff and taylor only: the message lists the table's takers."""
    with pytest.raises(EvaluationError, match="order= is for diff, taylor, not grad"):
        gradcli.evaluate("x^2", "grad", at={"x": 1.0}, order=2)


# --- hessian over some variables -----------------------------------------------------------
# f = x²·y·z + z³ + sin(y):
#   d2f/dx2 = 2yz, d2f/dxdy = 2xz, d2f/dy2 = -sin(y), d2f/dxdz = 2xy, d2f/dz2 = 6z
F = "x^2*y*z + z^3 + sin(y)"


def test_hessian_wrt_is_the_block_over_the_named_variables_with_the_others_held(cli) -> None:
    """hessian --wrt x,y gives f and the 2×2 block, named as the full Hessian names them,
    equal to the hand derivation; z is held."""
    x, y, z = 1.5, 0.5, -2.0
    status, out, _ = cli("hessian", F, "--at", f"x={x},y={y},z={z}", "--wrt", "x,y",
                         "-f", "csv")
    assert status == 0
    header, row = out.splitlines()
    assert header == "x,y,z,f,d2f/dxdx,d2f/dxdy,d2f/dydx,d2f/dydy"
    got = [float(v) for v in row.split(",")[4:]]
    want = [2 * y * z, 2 * x * z, 2 * x * z, -np.sin(y)]
    assert got == pytest.approx(want, rel=1e-15, abs=1e-15)


def test_hessian_wrt_in_the_library_and_its_check(cli) -> None:
    """evaluate(what='hessian', wrt=) gives the same block; --check compares it with
    central differences of the gradient over the same variables."""
    result = gradcli.evaluate(F, "hessian", at={"x": 1.0, "y": 2.0, "z": 3.0}, wrt="z,x")
    assert sorted(result) == ["d2f/dxdx", "d2f/dxdz", "d2f/dzdx", "d2f/dzdz", "f", "x", "y",
                              "z"]
    assert float(result["d2f/dzdz"][0]) == 18.0  # 6z
    assert float(result["d2f/dzdx"][0]) == 4.0   # 2xy
    assert float(result["d2f/dxdx"][0]) == 12.0  # 2yz
    status, _, err = cli("hessian", F, "--at", "x=1,y=2,z=3", "--wrt", "x,z",
                         "--check")
    assert status == 0 and "check: central differences" in err


def _first_partial(plan, targets, outs, num):
    """Only df/d(first variable), by grad's reverse sweep."""
    return grad(plan, targets, outs, num)[:1]


@pytest.mark.parametrize("pairs", [None, lambda plan: [(0, 0, 0)]])
def test_check_reads_the_pairing_from_the_record(pairs, cli) -> None:
    """A record with ``check=`` whose derivative blocks are not one per (output, variable):
    with its ``pairs`` --check compares df/dx of x*y at (2, 3) (= 3) with differences and
    passes; without, it is refused naming the record, not an internal IndexError."""
    register(Computation(
        "firstpartial", "df/d(first variable).",
        blocks=lambda plan, outs: outs + [Block.template(["df/d", *plan.targets[0]])],
        kernel=_first_partial, scalar=True, check={"float64": 1e-6, "float32": 1e-4},
        pairs=pairs))
    try:
        status, out, err = cli("firstpartial", "x*y", "--at", "x=2,y=3", "--check", "-f", "csv")
    finally:
        unregister("firstpartial")
    if pairs is None:
        assert status == 2 and "firstpartial gives 1 derivative block(s)" in err
        assert "give its record pairs=" in err and "Traceback" not in err
    else:
        assert status == 0 and out == "x,y,f,df/dx\n2.0,3.0,6.0,3.0\n"
        assert "check: central differences differ by at most" in err


def test_formula_support_comes_from_the_records() -> None:
    """``--formula`` (and its -f formats) exist exactly where the record has ``formula``:
    vjp has it now; vᵀJ of [x*y, x^2] with v = (1, 2) is (y + 4x, x) (by hand)."""
    from gradcli.formulas.derivative_formulas import formula, whats
    from gradcli.plan.computations import TABLE

    assert set(whats()) == {n for n, r in TABLE.items() if r.formula is not None}
    for name in names():
        options = {o.name for o in BY_NAME[name].options}
        assert ("formula" in options) == (computation(name).formula is not None), name
    assert formula("[x*y, x^2]", "vjp", vector=[1, 2]) == {"vjp/dx": "4*x + y",
                                                           "vjp/dy": "x"}
