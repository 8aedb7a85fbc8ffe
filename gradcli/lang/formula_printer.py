"""The formula printer: each derivative a computation gives, as an expression of its own.

``gradcli.formula`` (``formulas/derivative_formulas.py``) applies it to one request. The
derivatives come from ``lang/symbolic.py`` (the expression differentiated with the
engine's rule forms, simplified); this module pairs them with the commands' columns, as
``evaluate`` names them: ``df/dx`` (grad), ``df[i]/dx`` (jacobian), ``d2f/dxdy``
(hessian), ``d3f/dx2dy`` (diff), ``laplacian``, ``div``, ``curl``, ``jvp``, ``hvp/dx``. No
points are needed: a variable is a scalar unless ``at`` gives it a vector value.

Three forms: ``expr`` (the closed forms, after the steps of a program they use), ``latex``
and ``program``, the reverse-mode program of a scalar formula: the forward steps, then one
adjoint ``v_bar`` per step and variable, in reverse order (backpropagation written out).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ExpressionError, FormulaError
from gradcli.lang import parse, symbolic
from gradcli.lang.ast import Call as CallNode
from gradcli.lang.ast import Define as DefineNode
from gradcli.lang.ast import free_variables, walk
from gradcli.lang.parser import MAX_DEPTH
from gradcli.lang.program import ProgramText
from gradcli.lang.symbolic import MAX_TEXT, Expr, Symbolic, product_factors

__all__ = ["MAX_OUTPUT", "TooLarge", "TooLong", "Derivatives", "render", "split_names",
           "backward_program", "latex", "latex_name"]


#: a closed form longer than this many characters, and this many times the backward
#: program, is reported instead of printed (its shared subexpressions repeat)
LONG_TEXT, LONG_RATIO = 1_000, 4
#: the most characters the formulas of one request may have in all (every column, each
#: component of a vector counted; each one is at most MAX_TEXT): a program file holds them
MAX_OUTPUT = 1_000_000


class TooLarge(EvaluationError):
    """The formulas asked for are past a limit on their size: :data:`MAX_OUTPUT`
    characters in all, or more work than the memory budget allows (``memory=``; see
    ``symbolic.STEP_BYTES``). Building stopped there; nothing is returned."""


class TooLong(str):
    """A formula's place when its closed form is much longer than the backward program, or
    would not parse back (nested too deep): the text says so; ``length`` is the closed
    form's length (None: over MAX_TEXT)."""

    length: int | None

    def __new__(cls, length: int | None, deep: bool = False) -> TooLong:
        if deep:
            text = (f"the closed form nests deeper than the {MAX_DEPTH} levels the language "
                    "reads back: name shared parts as steps")
        elif length:
            text = (f"the closed form is {length:,} characters long, much longer than the "
                    "backward program: ask for the program form")
        else:
            text = (f"the closed form is over {MAX_TEXT:,} characters long: name shared "
                    "parts as steps (the program form may be shorter)")
        made = super().__new__(cls, text)
        made.length = length
        return made


def split_names(wrt: Any, parameter: str = "wrt") -> list[str]:
    items = [w.strip() for part in ([wrt] if isinstance(wrt, str) else wrt)
             for w in str(part).split(",")]
    if not items or any(not w for w in items):
        raise EvaluationError(f"{parameter}={wrt!r}: give names separated by commas, "
                              "e.g. 'x,y'")
    return items


class Derivatives:
    """The derivatives of one request, named as the command names its columns."""

    def __init__(self, sym: Symbolic, names: list[str], point: Mapping[str, Any],
                 tree: Any) -> None:
        self.sym, self.alg = sym, sym.alg
        bound = [n for n in point if n in names or n not in sym.steps]
        self.order = bound + [n for n in names if n not in bound]  # binding order
        self.sorted = bound + sorted(n for n in names if n not in bound)
        result = sym.result
        if result.shape:
            self.outputs = [(f"f[{i}]", self.alg.component(result, i))
                            for i in range(result.shape[0])]
        else:
            self.outputs = [("f", result)]

    def targets(self, names: list[str], allow_steps: bool = False,
                parameter: str = "wrt") -> list[tuple[str, tuple]]:
        """(label, wrt key) per name, a vector variable's components in turn; errors name
        ``parameter``, the argument the names came from."""
        out: list[tuple[str, tuple]] = []
        for name in names:
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[(-?\d+)\]", name)
            m2 = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\[(-?\d+)\]\[(-?\d+)\]", name)
            base = m.group(1) if m else m2.group(1) if m2 else name
            if allow_steps and base in self.sym.steps and not m:
                out.append((name, ("ref", name)))
                continue
            if base not in self.order:
                known = ", ".join(self.order) or "none"
                raise EvaluationError(f"{parameter} names '{name}', which is not a variable "
                                      f"of the expression (its variables: {known})")
            shape = tuple(self.sym.shapes.get(base, ()))
            if len(shape) == 2:  # a matrix: its entries A[i][j], as the columns name them
                entries = [(i, j) for i in range(shape[0]) for j in range(shape[1])]
                if m2:
                    i, j = int(m2.group(2)), int(m2.group(3))
                    if not (-shape[0] <= i < shape[0] and -shape[1] <= j < shape[1]):
                        raise EvaluationError(f"{parameter} names '{name}', outside the "
                                              f"{shape[0]}x{shape[1]} matrix '{base}'")
                    entries = [(i % shape[0], j % shape[1])]
                elif m:
                    raise EvaluationError(f"{parameter} names '{name}': a matrix entry is "
                                          f"{base}[i][j]")
                out += [(f"{base}[{i}][{j}]", ("idx", base, (i, j))) for i, j in entries]
                continue
            if m2:
                raise EvaluationError(f"{parameter} names '{name}', but '{base}' is not a "
                                      "matrix")
            if m:
                if not shape:
                    raise EvaluationError(f"{parameter} names '{name}', but '{base}' is a "
                                          "scalar")
                i = int(m.group(2))
                if not -shape[0] <= i < shape[0]:
                    raise EvaluationError(f"{parameter} names '{name}', but '{base}' has "
                                          f"{shape[0]} components")
                i %= shape[0]
                out.append((f"{base}[{i}]", ("idx", base, i)))
            elif shape:
                out += [(f"{base}[{i}]", ("idx", base, i)) for i in range(shape[0])]
            else:
                out.append((base, ("var", base)))
        return out

    def d(self, e: Expr, key: tuple) -> Expr:
        return self.sym.derivative(e, key)

    def scalar(self, what: str) -> Expr:
        if len(self.outputs) > 1:
            raise EvaluationError(f"{what} needs a scalar formula; this one is a vector of "
                                  f"{len(self.outputs)} (jacobian gives its derivatives)")
        return self.outputs[0][1]

    def count(self, columns: Iterable[tuple[str, Expr, list[tuple]]]
              ) -> list[tuple[str, Expr, list[tuple]]]:
        """``columns`` (a computation's formula function's, made one at a time) counted:
        past :data:`MAX_OUTPUT` characters in all, :class:`TooLarge`."""
        out, total = [], 0
        for column in columns:
            text = column[1].text
            total += MAX_TEXT if text is None else len(text)
            if total > MAX_OUTPUT:
                raise TooLarge(f"the formulas are over {MAX_OUTPUT:,} characters in all "
                               f"(at {column[0]}, column {len(out) + 1:,}): ask for "
                               "fewer derivatives (wrt)")
            out.append(column)
        return out

    def diff(self, names: list[str] | None, order: int | None) -> list:
        if names is None:
            if len(self.order) != 1:
                raise EvaluationError("diff needs wrt: the variables of the partial "
                                      f"(the expression has {len(self.order)})")
            names = list(self.order)
        if order is not None:
            if len(names) != 1 and order != len(names):
                raise EvaluationError(f"order={order} needs one wrt name (or as many names)")
            names = names * order if len(names) == 1 else names
        targets = [self.targets([n])[0] for n in names]
        if any(len(self.targets([n])) > 1 for n in names):
            raise EvaluationError("diff's wrt names components of a vector: x[0], x[1]...")
        k = len(targets)
        counts: dict[str, int] = {}
        for label, _ in targets:
            counts[label] = counts.get(label, 0) + 1
        parts = "".join(f"d{n}{c if c > 1 else ''}" for n, c in counts.items())
        cols = []
        for out, e in self.outputs:
            for _, key in targets:
                e = self.d(e, key)
            cols.append((f"d{k if k > 1 else ''}{out}/{parts}", e, []))
        return cols

    def field(self, what: str, names: list[str] | None,
              sizes: tuple[int, ...] | None = None) -> tuple[list[Expr], list[tuple]]:
        """A vector field's components and the variables they pair with (``sizes``: the
        numbers of components the computation takes; None: at least 2)."""
        n = len(self.outputs)
        targets = self.targets(names or self.sorted)
        if n < 2 or (sizes is not None and n not in sizes):
            allowed = " or ".join(map(str, sizes)) if sizes else "at least 2"
            raise EvaluationError(f"{what} needs a vector field of {allowed} "
                                  f"components; this formula has {n}")
        if len(targets) != n:
            shown = ", ".join(label for label, _ in targets)
            raise EvaluationError(f"{what} pairs the {n} components with {n} variables, "
                                  f"got {len(targets)} ({shown}): name them in order with "
                                  "wrt")
        return [e for _, e in self.outputs], [k for _, k in targets]

    def direction(self, direction: Any, unit: bool) -> list[tuple[tuple, float]]:
        if not direction:
            raise EvaluationError("jvp and hvp need direction, e.g. {'x': 1, 'y': 0}")
        from gradcli.lang.spec_text import parse_constant

        pairs: list[tuple[tuple, float]] = []
        for name, value in dict(direction).items():
            keys = self.targets([name], parameter="direction")
            values = np.ravel(np.asarray(
                parse_constant(value) if isinstance(value, str) else value, dtype=float))
            if len(values) != len(keys):
                raise EvaluationError(f"direction gives '{name}' {len(values)} values; it "
                                      f"has {len(keys)} components")
            pairs += [(k, float(c)) for (_, k), c in zip(keys, values, strict=True)]
        if unit:
            size = float(np.sqrt(sum(c * c for _, c in pairs)))
            if size == 0:
                raise EvaluationError("direction is zero: it has no unit vector")
            pairs = [(k, c / size) for k, c in pairs]
        return pairs


#: one function per computation that has formulas, named in its record (``formula=``):
#: ``(columns, asked) -> [(column, formula, wrt keys it is the vector of)]``, ``asked``
#: holding the parameters by name (``wrt`` already split into names)
Columns = Iterable[tuple[str, Expr, list[tuple]]]


def grad_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """df/dx per variable or named step."""
    e = c.scalar("grad")
    return ((f"df/d{label}", c.d(e, key), [key])
            for label, key in c.targets(asked["wrt"] or c.order, allow_steps=True))


def jacobian_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """df[i]/dx per component and variable or named step."""
    targets = c.targets(asked["wrt"] or c.order, allow_steps=True)
    return ((f"d{out}/d{label}", c.d(e, key), [key])
            for out, e in c.outputs for label, key in targets)


def vjp_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """vjp/dx = sum of v_i df[i]/dx per variable or named step."""
    v = asked.get("vector")
    if v is None:
        raise EvaluationError("vjp needs vector, shaped like f, e.g. [1, 0]")
    from gradcli.lang.spec_text import parse_constant

    values = [float(parse_constant(x)) if isinstance(x, str) else float(x)
              for x in np.ravel(np.asarray(v, dtype=object))]
    if len(values) != len(c.outputs):
        raise EvaluationError(f"vector has {len(values)} entries but f has "
                              f"{len(c.outputs)}: v must have one entry per component of f")
    a = c.alg
    return ((f"vjp/d{label}", a.add([(a.scale(c.d(e, key), vi), 1.0)
                                     for (_, e), vi in zip(c.outputs, values, strict=True)]),
             [key]) for label, key in c.targets(asked["wrt"] or c.order, allow_steps=True))


def hessian_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """d2f/dadb for every ordered pair."""
    e = c.scalar("hessian")
    targets = c.targets(asked["wrt"] or c.order)
    return ((f"d2f/d{la}d{lb}", c.d(c.d(e, ka), kb), [])
            for la, ka in targets for lb, kb in targets)


def diff_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """One partial of any order per component."""
    return c.diff(asked["wrt"], asked.get("order"))


def laplacian_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """The sum of the pure second partials per component."""
    names = asked["wrt"]
    targets = c.targets(names or c.order)
    if names and len(set(names)) < len(names):
        raise EvaluationError("wrt names a variable twice")
    a = c.alg
    return ((f"laplacian{out[1:]}", a.add([(c.d(c.d(e, k), k), 1.0) for _, k in targets]), [])
            for out, e in c.outputs)


def div_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """div F = sum of dF_i/dx_i."""
    f, v = c.field("div", asked["wrt"])
    return [("div", c.alg.add([(c.d(f[i], v[i]), 1.0) for i in range(len(f))]), [])]


def curl_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """curl of a field of 2 (one column) or 3 components."""
    f, v = c.field("curl", asked["wrt"], sizes=(2, 3))
    a = c.alg

    def sub(i: int, j: int, k: int, m: int) -> Expr:  # df_i/dv_j - df_k/dv_m
        return a.add([(c.d(f[i], v[j]), 1.0), (c.d(f[k], v[m]), -1.0)])

    if len(f) == 2:
        return [("curl", sub(1, 0, 0, 1), [])]
    return [("curl[0]", sub(2, 1, 1, 2), []), ("curl[1]", sub(0, 2, 2, 0), []),
            ("curl[2]", sub(1, 0, 0, 1), [])]


def jvp_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """J·u per component."""
    u = c.direction(asked.get("direction"), asked.get("unit", False))
    a = c.alg
    return ((f"jvp{out[1:]}", a.add([(a.scale(c.d(e, k), w), 1.0) for k, w in u]), [])
            for out, e in c.outputs)


def hvp_columns(c: Derivatives, asked: Mapping[str, Any]) -> Columns:
    """H·u per variable."""
    u = c.direction(asked.get("direction"), asked.get("unit", False))
    e = c.scalar("hvp")
    a = c.alg
    return ((f"hvp/d{label}", a.add([(a.scale(c.d(c.d(e, key), k), w), 1.0) for k, w in u]),
             []) for label, key in c.targets(c.order))


def render(sym: Symbolic, tree: Any, names: list[str],
            columns: list[tuple[str, Expr, list]], form: str) -> dict[str, str]:
    out: dict[str, str] = {}
    exprs = [e for _, e, _ in columns]
    used = _steps_used(sym, exprs)
    for name, value in sym.order:
        if name is not None and name in used:
            out[name] = _show(value, form, sym, tree, names, {})
    programs: dict[str, str | None] = {}  # the backward program, made once if needed
    for column, e, _ in _grouped(sym, columns):
        out[column] = _show(e, form, sym, tree, names, programs)
    return out


def _grouped(sym: Symbolic, columns: list[tuple[str, Expr, list]]) -> list:
    """A vector variable's components ``df/dx[i]`` as one line ``df/dx = E`` when one
    vector expression ``E`` has them as its components (``d/dx logsumexp(x) = softmax(x)``,
    ``d/dx sum(x^2) = 2*x``): ``E`` is component 0 with every ``v[0]`` of a vector ``v`` of
    that length made ``v``, kept only if its every component is the formula printed for
    that component (nodes are interned, so that is identity)."""
    a = sym.alg
    out: list = []
    i = 0
    while i < len(columns):
        column, e, keys = columns[i]
        m = re.fullmatch(r"(.*)\[0\]\[0\]", column)
        if keys and keys[0][0] == "idx" and keys[0][2] == (0, 0) and m:
            shape = sym.shapes[keys[0][1]]
            n = shape[0] * shape[1]
            run = columns[i:i + n]
            entries = [(r, c) for r in range(shape[0]) for c in range(shape[1])]
            whole = _matrix_whole(sym, e, shape, run, entries, keys[0][1])
            if whole is not None:
                out.append((m.group(1), whole, []))
                i += n
                continue
        m = re.fullmatch(r"(.*)\[0\]", column)
        if keys and keys[0][0] == "idx" and keys[0][2] == 0 and m:
            n = sym.shapes[keys[0][1]][0]
            run = columns[i:i + n]
            if len(run) == n and all(k and k[0] == ("idx", keys[0][1], j)
                                     for j, (_, _, k) in enumerate(run)):
                whole = a.rebuild(e, lambda x, n=n: x.args[0] if x.kind == "idx" and
                                  x.data == 0 and x.args[0].shape == (n,) else None)
                if whole is not None and whole.shape == (n,) and all(
                        a.component(whole, j) is c for j, (_, c, _) in enumerate(run)):
                    out.append((m.group(1), whole, []))
                    i += n
                    continue
        out.append(columns[i])
        i += 1
    return out


def _matrix_whole(sym: Symbolic, e: Expr, shape: tuple, run: list, entries: list,
                  name: str) -> Expr | None:
    """The matrix whose entries are the run's formulas: entry (0, 0) with each ``M[0, 0]``
    made ``M`` or ``transpose(M)`` (``d/dA det(A) = det(A)*transpose(inv(A))``)."""
    a = sym.alg
    if len(run) != len(entries) or any(not k or k[0] != ("idx", name, rc)
                                       for (_, _, k), rc in zip(run, entries, strict=True)):
        return None
    for flip in (False, True):
        def swap(x: Expr, flip: bool = flip) -> Expr | None:
            if x.kind == "idx" and x.data == (0, 0) and x.args[0].shape == shape:
                m = x.args[0]
                return a.call("transpose", [m], m.shape[::-1]) if flip else m
            return None
        whole = a.rebuild(e, swap)
        try:
            if whole is not None and whole.shape == shape and all(
                    a.component(whole, rc) is c for (_, c, _), rc in zip(run, entries,
                                                                          strict=True)):
                return whole
        except symbolic.TooLarge:
            raise
        except FormulaError:
            continue
    return None


def _show(e: Expr, form: str, sym: Symbolic, tree: Any, names: list[str],
          programs: dict[str, str | None]) -> str:
    if e.text is None:
        return TooLong(None)
    if len(e.text) > LONG_TEXT and not e.shape:
        if "program" not in programs:
            try:
                programs["program"] = backward_program(sym, tree, names)
            except symbolic.TooLarge:
                raise
            except (FormulaError, EvaluationError):  # no program: the closed form stays
                programs["program"] = None
        program = programs["program"]
        if program is not None and len(e.text) > LONG_RATIO * len(program):
            return TooLong(len(e.text))
    if not _reads_back(e.text):
        return TooLong(len(e.text), deep=True)
    return latex(e) if form == "latex" else e.text


def _reads_back(text: str) -> bool:
    """Whether the language parses ``text`` (a formula, or a program's lines): what is
    printed must read back, and the parser's nesting is bounded (MAX_DEPTH)."""
    try:
        parse(ProgramText(text, "the formula", MAX_OUTPUT))
    except ExpressionError:
        return False
    return True


def _steps_used(sym: Symbolic, exprs: list[Expr]) -> set[str]:
    """The steps the formulas refer to, with the steps those refer to."""
    used: set[str] = set()
    stack = list(exprs)
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if e.kind == "ref" and e.data not in used:
            used.add(e.data)
            stack.append(sym.steps[e.data])
        stack.extend(e.args)
    return used


# --- the backward program -----------------------------------------------------------------
def _user_names(tree: Any) -> set[str]:
    names = set(free_variables(tree))
    for node in walk(tree):
        name = getattr(node, "name", None)
        if isinstance(name, str):
            names.add(name)
        if isinstance(node, DefineNode):
            names.update(node.params)
        if isinstance(node, CallNode):
            names.add(node.func)
    return names


def _fresh(base: str, taken: set[str]) -> str:
    name = base
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def backward_program(sym: Symbolic, tree: Any, names: list[str]) -> str:
    """The reverse-mode program of a scalar formula: the forward steps, then ``v_bar = ...``
    for each step (last first) and each variable: the adjoint ∂f/∂v as ``gradcli graph``
    shows it, each the sum over v's consumers of (partial) * (consumer's adjoint)."""
    a = sym.alg
    if sym.result.shape:
        raise FormulaError("the backward program needs a scalar formula")
    vectors = [n for n in names if sym.shapes.get(n)]
    if vectors:
        raise FormulaError(f"no backward program yet for the vector variable '{vectors[0]}'")
    taken = _user_names(tree)
    steps = [(name, value) for name, value in sym.order if name is not None]
    last_name, last_value = sym.order[-1]
    if last_name is None:
        steps.append((_fresh("f", taken), last_value))
    step_names = [n for n, _ in steps]
    bars = {n: _fresh(f"{n}_bar", taken) for n in [*step_names, *names]}
    lines = [f"{n} = {_text(v)}" for n, v in steps]
    size = sum(map(len, lines))  # the program's length so far: at most MAX_OUTPUT
    contributions: dict[str, list[str]] = {n: [] for n in bars}
    for position, (name, value) in enumerate(reversed(steps)):
        bar = bars[name]
        lines.append(f"{bar} = {'1' if position == 0 else _sum(contributions[name])}")
        for kind, used in _inputs(value):
            if kind == "ref" and used not in step_names:
                continue
            partial = sym.derivative(value, (kind, used), through=False)
            if partial is not a.zero:
                contributions[used].append(_times(a, partial, bar))
                size += len(contributions[used][-1]) + len(bar) + 6
        if size > MAX_OUTPUT:
            raise TooLarge(f"the backward program is over {MAX_OUTPUT:,} characters long")
    lines += [f"{bars[n]} = {_sum(contributions[n])}" for n in names]
    text = "\n".join(lines)
    if not _reads_back(text):
        raise TooLarge(f"the backward program nests deeper than the {MAX_DEPTH} levels the "
                       "language reads back: name shared parts as steps")
    return text


def _text(e: Expr) -> str:
    if e.text is None:
        raise TooLarge(f"a step of the backward program is over {MAX_TEXT:,} characters "
                       "long: name shared parts as steps")
    return e.text


def _inputs(e: Expr) -> list[tuple[str, str]]:
    """The steps and variables ``e`` refers to, in order of first appearance."""
    found: dict[tuple[str, str], None] = {}
    stack, seen = [e], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.kind in ("ref", "var"):
            found.setdefault((node.kind, node.data), None)
        stack.extend(reversed(node.args))
    return list(found)


def _times(a: Any, partial: Expr, bar: str) -> str:
    """``partial*bar`` as a term: ``bar``, ``-bar``, ``2*x*bar``."""
    negative = (partial.kind == "num" and partial.data < 0) or (
        partial.kind == "mul" and partial.data[0] < 0)
    if negative:
        partial = a.neg(partial)
    if partial is a.one:
        body = bar
    else:
        text = _text(partial)
        body = f"{text if partial.prec >= 3 else '(' + text + ')'}*{bar}"
    return "-" + body if negative else body


def _sum(terms: list[str]) -> str:
    if not terms:
        return "0"
    text = terms[0]
    for term in terms[1:]:
        text += f" - {term[1:]}" if term.startswith("-") else f" + {term}"
    return text


# --- LaTeX --------------------------------------------------------------------------------
_LATEX_FUNCTIONS = {"sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "log"}
_LATEX_NAMED = {"asin": r"\arcsin", "acos": r"\arccos", "atan": r"\arctan", "log10": r"\log_{10}",
                "log2": r"\log_{2}"}
_GREEK = {"alpha", "beta", "gamma", "delta", "epsilon", "theta", "lambda", "mu", "sigma",
          "phi", "psi", "omega", "rho", "eta", "kappa", "nu", "xi", "zeta", "chi"}
_LATEX_COMPARE = {"<": "<", "<=": r"\le", ">": ">", ">=": r"\ge", "==": "=", "!=": r"\ne"}


def latex(e: Expr) -> str:
    """LaTeX of a formula (fractions, powers, named functions); for reading, not parsing."""
    memo: dict[int, str] = {}
    # children first, iteratively: each node's text then finds its arguments' (and a
    # sum's factors') in the memo, so no formula is too deep for the recursion limit
    stack, seen = [(e, False)], set()
    while stack:
        node, ready = stack.pop()
        if ready:
            _latex(node, memo)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            stack.extend((x, False) for x in node.args)
    return memo[id(e)]


def _name(name: str) -> str:
    if name in _GREEK:
        return "\\" + name
    if name in ("pi", "tau"):
        return "\\" + name
    if name == "inf":
        return r"\infty"
    return name if len(name) == 1 else r"\mathrm{" + name.replace("_", r"\_") + "}"


def _latex(e: Expr, memo: dict[int, str]) -> str:
    if id(e) in memo:
        return memo[id(e)]

    def sub(x: Expr, wrap_below: int = 0) -> str:
        t = _latex(x, memo)
        return rf"\left({t}\right)" if x.prec < wrap_below else t

    kind = e.kind
    if kind == "num":
        text = e.text or ""
    elif kind in ("const", "var", "ref"):
        text = _name(e.data)
    elif kind == "idx":
        text = f"{sub(e.args[0], 6)}_{{{e.data}}}"
    elif kind == "cmp":
        text = f"{sub(e.args[0], 2)} {_LATEX_COMPARE[e.data]} {sub(e.args[1], 2)}"
    elif kind == "pow":
        text = f"{{{sub(e.args[0], 6)}}}^{{{sub(e.args[1])}}}"
    elif kind == "call":
        args = ", ".join(sub(x) for x in e.args)
        if e.data == "sqrt":
            text = rf"\sqrt{{{args}}}"
        elif e.data == "abs":
            text = rf"\left|{args}\right|"
        elif e.data in _LATEX_FUNCTIONS or e.data in _LATEX_NAMED:
            text = rf"{_LATEX_NAMED.get(e.data, chr(92) + e.data)}\left({args}\right)"
        else:
            text = rf"\operatorname{{{e.data.replace('_', chr(92) + '_')}}}\left({args}\right)"
    elif kind == "vec":
        text = r"\left[" + ", ".join(sub(x) for x in e.args) + r"\right]"
    elif kind == "add":
        const, coefs = e.data
        pairs = sorted(zip(e.args, coefs, strict=True), key=lambda tc: tc[1] < 0)
        pieces = [_latex_product(c, product_factors(t), memo) for t, c in pairs]
        if const:
            number = _number(const)
            pieces.insert(0 if const > 0 and pairs[0][1] < 0 else len(pieces), number)
        text = pieces[0]
        for p in pieces[1:]:
            text += f" - {p[1:]}" if p.startswith("-") else f" + {p}"
    else:  # mul
        text = _latex_product(e.data[0], list(zip(e.args, e.data[1], strict=True)), memo)
    memo[id(e)] = text
    return text


def _number(v: float) -> str:
    from gradcli.lang.symbolic import _num_text

    return ("-" if v < 0 else "") + _num_text(abs(v))


def _latex_product(coef: float, factors: list[tuple[Expr, float]], memo: dict) -> str:
    from gradcli.lang.symbolic import _fraction, _num_text

    ups = sum(x > 0 for _, x in factors) + (abs(coef) not in (1.0,) and 1)
    downs = sum(x < 0 for _, x in factors)

    def power(b: Expr, x: float) -> str:
        t = _latex(b, memo)
        if x == 1 or x == -1:  # a lone numerator or denominator needs no parentheses
            alone = (ups if x > 0 else downs) <= 1 and (x < 0 or downs == 0 or ups <= 1)
            return rf"\left({t}\right)" if b.prec < 3 and not alone else t
        if x == 0.5:
            return rf"\sqrt{{{t}}}"
        base = rf"\left({t}\right)" if b.prec <= 5 else t
        return f"{{{base}}}^{{{_num_text(x)}}}"

    p, q = _fraction(abs(coef))
    top = [power(b, x) for b, x in factors if x > 0]
    bottom = [power(b, -x) if x != -1 else power(b, -1.0) for b, x in factors if x < 0]
    if p != 1 or not top:
        top.insert(0, _num_text(p))
    if q != 1:
        bottom.insert(0, _num_text(q))
    text = r" \cdot ".join(top) if len(top) > 1 and top[0][0].isdigit() and len(top) == 2 \
        and top[1][0].isdigit() else " ".join(top)
    if bottom:
        text = rf"\frac{{{text}}}{{{' '.join(bottom)}}}"
    return ("-" if coef < 0 else "") + text


def latex_name(column: str, labels: Sequence[str] = ()) -> str:
    """A column's name in LaTeX: ``d2f/dxdy`` as a partial-derivative fraction (``labels``
    are the variables' names, so ``dxdy`` splits into x and y), others upright with their
    index as a subscript (``curl[0]``)."""
    m = re.fullmatch(r"(?:d(\d*)(f(?:\[\d+\])?)|(hvp|vjp))/(.+)", column)
    parts = _split_parts(m.group(4), labels) if m else None
    if m is None or parts is None:
        base, _, index = column.partition("[")
        text = r"\mathrm{" + base.replace("_", r"\_") + "}"
        return text + (f"_{{{index.rstrip(']')}}}" if index else "")
    k, out = m.group(1), m.group(2) or m.group(3)
    if out in ("hvp", "vjp"):
        return rf"(H u)_{{{_label(parts[0][0])}}}" if out == "hvp" else column
    top = r"\partial" + (f"^{{{k}}}" if k else "") + " " + re.sub(r"\[(\d+)\]", r"_{\1}", out)
    below = " ".join(r"\partial " + _label(n) + (f"^{{{c}}}" if c > 1 else "") for n, c in parts)
    return rf"\frac{{{top}}}{{{below}}}"


def _label(name: str) -> str:
    base, _, index = name.partition("[")
    return _name(base) + (f"_{{{index.rstrip(']')}}}" if index else "")


def _split_parts(text: str, labels: Sequence[str]) -> list[tuple[str, int]] | None:
    """``dx2dy`` as [("x", 2), ("y", 1)], reading the longest label first."""
    out: list[tuple[str, int]] = []
    ordered = sorted(labels, key=len, reverse=True)
    while text:
        if not text.startswith("d"):
            return None
        label = next((n for n in ordered if text[1:].startswith(n)), None)
        if label is None:
            return None
        text = text[1 + len(label):]
        count = re.match(r"\d*", text).group(0)  # type: ignore[union-attr]
        text = text[len(count):]
        out.append((label, int(count) if count else 1))
    return out
