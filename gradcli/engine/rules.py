"""The primitive table: every differentiable operation and its derivative, declared once.

The table is written in five halves, each a module of entries: ``rules_elementwise.py``
(arithmetic and the elementwise functions: how an entry is written is explained there),
``rules_array.py`` (shapes and reductions), ``rules_axes.py`` (along trailing axes),
``rules_linalg.py`` (matrices) and ``rules_special.py`` (erf, Γ and their family). This
module gathers them: ``rules.NAME`` is any primitive, :data:`PRIMITIVES` all of them by
name and :data:`FUNCTIONS` the functions (``gc.NAME``, ``Tensor.NAME`` and the
expression language's ``NAME(...)``). The halves import the elementwise one, never this
module, so the table has no import cycle.

Adding a function is one entry in a half plus its test: ``kind="function"`` makes it
``gc.NAME``, ``Tensor.NAME`` and a function of the expression language.
"""

import sys

from gradcli.engine import (
    core,
    rules_array,
    rules_axes,
    rules_elementwise,
    rules_linalg,
    rules_special,
)
from gradcli.engine.primitive import Primitive
from gradcli.engine.rules_array import *  # noqa: F403 - shapes and reductions
from gradcli.engine.rules_axes import *  # noqa: F403 - along trailing axes
from gradcli.engine.rules_elementwise import *  # noqa: F403 - arithmetic and the functions
from gradcli.engine.rules_elementwise import ZERO, binary, unary  # noqa: F401 - helpers beside
from gradcli.engine.rules_linalg import *  # noqa: F403 - matrices
from gradcli.engine.rules_special import *  # noqa: F403 - erf, Γ and their family

#: the five halves: an entry written in any of them is in the table, nothing else to edit
HALVES = (rules_elementwise, rules_array, rules_axes, rules_linalg, rules_special)
#: every primitive, by name
PRIMITIVES: dict[str, Primitive] = {
    p.name: p for half in HALVES for p in vars(half).values() if isinstance(p, Primitive)}
__all__ = sorted(name for name, value in globals().items()
                 if isinstance(value, Primitive) and not name.startswith("_"))
#: the elementwise functions: gc.NAME, Tensor.NAME and the expression language's NAME(...)
FUNCTIONS: dict[str, Primitive] = {n: p for n, p in PRIMITIVES.items() if p.kind == "function"}

core.install(rules=sys.modules[__name__])  # Tensor's operators apply this table
