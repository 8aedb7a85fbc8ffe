"""Where a Zarr store is written, and how it becomes complete only at the end.

A store is complete when its root ``zarr.json`` exists: that one document holds the
dataset's attributes and the consolidated metadata of every array, and neither
``xarray.open_zarr`` nor ``zarr.open_group`` opens a store without it. So the root document
is written last, and every store is first written somewhere else:

- a local path (also ``file://``, ``simplecache::file://`` and ``dir::file://`` URLs, which
  name one): everything goes to a hidden temporary directory ``.NAME.tmp-PID-XXXX`` next to
  it, renamed to NAME at the end; an older store at NAME is replaced only then. A symlink
  to a store is written through (the store it points to is replaced, the link stays), as
  for every other output.
- an object-store URL (``s3://``, ``gs://``, ``memory://``): object stores cannot rename,
  so the store is written complete under the temporary prefix ``.NAME.tmp-PID-XXXX`` beside
  the target, then copied to the target (arrays first, root document last) and the prefix
  deleted. The older store stays intact for the whole computation; during the copy it has
  lost its root document, so the target is never a complete mix of old and new.

An older store is replaced only if gradcli wrote it and it holds nothing else (an entry
gradcli did not write, ``notes.txt``, is named and the write refused unless ``overwrite``).
An interrupted write removes what it wrote; a killed one leaves a temporary directory (or
prefix), which never opens as a store and which the next write of the same target removes
once its process is gone.
"""

from __future__ import annotations

import json
import os
import shutil
from typing import Any

from gradcli.errors import OutputError
from gradcli.output import interrupt
from gradcli.output.atomic import sweep_stale, temp_prefix

__all__ = ["Destination", "ForeignEntries", "is_url", "open_store", "local_target"]

ROOT = "zarr.json"
_SHOWN = 3  # foreign entries named in a refusal


class ForeignEntries(OutputError):
    """The store to be replaced holds entries gradcli did not write (``entries``)."""

    def __init__(self, path: str, entries: list[str], why: str) -> None:
        self.entries = entries
        self.why = why
        super().__init__(path, f"{why}; replacing the store would delete them")


def is_url(destination: str) -> bool:
    """True for an fsspec URL (``s3://...``, ``memory://...``), false for a path."""
    return "://" in destination


def open_store(location: str) -> Any:
    """A zarr store for a local directory or an fsspec URL."""
    if is_url(location):
        from zarr.storage import FsspecStore

        return FsspecStore.from_url(location)
    from zarr.storage import LocalStore

    return LocalStore(location)


def local_target(target: str) -> str | None:
    """The local path a destination names: a path itself, or the path behind a
    ``file://``, ``simplecache::file://`` or ``dir::file://`` URL; None for an object store."""
    if not is_url(target):
        return target
    try:
        import fsspec
        from fsspec.implementations.local import LocalFileSystem

        fs, path = fsspec.core.url_to_fs(target)
    except ImportError as err:  # a protocol whose package is missing (s3fs, gcsfs)
        raise OutputError(target, str(err)) from err
    except (OSError, ValueError) as err:
        raise OutputError(target, str(err) or type(err).__name__) from err
    inner = getattr(fs, "fs", None)  # dir:: and the caches wrap another filesystem
    if isinstance(fs, LocalFileSystem):
        return path
    if isinstance(inner, LocalFileSystem):
        root = getattr(fs, "path", None)  # dir:: is rooted at its URL's path: the store
        if isinstance(root, str) and fs.protocol in ("dir", ("dir",)):
            return root if path in ("", root) else fs._join(path)
        return path
    return None


class Destination:
    """A store being written: ``location`` is where the chunks go while writing."""

    def __init__(self, target: str, overwrite: bool = False) -> None:
        self.target = target
        self.overwrite = overwrite
        self.location = ""
        self.replaced = ""  # what an older store held that is now gone (for a note)
        self._fs: Any = None
        self._path = ""      # an object store: the target's path on it
        self._tmp = ""       # an object store: the temporary prefix's path
        self._final = ""     # a local store: the directory renamed into at the end

    def begin(self) -> str:
        """Prepare the place to write; return the location chunks are written to."""
        local = local_target(self.target)
        if local is None:
            return self._begin_url()
        return self._begin_local(local)

    def _begin_local(self, local: str) -> str:
        path = os.path.abspath(local)
        if os.path.islink(path):  # written through, as every output: the link stays
            path = os.path.realpath(path)
        parent, name = os.path.split(path)
        if not os.path.isdir(parent):
            raise OutputError(self.target, "No such file or directory" if not
                              os.path.lexists(parent) else "Not a directory")
        if os.path.lexists(path):
            self.replaced = _check_replaceable_dir(self.target, path, self.overwrite)
        import tempfile

        try:
            with interrupt.holding():  # the directory is known once made, or not made
                sweep_stale(parent, name)
                self.location = tempfile.mkdtemp(prefix=temp_prefix(name), dir=parent)
        except OSError as err:
            raise OutputError.from_oserror(self.target, err) from err
        self._final = path
        return self.location

    def _begin_url(self) -> str:
        import fsspec

        try:
            self._fs, path = fsspec.core.url_to_fs(self.target)
            fs = self._fs
            self._path = path = path.rstrip("/")
            parent, name = path.rpartition("/")[::2]
            if fs.exists(path):
                if fs.isfile(path):
                    raise OutputError(self.target, "exists and is not a Zarr store (a "
                                      ".zarr store is a directory of objects)")
                keys = [k[len(path) + 1:] for k in fs.find(path)]
                if ROOT not in keys:
                    if keys:
                        raise OutputError(self.target, "is a directory but not a Zarr "
                                          "store: remove it or choose another name")
                else:
                    self.replaced = _check_keys(self.target, keys,
                                                fs.cat_file(f"{path}/{ROOT}"), self.overwrite)
            import uuid

            _sweep_url(fs, parent, name)
            tmp_name = f"{temp_prefix(name)}{uuid.uuid4().hex[:8]}"
            self._tmp = f"{parent}/{tmp_name}" if parent else tmp_name
            base = self.target.rstrip("/")
            self.location = f"{base.rpartition('/')[0]}/{tmp_name}"
        except OutputError:
            raise
        except ImportError as err:
            raise OutputError(self.target, str(err)) from err
        except (OSError, ValueError) as err:
            raise OutputError(self.target, str(err) or type(err).__name__) from err
        return self.location

    def put_tree(self, source: str, skip_root: bool = True) -> None:
        """Copy the metadata files of a scratch store at ``source`` into the location."""
        for folder, _, files in os.walk(source):
            rel = os.path.relpath(folder, source)
            for file in files:
                key = file if rel == "." else f"{rel}/{file}"
                if skip_root and key == ROOT:
                    continue
                with open(os.path.join(folder, file), "rb") as fh:
                    self.put(key, fh.read())

    def put(self, key: str, data: bytes) -> None:
        """Write one file of the store at ``key`` (relative to its root)."""
        try:
            if self._fs is not None:
                self._fs.pipe_file(f"{self._tmp}/{key}", data)
                return
            full = os.path.join(self.location, *key.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as fh:
                fh.write(data)
        except OSError as err:
            raise OutputError.from_oserror(self.target, err) from err

    def finish(self, root: bytes) -> None:
        """Write the root document (the store at the location is complete from here on),
        then put it in the target's place."""
        interrupt.raise_pending()
        self.put(ROOT, root)
        if self._fs is not None:
            self._swap_url()
            return
        try:
            mask = os.umask(0o022)
            os.umask(mask)
            os.chmod(self.location, 0o777 & ~mask)  # mkdtemp made it 0o700
            with interrupt.holding():
                old = None
                if os.path.lexists(self._final):
                    old = self.location  # after the exchange, the older store is here
                    if not _exchange(self.location, self._final):
                        old = self.location + ".old"
                        os.rename(self._final, old)
                        os.rename(self.location, self._final)
                else:
                    os.rename(self.location, self._final)
                interrupt.committed()
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except OSError as err:
            raise OutputError.from_oserror(self.target, err) from err
        self.location = ""

    def _swap_url(self) -> None:
        """Copy the complete store under the temporary prefix to the target, root last."""
        fs, path, tmp = self._fs, self._path, self._tmp
        try:
            with interrupt.holding():
                if fs.exists(f"{path}/{ROOT}"):
                    fs.rm_file(f"{path}/{ROOT}")  # the old store stops looking complete
                if fs.exists(path):
                    fs.rm(path, recursive=True)
                keys = [k[len(tmp) + 1:] for k in fs.find(tmp)]
                keys = [k for k in keys if k != ROOT]
                if keys:
                    fs.copy([f"{tmp}/{k}" for k in keys], [f"{path}/{k}" for k in keys])
                fs.copy(f"{tmp}/{ROOT}", f"{path}/{ROOT}")
                interrupt.committed()
        except (OSError, ValueError) as err:
            self.location = ""  # keep the complete copy: it is all there is now
            raise OutputError(self.target, f"copying the store into place failed ({err}); "
                              f"the complete store is at {self._tmp}") from err
        try:
            fs.rm(tmp, recursive=True)
        except (OSError, ValueError):
            pass
        self.location = ""

    def abort(self) -> None:
        """Remove what was written (best effort: cleanup never masks the first error)."""
        if not self.location:
            return
        try:
            if self._fs is not None:
                if self._fs.exists(self._tmp):
                    self._fs.rm(self._tmp, recursive=True)
            else:
                shutil.rmtree(self.location, ignore_errors=True)
        except Exception:  # noqa: BLE001
            pass
        self.location = ""


def _sweep_url(fs: Any, parent: str, name: str) -> None:
    """Remove the temporary prefixes of ``name`` beside it on an object store that were
    left by processes of this machine that no longer run (as ``sweep_stale`` does for
    local paths)."""
    from gradcli.output.atomic import _alive

    start = f".{name}.tmp-"
    try:
        entries = fs.ls(parent or "/", detail=False)
    except (OSError, ValueError):
        return
    for entry in entries:
        base = entry.rstrip("/").rpartition("/")[2]
        if not base.startswith(start):
            continue
        pid = base[len(start):].partition("-")[0]
        if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            try:
                fs.rm(entry, recursive=True)
            except (OSError, ValueError):
                pass


def _exchange(new: str, target: str) -> bool:
    """Swap two directories in one step (Linux ``renameat2(RENAME_EXCHANGE)``), so that
    no moment exists without a store at ``target``, even for a killed process; False
    where the system or file system cannot (the caller then renames twice)."""
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    done = renameat2(at_fdcwd, os.fsencode(new), at_fdcwd, os.fsencode(target),
                     rename_exchange)
    return done == 0


def _check_replaceable_dir(shown: str, path: str, overwrite: bool) -> str:
    """An existing target may be replaced only if it is a Zarr store gradcli wrote that
    holds nothing else (or is empty); return a description of what it held."""
    if not os.path.isdir(path):
        raise OutputError(shown, "exists and is not a Zarr store (a .zarr store is a "
                          "directory)")
    keys = []
    for folder, dirs, files in os.walk(path):
        rel = os.path.relpath(folder, path)
        for entry in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            keys.append(entry if rel == "." else f"{rel}/{entry}")
        if rel.count(os.sep) >= 1 and os.path.basename(folder) == "c":
            dirs[:] = []  # an array's chunks: gradcli's, however many
    if not keys and not os.listdir(path):
        return ""
    if ROOT not in keys:
        raise OutputError(shown, "is a directory but not a Zarr store: remove it or choose "
                          "another name")
    try:
        with open(os.path.join(path, ROOT), "rb") as fh:
            root = fh.read(1 << 24)
    except OSError as err:
        raise OutputError.from_oserror(shown, err) from err
    return _check_keys(shown, keys, root, overwrite)


def _check_keys(shown: str, keys: list[str], root: bytes, overwrite: bool) -> str:
    """Refuse (unless ``overwrite``) a store with entries gradcli did not write: anything
    but the root document, and in each array's folder its document and chunks ``c``;
    or a store whose root does not say gradcli wrote it."""
    try:
        meta = json.loads(root)
        arrays = set(meta.get("consolidated_metadata", {}).get("metadata", {}))
        source = str(meta.get("attributes", {}).get("source", ""))
    except (ValueError, AttributeError):
        arrays, source = set(), ""
    foreign = []
    for key in keys:
        head, _, rest = key.partition("/")
        if key == ROOT or (head in arrays and "/" not in head and
                           (rest == ROOT or rest == "c" or rest.startswith("c/"))):
            continue
        foreign.append(key)
    what = f"{len(arrays)} arrays" if arrays else "a Zarr store"
    if not source.startswith("gradcli"):
        if not overwrite:
            raise ForeignEntries(shown, foreign, "is a Zarr store gradcli did not write")
        return f"a Zarr store gradcli did not write ({what})"
    if foreign:
        named = ", ".join(sorted(foreign)[:_SHOWN]) + (
            f" and {len(foreign) - _SHOWN} more" if len(foreign) > _SHOWN else "")
        if not overwrite:
            raise ForeignEntries(shown, foreign,
                                 f"holds {len(foreign)} entr{'y' if len(foreign) == 1 else 'ies'}"
                                 f" gradcli did not write ({named})")
        return f"{what} and {len(foreign)} other entr{'y' if len(foreign) == 1 else 'ies'}" \
            f" ({named})"
    return what
