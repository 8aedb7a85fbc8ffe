"""Blocks: the named arrays a result is made of, and how their scalar columns are named.

A result is a list of blocks. A block is one array whose leading axes are the batch (the
points, or the grid's axes) and whose trailing axes are the block's own: none for a scalar
column such as ``f`` or ``df/dy``; ``(n,)`` for ``df/dx`` or ``x`` itself when x is a
vector of n components; ``(n, m)`` for ``d2f/dxdy``. ``.npz`` files and
``gradcli.evaluate`` hand out one array per block; CSV, JSON and tables show one scalar
column per component, named by filling the block's index slots: ``df/dx[0]``,
``d2f/dx[0]dy[1]``, later ``df/dA[0][1]`` for a matrix variable A.

A block is built from a template of text and axes, ``["d2f/d", "x", (n,), "d", "y", (m,)]``:
the text alone is its name (``d2f/dxdy``), the axes its shape, and each component's column
name puts ``[i]`` after every axis. ``Layout`` lists the blocks and the order of their
scalar columns (a Hessian's columns interleave two blocks: ``d2f/dx[0]dx[..]`` then
``d2f/dx[0]dy``). ``Result`` holds the arrays and reads as a mapping of scalar columns, so
code that wants columns never needs to know about blocks.

Kinds: ``text`` columns are carried through from a points file unchanged (object arrays of
``str``), ``input`` blocks are the variables' own values, ``result`` blocks are computed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["TEXT", "INPUT", "RESULT", "Block", "Layout", "Result", "as_result", "is_text"]

TEXT, INPUT, RESULT = "text", "input", "result"


@dataclass(frozen=True)
class Block:
    """One named array: ``shape`` is its own trailing shape (``()`` for a scalar column);
    ``parts`` are the name pieces around its index slots (``len(shape) + 1`` of them)."""

    name: str
    shape: tuple[int, ...] = ()
    parts: tuple[str, ...] = ()
    kind: str = RESULT
    #: the physical unit of every component, as shown (``V/mA``); empty without units
    unit: str = ""
    #: one unit per component when they differ (taylor's coefficients: one per multi-index,
    #: unit(f)/unit(x)^k); ``unit`` is then empty
    units: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.parts:
            object.__setattr__(self, "parts", (self.name,) + ("",) * len(self.shape))
        if len(self.parts) != len(self.shape) + 1:
            raise ValueError(f"block '{self.name}': {len(self.parts)} name parts for "
                             f"{len(self.shape)} axes")

    @classmethod
    def template(cls, pieces: Sequence[str | tuple[int, ...]], kind: str = RESULT) -> Block:
        """A block from text and axes: ``["df/d", "x", (3,)]`` is ``df/dx`` of shape (3,)
        with columns ``df/dx[0]``... Text between axes goes into the column names only
        after the axes before it (``d2f/dx[0]dy[1]``)."""
        parts, shape, text = [], [], ""
        for piece in pieces:
            if isinstance(piece, str):
                text += piece
                continue
            for n in piece:
                parts.append(text)
                shape.append(int(n))
                text = ""
        parts.append(text)
        name = "".join(p for p in pieces if isinstance(p, str))
        return cls(name, tuple(shape), tuple(parts), kind)

    @property
    def size(self) -> int:
        """Number of scalar columns (components)."""
        return math.prod(self.shape)

    def column(self, index: int) -> str:
        """The scalar column name of component ``index`` (flat, C order)."""
        if not self.shape:
            return self.name
        idx = np.unravel_index(index, self.shape)
        return "".join(p + f"[{i}]" for p, i in zip(self.parts, idx, strict=False)) + self.parts[-1]

    def component_of(self, column: str) -> int | None:
        """The component (flat, C order) whose column is named ``column``, or None."""
        if not self.shape:
            return 0 if column == self.name else None
        if not column.startswith(self.parts[0]) or not column.endswith(self.parts[-1]):
            return None
        pattern = r"\[(\d+)\]".join(re.escape(p) for p in self.parts)
        match = re.fullmatch(pattern, column)
        if match is None:
            return None
        idx = tuple(int(g) for g in match.groups())
        if any(g.startswith("0") and g != "0" for g in match.groups()) or \
                any(i >= n for i, n in zip(idx, self.shape, strict=True)):
            return None
        return int(np.ravel_multi_index(idx, self.shape))

    def column_names(self) -> list[str]:
        """Every component's column name, in C order."""
        if not self.shape:
            return [self.name]
        if len(self.shape) == 1:  # the common case, without unravel_index per component
            head, tail = self.parts
            return [f"{head}[{i}]{tail}" for i in range(self.shape[0])]
        return [self.column(k) for k in range(self.size)]


@dataclass
class Layout:
    """Blocks in array order, and the scalar column order as (block index, component)
    pairs; ``order=None`` means block by block, components in C order. ``order`` may also
    be a function that makes the list, called only when a writer asks for scalar columns:
    a Hessian of a 10⁴-vector has 10⁸ of them, which a file of blocks (.npz) never needs."""

    blocks: list[Block]
    order: list[tuple[int, int]] | Callable[[], list[tuple[int, int]]] | None = None
    _names: list[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for b in self.blocks:
            if b.name in seen:
                raise ValueError(f"two blocks are named '{b.name}'")
            seen.add(b.name)

    def scalar_order(self) -> list[tuple[int, int]]:
        """(block index, component) for every scalar column, in column order."""
        if self.order is None:
            self.order = [(i, k) for i, b in enumerate(self.blocks) for k in range(b.size)]
        elif callable(self.order):
            self.order = self.order()
        return self.order

    def column_names(self) -> list[str]:
        """The scalar column names in column order (as CSV headers show them)."""
        if self._names is None:
            per_block = [b.column_names() for b in self.blocks]
            self._names = [per_block[i][k] for i, k in self.scalar_order()]
        return self._names

    def size(self) -> int:
        """The number of scalar columns."""
        return sum(b.size for b in self.blocks)

    def locate(self, column: str) -> tuple[int, int] | None:
        """(block index, component) of a scalar column, or None (without naming every
        component of every block)."""
        for i, block in enumerate(self.blocks):
            k = block.component_of(column)
            if k is not None:
                return i, k
        return None

    def runs(self) -> list[tuple[int, int, int]]:
        """The column order as runs (block index, first component, count) of consecutive
        components of one block: writers copy a run as one slice, not column by column."""
        if self.order is None:
            return [(i, 0, b.size) for i, b in enumerate(self.blocks)]
        out: list[tuple[int, int, int]] = []
        for i, k in self.scalar_order():
            if out and out[-1][0] == i and out[-1][1] + out[-1][2] == k:
                out[-1] = (i, out[-1][1], out[-1][2] + 1)
            else:
                out.append((i, k, 1))
        return out

    def sources(self) -> list[np.ndarray]:
        """For each block, the column positions of its components in C order."""
        out = [np.empty(b.size, dtype=np.intp) for b in self.blocks]
        for pos, (i, k) in enumerate(self.scalar_order()):
            out[i][k] = pos
        return out

    @staticmethod
    def concat(*layouts: Layout) -> Layout:
        """The blocks of each layout in turn, each keeping its column order."""
        if all(lay.order is None for lay in layouts):
            return Layout([b for lay in layouts for b in lay.blocks])

        def order() -> list[tuple[int, int]]:
            out, base = [], 0
            for lay in layouts:
                out.extend((base + i, k) for i, k in lay.scalar_order())
                base += len(lay.blocks)
            return out

        blocks = [b for lay in layouts for b in lay.blocks]
        lazy = any(callable(lay.order) for lay in layouts)
        return Layout(blocks, order if lazy else order())

    def subset(self, names: Sequence[str]) -> Layout:
        """The layout of only the named blocks (column order kept)."""
        keep = [i for i, b in enumerate(self.blocks) if b.name in set(names)]
        new_index = {old: new for new, old in enumerate(keep)}

        def order() -> list[tuple[int, int]]:
            return [(new_index[i], k) for i, k in self.scalar_order() if i in new_index]

        blocks = [self.blocks[i] for i in keep]
        if self.order is None:
            return Layout(blocks)
        return Layout(blocks, order if callable(self.order) else order())


def is_text(arr: Any) -> bool:
    """True for a column of text (numpy strings or objects), which writers copy as text."""
    return np.asarray(arr).dtype.kind in "OUST"


class Result(Mapping[str, np.ndarray]):
    """A result's arrays, one per block, read as a mapping of scalar columns.

    ``result["df/dx[1]"]`` is a view into block ``df/dx``; ``result.arrays`` maps block
    names to their arrays (what ``.npz`` and ``gradcli.evaluate`` give). Arrays broadcast
    against ``batch_shape + block.shape`` (grid variables stay ``ogrid``-style axes).
    """

    def __init__(self, layout: Layout, arrays: Mapping[str, Any],
                 batch_shape: tuple[int, ...]) -> None:
        present = [b.name for b in layout.blocks if b.name in arrays]
        self.layout = layout if len(present) == len(layout.blocks) else layout.subset(present)
        self.arrays = {name: arrays[name] for name in present}
        self.batch_shape = tuple(batch_shape)

    @property
    def blocks(self) -> list[Block]:
        return self.layout.blocks

    def block_array(self, block: Block) -> np.ndarray:
        """The block's array, as stored (possibly broadcastable, not full size)."""
        return self.arrays[block.name]

    def __getitem__(self, column: str) -> np.ndarray:
        where = self.layout.locate(column)
        if where is None:
            raise KeyError(column)
        block = self.layout.blocks[where[0]]
        arr = np.asarray(self.arrays[block.name])
        if not block.shape:
            return arr
        return arr[(..., *np.unravel_index(where[1], block.shape))]

    def __iter__(self) -> Iterator[str]:
        return iter(self.layout.column_names())

    def __len__(self) -> int:
        return self.layout.size()

    def __contains__(self, column: object) -> bool:
        return isinstance(column, str) and self.layout.locate(column) is not None


def as_result(columns: Mapping[str, Any]) -> Result:
    """``columns`` as a Result: itself, or each entry of a plain mapping as a scalar block
    (text when its values are strings)."""
    if isinstance(columns, Result):
        return columns
    arrays = {name: np.asarray(col) for name, col in columns.items()}
    blocks = [Block(name, kind=TEXT if is_text(arr) else RESULT) for name, arr in arrays.items()]
    shapes = [a.shape for a in arrays.values()]
    try:
        batch = tuple(np.broadcast_shapes(*shapes)) if shapes else (0,)
    except ValueError as err:
        raise ValueError(f"result columns have incompatible shapes {shapes}") from err
    return Result(Layout(blocks), arrays, batch)
