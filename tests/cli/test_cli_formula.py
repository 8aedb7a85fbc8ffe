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


#: shared steps: the closed form repeats each step's derivative inside the next
SHARED = ("a = sin(x)*cos(x); b = a*a + a; c = b*b + b; d = c*c + c; g = d*d + d; "
          "h = g*g + g; h*h + h")


@pytest.mark.parametrize("extra", [[], ["-f", "json"], ["-f", "latex"], ["-o", "d.txt"],
                                   ["-o", "d.json"], ["-o", "d.tex"]])
def test_a_closed_form_too_long_is_exit_1_and_no_output(cli, tmp_path, monkeypatch,  # noqa: ANN001
                                                        extra: list[str]) -> None:
    """Not a result: one line on stderr naming the column and pointing to the program
    form, exit 1, nothing on stdout and no file (before: exit 0, and the sentence as the
    formula's text in the file, or null in JSON)."""
    monkeypatch.chdir(tmp_path)
    status, out, err = cli("grad", SHARED, "--formula", *extra)
    assert (status, out) == (1, ""), (status, out, err)
    assert err.startswith("gradcli: error: df/dx: the closed form is ") and err.endswith(
        "much longer than the backward program: --formula program prints it\n"), err
    assert list(tmp_path.iterdir()) == []
    status, out, _ = cli("grad", SHARED, "--formula", "program")
    assert status == 0 and "x_bar = " in out


def test_too_long_columns_are_counted_in_the_one_line(cli) -> None:  # noqa: ANN001
    """Every column too long: the first is named, the others counted."""
    status, out, err = cli("hessian", SHARED.replace("cos(x)", "cos(y)"), "--formula")
    assert (status, out) == (1, "")
    assert err.startswith("gradcli: error: d2f/dxdx (and 3 more): the closed form is "), err
    assert len(err.splitlines()) == 1


def test_memory_sets_the_formulas_budget(cli) -> None:  # noqa: ANN001
    """--memory applies to --formula: past its steps, exit 1, one line naming it; a bad
    size is exit 2 as for values."""
    nested = "f0(a) = a*a + a;" + "".join(f" f{i}(a) = f{i - 1}(f{i - 1}(a));"
                                         for i in range(1, 13)) + " f12(x)"
    status, out, err = cli("grad", nested, "--formula", "--memory", "4M")
    assert (status, out) == (1, "")
    assert err == ("gradcli: error: building the formulas takes more than 32,768 steps, the "
                   "limit of the memory budget (4 MiB, --memory): ask for fewer derivatives, "
                   "or name shared parts as steps\n")
    assert cli("grad", "x^3", "--formula", "--memory", "4M") == (0, "df/dx = 3*x^2\n", "")
    status, _, err = cli("grad", "x^3", "--formula", "--memory", "2X")
    assert status == 2 and "memory '2X'" in err


def test_hessian_formulas_take_wrt_as_the_values_do(cli) -> None:  # noqa: ANN001
    """hessian --wrt x,y: the four columns the values have (before: all nine)."""
    assert cli("hessian", "x*y*z", "--wrt", "x,y", "--formula") == (
        0, "d2f/dxdx = 0\nd2f/dxdy = z\nd2f/dydx = z\nd2f/dydy = 0\n", "")
    status, out, _ = cli("hessian", "x*y*z", "--wrt", "x,y", "--at", "x=1,y=2,z=3")
    assert status == 0 and out.splitlines()[0].endswith(
        "d2f/dxdx,d2f/dxdy,d2f/dydx,d2f/dydy")


def test_a_formula_never_prints_nan(cli) -> None:  # noqa: ANN001
    """A constant that folds to nan prints as (0/0), which eval reads as nan (``nan``
    would be read as a variable); inf prints as the constant inf."""
    assert cli("grad", "x*(0*(1/0)) + y/0", "--formula") == (
        0, "df/dx = (0/0)\ndf/dy = inf\n", "")
    status, out, err = cli("eval", "(0/0) + 0*x", "--at", "x=1")
    assert status == 0 and out == "x,f\n1.0,nan\n"


def test_a_formula_nested_past_the_parsers_depth_is_not_printed(cli) -> None:  # noqa: ANN001
    """A step of 256 nested sin (a function doubled 8 times) prints 256 levels deep, which
    the language does not read back (200 levels): one line, exit 1; 128 levels print, in
    LaTeX too (before: it printed, and -f latex was an internal RecursionError)."""
    defs = "f0(a) = sin(a);" + "".join(f" f{i}(a) = f{i - 1}(f{i - 1}(a));"
                                       for i in range(1, 9))
    status, out, err = cli("grad", f"{defs} m = f8(x); m*y", "--formula", "--wrt", "y")
    assert (status, out) == (1, "")
    assert err == ("gradcli: error: m: the closed form nests deeper than the 200 levels the "
                   "language reads back: name shared parts as steps\n")
    status, out, err = cli("grad", f"{defs} m = f7(x); m*y", "--formula", "--wrt", "y")
    assert status == 0 and out.startswith("m = " + "sin(" * 128 + "x" + ")" * 128 + "\n")
    assert out.endswith("df/dy = m\n")
    status, out, err = cli("grad", f"{defs} m = f7(x); m*y", "--formula", "--wrt", "y",
                           "-f", "latex")
    assert status == 0 and out.startswith("m = " + r"\sin\left(" * 128 + "x")
