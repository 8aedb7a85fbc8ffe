"""The optimisers of ``gradcli descend``: torch.optim's update formulas, and a damped Newton.

``gd`` and ``momentum`` are ``torch.optim.SGD``, ``adam`` and ``adamw`` are ``Adam`` and
``AdamW``, ``rmsprop`` is ``RMSprop``: the same hyper-parameters, defaults, checks and
update formulas, written operation for operation in the order of torch's single-tensor
implementations (``lerp_`` as ``self + w·(end − self)`` for w < 0.5, ``addcmul_`` as
``self + (value·t1)·t2``, ``addcdiv_`` as ``self + (value·t1)/t2``, bias corrections in
Python floats), so that a path is torch's iterate for iterate. ``newton`` (not in
torch.optim) steps along −H̃⁻¹∇f, where H̃ is the exact Hessian with each eigenvalue
replaced by its absolute value (at least 1e-8 of the largest), and halves the step from
``lr`` until f decreases by the Armijo rule f(x + t·d) <= f(x) + 1e-4·t·∇fᵀd (and
strictly: at f's floating-point floor no step is taken, and the run stops there).

Every optimiser updates the points ``P`` (n, N) in place: one column per start, so many
starts are one vectorised computation. The formulas are elementwise, so a column follows
exactly the path that start alone would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from gradcli.errors import EvaluationError, ref
from gradcli.fields.defaults import METHODS

__all__ = ["METHODS", "Settings", "settings", "make_optimizer", "APPLIES", "DEFAULTS",
           "parse_betas", "each_settings"]

#: torch.optim's defaults per method (momentum 0.9 for ``momentum``, whose torch default of
#: 0 would make it gd; newton's lr is the first trial step of its line search)
DEFAULTS: dict[str, dict[str, Any]] = {
    "gd": {"lr": 1e-3, "weight_decay": 0.0},
    "momentum": {"lr": 1e-3, "momentum": 0.9, "dampening": 0.0, "nesterov": False,
                 "weight_decay": 0.0},
    "adam": {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 0.0,
             "amsgrad": False},
    "adamw": {"lr": 1e-3, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": 1e-2,
              "amsgrad": False},
    "rmsprop": {"lr": 1e-2, "alpha": 0.99, "eps": 1e-8, "weight_decay": 0.0,
                "momentum": 0.0, "centered": False},
    "newton": {"lr": 1.0},
}
#: which methods take each hyper-parameter (maximize: all of them)
APPLIES = {name: tuple(m for m, d in DEFAULTS.items() if name in d)
           for name in ("lr", "momentum", "dampening", "nesterov", "weight_decay", "betas",
                        "eps", "amsgrad", "alpha", "centered")}
ARMIJO, HALVINGS, EIG_FLOOR = 1e-4, 40, 1e-8


@dataclass(frozen=True)
class Settings:
    """A method and its hyper-parameters, every one resolved (see :func:`settings`)."""

    method: str = "gd"
    lr: float = 1e-3
    momentum: float = 0.0
    dampening: float = 0.0
    nesterov: bool = False
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    amsgrad: bool = False
    alpha: float = 0.99
    centered: bool = False
    maximize: bool = False

    @property
    def order(self) -> int:
        """The derivatives a step needs: 1 (gradient) or 2 (Hessian, for newton)."""
        return 2 if self.method == "newton" else 1


def settings(method: str = "gd", **given: Any) -> Settings:
    """Resolve ``method`` and the hyper-parameters given (None or False: not given) with
    torch.optim's defaults and checks; an EvaluationError names a hyper-parameter the
    method does not take or a value torch.optim would refuse."""
    if method not in METHODS:
        raise EvaluationError(f"unknown {ref('method')} '{method}': choose one of "
                              f"{', '.join(METHODS)}")
    known = {f.name for f in fields(Settings)} - {"method"}
    unknown = set(given) - known
    if unknown:
        raise TypeError(f"unknown hyper-parameters: {', '.join(sorted(unknown))}")
    values = dict(DEFAULTS[method])
    for name, value in given.items():
        if value is None or value is False or name == "maximize":
            continue
        if method not in APPLIES[name]:
            users = " and ".join(", ".join(APPLIES[name]).rsplit(", ", 1))
            raise EvaluationError(f"{ref(name)} is a hyper-parameter of {users}, not of "
                                  f"{ref('method', text=method, python=repr(method))}")
        values[name] = parse_betas(value) if name == "betas" else value
    out = replace(Settings(method=method, maximize=bool(given.get("maximize"))), **values)
    _check(out)
    return out


def each_settings(methods: Sequence[str], lrs: Sequence[float] = (),
                  **given: Any) -> list[Settings]:
    """One Settings per method (several paths in one picture): the k-th learning rate goes
    with the k-th method (one rate goes with all); any other hyper-parameter goes to the
    methods that take it, and must suit at least one of them."""
    if len(lrs) > 1 and len(lrs) != len(methods):
        raise EvaluationError(f"{len(lrs)} {ref('lr')} for {len(methods)} {ref('method')}: "
                              f"give one {ref('lr')}, or one per {ref('method')} in the same "
                              "order")
    out = []
    for k, method in enumerate(methods):
        lr = lrs[k] if len(lrs) > 1 else (lrs[0] if lrs else None)
        mine = {name: v for name, v in given.items()
                if name == "maximize" or method in APPLIES.get(name, ())}
        out.append(settings(method, lr=lr, **mine))
    for name, value in given.items():
        if value not in (None, False) and name != "maximize" and \
                not any(m in APPLIES[name] for m in methods):
            settings(methods[0], **{name: value})  # raises: no method takes it
    return out


def parse_betas(value: Any) -> tuple[float, float]:
    """``"0.9,0.999"`` (gradcli's constant syntax) or two numbers -> ``(0.9, 0.999)``."""
    if isinstance(value, str):
        from gradcli.lang.spec_text import parse_vector

        value = parse_vector(value)
    flat = value if isinstance(value, (list, tuple)) else [value]
    if len(flat) != 2 or any(isinstance(v, (list, tuple)) for v in flat):
        raise EvaluationError(f"{ref('betas')} takes two numbers, beta1,beta2, e.g. "
                              f"{ref('betas', text='0.9,0.999', python='(0.9, 0.999)')}")
    return float(flat[0]), float(flat[1])


def _check(s: Settings) -> None:
    """torch.optim's own checks (its ValueError messages, as options)."""
    for name in ("lr", "eps", "weight_decay", "momentum", "alpha"):
        value = getattr(s, name)
        if not np.isfinite(value) or value < 0:
            raise EvaluationError(f"{ref(name)} must be a finite number >= 0, got {value:g}"
                                  f" (torch.optim: Invalid {name.replace('_', ' ')} value)")
    if s.method == "newton" and s.lr <= 0:
        raise EvaluationError(f"{ref('lr')} must be > 0 for newton (its first trial step), got "
                              f"{s.lr:g}")
    if s.method in ("adam", "adamw"):
        for i, beta in enumerate(s.betas):
            if not 0.0 <= beta < 1.0:
                raise EvaluationError(f"{ref('betas')}: beta{i + 1} must be in [0, 1), got "
                                      f"{beta:g} "
                                      f"(torch.optim: Invalid beta parameter at index {i})")
    if not np.isfinite(s.dampening):
        raise EvaluationError(f"{ref('dampening')} must be a finite number, got {s.dampening:g}")
    if s.nesterov and (s.momentum <= 0 or s.dampening != 0):
        raise EvaluationError(f"{ref('nesterov')} requires a momentum > 0 and zero dampening "
                              "(torch.optim: Nesterov momentum requires a momentum and zero "
                              "dampening)")


class _Optimizer:
    """State arrays shaped like the points (n, N); ``keep`` drops finished columns."""

    def __init__(self, s: Settings, shape: tuple[int, int]) -> None:
        self.s, self.shape = s, shape
        self.state: dict[str, np.ndarray] = {}
        self._scratch: list[np.ndarray] = []

    def keep(self, columns: np.ndarray) -> None:
        self.state = {k: np.ascontiguousarray(v[:, columns]) for k, v in self.state.items()}
        self._scratch = []

    def scratch(self, i: int, like: np.ndarray) -> np.ndarray:
        """Work array ``i`` shaped like the points, kept between steps: the formulas below
        write into these (``out=``, in place) rather than allocate at every step; the
        values are those of the written-out expressions, operation for operation."""
        while len(self._scratch) <= i:
            self._scratch.append(np.empty_like(like))
        if self._scratch[i].shape != like.shape:
            self._scratch[i] = np.empty_like(like)
        return self._scratch[i]

    def _grad(self, P: np.ndarray, G: np.ndarray) -> np.ndarray:
        return -G if self.s.maximize else G


class SGD(_Optimizer):
    """``torch.optim.SGD`` (gd, momentum)."""

    def step(self, P: np.ndarray, G: np.ndarray, **_: Any) -> None:
        s = self.s
        g = self._grad(P, G)
        if s.weight_decay != 0:
            g = g + s.weight_decay * P
        if s.momentum != 0:
            buf = self.state.get("momentum_buffer")
            if buf is None:
                buf = self.state["momentum_buffer"] = g.copy()
            else:
                buf *= s.momentum
                buf += (1 - s.dampening) * g
            g = g + s.momentum * buf if s.nesterov else buf
        P += (-s.lr) * g


class Adam(_Optimizer):
    """``torch.optim.Adam`` and ``AdamW`` (decoupled weight decay)."""

    def __init__(self, s: Settings, shape: tuple[int, int]) -> None:
        super().__init__(s, shape)
        self.step_count = 0
        self.state = {"exp_avg": np.zeros(shape), "exp_avg_sq": np.zeros(shape)}
        if s.amsgrad:
            self.state["max_exp_avg_sq"] = np.zeros(shape)

    def step(self, P: np.ndarray, G: np.ndarray, **_: Any) -> None:
        s = self.s
        beta1, beta2 = s.betas
        self.step_count += 1
        g = self._grad(P, G)
        if s.weight_decay != 0:
            if s.method == "adamw":
                P *= 1 - s.lr * s.weight_decay
            else:
                g = g + s.weight_decay * P
        exp_avg, exp_avg_sq = self.state["exp_avg"], self.state["exp_avg_sq"]
        a, b = self.scratch(0, P), self.scratch(1, P)
        _lerp(exp_avg, g, 1 - beta1, a)
        exp_avg_sq *= beta2
        np.multiply(g, 1 - beta2, out=a)  # exp_avg_sq += ((1 - beta2)·g)·g
        a *= g
        exp_avg_sq += a
        step = float(self.step_count)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = s.lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if s.amsgrad:
            top = self.state["max_exp_avg_sq"]
            np.maximum(top, exp_avg_sq, out=top)
        else:
            top = exp_avg_sq
        np.sqrt(top, out=b)  # denom = sqrt(·)/bias_correction2_sqrt + eps
        b /= bias_correction2_sqrt
        b += s.eps
        np.multiply(exp_avg, -step_size, out=a)  # P += ((-step_size)·exp_avg)/denom
        a /= b
        P += a


class RMSprop(_Optimizer):
    """``torch.optim.RMSprop``."""

    def __init__(self, s: Settings, shape: tuple[int, int]) -> None:
        super().__init__(s, shape)
        self.state = {"square_avg": np.zeros(shape)}
        if s.momentum > 0:
            self.state["momentum_buffer"] = np.zeros(shape)
        if s.centered:
            self.state["grad_avg"] = np.zeros(shape)

    def step(self, P: np.ndarray, G: np.ndarray, **_: Any) -> None:
        s = self.s
        g = self._grad(P, G)
        if s.weight_decay != 0:
            g = g + s.weight_decay * P
        square_avg = self.state["square_avg"]
        square_avg *= s.alpha
        square_avg += ((1 - s.alpha) * g) * g
        if s.centered:
            grad_avg = self.state["grad_avg"]
            _lerp(grad_avg, g, 1 - s.alpha)
            avg = np.sqrt(square_avg + (-1.0 * grad_avg) * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += s.eps
        if s.momentum > 0:
            buf = self.state["momentum_buffer"]
            buf *= s.momentum
            buf += g / avg
            P += (-s.lr) * buf
        else:
            P += ((-s.lr) * g) / avg


def _lerp(a: np.ndarray, end: np.ndarray, weight: float, work: np.ndarray | None = None
          ) -> None:
    """``a.lerp_(end, weight)`` with torch's two formulas (exact at either end); ``work``
    an array like ``a`` to compute in."""
    work = np.empty_like(a) if work is None else work
    np.subtract(end, a, out=work)
    if abs(weight) < 0.5:  # a + w·(end − a)
        work *= weight
        a += work
    else:  # end − (end − a)·(1 − w)
        work *= 1 - weight
        np.subtract(end, work, out=a)


class Newton(_Optimizer):
    """Damped Newton with the exact Hessian (see the module's text). ``step`` returns the
    columns where no trial step lowered f (the start is at f's floating-point floor)."""

    def step(self, P: np.ndarray, G: np.ndarray, *, f: np.ndarray, H: np.ndarray,
             value: Any, active: np.ndarray) -> np.ndarray:
        sign = -1.0 if self.s.maximize else 1.0
        g, f = sign * G, sign * f
        hs = np.moveaxis(sign * H, -1, 0)  # (N, n, n)
        good = active & np.isfinite(hs).all(axis=(1, 2)) & np.isfinite(g).all(0)
        hs = np.where(good[:, None, None], hs, np.eye(len(P)))
        lam, q = np.linalg.eigh(hs)
        top = np.abs(lam).max(axis=1, keepdims=True)
        floor = np.where(top > 0, EIG_FLOOR * top, 1.0)
        inv = 1.0 / np.maximum(np.abs(lam), floor)
        gt = np.where(good, g, 0.0).T  # (N, n)
        d = -np.einsum("nij,nj,nkj,nk->ni", q, inv, q, gt).T  # -Q |Λ|⁻¹ Qᵀ g, (n, N)
        slope = np.einsum("ij,ij->j", np.where(good, g, 0.0), d)
        t = np.full(P.shape[1], self.s.lr)
        pending = good & (slope < 0)
        for _ in range(HALVINGS):
            if not pending.any():
                break
            trial = P + t * d
            ft = sign * value(trial)
            ok = pending & (ft <= f + ARMIJO * t * slope) & (ft < f)
            P[:, ok] = trial[:, ok]
            pending &= ~ok
            t = np.where(pending, t * 0.5, t)
        return active & (~good | pending | (slope >= 0))


def make_optimizer(s: Settings, shape: tuple[int, int]) -> _Optimizer:
    """The optimiser for ``s`` over points of shape (n, N)."""
    kind = {"gd": SGD, "momentum": SGD, "adam": Adam, "adamw": Adam, "rmsprop": RMSprop,
            "newton": Newton}[s.method]
    return kind(s, shape)

