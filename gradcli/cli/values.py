"""Option text to option values, by the kinds of ``definition.py``.

Numbers take gradcli's own constant syntax everywhere, as grid counts and point values
do: ``--max-points 1e9``, ``--check-tol 2^-20``, ``--dpi 1.5e2``. A bad value is a
ValueError whose message says what was expected; the CLI reports it as a usage error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from gradcli.cli.definition import Option


def convert(option: Option, text: str) -> Any:
    """The value of ``text`` given to ``option`` (ValueError if it is not one)."""
    if option.kind == "choice":
        return choice(text, option.choices)
    if option.kind == "whole":
        return whole(text, option.low, option.high)
    if option.kind == "real":
        return real(text, option.low, option.high)
    return plain_text(text)


def plain_text(text: str) -> str:
    """``text`` if it holds no control character (C0, DEL, C1): free text such as a title
    ends up in a terminal, an SVG (where most of them are not allowed in XML) or a file's
    metadata, so one is refused by its code point, as in every other option value."""
    bad = next((c for c in text if ord(c) < 32 or 127 <= ord(c) < 160), None)
    if bad is not None:
        raise ValueError(f"control character U+{ord(bad):04X} at position "
                         f"{text.index(bad) + 1} is not allowed")
    return text


def choice(text: str, choices: Sequence[str]) -> str:
    """One of ``choices``, ignoring case."""
    folded = text.strip().lower()
    if folded in choices:
        return folded
    raise ValueError(f"expected one of {', '.join(choices)}; got '{text}'")


def number(text: str) -> float | None:
    """A plain number, or the value of a constant expression (``2^20``, ``pi/2``); None
    when ``text`` is neither."""
    try:
        return float(text)
    except ValueError:
        pass
    from gradcli.errors import EvaluationError
    from gradcli.lang.spec_text import parse_constant

    try:
        value = parse_constant(text, "")
    except EvaluationError:
        return None
    return value if isinstance(value, float) else None


def _range(low: float | None, high: float | None) -> str:
    def shown(v: float) -> str:
        return f"{int(v):,}" if float(v).is_integer() else f"{v:g}"

    if low is not None and high is not None:
        return f" from {shown(low)} to {shown(high)}"
    if low is not None:
        return f" >= {shown(low)}"
    return f" <= {shown(high)}" if high is not None else ""


def whole(text: str, low: float | None = None, high: float | None = None) -> int:
    """A whole number within ``low``..``high`` (``1e9`` is one)."""
    value = number(text)
    if value is None or not (math.isfinite(value) and value.is_integer()) or (
            low is not None and value < low) or (high is not None and value > high):
        raise ValueError(f"expected a whole number{_range(low, high)}, got '{text}'")
    return int(value)


def real(text: str, low: float | None = None, high: float | None = None) -> float:
    """A finite number within ``low``..``high``."""
    value = number(text)
    if value is None or not math.isfinite(value) or (low is not None and value < low) or (
            high is not None and value > high):
        raise ValueError(f"expected a finite number{_range(low, high)}, got '{text}'")
    return value
