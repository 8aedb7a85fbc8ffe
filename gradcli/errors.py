"""The error classes every room raises, and the parameter-reference protocol of their messages.

At the base of the package (importing nothing of gradcli), so that every layer raises
the same classes and a front end catches them by one name: :class:`ExpressionError` (the
language), :class:`EvaluationError` (a request), :class:`UnitError`, :class:`FormulaError`,
:class:`OutputError` (a file). Messages mark the library parameter they are about with
:func:`ref`; a front end renders them in its own words (:func:`render_references`).

The expression language's error and its caret rendering:

Every problem with user text (bad character, bad syntax, unknown function, too deep,
too long) becomes an :class:`ExpressionError`, so callers need exactly one ``except``.
The error knows the expression and the 0-based offset of the offending character so the
CLI can show a caret under it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

__all__ = ["EvaluationError", "OutputError", "UnitError", "FormulaError",
           "ExpressionError", "ExpressionWarning", "WINDOW", "window", "ref",
           "render_references", "library_name", "Namer"]

#: Expressions longer than this are shown as a window around the error position.
WINDOW = 80
_HALF = 38


_MARK, _SEP = "\x1e", "\x1f"  # a parameter reference inside a message (see ``ref``)
_REFERENCE = re.compile("\x1e([^\x1e\x1f]*)\x1f([^\x1e\x1f]*)\x1f([^\x1e\x1f]*)"
                        "\x1f([^\x1e]*)\x1e")
#: how a front end names a parameter reference: (parameter, key, text, python) -> its words
Namer = Callable[[str, str, str, str], str]


def ref(parameter: str, key: str | None = None, text: str | None = None,
        python: str | None = None) -> str:
    """A reference to one of the library's parameters inside an EvaluationError message.

    The library shows it in its own names: ``grid['x']`` (a parameter and a key),
    ``wrt=x,y`` (a parameter and the value given), ``max_points`` (the parameter alone).
    A front end renders the same message in its own words (``EvaluationError.render``):
    the CLI names the option it declares for the parameter, then what was typed.
    ``text`` is the value as typed; ``python``, when given, is the library's own example
    of a value (``vector=[1, 0]``, where the CLI shows its option and ``"1,0"``).
    """
    parts = (parameter, key or "", "" if text is None else text, python or "")
    return _MARK + _SEP.join(parts) + _MARK


def library_name(parameter: str, key: str, text: str, python: str = "") -> str:
    """A parameter reference in the library's own words (see :func:`ref`)."""
    if parameter.startswith("-"):  # a caller's own option name, shown as it is
        return parameter + (f" {text}" if text else f" {key}" if key else "")
    if python:
        return f"{parameter}={python}"
    if key:
        return f"{parameter}['{key}']"
    return f"{parameter}={text}" if text else parameter


def render_references(message: str, namer: Namer | None = None) -> str:
    """``message`` with each parameter reference named by ``namer`` (default: the
    library's own names)."""
    name = namer or library_name
    return _REFERENCE.sub(lambda m: name(*m.groups()), message)


class ExpressionError(ValueError):
    """A problem with an expression's text.

    Attributes:
        reason: what is wrong, without position or hint (``"unknown function 'sinn'"``).
        hint: an optional suggestion (``"did you mean 'sin'?"``) or ``None``.
        message: ``reason`` followed by ``(hint)`` when there is a hint; no position.
        expression: the full text that was being parsed.
        position: 0-based character offset of the culprit, or ``None`` if no single
            character is to blame (e.g. the expression is too long). It may equal
            ``len(expression)`` for "unexpected end of input".
    """

    def __init__(
        self,
        reason: str,
        expression: str = "",
        position: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.reason = reason
        self._hint = hint  # with its parameter references (``ref``), for ``render``
        self.hint = hint = None if hint is None else render_references(hint)
        self.message = reason if hint is None else f"{reason} ({hint})"
        self.expression = expression
        self.position = position
        super().__init__(self._summary())

    @property
    def line(self) -> int | None:
        """1-based line of the culprit (1 for a one-line expression), or ``None``."""
        if self.position is None:
            return None
        return self.expression.count("\n", 0, self.position) + 1

    @property
    def column(self) -> int | None:
        """1-based column of the culprit within its line (what humans count), or ``None``."""
        if self.position is None:
            return None
        return self.position - (self.expression.rfind("\n", 0, self.position) + 1) + 1

    @property
    def source(self) -> str | None:
        """The file the program came from (``ProgramText``), or ``None`` for typed text."""
        return getattr(self.expression, "source", None)

    def _label(self) -> str | None:
        """The culprit line's name when the text names its lines (a session's program:
        ``definition 'm'``; ``""`` for the line typed), else None."""
        labels = getattr(self.expression, "line_labels", None)
        line = self.line
        return labels[line - 1] if labels and line is not None and line <= len(labels) \
            else None

    def location(self) -> str:
        """``column 5``; ``line 2, column 5`` for a program of several lines; with the
        file's name first when it came from one (``loss.gc, line 2, column 5``); a named
        line by its name (``definition 'm', column 5``)."""
        where = f"column {self.column}"
        label = self._label()
        if label is not None:
            return f"{label}, {where}" if label else where
        if "\n" in self.expression or self.source is not None:
            where = f"line {self.line}, {where}"
        return where if self.source is None else f"{self.source}, {where}"

    def _summary(self) -> str:
        text = self.reason
        if self.position is not None:
            text += f" at {self.location()}"
        if self.hint is not None:
            text += f" ({self.hint})"
        return text

    def __str__(self) -> str:
        return self._summary()

    def __reduce__(self):  # keep pickling (e.g. across processes) working
        return (type(self), (self.reason, str(self.expression), self.position, self._hint))

    def render(self, namer: Namer | None = None) -> str:
        """Three lines: the expression (indented 2), a caret under the culprit, the message.

        Without a known position only the ``error:`` line is returned. Long expressions
        are cut to a window with ``...`` on the cut sides; the caret still lines up. In a
        program of several lines (or one read from a file) the line shown is the culprit's,
        and the message starts with where it is (``loss.gc, line 2, column 5: ...``).
        ``namer`` names the parameters a hint refers to (see :func:`ref`), as a front end
        calls them.
        """
        message = self.message
        if namer is not None and self._hint is not None:
            message = f"{self.reason} ({render_references(self._hint, namer)})"
        if self.position is None:
            source = self.source
            return f"error: {source + ': ' if source else ''}{message}"
        text, position, where = self.expression, self.position, ""
        if "\n" in text or self.source is not None:
            start = text.rfind("\n", 0, position) + 1
            end = text.find("\n", position)
            text, position = text[start:len(text) if end < 0 else end], position - start
            where = "" if self._label() == "" else f"{self.location()}: "
        shown, column = window(text, position)
        return f"  {shown}\n  {' ' * column}^\nerror: {where}{message}"


class ExpressionWarning(UserWarning):
    """An expression that parses, but probably not as its author meant (``x/2pi`` is
    ``(x/2)*pi``). Issued with :func:`warnings.warn`; the CLI prints it on stderr."""


def _displayable(text: str) -> str:
    """Replace characters that would break the one-line display (newlines, NUL...)."""
    out = []
    for ch in text:
        if ch in "\t\n\r\v\f":
            out.append(" ")
        elif not ch.isprintable():
            out.append("?")
        else:
            out.append(ch)
    return "".join(out)


def window(expression: str, position: int) -> tuple[str, int]:
    """Return ``(shown_text, caret_column)`` for displaying ``expression`` on one line.

    Keeps at most :data:`WINDOW` characters around ``position`` so a 10,000-character
    expression still fits a terminal line, marking cut sides with ``...``.
    """
    text = _displayable(expression)
    position = max(0, min(position, len(text)))
    if len(text) <= WINDOW:
        return text, position
    width = WINDOW - 6
    start = max(0, position - _HALF)
    end = min(len(text), start + width)
    start = max(0, end - width)
    prefix = "..." if start > 0 else ""
    suffix = "..." if end < len(text) else ""
    return prefix + text[start:end] + suffix, len(prefix) + position - start


class EvaluationError(ValueError):
    """A problem with what the user asked to evaluate (exit status 2 in the CLI).

    Its text names the library's parameters (``grid['x']: ...``); a front end shows it
    in its own words with :meth:`render` (the CLI names its options instead)."""

    def __init__(self, message: str = "") -> None:
        self.template = message
        super().__init__(render_references(message))

    def render(self, namer: Namer | None = None) -> str:
        """The message, each parameter named by ``namer`` (see ``Namer``)."""
        return render_references(self.template, namer)

    def __reduce__(self) -> tuple[Any, ...]:  # a Dask worker's error keeps its references
        return (type(self), (self.template,))


class UnitError(ValueError):
    """A unit's text that pint cannot read, or an impossible conversion."""


class FormulaError(ValueError):
    """The expression has no derivative formula here: the message names the part."""


class OutputError(Exception):
    """An output file could not be written; ``str()`` names the path and why."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        super().__init__(f"cannot write '{self.path}': {reason}")

    @classmethod
    def from_oserror(cls, path: str | os.PathLike[str], err: OSError) -> OutputError:
        """Build from an OSError, keeping only its one-line reason."""
        return cls(path, err.strerror or str(err))
