"""Programs: named steps, the program's own functions, the seed's staged
computation in ``graph``, ``--wrt`` a step (PyTorch's retain_grad), programs from files
with carets into them, and the limits that apply to a whole program.

Truth: the seed's printed numbers (x = 3: m = 9, y = 12, p = 48; adjoints 4, 4, 1; x gets
28), and closed forms (the logistic loss log(1 + e^z) - t·z and its gradient (σ(z) - t)·x).
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

import gradcli
from gradcli.errors import EvaluationError
from gradcli.graph.nodes import build_graph
from gradcli.lang import Assign, Define, ExpressionError, Program, Ref, Var, parse

SEED = "m = x^2; y = m + x; p = 4*y"
LOSS = "z = w*x + b; p = sigmoid(z); -(t*log(p) + (1-t)*log(1-p))"


def table(out: str) -> dict[str, list[str]]:
    rows = list(csv.reader(io.StringIO(out)))
    return {name: [r[i] for r in rows[1:]] for i, name in enumerate(rows[0])}


# --- the seed's staged computation -------------------------------------------------------

def test_graph_names_the_steps_with_the_seeds_numbers():
    nodes, out = build_graph(SEED, {"x": 3.0})
    got = {n.id: (n.op, n.inputs, n.value, n.adjoint) for n in nodes}
    assert out == "p"
    assert got == {"x": ("leaf", [], 3.0, 28.0),
                   "m": ("PowBackward0", ["x", "2"], 9.0, 4.0),
                   "y": ("AddBackward0", ["m", "x"], 12.0, 4.0),
                   "p": ("MulBackward0", ["4", "y"], 48.0, 1.0)}


def test_graph_command_json_and_unnamed_nodes(cli):
    status, out, _ = cli("graph", SEED, "--at", "x=3", "-f", "json")
    doc = json.loads(out)
    assert status == 0 and doc["output"] == "p"
    assert [(n["id"], n["value"], n["adjoint"]) for n in doc["nodes"]] == [
        ("x", 3.0, 28.0), ("m", 9.0, 4.0), ("y", 12.0, 4.0), ("p", 48.0, 1.0)]
    # steps of the seed's other branch: q = 2y is the result, p is computed and unused
    nodes, out = build_graph("m = x^2; y = m + x; p = 4*y; q = 2*y", {"x": 3.0})
    assert out == "q" and [n.id for n in nodes][-1] == "q"
    assert {n.id: n.adjoint for n in nodes}["x"] == 14.0  # dq/dx = 2·7
    # unnamed intermediate nodes are numbered n1, n2...
    nodes, out = build_graph("m = x^2; 4*(m + x)", {"x": 3.0})
    assert [n.id for n in nodes] == ["x", "m", "n1", "n2"] and out == "n2"


def test_grad_wrt_a_step_holds_its_inputs_fixed(cli):
    """PyTorch: m.retain_grad(); p.backward() gives m.grad = 4 (through y = m + x) while
    x.grad = 28 (through m and directly)."""
    r = gradcli.evaluate(SEED, "grad", at={"x": 3}, wrt=["m", "x"])
    assert (r["df/dm"].tolist(), r["df/dx"].tolist()) == ([4.0], [28.0])
    status, out, _ = cli("grad", SEED, "--at", "x=3", "--wrt", "m")
    assert status == 0 and out.splitlines() == ["x,f,df/dm", "3.0,48.0,4.0"]
    # per point: p = m^2 with m = x*y gives dp/dm = 2m at every point of a grid
    g = gradcli.evaluate("m = x*y; p = m^2", "grad", grid={"x": (0, 1, 3), "y": (1, 2, 2)},
                         wrt=["m"])
    np.testing.assert_array_equal(g["df/dm"], 2 * g["x"] * g["y"])
    j = gradcli.evaluate("m = x^2; [m, 3*m + x]", "jacobian", at={"x": 2}, wrt=["m"])
    assert (j["df[0]/dm"].tolist(), j["df[1]/dm"].tolist()) == ([1.0], [3.0])


def test_a_named_sigmoid_step_stays_on_the_path_of_log(cli):
    """log(p) of a step p = sigmoid(z) goes through p (PyTorch: p is a tensor of its own),
    so --wrt p and the graph's adjoint of p count it. Hand derivation at w=0.5, x=2,
    b=0.1, t=0.3: z = 1.1, p = σ(1.1), ∂f/∂p = -t/p + (1-t)/(1-p), ∂f/∂z = p - t."""
    t, z = 0.3, 1.1
    p = 1 / (1 + math.exp(-z))
    at = {"w": 0.5, "x": 2, "b": 0.1, "t": t}
    r = gradcli.evaluate(LOSS, "grad", at=at, wrt=["p", "z"])
    assert r["df/dp"][0] == pytest.approx(-t / p + (1 - t) / (1 - p), rel=1e-14)
    assert r["df/dz"][0] == pytest.approx(p - t, rel=1e-14)
    nodes, _ = build_graph(LOSS, at)
    assert {n.id: n.adjoint for n in nodes}["p"] == pytest.approx(-t / p + (1 - t) / (1 - p),
                                                                  rel=1e-14)
    status, out, _ = cli("grad", "p = sigmoid(z); log(p)", "--at", "z=1",
                         "--wrt", "p")
    assert status == 0 and float(table(out)["df/dp"][0]) == pytest.approx(
        1 + math.exp(-1), rel=1e-14)  # 1/σ(1)
    # written in one expression, log(sigmoid(u)) is still fused: finite at u = -1000
    status, out, _ = cli("grad", "log(sigmoid(u))", "--at", "u=-1000")
    assert status == 0 and table(out)["f"] == ["-1000.0"] and table(out)["df/du"] == ["1.0"]


def test_wrt_errors(cli):
    with pytest.raises(EvaluationError, match="not a variable or a step"):
        gradcli.evaluate(SEED, "grad", at={"x": 3}, wrt=["q"])
    with pytest.raises(EvaluationError, match="does not depend on any variable"):
        gradcli.evaluate("c = 2; c*x", "grad", at={"x": 3}, wrt=["c"])
    with pytest.raises(EvaluationError,
                       match="wrt= is for grad, jacobian, vjp, hessian, .*not jvp"):
        gradcli.evaluate(SEED, "jvp", at={"x": 3}, wrt=["m"], direction={"x": 1})
    status, out, err = cli("grad", SEED, "--at", "x=3", "--wrt", "m", "--check")
    assert status == 2 and out == "" and "--check differences the variables" in err


# --- the logistic loss -------------------------------------------------------------------

@pytest.mark.parametrize("w,x,b,t", [(0.5, 2.0, 0.1, 1.0), (-3.0, 1.5, 0.5, 0.0),
                                     (2.0, 1.5, 0.0, 0.0)])
def test_logistic_loss_program_against_its_closed_form(cli, w, x, b, t):
    z = w * x + b
    loss = math.log1p(math.exp(-abs(z))) + max(z, 0.0) - t * z  # log(1 + e^z) - t·z
    s = 1.0 / (1.0 + math.exp(-z))
    status, out, _ = cli("grad", LOSS, "--at", f"w={w},x={x},b={b},t={t}")
    got = {k: float(v[0]) for k, v in table(out).items()}
    assert status == 0
    assert got["f"] == pytest.approx(loss, rel=1e-12)
    assert got["df/dw"] == pytest.approx((s - t) * x, rel=1e-12, abs=1e-300)
    assert got["df/db"] == pytest.approx(s - t, rel=1e-12, abs=1e-300)
    assert got["df/dx"] == pytest.approx((s - t) * w, rel=1e-12, abs=1e-300)
    assert got["df/dt"] == pytest.approx(-z, rel=1e-12)


def test_a_program_may_span_lines_with_comments(cli, tmp_path):
    text = ("# the logistic loss\nz = w*x +\n    b      # continued after an operator\n"
            "p = sigmoid(z)\n\n-(t*log(p) + (1-t)*log(1-p))\n")
    assert parse(text) == parse(LOSS)
    path = tmp_path / "loss.gc"
    path.write_text(text)
    status, out, _ = cli("grad", f"@{path}", "--at", "w=0.5,x=2,b=0.1,t=1")
    assert status == 0
    assert float(table(out)["f"][0]) == pytest.approx(math.log1p(math.exp(-1.1)), rel=1e-14)


# --- parsing programs ------------------------------------------------------------------------

def test_program_tree_resolves_steps_and_parameters():
    tree = parse("f(a, b) = a*b + c; m = f(x, 2); m + f(1, m)")
    assert isinstance(tree, Program)
    define, assign, last = tree.statements
    assert isinstance(define, Define) and define.params == ("a", "b")
    assert isinstance(assign, Assign) and assign.name == "m"
    names = {type(n).__name__ + ":" + n.name for n in [*_names(define.body), *_names(last)]}
    assert names == {"Ref:a", "Ref:b", "Var:c", "Ref:m"}
    assert gradcli.lang.free_variables(tree) == ["c", "x"]


def _names(node):
    return [n for n in gradcli.lang.walk(node) if isinstance(n, (Ref, Var))]


def test_functions_are_inlined_with_their_arguments():
    """f(a, b) = a*b + c and g(t) = f(t, t) - t: f(x, 2) + f(1, x) + g(x) = 2x + x² + 3c,
    d/dx = 2 + 2x, d/dc = 3."""
    r = gradcli.evaluate("f(a, b) = a*b + c\ng(t) = f(t, t) - t\nf(x, 2) + f(1, x) + g(x)",
                         "grad", at={"x": 3.0, "c": 0.5})
    assert r["f"].tolist() == [16.5]
    assert r["df/dx"].tolist() == [8.0] and r["df/dc"].tolist() == [3.0]


def test_a_program_ending_with_a_step_has_that_steps_value():
    assert gradcli.evaluate("m = x^2; y = m + 1", "eval", at={"x": 3})["f"].tolist() == [10.0]


PROGRAM_ERRORS = [
    ("f(x) = f(x - 1); f(2)", "f calls itself: recursion is not supported (a function may "
     "call the functions defined before it)", 7),
    ("sin = x; sin", "'sin' is a built-in function (name the step differently)", 0),
    ("pi(x) = x; 1", "'pi' is a constant (name the function differently)", 0),
    ("m = 1; m = 2; m", "'m' is already defined (the step on line 1: each name is defined "
     "once)", 7),
    ("y = m + x; m = x^2; y", "'m' is used before it is defined (define the step m before "
     "the statements that use it)", 4),
    ("f(a, a) = a; f(1, 2)", "parameter 'a' is given twice", 5),
    ("f(2) = 1; f(1)", "a parameter must be a name, got '2' (define a function as f(a, b) = "
     "expression)", 2),
    ("x^2; x^3", "this expression's value is not used (only the last statement gives the "
     "result: name it (NAME = ...) or remove it)", 0),
    ("x^2\n+ 1", "this expression's value is not used (a line starting with + or - begins a "
     "new statement: end the line before it with the operator, or wrap the expression in "
     "parentheses)", 0),
    ("f(a) = a^2", "the program ends with a function definition (end it with an expression, "
     "or a step, that gives its value)", 0),
    ("m =", "nothing after '=' (write m = expression)", 2),
    ("f(a) = a; f(1, 2)", "f takes 1 argument, got 2", 10),
]


@pytest.mark.parametrize("text,message,position", PROGRAM_ERRORS)
def test_program_errors_name_what_and_where(text, message, position):
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert (info.value.message, info.value.position) == (message, position)


def test_errors_inside_a_function_say_where_it_was_called():
    with pytest.raises(ExpressionError) as info:
        gradcli.evaluate("f(a) = a @ a\nf(x)", "eval", at={"x": 1.0})
    assert info.value.reason == ("cannot multiply shapes () @ () (in f, called at line 2, "
                                 "column 1)")
    assert (info.value.line, info.value.column) == (1, 10)


def test_a_step_given_a_value_is_refused():
    with pytest.raises(EvaluationError, match="'m' is a step of the program"):
        gradcli.evaluate(SEED, "grad", at={"x": 3, "m": 1})


# --- programs from files ---------------------------------------------------------------------

def test_error_caret_points_into_the_file_with_line_and_column(cli, tmp_path):
    path = tmp_path / "loss.gc"
    path.write_text("z = w*x + b\np = sigmoidd(z)\n-log(p)\n")
    status, out, err = cli("grad", f"@{path}", "--at", "w=1,x=1,b=0")
    assert status == 2 and out == ""
    assert err.splitlines() == [
        "  p = sigmoidd(z)", "      ^",
        f"error: {path}, line 2, column 5: unknown function 'sigmoidd' (did you mean "
        "'sigmoid'?)"]


def test_program_from_stdin(cli, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO(SEED + "\n"))
    status, out, _ = cli("grad", "@-", "--at", "x=3")
    assert status == 0 and out.splitlines()[1] == "3.0,48.0,28.0"
    # the program and the points cannot both be standard input: said before reading either
    monkeypatch.setattr("sys.stdin", io.StringIO("x^2\n"))
    status, out, err = cli("grad", "@-", "--points", "-")
    assert status == 2 and out == ""
    assert err.strip() == ("gradcli: error: @- and --points - both read standard input: "
                           "give one of them as a file")


def test_program_file_limits_and_errors(cli, tmp_path):
    big = tmp_path / "big.gc"
    big.write_text("x" + " + x" * 300_000)  # 1.2 MB
    status, _, err = cli("eval", f"@{big}", "--at", "x=1")
    assert status == 2 and "longer than 1 MiB, the limit for this input" in err
    status, _, err = cli("eval", f"@{tmp_path / 'missing.gc'}", "--at", "x=1")
    assert status == 2 and "no such file" in err
    (tmp_path / "bin.gc").write_bytes(b"x\x00+1")
    status, _, err = cli("eval", f"@{tmp_path / 'bin.gc'}", "--at", "x=1")
    assert status == 2 and "is not text" in err
    assert "CSV" not in err  # a program is not a CSV file
    # a file may be longer than an expression typed on the command line (10,000 characters)
    long = tmp_path / "long.gc"
    long.write_text("s = x" + " + x" * 5000 + "\ns/5001\n")
    status, out, _ = cli("grad", f"@{long}", "--at", "x=2")
    assert status == 0 and [float(v) for v in out.splitlines()[1].split(",")] == \
        pytest.approx([2.0, 2.0, 1.0], rel=1e-12)
    status, _, err = cli("eval", "s = x" + " + x" * 5000 + "; s", "--at", "x=2")
    assert status == 2 and "the limit is 10000" in err


def test_inlining_that_explodes_is_refused_before_compiling():
    text = "f0(x) = x*x\n" + "".join(f"f{i}(x) = f{i - 1}(x) + f{i - 1}(x)\n"
                                     for i in range(1, 40)) + "f39(x)"
    with pytest.raises(ExpressionError, match="more than 1,000,000 steps"):
        gradcli.evaluate(text, "grad", at={"x": 1.0})
    deep = "f0(x) = x + 1\n" + "".join(f"f{i}(x) = f{i - 1}(x)\n" for i in range(1, 250)) \
        + "f249(x)"
    with pytest.raises(ExpressionError, match="more than 100 levels deep"):
        gradcli.evaluate(deep, "eval", at={"x": 1.0})
    deep_enough = "f0(x) = x + 1\n" + "".join(f"f{i}(x) = f{i - 1}(x)\n" for i in
                                             range(1, 99)) + "f98(x)"
    assert gradcli.evaluate(deep_enough, "eval", at={"x": 1.0})["f"].tolist() == [2.0]
