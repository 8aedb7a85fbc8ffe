"""``gradcli.propagate``: measurement uncertainty through a formula, as the GUM says.

JCGM 100:2008 (the GUM) propagates the inputs' standard uncertainties and correlations
through the sensitivity coefficients ∂f/∂xᵢ (its eq. 13, the law of propagation), adds
second-order terms when f is not linear enough (eq. 14), and JCGM 101:2008 checks it by a
Monte Carlo propagation of distributions. Every derivative here is gradcli's own:
first order from the ``jacobian`` kernel at one point (one reverse sweep per output
component), second order by the engine's reverse-over-reverse-over-reverse sweeps of
``g(z) = f(x̂ + L z)`` with L Lᵀ = Σ (independent unit z, so eq. 14, written for
independent inputs, applies to correlated ones too). Monte Carlo runs the formula over
generated samples through the evaluation layer's blocked, threaded runner
(``runner.run``): each block draws its own samples from a seed derived from the run's seed
and the block's first row, so a seed gives the same numbers on any number of threads,
and no more than a block of samples exists at a time.

The coverage interval needs two order statistics of N values. Keeping N values would make
memory grow with N, so a pilot of one block (its own seed) brackets each end of the
interval in rank space by ±6 binomial standard deviations; the run counts the values below
each bracket and keeps only those inside it, and the order statistics are then exact. A
bracket that misses (a one-in-10⁹ event, or a pilot too small) is widened and the run
repeated with the same samples.

Errors name this module's own parameters (``corr['V','I']``, ``u['x']``); the command line
maps them to its options (:class:`PropagationError` keeps the parameter and key apart).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError
from gradcli.lang.spec_text import (
    _assignments,
    _value,
    parse_constant,
    split_top,
    split_uncertainty,
)
from gradcli.plan.blocks import INPUT, RESULT, TEXT, Block, Layout, Result
from gradcli.request import Request
from gradcli.request.binding import Binding
from gradcli.uncertainty.adaptive import Adaptive, run_adaptive
from gradcli.uncertainty.distributions import DISTRIBUTIONS, parse_params
from gradcli.uncertainty.intervals import (
    KINDS,
    End,
    ends_for,
    order_se,
    shortest,
    shortest_q,
    symmetric_ranks,
)
from gradcli.uncertainty.uncertainty_budget import budget_columns
from gradcli.uncertainty.welch import coverage_factor, effective_dof

__all__ = ["propagate", "PropagationError", "Propagated", "split_uncertainty",
           "parse_estimates", "MAX_MONTE_CARLO", "MAX_CORRELATED", "MAX_SECOND_ORDER"]

#: the most Monte Carlo samples one run draws (memory stays bounded whatever N is; this
#: bounds the time)
MAX_MONTE_CARLO = 10**8
#: the most uncertain components a correlated (dense) covariance may have: 4096² float64
#: values are 128 MiB
MAX_CORRELATED = 4096
#: the most uncertain components of a second-order run: eq. 14 needs every second
#: partial (one reverse sweep per component) of every output component
MAX_SECOND_ORDER = 500
#: the most output components whose correlations r(f[i],f[j]) are columns (m(m-1)/2 of
#: them: 1,225 for 50)
MAX_CORRELATED_OUTPUTS = 50
#: the most rows of a budget (output components × uncertain inputs)
MAX_BUDGET_ROWS = 10**6
#: the most output values Monte Carlo accumulates (samples × output components)
MAX_MC_VALUES = 10**9
#: significant digits of u(f) that JCGM 101 §8's numerical tolerance is taken from (the
#: default of ``digits=``)
TOLERANCE_DIGITS = 2
#: the most significant digits ``digits=`` may ask adaptive Monte Carlo for
MAX_DIGITS = 6
#: the kinds of coverage interval ``interval=`` takes
INTERVALS = KINDS

_PILOT = 1 << 18
_SMALL_FACTOR = 8  # up to this many correlated inputs, L·z is written out (no BLAS)
_KEEP_ALL = 1 << 20  # up to this many samples, every value is kept (no pilot)


class PropagationError(EvaluationError):
    """A bad ``propagate`` request: ``param`` is the parameter at fault (``corr``, ``u``,
    ``at``, ``cov``, ``dist``...), ``key`` the entry of it (a name, a pair of names, or
    None), ``detail`` what is wrong with it."""

    def __init__(self, param: str, key: Any, detail: str) -> None:
        self.param, self.key, self.detail = param, key, detail
        super().__init__(f"{param}{_key_text(key)}: {detail}")


def _key_text(key: Any) -> str:
    if key is None:
        return ""
    if isinstance(key, tuple):
        return "[" + ",".join(f"'{k}'" for k in key) + "]"
    return f"['{key}']"


# --- reading the inputs ----------------------------------------------------------------
class Typed(float):
    """A number read from text that keeps the text (``Typed(-0.1, "0.1+-0.2")``), so a
    message can say the number as the user typed it. It is a float everywhere else."""

    text: str

    def __new__(cls, value: float, text: str) -> Typed:
        made = super().__new__(cls, value)
        made.text = text
        return made

    def __reduce__(self) -> tuple[Any, ...]:  # a copy keeps its text
        return (Typed, (float(self), self.text))


def number_text(value: Any, text: str | None = None) -> str:
    """A number for a message, never rounded: the text it was typed as when that reads
    as the number (``1.0000001``), else the text and its value (``0.1+-0.2 (= -0.1)``);
    without text, the shortest text that reads back as it (``-2``, ``0.9999999999``)."""
    text = text if text is not None else getattr(value, "text", None)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    shown = repr(number)
    shown = shown[:-2] if shown.endswith(".0") else shown
    if text is None:
        return shown
    text = text.strip()
    try:
        if float(text) == number:
            return text
    except ValueError:
        pass
    return f"{text} (= {shown})"




def split_dof(text: str) -> tuple[str, str | None]:
    """``"1.0+-0.1;nu=9"`` -> ``("1.0+-0.1", "9")``: an input's degrees of freedom follow
    its estimate and uncertainty after ``;nu=`` (None when not given: infinite)."""
    main, sep, rest = text.partition(";")
    if not sep:
        return text, None
    key, eq, nu = rest.partition("=")
    if key.strip() != "nu" or not eq or not nu.strip():
        raise EvaluationError(f"'{text.strip()}': after ';' expected nu=DEGREES (the "
                              "degrees of freedom of the uncertainty)")
    return main, nu.strip()


def parse_estimates(spec: str, option: str = "at", files: Any = None
                    ) -> dict[str, tuple[Any, ...]]:
    """``"V=4.999+-0.0032, R=50"`` -> ``{"V": (4.999, 0.0032), "R": (50.0, None)}``; a
    value or uncertainty ``@FILE`` is read by ``files`` (as ``parse_point`` does);
    ``"x=1+-0.1;nu=9"`` adds the degrees of freedom, ``(1.0, 0.1, 9.0)``."""
    out: dict[str, tuple[Any, ...]] = {}
    for name, whole in _assignments(spec, option):
        if name in out:
            raise EvaluationError(f"{option} '{spec}': '{name}' is given twice")
        try:
            text, nu = split_dof(whole)
        except EvaluationError as exc:
            raise EvaluationError(f"{option} {name}: {exc}") from None
        value, unc = split_uncertainty(text)
        if not value.strip():
            raise EvaluationError(f"{option} '{spec}': no value for '{name}' before "
                                  "its +-")
        if unc is not None and not unc.strip():
            raise EvaluationError(f"{option} '{spec}': no uncertainty for '{name}' after "
                                  "its +-")
        out[name] = (_typed(_value(value, f"{option} {name}", files), value),
                     None if unc is None else _typed(_value(unc, f"{option} {name} (its "
                                                            "uncertainty after +-)", files),
                                                     unc))
        if nu is not None:
            out[name] += (parse_constant(nu, f"{option} {name} (its nu)"),)
    return out


def _typed(value: Any, text: str) -> Any:
    """A scalar read from ``text`` as a :class:`Typed` (arrays and files as they are)."""
    if isinstance(value, float) and not text.strip().startswith("@"):
        return Typed(value, text)
    return value


def _smallest(arr: np.ndarray, given: Any) -> str:
    """The most negative of ``arr`` for a message: as typed when one number was given."""
    if arr.ndim == 0:
        text = given if isinstance(given, str) else getattr(given, "text", None)
        return number_text(float(arr), text)
    return number_text(float(arr.min()))


def _number_array(value: Any, param: str, key: Any, what: str) -> np.ndarray:
    if isinstance(value, str):
        try:
            value = parse_constant(value, "")
        except EvaluationError as exc:
            raise PropagationError(param, key, f"{what}: {str(exc).lstrip(': ')}") from None
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise PropagationError(param, key, f"{what} must be a number or a vector of "
                               f"numbers, not {value!r}") from None
    if arr.ndim > 1:
        raise PropagationError(param, key, f"{what} must be a number or a vector, not an "
                               f"array of shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise PropagationError(param, key, f"{what} must be finite")
    return arr


@dataclass
class Inputs:
    """The estimates and their joint uncertainty.

    ``names``/``values`` every variable in ``at=`` order (scalars ``()``, vectors
    ``(n,)``); ``labels`` the uncertain components (``V``, ``x[0]``), ``var`` and
    ``index`` which variable and component each is; ``u`` their standard uncertainties;
    ``cov`` the covariance matrix when any correlation is given (else None: independent);
    ``kinds`` each component's distribution for Monte Carlo and ``shapes`` its
    scale-free parameters (:mod:`.distributions`); ``nu`` each component's
    degrees of freedom (``inf``: Type B, exactly known u); ``unit`` which
    Welch–Satterthwaite unit each is (components from the same readings share one).
    """

    names: list[str]
    values: dict[str, np.ndarray]
    labels: list[str] = field(default_factory=list)
    var: list[str] = field(default_factory=list)
    index: list[int] = field(default_factory=list)
    u: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cov: np.ndarray | None = None
    kinds: list[str] = field(default_factory=list)
    shapes: list[tuple[float, ...]] = field(default_factory=list)
    nu: np.ndarray = field(default_factory=lambda: np.zeros(0))
    unit: np.ndarray | None = None
    dist_text: dict[str, str] = field(default_factory=dict)

    @property
    def estimates(self) -> np.ndarray:
        return np.array([self.values[v].reshape(-1)[i] for v, i in
                         zip(self.var, self.index, strict=True)])

    def factor(self) -> np.ndarray:
        """L with L Lᵀ = Σ: the diagonal u (as a vector) when independent, else the
        Cholesky factor (an eigen-decomposition's for a singular Σ)."""
        if self.cov is None:
            return self.u
        try:
            return np.linalg.cholesky(self.cov)
        except np.linalg.LinAlgError:
            w, q = np.linalg.eigh(self.cov)
            return q * np.sqrt(np.clip(w, 0.0, None))

    def covariance_product(self, c: np.ndarray) -> np.ndarray:
        """Σ·cᵀ for rows c (m, n)."""
        if self.cov is None:
            return c * self.u**2
        return c @ self.cov


def component_labels(name: str, shape: tuple[int, ...]) -> list[str]:
    """A variable's components as ``corr``/``cov`` name them: ``V``; ``x[0]``, ``x[1]``."""
    return [name + "".join(f"[{i}]" for i in idx) for idx in np.ndindex(*shape)]


_labels = component_labels


def _read_inputs(at: Mapping[str, Any], u: Mapping[str, Any] | None,
                 corr: Mapping[Any, Any] | None, cov: Any,
                 dist: Mapping[str, Any] | None,
                 nu: Mapping[str, Any] | None = None) -> Inputs:
    if not isinstance(at, Mapping):
        raise PropagationError("at", None, "give the estimates as a mapping of names to "
                               "values, e.g. {'V': '4.999+-0.0032'}")
    values: dict[str, np.ndarray] = {}
    unc: dict[str, tuple[np.ndarray, str]] = {}  # name -> (u, where it came from)
    dofs: dict[str, tuple[Any, str]] = {}  # name -> (nu as given, where)
    typed: dict[str, Any] = {}  # name -> the uncertainty as given (its text, if any)
    for name, given in at.items():
        if isinstance(given, str):
            try:
                given, nu_text = split_dof(given)
            except EvaluationError as exc:
                raise PropagationError("at", name, str(exc)) from None
            if nu_text is not None:
                dofs[name] = (nu_text, "at")
            text, utext = split_uncertainty(given)
            value = _number_array(text, "at", name, "the estimate")
            if utext is not None:
                unc[name] = (_number_array(utext, "at", name, "the uncertainty after +-"),
                             "at")
                typed[name] = utext
        elif isinstance(given, tuple) and len(given) in (2, 3):  # (value, u[, nu])
            value = _number_array(given[0], "at", name, "the estimate")
            if given[1] is not None:
                unc[name] = (_number_array(given[1], "at", name, "the uncertainty"), "at")
                typed[name] = given[1]
            if len(given) == 3 and given[2] is not None:
                dofs[name] = (given[2], "at")
        else:
            value = _number_array(given, "at", name, "the estimate")
        values[name] = value
    for name, given in (u or {}).items():
        if name not in values:
            raise PropagationError("u", name, f"'{name}' has no estimate: give it a value "
                                   "(with its uncertainty, VALUE+-U)")
        if name in unc:
            raise PropagationError("u", name, "the uncertainty is also given with the estimate "
                                   "(VALUE+-U): give it once")
        unc[name] = (_number_array(given, "u", name, "the uncertainty"), "u")
        typed[name] = given
    for name, given in (nu or {}).items():
        if name not in values:
            raise PropagationError("nu", name, f"'{name}' has no estimate: give it a value "
                                   "(with its uncertainty, VALUE+-U)")
        if name in dofs:
            raise PropagationError("nu", name, "the degrees of freedom are also given with "
                                   "the estimate (;nu=): give them once")
        dofs[name] = (given, "nu")
    for name, (arr, where) in list(unc.items()):
        shape = values[name].shape
        if arr.shape not in ((), shape):
            raise PropagationError(where, name, f"{arr.size} uncertainties for a variable "
                                   f"of {values[name].size} components")
        if np.any(arr < 0):
            raise PropagationError(where, name, f"the uncertainty "
                                   f"{_smallest(arr, typed.get(name))} is negative: a "
                                   "standard uncertainty is >= 0")
        unc[name] = (np.broadcast_to(arr, shape).astype(np.float64), where)
    kinds: dict[str, tuple[str, list[tuple[float, ...]]]] = {}
    dist_text: dict[str, str] = {}
    for name, given in (dist or {}).items():
        if name not in values:
            raise PropagationError("dist", name, f"'{name}' has no estimate: give it a value "
                                   "(with its uncertainty, VALUE+-U)")
        kinds[name], implied, dist_text[name] = _distribution(name, given, values[name],
                                                              unc.get(name))
        unc[name] = (implied, "dist")
    inputs = Inputs(list(values), values)
    inputs.dist_text = dist_text
    covered: dict[str, int] = {}
    cov_matrix = _read_cov(cov, values) if cov is not None else None
    in_cov_names = set() if cov_matrix is None else \
        {str(c).partition("[")[0].strip() for c in cov_matrix[0]}
    for name in values:
        in_cov = name in in_cov_names
        if name not in unc and not in_cov:
            continue
        for i, label in enumerate(_labels(name, values[name].shape)):
            covered[label] = len(inputs.labels)
            inputs.labels.append(label)
            inputs.var.append(name)
            inputs.index.append(i)
            kind, params = kinds.get(name, ("normal", []))
            inputs.kinds.append(kind)
            inputs.shapes.append(DISTRIBUTIONS[kind].shape(params[i]) if params else ())
    n = len(inputs.labels)
    s = np.zeros(n)
    for j, (name, i) in enumerate(zip(inputs.var, inputs.index, strict=True)):
        if name in unc:
            s[j] = unc[name][0].reshape(-1)[i]
    if cov_matrix is not None:
        if corr:
            raise PropagationError("cov", None, "give correlations or a covariance matrix, "
                                   "not both")
        inputs.cov = _place_cov(cov_matrix, inputs, covered, s, unc)
        s = np.sqrt(np.diag(inputs.cov))
    elif corr:
        inputs.cov = _corr_cov(corr, inputs, covered, s, values)
    inputs.u = s
    if inputs.cov is not None:
        _check_psd(inputs, "cov" if cov_matrix is not None else "corr")
    inputs.nu = _read_dofs(dofs, inputs)
    return inputs


def _read_dofs(dofs: Mapping[str, tuple[Any, str]], inputs: Inputs) -> np.ndarray:
    """Each uncertain component's degrees of freedom (inf unless given): > 0, or inf."""
    out = np.full(len(inputs.labels), np.inf)
    for name, (given, where) in dofs.items():
        if isinstance(given, str) and given.strip().lower() in ("inf", "infinity"):
            given = math.inf
        if isinstance(given, str):
            arr = _number_array(given, where, name, "the degrees of freedom nu")
        else:
            try:
                arr = np.array(given, dtype=np.float64)
            except (TypeError, ValueError):
                raise PropagationError(where, name, f"the degrees of freedom nu must be a "
                                       f"number, not {given!r}") from None
        cols = [j for j, v in enumerate(inputs.var) if v == name]
        if not cols:
            raise PropagationError(where, name, "degrees of freedom for a variable without "
                                   "an uncertainty: give it one (VALUE+-U)")
        if arr.shape not in ((), (len(cols),)) or np.any(np.isnan(arr)) or np.any(arr <= 0):
            raise PropagationError(where, name, f"the degrees of freedom nu must be > 0 (or "
                                   f"inf), one or one per component, not {_shown(arr)}")
        out[cols] = arr
    return out


def _shown(a: Any) -> str:
    arr = np.asarray(a, dtype=float)
    if arr.ndim == 0 or np.all(arr == arr.reshape(-1)[0]):
        return f"{float(arr.reshape(-1)[0]):.6g}"
    return "[" + ", ".join(f"{v:.6g}" for v in arr.reshape(-1)[:4]) + \
        (", ...]" if arr.size > 4 else "]")


def _distribution(name: str, given: Any, value: np.ndarray,
                  have: tuple[np.ndarray, str] | None
                  ) -> tuple[tuple[str, list[tuple[float, ...]]], np.ndarray, str]:
    """``"trapezoid:0.1,0.5"`` or ``("trapezoid", 0.1, 0.5)`` for variable ``name``:
    ((kind, parameters per component), the standard uncertainties it implies, its
    text)."""
    choices = ", ".join(d.usage for d in DISTRIBUTIONS.values())
    if isinstance(given, str):
        kind, sep, rest = given.partition(":")
        kind = kind.strip().lower()
        if not sep or not rest.strip():
            raise PropagationError("dist", name, f"'{given}': expected KIND:PARAMETERS, "
                                   f"one of {choices}")
        raw: list[Any] = split_top(rest, ",")
    else:
        try:
            kind, *raw = given
        except (TypeError, ValueError):
            raise PropagationError("dist", name, f"expected 'KIND:PARAMETERS' ({choices}) "
                                   "or a tuple (kind, parameter, ...)") from None
        kind = str(kind).strip().lower()
    if kind not in DISTRIBUTIONS:
        raise PropagationError("dist", name, f"unknown distribution '{kind}': choose "
                               f"{', '.join(DISTRIBUTIONS)}")
    d = DISTRIBUTIONS[kind]
    if len(raw) != len(d.params):
        raise PropagationError("dist", name, f"{d.name} takes {len(d.params)} "
                               f"parameter{'s' if len(d.params) > 1 else ''} ({d.usage}), "
                               f"not {len(raw)}")
    arrays = [_number_array(v, "dist", name, f"{d.name}'s {p}") for p, v in
              zip(d.params, raw, strict=True)]
    for p, v, arr in zip(d.params, raw, arrays, strict=True):
        if p == "a" and np.any(arr < 0):  # said as typed
            raise PropagationError("dist", name, f"the half-width {_smallest(arr, v)} is "
                                   "negative")
    params, wrong = parse_params(d, arrays, value.size)
    if wrong:
        raise PropagationError("dist", name, f"{d.usage}: {wrong}")
    implied = np.array([d.std(p) for p in params]).reshape(value.shape)
    shown = f"{kind}:{','.join(_shown(a) for a in arrays)}"
    if have is not None and not np.allclose(have[0], implied, rtol=1e-9, atol=0.0):
        raise PropagationError("dist", name, f"{shown} means u = {_shown(implied)} "
                               f"({d.text.rpartition('u = ')[2]}), but the uncertainty given "
                               f"is {_shown(have[0])}: give one of them")
    if d.mean is not None:
        mean = np.array([d.mean(p) for p in params]).reshape(value.shape)
        if not np.allclose(value, mean, rtol=1e-9, atol=0.0):
            raise PropagationError("dist", name, f"{shown} has the mean {_shown(mean)}, but "
                                   f"the estimate is {_shown(value)}: give its mean as the "
                                   "estimate")
    return (kind, params), implied.astype(np.float64), shown


def _read_cov(cov: Any, values: dict[str, np.ndarray]) -> tuple[list[str], np.ndarray]:
    """(variable names, matrix): a pair as given, or a bare matrix over every component
    of every variable in ``at=`` order."""
    if isinstance(cov, tuple) and len(cov) == 2:
        names, matrix = list(cov[0]), cov[1]
    else:
        names, matrix = list(values), cov
    try:
        m = np.array(matrix, dtype=np.float64)
    except (TypeError, ValueError):
        raise PropagationError("cov", None, "the covariance matrix must hold numbers") \
            from None
    if m.ndim != 2 or m.shape[0] != m.shape[1]:
        raise PropagationError("cov", None, f"the covariance matrix must be square, not "
                               f"of shape {m.shape}")
    if not np.all(np.isfinite(m)):
        raise PropagationError("cov", None, "the covariance matrix must be finite")
    return names, m


def component_of(label: str, values: Mapping[str, Any]) -> tuple[str, int] | None:
    """``"x[1]"`` -> ("x", 1); ``"V"`` -> ("V", 0) for a scalar; None if not a component."""
    name, bracket, rest = label.partition("[")
    name = name.strip()
    if name not in values:
        return None
    shape = values[name].shape
    if not bracket:
        return (name, 0) if shape == () else None
    idx = []
    for part in ("[" + rest).split("]")[:-1]:
        part = part.strip()
        if not part.startswith("[") or not part[1:].strip().isdigit():
            return None
        idx.append(int(part[1:]))
    if len(idx) != len(shape) or any(i >= n for i, n in zip(idx, shape, strict=True)):
        return None
    return name, int(np.ravel_multi_index(idx, shape))


def _place_cov(cov: tuple[list[str], np.ndarray], inputs: Inputs, covered: dict[str, int],
               s: np.ndarray, unc: dict[str, tuple[np.ndarray, str]]) -> np.ndarray:
    names, m = cov
    labels: list[str] = []
    for name in names:
        name = str(name).strip()
        if "[" in name:
            labels.append(name)
        elif name in inputs.values:
            labels += _labels(name, inputs.values[name].shape)
        else:
            raise PropagationError("cov", None, f"'{name}' is not a variable with an "
                                   f"estimate (these are: {', '.join(inputs.values)})")
    if len(labels) != m.shape[0]:
        raise PropagationError("cov", None, f"the matrix is {m.shape[0]}×{m.shape[1]} but "
                               f"its variables have {len(labels)} components")
    if len(set(labels)) != len(labels):
        raise PropagationError("cov", None, "a variable is named twice")
    if not np.allclose(m, m.T, rtol=1e-12, atol=0.0):
        i, j = np.unravel_index(np.argmax(np.abs(m - m.T)), m.shape)
        raise PropagationError("cov", None, f"the matrix is not symmetric: entry "
                               f"({labels[i]}, {labels[j]}) is {number_text(m[i, j])}, "
                               f"({labels[j]}, {labels[i]}) is {number_text(m[j, i])}")
    n = len(inputs.labels)
    if n > MAX_CORRELATED:
        raise _too_many("cov", n)
    full = np.diag(s**2)
    where = []
    for label in labels:
        if label not in covered:
            raise PropagationError("cov", None, f"'{label}' is not a component of a "
                                   "variable with an estimate")
        where.append(covered[label])
    idx = np.array(where)
    for a, j in enumerate(where):
        var = inputs.var[j]
        if var in unc and m[a, a] != 0.0 or var in unc and s[j] != 0.0:
            if not math.isclose(math.sqrt(max(m[a, a], 0.0)), s[j], rel_tol=1e-9):
                raise PropagationError(unc[var][1], inputs.labels[j],
                                       f"u = {number_text(s[j])}, but the covariance "
                                       f"matrix's variance {number_text(m[a, a])} means "
                                       f"u = {number_text(math.sqrt(max(m[a, a], 0.0)))}: "
                                       "give one")
    if np.any(np.diag(m) < 0):
        a = int(np.argmin(np.diag(m)))
        raise PropagationError("cov", None, f"the variance of '{labels[a]}' is negative "
                               f"({number_text(m[a, a])})")
    full[np.ix_(idx, idx)] = m
    return full


def _too_many(param: str, n: int) -> PropagationError:
    return PropagationError(param, None, f"{n:,} uncertain components are correlated "
                            f"here; a correlated covariance is a dense matrix, at most "
                            f"{MAX_CORRELATED:,} components")


def _corr_cov(corr: Mapping[Any, Any], inputs: Inputs, covered: dict[str, int],
              s: np.ndarray, values: Mapping[str, np.ndarray]) -> np.ndarray:
    n = len(inputs.labels)
    if n > MAX_CORRELATED:
        raise _too_many("corr", n)
    r = np.eye(n)
    seen: set[frozenset[str]] = set()
    for key, given in corr.items():
        pair = tuple(p.strip() for p in (key.split(",") if isinstance(key, str) else key))
        if len(pair) != 2 or not all(pair):
            raise PropagationError("corr", key, "name two variables: corr[('A', 'B')] = R")
        for label in pair:
            comp = component_of(label, values)
            if comp is None:
                if label in values:
                    raise PropagationError("corr", pair, f"'{label}' is a vector: name one "
                                           f"of its components, {label}[0]")
                raise PropagationError("corr", pair, f"'{label}' is not a variable with an "
                                       f"estimate (these are: {', '.join(values)})")
            if label not in covered:
                raise PropagationError("corr", pair, f"'{label}' has no uncertainty: give "
                                       "it one (VALUE+-U) or leave the correlation out")
        if pair[0] == pair[1]:
            raise PropagationError("corr", pair, "a variable's correlation with itself is 1")
        if frozenset(pair) in seen:
            raise PropagationError("corr", pair, "this pair is given twice")
        seen.add(frozenset(pair))
        try:
            value = float(parse_constant(given, f"corr{_key_text(pair)}")
                          if isinstance(given, str) else given)
        except (TypeError, ValueError):
            raise PropagationError("corr", pair, f"{given!r} is not a number") from None
        if not math.isfinite(value) or abs(value) > 1.0:
            typed = number_text(value, given if isinstance(given, str) else None)
            raise PropagationError("corr", pair, f"the correlation {typed} is outside "
                                   "[-1, 1]")
        i, j = covered[pair[0]], covered[pair[1]]
        r[i, j] = r[j, i] = value
    return r * np.outer(s, s)


def _check_psd(inputs: Inputs, param: str) -> None:
    cov = inputs.cov
    assert cov is not None
    s = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    live = s > 0
    if not live.any():
        return
    r = cov[np.ix_(live, live)] / np.outer(s[live], s[live])
    low = float(np.linalg.eigvalsh(r)[0])
    if low < -1e-10:
        names = [lab for lab, keep in zip(inputs.labels, live, strict=True) if keep]
        shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
        raise PropagationError(param, None, f"the correlation matrix of {shown} is not "
                               f"positive semi-definite (its smallest eigenvalue is "
                               f"{low:.3g}): no joint distribution has these correlations")


# --- first order -------------------------------------------------------------------------
@dataclass
class FirstOrder:
    outputs: list[str]      # f, or f[0], f[1], ...
    f: np.ndarray           # (m,)
    jac: np.ndarray | None  # (m, n): ∂f/∂(uncertain component), when kept (budget, cov_f)
    program: Any
    var_f: np.ndarray       # (m,): u(f)²
    cov_f: np.ndarray | None  # (m, m), for at most MAX_CORRELATED_OUTPUTS components


def _point(inputs: Inputs) -> dict[str, Any]:
    return {name: (v.tolist() if v.shape else float(v)) for name, v in inputs.values.items()}


def _first_order(expression: str, inputs: Inputs, budget: bool = False,
                 units: Any = None) -> FirstOrder:
    """f at the estimates and u(f)² = diag(J Σ Jᵀ), J a block of output rows at a time:
    memory grows with the outputs and inputs, not with their product (the whole J is
    kept only for the ``budget``, bounded by ``MAX_BUDGET_ROWS``, and for f's covariance
    of at most ``MAX_CORRELATED_OUTPUTS`` components)."""
    from gradcli.evaluation.evaluator import MAX_SWEEP_OPS, prepare

    prepared = prepare(expression, "eval", at=[_point(inputs)], **(units or {}))
    arrays = prepared.run(threads=1).arrays
    program = prepared.program
    outputs = ["f" + "".join(f"[{i}]" for i in idx) for idx in np.ndindex(*program.shape)]
    f = np.concatenate([np.asarray(arrays[name], dtype=np.float64)[0].reshape(-1)
                        for name, _ in program.outputs])
    m, n = f.size, len(inputs.labels)
    if m * n > MAX_SWEEP_OPS:
        raise PropagationError("at", None, f"the law of propagation needs ∂f/∂x of every "
                               f"output component and uncertain input: {m:,} × {n:,} = "
                               f"{m * n:,} derivatives, over the limit of "
                               f"{MAX_SWEEP_OPS:,}: use fewer components")
    if m * program.op_count > MAX_SWEEP_OPS:
        raise PropagationError("at", None, f"the law of propagation needs ∂f/∂x of every "
                               f"output component: {m:,} reverse sweeps over "
                               f"{program.op_count:,} operations, over the limit of "
                               f"{MAX_SWEEP_OPS:,} operations: use fewer output components")
    if budget and m * (n + 1) > MAX_BUDGET_ROWS:
        raise PropagationError("budget", None, f"the budget would have {m:,} × {n + 1:,} "
                               f"rows (output components × (uncertain inputs + total)), "
                               f"over the limit of {MAX_BUDGET_ROWS:,}")
    jac = np.zeros((m, n)) if budget or m <= MAX_CORRELATED_OUTPUTS else None
    var_f = np.zeros(m)
    if n:
        with np.errstate(all="ignore"):  # inf and nan are results (SECURITY.md §5)
            for lo, rows in _jacobian_rows(program, inputs, m):
                var_f[lo:lo + len(rows)] = np.sum(inputs.covariance_product(rows) * rows,
                                                  axis=1)
                if jac is not None:
                    jac[lo:lo + len(rows)] = rows
    cov_f = None
    if m <= MAX_CORRELATED_OUTPUTS and jac is not None:
        with np.errstate(all="ignore"):
            cov_f = inputs.covariance_product(jac) @ jac.T
        var_f = np.diag(cov_f).copy()
    first = FirstOrder(outputs, f, jac, program, var_f, cov_f)
    first.prepared = prepared  # its units (units.py) label the table
    return first


#: elements of one batch of Jacobian rows (rows × uncertain components): 8 MiB a copy
_ROWS_BLOCK = 1 << 20


def _jacobian_rows(program: Any, inputs: Inputs, m: int) -> Any:
    """Blocks ``(first row, J[first:first + B])`` of ∂f/∂(uncertain components) at the
    estimates, by the engine's reverse mode: B copies of the point in a batch, copy b
    seeded with output component first + b, so one sweep gives B rows of J."""
    from gradcli.engine.backward import grad as autograd_grad
    from gradcli.engine.core import Tensor
    from gradcli.engine.grad_mode import enable_grad, quiet

    n = len(inputs.labels)
    batch = max(1, min(m, _ROWS_BLOCK // max(1, n)))
    first_col: dict[str, int] = {}
    for j, var in enumerate(inputs.var):
        first_col.setdefault(var, j)
    for lo in range(0, m, batch):
        rows = min(batch, m - lo)
        with enable_grad(), quiet():
            z = Tensor._make(np.zeros((rows, n))).requires_grad_()
            env: dict[str, Any] = {}
            for name, value in inputs.values.items():
                base = value.reshape((1,) + value.shape)
                if name not in first_col:
                    env[name] = base
                    continue
                a = first_col[name]
                part = z[:, a:a + value.size].reshape((rows,) + value.shape)
                env[name] = Tensor._make(base) + part
            total = None
            col = 0
            for out in program.flat(program.run(env)):
                size = math.prod(np.shape(out)[1:])
                if isinstance(out, Tensor) and out.requires_grad:
                    seed = np.zeros((rows, size))
                    pick = np.arange(rows)
                    hit = (lo + pick >= col) & (lo + pick < col + size)
                    seed[pick[hit], lo + pick[hit] - col] = 1.0
                    if hit.any():
                        term = (out.reshape((out.shape[0], size)) * Tensor._make(seed)).sum()
                        total = term if total is None else total + term
                col += size
            if total is None:
                yield lo, np.zeros((rows, n))
                continue
            (g,) = autograd_grad(total, [z], allow_unused=True)
        block = np.zeros((rows, n)) if g is None else np.array(g.detach().numpy(),
                                                                dtype=np.float64)
        # a leaf and its gradient accumulator refer to each other: without this, each
        # batch's z (rows × n) would wait for the cycle collector
        z._acc = None
        del z, env, total, g
        yield lo, block


# --- second order ------------------------------------------------------------------------
def _second_order(first: FirstOrder, inputs: Inputs, terms: dict[int, Any] | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(u2, E2) per output component: GUM eq. 14 in the coordinates z of x = x̂ + L z,
    from the engine's first, second and third derivatives of g(z) = f(x̂ + L z) at 0.
    ``terms`` (a dict) receives per output component k eq. 14's second-order terms,
    S[i, j] = ½(∂²g/∂zᵢ∂zⱼ)² + ∂g/∂zᵢ·∂³g/∂zᵢ∂zⱼ², with the Hessian in z (none for a
    component without second derivatives): one more reverse sweep per component."""
    from gradcli.engine.backward import grad as autograd_grad
    from gradcli.engine.core import Tensor
    from gradcli.engine.grad_mode import enable_grad, quiet
    from gradcli.engine.ops import matmul

    n = len(inputs.labels)
    if n > MAX_SECOND_ORDER:
        raise PropagationError("order", None, f"second order needs every second partial "
                               f"derivative: {n:,} uncertain components, at most "
                               f"{MAX_SECOND_ORDER:,}")
    u2, e2 = np.sqrt(np.clip(first.var_f, 0.0, None)), first.f.copy()
    if n == 0:
        return u2, e2
    factor = inputs.factor()
    program = first.program
    with enable_grad(), quiet():
        z = Tensor._make(np.zeros(n)).requires_grad_()
        shift = z * Tensor._make(factor) if factor.ndim == 1 else \
            matmul(Tensor._make(factor), z)
        env: dict[str, Any] = {}
        for name, value in inputs.values.items():
            base = value.reshape((1,) + value.shape)
            cols = [j for j, v in enumerate(inputs.var) if v == name]
            if not cols:
                env[name] = base
                continue
            part = shift[cols[0]:cols[0] + len(cols)].reshape((1,) + value.shape)
            env[name] = Tensor._make(base) + part
        outs = [o if isinstance(o, Tensor) else Tensor._make(np.asarray(o, dtype=float))
                for o in program.flat(program.run(env))]
        comps = [c for o in outs for c in _components(o)]
        for k, y in enumerate(comps):
            if not y.requires_grad:
                continue
            (g,) = autograd_grad(y, [z], create_graph=True, retain_graph=True,
                                 allow_unused=True)
            if g is None:
                continue
            c = g.detach().numpy()
            hess = np.zeros((n, n))
            trace = None
            diagonal: list[Any] = [None] * n  # ∂²g/∂zⱼ² as tensors, for the terms
            if g.requires_grad:
                for i in range(n):
                    (h,) = autograd_grad(g[i], [z], create_graph=True, retain_graph=True,
                                         allow_unused=True)
                    if h is None:
                        continue
                    hess[i] = h.detach().numpy()
                    if h.requires_grad:
                        trace = h[i] if trace is None else trace + h[i]
                        diagonal[i] = h[i]
            third = 0.0
            if trace is not None and trace.requires_grad:
                (t,) = autograd_grad(trace, [z], retain_graph=True, allow_unused=True)
                if t is not None:
                    third = float(c @ t.detach().numpy())
            if terms is not None:
                s_k = 0.5 * hess * hess
                for j, hjj in enumerate(diagonal):
                    if hjj is not None and hjj.requires_grad:
                        (t,) = autograd_grad(hjj, [z], retain_graph=True, allow_unused=True)
                        if t is not None:
                            s_k[:, j] += c * t.detach().numpy()  # cᵢ ∂³g/∂zᵢ∂zⱼ²
                terms[k] = (s_k, hess)
            var = float(c @ c) + 0.5 * float(np.sum(hess * hess)) + third
            u2[k] = math.sqrt(var) if var >= 0 else math.nan
            e2[k] = first.f[k] + 0.5 * float(np.trace(hess))
    return u2, e2


def _components(t: Any) -> list[Any]:
    """A per-point output (batch axis of 1 first) as its scalar components."""
    flat = t.reshape(-1)
    return [flat[i] for i in range(flat.shape[0])]


# --- Monte Carlo -------------------------------------------------------------------------
class _Sampled(Binding):
    """A point set of N samples that exist only a block at a time: ``block(start, stop)``
    draws rows start:stop from their own seed (the run's, and ``start``), so a block's
    samples do not depend on which thread computes it or when."""

    inputs: Inputs
    factor: np.ndarray
    seed: int
    key: int = 0

    def block(self, start: int, stop: int) -> dict[str, np.ndarray]:
        return draw(self.inputs, self.factor, self.seed, start, stop, self.key)


def draw(inputs: Inputs, factor: np.ndarray, seed: int, start: int, stop: int,
         key: int = 0) -> dict[str, np.ndarray]:
    """Samples ``start:stop`` of every variable (constants as one row): x̂ + L z, z of
    zero mean, unit variance and independent, each of its input's distribution
    (:mod:`.distributions`' standardized samplers)."""
    rows, n = stop - start, len(inputs.labels)
    rng = np.random.Generator(np.random.SFC64(
        np.random.SeedSequence(seed, spawn_key=(key, start))))
    # components first: each row of z (and of x) is one input's samples, contiguous
    z = np.empty((n, rows))
    groups: dict[tuple[str, tuple[float, ...]], list[int]] = {}
    for j, key in enumerate(zip(inputs.kinds, inputs.shapes, strict=True)):
        groups.setdefault(key, []).append(j)
    for (kind, shape), cols in groups.items():
        if kind == "normal":  # one call for all: the same stream as before
            z[cols] = rng.standard_normal((len(cols), rows))
            continue
        sample = DISTRIBUTIONS[kind].sample
        for j in cols:
            z[j] = sample(rng, shape, rows)
    if factor.ndim == 1:
        x = z * factor[:, None]
    elif n <= _SMALL_FACTOR:  # a few inputs: n² scaled adds beat a BLAS call's threads
        x = np.zeros((n, rows))
        for i in range(n):
            for j in range(n):
                if factor[i, j] != 0.0:
                    x[i] += factor[i, j] * z[j]
    else:
        x = factor @ z
    out: dict[str, np.ndarray] = {}
    for name, value in inputs.values.items():
        cols = [j for j, v in enumerate(inputs.var) if v == name]
        if not cols:
            out[name] = value.reshape((1,) + value.shape)
        elif value.shape == ():
            out[name] = x[cols[0]] + value
        else:
            part = x[cols[0]:cols[0] + len(cols)].T.reshape((rows,) + value.shape)
            out[name] = part + value
    return out


class _Accumulator:
    """The sink of a Monte Carlo run: per block the moments of each output component, the
    count of values below each bracket and the values inside it. Kept by block and
    combined in block order at the end, so threads change nothing."""

    sequential = False

    def __init__(self, brackets: np.ndarray) -> None:
        self.brackets = brackets  # (m, ends, 2 bounds)
        self.parts: dict[int, tuple[Any, ...]] = {}
        self.lock = threading.Lock()

    def open(self, layout: Any, shape: Any, dtype: Any, inputs: Any) -> None:
        pass

    def write(self, start: int, stop: int, values: Any) -> None:
        rows = stop - start
        means, m2s, ends = [], [], []
        below = np.zeros(self.brackets.shape[:2], dtype=np.int64)
        bad = 0
        for v in values:
            arr = np.asarray(v, dtype=np.float64)
            arr = np.broadcast_to(arr, (rows,) + arr.shape[1:]).reshape(rows, -1)
            for c in range(arr.shape[1]):
                j = len(means)
                col = np.ascontiguousarray(arr[:, c])
                mean = float(col.mean())
                d = col - mean
                m2 = float(d @ d)
                if not math.isfinite(m2):
                    bad += int(col.size - np.count_nonzero(np.isfinite(col)))
                means.append(mean)
                m2s.append(m2)
                kept = []
                for e in range(self.brackets.shape[1]):
                    lo, hi = self.brackets[j, e]
                    if lo == -np.inf and hi == np.inf:
                        kept.append(col)
                        continue
                    below[j, e] = np.count_nonzero(col < lo)
                    kept.append(col[(col >= lo) & (col <= hi)])
                ends.append(kept)
        with self.lock:
            self.parts[start] = (rows, np.array(means), np.array(m2s), bad, below, ends)

    def result(self) -> Any:
        return None


@dataclass
class MonteCarlo:
    """A run's results per output component: ``low``/``high`` the interval asked for (the
    symmetric one for ``both``, whose shortest is ``shortest_low``/``shortest_high``),
    ``se_low``/``se_high`` their standard errors (:func:`.intervals.order_se`)."""

    mean: np.ndarray
    sd: np.ndarray
    low: np.ndarray
    high: np.ndarray
    nonfinite: int
    se_low: np.ndarray | None = None
    se_high: np.ndarray | None = None
    shortest_low: np.ndarray | None = None
    shortest_high: np.ndarray | None = None
    count: int = 0


_ranks = symmetric_ranks  # the name the tests know


def _monte_carlo(expression: str, inputs: Inputs, first: FirstOrder, count: int,
                 coverage: float, seed: int, interval: str = "symmetric",
                 key: int = 0, units: Any = None) -> MonteCarlo:
    """``count`` samples from ``seed`` (``key`` picks an independent stream: the pilot
    is 1, adaptive batches 2, 3, ...), their moments and the ``interval``'s ends."""
    from gradcli.evaluation.evaluator import prepare
    from gradcli.evaluation.runner import run

    m, n = first.f.size, len(inputs.labels)
    if not inputs.values:  # a constant formula: every sample is f
        f = first.f.copy()
        zero = np.zeros(m)
        both = (f.copy(), f.copy()) if interval == "both" else (None, None)
        return MonteCarlo(f, zero, f.copy(), f.copy(), 0, zero, zero, *both, count=count)
    if count * m > MAX_MC_VALUES:
        raise PropagationError("monte_carlo", None, f"{count:,} samples × {m:,} output "
                               f"components is over the limit of {MAX_MC_VALUES:,} values")
    factor = inputs.factor()
    first_rows = draw(inputs, factor, seed, 0, 1)
    prepared = prepare(expression, "eval", points=first_rows, **(units or {}))
    block = max(256, min(1 << 18, (1 << 21) // max(1, n, m)))
    ends = ends_for(interval, count, coverage)
    brackets = np.empty((m, len(ends), 2))
    brackets[..., 0], brackets[..., 1] = -np.inf, np.inf
    widen = 6.0
    if count > _KEEP_ALL:
        pilot_n = min(count, _PILOT)
        pilot = _evaluate_block(prepared, draw(inputs, factor, seed, 0, pilot_n,
                                               key=1 if key == 0 else 1000 + key))
        pilot.sort(axis=0)
    for _attempt in range(4):
        if count > _KEEP_ALL:
            brackets = _brackets(pilot, ends, count, widen)
        sink = _Accumulator(brackets)
        binding = _Sampled("points", list(inputs.values), prepared.binding.shapes,
                           {k: v[:1] for k, v in first_rows.items()}, (count,))
        binding.inputs, binding.factor, binding.seed, binding.key = inputs, factor, seed, key
        run(prepared.plan, binding, sink, dtype=np.dtype(np.float64), block_size=block,
            layout=prepared.layout, inputs=prepared.inputs)
        found = _combine(sink, m, ends, interval, count, coverage)
        if found is not None:
            return found
        widen *= 4.0
    raise PropagationError("monte_carlo", None, "the coverage interval's ends could not "
                           "be bracketed (the outputs' distribution is too irregular)")


def _evaluate_block(prepared: Any, values: dict[str, np.ndarray]) -> np.ndarray:
    from gradcli.plan.kernels import compute_block

    rows = next(iter(v.shape[0] for v in values.values() if v.shape[0] > 1), 1)
    outs = compute_block(prepared.plan, values)
    return np.concatenate([np.broadcast_to(np.asarray(v, dtype=np.float64),
                                           (rows,) + np.shape(v)[1:]).reshape(rows, -1)
                           for v in outs], axis=1)


def _brackets(pilot: np.ndarray, ends: list[End], count: int, widen: float) -> np.ndarray:
    """Per output component and end, the values between the pilot's order statistics
    ``widen`` binomial standard deviations either side of the end's rank (open below or
    above for the shortest interval's tails)."""
    n, m = pilot.shape
    out = np.empty((m, len(ends), 2))
    for e, end in enumerate(ends):
        p = (end.rank - 0.5) / count
        sd = math.sqrt(max(p * (1 - p), 1.0 / n) * n)
        lo, hi = int(math.floor(p * n - widen * sd - 2)), int(math.ceil(p * n + widen * sd + 2))
        out[:, e, 0] = pilot[lo] if lo >= 0 and end.open != "below" else -np.inf
        out[:, e, 1] = pilot[hi] if hi < n and end.open != "above" else np.inf
    # a nan sorts last: a bracket ending there would hold nothing, so leave it open
    out[np.isnan(out[..., 0]), 0] = -np.inf
    out[np.isnan(out[..., 1]), 1] = np.inf
    return out


def _combine(sink: _Accumulator, m: int, ends: list[End], interval: str, count: int,
             coverage: float) -> MonteCarlo | None:
    total, mean, m2, bad = 0, np.zeros(m), np.zeros(m), 0
    below = np.zeros((m, len(ends)), dtype=np.int64)
    for start in sorted(sink.parts):
        rows, bmean, bm2, bbad, bbelow, _ = sink.parts[start]
        new = total + rows
        delta = bmean - mean
        mean = mean + delta * (rows / new)
        m2 = m2 + bm2 + delta**2 * (total * rows / new)
        total, bad, below = new, bad + bbad, below + bbelow
    sd = np.sqrt(m2 / (total - 1)) if total > 1 else np.full(m, np.nan)
    out = np.full((m, 4), np.nan)  # symmetric low, high; shortest low, high
    se = np.full((m, 4), np.inf)
    for j in range(m):
        kept = []
        for e in range(len(ends)):  # sorted in place: one copy of the kept values, not two
            values = np.concatenate([sink.parts[s][5][j][e] for s in sorted(sink.parts)])
            values.sort()
            kept.append(values)
        e = 0
        if interval in ("symmetric", "both"):
            for side in range(2):
                k = ends[side].rank - 1 - int(below[j, side])
                if not 0 <= k < kept[side].size:
                    return None
                out[j, side] = kept[side][k]
                se[j, side] = order_se(kept[side], int(below[j, side]), ends[side].rank,
                                       count)
            e = 2
        if interval in ("shortest", "both"):
            found = shortest(kept[e], kept[e + 1], int(below[j, e + 1]), count, coverage)
            if found is None:
                return None
            out[j, 2], out[j, 3], r = found
            q = shortest_q(count, coverage)
            se[j, 2] = order_se(kept[e], 0, r, count)
            se[j, 3] = order_se(kept[e + 1], int(below[j, e + 1]), r + q, count)
    if bad:
        out[:] = np.nan  # order statistics of values some of which are not numbers
    main = [2, 3] if interval == "shortest" else [0, 1]
    extra = (out[:, 2], out[:, 3]) if interval == "both" else (None, None)
    return MonteCarlo(mean, sd, out[:, main[0]], out[:, main[1]], bad,
                      se[:, main[0]], se[:, main[1]], *extra, count=count)


def agreement(name: str, f: float, u: float, mc: MonteCarlo, j: int, coverage: float,
              what: str = "u(f)", kp: float | None = None,
              digits: int = TOLERANCE_DIGITS) -> str:
    """JCGM 101 §8's comparison of the law of propagation's interval f ± k_p·u (k_p =
    t_p(ν_eff), the normal's when not given) with Monte Carlo's, to the numerical
    tolerance δ of u's leading ``digits`` significant digits. Withheld when Monte Carlo's
    own ends are not known that well: twice their standard error above δ."""
    from statistics import NormalDist

    low, high = float(mc.low[j]), float(mc.high[j])
    if not (math.isfinite(u) and u > 0 and math.isfinite(low) and math.isfinite(high)):
        return (f"{name}: Monte Carlo and the law of propagation cannot be compared "
                f"({what} = {u:g}, Monte Carlo interval [{low:g}, {high:g}])")
    if kp is None:
        kp = NormalDist().inv_cdf(0.5 + coverage / 2)
    exponent = math.floor(math.log10(u)) - (digits - 1)
    delta = 0.5 * 10.0**exponent
    if mc.se_low is not None and mc.se_high is not None:
        spread = 2.0 * max(float(mc.se_low[j]), float(mc.se_high[j]))
        if not spread <= delta:
            known = "not at all" if not math.isfinite(spread) else f"to ±{spread:.2g}"
            return (f"{name}: the law of propagation is not compared with Monte Carlo: "
                    f"Monte Carlo's interval ends are known {known} (twice their standard "
                    f"error), more than JCGM 101 §8's tolerance delta = {delta:.2g}; more "
                    "samples or the adaptive procedure make them stable enough")
    d_low, d_high = abs(f - kp * u - low), abs(f + kp * u - high)
    verdict = "agrees with" if max(d_low, d_high) <= delta else "does NOT agree with"
    shown = f"{round(u, -exponent):.{max(0, -exponent)}f}"
    return (f"{name}: the law of propagation {verdict} Monte Carlo to JCGM 101 §8's "
            f"tolerance: d_low = {d_low:.2g}, d_high = {d_high:.2g}, delta = {delta:.2g} "
            f"({what} = {shown} to {digits} significant digits; k = {kp:.3f} "
            f"for {number_text(coverage)})")


# --- the result --------------------------------------------------------------------------
class Propagated(Result):
    """The table ``gradcli propagate`` writes, read as ``{column name: array}`` (one row
    per output component or, with ``budget``, per output component and input; a vector
    variable's estimates, in a one-row table only, are columns ``x[0]``... of one block,
    as in every result); ``notes`` are the lines it says on stderr (Monte Carlo's
    agreement with the law of propagation, non-finite values). ``gradcli.propagate``
    returns it as ``output.display.PropagatedView``, which shows it in Jupyter as every
    other result."""

    def __init__(self, result: Result, notes: list[str] | None = None,
                 context: dict[str, Any] | None = None) -> None:
        super().__init__(result.layout, result.arrays, result.batch_shape)
        self.notes = list(notes or [])
        #: what the result was computed from (:func:`_context`), for files to keep
        self.context: dict[str, Any] = dict(context if context is not None else
                                            getattr(result, "context", {}))


def _check_numbers(order: Any, k: Any, monte_carlo: Any, coverage: Any, seed: Any,
                   interval: Any = "symmetric", digits: Any = 2) -> None:
    if interval not in INTERVALS:
        raise PropagationError("interval", None, f"the interval is {', '.join(INTERVALS)}, "
                               f"not {interval!r}")
    if not isinstance(digits, (int, np.integer)) or not 1 <= digits <= MAX_DIGITS:
        raise PropagationError("digits", None, f"the significant digits are a whole number "
                               f"from 1 to {MAX_DIGITS}, not {digits!r}")
    if order not in (1, 2):
        raise PropagationError("order", None, f"order is 1 or 2, not {order!r}")
    if k is not None and (not isinstance(k, (int, float)) or not math.isfinite(k) or
                          k <= 0):
        raise PropagationError("k", None, f"the coverage factor must be a number > 0, not "
                               f"{k!r}")
    if monte_carlo is not None and monte_carlo != "adaptive" and (
            not isinstance(monte_carlo, (int, np.integer)) or
            not 2 <= monte_carlo <= MAX_MONTE_CARLO):
        raise PropagationError("monte_carlo", None, f"the number of samples is a whole "
                               f"number from 2 to {MAX_MONTE_CARLO:,} or 'adaptive', not "
                               f"{monte_carlo!r}")
    if coverage is not None and (not isinstance(coverage, (int, float)) or
                                 not 0 < coverage < 1):
        raise PropagationError("coverage", None, f"the coverage probability is between 0 "
                               f"and 1 (exclusive), not {coverage!r}")
    if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
        raise PropagationError("seed", None, f"the seed is a whole number >= 0, not "
                               f"{seed!r}")


def propagate(expression: str, at: Mapping[str, Any] | None = None,
              u: Mapping[str, Any] | None = None, corr: Mapping[Any, Any] | None = None,
              cov: Any = None, order: int = 1, k: float | None = None, budget: bool = False,
              monte_carlo: int | None = None, dist: Mapping[str, Any] | None = None,
              coverage: float | None = None, seed: int | None = None,
              nu: Mapping[str, Any] | None = None, readings: Any = None,
              inputs: Mapping[str, Mapping[str, Any]] | None = None,
              interval: str = "symmetric", digits: int = 2,
              units: Mapping[str, Any] | None = None,
              to: Mapping[str, Any] | None = None) -> Propagated:
    """The estimate of ``expression`` and its uncertainty, by the GUM's law of propagation.

    ``at``: the estimates, ``{"V": 4.999}``, or with their standard uncertainty
    ``{"V": "4.999+-0.0032"}`` (the first ``+-`` or ``±`` outside brackets separates
    them) or ``{"V": (4.999, 0.0032)}``; a vector variable takes a list, and a scalar or
    a list of uncertainties (``{"x": "[1, 2]+-[0.1, 0.2]"}``). ``u``: the uncertainties
    by name instead. A variable without one is a constant. ``corr``: correlation
    coefficients, ``{("V", "I"): -0.36}`` (a vector's components are ``"x[0]"``).
    ``cov``: a covariance matrix over every component of the variables in ``at`` order,
    or a pair ``(names, matrix)``; it gives those variables' uncertainties. ``dist``:
    ``{"T": "uniform:a"}`` or ``"triangular:a"`` (half-width a; u is a/√3, a/√6) for
    Monte Carlo. ``order=2`` adds ``u2(f)`` (GUM eq. 14, normal inputs, in decorrelated
    coordinates for correlated ones) and ``E2(f)`` = f + ½·tr(HΣ); ``U(f)`` is k·u2(f)
    then. ``budget=True`` returns the uncertainty budget instead (one row per output
    component and uncertain input). ``monte_carlo=N`` draws N samples (JCGM 101) and adds
    ``mean``, ``sd`` and the probabilistically symmetric ``coverage`` interval ``low``,
    ``high``; ``seed`` makes it reproducible, and ``notes`` of the result says whether it
    agrees with the law of propagation (JCGM 101 §8), or that Monte Carlo's ends are not
    yet known well enough to say. ``interval="shortest"`` gives the shortest coverage
    interval instead (JCGM 101 7.7.2), ``"both"`` adds it as ``low_shortest``,
    ``high_shortest``. ``monte_carlo="adaptive"`` runs JCGM 101 7.9's procedure to
    ``digits`` significant digits (column ``M``: the samples it took; :mod:`.adaptive`).

    Degrees of freedom: ``{"x": "1.0+-0.1;nu=9"}``, ``(1.0, 0.1, 9)`` or ``nu={"x": 9}``
    (infinite when not given: Type B). With any finite ν, or ``coverage`` given, the
    column ``nu_eff`` is u(f)'s effective degrees of freedom (Welch–Satterthwaite,
    GUM G.4; Castrup's generalisation for correlated inputs, :mod:`.welch`), and
    ``coverage=p`` sets k = t_p(ν_eff) per output component (ν_eff truncated to an
    integer, GUM G.4.1); ``k`` given overrides it; neither: k = 2. ``coverage`` is also
    Monte Carlo's coverage probability (0.95 when not given).

    ``readings``: repeated observations, ``{"V": [5.007, 4.994, ...], ...}`` or a pandas
    DataFrame (one column per variable, simultaneous observations on one row, nan for a
    missing one): each variable's estimate is the mean, its u the standard deviation of
    the mean, ν = n − 1, and variables observed together are correlated as their
    readings are (GUM 4.2, 5.2.3 eq. 17; :mod:`.readings`). A variable in both
    ``readings`` and ``at`` is an error.

    ``inputs``: the inputs as records, ``{"V": {"value": 4.999, "u": 0.0032, "nu": 4,
    "unit": "V", "description": "..."}, "T": {"value": 20, "dist": "uniform:0.05"}}``
    (what an input file holds; keys :data:`INPUT_KEYS`): each says what ``at``, ``u``,
    ``nu`` and ``dist`` would; an input in both is an error. ``unit`` and
    ``description`` are kept with the result, not used.

    Returns a :class:`Propagated`: ``{column: array}`` with one row per output component:
    ``output`` (a vector f only), the estimates (scalar variables; a vector's only when f
    is a scalar, so the table stays linear in the vector), ``f``, ``u(f)``, [``u2(f)``,
    ``E2(f)``], ``U(f)``, ``k``, ``r(f[i],f[j])`` (a vector f of at most 50 components),
    [``mean``, ``sd``, ``low``, ``high``].

    ``units`` (``{"V": "V", "I": "mA"}``) and values with units (``"4.999 V+-3.2 mV"``,
    pint Quantities) put f, u(f), U(f) in f's unit (``to={"f": "kohm"}`` converts it)
    and the budget's c in unit(f)/unit(x).
    """
    _check_numbers(order, k, monte_carlo, coverage, seed, interval, digits)
    # overflow (x=1+-1e308: u² is inf) and 0/0 give inf and nan, which are results
    # (SECURITY.md §5), never numpy's RuntimeWarnings with their source lines on stderr
    with np.errstate(all="ignore"):
        return _propagate(expression, at, u, corr, cov, order, k, budget, monte_carlo,
                          dist, coverage, seed, nu, readings, inputs, interval, digits,
                          units, to)


def _propagate(expression: str, at: Mapping[str, Any] | None, u: Mapping[str, Any] | None,
               corr: Mapping[Any, Any] | None, cov: Any, order: int, k: float | None,
               budget: bool, monte_carlo: int | str | None,
               dist: Mapping[str, Any] | None, coverage: float | None, seed: int | None,
               nu: Mapping[str, Any] | None, readings: Any,
               inputs: Mapping[str, Mapping[str, Any]] | None, interval: str,
               digits: int, units: Any = None, to: Any = None) -> Propagated:
    if budget and monte_carlo is not None:
        raise PropagationError("budget", None, "the budget is the law of propagation's; "
                               "ask for it or for monte_carlo, not both")
    from gradcli.evaluation.request_units import propagate_inputs, propagate_units

    at, u, units = propagate_inputs(at or {}, u, units)
    with_units = {k: v for k, v in (("units", units), ("to", to)) if v}
    together: list[list[str]] = []
    described = {n: {k: r[k] for k in ("unit", "description") if r.get(k) is not None}
                 for n, r in (inputs or {}).items() if isinstance(r, Mapping)}
    if inputs is not None:
        at, u, nu, dist = _with_records(inputs, at or {}, u, nu, dist)
    if readings is not None:
        at, corr, together = _with_readings(readings, at or {}, u, corr, cov, nu)
    inputs = _read_inputs(at or {}, u, corr, cov, dist, nu)
    context = _context(inputs, described, order, k, coverage)
    if together:
        inputs.unit = np.arange(len(inputs.labels))
        for names in together:
            cols = [inputs.labels.index(n) for n in names]
            inputs.unit[cols] = cols[0]
    first = _first_order(expression, inputs, budget=budget, units=with_units)
    p = 0.95 if coverage is None else float(coverage)
    nu_eff = _effective_dof(first, inputs)
    if k is not None:
        kk = np.full(first.f.size, float(k))
    elif coverage is not None:
        kk = np.array([coverage_factor(p, float(v)) for v in nu_eff])
    else:
        kk = np.full(first.f.size, 2.0)
    with_dof = coverage is not None or bool(np.isfinite(inputs.nu).any())
    u1 = np.sqrt(np.clip(first.var_f, 0.0, None))
    notes: list[str] = _flat_notes(first, inputs) if order == 1 else []
    if budget:
        cols = _budget(first, inputs, order, u1, nu_eff, kk, with_dof)
        table = propagate_units(_table(cols, []), first.prepared, True)
        return Propagated(table, notes + _budget_nonfinite(cols), context)
    m = first.f.size
    vector = first.outputs != ["f"]
    cols: dict[str, Any] = {}
    blocks: list[Block] = []
    if vector:
        cols["output"] = np.array(first.outputs, dtype=object)
        blocks.append(Block("output", kind=TEXT))
    for name, value in inputs.values.items():
        # a vector's estimates on every row would make the table m × n: they are columns
        # of a one-row table only (the budget lists them per input)
        if value.shape == () or m == 1:
            cols[name] = np.broadcast_to(value, (m,) + value.shape)
            blocks.append(Block.template([name, value.shape], INPUT))
    cols["f"], cols["u(f)"] = first.f.copy(), u1
    used, what = u1, "u(f)"
    if order == 2:
        u2, e2 = _second_order(first, inputs)
        cols["u2(f)"], cols["E2(f)"] = u2, e2
        used, what = u2, "u2(f)"
    if with_dof:
        cols["nu_eff"] = nu_eff
    cols["U(f)"], cols["k"] = kk * used, kk
    if first.cov_f is None:
        notes.append(f"note: the outputs' correlations r(f[i],f[j]) are left out: f has "
                     f"{m:,} components, over {MAX_CORRELATED_OUTPUTS} ({m * (m - 1) // 2:,} "
                     "columns)")
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(m if first.cov_f is not None else 0):
            for j in range(i + 1, m):
                r = first.cov_f[i, j] / (u1[i] * u1[j])
                cols[f"r({first.outputs[i]},{first.outputs[j]})"] = np.full(m, r)
    if monte_carlo is not None:
        _check_joint(inputs)
        chosen = int(np.random.SeedSequence().entropy % 2**63) if seed is None else int(seed)
        if monte_carlo == "adaptive":
            found = run_adaptive(
                lambda h, size: _monte_carlo(expression, inputs, first, size, p, chosen,
                                             interval, key=1 + h, units=with_units),
                p, int(digits), MAX_MONTE_CARLO)
            count = found.total
            notes.append(_adaptive_note(found, int(digits)))
        else:
            count = int(monte_carlo)
            least = math.ceil(1e4 / (1 - p) - 1e-9)
            if count < least:
                said = number_text(p if coverage is None else coverage)
                notes.append(f"note: {count:,} samples are fewer than JCGM 101 7.2.2's "
                             f"10^4/(1 - p) = {least:,} for p = {said}: the interval is "
                             "rough; more samples or the adaptive procedure give a stable "
                             "one")
        mc = _monte_carlo(expression, inputs, first, count, p, chosen, interval,
                          units=with_units)
        if monte_carlo == "adaptive":  # 7.9's own verdict on stability is the one to use
            mc.se_low = mc.se_high = found.spread / 2
        cols["mean"], cols["sd"], cols["low"], cols["high"] = mc.mean, mc.sd, mc.low, mc.high
        if interval == "both":
            cols["low_shortest"], cols["high_shortest"] = mc.shortest_low, mc.shortest_high
        if monte_carlo == "adaptive":
            cols["M"] = np.full(m, float(count))
        context["monte_carlo"] = {"samples": count, "adaptive": monte_carlo == "adaptive",
                                  "digits": int(digits), "seed": chosen,
                                  "interval": interval}
        if mc.nonfinite:
            notes.append(f"warning: {mc.nonfinite:,} Monte Carlo values are nan or inf: the "
                         "interval is not defined")
        # the normal's k_p: Monte Carlo draws each input with its u (an input with finite
        # ν as a normal too, unless its distribution says t), so like is compared with like
        notes += [agreement(name, float(first.f[j]), float(used[j]), mc, j, p, what,
                            None, int(digits))
                  for j, name in enumerate(first.outputs)]
    table = propagate_units(_table(cols, blocks), first.prepared, False)
    return Propagated(table, notes + _nonfinite(table), context)


def _nonfinite(table: Result) -> list[str]:
    """The warning of nan or inf among the result columns (the estimates are inputs; an
    infinite ν or ν_eff is Type B's, not a failure)."""
    from gradcli.evaluation.origin import nonfinite_notes

    bad = sum(int(np.count_nonzero(np.isnan(v))) if b.name in ("nu_eff", "nu") else
              int(np.size(v) - np.count_nonzero(np.isfinite(v)))
              for b in table.blocks if b.kind == RESULT
              for v in (np.asarray(table.arrays[b.name], dtype=np.float64),))
    return nonfinite_notes(bad)


def _plain(a: np.ndarray) -> Any:
    """An array as JSON-ready numbers (a scalar for one value; inf as the string)."""
    out = [v if math.isfinite(v) else str(v) for v in np.asarray(a, float).reshape(-1).tolist()]
    return out[0] if np.ndim(a) == 0 else out


def _context(inputs: Inputs, described: Mapping[str, Mapping[str, Any]], order: int,
             k: Any, coverage: Any) -> dict[str, Any]:
    """What a result was computed from, for a file to keep: each input's value, u, ν and
    distribution (and unit, description when given), the correlations, the order, the
    coverage probability and k as given (Monte Carlo's samples, seed and interval kind
    are added when it runs)."""
    entries: dict[str, Any] = {}
    for name, value in inputs.values.items():
        cols = [j for j, v in enumerate(inputs.var) if v == name]
        entry: dict[str, Any] = {"value": _plain(value)}
        if cols:
            shape = value.shape
            entry["u"] = _plain(inputs.u[cols].reshape(shape))
            entry["nu"] = _plain(inputs.nu[cols].reshape(shape))
            entry["distribution"] = inputs.dist_text.get(name, "normal")
        entry.update(described.get(name, {}))
        entries[name] = entry
    correlations: dict[str, float] = {}
    if inputs.cov is not None:
        s = np.sqrt(np.clip(np.diag(inputs.cov), 0.0, None))
        for i in range(len(inputs.labels)):
            for j in range(i + 1, len(inputs.labels)):
                if inputs.cov[i, j] != 0.0 and s[i] > 0 and s[j] > 0:
                    r = float(inputs.cov[i, j] / (s[i] * s[j]))
                    correlations[f"{inputs.labels[i]},{inputs.labels[j]}"] = r
    return {"inputs": entries, "correlations": correlations, "order": order,
            "coverage": 0.95 if coverage is None else float(coverage),
            "k": None if k is None else float(k), "monte_carlo": None}


def _adaptive_note(found: Adaptive, digits: int) -> str:
    """What the adaptive procedure did, in one line."""
    spread = float(np.max(found.spread))
    delta = float(np.min(found.delta))
    if found.stable:
        return (f"note: adaptive Monte Carlo (JCGM 101 7.9): M = {found.total:,} samples "
                f"({found.batches} batches of {found.batch:,}) make the estimate, sd and "
                f"interval ends stable to {digits} significant digits of sd (their spread "
                f"{spread:.2g} <= delta {delta:.2g})")
    return (f"warning: adaptive Monte Carlo (JCGM 101 7.9) is not stable at M = "
            f"{found.total:,} samples, the limit: the spread of the results "
            f"{spread:.2g} > delta {delta:.2g}")


#: what an input record of ``inputs=`` (and of an input file) may say
INPUT_KEYS = ("value", "u", "nu", "dist", "unit", "description")


def _with_records(records: Mapping[str, Mapping[str, Any]], at: Mapping[str, Any],
                  u: Mapping[str, Any] | None, nu: Mapping[str, Any] | None,
                  dist: Mapping[str, Any] | None) -> tuple[dict[str, Any], ...]:
    """``at``, ``u``, ``nu`` and ``dist`` with the records of ``inputs=`` added."""
    if not isinstance(records, Mapping):
        raise PropagationError("inputs", None, "give the inputs as a mapping of names to "
                               "records, e.g. {'V': {'value': 4.999, 'u': 0.0032}}")
    out = [dict(at), dict(u or {}), dict(nu or {}), dict(dist or {})]
    for name, record in records.items():
        if not isinstance(record, Mapping):
            raise PropagationError("inputs", name, "an input is a record of "
                                   f"{', '.join(INPUT_KEYS)}")
        unknown = [k for k in record if k not in INPUT_KEYS]
        if unknown:
            raise PropagationError("inputs", name, f"unknown key '{unknown[0]}': an input "
                                   f"says {', '.join(INPUT_KEYS)}")
        if "value" not in record:
            raise PropagationError("inputs", name, "no value (its estimate)")
        for param, given in zip(("at", "u", "nu", "dist"), out, strict=True):
            if name in given:
                raise PropagationError(param, name, f"'{name}' is in the inputs too: give "
                                       "it once")
        out[0][name] = record["value"]
        for key, given in zip(("u", "nu", "dist"), out[1:], strict=True):
            if record.get(key) is not None:
                given[name] = record[key]
    return tuple(out)


def _with_readings(readings: Any, at: Mapping[str, Any], u: Mapping[str, Any] | None,
                   corr: Mapping[Any, Any] | None, cov: Any,
                   nu: Mapping[str, Any] | None
                   ) -> tuple[dict[str, Any], dict[Any, Any], list[list[str]]]:
    """``at`` and ``corr`` with the readings' Type A estimates, uncertainties, ν and
    correlations added, and the groups of variables observed together."""
    from gradcli.uncertainty.readings import ReadingsError, type_a

    try:
        found = type_a(readings)
    except ReadingsError as exc:
        raise PropagationError("readings", exc.name, exc.detail) from None
    for name in found.mean:
        for param, given in (("at", at), ("u", u), ("nu", nu)):
            if given and name in given:
                raise PropagationError(param, name, f"'{name}' has readings too: its "
                                       "estimate and uncertainty come from them; give it "
                                       "once")
    if cov is not None and found.corr:
        raise PropagationError("cov", None, "the readings give correlations of their own "
                               "(variables observed together): give a covariance matrix or "
                               "readings observed together, not both")
    pairs = dict(corr or {})
    for key in pairs:
        names = tuple(p.strip() for p in (key.split(",") if isinstance(key, str) else key))
        if frozenset(names) in {frozenset(k) for k in found.corr}:
            raise PropagationError("corr", names, "the readings give this correlation "
                                   "(observed together): give it once")
    merged = dict(at)
    for name in found.mean:
        merged[name] = (found.mean[name], found.u[name], found.nu[name])
    pairs.update(found.corr)
    return merged, pairs, found.together


def _check_joint(inputs: Inputs) -> None:
    """Monte Carlo draws correlated inputs as a multivariate normal (JCGM 101 6.4.8): a
    correlated input of another distribution has no joint distribution defined by its
    marginal and a correlation coefficient alone, so it is refused, not guessed (a
    Gaussian copula would be one guess among many)."""
    if inputs.cov is None:
        return
    for j, kind in enumerate(inputs.kinds):
        if kind == "normal":
            continue
        row = inputs.cov[j].copy()
        row[j] = 0.0
        if np.any(row):
            other = inputs.labels[int(np.flatnonzero(row)[0])]
            raise PropagationError("dist", inputs.var[j], f"{inputs.labels[j]} is {kind} "
                                   f"and correlated (with {other}): Monte Carlo draws "
                                   "correlated inputs as a multivariate normal only; make "
                                   "it normal or leave its correlations out")


def _table(cols: dict[str, Any], blocks: list[Block]) -> Result:
    """The columns as a Result: ``blocks`` as given, every other column a scalar one."""
    named = {b.name for b in blocks}
    blocks = blocks + [Block(name, kind=TEXT if np.asarray(v).dtype == object else RESULT)
                       for name, v in cols.items() if name not in named]
    order = {name: i for i, name in enumerate(cols)}
    blocks.sort(key=lambda b: order[b.name])
    rows = len(next(iter(cols.values())))
    return Result(Layout(blocks), cols, (rows,))


def _budget(first: FirstOrder, inputs: Inputs, order: int, u1: np.ndarray,
            nu_eff: np.ndarray, k: np.ndarray, with_dof: bool) -> dict[str, Any]:
    """The uncertainty budget (:mod:`.uncertainty_budget`): per output component a row
    per uncertain input (value, u(x), [nu], c = ∂f/∂x, u_i(f) = |c|·u(x), share), with
    order 2 a row per pair of inputs with second-order terms, and a total row."""
    assert first.jac is not None  # kept for the budget, whose size _first_order checked
    terms: dict[int, Any] | None = None
    used = u1
    if order == 2:
        if inputs.cov is not None:
            raise PropagationError("budget", None, "the second-order budget needs "
                                   "independent inputs: eq. 14's terms of correlated inputs "
                                   "belong to no one input (u2(f) itself is given without "
                                   "the budget)")
        terms = {}
        used, _ = _second_order(first, inputs, terms)
    cols = budget_columns(first.outputs, first.f, first.jac,
                          inputs.covariance_product(first.jac), inputs.labels,
                          inputs.estimates, inputs.u, inputs.nu if with_dof else None,
                          used, nu_eff, k, terms)
    if len(cols["input"]) > MAX_BUDGET_ROWS:
        raise PropagationError("budget", None, f"the budget would have "
                               f"{len(cols['input']):,} rows (with the pairs of inputs' "
                               f"second-order terms), over the limit of {MAX_BUDGET_ROWS:,}")
    return cols


def _effective_dof(first: FirstOrder, inputs: Inputs) -> np.ndarray:
    """ν_eff per output component (:func:`.welch.effective_dof`); when J was not kept
    (many output components), from its rows a block at a time, as u(f) was."""
    m = first.f.size
    if not np.isfinite(inputs.nu).any():
        return np.full(m, np.inf)
    if first.jac is not None:
        return effective_dof(first.jac, inputs.covariance_product(first.jac), inputs.nu,
                             inputs.unit)
    out = np.empty(m)
    for lo, rows in _jacobian_rows(first.program, inputs, m):
        out[lo:lo + len(rows)] = effective_dof(rows, inputs.covariance_product(rows),
                                               inputs.nu, inputs.unit)
    return out


def _budget_nonfinite(cols: dict[str, Any]) -> list[str]:
    """The non-finite warning of a budget, leaving out the cells that are nan by design
    (k and U(f) off the total rows, c and u(x) on them, a pair's value, u(x) and nu)."""
    from gradcli.uncertainty.uncertainty_budget import TOTAL

    names = np.asarray(cols["input"], dtype=object)
    total = names == TOTAL
    pair = np.array(["*" in str(n) for n in names])
    designed = {"k": ~total, "U(f)": ~total, "c": total, "u(x)": total | pair,
                "value": pair, "nu": pair}
    check = {}
    for name, v in cols.items():
        if name in ("output", "input"):
            continue
        arr = np.array(v, dtype=np.float64)
        if name in designed:
            arr[designed[name]] = 0.0
        check[name] = arr
    return _nonfinite(_table(check, []))


def _flat_notes(first: FirstOrder, inputs: Inputs) -> list[str]:
    """A note per output component whose every first-order sensitivity is 0 although
    inputs are uncertain: u(f) = 0 there says only that f is flat at the estimates."""
    if not inputs.labels:
        return []
    if first.jac is not None:
        flat = [name for j, name in enumerate(first.outputs) if not np.any(first.jac[j])]
    else:  # many outputs (J not kept): u(f) = 0 with uncertain inputs says the same
        live = bool(np.any(inputs.u > 0))
        flat = [name for j, name in enumerate(first.outputs)
                if live and first.var_f[j] == 0.0]
    if not flat:
        return []
    which = "f" if first.outputs == ["f"] else ", ".join(flat[:4]) + \
        (", ..." if len(flat) > 4 else "")
    return [f"note: {which}: every first-order sensitivity is 0 at the estimates, so the "
            "law of propagation gives u(f) = 0 whatever the inputs' uncertainties; the "
            "second order (GUM eq. 14) or Monte Carlo shows the uncertainty"]


def propagate_request(request: Request, **_: Any) -> Propagated:
    """``propagate`` (``gradcli.execute``): ``at`` the estimates, the other parameters by
    :func:`propagate`'s names (``u``, ``corr``, ``cov``, ``order``, ``k``, ``budget``,
    ``monte_carlo``, ``dist``, ``coverage``, ``seed``, ``nu``, ``readings``, ``inputs``,
    ``interval``, ``digits``, ``units``, ``to``)."""
    return propagate(request.expression, at=request.at, **dict(request.parameters or {}))
