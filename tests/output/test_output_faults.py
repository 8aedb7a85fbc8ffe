"""The fault suite: SIGINT, SIGTERM, SIGHUP and SIGKILL at random moments of writing every
output format, through the real console script.

Each run starts with no target. After the signal the exit status must say what is on
disk: 0 and a complete file, or 128 + the signal's number and no file (SIGKILL: the
process is gone, and a target that exists is complete); never a traceback or an
``Exception ignored`` fragment; no temporary file after a handled signal; and a later run
of the same target leaves no temporary file, also after a SIGKILL. The moments are seeded
random times after the temporary output appears (or after the start, when the run is over
before it does), so a run is repeatable and the signals land before, during and after the
final rename. The four signals of one format run at once, in four folders.
"""

from __future__ import annotations

import importlib
import json
import os
import random
import signal
import subprocess
import sys
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from xml.etree import ElementTree

import numpy as np
import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="needs Linux signals")

PY = sys.executable
N = 200
FIELD = ("sin(x)*cos(y)", "--grid", f"x=0:1:{N}", "--grid", f"y=0:1:{N}")
PICTURE = ("sin(x)*cos(y)", "--grid", "x=0:6:20", "--grid", "y=0:6:20")
COMMANDS = {
    "csv": ("grad", *FIELD), "json": ("grad", *FIELD), "npz": ("grad", *FIELD),
    "npy": ("grad", *FIELD), "nc": ("grad", *FIELD), "zarr": ("grad", *FIELD),
    "parquet": ("grad", *FIELD),
    "png": ("plot", *PICTURE), "svg": ("plot", *PICTURE), "html": ("plot", *PICTURE),
    "gif": ("plot", "sin(x-t)*cos(y)", "--grid", "x=0:6:12", "--grid", "y=0:6:12",
            "--animate", "t=0:1:2"),
}
NEEDS = {"nc": "h5netcdf", "zarr": "zarr", "parquet": "pyarrow", "html": "plotly"}
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL)


def _env() -> dict[str, str]:
    import gradcli

    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GRADCLI_", "DASK_", "FORCE_COLOR"))}
    root = str(Path(gradcli.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _default_signals() -> None:
    # a shell starts background jobs with SIGINT ignored (and nohup ignores SIGHUP): the
    # program under test starts with the default handling of each
    for signum in SIGNALS[:3]:
        signal.signal(signum, signal.SIG_DFL)


def temporaries(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith("."))


def complete(path: Path, fmt: str) -> bool:
    """Whether ``path`` holds a whole file of its format (read back, not just present)."""
    if fmt == "csv":
        lines = path.read_text().splitlines()
        return lines[0] == "x,y,f,df/dx,df/dy" and len(lines) == N * N + 1
    if fmt == "json":
        return len(json.loads(path.read_text())["rows"]) == N * N
    if fmt == "npz":
        with np.load(path) as data:
            return data["df/dx"].shape == (N, N)
    if fmt == "npy":
        return np.load(path).shape == (N, N)
    if fmt in ("nc", "zarr"):
        import xarray as xr

        opened = xr.open_zarr(path, chunks=None) if fmt == "zarr" else \
            xr.open_dataset(path, engine="h5netcdf")
        with opened as ds:
            return dict(ds.sizes) == {"x": N, "y": N} and \
                not np.isnan(ds["df_dy"].values).any()
    if fmt == "parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).num_rows == N * N
    data = path.read_bytes()
    if fmt == "png":
        return data.startswith(b"\x89PNG") and data.endswith(b"IEND\xaeB`\x82")
    if fmt == "svg":
        return ElementTree.fromstring(data).tag.endswith("svg")
    if fmt == "html":
        return data.rstrip().endswith(b"</html>")
    return data.startswith(b"GIF8") and data.endswith(b";")  # gif: the trailer byte


def _signalled_run(folder: Path, fmt: str, signum: int, rng: random.Random
                   ) -> tuple[int, str]:
    target = f"out.{fmt}"
    proc = subprocess.Popen([PY, "-m", "gradcli", *COMMANDS[fmt], "-o", target, "-q"],
                            cwd=folder, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_signals)
    pause = rng.uniform(0.0, 0.3)
    deadline = time.monotonic() + 60
    while proc.poll() is None and not temporaries(folder) and time.monotonic() < deadline:
        time.sleep(0.005)
    time.sleep(pause)  # a moment while writing, or just after the rename
    if proc.poll() is None:
        proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


@pytest.mark.parametrize("fmt", list(COMMANDS))
def test_every_signal_while_writing(tmp_path, fmt):
    """Exit status against what is on disk for each signal; nothing left afterwards."""
    if fmt in NEEDS:
        importlib.import_module(NEEDS[fmt])
    rng = random.Random(f"faults-{fmt}")
    rngs = [random.Random(rng.random()) for _ in SIGNALS]
    folders = []
    for signum in SIGNALS:
        folders.append(tmp_path / signal.Signals(signum).name)
        folders[-1].mkdir()
    with ThreadPoolExecutor(len(SIGNALS)) as pool:
        outcomes = list(pool.map(_signalled_run, folders, [fmt] * 4, SIGNALS, rngs))
    for folder, signum, (code, err) in zip(folders, SIGNALS, outcomes, strict=True):
        name = signal.Signals(signum).name
        target = folder / f"out.{fmt}"
        assert "Traceback" not in err and "Exception ignored" not in err, (name, err)
        if target.exists():
            assert complete(target, fmt), (name, code)
        if signum == signal.SIGKILL:
            assert code in (0, -signal.SIGKILL), (name, code, err)
        else:
            assert code in (0, 128 + signum), (name, code, err)
            assert (code == 0) == target.exists(), (name, code, err)
            assert err == ("" if code == 0 else "gradcli: interrupted" + (
                "" if signum == signal.SIGINT else f" by {name}") + "\n"), (name, err)
            assert temporaries(folder) == [], (name, code)
    # the run after a SIGKILL (whatever it left) writes the target and leaves nothing else
    folder = folders[-1]
    r = subprocess.run([PY, "-m", "gradcli", *COMMANDS[fmt], "-o", f"out.{fmt}", "-q"],
                       cwd=folder, env=_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert os.listdir(folder) == [f"out.{fmt}"]
    assert complete(folder / f"out.{fmt}", fmt)


def test_a_sigkill_leftover_is_swept_by_the_next_write(tmp_path):
    """A temporary left by a killed writer (pid in its name, process gone) is removed by
    the next write of the same target: checked with a leftover made on purpose, since a
    random SIGKILL may land before the temporary exists."""
    proc = subprocess.Popen([PY, "-c", "pass"])
    proc.wait()
    (tmp_path / f".out.csv.tmp-{proc.pid}-abcd").write_text("x,f\n1,")
    r = subprocess.run([PY, "-m", "gradcli", "grad", "x^2", "--at", "x=2", "-o", "out.csv"],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert os.listdir(tmp_path) == ["out.csv"]
    assert (tmp_path / "out.csv").read_text() == "x,f,df/dx\n2.0,4.0,4.0\n"


def test_zip_of_a_complete_npz_is_valid(tmp_path):
    """The completeness check itself: a complete npz is a valid zip, a cut one is not."""
    r = subprocess.run([PY, "-m", "gradcli", "grad", *FIELD, "-o", "a.npz", "-q"],
                       cwd=tmp_path, env=_env(), capture_output=True, timeout=60)
    assert r.returncode == 0 and complete(tmp_path / "a.npz", "npz")
    data = (tmp_path / "a.npz").read_bytes()
    (tmp_path / "b.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises((zipfile.BadZipFile, OSError, ValueError, EOFError)):
        complete(tmp_path / "b.npz", "npz")
