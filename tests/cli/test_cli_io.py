"""CLI output formats and files, --strict, --check, tables, defaults, errors and hostile input.

In process through ``main(argv)`` (it returns the exit status); stdout is captured, so it
is not a terminal and the automatic format is CSV.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re

import numpy as np
import pytest

import gradcli


def read_csv(text: str) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def strict_json(text: str):
    def refuse(name):
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


# --- CSV ---------------------------------------------------------------------------------

def test_csv_round_trips_bit_for_bit_against_evaluate(cli):
    argv = ["grad", "sin(x)*cos(y) + exp(x*y)/3", "--grid", "x=-1:2:7", "--grid", "y=0.1:3:5"]
    status, out, _ = cli(*argv)
    assert status == 0
    header, rows = read_csv(out)
    ref = gradcli.evaluate("sin(x)*cos(y) + exp(x*y)/3", "grad",
                           grid={"x": (-1, 2, 7), "y": (0.1, 3, 5)})
    assert header == list(ref)
    assert len(rows) == 35
    for j, name in enumerate(header):
        expect = np.broadcast_to(ref[name], (7, 5)).ravel()
        got = np.array([float(r[j]) for r in rows])
        assert np.array_equal(got.view(np.int64), expect.view(np.int64)), name


def test_csv_hessian_round_trip_on_points(cli, tmp_path):
    xs = [0.1, 1 / 3, 2.0**-1074, 1e300, -7.25]
    src = tmp_path / "p.csv"
    src.write_text("x\n" + "\n".join(repr(v) for v in xs) + "\n")
    status, out, _ = cli("hessian", "x^3/7", "--points", str(src), "-q")
    assert status == 0
    header, rows = read_csv(out)
    ref = gradcli.evaluate("x^3/7", "hessian", points={"x": np.array(xs)})
    assert header == ["x", "f", "d2f/dxdx"]
    for j, name in enumerate(header):
        got = [float(r[j]) for r in rows]
        assert got == ref[name].tolist()
        assert [repr(v) for v in ref[name].tolist()] == [r[j] for r in rows]


def test_csv_non_finite_spelling_and_warning(cli):
    status, out, err = cli("eval", "[log(x), 1/x, -1/x, log(x-1)]", "--at", "x=0")
    assert status == 0
    header, rows = read_csv(out)
    assert rows == [["0.0", "-inf", "inf", "-inf", "nan"]]
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "4" in lines[0] and "non-finite" in lines[0]


def test_nonfinite_count_on_grid_and_quiet(cli):
    status, out, err = cli("eval", "1/x", "--grid", "x=-1:1:3", "--grid", "y=0:1:4")
    assert status == 0
    assert re.search(r"\b4 non-finite", err)
    status, out, err = cli("eval", "1/x", "--grid", "x=-1:1:3", "-q")
    assert status == 0 and err == "" and out.count("inf") == 1


def test_strict_exits_1_on_non_finite(cli):
    status, out, err = cli("eval", "sqrt(x)", "--at", "x=-1", "--strict")
    assert status == 1
    assert "nan" in out
    assert "non-finite" in err
    assert cli("eval", "sqrt(x)", "--at", "x=4", "--strict")[0] == 0


def test_overflow_tower_gives_inf_quickly(cli):
    # folded in float64 at compile time: a big-integer power would never finish
    status, out, err = cli("eval", "9^9^9^9", "--at", "x=1")
    assert status == 0
    assert read_csv(out)[1] == [["1.0", "inf"]]
    assert "non-finite" in err


# --- JSON / NPZ / -o files ------------------------------------------------------------------

def test_json_stdout_is_strict(cli):
    status, out, _ = cli("eval", "[x, 1/x]", "--at", "x=0", "--at", "x=2", "-f",
                         "json", "-q")
    assert status == 0
    doc = strict_json(out)
    assert doc["expression"] == "[x, 1/x]"
    assert doc["variables"] == ["x"]
    assert doc["columns"] == ["x", "f[0]", "f[1]"]
    assert len(doc["rows"]) == 2
    assert doc["rows"][1] == [2.0, 2.0, 0.5]
    assert doc["rows"][0][:2] == [0.0, 0.0]
    assert math.isinf(float(doc["rows"][0][2]))


def test_output_files_by_extension(cli, tmp_path):
    argv = ["grad", "x*y^2", "--grid", "x=0:1:3", "--grid", "y=1:2:2"]
    expect = {"x": [0, 0, .5, .5, 1, 1], "y": [1, 2, 1, 2, 1, 2],
              "f": [0, 0, .5, 2, 1, 4], "df/dx": [1, 4, 1, 4, 1, 4],
              "df/dy": [0, 0, 1, 2, 2, 4]}
    for ext in ("csv", "json", "npz"):
        path = tmp_path / f"out.{ext}"
        status, out, _ = cli(*argv, "-o", str(path))
        assert status == 0 and out == ""
        if ext == "csv":
            header, rows = read_csv(path.read_text())
            got = {h: [float(r[j]) for r in rows] for j, h in enumerate(header)}
        elif ext == "json":
            doc = strict_json(path.read_text())
            got = {h: [r[j] for r in doc["rows"]] for j, h in enumerate(doc["columns"])}
        else:
            with np.load(path) as data:
                assert sorted(data.files) == sorted(expect)
                got = {k: np.asarray(data[k]).ravel().tolist() for k in data.files}
        assert list(got) == list(expect) or ext == "npz"
        assert got == {k: [float(v) for v in vs] for k, vs in expect.items()}, ext


def test_format_mismatch_and_unknown_extension(cli, tmp_path):
    status, _, err = cli("eval", "x", "--at", "x=1", "-o", str(tmp_path / "a.txt"))
    assert status == 2 and ".csv" in err
    status, _, err = cli("eval", "x", "--at", "x=1", "-o", str(tmp_path / "a.json"),
                         "-f", "csv")
    assert status == 2
    status, _, err = cli("eval", "x", "--at", "x=1", "-f", "npz")
    assert status == 2 and "-o" in err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv", [
    ["grad", "x*y", "--at", "x=1"],              # unbound variable
    ["grad", "x+", "--at", "x=1"],               # syntax error
    ["grad", "[x, x]", "--at", "x=1"],           # vector-valued
    ["eval", "x", "--grid", "x=0:1:1e12"],       # over --max-points
])
def test_failed_run_leaves_no_file(cli, tmp_path, argv):
    fresh = tmp_path / "fresh.csv"
    status, out, err = cli(*argv, "-o", str(fresh))
    assert status == 2 and out == ""
    assert not fresh.exists()
    assert list(tmp_path.iterdir()) == []
    old = tmp_path / "old.json"
    old.write_text("keep")
    assert cli(*argv, "-o", str(old))[0] == 2
    assert old.read_text() == "keep"
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]


def test_unwritable_output_is_runtime_failure(cli, tmp_path):
    target = tmp_path / "missing" / "out.csv"
    status, out, err = cli("eval", "x", "--at", "x=1", "-o", str(target))
    assert status == 1
    assert "out.csv" in err and "Traceback" not in err
    assert not target.exists()


# --- tables ------------------------------------------------------------------------------

def test_table_precision(cli):
    status, out, _ = cli("eval", "pi*x", "--at", "x=1", "-f", "table",
                         "--precision", "3")
    assert status == 0
    assert "3.14" in out and "3.142" not in out
    status, out, _ = cli("eval", "pi*x", "--at", "x=1", "-f", "table",
                         "--precision", "9")
    assert "3.14159265" in out and "3.141592654" not in out


def test_table_hides_middle_rows(cli):
    status, out, _ = cli("eval", "x^2", "--grid", "x=0:999:1000", "-f", "table")
    assert status == 0
    numbers = [int(m) for m in re.findall(r"│\s+(\d+)\s+│", out)]
    # rows of x: the first and last ones are shown, the middle ones are not
    assert numbers[:3] == [0, 1, 2]
    assert numbers[-1] == 999
    assert 500 not in numbers
    shown = [n for n in numbers if n < 1000]
    hidden = re.search(r"([\d,]+) rows hidden", out)
    assert hidden is not None
    assert int(hidden.group(1).replace(",", "")) == 1000 - len(shown)
    assert "998001" in out  # f at the last row, 999^2


def test_no_color_is_honoured(cli, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("TERM", raising=False)
    status, out, _ = cli("eval", "log(x)", "--grid", "x=-1:1:100", "-f", "table",
                         "-q")
    assert status == 0 and "rows hidden" in out
    assert not re.search(r"\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7])(;[0-9;]*)?m", out)


# --- --check -------------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["grad", "sin(x)*exp(y)", "--grid", "x=0:1:4", "--grid", "y=-1:1:3"],
    ["jacobian", "[x[0]*x[1], sin(x[1])]", "--at", "x=[1,2]"],
    ["hessian", "sin(x)*y^3", "--at", "x=1,y=2"],
])
def test_check_passes(cli, argv):
    status, out, err = cli(*argv, "--check")
    assert status == 0
    m = re.search(r"at most ([0-9.e+-]+) \(absolute\), ([0-9.e+-]+) \(relative\)", err)
    assert m, err
    assert 0 <= float(m.group(1)) < 1e-5 and 0 <= float(m.group(2)) < 1e-5
    assert read_csv(out)[1]


def test_check_fails_above_tolerance(cli):
    status, out, err = cli("grad", "sin(x)", "--at", "x=1", "--check",
                           "--check-tol", "0")
    assert status == 1
    m = re.search(r"at most ([0-9.e+-]+) \(absolute\)", err)
    assert m and float(m.group(1)) > 0
    assert "FAILED" in err


# --- defaults ------------------------------------------------------------------------------

def test_bare_grid_default(cli):
    status, out, err = cli("grad", "sin(x)*cos(y)", "--grid")
    assert status == 0
    assert err.strip().splitlines() == ["using --grid x=-5:5:101 --grid y=-5:5:101"]
    header, rows = read_csv(out)
    assert header == ["x", "y", "f", "df/dx", "df/dy"]
    assert len(rows) == 10_201
    for row, (x, y) in ((rows[0], (-5.0, -5.0)), (rows[-1], (5.0, 5.0))):
        vals = [float(v) for v in row]
        assert vals[:2] == [x, y]
        assert vals[2:] == pytest.approx([math.sin(x) * math.cos(y),
                                          math.cos(x) * math.cos(y),
                                          -math.sin(x) * math.sin(y)], abs=1e-15)
    assert float(rows[101][0]) == -4.9 and float(rows[1][1]) == -4.9


def test_bare_grid_quiet(cli):
    status, out, err = cli("grad", "sin(x)*cos(y)", "--grid", "-q")
    assert status == 0 and err == ""
    assert out.count("\n") == 10_202


def test_bare_grid_mixed_with_fixed_variable(cli):
    status, out, err = cli("grad", "sin(x)*cos(y)", "--grid", "--grid", "y=0")
    assert status == 0
    assert err.strip().splitlines() == ["using --grid x=-5:5:101"]
    header, rows = read_csv(out)
    assert len(rows) == 101
    data = [dict(zip(header, map(float, r), strict=True)) for r in rows]
    assert {d["y"] for d in data} == {0.0}
    assert [d["x"] for d in data] == np.linspace(-5, 5, 101).tolist()
    for d in data:
        assert d["df/dx"] == pytest.approx(math.cos(d["x"]), abs=1e-15)
        assert d["df/dy"] == 0.0


def test_bare_grid_three_variables(cli):
    status, out, err = cli("eval", "x+y*z", "--grid")
    assert status == 0
    assert err.strip() == "using --grid x=-5:5:21 --grid y=-5:5:21 --grid z=-5:5:21"
    assert out.count("\n") == 21**3 + 1


def test_no_arguments_prints_usage(cli):
    status, out, err = cli()
    assert status == 0
    examples = [line for line in out.splitlines() if line.strip().startswith("gradcli ")]
    assert len(examples) >= 3


def test_no_points_message_uses_expression_variables(cli):
    status, out, err = cli("grad", "x^2+y")
    assert status == 2 and out == ""
    assert "--at" in err and "x=" in err and "y=" in err
    assert len(err.strip().splitlines()) == 1


def test_version_and_help_examples(cli):
    status, out, _ = cli("--version")
    assert status == 0 and out.strip() == f"gradcli {gradcli.__version__}"
    for cmd in ("eval", "grad", "jacobian", "vjp", "jvp", "hessian", "graph", "plot"):
        status, out, _ = cli(cmd, "--help")
        assert status == 0
        assert "Examples:" in out and f"gradcli {cmd} " in out, cmd


# --- usage errors ----------------------------------------------------------------------------

@pytest.mark.parametrize("argv, words", [
    (["grad", "x*y", "--at", "x=1"], ["y", "--at"]),
    (["grad", "x*y", "--grid", "x=0:1:3"], ["y", "--grid"]),
    (["eval", "x", "--grid", "x=0:1:2.5"], ["count"]),
    (["eval", "x", "--grid", "x=0:1:0"], ["count"]),
    (["eval", "x", "--at", "x=1", "--grid", "x=0:1:2"], ["--at", "--grid"]),
    (["eval", "x", "--at", "x=1", "-f", "xml"], ["xml"]),
    (["eval", "x", "--at", "x=[1,2]", "--at", "x=[1,2,3]"], ["x"]),
    (["jvp", "x*y", "--direction", "z=1", "--at", "x=1,y=1"], ["z"]),
    (["vjp", "[x, y]", "--vector", "1,0,0", "--at", "x=1,y=1"], ["(3,)", "(2,)"]),
    (["grad", "x", "--at", "x=1", "--at", "x=2", "--at", "x=3", "--max-points", "2"],
     ["--max-points"]),
    (["eval", "x", "--grid", "x=0:1:1e12"], ["--max-points"]),
    (["eval", "x+y", "--grid", "x=0:1:1e6", "--grid", "y=0:1:1e6"], ["--max-points"]),
    (["hessian", "[x, y]", "--at", "x=1,y=2"], ["(2,)"]),
])
def test_usage_errors_exit_2_one_message(cli, argv, words):
    status, out, err = cli(*argv)
    assert status == 2
    assert out == ""
    assert "Traceback" not in err
    for w in words:
        assert w in err, (w, err)


def test_max_points_on_points_file(cli, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("x\n1\n2\n3\n"))
    status, out, err = cli("grad", "x^2", "--points", "-", "--max-points", "2")
    assert status == 2 and "--max-points" in err and out == ""


# --- hostile input ---------------------------------------------------------------------------

def _hostile(tmp_path):
    pwned = tmp_path / "pwned"
    return pwned, [
        f"__import__('os').system('touch {pwned}')",
        "().__class__",
        "x.__class__",
        "x.__class__.__mro__",
        "lambda: 1",
        "[i for i in x]",
        "exec('1')",
        "eval(\"1\")",
        "x; import os",
        "(" * 5000 + "x" + ")" * 5000,
        "sin(" * 3000 + "x" + ")" * 3000,
        "[" * 2000 + "x" + "]" * 2000,
        "x" + "+x" * 20000,
    ]


def test_hostile_expressions_are_rejected(cli, tmp_path):
    pwned, exprs = _hostile(tmp_path)
    for expr in exprs:
        status, out, err = cli("grad", expr, "--at", "x=1")
        assert status == 2, expr[:40]
        assert out == "" and "Traceback" not in err
    assert not pwned.exists()


def test_hostile_point_values_are_rejected(cli, tmp_path):
    pwned = tmp_path / "pwned"
    attack = f"__import__('os').system('touch {pwned}')"
    for argv in (["eval", "x", "--at", f"x={attack}"],
                 ["eval", "x", "--grid", f"x=0:{attack}:3"],
                 ["vjp", "[x,x]", "--vector", f"{attack},1", "--at", "x=1"],
                 ["jvp", "x", "--direction", f"x={attack}", "--at", "x=1"]):
        status, out, err = cli(*argv)
        assert status == 2 and out == ""
    assert not pwned.exists()


# --- former bugs, fixed ---------------------------------------------------------------------

def test_expression_starting_with_minus(cli):
    status, out, err = cli("grad", "-x^2", "--at", "x=3")
    assert status == 0, err
    assert read_csv(out) == (["x", "f", "df/dx"], [["3.0", "-9.0", "-6.0"]])


def test_graph_vector_valued_message_names_graph(cli):
    status, out, err = cli("graph", "[x, y]", "--at", "x=1,y=2")
    assert status == 2
    assert "graph" in err and not err.startswith("gradcli: error: grad ")


def test_bad_point_value_message_said_once(cli):
    status, out, err = cli("eval", "x", "--at", "x=1e400")
    assert status == 2 and out == ""
    assert err.count("number too large") == 1
