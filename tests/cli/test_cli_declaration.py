"""The CLI is generated from one declaration (gradcli/cli/definition.py): the typer commands,
their defaults, --help, the documentation's option tables, shell completion and the two argv
rewrites all follow it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import click
import pytest

from gradcli.cli import reference
from gradcli.cli.app import build
from gradcli.cli.argv import rewrite
from gradcli.cli.definition import BARE_GRID, BY_NAME, COMMANDS, NUMERIC, Command, Option
from gradcli.cli.main import main
from gradcli.cli.messages import ExitStatus
from gradcli.cli.values import real, whole

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("gradcli")


@pytest.mark.parametrize("command", COMMANDS, ids=[c.name for c in COMMANDS])
def test_each_generated_command_has_exactly_the_declared_options(command: Command) -> None:
    group = build(only=command.name)
    generated = group.commands[command.name]
    assert [p.name for p in generated.params] == [
        *(["expression"] if command.takes_expression else []),
        *(o.name for o in command.options)]
    options = generated.params[1:] if command.takes_expression else generated.params
    for param, option in zip(options, command.options, strict=True):
        assert isinstance(param, click.Option)
        assert sorted(param.opts) == sorted(option.flags), option.name
        assert param.is_flag == (option.kind == "flag"), option.name
        assert param.required == option.required, option.name
        assert param.multiple == (option.repeat or option.once), option.name
        if not (option.required or param.multiple):
            assert param.default == option.default_value, option.name
    assert generated.help == command.help
    assert all(example in generated.epilog for example in command.examples)


def test_help_shows_every_option_with_its_example(capsys) -> None:
    for command in COMMANDS:
        assert main([command.name, "--help"]) == 0
        out = " ".join(capsys.readouterr().out.split())  # undo the help's line wrapping
        for option in command.options:
            assert option.flags[0] in out, (command.name, option.name)
            assert f"Example: {' '.join(option.example.split())}" in out, option.name


def test_generated_reference_tables_are_current() -> None:
    """Every generated block of the docs (option tables, the function list) is what the code
    renders now, so a page cannot drift from the declaration or the rule table."""
    pages = sorted((ROOT / "docs").rglob("*.md"))
    stale = [p.name for p in pages
             if reference.updated(t := p.read_text(encoding="utf-8")) != t]
    assert not stale, f"run `make reference`: {stale}"
    commands = (ROOT / "docs" / "reference" / "commands.md").read_text(encoding="utf-8")
    assert "`--max-points` N | all | 50,000,000 |" in commands
    language = (ROOT / "docs" / "reference" / "language.md").read_text(encoding="utf-8")
    assert "| `logsumexp` | 1 argument | vector or matrix to a scalar |" in language


def test_a_new_command_and_option_are_one_entry_each(capsys) -> None:
    """What a later developer does: one Command (and its function), one Option."""
    absolute = Option("absolute", ("--absolute",), "flag", False, help="Also |f|.",
                      example="--absolute")
    new = Command("twice", "Twice the value.", f"{__name__}:run_twice", (*NUMERIC, absolute),
                  ('gradcli twice "x" --at x=1',), "numeric")
    group = build(only="twice", commands=(*COMMANDS, new))
    status = group.main(["twice", "x+1", "--at", "x=2", "--absolute", "--max-points", "1e3"],
                        prog_name="gradcli", standalone_mode=False)
    assert status == 7
    assert CALLS[-1] == {"expression": "x+1", "at": ["x=2"], "absolute": True,
                         "max_points": 1000, "quiet": False, "fmt": "auto"}
    assert "`--absolute` | `twice` | off | Also \\|f\\|." in reference.render_options(
        "numeric", (*COMMANDS, new))


CALLS: list[dict] = []


def run_twice(what: str, **options) -> int:
    CALLS.append({k: options[k] for k in ("expression", "at", "absolute", "max_points",
                                          "quiet", "fmt")})
    return 7 if what == "twice" else 0


def test_exit_status_values() -> None:
    assert [int(s) for s in ExitStatus] == [0, 1, 2, 130]


# --- value syntax: one number syntax for every option ---------------------------------------

@pytest.mark.parametrize("text, value", [("7", 7), ("1e9", 10**9), ("2^20", 2**20),
                                         (" 50_000 ", 50_000), ("1e3*2", 2000)])
def test_whole_numbers_take_constant_syntax(text, value) -> None:
    assert whole(text, 0) == value


@pytest.mark.parametrize("text", ["1.5", "nan", "inf", "-1", "x", "1e99", ""])
def test_whole_numbers_refuse(text) -> None:
    with pytest.raises(ValueError, match="whole number"):
        whole(text, 0, 2**63 - 1)


def test_real_numbers() -> None:
    assert real("2^-20", 0) == 2.0**-20
    assert real("pi/2") == pytest.approx(1.5707963267948966, abs=0)
    for bad in ("nan", "inf", "-1e-9"):
        with pytest.raises(ValueError, match="finite number >= 0"):
            real(bad, 0)


# --- the argv rewrites, each for what typer cannot express ----------------------------------

GRAD = BY_NAME["grad"]


@pytest.mark.parametrize("args, expected", [
    # a bare --grid: typer has no optional option values, so it gets the declared one
    (["f", "--grid"], ["f", f"--grid={BARE_GRID}"]),
    (["f", "-g", "-q"], ["f", f"-g={BARE_GRID}", "-q"]),
    (["f", "--grid", "--grid", "y=3"], ["f", f"--grid={BARE_GRID}", "--grid", "y=3"]),
    (["--grid", "sin(x)"], [f"--grid={BARE_GRID}", "sin(x)"]),    # a formula is no spec
    (["f", "--grid", "x"], ["f", "--grid", "x"]),                 # a name alone is a spec
    (["f", "--grid", "x=0:1:3"], ["f", "--grid", "x=0:1:3"]),
    (["f", "--grid", ""], ["f", "--grid", ""]),                   # empty: a bad spec
    # an expression starting with '-': the first word that is no option goes behind --
    (["-a*x", "--at", "a=1,x=2"], ["--at", "a=1,x=2", "--", "-a*x"]),
    (["--at", "x=1", "-x^2", "-q"], ["--at", "x=1", "-q", "--", "-x^2"]),
    (["-g*x", "--grid"], [f"--grid={BARE_GRID}", "--", "-g*x"]),
    (["-1", "-f", "csv"], ["-f", "csv", "--", "-1"]),
    # left alone: options, values starting with '-', an expression already found, --
    (["x", "--at", "-1", "-q"], ["x", "--at", "-1", "-q"]),
    (["x", "-y"], ["x", "-y"]),
    (["--at=x=1", "x"], ["--at=x=1", "x"]),
    (["--at", "x=1", "--", "-x"], ["--at", "x=1", "--", "-x"]),
])
def test_rewrite(args, expected) -> None:
    assert rewrite(GRAD, args) == expected


def test_rewritten_command_lines_run(capsys) -> None:
    assert main(["grad", "-a*x", "--at", "a=1,x=2"]) == 0
    assert capsys.readouterr().out == "a,x,f,df/da,df/dx\n1.0,2.0,-2.0,-2.0,-1.0\n"
    assert main(["eval", "-x", "--grid", "x", "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "x,f" and out[1] == "-5.0,5.0" and len(out) == 102


def test_each_rewrite_is_needed() -> None:
    """typer alone reads both command lines wrongly (the reason the rewrites exist)."""
    group = build(only="grad")
    for args in (["grad", "-a*x", "--at", "a=1,x=2"], ["grad", "x", "--grid"]):
        with pytest.raises(click.UsageError):
            group.main(args, prog_name="gradcli", standalone_mode=False)


def test_a_declared_bare_value_is_all_it_takes() -> None:
    """Any option can stand alone once the declaration gives it a bare value."""
    fmt = replace(GRAD.option("fmt"), bare="json")
    command = replace(GRAD, options=(*GRAD.options[:3], fmt, *GRAD.options[4:]))
    assert rewrite(command, ["x", "-f", "--at", "x=1"]) == ["x", "-f=json", "--at", "x=1"]


# --- shell completion -----------------------------------------------------------------------

@pytest.mark.skipif(not SCRIPT.exists() or shutil.which("bash") is None,
                    reason="needs the console script and bash")
def test_bash_completion_lists_commands_and_options(tmp_path) -> None:
    script = (
        'source <(gradcli --show-completion bash)\n'
        'COMP_WORDS=(gradcli ""); COMP_CWORD=1; _gradcli_completion gradcli\n'
        'echo "commands: ${COMPREPLY[*]}"\n'
        'COMP_WORDS=(gradcli jvp x --); COMP_CWORD=3; _gradcli_completion gradcli\n'
        'echo "options: ${COMPREPLY[*]}"\n')
    env = {**os.environ, "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ['PATH']}"}
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=60)
    assert p.returncode == 0, p.stderr
    lines = dict(line.split(": ", 1) for line in p.stdout.splitlines())
    assert lines["commands"].split() == [c.name for c in COMMANDS]
    assert lines["options"].split() == [*(o.flags[0] for o in BY_NAME["jvp"].options
                                          if o.flags[0].startswith("--")), "--help"]


@pytest.mark.skipif(not SCRIPT.exists() or shutil.which("bash") is None,
                    reason="needs the console script and bash")
def test_bash_completion_offers_option_values(tmp_path) -> None:
    """-f, --method, --dtype, --color, --cmap and --arrows complete to the values the
    declaration lists for that command (for --cmap, its suggestions)."""
    asks = {"fmt": ("grad", "-f", ""), "method": ("descend", "--method", ""),
            "dtype": ("grad", "--dtype", ""), "color": ("plot", "--color", ""),
            "cmap": ("plot", "--cmap", "in"), "arrows": ("plot", "--arrows", "")}
    script = "source <(gradcli --show-completion bash)\n" + "".join(
        f'COMP_WORDS=(gradcli {cmd} x {flag} "{typed}"); COMP_CWORD=4; '
        f'_gradcli_completion gradcli; echo "{name}: ${{COMPREPLY[*]}}"\n'
        for name, (cmd, flag, typed) in asks.items())
    env = {**os.environ, "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ['PATH']}"}
    p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=60)
    assert p.returncode == 0, p.stderr
    got = {k: v.split() for k, v in (line.split(": ", 1) for line in p.stdout.splitlines())}
    for name, (cmd, _, typed) in asks.items():
        option = BY_NAME[cmd].option(name)
        want = [v for v in option.choices or option.suggest if v.startswith(typed)]
        assert got[name] == want and want, name
    assert got["cmap"] == ["inferno"]
    assert "json" in got["fmt"] and "adam" in got["method"]
