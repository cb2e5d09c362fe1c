"""Hand the memory that large temporary arrays freed back to the system, where the C library allows it.

glibc keeps freed memory in its arenas (one per thread that allocated) for reuse: after a step that
made and dropped large temporary arrays on several threads (the reader's checks, the sort of an
interleaved run), the process would carry that memory into the next step's peak. ``malloc_trim``
returns it, as Dask's workers do. Elsewhere (musl, macOS, Windows) this does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def release_freed_memory() -> None:
    """Return the C library's free memory to the system (glibc's ``malloc_trim(0)``), if it can."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
