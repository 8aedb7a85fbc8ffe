"""Zarr stores at paths and URLs: nothing lost when one replaces another.

A new store is complete before an older one is touched (a local one is renamed into
place, a URL one is copied from a temporary prefix, root document last); a store holding
entries gradcli did not write is refused by name unless overwrite is asked for; symlinks
are written through; temporaries of dead processes are swept by the next write.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

import gradcli
from gradcli import output
from gradcli.cli.main import main
from gradcli.evaluation import prepare
from gradcli.output import OutputError
from gradcli.output.atomic import sweep_stale

importlib.import_module("zarr")
xr = importlib.import_module("xarray")


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def sizes(target: str) -> dict[str, int]:
    return dict(xr.open_zarr(target, chunks=None).sizes)


def keep_store(tmp_path, n: int = 1000) -> str:
    target = str(tmp_path / "keep.zarr")
    r = gradcli.evaluate("x^2", "grad", grid={"x": (0, 1, n)})
    output.write(r.result, fmt="zarr", path=target, origin=r.origin)
    return target


def hidden(tmp_path) -> list[str]:
    return sorted(n for n in os.listdir(tmp_path) if n.startswith("."))


@pytest.mark.parametrize("scheme", ["file://", "simplecache::file://", "dir::file://"])
def test_file_urls_replace_a_store_like_a_path(capsys, tmp_path, scheme):
    """A local store named by a file URL is written and replaced like its path."""
    target = keep_store(tmp_path)
    code, _, err = run(capsys, "grad", "x^2", "--grid", "x=0:1:10", "-o",
                       f"{scheme}{target}")
    assert code == 0, err
    ds = xr.open_zarr(target, chunks=None).load()
    assert dict(ds.sizes) == {"x": 10}
    assert np.allclose(ds["df_dx"].values, 2 * np.linspace(0, 1, 10))  # d(x^2)/dx = 2x
    assert "note: replaced the older store at" in err and "3 arrays" in err
    assert hidden(tmp_path) == []


def test_a_failed_file_url_write_keeps_the_old_store(tmp_path):
    """Interrupted half-way, a file:// store leaves the old store whole and no temporary."""
    from gradcli.output.zarr_sink import ZarrSink

    target = keep_store(tmp_path, 50)
    prepared = prepare("x*y", "grad", grid={"x": (0, 1, 40), "y": (0, 1, 30)})
    sink = ZarrSink(f"file://{target}", prepared.origin(), block_size=300)
    real, seen = sink.write, []

    def write(start, stop, values):
        assert sizes(target) == {"x": 50}  # the old store opens whole during the run
        if len(seen) == 2:
            raise KeyboardInterrupt
        seen.append(start)
        real(start, stop, values)

    sink.write = write
    with pytest.raises(KeyboardInterrupt):
        prepared.run(sink, threads=1)
    assert sizes(target) == {"x": 50}
    assert sorted(os.listdir(tmp_path)) == ["keep.zarr"]


def test_an_object_store_keeps_the_old_store_until_the_new_one_is_complete():
    """memory://: the new store is written under a temporary prefix; the old one opens
    unchanged for the whole computation, and a failed run leaves it as it was."""
    import fsspec

    from gradcli.output.zarr_sink import ZarrSink

    fs = fsspec.filesystem("memory")
    url = "memory://gradcli-stores/field.zarr"
    try:
        old = gradcli.evaluate("x+y", "grad", grid={"x": (0, 1, 4), "y": (0, 1, 3)})
        output.write(old.result, fmt="zarr", path=url, origin=old.origin)
        prepared = prepare("x*y", "grad", grid={"x": (0, 1, 40), "y": (0, 1, 30)})
        sink = ZarrSink(url, prepared.origin(), block_size=300)
        real, seen = sink.write, []

        def write(start, stop, values):
            assert sizes(url) == {"x": 4, "y": 3}
            if len(seen) == 2:
                raise KeyboardInterrupt
            seen.append(start)
            real(start, stop, values)

        sink.write = write
        with pytest.raises(KeyboardInterrupt):
            prepared.run(sink, threads=1)
        assert sizes(url) == {"x": 4, "y": 3}
        assert fs.ls("/gradcli-stores", detail=False) == ["/gradcli-stores/field.zarr"]
        prepared.run(ZarrSink(url, prepared.origin(), block_size=300), threads=1)
        ds = xr.open_zarr(url, chunks=None).load()
        assert dict(ds.sizes) == {"x": 40, "y": 30}
        assert np.array_equal(ds["df_dx"].values[:, 7],
                              np.full(40, np.linspace(0, 1, 30)[7]))  # d(xy)/dx = y
        assert fs.ls("/gradcli-stores", detail=False) == ["/gradcli-stores/field.zarr"]
    finally:
        if fs.exists("/gradcli-stores"):
            fs.rm("/gradcli-stores", recursive=True)


def test_foreign_entries_are_named_and_kept(capsys, tmp_path):
    """A store holding files gradcli did not write is refused (exit 1), naming them."""
    target = keep_store(tmp_path)
    (tmp_path / "keep.zarr" / "notes.txt").write_text("MINE\n")
    (tmp_path / "keep.zarr" / "subdir").mkdir()
    (tmp_path / "keep.zarr" / "subdir" / "deep.bin").write_bytes(b"\0")
    code, _, err = run(capsys, "grad", "x^2", "--grid", "x=0:1:10", "-o", target)
    assert code == 1
    assert err == (f"gradcli: error: cannot write '{target}': holds 2 entries gradcli did "
                   "not write (notes.txt, subdir/deep.bin): add --overwrite to replace it "
                   "anyway\n")
    assert (tmp_path / "keep.zarr" / "notes.txt").read_text() == "MINE\n"
    assert sizes(target) == {"x": 1000}
    assert hidden(tmp_path) == []


def test_overwrite_replaces_them_and_says_what_was_replaced(capsys, tmp_path):
    """--overwrite replaces such a store and names what went with it on stderr."""
    target = keep_store(tmp_path)
    (tmp_path / "keep.zarr" / "notes.txt").write_text("MINE\n")
    code, _, err = run(capsys, "grad", "x^2", "--grid", "x=0:1:10", "-o", target,
                       "--overwrite")
    assert code == 0
    assert err == (f"note: replaced the older store at {target}: 3 arrays and 1 other "
                   "entry (notes.txt)\n")
    assert sorted(os.listdir(target)) == ["df_dx", "f", "x", "zarr.json"]
    code, _, err = run(capsys, "grad", "x^2", "--grid", "x=0:1:10", "-o", target, "-q")
    assert code == 0 and err == ""


def test_a_store_gradcli_did_not_write_is_refused(tmp_path):
    """A Zarr store without gradcli's source attribute is somebody else's data."""
    import zarr

    target = str(tmp_path / "theirs.zarr")
    group = zarr.open_group(target, mode="w", zarr_format=3)
    group.create_array("a", shape=(3,), dtype="f8")
    with pytest.warns(UserWarning):  # zarr: consolidated metadata is not yet in the spec
        zarr.consolidate_metadata(target)
    r = gradcli.evaluate("x", "eval", grid={"x": (0, 1, 3)})
    with pytest.raises(OutputError, match="a Zarr store gradcli did not write"):
        output.write(r.result, fmt="zarr", path=target, origin=r.origin)
    assert os.path.isdir(os.path.join(target, "a"))
    output.write(r.result, fmt="zarr", path=target, origin=r.origin, overwrite=True)
    assert sizes(target) == {"x": 3}


def test_a_symlink_to_a_store_is_written_through(capsys, tmp_path):
    """As for every output, the store a link points to is replaced; the link stays."""
    real = tmp_path / "data"
    real.mkdir()
    target = keep_store(real)
    link = tmp_path / "link.zarr"
    link.symlink_to(target)
    code, _, err = run(capsys, "grad", "x^2", "--grid", "x=0:1:4", "-o", str(link), "-q")
    assert code == 0, err
    assert os.path.islink(link) and os.readlink(link) == target
    assert sizes(target) == {"x": 4}
    assert sorted(os.listdir(real)) == ["keep.zarr"]


def test_a_url_for_a_file_format_says_why(capsys, tmp_path):
    """memory://a/x.nc names a URL, which only a .zarr store can be written to."""
    importlib.import_module("h5netcdf")
    code, _, err = run(capsys, "grad", "x^2", "--grid", "x=0:1:4", "-o", "memory://a/x.nc")
    assert code == 1
    assert err == ("gradcli: error: cannot write 'memory://a/x.nc': a memory:// URL: only a "
                   ".zarr store is written to a URL; write this format to a local path\n")
    path = tmp_path / "x.csv"
    code, _, err = run(capsys, "grad", "x^2", "--at", "x=3", "-o", f"file://{path}")
    assert code == 0 and path.read_text() == "x,f,df/dx\n3.0,9.0,6.0\n"


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_stale_temporaries_of_dead_processes_are_swept(capsys, tmp_path):
    """The next write of a target removes the temporaries its killed writers left, and
    only those: a live process's, another target's and a foreign name stay."""
    dead = dead_pid()
    stale = [f".o.csv.tmp-{dead}-abc", f".k.zarr.tmp-{dead}-xyz", f".k.zarr.tmp-{dead}-q.old"]
    (tmp_path / stale[0]).write_text("partial")
    for name in stale[1:]:
        (tmp_path / name / "df_dx").mkdir(parents=True)
        (tmp_path / name / "df_dx" / "zarr.json").write_text("{}")
    kept = [f".o.csv.tmp-{os.getppid()}-live", f".p.csv.tmp-{dead}-other", ".o.csv.tmp-abc"]
    for name in kept:
        (tmp_path / name).write_text("x")
    assert run(capsys, "grad", "x^2", "--at", "x=3", "-o", str(tmp_path / "o.csv"))[0] == 0
    assert run(capsys, "grad", "x^2", "--grid", "x=0:1:3", "-o", str(tmp_path / "k.zarr"))[0] \
        == 0
    assert hidden(tmp_path) == sorted(kept)
    assert sweep_stale(str(tmp_path), "o.csv") == []


def test_a_chunk_never_recreates_a_removed_store(tmp_path):
    """A block finished after its store was removed (a Dask task still running when the
    run stopped) is refused instead of writing the directory back."""
    from gradcli.output.zarr_sink import ZarrSink

    prepared = prepare("x*y", "grad", grid={"x": (0, 1, 40), "y": (0, 1, 30)})
    sink = ZarrSink(str(tmp_path / "s.zarr"), prepared.origin(), block_size=300)
    sink.open(prepared.layout, prepared.binding.batch_shape, np.dtype("f8"),
              prepared.inputs)
    writer = sink.writer
    sink.abort()
    assert os.listdir(tmp_path) == []
    with pytest.raises(OutputError, match="removed"):
        writer.write(0, 10, [np.zeros(1), np.zeros((10, 30)), np.zeros((10, 30))])
    assert os.listdir(tmp_path) == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_replacing_a_store_is_one_exchange(tmp_path, monkeypatch):
    """On Linux the new store and the old one swap places in one step: the target never
    goes missing, even for a process killed at that moment (no rename of the target)."""
    target = keep_store(tmp_path, 20)
    real = os.rename

    def rename(a, b):
        assert os.fspath(a) != target, "the old store was moved aside: a moment without one"
        real(a, b)

    monkeypatch.setattr(os, "rename", rename)
    r = gradcli.evaluate("x^2", "grad", grid={"x": (0, 1, 5)})
    output.write(r.result, fmt="zarr", path=target, origin=r.origin)
    assert sizes(target) == {"x": 5}
    assert sorted(os.listdir(tmp_path)) == ["keep.zarr"]


def test_an_object_store_temporary_of_a_dead_process_is_swept_and_never_recreated():
    """memory://: a prefix left by a killed writer goes with the next write; a block that
    arrives after its prefix was removed writes nothing."""
    import fsspec

    from gradcli.output.zarr_sink import ZarrSink

    fs = fsspec.filesystem("memory")
    stale = f"/gradcli-sweep/.f.zarr.tmp-{dead_pid()}-abcd"
    fs.pipe_file(f"{stale}/df_dx/c/0/0", b"partial")
    url = "memory://gradcli-sweep/f.zarr"
    try:
        prepared = prepare("x*y", "grad", grid={"x": (0, 1, 40), "y": (0, 1, 30)})
        sink = ZarrSink(url, prepared.origin(), block_size=300)
        sink.open(prepared.layout, prepared.binding.batch_shape, np.dtype("f8"),
                  prepared.inputs)
        assert not fs.exists(stale)
        writer = sink.writer
        sink.abort()
        assert fs.find("/gradcli-sweep") == []
        with pytest.raises(OutputError, match="removed"):
            writer.write(0, 10, [np.zeros(1), np.zeros((10, 30)), np.zeros((10, 30))])
        assert fs.find("/gradcli-sweep") == []
    finally:
        if fs.exists("/gradcli-sweep"):
            fs.rm("/gradcli-sweep", recursive=True)
