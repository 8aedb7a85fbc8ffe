"""Random expressions for the formula tests and their sympy reference script.

``expressions(seed, count, functions)`` gives the same list on every run and platform
(its own ``random.Random``): sums, differences, products, quotients and powers of the
given functions of x and y, at most four levels deep.
"""

from __future__ import annotations

import random

from gradcli.engine.rules import FUNCTIONS as RULES
from gradcli.lang.names import FUNCTIONS

#: functions sympy and gradcli spell alike (and that sympy differentiates without
#: Heaviside or sign): the sympy reference uses only these (a fact about sympy)
SMOOTH = ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan", "sinh", "cosh",
          "asinh")
#: every function of the language that is an entry of the engine's rule table, by arity
#: (each one's form is compared with its numeric rule): read from the tables, so a new
#: entry is in them
UNARY = tuple(sorted(n for n, s in FUNCTIONS.items()
                     if s.kind == "elementwise" and s.engine in RULES))
BINARY = tuple(sorted(n for n, s in FUNCTIONS.items()
                      if s.kind == "binary" and s.engine in RULES and RULES[s.engine].form))
#: the pool the random expressions of fixed seeds draw from (a sample design, not the
#: table): the elementary functions they were drawn from when the seeds were chosen, so
#: each seed keeps its expressions as functions are added (the special functions' forms
#: are checked one by one above and in compositions by tests/engine/test_engine_special.py)
POOL_UNARY = SMOOTH + ("asin", "acos", "acosh", "atanh", "expm1", "log1p", "log2", "log10",
                       "cbrt", "abs", "sign", "floor", "ceil", "relu", "sigmoid", "softplus",
                       "logsigmoid")
POOL_BINARY = ("max", "min", "atan2", "hypot")


def _leaf(rng: random.Random) -> str:
    return rng.choice(["x", "y", "x", "y", str(rng.randint(1, 5)), "0.5"])


POWERS = ("2", "3", "-1", "0.5", "y", "x")


def _expr(rng: random.Random, depth: int, unary: tuple, binary: tuple, wheres: bool,
          powers: tuple = POWERS, constant: float = 0.0) -> str:
    if depth == 0 or rng.random() < 0.2:
        return _leaf(rng)
    kind = rng.random()
    sub = [_expr(rng, depth - 1, unary, binary, wheres, powers, constant) for _ in range(3)]
    if wheres and constant and rng.random() < constant:  # a where with a constant branch
        branches = [rng.choice(["pi", "2", "0.5"]), sub[2]][::rng.choice([1, -1])]
        return f"where({sub[0]} {rng.choice(['>', '<'])} {sub[1]}, {', '.join(branches)})"
    if kind < 0.35:
        return f"{rng.choice(unary)}({sub[0]})"
    if kind < 0.75:
        op = rng.choice(["+", "-", "*", "/", "*"])
        return f"({sub[0]}) {op} ({sub[1]})"
    if kind < 0.85:
        return f"({sub[0]})^{rng.choice(powers)}"
    if binary and kind < 0.95:
        return f"{rng.choice(binary)}({sub[0]}, {sub[1]})"
    if wheres:
        return f"where({sub[0]} > {sub[1]}, {sub[1]}, {sub[2]})"
    return f"({sub[0]}) * ({sub[1]})"


def expressions(seed: int, count: int, unary: tuple = POOL_UNARY, binary: tuple = POOL_BINARY,
                wheres: bool = True, depth: int = 4, powers: tuple = POWERS,
                constant: float = 0.0) -> list[str]:
    """``count`` random expressions in x and y (each mentions at least one of them);
    ``constant``: the share of nodes that are a ``where`` with a constant branch."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        text = _expr(rng, depth, unary, binary, wheres, powers, constant)
        if ("x" in text or "y" in text) and text not in out:
            out.append(text)
    return out
