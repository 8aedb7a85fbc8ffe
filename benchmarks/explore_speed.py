"""The explorer (issue 37): the "explore" section of ``make bench``.

A server (``gradcli.cli.explore.server``, its worker process warm) in this process, spoken to
over HTTP as the page does; each time is from sending the request to the last byte of
the answer, so it is the server's whole time (reading, the worker's computation, the
base64 arrays, writing):

- field: a 200 × 200 field with its gradient after an edit (each request a new formula,
  so parsing, compiling and tracing are included), goal ≤ 150 ms;
- panel: a click's panel (the gradient, ``--formula``, the graph with values and
  adjoints, the backward program and its steps' values) at a new point, goal ≤ 100 ms;
- start: ``gradcli explore --no-browser`` from the command to the printed address (the
  server listening), a fresh process, goal ≤ 1 s.

Alone: ``python -m benchmarks.explore_speed [--quick]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import threading
import time

from .measure import Row

TITLES = {"explore": "Explorer: server time per request (HTTP included), and start-up"}
NAMES = {"field": "explore field 200×200 after an edit", "panel": "explore click's panel",
         "start": "gradcli explore start-up"}


def _server() -> tuple[object, object, int]:
    from gradcli.cli.explore.server import Engine, Explorer
    from gradcli.request.budget import memory_budget

    engine = Engine(10.0, memory_budget())
    server = Explorer("127.0.0.1", 0, "bench", engine, {"expression": "x"})
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return server, engine, server.port


def _ask(port: int, kind: str, payload: dict) -> tuple[float, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    body = json.dumps({"page": "bench"} | payload).encode()
    started = time.perf_counter()
    conn.request("POST", f"/api/{kind}", body, {"Host": f"127.0.0.1:{port}",
                                                "X-Gradcli-Token": "bench"})
    answer = conn.getresponse()
    raw = answer.read()
    took = time.perf_counter() - started
    conn.close()
    if answer.status != 200:
        raise RuntimeError(raw[:200])
    return took, json.loads(raw)


def _start_time() -> float:
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "gradcli", "explore", "--no-browser"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    process.stdout.readline()
    process.stdout.readline()
    took = time.perf_counter() - started
    process.terminate()
    process.wait(10)
    return took


def explore_tables(quick: bool, repeat: int) -> dict[str, list[Row]]:
    """The three rows: field, panel, start."""
    server, engine, port = _server()
    n = 5 if quick else 20
    try:
        _ask(port, "field", {"expression": "x*y", "grid": ["x=-2:2:200", "y=-2:2:200"]})
        field = [_ask(port, "field", {"expression": f"sin(x)*cos(y) + {k}*x*y/100",
                                      "grid": ["x=-2:2:200", "y=-2:2:200"]})[0]
                 for k in range(n)]
        expression = "m = x*y; n = sin(m); n*x + m^2/4"
        _ask(port, "point", {"expression": expression, "point": {"x": 0.5, "y": 0.5}})
        panel = [_ask(port, "point", {"expression": expression,
                                      "point": {"x": 0.1 * k, "y": -0.05 * k}})[0]
                 for k in range(n)]
    finally:
        server.shutdown()  # type: ignore[attr-defined]
        engine.close()  # type: ignore[attr-defined]
    start = [_start_time() for _ in range(max(1, min(repeat, 3)))]
    return {"explore": [Row(NAMES["field"], times=field), Row(NAMES["panel"], times=panel),
                        Row(NAMES["start"], times=start)]}


def explore_goals(quick: bool) -> list:
    """Issue 37's speed goals."""
    from .report import Goal

    return [Goal("37: a 200 × 200 field with its gradient after an edit ≤ 150 ms (server)",
                 "explore", NAMES["field"], (), 0.15),
            Goal("37: a click's panel (graph, formula, program at one point) ≤ 100 ms",
                 "explore", NAMES["panel"], (), 0.10),
            Goal("37: gradcli explore's start ≤ 1 s", "explore", NAMES["start"], (), 1.0)]


def main() -> None:
    from . import report

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    tables = explore_tables(args.quick, 3)
    for key, rows in tables.items():
        print(report.table(TITLES[key], rows, rows[0].tool, rows[0].tool))
    print(report.goals_section(explore_goals(args.quick), tables)[0])


if __name__ == "__main__":
    main()
