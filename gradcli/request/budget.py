"""The memory budget: how much working memory a run may take, and sizes as text.

A run's blocks are cut so that the arrays they make, on every thread at once, plus the
blocks waiting to be written, stay within the budget (``blocks.rows_per_block``). The
budget is ``memory=`` (a number of bytes or a size such as ``"512M"``, ``"2G"``), else the
environment variable ``GRADCLI_MEMORY``, else :data:`DEFAULT_MEMORY`. What it does not
cover is :data:`FIXED_OVERHEAD`: the interpreter, numpy and the modules a command loads,
the inputs as given (a points file's columns, a vector read from a file) and results a
command keeps in memory whole (a table or CSV to write; ``.npz``, ``.npy`` and ``.zarr``
outputs are streamed by blocks instead).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["DEFAULT_MEMORY", "FIXED_OVERHEAD", "MIN_MEMORY", "ENV", "parse_size",
           "memory_budget", "size_text"]

#: the working memory of a run when neither ``memory=`` nor ``GRADCLI_MEMORY`` is given
DEFAULT_MEMORY = 1 << 30
#: the smallest budget accepted: below it the interpreter's own allocations dominate
MIN_MEMORY = 1 << 20
#: what the budget does not cover (the interpreter, numpy, loaded modules); the peak-memory
#: tests check every run against budget + this
FIXED_OVERHEAD = 256 << 20
#: the environment variable that sets the budget when ``memory=`` is not given
ENV = "GRADCLI_MEMORY"



def parse_size(text: Any, what: str = "memory") -> int:
    """``"2G"`` -> 2147483648: a number of bytes, with an optional binary unit K, M, G or
    T (``KB``/``KiB`` alike); an int is taken as bytes. At least :data:`MIN_MEMORY`."""
    from gradcli.errors import EvaluationError
    from gradcli.lang.spec_text import parse_bytes  # the size's grammar

    value = parse_bytes(text, what)
    if value < MIN_MEMORY:
        raise EvaluationError(f"{what} '{text}': at least {size_text(MIN_MEMORY)} is needed")
    return value


def memory_budget(memory: Any = None) -> int:
    """The budget in bytes: ``memory`` if given, else ``$GRADCLI_MEMORY``, else the
    default."""
    if memory is not None:
        return parse_size(memory)
    env = os.environ.get(ENV, "").strip()
    if env:
        return parse_size(env, ENV)
    return DEFAULT_MEMORY


def size_text(n: float) -> str:
    """Bytes as a short size: ``1.5 GiB``, ``64 MiB``, ``512 B``."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{int(n)} B"
