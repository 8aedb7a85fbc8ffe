"""Names given a value that the formula does not use: a warning on every command, and
part of the message when a variable of the formula is left unbound."""

from __future__ import annotations

import warnings

import pytest

import gradcli
from gradcli.lang import ExpressionWarning


def test_a_start_for_a_name_the_formula_lacks_is_named_beside_the_unbound_variable(cli):
    """descend "x^2" --from y=1 says x is unbound and that y is not a variable."""
    status, out, err = cli("descend", "x^2", "--from", "y=1")
    assert status == 2 and out == ""
    assert "variable 'x' is not bound" in err
    assert "'y' is given a value but is not a variable of the formula" in err


def test_the_same_for_the_evaluate_commands(cli):
    status, _, err = cli("grad", "x^2", "--at", "y=1")
    assert status == 2
    assert "variable 'x' is not bound" in err
    assert "'y' is given a value but is not a variable of the formula" in err


@pytest.mark.parametrize("argv", [
    ["grad", "x^2", "--at", "x=1,dummy=2"],
    ["eval", "x^2", "--grid", "x=0:1:3", "--grid", "dummy=1"],
    ["critical", "x^2 + y^2", "--grid", "x=-1:1:5", "--grid", "y=-1:1:5", "--at", "dummy=1"],
    ["descend", "x^2", "--from", "x=1", "--at", "dummy=1", "--steps", "2"],
    ["flow", "[-x]", "--from", "x=1", "--at", "dummy=2", "--t", "0:1:3"],
])
def test_a_bound_name_the_formula_does_not_use_is_warned_about(cli, argv):
    """Every command runs, with exactly one warning line naming the unused name;
    -q silences it."""
    status, out, err = cli(*argv)
    assert status == 0 and out
    assert err.count("warning: 'dummy' is given a value but is not a variable of the "
                     "formula\n") == 1, err
    assert cli(*argv, "-q")[2] == ""


def test_the_library_warns_with_an_expression_warning():
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always", ExpressionWarning)
        r = gradcli.evaluate("x^2", "grad", at={"x": 3.0, "a": 1.0, "b": 2.0})
    assert r["df/dx"].tolist() == [6.0]
    assert [str(w.message) for w in seen] == [
        "'a', 'b' are given values but are not variables of the formula"]


def test_no_warning_when_every_name_is_used(cli):
    status, _, err = cli("grad", "x*y", "--at", "x=1,y=2")
    assert (status, err) == (0, "")
