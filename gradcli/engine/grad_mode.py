"""Thread-local switches: whether operations are recorded, and whether forward mode is active.

Grad mode is thread-local (as in PyTorch) because the evaluation layer records graphs on
worker threads while the caller's thread may sit inside ``no_grad``.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_state = threading.local()
F = TypeVar("F", bound=Callable[..., Any])


def is_grad_enabled() -> bool:
    """True when new operations on tensors that require grad are recorded."""
    return getattr(_state, "enabled", True)


def set_grad_enabled(mode: bool) -> None:
    """Switch recording on or off for the current thread."""
    _state.enabled = bool(mode)


def forward_level() -> int:
    """How many forward-mode (dual number) contexts are open on this thread."""
    return getattr(_state, "fwd", 0)


def _push_forward(delta: int) -> None:
    _state.fwd = forward_level() + delta


class _GradMode:
    """Base for no_grad/enable_grad: a context manager that is also a decorator."""

    _mode = True

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        set_grad_enabled(self._mode)

    def __exit__(self, *exc: object) -> None:
        set_grad_enabled(self._prev)

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Disable graph recording: ``with gc.no_grad(): ...`` or ``@gc.no_grad()``."""

    _mode = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Re-enable graph recording inside a ``no_grad`` block."""

    _mode = True
