"""Atomic writes and OutputError messages."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gradcli.output import OutputError, write
from gradcli.output.atomic import atomic_open, atomic_path


def test_success_replaces_and_leaves_no_temp(tmp_path) -> None:
    target = tmp_path / "x.csv"
    target.write_text("old")
    with atomic_path(target) as tmp:
        assert os.path.basename(tmp).startswith(".x.csv.tmp-")
        assert os.path.dirname(tmp) == str(tmp_path)
        with open(tmp, "w") as fh:
            fh.write("new")
        assert target.read_text() == "old"
    assert target.read_text() == "new"
    assert os.listdir(tmp_path) == ["x.csv"]


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_exception_leaves_nothing(tmp_path, exc) -> None:
    target = tmp_path / "x.csv"
    with pytest.raises(exc), atomic_open(target, "w") as fh:
        fh.write("partial")
        raise exc()
    assert os.listdir(tmp_path) == []


def test_exception_keeps_old_file(tmp_path) -> None:
    target = tmp_path / "x.json"
    target.write_text("old")
    with pytest.raises(ValueError), atomic_open(target, "w") as fh:
        fh.write("partial")
        raise ValueError
    assert os.listdir(tmp_path) == ["x.json"] and target.read_text() == "old"


def test_missing_directory_message(tmp_path) -> None:
    path = tmp_path / "out" / "x.csv"
    with pytest.raises(OutputError) as info:
        write({"x": np.arange(3.0)}, fmt="csv", path=str(path))
    assert str(info.value) == f"cannot write '{path}': No such file or directory"
    assert info.value.path == str(path)


def test_directory_target(tmp_path) -> None:
    with pytest.raises(OutputError, match="Is a directory"):
        write({"x": np.arange(3.0)}, fmt="json", path=str(tmp_path))


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_dev_full_reports_no_space() -> None:
    with pytest.raises(OutputError) as info:
        write({"x": np.arange(100_000.0)}, fmt="csv", path="/dev/full")
    assert str(info.value).startswith("cannot write '/dev/full': No space left on device")


def test_permission_denied(tmp_path) -> None:
    """A directory the user may not write to. root ignores permission bits, so as root
    the directory is /sys, where nobody may create files (sysfs refuses them)."""
    if os.geteuid() == 0:
        with pytest.raises(OutputError) as info:
            write({"x": np.arange(3.0)}, fmt="csv", path="/sys/gradcli-x.csv")
        message = str(info.value)
        assert message.startswith("cannot write '/sys/gradcli-x.csv': ")
        assert "Permission denied" in message or "Read-only file system" in message
        assert not os.path.exists("/sys/gradcli-x.csv")
        return
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(OutputError, match="Permission denied"):
            write({"x": np.arange(3.0)}, fmt="csv", path=str(locked / "x.csv"))
    finally:
        locked.chmod(0o700)


def test_new_file_gets_normal_permissions(tmp_path) -> None:
    target = tmp_path / "p.csv"
    write({"x": np.arange(3.0)}, fmt="csv", path=str(target))
    mask = os.umask(0)
    os.umask(mask)
    assert (target.stat().st_mode & 0o777) == 0o666 & ~mask
