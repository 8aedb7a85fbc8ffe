"""Bounded reading: endless, binary and huge inputs stop with a clear
error while reading (exit 2), memory stays bounded, and Ctrl-C interrupts reading (130).

The endless sources are generator processes writing into a pipe; the binary file is read
under an address-space limit the old reader (all of the file into one string) exceeded.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradcli.cli.reading import BoundedReader
from gradcli.errors import EvaluationError

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pipes, /dev/zero, rlimits")

GRADCLI = [sys.executable, "-m", "gradcli"]


def _default_sigint() -> None:
    """Children start with SIGINT handled normally even if this run ignores it (make test &)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _endless(body: str, head: str = "b''") -> subprocess.Popen:
    """A generator process writing ``head``, then ``body`` to its stdout until the pipe
    closes."""
    code = ("import sys\nw = sys.stdout.buffer.write\nw(" + head + ")\nchunk = " + body + "\n"
            "try:\n    while True: w(chunk)\nexcept (BrokenPipeError, KeyboardInterrupt):\n"
            "    pass\n")
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, preexec_fn=_default_sigint)


def _read_from(source: subprocess.Popen, *args: str, timeout: float = 120) -> tuple[int, str]:
    """Run gradcli on the generator's output; the timeout only guards against a hang."""
    try:
        proc = subprocess.run([*GRADCLI, *args], stdin=source.stdout, capture_output=True,
                              text=True, timeout=timeout, preexec_fn=_default_sigint)
    finally:
        source.stdout.close()
        source.kill()
        source.wait()
    return proc.returncode, proc.stderr


def _one_error(err: str) -> str:
    assert err.count("\n") == 1 and err.startswith("gradcli: error: "), err
    assert "Traceback" not in err
    return err


def test_endless_rows_on_stdin_stop_at_max_points() -> None:
    source = _endless("b'1,2\\n' * 4096", head="b'x,y\\n'")
    code, err = _read_from(source, "grad", "x*y", "-p", "-", "--max-points", "200000")
    assert code == 2
    assert "--points stdin" in _one_error(err) and "200,000" in err and "--max-points" in err


def test_an_endless_line_stops_at_the_line_limit() -> None:
    source = _endless("b'1' * 65536")
    code, err = _read_from(source, "grad", "x", "-p", "-")
    assert code == 2
    assert "--points stdin: line 1 is longer than 32 MiB" in _one_error(err)


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_endless_binary_devices_are_not_text(device) -> None:
    if not os.path.exists(device):
        pytest.skip(f"no {device}")
    proc = subprocess.run([*GRADCLI, "grad", "x", "-p", device], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2
    assert f"--points {device}: byte 0x" in _one_error(proc.stderr)
    assert "is not text" in proc.stderr


_LIMITED = """
import resource, sys
limit = 1 << 30  # 1 GiB of address space: the file alone is 4 GiB
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
from gradcli.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_huge_binary_file_under_a_memory_limit(tmp_path) -> None:
    """A 4 GiB file of NUL bytes (sparse: no disk used) in a process limited to 1 GiB: the
    old reader ran out of memory reading it whole; now the first chunk is refused."""
    path = tmp_path / "zeros.csv"
    with open(path, "wb") as fh:
        fh.truncate(4 << 30)
    proc = subprocess.run([sys.executable, "-c", _LIMITED, "grad", "x", "-p", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert f"--points {path}: byte 0x00 on line 1 is not text" in _one_error(proc.stderr)


def test_ctrl_c_interrupts_reading_a_pipe() -> None:
    """A slow endless source: gradcli is inside the read loop when SIGINT arrives."""
    source = subprocess.Popen(
        [sys.executable, "-c", "import sys, time\nwhile True:\n    sys.stdout.write('1\\n')\n"
         "    sys.stdout.flush()\n    time.sleep(0.001)"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, preexec_fn=_default_sigint)
    try:
        proc = subprocess.Popen([*GRADCLI, "grad", "x", "-p", "-"], stdin=source.stdout,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                preexec_fn=_default_sigint)
        _wait_for_read(proc.pid)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        source.stdout.close()
        source.kill()
        source.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err


_OTHER_THREAD_TAKES_SIGINT = """
import os, signal, sys, threading, time
from gradcli.cli.reading import BoundedReader
r, w = os.pipe()

def feed():  # a slow source: two bytes a millisecond
    while True:
        os.write(w, b"1\\n")
        time.sleep(0.001)

def interrupt():
    time.sleep(0.3)
    os.kill(os.getpid(), signal.SIGINT)

for job in (feed, interrupt):
    threading.Thread(target=job, daemon=True).start()
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})  # the kernel picks another thread
sys.stdin = os.fdopen(r, "r")
try:
    with BoundedReader("-", label="--points -") as reader:
        for _ in reader.chunks():
            pass
except KeyboardInterrupt:
    print("interrupted")
"""


def test_ctrl_c_taken_by_another_thread_stops_the_read() -> None:
    """The kernel may hand a process's SIGINT to any thread (a worker); the main thread's
    read of a slow pipe then sees no EINTR. A buffered read(4 MiB) kept reading until it had
    4 MiB (half an hour here); read in single system calls, Python runs the handler at once."""
    proc = subprocess.run([sys.executable, "-c", _OTHER_THREAD_TAKES_SIGINT],
                          capture_output=True, text=True, timeout=30,
                          preexec_fn=_default_sigint)
    assert proc.stdout == "interrupted\n", proc.stderr


def _wait_for_read(pid: int, timeout: float = 60) -> None:
    """Until the process sleeps in a read from its pipe (its kernel wait channel)."""
    deadline = time.monotonic() + timeout
    while "pipe" not in Path(f"/proc/{pid}/wchan").read_text():
        assert time.monotonic() < deadline, "the reader never waited on its pipe"
        time.sleep(0.01)


# --- the reusable reader ----------------------------------------------------------------------

def test_bounded_reader_whole_lines_bom_crlf_and_line_numbers(tmp_path) -> None:
    path = tmp_path / "t.txt"
    path.write_bytes(b"\xef\xbb\xbfa\r\nbb\r\n" + b"c" * 10 + b"\nlast")
    with BoundedReader(str(path), label="t.txt", read_size=4) as reader:
        chunks = []
        for chunk in reader.chunks():
            chunks.append((reader.first_line, chunk))
    assert b"".join(c for _, c in chunks) == b"a\nbb\n" + b"c" * 10 + b"\nlast"
    assert all(c.endswith(b"\n") for _, c in chunks[:-1])  # whole lines only
    assert chunks[0][0] == 1 and chunks[-1] == (4, b"last")


@pytest.mark.parametrize("data, limits, words", [
    (b"x" * 100, {"max_bytes": 64}, ["prog.gc", "longer than 64 bytes"]),
    (b"ab\ncd" + b"e" * 40, {"max_line": 16}, ["line 2 is longer than 16 bytes"]),
    (b"ok\nbad\x1b[2J\n", {}, ["byte 0x1b on line 2 is not text"]),
    (b"ok\n\xff\xfe\n", {}, ["byte 0xff on line 2 is not text"]),
])
def test_bounded_reader_limits(tmp_path, data, limits, words) -> None:
    path = tmp_path / "prog.gc"
    path.write_bytes(data)
    with pytest.raises(EvaluationError) as info, BoundedReader(
            str(path), label="prog.gc", read_size=8, **limits) as reader:
        reader.read_text()
    for word in words:
        assert word in str(info.value)


def test_bounded_reader_text_and_missing_files(tmp_path) -> None:
    path = tmp_path / "p.gc"
    path.write_text("m = x^2\ny = m + x\n", encoding="utf-8")
    with BoundedReader(str(path), label="@p.gc", max_bytes=1 << 20) as reader:
        assert reader.read_text() == "m = x^2\ny = m + x\n"
    with pytest.raises(EvaluationError, match="no such file"):
        BoundedReader(str(tmp_path / "missing"), label="@missing").__enter__()
    with pytest.raises(EvaluationError, match="is a directory"):
        BoundedReader(str(tmp_path), label="@dir").__enter__()
