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

from gradcli.engine.primitive import Primitive
from gradcli.engine.rules_array import (  # the shape and reduction half of the table
    broadcast_to,
    cat,
    index,
    index_put,
    matmul,
    matrix_transpose,
    mean,
    norm,
    permute,
    prod,
    reshape,
    squeeze,
    stack,
    sum,  # noqa: A004 - mirrors torch.sum
    sum_to,
    unsqueeze,
)
from gradcli.engine.rules_axes import (  # along trailing axes: shapes, stable reductions
    amax,
    amin,
    cross_entropy,
    cumsum,
    log_softmax,
    logsumexp,
    put,
    softmax,
    take,
    vector_norm,
)
from gradcli.engine.rules_elementwise import *  # noqa: F403 - the elementwise half, whole
from gradcli.engine.rules_elementwise import ZERO, binary, unary  # noqa: F401 - helpers beside
from gradcli.engine.rules_linalg import cofactor, det, inv, solve  # matrices
from gradcli.engine.rules_special import (  # erf, Γ and their family (scipy.special, lazily)
    beta,
    digamma,
    erf,
    erfc,
    erfinv,
    gamma,
    gauss,
    lbeta,
    lgamma,
    ncdf,
    npdf,
    polygamma,
)

__all__ = ["amax", "amin", "beta", "broadcast_to", "cat", "cofactor", "cross_entropy", "cumsum",
           "det", "digamma", "erf", "erfc", "erfinv", "gamma", "gauss", "index", "index_put",
           "inv", "lbeta", "lgamma", "log_softmax", "logsumexp", "matmul", "matrix_transpose",
           "mean", "ncdf", "norm", "npdf", "permute", "polygamma", "prod", "put", "reshape",
           "softmax", "solve", "squeeze", "stack", "sum", "sum_to", "take", "unsqueeze",
           "vector_norm"]

PRIMITIVES: dict[str, Primitive] = {
    p.name: p for p in globals().values() if isinstance(p, Primitive)}
#: the elementwise functions: gc.NAME, Tensor.NAME and the expression language's NAME(...)
FUNCTIONS: dict[str, Primitive] = {n: p for n, p in PRIMITIVES.items() if p.kind == "function"}
