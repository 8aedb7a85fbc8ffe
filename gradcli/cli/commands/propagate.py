"""``gradcli propagate``: options in, ``gradcli.evaluation.propagate`` computes, rows out.

This reads the option text (estimates with ``+-``, uncertainties, correlations, the
covariance file, distributions), hands plain values to the library, writes its table
through the output layer as ``critical`` does, and turns the library's errors, which
name its parameters (``corr['V','I']``), into the options the user typed (``--corr
V,I``).
"""

from __future__ import annotations

import os
import sys
from typing import Any

import numpy as np

from ...evaluation.propagate import PropagationError, parse_estimates
from ...evaluation.spec_text import parse_point
from ..definition import PROPAGATE
from ..errors import ExitStatus, UsageProblem, expression_warnings, say, writing_stdout
from ..inputs import MAX_ARRAY_BYTES, read_array

#: the option each library parameter comes from (the declaration's: one name each)
_FLAGS = {o.name: o.flags[0] for o in PROPAGATE}


def _flag_error(exc: PropagationError, cov_path: str | None,
                readings_path: str | None = None, inputs_path: str | None = None
                ) -> UsageProblem:
    """The library's error, said with the option the user typed."""
    flag = _FLAGS.get(exc.param, exc.param)
    key = exc.key
    if exc.param == "cov" and cov_path:
        where = f"{flag} {cov_path}"
    elif exc.param == "readings" and readings_path:
        where = f"{flag} {readings_path}" + (f": {key}" if key is not None else "")
    elif exc.param == "inputs" and inputs_path:
        where = f"{flag} {inputs_path}" + (f": {key}" if key is not None else "")
    elif isinstance(key, tuple):
        where = f"{flag} {','.join(key)}"
    elif key is not None:
        where = f"{flag} {key}"
    else:
        where = flag
    return UsageProblem(f"{where}: {exc.detail}")


def _estimates(specs: list[str]) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for spec in specs:
        for name, pair in parse_estimates(spec, "--at", files=read_array).items():
            if name in out:
                raise UsageProblem(f"--at '{name}' is given twice")
            out[name] = pair
    return out


def _merged(specs: list[str], option: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for spec in specs:
        for name, value in parse_point(spec, option, files=read_array).items():
            if name in out:
                raise UsageProblem(f"{option} '{name}' is given twice")
            out[name] = value
    return out


def _correlations(specs: list[str]) -> dict[tuple[str, ...], str]:
    out: dict[tuple[str, ...], str] = {}
    for spec in specs:
        pair, sep, value = spec.rpartition("=")
        names = tuple(n.strip() for n in pair.split(","))
        if not sep or len(names) != 2 or not all(names) or not value.strip():
            raise UsageProblem(f"--corr '{spec}': expected A,B=R, e.g. --corr V,I=-0.36")
        if names in out:
            raise UsageProblem(f"--corr {','.join(names)} is given twice")
        out[names] = value
    return out


def _distributions(specs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        name = name.strip()
        if not sep or not name or not value.strip():
            raise UsageProblem(f"--dist '{spec}': expected NAME=KIND:PARAMETERS, e.g. "
                               "x=uniform:0.1")
        if name in out:
            raise UsageProblem(f"--dist {name} is given twice")
        out[name] = value
    return out


def _command_line(expression: str, typed: dict[str, Any]) -> str:
    """The command as it could be typed again (every option given, declared order),
    quoted for a POSIX shell: a file's ``history``."""
    import shlex

    words = ["gradcli", "propagate", expression]
    for option in PROPAGATE:
        value = typed.get(option.name)
        if value is None or value == [] or value is False or value == option.default_value:
            continue
        if option.kind == "flag":
            words.append(option.flags[0])
        else:
            for item in value if option.repeat else [value]:
                words += [option.flags[0], str(item)]
    return shlex.join(words)


def _write_result(result: Any, expression: str, names: list[str], what: str, fmt: str,
                  output: str | None, precision: int, quiet: bool, rounded: bool,
                  command: str) -> None:
    """Write the table; with ``--round`` a table or CSV is rounded as GUM 7.2.6 says
    (files for machines keep the exact numbers). Files keep the context: the JSON
    ``notes`` (with the verdicts), and the ``history`` of .nc, .zarr and .parquet (the
    command line, then the context as JSON)."""
    import json

    from ... import output as out
    from ...evaluation.blocks import Result
    from ...evaluation.rounding import gum_rounded
    from .fields import _format

    chosen = _format(what, fmt, output)
    context = "context: " + json.dumps(result.context)
    kept = [*result.notes, context] if chosen in ("json", "jsonl") else []
    if rounded and chosen == "table":  # text keeps a report's trailing zeros (0.30)
        from dataclasses import replace

        from ...evaluation.blocks import TEXT, Layout

        cols = gum_rounded(result.arrays, text=True, digits=precision)
        blocks = [replace(b, kind=TEXT) if np.asarray(cols[b.name]).dtype == object else b
                  for b in result.layout.blocks]
        result = Result(Layout(blocks), cols, result.batch_shape)
    elif rounded and chosen == "csv":  # numbers: a CSV is read by programs (0.3 for 0.30)
        result = Result(result.layout, gum_rounded(result.arrays), result.batch_shape)
    with writing_stdout():
        notes = out.write(result, fmt=chosen, path=output, expression=expression,
                          variables=names, notes=kept, precision=precision,
                          stdout=sys.stdout, history=f"{command}\n{context}")
    if not quiet:
        for note in notes:
            say(note)


def _samples(text: str | None) -> int | str | None:
    """--monte-carlo's N (gradcli's constant syntax: 1e6) or ``adaptive``."""
    if text is None or text.strip() == "adaptive":
        return None if text is None else "adaptive"
    from ...evaluation.propagate import MAX_MONTE_CARLO
    from ..values import whole

    try:
        return whole(text, 2, MAX_MONTE_CARLO)
    except ValueError as exc:
        raise UsageProblem(f"--monte-carlo: {exc} (or adaptive)") from None


def _merge_corr(from_file: dict[tuple[str, str], Any], given: dict[tuple[str, ...], str],
                path: str) -> dict[tuple[str, ...], Any] | None:
    """The input file's correlations and --corr's; a pair in both is an error."""
    out: dict[tuple[str, ...], Any] = dict(from_file)
    for pair, value in given.items():
        if pair in out or pair[::-1] in out:
            raise UsageProblem(f"--corr {','.join(pair)}: the correlation is in --inputs "
                               f"{path} too: give it once")
        out[pair] = value
    return out or None


def read_cov(path: str) -> Any:
    """The covariance of ``--cov FILE``: a ``.npy`` matrix (over the ``--at`` variables'
    components in ``--at`` order), or a CSV whose header names the variables, as
    ``(names, matrix)``. Read within :data:`~gradcli.cli.inputs.MAX_ARRAY_BYTES`."""
    from ..files import check_file

    check_file(f"--cov {path}", path)  # refused unread under --no-files, like every file
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        return read_array(path, "--cov")
    if ext not in (".csv", ".txt"):
        raise UsageProblem(f"--cov {path}: a covariance file is .csv (with a header naming "
                           f"the variables) or .npy, not '{ext or path}'")
    from ..reading import BoundedReader

    with BoundedReader(path, label=f"--cov {path}", max_bytes=MAX_ARRAY_BYTES) as reader:
        text = reader.read_text()
    lines = [(i + 1, line) for i, line in enumerate(text.splitlines()) if line.strip()]
    if not lines:
        raise UsageProblem(f"--cov {path}: the file is empty")
    names = [n.strip() for n in lines[0][1].split(",")]
    if any(not n for n in names):
        raise UsageProblem(f"--cov {path}: line {lines[0][0]}: the header needs a name for "
                           "every column")
    rows = []
    for number, line in lines[1:]:
        fields = line.split(",")
        if len(fields) != len(names):
            raise UsageProblem(f"--cov {path}: line {number} has {len(fields)} values, the "
                               f"header names {len(names)} variables")
        try:
            rows.append([float(f) for f in fields])
        except ValueError:
            bad = next(f for f in fields if not _is_number(f))
            raise UsageProblem(f"--cov {path}: line {number}: '{bad.strip()}' is not a "
                               "number") from None
    if len(rows) != len(names):
        raise UsageProblem(f"--cov {path}: {len(rows)} rows of values for {len(names)} "
                           "variables: the matrix must be square")
    return names, np.array(rows)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def run_propagate(what: str, expression: str, at: list[str], u: list[str], nu: list[str],
                  inputs: str | None, readings: str | None, corr: list[str],
                  cov: str | None, order: int, k: float | None, budget: bool,
                  monte_carlo: str | None, interval: str, digits: int, dist: list[str],
                  coverage: float | None,
                  seed: int | None, round: bool, fmt: str, output: str | None,
                  precision: int, quiet: bool) -> int:
    """Propagate the uncertainties; write the result rows (or the budget); say on stderr
    whether Monte Carlo agrees with the law of propagation."""
    from ...evaluation.propagate import propagate

    typed = {k: v for k, v in locals().items() if k not in ("what", "expression")}

    if not at and not readings and not inputs:
        raise UsageProblem('no estimates given: add --at "x=1+-0.1" (NAME=VALUE+-U, one per '
                           "variable of the formula)")
    with expression_warnings(quiet):
        estimates = _estimates(at)
        kwargs: dict[str, Any] = {
            "u": _merged(u, "--u") or None, "nu": _merged(nu, "--nu") or None,
            "corr": _correlations(corr) or None,
            "cov": read_cov(cov) if cov else None, "dist": _distributions(dist) or None}
        if readings:
            from ..calibration_files import read_readings

            kwargs["readings"] = read_readings(readings)
        if inputs:
            from ..calibration_files import read_inputs

            kwargs["inputs"], file_corr = read_inputs(inputs)
            kwargs["corr"] = _merge_corr(file_corr, kwargs["corr"] or {}, inputs)
        try:
            result = propagate(expression, at=estimates, order=order, k=k, budget=budget,
                               monte_carlo=_samples(monte_carlo), coverage=coverage,
                               seed=seed, interval=interval, digits=digits, **kwargs)
        except PropagationError as exc:
            raise _flag_error(exc, cov, readings, inputs) from None
    names = [n for n in estimates] + list(kwargs.get("readings") or ()) + \
        list(kwargs.get("inputs") or ())
    _write_result(result, expression, names, what, fmt, output, precision, quiet, round,
                  _command_line(expression, typed))
    if not quiet:
        for note in result.notes:
            say(note)
    from ...output import count_nonfinite

    # a budget's nan cells are by design (k and U(f) belong to its total rows only)
    bad = 0 if budget else count_nonfinite(result, results_only=True)
    if bad and not quiet:
        say(f"warning: {bad:,} non-finite result value{'s' if bad != 1 else ''} (nan or "
            "inf) in the output")
    sys.stdout.flush()
    return ExitStatus.OK
