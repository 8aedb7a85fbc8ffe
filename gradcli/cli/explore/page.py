"""The explorer's page: one HTML document and its script, every byte served by the server
(plotly.js from the installed plotly package, the page's own ``explore.js`` and
``explore.css`` from this package): nothing is fetched from elsewhere, so the page works
offline.

The first view (expression, grid, held values, point) comes from the command line and is
written into the page as JSON data (not code: the Content-Security-Policy allows scripts
from the server only); the page keeps its state in the address's fragment from then on,
so a reload or a bookmark restores the view.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from typing import Any

__all__ = ["page_html", "asset", "ASSETS"]

#: the page's own files, beside this module
ASSETS = ("explore.js", "explore.css")


def asset(name: str) -> bytes:
    """The bytes of one of the page's own files."""
    if name not in ASSETS:
        raise KeyError(name)
    return resources.files(__package__).joinpath(name).read_bytes()


def page_html(initial: dict[str, Any], token: str) -> str:
    """The page, with the first view and the token as JSON data."""
    data = json.dumps(initial | {"token": token}, ensure_ascii=True, allow_nan=False)
    data = data.replace("</", "<\\/")
    title = html.escape(f"gradcli explore: {initial.get('expression', '')}"[:120])
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="/explore.css">
<script id="initial" type="application/json">{data}</script>
<script src="/plotly.min.js"></script>
<script src="/explore.js" defer></script>
</head>
<body>
<header>
  <form id="form" autocomplete="off">
    <label for="expression">f =</label>
    <input id="expression" name="expression" spellcheck="false" maxlength="10000">
    <button id="draw" type="submit">Draw</button>
  </form>
  <pre id="error" role="alert" hidden></pre>
  <div id="controls">
    <span id="ranges"></span>
    <label>resolution <input id="resolution" type="number" min="2" max="2000"></label>
    <label>colour <select id="color"></select></label>
    <label><input id="contours" type="checkbox"> contours</label>
    <span id="sliders"></span>
  </div>
</header>
<main>
  <div id="plot"></div>
  <aside id="panel">
    <p id="hint">Click the picture to pin a point; arrow keys move it.</p>
    <section id="paths">
      <label>optimiser <select id="method">
        <option>gd</option><option>momentum</option><option selected>adam</option>
        <option>adamw</option><option>rmsprop</option><option>newton</option></select></label>
      <label>lr <input id="lr" value="0.1" size="6"></label>
      <label>steps <input id="steps" type="number" value="100" min="0" max="100000"></label>
      <button id="descend" type="button">Descend</button>
      <button id="flow" type="button">Flow</button>
      <button id="critical" type="button">Critical points</button>
      <button id="clear" type="button">Clear</button>
    </section>
    <section id="point"></section>
  </aside>
</main>
<footer>
  <div>Reproduce: <code id="command"></code> <button id="copy" type="button">Copy</button></div>
  <div>Share: <code id="share"></code></div>
  <div id="status" aria-live="polite"></div>
</footer>
</body>
</html>
"""
