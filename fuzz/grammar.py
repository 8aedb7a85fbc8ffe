"""Hypothesis strategies for gradcli's expression language, shared by the tests and the fuzzer.

Three families:

* :func:`expressions` draws an AST (numbers, x/y, constants, ``+ - * / ^``, unary ``-``/``+``,
  comparisons, calls and aliases, vectors, indexing) together with *one* text that must
  parse to exactly that AST. The text is printed with as few parentheses as the documented
  precedence allows (comparison < ``+ -`` < ``* /`` and implicit multiplication < unary <
  ``^``/``**`` right-associative < postfix), plus random redundant parentheses, spacing,
  ``**`` for ``^`` and aliases (``ln``, ``arcsin``...), so a parse that disagrees with the
  AST is a precedence/associativity bug.
* :func:`smooth_expressions` draws text of functions of x and y that are smooth on the
  whole plane (no poles, kinks or branch points), for derivative-vs-finite-difference checks.
* :func:`junk_text` draws hostile text: arbitrary unicode, token soups of language tokens,
  Python syntax, quotes, NUL, control and look-alike characters, and mutations of valid
  expressions. ``parse`` must answer each with a Node or an ExpressionError, quickly.

Only hypothesis and gradcli.lang are imported, so this works in pytest and in fuzz/run.py.
"""

from __future__ import annotations

from hypothesis import strategies as st

from gradcli.lang import (
    ALIASES,
    CONSTANTS,
    FUNCTIONS,
    Binary,
    Call,
    Compare,
    Const,
    Index,
    Node,
    Num,
    Unary,
    Var,
    Vector,
)
from gradcli.lang.tokens import tokenize

__all__ = ["expressions", "smooth_expressions", "junk_text", "number_texts", "HOSTILE_SNIPPETS"]

# --- numbers --------------------------------------------------------------------------------

#: number literals in every spelling the tokenizer accepts (value = float(text))
number_texts = st.one_of(
    st.integers(0, 10_000).map(str),
    st.builds(lambda a, b: f"{a}.{b}", st.integers(0, 99), st.integers(0, 999)),
    st.integers(0, 999).map(lambda b: f".{b}"),
    st.integers(0, 99).map(lambda a: f"{a}."),
    st.builds(lambda m, s, e: f"{m}{s}{e}", st.sampled_from(["1e", "2.5E", "7e", ".5e", "3.e"]),
              st.sampled_from(["", "+", "-"]), st.integers(0, 30)),
    st.sampled_from(["0", "1e308", "1.7976931348623157e308", "5e-324", "1e-320", "0.1",
                     "00012", "0.000"]),
)

# --- ASTs -----------------------------------------------------------------------------------

_UNARY_FUNCS = sorted(n for n, s in FUNCTIONS.items() if s.kind == "elementwise")
_BINARY_FUNCS = sorted(n for n, s in FUNCTIONS.items() if s.kind == "binary")
_ALIAS_OF: dict[str, list[str]] = {}
for _alias, _canon in ALIASES.items():
    _ALIAS_OF.setdefault(_canon, []).append(_alias)

_ATOM = 10  # Num, Var, Const, Call, Vector, Index
_PREC = {"<": 1, "<=": 1, ">": 1, ">=": 1, "==": 1, "!=": 1, "+": 2, "-": 2, "*": 3, "/": 3,
         "^": 5}
_UNARY = 4


_leaves = st.one_of(
    number_texts.map(lambda t: Num(float(t))),
    st.sampled_from(["x", "y", "x", "y", "theta", "_a1"]).map(Var),
    st.sampled_from(sorted(CONSTANTS)).map(Const),
)


def _scalar_level(node: Node) -> Node:
    """A bracket item: vectors become sum(vector), so ``[a, [b]]`` never arises."""
    return Call("sum", (node,)) if isinstance(node, Vector) else node


def _indexable(node: Node) -> Node:
    """An index target: the parser refuses ``2[0]`` and ``pi[0]``."""
    return Var("x") if isinstance(node, (Num, Const)) else node


def _extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    scalar = children.map(_scalar_level)
    vec_items = st.lists(scalar, min_size=1, max_size=3)
    return st.one_of(
        st.builds(Unary, st.sampled_from(["-", "-", "+"]), children),
        st.builds(Binary, st.sampled_from(["+", "-", "*", "/", "^"]), children, children),
        st.builds(Compare, st.sampled_from(sorted(k for k, v in _PREC.items() if v == 1)),
                  children, children),
        st.builds(lambda f, a: Call(f, (a,)), st.sampled_from(_UNARY_FUNCS), children),
        st.builds(lambda f, a, b: Call(f, (a, b)), st.sampled_from(_BINARY_FUNCS), children,
                  children),
        st.builds(lambda a, b, c: Call("where", (a, b, c)), children, children, children),
        st.builds(lambda a: Call("sum", (a,)), children),
        st.builds(lambda a, b: Call("dot", (a, b)), children, children),
        vec_items.map(lambda items: Vector(tuple(items))),
        # a matrix: rows of one length
        st.integers(1, 3).flatmap(lambda n: st.lists(
            st.lists(scalar, min_size=n, max_size=n)
            .map(lambda row: Vector(tuple(row))), min_size=1, max_size=3))
        .map(lambda rows: Vector(tuple(rows))),
        st.builds(Index, children.map(_indexable), st.integers(0, 5)),
    )


#: random ASTs of the whole language (depth is bounded far below the nesting limit)
trees = st.recursive(_leaves, _extend, max_leaves=14)


def _prec(node: Node) -> int:
    if isinstance(node, Unary):
        return _UNARY
    if isinstance(node, (Binary, Compare)):
        return _PREC[node.op]
    return _ATOM


class _Printer:
    """Print a tree with minimal parentheses; random style choices come from ``draw``."""

    def __init__(self, draw) -> None:
        self.draw = draw
        self.depth = 0  # brackets open around what is being printed


    def flip(self, p: float = 0.5) -> bool:
        return self.draw(st.floats(0, 1)) < p

    def space(self, newline: bool = False) -> str:
        """Whitespace; a newline only where it cannot end a statement: inside brackets,
        after an operator, or around the whole text."""
        return self.draw(st.sampled_from(["", "", "", " ", "  ", "\t"] + (
            ["\n"] if newline or self.depth else [])))

    def paren(self, text: str) -> str:
        return f"({self.space(True)}{text}{self.space(True)})"

    def print(self, node: Node) -> str:
        text = self._print(node)
        # redundant parentheses never change the tree (but Num/Const must not be indexed)
        if self.flip(0.08):
            text = self.paren(text)
        return text

    def child(self, node: Node, need_parens: bool) -> str:
        text = self.print(node)
        if need_parens and not (text.startswith("(") and _balanced_outer(text)):
            text = self.paren(text)
        return text

    def _print(self, node: Node) -> str:
        if isinstance(node, Num):
            return _num_text(node.value, self.draw)
        if isinstance(node, (Var, Const)):
            return node.name
        if isinstance(node, Unary):
            return node.op + self.space(True) + self.child(node.operand,
                                                          _prec(node.operand) < _UNARY)
        if isinstance(node, Call):
            name = node.func
            if name in _ALIAS_OF and self.flip(0.5):
                name = self.draw(st.sampled_from(_ALIAS_OF[name]))
            self.depth += 1
            args = ("," + self.space()).join(self.print(a) for a in node.args)
            text = f"{name}({self.space()}{args}{self.space()})"
            self.depth -= 1
            return text
        if isinstance(node, Vector):
            self.depth += 1
            items = ("," + self.space()).join(self.print(a) for a in node.items)
            text = f"[{self.space()}{items}{self.space()}]"
            self.depth -= 1
            return text
        if isinstance(node, Index):
            target = self.print(node.target)
            if _prec(node.target) != _ATOM or not _ends_postfixable(target):
                target = self.paren(target)
            return f"{target}[{node.index}]"
        assert isinstance(node, (Binary, Compare))
        p = _PREC[node.op]
        if node.op == "^":
            left = self.child(node.left, _prec(node.left) <= p)
            right = self.child(node.right, _prec(node.right) < _UNARY)
            op = self.draw(st.sampled_from(["^", "^", "**"]))
        else:  # left-associative; comparisons never chain, so both sides need parentheses
            left = self.child(node.left, _prec(node.left) < p or _prec(node.left) == 1)
            right = self.child(node.right, _prec(node.right) <= p)
            op = node.op
        if node.op == "*" and _implicit_ok(left, right) and self.flip(0.5):
            return left + self.space() + right
        return left + self.space() + op + self.space(True) + right


def _balanced_outer(text: str) -> bool:
    """True if the first '(' of ``text`` closes at its last character."""
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return i == len(text) - 1
    return False


def _ends_postfixable(text: str) -> bool:
    return text[-1] in ")]" or text[-1].isalnum() or text[-1] == "_"


def _implicit_ok(left: str, right: str) -> bool:
    """May ``left right`` be written as an implicit product (``2x``, ``(a)(b)``, ``2sin(x)``)?

    The parser allows it after a number or a closing bracket, before a name, a number or
    '(' -- but not: number-number (``2 3``), anything-'[' (that is indexing), a right side
    starting with a sign, or digits followed by a name starting with e/E (``2e+3`` is a
    number).
    """
    last, first = left.rstrip()[-1], right.lstrip()[0]
    if first in "-+[":
        return False
    if tokenize(left)[-2].kind == "number":
        if first.isdigit() or first == ".":
            return False
        if first in "eE":
            return False
        return first.isalpha() or first in "_("
    return last in ")]"


def _num_text(value: float, draw) -> str:
    text = repr(value)
    if value.is_integer() and abs(value) < 1e16:
        text = str(int(value))
    alternatives = [text]
    if value.is_integer() and abs(value) < 1e16:
        alternatives += [f"{int(value)}.", f"{int(value)}.0", f"{int(value)}e0"]
    chosen = draw(st.sampled_from(alternatives))
    assert float(chosen) == value
    return chosen


@st.composite
def expressions(draw) -> tuple[Node, str]:
    """An AST and a text that must parse to exactly it."""
    tree = draw(trees)
    printer = _Printer(draw)
    text = printer.space(True) + printer.print(tree) + printer.space(True)
    return tree, text


# --- smooth functions of x and y ----------------------------------------------------------

_SMOOTH_UNARY = ["sin({})", "cos({})", "tanh({})", "atan({})", "sigmoid({})", "softplus({})",
                 "exp(({})/4)", "sqrt(1 + ({})^2)", "log(1 + ({})^2)", "ln(2 + cos({}))",
                 "cosh(({})/3)", "asinh({})", "expm1(({})/4)", "log1p(({})^2)", "-({})",
                 "({})^2", "({})^3", "({})**2", "2({})", "hypot({}, 1)", "cbrt(2 + sin({}))",
                 "arctan({})"]
_SMOOTH_BINARY = ["({}) + ({})", "({}) - ({})", "({})*({})", "({})({})",
                  "({}) / (2 + sin({}))", "({}) / (1 + ({})^2)", "atan2({}, 3 + cos({}))",
                  "(2 + sin({}))^(({})/4)",
                  "hypot({}, 1 + ({})^2)"]
_SMOOTH_LEAVES = ["x", "y", "x", "y", "2x", "0.5y", "3", "pi", "e", "x*y", "1.5", "-x", "x^2"]


@st.composite
def smooth_expressions(draw, max_ops: int = 8) -> str:
    """Text of an everywhere-smooth function of x and y (maybe of neither)."""
    n_ops = draw(st.integers(0, max_ops))
    pool = [draw(st.sampled_from(_SMOOTH_LEAVES)) for _ in range(n_ops + 1)]
    for _ in range(n_ops):
        a = pool.pop(draw(st.integers(0, len(pool) - 1)))
        if len(pool) and draw(st.booleans()):
            b = pool.pop(draw(st.integers(0, len(pool) - 1)))
            pool.append(draw(st.sampled_from(_SMOOTH_BINARY)).format(a, b))
        else:
            pool.append(draw(st.sampled_from(_SMOOTH_UNARY)).format(a))
    while len(pool) > 1:
        pool.append(f"({pool.pop()}) + ({pool.pop()})")
    return pool[0]


# --- junk -----------------------------------------------------------------------------------

HOSTILE_SNIPPETS = [
    "__import__", "('os')", ".system", "('touch SENTINEL')", "__class__", "__subclasses__",
    "__builtins__", "__globals__", "lambda", ":", "for", " in ", "if", "else", "import", "os",
    "exec", "eval", "open", "getattr", "'", '"', "f\"", "b'", "r'", "\\", "\\x00", ";", "#",
    ":=", "=", "@", "{", "}", "$", "`", "?", "!", "~", "&", "|", "%", "...", ".", "->",
    "\x00", "\x1b[2J", "\x07", "\x7f", "\r", "\v", "\f", "\u0445", "\u0440", "\u03c0",
    "\u2212", "\u00d7", "\u00b2", "\uff58", "\u200b", "\u202e", "\ufeff", "\u00a0",
    "\U0001f600", "\ud800", "\udcff", "\u0301", "１", "٣", "ⅸ", "ß", "İ", "ﬁ",
]
_TOKENS = [
    "x", "y", "z", "pi", "e", "tau", "sin", "log", "ln", "where", "dot", "sum", "atan2", "_",
    "x1", "(", ")", "[", "]", ",", "+", "-", "*", "/", "^", "**", "<", "<=", ">", ">=", "==",
    "!=", " ", "\t", "\n", "[0]", "[99999999999]", "0", "1", "2.5", ".5", "5.", "1e3",
    "1e999", "1e-999", "9" * 400, "0x10", "1_000", "nan", "inf", "-", "()", "[]", "[[", "]]",
]


def _mutate(text: str, draw) -> str:
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "delete", "replace", "duplicate"]))
        piece = draw(st.sampled_from(_TOKENS + HOSTILE_SNIPPETS))
        if op == "insert":
            text = text[:i] + piece + text[i:]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 3)):]
        elif op == "replace":
            text = text[:i] + piece + text[i + 1:]
        else:
            text = text[:i] + text[i:i + 5] * draw(st.integers(2, 50)) + text[i:]
    return text


@st.composite
def _mutated(draw) -> str:
    _, text = draw(expressions())
    return _mutate(text, draw)


#: hostile text for the parser: anything a person or a script could hand over
junk_text = st.one_of(
    st.text(max_size=80),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=40),
    st.text(alphabet="()[]+-*/^<>=!,. xye0123456789\x00", max_size=120),
    st.lists(st.sampled_from(_TOKENS + HOSTILE_SNIPPETS), max_size=60).map("".join),
    st.lists(st.sampled_from(_TOKENS), max_size=60).map(" ".join),
    _mutated(),
    st.builds(lambda d, inner: "(" * d + inner + ")" * d, st.integers(150, 260),
              st.sampled_from(["x", "", "x+", ")(", "-x"])),
    st.builds(lambda d, op: op * d + "x", st.integers(150, 260),
              st.sampled_from(["-", "+", "2^", "sin(", "[", "x*", "x["])),
)

