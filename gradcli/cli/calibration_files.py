"""The files ``gradcli propagate`` reads for a calibration: ``--readings FILE`` (repeated
observations, CSV).

Read through the bounded reader (``reading.BoundedReader``: a line, byte and text bound,
refused unread under ``--no-files``); a message quotes at most the offending token.
"""

from __future__ import annotations

import re
from array import array

import numpy as np

from .errors import UsageProblem
from .reading import BoundedReader, MiB

#: the largest readings file: 64 MiB of text (about 4·10⁶ readings of 16 characters)
MAX_READINGS_BYTES = 64 * MiB
#: the longest line of a readings file (one observation of every variable)
MAX_READINGS_LINE = 1 * MiB
#: the most variables (columns) of a readings file: their correlations form a dense matrix
MAX_READINGS_COLUMNS = 4096
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _token(text: str) -> str:
    """A token as a message quotes it: stripped, at most 40 characters."""
    text = text.strip()
    return text if len(text) <= 40 else text[:37] + "..."


def read_readings(path: str, option: str = "--readings") -> dict[str, np.ndarray]:
    """``{name: readings}`` from a CSV whose header names the variables, one row per
    observation (simultaneous ones on one row), an empty cell for a missing reading
    (nan); ``#`` starts a comment line."""
    from .files import check_file

    label = f"{option} {path}"
    check_file(label, path)
    names: list[str] | None = None
    cols: list[array] = []
    with BoundedReader(path, label=label, max_line=MAX_READINGS_LINE,
                       max_bytes=MAX_READINGS_BYTES) as reader:
        number = 0
        for chunk in reader.chunks():
            for line in chunk.decode("utf-8").split("\n"):
                number += 1
                if not line.strip() or line.lstrip().startswith("#"):
                    continue
                fields = line.split(",")
                if names is None:
                    names = [f.strip() for f in fields]
                    _check_header(label, number, names)
                    cols = [array("d") for _ in names]
                    continue
                if len(fields) != len(names):
                    raise UsageProblem(f"{label}: line {number} has {len(fields)} values, "
                                       f"the header names {len(names)} variables")
                for col, field in zip(cols, fields, strict=True):
                    col.append(_reading(label, number, field))
            number -= 1  # a chunk ends at a line end: its last split piece is not a line
    if names is None:
        raise UsageProblem(f"{label}: the file is empty (expected a header naming the "
                           "variables, then one row per observation)")
    return {name: np.frombuffer(col, dtype=np.float64) if len(col) else np.zeros(0)
            for name, col in zip(names, cols, strict=True)}


def _check_header(label: str, number: int, names: list[str]) -> None:
    if len(names) > MAX_READINGS_COLUMNS:
        raise UsageProblem(f"{label}: line {number}: {len(names):,} columns, over the limit "
                           f"of {MAX_READINGS_COLUMNS:,}")
    seen: set[str] = set()
    for name in names:
        if not _NAME.match(name):
            raise UsageProblem(f"{label}: line {number}: '{_token(name)}' is not a variable "
                               "name (the first line names the variables)")
        if name in seen:
            raise UsageProblem(f"{label}: line {number}: '{name}' is named twice")
        seen.add(name)


def _reading(label: str, number: int, field: str) -> float:
    text = field.strip()
    if not text:
        return float("nan")
    try:
        value = float(text)
    except ValueError:
        raise UsageProblem(f"{label}: line {number}: '{_token(text)}' is not a number") \
            from None
    if value != value or value in (float("inf"), float("-inf")):
        raise UsageProblem(f"{label}: line {number}: '{_token(text)}' is not a finite "
                           "number (leave the cell empty for a missing reading)")
    return value
