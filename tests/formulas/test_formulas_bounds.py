"""Formulas are built in bounded time and memory: a limit on the steps of work, from the
memory budget (``memory=``, ``--memory``), and on the characters of the whole output.

Before the bounds, a 258-character program of nested functions (``f0(a) = a*a + a; f1(a) =
f0(f0(a)); ... f12(x)``) ran over 150 s and 1 GB without an answer, and the Hessian of
``prod(x)`` for a 400-vector over 150 s and 2 GB. The memory is measured two ways: traced
allocations in this process (the steps' estimate of STEP_BYTES a step holds), and the peak
resident set of a child process running the command (``ru_maxrss`` of the waited child).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

import gradcli as gc
from gradcli.lang.formula_printer import MAX_OUTPUT, TooLarge, TooLong
from gradcli.lang.symbolic import STEP_BYTES
from gradcli.request.budget import FIXED_OVERHEAD

ROOT = Path(__file__).resolve().parents[2]


def nested(levels: int) -> str:
    """``f0(a) = a*a + a; f1(a) = f0(f0(a)); ...; f<levels>(x)``: x through 2^levels
    applications of f0 (the issue's program at 12 levels)."""
    calls = "".join(f" f{i}(a) = f{i - 1}(f{i - 1}(a));" for i in range(1, levels + 1))
    return f"f0(a) = a*a + a;{calls} f{levels}(x)"


@pytest.mark.parametrize(("text", "what", "at"), [
    (nested(14), "grad", None),                       # a chain of 16,384 rules
    ("prod(x)", "hessian", {"x": np.ones(120)}),       # many long columns
    (nested(10).replace("f10(x)", "f10(x*y)"), "hessian", None),
    ("sum(exp(x))*prod(x)", "grad", {"x": np.ones(3000)}),  # one long vector
])
def test_building_stays_within_the_budget_and_stops_past_it(text: str, what: str,
                                                            at: dict | None) -> None:
    """Under an 8 MiB budget each of these stops with TooLarge; the memory traced while
    building stays within the budget (each step holds at most STEP_BYTES)."""
    budget = 8 << 20
    tracemalloc.start()
    try:
        with pytest.raises(TooLarge, match=r"more than 65,536 steps, the limit of the "
                                           r"memory budget \(8 MiB, memory=\)"):
            gc.formula(text, what, at=at, memory="8M")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert budget // STEP_BYTES == 65_536
    assert peak < budget, peak


def test_the_whole_output_is_bounded_not_only_each_formula() -> None:
    """The Hessian of prod(x) for a 200-vector is 40,000 columns of 198 factors (52 MB):
    each column is short, the whole is past MAX_OUTPUT, and building stops there."""
    start = time.perf_counter()
    with pytest.raises(TooLarge, match=f"over {MAX_OUTPUT:,} characters in all"):
        gc.formula("prod(x)", "hessian", at={"x": np.ones(200)})
    # 1,500 columns, not 40,000: a few seconds even on a machine shared eight ways
    assert time.perf_counter() - start < 60
    # a 30-vector's 900 columns are well within it, and right
    result = gc.formula("prod(x)", "hessian", at={"x": np.ones(30)})
    assert result["d2f/dx[0]dx[0]"] == "0"
    assert result["d2f/dx[0]dx[1]"] == "*".join(f"x[{i}]" for i in range(2, 30))


def test_a_chain_of_rules_is_linear_not_quadratic() -> None:
    """Each level of the nested program doubles the applications of f0: the steps taken
    double too (O(n) nodes for a chain of n rules; before, O(n^2): the derivative of level
    n held n factors)."""
    from gradcli.lang import parse
    from gradcli.lang.symbolic import Symbolic

    spent = []
    for levels in (8, 9, 10):
        sym = Symbolic(parse(nested(levels)), limit=1 << 23)
        sym.derivative(sym.result, ("var", "x"))
        spent.append(sym.alg.spent)
    assert 1.8 < spent[1] / spent[0] < 2.2 and 1.8 < spent[2] / spent[1] < 2.2, spent


_WRAPPER = textwrap.dedent("""
    import resource, subprocess, sys, time
    start = time.perf_counter()
    done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(peak, done.returncode, round(time.perf_counter() - start, 1), len(done.stdout),
          done.stderr.decode().replace(chr(10), ' | '))
""")


def _run(*argv: str, cwd: Path) -> tuple[int, int, float, int, str]:
    """(peak RSS in bytes, exit status, seconds, stdout bytes, stderr) of one fresh child
    running ``gradcli argv``."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("GRADCLI_MEMORY", None)
    out = subprocess.run([sys.executable, "-c", _WRAPPER, sys.executable, "-m", "gradcli",
                          *argv], capture_output=True, text=True, env=env, timeout=600,
                         check=True, cwd=cwd).stdout
    peak, status, seconds, size, err = out.rstrip("\n").split(" ", 4)
    return int(peak), int(status), float(seconds), int(size), err


def test_the_issues_cases_end_in_one_line_within_the_budget(tmp_path: Path) -> None:
    """The nested program (grad --formula; --formula program of 14 levels) and the
    Hessian of prod(x) of a 400-vector: each ends with exit 1 and one line on stderr,
    nothing on stdout and no -o file, its child process under the budget (1 GiB) plus
    the fixed overhead."""
    np.save(tmp_path / "v400.npy", np.ones(400))
    cases = [
        (["grad", nested(12), "--formula"], "df/dx: the closed form is over 20,000"),
        (["grad", nested(14), "--formula", "program"],
         "a step of the backward program is over 20,000 characters"),
        (["hessian", "prod(x)", "--at", "x=@v400.npy", "--formula", "-o", "h.txt"],
         f"the formulas are over {MAX_OUTPUT:,} characters in all"),
        (["grad", nested(14), "--formula", "--memory", "16M"],
         "the limit of the memory budget (16 MiB, --memory)"),
    ]
    for argv, message in cases:
        peak, status, seconds, size, err = _run(*argv, cwd=tmp_path)
        assert status == 1 and size == 0, (argv[:2], status, err)
        assert err.startswith("gradcli: error: ") and message in err, err
        assert " | " not in err.rstrip(" |"), err  # one line
        budget = (16 << 20) if "--memory" in argv else (1 << 30)
        assert peak < budget + FIXED_OVERHEAD, (argv[:2], peak)
    assert not (tmp_path / "h.txt").exists()


def test_a_long_closed_form_is_still_a_library_value() -> None:
    """The library keeps its answer per column: a TooLong in place of a closed form that
    is too long, so the other columns can be used (the command line exits 1 instead)."""
    result = gc.formula(nested(12).rsplit(" ", 1)[0] + " x*y + f12(y)", wrt="x,y")
    assert result["df/dx"] == "y"
    assert isinstance(result["df/dy"], TooLong)

