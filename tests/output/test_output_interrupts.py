"""Exit status against what is on disk at the edges: a signal just after the final rename,
an interrupt swallowed inside a writer's ``__del__`` (h5py, zarr), SIGTERM and SIGHUP
while computing, and a SIGHUP that ``nohup`` asked to ignore.

Each case runs the console script's ``main()`` in a fresh interpreter, with one function
patched to send the signal at the exact moment, so the timing is not left to chance.
"""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import gradcli

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="needs Linux signals")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRADCLI_", "DASK_"))}
    root = str(Path(gradcli.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _default_signals() -> None:
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


def run_patched(folder: Path, patch: str, *args: str) -> subprocess.CompletedProcess:
    """Run ``gradcli ARGS`` as the console script does, after ``patch`` (Python source)."""
    script = textwrap.dedent(patch) + textwrap.dedent(f"""
        import sys
        from gradcli.cli.main import main
        sys.argv = ["gradcli", *{list(args)!r}]
        main()
        """)
    return subprocess.run([sys.executable, "-c", script], cwd=folder, env=_env(),
                          capture_output=True, text=True, timeout=120,
                          preexec_fn=_default_signals)


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_after_the_final_rename_keeps_exit_0(tmp_path, signum):
    """The file is complete once renamed: the run ends 0, not 'interrupted'."""
    patch = f"""
        import os, signal
        real = os.replace
        def replace(a, b):
            real(a, b)
            os.kill(os.getpid(), {int(signum)})
        os.replace = replace
        """
    r = run_patched(tmp_path, patch, "grad", "x^2", "--grid", "x=0:1:3", "-o", "o.csv")
    assert (r.returncode, r.stderr) == (0, "")
    assert (tmp_path / "o.csv").read_text() == \
        "x,f,df/dx\n0.0,0.0,0.0\n0.5,0.25,1.0\n1.0,1.0,2.0\n"
    assert os.listdir(tmp_path) == ["o.csv"]


def test_a_signal_after_a_zarr_store_is_renamed_keeps_exit_0(tmp_path):
    importlib.import_module("zarr")
    patch = """
        import os, signal
        real = os.rename
        def rename(a, b):
            real(a, b)
            if not str(a).endswith(".old"):
                os.kill(os.getpid(), signal.SIGTERM)
        os.rename = rename
        """
    r = run_patched(tmp_path, patch, "grad", "x^2", "--grid", "x=0:1:3", "-o", "o.zarr")
    assert (r.returncode, r.stderr) == (0, "")
    assert os.listdir(tmp_path) == ["o.zarr"]


def test_an_interrupt_swallowed_by_a_del_during_a_nc_write_is_130_and_no_file(tmp_path):
    """h5py closes objects in ``__del__``; a SIGINT landing there used to print an
    'Exception ignored' fragment and exit 0. Now: 130, one line, no file."""
    importlib.import_module("h5netcdf")
    patch = """
        import os, signal, gc
        import xarray
        real = xarray.Dataset.to_netcdf
        class Closing:
            def __del__(self):
                os.kill(os.getpid(), signal.SIGINT)
        def to_netcdf(self, *args, **kwargs):
            out = real(self, *args, **kwargs)
            Closing()  # dropped at once: its __del__ runs and gets the signal
            gc.collect()
            return out
        xarray.Dataset.to_netcdf = to_netcdf
        """
    r = run_patched(tmp_path, patch, "grad", "x^2", "--grid", "x=0:1:3", "-o", "o.nc")
    assert (r.returncode, r.stderr) == (130, "gradcli: interrupted\n")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_and_sighup_while_computing(tmp_path, signum, status):
    """timeout, kill, systemd and a closed terminal stop a run as Ctrl-C does."""
    proc = subprocess.Popen([sys.executable, "-m", "gradcli", "grad", "sin(x)*cos(y)",
                             "--grid", "x=0:1:4000", "--grid", "y=0:1:4000", "-o", "o.csv"],
                            cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_signals)
    deadline = time.monotonic() + 60
    while not os.listdir(tmp_path):  # the temporary output exists: it is writing
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == status
    assert err == f"gradcli: interrupted by {signal.Signals(signum).name}\n"
    assert os.listdir(tmp_path) == []


def test_an_ignored_sighup_stays_ignored(tmp_path):
    """nohup: SIGHUP ignored by the parent is not turned into an interruption."""
    def nohup() -> None:
        _default_signals()
        signal.signal(signal.SIGHUP, signal.SIG_IGN)

    proc = subprocess.Popen([sys.executable, "-m", "gradcli", "grad", "sin(x)*cos(y)",
                             "--grid", "x=0:1:300", "--grid", "y=0:1:300", "-o", "o.csv"],
                            cwd=tmp_path, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, preexec_fn=nohup)
    deadline = time.monotonic() + 60
    while not os.listdir(tmp_path):
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, "")
    assert os.listdir(tmp_path) == ["o.csv"]


def test_a_signal_while_zarr_makes_the_metadata_is_one_line_and_no_store(tmp_path):
    """zarr works in its own event-loop thread; a SIGTERM while it makes the store's
    metadata ends the run after that work has finished (143, one line, nothing left),
    never while it runs on unattended (which printed zarr's warnings)."""
    importlib.import_module("zarr")
    patch = """
        import asyncio, os, signal, warnings
        with warnings.catch_warnings(record=True):  # a library's import-time notice
            from zarr.storage import LocalStore     # (numcodecs' crc32c) is not gradcli's
        real = LocalStore.set
        sent = []
        async def set(self, key, value):
            if not sent:  # in zarr's loop thread, while the main thread waits for it
                sent.append(key)
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.sleep(0.5)
                done = await real(self, key, value)
                open(os.path.join(os.environ["MARKS"], "finished"), "w").close()
                return done
            return await real(self, key, value)
        LocalStore.set = set
        """
    marks = tmp_path / "marks"
    marks.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    os.environ["MARKS"] = str(marks)  # inherited by the child through _env()
    try:
        r = run_patched(work, patch, "grad", "x*y", "--grid", "x=0:1:30", "--grid",
                        "y=0:1:20", "-o", "o.zarr")
    finally:
        del os.environ["MARKS"]
    assert (r.returncode, r.stderr) == (143, "gradcli: interrupted by SIGTERM\n")
    assert os.listdir(work) == []
    assert os.listdir(marks) == ["finished"]  # zarr's work ended before the run did


def test_an_interrupt_a_c_extension_turns_into_an_error_is_still_an_interrupt(tmp_path):
    """matplotlib's compiled conversions catch a KeyboardInterrupt and raise ValueError
    ('Invalid affine transformation matrix') instead: the run is still interrupted (130,
    one line, no file), not an internal error."""
    importlib.import_module("matplotlib")
    patch = """
        import os, signal, time
        import matplotlib.figure
        real = matplotlib.figure.Figure.savefig
        def savefig(self, *args, **kwargs):
            swallowed = False
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(1)
            except KeyboardInterrupt:  # as C code does: the interrupt is cleared
                swallowed = True
            if swallowed:
                raise ValueError("Invalid affine transformation matrix")
            return real(self, *args, **kwargs)
        matplotlib.figure.Figure.savefig = savefig
        """
    r = run_patched(tmp_path, patch, "plot", "x*y", "--grid", "x=0:1:5", "--grid",
                    "y=0:1:5", "-o", "p.svg")
    assert (r.returncode, r.stderr) == (130, "gradcli: interrupted\n")
    assert os.listdir(tmp_path) == []
