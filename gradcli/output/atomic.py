"""Atomic output files and the OutputError every writer raises.

Why: a crash, Ctrl-C or full disk half-way through writing a million-row CSV
must never leave a truncated file where the user expects a complete one.
Writers therefore write to ``.NAME.tmp-PID-XXXX`` in the target's directory and
``os.replace`` it over the target only after everything succeeded.  Targets
that are not regular files (``/dev/stdout``, ``/dev/full``, FIFOs) cannot be
replaced, so they are written directly.

A process killed outright (SIGKILL, a power cut) cannot remove its temporary file; the
process id in the name lets the next write of the same target remove the temporaries of
processes that no longer run (:func:`sweep_stale`). The rename is the moment the output
is complete: a signal arriving from there on does not turn a complete file into an
"interrupted" run (``interrupt.committed``).
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from gradcli.errors import OutputError
from gradcli.output import interrupt

__all__ = ["OutputError", "atomic_path", "atomic_open", "temp_prefix", "sweep_stale",
           "local_path"]

_DIRECT_PREFIXES = ("/dev/", "/proc/")





def _umask_mode() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def temp_prefix(name: str) -> str:
    """The prefix of this process's temporaries for the target called ``name``."""
    return f".{name}.tmp-{os.getpid()}-"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # EPERM: it runs, as another user
        return True
    return True


def sweep_stale(directory: str, name: str) -> list[str]:
    """Remove the temporaries of target ``name`` in ``directory`` left by processes that
    no longer run (a SIGKILL, a crash); return what was removed. Temporaries of running
    processes, of other targets, and without a process id are never touched."""
    start = f".{name}.tmp-"
    removed: list[str] = []
    try:
        entries = os.listdir(directory or ".")
    except OSError:
        return removed
    for entry in entries:
        if not entry.startswith(start):
            continue
        pid = entry[len(start):].partition("-")[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _alive(int(pid)):
            continue
        full = os.path.join(directory or ".", entry)
        try:
            if os.path.isdir(full) and not os.path.islink(full):
                shutil.rmtree(full)
            else:
                os.unlink(full)
            removed.append(full)
        except OSError:
            pass  # another process swept it first, or it is not ours to remove
    return removed


def local_path(path: str) -> str:
    """``path`` as a local path: a ``file://`` URL is its path; any other URL
    (``memory://``, ``s3://``) is refused, since only a ``.zarr`` store is written to one."""
    if "://" not in path:
        return path
    scheme, _, rest = path.partition("://")
    if scheme == "file" and rest.startswith("/"):
        return rest
    raise OutputError(path, f"a {scheme}:// URL: only a .zarr store is written to a URL; "
                      "write this format to a local path")


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """Yield a temporary path next to ``path``; move it over ``path`` on success.

    On any exception (including KeyboardInterrupt) the temporary file is
    removed and ``path`` is left untouched.  Non-regular existing targets are
    yielded unchanged (written directly).  Setup failures raise OutputError.
    """
    path = local_path(os.fspath(path))
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
    tmp = ""
    try:
        # a signal between creating the file and knowing its name would leave it behind
        with interrupt.holding():
            try:
                import tempfile  # on first write: it pulls in shutil, random, compressors

                sweep_stale(directory, name)
                fd, tmp = tempfile.mkstemp(prefix=temp_prefix(name), dir=directory or ".")
                os.close(fd)
            except OSError as err:
                raise OutputError.from_oserror(path, err) from err
        yield tmp
        interrupt.raise_pending()  # one a writer's __del__ swallowed: the file is not done
        os.chmod(tmp, stat.S_IMODE(st.st_mode) if st is not None else _umask_mode())
        with interrupt.holding():
            os.replace(tmp, target)
            interrupt.committed()
    except BaseException:
        if tmp:
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
