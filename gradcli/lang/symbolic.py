"""Derivative formulas: an expression differentiated symbolically with the engine's own rules.

Each function and operator of the engine's table carries its derivative's expression form
(``Primitive.form``: ``cos(x)`` for sin, text over the rule's names ``x``/``a``/``b`` and
``y`` for the result). This module turns an expression (or a program) into a small algebra
of interned nodes, differentiates it with those forms (the chain rule, forward), and prints
the result in the language, so every formula parses back and evaluates with gradcli itself.

The algebra simplifies as it builds, deterministically: constants fold, 0 and 1 drop,
numeric coefficients and like terms collect (``x + x`` is ``2*x``), powers of the same base
merge (``x*x^2`` is ``x^3``), and products are never expanded. Nodes are interned (one
object per distinct expression), so equal subexpressions are shared and compared by
identity, and each node's text is built once, bounded by :data:`MAX_TEXT` characters: a
longer closed form is reported as too long instead of being built.

Vectors: a vector variable's components are ``x[0]``, ``x[1]``...; ``sum``, ``mean``,
``norm``, ``dot``, ``prod``, ``logsumexp`` and ``softmax`` of vectors, ``@`` of two vectors,
indexing and slices differentiate componentwise. A square matrix variable has ``det``,
``inv``, ``transpose`` and its entries ``A[i, j]`` (d det(A) = det(A)·inv(A)ᵀ : dA); the
rest of matrices (``solve``, a matrix ``@``, matrix sums) has no formula yet:
:class:`FormulaError` names what.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.engine import rules as R
from gradcli.errors import FormulaError
from gradcli.lang.ast import (
    Assign,
    Binary,
    Call,
    Compare,
    Const,
    Define,
    Index,
    Node,
    Num,
    Program,
    Ref,
    Slice,
    Unary,
    Var,
    Vector,
    fold,
    walk,
)
from gradcli.lang.names import CONSTANTS, FUNCTIONS

__all__ = ["MAX_TEXT", "Algebra", "Expr", "FormulaError", "Symbolic", "TooLarge"]

#: the longest text a closed form may have (characters); longer ones are not built
MAX_TEXT = 20_000
#: the work of building formulas, counted in steps: a term or factor handled, a node's
#: argument made or looked up, a new node (NODE_STEPS), a derivative remembered
#: (MEMO_STEPS), TEXT_STEP characters of a new node's text. Each step takes at most about
#: STEP_BYTES of memory and a microsecond or two, so a limit on steps (the caller gives it
#: from the memory budget) bounds both; shared subexpressions are made once
STEP_BYTES, NODE_STEPS, MEMO_STEPS, TEXT_STEP = 128, 5, 2, 64
#: a sum or product of more terms than this stays one term or factor of a larger one
#: instead of being spread into it, so a chain of n rules makes O(n) nodes, not O(n^2)
SPLICE = 16
_ADD, _MUL, _NEG, _POW, _ATOM, _CMP = 2, 3, 2, 5, 6, 1
#: the language functions with a vector argument and a scalar value, differentiated here
REDUCTIONS = ("sum", "mean", "norm", "dot", "prod", "logsumexp")
#: a square matrix variable's functions: det(A) is scalar, inv(A) and transpose(A) are
#: matrices whose entries (inv(A)[i, j]) differentiate
MATRIX = ("det", "inv", "transpose")
#: language functions that have no formula yet (matrices, axes and losses)
NO_FORMULA = ("solve", "outer", "cumsum", "log_softmax",
              "cross_entropy", "trace")





class TooLarge(FormulaError):
    """Building the formulas would take more than ``limit`` steps (:data:`STEP_BYTES`)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"building the formulas takes more than {limit:,} steps")
        self.limit = limit


class Expr:
    """One interned node of the algebra. ``kind`` is num, const, var, ref, idx, add, mul,
    pow, call, cmp or vec; ``data`` its non-node part; ``args`` its child nodes."""

    __slots__ = ("kind", "data", "args", "shape", "text", "prec", "__weakref__")

    def __init__(self, kind: str, data: Any, args: tuple[Expr, ...], shape: tuple) -> None:
        self.kind, self.data, self.args, self.shape = kind, data, args, shape
        self.text: str | None = None
        self.prec = _ATOM

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"

    @property
    def value(self) -> float | None:
        """The number a num node holds (None for anything else)."""
        return self.data if self.kind == "num" else None


def _num_text(v: float) -> str:
    """A number as the language reads it back: ``2``, ``0.5``, ``1e+20``, ``inf``; nan, which
    the language has no name for (``nan`` would be a variable), as ``(0/0)``."""
    if v != v:
        return "(0/0)"
    if v.is_integer() and abs(v) < 1e16:
        return str(int(v))
    return repr(v)


def _fraction(c: float) -> tuple[float, float]:
    """``c`` as (numerator, denominator) when it is a small fraction, else (c, 1)."""
    for q in (2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 12.0):
        p = c * q
        if p.is_integer() and abs(p) < 1e6 and not (c * 1.0).is_integer():
            return p, q
    return c, 1.0


def _wrap(e: Expr, need: bool) -> str:
    assert e.text is not None
    return f"({e.text})" if need else e.text


class Algebra:
    """One session's interned nodes; the smart constructors simplify as they build."""

    def __init__(self, limit: int) -> None:
        #: the steps of work (and memory) building may take, and those taken
        self.limit, self.spent = limit, 0
        self._table: dict[tuple, Expr] = {}
        self._order: dict[int, tuple] = {}
        self._selects: dict[int, bool] = {}  # node -> it holds a where with a zero branch
        self._units: dict[int, Expr] = {}  # product -> itself without its coefficient
        #: while on, products keep a base's positive and negative powers apart (a
        #: comparison's operands: cancelling x/x to 1 would change its outcome at x = 0)
        self.faithful = False
        self.zero, self.one = self.num(0.0), self.num(1.0)

    # --- interning and text ---------------------------------------------------------------
    def _make(self, kind: str, data: Any, args: tuple[Expr, ...], shape: tuple = ()) -> Expr:
        key = (kind, data, tuple(id(a) for a in args))
        self._spend(len(args))
        found = self._table.get(key)
        if found is not None:
            return found
        e = Expr(kind, data, args, shape)
        self._table[key] = e
        self._text(e)
        self._spend(NODE_STEPS + len(e.text or "") // TEXT_STEP)
        self._order[id(e)] = self._sort_key(e)
        self._selects[id(e)] = self._selecting(e)
        return e

    def _spend(self, steps: int) -> None:
        """Count ``steps`` of work against the limit; past it, :class:`TooLarge`."""
        self.spent += steps
        if self.spent > self.limit:
            raise TooLarge(self.limit)

    def _sort_key(self, e: Expr) -> tuple:
        """Deterministic order of terms and factors: simple atoms first, higher powers of
        a sum's terms first, then by text."""
        rank = {"num": 0, "const": 1, "var": 1, "idx": 1, "ref": 1, "pow": 2, "call": 3,
                "cmp": 4, "vec": 4, "mul": 2, "add": 5}[e.kind]
        atoms = ("var", "idx", "ref")
        degree = 1.0 if e.kind in atoms else 0.0
        if e.kind == "mul":
            degree = sum(x for b, x in zip(e.args, e.data[1], strict=True) if b.kind in atoms)
        return (-degree, rank, len(e.text or "~" * MAX_TEXT), e.text or "")

    def key(self, e: Expr) -> tuple:
        return self._order[id(e)]

    def _text(self, e: Expr) -> None:
        kind, data, args = e.kind, e.data, e.args
        if any(a.text is None for a in args):
            return
        if sum(len(a.text) for a in args) > MAX_TEXT:  # type: ignore[arg-type]
            return  # every argument's text is part of this one: too long, never built
        text, prec = None, _ATOM
        if kind == "num":
            text, prec = _num_text(abs(data)), _ATOM
            if data < 0:
                text, prec = "-" + text, _NEG
        elif kind in ("const", "var", "ref"):
            text = data
        elif kind == "idx":
            text = f"{_wrap(args[0], args[0].prec < _ATOM)}[{_key_text(data)}]"
        elif kind == "call":
            text = f"{data}({', '.join(a.text for a in args)})"  # type: ignore[misc]
        elif kind == "vec":
            text = f"[{', '.join(a.text for a in args)}]"  # type: ignore[misc]
        elif kind == "cmp":
            a, b = args
            text, prec = f"{_wrap(a, a.prec <= _CMP)} {data} {_wrap(b, b.prec <= _CMP)}", _CMP
        elif kind == "pow":
            a, b = args
            text, prec = f"{_wrap(a, a.prec <= _POW)}^{_wrap(b, b.prec < _POW)}", _POW
        elif kind == "mul":
            text, prec = _mul_text(data[0], list(zip(args, data[1], strict=True)))
        elif kind == "add":
            const, coefs = data
            # positive terms first, then negative ones, the constant last (first when
            # every term is negative: 1 - x^2)
            pairs = sorted(zip(args, coefs, strict=True), key=lambda tc: tc[1] < 0)
            pieces = [_mul_text(c, product_factors(t))[0] for t, c in pairs]
            if any(p is None for p in pieces):
                return
            if const:
                number = _num_text(abs(const)) if const > 0 else "-" + _num_text(abs(const))
                first = const > 0 and pairs[0][1] < 0
                pieces.insert(0 if first else len(pieces), number)
            text = pieces[0]
            for p in pieces[1:]:
                text += f" - {p[1:]}" if p.startswith("-") else f" + {p}"  # type: ignore
            prec = _ADD
        if text is not None and len(text) <= MAX_TEXT:
            e.text, e.prec = text, prec

    # --- constructors -------------------------------------------------------------------
    def num(self, v: float) -> Expr:
        return self._make("num", float(v) + 0.0, ())

    def atom(self, kind: str, name: str, shape: tuple = ()) -> Expr:
        return self._make(kind, name, (), shape)

    def add(self, items: Sequence[tuple[Expr, float]]) -> Expr:
        """The sum of ``coef*expr`` over ``items``, like terms collected."""
        const = 0.0
        acc: dict[int, list] = {}
        shape: tuple = ()
        self._spend(len(items))
        for e, c in items:
            if c == 0 or e is self.zero:
                continue
            shape = shape or e.shape
            if e.kind == "num":
                const += c * e.data
            elif e.kind == "add" and len(e.args) <= SPLICE:
                const += c * e.data[0]
                self._spend(len(e.args))
                for t, k in zip(e.args, e.data[1], strict=True):
                    _collect(acc, t, c * k)
            elif e.kind == "mul" and e.data[0] != 1.0:
                _collect(acc, self._unit(e), c * e.data[0])
            else:
                _collect(acc, e, c)
        terms = [(t, k) for t, k in acc.values() if k != 0]
        if not terms:
            return self.num(const)
        if len(terms) == 1 and const == 0:
            return self.scale(*terms[0])
        terms.sort(key=lambda tk: self.key(tk[0]))
        return self._make("add", (const, tuple(k for _, k in terms)),
                          tuple(t for t, _ in terms), shape)

    def _unit(self, e: Expr) -> Expr:
        """A product without its numeric coefficient (made once per product)."""
        unit = self._units.get(id(e))
        if unit is None:
            unit = self._units[id(e)] = self.mul(list(zip(e.args, e.data[1], strict=True)))
        return unit

    def scale(self, e: Expr, c: float) -> Expr:
        if c == 1:
            return e
        return self.mul([(e, 1.0)], c)

    def mul(self, items: Sequence[tuple[Expr, float]], coef: float = 1.0) -> Expr:
        """The product of ``base^exponent`` over ``items`` (numeric exponents), times
        ``coef``: powers of one base merge, numbers fold."""
        acc: dict[int, list] = {}
        shape: tuple = ()
        self._spend(len(items))
        pending = list(reversed(items))  # a stack, taken in the items' order
        while pending:
            b, x = pending.pop()
            if x == 0:
                continue
            shape = shape or b.shape
            if b.kind == "num":
                try:
                    coef *= b.data ** x if x != 1 else b.data
                except ZeroDivisionError:
                    coef *= math.inf
            elif b.kind == "mul" and x in (1.0, -1.0) and len(b.args) <= SPLICE:
                # (a*b)^3 stays: a^3*b^3 rounds apart
                coef *= b.data[0] ** x
                self._spend(len(b.args))
                pending += [(f, k * x) for f, k in zip(reversed(b.args), reversed(b.data[1]),
                                                        strict=True)]
            else:
                # faithful: x/x stays x/x (nan at 0, as the engine has it), x*x is x^2
                _collect(acc, b, x, ~id(b) if self.faithful and x < 0 else None)
        if coef == 0:
            return self.zero
        factors = [(b, x) for b, x in acc.values() if x != 0]
        if not factors:
            return self.num(coef)
        if len(factors) == 1 and factors[0][1] == 1 and coef == 1:
            return factors[0][0]
        factors.sort(key=lambda bx: self.key(bx[0]))
        return self._make("mul", (coef, tuple(x for _, x in factors)),
                          tuple(b for b, _ in factors), shape)

    def product(self, items: Sequence[tuple[Expr, float]], coef: float = 1.0) -> Expr:
        """``mul``, where a factor that is or holds a selection with a zero branch
        (``where(c, 0, v)``: alone, scaled, a factor of a product or a term of a sum) takes
        the other factors into it: ``u*where(c, 0, v)`` is ``where(c, 0, u*v)``, and
        ``u*(where(c, 0, v) + w + z)`` is ``where(c, 0, u*v) + u*(w + z)``.

        That zero is the engine's: its rules select on the incoming gradient, so nothing
        flows into a branch not taken, whatever multiplies it (0*inf and 0*nan would be
        nan). A derivative is a product of a rule's partial and an input's derivative, so
        the derivative rules multiply with this; other factors multiply as ``mul``, never
        expanded, and the factors go into one branch only (the other is 0), so nothing is
        written twice but the factors of a sum's terms that select."""
        flat: list[tuple[Expr, float]] = []
        for b, x in items:
            if b.kind == "mul" and x == 1 and len(b.args) <= SPLICE:
                coef *= b.data[0]
                flat += zip(b.args, b.data[1], strict=True)
            else:
                flat.append((b, x))
        for i, (b, x) in enumerate(flat):
            if x != 1 or not self._selects_zero(b):
                continue
            rest = [*flat[:i], *flat[i + 1:]]
            if b.kind == "call":  # where(c, p, q), p or q zero
                c, p, q = b.args
                return self.call("where", [c, self.product([*rest, (p, 1.0)], coef),
                                           self.product([*rest, (q, 1.0)], coef)])
            if b.kind == "mul":  # a product too long to spread: its selecting factor
                inner = [(f, y) for f, y in zip(b.args, b.data[1], strict=True)]
                return self.product([*rest, *inner], coef * b.data[0])
            const, coefs = b.data  # a sum: its selecting terms each times the rest
            selecting = [(t, k) for t, k in zip(b.args, coefs, strict=True)
                         if self._selects_zero(t)]
            others = self.add([(t, k) for t, k in zip(b.args, coefs, strict=True)
                               if not self._selects_zero(t)] + [(self.num(const), 1.0)])
            return self.add([(self.product([*rest, (t, 1.0)], coef * k), 1.0)
                             for t, k in selecting] + [(self.mul([*rest, (others, 1.0)], coef),
                                                        1.0)])
        return self.mul(flat, coef)

    def _selects_zero(self, e: Expr) -> bool:
        """Whether ``e`` is a ``where`` with a zero branch, or a product or sum with one
        among its factors or terms: a product must keep that zero exact (set as each node
        is made, from its arguments')."""
        return self._selects[id(e)]

    def _selecting(self, e: Expr) -> bool:
        if e.kind == "call" and e.data == "where":
            return e.args[1] is self.zero or e.args[2] is self.zero
        if e.kind == "mul":
            return any(x == 1 and self._selects[id(b)]
                       for b, x in zip(e.args, e.data[1], strict=True))
        if e.kind == "add":
            return any(self._selects[id(t)] for t in e.args)
        return False

    def neg(self, e: Expr) -> Expr:
        return self.scale(e, -1.0)

    def power(self, base: Expr, exponent: Expr) -> Expr:
        if exponent.kind == "num":
            if base.kind == "num":
                with np.errstate(all="ignore"):
                    return self.num(float(np.power(base.data, exponent.data)))
            return self.mul([(base, exponent.data)])
        return self._make("pow", None, (base, exponent), base.shape or exponent.shape)

    def compare(self, op: str, a: Expr, b: Expr) -> Expr:
        va, vb = _known(a), _known(b)
        if va is not None and vb is not None:
            return self.num(float(_COMPARE[op](va, vb)))
        return self._make("cmp", op, (a, b), a.shape or b.shape)

    def call(self, name: str, args: Sequence[Expr], shape: tuple | None = None) -> Expr:
        args = tuple(args)
        if name == "where":
            c, a, b = args
            if c.kind == "num":
                return a if c.data != 0 else b
            # a branch selecting on the same condition again takes its own side of it
            if a.kind == "call" and a.data == "where" and a.args[0] is c:
                a = a.args[1]
            if b.kind == "call" and b.data == "where" and b.args[0] is c:
                b = b.args[2]
            if a is b:
                return a
            args = (c, a, b)
        if name == "log" and args[0].kind == "call" and args[0].data == "sigmoid":
            return self.call("logsigmoid", args[0].args)  # as the compiler fuses it
        known = [_known(a) for a in args]
        if name in _ELEMENTWISE and all(k is not None for k in known):
            with np.errstate(all="ignore"):
                v = float(np.asarray(_ELEMENTWISE[name].fwd(*known)))
            if math.isfinite(v) and v.is_integer():
                return self.num(v)
        if shape is None:
            shape = next((a.shape for a in args if a.shape), ())
        return self._make("call", name, args, shape)

    def index(self, target: Expr, key: Any) -> Expr:
        if isinstance(key, tuple) and len(key) == 2 and len(target.shape) == 2 and all(
                isinstance(k, int) for k in key):
            r, c = target.shape
            i, j = key[0] % r if -r <= key[0] < r else -1, key[1] % c if -c <= key[1] < c \
                else -1
            if i < 0 or j < 0:
                raise FormulaError(f"index [{_key_text(key)}] is outside the {r}x{c} matrix")
            if target.kind == "call" and target.data == "transpose":
                return self.index(target.args[0], (j, i))
            if target.kind == "var" or (target.kind == "call" and target.data == "inv"):
                return self._make("idx", (i, j), (target,), ())
            raise FormulaError("no formula yet for entries of that matrix")
        if len(target.shape) == 2:
            raise FormulaError("a matrix takes two indices, A[i, j]")
        if isinstance(key, int):
            n = target.shape[0]
            i = key + n if key < 0 else key
            if target.kind == "vec":
                return target.args[i]
            if target.kind in ("var", "ref") or (target.kind == "call" and
                                                  target.data == "softmax"):
                return self._make("idx", i, (target,), ())
            return self.component(target, i)
        if isinstance(key, Slice) and target.kind == "var":
            picked = range(target.shape[0])[key.as_slice()]
            return self.vector([self._make("idx", i, (target,), ()) for i in picked])
        raise FormulaError(f"no formula yet for the index [{_key_text(key)}] of "
                           f"{target.text or 'a vector'}")

    def vector(self, items: Sequence[Expr]) -> Expr:
        if any(i.shape for i in items):
            raise FormulaError("no formula yet for matrices (nested brackets)")
        return self._make("vec", None, tuple(items), (len(items),))

    def rebuild(self, e: Expr, swap: Callable[[Expr], Expr | None]) -> Expr | None:
        """``e`` with every node for which ``swap`` gives a node replaced by it, rebuilt
        through the constructors (so it simplifies again); None where that fails."""
        done: dict[int, Expr] = {}
        stack = [(e, False)]
        try:
            while stack:
                node, ready = stack.pop()
                if id(node) in done:
                    continue
                swapped = swap(node)
                if swapped is not None:
                    done[id(node)] = swapped
                    continue
                if not ready and node.args:
                    stack.append((node, True))
                    stack.extend((x, False) for x in node.args if id(x) not in done)
                    continue
                args = [done[id(x)] for x in node.args]
                done[id(node)] = self._remake(node, args)
        except TooLarge:
            raise
        except FormulaError:
            return None
        return done[id(e)]

    def _remake(self, e: Expr, args: list[Expr]) -> Expr:
        kind = e.kind
        if not args:
            return e
        if kind == "add":
            return self.add([(t, c) for t, c in zip(args, e.data[1], strict=True)]
                            + [(self.num(e.data[0]), 1.0)])
        if kind == "mul":
            return self.mul(list(zip(args, e.data[1], strict=True)), e.data[0])
        if kind == "pow":
            return self.power(*args)
        if kind == "cmp":
            return self.compare(e.data, *args)
        if kind == "vec":
            return self.vector(args)
        if kind == "idx":
            if not args[0].shape:
                raise FormulaError("indexing a scalar")
            return self.index(args[0], e.data)
        if e.data in REDUCTIONS:
            return self.call(e.data, args, ())
        return self.call(e.data, args, args[0].shape if e.data == "softmax" else None)

    def component(self, e: Expr, i: int) -> Expr:
        """Component ``i`` of a vector-valued node (a scalar node is itself)."""
        if not e.shape:
            return e
        kind = e.kind
        if kind == "vec":
            return e.args[i]
        if len(e.shape) == 2:
            if kind in ("var", "call"):
                return self.index(e, i)
            if kind not in ("add", "mul"):
                raise FormulaError(f"no formula yet for an entry of {e.text}")
        if kind in ("var", "ref"):
            return self._make("idx", i, (e,), ())
        if kind == "add":
            return self.add([(self.component(t, i), k)
                             for t, k in zip(e.args, e.data[1], strict=True)]
                            + [(self.num(e.data[0]), 1.0)])
        if kind == "mul":
            return self.mul([(self.component(b, i), x)
                             for b, x in zip(e.args, e.data[1], strict=True)], e.data[0])
        if kind == "pow":
            return self.power(*(self.component(a, i) for a in e.args))
        if kind == "cmp":
            return self.compare(e.data, *(self.component(a, i) for a in e.args))
        if kind == "call" and e.data == "softmax":
            return self._make("idx", i, (e,), ())
        if kind == "call":
            return self.call(e.data, [self.component(a, i) for a in e.args])
        raise FormulaError(f"no formula yet for a component of {e.text}")


def _collect(acc: dict[int, list], e: Expr, c: float, key: int | None = None) -> None:
    key = id(e) if key is None else key
    slot = acc.get(key)
    if slot is None:
        acc[key] = [e, c]
    else:
        slot[1] += c


def _key_text(key: Any) -> str:
    def one(k: Any) -> str:
        if isinstance(k, int):
            return str(k)
        parts = ["" if v is None else str(v) for v in (k.start, k.stop, k.step)]
        return ":".join(parts if k.step is not None else parts[:2])
    return ", ".join(one(k) for k in (key if isinstance(key, tuple) else (key,)))


def _known(e: Expr) -> float | None:
    if e.kind == "num":
        return e.data
    if e.kind == "const":
        return CONSTANTS[e.data]
    return None


_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}
#: language name -> engine primitive of every elementwise function (min/max are the
#: engine's minimum/maximum)
_ELEMENTWISE = {name: R.PRIMITIVES[spec.engine] for name, spec in FUNCTIONS.items()
                if spec.kind in ("elementwise", "binary") and spec.engine in R.PRIMITIVES
                and R.PRIMITIVES[spec.engine].form is not None}
_ELEMENTWISE["pow"] = R.PRIMITIVES["pow"]


def _mul_text(coef: float, factors: list[tuple[Expr, float]]) -> tuple[str | None, int]:
    """Text of ``coef * prod(base^x)``: negative powers under a ``/``, a small fractional
    coefficient split (``x/2``, not ``0.5*x``)."""
    if any(b.text is None for b, _ in factors):
        return None, _ATOM
    p, q = _fraction(abs(coef))
    top = [_power_text(b, x) for b, x in factors if x > 0]
    bottom = [_power_text(b, -x) for b, x in factors if x < 0]
    if p != 1 or not top:
        top.insert(0, (_num_text(p), _ATOM))
    if q != 1:
        bottom.insert(0, (_num_text(q), _ATOM))
    if len(top) == 1 and not bottom:
        text, prec = top[0]
    else:
        text = "*".join(s if pr >= _MUL else f"({s})" for s, pr in top)
        prec = _MUL
    if bottom:
        if len(bottom) == 1:
            under = bottom[0][0] if bottom[0][1] > _MUL else f"({bottom[0][0]})"
        else:
            under = "(" + "*".join(s if pr >= _MUL else f"({s})" for s, pr in bottom) + ")"
        text = f"{text}/{under}"
    if coef < 0:
        return "-" + (text if prec >= _MUL else f"({text})"), _NEG
    return text, prec


def product_factors(t: Expr) -> list[tuple[Expr, float]]:
    """A sum's term as (base, exponent) factors: a product's own (its coefficient is 1)."""
    if t.kind == "mul":
        return list(zip(t.args, t.data[1], strict=True))
    return [(t, 1.0)]


def _power_text(b: Expr, x: float) -> tuple[str, int]:
    if x == 1:
        return b.text, b.prec  # type: ignore[return-value]
    if x == 0.5:
        return f"sqrt({b.text})", _ATOM
    return f"{_wrap(b, b.prec <= _POW)}^{_num_text(x)}", _POW


class Symbolic:
    """An expression or program in the algebra: its value, its steps, its derivatives.

    ``shapes`` gives vector variables their length (``{"x": (3,)}``); other variables are
    scalars. ``steps`` holds each named step's value (its references to earlier steps stay
    references), ``result`` the program's value. ``limit`` bounds the steps of work of
    building (each :data:`STEP_BYTES` of memory; the caller has it from its memory
    budget): past it, :class:`TooLarge`.
    """

    def __init__(self, tree: Node, shapes: Mapping[str, tuple] | None = None, *,
                 limit: int) -> None:
        self.alg = Algebra(limit)
        self.shapes = dict(shapes or {})
        self.steps: dict[str, Expr] = {}
        self.functions: dict[str, Define] = {}
        self.order: list[tuple[str | None, Expr]] = []  # every statement's value, in order
        self._step_of: dict[int, Expr] = {}  # a step's value -> the step (a rule's y)
        self._calls: dict[tuple, Expr] = {}  # (function, its arguments) -> its value
        result: Expr | None = None
        defined = {s.name for s in (tree.statements if isinstance(tree, Program) else ())
                   if isinstance(s, Define)}
        for node in walk(tree):
            if isinstance(node, Call) and node.func in NO_FORMULA and node.func not in defined:
                raise FormulaError(f"no formula yet for {node.func}: it works on matrices "
                                   "or along axes, which the formulas do not cover")
        for statement in tree.statements if isinstance(tree, Program) else (tree,):
            if isinstance(statement, Define):
                self.functions[statement.name] = statement
            elif isinstance(statement, Assign):
                value = self.build(statement.value, {})
                self.steps[statement.name] = value
                self.order.append((statement.name, value))
                result = self.alg.atom("ref", statement.name, value.shape)
                self._step_of.setdefault(id(value), result)
            else:
                result = self.build(statement, {})
                self.order.append((None, result))
        assert result is not None
        self.result = result
        self._memo: dict[tuple, Expr] = {}

    # --- from the tree ------------------------------------------------------------------
    def build(self, node: Node, scope: Mapping[str, Expr]) -> Expr:
        return fold(node, lambda n, parts: self._combine(n, parts, scope, user=True))

    def _combine(self, node: Node, parts: list[Expr], scope: Mapping[str, Expr],
                 user: bool = False) -> Expr:
        a = self.alg
        if user and isinstance(node, Compare) and not a.faithful:
            # the user's comparison decides a branch: its operands are built again without
            # cancelling powers, so that x/x > 0.5 is false at x = 0, as the engine finds
            a.faithful = True
            try:
                parts = [self.build(node.left, scope), self.build(node.right, scope)]
            finally:
                a.faithful = False
        if isinstance(node, Num):
            return a.num(node.value)
        if isinstance(node, Const):
            return a.atom("const", node.name)
        if isinstance(node, Var):
            shape = tuple(self.shapes.get(node.name, ()))
            if len(shape) > 2:
                raise FormulaError(f"no formula yet for the array variable '{node.name}'")
            return a.atom("var", node.name, shape)
        if isinstance(node, Ref):
            if node.name in scope:
                return scope[node.name]
            return a.atom("ref", node.name, self.steps[node.name].shape)
        if isinstance(node, Unary):
            return parts[0] if node.op == "+" else a.neg(parts[0])
        if isinstance(node, Compare):
            return a.compare(node.op, *parts)
        if isinstance(node, Binary):
            left, right = parts
            if node.op == "@" and any(len(p.shape) == 2 for p in parts):
                raise FormulaError("no formula yet for @ with a matrix")
            if node.op != "*" and any(len(p.shape) == 2 for p in parts) or (
                    node.op == "*" and sum(len(p.shape) > 0 for p in parts) > 1 and any(
                        len(p.shape) == 2 for p in parts)):
                raise FormulaError("no formula yet for matrix arithmetic: only det, inv, "
                                   "transpose, A[i, j] and a scalar times a matrix")
            _same_length(node.op, left, right)
            if node.op == "+":
                return a.add([(left, 1.0), (right, 1.0)])
            if node.op == "-":
                return a.add([(left, 1.0), (right, -1.0)])
            if node.op == "*":
                return a.mul([(left, 1.0), (right, 1.0)])
            if node.op == "/":
                return a.mul([(left, 1.0), (right, -1.0)])
            if node.op == "^":
                return a.power(left, right)
            if left.shape and right.shape:  # @ of two vectors is their dot product
                return a.call("dot", [left, right], ())
            raise FormulaError("no formula yet for @ with a matrix")
        if isinstance(node, Vector):
            return a.vector(parts)
        if isinstance(node, Index):
            if not parts[0].shape:
                raise FormulaError("indexing a scalar")
            if len(node.keys) > 1:
                return a.index(parts[0], node.keys)
            return a.index(parts[0], node.keys[0])
        if isinstance(node, Call):
            if node.func in self.functions:  # a call with the same arguments is made once
                key = (node.func, tuple(id(p) for p in parts), a.faithful)
                if key not in self._calls:
                    define = self.functions[node.func]
                    self._calls[key] = self.build(define.body, dict(zip(
                        define.params, parts, strict=True)))
                return self._calls[key]
            return self._call(node.func, parts)
        raise FormulaError(f"no formula for {type(node).__name__}")

    def _call(self, name: str, parts: list[Expr]) -> Expr:
        a = self.alg
        if name == "pow":
            return a.power(*parts)
        if name in NO_FORMULA:
            raise FormulaError(f"no formula yet for {name}: it works on matrices or along "
                               "axes, which the formulas do not cover")
        if name in MATRIX:
            (m,) = parts
            if len(m.shape) != 2 or m.shape[0] != m.shape[1]:
                raise FormulaError(f"{name} needs a square matrix")
            if name != "transpose" and m.kind != "var":
                raise FormulaError(f"no formula yet for {name} of a matrix expression: only "
                                   "of a matrix variable")
            shape = () if name == "det" else m.shape[::-1]
            return a.call(name, parts, shape)
        if any(len(p.shape) == 2 for p in parts):
            raise FormulaError(f"no formula yet for {name} of a matrix")
        if name in ("min", "max") and len(parts) == 1:
            raise FormulaError(f"no formula yet for {name} of one vector")
        if name == "norm" and len(parts) == 2:
            raise FormulaError("no formula yet for norm(v, p): only the 2-norm norm(v)")
        if name in REDUCTIONS:
            if any(not p.shape for p in parts):
                raise FormulaError(f"{name} needs a vector argument")
            return a.call(name, parts, ())
        if name == "softmax":
            if not parts[0].shape:
                raise FormulaError("softmax needs a vector argument")
            return a.call(name, parts, parts[0].shape)
        if name == "where":
            return a.call("where", parts)
        if name not in _ELEMENTWISE:
            raise FormulaError(f"no formula yet for {name}")
        return a.call(name, parts)

    # --- derivatives --------------------------------------------------------------------
    def derivative(self, e: Expr, wrt: tuple, through: bool = True) -> Expr:
        """d e / d wrt. ``wrt`` is ("var", name), ("idx", name, i) or ("ref", name).
        ``through`` expands a step's derivative through its value (the closed form); off,
        a step is an input of its own (the backward program's partials)."""
        memo = self._memo
        # iterative post-order over the nodes whose derivative is needed
        stack = [(e, False)]
        while stack:
            node, ready = stack.pop()
            k = (id(node), wrt, through)
            if k in memo:
                continue
            deps = self._needs(node, through)
            if not ready and any((id(d), wrt, through) not in memo for d in deps):
                stack.append((node, True))
                stack.extend((d, False) for d in deps if (id(d), wrt, through) not in memo)
                continue
            memo[k] = self._rule(node, wrt, through)
            self.alg._spend(MEMO_STEPS)
        return memo[(id(e), wrt, through)]

    def _needs(self, e: Expr, through: bool) -> list[Expr]:
        if e.kind == "ref":
            return [self.steps[e.data]] if through else []
        if e.kind == "idx":
            return self._component_deps(e, through)
        if e.kind == "call" and e.data in REDUCTIONS:
            return [self.alg.component(p, i) for p in e.args for i in range(p.shape[0])]
        if e.kind == "call" and e.data == "det":
            return self._entries(e.args[0])
        if e.kind in ("num", "const", "var", "cmp"):
            return []
        return list(e.args)

    def _entries(self, m: Expr) -> list[Expr]:
        r, c = m.shape
        return [self.alg.index(m, (i, j)) for i in range(r) for j in range(c)]

    def _component_deps(self, e: Expr, through: bool) -> list[Expr]:
        target = e.args[0]
        if target.kind == "var":
            return []
        if target.kind == "call" and target.data == "inv":
            return self._entries(target.args[0])
        if target.kind == "ref":
            return [self.alg.component(self.steps[target.data], e.data)] if through else []
        (u,) = target.args  # softmax(u)
        return [self.alg.component(u, i) for i in range(u.shape[0])]

    def _rule(self, e: Expr, wrt: tuple, through: bool) -> Expr:
        a, kind = self.alg, e.kind

        def d(x: Expr) -> Expr:
            return self._memo[(id(x), wrt, through)]

        if kind in ("num", "const", "cmp"):
            return a.zero
        if kind == "var":
            if e.shape:
                raise FormulaError(f"the vector '{e.data}' as a whole has no scalar derivative")
            return a.one if wrt == ("var", e.data) else a.zero
        if kind == "ref":
            if wrt == ("ref", e.data):
                return a.one
            return d(self.steps[e.data]) if through else a.zero
        if kind == "idx":
            target = e.args[0]
            if target.kind == "var":
                return a.one if wrt == ("idx", target.data, e.data) else a.zero
            if target.kind == "ref":
                if not through:
                    raise FormulaError("no backward program yet for vector steps")
                return d(a.component(self.steps[target.data], e.data))
            if target.kind == "call" and target.data == "inv":
                # d inv(A)[i, j] = -sum_kl inv(A)[i, k] dA[k, l] inv(A)[l, j]
                (m,) = target.args
                i, j = e.data
                n = m.shape[0]
                return a.add([(a.product([(a.index(target, (i, k)), 1.0),
                                      (d(a.index(m, (k, l))), 1.0),
                                      (a.index(target, (l, j)), 1.0)]), -1.0)
                              for k in range(n) for l in range(n)
                              if d(a.index(m, (k, l))) is not a.zero])
            (u,) = target.args  # softmax(u)[k]: s_k*(du_k - sum_j s_j du_j)
            n, k = u.shape[0], e.data
            s = [a.index(target, j) for j in range(n)]
            inner = a.add([(d(a.component(u, k)), 1.0)] + [
                (a.product([(s[j], 1.0), (d(a.component(u, j)), 1.0)]), -1.0) for j in range(n)])
            return a.product([(s[k], 1.0), (inner, 1.0)])
        if kind == "add":
            return a.add([(d(t), c) for t, c in zip(e.args, e.data[1], strict=True)])
        if kind == "mul":
            coef, exps = e.data
            terms = []
            for i, (b, x) in enumerate(zip(e.args, exps, strict=True)):
                db = d(b)
                if db is a.zero:
                    continue
                rest = [(f, y - 1.0 if j == i else y)
                        for j, (f, y) in enumerate(zip(e.args, exps, strict=True))]
                terms.append((a.product(rest + [(db, 1.0)], coef * x), 1.0))
            return a.add(terms)
        if kind == "pow":
            return self._chain(e, "pow", list(e.args), d)
        if kind == "call":
            name = e.data
            if name == "where":
                c, x, y = e.args
                return a.call("where", [c, d(x), d(y)])
            if name in REDUCTIONS:
                return self._reduction(e, d)
            if name == "det":  # d det(A) = det(A) * sum_ij inv(A)[j, i] dA[i, j]
                (m,) = e.args
                inv = a.call("inv", [m], m.shape)
                n = m.shape[0]
                return a.add([(a.product([(e, 1.0), (a.index(inv, (j, i)), 1.0),
                                      (d(a.index(m, (i, j))), 1.0)]), 1.0)
                              for i in range(n) for j in range(n)
                              if d(a.index(m, (i, j))) is not a.zero])
            if name in MATRIX:
                raise FormulaError(f"{name} is a matrix: take an entry, {name}(A)[0, 1]")
            if name == "softmax":
                raise FormulaError("softmax is a vector: take a component, softmax(x)[0]")
            return self._chain(e, name, list(e.args), d)
        raise FormulaError(f"no formula yet for the derivative of {e.text}")

    def _chain(self, e: Expr, name: str, args: list[Expr], d: Callable[[Expr], Expr]) -> Expr:
        """Sum over inputs of (the rule's form at the inputs) * (the input's derivative)."""
        a = self.alg
        forms = _forms(name)
        names = ("x",) if len(args) == 1 else ("a", "b")
        terms = []
        for form, arg in zip(forms, args, strict=True):
            darg = d(arg)
            if darg is a.zero:
                continue
            env = dict(zip(names, args, strict=True))
            env["y"] = self._step_of.get(id(e), e)  # sigmoid's y*(1 - y) as p*(1 - p)
            partial = _instantiate(self, form, env)
            terms.append((a.product([(partial, 1.0), (darg, 1.0)]), 1.0))
        return a.add(terms)

    def _reduction(self, e: Expr, d: Callable[[Expr], Expr]) -> Expr:
        a, name = self.alg, e.data
        u = e.args[0]
        n = u.shape[0]
        comps = [a.component(u, j) for j in range(n)]
        if name in ("sum", "mean"):
            total = a.add([(d(c), 1.0) for c in comps])
            return total if name == "sum" else a.scale(total, 1.0 / n)
        if name == "dot":
            other = [a.component(e.args[1], j) for j in range(n)]
            return a.add([(a.product([(d(x), 1.0), (y, 1.0)]), 1.0) for x, y in zip(
                comps, other, strict=True)] + [(a.product([(x, 1.0), (d(y), 1.0)]), 1.0)
                                                for x, y in zip(comps, other, strict=True)])
        if name == "prod":
            return a.add([(a.product([(c, 1.0) for k, c in enumerate(comps) if k != j]
                                 + [(d(comps[j]), 1.0)]), 1.0) for j in range(n)])
        if name == "logsumexp":
            soft = a.call("softmax", [u], u.shape)
            return a.add([(a.product([(a.index(soft, j), 1.0), (d(comps[j]), 1.0)]), 1.0)
                          for j in range(n)])
        # norm: sum_j u_j du_j / norm(u), 0 where norm(u) = 0 (the engine's selection)
        inner = a.add([(a.product([(c, 1.0), (d(c), 1.0)]), 1.0) for c in comps])
        if inner is a.zero:
            return a.zero
        return a.call("where", [a.compare("==", e, a.zero), a.zero,
                                a.product([(inner, 1.0), (e, -1.0)])])


_FORM_TREES: dict[tuple[str, int], Node] = {}


def _forms(name: str) -> list[Node]:
    """The parsed forms of a language function's (or ``pow``'s) rule, one per input."""
    from gradcli.lang.parser import parse_expression
    from gradcli.lang.tokens import tokenize

    prim = _ELEMENTWISE.get(name)
    if prim is None or prim.form is None:
        raise FormulaError(f"no formula yet for {name}")
    out = []
    for i, text in enumerate(prim.form):
        key = (name, i)
        if key not in _FORM_TREES:
            _FORM_TREES[key] = parse_expression(text, tokenize(text))
        out.append(_FORM_TREES[key])
    return out


def _instantiate(sym: Symbolic, form: Node, env: Mapping[str, Expr]) -> Expr:
    """A rule's form with its names bound: ``x``/``a``/``b`` the inputs, ``y`` the result."""
    def combine(n: Node, parts: list[Expr]) -> Expr:
        if isinstance(n, Var):
            return env[n.name]
        return sym._combine(n, parts, {})
    return fold(form, combine)


def _same_length(op: str, left: Expr, right: Expr) -> None:
    if left.shape and right.shape and left.shape != right.shape:
        raise FormulaError(f"'{op}' of vectors of lengths {left.shape[0]} and "
                           f"{right.shape[0]}")
