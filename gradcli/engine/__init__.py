"""The autograd engine: tensors over numpy, a primitive rule table, reverse and forward mode.

Import it as ``import gradcli as gc``; the names mirror PyTorch's.
"""

from gradcli.engine import autograd, functional, linalg
from gradcli.engine.core import Tensor
from gradcli.engine.creation import (
    arange,
    float32,
    float64,
    from_numpy,
    full,
    linspace,
    meshgrid,
    ones,
    ones_like,
    tensor,
    zeros,
    zeros_like,
)
from gradcli.engine.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from gradcli.engine.ops import *  # noqa: F403 - the public operations (sin, cos, stack, ...)
from gradcli.engine.ops import __all__ as _ops_all
from gradcli.engine.ops import (
    broadcast_to,
    cat,
    clamp,
    dot,
    matmul,
    mean,
    norm,
    permute,
    pow,
    prod,
    reshape,
    stack,
    sum,
    transpose,
    where,
)
from gradcli.engine.primitive import Node, Primitive

__all__ = [
    "Node", "Primitive", "Tensor", "autograd", "functional", "linalg", "arange", "float32",
    "float64", "from_numpy", "full", "linspace", "meshgrid", "ones", "ones_like", "tensor", "zeros",
    "zeros_like", "enable_grad", "is_grad_enabled", "no_grad", "set_grad_enabled",
    "broadcast_to", "cat", "clamp", "dot", "matmul", "mean", "norm", "permute", "pow", "prod",
    "reshape", "stack", "sum", "transpose", "where",
]
__all__ += [n for n in _ops_all if n not in __all__]
