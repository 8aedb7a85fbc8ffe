"""The one exception the expression language raises, and its caret rendering.

Every problem with user text (bad character, bad syntax, unknown function, too deep,
too long) becomes an :class:`ExpressionError`, so callers need exactly one ``except``.
The error knows the expression and the 0-based offset of the offending character so the
CLI can show a caret under it.
"""

from __future__ import annotations

__all__ = ["ExpressionError", "ExpressionWarning", "WINDOW", "window"]

#: Expressions longer than this are shown as a window around the error position.
WINDOW = 80
_HALF = 38


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
        self.hint = hint
        self.message = reason if hint is None else f"{reason} ({hint})"
        self.expression = expression
        self.position = position
        super().__init__(self._summary())

    @property
    def column(self) -> int | None:
        """1-based column of the culprit (what humans count), or ``None``."""
        return None if self.position is None else self.position + 1

    def _summary(self) -> str:
        text = self.reason
        if self.position is not None:
            text += f" at column {self.position + 1}"
        if self.hint is not None:
            text += f" ({self.hint})"
        return text

    def __str__(self) -> str:
        return self._summary()

    def __reduce__(self):  # keep pickling (e.g. across processes) working
        return (type(self), (self.reason, self.expression, self.position, self.hint))

    def render(self) -> str:
        """Three lines: the expression (indented 2), a caret under the culprit, the message.

        Without a known position only the ``error:`` line is returned. Long expressions
        are cut to a window with ``...`` on the cut sides; the caret still lines up.
        """
        if self.position is None:
            return f"error: {self.message}"
        shown, column = window(self.expression, self.position)
        return f"  {shown}\n  {' ' * column}^\nerror: {self.message}"


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
