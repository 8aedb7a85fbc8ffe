"""The two things typer cannot parse, rewritten in the command line before it sees them.

- An option that may stand without its value (a bare ``--grid``): typer has no optional
  option values (it rejects click's ``flag_value``), so a bare one becomes
  ``--grid=VALUE`` with the value the declaration gives it (``Option.bare``).
- An expression starting with ``-`` (``gradcli grad "-a*x" --at a=1,x=2``): click reads
  any word starting with ``-`` as an option. The first word that is not an option of the
  command is the expression, so it is moved behind ``--``, where click takes it as the
  argument it is.

Both read the command's options from the declaration; neither needs typer.
"""

from __future__ import annotations

import re

from gradcli.cli.definition import Command

_SPEC_START = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\s*(=|\Z)")


def _bare_value_follows(word: str | None) -> bool:
    """True when ``word`` cannot be the value of an option that may stand alone: there
    is none, it is another option, or it is neither ``name=...`` nor a name (an empty
    word is a value: the option's own check says what is wrong with it)."""
    return word is None or word.startswith("-") or (word != "" and not _SPEC_START.match(word))


def rewrite(command: Command, args: list[str]) -> list[str]:
    """``args`` (the words after the command name) as click should read them."""
    takes_value = {f for o in command.options if o.takes_value for f in o.flags}
    flags = {f for o in command.options if not o.takes_value for f in o.flags}
    bare = {f: o.bare for o in command.options if o.bare is not None for f in o.flags}
    out: list[str] = []
    expression: str | None = None
    found = False  # the expression has been seen (or there is none to find)
    i = 0
    while i < len(args):
        word = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if word == "--":
            return out + args[i:] + ([expression] if expression is not None else [])
        if word in bare and _bare_value_follows(nxt):
            out.append(f"{word}={bare[word]}")
        elif word in takes_value:
            out.extend(args[i:i + 2])
            i += 1
        elif word in flags or word in ("-h", "--help") or (
                word.startswith("--") and word.partition("=")[0] in takes_value):
            out.append(word)
        elif not found and word.startswith("-") and len(word) > 1:
            expression, found = word, True
        else:
            found = found or not word.startswith("-")
            out.append(word)
        i += 1
    return out + (["--", expression] if expression is not None else [])
