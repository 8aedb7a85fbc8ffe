"""Bounded reading of the text files and streams gradcli reads (``--points FILE``, ``-`` for
stdin; later vector files and program files).

Every input has a bound on what it reads and a clear error past it, raised while reading
(never after swallowing the input): a line longer than ``max_line`` bytes, more than
``max_bytes`` in all, or bytes that are not text (NUL and other control characters but
tab, CR and LF; invalid UTF-8) each stop the read with an EvaluationError naming the source
and the limit. Data comes in chunks of whole lines, so memory stays a few chunks plus what
the caller keeps. A UTF-8 byte-order mark is dropped and CRLF read as LF. Reading happens
in short steps on the calling thread, so Ctrl-C interrupts it at any point, on a pipe too.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Iterator
from types import TracebackType
from typing import Any, BinaryIO

import numpy as np

from ..evaluation import EvaluationError

MiB = 1 << 20
MAX_LINE = 32 * MiB  # the longest line of a points file: 10⁶ values of 17 digits fit
_READ = 4 * MiB
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
