"""Tables of the language's functions and constants, and "did you mean" suggestions.

The parser checks calls against :data:`FUNCTIONS` (arity) and the compiler maps each
:class:`FunctionSpec` to an engine function through ``spec.engine``. The elementwise
functions are the engine's rule table (``rules.FUNCTIONS``); this module adds only what is
the language's own: aliases (``ln``, ``arcsin``..., resolved at parse time, so the AST only
ever holds canonical names), the names ``min``/``max``, ``pow``, ``where`` and the
reductions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from gradcli.engine.rules import FUNCTIONS as ELEMENTWISE  # the one list of elementwise functions

__all__ = [
    "ALIASES",
    "COMPARISONS",
    "CONSTANTS",
    "FUNCTIONS",
    "PRECEDENCE",
    "UNARY_PRECEDENCE",
    "FunctionSpec",
    "function_names",
    "resolve_function",
    "split_suggestion",
    "suggest",
]


@dataclass(frozen=True)
class FunctionSpec:
    """One callable name of the language.

    Attributes:
        name: canonical name stored in :class:`~gradcli.lang.ast.Call` nodes.
        arity: the number of arguments (the fewest, when ``max_arity`` is larger).
        kind: ``"elementwise"`` (unary, broadcasts), ``"binary"`` (two broadcast
            operands), ``"select"`` (``where``), ``"reduction"`` (a vector or matrix in, a
            scalar out), ``"array"`` (vectors and matrices in and out: ``lang/arrays.py``)
            or ``"program"`` (a function the program defines).
        engine: name of the ``gradcli`` engine function implementing it.
        max_arity: the most arguments (``norm(v)`` and ``norm(v, p)``; ``max(v)``, ``max(a, b)``).
    """

    name: str
    arity: int
    kind: str
    engine: str
    max_arity: int = 0

    def takes(self, count: int) -> bool:
        """True when ``count`` arguments are accepted."""
        return self.arity <= count <= max(self.arity, self.max_arity)

    def arity_text(self) -> str:
        """``1 argument``, ``2 arguments``, ``1 or 2 arguments``."""
        high = max(self.arity, self.max_arity)
        count = str(self.arity) if high == self.arity else f"{self.arity} or {high}"
        return f"{count} argument{'s' if high != 1 else ''}"


#: the language's names for table functions whose engine name differs (torch's names)
_LANGUAGE_NAME = {"minimum": "min", "maximum": "max"}


def _table() -> dict[str, FunctionSpec]:
    # min(a, b) and max(a, b) are elementwise; min(v) and max(v) reduce one vector
    specs = [FunctionSpec(_LANGUAGE_NAME[n], 1, "binary", n, 2) if n in _LANGUAGE_NAME else
             FunctionSpec(n, p.arity or 1, "elementwise" if p.arity == 1 else "binary", n)
             for n, p in ELEMENTWISE.items()]
    specs += [
        FunctionSpec("pow", 2, "binary", "pow"),  # pow(a, b) is a^b
        FunctionSpec("where", 3, "select", "where"),
        FunctionSpec("sum", 1, "reduction", "sum"),
        FunctionSpec("mean", 1, "reduction", "mean"),
        FunctionSpec("prod", 1, "reduction", "prod"),
        FunctionSpec("norm", 1, "reduction", "norm", 2),
        FunctionSpec("dot", 2, "reduction", "dot"),
        FunctionSpec("logsumexp", 1, "reduction", "logsumexp"),
        FunctionSpec("cross_entropy", 2, "reduction", "cross_entropy"),
        FunctionSpec("trace", 1, "reduction", "take"),
        FunctionSpec("det", 1, "reduction", "det"),
        FunctionSpec("softmax", 1, "array", "softmax"),
        FunctionSpec("log_softmax", 1, "array", "log_softmax"),
        FunctionSpec("cumsum", 1, "array", "cumsum"),
        FunctionSpec("transpose", 1, "array", "matrix_transpose"),
        FunctionSpec("inv", 1, "array", "inv"),
        FunctionSpec("solve", 2, "array", "solve"),
        FunctionSpec("outer", 2, "array", "mul"),
    ]
    return {s.name: s for s in specs}


#: Canonical function name -> spec (read-only).
FUNCTIONS: Mapping[str, FunctionSpec] = MappingProxyType(_table())

#: Alternative spellings accepted by the parser -> canonical name.
ALIASES: Mapping[str, str] = MappingProxyType(
    {"ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan"}
)

#: Reserved constant names -> value. These can never be variables. (``inf`` is the
#: infinite norm's p, ``norm(v, inf)``, and the value ``x=inf`` typed as a value.)
CONSTANTS: Mapping[str, float] = MappingProxyType(
    {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf})

#: comparison operators (they give 0/1 and do not chain)
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
#: binding strength of every binary operator (``^`` and ``**`` right-associative); the parser
#: reads with it and the printer decides its parentheses with it
PRECEDENCE: Mapping[str, int] = MappingProxyType(
    {"+": 2, "-": 2, "*": 3, "/": 3, "@": 3, "^": 5, "**": 5} | dict.fromkeys(COMPARISONS, 1))
UNARY_PRECEDENCE = 4  # -x^2 is -(x^2), -x*y is (-x)*y


def resolve_function(name: str) -> FunctionSpec | None:
    """Return the spec for a function name or alias, or ``None`` if it is not a function."""
    return FUNCTIONS.get(ALIASES.get(name, name))


def function_names() -> list[str]:
    """All spellings that may be called: canonical names and aliases, sorted."""
    return sorted([*FUNCTIONS, *ALIASES])


def suggest(name: str, candidates: Iterable[str]) -> str | None:
    """Return the candidate closest to ``name`` (case-insensitive first), or ``None``.

    Used for "did you mean 'sin'?" hints; a cutoff of 0.6 keeps suggestions plausible.
    """
    pool = sorted(set(candidates) - {name})
    lowered = [c for c in pool if c.lower() == name.lower()]
    if lowered:
        return lowered[0]
    import difflib  # only when a name is unknown

    close = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return close[0] if close else None


def _split(name: str, parts: set[str]) -> list[str] | None:
    """``name`` cut into the fewest pieces that are all in ``parts``, or ``None``."""
    best: list[list[str] | None] = [[]] + [None] * len(name)  # best[i]: cut of name[:i]
    longest = max(map(len, parts), default=0)
    for end in range(1, len(name) + 1):
        for start in range(max(0, end - longest), end):
            head = best[start]
            if head is not None and name[start:end] in parts and (
                    best[end] is None or len(head) + 1 < len(best[end])):  # type: ignore[arg-type]
                best[end] = [*head, name[start:end]]
    return best[len(name)]


def split_suggestion(name: str, variables: Iterable[str]) -> str | None:
    """What an unknown name run together from known ones probably means, or ``None``.

    ``xy`` is one name in the language; when ``x`` and ``y`` are variables it suggests
    ``x*y``, and ``sinx`` suggests ``sin(x)``. Only readings made entirely of the given
    variables, constants and functions are offered.
    """
    known = set(variables) | set(CONSTANTS)
    for fn in sorted(function_names(), key=len, reverse=True):  # sinh before sin
        spec = resolve_function(fn)
        rest = name[len(fn):]
        if name.startswith(fn) and rest and spec is not None and spec.arity == 1:
            inner = _split(rest, known)
            if inner is not None:
                return f"{fn}({'*'.join(inner)})"
    product = _split(name, known)
    return "*".join(product) if product is not None and len(product) > 1 else None
