"""gradcli repl: a line-by-line session answered as the commands would answer, with the
session's definitions, surviving bad lines, and exiting with the worst line's status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli.cli.commands.repl import Session, parse_definition

SCRIPT = Path(sys.executable).with_name("gradcli")


def session(text: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The console script's session fed ``text`` through a pipe."""
    return subprocess.run([str(SCRIPT), "repl", *args], input=text, capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_a_piped_session_answers_each_line_in_order() -> None:
    """Definitions are used by later lines (sin(1)cos(2) and its partials, by hand: cos(1)
    cos(2) and -sin(1)sin(2)); an expression with spaces needs no quotes."""
    done = session("f(x, y) = sin(x)*cos(y)\n"
                   "grad f(x, y) --at x=1,y=2\n"
                   "m = x*y\n"
                   "eval m^2 + 1 --at x=2,y=3\n"
                   "grad x^2 + 3x + 1 --at x=4\n", "-f", "csv")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "x,y,f,df/dx,df/dy"
    x, y, f, fx, fy = map(float, lines[1].split(","))
    import math

    assert (x, y) == (1.0, 2.0)
    assert f == pytest.approx(math.sin(1) * math.cos(2), rel=1e-15)
    assert fx == pytest.approx(math.cos(1) * math.cos(2), rel=1e-15)
    assert fy == pytest.approx(-math.sin(1) * math.sin(2), rel=1e-15)
    assert lines[2:] == ["x,y,f", "2.0,3.0,37.0", "x,f,df/dx", "4.0,29.0,11.0"]


def test_a_bad_line_says_why_and_the_session_goes_on() -> None:
    """The error of the bad line, then the next line's answer; exit 2, the worst status."""
    done = session("grad sinn(x) --at x=1\neval 2*x --at x=3\n", "-f", "csv")
    assert done.returncode == 2
    assert "unknown function 'sinn' (did you mean 'sin'?)" in done.stderr
    assert done.stdout.splitlines() == ["x,f", "3.0,6.0"]
    assert "Traceback" not in done.stderr


def test_the_session_format_applies_unless_a_line_names_its_own() -> None:
    """-f jsonl for the session: one JSON object per row; a line's -f csv wins."""
    done = session("eval x^2 --grid x=0:2:3\neval x --at x=5 -f csv\n", "-f", "jsonl")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()[:3]]
    assert [(r["x"], r["f"]) for r in rows] == [(0.0, 0.0), (1.0, 1.0), (2.0, 4.0)]
    assert done.stdout.splitlines()[3:] == ["x,f", "5.0,5.0"]


def test_no_files_and_quiet_hold_for_every_line(tmp_path: Path) -> None:
    """The session's --no-files refuses a line's @FILE; -q silences the lines' notes."""
    program = tmp_path / "p.gc"
    program.write_text("x^2\n")
    done = session(f"eval @{program} --at x=2\n", "--no-files")
    assert done.returncode == 2 and "reading files is turned off" in done.stderr
    done = session("eval x/2pi --at x=1\n", "-q", "-f", "csv")
    assert done.returncode == 0 and done.stderr == ""


def test_definitions_bring_only_what_the_line_uses() -> None:
    """A step or function is put in front of a line only when the line (or a definition
    it uses) names it, so unused definitions bind no variables."""
    s = Session(lambda words: 0)
    for line in ("f(a, b) = a*b + c", "m = x*y", "g(u) = f(u, 2) + 1"):
        assert s.answer(line) == 0
    assert s.program_for("g(x)") == "f(a, b) = a*b + c; g(u) = f(u, 2) + 1; g(x)"
    assert s.program_for("m + 1") == "m = x*y; m + 1"
    assert s.program_for("x + 1") == "x + 1"
    assert parse_definition("grad x --at x=1") is None
    assert parse_definition("x == 1") is None


def test_a_definition_that_does_not_parse_is_refused_and_the_old_one_kept(capsys) -> None:
    """A broken redefinition leaves the earlier definition in place (status 2)."""
    s = Session(lambda words: 0)
    assert s.answer("m = x + 1") == 0
    assert s.answer("m = x + zz(1)") == 2
    assert "unknown function 'zz'" in capsys.readouterr().err
    assert s.program_for("m") == "m = x + 1; m"
    assert s.worst == 2
