"""gradcli repl: a line-by-line session answered as the commands would answer, with the
session's definitions, surviving bad lines, and exiting with the worst line's status."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradcli.cli.commands.repl_command import MAX_DEFINITIONS, Session, parse_definition

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
    assert s.program_for("g(x)") == "f(a, b) = a*b + c\ng(u) = f(u, 2) + 1\ng(x)"
    assert s.program_for("m + 1") == "m = x*y\nm + 1"
    assert s.program_for("x + 1") == "x + 1"
    assert parse_definition("grad x --at x=1") is None
    assert parse_definition("x == 1") is None


def test_a_definition_that_does_not_parse_is_refused_and_the_old_one_kept(capsys) -> None:
    """A broken redefinition leaves the earlier definition in place (status 2)."""
    s = Session(lambda words: 0)
    assert s.answer("m = x + 1") == 0
    assert s.answer("m = x + zz(1)") == 2
    assert "unknown function 'zz'" in capsys.readouterr().err
    assert s.program_for("m") == "m = x + 1\nm"
    assert s.worst == 2


def test_a_definition_others_use_is_replaced_where_it_stands(capsys) -> None:
    """Redefining f, which g uses, keeps f before g (g now calls the new f); a new form
    of f (another number of parameters) would break g and is refused when typed; an
    unused definition is made anew, after the others."""
    s = Session(lambda words: 0)
    for line in ("f(a) = a + 1", "g(b) = 2*f(b)", "h = 5*x"):
        assert s.answer(line) == 0
    assert s.answer("f(a) = a^2") == 0
    assert s.program_for("g(x)") == "f(a) = a^2\ng(b) = 2*f(b)\ng(x)"
    assert s.answer("f(a, c) = a*c") == 2
    assert capsys.readouterr().err == ("gradcli: error: 'f' is used by g: a new definition of "
                                       "it keeps its form (f(a))\n")
    assert s.answer("h = 6*x") == 0
    assert list(s.definitions) == ["f", "g", "h"]
    done = session("f(a) = a + 1\ng(b) = 2*f(b)\nf(a) = a^2\neval g(x) --at x=3\n",
                   "-f", "csv")
    assert done.stdout.splitlines() == ["x,f", "3.0,18.0"], done.stderr


def test_a_chain_of_a_thousand_steps_runs_to_its_end() -> None:
    """s0 = x, s1 = s0 + 1, ..., s1000: at x = 2, s1000 is 1002 and s602 is 604 (before,
    the glued definitions passed the expression limit of 10,000 characters at step 602,
    and later lines took s601 as a free variable)."""
    text = "s0 = x\n" + "".join(f"s{i} = s{i - 1} + 1\n" for i in range(1, 1001))
    done = session(text + "eval s1000 --at x=2\neval s602 --at x=2\n", "-f", "csv")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["x,f", "2.0,1002.0", "x,f", "2.0,604.0"]


def test_a_definition_that_cannot_run_is_refused_when_typed(capsys) -> None:
    """Each is refused at once, with its reason, and nothing is defined: a step named like
    a variable of an earlier definition (a program would refuse it: used before it is
    defined), functions nesting past the compiler's 100 levels, a definition past the
    session's own limit on its definitions."""
    s = Session(lambda words: 0)
    assert s.answer("m = x*y") == 0
    assert s.answer("x = 3") == 2
    assert capsys.readouterr().err == ("gradcli: error: 'x' is a variable of m (m = x*y): "
                                       "name the step differently\n")
    assert s.answer("f0(a) = a + 1") == 0
    for i in range(1, 99):
        assert s.answer(f"f{i}(a) = f{i - 1}(a) + 1") == 0, capsys.readouterr().err
    assert s.answer("f99(a) = f98(a) + 1") == 2
    assert "functions would call each other more than 100 levels deep" in \
        capsys.readouterr().err
    body = " + ".join(["x"] * 2490)  # 9,957 characters: a line holds at most 10,000 bytes
    held = sum(len(m.text) + 1 for m in s.definitions.values())
    i = 0
    while held + len(f"big{i} = {body}") + 1 <= MAX_DEFINITIONS:
        assert s.answer(f"big{i} = {body}") == 0
        held += len(f"big{i} = {body}") + 1
        i += 1
    assert i > 100 and s.answer(f"big{i} = {body}") == 2
    err = capsys.readouterr().err
    assert f"the limit is {MAX_DEFINITIONS:,} (a session's own)" in err
    assert set(s.definitions) >= {"m", "f98"}
    assert not {"x", "f99", f"big{i}"} & set(s.definitions)


def test_a_line_parses_only_its_own_text() -> None:
    """The definitions a line uses are parsed once: the program a line runs carries them
    parsed (the same statement objects for every later line using them), and the text
    after them is all that is parsed again; a second line using the same definitions
    parses nothing of them."""
    from gradcli.lang import parse
    from gradcli.lang import program as lang_program

    s = Session(lambda words: 0)
    for line in ("s0 = x", *(f"s{i} = s{i - 1} + 1" for i in range(1, 2000))):
        assert s.answer(line) == 0
    made: list[str] = []
    original = lang_program.parse_definitions

    def counted(text: str, after=None):
        made.append(text)
        return original(text, after)

    lang_program.parse_definitions = counted
    try:
        first, second = s.program_for("s1999 + x"), s.program_for("2*s1999")
    finally:
        lang_program.parse_definitions = original
    assert len(made) == 1
    tree = parse(second)
    assert len(tree.statements) == 2001
    assert tree.statements[0] is first.head.statements[0]
    assert tree.statements[1999] is first.head.statements[1999]


def test_standard_input_is_the_sessions_own(tmp_path: Path) -> None:
    """@- and --points - would read the session's next lines as their data: each is
    refused with one line, and the next line is answered."""
    done = session("eval @- --at x=1\ngrad x^2 --points -\neval x --at x=2\n", "-f", "csv")
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "gradcli: error: @- reads standard input, which holds this session's own lines: "
        "give the program on the line or as @FILE.gc",
        "gradcli: error: --points - reads standard input, which holds this session's own "
        "lines: give a file"]
    assert done.stdout.splitlines() == ["x,f", "2.0,2.0"]


def test_completion_is_refused_and_no_files_writes_no_file(tmp_path: Path) -> None:
    """A line cannot install shell completion (which edits the shell's start-up file), in
    any session; under --no-files a line's -o is refused (results go to standard output)
    and nothing is written, while without it -o writes its file."""
    env = {"HOME": str(tmp_path), "SHELL": "/bin/bash"}
    out = tmp_path / "out.csv"
    done = session(f"--install-completion\n--show-completion\neval x --at x=1 -o {out}\n"
                   "eval x --at x=3\n", "--no-files", "-f", "csv", env=env)
    assert done.returncode == 2
    refused = ("gradcli: error: shell completion is installed from the shell (gradcli "
               "--install-completion), not in a session")
    assert done.stderr.splitlines() == [
        refused, refused,
        "gradcli: error: --output writes a file, and this session runs with --no-files: its "
        "results go to standard output"]
    assert done.stdout.splitlines() == ["x,f", "3.0,3.0"]
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    done = session(f"eval x --at x=1 -o {out}\n", env=env)
    assert done.returncode == 0 and out.read_text() == "x,f\n1.0,1.0\n"


def test_help_lists_the_commands_and_the_sessions_own_words() -> None:
    """help (and ?) name every command but repl, the words of the session (definitions,
    help, exit) and the definitions made so far."""
    from gradcli.cli.definition import all_commands

    done = session("m = x*y\nhelp\n?\n")
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.split("Commands (")[1:]
    assert first.replace("Definitions (1):\n  m = x*y\n", "") == \
        second.replace("Definitions (1):\n  m = x*y\n", "")
    listed = [line.split()[0] for line in first.splitlines()[1:] if line.startswith("  ")
              and not line.startswith("   ")]
    names = [c.name for c in all_commands() if c.name != "repl"]
    assert listed[:len(names)] == names
    assert "  exit, quit" in first and "  NAME = EXPR" in first and "  help, ?" in first
    assert "Definitions (1):\n  m = x*y\n" in first
