"""Bounded reading of the text files and streams gradcli reads (``--points FILE``, ``-`` for
stdin; later vector files and program files).

Every input has a bound on what it reads and a clear error past it, raised while reading
(never after swallowing the input): a line longer than ``max_line`` bytes, more than
``max_bytes`` in all, or bytes that are not text (NUL and other control characters but
tab, CR and LF; invalid UTF-8) each stop the read with an EvaluationError naming the source
and the limit. Data comes in chunks of whole lines, so memory stays a few chunks plus what
the caller keeps; or line by line (``lines``, for a session answering each line as it
comes), where a bad line is refused on its own and reading goes on. A UTF-8 byte-order
mark is dropped and CRLF read as LF. Reading happens in short steps on the calling
thread, so Ctrl-C interrupts it at any point, on a pipe too.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from types import TracebackType
from typing import Any, BinaryIO

import numpy as np

from gradcli.errors import EvaluationError

MiB = 1 << 20
MAX_LINE = 32 * MiB  # the longest line of a points file: 10⁶ values of 17 digits fit
_READ = 4 * MiB
#: how much of a refused line is read past (not kept) to reach the next line
MAX_SKIP = 64 * MiB
_BOM = b"\xef\xbb\xbf"


def size_text(n: int) -> str:
    """A byte count for a message: ``32 MiB``, ``1 MiB``, ``4,096 bytes``."""
    if n >= MiB and n % MiB == 0:
        return f"{n // MiB} MiB"
    return f"{n:,} bytes"


class BoundedReader:
    """Chunks of whole lines from a file or stdin (``"-"``), within stated limits.

    ``label`` names the source in messages (``--points data.csv``). ``first_line`` is the
    line number of the first line of the chunk just handed out (for a caller's messages).
    """

    def __init__(self, source: str, *, label: str, max_line: int = MAX_LINE,
                 max_bytes: int | None = None, read_size: int = _READ) -> None:
        self.source, self.label = source, label
        self.max_line, self.max_bytes = max_line, max_bytes
        self.read_size = max(1, min(read_size, max_line))
        self.first_line = 1
        self._lines = 0  # lines in the chunks handed out so far
        self._fh: BinaryIO | None = None
        self._own = False

    def __enter__(self) -> BoundedReader:
        if self.source == "-":
            # a text stream without a byte buffer (a test's StringIO) is read as UTF-8
            self._fh = getattr(sys.stdin, "buffer", None) or _Encoded(sys.stdin)
            return self
        try:
            if os.path.isdir(self.source):
                raise EvaluationError(f"{self.label}: '{self.source}' is a directory, not a "
                                      "file")
            self._fh = open(self.source, "rb")  # noqa: SIM115 - closed in __exit__
            self._own = True
        except FileNotFoundError:
            raise EvaluationError(f"{self.label}: no such file '{self.source}'") from None
        except OSError as exc:
            raise EvaluationError(f"{self.label}: cannot read '{self.source}': "
                                  f"{exc.strerror or exc}") from None
        return self

    def size(self) -> int:
        """The source's size in bytes if it is a regular file, else 0 (a pipe, stdin)."""
        try:
            st = os.fstat(self._fh.fileno()) if self._fh is not None else None
        except (OSError, AttributeError, ValueError):
            return 0
        return st.st_size if st is not None and stat.S_ISREG(st.st_mode) else 0

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._own and self._fh is not None:
            self._fh.close()
        self._fh = None

    def _read(self) -> bytes:
        """Up to ``read_size`` bytes (fewer only at the end), one system call at a time.

        A buffered ``read(n)`` of a slow pipe loops inside C until n bytes have come; when
        the kernel hands Ctrl-C to another thread, the main thread's read is not
        interrupted and Python runs the handler only once the whole read is done. Between
        ``read1`` calls the interpreter runs it at once.
        """
        assert self._fh is not None, "use BoundedReader in a with statement"
        parts: list[bytes] = []
        got = 0
        try:
            while got < self.read_size:
                part = self._fh.read1(self.read_size - got)
                if not part:
                    break
                parts.append(part)
                got += len(part)
        except OSError as exc:
            raise EvaluationError(f"{self.label}: cannot read: {exc.strerror or exc}") from None
        return b"".join(parts)

    def chunks(self) -> Iterator[bytes]:
        """Whole lines, a few MiB at a time, checked and normalised (LF line ends, no BOM).
        The last chunk may lack a final newline."""
        carry = b""
        total = 0
        first = True
        while True:
            data = self._read()
            total += len(data)
            if self.max_bytes is not None and total > self.max_bytes:
                raise EvaluationError(f"{self.label}: longer than {size_text(self.max_bytes)}, "
                                      "the limit for this input")
            if first:
                first = False
                if data.startswith(_BOM):
                    data = data[len(_BOM):]
            self._check_controls(carry, data)
            if not data:
                if carry:
                    yield self._hand_out(carry)
                return
            cut = data.rfind(b"\n")
            if cut < 0:
                self._check_line(len(carry) + len(data))
                carry += data
                continue
            head = data.find(b"\n")
            self._check_line(len(carry) + head)
            chunk, carry = carry + data[:cut + 1], data[cut + 1:]
            self._check_line(len(carry))
            yield self._hand_out(chunk)

    def lines(self, give_up: int = MAX_SKIP) -> Iterator[str | EvaluationError]:
        """One line at a time, without its line end, as soon as it has been read (a line
        typed into a pipe is handed out at once, not when a chunk is full), for a reader
        that answers each line and goes on.

        A line that breaks a limit (longer than ``max_line`` bytes, a control byte, not
        UTF-8) is handed out as the EvaluationError that says so, as soon as its first
        bad byte is read, and the rest of it is skipped in bounded memory; a line that
        goes on for more than ``give_up`` bytes past its error ends the reading with
        that error raised (a binary stream such as /dev/zero is no input of lines).
        """
        assert self._fh is not None, "use BoundedReader in a with statement"
        buf = bytearray()
        skipped = -1  # >= 0: bytes of a refused line skipped so far
        first = True
        while True:
            try:
                data = self._fh.read1(self.read_size)
            except OSError as exc:
                raise EvaluationError(f"{self.label}: cannot read: "
                                      f"{exc.strerror or exc}") from None
            if not data:  # the end: a last line without its line end is a line too
                if buf and skipped < 0:
                    problem = self._line_problem(buf, b"", complete=True)
                    yield problem if problem is not None else self._line(buf)
                return
            if first:
                first = False
                data = data.removeprefix(_BOM)
            while data:
                cut = data.find(b"\n")
                if skipped >= 0:  # drop the refused line up to its end
                    skipped += len(data) if cut < 0 else cut
                    if skipped > give_up:
                        raise EvaluationError(
                            f"{self.label}: line {self._lines + 1:,} goes on for more than "
                            f"{size_text(give_up)} after its error: not lines of text")
                    if cut < 0:
                        break
                    data, skipped = data[cut + 1:], -1
                    self._lines += 1
                    continue
                part = data if cut < 0 else data[:cut]
                problem = self._line_problem(buf, part, complete=cut >= 0)
                if problem is not None:
                    buf.clear()
                    skipped = 0
                    yield problem
                    continue  # data still holds the rest of the refused line
                buf += part
                if cut < 0:
                    break
                data = data[cut + 1:]
                line = self._line(buf)
                buf.clear()
                yield line

    def _line(self, buf: bytearray) -> str:
        """A whole line read (checked already), counted."""
        self._lines += 1
        return bytes(buf).removesuffix(b"\r").decode("utf-8")

    def _line_problem(self, buf: bytearray, part: bytes,
                      complete: bool) -> EvaluationError | None:
        """The error of a line whose start ``buf`` has passed, and that goes on with
        ``part`` (and ends there when ``complete``): too long, a control byte, or not
        UTF-8 (a character cut by the end of an incomplete line is checked when the rest
        comes)."""
        line = self._lines + 1
        if len(buf) + len(part) > self.max_line:
            return EvaluationError(f"{self.label}: line {line:,} is longer than "
                                   f"{size_text(self.max_line)}, the limit for one line")
        arr = np.frombuffer(part, dtype=np.uint8)
        bad = (arr < 32) & (arr != 9) & (arr != 13)
        if bad.any():
            byte = part[int(np.argmax(bad))]
            return EvaluationError(f"{self.label}: byte 0x{byte:02x} on line {line:,} is not "
                                   "text: expected UTF-8 text")
        whole = bytes(buf) + part
        if not whole.isascii():
            try:
                whole.decode("utf-8")
            except UnicodeDecodeError as exc:
                if complete or exc.start < len(whole) - 3 or \
                        exc.reason != "unexpected end of data":
                    return EvaluationError(f"{self.label}: byte 0x{whole[exc.start]:02x} on "
                                           f"line {line:,} is not text: expected UTF-8 text")
        return None

    def read_text(self) -> str:
        """Everything, as one string (for small inputs such as program files)."""
        return "".join(chunk.decode("utf-8") for chunk in self.chunks())

    def _hand_out(self, chunk: bytes) -> bytes:
        newlines = chunk.count(b"\n")
        chunk = self._checked(chunk)
        self.first_line = self._lines + 1
        self._lines += newlines
        return chunk

    def _check_line(self, length: int) -> None:
        if length > self.max_line:
            raise EvaluationError(f"{self.label}: line {self._lines + 1:,} is longer than "
                                  f"{size_text(self.max_line)}, the limit for one line")

    def _check_controls(self, carry: bytes, data: bytes) -> None:
        """An error at the first control byte (but tab, CR, LF) or invalid UTF-8 of
        ``data``, as it is read: a binary source (``/dev/zero``) stops at once, before any
        line limit."""
        arr = np.frombuffer(data, dtype=np.uint8)
        controls = int(np.count_nonzero(arr < 32))
        newlines = data.count(b"\n")
        if controls != newlines and controls != (newlines + data.count(b"\r")
                                                 + data.count(b"\t")):
            bad = arr < 32
            bad &= (arr != 10) & (arr != 13) & (arr != 9)
            self._not_text(carry + data, len(carry) + int(np.argmax(bad)))
        if not data.isascii():
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                if exc.start < len(data) - 3:  # not a character cut by the end of the read
                    self._not_text(carry + data, len(carry) + exc.start)

    def _checked(self, chunk: bytes) -> bytes:
        """``chunk`` if it is UTF-8, with CRLF as LF; else an error naming the first bad
        byte. (Control bytes were refused as they were read.)"""
        if not chunk.isascii():
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                self._not_text(chunk, exc.start)
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n")
        return chunk

    def _not_text(self, chunk: bytes, pos: int) -> Any:
        line = self._lines + chunk.count(b"\n", 0, pos) + 1
        raise EvaluationError(f"{self.label}: byte 0x{chunk[pos]:02x} on line {line:,} is not "
                              "text: expected UTF-8 text")


class _Encoded:
    """A text stream read as UTF-8 bytes."""

    def __init__(self, text: Any) -> None:
        self._text = text

    def read1(self, n: int) -> bytes:
        return self._text.read(n).encode("utf-8")
