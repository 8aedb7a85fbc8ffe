"""Output safety: a failed or interrupted run never leaves a partial or temporary file, an
old file survives a failed overwrite, a full disk or a missing directory is a clear exit 1
naming the path, and non-finite results follow the documented policy (SECURITY.md).

Interruption is tested twice: deterministically in process (a KeyboardInterrupt raised from
inside the writers) and for real, by sending SIGINT to the console script while it computes
or writes a large grid.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(sys.executable).with_name("gradcli")
HAVE_DEV_FULL = os.path.exists("/dev/full")
TEMP = re.compile(r"^\..*(\.tmp|tmp-)|^\.gradcli-parts-")
BIG_GRID = ["--grid", "x=0:1:600", "--grid", "y=0:1:500"]  # 300,000 rows: several CSV chunks


def temporaries(directory: Path) -> list[str]:
    return sorted(n for n in os.listdir(directory) if TEMP.match(n))


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, repr(err)
    return err[:-1]


# --- failures and interruptions in process ------------------------------------------------

class _FailingFile:
    """A file whose ``n``-th ``write`` (counted over all files opened) raises ``exc``."""

    def __init__(self, real, budget: dict) -> None:
        self._real, self._budget = real, budget

    def write(self, data):
        self._budget["writes"] += 1
        if self._budget["writes"] == self._budget["fail_at"]:
            raise self._budget["exc"]
        return self._real.write(data)

    def __getattr__(self, name):
        return getattr(self._real, name)

    def __iter__(self):
        return iter(self._real)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return self._real.__exit__(*exc_info)


def fail_writes(monkeypatch, modules: list[str], fail_at: int, exc: BaseException) -> dict:
    """Make the ``fail_at``-th write to any file opened by ``modules`` raise ``exc``: the
    I/O boundary itself, whatever the writers do above it."""
    import builtins
    import importlib

    budget = {"writes": 0, "fail_at": fail_at, "exc": exc}

    def failing_open(*args, **kwargs):
        return _FailingFile(builtins.open(*args, **kwargs), budget)

    for name in modules:
        monkeypatch.setattr(importlib.import_module(name), "open", failing_open, raising=False)
    return budget


ATOMIC = ["gradcli.output.atomic"]
STREAM = ["gradcli.output.npz_writer", "gradcli.output.atomic"]


@pytest.mark.parametrize("ext", ["csv", "json"])
@pytest.mark.parametrize("exc, status", [
    (KeyboardInterrupt(), 130),
    (OSError(errno.ENOSPC, "No space left on device"), 1),
], ids=["interrupt", "disk-full"])
def test_failure_while_writing_keeps_the_old_file_and_leaves_no_temp(
        cli, tmp_path, monkeypatch, ext, exc, status) -> None:
    budget = fail_writes(monkeypatch, ATOMIC, 3, exc)
    target = tmp_path / f"out.{ext}"
    target.write_text("old\n")
    code, out, err = cli("grad", "x*y", *BIG_GRID, "-o", str(target))
    assert budget["writes"] == 3  # the failure really came half-way through the rows
    assert code == status
    assert target.read_text() == "old\n"
    assert temporaries(tmp_path) == [] and sorted(os.listdir(tmp_path)) == [target.name]
    assert "Traceback" not in err
    if status == 1:
        assert one_line(err) == f"gradcli: error: cannot write '{target}': No space left on device"


def fail_spool_writes(monkeypatch, fail_at: int, exc: BaseException) -> dict:
    """Make the ``fail_at``-th write into the ``.npz`` stream's spool file raise ``exc``."""
    from gradcli.output import stream_sink

    budget = {"writes": 0}
    real = os.pwrite

    def failing(fd, data, offset):
        budget["writes"] += 1
        if budget["writes"] == fail_at:
            raise exc
        return real(fd, data, offset)

    monkeypatch.setattr(stream_sink.os, "pwrite", failing)
    return budget


@pytest.mark.parametrize("exc, status", [
    (KeyboardInterrupt(), 130),
    (OSError(errno.ENOSPC, "No space left on device"), 1),
], ids=["interrupt", "disk-full"])
@pytest.mark.parametrize("where", ["spool", "zip"])
def test_failure_while_streaming_npz_keeps_the_old_file(cli, tmp_path, monkeypatch, exc,
                                                       status, where) -> None:
    """A failure while the blocks are spooled, or while the zip is assembled from them."""
    fail_at = 4 if where == "spool" else 12  # 6 spool writes: 3 blocks, 2 row ranges each
    if where == "spool":
        budget = fail_spool_writes(monkeypatch, fail_at, exc)
    else:
        budget = fail_writes(monkeypatch, ATOMIC, fail_at, exc)
    target = tmp_path / "out.npz"
    target.write_bytes(b"old")
    code, out, err = cli("grad", "x*y", *BIG_GRID, "-o", str(target))
    assert budget["writes"] >= fail_at
    assert code == status
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.npz"]
    if status == 1:
        assert one_line(err) == f"gradcli: error: cannot write '{target}': No space left on device"


def test_a_failed_spool_write_leaves_the_other_workers_writing(tmp_path, monkeypatch) -> None:
    """One worker's failed write must not close the spool under the others: their writes
    would fail with a bad file descriptor, and that error could be reported instead of
    the real one (exit 1 for a Ctrl-C). The runner aborts once every worker has stopped."""
    from gradcli.evaluation import prepare
    from gradcli.output import OutputError
    from gradcli.output.stream_sink import StreamSink

    prepared = prepare("x*y", "grad", grid={"x": (0, 1, 4), "y": (0, 1, 3)})
    sink = StreamSink(str(tmp_path / "out.npz"), "npz")
    sink.open(prepared.layout, (4, 3), np.dtype(np.float64), prepared.inputs)
    values = [np.ones((2, 3))] * len(prepared.layout.column_names())
    fail_spool_writes(monkeypatch, 1, OSError(errno.ENOSPC, "No space left on device"))
    with pytest.raises(OutputError, match="No space left on device"):
        sink.write(0, 2, values)                  # this worker fails ...
    sink.write(2, 4, values)                      # ... while another one still writes
    sink.abort()
    assert os.listdir(tmp_path) == []


def test_npz_spool_failure_leaves_nothing(cli, tmp_path, monkeypatch) -> None:
    import tempfile

    def refuse(*args, **kwargs):
        raise OSError(errno.EMFILE, "Too many open files")

    monkeypatch.setattr(tempfile, "TemporaryFile", refuse)
    code, out, err = cli("grad", "x*y", *BIG_GRID, "-o", str(tmp_path / "out.npz"))
    assert code == 1 and "Too many open files" in err
    assert os.listdir(tmp_path) == []


def test_interrupt_says_so(cli, tmp_path, monkeypatch) -> None:
    fail_writes(monkeypatch, ATOMIC, 1, KeyboardInterrupt())
    code, out, err = cli("grad", "x", "--at", "x=1", "-o", str(tmp_path / "o.csv"))
    assert code == 130
    assert "interrupted" in err


# --- missing directories, directories, full disks -----------------------------------------

@pytest.mark.parametrize("ext", ["csv", "json", "jsonl", "npz"])
def test_missing_directory_is_exit_1_naming_the_path(cli, tmp_path, ext) -> None:
    target = tmp_path / "no" / "such" / f"out.{ext}"
    code, out, err = cli("grad", "x*y", "--grid", "x=0:1:3", "--grid", "y=0:1:3",
                         "-o", str(target))
    assert code == 1 and out == ""
    assert one_line(err).startswith(f"gradcli: error: cannot write '{target}': ")
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not HAVE_DEV_FULL, reason="needs /dev/full")
@pytest.mark.parametrize("ext", ["csv", "json", "jsonl", "npz"])
def test_full_disk_is_exit_1_naming_the_path(cli, tmp_path, ext) -> None:
    """A symlink to /dev/full stands in for a full disk: every write fails with ENOSPC."""
    link = tmp_path / f"full.{ext}"
    link.symlink_to("/dev/full")
    code, out, err = cli("grad", "x*y", *BIG_GRID, "-o", str(link))
    assert code == 1 and out == ""
    assert one_line(err) == f"gradcli: error: cannot write '{link}': No space left on device"
    assert sorted(os.listdir(tmp_path)) == [link.name] and os.readlink(link) == "/dev/full"


@pytest.mark.skipif(not HAVE_DEV_FULL, reason="needs /dev/full")
def test_full_disk_for_graph_and_plot(cli, tmp_path) -> None:
    for name in ("g.json", "p.png"):
        (tmp_path / name).symlink_to("/dev/full")
    code, _, err = cli("graph", "sin(x)*y", "--at", "x=1,y=2", "-f", "json",
                       "-o", str(tmp_path / "g.json"))
    assert code == 1 and "No space left" in one_line(err)
    code, _, err = cli("plot", "sin(x)", "--grid", "x=0:1:5", "-o",
                       str(tmp_path / "p.png"))
    assert code == 1 and "No space left" in one_line(err) and "p.png" in err
    assert sorted(os.listdir(tmp_path)) == ["g.json", "p.png"]
    assert os.readlink(tmp_path / "p.png") == "/dev/full"  # written through, not replaced


# --- the real console script: SIGINT, full stdout, closed pipe ---------------------------------

def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _default_sigint() -> None:
    # A shell starts background jobs (`make test &`, nohup) with SIGINT ignored and children
    # inherit that; the program under test must start with Ctrl-C's default handling.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _spawn(args: list[str], cwd: Path, **kwargs) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    return subprocess.Popen([str(SCRIPT), *args], cwd=cwd, env=env, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_default_sigint, **kwargs)


def _wait_until(condition, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, f"finished before it could be interrupted: {proc.stderr}"
        assert time.monotonic() < deadline, "the condition never came true"
        time.sleep(0.01)


def _interrupt(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    return proc.returncode, err


needs_script = pytest.mark.skipif(not SCRIPT.exists() or sys.platform != "linux",
                                  reason="needs the console script and Linux")


@needs_script
@pytest.mark.parametrize("ours", [signal.SIG_DFL, signal.SIG_IGN],
                         ids=["foreground", "background-job"])
def test_sigint_while_computing_exits_130_and_leaves_nothing(tmp_path, ours) -> None:
    old = signal.signal(signal.SIGINT, ours)  # SIG_IGN: as `make test &` starts the tests
    try:
        proc = _spawn(["grad", "sin(x)*cos(y)*exp(x*y)", "--grid", "x=0:1:6000", "--grid",
                       "y=0:1:6000", "-o", "OUT.csv"], tmp_path, stdout=subprocess.DEVNULL)
    finally:
        signal.signal(signal.SIGINT, old)
    # start-up takes well under 1 s of CPU; after 1 s of CPU it is surely computing
    _wait_until(lambda: (_cpu_seconds(proc.pid) or 0) >= 1.0, proc)
    code, err = _interrupt(proc)
    assert code == 130, err
    assert "Traceback" not in err
    assert os.listdir(tmp_path) == []


@needs_script
@pytest.mark.parametrize("ext", ["csv", "npz", "jsonl"])
def test_sigint_while_writing_keeps_the_old_file(tmp_path, ext) -> None:
    target = tmp_path / f"OUT.{ext}"
    target.write_text("old\n")
    proc = _spawn(["grad", "sin(x)*cos(y)*exp(x*y)", "--grid", "x=0:1:3000", "--grid",
                   "y=0:1:3000", "-o", target.name], tmp_path, stdout=subprocess.DEVNULL)

    def writing() -> bool:  # the temporary output exists and has data in it
        for name in temporaries(tmp_path):
            path = tmp_path / name
            size = (sum(p.stat().st_size for p in path.iterdir()) if path.is_dir()
                    else path.stat().st_size)
            if size > 0:
                return True
        return False

    _wait_until(writing, proc)
    code, err = _interrupt(proc)
    assert code == 130, err
    assert "Traceback" not in err
    assert os.listdir(tmp_path) == [target.name]
    assert target.read_text() == "old\n"


@needs_script
def test_closed_pipe_is_quiet(tmp_path) -> None:
    """``gradcli ... | head -1``: no traceback, no 'Exception ignored' noise."""
    proc = _spawn(["grad", "x*y", "--grid", "x=0:1:1000", "--grid", "y=0:1:200"], tmp_path,
                  stdout=subprocess.PIPE)
    assert proc.stdout.readline() == "x,y,f,df/dx,df/dy\n"
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=30)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert proc.returncode in (0, 1, 141, -signal.SIGPIPE), err
    assert os.listdir(tmp_path) == []


@needs_script
@pytest.mark.skipif(not HAVE_DEV_FULL, reason="needs /dev/full")
def test_full_stdout_is_a_clear_io_error(tmp_path) -> None:
    with open("/dev/full", "w") as full:
        proc = _spawn(["grad", "x", "--at", "x=1"], tmp_path, stdout=full)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "internal error" not in err
    assert "No space left" in one_line(err)


# --- the non-finite policy -----------------------------------------------------------------

NONFINITE = ["eval", "[1/x, -1/x, 0/x, x]", "--at", "x=0"]  # inf, -inf, nan and a finite 0
WARNING = "warning: 3 non-finite result values (nan or inf) in the output\n"


def test_csv_spells_nan_and_inf_and_warns_with_the_count(cli) -> None:
    code, out, err = cli(*NONFINITE)
    assert code == 0
    assert list(csv.reader(io.StringIO(out))) == [
        ["x", "f[0]", "f[1]", "f[2]", "f[3]"], ["0.0", "inf", "-inf", "nan", "0.0"]]
    assert err == WARNING


def test_json_uses_strings_for_nan_and_inf(cli) -> None:
    code, out, err = cli(*NONFINITE, "-f", "json")
    assert code == 0 and err == WARNING

    def refuse(name: str):
        raise ValueError(f"non-standard JSON constant {name}")

    doc = json.loads(out, parse_constant=refuse)  # strict JSON: no NaN/Infinity tokens
    assert doc["rows"] == [[0.0, "inf", "-inf", "nan", 0.0]]
    assert [float(v) for v in doc["rows"][0][1:3]] == [float("inf"), float("-inf")]


def test_npz_keeps_raw_ieee_values(cli, tmp_path) -> None:
    target = tmp_path / "out.npz"
    code, out, err = cli(*NONFINITE, "-o", str(target))
    assert code == 0 and out == "" and err == WARNING
    with np.load(target) as data:
        values = [float(np.asarray(data[f"f[{i}]"]).reshape(-1)[0]) for i in range(4)]
    assert values[:2] == [np.inf, -np.inf] and np.isnan(values[2]) and values[3] == 0.0


def test_table_shows_nan_and_inf(cli) -> None:
    code, out, err = cli(*NONFINITE, "-f", "table")
    assert code == 0 and err == WARNING
    row = next(line for line in out.splitlines() if "inf" in line)
    assert re.findall(r"-?inf|nan", row) == ["inf", "-inf", "nan"]


@pytest.mark.parametrize("fmt", ["csv", "json", "npz"])
def test_strict_exits_1_after_writing_the_complete_output(cli, tmp_path, fmt) -> None:
    target = tmp_path / f"out.{fmt}"
    code, out, err = cli(*NONFINITE, "--strict", "--quiet", "-o", str(target))
    assert code == 1
    assert err == WARNING  # --quiet hides notes, but not the reason for exit 1
    assert target.stat().st_size > 0 and temporaries(tmp_path) == []


def test_quiet_hides_the_warning_and_finite_results_warn_nothing(cli) -> None:
    assert cli(*NONFINITE, "--quiet")[2] == ""
    code, out, err = cli("eval", "x", "--at", "x=0", "--strict")
    assert (code, err) == (0, "")


def test_count_is_per_output_cell_over_a_grid_in_every_format(cli, tmp_path) -> None:
    argv = ["eval", "1/x", "--grid", "x=-1:1:3", "--grid", "y=0:1:4"]  # x=0: 4 cells of inf
    for extra in ([], ["-f", "json"], ["-o", str(tmp_path / "g.npz")]):
        code, _, err = cli(*argv, *extra)
        # y spans the grid without being used: that is warned about first
        assert code == 0 and err == ("warning: 'y' is given a value but is not a variable of "
                                     "the formula\nwarning: 4 non-finite result values (nan "
                                     "or inf) in the output\n"), extra


def test_non_finite_inputs_are_not_counted(cli, tmp_path) -> None:
    """Only results count: a nan in the variables' own columns is passed through."""
    (tmp_path / "p.csv").write_text("x,y\nnan,1\ninf,2\n")
    code, out, err = cli("eval", "2*y", "--points", str(tmp_path / "p.csv"), "--strict")
    assert code == 0 and err == ""
    assert out.splitlines()[1:] == ["nan,1.0,2.0", "inf,2.0,4.0"]


def test_npz_opens_two_files_however_many_columns(cli, tmp_path) -> None:
    """A streamed .npz of a 3,000-vector opens only its spool and the target, whatever the
    width (one part file per column would be 18,000 opens)."""
    opened: list[str] = []

    def audit(event, args):
        if event == "open" and isinstance(args[0], str) and str(tmp_path) in args[0]:
            opened.append(args[0])

    sys.addaudithook(audit)  # audit hooks cannot be removed: it filters on tmp_path
    target = tmp_path / "j.npz"
    n = 600
    code, out, err = cli("jacobian", "[x*y, x-y, x^2]", "--grid", "x=0:1:300",
                         "--grid", "y=-1:1:301", "-o", str(target))
    assert code == 0, err
    # the spool (an unnamed file: its directory, then the file) and the target's
    # temporary (created, then opened)
    assert len(opened) == 4, opened
    code, out, err = cli("grad", "sum(x^2)", "--at", "x=[" + ",".join(["1"] * n) + "]",
                         "-o", str(tmp_path / "g.npz"))  # 1,201 columns
    assert code == 0, err
    assert len(opened) == 8, opened
    data = np.load(target)
    x, y = np.meshgrid(np.linspace(0, 1, 300), np.linspace(-1, 1, 301), indexing="ij")
    np.testing.assert_array_equal(data["df[0]/dx"], y)
    np.testing.assert_array_equal(data["df[0]/dy"], x)
    np.testing.assert_array_equal(data["df[2]/dx"], 2 * x)
    grad = np.load(tmp_path / "g.npz")
    assert grad["df/dx"].shape == (1, n) and (grad["df/dx"] == 2.0).all()
    assert sorted(os.listdir(tmp_path)) == ["g.npz", "j.npz"]


@pytest.mark.parametrize("option,value", [("--max-points", "-1"), ("--precision", "0"),
                                          ("--check-tol", "-1"), ("--check-tol", "inf")])
def test_out_of_range_numbers_are_usage_errors(cli, option, value) -> None:
    code, out, err = cli("grad", "x", "--at", "x=1", option, value)
    assert code == 2 and out == ""
    assert option in one_line(err)
