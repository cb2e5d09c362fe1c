"""Keep freed memory out of the peak: the C library's and pyarrow's allocators told to give it back.

glibc keeps freed memory in its arenas (one per thread that allocated) for reuse: after a step that
made and dropped large temporary arrays on several threads (the reader's checks, the sort of an
interleaved run), the process would carry that memory into the next step's peak. ``malloc_trim``
returns it, as Dask's workers do. Elsewhere (musl, macOS, Windows) this does nothing.

pyarrow's jemalloc keeps freed pages for a second by default (``dirty_decay_ms``); the reader's
blocks, freed as it goes, would stay next to the table it built. ``import_pyarrow`` imports it with
both decays at 0 (jemalloc reads its configuration once, when pyarrow loads): 50 MB less resident
after reading a 293 MB run. An allocator configuration the user set is left as it is.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os
import sys
from collections.abc import Callable
from typing import Any

JEMALLOC_CONF = "JE_ARROW_MALLOC_CONF"
"""The variable pyarrow's bundled jemalloc reads its configuration from."""


def import_pyarrow() -> Any:
    """``pyarrow``; imported here for the first time, with jemalloc returning freed pages at once.
    The variable is set only for the import: child processes see the environment as it was."""
    if "pyarrow" not in sys.modules and JEMALLOC_CONF not in os.environ:
        os.environ[JEMALLOC_CONF] = "dirty_decay_ms:0,muzzy_decay_ms:0"
        try:
            import pyarrow
        finally:
            os.environ.pop(JEMALLOC_CONF, None)
    import pyarrow

    return pyarrow


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
