"""Atomic output files and the OutputError every writer raises.

Why: a crash, Ctrl-C or full disk half-way through writing a million-row CSV
must never leave a truncated file where the user expects a complete one.
Writers therefore write to ``.NAME.tmp-XXXX`` in the target's directory and
``os.replace`` it over the target only after everything succeeded.  Targets
that are not regular files (``/dev/stdout``, ``/dev/full``, FIFOs) cannot be
replaced, so they are written directly.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

__all__ = ["OutputError", "atomic_path", "atomic_open"]

_DIRECT_PREFIXES = ("/dev/", "/proc/")


class OutputError(Exception):
    """An output file could not be written; ``str()`` names the path and why."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"cannot write '{self.path}': {reason}")

    @classmethod
    def from_oserror(cls, path: str | os.PathLike[str], err: OSError) -> OutputError:
        """Build from an OSError, keeping only its one-line reason."""
        return cls(path, err.strerror or str(err))


def _umask_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path next to ``path``; move it over ``path`` on success.

    On any exception (including KeyboardInterrupt) the temporary file is
    removed and ``path`` is left untouched.  Non-regular existing targets are
    yielded unchanged (written directly).  Setup failures raise OutputError.
    """
    path = os.fspath(path)
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as err:
        raise OutputError.from_oserror(path, err) from err
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(path, "Is a directory")
    if (st is not None and not stat.S_ISREG(st.st_mode)) or path.startswith(_DIRECT_PREFIXES):
        yield path
        return
    target = os.path.realpath(path) if os.path.islink(path) else path
    directory, name = os.path.split(target)
    try:
        import tempfile  # on first write: it pulls in shutil, random and compressors

        fd, tmp = tempfile.mkstemp(prefix=f".{name}.tmp-", dir=directory or ".")
        os.close(fd)
    except OSError as err:
        raise OutputError.from_oserror(path, err) from err
    try:
        yield tmp
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else _umask_mode())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """Open ``path`` for writing atomically; every OSError becomes OutputError.

    Errors at flush/close time (ENOSPC on ``/dev/full``) are caught too.
    """
    try:
        with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as fh:
            yield fh
    except OSError as err:
        raise OutputError.from_oserror(path, err) from err
