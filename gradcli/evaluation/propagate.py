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

from .binding import Binding, EvaluationError, parse_constant
from .blocks import INPUT, RESULT, TEXT, Block, Layout, Result
from .spec_text import _assignments, _value

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
#: the distributions of ``dist=`` and the standard uncertainty of half-width a of each
DISTRIBUTIONS = {"uniform": math.sqrt(3.0), "triangular": math.sqrt(6.0)}
#: significant digits of u(f) that JCGM 101 §8's numerical tolerance is taken from
TOLERANCE_DIGITS = 2

_PILOT = 1 << 18
_SMALL_FACTOR = 8  # up to this many correlated inputs, L·z is written out (no BLAS)
_KEEP_ALL = 1 << 20  # up to this many samples, every value is kept (no pilot)
_SEPARATORS = ("+-", "±")


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


def split_uncertainty(text: str) -> tuple[str, str | None]:
    """``"4.999+-0.0032"`` -> ``("4.999", "0.0032")``: the first ``+-`` or ``±`` outside
    brackets and parentheses separates an estimate from its standard uncertainty (inside
    them it stays arithmetic: ``(1+-0.1)`` is 0.9)."""
    depth = 0
    for i, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif depth == 0:
            for sep in _SEPARATORS:
                if text.startswith(sep, i):
                    return text[:i], text[i + len(sep):]
    return text, None


def parse_estimates(spec: str, option: str = "at", files: Any = None
                    ) -> dict[str, tuple[Any, Any]]:
    """``"V=4.999+-0.0032, R=50"`` -> ``{"V": (4.999, 0.0032), "R": (50.0, None)}``; a
    value or uncertainty ``@FILE`` is read by ``files`` (as ``parse_point`` does)."""
    out: dict[str, tuple[Any, Any]] = {}
    for name, text in _assignments(spec, option):
        if name in out:
            raise EvaluationError(f"{option} '{spec}': '{name}' is given twice")
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
    ``kinds`` each component's distribution for Monte Carlo.
    """

    names: list[str]
    values: dict[str, np.ndarray]
    labels: list[str] = field(default_factory=list)
    var: list[str] = field(default_factory=list)
    index: list[int] = field(default_factory=list)
    u: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cov: np.ndarray | None = None
    kinds: list[str] = field(default_factory=list)

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
                 dist: Mapping[str, Any] | None) -> Inputs:
    if not isinstance(at, Mapping):
        raise PropagationError("at", None, "give the estimates as a mapping of names to "
                               "values, e.g. {'V': '4.999+-0.0032'}")
    values: dict[str, np.ndarray] = {}
    unc: dict[str, tuple[np.ndarray, str]] = {}  # name -> (u, where it came from)
    typed: dict[str, Any] = {}  # name -> the uncertainty as given (its text, if any)
    for name, given in at.items():
        if isinstance(given, str):
            text, utext = split_uncertainty(given)
            value = _number_array(text, "at", name, "the estimate")
            if utext is not None:
                unc[name] = (_number_array(utext, "at", name, "the uncertainty after +-"),
                             "at")
                typed[name] = utext
        elif isinstance(given, tuple) and len(given) == 2:  # (value, u) as parsed text gives
            value = _number_array(given[0], "at", name, "the estimate")
            if given[1] is not None:
                unc[name] = (_number_array(given[1], "at", name, "the uncertainty"), "at")
                typed[name] = given[1]
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
    kinds: dict[str, str] = {}
    for name, given in (dist or {}).items():
        if name not in values:
            raise PropagationError("dist", name, f"'{name}' has no estimate: give it a value "
                                   "(with its uncertainty, VALUE+-U)")
        kind, half = _distribution(name, given)
        if half.shape not in ((), values[name].shape):
            raise PropagationError("dist", name, f"{half.size} half-widths for a variable of "
                                   f"{values[name].size} components")
        implied = np.broadcast_to(half / DISTRIBUTIONS[kind], values[name].shape)
        if name in unc:
            have = unc[name][0]
            if not np.allclose(have, implied, rtol=1e-9, atol=0.0):
                root = "√3" if kind == "uniform" else "√6"
                raise PropagationError(
                    "dist", name, f"{kind}:{_shown(half)} means u = {_shown(implied)} "
                    f"(a/{root}), but the uncertainty given is {_shown(have)}: give one "
                    "of them")
        unc[name] = (implied.astype(np.float64), "dist")
        kinds[name] = kind
    inputs = Inputs(list(values), values)
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
            inputs.kinds.append(kinds.get(name, "normal"))
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
    return inputs


def _shown(a: Any) -> str:
    arr = np.asarray(a, dtype=float)
    if arr.ndim == 0 or np.all(arr == arr.reshape(-1)[0]):
        return f"{float(arr.reshape(-1)[0]):.6g}"
    return "[" + ", ".join(f"{v:.6g}" for v in arr.reshape(-1)[:4]) + \
        (", ...]" if arr.size > 4 else "]")


def _distribution(name: str, given: Any) -> tuple[str, np.ndarray]:
    if isinstance(given, str):
        kind, sep, half_text = given.partition(":")
        kind = kind.strip().lower()
        if not sep or not half_text.strip():
            raise PropagationError("dist", name, f"'{given}': expected uniform:a or "
                                   "triangular:a with a the half-width")
        half: Any = half_text
    else:
        try:
            kind, half = given
        except (TypeError, ValueError):
            raise PropagationError("dist", name, "expected 'uniform:a', 'triangular:a' or "
                                   "a pair (kind, a)") from None
    if kind not in DISTRIBUTIONS:
        raise PropagationError("dist", name, f"unknown distribution '{kind}': choose "
                               f"{' or '.join(DISTRIBUTIONS)}")
    arr = _number_array(half, "dist", name, "the half-width")
    if np.any(arr < 0):
        raise PropagationError("dist", name, f"the half-width {_smallest(arr, half)} is "
                               "negative")
    return kind, arr


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
    from .evaluator import MAX_SWEEP_OPS, prepare

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
    if budget and m * n > MAX_BUDGET_ROWS:
        raise PropagationError("budget", None, f"the budget would have {m:,} × {n:,} rows "
                               f"(output components × uncertain inputs), over the limit of "
                               f"{MAX_BUDGET_ROWS:,}")
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
    from ..engine.backward import grad as autograd_grad
    from ..engine.core import Tensor
    from ..engine.grad_mode import enable_grad, quiet

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
def _second_order(first: FirstOrder, inputs: Inputs) -> tuple[np.ndarray, np.ndarray]:
    """(u2, E2) per output component: GUM eq. 14 in the coordinates z of x = x̂ + L z,
    from the engine's first, second and third derivatives of g(z) = f(x̂ + L z) at 0."""
    from ..engine.backward import grad as autograd_grad
    from ..engine.core import Tensor
    from ..engine.grad_mode import enable_grad, quiet
    from ..engine.ops import matmul

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
            if g.requires_grad:
                for i in range(n):
                    (h,) = autograd_grad(g[i], [z], create_graph=True, retain_graph=True,
                                         allow_unused=True)
                    if h is None:
                        continue
                    hess[i] = h.detach().numpy()
                    if h.requires_grad:
                        trace = h[i] if trace is None else trace + h[i]
            third = 0.0
            if trace is not None and trace.requires_grad:
                (t,) = autograd_grad(trace, [z], retain_graph=True, allow_unused=True)
                if t is not None:
                    third = float(c @ t.detach().numpy())
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
    unit variance and independent (normal, or uniform/triangular scaled to unit
    variance)."""
    rows, n = stop - start, len(inputs.labels)
    rng = np.random.Generator(np.random.SFC64(
        np.random.SeedSequence(seed, spawn_key=(key, start))))
    # components first: each row of z (and of x) is one input's samples, contiguous
    z = np.empty((n, rows))
    kinds = np.array(inputs.kinds)
    for kind in dict.fromkeys(inputs.kinds):
        cols = np.flatnonzero(kinds == kind)
        if kind == "normal":
            z[cols] = rng.standard_normal((cols.size, rows))
        elif kind == "uniform":
            a = math.sqrt(3.0)
            z[cols] = rng.uniform(-a, a, (cols.size, rows))
        else:
            a = math.sqrt(6.0)
            z[cols] = rng.triangular(-a, 0.0, a, (cols.size, rows))
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
        self.brackets = brackets  # (m, 2 ends, 2 bounds)
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
                for e in range(2):
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
    mean: np.ndarray
    sd: np.ndarray
    low: np.ndarray
    high: np.ndarray
    nonfinite: int


def _ranks(count: int, coverage: float) -> tuple[int, int]:
    """JCGM 101 §7.7.2: the 1-based ranks of the probabilistically symmetric interval."""
    q = int(math.floor(coverage * count + 0.5))
    r = max(1, (count - q + 1) // 2)
    return r, min(count, r + q)


def _monte_carlo(expression: str, inputs: Inputs, first: FirstOrder, count: int,
                 coverage: float, seed: int, units: Any = None) -> MonteCarlo:
    from .evaluator import prepare
    from .runner import run

    m, n = first.f.size, len(inputs.labels)
    if not inputs.values:  # a constant formula: every sample is f
        f = first.f.copy()
        return MonteCarlo(f, np.zeros(m), f.copy(), f.copy(), 0)
    if count * m > MAX_MC_VALUES:
        raise PropagationError("monte_carlo", None, f"{count:,} samples × {m:,} output "
                               f"components is over the limit of {MAX_MC_VALUES:,} values")
    factor = inputs.factor()
    first_rows = draw(inputs, factor, seed, 0, 1)
    prepared = prepare(expression, "eval", points=first_rows, **(units or {}))
    block = max(256, min(1 << 18, (1 << 21) // max(1, n, m)))
    ranks = _ranks(count, coverage)
    brackets = np.empty((m, 2, 2))
    brackets[..., 0], brackets[..., 1] = -np.inf, np.inf
    widen = 6.0
    if count > _KEEP_ALL:
        pilot_n = min(count, _PILOT)
        pilot = _evaluate_block(prepared, draw(inputs, factor, seed, 0, pilot_n, key=1))
        pilot.sort(axis=0)
    for _attempt in range(4):
        if count > _KEEP_ALL:
            brackets = _brackets(pilot, ranks, count, widen)
        sink = _Accumulator(brackets)
        binding = _Sampled("points", list(inputs.values), prepared.binding.shapes,
                           {k: v[:1] for k, v in first_rows.items()}, (count,))
        binding.inputs, binding.factor, binding.seed = inputs, factor, seed
        run(prepared.plan, binding, sink, dtype=np.dtype(np.float64), block_size=block,
            layout=prepared.layout, inputs=prepared.inputs)
        found = _combine(sink, m, ranks)
        if found is not None:
            return found
        widen *= 4.0
    raise PropagationError("monte_carlo", None, "the coverage interval's ends could not "
                           "be bracketed (the outputs' distribution is too irregular)")


def _evaluate_block(prepared: Any, values: dict[str, np.ndarray]) -> np.ndarray:
    from .kernels import compute_block

    rows = next(iter(v.shape[0] for v in values.values() if v.shape[0] > 1), 1)
    outs = compute_block(prepared.plan, values)
    return np.concatenate([np.broadcast_to(np.asarray(v, dtype=np.float64),
                                           (rows,) + np.shape(v)[1:]).reshape(rows, -1)
                           for v in outs], axis=1)


def _brackets(pilot: np.ndarray, ranks: tuple[int, int], count: int,
              widen: float) -> np.ndarray:
    """Per output component and interval end, the values between the pilot's order
    statistics ``widen`` binomial standard deviations either side of the wanted rank."""
    n, m = pilot.shape
    out = np.empty((m, 2, 2))
    for e, rank in enumerate(ranks):
        p = (rank - 0.5) / count
        sd = math.sqrt(max(p * (1 - p), 1.0 / n) * n)
        lo, hi = int(math.floor(p * n - widen * sd - 2)), int(math.ceil(p * n + widen * sd + 2))
        out[:, e, 0] = pilot[lo] if lo >= 0 else -np.inf
        out[:, e, 1] = pilot[hi] if hi < n else np.inf
    # a nan sorts last: a bracket ending there would hold nothing, so leave it open
    out[np.isnan(out[..., 0]), 0] = -np.inf
    out[np.isnan(out[..., 1]), 1] = np.inf
    return out


def _combine(sink: _Accumulator, m: int, ranks: tuple[int, int]) -> MonteCarlo | None:
    total, mean, m2, bad = 0, np.zeros(m), np.zeros(m), 0
    below = np.zeros((m, 2), dtype=np.int64)
    for start in sorted(sink.parts):
        rows, bmean, bm2, bbad, bbelow, _ = sink.parts[start]
        new = total + rows
        delta = bmean - mean
        mean = mean + delta * (rows / new)
        m2 = m2 + bm2 + delta**2 * (total * rows / new)
        total, bad, below = new, bad + bbad, below + bbelow
    sd = np.sqrt(m2 / (total - 1)) if total > 1 else np.full(m, np.nan)
    ends = np.empty((m, 2))
    for j in range(m):
        for e, rank in enumerate(ranks):
            kept = np.sort(np.concatenate([sink.parts[s][5][j][e] for s in sorted(sink.parts)]))
            k = rank - 1 - int(below[j, e])
            if not 0 <= k < kept.size:
                return None
            ends[j, e] = kept[k]
    if bad:
        ends[:] = np.nan  # order statistics of values some of which are not numbers
    return MonteCarlo(mean, sd, ends[:, 0], ends[:, 1], bad)


def agreement(name: str, f: float, u: float, mc: MonteCarlo, j: int, coverage: float,
              what: str = "u(f)") -> str:
    """JCGM 101 §8's comparison of the law of propagation's interval f ± k_p·u (k_p the
    normal's, for ``coverage``) with Monte Carlo's, to the numerical tolerance δ of u's
    leading :data:`TOLERANCE_DIGITS` significant digits."""
    from statistics import NormalDist

    low, high = float(mc.low[j]), float(mc.high[j])
    if not (math.isfinite(u) and u > 0 and math.isfinite(low) and math.isfinite(high)):
        return (f"{name}: Monte Carlo and the law of propagation cannot be compared "
                f"({what} = {u:g}, Monte Carlo interval [{low:g}, {high:g}])")
    kp = NormalDist().inv_cdf(0.5 + coverage / 2)
    exponent = math.floor(math.log10(u)) - (TOLERANCE_DIGITS - 1)
    delta = 0.5 * 10.0**exponent
    d_low, d_high = abs(f - kp * u - low), abs(f + kp * u - high)
    verdict = "agrees with" if max(d_low, d_high) <= delta else "does NOT agree with"
    digits = f"{round(u, -exponent):.{max(0, -exponent)}f}"
    return (f"{name}: the law of propagation {verdict} Monte Carlo to JCGM 101 §8's "
            f"tolerance: d_low = {d_low:.2g}, d_high = {d_high:.2g}, delta = {delta:.2g} "
            f"({what} = {digits} to {TOLERANCE_DIGITS} significant digits; k = {kp:.3f} "
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

    def __init__(self, result: Result, notes: list[str] | None = None) -> None:
        super().__init__(result.layout, result.arrays, result.batch_shape)
        self.notes = list(notes or [])


def _check_numbers(order: Any, k: Any, monte_carlo: Any, coverage: Any, seed: Any) -> None:
    if order not in (1, 2):
        raise PropagationError("order", None, f"order is 1 or 2, not {order!r}")
    if not isinstance(k, (int, float)) or not math.isfinite(k) or k <= 0:
        raise PropagationError("k", None, f"the coverage factor must be a number > 0, not "
                               f"{k!r}")
    if monte_carlo is not None and (not isinstance(monte_carlo, (int, np.integer)) or
                                    not 2 <= monte_carlo <= MAX_MONTE_CARLO):
        raise PropagationError("monte_carlo", None, f"the number of samples is a whole "
                               f"number from 2 to {MAX_MONTE_CARLO:,}, not {monte_carlo!r}")
    if not isinstance(coverage, (int, float)) or not 0 < coverage < 1:
        raise PropagationError("coverage", None, f"the coverage probability is between 0 "
                               f"and 1 (exclusive), not {coverage!r}")
    if seed is not None and (not isinstance(seed, (int, np.integer)) or seed < 0):
        raise PropagationError("seed", None, f"the seed is a whole number >= 0, not "
                               f"{seed!r}")


def propagate(expression: str, at: Mapping[str, Any] | None = None,
              u: Mapping[str, Any] | None = None, corr: Mapping[Any, Any] | None = None,
              cov: Any = None, order: int = 1, k: float = 2, budget: bool = False,
              monte_carlo: int | None = None, dist: Mapping[str, Any] | None = None,
              coverage: float = 0.95, seed: int | None = None,
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
    agrees with the law of propagation (JCGM 101 §8).

    Returns a :class:`Propagated`: ``{column: array}`` with one row per output component:
    ``output`` (a vector f only), the estimates (scalar variables; a vector's only when f
    is a scalar, so the table stays linear in the vector), ``f``, ``u(f)``, [``u2(f)``,
    ``E2(f)``], ``U(f)``, ``k``, ``r(f[i],f[j])`` (a vector f of at most 50 components),
    [``mean``, ``sd``, ``low``, ``high``].

    ``units`` (``{"V": "V", "I": "mA"}``) and values with units (``"4.999 V+-3.2 mV"``,
    pint Quantities) put f, u(f), U(f) in f's unit (``to={"f": "kohm"}`` converts it)
    and the budget's c in unit(f)/unit(x).
    """
    _check_numbers(order, k, monte_carlo, coverage, seed)
    # overflow (x=1+-1e308: u² is inf) and 0/0 give inf and nan, which are results
    # (SECURITY.md §5), never numpy's RuntimeWarnings with their source lines on stderr
    with np.errstate(all="ignore"):
        return _propagate(expression, at, u, corr, cov, order, k, budget, monte_carlo,
                          dist, coverage, seed, units, to)


def _propagate(expression: str, at: Mapping[str, Any] | None, u: Mapping[str, Any] | None,
               corr: Mapping[Any, Any] | None, cov: Any, order: int, k: float,
               budget: bool, monte_carlo: int | None, dist: Mapping[str, Any] | None,
               coverage: float, seed: int | None, units: Any = None,
               to: Any = None) -> Propagated:
    if budget and monte_carlo is not None:
        raise PropagationError("budget", None, "the budget is the law of propagation's; "
                               "ask for it or for monte_carlo, not both")
    from .units import propagate_inputs, propagate_units

    at, u, units = propagate_inputs(at or {}, u, units)
    with_units = {k: v for k, v in (("units", units), ("to", to)) if v}
    inputs = _read_inputs(at or {}, u, corr, cov, dist)
    first = _first_order(expression, inputs, budget=budget, units=with_units)
    if budget:
        table = propagate_units(_table(_budget(first, inputs), []), first.prepared, True)
        return Propagated(table, _nonfinite(table))
    u1 = np.sqrt(np.clip(first.var_f, 0.0, None))
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
    cols["U(f)"], cols["k"] = k * used, np.full(m, float(k))
    notes: list[str] = []
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
        chosen = int(np.random.SeedSequence().entropy % 2**63) if seed is None else int(seed)
        mc = _monte_carlo(expression, inputs, first, int(monte_carlo), coverage, chosen,
                          with_units)
        cols["mean"], cols["sd"], cols["low"], cols["high"] = mc.mean, mc.sd, mc.low, mc.high
        if mc.nonfinite:
            notes.append(f"warning: {mc.nonfinite:,} Monte Carlo values are nan or inf: the "
                         "interval is not defined")
        notes += [agreement(name, float(first.f[j]), float(used[j]), mc, j, coverage, what)
                  for j, name in enumerate(first.outputs)]
    table = propagate_units(_table(cols, blocks), first.prepared, False)
    return Propagated(table, notes + _nonfinite(table))


def _nonfinite(table: Result) -> list[str]:
    """The warning of nan or inf among the result columns (the estimates are inputs)."""
    from .origin import nonfinite_notes

    bad = sum(int(np.size(v) - np.count_nonzero(np.isfinite(v)))
              for b in table.blocks if b.kind == RESULT
              for v in (np.asarray(table.arrays[b.name], dtype=np.float64),))
    return nonfinite_notes(bad)


def _table(cols: dict[str, Any], blocks: list[Block]) -> Result:
    """The columns as a Result: ``blocks`` as given, every other column a scalar one."""
    named = {b.name for b in blocks}
    blocks = blocks + [Block(name, kind=TEXT if np.asarray(v).dtype == object else RESULT)
                       for name, v in cols.items() if name not in named]
    order = {name: i for i, name in enumerate(cols)}
    blocks.sort(key=lambda b: order[b.name])
    rows = len(next(iter(cols.values())))
    return Result(Layout(blocks), cols, (rows,))


def _budget(first: FirstOrder, inputs: Inputs) -> dict[str, Any]:
    """One row per output component and uncertain input: value, u(x), c = ∂f/∂x,
    u_i(f) = |c|·u(x), share = 100·cᵢ(Σc)ᵢ/u(f)² (adds up to 100 with correlations)."""
    m, n = first.f.size, len(inputs.labels)
    assert first.jac is not None  # kept for the budget, whose size _first_order checked
    sc = inputs.covariance_product(first.jac)  # (m, n): (Σc)ᵢ per output
    var = np.sum(first.jac * sc, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = 100.0 * first.jac * sc / var[:, None]
    cols: dict[str, Any] = {}
    if first.outputs != ["f"]:
        cols["output"] = np.array([o for o in first.outputs for _ in range(n)], dtype=object)
    cols["input"] = np.array(inputs.labels * m, dtype=object)
    cols["value"] = np.tile(inputs.estimates, m)
    cols["u(x)"] = np.tile(inputs.u, m)
    cols["c"] = first.jac.reshape(-1)
    cols["u_i(f)"] = np.abs(first.jac * inputs.u).reshape(-1)
    cols["share"] = share.reshape(-1)
    return cols
