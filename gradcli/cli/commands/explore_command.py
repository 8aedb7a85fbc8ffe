"""``gradcli explore``: a local web page to touch the gradient, computed by gradcli's engine.

The command checks what was typed (the formula, the grid specs, the held values, the
point) as every command does, then either writes the static page of that view with the
plot command's page writer (``--save``) or starts the server (``gradcli.cli.explore.server``)
on 127.0.0.1, prints its address with the token, opens the browser and serves until a
signal stops it (exit 130, 143 or 129, as any command interrupted).
"""

from __future__ import annotations

import ipaddress
import sys
import threading
from typing import Any

from gradcli.cli.messages import (
    RuntimeProblem,
    UsageProblem,
    expression_warnings,
    say,
    writing_stdout,
)

#: contour lines drawn when they are asked for (the page draws as many)
CONTOURS = 14


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def _initial(expression: str, grid: list[str], at: list[str], point: str | None,
             color: str | None, contour: bool) -> dict[str, Any]:
    """The first view, checked now so that a mistake is the command line's error (exit
    2) before any server starts."""
    from gradcli.lang import parse
    from gradcli.lang.spec_text import parse_grid, parse_point
    from gradcli.plot.options import COLOR_FIELDS

    parse(expression)
    for spec in grid:
        parse_grid(spec)
    for spec in at:
        parse_point(spec)  # no file reader: the page's values are text, never @FILE
    if point is not None:
        values = parse_point(point, "point")
        if any(not isinstance(v, float) for v in values.values()):
            raise UsageProblem("--point takes numbers, e.g. --point x=1,y=0.5")
    if color is not None and color not in COLOR_FIELDS:
        raise UsageProblem(f"--color '{color}': choose one of {', '.join(COLOR_FIELDS)}")
    return {"expression": expression, "grid": list(grid), "at": list(at), "point": point,
            "color": color or "", "contour": bool(contour)}


def _save(view: dict[str, Any], path: str, max_points: int, quiet: bool,
          physical: dict[str, Any] | None = None) -> int:
    """Write the static page of the first view with ``gradcli plot``'s page writer."""
    from gradcli.cli.explore.compute import _held, _layout, _physical
    from gradcli.plot import parse_options, run_plot_request

    if not path.lower().endswith((".html", ".htm")):
        raise UsageProblem(f"--save writes a page: give a name ending in .html, not '{path}'")
    held = _held(view["at"])
    grid, _, _ = _layout(view["expression"], view["grid"], held)
    # the picture's units (flow's time unit t=UNIT is no variable's: left out)
    physical = _physical({"expression": view["expression"], **(physical or {})})
    drawing: dict[str, Any] = {"color": view["color"] or None, **physical}
    if view["contour"]:
        drawing["contour"] = CONTOURS
    options = parse_options(**drawing)
    try:
        result = run_plot_request(view["expression"], grid, path, options,
                                  max_points=max_points, fixed=held)
    except OSError as exc:
        raise RuntimeProblem(f"cannot write '{path}': {(exc.strerror or str(exc)).lower()}") \
            from None
    if not quiet:
        for note in result.notes:
            say(f"note: {note}")
    return 0


def run_explore(what: str, expression: str, grid: list[str], at: list[str],
                point: str | None, color: str | None, contour: bool, port: int,
                host: str | None, no_browser: bool, request_timeout: float,
                save: str | None, memory: str | None, max_points: int, quiet: bool,
                units: list[str] | None = None, to: list[str] | None = None) -> int:
    """Check the view, then write it (``--save``) or serve it until a signal. Units
    (``--unit``, ``--to``) hold for the whole session: every request computes in them."""
    from gradcli.request.budget import memory_budget
    from gradcli.request.parameters import TABLE  # --unit and --to: the table's syntax

    physical = {n: TABLE[n].read(g, None) for n, g in (("units", units), ("to", to)) if g}
    with expression_warnings(quiet):
        view = _initial(expression, grid, at, point, color, contour)
        if physical:  # a mistake in a unit is the command line's error too
            from gradcli.cli.explore.compute import field

            field({**view, "max_points": max_points, **physical})
    view["max_points"] = max_points
    if save is not None:
        with expression_warnings(quiet):
            return _save(view, save, max_points, quiet, physical)
    budget = memory_budget(memory)
    if not request_timeout > 0:
        raise UsageProblem("--request-timeout must be more than 0 seconds")
    address = "127.0.0.1" if host is None else host
    if host is not None and not _loopback(host):
        say(f"warning: --host {host}: the explorer is reachable from other machines; anyone "
            "who has the address with its token can run computations on this one")
    import importlib.util

    from gradcli.cli.explore.server import Engine, Explorer, make_token, serve_until_stopped

    if importlib.util.find_spec("plotly") is None:  # a page without it would draw nothing
        raise UsageProblem("gradcli explore draws with plotly.js, which is not installed: "
                           "pip install 'gradcli[explore]'")
    engine = Engine(request_timeout, budget, max_points, physical=physical)
    try:
        server = Explorer(address, port, make_token(), engine, view,
                          extra_host=None if host is None else host)
    except OSError as exc:
        raise RuntimeProblem(f"cannot listen on {address}:{port}: "
                             f"{(exc.strerror or str(exc)).lower()}") from None
    url = server.url if host is None else server.url.replace("127.0.0.1", host, 1)
    with writing_stdout():
        sys.stdout.write(f"gradcli explore: serving {expression} at\n  {url}\n"
                         "(Ctrl-C stops the server)\n")
        sys.stdout.flush()
    engine.warm()
    threading.Thread(target=server.asset, args=("plotly.min.js",), daemon=True).start()
    if not no_browser:
        import webbrowser

        threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
    serve_until_stopped(server)
    return 0
