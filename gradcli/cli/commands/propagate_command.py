"""``gradcli propagate``: options in, ``gradcli.uncertainty.propagation`` computes, rows out.

This reads the option text (estimates with ``+-``, uncertainties, correlations, the
covariance file, distributions), hands plain values to the library, writes its table
through the output layer as ``critical`` does, and turns the library's errors, which
name its parameters (``corr['V','I']``), into the options the user typed (``--corr
V,I``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from gradcli.cli.definition import PROPAGATE
from gradcli.cli.inputs import MAX_ARRAY_BYTES, read_array
from gradcli.cli.messages import ExitStatus, UsageProblem, expression_warnings, note, writing_stdout
from gradcli.cli.row_writing import chosen_format
from gradcli.execute import execute
from gradcli.lang.spec_text import parse_point
from gradcli.request import Output, Request
from gradcli.uncertainty.propagation import PropagationError, parse_estimates

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


def _write_result(result: Any, request: Request, rounded: bool, notes: list[str]) -> None:
    """Write the table; with ``--round`` a table or CSV is rounded as GUM 7.2.6 says
    (files for machines keep the exact numbers). Files keep the context: a JSON
    document's ``notes`` start with it (the table's own note, as a vjp's shapes are; the
    verdicts follow, as said on stderr), and the ``history`` of .nc, .zarr and .parquet
    is the command line, then the context."""
    import json

    from gradcli import output
    from gradcli.cli.messages import notes_for
    from gradcli.plan.blocks import Result
    from gradcli.uncertainty.rounding import gum_rounded

    o = request.output
    chosen = o.format
    names = [*(request.at or {}), *(request.get("readings") or ()),
             *(request.get("inputs") or ())]
    context = "context: " + json.dumps(result.context)
    own = [context] if chosen == "json" else []  # a table or CSV shows its own: not this
    if rounded and chosen == "table":  # text keeps a report's trailing zeros (0.30)
        from dataclasses import replace

        from gradcli.plan.blocks import TEXT, Layout

        cols = gum_rounded(result.arrays, text=True, digits=o.precision)
        blocks = [replace(b, kind=TEXT) if np.asarray(cols[b.name]).dtype == object else b
                  for b in result.layout.blocks]
        result = Result(Layout(blocks), cols, result.batch_shape)
    elif rounded and chosen == "csv":  # numbers: a CSV is read by programs (0.3 for 0.30)
        result = Result(result.layout, gum_rounded(result.arrays), result.batch_shape)
    with writing_stdout():
        shown = output.write(result, fmt=chosen, path=o.path,
                             expression=request.expression, variables=names,
                             notes=notes_for(chosen, own, notes), precision=o.precision,
                             stdout=sys.stdout, history=f"{o.history}\n{context}")
    for line in shown:
        note(line, o.quiet)


def _samples(text: str | None) -> int | str | None:
    """--monte-carlo's N (gradcli's constant syntax: 1e6) or ``adaptive``."""
    if text is None or text.strip() == "adaptive":
        return None if text is None else "adaptive"
    from gradcli.cli.values import whole
    from gradcli.uncertainty.propagation import MAX_MONTE_CARLO

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


def read_cov(path: str, components: Mapping[str, list[str]] | None = None) -> Any:
    """The covariance of ``--cov FILE``: a ``.npy`` matrix (over the ``--at`` variables'
    components in ``--at`` order), or a CSV whose header names the variables, as
    ``(names, matrix)``.

    ``components`` maps each ``--at`` variable to its components' labels (``x[0]``...).
    The CSV's header is read and checked against them first: a name that is not a
    variable or component, a repeated one, or more components than a correlated
    covariance may have (``MAX_CORRELATED``) is refused before any row is read. Then
    exactly as many rows as the header's components are read, one line at a time into
    the matrix (at most 4,096² values, 128 MiB), and a row past them is refused when it
    is met: the rest of the file is never read. Messages quote at most one token: a
    header name only when the header has several, a bad value only beside others on its
    line (SECURITY.md §7)."""
    from gradcli.cli.files import check_file
    from gradcli.uncertainty.propagation import MAX_CORRELATED

    check_file(f"--cov {path}", path)  # refused unread under --no-files, like every file
    ext = os.path.splitext(path)[1].lower()
    if ext == ".npy":
        return read_array(path, "--cov")
    if ext not in (".csv", ".txt"):
        raise UsageProblem(f"--cov {path}: a covariance file is .csv (with a header naming "
                           f"the variables) or .npy, not '{ext or path}'")
    from gradcli.cli.reading import BoundedReader

    label = f"--cov {path}"
    known = dict(components or {})
    with BoundedReader(path, label=label, max_bytes=MAX_ARRAY_BYTES) as reader:
        lines = _lines(reader)
        number, header = next(lines, (0, ""))
        if not number:
            raise UsageProblem(f"{label}: the file is empty")
        names = [n.strip() for n in header.split(",")]
        width = _header_width(names, known, f"{label}: line {number}")
        if width > MAX_CORRELATED:
            raise UsageProblem(f"{label}: the header's variables have {width:,} components; "
                               f"a correlated covariance is a dense matrix, at most "
                               f"{MAX_CORRELATED:,} components")
        matrix = np.empty((width, width))
        rows = 0
        for number, line in lines:
            if rows == width:
                raise UsageProblem(f"{label}: line {number:,}: more than {width:,} rows of "
                                   f"values for {width:,} components: the matrix must be "
                                   "square")
            fields = line.split(",")
            if len(fields) != width:
                raise UsageProblem(f"{label}: line {number:,} has {len(fields):,} values, "
                                   f"the header's variables have {width:,} components")
            try:
                matrix[rows] = [float(f) for f in fields]
            except ValueError:
                bad = next(f for f in fields if not _is_number(f))
                if width == 1:  # the line's only value: it may be any line of any file
                    raise UsageProblem(f"{label}: line {number:,}: the line's only value is "
                                       "not a number") from None
                raise UsageProblem(f"{label}: line {number:,}: {_token(bad)} is not a "
                                   "number") from None
            rows += 1
    if rows != width:
        raise UsageProblem(f"{label}: {rows:,} rows of values for {width:,} components: "
                           "the matrix must be square")
    return names, matrix


def _lines(reader: Any) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line, a chunk of whole lines at a time."""
    for chunk in reader.chunks():
        first = reader.first_line
        for i, raw in enumerate(chunk.split(b"\n")):
            if raw.strip():
                yield first + i, raw.decode("utf-8")


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _token(text: str, limit: int = 40) -> str:
    """One token of a file for a message: quoted, cut to ``limit`` characters."""
    text = text.strip()
    return f"'{text[:limit]}...'" if len(text) > limit else f"'{text}'"


def _header_width(names: list[str], known: Mapping[str, list[str]], where: str) -> int:
    """The components the header's names cover (a variable's name: all of them), each a
    component of an ``--at`` variable and named once; else a one-line refusal."""
    from gradcli.uncertainty.propagation import component_of

    if any(not n for n in names):
        raise UsageProblem(f"{where}: the header needs a name for every column")
    if not known:
        return len(names)  # no estimates to check against (the library checks)
    these = ", ".join(known)
    values = {name: np.empty(_shape(labels)) for name, labels in known.items()}
    seen: set[str] = set()
    width = 0
    for col, name in enumerate(names):
        if name in known:
            covered = known[name]
        elif component_of(name, values) is not None:
            covered = [name]
        elif len(names) == 1:  # a one-column "header" may be any line of any file
            raise UsageProblem(f"{where}: the header's only column does not name a variable "
                               f"with an estimate (these are: {these})")
        else:
            raise UsageProblem(f"{where}: column {col + 1:,} of the header, "
                               f"{_token(name)}, is not a variable with an estimate or one "
                               f"of its components (these are: {these})")
        again = seen.intersection(covered)
        if again:
            raise UsageProblem(f"{where}: column {col + 1:,} of the header names "
                               f"{sorted(again)[0]} again")
        seen.update(covered)
        width += len(covered)
    return width


def _shape(labels: list[str]) -> tuple[int, ...]:
    """A variable's shape from its components' labels (``x[1][2]`` last: (2, 3))."""
    if not labels:
        return (0,)
    last = labels[-1]
    if "[" not in last:
        return ()
    return tuple(int(i) + 1 for i in last[last.index("[") + 1:-1].split("]["))


def _components(estimates: Mapping[str, tuple[Any, ...]]) -> dict[str, list[str]]:
    """Each estimate's component labels (``x[0]``...), for checking a covariance file's
    header; a variable whose value is not an array of numbers is left to the library,
    which names what is wrong with it."""
    from gradcli.uncertainty.propagation import component_labels

    out: dict[str, list[str]] = {}
    for name, (value, *_) in estimates.items():
        try:
            shape = np.shape(np.asarray(value, dtype=np.float64))
        except (TypeError, ValueError):
            continue
        out[name] = component_labels(name, shape)
    return out


def run_propagate(what: str, expression: str, at: list[str], u: list[str], nu: list[str],
                  inputs: str | None, readings: str | None, corr: list[str],
                  cov: str | None, order: int, k: float | None, budget: bool,
                  monte_carlo: str | None, interval: str, digits: int, dist: list[str],
                  coverage: float | None,
                  seed: int | None, round: bool, fmt: str, output: str | None,
                  precision: int, quiet: bool, units: list[str] | None = None,
                  to: list[str] | None = None) -> int:
    """Propagate the uncertainties; write the result rows (or the budget); say on stderr
    whether Monte Carlo agrees with the law of propagation."""
    typed = {k: v for k, v in locals().items() if k not in ("what", "expression")}
    if not at and not readings and not inputs:
        raise UsageProblem('no estimates given: add --at "x=1+-0.1" (NAME=VALUE+-U, one per '
                           "variable of the formula)")
    with expression_warnings(quiet):
        estimates = _estimates(at)
        kwargs: dict[str, Any] = {
            "u": _merged(u, "--u") or None, "nu": _merged(nu, "--nu") or None,
            "corr": _correlations(corr) or None, "dist": _distributions(dist) or None}
        if readings:
            from gradcli.cli.calibration_files import read_readings

            kwargs["readings"] = read_readings(readings)
        if inputs:
            from gradcli.cli.calibration_files import read_inputs

            kwargs["inputs"], file_corr = read_inputs(inputs)
            kwargs["corr"] = _merge_corr(file_corr, kwargs["corr"] or {}, inputs)
        # the header is checked against --at's variables; readings' and an input file's
        # are the library's to check
        kwargs["cov"] = read_cov(cov, None if readings or inputs else
                                 _components(estimates)) if cov else None
        from gradcli.request.parameters import TABLE  # --unit and --to: the table's syntax

        for name, given in (("units", units), ("to", to)):
            if given:
                kwargs[name] = TABLE[name].read(given, None)
        parameters = {name: value for name, value in kwargs.items() if value is not None}
        parameters |= {"order": order, "k": k, "budget": budget,
                       "monte_carlo": _samples(monte_carlo), "coverage": coverage,
                       "seed": seed, "interval": interval, "digits": digits}
        request = Request(expression, what, at=estimates, parameters=parameters,
                          output=Output(chosen_format(what, fmt, output), output, precision,
                                        history=_command_line(expression, typed),
                                        quiet=quiet))
        try:
            result = execute(request)
        except PropagationError as exc:
            raise _flag_error(exc, cov, readings, inputs) from None
    # the library's notes (Monte Carlo's verdict, its non-finite values, the result's) are
    # the command's: in a JSON output's notes, and on stderr once the output is written
    _write_result(result, request, round, result.notes)
    for line in result.notes:
        note(line, quiet)
    sys.stdout.flush()
    return ExitStatus.OK
