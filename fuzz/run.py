"""Long fuzz run of gradcli's parser, engine and command line (outside the normal suite).

    .venv/bin/python fuzz/run.py --minutes 10            # what `make fuzz` runs
    .venv/bin/python fuzz/run.py --minutes 1 --target cli --seed 42

Targets (round robin until the time is up, each round a fresh hypothesis run of
``--examples`` examples):

* ``parse``     hostile text -> a tree or an ExpressionError, within 0.5 s, printable error;
* ``roundtrip`` well-formed text -> exactly the intended tree; parse/to_text/parse stable;
* ``grad``      reverse = forward mode = central differences on smooth functions;
* ``cli``       random (often hostile) command lines through ``gradcli.cli.main.main`` in
  process, in a fresh temporary directory each: exit status in {0, 1, 2}, no exception,
  no traceback or "internal error", no control characters on stderr, bad input (2)
  prints nothing on stdout and creates no file, no temporary file is ever left behind,
  nothing is executed (a sentinel file never appears) and nothing is written outside
  the temporary directory.

The property code for the first three is the normal suite's (``tests/lang/test_properties_lang.py``)
run with many more, random examples. Every example has a hard time limit (SIGALRM). A failed
check is reported with hypothesis' shrunk example, then disabled for the rest of the run so
the fuzzer keeps looking for other problems. Exit status: 0 if nothing was found, 1 if
something was. Failing examples are kept in ``.hypothesis/fuzz`` and replayed first next time.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import os
import re
import shutil
import signal
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.database import DirectoryBasedExampleDatabase

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


grammar = _load("gradcli_fuzz_grammar", ROOT / "fuzz" / "grammar.py")
props = _load("gradcli_fuzz_props", ROOT / "tests" / "lang" / "test_properties_lang.py")


class Hang(Exception):
    """An example ran longer than its time limit."""


class Violation(AssertionError):
    """A broken guarantee, named so it can be disabled after it has been reported."""

    def __init__(self, check: str, detail: str) -> None:
        super().__init__(f"[{check}] {detail}")
        self.check = check


@contextlib.contextmanager
def time_limit(seconds: float):
    def handler(_signum, _frame):
        raise Hang(f"example took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


# --- the command-line target ---------------------------------------------------------------

SENTINEL = "SENTINEL"
COMMANDS = ["eval", "grad", "jacobian", "vjp", "jvp", "hessian", "graph"]
FIXTURES = {
    "good.csv": "x,y\n1,2\n3,4\n-1,0.5\n",
    "vec.csv": "x[0],x[1],y\n1,2,3\n4,5,6\n",
    "ragged.csv": "x,y\n1,2\n3\n",
    "empty.csv": "",
    "header.csv": "x,y\n",
    "nonnum.csv": "x,y\n1,abc\n",
    "nan.csv": "x,y\nnan,inf\n1,-inf\n",
    "inject.csv": "__import__('os').system('touch SENTINEL'),y\n1,2\n",
    "escape.csv": "\x1b[31mx,y\n1,2\n",
}
BINARY_FIXTURE = ("binary.csv", b"\xff\xfe\x00x\n\x80\n")

_injection = f"__import__('os').system('touch {SENTINEL}')"
_value = st.one_of(
    st.sampled_from(["0", "1", "-1", "0.5", "pi/2", "2e-3", "1e308", "1e-320", "1/0", "0/0",
                     "[1,2]", "[1,[2]]", "[[1,2],[3,4]]", "", " ", "x", "nan", "inf", "1e999",
                     _injection, "sin(1)", "-(-(-1))", "[" * 300 + "1" + "]" * 300]),
    grammar.number_texts,
    grammar.junk_text.map(lambda t: t[:40]),
)
_name = st.sampled_from(["x", "y", "z", "theta", "pi", "e", "sin", "x[0]", "", "1x", "__class__",
                         "\u0445", "\x1b[31m", "x y", "_"])
_count = st.sampled_from(["0", "1", "2", "3", "7", "-1", "2.5", "1e12", "1e300", "nan", "inf",
                          "1/0", "40", "1e1", "3 ", "3:4", ""])
_point = st.lists(st.tuples(_name, _value), min_size=0, max_size=3).map(
    lambda pairs: ",".join(f"{n}={v}" for n, v in pairs))
_grid = st.one_of(
    st.builds(lambda n, a, b, c: f"{n}={a}:{b}:{c}", _name, _value, _value, _count),
    st.builds(lambda n, a, b, c: f"{n}={a}:{b}:{c}", st.sampled_from(["x", "y"]),
              st.sampled_from(["-1", "0", "pi"]), st.sampled_from(["1", "2pi", "3"]),
              st.sampled_from(["1", "3", "10", "40"])),
    st.builds(lambda n, v: f"{n}={v}", _name, _value),
    st.just("x=0:1"),
)
OUTPUT_NAMES = ["out.csv", "out.json", "out.npz", "out.npy", "out.txt", "out", "OUT.CSV",
                "dir.csv", "full.csv", "full.npz", "/nonexistent/d/o.csv", "", ".csv",
                "sub/o.json", "\x1b[31m.csv", "a\nb.csv", "-"]
PLOT_NAMES = ["p.png", "p.svg", "p.pdf", "p.gif", "full.png"]
_outputs = st.sampled_from(OUTPUT_NAMES)
_option = st.one_of(
    st.builds(lambda v: ["--at", v], _point),
    st.builds(lambda v: ["-a", v], _point),
    st.builds(lambda v: ["--grid", v], _grid),
    st.just(["--grid"]),
    st.builds(lambda v: ["--points", v], st.sampled_from(
        [*FIXTURES, BINARY_FIXTURE[0], "missing.csv", "dir.csv", "-", "/dev/null", ""])),
    st.builds(lambda v: ["--vector", v], st.sampled_from(["1", "1,0", "[1,0]", "[[1,0],[0,1]]",
                                                          "", "1,2,3", _injection, "nan"])),
    st.builds(lambda v: ["--direction", v], _point),
    st.builds(lambda v: ["-f", v], st.sampled_from(["auto", "table", "table", "csv", "json",
                                                    "npz", "dot", "xml", "", "CSV", "\x1b[2J"])),
    st.builds(lambda v: ["-o", v], _outputs),
    st.sampled_from([["--strict"], ["--quiet"], ["-q"], ["--check"], ["--help"], ["--"],
                     ["--frobnicate"], ["-"], ["--at"]]),
    st.builds(lambda v: ["--check-tol", v], st.sampled_from(["1e-6", "0", "-1", "nan", "x"])),
    st.builds(lambda v: ["--max-points", v], st.sampled_from(["1", "10", "0", "-5", "1000000",
                                                              "x", "1e3"])),
    st.builds(lambda v: ["--precision", v], st.sampled_from(["0", "3", "-2", "100", "x"])),
    st.builds(lambda v: ["--dtype", v], st.sampled_from(["float32", "float64", "int8", ""])),
)
_expression = st.one_of(
    grammar.smooth_expressions(max_ops=4),
    grammar.expressions().map(lambda pair: pair[1]),
    grammar.junk_text,
    st.sampled_from(["x", "x*y", "[x*y, x-y]", "[[x, y], [y, x]]", "sum(x)", "x[0]*y",
                     "9^9^9^9", "x^1e308", "1/x", "log(x)", "-x^2", _injection,
                     "(" * 201 + "x" + ")" * 201, "x" * 10_001, "\u0445+1"]),
)


@st.composite
def command_lines(draw) -> tuple[list[str], str]:
    """(argv, stdin text)."""
    command = draw(st.sampled_from(COMMANDS + ["plot", "nosuch", "--version", "--help"])
                   if draw(st.integers(0, 40)) == 0 else st.sampled_from(COMMANDS))
    argv = [command]
    if draw(st.integers(0, 20)):
        argv.append(draw(_expression))
    for option in draw(st.lists(_option, max_size=5)):
        argv += option
    if command == "plot" and "-o" not in argv:
        argv += ["-o", draw(st.sampled_from(PLOT_NAMES))]
        argv += ["--grid", "x=0:1:5"]
    if draw(st.integers(0, 6)) == 0:
        argv = draw(st.permutations(argv))
    stdin = draw(st.sampled_from(["x,y\n1,2\n", "", "x\n1\n2\n", "\x00\x01", "y\n1\n"]))
    return list(argv), stdin


_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]")
_LEFTOVER = re.compile(r"^\..*(\.tmp|tmp-)|^\.gradcli-parts-")


def _setup(directory: Path) -> set[str]:
    for name, text in FIXTURES.items():
        (directory / name).write_text(text, encoding="utf-8")
    (directory / BINARY_FIXTURE[0]).write_bytes(BINARY_FIXTURE[1])
    (directory / "dir.csv").mkdir()
    for link in ("full.csv", "full.npz", "full.png"):
        if os.path.exists("/dev/full"):
            (directory / link).symlink_to("/dev/full")
    return set(os.listdir(directory))


def run_cli(argv: list[str], stdin: str, disabled: set[str]) -> None:
    from gradcli.cli.main import main

    def check(name: str, ok: bool, detail: str) -> None:
        if not ok and name not in disabled:
            raise Violation(name, f"{detail}\n  argv={argv!r}")

    base = Path(tempfile.mkdtemp(prefix="gradcli-fuzz-"))
    old_cwd, old_stdin = os.getcwd(), sys.stdin
    try:
        before = _setup(base)
        os.chdir(base)
        sys.stdin = io.StringIO(stdin)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(list(argv))
            except Hang:
                raise
            except BaseException as exc:  # an escaping exception is the finding
                raise Violation("exception", f"main raised {type(exc).__name__}: {exc}\n"
                                + traceback.format_exc()) from None
        stdout, stderr = out.getvalue(), err.getvalue()
        debug = "--debug" in argv
        check("status", status in (0, 1, 2), f"exit status {status!r}")
        check("traceback", debug or "Traceback" not in stderr + stdout, f"stderr={stderr!r}")
        internal = re.search(r"internal error: ([^(\n]{0,40})", stderr)
        # one check per kind of internal error, so a second, different one is still found
        check(f"internal-error: {internal.group(1) if internal else ''}", internal is None,
              f"stderr={stderr!r}")
        check("stderr-control-chars", not _CONTROL.search(stderr), f"stderr={stderr!r}")
        after = set(os.listdir(base))
        leftovers = sorted(n for n in after if _LEFTOVER.match(n))
        check("leftover-temp", not leftovers, f"left behind: {leftovers}")
        check("sentinel", SENTINEL not in after, "the injection payload ran")
        check("outside", not os.path.exists("/nonexistent"), "/nonexistent was created")
        if status == 2:
            check("usage-stdout", stdout == "" or "--help" in argv or "-h" in argv,
                  f"status 2 but stdout={stdout[:200]!r}")
            check("usage-files", after == before, f"status 2 but new files {after - before}")
    finally:
        sys.stdin = old_stdin
        os.chdir(old_cwd)
        shutil.rmtree(base, ignore_errors=True)


# --- targets -----------------------------------------------------------------------------

def _inner(test: Callable) -> Callable:
    return test.hypothesis.inner_test


def make_targets(disabled: dict[str, set[str]]) -> dict[str, tuple[Any, Callable, float]]:
    """name -> (strategy, check(example), per-example time limit in seconds)."""
    parse_check = lambda text: props._check_answer(text, props._parse_or_error(text))
    return {
        "parse": (grammar.junk_text, parse_check, 2.0),
        "roundtrip": (grammar.expressions(), lambda pair: (
            _inner(props.test_parser_builds_the_tree_the_text_means)(pair),
            _inner(props.test_parse_print_parse_is_stable)(pair)), 2.0),
        "grad": (st.tuples(grammar.smooth_expressions(), props.coordinate, props.coordinate),
                 lambda ex: _inner(props.test_gradient_matches_central_differences)(*ex), 10.0),
        "cli": (command_lines(), lambda ex: run_cli(ex[0], ex[1], disabled["cli"]), 30.0),
    }


def run_round(name: str, strategy: Any, check: Callable, limit: float, examples: int,
              seed: int | None) -> None:
    @settings(max_examples=examples, deadline=None, print_blob=True,
              database=DirectoryBasedExampleDatabase(str(ROOT / ".hypothesis" / "fuzz")),
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def target(example: Any) -> None:
        with time_limit(limit):
            check(example)

    target.__name__ = target.__qualname__ = f"fuzz_{name}"
    if seed is not None:
        from hypothesis import seed as set_seed

        target = set_seed(seed)(target)
    target()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="total run time")
    parser.add_argument("--target", action="append", choices=["parse", "roundtrip", "grad", "cli"],
                        help="run only these targets (repeatable; default: all)")
    parser.add_argument("--examples", type=int, default=2000,
                        help="examples per hypothesis round (default 2000)")
    parser.add_argument("--seed", type=int, default=None, help="seed of the first round")
    args = parser.parse_args(argv)

    disabled: dict[str, set[str]] = {"cli": set()}
    targets = make_targets(disabled)
    chosen = args.target or list(targets)
    watched = {ROOT, Path.cwd()}  # where a mis-directed output would land
    before = {d: set(os.listdir(d)) for d in watched}
    deadline = time.monotonic() + 60 * args.minutes
    findings: list[tuple[str, str]] = []
    dead: set[str] = set()
    rounds = {name: 0 for name in chosen}
    seed = args.seed
    while time.monotonic() < deadline and len(dead) < len(chosen):
        for name in chosen:
            if name in dead or time.monotonic() >= deadline:
                continue
            strategy, check, limit = targets[name]
            started = time.monotonic()
            try:
                run_round(name, strategy, check, limit, args.examples, seed)
            except Exception as exc:  # report and carry on
                text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
                findings.append((name, text))
                print(f"\n=== FOUND in target {name} ===\n{text}\n", flush=True)
                checks = [v.check for v in _violations(exc)]
                if name == "cli" and checks:
                    disabled["cli"].update(checks)  # keep fuzzing for other problems
                else:
                    dead.add(name)
            rounds[name] += 1
            print(f"{name}: round {rounds[name]} ({args.examples} examples) in "
                  f"{time.monotonic() - started:.0f} s", flush=True)
            seed = None if seed is None else seed + 1
    ours = {Path(n).name for n in OUTPUT_NAMES + PLOT_NAMES if n} | {SENTINEL, "sub", "a"}
    for d in watched:  # other people may be editing the tree meanwhile: only our names count
        stray = sorted((set(os.listdir(d)) - before[d]) & ours)
        if stray:
            findings.append(("cli", f"files appeared outside the temporary directories, in "
                                    f"{d}: {stray}"))
    print(f"\nfuzzed {', '.join(f'{n}: {r} rounds' for n, r in rounds.items())}; "
          f"{len(findings)} finding(s)")
    for name, text in findings:
        print(f"- {name}: {text.splitlines()[0][:300]}")
    return 1 if findings else 0


def _violations(exc: BaseException) -> list[Violation]:
    if isinstance(exc, Violation):
        return [exc]
    found = []
    for sub in getattr(exc, "exceptions", ()) or ():
        found += _violations(sub)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and not found:
        found += _violations(cause)
    return found


if __name__ == "__main__":
    sys.exit(main())
