"""The explorer's server, spoken to over HTTP as a page would: the token and the Host
check, the command line's messages for refused requests, the time limit (a slow request
is stopped and the next one works), the memory budget under 50 concurrent requests, bad
requests survived, no file read, and the signals that stop ``gradcli explore``.

Truth: the messages are the command line's own (the same request as a command, run in
process, prints the same line); the numbers are what ``gradcli grad`` prints.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gradcli.cli.explore.server import MAX_BODY, Engine, Explorer
from gradcli.request.budget import FIXED_OVERHEAD

TIMEOUT = 1.5  # the server's --request-timeout in these tests (seconds)
BUDGET = 128 << 20


class Server:
    """An explorer on a free port, served from a thread, with a real worker process."""

    def __init__(self) -> None:
        self.engine = Engine(TIMEOUT, BUDGET)
        self.server = Explorer("127.0.0.1", 0, "t0ken-for-tests", self.engine,
                               {"expression": "x^2", "grid": [], "at": []})
        self.port = self.server.port
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, dict, dict[str, str]]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        heads = {"Host": f"127.0.0.1:{self.port}"} | (headers or {})
        conn.request(method, path, body=body, headers=heads)
        answer = conn.getresponse()
        raw = answer.read()
        conn.close()
        kind = answer.getheader("Content-Type", "")
        data = json.loads(raw) if "json" in kind and raw else {"_bytes": raw}
        return answer.status, data, dict(answer.getheaders())

    def api(self, kind: str, payload: dict, page: str = "p1") -> tuple[int, dict]:
        status, data, _ = self.request(
            "POST", f"/api/{kind}", json.dumps({"page": page} | payload).encode(),
            {"X-Gradcli-Token": "t0ken-for-tests", "Content-Type": "application/json"})
        return status, data

    def close(self) -> None:
        self.server.shutdown()
        self.engine.close()
        self.server.server_close()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    running = Server()
    yield running
    running.close()


def _cli_error(cli, *argv: str) -> str:
    status, out, err = cli(*argv)
    assert status == 2 and out == ""
    return err.rstrip("\n")


def test_a_request_without_the_token_is_refused(server):
    for path, headers in (("/", {}), ("/?token=wrong", {}), ("/plotly.min.js", {}),
                          ("/", {"X-Gradcli-Token": "t0ken-for-test"}),
                          ("/", {"Cookie": f"gradcli-explore-{server.port}=nope"})):
        status, data, _ = server.request("GET", path, headers=headers)
        assert status == 403, path
        assert "token" in data["error"]
    status, data, _ = server.request("POST", "/api/field", b'{"page": "p"}')
    assert status == 403
    # each of the three ways of giving it works
    status, data, heads = server.request("GET", "/?token=t0ken-for-tests")
    assert status == 200 and b"gradcli explore" in data["_bytes"]
    cookie = heads["Set-Cookie"].split(";")[0]
    assert "HttpOnly" in heads["Set-Cookie"] and "SameSite=Strict" in heads["Set-Cookie"]
    assert server.request("GET", "/explore.js", headers={"Cookie": cookie})[0] == 200
    assert server.request("GET", "/explore.css",
                          headers={"X-Gradcli-Token": "t0ken-for-tests"})[0] == 200


def test_a_foreign_host_header_is_refused(server):
    """DNS rebinding: a page of evil.example whose name now points at 127.0.0.1 sends
    its own Host; the token alone would not help if it leaked, the Host check does."""
    for host in ("evil.example", f"evil.example:{server.port}", f"127.0.0.1:{server.port + 1}",
                 ""):
        status, data, _ = server.request("GET", "/?token=t0ken-for-tests",
                                         headers={"Host": host})
        assert status == 403, host
    assert server.request("GET", "/?token=t0ken-for-tests",
                          headers={"Host": f"localhost:{server.port}"})[0] == 200


def test_the_page_is_served_with_a_strict_policy(server):
    status, data, heads = server.request("GET", "/?token=t0ken-for-tests")
    policy = heads["Content-Security-Policy"]
    assert "script-src 'self'" in policy and "connect-src 'self'" in policy
    assert "frame-ancestors 'none'" in policy and heads["X-Frame-Options"] == "DENY"
    page = data["_bytes"].decode()
    assert "https://" not in page and "http://" not in page  # nothing from elsewhere
    js = server.request("GET", "/explore.js?token=t0ken-for-tests")[1]["_bytes"].decode()
    assert "https://" not in js and "http://" not in js


def test_the_field_is_the_engines(server):
    """The field's gradient at a grid point is what gradcli grad prints there."""
    import base64

    import numpy as np

    status, data = server.api("field", {"expression": "x^2*y + sin(y)",
                                        "grid": ["x=-1:2:4", "y=0:1:3"]})
    assert status == 200, data
    cols = {k: np.frombuffer(base64.b64decode(v), "<f8").reshape(4, 3)
            for k, v in data["columns"].items()}
    x, y = 1.0, 0.5  # grid point (2, 1)
    assert cols["f"][2, 1] == x * x * y + np.sin(y)
    assert cols["df/dx"][2, 1] == 2 * x * y
    assert cols["df/dy"][2, 1] == pytest.approx(x * x + np.cos(y), rel=1e-15)


def test_an_endless_expression_is_refused_with_the_clis_message(server, cli):
    text = "x+" * 6000 + "x"
    status, data = server.api("field", {"expression": text})
    assert status == 400
    assert data["error"] == _cli_error(cli, "grad", text, "--at", "x=1")


def test_a_billion_point_grid_is_refused_with_the_clis_message(server, cli):
    grid = ["x=0:1:31623", "y=0:1:31623"]
    started = time.monotonic()
    status, data = server.api("field", {"expression": "x*y", "grid": grid})
    assert time.monotonic() - started < TIMEOUT  # refused before any work
    assert status == 400
    assert data["error"] == _cli_error(cli, "plot", "x*y", "--grid", grid[0], "--grid",
                                       grid[1], "-o", "never.png")


def test_a_broken_expression_gets_the_clis_caret_message(server, cli):
    status, data = server.api("field", {"expression": "sin(x)*cos(y"})
    assert status == 400 and data["kind"] == "expression"
    assert data["error"] == _cli_error(cli, "grad", "sin(x)*cos(y", "--at", "x=1,y=2")
    assert data["error"].splitlines()[1] == "  " + " " * 10 + "^"  # under cos(


def test_a_slow_request_is_stopped_within_the_limit_and_the_next_works(server):
    """100,000 descent steps of a 300-term sum take minutes: the request is answered 408
    at the limit, the worker is replaced, and the next request is answered at once."""
    slow = " + ".join(f"sin({k}*x + y)^2" for k in range(1, 301))
    started = time.monotonic()
    status, data = server.api("descend", {"expression": slow, "start": {"x": 1, "y": 1},
                                          "method": "gd", "lr": 1e-12, "steps": 100_000})
    took = time.monotonic() - started
    assert status == 408, data
    assert "--request-timeout" in data["error"]
    assert TIMEOUT <= took < TIMEOUT + 2.5  # the limit, the worker's end, HTTP
    started = time.monotonic()
    status, data = server.api("point", {"expression": "x^2*y", "point": {"x": 3, "y": 2}})
    assert status == 200 and data["values"] == {"f": 18.0, "df/dx": 12.0, "df/dy": 9.0}
    assert time.monotonic() - started < TIMEOUT


def test_a_newer_request_or_a_closed_page_cancels_the_older(server):
    """The slow request of a page is ended when the page asks again (409) or is closed
    (the page's beacon: /api/cancel), well within the time limit."""
    slow = {"expression": " + ".join(f"sin({k}*x + y)^2" for k in range(1, 301)),
            "start": {"x": 1, "y": 1}, "method": "gd", "lr": 1e-12, "steps": 100_000}
    for follow in ("point", "cancel"):
        answers: list[tuple[int, float]] = []

        def send(answers: list[tuple[int, float]] = answers) -> None:
            started = time.monotonic()
            status = server.api("descend", slow, page="busy")[0]
            answers.append((status, time.monotonic() - started))

        thread = threading.Thread(target=send)
        thread.start()
        deadline = time.monotonic() + 5
        while not server.engine._lock.locked() and time.monotonic() < deadline:
            time.sleep(0.01)  # the slow request is running in the worker
        time.sleep(0.1)
        status, data = server.api(follow, {"expression": "x*y", "point": {"x": 2, "y": 3}},
                                  page="busy")
        assert status == 200
        thread.join(10)
        assert answers[0][0] == 409 and answers[0][1] < TIMEOUT


def _status_kib(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as handle:
            return next(int(line.split()[1]) for line in handle if line.startswith(key))
    except (OSError, StopIteration):  # the worker was just replaced
        return 0


def test_fifty_concurrent_requests_stay_within_the_memory_budget(server):
    """One page sends 50 field requests at once: one computation runs at a time, a newer
    request cancels the older ones (409: their worker is ended and replaced), the newest
    is answered, and every worker's memory, sampled all along, stays within the budget
    and the fixed overhead; each worker's data segment is capped there too."""
    grid = ["x=-2:2:400", "y=-2:2:400"]
    answers: list[int] = []
    peaks: list[int] = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            worker = server.engine._worker
            if worker is not None:
                peaks.append(_status_kib(worker[0].pid, "VmRSS:"))
            time.sleep(0.002)

    def send(k: int) -> None:
        answers.append(server.api("field", {"expression": f"exp(-x^2-y^2)*{k + 1}",
                                            "grid": grid}, page="crowd")[0])

    sampler = threading.Thread(target=sample)
    sampler.start()
    threads = [threading.Thread(target=send, args=(k,)) for k in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    done.set()
    sampler.join()
    assert len(answers) == 50 and set(answers) <= {200, 409}
    assert 200 in answers
    worker = server.engine._worker
    assert worker is not None
    peaks.append(_status_kib(worker[0].pid, "VmHWM:"))
    assert max(peaks) * 1024 <= BUDGET + FIXED_OVERHEAD, max(peaks)
    with open(f"/proc/{worker[0].pid}/limits") as handle:
        cap = next(line.split()[3] for line in handle if line.startswith("Max data size"))
    data = _status_kib(worker[0].pid, "VmData:") * 1024
    assert int(cap) <= data + BUDGET + FIXED_OVERHEAD


def test_more_memory_than_the_budget_is_refused_and_the_next_works(server):
    status, data = server.api("field", {"expression": "x*y", "grid": ["x=0:1:4000",
                                                                       "y=0:1:2000"]})
    assert status == 400 and "memory budget" in data["error"]
    assert server.api("point", {"expression": "x", "point": {"x": 1}})[0] == 200


def test_bad_requests_are_survived(server):
    token = {"X-Gradcli-Token": "t0ken-for-tests"}
    cases = [
        (b"{not json", 400), (b"[1, 2]", 400), (b'{"expression": "x"}', 400),
        (b"\xff\xfe", 400), (b"[" * 100_000 + b"]" * 100_000, 400),
        (b" " * (MAX_BODY + 1), 413),
        (json.dumps({"page": "p", "expression": 5}).encode(), 400),
        (json.dumps({"page": "p", "expression": "x", "grid": "x=0:1:3"}).encode(), 400),
    ]
    for body, want in cases:
        status, data, _ = server.request("POST", "/api/field", body, token)
        assert status == want, body[:20]
        assert data["error"].startswith("gradcli: error: ")
    status, data, _ = server.request("POST", "/api/nothing", b'{"page": "p"}', token)
    assert status == 404
    status, data, _ = server.request("PUT", "/api/field", b"{}", token)
    assert status == 405
    # a body announced far over the bound is refused without being read
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.putrequest("POST", "/api/field", skip_host=True)
    for key, value in {"Host": f"127.0.0.1:{server.port}", "Content-Length": str(1 << 30),
                       **token}.items():
        conn.putheader(key, value)
    conn.endheaders()
    assert conn.getresponse().status == 413
    conn.close()
    assert MAX_BODY < 1 << 30
    assert server.api("point", {"expression": "x^3", "point": {"x": 2}})[1]["values"] == {
        "f": 8.0, "df/dx": 12.0}


def test_no_request_reads_a_file(server, tmp_path):
    secret = tmp_path / "v.csv"
    secret.write_text("1\n2\n")
    status, data = server.api("field", {"expression": "sum(v)*x", "grid": ["x=0:1:3"],
                                        "at": [f"v=@{secret}"]})
    assert status == 400 and "(@FILE) is not accepted" in data["error"]
    status, data = server.api("field", {"expression": f"@{secret}"})
    assert status == 400 and data["kind"] == "expression"


def test_every_kind_of_request_answers(server):
    """The panel, a descent, a flow line and the critical points: the rows their
    commands write (checked against the commands in the browser tests)."""
    assert server.api("descend", {"expression": "x^2 + 3*y^2", "start": {"x": 1, "y": 1},
                                  "method": "adam", "lr": 0.1, "steps": 10})[0] == 200
    assert server.api("flow", {"expression": "x^2 + y^2", "start": {"x": 1, "y": 1},
                               "t": "0:1:11", "box": ["x=-2:2:2", "y=-2:2:2"]})[0] == 200
    status, data = server.api("critical", {"expression": "x^3 - 3*x + y^2",
                                           "grid": ["x=-2:2:15", "y=-2:2:15"]})
    assert status == 200 and data["columns"]["type"] == ["saddle", "minimum"]
    status, data = server.api("field", {"expression": "[-y, x]", "color": "curl",
                                        "grid": ["x=-1:1:3", "y=-1:1:3"]})
    assert status == 200 and data["kind"] == "vector" and "curl" in data["columns"]
    status, data = server.api("field", {"expression": "x*y*z", "grid": ["x=0:1:3",
                                                                        "y=0:1:3"]})
    assert status == 200 and data["sliders"] == ["z"] and data["held"] == {"z": 0.0}
    status, data = server.api("field", {"expression": "x*y*z", "grid": [
        "x=0:1:3", "y=0:1:3", "z=0.5"]})  # held by a grid spec: a held value from now on
    assert status == 200 and data["grid"] == ["x=0:1:3", "y=0:1:3"]
    assert data["at"] == ["z=0.5"] and data["held"] == {"z": 0.5}


def test_closing_the_engine_ends_the_worker():
    engine = Engine(TIMEOUT, BUDGET)
    status, _ = engine.run("p", "point", {"expression": "x+y", "point": {"x": 1, "y": 2}})
    assert status == 200
    process = engine._worker[0]
    engine.close()
    assert not process.is_alive()


def _start(*args: str) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "gradcli", "explore", *args,
                                "--no-browser"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    lines = [process.stdout.readline() for _ in range(2)]
    return process, lines[1].strip()


@pytest.mark.parametrize("signum, status", [(signal.SIGINT, 130), (signal.SIGTERM, 143),
                                            (signal.SIGHUP, 129)])
def test_signals_stop_the_server_cleanly(signum, status):
    process, url = _start("x^2")
    assert url.startswith("http://127.0.0.1:") and "/?token=" in url
    port = int(url.split(":")[2].split("/")[0])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", url[url.index("/?"):])
    assert conn.getresponse().status == 200
    conn.close()
    process.send_signal(signum)
    assert process.wait(10) == status
    err = process.stderr.read()
    assert err.startswith("gradcli: interrupted") and "Traceback" not in err
    with pytest.raises(OSError):
        http.client.HTTPConnection("127.0.0.1", port, timeout=2).connect()


def test_another_host_is_used_only_when_given_and_then_with_a_warning():
    process, url = _start("x^2", "--host", "0.0.0.0")
    process.send_signal(signal.SIGTERM)
    process.wait(10)
    err = process.stderr.read()
    assert err.startswith("warning: --host 0.0.0.0: the explorer is reachable from other "
                          "machines")
    assert url.startswith("http://0.0.0.0:")


def test_a_mistake_on_the_command_line_is_refused_before_serving(cli):
    status, out, err = cli("explore", "sin(x", "--no-browser")
    assert status == 2 and out == ""
    assert err.splitlines()[-1].startswith("error: unbalanced '('")
    status, out, err = cli("explore", "x", "--grid", "x=0:1:0", "--no-browser")
    assert status == 2 and "--grid" in err
    status, out, err = cli("explore", "x", "--at", "y=@/etc/passwd", "--no-browser")
    assert status == 2 and "(@FILE) is not accepted" in err


def test_save_writes_the_static_page_of_the_view(cli, tmp_path: Path):
    out = tmp_path / "view.html"
    status, stdout, err = cli("explore", "sin(x)*cos(y)", "--grid", "x=0:3:31", "--grid",
                              "y=0:3:31", "--save", str(out))
    assert status == 0 and stdout == ""
    page = out.read_text()
    assert "Plotly.newPlot" in page and "sin(x)*cos(y)" in page
    # the same bytes as the plot command's page of the same view
    same = tmp_path / "plot.html"
    assert cli("plot", "sin(x)*cos(y)", "--grid", "x=0:3:31", "--grid", "y=0:3:31",
               "-o", str(same))[0] == 0
    assert page == same.read_text()
    assert cli("explore", "x", "--save", str(tmp_path / "v.png"))[0] == 2


def _descendants(pid: int) -> set[int]:
    """Every living process under ``pid`` (from /proc's parent ids)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        here = todo.pop()
        kids = [p for p, parent in parents.items() if parent == here]
        found.update(kids)
        todo += kids
    return found


def test_a_killed_server_leaves_no_worker_running():
    """SIGKILL gives the server no chance to clean up: its worker (busy with a slow
    request) and the fork server end by themselves."""
    process, url = _start("x^2", "--request-timeout", "60")
    port = int(url.split(":")[2].split("/")[0])
    token = url.split("token=")[1]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    slow = json.dumps({"page": "p", "expression": " + ".join(
        f"sin({k}*x + y)^2" for k in range(1, 301)), "start": {"x": 1, "y": 1},
        "method": "gd", "lr": 1e-12, "steps": 100_000})
    conn.request("POST", "/api/descend", slow, {"Host": f"127.0.0.1:{port}",
                                                 "X-Gradcli-Token": token})
    deadline = time.monotonic() + 10
    while len(_descendants(process.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)  # the resource tracker, the fork server and the worker
    left = _descendants(process.pid)
    assert len(left) >= 3
    process.kill()
    process.wait(10)
    deadline = time.monotonic() + 5
    while any(os.path.exists(f"/proc/{p}") and _alive(p) for p in left) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [p for p in left if os.path.exists(f"/proc/{p}") and _alive(p)]
    conn.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_port_in_use_is_a_clear_error(cli):
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, out, err = cli("explore", "x^2", "--port", str(port), "--no-browser")
    assert status == 1 and out == ""
    assert err == f"gradcli: error: cannot listen on 127.0.0.1:{port}: address already in use\n"


def test_without_plotly_the_command_says_which_extra(cli, monkeypatch):
    """plotly.js draws the page: without it the command refuses to start (exit 2),
    naming the extra, instead of serving a page that draws nothing."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "plotly" else real(name, *a))
    status, out, err = cli("explore", "x^2", "--no-browser")
    assert status == 2 and out == ""
    assert err == ("gradcli: error: gradcli explore draws with plotly.js, which is not "
                   "installed: pip install 'gradcli[explore]'\n")
