"""Programs: statements, named steps and the program's own functions; ``parse`` is the
language's entry point.

A program is a sequence of statements separated by ``;`` or newlines::

    z = w*x + b; p = sigmoid(z); -(t*log(p) + (1-t)*log(1-p))

``NAME = expr`` binds a step; ``NAME(a, b) = expr`` defines a function, inlined where it is
called; the value of the program is its last statement (an expression, or the step it
names). Names are resolved here, once: a name a statement uses is a step or, in a
function's body, a parameter (a :class:`~gradcli.lang.ast.Ref`) when one is defined before
it, else a free variable (a :class:`~gradcli.lang.ast.Var`). So later passes never need
scopes, and ``free_variables`` of a program is what the caller must bind.

A newline ends a statement only outside brackets and after something that can end an
expression: ``a +`` at the end of a line continues on the next. ``#`` starts a comment.
A single expression parses to its own node, exactly as before programs existed.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass, field

from gradcli.errors import ExpressionError
from gradcli.lang.ast import Assign, Define, Node, Program, Ref, Var, fold, walk, with_children
from gradcli.lang.names import CONSTANTS, resolve_function
from gradcli.lang.parser import MAX_LENGTH, parse_expression
from gradcli.lang.tokens import Token, tokenize

__all__ = ["MAX_FILE", "Head", "ProgramText", "parse", "parse_definitions"]

#: the largest program file: ``gradcli grad @loss.gc`` reads at most this many bytes
MAX_FILE = 1 << 20
# a newline after one of these continues the statement on the next line
_CONTINUES = frozenset({"op", "=", ",", "(", "[", ":"})


@dataclass(frozen=True)
class Head:
    """The statements at the start of a program's text, parsed already: the first
    ``length`` characters, which define the steps and functions named here (a session's
    definitions, parsed once and continued by each of its lines)."""

    length: int
    statements: tuple[Node, ...] = ()
    steps: Mapping[str, int] = field(default_factory=dict)
    functions: Mapping[str, int] = field(default_factory=dict)
    variables: Mapping[str, int] = field(default_factory=dict)


class ProgramText(str):
    """Program text read from a file (or stdin): a ``str`` that remembers its ``source``
    (for error locations, ``loss.gc, line 3, column 5``) and has the file's limit of
    :data:`MAX_FILE` characters instead of an expression's 10,000.

    ``head``, when set, is its first statements already parsed (:func:`parse` goes on
    after them); ``line_labels`` names each line in messages instead of its number (an
    empty label: the line is shown as typed text is). Both stay in this process: a
    pickled copy is the text alone, parsed whole where it is read."""

    source: str | None
    max_length: int
    head: Head | None = None
    line_labels: tuple[str, ...] | None = None

    def __new__(cls, text: str, source: str | None, max_length: int = MAX_FILE,
                head: Head | None = None,
                line_labels: tuple[str, ...] | None = None) -> ProgramText:
        made = super().__new__(cls, text)
        made.source, made.max_length = source, max_length
        made.head, made.line_labels = head, line_labels
        return made

    def __getnewargs__(self) -> tuple[str, str | None, int]:  # pickling (process pools)
        return str(self), self.source, self.max_length

    def __reduce__(self) -> tuple[type[ProgramText], tuple[str, str | None, int]]:
        return ProgramText, self.__getnewargs__()

    def strip(self, chars: str | None = None) -> str:
        """The text without surrounding whitespace, still a program with its limit (a
        caller stripping what it is handed must not turn a long program into an
        over-long expression)."""
        stripped = str.strip(self, chars)
        if len(stripped) == len(self):
            return self
        return ProgramText(stripped, self.source, self.max_length)


def parse(expression: str) -> Node:
    """Parse an expression or a program into an AST; raise :class:`ExpressionError` on any
    problem (with the offending position)."""
    if not isinstance(expression, str):
        raise TypeError(f"expression must be str, not {type(expression).__name__}")
    limit = getattr(expression, "max_length", MAX_LENGTH)
    if len(expression) > limit:
        what = "program" if isinstance(expression, ProgramText) else "expression"
        raise ExpressionError(f"{what} is {len(expression)} characters long; the limit is "
                              f"{limit}", expression, None)
    head = getattr(expression, "head", None)
    if head is not None:  # parsed already up to head.length: go on from there
        statements = _statements(tokenize(expression, head.length))
        if not statements:
            raise ExpressionError("empty expression", expression, head.length)
        return _Builder(expression, head).build(statements)
    statements = _statements(tokenize(expression))
    if not statements:
        raise ExpressionError("empty expression", expression, 0)
    if len(statements) == 1 and _kind(statements[0]) == "expression":
        return parse_expression(expression, statements[0])
    return _Builder(expression).build(statements)


def parse_definitions(text: str, after: Head | None = None) -> Head:
    """``text``: step and function definitions only (no value), parsed after the
    definitions of ``after`` (whose names they may use); the head of a program that
    continues with more statements after ``text``. The mappings of ``after`` are read,
    never changed."""
    start = after.length if after is not None else 0
    statements = _statements(tokenize(text, start))
    builder = _Builder(text, after)
    program = builder.build(statements, definitions_only=True)
    return Head(len(text), program.statements, builder.steps, builder.functions,
                builder.variables)


def _statements(tokens: list[Token]) -> list[list[Token]]:
    """The token lists of the statements, each ending with an ``end`` token; newlines
    inside brackets or after an operator are dropped."""
    out: list[list[Token]] = []
    current: list[Token] = []
    depth = 0
    for tok in tokens:
        if tok.kind in ("(", "["):
            depth += 1
        elif tok.kind in (")", "]"):
            depth -= 1
        ends = tok.kind in (";", "end") or (tok.kind == "newline" and depth <= 0 and (
            not current or current[-1].kind not in _CONTINUES))
        if ends:
            if current:
                out.append([*current, Token("end", "", tok.pos)])
            current = []
            depth = 0 if tok.kind == ";" else depth
        elif tok.kind != "newline":
            current.append(tok)
    return out


def _kind(toks: list[Token]) -> str:
    """``assign`` (NAME = ...), ``define`` (NAME(a, b) = ...) or ``expression``."""
    if toks[0].kind != "name":
        return "expression"
    if toks[1].kind == "=":
        return "assign"
    if toks[1].kind == "(":
        depth = 0
        for i, tok in enumerate(toks[1:], start=1):
            depth += (tok.kind == "(") - (tok.kind == ")")
            if depth == 0:
                return "define" if toks[i + 1].kind == "=" else "expression"
    return "expression"


class _Builder:
    """Parses statements in order, checking and resolving names as they are defined."""

    def __init__(self, text: str, head: Head | None = None) -> None:
        self.text = text
        # name -> position of its definition; name -> number of parameters; free
        # variables -> first use. A head's are read through, never written.
        self.steps: dict[str, int] | ChainMap[str, int] = {}
        self.functions: dict[str, int] | ChainMap[str, int] = {}
        self.variables: dict[str, int] | ChainMap[str, int] = {}
        self.head: tuple[Node, ...] = ()
        if head is not None:
            self.steps, self.functions, self.variables = (
                ChainMap({}, head.steps), ChainMap({}, head.functions),
                ChainMap({}, head.variables))
            self.head = head.statements

    def error(self, reason: str, pos: int, hint: str | None = None) -> ExpressionError:
        return ExpressionError(reason, self.text, pos, hint)

    def build(self, statements: list[list[Token]], definitions_only: bool = False) -> Program:
        nodes: list[Node] = []
        for i, toks in enumerate(statements):
            kind = _kind(toks)
            last = i == len(statements) - 1 and not definitions_only
            if kind in ("assign", "define") and toks[-2].kind == "=":
                raise self.error("nothing after '='", toks[-2].pos,
                                 f"write {toks[0].text} = expression")
            if kind == "assign":
                node: Node = Assign(toks[0].text, self.expression(toks[2:]), toks[0].pos)
                self.define_name(toks[0], "step")
                self.steps[toks[0].text] = toks[0].pos
            elif kind == "define":
                node = self.function(toks)
                if last:
                    raise self.error("the program ends with a function definition", toks[0].pos,
                                     "end it with an expression, or a step, that gives its "
                                     "value")
            else:
                if definitions_only:
                    raise self.error("only step and function definitions belong here",
                                     toks[0].pos, "define a step: NAME = expression")
                if not last:
                    follows = statements[i + 1][0]
                    hint = ("a line starting with + or - begins a new statement: end the line "
                            "before it with the operator, or wrap the expression in "
                            "parentheses" if follows.kind == "op" else
                            "only the last statement gives the result: name it (NAME = ...) "
                            "or remove it")
                    raise self.error("this expression's value is not used", toks[0].pos, hint)
                node = self.expression(toks)
            nodes.append(node)
        return Program((*self.head, *nodes), 0)

    def expression(self, toks: list[Token], params: tuple[str, ...] = (),
                   defining: str | None = None) -> Node:
        tree = parse_expression(self.text, toks, self.functions, defining)
        # looked up in place: a set of every step built per statement made programs
        # quadratic in their number of steps
        steps = self.steps
        resolved = fold(tree, lambda n, kids: Ref(n.name, n.pos) if isinstance(n, Var) and
                        (n.name in steps or n.name in params) else
                        with_children(n, kids) if kids else n)
        for sub in walk(resolved):
            if isinstance(sub, Var):
                self.variables.setdefault(sub.name, sub.pos)
        return resolved

    def define_name(self, tok: Token, what: str) -> None:
        """Refuse a step or function named like a built-in, a constant, a step or function
        defined before, or a variable used before."""
        name = tok.text
        if resolve_function(name) is not None:
            raise self.error(f"'{name}' is a built-in function", tok.pos,
                             f"name the {what} differently")
        if name in CONSTANTS:
            raise self.error(f"'{name}' is a constant", tok.pos, f"name the {what} differently")
        if name in self.steps or name in self.functions:
            line = self.text.count("\n", 0, self.steps.get(name, 0)) + 1
            earlier = "step" if name in self.steps else "function"
            raise self.error(f"'{name}' is already defined", tok.pos,
                             f"the {earlier} on line {line}: each name is defined once")
        if name in self.variables:
            raise self.error(f"'{name}' is used before it is defined", self.variables[name],
                             f"define the {what} {name} before the statements that use it")

    def function(self, toks: list[Token]) -> Define:
        name = toks[0]
        params: list[str] = []
        i = 2
        while toks[i].kind != ")":
            tok = toks[i]
            if tok.kind != "name":
                raise self.error(f"a parameter must be a name, got '{tok.text}'", tok.pos,
                                 f"define a function as {name.text}(a, b) = expression")
            if tok.text in params:
                raise self.error(f"parameter '{tok.text}' is given twice", tok.pos)
            if resolve_function(tok.text) is not None or tok.text in CONSTANTS or \
                    tok.text in self.functions or tok.text == name.text:
                raise self.error(f"'{tok.text}' cannot be a parameter: it is a function or "
                                 "a constant", tok.pos, "name the parameter differently")
            params.append(tok.text)
            i += 1
            if toks[i].kind == ",":
                i += 1
            elif toks[i].kind != ")":
                raise self.error(f"unexpected '{toks[i].text}' in the parameters", toks[i].pos,
                                 f"define a function as {name.text}(a, b) = expression")
        self.define_name(name, "function")
        body = self.expression(toks[i + 2:], tuple(params), name.text)
        self.functions[name.text] = len(params)
        return Define(name.text, tuple(params), body, name.pos)
