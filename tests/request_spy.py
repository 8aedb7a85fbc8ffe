"""A spy on the executor's applications: ``record(monkeypatch)`` makes every application
record the Request it runs (then run it as usual); ``SEEN`` holds them in order. Used by
the tests that hold the command line and the library to one request."""

from __future__ import annotations

import importlib
from typing import Any

from gradcli import execute as executor

SEEN: list[Any] = []
_REAL: dict[str, str] = {}


def record(monkeypatch: Any) -> list[Any]:
    """Record every application's requests for the rest of the test; the list of them."""
    SEEN.clear()
    for name, app in list(executor.APPLICATIONS.items()):
        _REAL[name] = app.run
        monkeypatch.setitem(executor.APPLICATIONS, name,
                            app._replace(run=f"{__name__}:run"))
    return SEEN


def run(request: Any, **context: Any) -> Any:
    """Record ``request``, then run it by its application's own function."""
    SEEN.append(request)
    module, _, function = _REAL[request.what].partition(":")
    return getattr(importlib.import_module(module), function)(request, **context)
