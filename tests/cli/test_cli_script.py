"""The installed ``gradcli`` console script, as a user runs it (a few subprocesses only)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("gradcli")

pytestmark = pytest.mark.skipif(not SCRIPT.exists(), reason="console script not installed")


def gradcli(*args: str, stdin: str | None = None, env: dict | None = None,
            cwd: Path | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("FORCE_COLOR", None)
    return subprocess.run([str(SCRIPT), *args], input=stdin, capture_output=True, text=True,
                          timeout=60, env=full_env, cwd=cwd)


def test_script_grad_seed_csv_when_piped():
    p = gradcli("grad", "x^2 + 3x + 1", "--at", "x=4")
    assert p.returncode == 0, p.stderr
    assert p.stdout == "x,f,df/dx\n4.0,29.0,11.0\n"
    assert p.stderr == ""


def test_script_jacobian_vector_variable_seed():
    p = gradcli("jacobian", "[sum(x), sum(x^2)]", "--at", "x=[0,1,2,3]")
    assert p.returncode == 0, p.stderr
    header, row = p.stdout.splitlines()
    values = dict(zip(header.split(","), map(float, row.split(",")), strict=True))
    assert (values["f[0]"], values["f[1]"]) == (6.0, 14.0)
    assert [values[f"df[0]/dx[{k}]"] for k in range(4)] == [1.0] * 4
    assert [values[f"df[1]/dx[{k}]"] for k in range(4)] == [0.0, 2.0, 4.0, 6.0]


def test_script_points_from_stdin_and_strict():
    p = gradcli("grad", "x[0]*x[1]", "--points", "-", stdin="x[0],x[1]\n2,3\n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["x[0],x[1],f,df/dx[0],df/dx[1]", "2.0,3.0,6.0,3.0,2.0"]
    p = gradcli("eval", "log(x)", "--at", "x=-1", "--strict")
    assert p.returncode == 1 and "nan" in p.stdout and "non-finite" in p.stderr


def test_script_no_arguments_prints_usage():
    p = gradcli()
    assert p.returncode == 0
    assert sum(line.strip().startswith("gradcli ") for line in p.stdout.splitlines()) >= 3


def test_script_hostile_expression_executes_nothing(tmp_path):
    pwned = tmp_path / "pwned"
    p = gradcli("eval", f"__import__('os').system('touch {pwned}')", "--at", "x=1")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert not pwned.exists()


def test_script_output_file(tmp_path):
    p = gradcli("grad", "x^2", "--grid", "x=-2:2:5", "-o", "g.csv", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout == ""
    lines = (tmp_path / "g.csv").read_text().splitlines()
    assert [line.split(",")[2] for line in lines[1:]] == ["-4.0", "-2.0", "0.0", "2.0", "4.0"]
    assert sorted(q.name for q in tmp_path.iterdir()) == ["g.csv"]


def test_no_matplotlib_import():
    # one interpreter: after each command, matplotlib must still be absent, and so must
    # everything else these commands do not use (rich, the other commands' code, the
    # JSON/NPZ writers, --check). The full --help lists every command's options, so it
    # reads the plot options' defaults from gradcli.plot.options (numpy only, no drawing)
    unused = ("matplotlib", "rich", "gradcli.plot", "gradcli.cli.commands.graph_command",
              "gradcli.cli.commands.plot_command", "gradcli.evaluation.check",
              "gradcli.output.json_writer", "gradcli.output.npz_writer", "fractions")
    drawing = ("gradcli.plot.figures", "gradcli.plot.render", "gradcli.plot.html",
               "gradcli.plot.animate", "gradcli.plot.terminal")
    code = ("import sys\n"
            "from gradcli.cli.main import main\n"
            "for argv in (['grad', 'x^2', '--at', 'x=1'], ['grad', '--help'], ['--help']):\n"
            "    status = main(argv)\n"
            "    print('MPL', 'matplotlib' in sys.modules, status)\n"
            f"    print('UNUSED', sorted(m for m in sys.modules if m.startswith({unused})))\n"
            f"    print('DRAWING', sorted(m for m in sys.modules if m.startswith({drawing})))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert [line for line in p.stdout.splitlines() if line.startswith("MPL")] == [
        "MPL False 0"] * 3
    unused_lines = [line for line in p.stdout.splitlines() if line.startswith("UNUSED")]
    assert unused_lines[:2] == ["UNUSED []"] * 2
    after_help = ast.literal_eval(unused_lines[2].removeprefix("UNUSED "))
    assert "gradcli.plot.options" in after_help
    assert all(m.startswith("gradcli.plot") for m in after_help)
    assert [line for line in p.stdout.splitlines() if line.startswith("DRAWING")] == [
        "DRAWING []"] * 3
