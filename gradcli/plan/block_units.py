"""The units of a computation's own result blocks, one rule per computation (its record's
``units``), for what the column names alone do not say.

The evaluation stage labels every block (``evaluation/request_units.py``): a variable
in its unit, ``f`` in the output's, ``df/dx`` and ``d2f/dxdy`` by the derivative's
grammar. The rest is a computation's own: a vjp column is unit(f)/unit(x) for a pure
number v, an hvp column unit(f)/(unit(x)·unit(u)), a jvp unit(f)/unit(u), ``|grad f|``
unit(f)/unit(x), the Laplacian unit(f)/unit(x)², div and curl unit(F)/unit(x), Taylor's
coefficients one unit per multi-index. A rule gets the block's name, the request's units
(``units.of(name)``, ``units.outputs``) and the plan; it returns a pint Unit, None when
no one unit says it (variables in different units), or a tuple of unit texts, one per
entry of the block (Taylor's).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["vjp", "hvp", "jvp", "gradient_norm", "laplacian", "div_curl", "taylor"]


def _f(units: Any) -> Any:
    from gradcli.lang.units import registry

    return units.outputs.get("f") or next(iter(units.outputs.values()), registry().Unit(""))


def _over(units: Any, plan: Any) -> tuple[Any, set[str]]:
    """The unit of the variables a product or a sum runs over (the direction's for jvp
    and hvp, the spec's for the Laplacian, div and curl, else the targets), and the set
    of their units (more than one: no single unit)."""
    from gradcli.lang.units import registry

    params = getattr(plan, "params", {}) or {}
    spec = getattr(plan, "spec", None)
    if params.get("direction"):
        targets = [n for n, v in params["direction"].items() if np.any(np.asarray(v) != 0)]
    elif spec is not None and getattr(spec, "names", None):
        targets = list(dict.fromkeys(n.split("[")[0] for n in spec.names))
    else:
        targets = [n for n, _ in getattr(plan, "targets", ()) or ()] or list(units.variables)
    x = units.of(targets[0]) if targets else registry().Unit("")
    return x, {str(units.of(n)) for n in targets}


def vjp(name: str, units: Any, plan: Any) -> Any:
    """``vjp/dx``: v is a pure number, so every output needs one unit: unit(f)/unit(x)."""
    from gradcli.lang.units import difference

    if not name.startswith("vjp/d") or len({str(u) for u in units.outputs.values()}) > 1:
        return None
    return difference(_f(units)) / units.of(name[5:])


def hvp(name: str, units: Any, plan: Any) -> Any:
    """``hvp/dx``: unit(f)/(unit(x)·unit(u)), u's variables sharing one unit."""
    from gradcli.lang.units import difference

    x, common = _over(units, plan)
    if not name.startswith("hvp/d") or len(common) > 1:
        return None
    return difference(_f(units)) / (units.of(name[5:]) * x)


def jvp(name: str, units: Any, plan: Any) -> Any:
    """``jvp`` (``jvp[i]``): unit(f)/unit(u), u's variables sharing one unit."""
    from gradcli.lang.units import difference

    x, common = _over(units, plan)
    if not name.startswith("jvp") or len(common) > 1:
        return None
    return difference(units.outputs.get("f" + name[3:], _f(units))) / x


def gradient_norm(name: str, units: Any, plan: Any) -> Any:
    """``|grad f|`` (grad's ``norm``): unit(f)/unit(x), the variables sharing one unit."""
    from gradcli.lang.units import difference

    x, common = _over(units, plan)
    if name != "|grad f|" or len(common) > 1:
        return None
    return difference(_f(units)) / x


def laplacian(name: str, units: Any, plan: Any) -> Any:
    """``laplacian``: unit(f)/unit(x)², the variables summed over sharing one unit."""
    from gradcli.lang.units import difference

    x, common = _over(units, plan)
    if name != "laplacian" or len(common) > 1:
        return None
    return difference(_f(units)) / x ** 2


def div_curl(name: str, units: Any, plan: Any) -> Any:
    """``div``, ``curl``/``curl[i]``: unit(F)/unit(x), one unit for the components and
    one for the variables."""
    from gradcli.lang.units import difference

    x, common = _over(units, plan)
    comps = [u for k, u in units.outputs.items() if k != "f"] or [_f(units)]
    if not (name == "div" or name.startswith("curl")) or len(common) > 1 or \
            len({str(u) for u in comps}) > 1:
        return None
    return difference(comps[0]) / x


def taylor(name: str, units: Any, plan: Any) -> Any:
    """``coefficient`` and ``derivative``: one unit per multi-index α of the spec,
    ∂^α f / α! in unit(f)/Π unit(x)^α_x (a difference of f's unit past order 0: degC ->
    Δ°C), as unit texts."""
    from gradcli.lang.units import difference, unit_text

    spec = getattr(plan, "spec", None)
    if name not in ("coefficient", "derivative") or spec is None or \
            not getattr(spec, "indices", None):
        return None
    f = _f(units)
    xs = [difference(units.of(n.split("[")[0])) for n in spec.names]
    out = []
    for alpha in spec.indices:
        unit = f if not any(alpha) else difference(f)
        for x, k in zip(xs, alpha, strict=True):
            if k:
                unit = unit / x ** int(k)
        out.append(unit_text(unit) or "1")
    return tuple(out)
