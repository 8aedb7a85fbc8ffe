"""A battery of hostile and malformed command lines: each gets a clear answer, quickly.

Exit status contract (see SECURITY.md): 2 for bad input (expression, option values, point
specs, CSV files, formats), 1 for I/O failures (the path is named). Stderr shape:

* an expression error: three lines -- the expression (indented 2), a caret line, then
  ``error: ...``; one ``error: ...`` line when no single character is to blame (too long);
* an error in an option value that is itself a formula (``--at x=...``, ``--grid``
  bounds, ``--vector``): ``gradcli: error: ...`` and, when a character is to blame, the
  value and a caret line;
* anything else: exactly one line ``gradcli: error: ...``.

Every case also checks: no traceback, no "internal error", nothing on stdout, no control
characters on stderr, done within a few seconds (a hard SIGALRM limit guards against
hangs), the working directory unchanged (no output or temporary file), and the injection
payloads' sentinel file never created. Most cases run in process; a handful run the real
console script.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

SENTINEL = "SENTINEL"
INJECT = f"__import__('os').system('touch {SENTINEL}')"
SCRIPT = Path(sys.executable).with_name("gradcli")
HAVE_DEV_FULL = os.path.exists("/dev/full")
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")  # anything but '\n'
WALL = 5.0  # seconds; every case below takes well under 0.1 s

FIXTURES = {
    "good.csv": "x,y\n1,2\n",
    "ragged.csv": "x,y\n1,2\n3\n",
    "nonnum.csv": "x,y\n1,abc\n",
    "hexnum.csv": "x\n0x10\n",
    "empty.csv": "",
    "blank.csv": "\n\n  \n",
    "inject.csv": f"{INJECT},y\n1,2\n",
    "gap.csv": "x[0],x[2]\n1,2\n",
    "semicolon.csv": "x;y\n1;2\n",
}


class Alarm(BaseException):
    """The hard time limit of one command ran out (BaseException: no handler swallows it)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    def ring(_signum, _frame):
        raise Alarm(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working directory holding the fixture files (and nothing else)."""
    for name, text in FIXTURES.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "binary.csv").write_bytes(b"\xff\xfe\x00x\n\x80\n")
    (tmp_path / "dir.csv").mkdir()
    if HAVE_DEV_FULL:
        (tmp_path / "full.csv").symlink_to("/dev/full")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def listing(directory: Path) -> list[str]:
    return sorted(os.listdir(directory))


def run(cli, argv: list[str], limit: float = 20.0) -> tuple[int, str, str, float]:
    start = time.perf_counter()
    with time_limit(limit):
        status, out, err = cli(argv)
    elapsed = time.perf_counter() - start
    return status, out, err, elapsed


@dataclass
class Case:
    id: str
    argv: list[str]
    status: int
    kind: str  # usage | expr | expr1 | value | io
    words: list[str] = field(default_factory=list)


def C(id: str, argv: list[str], status: int, kind: str, *words: str) -> Case:
    return Case(id, argv, status, kind, list(words))


AT = ["--at", "x=1"]
CASES = [
    # --- code injection and Python syntax in the expression ---------------------------------
    C("import-system", ["grad", INJECT, *AT], 2, "expr", "strings are not part of the language"),
    C("exec", ["grad", f"exec(\"open('{SENTINEL}','w')\")", *AT], 2, "expr"),
    C("eval-call", ["eval", "eval('1+1')", *AT], 2, "expr"),
    C("dunder-attr", ["grad", "x.__class__.__bases__", *AT], 2, "expr", "'.'"),
    C("dunder-subclasses", ["grad", "().__class__.__subclasses__()", *AT], 2, "expr"),
    C("dunder-name", ["grad", "__builtins__", *AT], 2, "expr", "__builtins__"),
    C("getattr", ["grad", "getattr(x, '__class__')", *AT], 2, "expr"),
    C("attr-on-function", ["grad", "sin.__globals__", *AT], 2, "expr"),
    C("lambda", ["grad", f"lambda: open('{SENTINEL}', 'w')", *AT], 2, "expr"),
    C("comprehension", ["grad", "[open('S','w') for _ in x]", *AT], 2, "expr"),
    C("generator", ["grad", "sum(i for i in x)", *AT], 2, "expr"),
    C("string", ["grad", "'abc'", *AT], 2, "expr", "strings"),
    C("bytes", ["grad", "b'\\x00'", *AT], 2, "expr"),
    C("f-string", ["grad", f'f"{{{INJECT}}}"', *AT], 2, "expr"),
    C("walrus", ["grad", "(y := 2)", *AT], 2, "expr"),
    C("conditional", ["grad", "x if x else 1", *AT], 2, "expr", "missing operator"),
    C("statement", ["grad", "x; import os", *AT], 2, "expr"),
    C("comment", ["grad", "x # comment\n+ 1", *AT], 2, "expr", "not used"),
    C("matmul-op", ["grad", "x @ x", *AT], 2, "expr"),
    C("dict", ["grad", "{x: 1}", *AT], 2, "expr"),
    C("assignment", ["grad", "x = 2", *AT], 2, "usage", "step of the program"),
    C("comparison-as-assignment", ["grad", "x + 1 = 2", *AT], 2, "expr", "=="),
    C("backslash", ["grad", "x \\\n+ 1", *AT], 2, "expr"),
    # --- unusual characters --------------------------------------------------------------------
    C("nul", ["grad", "x\x00", *AT], 2, "expr", "\\x00"),
    C("nul-in-middle", ["grad", "x\x00+1", *AT], 2, "expr"),
    C("cyrillic-x", ["grad", "\u0445 + 1", *AT], 2, "expr", "U+0445"),
    C("fullwidth-x", ["grad", "\uff58^2", *AT], 2, "expr", "not ASCII"),
    C("zero-width-space", ["grad", "x\u200b+1", *AT], 2, "expr", "U+200B"),
    C("rtl-override", ["grad", "\u202ex+1", *AT], 2, "expr", "U+202E"),
    C("unicode-minus", ["grad", "x \u2212 1", *AT], 2, "expr", "ASCII minus"),
    C("escape-sequence", ["grad", "x\x1b[2J", *AT], 2, "expr"),
    C("lone-surrogate", ["grad", "x\udcff", *AT], 2, "expr"),
    C("empty", ["grad", "", *AT], 2, "expr", "empty expression"),
    C("blank", ["grad", " \t\n ", *AT], 2, "expr", "empty expression"),
    # --- too big, too deep -------------------------------------------------------------------
    C("parens-10000-deep", ["grad", "(" * 10_000 + "x" + ")" * 10_000, *AT], 2, "expr1",
      "20001 characters", "the limit is 10000"),
    C("too-long", ["grad", "x" * 10_001, *AT], 2, "expr1", "the limit is 10000"),
    C("parens-201-deep", ["grad", "(" * 201 + "x" + ")" * 201, *AT], 2, "expr",
      "nests deeper than 200 levels"),
    C("calls-201-deep", ["grad", "sin(" * 201 + "x" + ")" * 201, *AT], 2, "expr",
      "nests deeper than 200 levels"),
    C("minus-5000", ["grad", "x+" + "-" * 5000 + "x", *AT], 2, "expr", "nests deeper than 200"),
    C("minus-after-double-dash", ["grad", *AT, "--", "-" * 5000 + "x"], 2, "expr",
      "nests deeper than 200 levels"),
    C("power-tower-3000", ["grad", "x^" * 3000 + "x", *AT], 2, "expr",
      "nests deeper than 200 levels"),
    C("unclosed-10000", ["grad", "(" * 9_999, *AT], 2, "expr"),
    C("number-too-large", ["grad", "x * 1e999", *AT], 2, "expr", "number too large"),
    C("index-too-large", ["grad", "x[9999999999999]", "--at", "x=[1,2]"], 2, "expr"),
    # --- absurd grids ----------------------------------------------------------------------
    C("grid-1e12", ["grad", "x", "--grid", "x=0:1:1e12"], 2, "usage", "--max-points",
      "1,000,000,000,000"),
    C("grid-1e300", ["grad", "x", "--grid", "x=0:1:1e300"], 2, "usage", "--max-points"),
    C("grid-product", ["grad", "x*y", "--grid", "x=0:1:100000", "--grid", "y=0:1:100000"], 2,
      "usage", "--max-points"),
    C("grid-over-max-points", ["grad", "x", "--grid", "x=0:1:11", "--max-points", "10"], 2,
      "usage", "--max-points"),
    C("grid-nan", ["grad", "x", "--grid", "x=0:1:nan"], 2, "usage"),
    C("grid-inf", ["grad", "x", "--grid", "x=0:1:inf"], 2, "usage"),
    C("grid-1/0", ["grad", "x", "--grid", "x=0:1:1/0"], 2, "usage", "finite"),
    C("grid-0/0", ["grad", "x", "--grid", "x=0:1:0/0"], 2, "usage", "finite"),
    C("grid-negative", ["grad", "x", "--grid", "x=0:1:-5"], 2, "usage", ">= 1"),
    C("grid-zero", ["grad", "x", "--grid", "x=0:1:0"], 2, "usage", ">= 1"),
    C("grid-fraction", ["grad", "x", "--grid", "x=0:1:2.5"], 2, "usage", "whole number"),
    C("grid-two-parts", ["grad", "x", "--grid", "x=0:1"], 2, "usage", "start:stop:count"),
    C("grid-four-parts", ["grad", "x", "--grid", "x=0:1:3:4"], 2, "usage", "start:stop:count"),
    C("grid-no-value", ["grad", "x", "--grid", "x="], 2, "usage", "no value"),
    C("grid-no-name", ["grad", "x", "--grid", "=0:1:3"], 2, "usage"),
    C("grid-infinite-bound", ["grad", "x", "--grid", "x=0:1e999:3"], 2, "value", "too large"),
    C("grid-injection", ["grad", "x", "--grid", f"x=0:{INJECT}:3"], 2, "value"),
    C("grid-vector-bound", ["grad", "x", "--grid", "x=[1,2]:3:3"], 2, "usage", "vector"),
    C("grid-twice", ["grad", "x", "--grid", "x=0:1:3", "--grid", "x=0:1:3"], 2, "usage", "twice"),
    # --- bad points ------------------------------------------------------------------------
    C("at-empty-value", ["grad", "x", "--at", "x="], 2, "usage", "no value"),
    C("at-duplicate", ["grad", "x", "--at", "x=1,x=2"], 2, "usage", "twice"),
    C("at-unknown-name", ["grad", "x", "--at", "y=1"], 2, "expr", "not bound"),
    C("at-no-equals", ["grad", "x", "--at", "x"], 2, "usage", "name=value"),
    C("at-bad-name", ["grad", "x", "--at", "1x=3"], 2, "usage", "not a variable name"),
    C("at-dunder-value", ["grad", "x", "--at", "x=().__class__"], 2, "value"),
    C("at-injection", ["grad", "x", "--at", f"x={INJECT}"], 2, "value", "strings"),
    C("at-ragged", ["grad", "x", "--at", "x=[1,[2]]"], 2, "value", "cannot mix"),
    C("at-matrix", ["grad", "x", "--at", "x=[[1,2],[3,4]]"], 2, "usage", "scalar-valued"),
    C("at-3d", ["grad", "sum(x)", "--at", "x=[[[1]]]"], 2, "usage", "vectors and matrices"),
    C("at-mismatched-points", ["grad", "x", "--at", "x=1", "--at", "y=2"], 2, "usage"),
    C("at-variable-in-value", ["grad", "x", "--at", "x=y"], 2, "usage", "constant"),
    C("at-huge-vector", ["grad", "sum(x)", "--at", "x=[" + "1," * 6000 + "1]"], 2, "value",
      "the limit is 10000"),
    C("points-missing", ["grad", "x", "--points", "missing.csv"], 2, "usage", "missing.csv"),
    C("points-empty", ["grad", "x", "--points", "empty.csv"], 2, "usage", "empty"),
    C("points-blank-lines", ["grad", "x", "--points", "blank.csv"], 2, "usage", "empty"),
    C("points-ragged", ["grad", "x*y", "--points", "ragged.csv"], 2, "usage", "line 3"),
    C("points-non-numeric", ["grad", "x*y", "--points", "nonnum.csv"], 2, "usage", "abc"),
    C("points-hex", ["grad", "x", "--points", "hexnum.csv"], 2, "usage", "0x10"),
    C("points-binary", ["grad", "x", "--points", "binary.csv"], 2, "usage", "binary.csv"),
    C("points-injection-header", ["grad", "x", "--points", "inject.csv"], 2, "usage",
      "no column names a variable"),
    C("points-gap", ["grad", "sum(x)", "--points", "gap.csv"], 2, "usage", "x[1]"),
    C("points-semicolons", ["grad", "x", "--points", "semicolon.csv"], 2, "usage"),
    C("points-directory", ["grad", "x", "--points", "dir.csv"], 2, "usage", "dir.csv"),
    C("points-and-at", ["grad", "x", "--points", "good.csv", *AT], 2, "usage", "only one"),
    # --- vectors and directions ------------------------------------------------------------
    C("vjp-wrong-length", ["vjp", "[x, 2x]", "--vector", "1,2,3", *AT], 2, "usage", "shape"),
    C("vjp-scalar-for-vector", ["vjp", "[x, 2x]", "--vector", "1", *AT], 2, "usage", "shape"),
    C("vjp-ragged", ["vjp", "[x, 2x]", "--vector", "[1,[2]]", *AT], 2, "value"),
    C("vjp-injection", ["vjp", "[x, 2x]", "--vector", f"{INJECT},1", *AT], 2, "value"),
    C("jvp-unknown-name", ["jvp", "x", "--direction", "z=1", *AT], 2, "usage", "'z'"),
    C("jvp-empty", ["jvp", "x", "--direction", "x=", *AT], 2, "usage", "no value"),
    # --- what to compute ------------------------------------------------------------------
    C("grad-of-vector", ["grad", "[x, x]", *AT], 2, "usage", "jacobian"),
    C("hessian-of-vector", ["hessian", "[x, x]", *AT], 2, "usage"),
    C("shape-mismatch", ["eval", "[x, x] + [x, x, x]", *AT], 2, "expr", "shapes"),
    C("index-out-of-range", ["eval", "x[5]", "--at", "x=[1,2]"], 2, "expr", "out of range"),
    C("graph-two-points", ["graph", "x", "--at", "x=1", "--at", "x=2"], 2, "usage"),
    C("graph-bad-format", ["graph", "x", *AT, "-f", "svg"], 2, "usage", "svg"),
    C("no-points", ["grad", "x"], 2, "usage", "--at"),
    C("unknown-command", ["frobnicate", "x"], 2, "usage", "frobnicate"),
    C("unknown-option", ["grad", "x", *AT, "--frobnicate"], 2, "usage", "--frobnicate"),
    C("missing-expression", ["grad"], 2, "usage", "EXPRESSION"),
    C("precision-not-int", ["grad", "x", *AT, "--precision", "many"], 2, "usage"),
    C("max-points-not-int", ["grad", "x", *AT, "--max-points", "1e99"], 2, "usage"),
    C("dtype", ["grad", "x", *AT, "--dtype", "float16"], 2, "usage", "float16"),
    # --- formats and outputs ---------------------------------------------------------------
    C("unknown-format", ["grad", "x", *AT, "-f", "xml"], 2, "usage", "xml"),
    C("unknown-extension", ["grad", "x", *AT, "-o", "out.xyz"], 2, "usage", ".xyz"),
    C("no-extension", ["grad", "x", *AT, "-o", "out"], 2, "usage", "extension"),
    C("format-extension-mismatch", ["grad", "x", *AT, "-f", "csv", "-o", "o.json"], 2, "usage"),
    C("npz-to-stdout", ["grad", "x", *AT, "-f", "npz"], 2, "usage", "-o"),
    C("missing-directory", ["grad", "x", *AT, "-o", "/nonexistent/dir/out.csv"], 1, "io",
      "/nonexistent/dir/out.csv"),
    C("missing-directory-npz", ["grad", "x", "--grid", "x=0:1:5", "-o", "nope/out.npz"], 1, "io",
      "nope/out.npz"),
    C("directory-as-output", ["grad", "x", *AT, "-o", "dir.csv"], 1, "io", "dir.csv"),
    C("graph-missing-directory", ["graph", "x", *AT, "-f", "dot", "-o", "nope/g.dot"], 1, "io",
      "nope/g.dot"),
]
if HAVE_DEV_FULL:
    CASES += [
        C("full-disk-csv", ["grad", "x", *AT, "-o", "full.csv"], 1, "io", "full.csv",
          "No space left"),
        C("full-disk-grid", ["grad", "sin(x)", "--grid", "x=0:1:20000", "-o", "full.csv"], 1,
          "io", "full.csv", "No space left"),
    ]


def check_shape(case: Case, err: str) -> None:
    lines = err.rstrip("\n").split("\n")
    if case.kind == "expr":
        assert len(lines) == 3, err
        assert lines[0].startswith("  ") and lines[1].strip() == "^", err
        assert lines[2].startswith("error: "), err
    elif case.kind == "expr1":
        assert len(lines) == 1 and lines[0].startswith("error: "), err
    elif case.kind == "value":
        assert lines[0].startswith("gradcli: error: "), err
        assert len(lines) in (1, 3), err
        if len(lines) == 3:
            assert lines[2].strip() == "^", err
    else:  # usage, io
        assert len(lines) == 1 and lines[0].startswith("gradcli: error: "), err
    assert err.endswith("\n")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_hostile_command_line(case: Case, cli, workdir) -> None:
    before = listing(workdir)
    status, out, err, elapsed = run(cli, case.argv)
    assert status == case.status, err
    assert out == ""
    assert "Traceback" not in err and "internal error" not in err, err
    check_shape(case, err)
    for word in case.words:
        assert word in err, (word, err)
    assert not CONTROL.search(err), repr(err)
    assert elapsed < WALL
    assert listing(workdir) == before  # no output, no temporary file, no sentinel
    assert not (workdir / SENTINEL).exists()
    if HAVE_DEV_FULL:
        assert os.readlink(workdir / "full.csv") == "/dev/full"


def test_battery_is_big_enough() -> None:
    assert len(CASES) >= 40
    assert len({c.id for c in CASES}) == len(CASES)


# --- large but legal: a clear (non-finite) answer, quickly ----------------------------------

@pytest.mark.parametrize("expr, at, column, expected", [
    ("9^9^9^9", "x=1", "f", "inf"),
    ("x^1e308", "x=2", "f", "inf"),
    ("x^1e308", "x=0.5", "f", "0.0"),
    ("exp(exp(exp(x)))", "x=10", "f", "inf"),
    ("1e308*x", "x=10", "f", "inf"),
    ("-1e308*x", "x=10", "f", "-inf"),
    ("log(x)", "x=-1", "f", "nan"),
    ("1/x", "x=0", "f", "inf"),
    ("sqrt(x)", "x=0", "df/dx", "inf"),
])
def test_huge_values_are_answered_with_inf_or_nan(cli, workdir, expr, at, column,
                                                 expected) -> None:
    status, out, err, elapsed = run(cli, ["grad", expr, "--at", at])
    assert status == 0, err
    header, row = out.splitlines()
    assert dict(zip(header.split(","), row.split(","), strict=True))[column] == expected
    if expected in ("inf", "-inf", "nan"):
        # (9^9^9^9 does not use x: that is warned about first)
        assert re.fullmatch(r"(warning: 'x' is given a value but is not a variable of the "
                            r"formula\n)?warning: \d+ non-finite result values? \(nan or "
                            r"inf\) in the output\n", err), err
    assert elapsed < WALL
    status, out, err, _ = run(cli, ["grad", expr, "--at", at, "--strict"])
    assert status == (1 if "warning" in err else 0)


# --- echoing user text must not drive the terminal ----------------------------------------

ESC = "\x1b]0;pwned\x07\x1b[2J"  # set the window title, clear the screen

@pytest.mark.parametrize("argv", [
    pytest.param(["grad", "x", *AT, "-f", ESC], id="format"),
    pytest.param(["grad", "x", *AT, "--dtype", ESC], id="dtype"),
    pytest.param(["grad", "x", "--at", f"{ESC}=1"], id="at-name"),
    pytest.param(["grad", "x", "--grid", f"{ESC}=0:1:3"], id="grid-name"),
    pytest.param(["jvp", "x", "--direction", f"{ESC}=1", *AT], id="direction"),
    pytest.param(["grad", "x", "--points", f"{ESC}.csv"], id="points-path"),
    pytest.param(["grad", "x", *AT, "-o", f"/nonexistent/{ESC}.csv"], id="output-path"),
    pytest.param(["grad", "x", *AT, "-o", f"out.{ESC}"], id="output-extension"),
    pytest.param(["graph", "x", *AT, "-f", ESC], id="graph-format"),
    pytest.param(["grad", "x", "--points", "esc.csv"], id="csv-header"),
    pytest.param(["grad", "x", "--points", "newline.csv"], id="csv-newline"),
    pytest.param(["grad", ESC, *AT], id="expression"),
    pytest.param(["grad", "x", "--grid", f"x=0:1:{ESC}"], id="grid-count"),
    pytest.param(["grad", "x", *AT, f"--{ESC}"], id="unknown-option"),
    pytest.param([ESC, "x"], id="unknown-command"),
    pytest.param(["grad", "x", *AT, "--precision", ESC], id="precision"),
])
def test_error_messages_never_echo_control_characters(cli, workdir, argv) -> None:
    (workdir / "esc.csv").write_text(f"{ESC},y\n1,2\n")
    (workdir / "newline.csv").write_text('"x\n1",y\n1,2\n')
    status, out, err, _ = run(cli, argv)
    missing_directory = any(a.startswith("/nonexistent/") for a in argv)  # I/O failure: exit 1
    assert status == (1 if missing_directory else 2) and out == ""
    assert "\x1b" not in err and "\x07" not in err
    assert not CONTROL.search(err), repr(err)
    lines = err.rstrip("\n").split("\n")
    assert lines[0].startswith(("gradcli: error: ", "  ")), err
    # one message line; more lines only to show a formula and its caret (two-space indent)
    assert all(line.startswith(("  ", "error: ")) for line in lines[1:]), err


# --- CSV details ------------------------------------------------------------------------------

def test_points_header_only_gives_an_empty_result(cli, workdir) -> None:
    """A header without data rows is zero points: the header of the result, nothing else."""
    (workdir / "header.csv").write_text("x,y\n")
    status, out, err, _ = run(cli, ["grad", "x*y", "--points", "header.csv"])
    assert (status, out, err) == (0, "x,y,f,df/dx,df/dy\n", "")


def test_points_duplicate_header_is_named_as_such(cli, workdir) -> None:
    (workdir / "dup.csv").write_text("x,x\n1,2\n")
    status, out, err, _ = run(cli, ["grad", "x", "--points", "dup.csv"])
    assert status == 2
    assert "twice" in err or "duplicate" in err, err


@pytest.mark.parametrize("argv", [
    ["grad", "pi*x", "--at", "pi=4,x=1"],
    ["grad", "e^x", "--grid", "e=0:1:3", "--grid", "x=0:1:2"],
])
def test_constants_cannot_be_given_values(cli, workdir, argv) -> None:
    status, out, err, _ = run(cli, argv)
    assert status == 2 and out == "", out
    assert "constant" in err


# --- limits: refused before anything big is allocated -----------------------------------------

def test_oversized_grid_is_refused_before_allocating(cli, workdir) -> None:
    import tracemalloc

    tracemalloc.start()
    try:
        status, out, err, elapsed = run(cli, ["grad", "x*y*z", "--grid", "x=0:1:10000",
                                                 "--grid", "y=0:1:10000", "--grid",
                                                 "z=0:1:10000"])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert status == 2 and out == ""
    assert "1,000,000,000,000 points" in err and "--max-points" in err
    assert "50,000,000" in err  # the limit itself
    assert peak < 20 * 2**20  # bytes: nothing grid-sized was allocated
    assert elapsed < WALL


def test_raising_max_points_lets_the_same_grid_through(cli, workdir) -> None:
    argv = ["eval", "x", "--grid", "x=0:1:11"]
    assert run(cli, [*argv, "--max-points", "10"])[0] == 2
    status, out, _, _ = run(cli, [*argv, "--max-points", "11"])
    assert status == 0 and len(out.splitlines()) == 12


def test_absurd_grid_count_message_is_short(cli, workdir) -> None:
    status, out, err, _ = run(cli, ["grad", "x", "--grid", "x=0:1:1e300"])
    assert status == 2
    assert len(err) < 200, f"{len(err)} characters"


@pytest.mark.parametrize("n", [33, 65])
def test_grid_with_too_many_axes_is_a_usage_error(cli, workdir, n) -> None:
    grids = [a for i in range(n) for a in ("--grid", f"v{i}=0:1:1")]
    status, out, err, _ = run(cli, ["eval", "v0", *grids])
    assert "internal error" not in err
    assert status == 2 and out == "", err


def test_column_explosion_is_refused_quickly(cli, workdir) -> None:
    """A hessian of a 20,000-vector: 4·10⁸ values per point, refused before any work (a
    2,000-vector's is now 2,001 sweeps and 4·10⁶ values, and runs)."""
    np.save(workdir / "big.npy", np.ones(20_000))
    try:
        status, out, err, _ = run(cli, ["hessian", "sum(x^2)", "--at", "x=@big.npy"],
                                  limit=1.0)
    except Alarm:
        pytest.fail("hessian of a 20,000-vector still running after 1 s")
    assert status == 2 and "values per point" in err and "limit" in err, err


def test_check_tolerance_must_be_a_number(cli, workdir) -> None:
    status, out, err, _ = run(cli, ["grad", "x", *AT, "--check", "--check-tol", "nan"])
    assert status == 2 and out == ""


@pytest.mark.parametrize("argv", [["eval", "0", "--grid"], ["eval", "1", "--grid", "z=1"],
                                  ["grad", "pi", "--grid"]])
def test_table_of_a_zero_dimensional_grid(cli, workdir, argv) -> None:
    status, out, err, _ = run(cli, [*argv, "-f", "table"])
    assert status == 0, err
    assert "internal error" not in err


# --- the real console script -----------------------------------------------------------------

def script(*args: str, cwd: Path, timeout: float = 30) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    return subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=timeout, env=env)


@pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")
@pytest.mark.parametrize("argv, status, needle", [
    (["grad", INJECT, *AT], 2, "strings are not part of the language"),
    (["grad", "(" * 10_000 + "x" + ")" * 10_000, *AT], 2, "the limit is 10000"),
    (["grad", "\u0445^2", *AT], 2, "U+0445"),
    (["eval", "x", "--grid", "x=0:1:1e300"], 2, "--max-points"),
    (["eval", "x*y", "--points", "ragged.csv"], 2, "line 3"),
    (["eval", "x", *AT, "-o", "/nonexistent/dir/out.csv"], 1, "/nonexistent/dir/out.csv"),
], ids=["injection", "parens-10000", "cyrillic", "grid-1e300", "ragged-csv", "missing-dir"])
def test_console_script(workdir, argv, status, needle) -> None:
    before = listing(workdir)
    start = time.perf_counter()
    p = script(*argv, cwd=workdir)
    assert time.perf_counter() - start < 15  # includes interpreter start on a busy machine
    assert p.returncode == status, p.stderr
    assert p.stdout == ""
    assert needle in p.stderr and "Traceback" not in p.stderr
    assert listing(workdir) == before
