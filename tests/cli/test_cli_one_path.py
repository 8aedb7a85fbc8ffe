"""The one command-line path: each command line gives exactly what the library gives for
the same request, whatever spelling of the options it uses; errors are one message and
exit 2; a run loads only what its command needs."""

from __future__ import annotations

import io

import numpy as np
import pytest

import gradcli
from gradcli.cli.main import main
from gradcli.output import write_csv


def library_csv(expression: str, what: str, points: list[dict]) -> str:
    """What the library gives for the same request (the Result whose blocks
    gradcli.evaluate returns), written by the CSV writer."""
    buf = io.StringIO()
    write_csv(buf, gradcli.evaluation.prepare(expression, what, at=points).run())
    return buf.getvalue()


@pytest.mark.parametrize("argv, what, expression, points", [
    (["grad", "x^2 + 3x + 1", "--at", "x=4"], "grad", "x^2 + 3x + 1", [{"x": 4}]),
    (["grad", "x^2 + 3x + 1", "-a", "x=4", "--at=x=-2"], "grad", "x^2 + 3x + 1",
     [{"x": 4}, {"x": -2}]),
    (["eval", "[x*y, x-y]", "--at", "x=1,y=2", "--at", "x=3,y=4"], "eval", "[x*y, x-y]",
     [{"x": 1, "y": 2}, {"x": 3, "y": 4}]),
    (["jacobian", "[-x^3, 5x]", "--at", "x=0", "--at", "x=1", "--at", "x=2"], "jacobian",
     "[-x^3, 5x]", [{"x": 0}, {"x": 1}, {"x": 2}]),
    (["jacobian", "[sum(x), sum(x^2)]", "--at", "x=[0,1,2,3]"], "jacobian",
     "[sum(x), sum(x^2)]", [{"x": [0, 1, 2, 3]}]),
    (["hessian", "x^2*y + y^3", "--at", "x=1,y=2"], "hessian", "x^2*y + y^3",
     [{"x": 1, "y": 2}]),
    (["grad", "x^2", "--at", "x=3", "--format", "csv", "-q"], "grad", "x^2", [{"x": 3}]),
    (["grad", "-x^2", "--at", "x=3"], "grad", "-x^2", [{"x": 3}]),
    (["grad", "--at", "x=3", "--", "-x^2"], "grad", "-x^2", [{"x": 3}]),
])
def test_command_line_gives_what_the_library_gives(cli, argv, what, expression,
                                                   points) -> None:
    status, out, err = cli(argv)
    assert (status, err) == (0, "")
    assert out == library_csv(expression, what, points)


def test_non_finite_result_is_written_and_warned_once(cli) -> None:
    status, out, err = cli(["grad", "1/x", "--at", "x=0"])
    assert status == 0
    assert out == library_csv("1/x", "grad", [{"x": 0}])
    assert err == "warning: 2 non-finite result values (nan or inf) in the output\n"


@pytest.mark.parametrize("argv, needle", [
    (["grad", "[x, y]", "--at", "x=1,y=2"], "jacobian"),          # vector-valued
    (["grad", "sinn(x)", "--at", "x=1"], "did you mean 'sin'?"),  # caret message
    (["grad", "x*y", "--at", "x=1"], "'y' is not bound"),
    (["grad", "x", "--at", "x=1+"], "--at x"),                    # bad point value
    (["grad", "x", "--at", "pi=1"], "constant"),
    (["grad", "x", "--at", "x=1", "--at", "y=2"], "every point must bind"),
    (["grad", "__import__('os')", "--at", "x=1"], "strings"),
    (["grad", "x", "--at", "\x1b[2J=1"], "not a variable name"),
    (["grad", "x"], "no points given"),
    (["grad", "x", "--at"], "requires an argument"),
    (["vjp", "x", "--at", "x=1"], "--vector"),
    (["grad", "x", "--at", "x=1", "--frobnicate"], "--frobnicate"),
])
def test_errors_are_one_message_and_exit_2(cli, argv, needle) -> None:
    status, out, err = cli(argv)
    assert status == 2 and out == ""
    assert needle in err
    assert "Traceback" not in err and "\x1b" not in err
    assert len(err.splitlines()) in (1, 3)  # one line, or expression, caret, message


def test_only_the_invoked_command_is_built(monkeypatch) -> None:
    from gradcli.cli import app

    built: list[str | None] = []
    real = app.build
    monkeypatch.setattr(app, "build", lambda only=None: built.append(only) or real(only))
    assert main(["grad", "x", "--at", "x=1", "-q"]) == 0  # a plain line: no typer app at all
    assert main(["grad", "x", "--at", "x=1", "--format", "nope"]) == 2  # typer reads it
    assert main(["--version"]) == 0
    assert built == ["grad", None]


# --- plot: the command line draws what the library draws ------------------------------------

@pytest.mark.parametrize("argv, grid", [
    (["plot", "sin(x)*cos(y)", "--grid", "x=0:2pi:30", "--grid", "y=0:2pi:20"],
     {"x": (0, 2 * np.pi, 30), "y": (0, 2 * np.pi, 20)}),
    (["plot", "sin(x)", "-g", "x=0:2pi:50"], {"x": (0, 2 * np.pi, 50)}),
    (["plot", "x^2 - y^2"], {"x": (-5.0, 5.0, 101), "y": (-5.0, 5.0, 101)}),
    (["plot", "[-y, x]", "--grid=x=-2:2:9", "--grid", "y=-2:2:9"],
     {"x": (-2, 2, 9), "y": (-2, 2, 9)}),
])
def test_plot_writes_the_library_picture(cli, tmp_path, argv, grid) -> None:
    from gradcli.plot import plot_expression

    status, _, _ = cli([*argv, "-o", str(tmp_path / "cli.png")])
    assert status == 0
    plot_expression(argv[1], grid, str(tmp_path / "lib.png"))
    assert (tmp_path / "cli.png").read_bytes() == (tmp_path / "lib.png").read_bytes()


@pytest.mark.parametrize("argv, needle", [
    (["plot", "x*y*z", "--grid", "x=0:1:3", "--grid", "y=0:1:3", "--grid", "z=0:1:3"],
     "--slice z=VALUE"),                                                # 3-D to a PNG
    (["plot", "sinn(x)", "--grid", "x=0:1:5"], "sinn"),
    (["plot", "x", "--grid", "x=0:1:5"], "needs -o FILE"),              # no picture named
    (["plot", "x", "--grid", "x=0:1:5", "--arrows", "sideways"], "--arrows"),
])
def test_plot_errors_leave_no_file(cli, tmp_path, monkeypatch, argv, needle) -> None:
    monkeypatch.chdir(tmp_path)
    if needle != "needs -o FILE":
        argv = [*argv, "-o", "p.png"]
    status, out, err = cli(argv)
    assert status == 2 and needle in err
    assert list(tmp_path.iterdir()) == []


DIRECT_LINES = [
    ["grad", "x^2+3*x+1", "--at", "x=4", "--format", "csv"],
    ["grad", "x^2 + y^2", "--at", "x=3,y=4", "--norm", "-f", "json"],
    ["jacobian", "[x*y, x-y]", "--grid", "x=0:1:3", "--grid", "y=0:1:2", "-q"],
    ["hessian", "x^2*y + y^3", "--at", "x=1,y=2", "--check", "--precision", "4"],
    ["hessian", "x^2*y*z", "--at", "x=1,y=2,z=3", "--wrt", "x", "--wrt", "z"],
    ["vjp", "[x^2, x*y]", "--vector", "1,0", "--at", "x=1,y=2"],
    ["jvp", "x*y", "--direction", "x=3,y=4", "--unit-vector", "--at", "x=1,y=2"],
    ["diff", "sin(x)*exp(y)", "--wrt", "x", "--order", "3", "--at", "x=1,y=0"],
    ["taylor", "cos(x)", "--at", "x=0", "--order=4", "--polynomial"],
    ["grad", "-a*x", "--at", "a=1,x=2"],
    ["grad", "x^2", "--grid", "--max-points", "1e3", "-q"],
    ["eval", "x", "--at", "x=1", "--at", "x=2", "--dtype", "FLOAT32"],
    # refused: typer and click say why, whichever path is tried first
    ["grad", "x", "--at", "x=1", "--format", "nope"],
    ["grad", "x", "--at", "x=1", "--precision", "0"],
    ["grad", "x", "--at", "x=1", "--bogus"],
    ["grad", "x", "y", "--at", "x=1"],
    ["grad", "x", "--at"],
    ["vjp", "x", "--at", "x=1"],
    ["grad", "x", "--points", "a.csv", "--points", "b.csv"],
    ["grad", "x", "--at", "x=1", "--precision", "3", "--precision", "4"],
    ["grad", "x", "--at", "x=1", "-qf", "csv"],
    ["grad", "x", "--at", "x=1", "--strict=yes"],
]


@pytest.mark.parametrize("argv", DIRECT_LINES, ids=" ".join)
def test_a_line_read_without_typer_runs_exactly_as_typer_reads_it(capsys, cli, monkeypatch, argv):
    """A numeric command line read directly from the declaration (no typer app) gives
    the status, output and messages the typer application gives for it."""
    from gradcli.cli import direct

    direct_run = (main(list(argv)), *capsys.readouterr())
    monkeypatch.setattr(direct, "read", lambda command, words: None)
    typer_run = (main(list(argv)), *capsys.readouterr())
    assert direct_run == typer_run
