"""The files ``gradcli propagate`` reads for a calibration: ``--readings FILE`` (repeated
observations, CSV) and ``--inputs FILE`` (the inputs and their correlations, CSV or TOML).

Read through the bounded reader (``reading.BoundedReader``: a line, byte and text bound,
refused unread under ``--no-files``); a message quotes at most the offending token.
"""

from __future__ import annotations

import os
import re
from array import array
from typing import Any

import numpy as np

from gradcli.cli.messages import UsageProblem
from gradcli.cli.reading import BoundedReader, MiB

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
    from gradcli.cli.files import check_file

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


#: the largest input file (--inputs): 4 MiB of text
MAX_INPUTS_BYTES = 4 * MiB
#: the columns an input file's CSV may have (``name`` and ``value`` are required)
CSV_COLUMNS = ("name", "value", "u", "nu", "dist", "unit", "description", "corr")


def read_inputs(path: str, option: str = "--inputs"
                ) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, str], Any]]:
    """The input records and correlations of ``--inputs FILE``: a ``.csv`` (a row per
    input, columns :data:`CSV_COLUMNS`; ``corr`` holds ``B=R`` entries separated by ``;``,
    this input's correlations) or a ``.toml`` (tables ``[inputs.NAME]`` with the same keys,
    and ``[correlations]`` with ``"A,B" = R``)."""
    from gradcli.cli.files import check_file

    label = f"{option} {path}"
    check_file(label, path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in (".csv", ".toml"):
        raise UsageProblem(f"{label}: an input file is .csv or .toml, not "
                           f"'{_token(ext or path)}'")
    with BoundedReader(path, label=label, max_line=MAX_INPUTS_BYTES,
                       max_bytes=MAX_INPUTS_BYTES) as reader:
        text = reader.read_text()
    if ext == ".toml":
        return _inputs_toml(label, text)
    return _inputs_csv(label, text)


def _inputs_csv(label: str, text: str
                ) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, str], Any]]:
    import csv

    lines = [(i + 1, line) for i, line in enumerate(text.splitlines())
             if line.strip() and not line.lstrip().startswith("#")]
    if not lines:
        raise UsageProblem(f"{label}: the file is empty (expected a header such as "
                           "name,value,u,nu,dist, then one row per input)")
    rows = list(csv.reader([line for _, line in lines], skipinitialspace=True))
    header = [h.strip() for h in rows[0]]
    number = lines[0][0]
    for h in header:
        if h not in CSV_COLUMNS:
            raise UsageProblem(f"{label}: line {number}: unknown column '{_token(h)}' (the "
                               f"columns are {', '.join(CSV_COLUMNS)})")
    if len(set(header)) != len(header):
        raise UsageProblem(f"{label}: line {number}: a column is named twice")
    if "name" not in header or "value" not in header:
        raise UsageProblem(f"{label}: line {number}: the header needs the columns name and "
                           "value")
    records: dict[str, dict[str, Any]] = {}
    corr: dict[tuple[str, str], Any] = {}
    for (number, _), row in zip(lines[1:], rows[1:], strict=True):
        if len(row) != len(header):
            raise UsageProblem(f"{label}: line {number} has {len(row)} fields, the header "
                               f"{len(header)}")
        cells = {h: c.strip() for h, c in zip(header, row, strict=True)}
        name = cells.pop("name")
        if not _NAME.match(name):
            raise UsageProblem(f"{label}: line {number}: '{_token(name)}' is not a variable "
                               "name")
        if name in records:
            raise UsageProblem(f"{label}: line {number}: '{name}' is given twice")
        for entry in filter(None, (e.strip() for e in cells.pop("corr", "").split(";"))):
            other, sep, r = entry.partition("=")
            if not sep or not _NAME.match(other.strip().partition("[")[0]) or not r.strip():
                raise UsageProblem(f"{label}: line {number}: '{_token(entry)}' in corr: "
                                   "expected NAME=R")
            pair = (name, other.strip())
            if pair in corr or pair[::-1] in corr:
                raise UsageProblem(f"{label}: line {number}: the correlation of {name} and "
                                   f"{other.strip()} is given twice")
            corr[pair] = r.strip()
        records[name] = {k: v for k, v in cells.items() if v != ""}
    return records, corr


def _toml_loads(label: str, text: str) -> dict[str, Any]:
    """TOML by the standard library's tomllib (Python 3.11+), else the tomli package."""
    try:
        import tomllib as toml
    except ModuleNotFoundError:  # Python 3.10
        try:
            import tomli as toml  # type: ignore[no-redef]
        except ModuleNotFoundError:
            raise UsageProblem(f"{label}: reading TOML needs Python 3.11 or the tomli "
                               "package (pip install tomli); a .csv input file needs "
                               "neither") from None
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as exc:
        where = str(exc).rpartition("(")[2].rstrip(")") or "the file"
        raise UsageProblem(f"{label}: not valid TOML ({where})") from None


def _inputs_toml(label: str, text: str
                 ) -> tuple[dict[str, dict[str, Any]], dict[tuple[str, str], Any]]:
    data = _toml_loads(label, text)
    unknown = [k for k in data if k not in ("inputs", "correlations")]
    if unknown:
        raise UsageProblem(f"{label}: unknown table '{_token(unknown[0])}' (the file has "
                           "[inputs.NAME] tables and [correlations])")
    records = data.get("inputs", {})
    if not isinstance(records, dict) or not all(isinstance(r, dict)
                                                for r in records.values()):
        raise UsageProblem(f"{label}: inputs: expected tables [inputs.NAME]")
    corr: dict[tuple[str, str], Any] = {}
    for key, r in data.get("correlations", {}).items():
        names = tuple(n.strip() for n in key.split(","))
        if len(names) != 2 or not all(names):
            raise UsageProblem(f"{label}: correlations: '{_token(key)}': expected "
                               '"A,B" = R')
        corr[(names[0], names[1])] = r
    return {str(k): dict(v) for k, v in records.items()}, corr
