"""Where a Zarr store is written, and how it becomes complete only at the end.

A store is complete when its root ``zarr.json`` exists: that one document holds the
dataset's attributes and the consolidated metadata of every array, and neither
``xarray.open_zarr`` nor ``zarr.open_group`` opens a store without it. So the root document
is written last, after every chunk, for every destination:

- a local path: everything goes to a hidden temporary directory ``.NAME.tmp-XXXX`` next to
  it, renamed to NAME at the end (an older store at NAME is replaced only then);
- an fsspec URL (``s3://bucket/field.zarr``, ``memory://...``): object stores cannot
  rename, so the arrays are written in place and the root document last. An older store
  there loses its root document first, so it never looks complete while mixed.

An interrupted write removes what it wrote; a killed one leaves a temporary directory, or
(for a URL) arrays without a root document, neither of which opens as a store. (On a Dask
cluster a task already running when the command is interrupted may still add its chunks
afterwards: they land in the same hidden or rootless place, never in a store.)
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from .atomic import OutputError

__all__ = ["Destination", "is_url", "open_store"]

ROOT = "zarr.json"


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


class Destination:
    """A store being written: ``location`` is where the chunks go while writing."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.location = ""
        self._fs: Any = None
        self._path = ""

    def begin(self) -> str:
        """Prepare the place to write; return the location chunks are written to."""
        if is_url(self.target):
            return self._begin_url()
        return self._begin_local()

    def _begin_local(self) -> str:
        path = os.path.abspath(self.target)
        parent, name = os.path.split(path)
        if not os.path.isdir(parent):
            raise OutputError(self.target, "No such file or directory")
        if os.path.lexists(path):
            _check_replaceable_dir(self.target, path)
        import tempfile

        try:
            self.location = tempfile.mkdtemp(prefix=f".{name}.tmp-", dir=parent)
        except OSError as err:
            raise OutputError.from_oserror(self.target, err) from err
        return self.location

    def _begin_url(self) -> str:
        import fsspec

        try:
            self._fs, self._path = fsspec.core.url_to_fs(self.target)
            fs, path = self._fs, self._path.rstrip("/")
            if fs.exists(path):
                if fs.isfile(path):
                    raise OutputError(self.target, "exists and is not a Zarr store")
                if fs.exists(f"{path}/{ROOT}"):
                    fs.rm(f"{path}/{ROOT}")  # the old store stops looking complete first
                elif fs.ls(path):
                    raise OutputError(self.target, "is a directory but not a Zarr store: "
                                      "remove it or choose another name")
                fs.rm(path, recursive=True)
        except OutputError:
            raise
        except ImportError as err:  # a protocol whose package is missing (s3fs, gcsfs)
            raise OutputError(self.target, str(err)) from err
        except (OSError, ValueError) as err:
            raise OutputError(self.target, str(err) or type(err).__name__) from err
        self.location = self.target
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
                self._fs.pipe_file(f"{self._path.rstrip('/')}/{key}", data)
                return
            full = os.path.join(self.location, *key.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "wb") as fh:
                fh.write(data)
        except OSError as err:
            raise OutputError.from_oserror(self.target, err) from err

    def finish(self, root: bytes) -> None:
        """Write the root document (the store is complete from here on), then for a local
        path move the temporary directory to its name."""
        self.put(ROOT, root)
        if self._fs is not None:
            return
        path = os.path.abspath(self.target)
        try:
            mask = os.umask(0o022)
            os.umask(mask)
            os.chmod(self.location, 0o777 & ~mask)  # mkdtemp made it 0o700
            old = None
            if os.path.lexists(path):
                old = self.location + ".old"
                os.rename(path, old)
            os.rename(self.location, path)
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except OSError as err:
            raise OutputError.from_oserror(self.target, err) from err
        self.location = ""

    def abort(self) -> None:
        """Remove what was written (best effort: cleanup never masks the first error)."""
        if not self.location:
            return
        try:
            if self._fs is not None:
                self._fs.rm(self._path.rstrip("/"), recursive=True)
            else:
                shutil.rmtree(self.location, ignore_errors=True)
        except Exception:  # noqa: BLE001
            pass
        self.location = ""


def _check_replaceable_dir(shown: str, path: str) -> None:
    """An existing target may be replaced only if it is a Zarr store (or empty)."""
    if not os.path.isdir(path) or os.path.islink(path):
        raise OutputError(shown, "exists and is not a Zarr store (a .zarr store is a "
                          "directory)")
    if os.listdir(path) and not os.path.isfile(os.path.join(path, ROOT)):
        raise OutputError(shown, "is a directory but not a Zarr store: remove it or choose "
                          "another name")
