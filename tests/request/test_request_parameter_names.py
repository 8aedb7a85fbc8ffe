"""The library's messages name its own parameters; the CLI shows the same message with
the option it declares for each parameter. Plain numbers in specs are read without
compiling a program."""

from __future__ import annotations

import pickle

import pytest

import gradcli
from gradcli.cli.main import main
from gradcli.errors import EvaluationError
from gradcli.lang import ExpressionError
from gradcli.lang.spec_text import parse_grid
from gradcli.request import binding as binding_module


def cli_error(capsys, *argv: str) -> str:
    status = main(list(argv))
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    return err


def test_a_grid_count_names_grid_x_in_the_library_and_the_flag_on_the_command_line(capsys):
    """grid['x'] for the library, --grid 'x=0:1:0' for the command line, one message."""
    with pytest.raises(EvaluationError) as got:
        parse_grid("x=0:1:0")
    assert str(got.value) == "grid['x']: the count must be a whole number >= 1, got 0"
    err = cli_error(capsys, "grad", "x^2", "--grid", "x=0:1:0")
    assert err == ("gradcli: error: --grid 'x=0:1:0': the count must be a whole number >= 1,"
                   " got 0\n")


def test_a_start_grid_spec_names_from_grid_on_the_command_line(capsys):
    """The same spec parser, given for descend's start lattice, names --from-grid."""
    err = cli_error(capsys, "descend", "x^2", "--from-grid", "x=0:1:0")
    assert "--from-grid 'x=0:1:0': the count must be a whole number >= 1" in err


def test_limits_name_max_points_in_each_language(capsys):
    """max_points for the library, --max-points for the command line."""
    with pytest.raises(EvaluationError, match=r"raise it with max_points$"):
        gradcli.evaluate("x", grid={"x": (0, 1, 11)}, max_points=10)
    err = cli_error(capsys, "eval", "x", "--grid", "x=0:1:11", "--max-points", "10")
    assert err.rstrip().endswith("raise it with --max-points")


def test_examples_in_messages_are_python_for_the_library_and_typed_for_the_cli(capsys):
    """vjp without v: vector=[1, 0] in Python, --vector "1,0" on the command line; an
    unbound variable's hint says at={..., 'y': VALUE} or --at "...,y=VALUE"."""
    with pytest.raises(EvaluationError, match=r"shaped like f: vector=\[1, 0\]$"):
        gradcli.evaluate("x", "vjp", at={"x": 1.0})
    with pytest.raises(ExpressionError) as got:
        gradcli.evaluate("x+y", at={"x": 1.0})
    assert got.value.hint == "give it a value with at={..., 'y': VALUE} or a y column in " \
                             "points={...}"
    err = cli_error(capsys, "eval", "x+y", "--at", "x=1")
    assert 'give it a value with --at "...,y=VALUE" or a y column in --points' in err
    with pytest.raises(EvaluationError, match=r"e\.g\. wrt='x' order=2 or wrt='x,y'"):
        gradcli.evaluate("x*y", "diff", at={"x": 1.0, "y": 2.0})
    err = cli_error(capsys, "diff", "x*y", "--at", "x=1,y=2")
    assert "e.g. --wrt x --order 2 or --wrt x,y" in err


def test_an_error_keeps_its_parameter_references_through_pickling():
    """A Dask worker's EvaluationError reaches the CLI with its references intact."""
    try:
        parse_grid("x=0:1:0")
    except EvaluationError as exc:
        again = pickle.loads(pickle.dumps(exc))
    assert str(again) == "grid['x']: the count must be a whole number >= 1, got 0"
    assert again.render(lambda p, k, t, py: f"<{p} {t}>").startswith("<grid 'x=0:1:0'>")


def test_plain_numbers_in_specs_are_read_without_the_compiler(monkeypatch):
    """0:1:100 and -1.5e3 never reach the compiler; 2pi still goes through it."""
    import gradcli.lang.compile as compile_module

    def refuse(*args, **kwargs):
        raise AssertionError("compiled a plain number")

    monkeypatch.setattr(compile_module, "compile_expression", refuse)
    assert parse_grid("x=0:1:100") == ("x", (0.0, 1.0, 100))
    assert parse_grid("x=-1.5e3:.5:7") == ("x", (-1500.0, 0.5, 7))
    assert binding_module.parse_constant(" 4. ", "x") == 4.0
    with pytest.raises(AssertionError, match="compiled a plain number"):
        parse_grid("x=0:2pi:100")
    monkeypatch.undo()
    assert parse_grid("x=0:2pi:3")[1][1] == pytest.approx(6.283185307179586, rel=1e-16)
    with pytest.raises(EvaluationError, match="number too large"):
        binding_module.parse_constant("1e999", "x")  # overflow: the parser's message
