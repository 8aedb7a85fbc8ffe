"""The built-in computations: one record each, in the order the CLI lists them
(``computations.py`` registers them on first use). The kernels are in ``kernels.py``
(first and second derivatives by reverse and forward mode) and ``calculus.py`` (vector
calculus and Taylor mode)."""

from __future__ import annotations

from typing import Any

from gradcli.plan import block_units as u
from gradcli.plan import calculus as c
from gradcli.plan import kernels as k
from gradcli.plan.records import Axes, Computation


def _formulas() -> Any:
    """The formula functions' module, imported when a formula is asked for (it imports
    the symbolic algebra, which a numeric run never needs)."""
    from gradcli.lang import formula_printer as formula

    return formula


def _vjp_shapes(prepared: Any) -> list[str]:
    """vjp's note under a table: the shapes of v, J and vᵀJ per point."""
    import numpy as np

    m = int(np.prod(prepared.program.shape))
    n = sum(int(np.prod(shape)) for _, shape in prepared.plan.targets)
    v_shape = prepared.program.shape or "()"
    return [f"shapes per point: v {v_shape} (like f), J ({m}, {n}) = outputs × inputs, "
            f"vᵀJ ({n},): one vjp/d column per input"]


def _long_table(result: Any, plan: Any) -> Any:
    from gradcli.plan.taylor_table import long_table

    return long_table(result, plan)

#: the derivative check's relative tolerances: float32 results carry about 7 significant digits, so
#: their derivatives cannot match differences to 1e-6
_FIRST = {"float64": 1e-6, "float32": 1e-4}
_SECOND = {"float64": 1e-4, "float32": 1e-3}
_NOT_SCALAR = "use jacobian for every derivative, or vjp with a vector v for vᵀJ"

#: the built-in records, in the order the CLI lists them (``computations`` registers them)
BUILTINS: list[Computation] = []


def _builtin(record: Computation) -> None:
    BUILTINS.append(record)


_builtin(Computation(
    "eval", "Values of the formula: column f (f[i] for a vector, f[i][j] for a matrix).",
    blocks=k.blocks_eval))
_builtin(Computation(
    "grad", "Gradient of a scalar formula: f, then df/dx for each variable.",
    blocks=k.blocks_grad, kernel=k.grad, parameters=("norm", "wrt"), scalar=True,
    scalar_hint=_NOT_SCALAR, check=_FIRST, check_step=1e-6, backward_program=True,
    formula=lambda c, asked: _formulas().grad_columns(c, asked), units=u.gradient_norm))
_builtin(Computation(
    "jacobian", "Every derivative: the values, then df[i]/dx per component and variable.",
    blocks=k.blocks_jacobian, kernel=k.grad, parameters=("wrt",),
    sweeps=k.sweeps_jacobian, check=_FIRST, check_step=1e-6,
    formula=lambda c, asked: _formulas().jacobian_columns(c, asked),
    axes=(Axes("jacobian", ("df/d{wrt}", "d{component}/d{wrt}"), ("component", "wrt"),
               lambda component="f", wrt="": f"d{component}/d{wrt}"),)))
_builtin(Computation(
    "vjp", "Vector-Jacobian product vᵀJ (PyTorch's backward(gradient=v)): vjp/dx per "
    "variable.", blocks=k.blocks_vjp, kernel=k.vjp, parameters=("vector", "wrt"),
    formula=lambda c, asked: _formulas().vjp_columns(c, asked), notes=lambda p: _vjp_shapes(p),
    units=u.vjp))
_builtin(Computation(
    "jvp", "Jacobian-vector product J·u by forward mode: jvp (jvp[i] for a vector f).",
    blocks=k.blocks_jvp, kernel=k.jvp, parameters=("direction", "unit"),
    formula=lambda c, asked: _formulas().jvp_columns(c, asked), units=u.jvp,
    axes=(Axes("jvp", ("jvp", "jvp[i]: J·u for component f[i]"), ("component",),
               lambda component="f": "jvp" + component[1:]),)))
_builtin(Computation(
    "hessian", "Second derivatives of a scalar formula: f, then d2f/dadb for every ordered "
    "pair.", blocks=k.blocks_hessian, kernel=k.hessian, parameters=("wrt",), scalar=True,
    scalar_hint=_NOT_SCALAR, sweeps=k.sweeps_hessian, order=k.order_hessian, blocked=True,
    check=_SECOND, check_step=1e-5, check_differences="grad", streams=True,
    formula=lambda c, asked: _formulas().hessian_columns(c, asked),
    axes=(Axes("hessian", ("d2f/d{wrt}d{wrt2}", "d2f/d{wrt}d{wrt2}"), ("wrt", "wrt2"),
               lambda wrt="", wrt2="": f"d2f/d{wrt}d{wrt2}"),)))
_builtin(Computation(
    "div", "Divergence of a vector field [P, Q, ...]: the components f[i], then div = sum "
    "of df[i]/dx_i; components pair with the variables in binding order, or with wrt.",
    blocks=c.blocks_div, kernel=c.div, parameters=("wrt",), sweeps=c.sweeps_field,
    specify=c.specify_field("div"),
    formula=lambda cols, asked: _formulas().div_columns(cols, asked), units=u.div_curl))
_builtin(Computation(
    "curl", "Curl of a vector field: [P, Q] gives curl = dQ/dx - dP/dy; [P, Q, R] gives "
    "curl[0], curl[1], curl[2]; components pair with the variables in binding order, or "
    "with wrt.", blocks=c.blocks_curl, kernel=c.curl, parameters=("wrt",),
    sweeps=c.sweeps_field, specify=c.specify_field("curl", sizes=(2, 3)),
    formula=lambda cols, asked: _formulas().curl_columns(cols, asked), units=u.div_curl))
_builtin(Computation(
    "laplacian", "Laplacian: f, then laplacian = sum of d2f/dx_i2 over the bound variables "
    "(or wrt); f[i], laplacian[i] for a vector f. Taylor mode.",
    blocks=c.blocks_laplacian, kernel=c.laplacian, parameters=("wrt",),
    sweeps=c.sweeps_laplacian, specify=c.specify_laplacian, blocked=True,
    formula=lambda cols, asked: _formulas().laplacian_columns(cols, asked),
    units=u.laplacian))
_builtin(Computation(
    "hvp", "Hessian-vector product H·u by forward over reverse (the values of "
    "torch.autograd.functional.hvp): f, then hvp/dx for each variable.",
    blocks=c.blocks_hvp, kernel=c.hvp, parameters=("direction", "unit"), scalar=True,
    sweeps=lambda plan: 3, specify=c.specify_hvp, blocked=True,
    formula=lambda cols, asked: _formulas().hvp_columns(cols, asked), units=u.hvp))
_builtin(Computation(
    "diff", "A partial derivative of any order (Taylor mode): wrt x with order 3 gives "
    "d3f/dx3, wrt x,x,y gives d3f/dx2dy; f first (f[i] for a vector f).",
    blocks=c.blocks_diff, kernel=c.diff, parameters=("wrt", "order"),
    sweeps=c.sweeps_diff, specify=c.specify_diff, blocked=True,
    formula=lambda cols, asked: _formulas().diff_columns(cols, asked)))
_builtin(Computation(
    "taylor", "Multivariate Taylor coefficients up to total order K (Taylor mode): one row "
    "per multi-index in graded lexicographic order, with the point, order, deg(x)..., "
    "coefficient (d^alpha f / alpha!) and derivative (d^alpha f).",
    blocks=c.blocks_taylor, kernel=c.taylor, parameters=("wrt", "order"), scalar=True,
    sweeps=c.sweeps_taylor, specify=c.specify_taylor, blocked=True,
    rows=lambda plan: (len(plan.spec.indices), "coefficients"), shown=_long_table,
    units=u.taylor))
