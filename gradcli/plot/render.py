"""Write a Figure to png/svg/pdf reproducibly and atomically.

Reproducible: no software version, creator or date in the file's metadata, and a fixed
``svg.hashsalt`` so SVG element ids do not change between runs; the same command writes the
same bytes. Atomic: the picture goes to a temporary file in the target's directory, then
``os.replace`` moves it into place, so a failure never leaves a half-written or stale file.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib

from gradcli.output.atomic import atomic_open
from gradcli.plot.options import check_target, image_format

__all__ = ["save_figure", "stable_rc", "check_target", "METADATA", "RC"]

METADATA: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
    "svg": {"Date": None, "Creator": None},
}
RC = {"svg.hashsalt": "gradcli", "pdf.compression": 6}


@contextmanager
def stable_rc() -> Iterator[None]:
    """rcParams that make the output bytes depend only on the figure (local, not global)."""
    with matplotlib.rc_context(RC):
        yield


#: the margin left around the content of a cropped picture, inches
CROP_PAD = 0.03


def save_figure(fig: Any, path: str, fmt: str | None = None, dpi: float | None = None,
                crop: bool = False) -> None:
    """Save ``fig`` to ``path`` (format from the extension unless given), atomically;
    ``crop`` trims the blank margin around the content (what was drawn decides the
    picture's size, as when no size is asked for).

    Raises EvaluationError for an unknown extension and OutputError (naming the path) if
    the file cannot be written; in either case nothing is left at ``path`` or beside it.
    """
    fmt = fmt or image_format(path)
    with atomic_open(path, "wb") as handle, stable_rc():
        extra = {"bbox_inches": "tight", "pad_inches": CROP_PAD} if crop else {}
        fig.savefig(handle, format=fmt, dpi=dpi or fig.dpi, metadata=METADATA[fmt], **extra)
