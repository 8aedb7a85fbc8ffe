"""Units of one request: the values given with units, the expression checked and rewritten
(``lang/units.py``), and each result block's unit.

A request with no unit anywhere never imports pint and compiles the expression as before.
With units, the checked expression computes in SI base units and shows each output in its
unit, so every derivative the kernels take is already in unit(f)/unit(x); a block's unit
is derived here once from its name's grammar (``df/dx``, ``d2f/dxdy``, ``d3f/dx2dy``,
``df[0]/dx``, ``vjp/dx``, ``jvp``, ``hvp/dx``, ``div``, ``curl``, ``laplacian``,
``|grad f|``) and stored on the block (``Block.unit``), where every writer reads it.
A derivative column asked in another unit (``to={"df/dI": "ohm/mA"}``) is scaled as its
rows are written (:class:`ScaledSink`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref

__all__ = ["Units", "split_units", "apply_units", "label_blocks", "ScaledSink"]


class Units:
    """The units of one prepared request: variables' and steps' (pint Units), outputs'
    (by output name), derivative columns to convert (block name -> factor)."""

    def __init__(self, variables: Mapping[str, Any], outputs: Mapping[str, Any],
                 steps: Mapping[str, Any], to: Mapping[str, str]) -> None:
        self.variables, self.outputs = dict(variables), dict(outputs)
        self.steps, self.to = dict(steps), dict(to)
        self.factors: dict[str, float] = {}

    def of(self, name: str) -> Any:
        from gradcli.lang.units import registry

        unit = self.variables.get(name) or self.steps.get(name)
        return unit if unit is not None else registry().Unit("")


def _quantity(value: Any) -> tuple[Any, str] | None:
    """(magnitude, unit text) of a value given with a unit: a pint Quantity, a
    ``WithUnit`` (``at`` given ``V=4.999 V``) or a text ``"4.999 V"``; None otherwise."""
    from gradcli.lang.units import WithUnit, split_value

    if isinstance(value, WithUnit):
        return value.value, value.unit
    if type(value).__name__ == "Quantity" and hasattr(value, "magnitude") and \
            hasattr(value, "units"):
        return value.magnitude, str(value.units)
    if isinstance(value, str):
        from gradcli.lang import ExpressionError
        from gradcli.lang.spec_text import parse_constant

        try:
            parse_constant(value, "")
            return None
        except (EvaluationError, ExpressionError):
            pass
        split = split_value(value)
        if split is not None:
            return float(split[0]), split[1]
    return None


def has_unit(value: Any) -> bool:
    """Whether ``value`` was given with a unit (a pint Quantity, ``"1 m"``, ``WithUnit``)."""
    return _quantity(value) is not None


def split_units(where: Any, declared: dict[str, Any]) -> Any:
    """``where`` (at's point or list of points, a grid, points, fixed) with every value
    given with a unit made a number in the declared unit of its variable (adding the
    unit to ``declared`` when none is)."""
    if where is None:
        return None
    if isinstance(where, (list, tuple)) and all(isinstance(p, Mapping) for p in where):
        return [split_units(p, declared) for p in where]
    if not isinstance(where, Mapping):
        return where
    out = {}
    for name, value in where.items():
        found = _quantity(value)
        if found is None and isinstance(value, (list, tuple)) and value and \
                _quantity(value[0]) is not None:  # a grid's (start, stop, n) with units
            parts = [_quantity(v) for v in value]
            unit = next(p[1] for p in parts if p is not None)
            out[name] = type(value)(_in(name, p, unit, declared) if p is not None else v
                                    for p, v in zip(parts, value, strict=True))
            continue
        out[name] = value if found is None else _in(name, found, found[1], declared)
    return out


def _in(name: str, found: tuple[Any, str], unit: str, declared: dict[str, Any]) -> Any:
    """The magnitude of ``found`` in ``name``'s declared unit (declaring it if new)."""
    from gradcli.lang.units import parse_unit, registry

    magnitude, given = found
    given_unit = parse_unit(given, f"the unit of '{name}'")
    if name not in declared:
        declared[name] = given_unit
        return magnitude
    target = declared[name]
    if given_unit == target:
        return magnitude
    try:
        return registry().Quantity(np.asarray(magnitude, dtype=float), given_unit).to(
            target).magnitude
    except Exception:
        raise EvaluationError(f"'{name}' is given in {given} but declared in "
                              f"{target:~C}: they cannot be converted") from None


def apply_units(tree: Any, expression: str, request: Any, names: Sequence[str],
                program_steps: Sequence[str]) -> tuple[Any, Units | None, dict[str, Any]]:
    """The tree to compile, the request's Units (None without any unit) and its where
    (``at``/``grid``/``points``/``fixed``) with values given with units made numbers."""
    given_units = request.get("units") or {}
    to = dict(request.get("to") or {})
    where = {k: getattr(request, k) for k in ("at", "grid", "points", "fixed")}
    if not given_units and not to and not _any_quantity(where) and not _literals(tree):
        return tree, None, where
    from gradcli.errors import UnitError
    from gradcli.lang.units import infer, parse_unit, variable_nodes

    try:
        declared = {n: parse_unit(u, f"the unit of '{n}'") for n, u in given_units.items()}
        where = {k: split_units(v, declared) for k, v in where.items()}
    except UnitError as exc:
        raise EvaluationError(str(exc)) from None
    unknown = next((n for n in declared if n not in names and n not in program_steps), None)
    if unknown is not None:
        raise EvaluationError(f"{ref('units', text=unknown)}: '{unknown}' is not a variable "
                              f"or a step here (these are: "
                              f"{', '.join([*names, *program_steps]) or 'none'})")
    variables = {n: u for n, u in declared.items() if n in names}
    steps = {n: u for n, u in declared.items() if n not in names}
    outputs = {k: v for k, v in to.items() if re.fullmatch(r"f(\[\d+\])*", k)}
    try:
        inferred = infer(tree, expression, variables, outputs, steps)
    except UnitError as exc:
        raise EvaluationError(str(exc)) from None
    constants: dict[int, Any] = {}
    compiled = variable_nodes(inferred.tree, variables, constants)
    shown = {("f" if len(inferred.outputs) == 1 else f"f[{i}]"): u
             for i, u in enumerate(inferred.outputs)}
    from gradcli.lang.units import _is_offset, _to_base

    units = Units({n: (_to_base(u)[2] if _is_offset(u) else u) for n, u in variables.items()},
                  shown, inferred.steps, {k: v for k, v in to.items() if k not in outputs})
    units.declared = variables  # the variables' own columns are shown in these
    # the tree compiled, and the base unit of each number in it that had one: graph
    # follows the units node by node through them
    units.tree, units.constants = compiled, constants
    return compiled, units, where


def _literals(tree: Any) -> bool:
    """Whether the expression writes a number with a unit (``9.81 'm/s^2'``)."""
    from gradcli.lang.ast import Num, walk

    return any(isinstance(n, Num) and n.unit for n in walk(tree))


def _any_quantity(where: Mapping[str, Any]) -> bool:
    from gradcli.lang.units import WithUnit

    def has(value: Any) -> bool:
        if isinstance(value, WithUnit) or type(value).__name__ == "Quantity":
            return True
        if isinstance(value, Mapping):
            return any(has(v) for v in value.values())
        if isinstance(value, (list, tuple)):
            return any(has(v) for v in value[:8])
        return isinstance(value, str) and _quantity(value) is not None
    return any(has(v) for v in where.values() if v is not None)


_DERIVATIVE = re.compile(r"d(\d*)(f(?:\[\d+\])*)/(.+)")


def _denominator(text: str, units: Units) -> Any:
    """``dxdy`` / ``dx2dy`` -> unit(x)·unit(y) / unit(x)^2·unit(y), reading the known names."""
    from gradcli.lang.units import registry

    known = sorted([*units.variables, *units.steps, *_others(units)], key=len, reverse=True)
    out, rest = registry().Unit(""), text
    while rest:
        if not rest.startswith("d"):
            return None
        rest = rest[1:]
        name = next((n for n in known if rest.startswith(n)), None)
        if name is None:
            return None
        rest = rest[len(name):]
        power = re.match(r"\d+", rest)
        k = int(power.group()) if power else 1
        rest = rest[power.end():] if power else rest
        out = out * _delta(units.of(name)) ** k
    return out


def _others(units: Units) -> list[str]:
    return list(getattr(units, "names", ()))


def _delta(unit: Any) -> Any:
    """A difference of ``unit`` (``lang.units.difference``: degC -> delta_degC)."""
    from gradcli.lang.units import difference

    return difference(unit)


def block_unit(name: str, units: Units, plan: Any) -> Any:
    """The unit of the block named ``name`` (a pint Unit), or None when it has none that
    one unit can say (a Taylor table mixes orders; a direction over variables of different
    units)."""
    from gradcli.lang.units import registry

    f = units.outputs.get("f") or next(iter(units.outputs.values()), registry().Unit(""))
    if name in units.outputs:
        return units.outputs[name]
    if re.fullmatch(r"(f|jvp)(\[\d+\])+", name) and name.startswith("f"):
        return f  # a literal's component when all components share f's unit
    match = _DERIVATIVE.fullmatch(name)
    if match is not None:
        out = units.outputs.get(match.group(2), f)
        below = _denominator(match.group(3), units)
        return None if below is None else _delta(out) / below
    rule = getattr(getattr(plan, "computation", None), "units", None)
    got = rule(name, units, plan) if rule is not None else None
    return None if isinstance(got, tuple) else got  # per entry: label_blocks says them


def label_blocks(layout: Any, units: Units, plan: Any) -> Any:
    """``layout`` with each result block's unit set (``Block.unit``, the shown text), and
    the factors of derivative columns asked in another unit (``units.factors``)."""
    from gradcli.errors import UnitError
    from gradcli.lang.units import parse_unit, registry, unit_text

    units.names = [n for n, _ in getattr(plan, "targets", ()) or ()]
    blocks = []
    for block in layout.blocks:
        unit = block_unit(block.name, units, plan)
        wanted = units.to.get(block.name)
        if wanted is not None:
            if unit is None:
                raise EvaluationError(f"{ref('to', text=block.name)}: this column has no "
                                      "single unit to convert")
            try:
                target = parse_unit(wanted, f"the unit for {block.name}")
                units.factors[block.name] = float(registry().Quantity(1.0, unit).to(
                    target).magnitude)
            except UnitError as exc:
                raise EvaluationError(str(exc)) from None
            except Exception:
                raise EvaluationError(f"{block.name} is in {unit_text(unit)}, which cannot "
                                      f"be converted to {wanted}") from None
            unit = target
        rule = getattr(getattr(plan, "computation", None), "units", None)
        got = rule(block.name, units, plan) if rule is not None and unit is None else None
        per = got if isinstance(got, tuple) else ()  # one unit per entry (Taylor's)
        # a pure number among results with units says so: "1" (UDUNITS' own spelling)
        blocks.append(replace(block, unit=(unit_text(unit) or "1") if unit is not None
                              else "", units=per))
    missing = next((k for k in units.to if k not in {b.name for b in layout.blocks}), None)
    if missing is not None:
        raise EvaluationError(f"{ref('to', text=missing)}: no result column '{missing}' "
                              f"(columns: {', '.join(b.name for b in layout.blocks)})")
    return replace(layout, blocks=blocks, _names=None)


def label_inputs(inputs: Any, units: Units) -> Any:
    """The variables' own blocks with their declared units."""
    from gradcli.lang.units import unit_text

    declared = getattr(units, "declared", units.variables)
    blocks = [replace(b, unit=unit_text(declared[b.name])) if b.name in declared else b
              for b in inputs.layout.blocks]
    inputs.layout = replace(inputs.layout, blocks=blocks, _names=None)
    return inputs


class ScaledSink:
    """A sink that scales some blocks (derivative columns asked in another unit) as their
    rows pass on to ``sink``."""

    def __init__(self, sink: Any, factors: Mapping[int, float]) -> None:
        self.sink, self.factors = sink, dict(factors)
        self.sequential = getattr(sink, "sequential", False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.sink, name)

    def open(self, layout: Any, shape: Any, dtype: Any, inputs: Any) -> None:
        self.sink.open(layout, shape, dtype, inputs)

    def write(self, start: int, stop: int, values: Sequence[Any]) -> None:
        scaled = [v if v is None or i not in self.factors else np.asarray(v) * self.factors[i]
                  for i, v in enumerate(values)]
        self.sink.write(start, stop, scaled)

    def result(self) -> Any:
        return self.sink.result()


# --- propagate ---------------------------------------------------------------------------

def propagate_inputs(at: Mapping[str, Any], u: Mapping[str, Any] | None,
                     units: Mapping[str, Any] | None) -> tuple[dict, Any, dict[str, Any]]:
    """``propagate``'s estimates and uncertainties with their units taken off: each value
    in its variable's unit (declared by ``units`` or by the estimate's own, ``4.999 V``),
    an uncertainty in a compatible unit converted to it (``+- 3.2 mV`` of volts: 0.0032;
    an offset unit's uncertainty is a difference: 0.1 degC is 0.1 K). Returns
    ``(at, u, units)``, ``units`` by name as text."""
    from gradcli.errors import UnitError
    from gradcli.lang.units import WithUnit, parse_unit, registry

    try:
        declared = {n: parse_unit(t, f"the unit of '{n}'") for n, t in (units or {}).items()}
    except UnitError as exc:
        raise EvaluationError(str(exc)) from None

    def number(name: str, value: Any, difference: bool) -> Any:
        found = _quantity(value) if isinstance(value, WithUnit) or not isinstance(
            value, (list, tuple, np.ndarray)) else None
        if found is None:
            return value
        magnitude, text = found
        unit = parse_unit(text, f"the unit of '{name}'")
        if name not in declared:
            if difference:  # an uncertainty's unit does not declare the variable's
                declared[name] = unit
            else:
                declared[name] = unit
                return magnitude
        target = declared[name]
        reg = registry()
        if difference:
            unit, target = _delta(unit), _delta(target)
        try:
            return float(reg.Quantity(float(magnitude), unit).to(target).magnitude)
        except Exception:
            raise EvaluationError(f"'{name}' is given in {text} but is in {target:~C}: they "
                                  "cannot be converted") from None

    from gradcli.lang.spec_text import split_uncertainty

    out = {}
    for name, given in at.items():
        if isinstance(given, str):  # "4.999 V+-3.2 mV": the estimate and its uncertainty
            estimate, unc = split_uncertainty(given)
            if unc is not None and (_quantity(estimate.strip()) or _quantity(unc.strip())):
                given = (estimate.strip(), unc.strip())
        if isinstance(given, tuple) and len(given) == 2 and not isinstance(given, WithUnit):
            value = number(name, given[0], False)
            out[name] = (value, None if given[1] is None else number(name, given[1], True))
        else:
            out[name] = number(name, given, False)
    u_out = None if u is None else {n: number(n, v, True) for n, v in u.items()}
    return out, u_out, {n: f"{v:~C}" if not isinstance(v, str) else v
                        for n, v in declared.items()}


def propagate_units(table: Any, prepared: Any, budget: bool) -> Any:
    """``propagate``'s table with units on its columns: each estimate in its variable's
    unit; f, u(f), U(f) (and u2, E2, Monte Carlo's mean, sd, low, high) in f's unit when
    every output component has one unit; the budget's value and u(x) in the input's unit,
    c in unit(f)/unit(x) and u_i(f) in unit(f) when its rows share them."""
    from gradcli.lang.units import unit_text

    units = prepared.units
    if units is None:
        return table
    shown = {n: unit_text(u) for n, u in getattr(units, "declared", {}).items()}
    outs = {str(u) for u in units.outputs.values()}
    f = next(iter(units.outputs.values())) if len(outs) == 1 else None
    names = list(shown)
    same_x = len({shown.get(n, "") for n in prepared.binding.names}) == 1
    x = units.of(prepared.binding.names[0]) if prepared.binding.names else None
    per = {}
    if f is not None:
        per.update(dict.fromkeys(("f", "u(f)", "U(f)", "u2(f)", "E2(f)", "mean", "sd", "low",
                                  "high", "u_i(f)"), unit_text(f) or "1"))
    if budget and same_x and x is not None:
        per.update({"value": unit_text(x), "u(x)": unit_text(x)})
        if f is not None:
            per["c"] = unit_text(_delta(f) / _delta(x)) or "1"
    per.update({n: u for n, u in shown.items() if n in names and not budget})
    blocks = [replace(b, unit=per[b.name]) if per.get(b.name) else b
              for b in table.layout.blocks]
    table.layout = replace(table.layout, blocks=blocks, _names=None)
    if budget and not same_x:  # rows of inputs in different units: each row says its own
        from gradcli.plan.blocks import TEXT, Block

        inputs = [str(v) for v in np.asarray(table.arrays["input"]).reshape(-1)]
        outputs = [str(v) for v in np.asarray(table.arrays["output"]).reshape(-1)] \
            if "output" in table.arrays else ["f"] * len(inputs)
        known = set(prepared.binding.names)
        f_units = [units.outputs.get(o, f) for o in outputs]
        # a row of an input: its unit and c's; a summary row (total): its value is f's
        x_units = [units.of(n.split("[")[0]) if n.split("[")[0] in known else None
                   for n in inputs]
        table.arrays["unit(x)"] = np.array(
            [unit_text(xu) if xu is not None else unit_text(fu) if fu is not None else ""
             for xu, fu in zip(x_units, f_units, strict=True)], dtype=object)
        table.arrays["unit(c)"] = np.array(
            [(unit_text(_delta(fu) / _delta(xu)) or "1") if fu is not None and xu is not None
             else "" for fu, xu in zip(f_units, x_units, strict=True)], dtype=object)
        table.layout = replace(table.layout, blocks=[*table.layout.blocks,
                                                     Block("unit(x)", kind=TEXT),
                                                     Block("unit(c)", kind=TEXT)],
                               _names=None)
    return table


# --- norms of vectors whose components have different units ------------------------------

def norm_factors(units: Sequence[Any]) -> np.ndarray | None:
    """The factors taking each of ``units`` (pint Units, one per vector component) to the
    first one's unit: a norm of components in compatible but different units (∇f over x
    in cm and y in m) is the norm of the components so converted, in the first
    component's unit. None when two differ in dimension (x in m, t in s: no norm has a
    unit there, and none is given one) or there are none."""
    from gradcli.lang.units import registry

    if not units:
        return None
    reg = registry()
    first = _delta(units[0])
    try:
        return np.array([float(reg.Quantity(1.0, _delta(u)).to(first).magnitude)
                         for u in units])
    except Exception:  # pint's DimensionalityError: no common unit
        return None


def variable_units(function: Any) -> list[Any]:
    """The unit of each input component of a field function (``function.columns``: x,
    y, v[0] ...), a difference unit for a temperature; a pure number where none is
    declared."""
    from gradcli.lang.units import registry

    declared = getattr(function.units, "declared", function.units.variables)
    return [_delta(declared[c.split("[")[0]]) if c.split("[")[0] in declared else
            registry().Unit("") for c in function.columns]


def residual_units(function: Any) -> list[Any]:
    """The unit of each component of the residual a field function's norm is taken of:
    ∂f/∂x_i in unit(f)/unit(x_i) for a scalar f, F_i in its own unit for a vector field."""
    from gradcli.lang.units import registry

    units = function.units
    f = units.outputs.get("f") or next(iter(units.outputs.values()), registry().Unit(""))
    if function.kind == "scalar":
        return [_delta(f) / x for x in variable_units(function)]
    outs = list(units.outputs.values())
    return [_delta(u) for u in outs] if len(outs) == function.n else \
        [_delta(outs[0] if outs else f)] * function.n


# --- critical points -----------------------------------------------------------------------

def _rows_in_units(columns: Mapping[str, Any], units: Any) -> tuple[Any, Any, dict]:
    """A field command's rows as a Result, the variables' declared units, and each
    variable column's unit text (``x``, ``v[0]``...)."""
    from gradcli.lang.units import unit_text
    from gradcli.plan.blocks import as_result

    declared = getattr(units, "declared", {})
    per = {c: unit_text(declared[c.split("[")[0]]) for c in columns
           if c.split("[")[0] in declared}
    return as_result(columns), declared, per


def critical_units(columns: Mapping[str, Any], function: Any) -> Any:
    """``critical``'s rows with units: the point in its variables' units, f in its own,
    |grad f| in unit(f)/unit(x) of the first variable x (a field's |F| in its first
    component's unit) when the components' units are compatible (``norm_factors``), and
    the Hessian's eigenvalues in unit(f)/unit(x)² when the variables share one unit (the
    Jacobian's in unit(F)/unit(x)); unchanged without units."""
    from gradcli.lang.units import unit_text

    units = getattr(function, "units", None)
    if units is None:
        return columns
    result, declared, per = _rows_in_units(columns, units)
    f = units.outputs.get("f") or next(iter(units.outputs.values()), None)
    xs = {str(units.of(n)) for n in function.variables}
    x = units.of(function.variables[0]) if function.variables else None
    if function.kind in ("scalar", "vector") and norm_factors(residual_units(function)) \
            is not None:  # the norm is in its first component's unit (``norm_factors``)
        per["|grad f|" if function.kind == "scalar" else "|F|"] = \
            unit_text(residual_units(function)[0]) or "1"
    if f is not None:
        per["f"] = unit_text(f) or "1"
        if len(xs) == 1 and x is not None:
            for c in columns:
                if c.startswith("eig["):
                    per[c] = unit_text(_delta(f) / x ** 2) or "1"
                elif c.startswith(("re[", "im[")):
                    per[c] = unit_text(_delta(f) / x) or "1"
    blocks = [replace(b, unit=per[b.name]) if per.get(b.name) else b
              for b in result.layout.blocks]
    result.layout = replace(result.layout, blocks=blocks, _names=None)
    return result


# --- flow ----------------------------------------------------------------------------------

#: how a message names the time's unit parameter (units' t=UNIT; the CLI spells it its own way)
_TIME_UNIT = ref("units", text="t=UNIT", python="{'t': UNIT}")


def flow_time(function: Any, time_unit: Any) -> tuple[np.ndarray, Any]:
    """How ``flow`` reads a field with units: x' = F(x) needs each component of F in
    unit(x)/unit(t). Returns the factor taking each component (as the expression gives
    it: a vector field's own unit, or unit(f)/unit(x) for -grad f) to its variable's unit
    per time unit, and the time's unit (a pint Unit). ``time_unit`` is the one asked
    (``units={'t': 's'}``); without it the time's unit is the first component's unit(x)/unit(F),
    and every other component must agree. A component that cannot be converted is a
    one-line error naming both units."""
    from gradcli.errors import UnitError
    from gradcli.lang.units import parse_unit, registry, unit_text

    reg = registry()
    xs = variable_units(function)
    comps = residual_units(function)
    if time_unit is not None:
        try:
            t = parse_unit(time_unit, "the unit of the time 't'")
        except UnitError as exc:
            raise EvaluationError(str(exc)) from None
    else:
        t = xs[0] / comps[0]
    factors = []
    for column, x, comp in zip(function.columns, xs, comps, strict=True):
        wanted = x / t
        try:
            factors.append(float(reg.Quantity(1.0, comp).to(wanted).magnitude))
        except Exception:
            given = ("the time in " + (unit_text(t) or "pure numbers")) if time_unit is not \
                None else f"the time in {unit_text(t) or 'pure numbers'} (from the first " \
                f"component; give it with {_TIME_UNIT})"
            raise EvaluationError(f"flow: d{column}/dt is in {unit_text(comp) or '1'} by the "
                                  f"field, but {column} is in {unit_text(x) or '1'} and "
                                  f"{given}: they cannot be converted") from None
    return np.asarray(factors), t


def flow_units(columns: Mapping[str, Any], function: Any, time: Any) -> Any:
    """``flow``'s rows with units: t in the time's unit, the point in its variables'
    units, |F| in unit(x)/unit(t) of the first variable x when the variables' units are
    compatible (``norm_factors``: the speed was taken in that unit); unchanged without
    units."""
    from gradcli.lang.units import unit_text

    units = getattr(function, "units", None)
    if units is None:
        return columns
    result, declared, per = _rows_in_units(columns, units)
    if time is not None and unit_text(time):
        per["t"] = unit_text(time)
    if time is not None and function.columns and \
            function.columns[0].split("[")[0] in declared and \
            norm_factors(variable_units(function)) is not None:
        per["|F|"] = unit_text(variable_units(function)[0] / time) or "1"
    blocks = [replace(b, unit=per[b.name]) if per.get(b.name) else b
              for b in result.layout.blocks]
    result.layout = replace(result.layout, blocks=blocks, _names=None)
    return result
