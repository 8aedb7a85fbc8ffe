"""``--formula`` on the command line: the issue's example outputs exactly, -f json and -f
latex, -o, the program form, and one-line errors (exit 2) for what has no formula."""

from __future__ import annotations

import json

import pytest


def test_the_issues_examples_print_exactly(cli) -> None:  # noqa: ANN001
    """grad's formulas, one 'name = formula' per line, as the issue shows them."""
    assert cli("grad", "x^2 + 3x + 1", "--formula") == (0, "df/dx = 2*x + 3\n", "")
    assert cli("grad", "sin(x)*cos(y)", "--formula") == (
        0, "df/dx = cos(x)*cos(y)\ndf/dy = -sin(x)*sin(y)\n", "")
    assert cli("grad", "m = x^2; y = m + x; p = 4*y", "--formula", "program") == (
        0, "m = x^2\ny = m + x\np = 4*y\np_bar = 1\ny_bar = 4*p_bar\nm_bar = y_bar\n"
        "x_bar = y_bar + 2*x*m_bar\n", "")


def test_json_is_one_flat_object_and_latex_is_latex(cli) -> None:  # noqa: ANN001
    """-f json: {column: formula}; -f latex: partial-derivative fractions."""
    status, out, _ = cli("grad", "sin(x)*cos(y)", "--formula", "-f", "json")
    assert status == 0
    assert json.loads(out) == {"df/dx": "cos(x)*cos(y)", "df/dy": "-sin(x)*sin(y)"}
    status, out, _ = cli("grad", "sin(x)*cos(y)", "--formula", "-f", "latex")
    assert out.splitlines()[0] == (r"\frac{\partial f}{\partial x} = \cos\left(x\right) "
                                   r"\cos\left(y\right)")


def test_every_listed_command_takes_formula(cli) -> None:  # noqa: ANN001
    """Names like the columns; --wrt sets the order; vector lengths come from --at."""
    cases = [
        (["jacobian", "[-x^3, 5x]"], "df[0]/dx = -3*x^2\ndf[1]/dx = 5\n"),
        (["hessian", "x^2*y + y^3"], "d2f/dxdx = 2*y\nd2f/dxdy = 2*x\nd2f/dydx = 2*x\n"
                                     "d2f/dydy = 6*y\n"),
        (["diff", "sin(x)*exp(y)", "--wrt", "x,x,y"], "d3f/dx2dy = -exp(y)*sin(x)\n"),
        (["laplacian", "x^2 - y^2 + x*y^3"], "laplacian = 6*x*y\n"),
        (["div", "[x*y, x-y, z^2]"], "div = y + 2*z - 1\n"),
        (["curl", "[-y, x]"], "curl = 2\n"),
        (["jvp", "x*y", "--direction", "x=3,y=4", "--unit-vector"], "jvp = 4*x/5 + 3*y/5\n"),
        (["hvp", "x^2*y + y^3", "--direction", "x=1,y=0"], "hvp/dx = 2*y\nhvp/dy = 2*x\n"),
        (["grad", "x*y^2", "--wrt", "y,x"], "df/dy = 2*x*y\ndf/dx = y^2\n"),
        (["grad", "logsumexp(x)", "--at", "x=[1,2,3]"], "df/dx = softmax(x)\n"),
        (["grad", "z = w*x + b; p = sigmoid(z); p*t", "--wrt", "w"],
         "z = w*x + b\np = sigmoid(z)\ndf/dw = p*t*x*(1 - p)\n"),
    ]
    for argv, expected in cases:
        assert cli(argv[0], argv[1], *argv[2:], "--formula") == (0, expected, ""), argv


def test_output_file_is_written(cli, tmp_path) -> None:  # noqa: ANN001
    """-o writes the lines (or JSON, by extension) to the file and nothing to stdout."""
    path = tmp_path / "d.json"
    assert cli("grad", "x^3", "--formula", "-o", str(path)) == (0, "", "")
    assert json.loads(path.read_text()) == {"df/dx": "3*x^2"}


@pytest.mark.parametrize(("argv", "message"), [
    (["grad", "trace(A)", "--formula", "--at", "A=[[1,2],[3,4]]"], "no formula yet for trace"),
    (["grad", "x^2", "--formula", "--grid", "x=0:1:3"], "--grid concerns values"),
    (["grad", "x^2", "--formula", "--wrt", "q"], "--wrt names 'q'"),
    (["hessian", "x^2", "--formula", "program"], "--formula program is the backward program"),
    (["grad", "[x, y]", "--formula"], "grad needs a scalar formula"),
    (["grad", "x", "-f", "latex", "--at", "x=1"], "-f latex writes formulas: add --formula"),
    # a command without --formula does not offer the formulas' formats
    (["eval", "x", "-f", "latex", "--at", "x=1"], "got 'latex'"),
    (["grad", "x^2", "--formula", "-f", "csv"], "--formula prints text, json or latex"),
    (["jvp", "x*y", "--formula"], "Missing option '--direction'"),
    (["curl", "[x, y, z, x]", "--formula"], "curl needs a vector field of 2 or 3"),
])
def test_what_has_no_formula_is_one_line_exit_2(cli, argv: list[str],  # noqa: ANN001
                                                message: str) -> None:
    """Bad requests: one line on stderr naming the problem, exit 2, nothing on stdout."""
    status, out, err = cli(*argv)
    assert status == 2 and out == "", (status, out, err)
    assert message in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("option", [["--precision", "10"], ["--dtype", "float32"],
                                    ["--max-points", "5"], ["--check"], ["--strict"]])
def test_options_about_values_are_refused_not_ignored(cli, option) -> None:  # noqa: ANN001
    """An option that only changes values is an error beside --formula, naming it."""
    status, out, err = cli("grad", "x^2", "--formula", *option)
    assert status == 2 and out == ""
    assert f"{option[0]} concerns values" in err
