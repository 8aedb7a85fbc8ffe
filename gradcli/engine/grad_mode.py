"""Thread-local switches: recording, forward mode, per-point sweeps, taping, and numpy's error
state.

Every switch is thread-local (as PyTorch's grad mode is) because the evaluation layer
records and sweeps graphs on worker threads while the caller's thread may sit inside
``no_grad``. Each switch is a context manager; ``set_grad_enabled`` also works as a plain
call, as in PyTorch.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np

_state = threading.local()
F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """True when new operations on tensors that require grad are recorded."""
    return getattr(_state, "enabled", True)


def _set(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradMode:
    """Base for the grad-mode switches: a context manager that is also a decorator."""

    _mode = True

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set(self._mode)

    def __exit__(self, *exc: object) -> None:
        _set(self._prev)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def _clone(self) -> _GradMode:
        return type(self)()


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Disable graph recording: ``with gc.no_grad(): ...`` or ``@gc.no_grad()``."""

    _mode = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Re-enable graph recording inside a ``no_grad`` block."""

    _mode = True


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Switch recording on or off. As in PyTorch it takes effect at once, so it works as a
    plain call (``gc.set_grad_enabled(False)``); ``with gc.set_grad_enabled(mode):`` restores
    the previous mode on leaving, and ``@gc.set_grad_enabled(mode)`` applies per call."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = is_grad_enabled()
        _set(self._mode)

    def __enter__(self) -> None:
        _set(self._mode)

    def __call__(self, fn: F) -> F:
        _set(self._prev)  # decorating must not switch the mode of the decorating code
        return super().__call__(fn)

    def _clone(self) -> _GradMode:
        return set_grad_enabled(self._mode)


def forward_level() -> int:
    """How many forward-mode (dual number) contexts are open on this thread."""
    return getattr(_state, "fwd", 0)


@contextmanager
def forward_ad() -> Iterator[None]:
    """Forward mode on: operations on tensors carrying a ``tangent`` also compute theirs."""
    _state.fwd = forward_level() + 1
    try:
        yield
    finally:
        _state.fwd -= 1


def batch_ndim() -> int:
    """How many leading axes are batch axes in reverse sweeps on this thread (0: none)."""
    return getattr(_state, "batch", 0)


@contextmanager
def batch_axes(ndim: int) -> Iterator[None]:
    """Treat the leading ``ndim`` axes of every value as independent points.

    Inside, reverse sweeps never sum a cotangent over those axes (the cotangent reaching a
    broadcast grid axis is already the per-point derivative) and an output's seed may be
    any value that broadcasts against it (a scalar 1.0). Axes after them (vector and
    matrix components) are summed back as usual.
    """
    prev = batch_ndim()
    _state.batch = int(ndim)
    try:
        yield
    finally:
        _state.batch = prev


def active_tape() -> list | None:
    """The list that ``trace`` is appending applied primitives to on this thread, or None."""
    return getattr(_state, "tape", None)


@contextmanager
def taping(tape: list) -> Iterator[None]:
    """Append every primitive applied to a tensor on this thread to ``tape`` as
    ``(primitive, args, params, result)``, comparisons and masks included (``trace``)."""
    prev = active_tape()
    _state.tape = tape
    try:
        yield
    finally:
        _state.tape = prev


def reuse_table() -> dict | None:
    """The values kept by ``reused_values`` on this thread (None outside it)."""
    return getattr(_state, "reuse", None)


@contextmanager
def reused_values() -> Iterator[None]:
    """Inside, an elementwise function of the table applied again to the very same arrays
    returns the value it computed the first time (``primitive.Primitive.__call__``).

    A Hessian's reverse sweeps each run every rule of the recorded gradient again, and the
    rules recompute the same values of the point (sin's rule its cos x, cos's its sin x):
    numpy's float64 sin and cos are its most expensive calls. The same function of the same
    array is the same value, so nothing changes but the time; the arrays are kept alive
    until the block ends, so an id is never reused while it is a key.
    """
    prev = reuse_table()
    _state.reuse = {}
    try:
        yield
    finally:
        _state.reuse = prev


def quiet() -> Any:
    """numpy's floating-point error state for arithmetic whose inf and nan are results
    (log(0), 1/0, inf*0): never a warning or an exception. The one place that says so."""
    return np.errstate(all="ignore")
