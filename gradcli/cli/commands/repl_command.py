"""``gradcli repl``: a line-by-line session for exploring a formula.

Each line is a gradcli command line without the leading ``gradcli`` (``grad sin(x)*cos(y)
--at x=1,y=2``), answered in this process exactly as the command would answer it, so the
start-up (Python, numpy, the CLI) is paid once per session instead of once per question.
A line ``f(x, y) = sin(x)*cos(y)`` or ``m = x*y`` defines a function or a step: later
lines may use it, and each command gets the definitions its expression uses (and theirs),
in the order they were made, as the head of a gradcli program. A bad line prints its
one-line error and the session goes on; the session's exit status is the worst of its
lines' (0 < 1 < 2 < 130).

Why each line is its own run: a line is interrupted as a single command is (SIGINT stops
the line; at a terminal the session goes on, on a pipe it ends with 130; SIGTERM and
SIGHUP end the session with 143 and 129), and its temporary files go with it. A closed
standard output ends the session (status 1), as it ends any command.

Bounds: lines are read through :class:`~gradcli.cli.reading.BoundedReader` (a line of
at most :data:`MAX_LINE` bytes, text only: a bad line is refused when read and the
session goes on); the definitions of a session together hold at most
:data:`MAX_DEFINITIONS` characters, and a definition is checked when it is typed
(it parses after the ones before it, fits the session and the compiler's limits), so
a line never meets a definition that cannot run. Each definition is parsed once; the
program a line runs is made from the definitions it uses, parsed once per set used.

On a terminal the standard library's readline gives line editing and a history kept in
``$XDG_STATE_HOME/gradcli/repl_history`` (the last :data:`HISTORY_LINES` lines; only a
regular file is read or replaced, never through a symlink, and at most
:data:`HISTORY_BYTES` of it is read); reading a pipe, lines are answered in order with no
prompt.
"""

from __future__ import annotations

import os
import shlex
import signal
import stat
import sys
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from gradcli.cli.messages import ExitStatus
from gradcli.lang.program import MAX_FILE

PROMPT = "gradcli> "
#: the longest line a session reads, in bytes (a program's statements belong in @FILE)
MAX_LINE = 10_000
#: the session's definitions together, in characters: as much as a program file
MAX_DEFINITIONS = MAX_FILE
HISTORY_LINES = 1_000
#: the most of a history file read (its end): its last lines are what is kept
HISTORY_BYTES = 1 << 20
#: the session's own words, not commands
QUIT = frozenset({"quit", "exit"})
HELP = frozenset({"help", "?"})
#: heads (the definitions a line uses, parsed) kept for later lines, in characters
_HEAD_CACHE = MAX_DEFINITIONS


class DefinitionError(ValueError):
    """A definition line that does not parse as one."""


class OutputClosed(Exception):
    """Standard output was closed (``| head``): the session has nobody to answer."""


@dataclass(frozen=True)
class Definition:
    """A line that defines a step (``NAME = ...``) or a function (``NAME(a, b) = ...``)."""

    name: str
    text: str


@dataclass
class _Made:
    """A definition the session accepted: its parsed statement and what it needs."""

    name: str
    text: str
    order: int
    function: bool
    arity: int
    uses: frozenset[str]       # the session's definitions it names
    variables: frozenset[str]  # its free variables
    size: int                  # operations once the functions it calls are inlined
    depth: int                 # functions calling functions below it (a function: +1)

    @property
    def label(self) -> str:
        return f"definition '{self.name}'"


def _names(text: str) -> list[str]:
    from gradcli.lang.tokens import tokenize

    return [t.text for t in tokenize(text) if t.kind == "name"]


def parse_definition(line: str) -> Definition | None:
    """The definition a line makes, or None when the line is a command line."""
    from gradcli.errors import ExpressionError
    from gradcli.lang.program import _kind, _statements
    from gradcli.lang.tokens import tokenize

    try:
        statements = _statements(tokenize(line))
    except ExpressionError:
        return None
    if len(statements) != 1 or _kind(statements[0]) == "expression":
        return None
    toks = statements[0]
    equals = next(i for i, t in enumerate(toks) if t.kind == "=")
    if not line[toks[equals].pos + 1:].strip():
        raise DefinitionError(f"'{toks[0].text}' is defined as nothing")
    return Definition(toks[0].text, line.strip())


def _measure(node: Any, sizes: dict[str, _Made]) -> tuple[int, int]:
    """(operations once inlined, deepest function called) of a statement, counted as the
    compiler counts them before compiling (``lang.compile``)."""
    from gradcli.lang.ast import Call, Const, Num, Ref, Var, walk

    total, deepest = 0, 0
    for sub in walk(node):
        made = sizes.get(sub.func) if isinstance(sub, Call) else None
        if made is not None and made.function:
            total += made.size
            deepest = max(deepest, made.depth)
        elif not isinstance(sub, (Num, Const, Var, Ref)):
            total += 1
    return total, deepest


@dataclass
class Session:
    """The definitions made so far and the worst status seen; ``run`` answers one command
    line (a list of words, the command first) and returns its exit status."""

    run: Callable[[list[str]], int]
    default_format: str | None = None
    definitions: dict[str, _Made] = field(default_factory=dict)
    worst: int = 0
    #: units declared by ``unit NAME=UNIT`` lines: each line's command gets those of the
    #: names its expression uses (as ``--unit``, before its own)
    units: dict[str, str] = field(default_factory=dict)
    _steps: dict[str, int] = field(default_factory=dict)
    _functions: dict[str, int] = field(default_factory=dict)
    _users: dict[str, set[str]] = field(default_factory=dict)    # name -> who names it
    _free: dict[str, set[str]] = field(default_factory=dict)     # variable -> who uses it
    _heads: OrderedDict[str, Any] = field(default_factory=OrderedDict)
    _size = 0        # characters of all definitions
    _step_ops = 0    # operations of all steps: a bound on any line's steps
    _made = 0        # definitions made (their order)

    # -- the program a line runs ---------------------------------------------------------

    def used(self, expression: str) -> list[str]:
        """The definitions ``expression`` uses, and theirs, in the order they were made."""
        from gradcli.errors import ExpressionError

        try:
            todo = [n for n in _names(expression) if n in self.definitions]
        except ExpressionError:
            return []
        wanted: set[str] = set()
        while todo:
            name = todo.pop()
            if name not in wanted:
                wanted.add(name)
                todo += self.definitions[name].uses
        return sorted(wanted, key=lambda n: self.definitions[n].order)

    def program_for(self, expression: str) -> str:
        """``expression`` with the definitions it uses, transitively, in front of it, one
        per line, as a program whose head is parsed already (a program file, ``@FILE``,
        or text that does not tokenize is left as it is: the command says what is wrong
        with it). The definitions count against the session's limit, the expression
        against an expression's."""
        from gradcli.lang.parser import MAX_LENGTH
        from gradcli.lang.program import ProgramText, parse_definitions

        if expression.startswith("@") or not self.definitions:
            return expression
        used = self.used(expression)
        if not used:
            return expression
        made = [self.definitions[n] for n in used]
        head_text = "".join(m.text + "\n" for m in made)
        head = self._heads.pop(head_text, None) or parse_definitions(head_text)
        self._heads[head_text] = head  # the most recent last
        while sum(map(len, self._heads)) > _HEAD_CACHE and len(self._heads) > 1:
            self._heads.popitem(last=False)
        return ProgramText(head_text + expression.strip(), None,
                           len(head_text) + MAX_LENGTH, head,
                           (*(m.label for m in made), ""))

    def prepare(self, command: Any, options: dict[str, Any]) -> None:
        """What a line's command is handed, checked and completed (called by
        ``calling.call`` once the options are read): no reading of standard input (it
        holds the session's own lines), no file written under --no-files, and the
        session's definitions in front of the expression."""
        from gradcli.cli.files import files_allowed
        from gradcli.cli.messages import UsageProblem

        expression = options.get("expression")
        if expression == "@-":
            raise UsageProblem("@- reads standard input, which holds this session's own "
                               "lines: give the program on the line or as @FILE.gc")
        for option in command.options:
            value = options.get(option.name)
            if option.name != "output" and (value == "-" or (
                    isinstance(value, list) and "-" in value)):
                raise UsageProblem(f"{option.flags[0]} - reads standard input, which holds "
                                   "this session's own lines: give a file")
        output = options.get("output")
        if output not in (None, "-") and not files_allowed():
            flag = next(o.flags[0] for o in command.options if o.name == "output")
            raise UsageProblem(f"{flag} writes a file, and this session runs with "
                               "--no-files: its results go to standard output")
        if isinstance(expression, str):
            options["expression"] = self.program_for(expression)
        if self.units and any(o.name == "units" for o in command.options) and \
                isinstance(expression, str):
            from gradcli.errors import ExpressionError

            try:
                used = set(_names(options["expression"]))
            except ExpressionError:
                used = set()
            kept = [f"{n}={u}" for n, u in self.units.items() if n in used]
            if kept:
                options["units"] = [",".join(kept), *(options.get("units") or [])]

    # -- lines -------------------------------------------------------------------------------

    def answer(self, line: str) -> int:
        """Answer one line: a definition, a command line, a session word, or nothing
        (blank, ``#``)."""
        line = line.strip()
        if not line or line.startswith("#"):
            return 0
        if len(line.encode("utf-8", "replace")) > MAX_LINE:
            return self._error(f"the line is longer than {MAX_LINE:,} bytes, the limit for "
                               "one line (put long programs in a file: @FILE)")
        first = line.split(None, 1)[0]
        if first in HELP:
            return self._help(line.split()[1:])
        if first == "unit":
            return self._unit(line.split(None, 1)[1:])
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
        if words[0] in ("--install-completion", "--show-completion"):
            return self._error("shell completion is installed from the shell (gradcli "
                               "--install-completion), not in a session")
        if words[0].startswith("-"):
            return self._error(f"'{words[0]}' is not a command: a line starts with a command "
                               "(help lists them)")
        words = self._with_expression(words)
        if self.default_format and not {"-f", "--format", "-o", "--output"} & set(words) \
                and not any(w.startswith(("--format=", "--output=")) for w in words) \
                and "--help" not in words:
            words += ["--format", self.default_format]
        return self._done(self.run(words))

    def _with_expression(self, words: list[str]) -> list[str]:
        """The words with the expression made one word.

        The expression is every word between the command and its first option, so
        ``grad f(x, y) --at x=1,y=2`` needs no quotes; a quoted expression is one word."""
        from gradcli.cli.definition import BY_NAME

        command = BY_NAME.get(words[0])
        if command is None or len(words) < 2:
            return words
        flags = {f for option in command.options for f in option.flags} | {"--help", "--"}
        end = next((i for i, w in enumerate(words[1:], 1)
                    if w in flags or w.split("=", 1)[0] in flags), len(words))
        if end == 1:  # options first (gradcli grad --at x=1 -- -x): left as typed
            return words
        return [words[0], " ".join(words[1:end]), *words[end:]]

    def _help(self, topic: list[str]) -> int:
        """``help``: the commands and the session's own words; ``help COMMAND``: its
        options (``COMMAND --help``)."""
        from gradcli.cli.definition import all_commands

        if topic:
            return self._done(self.run([topic[0], "--help"]))
        commands = [c for c in all_commands() if c.name != "repl"]
        width = max(len(c.name) for c in commands)
        out = ["Commands (a line is a command line without 'gradcli'; help COMMAND for "
               "its options):"]
        out += [f"  {c.name:<{width}}  {c.help.split(': ')[0].split('. ')[0].rstrip('.')}"
                for c in commands]
        out += ["Words of the session:",
                "  NAME = EXPR           define a step that later lines may use",
                "  NAME(a, b) = EXPR     define a function",
                "  unit NAME=UNIT,...    give names units that later lines use (unit: list)",
                "  help, ?               this list (help COMMAND: the command's options)",
                "  exit, quit            end the session (Ctrl-D too)"]
        if self.definitions:
            out.append(f"Definitions ({len(self.definitions):,}):")
            out += [f"  {m.text}" for m in self.definitions.values()]
        sys.stdout.write("\n".join(out) + "\n")
        return 0

    # -- definitions -------------------------------------------------------------------------

    def _define(self, definition: Definition) -> int:
        """Accept a definition, or refuse it now with the reason: it must parse after the
        definitions it may use, fit the session's limit and the compiler's."""
        from gradcli.errors import ExpressionError
        from gradcli.lang.ast import Call, Define, Ref, Var, walk
        from gradcli.lang.compile import MAX_CALLS, MAX_STEPS
        from gradcli.lang.program import Head, parse_definitions

        name, text = definition.name, definition.text
        old = self.definitions.get(name)
        users = self._users.get(name, set()) - {name}
        size = self._size - (len(old.text) + 1 if old else 0) + len(text) + 1
        if size > MAX_DEFINITIONS:
            return self._error(f"the session's definitions would hold {size:,} characters; "
                               f"the limit is {MAX_DEFINITIONS:,} (a session's own): put "
                               "them in a program file (@FILE.gc)")
        if name in self._free:
            who = sorted(self._free[name], key=lambda n: self.definitions[n].order)[0]
            return self._error(f"'{name}' is a variable of {who} ({self.definitions[who].text})"
                               f": name the {'function' if '(' in text.split('=')[0] else 'step'}"
                               " differently")
        if old is not None and users:  # replaced where it stands: it may use those before
            steps, functions = {}, {}
            for other in self.definitions.values():
                if other.order >= old.order:
                    break
                (functions if other.function else steps)[other.name] = \
                    other.arity if other.function else 0
        elif old is not None:  # nobody uses it: made anew, at the end
            steps = {k: v for k, v in self._steps.items() if k != name}
            functions = {k: v for k, v in self._functions.items() if k != name}
        else:
            steps, functions = self._steps, self._functions
        try:
            node = parse_definitions(text, Head(0, (), steps, functions, {})).statements[-1]
        except ExpressionError as exc:
            return self._error(exc.render().splitlines()[-1].removeprefix("error: "))
        function = isinstance(node, Define)
        arity = len(node.params) if function else 0
        if old is not None and users and (function, arity) != (old.function, old.arity):
            return self._error(f"'{name}' is used by {sorted(users)[0]}: a new definition "
                               f"of it keeps its form ({old.text.split('=')[0].strip()})")
        uses = frozenset(s.name for s in walk(node) if isinstance(s, Ref) and s.name in steps
                         ) | frozenset(s.func for s in walk(node)
                                       if isinstance(s, Call) and s.func in functions)
        variables = frozenset(s.name for s in walk(node) if isinstance(s, Var))
        ops, deepest = _measure(node, self.definitions)
        depth = deepest + 1 if function else deepest
        if depth >= MAX_CALLS:
            return self._error(f"functions would call each other more than {MAX_CALLS} levels "
                               "deep")
        step_ops = self._step_ops - (old.size if old and not old.function else 0) + \
            (0 if function else ops)
        if ops > MAX_STEPS or (not function and step_ops > MAX_STEPS and self._closure_ops(
                uses, ops) > MAX_STEPS):
            return self._error(f"the definition needs more than {MAX_STEPS:,} steps once "
                               "its functions are inlined")
        if old is not None:
            self._forget(old)
        order = old.order if old is not None and users else self._made
        self._made += 1
        made = _Made(name, text, order, function, arity, uses, variables, ops, depth)
        self.definitions[name] = made
        if old is not None and users:  # keep the order: the dict is the program's order
            self.definitions = dict(sorted(self.definitions.items(),
                                           key=lambda item: item[1].order))
        (self._functions if function else self._steps)[name] = arity
        for used in uses:
            self._users.setdefault(used, set()).add(name)
        for variable in variables:
            self._free.setdefault(variable, set()).add(name)
        self._size = size
        self._step_ops = step_ops
        return 0

    def _closure_ops(self, uses: frozenset[str], ops: int) -> int:
        """Operations of a step and of every step it needs (functions are inlined in
        each step's own count)."""
        seen: set[str] = set()
        todo = list(uses)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += self.definitions[name].uses
        return ops + sum(self.definitions[n].size for n in seen
                         if not self.definitions[n].function)

    def _forget(self, old: _Made) -> None:
        """Take back what a replaced definition recorded (its uses and variables)."""
        self._steps.pop(old.name, None)
        self._functions.pop(old.name, None)
        for used in old.uses:
            self._users.get(used, set()).discard(old.name)
        for variable in old.variables:
            who = self._free.get(variable)
            if who is not None:
                who.discard(old.name)
                if not who:
                    del self._free[variable]
        del self.definitions[old.name]

    def _unit(self, rest: list[str]) -> int:
        """``unit V=V,I=mA``: units the session's later lines use (a name's last
        declaration wins); ``unit`` alone lists them."""
        if not rest:
            for name, unit in self.units.items():
                sys.stdout.write(f"{name} = {unit}\n")
            return self._done(ExitStatus.OK)
        from gradcli.errors import EvaluationError, UnitError
        from gradcli.lang.units import parse_unit
        from gradcli.request.parameters import TABLE

        try:
            given = TABLE["units"].read(rest[0], None)
            for name, unit in given.items():
                parse_unit(unit, f"the unit of '{name}'")
        except (EvaluationError, UnitError) as exc:
            return self._error(str(exc).replace("units=", "unit "))
        self.units.update(given)
        return self._done(ExitStatus.OK)

    def _error(self, message: str) -> int:
        from gradcli.cli.messages import printable

        sys.stderr.write(printable(f"gradcli: error: {message}") + "\n")
        return self._done(ExitStatus.USAGE)

    def _done(self, status: int) -> int:
        self.worst = max(self.worst, int(status))
        return int(status)


# -- reading lines ---------------------------------------------------------------------------

def _history_file() -> str:
    state = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "gradcli", "repl_history")


def read_history(path: str) -> list[str]:
    """The last :data:`HISTORY_LINES` lines of the history file, reading at most its last
    :data:`HISTORY_BYTES`; nothing unless it is a regular file (a FIFO is never opened, a
    symlink never followed)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return []
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return []
    with os.fdopen(fd, "rb") as fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            start = max(0, size - HISTORY_BYTES)
            fh.seek(start)
            data = fh.read(HISTORY_BYTES)
        except OSError:
            return []
    if start > 0:  # the first line read is a part of one
        data = data[data.find(b"\n") + 1:]
    lines = data.decode("utf-8", "replace").splitlines()
    return [line for line in lines if line and line != "_HiStOrY_V2_"][-HISTORY_LINES:]


def write_history(path: str, lines: list[str]) -> None:
    """Replace the history file with ``lines`` (the last :data:`HISTORY_LINES`), written
    whole to a new file and renamed over it; a history path that is not a regular file
    (a symlink, a FIFO) is left alone."""
    import tempfile

    directory = os.path.dirname(path)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".repl_history.")
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("".join(line + "\n" for line in lines[-HISTORY_LINES:]))
        os.replace(temporary, path)
    except BaseException:  # a full disk, a signal: no stray temporary file
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if not isinstance(sys.exc_info()[1], OSError):
            raise


def _typed_problem(line: str) -> str | None:
    """Why a line typed at a terminal is refused (too long, a control character)."""
    if len(line.encode("utf-8", "replace")) > MAX_LINE:
        return (f"the line is longer than {MAX_LINE:,} bytes, the limit for one line (put "
                "long programs in a file: @FILE)")
    bad = next((c for c in line if ord(c) < 32 and c != "\t"), None)
    if bad is not None:
        return f"byte 0x{ord(bad):02x} in the line is not text"
    return None


class _PromptWaker:
    """Makes a signal that lands while readline waits at the prompt take effect at once.

    Why: readline prints the prompt, then blocks in ``select()`` on the terminal. A signal
    that arrives between the two (a loaded machine preempts the session right after the
    prompt is written) is noted by Python's C-level handler but interrupts nothing, so
    the Python handler would run only at the next keystroke: SIGTERM or SIGHUP would not
    end a session nobody types into (seen: 2 of 30 sessions on a loaded machine). Every
    signal with a Python handler writes its number to the wakeup file descriptor; a
    thread reading it sends the main thread SIGUSR1 (whose handler does nothing) every
    50 ms while the same ``input()`` call is still waiting, and the ``EINTR`` that this
    gives ``select()`` makes readline run the pending handlers.
    """

    def __init__(self) -> None:
        import threading

        self.waiting = False
        self.calls = 0  # input() calls ended so far: one that ends has seen the signal
        self._main = threading.main_thread().ident
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._old_usr1 = signal.signal(signal.SIGUSR1, lambda signum, frame: None)
        self._old_fd = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name="gradcli-prompt-waker",
                         daemon=True).start()

    def _watch(self) -> None:
        import time

        while True:
            try:
                data = os.read(self._read, 64)
            except OSError:
                return
            if not data:
                return  # closed: the session ended
            if all(byte == signal.SIGUSR1 for byte in data):
                continue  # this thread's own wake-ups
            calls = self.calls
            for _ in range(100):  # 5 s at most
                time.sleep(0.05)
                if not self.waiting or self.calls != calls:
                    break
                try:
                    signal.pthread_kill(self._main, signal.SIGUSR1)
                except (OSError, ValueError):
                    return

    def close(self) -> None:
        """The session's terminal reading is over: the process's own handling returns."""
        signal.set_wakeup_fd(self._old_fd)
        signal.signal(signal.SIGUSR1, self._old_usr1)
        os.close(self._write)  # the thread's read sees the end and returns


def _terminal_lines() -> Iterator[str | Exception]:
    """Lines typed at a terminal, with readline's editing and a persistent history."""
    try:
        import readline
    except ImportError:  # no readline (some builds): plain input() still works
        readline = None  # type: ignore[assignment]
    path = _history_file()
    if readline is not None:
        readline.clear_history()
        for line in read_history(path):
            readline.add_history(line)
    waker = _PromptWaker()
    try:
        while True:
            try:
                waker.waiting = True
                try:
                    line = input(PROMPT)
                finally:
                    waker.waiting = False
                    waker.calls += 1
            except KeyboardInterrupt as exc:  # Ctrl-C drops the line being typed
                if getattr(exc, "signum", signal.SIGINT) != signal.SIGINT:
                    raise  # SIGTERM, SIGHUP: the session ends
                sys.stderr.write("\n")
                continue
            except EOFError:  # Ctrl-D ends the session
                sys.stderr.write("\n")
                return
            problem = _typed_problem(line)
            yield line if problem is None else ValueError(problem)
    finally:
        waker.close()
        if readline is not None:
            count = readline.get_current_history_length()
            write_history(path, [readline.get_history_item(i) or "" for i in
                                 range(max(1, count - HISTORY_LINES + 1), count + 1)])


def _piped_lines() -> Iterator[str | Exception]:
    """Lines of standard input as they come, each within :data:`MAX_LINE` bytes."""
    from gradcli.cli.reading import BoundedReader

    with BoundedReader("-", label="standard input", max_line=MAX_LINE,
                       read_size=MAX_LINE) as reader:
        yield from reader.lines()


# -- the session -----------------------------------------------------------------------------

def run_session(what: str, fmt: str = "auto", quiet: bool = False, **_: Any) -> int:
    """The ``repl`` command's body: a session whose lines run as gradcli command lines in
    this process (``what`` is the command's name, as for every command)."""
    from gradcli.cli.files import files_allowed
    from gradcli.cli.main import run
    from gradcli.cli.messages import guarded

    # the session's -q and --no-files hold for every line (each line is its own command)
    extra = [*(["-q"] if quiet else []), *([] if files_allowed() else ["--no-files"])]

    def answer(words: list[str]) -> int:
        line = [*words, *(w for w in extra if w not in words)] if len(words) > 0 else words
        closed: list[bool] = []

        def body() -> int:
            try:
                return run(line)
            except BrokenPipeError:
                closed.append(True)
                raise
            except SystemExit as exc:  # click's own answer to a closed stdout
                if type(sys.stdout).__name__ == "_PacifyFlushWrapper":
                    closed.append(True)
                return int(exc.code or 0) if not isinstance(exc.code, str) else 1

        status = guarded(body, False)
        if closed:
            raise OutputClosed
        return status

    return run_repl(answer, None if fmt == "auto" else fmt)


def run_repl(run: Callable[[list[str]], int], default_format: str | None = None,
             lines: Iterable[str | Exception] | None = None,
             interactive: bool | None = None) -> int:
    """Answer ``lines`` (default: standard input, interactively on a terminal) one by one
    with ``run``; the worst exit status of the lines, or the status that ended the
    session (a signal's, 1 for a closed standard output)."""
    from gradcli.cli import calling
    from gradcli.errors import EvaluationError
    from gradcli.output import interrupt

    session = Session(run, default_format)
    if interactive is None:
        interactive = lines is None and sys.stdin.isatty()
    if lines is None:
        lines = _terminal_lines() if interactive else _piped_lines()
    calling.SESSION = session
    try:
        for line in lines:
            try:
                if isinstance(line, Exception):  # refused as it was read
                    session._error(str(line))
                    continue
                if line.strip() in QUIT:
                    break
                status = session.answer(line)
                if status in (128 + signal.SIGTERM, 128 + signal.SIGHUP) or (
                        status == ExitStatus.INTERRUPT and not interactive):
                    return status  # the line said it was interrupted
                sys.stdout.flush()
                interrupt.begin()  # the next line is interruptible, as a command is
            except KeyboardInterrupt as exc:  # between the lines' own runs
                if not interactive or getattr(exc, "signum", signal.SIGINT) != signal.SIGINT:
                    raise
                sys.stderr.write("gradcli: interrupted\n")
                session._done(ExitStatus.INTERRUPT)
                interrupt.begin()
    except OutputClosed:
        return max(session.worst, int(ExitStatus.FAIL))
    except EvaluationError as exc:  # the input is no lines of text
        session._error(str(exc))
    finally:
        calling.SESSION = None
    return session.worst
