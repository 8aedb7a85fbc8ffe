"""Parser: one expression's tokens -> AST, without recursion.

An operator-precedence (Pratt / shunting-yard) parser driven by an explicit stack of
frames: one frame per open ``(``, call or ``[``, each with its own operand and operator
stacks. Nothing recurses, so no input can raise ``RecursionError``. Nesting (brackets,
calls, unary and power chains) is still limited to :data:`MAX_DEPTH` on purpose; long
left-associative chains (``x+x+...``) are not nesting and may give deep, left-leaning
trees, which is why the AST helpers are iterative. ``program.py`` cuts a program into
statements and parses each expression here; ``parse`` (there) is the entry point.

Precedence, low to high: comparison < ``+ -`` < ``* / @`` and implicit multiplication
< unary ``+ -`` < ``^ **`` (right-assoc) < postfix ``[i]`` and calls.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from gradcli.errors import ExpressionError, ExpressionWarning
from gradcli.lang.ast import (
    Binary,
    Call,
    Compare,
    Const,
    Index,
    Key,
    Node,
    Num,
    Slice,
    Unary,
    Var,
    Vector,
)
from gradcli.lang.checks import check_rectangular
from gradcli.lang.names import (
    COMPARISONS,
    CONSTANTS,
    PRECEDENCE,
    UNARY_PRECEDENCE,
    FunctionSpec,
    function_names,
    resolve_function,
    suggest,
)
from gradcli.lang.tokens import Token, describe

__all__ = ["MAX_DEPTH", "MAX_LENGTH", "parse_expression"]

MAX_LENGTH = 10_000
MAX_DEPTH = 200

_CLOSE = {"(": ")", "[": "]"}
_EXPECT, _AFTER = "expect", "after"
_OPERAND_WORDS = "a number, a name, '(' or '['"
_INDEX_HINT = "an index is an integer (x[0], x[-1]) or a slice (x[1:3], x[::2])"


@dataclass
class _Op:  # a pending operator on a frame's stack
    op: str
    pos: int
    prec: int
    unary: bool


@dataclass
class _Frame:
    """One bracket level being parsed: 'top', 'paren', 'call' or 'vector'."""

    kind: str
    open: Token | None = None
    spec: FunctionSpec | None = None
    name: Token | None = None  # the function name, for calls
    operands: list[Node] = field(default_factory=list)
    ops: list[_Op] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
    item_pos: list[int] = field(default_factory=list)
    has_compare: bool = False


def parse_expression(text: str, tokens: list[Token], functions: Mapping[str, int] | None = None,
                     defining: str | None = None) -> Node:
    """The AST of one expression: ``tokens`` (ending with an ``end`` token) of ``text``.

    ``functions`` are the program's own functions defined so far (name -> number of
    parameters); calling ``defining`` (the function whose body this is) is recursion.
    Unknown names become :class:`~gradcli.lang.ast.Var` (free variables).
    """
    if tokens[0].kind == "end":
        raise ExpressionError("empty expression", text, tokens[0].pos)
    return _Parser(text, tokens, functions or {}, defining).run()


class _Parser:
    def __init__(self, text: str, tokens: list[Token], functions: Mapping[str, int],
                 defining: str | None) -> None:
        self.text = text
        self.toks = tokens
        self.functions, self.defining = functions, defining
        self.i = 0
        self.depth = 0
        self.frames = [_Frame("top")]
        self.last: Token = tokens[0]  # last token of the most recent operand

    def error(self, reason: str, pos: int, hint: str | None = None) -> ExpressionError:
        return ExpressionError(reason, self.text, pos, hint)

    def enter(self, pos: int) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"expression nests deeper than {MAX_DEPTH} levels", pos)

    def push_operand(self, node: Node, last: Token) -> str:
        self.frames[-1].operands.append(node)
        self.last = last
        return _AFTER

    def run(self) -> Node:
        state = _EXPECT
        while True:
            tok = self.toks[self.i]
            if state == _EXPECT:
                state = self.operand(tok)
                continue
            result = self.after(tok)
            if not isinstance(result, str):
                return result
            state = result

    def operand(self, tok: Token) -> str:
        frame = self.frames[-1]
        if tok.kind == "op" and tok.text in ("+", "-"):
            self.enter(tok.pos)
            frame.ops.append(_Op(tok.text, tok.pos, UNARY_PRECEDENCE, unary=True))
            self.i += 1
            return _EXPECT
        if tok.kind == "number":
            value = float(tok.text)
            if math.isinf(value):
                raise self.error(f"number too large: {tok.text}", tok.pos,
                                 "the largest number is about 1.8e308")
            self.i += 1
            unit = ""
            if self.toks[self.i].kind == "unit":  # 9.81 'm/s^2' (the tokenizer: only here)
                unit = self.toks[self.i].text[1:-1].strip()
                if not unit:
                    raise self.error("empty unit ''", self.toks[self.i].pos,
                                     "write a unit between the quotes: 9.81 'm/s^2'")
                self.i += 1
            return self.push_operand(Num(value, tok.pos, unit), tok)
        if tok.kind == "name":
            return self.name(tok)
        if tok.kind in ("(", "["):
            self.enter(tok.pos)
            self.i += 1
            if tok.kind == "[" and self.toks[self.i].kind == "]":
                raise self.error("empty vector '[]'", tok.pos,
                                 "a vector needs at least one element")
            self.frames.append(_Frame("paren" if tok.kind == "(" else "vector", tok))
            self.frames[-1].item_pos.append(self.toks[self.i].pos)
            return _EXPECT
        prev = self.toks[self.i - 1] if self.i else None
        if tok.kind == "end":
            if prev is not None and prev.kind in ("(", "[", ",") and frame.open is not None:
                raise self.unbalanced(frame)
            after = f" after {describe(prev)}" if prev is not None else ""
            raise self.error(f"unexpected end of input{after}: expected {_OPERAND_WORDS}",
                             tok.pos)
        raise self.error(f"unexpected {describe(tok)}: expected {_OPERAND_WORDS}", tok.pos)

    def name(self, tok: Token) -> str:
        nxt = self.toks[self.i + 1]
        spec = resolve_function(tok.text)
        if spec is None and tok.text in self.functions:
            arity = self.functions[tok.text]
            spec = FunctionSpec(tok.text, arity, "program", "")
        if tok.text == self.defining and nxt.kind == "(":
            raise self.error(f"{tok.text} calls itself: recursion is not supported", tok.pos,
                             "a function may call the functions defined before it")
        if spec is not None:
            if nxt.kind != "(":
                raise self.error(f"{tok.text} is a function: call it as {tok.text}(...)", tok.pos)
            self.enter(nxt.pos)
            self.i += 2
            frame = _Frame("call", nxt, spec, tok)
            self.frames.append(frame)
            if self.toks[self.i].kind == ")":
                return self.finish_call(frame)
            frame.item_pos.append(self.toks[self.i].pos)
            return _EXPECT
        if nxt.kind == "(":
            if tok.text in CONSTANTS:
                raise self.error(f"{tok.text} is a constant, not a function", tok.pos,
                                 f"write {tok.text}*(...) to multiply")
            close = suggest(tok.text, function_names())
            # a one-letter name before '(' is more likely a variable times a bracket
            hint = (f"did you mean '{close}'?" if close is not None
                    else f"write {tok.text}*(...) to multiply" if len(tok.text) == 1 else None)
            raise self.error(f"unknown function '{tok.text}'", tok.pos, hint)
        self.i += 1
        node: Node = Const(tok.text, tok.pos) if tok.text in CONSTANTS else Var(tok.text, tok.pos)
        return self.push_operand(node, tok)

    def after(self, tok: Token) -> str | Node:
        frame = self.frames[-1]
        if tok.kind == "[":
            return self.index(frame, tok)
        if tok.kind == "op":
            self.push_binary(frame, tok.text, tok.pos)
            self.i += 1
            return _EXPECT
        if tok.kind in ("name", "number", "("):
            implicit = self.last.kind in (")", "]") or (
                self.last.kind == "number" and tok.kind != "number"
            )
            if not implicit:
                raise self.error(
                    f"missing operator between {self.last.text!r} and {tok.text!r}", tok.pos,
                    f"write {self.last.text}*{tok.text} to multiply",
                )
            if frame.ops and frame.ops[-1].op == "/" and not frame.ops[-1].unary:
                self.warn_implicit_after_division(frame.ops[-1].pos, tok.pos)
            self.push_binary(frame, "*", tok.pos)
            return _EXPECT
        if tok.kind == ",":
            if frame.kind not in ("call", "vector"):
                raise self.error("unexpected ','", tok.pos,
                                 "commas only separate function arguments and vector elements")
            frame.items.append(self.reduce_all(frame))
            self.i += 1
            frame.item_pos.append(self.toks[self.i].pos)
            return _EXPECT
        if tok.kind in (")", "]"):
            return self.close(frame, tok)
        if tok.kind == "=":
            raise self.error("unexpected '='", tok.pos, "use '==' to compare; NAME = "
                             "expression names a step, at the start of a statement")
        if tok.kind == ":":
            raise self.error("unexpected ':'", tok.pos, "':' only appears in slices, like "
                             "x[1:3]")
        # end of input
        if frame.kind != "top":
            raise self.unbalanced(frame)
        return self.reduce_all(frame)

    def warn_implicit_after_division(self, slash: int, factor: int) -> None:
        """``x/2pi`` is ``(x/2)*pi``: implicit multiplication binds like ``*``. Say how it
        was read and how to write the other reading, naming the divisor as typed."""
        end = self.term_end(self.i)
        divisor = self.text[slash + 1:end].strip()
        first, rest = self.text[slash + 1:factor].strip(), self.text[factor:end].strip()
        warnings.warn(ExpressionWarning(
            f"'/{divisor}' divides by {first} only, then multiplies by {rest} (implicit "
            f"multiplication binds like '*'): write /({divisor}) to divide by the product"),
            stacklevel=5)  # the caller of parse()

    def term_end(self, i: int) -> int:
        """Where the product that starts at token ``i`` ends: the offset of the first
        ``+ - * /``, comparison, ``,`` or unmatched closing bracket at its own level."""
        depth = 0
        for j in range(i, len(self.toks)):
            tok = self.toks[j]
            if tok.kind in ("(", "["):
                depth += 1
            elif tok.kind in (")", "]"):
                depth -= 1
            if depth < 0 or tok.kind == "end" or (depth == 0 and (
                    tok.kind == "," or (tok.kind == "op" and tok.text not in ("^", "**")
                                        and self.toks[j - 1].kind != "op"))):
                return tok.pos
        return len(self.text)

    def index(self, frame: _Frame, tok: Token) -> str:
        target = frame.operands[-1]
        if isinstance(target, Num):
            raise self.error("cannot index a number", tok.pos)
        if isinstance(target, Const):
            raise self.error(f"cannot index the constant {target.name}", tok.pos)
        self.i += 1
        keys: list[Key] = [self.key(tok)]
        while self.toks[self.i].kind == ",":
            self.i += 1
            keys.append(self.key(tok))
        close = self.toks[self.i]
        if close.kind == "end":
            raise self.error("unbalanced '[': expected ']' to match it", tok.pos)
        if close.kind != "]":
            raise self.error(f"unexpected {describe(close)}: expected ']' after the index",
                             close.pos, _INDEX_HINT)
        frame.operands[-1] = Index(target, keys[0] if len(keys) == 1 else tuple(keys), tok.pos)
        self.i += 1
        self.last = close
        return _AFTER

    def key(self, bracket: Token) -> Key:
        """One index position: an integer, or ``start:stop:step`` with each part optional."""
        parts: list[int | None] = [self.integer(bracket)]
        while self.toks[self.i].kind == ":" and len(parts) < 3:
            self.i += 1
            parts.append(self.integer(bracket))
        if len(parts) == 1:
            if parts[0] is None:
                raise self.unexpected_in_index(bracket)
            return parts[0]
        if len(parts) == 3 and parts[2] == 0:
            raise self.error("a slice step cannot be zero", self.toks[self.i - 1].pos)
        return Slice(*parts)

    def integer(self, bracket: Token) -> int | None:
        """An integer literal (with an optional '-') at the current token, or None."""
        tok = self.toks[self.i]
        sign = 1
        if tok.kind == "op" and tok.text == "-":
            sign, self.i = -1, self.i + 1
            tok = self.toks[self.i]
            if tok.kind != "number":
                raise self.unexpected_in_index(bracket)
        if tok.kind != "number":
            return None
        if not tok.text.isdigit():
            raise self.error(f"invalid index {describe(tok)}", tok.pos, _INDEX_HINT)
        if len(tok.text) > 9:
            raise self.error(f"index {tok.text} is too large", tok.pos)
        self.i += 1
        return sign * int(tok.text)

    def unexpected_in_index(self, bracket: Token) -> ExpressionError:
        tok = self.toks[self.i]
        if tok.kind == "end":
            return self.error("unbalanced '[': expected ']' to match it", bracket.pos)
        return self.error(f"invalid index {describe(tok)}", tok.pos, _INDEX_HINT)

    def push_binary(self, frame: _Frame, op: str, pos: int) -> None:
        prec = PRECEDENCE[op]
        right_assoc = prec == PRECEDENCE["^"]
        while frame.ops and (
            frame.ops[-1].prec > prec or (frame.ops[-1].prec == prec and not right_assoc)
        ):
            self.apply(frame)
        if op in COMPARISONS:
            if frame.has_compare:
                raise self.error("comparisons cannot be chained", pos,
                                 "use parentheses, e.g. (a < b) == 1")
            frame.has_compare = True
        if right_assoc:
            self.enter(pos)
        frame.ops.append(_Op(op, pos, prec, unary=False))

    def apply(self, frame: _Frame) -> None:
        op = frame.ops.pop()
        right = frame.operands.pop()
        if op.unary:
            frame.operands.append(Unary(op.op, right, op.pos))
        else:
            left = frame.operands.pop()
            cls = Compare if op.op in COMPARISONS else Binary
            frame.operands.append(cls("^" if op.op == "**" else op.op, left, right, op.pos))
        if op.unary or op.prec == PRECEDENCE["^"]:
            self.depth -= 1

    def reduce_all(self, frame: _Frame) -> Node:
        while frame.ops:
            self.apply(frame)
        frame.has_compare = False
        return frame.operands.pop()

    def unbalanced(self, frame: _Frame) -> ExpressionError:
        assert frame.open is not None
        opener = frame.open.kind
        return self.error(f"unbalanced '{opener}': expected '{_CLOSE[opener]}' to match it",
                          frame.open.pos)

    def close(self, frame: _Frame, tok: Token) -> str:
        want = {"paren": ")", "call": ")", "vector": "]"}.get(frame.kind)
        if want is None:
            partner = "(" if tok.kind == ")" else "["
            raise self.error(f"unbalanced '{tok.kind}': there is no matching '{partner}'", tok.pos)
        if tok.kind != want:
            assert frame.open is not None
            raise self.error(
                f"unbalanced '{tok.kind}': the '{frame.open.kind}' at column {frame.open.pos + 1} "
                f"must be closed with '{want}' first", tok.pos)
        node = self.reduce_all(frame)
        if frame.kind == "paren":
            self.frames.pop()
            self.depth -= 1
            self.i += 1
            return self.push_operand(node, tok)
        frame.items.append(node)
        if frame.kind == "call":
            return self.finish_call(frame)
        return self.finish_vector(frame, tok)

    def finish_call(self, frame: _Frame) -> str:
        assert frame.spec is not None and frame.name is not None
        self.frames.pop()
        self.depth -= 1
        got = len(frame.items)
        if not frame.spec.takes(got):
            raise self.error(f"{frame.name.text} takes {frame.spec.arity_text()}, got {got}",
                             frame.name.pos)
        close = self.toks[self.i]
        self.i += 1
        return self.push_operand(Call(frame.spec.name, tuple(frame.items), frame.name.pos), close)

    def finish_vector(self, frame: _Frame, tok: Token) -> str:
        assert frame.open is not None
        check_rectangular(frame.items, frame.item_pos, self.text)
        self.frames.pop()
        self.depth -= 1
        self.i += 1
        return self.push_operand(Vector(tuple(frame.items), frame.open.pos), tok)

