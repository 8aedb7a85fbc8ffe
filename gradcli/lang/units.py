"""Physical units: read by pint, inferred over the expression once before anything is
computed, and turned into a rewritten expression that computes in SI base units.

pint (the units library of the xarray, MetPy and pint-xarray ecosystem) is imported only
when a unit is in play (:func:`registry`), so a unit-free command starts as fast as before.

How values travel: every variable's value is converted to SI base units by the program
itself (``x`` in cm becomes ``x*0.01`` in the compiled expression), the whole computation
runs in base units, and each output is converted to the unit it is shown in at the end
(``f*k + offset``). Derivatives are then taken through those conversions by the engine's
own chain rule, so ``df/dx`` is in unit(f)/unit(x) with no conversion after the run, and a
request without units compiles exactly the expression it did before (no node is added).

Inference (:func:`infer`) walks the tree once: a sum or comparison of different
dimensions, a transcendental function of a dimensioned value, a dimensioned exponent or a
``where`` whose branches differ is an :class:`ExpressionError` with a caret under the
offending part, naming both units.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from gradcli.errors import ExpressionError, UnitError
from gradcli.lang.ast import (
    Assign,
    Binary,
    Call,
    Compare,
    Const,
    Define,
    Index,
    Node,
    Num,
    Program,
    Ref,
    Unary,
    Var,
    Vector,
    fold,
    with_children,
)

__all__ = ["registry", "parse_unit", "unit_text", "cf_text", "WithUnit", "split_value",
           "infer", "Inferred", "SAME", "ROOT", "KEEP", "RATIO", "function_rule"]

_REGISTRY: Any = None


def registry() -> Any:
    """pint's unit registry, made once per process (its definitions cached on disk in the
    user's cache directory, :func:`_cache_folder`)."""
    global _REGISTRY
    if _REGISTRY is None:
        pint = _import_pint()
        folder = _cache_folder(pint)
        try:
            _REGISTRY = pint.UnitRegistry(cache_folder=folder)
        except Exception:
            _REGISTRY = _registry_anew(pint, folder)
    return _REGISTRY


def _registry_anew(pint: Any, folder: Any) -> Any:
    """The registry when its cache could not be read: pint writes its cache files in
    place, so two first runs at once (or a full disk) can leave one cut short, and every
    later run would parse the definitions again. The folder is emptied and written anew;
    failing that, the registry goes without a cache."""
    if folder is not None:
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        try:
            return pint.UnitRegistry(cache_folder=_cache_folder(pint))
        except Exception:
            pass
    return pint.UnitRegistry()


def _import_pint() -> Any:
    """pint, imported without what gradcli does not use.

    pint imports dask, scipy, babel and uncertainties when they are installed (0.3 s with
    dask); gradcli converts plain numbers and arrays only, so they are hidden unless the
    process has already imported them. pint, flexcache and flexparser each ask
    ``importlib.metadata`` for their own version, and importing it takes 15-20 ms (a tenth
    of a command's start with units): while they load, that module is a stand-in that
    reads the version from the ``NAME-VERSION.dist-info`` folder and hands anything else
    (or a version it cannot find) to the real module."""
    import sys
    import types

    hidden = [m for m in ("dask", "scipy", "babel", "uncertainties") if m not in sys.modules]
    sys.modules.update(dict.fromkeys(hidden))
    stand_in = None
    if "importlib.metadata" not in sys.modules:
        stand_in = types.ModuleType("importlib.metadata")

        def real(attr: str) -> Any:
            if attr.startswith("__"):  # the import system's probes (__path__, __spec__)
                raise AttributeError(attr)
            if sys.modules.get("importlib.metadata") is stand_in:
                del sys.modules["importlib.metadata"]
            import importlib

            return getattr(importlib.import_module("importlib.metadata"), attr)

        listings: dict[str, list[str]] = {}

        def version(name: str) -> str:
            return _dist_version(name, listings) or real("version")(name)

        stand_in.__getattr__ = real  # type: ignore[attr-defined]  # PEP 562
        stand_in.version = version  # type: ignore[attr-defined]
        sys.modules["importlib.metadata"] = stand_in
    try:
        import pint
    except ImportError:
        raise UnitError("units need pint: pip install 'gradcli[units]'") from None
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
        if stand_in is not None and sys.modules.get("importlib.metadata") is stand_in:
            del sys.modules["importlib.metadata"]
    return pint


def _dist_version(name: str, listings: dict[str, list[str]] | None = None) -> str | None:
    """The version of the installed distribution ``name`` from the name of its
    ``NAME-VERSION.dist-info`` folder, the first on ``sys.path`` (as
    ``importlib.metadata`` finds it); None when there is none. ``listings`` keeps the
    folders' listings from one call to the next."""
    import os
    import sys

    listings = {} if listings is None else listings
    wanted = re.sub(r"[-_.]+", "_", name).lower()
    for entry in sys.path:
        if entry not in listings:
            try:
                listings[entry] = [n for n in os.listdir(entry or ".")
                                   if n.endswith(".dist-info")]
            except OSError:
                listings[entry] = []
        for folder in listings[entry]:
            project, _, rest = folder.partition("-")
            if rest.endswith(".dist-info") and re.sub(r"[-_.]+", "_", project).lower() == wanted:
                return rest[:-len(".dist-info")]
    return None


def _cache_folder(pint: Any) -> Any:
    """Where pint caches its parsed definitions (a 0.15 s parse becomes a 0.02 s load):
    the user's cache directory, one folder per pint installation, or None when it cannot
    be made (the registry is then parsed each time). pint's own ``:auto:`` folder is shared
    by every installation, and its entries are found by the definitions' content but name
    the files that wrote them: a removed environment's entry then breaks every other
    environment's registry (a missing ``constants_en.txt``)."""
    import hashlib
    import os

    try:
        import platformdirs  # a dependency of pint

        where = os.path.dirname(os.path.abspath(pint.__file__))
        key = hashlib.sha1(f"{getattr(pint, '__version__', '')}|{where}".encode()).hexdigest()
        folder = platformdirs.user_cache_path("gradcli", appauthor=False) / f"pint-{key[:12]}"
        folder.mkdir(parents=True, exist_ok=True)
        return folder if os.access(folder, os.W_OK) else None
    except Exception:  # no home, a read-only disk: no cache
        return None


def parse_unit(text: Any, what: str = "unit") -> Any:
    """The pint Unit named by ``text`` (``"m/s^2"``, ``"ohm"``, ``"Ω"``, ``"degC"``) or a
    pint Unit/Quantity's own unit; UnitError naming ``what`` otherwise."""
    reg = registry()
    if isinstance(text, reg.Unit):
        return text
    if isinstance(text, reg.Quantity):
        return text.units
    raw = str(text).strip()
    if not raw:
        raise UnitError(f"{what}: no unit given")
    try:
        unit = reg.Unit(raw)
    except Exception:
        raise UnitError(f"{what}: '{raw[:40]}' is not a unit pint knows (for example m, "
                        "km/h, V, mA, ohm, degC, deg, m/s^2)") from None
    return unit


def unit_text(unit: Any) -> str:
    """A unit as shown: pint's abbreviated compact form with ``^`` powers (``V/mA``,
    ``m/s^2``, ``Ω``); empty for a pure number."""
    if unit is None or (unit.dimensionless and not str(unit)):
        return ""
    reg = registry()

    def power(name: str, k: float) -> str:
        symbol = reg.get_symbol(name) if not name.startswith("delta_") else \
            "Δ" + reg.get_symbol(name[6:])
        k = abs(k)
        exp = "" if k == 1 else f"^{int(k)}" if float(k).is_integer() else f"^{k:g}"
        return symbol + exp

    items = list(unit._units.items())
    up = [power(n, k) for n, k in items if k > 0]
    down = [power(n, k) for n, k in items if k < 0]
    text = "*".join(up) or ("1" if down else "")
    if down:
        text += "/" + (down[0] if len(down) == 1 else "(" + "*".join(down) + ")")
    return text


def cf_text(unit_shown: str) -> str:
    """A shown unit in UDUNITS-2 syntax, as CF's ``units`` attribute wants it (``Ω`` ->
    ``ohm``, ``µ`` -> ``u``, ``deg`` -> ``degree``, ``delta_degC`` -> ``K``)."""
    text = unit_shown.replace("Ω", "ohm").replace("µ", "u").replace("°", "degree")
    text = re.sub(r"\bΔ°C\b|\bdelta_degC\b", "K", text)
    text = re.sub(r"\bdeg\b", "degree", text)
    return text


class WithUnit(NamedTuple):
    """A value given with its unit (``at`` given ``V=4.999 V``; a pint Quantity)."""

    value: Any
    unit: str


# a unit starts with a letter (m, mA, Ω, µs) or °/%: "2*y" is no number with a unit
_NUMBER_UNIT = re.compile(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*"
                          r"((?:[^\W\d_]|[°%]).*)$")


def split_value(text: str) -> tuple[str, str] | None:
    """``"4.999 V"`` -> ``("4.999", "V")``; None when the text is no number followed by a
    unit (a constant expression such as ``pi/2`` is read as before)."""
    match = _NUMBER_UNIT.fullmatch(text)
    if match is None:
        return None
    try:  # only a unit pint knows: "2 foo" keeps the message of a bad constant
        parse_unit(match.group(2), "")
    except UnitError:
        return None
    return match.group(1), match.group(2).strip()


# --- how each function treats units --------------------------------------------------------
#: the argument's unit passes through (abs of a length is a length)
KEEP = "keep"
#: the arguments must share a dimension; the result has it (hypot, min, max)
SAME = "same"
#: the arguments must share a dimension; the result is a pure number (atan2)
RATIO = "ratio"
#: a root: the unit to a fractional power
ROOT = "root"
#: the result is a pure number whatever the argument (sign)
SIGN = "sign"

#: the language's functions that accept a dimensioned argument; every other function of the
#: rule table (sin, exp, log, erf, ...) needs a pure number (an angle in deg or rad is one:
#: it goes in converted to radians) and gives one
_RULES = {"abs": KEEP, "floor": KEEP, "ceil": KEEP, "relu": KEEP, "sign": SIGN,
          "sqrt": (ROOT, 2), "cbrt": (ROOT, 3), "hypot": SAME, "min": SAME, "max": SAME,
          "minimum": SAME, "maximum": SAME, "atan2": RATIO, "sum": KEEP, "mean": KEEP,
          "norm": KEEP, "cumsum": KEEP, "transpose": KEEP, "trace": KEEP}


def function_rule(name: str) -> Any:
    """How function ``name`` treats units (one of the constants above, or ``(ROOT, n)``);
    None: it needs a pure number and gives one."""
    return _RULES.get(name)


class Inferred(NamedTuple):
    """What inference found: the rewritten tree (computing in base units, outputs in
    their shown units), each output's shown unit (pint Units, one per output component
    of a literal, else one), and each named step's unit (its SI base unit)."""

    tree: Node
    outputs: list[Any]
    steps: dict[str, Any]


def difference(unit: Any) -> Any:
    """A difference of ``unit``: degC -> delta_degC (derivatives of temperatures); any
    other unit is its own."""
    if _is_offset(unit):
        return registry().Unit("delta_" + str(unit))
    return unit


def _is_offset(unit: Any) -> bool:
    reg = registry()
    return not reg.Quantity(1, unit)._is_multiplicative


def _to_base(unit: Any) -> tuple[float, float, Any]:
    """(scale, offset, base unit): value_base = value*scale + offset."""
    reg = registry()
    base = reg.Quantity(0.0, unit).to_base_units()
    one = reg.Quantity(1.0, unit).to_base_units()
    scale = float(one.magnitude - base.magnitude)
    return scale, float(base.magnitude), one.units


def _affine(node: Node, scale: float, offset: float) -> Node:
    """``node*scale + offset`` as nodes (nothing added for 1 and 0)."""
    pos = getattr(node, "pos", 0)
    out = node
    if scale != 1.0:
        out = Binary("*", out, Num(abs(scale), pos), pos)
        if scale < 0:
            out = Unary("-", out, pos)
    if offset != 0.0:
        out = Binary("+" if offset > 0 else "-", out, Num(abs(offset), pos), pos)
    return out


def _constant(node: Node) -> float | None:
    """The value of a constant exponent (``2``, ``-1``, ``1/2``, ``pi``), or None."""
    if isinstance(node, Num):
        return float(node.value)
    if isinstance(node, Const):
        import math
        return {"pi": math.pi, "e": math.e, "tau": math.tau}.get(node.name)
    if isinstance(node, Unary):
        inner = _constant(node.operand)
        return None if inner is None else (-inner if node.op == "-" else inner)
    if isinstance(node, Binary) and node.op in "+-*/":
        a, b = _constant(node.left), _constant(node.right)
        if a is None or b is None or (node.op == "/" and b == 0):
            return None
        return {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[node.op]
    return None


class _Inference:
    """The unit rules of the language, and (``checking``) the checks that refuse a
    mismatch with a caret."""

    checking = True

    def __init__(self, text: str, variables: Mapping[str, Any],
                 steps: Mapping[str, Any]) -> None:
        self.text = text
        self.reg = registry()
        self.one = self.reg.Unit("")
        self.declared_steps = dict(steps)
        self.variables = {n: (_to_base(u)[2] if _is_offset(u) else u)
                          for n, u in variables.items()}
        self.steps: dict[str, Any] = {}
        self.functions: dict[str, Define] = {}

    def literal(self, node: Num) -> Any:
        """The unit written after a number (``9.81 'm/s^2'``), with a caret when pint
        cannot read it."""
        try:
            return parse_unit(node.unit, "the unit")
        except UnitError as exc:
            raise self.err(node, str(exc)) from None

    def err(self, node: Node, reason: str) -> ExpressionError:
        return ExpressionError(reason, self.text, getattr(node, "pos", None))

    def show(self, unit: Any) -> str:
        return unit_text(unit) or "a pure number (no unit)"

    def same(self, node: Node, a: Any, b: Any, what: str) -> None:
        if not self.checking:
            return
        if isinstance(a, tuple) or isinstance(b, tuple):
            for x, y in zip(a if isinstance(a, tuple) else (a,) * len(b),
                            b if isinstance(b, tuple) else (b,) * len(a), strict=False):
                self.same(node, x, y, what)
            return
        if a.dimensionality != b.dimensionality:
            raise self.err(node, f"{what} of different dimensions: {self.show(a)} and "
                                 f"{self.show(b)}")

    def pure(self, node: Node, unit: Any, what: str) -> None:
        if not self.checking:
            return
        for u in unit if isinstance(unit, tuple) else (unit,):
            if not u.dimensionless:
                raise self.err(node, f"{what} needs a pure number (or an angle), got "
                                     f"{self.show(u)}")

    def lift(self, fn: Any, *units: Any) -> Any:
        """Apply ``fn`` to units, elementwise over a literal's tuple of units."""
        n = next((len(u) for u in units if isinstance(u, tuple)), None)
        if n is None:
            return fn(*units)
        return tuple(self.lift(fn, *[u[i] if isinstance(u, tuple) else u for u in units])
                     for i in range(n))

    def unit(self, node: Node, scope: Mapping[str, Any]) -> Any:
        return fold(node, lambda n, parts: self.combine(n, parts, scope))

    def combine(self, node: Node, parts: list[Any], scope: Mapping[str, Any]) -> Any:
        one = self.one
        if isinstance(node, Num) and node.unit:
            unit = self.literal(node)
            return _to_base(unit)[2] if _is_offset(unit) else unit
        if isinstance(node, (Num, Const)):
            return one
        if isinstance(node, Var):
            return self.variables.get(node.name, one)
        if isinstance(node, Ref):
            return scope[node.name] if node.name in scope else self.steps.get(node.name, one)
        if isinstance(node, Unary):
            return parts[0]
        if isinstance(node, Vector):
            if all(not isinstance(p, tuple) and p == parts[0] for p in parts):
                return parts[0]
            return tuple(parts)
        if isinstance(node, Index):
            target = parts[0]
            if isinstance(target, tuple) and isinstance(node.index, int):
                return target[node.index]
            if isinstance(target, tuple):
                self.same(node, target[0], target, "indexing across items")
                return target[0]
            return target
        if isinstance(node, Compare):
            self.same(node, parts[0], parts[1], f"'{node.op}' compares values")
            return one
        if isinstance(node, Binary):
            a, b = parts
            op = node.op
            if op in "+-":
                self.same(node, a, b, f"'{op}' adds values")
                if not self.checking and not isinstance(a, tuple) and a.dimensionless:
                    return b  # checked before: a rewritten offset (T + 273.15) is in K
                return a
            if op in ("*", "@"):
                return self.lift(lambda x, y: x * y, a, b)
            if op == "/":
                return self.lift(lambda x, y: x / y, a, b)
            # ^ and **: a dimensioned base needs a constant exponent
            self.pure(node.right, b, "an exponent")
            if all(u.dimensionless for u in (a if isinstance(a, tuple) else (a,))):
                return a
            power = _constant(node.right)
            if power is None and not self.checking:
                return None
            if power is None:
                raise self.err(node, f"a value in {self.show(a)} needs a constant exponent "
                                     "(its unit would depend on the value)")
            return self.lift(lambda x: x ** power, a)
        if isinstance(node, Call):
            return self.call(node, parts, scope)
        return one

    def call(self, node: Call, parts: list[Any], scope: Mapping[str, Any]) -> Any:
        name = node.func
        if name in self.functions:
            define = self.functions[name]
            inner = dict(zip(define.params, parts, strict=True))
            return self.unit(define.body, inner)
        if name == "where":
            self.same(node, parts[1], parts[2], "where's branches are")
            if not self.checking and not isinstance(parts[1], tuple) and \
                    parts[1].dimensionless:
                return parts[2]
            return parts[1]
        if name == "pow":
            return self.combine(Binary("^", node.args[0], node.args[1], node.pos), parts,
                                scope)
        if name in ("dot", "outer", "prod", "det", "inv", "solve"):
            if name in ("dot", "outer"):
                return self.lift(lambda x, y: x * y, parts[0], parts[1])
            if name == "inv":
                return self.lift(lambda x: 1 / x, parts[0])
            if name == "solve":
                return self.lift(lambda x, y: y / x, parts[0], parts[1])
            self.pure(node, parts[0], f"{name}()")  # prod/det: the power depends on the size
            return self.one
        rule = function_rule(name)
        if rule is None:
            for part in parts:
                self.pure(node, part, f"{name}()")
            return self.one
        if rule == KEEP:
            return parts[0]
        if rule == SIGN:
            return self.one
        if rule in (SAME, RATIO):
            if len(parts) == 2:
                self.same(node, parts[0], parts[1], f"{name}() takes values")
            return self.one if rule == RATIO else parts[0]
        _, n = rule
        return self.lift(lambda x: x ** (1 / n), parts[0])


class CheckedRules(_Inference):
    """The unit rules without their checks, for a program already checked and rewritten
    to compute in SI base units (``gradcli graph`` labels each compiled node with them): a
    sum takes its first dimensioned part's unit (``T + 273.15`` is in K), ``where`` its
    dimensioned branch, a power with an exponent that is not constant has no one unit
    (None); a number with a unit is in the one ``constants`` gives it (by the node's id)."""

    checking = False

    def __init__(self, variables: Mapping[str, Any],
                 constants: Mapping[int, Any] | None = None) -> None:
        super().__init__("", {}, {})
        self.variables = dict(variables)
        self.constants = dict(constants or {})

    def rule(self, node: Node, parts: list[Any]) -> Any:
        """The unit of ``node`` from its parts' units (None: no one unit)."""
        if isinstance(node, Num):
            return self.constants.get(id(node), self.one)
        if any(p is None for p in parts):
            return None
        return self.combine(node, parts, {})


def infer(tree: Node, text: str, variables: Mapping[str, Any],
          outputs: Mapping[str, Any] | None = None,
          steps: Mapping[str, Any] | None = None) -> Inferred:
    """Check ``tree``'s units given its ``variables``' units (pint Units; a variable not
    named is a pure number) and rewrite it to compute in SI base units, each output
    converted at the end to its shown unit: the inferred one, or ``outputs[name]`` (a
    compatible unit, the ``to`` parameter's ``f=kohm``; name ``f``, or ``f[0]`` for a
    literal's component).
    ``steps`` gives program steps a unit (``g = 9.81`` with ``g`` in m/s^2: a pure number
    becomes that quantity). ExpressionError (caret, both units named) for a mismatch."""
    inference = _Inference(text, variables, steps or {})
    reg = inference.reg
    statements = list(tree.statements) if isinstance(tree, Program) else [tree]
    out: list[Node] = []
    last_unit: Any = inference.one
    for statement in statements:
        if isinstance(statement, Define):
            inference.functions[statement.name] = statement
            out.append(statement)
            continue
        value = statement.value if isinstance(statement, Assign) else statement
        unit = inference.unit(value, {})
        if isinstance(statement, Assign) and statement.name in inference.declared_steps:
            declared = inference.declared_steps[statement.name]
            if isinstance(unit, tuple) or not unit.dimensionless:
                inference.same(statement, declared, unit, f"the step '{statement.name}' is "
                               "declared in one unit and computes in another:")
            else:  # a pure number given a unit: the quantity, in base units
                scale, offset, _ = _to_base(declared)
                value = _affine(value, scale, offset)
                unit = declared if not _is_offset(declared) else _to_base(declared)[2]
        if isinstance(statement, Assign):
            inference.steps[statement.name] = unit
            statement = Assign(statement.name, value, statement.pos)
        out.append(statement)
        last_unit = unit
    # the result: each output converted from base units to its shown unit
    final = out[-1]
    value = final.value if isinstance(final, Assign) else final
    if isinstance(final, Assign):
        value = Ref(final.name, final.pos)
    shown, converted = _convert_outputs(inference, value, last_unit, outputs or {})
    if isinstance(final, Assign):
        out.append(converted)
    else:
        out[-1] = converted
    base_steps = {n: (_to_base(u)[2] if not isinstance(u, tuple) else u)
                  for n, u in inference.steps.items()}
    del reg
    if len(out) == 1 and not isinstance(tree, Program):
        return Inferred(out[0], shown, base_steps)
    return Inferred(Program(tuple(out), getattr(tree, "pos", 0)), shown, base_steps)


def _convert_outputs(inference: _Inference, value: Node, unit: Any,
                     wanted: Mapping[str, Any]) -> tuple[list[Any], Node]:
    """The result node converted per output from base units to the shown unit (a
    literal's component ``f[i]`` as ``wanted["f[i]"]``, else as ``wanted["f"]``)."""
    if isinstance(value, Vector) and not isinstance(unit, tuple) and \
            any(re.fullmatch(r"f\[\d+\]", k) for k in wanted):
        unit = (unit,) * len(value.items)  # one unit, but components asked in others
    if isinstance(unit, tuple):
        if isinstance(value, Vector) and len(value.items) == len(unit):
            items, shown = [], []
            for i, (item, u) in enumerate(zip(value.items, unit, strict=True)):
                target = _target(inference, value, u, wanted.get(f"f[{i}]", wanted.get("f")),
                                 f"f[{i}]")
                shown.append(target)
                items.append(_from_base(item, u, target))
            return shown, with_children(value, items)
        raise inference.err(value, "the components of this value have different units; "
                                   "write them as a bracket literal [a, b]")
    target = _target(inference, value, unit, wanted.get("f"), "f")
    return [target], _from_base(value, unit, target)


def _target(inference: _Inference, node: Node, unit: Any, wanted: Any, name: str) -> Any:
    if wanted is None:
        return unit
    target = parse_unit(wanted, f"the unit for {name}")
    if target.dimensionality != unit.dimensionality:
        raise UnitError(f"{name} is in {inference.show(unit)}, which cannot be converted to "
                        f"{inference.show(target)}")
    return target


def _from_base(node: Node, unit: Any, target: Any) -> Node:
    """``node`` (in the base units of ``unit``) in ``target``."""
    scale, offset, _ = _to_base(target)
    if scale == 1.0 and offset == 0.0:
        return node
    return _affine(node, 1.0 / scale, -offset / scale)


def variable_nodes(tree: Node, variables: Mapping[str, Any],
                   constants: dict[int, Any] | None = None) -> Node:
    """``tree`` with every variable that has a unit read in SI base units
    (``x`` in cm -> ``x*0.01``; ``T`` in degC -> ``T + 273.15``). ``constants``, when
    given, gets the unit of each number that had one, as the plain number that replaces
    it holds it (by that number's id): its own when it is coherent with the SI base units
    (V, m/s^2), else its SI base unit (km -> m); ``graph`` labels the nodes from them."""
    factors = {n: _to_base(u)[:2] for n, u in variables.items()}

    def rewrite(node: Node, parts: list[Node]) -> Node:
        if isinstance(node, Var) and node.name in factors:
            return _affine(node, *factors[node.name])
        if isinstance(node, Num) and node.unit:  # 9.81 'km/h' -> its value in m/s
            unit = parse_unit(node.unit)
            scale, offset, base = _to_base(unit)
            value = node.value * scale + offset
            plain = Num(abs(value), node.pos)
            if constants is not None:  # a unit its value is in: its own when coherent
                constants[id(plain)] = unit if (scale, offset) == (1.0, 0.0) else base
            return plain if value >= 0 else Unary("-", plain, node.pos)
        return with_children(node, parts) if parts else node

    return fold(tree, rewrite)
