"""The numeric commands' option defaults, in one typer-free place.

``options.py`` declares the options with these defaults for typer, and the one-point fast
path (``fast.py``) fills a request with the same values without importing typer.
"""

from __future__ import annotations

from typing import Any

#: option name -> default, for the options every numeric command takes (in --help order)
NUMERIC_DEFAULTS: dict[str, Any] = {
    "at": None, "grid": None, "points": None, "fmt": "auto", "output": None, "precision": 6,
    "strict": False, "quiet": False, "max_points": 50_000_000, "dtype": "float64",
}
