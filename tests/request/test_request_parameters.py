"""The parameter table: a parameter declared once is a keyword of ``gradcli.evaluate``,
a field of the request and its history line, an option of the CLI (with its help), and
named by the messages that check it. A directional derivative ``dirderiv --v`` made at
run time is the proof: one parameter, one record with its kernel, nothing else."""

from __future__ import annotations

import pytest

import gradcli
from gradcli.errors import EvaluationError
from gradcli.plan.computations import Computation, register, unregister
from gradcli.plan.kernels import blocks_jvp, jvp
from gradcli.request import parameters as P


def _dirderiv(plan, targets, outs, num):
    """The kernel: forward mode along ``v`` (jvp's sweep, seeded from the new parameter)."""
    plan.params["direction"] = plan.params["v"]
    return jvp(plan, targets, outs, num)


@pytest.fixture
def dirderiv():
    """``v`` (a point, like direction) and ``dirderiv`` taking it, removed afterwards."""
    P.declare(P.Parameter(
        "v", "point", "The direction of the derivative.", ("--v",), "--v x=1,y=0",
        metavar="V", required=True, typed='"x=1"', python='{"x": 1}',
        read=P.TABLE["direction"].read, check=P._check_point("v")))
    register(Computation(
        "dirderiv", "The derivative along v: f, then jvp.", blocks=blocks_jvp,
        kernel=_dirderiv, parameters=("v",)))
    yield
    unregister("dirderiv")
    del P.TABLE["v"]


def test_a_new_parameter_is_a_library_keyword(dirderiv) -> None:
    """d/dv of x²y at (1, 2) along v = (1, 0) is 2xy = 4 (by hand); along (0, 1) it is
    x² = 1."""
    out = gradcli.evaluate("x^2*y", "dirderiv", at={"x": 1.0, "y": 2.0}, v={"x": 1})
    assert float(out["jvp"][0]) == 4.0
    out = gradcli.evaluate("x^2*y", "dirderiv", at={"x": 1.0, "y": 2.0}, v={"y": 1})
    assert float(out["jvp"][0]) == 1.0
    assert "v={'y': 1}" in out.origin.call  # the history line names it


def test_messages_name_the_parameter_they_check(dirderiv) -> None:
    """The missing-parameter message and the check name ``v`` (not a hard-coded
    'direction'); a computation that does not take it says which do."""
    with pytest.raises(EvaluationError, match=r"dirderiv needs v: v=\{\"x\": 1\}"):
        gradcli.evaluate("x^2*y", "dirderiv", at={"x": 1.0, "y": 2.0})
    with pytest.raises(EvaluationError, match="the v names 'z'"):
        gradcli.evaluate("x^2*y", "dirderiv", at={"x": 1.0, "y": 2.0}, v={"z": 1})
    with pytest.raises(EvaluationError, match="v= is for dirderiv, not grad"):
        gradcli.evaluate("x^2*y", "grad", at={"x": 1.0, "y": 2.0}, v={"x": 1})
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        gradcli.evaluate("x", "grad", at={"x": 1.0}, nope=1)


def test_a_new_parameter_is_a_cli_option(dirderiv, cli) -> None:
    """The command gets ``--v`` from the declaration: help, reading the text, and the
    message when it is missing names the flag."""
    status, out, _ = cli("dirderiv", "--help")
    assert status == 0 and "--v" in out and "The direction of the derivative." in out
    status, out, _ = cli("dirderiv", "x^2*y", "--at", "x=1,y=2", "--v", "x=1", "-f", "csv")
    assert status == 0
    assert out.splitlines()[1].split(",")[-1] == "4.0"
    status, _, err = cli("dirderiv", "x^2*y", "--at", "x=1,y=2", "--v", "z=1")
    assert status == 2 and "the --v names 'z'" in err


def test_every_computation_parameter_is_declared() -> None:
    """Each record names only declared parameters, and a record with an undeclared one is
    refused at registration."""
    from gradcli.plan.computations import TABLE, names

    names()
    assert {p for r in TABLE.values() for p in r.parameters} <= set(P.TABLE)
    with pytest.raises(ValueError, match="unknown parameter 'w'"):
        register(Computation("bad", "bad", blocks=lambda plan, outs: outs, parameters=("w",)))


def test_an_array_value_is_a_given_parameter() -> None:
    """An array parameter is given without comparing it (numpy's truth value of an array
    is ambiguous): vᵀJ of x² at x = (1, 2, 3) with v = (1, 0, 0) is (2, 0, 0) (by hand)."""
    import numpy as np

    out = gradcli.evaluate("x^2", "vjp", at={"x": [1.0, 2.0, 3.0]},
                           vector=np.array([1.0, 0.0, 0.0]))
    assert out["vjp/dx"].tolist() == [[2.0, 0.0, 0.0]]
    assert "vector=" in out.origin.call
