"""Compiling vectors and matrices held as one array (component axes after the batch axes).

Every step here is one engine operation on the whole array, whatever its length: ``sum``
of a 10⁶-vector is one numpy call. The primitives work on trailing axes
(``engine/rules_axes.py``, ``rules_linalg.py``), so the batch axes in front never matter.
Shapes are checked here, at compile time, with the caret under the culprit.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from gradcli.engine import rules as R
from gradcli.lang.ast import Call, Index, Node, Slice
from gradcli.lang.slots import Shape, Slot

#: ``compile._Compiler``, which calls these steps (it imports this module)
_Compiler = Any


def _axes(k: int) -> tuple[int, ...]:
    """The last ``k`` axes: a value's component axes."""
    return tuple(range(-k, 0))


def _stack(value: Any, depth: int) -> Any:
    """A bracket literal (nested lists of per-point scalars) as one array."""
    if depth == 1:
        return R.stack(*value, dim=-1)
    return R.stack(*[_stack(item, depth - 1) for item in value], dim=-depth)


def to_array(c: _Compiler, slot: Slot, k: int) -> Slot:
    """``slot`` as an operand of an array step whose values have ``k`` component axes: a
    literal stacked, a per-point scalar with ``k`` unit axes appended."""
    if slot.array or (slot.shape == () and (slot.reg < 0 or k == 0)):
        return slot
    if slot.shape == ():
        return c.emit((), lambda a, env: R.unsqueeze(a, dim=_axes(k)), [slot], array=True)
    if slot.reg < 0:
        return Slot(slot.shape, const=np.asarray(slot.const, dtype=np.float64), array=True)
    depth = len(slot.shape)
    return c.emit(slot.shape, lambda a, env: _stack(a, depth), [slot], array=True)


def _vector(c: _Compiler, slot: Slot) -> Slot:
    return to_array(c, slot, len(slot.shape))


def align(c: _Compiler, node: Node, parts: list[Slot]) -> tuple[Shape, list[Slot], bool]:
    """The common shape of an elementwise operation's operands (each that shape or a
    scalar), the operands made ready, and whether the result is an array."""
    shapes = {p.shape for p in parts if p.shape != ()}
    if len(shapes) > 1:
        raise c.err("operands have different shapes "
                    + " and ".join(str(s) for s in sorted(shapes)), node)
    shape = shapes.pop() if shapes else ()
    if not any(p.array for p in parts if p.shape != ()):
        return shape, parts, False
    return shape, [to_array(c, p, len(shape)) for p in parts], True


def literal(c: _Compiler, node: Node, parts: list[Slot]) -> Slot:
    """``[a, b]``: a literal of scalars stays a list; items that are arrays are stacked."""
    shape = (len(parts),) + parts[0].shape
    if not any(p.array for p in parts):
        return c.emit(shape, lambda *a: list(a[:-1]), parts)
    k = len(parts[0].shape)
    items = [to_array(c, p, k) for p in parts]
    return c.emit(shape, lambda *a: R.stack(*a[:-1], dim=-(k + 1)), items, array=True)


def _key_text(key: Any) -> str:
    if isinstance(key, int):
        return str(key)
    return ":".join("" if v is None else str(v) for v in (key.start, key.stop, key.step)
                    ).rstrip(":") or ":"


def index(c: _Compiler, node: Index, target: Slot) -> Slot:
    """``x[i]``, ``x[-1]``, ``x[1:3]``, ``x[::2]``, ``A[0]`` (a row), ``A[0, 1]``, ``A[:, 0]``."""
    keys = node.keys
    if target.shape == ():
        raise c.err("cannot index a scalar", node)
    if len(keys) > len(target.shape):
        raise c.err(f"{len(keys)} indices for a value of shape {target.shape}", node)
    picks: list[Any] = []
    shape: list[int] = []
    for key, n in zip(keys, target.shape, strict=False):
        if isinstance(key, Slice):
            count = len(range(*key.as_slice().indices(n)))
            if count == 0:
                raise c.err(f"the slice [{_key_text(key)}] of length {n} is empty", node)
            picks.append(key.as_slice())
            shape.append(count)
            continue
        if not -n <= key < n:
            raise c.err(f"index {key} is out of range for length {n}", node,
                        f"indices run from 0 to {n - 1}, or from -{n} to -1 from the end")
        picks.append(key % n)
    out = tuple(shape) + target.shape[len(keys):]
    if target.array:
        full = tuple(picks) + (slice(None),) * (len(target.shape) - len(keys))
        return c.emit(out, lambda a, env: R.take(a, key=full), [target], array=out != ())
    return c.emit(out, lambda a, env: _pick(a, picks), [target])


def _pick(value: Any, picks: list[Any]) -> Any:
    """Python indexing of a literal's nested lists, one key per level."""
    if not picks:
        return value
    head, rest = picks[0], picks[1:]
    if isinstance(head, slice):
        return [_pick(item, rest) for item in value[head]]
    return _pick(value[head], rest)


def matmul(c: _Compiler, node: Node, a: Slot, b: Slot) -> Slot:
    """``a @ b``: matrix-vector, vector-matrix, matrix-matrix, vector-vector (a dot)."""
    sa, sb = a.shape, b.shape
    if not (1 <= len(sa) <= 2 and 1 <= len(sb) <= 2) or sa[-1] != sb[0]:
        raise c.err(f"cannot multiply shapes {sa} @ {sb}", node,
                    "@ multiplies a matrix (n, m) or vector (m,) by one whose first length "
                    "is m")
    a, b = _vector(c, a), _vector(c, b)
    if len(sa) == 1 and len(sb) == 1:
        return c.emit((), lambda x, y, env: R.sum(R.mul(x, y), dim=-1), [a, b])
    if len(sb) == 1:
        return c.emit(sa[:1], lambda x, y, env: R.squeeze(
            R.matmul(x, R.unsqueeze(y, dim=-1)), dim=-1), [a, b], array=True)
    if len(sa) == 1:
        return c.emit(sb[1:], lambda x, y, env: R.squeeze(
            R.matmul(R.unsqueeze(x, dim=-2), y), dim=-2), [a, b], array=True)
    return c.emit((sa[0], sb[1]), lambda x, y, env: R.matmul(x, y), [a, b], array=True)


def _need(c: _Compiler, node: Call, slot: Slot, what: str, ok: bool) -> None:
    if not ok:
        got = "a scalar" if slot.shape == () else f"shape {slot.shape}"
        raise c.err(f"{node.func} needs {what}, got {got}", node)


def _square(c: _Compiler, node: Call, slot: Slot) -> None:
    _need(c, node, slot, "a square matrix",
          len(slot.shape) == 2 and slot.shape[0] == slot.shape[1])


def _vec(c: _Compiler, node: Call, slot: Slot) -> None:
    _need(c, node, slot, "a vector", len(slot.shape) == 1)


def _order(c: _Compiler, node: Call, p: Slot) -> float:
    """norm's p: a constant >= 1, or inf."""
    if p.reg >= 0 or p.shape != () or not (p.const >= 1):
        raise c.err("norm(v, p) needs a constant p >= 1 (or inf)", node)
    return float(p.const)


def _class(c: _Compiler, node: Call, k: Slot, n: int) -> None:
    if k.shape != ():
        raise c.err(f"cross_entropy's class must be a number, got shape {k.shape}", node)
    if k.reg < 0 and not (float(k.const).is_integer() and 0 <= k.const < n):
        raise c.err(f"cross_entropy's class must be a whole number from 0 to {n - 1}, "
                    f"got {k.const:g}", node)


def call(c: _Compiler, node: Call, parts: list[Slot]) -> Slot:
    """The functions of vectors and matrices (reductions, softmax, linear algebra)."""
    name, a = node.func, parts[0]
    if name in ("sum", "mean", "prod", "norm", "max", "min") and len(parts) == 1:
        _need(c, node, a, "a vector or matrix", a.shape != ())
    axes, a = _axes(len(a.shape)), _vector(c, a)
    size = float(math.prod(a.shape))
    one = {
        "sum": lambda x: R.sum(x, dim=axes),
        "mean": lambda x: R.div(R.sum(x, dim=axes), size),
        "prod": lambda x: R.prod(x, dim=axes),
        "norm": lambda x: R.norm(x, dim=axes),
        "max": lambda x: R.amax(x, dim=axes),
        "min": lambda x: R.amin(x, dim=axes),
    }
    if name in one and len(parts) == 1:
        return c.emit((), lambda x, env: one[name](x), [a])
    if name == "norm":
        p = _order(c, node, parts[1])
        prim = R.norm if p == 2 else lambda x, dim: R.vector_norm(x, ord=p, dim=dim)
        return c.emit((), lambda x, env: prim(x, dim=axes), [a])
    if name == "dot":
        b = parts[1]
        if a.shape != b.shape:
            raise c.err(f"dot needs two vectors of one length, got shapes {a.shape} and "
                        f"{b.shape}", node)
        return c.emit((), lambda x, y, env: R.sum(R.mul(x, y), dim=axes), [a, _vector(c, b)])
    if name in ("logsumexp", "softmax", "log_softmax", "cumsum"):
        _vec(c, node, a)
        prim = getattr(R, name)
        return c.emit(() if name == "logsumexp" else a.shape,
                      lambda x, env: prim(x, dim=-1), [a], array=name != "logsumexp")
    if name == "cross_entropy":
        _vec(c, node, a)
        _class(c, node, parts[1], a.shape[0])
        return c.emit((), lambda x, k, env: R.cross_entropy(x, k), [a, parts[1]])
    if name == "transpose":
        _need(c, node, a, "a matrix (a vector is neither a row nor a column: x @ A and "
              "A @ x both work)", len(a.shape) == 2)
        return c.emit(a.shape[::-1], lambda x, env: R.matrix_transpose(x), [a], array=True)
    if name in ("det", "trace", "inv"):
        _square(c, node, a)
        if name == "inv":
            return c.emit(a.shape, lambda x, env: R.inv(x), [a], array=True)
        if name == "det":
            return c.emit((), lambda x, env: R.det(x), [a])
        diagonal = (np.arange(a.shape[0]), np.arange(a.shape[0]))
        return c.emit((), lambda x, env: R.sum(R.take(x, key=diagonal), dim=-1), [a])
    b = parts[1]
    if name == "outer":
        _vec(c, node, a)
        _vec(c, node, b)
        return c.emit(a.shape + b.shape, lambda x, y, env: R.mul(
            R.unsqueeze(x, dim=-1), R.unsqueeze(y, dim=-2)), [a, _vector(c, b)], array=True)
    # solve(A, b): b a vector (n,) or a matrix (n, k)
    _square(c, node, a)
    if b.shape[:1] != a.shape[:1] or len(b.shape) > 2:
        raise c.err(f"solve(A, b) needs b of length {a.shape[0]} (a vector, or a matrix with "
                    f"{a.shape[0]} rows), got shape {b.shape}", node)
    if len(b.shape) == 1:
        return c.emit(b.shape, lambda x, y, env: R.squeeze(
            R.solve(x, R.unsqueeze(y, dim=-1)), dim=-1), [a, _vector(c, b)], array=True)
    return c.emit(b.shape, lambda x, y, env: R.solve(x, y), [a, _vector(c, b)], array=True)
