"""Keep freed block temporaries in the process heap instead of handing them back to the OS.

A blocked evaluation allocates and frees the same few hundred-kilobyte temporaries for every
block. glibc's defaults return such memory to the kernel (trimming the heap top, or mmap for
big chunks), so the next block takes a page fault on every 4 KiB it touches: measured here,
a block of W2 took 750 µs instead of 90 µs. Raising the thresholds once makes the heap keep
that memory for reuse. The outputs themselves (above 32 MiB) are still mapped and unmapped.
"""

from __future__ import annotations

import sys

# mallopt parameters from glibc's <malloc.h>
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3
_MMAP_THRESHOLD = 32 << 20   # glibc's largest accepted value on 64-bit
_TRIM_THRESHOLD = 256 << 20  # freed heap kept before trimming: bounded, not a leak
_TOP_PAD = 64 << 20

_tuned = False


def keep_freed_memory() -> bool:
    """Tune glibc's malloc once per process for blocked evaluation; True if it was applied.

    A no-op elsewhere (macOS, Windows, musl's stub ``mallopt``): only speed differs.
    """
    global _tuned
    if _tuned:
        return True
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL(None).mallopt  # the C library this process already uses
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    _tuned = all([mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD),
                  mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD),
                  mallopt(_M_TOP_PAD, _TOP_PAD)])
    return _tuned
