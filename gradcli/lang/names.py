"""Tables of the language's functions and constants, and "did you mean" suggestions.

The parser checks calls against :data:`FUNCTIONS` (arity) and the compiler maps each
:class:`FunctionSpec` to an engine function through ``spec.engine``. Aliases (``ln``,
``arcsin``...) are resolved at parse time, so the AST only ever holds canonical names.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

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
        arity: exact number of arguments.
        kind: ``"elementwise"`` (unary, broadcasts), ``"binary"`` (two broadcast
            operands), ``"select"`` (``where``) or ``"reduction"`` (vector in, scalar out).
        engine: name of the ``gradcli`` engine function implementing it.
    """

    name: str
    arity: int
    kind: str
    engine: str


_UNARY = (
    "sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp expm1 log log1p "
    "log2 log10 sqrt cbrt abs sign relu sigmoid softplus floor ceil"
).split()


def _table() -> dict[str, FunctionSpec]:
    specs = [FunctionSpec(n, 1, "elementwise", n) for n in _UNARY]
    specs += [
        FunctionSpec("min", 2, "binary", "minimum"),
        FunctionSpec("max", 2, "binary", "maximum"),
        FunctionSpec("pow", 2, "binary", "pow"),
        FunctionSpec("atan2", 2, "binary", "atan2"),
        FunctionSpec("hypot", 2, "binary", "hypot"),
        FunctionSpec("where", 3, "select", "where"),
        FunctionSpec("sum", 1, "reduction", "sum"),
        FunctionSpec("mean", 1, "reduction", "mean"),
        FunctionSpec("prod", 1, "reduction", "prod"),
        FunctionSpec("norm", 1, "reduction", "norm"),
        FunctionSpec("dot", 2, "reduction", "dot"),
    ]
    return {s.name: s for s in specs}


#: Canonical function name -> spec (read-only).
FUNCTIONS: Mapping[str, FunctionSpec] = MappingProxyType(_table())

#: Alternative spellings accepted by the parser -> canonical name.
ALIASES: Mapping[str, str] = MappingProxyType(
    {"ln": "log", "arcsin": "asin", "arccos": "acos", "arctan": "atan"}
)

#: Reserved constant names -> value. These can never be variables.
CONSTANTS: Mapping[str, float] = MappingProxyType({"pi": math.pi, "e": math.e, "tau": math.tau})

#: comparison operators (they give 0/1 and do not chain)
COMPARISONS = frozenset({"<", "<=", ">", ">=", "==", "!="})
#: binding strength of every binary operator (``^`` and ``**`` right-associative); the parser
#: reads with it and the printer decides its parentheses with it
PRECEDENCE: Mapping[str, int] = MappingProxyType(
    {"+": 2, "-": 2, "*": 3, "/": 3, "^": 5, "**": 5} | dict.fromkeys(COMPARISONS, 1))
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
