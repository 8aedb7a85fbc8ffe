"""Tokenizer: expression text -> list of :class:`Token`, ending with an ``end`` token.

ASCII only, by design: names are ``[A-Za-z_][A-Za-z0-9_]*`` so a Cyrillic look-alike
``х`` cannot silently become a new variable. Anything else is rejected with the
character's escape / code point, so invisible characters are visible in the message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gradcli.errors import ExpressionError

__all__ = ["Token", "tokenize"]

# Kinds: "number", "name", "op" (+ - * / ^ ** @ < <= > >= == !=), "(", ")", "[", "]", ",",
# ":" (slices), "=" (a step or function definition), ";" and "newline" (between statements),
# "unit" (a quoted unit after a number: 9.81 'm/s^2'),
# "end". A comment runs from # to the end of its line.
_TOKEN = re.compile(
    r"(?P<ws>[ \t\r]+|\#[^\n]*)"
    r"|(?P<newline>\n)"
    r"|(?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>\*\*|<=|>=|==|!=|[-+*/^<>@])"
    r"|(?P<unit>'[^'\n]*')"  # a number's unit: 9.81 'm/s^2' (units.py)
    r"|(?P<punct>[()\[\],:;=])"
)

_HINTS = {
    "!": "use '!=' for 'not equal'",
    ".": "'.' may only appear inside a number such as 0.5",
    "'": "strings are not part of the language; a unit goes right after a number, between "
         "two quotes: 9.81 'm/s^2'",
    '"': "strings are not part of the language",
    "\u2212": "use the ASCII minus '-'",
    "\u00d7": "use '*' to multiply",
    "\u00b7": "use '*' to multiply",
    "\u00f7": "use '/' to divide",
    "\u00b2": "use '^2' for powers",
    "\u00b3": "use '^3' for powers",
    "\u03c0": "write pi",
}


@dataclass(frozen=True)
class Token:
    """One lexical token: its kind, exact source text and 0-based start offset."""

    kind: str
    text: str
    pos: int


def describe(token: Token) -> str:
    """Human wording for a token in messages: ``number '3'``, ``name 'x'``, ``'*'``."""
    if token.kind == "end":
        return "end of input"
    if token.kind == "newline":
        return "end of line"
    if token.kind in ("number", "name"):
        return f"{token.kind} {token.text!r}"
    return repr(token.text)


def bad_character(expression: str, pos: int) -> ExpressionError:
    """The error for a character that cannot start any token."""
    ch = expression[pos]
    reason = f"unexpected character {ch!r}"
    if not ch.isascii():
        reason += f" (U+{ord(ch):04X}, not ASCII)"
    return ExpressionError(reason, expression, pos, _HINTS.get(ch))


def tokenize(expression: str, start: int = 0) -> list[Token]:
    """Split ``expression`` (from offset ``start`` on) into tokens, positions counted from
    its beginning; raise :class:`ExpressionError` on a bad character.

    Numbers are matched greedily with an optional exponent that must have digits, so
    ``2e3`` is one number but ``2e`` and ``2ex`` are a number followed by a name.
    """
    tokens: list[Token] = []
    pos = start
    n = len(expression)
    while pos < n:
        match = _TOKEN.match(expression, pos)
        if match is None:
            raise bad_character(expression, pos)
        kind = match.lastgroup
        text = match.group()
        if kind == "unit" and (not tokens or tokens[-1].kind != "number"):
            raise bad_character(expression, pos)  # quotes hold a number's unit, no string
        if kind != "ws":
            tokens.append(Token(text if kind == "punct" else str(kind), text, pos))
        pos = match.end()
    tokens.append(Token("end", "", n))
    return tokens
