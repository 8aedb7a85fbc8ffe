"""The one-point fast path (``COMMAND EXPR --at POINT...`` without typer) must be the typer
path exactly: same stdout, same stderr, same exit status, for good and bad input alike."""

from __future__ import annotations

import subprocess
import sys

import pytest

from gradcli.cli import fast
from gradcli.cli.main import main


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("argv", [
    ["grad", "x^2 + 3x + 1", "--at", "x=4"],
    ["grad", "x^2 + 3x + 1", "-a", "x=4", "--at=x=-2"],
    ["eval", "[x*y, x-y]", "--at", "x=1,y=2", "--at", "x=3,y=4"],
    ["jacobian", "[-x^3, 5x]", "--at", "x=0", "--at", "x=1", "--at", "x=2"],
    ["jacobian", "[sum(x), sum(x^2)]", "--at", "x=[0,1,2,3]"],
    ["hessian", "x^2*y + y^3", "--at", "x=1,y=2"],
    ["grad", "1/x", "--at", "x=0"],                  # non-finite: the warning line
    ["grad", "[x, y]", "--at", "x=1,y=2"],           # vector-valued: usage error
    ["grad", "sinn(x)", "--at", "x=1"],              # unknown function: caret message
    ["grad", "x*y", "--at", "x=1"],                  # unbound variable
    ["grad", "x", "--at", "x=1+"],                   # bad point value
    ["grad", "x", "--at", "pi=1"],                   # a constant's name
    ["grad", "x", "--at", "x=1", "--at", "y=2"],     # points binding different names
    ["grad", "__import__('os')", "--at", "x=1"],     # hostile text
    ["grad", "x", "--at", "\x1b[2J=1"],              # control characters
])
def test_fast_path_equals_the_typer_path(capsys, monkeypatch, argv) -> None:
    assert fast.fast_points(argv) is not None, "this command line should take the fast path"
    fast_result = run(capsys, argv)
    monkeypatch.setattr(fast, "fast_points", lambda args: None)
    assert run(capsys, argv) == fast_result


@pytest.mark.parametrize("argv", [
    ["grad", "x"],                                   # no points
    ["grad", "x", "--at"],                           # missing value
    ["grad", "-x^2", "--at", "x=3"],                 # expression starting with '-'
    ["grad", "x", "--at", "-1"],                     # value starting with '-'
    ["grad", "x", "--at", "x=1", "-q"],              # any other option
    ["grad", "x", "--at", "x=1", "--help"],
    ["vjp", "x", "--at", "x=1"],                     # needs --vector
    ["plot", "x", "--at", "x=1"],
    ["grad", "x", "--", "--at", "x=1"],
    ["grad", "x", "--at=", "x=1"],
])
def test_everything_else_goes_through_typer(argv) -> None:
    assert fast.fast_points(argv) is None


def test_one_point_grad_loads_neither_typer_nor_click() -> None:
    code = ("import sys\n"
            "from gradcli.cli.main import main\n"
            "status = main(['grad', 'x^2 + 3x + 1', '--at', 'x=4'])\n"
            "print(status, sorted({m.split('.')[0] for m in sys.modules} & "
            "{'typer', 'click', 'rich', 'matplotlib'}))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["x,f,df/dx", "4.0,29.0,11.0", "0 []"]


@pytest.mark.parametrize("argv", [
    ["plot", "sin(x)*cos(y)", "--grid", "x=0:2pi:30", "--grid", "y=0:2pi:20", "-o", "P"],
    ["plot", "sin(x)", "-g", "x=0:2pi:50", "--output=P"],
    ["plot", "x^2 - y^2", "-o", "P"],                             # default grid, with its note
    ["plot", "[-y, x]", "--grid=x=-2:2:9", "--grid", "y=-2:2:9", "-o", "P"],
    ["plot", "x*y*z", "--grid", "x=0:1:3", "--grid", "y=0:1:3", "--grid", "z=0:1:3",
     "-o", "P"],                                                  # three variables: error
    ["plot", "sinn(x)", "--grid", "x=0:1:5", "-o", "P"],          # unknown function
    ["plot", "x", "--grid", "x=0:1:5", "-o", "nowhere/P"],        # missing directory
    ["plot", "x", "--grid", "x=0:1:5", "-o", "P.bmp"],            # unknown extension
])
def test_fast_plot_equals_the_typer_plot(capsys, monkeypatch, tmp_path, argv) -> None:
    monkeypatch.chdir(tmp_path)
    argv = [a.replace("P", "p.png") if a.endswith("P") else a.replace("P.bmp", "p.bmp")
            for a in argv]
    assert fast.fast_plot(argv) is not None, "this command line should take the fast path"
    fast_result = run(capsys, argv)
    fast_files = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for p in tmp_path.iterdir():
        p.unlink()
    monkeypatch.setattr(fast, "fast_plot", lambda args: None)
    assert run(capsys, argv) == fast_result
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == fast_files


@pytest.mark.parametrize("argv", [
    ["plot", "x", "--grid", "x=0:1:5"],                          # no output: typer's error
    ["plot", "x", "--grid", "-o", "p.png"],                      # bare --grid
    ["plot", "x", "--grid", "x=0:1:5", "-o", "a.png", "-o", "b.png"],
    ["plot", "x", "--grid", "x=0:1:5", "-o", "p.png", "--stream"],
    ["plot", "-x", "--grid", "x=0:1:5", "-o", "p.png"],
])
def test_other_plot_command_lines_go_through_typer(argv) -> None:
    assert fast.fast_plot(argv) is None


def test_fast_path_defaults_are_the_typer_defaults() -> None:
    """The fast path fills options from defaults.py / plot_run.py; typer declares its own
    in the command signatures. They must agree, option by option."""
    import inspect

    from gradcli.cli.app import app
    from gradcli.cli.defaults import NUMERIC_DEFAULTS
    from gradcli.cli.plot_run import PLOT_DEFAULTS

    commands = {c.name or c.callback.__name__: c.callback for c in app.registered_commands}
    for name in fast.FAST_COMMANDS:
        params = inspect.signature(commands[name]).parameters
        for option, default in NUMERIC_DEFAULTS.items():
            assert params[option].default == default, (name, option)
        if "check_tol" in params:  # the Request's own default is not used: check is off
            assert params["check"].default is False
    params = inspect.signature(commands["plot"]).parameters
    assert {n: p.default for n, p in params.items()
            if n not in ("expression", "output", "grid")} == PLOT_DEFAULTS
