"""Dask's own conventions and failures, against a real scheduler and two workers started
as separate processes on 127.0.0.1 (``python -m distributed.cli.dask_scheduler`` and
``...dask_worker``), each bounded by a timeout and always stopped.

Conventions: ``--scheduler-file``, ``DASK_SCHEDULER_ADDRESS`` (and which address wins),
the dashboard link on stderr, and ``evaluate(..., scheduler=client)`` leaving the client
running. Failures: a worker killed mid-run (the run completes), the scheduler killed
mid-run (one line, exit 1, nothing left), something that is not a scheduler (an HTTP
server, a silent listener) within the timeout, and addresses of other transports.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import gradcli

importlib.import_module("distributed")
xr = importlib.import_module("xarray")

PY = sys.executable
needs_linux = pytest.mark.skipif(sys.platform != "linux", reason="needs Linux")
pytestmark = needs_linux


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DASK_", "GRADCLI_SCHEDULER", "FORCE_COLOR"))}
    root = str(Path(gradcli.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _start(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as fh:
        return subprocess.Popen([PY, "-m", *args], stdout=fh, stderr=subprocess.STDOUT,
                                env=_env(), start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=30)


class Cluster:
    """A scheduler and ``workers`` workers (no nanny: a killed worker stays dead)."""

    def __init__(self, folder: Path, workers: int = 2, death_timeout: int = 20) -> None:
        self.file = folder / "scheduler.json"
        self.procs: list[subprocess.Popen] = []
        self.scheduler = _start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                 "--port", "0", "--dashboard-address", "127.0.0.1:0",
                                 "--scheduler-file", str(self.file)], folder / "sched.log")
        self.procs.append(self.scheduler)
        deadline = time.monotonic() + 60
        while not (self.file.exists() and self.file.stat().st_size):
            assert self.scheduler.poll() is None, (folder / "sched.log").read_text()
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written in one go, but let it land
        self.address = json.loads(self.file.read_text())["address"]
        self.workers = [_start(["distributed.cli.dask_worker", "--scheduler-file",
                                str(self.file), "--nthreads", "1", "--no-nanny", "--host",
                                "127.0.0.1", "--death-timeout", str(death_timeout)],
                               folder / f"w{i}.log")
                        for i in range(workers)]
        self.procs += self.workers
        from distributed import Client

        with Client(self.address, timeout=30) as client:
            client.wait_for_workers(workers, timeout=60)

    def stop(self) -> None:
        for proc in self.procs:
            _stop(proc)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("dask"))
    yield c
    c.stop()


def gradcli_cmd(*args: str, cwd: Path, env: dict[str, str] | None = None,
                timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-m", "gradcli", *args], cwd=cwd, env=env or _env(),
                          capture_output=True, text=True, timeout=timeout)


def temporaries(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if ".tmp-" in n)


GRID = ("--grid", "x=0:2:30", "--grid", "y=0:1:20")


def check_grad_store(path: Path) -> None:
    ds = xr.open_zarr(path, chunks=None).load()
    X, Y = np.meshgrid(np.linspace(0, 2, 30), np.linspace(0, 1, 20), indexing="ij")
    assert np.allclose(ds["df_dx"].values, np.cos(X) * Y)  # d(sin(x)*y)/dx
    assert np.allclose(ds["df_dy"].values, np.sin(X))


def test_scheduler_file_runs_on_its_cluster_and_shows_the_dashboard(cluster, tmp_path):
    """--scheduler-file reads the address dask-jobqueue and dask-mpi hand out; the
    dashboard link is a note on stderr, gone with -q."""
    r = gradcli_cmd("grad", "sin(x)*y", *GRID, "-o", "a.zarr", "--scheduler-file",
                    str(cluster.file), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("note: Dask dashboard: http://127.0.0.1:")
    check_grad_store(tmp_path / "a.zarr")
    r = gradcli_cmd("grad", "sin(x)*y", *GRID, "-o", "a.zarr", "--scheduler-file",
                    str(cluster.file), "-q", cwd=tmp_path)
    assert r.returncode == 0 and r.stderr == ""


def test_dask_scheduler_address_is_honoured_and_gradcli_scheduler_wins(cluster, tmp_path):
    """DASK_SCHEDULER_ADDRESS runs on that cluster as distributed would; GRADCLI_SCHEDULER,
    when also set, wins (and --scheduler wins over both)."""
    env = {**_env(), "DASK_SCHEDULER_ADDRESS": cluster.address}
    r = gradcli_cmd("grad", "sin(x)*y", *GRID, "-o", "b.zarr", cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    assert "note: Dask dashboard" in r.stderr  # it did run on the cluster
    check_grad_store(tmp_path / "b.zarr")
    env["GRADCLI_SCHEDULER"] = "tcp://127.0.0.1:9"  # nothing listens: the error names it
    r = gradcli_cmd("grad", "x^2", "--grid", "x=0:1:3", "--scheduler-timeout", "1",
                    cwd=tmp_path, env=env)
    assert r.returncode == 2 and "tcp://127.0.0.1:9" in r.stderr
    r = gradcli_cmd("grad", "x^2", "--grid", "x=0:1:3", "--scheduler", cluster.address,
                    "-q", cwd=tmp_path, env=env)
    assert r.returncode == 0 and r.stdout.splitlines()[-1] == "1.0,1.0,2.0", r.stderr


def test_dask_config_scheduler_address(cluster, monkeypatch):
    """Dask's scheduler-address setting (a config file, here set in process) counts too."""
    import dask

    from gradcli.evaluation.cluster import scheduler_address

    with dask.config.set({"scheduler-address": cluster.address}):
        assert scheduler_address(None, None, {"DASK_CONFIG": "/nowhere"}) == cluster.address
        assert scheduler_address(None, None, {"GRADCLI_SCHEDULER": "local:1"}) == "local:1"
    assert scheduler_address(None, None, {}) is None


def test_an_existing_client_is_used_and_left_running(cluster):
    """evaluate(..., scheduler=client) computes on that client and does not close it."""
    from distributed import Client

    with Client(cluster.address, timeout=30) as client:
        r = gradcli.evaluate("x^3", "grad", grid={"x": (0, 2, 9)}, scheduler=client)
        assert np.allclose(np.asarray(r["df/dx"]), 3 * np.linspace(0, 2, 9) ** 2)
        assert client.status == "running"
        assert client.submit(sum, [1, 2]).result(timeout=30) == 3


@pytest.mark.parametrize("text, problem", [
    ("{}", 'has no "address"'), ("not json", "is not JSON")])
def test_a_bad_scheduler_file_is_one_line(tmp_path, text, problem):
    (tmp_path / "s.json").write_text(text)
    r = gradcli_cmd("grad", "x", "--grid", "x=0:1:3", "--scheduler-file", "s.json",
                    cwd=tmp_path)
    assert r.returncode == 2
    assert r.stderr == f"gradcli: error: the scheduler file 's.json' {problem}: not a " \
                       "scheduler file\n"


def _silent_listener() -> tuple[socket.socket, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    return sock, sock.getsockname()[1]


def test_something_that_is_not_a_scheduler_fails_within_the_timeout(tmp_path):
    """An HTTP server and a listener that never answers: one line within the timeout."""
    sock, silent = _silent_listener()
    http = subprocess.Popen([PY, "-m", "http.server", "0", "--bind", "127.0.0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=tmp_path)
    try:
        line = http.stdout.readline()  # "Serving HTTP on 127.0.0.1 port N ..."
        port = int(line.split(" port ")[1].split()[0])
        for address in (f"tcp://127.0.0.1:{port}", f"tcp://127.0.0.1:{silent}"):
            started = time.monotonic()
            r = gradcli_cmd("grad", "x", "--grid", "x=0:1:3", "--scheduler", address,
                            "--scheduler-timeout", "2", cwd=tmp_path, timeout=60)
            took = time.monotonic() - started
            assert r.returncode == 2
            assert r.stderr == (f"gradcli: error: cannot reach the Dask scheduler at "
                                f"{address} within 2 s (the scheduler timeout): nothing "
                                "there answered as a Dask scheduler\n")
            assert took < 30  # a hang guard only: the bound is the message's 2 s
    finally:
        http.kill()
        http.wait()
        sock.close()


@pytest.mark.parametrize("address, says", [
    ("ucx://127.0.0.1:1", "needs UCX"),
    ("tls://127.0.0.1:1", "needs Dask's TLS configuration"),
    ("inproc://x", "is an inproc:// address"),
    ("gopher://x:1", "has an unknown scheme 'gopher'"),
])
def test_other_transports_get_one_clear_line(capsys, address, says):
    from gradcli.cli.main import main

    code = main(["grad", "x", "--grid", "x=0:1:3", "--scheduler", address])
    err = capsys.readouterr().err
    assert code == 2 and len(err.splitlines()) == 1
    assert err.startswith(f"gradcli: error: the scheduler address '{address}' {says}")


def test_ws_to_an_http_server_is_one_line(tmp_path):
    http = subprocess.Popen([PY, "-m", "http.server", "0", "--bind", "127.0.0.1"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=tmp_path)
    try:
        port = int(http.stdout.readline().split(" port ")[1].split()[0])
        r = gradcli_cmd("grad", "x", "--grid", "x=0:1:3", "--scheduler",
                        f"ws://127.0.0.1:{port}", "--scheduler-timeout", "3", cwd=tmp_path)
        assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
        # what answered, not tornado's exception ("WebSocketError: Non-websocket response")
        assert re.fullmatch(
            rf"gradcli: error: cannot connect to the Dask scheduler at ws://127\.0\.0\.1:"
            rf"{port}: an HTTP server \(SimpleHTTP/[^)]*\) with \"200 OK\" answered there, "
            r"not a Dask scheduler's WebSocket endpoint\n", r.stderr), r.stderr
        assert "WebSocketError" not in r.stderr
    finally:
        http.kill()
        http.wait()


# --- killed mid-run ---------------------------------------------------------------------

SIDE = 2000  # 16 tasks of 2^18 points: a run lasts well after the first chunks land
BIG = ("sin(x)*cos(y)*exp(-x*y/9)", "--grid", f"x=0:3:{SIDE}", "--grid", f"y=0:3:{SIDE}")


def _run_and_kill(folder: Path, scheduler_file: Path, victim: subprocess.Popen,
                  *extra: str) -> subprocess.CompletedProcess:
    """Start a run, SIGKILL ``victim`` once the first chunks are on disk."""
    proc = subprocess.Popen([PY, "-m", "gradcli", "grad", *BIG, "-o", "out.zarr",
                             "--scheduler-file", str(scheduler_file), "-q", *extra],
                            cwd=folder,
                            env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 90

    def chunks() -> int:
        return sum(len(files) for tmp in temporaries(folder)
                   for _, _, files in os.walk(folder / tmp))

    while chunks() < 12:  # the metadata files, then chunks
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no chunk was written"
        time.sleep(0.02)
    os.killpg(victim.pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_killed_worker_does_not_stop_the_run(tmp_path):
    """The other worker reruns the lost tasks: exit 0, a complete store, nothing else."""
    (tmp_path / "c").mkdir()
    c = Cluster(tmp_path / "c")
    try:
        r = _run_and_kill(tmp_path, c.file, c.workers[0])
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
        ds = xr.open_zarr(tmp_path / "out.zarr", chunks=None)
        assert dict(ds.sizes) == {"x": SIDE, "y": SIDE}
        assert not np.isnan(ds["df_dx"].values).any()
        assert temporaries(tmp_path) == []
    finally:
        c.stop()


def test_a_killed_scheduler_is_one_line_and_leaves_nothing(tmp_path):
    """Exit 1 with one gradcli line (no Dask log or traceback), no store, and the next
    write leaves no temporary even if a worker wrote on after the client gave up."""
    (tmp_path / "c").mkdir()
    c = Cluster(tmp_path / "c", death_timeout=3)
    try:  # the client gives the scheduler the scheduler timeout to come back
        r = _run_and_kill(tmp_path, c.file, c.scheduler, "--scheduler-timeout", "3")
        assert r.returncode == 1, r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("gradcli: error: the Dask scheduler at "
                                                       f"{c.address} went away"), r.stderr
        assert not (tmp_path / "out.zarr").exists()
        for worker in c.workers:  # a task under way may finish after the client left
            worker.wait(timeout=60)
    finally:
        c.stop()
    r = gradcli_cmd("grad", "x^2", "--grid", "x=0:1:5", "-o", "out.zarr", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert temporaries(tmp_path) == []


def test_interrupted_dask_run_waits_for_its_tasks_and_leaves_nothing(tmp_path):
    """SIGINT during a cluster run: tasks are cancelled and awaited before the store is
    removed, so no worker writes it back afterwards."""
    (tmp_path / "c").mkdir()
    c = Cluster(tmp_path / "c")
    try:
        longer = (BIG[0], "--grid", "x=0:3:2500", "--grid", "y=0:3:2500")  # 24 tasks
        proc = subprocess.Popen([PY, "-m", "gradcli", "grad", *longer, "-o", "out.zarr",
                                 "--scheduler-file", str(c.file), "-q"], cwd=tmp_path,
                                env=_env(), stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 90

        def chunks() -> int:
            return sum(len(files) for tmp in temporaries(tmp_path)
                       for _, _, files in os.walk(tmp_path / tmp))

        while chunks() < 12:  # the metadata, then the first chunks: tasks are running
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 130 and err == "gradcli: interrupted\n"
        assert os.listdir(tmp_path) == ["c"]
        done = threading.Event()
        threading.Timer(2.0, done.set).start()
        done.wait()  # the workers had two more seconds to write anything back
        assert os.listdir(tmp_path) == ["c"]
    finally:
        c.stop()
