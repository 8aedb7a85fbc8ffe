"""gradcli repl as a process meets it: real signals after the first line (through a pipe and
at a terminal), a closed standard output, a binary standard input, hostile history files.

Every wait is bounded: a session that ignores a signal fails its test in seconds instead
of hanging the suite. Peak memory is that of a fresh child, read in a wrapper process whose
only child is the session (``RUSAGE_CHILDREN``'s ``ru_maxrss``, KiB on Linux).
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).with_name("gradcli")
#: a line that runs for seconds (8 s on one core), writing its output through a temporary
#: file: 2.25·10⁶ points of a 96-operation product, streamed block by block to .npz
LONG_LINE = ("grad " + "*".join(f"sin({k}*x + y)*cos(x - {k}*y)" for k in range(1, 25))
             + " --grid x=0:1:1500 --grid y=0:1:1500 -o out.npz\n")
WAIT = 120  # seconds any one step may take on a busy machine before the test fails


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home), "XDG_STATE_HOME": str(home / "state"),
           "GRADCLI_MEMORY": "64M"}
    env.pop("GRADCLI_NO_FILES", None)
    return env


def _wait_for_temporary(directory: Path, proc: subprocess.Popen) -> None:
    """Until the long line's temporary output exists (it is mid-line then)."""
    end = time.monotonic() + WAIT
    while time.monotonic() < end:
        if any(p.name.startswith(".out.npz.tmp-") for p in directory.iterdir()):
            return
        assert proc.poll() is None, "the session ended before its long line ran"
        time.sleep(0.05)
    raise AssertionError("the long line never started writing")


def _ended(proc: subprocess.Popen) -> int:
    try:
        return proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the session did not end on the signal") from None


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143),
                                                (signal.SIGHUP, 129)])
def test_a_signal_after_the_first_line_stops_a_piped_session(tmp_path, signum, status):
    """Once a line has been answered, SIGINT, SIGTERM and SIGHUP still stop the line being
    run, as they stop a command: the piped session ends with 128 + the signal, says so on
    one line, and the line's temporary output file is gone (before, the first answer set a
    process-wide "finished" flag and every later signal was ignored)."""
    proc = subprocess.Popen([str(SCRIPT), "repl", "-f", "csv"], cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(tmp_path), text=True)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("eval x --at x=1\n" + LONG_LINE)
    proc.stdin.flush()  # stdin stays open: the session would wait for more lines
    assert proc.stdout.readline() == "x,f\n"
    _wait_for_temporary(tmp_path, proc)
    proc.send_signal(signum)
    assert _ended(proc) == status
    err = proc.stderr.read() if proc.stderr else ""
    name = {signal.SIGINT: "", signal.SIGTERM: " by SIGTERM", signal.SIGHUP: " by SIGHUP"}
    assert err == f"gradcli: interrupted{name[signum]}\n"
    assert [p.name for p in tmp_path.iterdir() if p.name != "state"] == []


def _read_until(fd: int, text: str, seen: bytearray) -> str:
    """What the terminal shows, up to and including ``text`` (bounded wait)."""
    end = time.monotonic() + WAIT
    while text.encode() not in seen:
        ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            raise AssertionError(f"{text!r} never appeared; the terminal showed {bytes(seen)!r}")
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the session closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    shown = seen.decode(errors="replace")
    cut = shown.find(text)
    assert cut >= 0, f"{text!r} never appeared; the terminal showed {shown!r}"
    del seen[:len(shown[:cut + len(text)].encode())]
    return shown[:cut + len(text)]


def _terminal_session(home: Path, cwd: Path) -> tuple[subprocess.Popen, int]:
    master, slave = pty.openpty()
    proc = subprocess.Popen([str(SCRIPT), "repl", "-f", "csv"], cwd=cwd, stdin=slave,
                            stdout=slave, stderr=slave, env={**_env(home), "TERM": "dumb"},
                            start_new_session=True)
    os.close(slave)
    return proc, master


def test_at_a_terminal_sigint_stops_the_line_and_the_session_goes_on(tmp_path):
    """Ctrl-C (SIGINT) during a long line, after a first answer: the line stops, its
    temporary file is removed, the prompt comes back and the next line is answered;
    SIGHUP (the terminal closed) then ends the session with 129."""
    work = tmp_path / "work"
    work.mkdir()
    proc, master = _terminal_session(tmp_path, work)
    seen = bytearray()
    try:
        _read_until(master, "gradcli> ", seen)
        os.write(master, b"eval x --at x=1\n")
        _read_until(master, "1.0,1.0", seen)
        _read_until(master, "gradcli> ", seen)
        os.write(master, LONG_LINE.encode())
        _wait_for_temporary(work, proc)
        proc.send_signal(signal.SIGINT)
        shown = _read_until(master, "gradcli> ", seen)
        assert "gradcli: interrupted" in shown
        assert list(work.iterdir()) == []
        os.write(master, b"eval 2*x --at x=4\n")
        _read_until(master, "4.0,8.0", seen)
        _read_until(master, "gradcli> ", seen)
        proc.send_signal(signal.SIGHUP)
        assert _ended(proc) == 129
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def test_a_closed_standard_output_ends_the_session():
    """``yes 'eval x^2 --at x=3' | gradcli repl | head -1`` ends, the session with status 1
    as any command on a closed pipe (before, it answered into /dev/null for ever)."""
    proc = subprocess.Popen(["bash", "-c", f"yes 'eval x^2 --at x=3' | '{SCRIPT}' repl | "
                             "head -1; echo \"status ${PIPESTATUS[1]}\""], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise AssertionError("the session went on after its output closed") from None
    assert out == "x,f\nstatus 1\n"
    assert "Traceback" not in err


_PEAK = textwrap.dedent("""
    import resource, subprocess, sys
    with open(sys.argv[1], "rb") as source:
        done = subprocess.run(sys.argv[2:], stdin=source, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=300)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print(peak, done.returncode, done.stdout.decode().replace(chr(10), "|"))
    sys.stdout.write(done.stderr.decode())
""")
#: the session's process: the interpreter, numpy and the CLI (about 45 MB) and room to
#: spare, far below the 5.75 GB /dev/zero took before (a child limited to 2 GiB of
#: address space then fails with MemoryError instead)
SESSION_PEAK = 160 << 20


def _peak(source: str, *args: str) -> tuple[int, int, str, str]:
    """(peak RSS in bytes, status, stdout, stderr) of a session reading ``source``."""
    limit = "import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
    out = subprocess.run([sys.executable, "-c", limit + _PEAK, source, str(SCRIPT), "repl",
                          *args], capture_output=True, text=True, timeout=WAIT * 3)
    first, _, err = out.stdout.partition("\n")
    peak, status, stdout = first.split(" ", 2)
    return int(peak), int(status), stdout, err


def test_a_binary_standard_input_is_refused_in_bounded_memory():
    """``gradcli repl < /dev/zero``: the NUL byte is refused as soon as it is read, the
    rest of that "line" is skipped without being kept, and past a line's limit the input
    is given up as not lines of text (exit 2), all in bounded memory."""
    peak, status, out, err = _peak("/dev/zero")
    assert status == 2, err
    assert err == ("gradcli: error: standard input: byte 0x00 on line 1 is not text: "
                   "expected UTF-8 text\n"
                   "gradcli: error: standard input: line 1 goes on for more than 64 MiB "
                   "after its error: not lines of text\n")
    assert peak < SESSION_PEAK, peak


def test_a_bad_line_is_refused_when_read_and_the_session_goes_on(tmp_path):
    """A NUL byte, a 1 MB line and invalid UTF-8 each refuse their own line only (the
    long line is refused at its 10,001st byte, never held whole) and the next lines are
    answered."""
    script = tmp_path / "lines.txt"
    script.write_bytes(b"eval x --at x=1\n" b"eval x\0 --at x=2\n"
                       + b"eval " + b"x+" * 500_000 + b"x --at x=3\n"
                       b"eval x --at x=\xff4\n" b"eval x --at x=5\n")
    peak, status, out, err = _peak(str(script), "-f", "csv")
    assert status == 2
    assert out == "x,f|1.0,1.0|x,f|5.0,5.0|"
    assert err.splitlines() == [
        "gradcli: error: standard input: byte 0x00 on line 2 is not text: expected UTF-8 text",
        "gradcli: error: standard input: line 3 is longer than 10,000 bytes, the limit for "
        "one line",
        "gradcli: error: standard input: byte 0xff on line 4 is not text: expected UTF-8 text"]
    assert peak < SESSION_PEAK, peak


# --- the history file -----------------------------------------------------------------------

def _prompt_then_exit(home: Path, cwd: Path) -> str:
    """Start a terminal session, wait for its prompt, type one line and exit; what the
    terminal showed."""
    proc, master = _terminal_session(home, cwd)
    seen = bytearray()
    try:
        shown = _read_until(master, "gradcli> ", seen)
        os.write(master, b"eval x --at x=7\n")
        shown += _read_until(master, "gradcli> ", seen)
        os.write(master, b"exit\n")
        assert _ended(proc) == 0
        return shown
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


def _history(home: Path) -> Path:
    path = home / "state" / "gradcli" / "repl_history"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def test_a_fifo_at_the_history_path_is_left_alone(tmp_path):
    """A FIFO where the history file would be: the prompt comes at once (before, opening
    it waited for a writer for ever) and the FIFO stays a FIFO."""
    path = _history(tmp_path)
    os.mkfifo(path)
    assert "7.0,7.0" in _prompt_then_exit(tmp_path, tmp_path)
    import stat

    assert stat.S_ISFIFO(os.lstat(path).st_mode)


def test_a_symlinked_history_is_neither_read_nor_written_through(tmp_path):
    """A symlink at the history path: its target keeps its 4,000 lines and its mode
    (before, it was rewritten to the last 1,000 lines of history, mode changed), and the
    link stays a link."""
    target = tmp_path / "precious.txt"
    text = "".join(f"line {i}\n" for i in range(4000))
    target.write_text(text)
    target.chmod(0o640)
    path = _history(tmp_path)
    path.symlink_to(target)
    _prompt_then_exit(tmp_path, tmp_path)
    assert path.is_symlink()
    assert target.read_text() == text
    assert target.stat().st_mode & 0o777 == 0o640


def test_history_is_kept_and_read_from_its_end_in_bounded_memory(tmp_path):
    """A 400 MB history file (sparse: its first 400 MB are NUL bytes) is read from its
    last MiB: the session's peak memory stays that of a session (before: the whole file,
    854 MB); what is written back is the last 1,000 lines, the lines typed last."""
    path = _history(tmp_path)
    with open(path, "wb") as fh:
        fh.truncate(400 << 20)
        fh.seek(0, os.SEEK_END)
        fh.write("".join(f"eval x --at x={i}\n" for i in range(1500)).encode())
    wrapper = textwrap.dedent(f"""
        import os, resource, sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from test_cli_repl_process import _prompt_then_exit
        from pathlib import Path
        _prompt_then_exit(Path({str(tmp_path)!r}), Path({str(tmp_path)!r}))
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)
    """)
    peak = int(subprocess.run([sys.executable, "-c", wrapper], capture_output=True,
                              text=True, timeout=WAIT * 2, check=True).stdout)
    assert peak < SESSION_PEAK, peak
    lines = path.read_text().splitlines()
    assert len(lines) == 1000
    assert lines[-3:] == ["eval x --at x=1499", "eval x --at x=7", "exit"]
    assert lines[0] == "eval x --at x=502"
