"""Wide tables (more columns than rows: a long vector's components) are formatted in runs
of values rather than column by column; the text is the same as each value's shortest
repr, as for tall tables."""

from __future__ import annotations

import numpy as np

from gradcli.output._floatfmt import format_rows


def test_wide_rows_format_like_repr():
    """A 3 × 5,000 block formats to the values' reprs, row by row, as its transpose does
    column by column."""
    rng = np.random.default_rng(3)
    block = rng.standard_normal((3, 5000)) * 10.0 ** rng.integers(-12, 12, (3, 5000))
    block[0, :4] = [0.0, -0.0, 1e300, 5e-324]
    want = "".join(",".join(repr(float(v)) for v in row) + "\n" for row in block)
    assert format_rows(block).decode() == want
    tall = format_rows(np.ascontiguousarray(block.T)).decode().splitlines()
    assert [line.split(",") for line in tall] == [list(col) for col in zip(
        *[line.split(",") for line in want.splitlines()], strict=True)]
