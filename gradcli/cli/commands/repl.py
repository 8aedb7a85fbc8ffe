"""``gradcli repl``: a line-by-line session for exploring a formula.

Each line is a gradcli command line without the leading ``gradcli`` (``grad sin(x)*cos(y)
--at x=1,y=2``), answered in this process exactly as the command would answer it, so the
start-up (Python, numpy, the CLI) is paid once per session instead of once per question.
A line ``f(x, y) = sin(x)*cos(y)`` or ``m = x*y`` defines a function or a step: later
lines may use it, and each command gets the definitions its expression uses (and theirs),
in the order they were made, as the head of a gradcli program. A bad line prints its
one-line error and the session goes on; the session's exit status is the worst of its
lines' (0 < 1 < 2 < 130).

On a terminal the standard library's readline gives line editing and a history kept in
``$XDG_STATE_HOME/gradcli/repl_history`` (1,000 lines); reading a pipe, lines are answered
in order with no prompt.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ExitStatus

PROMPT = "gradcli> "
#: the longest line a session reads (a program's statements belong in @FILE)
MAX_LINE = 10_000
HISTORY_LINES = 1_000
#: the session's own words, not commands
QUIT = frozenset({"quit", "exit"})


class DefinitionError(ValueError):
    """A definition line that does not parse as one."""


@dataclass(frozen=True)
class Definition:
    """One ``NAME = ...`` step or ``NAME(a, b) = ...`` function of the session."""

    name: str
    text: str
    uses: frozenset[str]


def _names(text: str) -> list[str]:
    from ...lang.tokens import tokenize

    return [t.text for t in tokenize(text) if t.kind == "name"]


def parse_definition(line: str) -> Definition | None:
    """The definition a line makes, or None when the line is a command line."""
    from ...lang.errors import ExpressionError
    from ...lang.program import _kind, _statements
    from ...lang.tokens import tokenize

    try:
        statements = _statements(tokenize(line))
    except ExpressionError:
        return None
    if len(statements) != 1 or _kind(statements[0]) == "expression":
        return None
    toks = statements[0]
    name = toks[0].text
    equals = next(i for i, t in enumerate(toks) if t.kind == "=")
    params = {t.text for t in toks[1:equals] if t.kind == "name"}
    body = line[toks[equals].pos + 1:].strip()
    if not body:
        raise DefinitionError(f"'{name}' is defined as nothing")
    return Definition(name, line.strip(), frozenset(_names(body)) - params - {name})


@dataclass
class Session:
    """The definitions made so far and the worst status seen; ``run`` answers one command
    line (a list of words, the command first) and returns its exit status."""

    run: Callable[[list[str]], int]
    default_format: str | None = None
    definitions: dict[str, Definition] = field(default_factory=dict)
    worst: int = 0

    def program_for(self, expression: str) -> str:
        """``expression`` with the definitions it uses, transitively, in front of it (a
        program file, ``@FILE``, or text that does not tokenize is left as it is: the
        command says what is wrong with it)."""
        from ...lang.errors import ExpressionError

        if expression.startswith("@") or not self.definitions:
            return expression
        try:
            used = _names(expression)
        except ExpressionError:
            return expression
        wanted: set[str] = set()
        todo = [n for n in used if n in self.definitions]
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo += [n for n in self.definitions[name].uses if n in self.definitions]
        heads = [d.text for n, d in self.definitions.items() if n in wanted]
        return "; ".join([*heads, expression])

    def answer(self, line: str) -> int:
        """Answer one line: a definition, a command line, or nothing (blank, ``#``)."""
        line = line.strip()
        if not line or line.startswith("#"):
            return 0
        if len(line) > MAX_LINE:
            return self._error(f"the line is {len(line):,} characters long; the limit is "
                               f"{MAX_LINE:,} (put long programs in a file: @FILE)")
        try:
            definition = parse_definition(line)
        except DefinitionError as exc:
            return self._error(str(exc))
        if definition is not None:
            return self._define(definition)
        try:
            words = shlex.split(line)
        except ValueError as exc:
            return self._error(f"cannot split the line into words: {exc}")
        if words[0] == "repl":
            return self._error("a session cannot start another session")
        words = self._with_program(words)
        if self.default_format and not {"-f", "--format", "-o", "--output"} & set(words) \
                and not any(w.startswith(("--format=", "--output=")) for w in words) \
                and "--help" not in words:
            words += ["--format", self.default_format]
        return self._done(self.run(words))

    def _with_program(self, words: list[str]) -> list[str]:
        """The words with the expression made one word, headed by the definitions it uses.

        The expression is every word between the command and its first option, so
        ``grad f(x, y) --at x=1,y=2`` needs no quotes; a quoted expression is one word."""
        from ..definition import BY_NAME

        command = BY_NAME.get(words[0])
        if command is None or len(words) < 2:
            return words
        flags = {f for option in command.options for f in option.flags} | {"--help", "--"}
        end = next((i for i, w in enumerate(words[1:], 1)
                    if w in flags or w.split("=", 1)[0] in flags), len(words))
        if end == 1:  # options first (gradcli grad --at x=1 -- -x): left as typed
            return words
        expression = self.program_for(" ".join(words[1:end]))
        return [words[0], expression, *words[end:]]

    def _define(self, definition: Definition) -> int:
        from ...lang.errors import ExpressionError
        from ...lang.program import parse

        saved = self.definitions.pop(definition.name, None)
        trial = {**self.definitions, definition.name: definition}
        probe = Session(self.run, definitions=trial).program_for(definition.name)
        try:  # the definition and what it uses must parse as a program
            parse(probe.rsplit(";", 1)[0] + "; 0")
        except ExpressionError as exc:
            if saved is not None:
                self.definitions[definition.name] = saved
            return self._error(str(exc).splitlines()[-1].removeprefix("error: "))
        self.definitions[definition.name] = definition
        return 0

    def _error(self, message: str) -> int:
        sys.stderr.write(f"gradcli: error: {message}\n")
        return self._done(ExitStatus.USAGE)

    def _done(self, status: int) -> int:
        self.worst = max(self.worst, int(status))
        return int(status)


def _history_file() -> str:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "gradcli", "repl_history")


def _terminal_lines() -> Iterator[str]:
    """Lines typed at a terminal, with readline's editing and a persistent history."""
    try:
        import readline
    except ImportError:  # no readline (some builds): plain input() still works
        readline = None  # type: ignore[assignment]
    path = _history_file()
    if readline is not None:
        try:
            readline.read_history_file(path)
        except OSError:
            pass
        readline.set_history_length(HISTORY_LINES)
    try:
        while True:
            try:
                line = input(PROMPT)
            except KeyboardInterrupt:  # Ctrl-C drops the line being typed, as in Python
                sys.stderr.write("\n")
                continue
            except EOFError:  # Ctrl-D ends the session
                sys.stderr.write("\n")
                return
            yield line
    finally:
        if readline is not None:
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                readline.write_history_file(path)
            except OSError:
                pass


def _piped_lines(stream: Iterable[str]) -> Iterator[str]:
    yield from (line.rstrip("\n") for line in stream)


def run_session(what: str, fmt: str = "auto", quiet: bool = False, **_: Any) -> int:
    """The ``repl`` command's body: a session whose lines run as gradcli command lines in
    this process (``what`` is the command's name, as for every command)."""
    from ..errors import guarded
    from ..files import files_allowed
    from ..main import run

    # the session's -q and --no-files hold for every line (each line is its own command)
    extra = [*(["-q"] if quiet else []), *([] if files_allowed() else ["--no-files"])]

    def answer(words: list[str]) -> int:
        line = [*words, *(w for w in extra if w not in words)] if len(words) > 0 else words
        return guarded(lambda: run(line), False)

    return run_repl(answer, None if fmt == "auto" else fmt)


def run_repl(run: Callable[[list[str]], int], default_format: str | None = None,
             lines: Iterable[str] | None = None) -> int:
    """Answer ``lines`` (default: standard input, interactively on a terminal) one by one
    with ``run``; the worst exit status of the lines."""
    session = Session(run, default_format)
    if lines is None:
        lines = _terminal_lines() if sys.stdin.isatty() else _piped_lines(sys.stdin)
    for line in lines:
        if line.strip() in QUIT:
            break
        session.answer(line)
        sys.stdout.flush()
    return session.worst
