"""What a new user hit in the first hour, command by command: tables that hid
data, a --check that passed on nan, options that were refused or misread, messages that
misled. Truths are closed forms and the exact messages the issue states."""

from __future__ import annotations

import csv
import io
import math
import os
import re

import numpy as np
import pytest

from gradcli.cli.main import main


def rows(text: str) -> list[dict[str, float]]:
    table = list(csv.reader(io.StringIO(text)))
    return [dict(zip(table[0], map(float, r), strict=True)) for r in table[1:]]


# --- 1. a table never hides data silently ---------------------------------------------------

def cells_by_line(out: str) -> list[list[str]]:
    """The cells of each table line (box characters removed)."""
    return [[c.strip() for c in re.split(r"[┃│]", line)[1:-1]]
            for line in out.splitlines() if line.startswith(("┃", "│"))]


@pytest.mark.parametrize("width", ["80", "40"])
def test_one_point_jacobian_too_wide_is_shown_transposed(cli, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", width)
    status, out, err = cli("jacobian", "[sum(x), sum(x^2)]", "--at", "x=[0,1,2,3]",
                           "-f", "table")
    assert (status, err) == (0, "")
    assert max(len(line) for line in out.splitlines()) <= int(width)
    assert "…" not in out
    shown = {line[0]: line[1] for line in cells_by_line(out)[1:]}
    expect = {"x[0]": "0", "x[1]": "1", "x[2]": "2", "x[3]": "3", "f[0]": "6", "f[1]": "14"}
    expect |= {f"df[0]/dx[{k}]": "1" for k in range(4)}
    expect |= {f"df[1]/dx[{k}]": str(2 * k) for k in range(4)}
    assert shown == expect


@pytest.mark.parametrize("width", ["80", "40"])
def test_five_variable_hessian_shows_every_value(cli, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", width)
    status, out, _ = cli("hessian", "a*b*c*d*g", "--at", "a=1,b=2,c=3,d=4,g=5",
                         "-f", "table")
    assert status == 0 and "…" not in out
    assert max(len(line) for line in out.splitlines()) <= int(width)
    shown = {line[0]: float(line[1]) for line in cells_by_line(out)[1:]}
    values = dict(a=1, b=2, c=3, d=4, g=5)
    assert shown["f"] == 120
    assert len(shown) == 5 + 1 + 25
    for p in values:
        for q in values:  # d2(abcdg)/dpdq = abcdg/(pq) off the diagonal, 0 on it
            assert shown[f"d2f/d{p}d{q}"] == (0 if p == q else 120 / (values[p] * values[q]))


@pytest.mark.parametrize("width", ["80", "40"])
def test_many_points_show_the_columns_that_fit_and_say_how_many_not(cli, monkeypatch,
                                                                       width):
    monkeypatch.setenv("COLUMNS", width)
    status, out, err = cli("hessian", "a*b*c", "--grid", "a=0:1:30", "--grid",
                           "b=1:2:2", "--grid", "c=5", "-f", "table")
    assert status == 0
    assert max(len(line) for line in out.splitlines()) <= int(width)
    lines = cells_by_line(out)
    header = lines[0]
    every = ["a", "b", "c", "f"] + [f"d2f/d{p}d{q}" for p in "abc" for q in "abc"]
    assert 3 <= len(header) < len(every)
    assert header == every[:len(header)]  # whole names, the leading columns
    assert err == (f"{len(every) - len(header)} columns not shown (all columns: -f csv or "
                   "-o FILE)\n")
    a, b, c = 1.0, 2.0, 5.0  # the last row, every shown value whole
    expect = [a, b, c, a * b * c, 0, c, b, c, 0, a, b, a, 0][:len(header)]
    assert [float(v) for v in lines[-1]] == expect


def test_hidden_columns_note_respects_quiet(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "40")
    status, _, err = cli("hessian", "a*b*c", "--grid", "a=0:1:30", "--grid",
                         "b=1:2:2", "--grid", "c=5", "-f", "table", "-q")
    assert (status, err) == (0, "")


# --- 2, 3. --check: non-finite entries, dtype-aware tolerance ------------------------------

@pytest.mark.parametrize("expression", ["sqrt(x^2)", "hypot(x, 0)"])
def test_check_fails_where_only_one_side_is_finite(cli, expression):
    status, out, err = cli("grad", expression, "--at", "x=0", "--check")
    assert status == 1
    assert rows(out)[0]["df/dx"] != rows(out)[0]["df/dx"]  # the engine's nan (PyTorch's too)
    assert "check: no comparable entries\n" in err and "differ by at most" not in err
    assert "check: 1 entry not comparable (non-finite in one of them)\n" in err


def test_check_fails_where_both_sides_are_non_finite_but_differ(cli):
    status, _, err = cli("grad", "log(x)", "--at", "x=0", "--check")
    assert status == 1  # the engine says inf, the differences nan: nothing was checked
    assert "check: 1 entry not comparable (non-finite in both" in err


def test_check_counts_every_incomparable_entry(cli):
    status, _, err = cli("grad", "sqrt(x^2) + sqrt(y^2)", "--grid", "x=-1:1:3",
                         "--grid", "y=-1:1:3", "--check")
    # df/dx is nan on the 3 points with x = 0, df/dy on the 3 with y = 0
    assert status == 1 and "check: 6 entries not comparable" in err
    # 9 points × 2 partials, 6 of them nan: the gaps are over the other 12
    assert "(relative) over 12 entries; tolerance" in err


@pytest.mark.parametrize("what, expression, default", [
    ("grad", "sin(x)*exp(y)", "0.0001"), ("jacobian", "[sin(x), x*y^3]", "0.0001"),
    ("hessian", "sin(x)*y^3", "0.001")])
def test_check_passes_in_float32_with_its_tolerance(cli, what, expression, default):
    status, _, err = cli(what, expression, "--at", "x=0.1,y=0.7", "--dtype",
                         "float32", "--check")
    assert status == 0, err
    assert err.endswith(f"tolerance {default}\n")


def test_check_defaults_are_stated_in_help(capsys):
    assert main(["grad", "--help"]) == 0
    assert "1e-6 (float64), 1e-4 (float32)" in " ".join(capsys.readouterr().out.split())
    assert main(["hessian", "--help"]) == 0
    assert "1e-4 (float64), 1e-3 (float32)" in " ".join(capsys.readouterr().out.split())


def test_check_still_fails_above_an_explicit_tolerance_in_float32(cli):
    status, _, err = cli("grad", "sin(x)", "--at", "x=0.1", "--dtype", "float32",
                         "--check", "--check-tol", "1e-12")
    assert status == 1 and "FAILED" in err


# --- 10. --at beside --points or --grid holds a variable fixed ------------------------------

def test_points_file_with_a_held_variable(cli, tmp_path):
    src = tmp_path / "xs.csv"
    src.write_text("x\n1\n2\n-3\n")
    status, out, err = cli("grad", "a*x^2 + a", "-p", str(src), "--at", "a=3")
    assert (status, err) == (0, "")
    assert rows(out) == [{"x": x, "a": 3.0, "f": 3 * x * x + 3, "df/dx": 6 * x,
                          "df/da": x * x + 1} for x in (1.0, 2.0, -3.0)]


def test_grid_with_a_held_vector_variable(cli):
    status, out, _ = cli("grad", "dot(w, [x, 1])", "--grid", "x=0:1:3", "--at",
                         "w=[2,5]")
    assert status == 0
    assert rows(out) == [{"x": x, "w[0]": 2.0, "w[1]": 5.0, "f": 2 * x + 5, "df/dx": 2.0,
                          "df/dw[0]": x, "df/dw[1]": 1.0} for x in (0.0, 0.5, 1.0)]


def test_bare_grid_samples_only_what_is_not_held(cli):
    status, out, err = cli("grad", "x*y", "--grid", "--at", "y=3")
    assert status == 0 and err == "using --grid x=-5:5:101\n"
    assert rows(out) == [{"x": x, "y": 3.0, "f": 3 * x, "df/dx": 3.0, "df/dy": x}
                         for x in np.linspace(-5, 5, 101).tolist()]


@pytest.mark.parametrize("argv, needle", [
    (["-p", "A", "-p", "B"], "--points is given 2 times"),
    (["-p", "A", "--at", "x=1"], "'x' is given by --at and by --points"),
    (["--grid", "x=0:1:2", "--at", "x=1"], "'x' is given by --at and by --grid"),
    (["--at", "x=1", "--grid", "x"], "'x' is given by --at and by --grid"),
    (["-p", "A", "--grid", "x=0:1:2"], "use only one of --grid and --points"),
])
def test_held_and_points_errors(cli, tmp_path, argv, needle):
    for name in "AB":
        (tmp_path / name).write_text("x\n1\n")
    argv = [str(tmp_path / a) if a in "AB" else a for a in argv]
    status, out, err = cli("grad", "x", *argv)
    assert (status, out) == (2, "") and needle in err and len(err.splitlines()) == 1


# --- 11. an expression starting with '-' ------------------------------------------------------

@pytest.mark.parametrize("expression, at, f, grads", [
    ("-a*x", "a=1,x=2", -2.0, {"a": -2.0, "x": -1.0}),
    ("-g*x", "g=3,x=2", -6.0, {"g": -2.0, "x": -3.0}),
    ("-p^2", "p=3", -9.0, {"p": -6.0}),
    ("-fo*x", "fo=2,x=5", -10.0, {"fo": -5.0, "x": -2.0}),  # not -f with the value o*x
    ("-o-x", "o=1,x=1", -2.0, {"o": -1.0, "x": -1.0}),
])
def test_expression_starting_with_minus(cli, expression, at, f, grads):
    status, out, err = cli("grad", expression, "--at", at)
    assert status == 0, err
    row = rows(out)[0]
    assert row["f"] == f and {k: row[f"df/d{k}"] for k in grads} == grads


def test_a_variable_named_like_a_result_column_is_refused(cli):
    # f is the value's column and jvp the product's: a variable of that name would make
    # two columns of one name (one of them silently lost in a mapping)
    for argv in (["grad", "-f*o", "--at", "f=2,o=5"],
                 ["jvp", "jvp*x", "--at", "jvp=2,x=5", "-d", "x=1"]):
        status, out, err = cli(*argv)
        name = argv[3].split("=")[0]
        assert (status, out) == (2, "")
        assert err == (f"gradcli: error: variable '{name}' has the name of a result column: "
                       "give the variable another name\n")
    status, out, _ = cli("eval", "[f, o]", "--at", "f=2,o=5")
    assert (status, rows(out)) == (0, [{"f": 2.0, "o": 5.0, "f[0]": 2.0, "f[1]": 5.0}])


# --- 12. the extension picks the format, for every command -----------------------------------

def test_graph_output_by_extension(cli, tmp_path):
    for name, start in (("g.json", "{"), ("g.dot", "digraph"), ("g.gv", "digraph")):
        status, out, err = cli("graph", "4*(x^2+x)", "--at", "x=3", "-o",
                               str(tmp_path / name))
        assert (status, out, err) == (0, "", "")
        assert (tmp_path / name).read_text().lstrip().startswith(start), name


@pytest.mark.parametrize("argv, needles", [
    (["graph", "x", "--at", "x=1", "-f", "dot", "-o", "g.png"],
     ["--format dot", "'g.png'", ".json, .dot, .gv"]),
    (["graph", "x", "--at", "x=1", "-f", "json", "-o", "g.dot"], ["--format json", ".dot"]),
    (["graph", "x", "--at", "x=1", "-o", "g.png"], [".json, .dot, .gv"]),
    (["grad", "x", "--at", "x=1", "-f", "csv", "-o", "g.json"], ["--format csv", ".json"]),
    (["grad", "x", "--at", "x=1", "-f", "json", "-o", "g.npy"], ["--format json", ".npy"]),
    (["grad", "x", "--at", "x=1", "-o", "g.xyz"], [".csv, .json, .jsonl, .npz, .npy"]),
    (["grad", "x", "--at", "x=1", "-o", "g"], [".csv, .json, .jsonl, .npz, .npy"]),
])
def test_format_and_extension_errors(cli, tmp_path, monkeypatch, argv, needles):
    monkeypatch.chdir(tmp_path)
    status, out, err = cli(*argv)
    assert (status, out) == (2, "") and len(err.splitlines()) == 1
    for needle in needles:
        assert needle in err
    assert list(tmp_path.iterdir()) == []


def test_graph_help_lists_the_extensions_it_writes(capsys):
    assert main(["graph", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert ".json .dot .gv" in out and ".csv" not in out and ".npz" not in out


# --- 13. --grid NAME, and a bare --grid keeps the variables' order ---------------------------

def test_grid_name_alone_is_the_default_range(cli):
    status, out, err = cli("eval", "x*y", "--grid", "x", "--grid", "y=2")
    assert status == 0 and err == "using --grid x=-5:5:101\n"
    assert [r["x"] for r in rows(out)] == np.linspace(-5, 5, 101).tolist()


def test_bare_grid_keeps_the_expression_order(cli):
    status, out, err = cli("grad", "sin(x)*cos(y)", "--grid", "--grid", "y=3")
    assert status == 0
    assert out.splitlines()[0] == "x,y,f,df/dx,df/dy"
    assert err == "using --grid x=-5:5:101\n"


# --- 14. one number syntax; --check-tol needs --check; inf and nan in --at -------------------

def test_max_points_takes_the_grid_count_syntax(cli):
    assert cli("eval", "x", "--grid", "x=0:1:1e3", "--max-points", "1e3")[0] == 0
    status, _, err = cli("eval", "x", "--grid", "x=0:1:1e3", "--max-points", "999")
    assert status == 2 and "--max-points" in err


def test_check_tol_without_check_is_an_error(cli):
    status, out, err = cli("grad", "x", "--at", "x=1", "--check-tol", "1e-8")
    assert (status, out) == (2, "") and "--check" in err


def test_at_accepts_inf_and_nan_like_a_points_file(cli, tmp_path):
    status, out, _ = cli("eval", "x", "--at", "x=inf", "--at", "x=-inf", "--at",
                         "x=nan", "-q")
    assert status == 0
    got = [r["x"] for r in rows(out)]
    assert got[:2] == [math.inf, -math.inf] and math.isnan(got[2])
    (tmp_path / "p.csv").write_text("x\ninf\n-inf\nnan\n")
    assert cli("eval", "x", "-p", str(tmp_path / "p.csv"), "-q")[1] == out


# --- 15. messages that misled ---------------------------------------------------------------

def test_mistyped_command_is_suggested_once(cli):
    status, _, err = cli("gard", "x")
    assert status == 2 and err.count("Did you mean 'grad'?") == 1


def test_unknown_name_before_parenthesis_is_an_unknown_function(cli):
    status, _, err = cli("grad", "frobnicate(x)", "--at", "x=1")
    assert status == 2
    assert err.splitlines()[-1] == "error: unknown function 'frobnicate'"


@pytest.mark.parametrize("expression, at, hint", [
    ("xy", "x=1,y=2", "did you mean x*y?"),
    ("sinx", "x=1", "did you mean sin(x)?"),
    ("2pix", "x=1", "did you mean pi*x?"),
])
def test_names_run_together_suggest_their_reading(cli, expression, at, hint):
    status, _, err = cli("grad", expression, "--at", at)
    assert status == 2 and hint in err


def test_no_reading_is_suggested_when_it_would_not_be_valid(cli):
    status, _, err = cli("grad", "xy", "--at", "x=1")
    assert status == 2 and "did you mean" not in err


@pytest.mark.parametrize("expression, at, divisor, factor", [
    ("x/2pi", "x=1", "2", "pi"), ("exp(-x^2/2sigma^2)", "x=1,sigma=1", "2", "sigma^2")])
def test_implicit_multiplication_after_division_warns(cli, expression, at, divisor,
                                                      factor):
    status, out, err = cli("eval", expression, "--at", at)
    assert status == 0
    assert err == (f"warning: '/{divisor}{factor}' divides by {divisor} only, then "
                   f"multiplies by {factor} (implicit multiplication binds like '*'): "
                   f"write /({divisor}{factor}) to divide by the product\n")
    assert cli("eval", expression, "--at", at, "-q")[2] == ""


def test_no_warning_for_explicit_operators(cli):
    for expression in ("x/2*pi", "x/(2pi)", "2pi/x"):
        assert cli("eval", expression, "--at", "x=1")[2] == ""


# --- 16. graph takes -q ----------------------------------------------------------------------

def test_graph_quiet(cli):
    assert "warning" in cli("graph", "x/2pi", "--at", "x=1")[2]
    status, out, err = cli("graph", "x/2pi", "--at", "x=1", "-q")
    assert status == 0 and err == "" and "DivBackward0" in out


# --- 20. make demo writes into a fresh directory ---------------------------------------------

def test_demo_writes_into_a_fresh_directory(capsys, monkeypatch, tmp_path):
    from gradcli import demo

    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.setattr(demo, "EXAMPLES", demo.EXAMPLES[:1])
    assert demo.main() == 0
    last = capsys.readouterr().out.splitlines()[-1]
    made = [p for p in tmp_path.iterdir()]
    assert len(made) == 1 and made[0].is_dir() and made[0].name.startswith("gradcli-demo-")
    assert str(made[0]) in last
    assert sorted(os.listdir(made[0])) == ["field.png"]


# --- 21. progress covers the whole run, writing included -------------------------------------

class FakeBar:
    def __init__(self) -> None:
        self.tasks: dict[int, dict] = {}

    def add_task(self, description: str, total=None) -> int:
        self.tasks[len(self.tasks)] = {"description": description, "completed": 0,
                                       "total": total}
        return len(self.tasks) - 1

    def update(self, task: int, completed: int, total: int) -> None:
        self.tasks[task].update(completed=completed, total=total)

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True


@pytest.fixture
def bars(monkeypatch):
    from gradcli.cli import progress

    made: list[FakeBar] = []
    monkeypatch.setattr(progress, "_terminal", lambda: True)
    monkeypatch.setattr(progress, "_bar", lambda: made.append(FakeBar()) or made[-1])
    monkeypatch.setattr(progress, "WRITE_VALUES", 1000)
    return made


def test_progress_covers_computing_and_writing(cli, tmp_path, bars):
    out = tmp_path / "g.csv"
    status, _, _ = cli("grad", "x*y", "--grid", "x=0:1:300", "--grid", "y=0:1:300",
                       "-o", str(out))
    assert status == 0 and len(bars) == 1 and bars[0].stopped
    tasks = list(bars[0].tasks.values())
    assert [t["description"] for t in tasks] == ["computing", f"writing {out}"]
    assert tasks[1]["completed"] == tasks[1]["total"] == 90_000  # every row written
    assert tasks[0]["completed"] == tasks[0]["total"] >= 1


def test_no_progress_with_quiet(cli, tmp_path, bars):
    status, _, _ = cli("grad", "x*y", "--grid", "x=0:1:300", "--grid", "y=0:1:300",
                       "-o", str(tmp_path / "g.csv"), "-q")
    assert status == 0 and bars == []


def test_no_progress_for_a_short_run(cli, tmp_path, bars):
    status, _, _ = cli("grad", "x*y", "--grid", "x=0:1:3", "--grid", "y=0:1:3",
                       "-o", str(tmp_path / "g.csv"))
    assert status == 0 and bars == []


def test_no_progress_off_a_terminal(cli, tmp_path, bars, monkeypatch):
    from gradcli.cli import progress

    monkeypatch.setattr(progress, "_terminal", lambda: False)
    status, _, _ = cli("grad", "x*y", "--grid", "x=0:1:300", "--grid", "y=0:1:300",
                       "-o", str(tmp_path / "g.csv"))
    assert status == 0 and bars == []
