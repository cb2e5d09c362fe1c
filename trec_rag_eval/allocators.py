"""The allocators' settings: memory freed by one step of an evaluation is handed back before the
next step's peak, without a page fault for every page reused; and numpy's BLAS threads, which an
evaluation never uses, are not started by the command.

* glibc keeps freed memory in its arenas (one per thread that allocated) for reuse: after a step
  that made and dropped large temporary arrays on several threads (the reader's checks, the sort of
  an interleaved run), the process would carry that memory into the next step's peak.
  ``release_freed_memory`` returns it (glibc's ``malloc_trim``, as Dask's workers do); elsewhere
  (musl, macOS, Windows) it does nothing.
* pyarrow's jemalloc keeps freed pages for a second by default, so the reader's blocks, freed as it
  goes, would stay next to the table it built; returning them at once instead costs a page fault for
  every page of every block read after. ``import_pyarrow`` imports pyarrow with freed pages kept
  100 ms (``JEMALLOC_SETTINGS``; jemalloc reads them once, when pyarrow loads): the blocks reuse each
  other's pages, and the reader purges what is left when it is done (``MemoryPool.release_unused``).
  A setting the user made is left as it is; when pyarrow was imported before, the reader's pool
  returns pages at once instead (``pyarrow.jemalloc_set_decay_ms(0)``).
* polars has a jemalloc of its own, which keeps freed pages for most of a second: what the ranking's
  polars steps free (each chunk's hashes, the sets and joins of the judgment lookup) would stay in
  its peak. The command gives it pyarrow's settings (``POLARS_JEMALLOC_CONF``, read when polars
  loads, unless the user set it).
* numpy asks the kernel for transparent huge pages for its large arrays. On a machine whose memory
  other programs just used and freed, the kernel compacts memory to find them, inside our page
  faults, which costs more than the huge pages save. The command line runs numpy without them
  (``settings_for_the_command``); the library leaves numpy as the caller set it.
* numpy's OpenBLAS starts a thread per core when numpy loads, and each spins waiting for work that
  an evaluation never gives it (no matrix products), taking CPU time from the reader's threads as the
  run's parse starts. The command runs OpenBLAS on the calling thread alone
  (``OPENBLAS_NUM_THREADS=1``, unless the user set it); a library caller keeps numpy's default.
* Python's collector of reference cycles runs every 700 new container objects (its first generation's
  threshold), and every tenth of those runs the older generations too: the command's imports (numpy's, click's,
  the registry of measures) and a small file's rows make hundreds of thousands of objects, very few of them in
  cycles, and the process ends without tearing them down (``os._exit``). The command runs it every
  ``COLLECT_EVERY`` new objects (a user's higher threshold is kept); a library caller keeps Python's, and a
  caller that runs the command in its own process (``cli.main(args)``) gets its own back when the command ends.

What each setting saves, measured, is in benchmarks/README.md.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

JEMALLOC_CONF = "JE_ARROW_MALLOC_CONF"
"""The variable pyarrow's bundled jemalloc reads its settings from."""
JEMALLOC_SETTINGS = "dirty_decay_ms:100,muzzy_decay_ms:0"
"""Freed pages kept 100 ms for reuse, then returned (not left "muzzy": those still count as resident)."""
_settings_applied = False
_import_lock = threading.Lock()  # runs are read on several threads: one sets the variable and imports
NUMPY_HUGEPAGE = "NUMPY_MADVISE_HUGEPAGE"
"""numpy's switch for madvise(MADV_HUGEPAGE) on its large arrays, read when numpy loads."""
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
"""The threads numpy's OpenBLAS starts when it loads."""
POLARS_JEMALLOC_CONF = "_RJEM_MALLOC_CONF"
"""The variable polars' own jemalloc reads its settings from (``JEMALLOC_SETTINGS`` in the command)."""
COLLECT_EVERY = 50_000
"""The new container objects between two collections of reference cycles in the command (Python's: 700)."""


def import_pyarrow() -> Any:
    """``pyarrow``; imported here for the first time, with ``JEMALLOC_SETTINGS``. The variable is
    set only for the import: child processes see the environment as it was."""
    global _settings_applied
    with _import_lock:
        if "pyarrow" not in sys.modules and JEMALLOC_CONF not in os.environ:
            os.environ[JEMALLOC_CONF] = JEMALLOC_SETTINGS
            try:
                import pyarrow
            finally:
                os.environ.pop(JEMALLOC_CONF, None)
            _settings_applied = True
    import pyarrow

    return pyarrow


def settings_for_the_command() -> None:
    """Make numpy, when it loads, ask for no transparent huge pages (``NUMPY_MADVISE_HUGEPAGE=0``)
    and start no BLAS threads (``OPENBLAS_NUM_THREADS=1``), and polars keep freed pages 100 ms
    (``_RJEM_MALLOC_CONF``): for a process that owns its environment (the command line; its child
    processes inherit it). Nothing changes for a library already loaded; a variable the user set is
    kept. And the collector of reference cycles runs every ``COLLECT_EVERY`` new objects."""
    if "numpy" not in sys.modules:
        os.environ.setdefault(NUMPY_HUGEPAGE, "0")
        os.environ.setdefault(BLAS_THREADS, "1")
    if "polars" not in sys.modules:
        os.environ.setdefault(POLARS_JEMALLOC_CONF, JEMALLOC_SETTINGS)
    first, *older = gc.get_threshold()
    if 0 < first < COLLECT_EVERY:  # 0: the user turned the collector off (gc.disable is another switch)
        gc.set_threshold(COLLECT_EVERY, *older)


def jemalloc_configured() -> bool:
    """Whether pyarrow's jemalloc runs with ``JEMALLOC_SETTINGS`` (pyarrow first imported by
    ``import_pyarrow``)."""
    return _settings_applied


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` from the C library already loaded (no search for it on disk)."""
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError, TypeError):  # not glibc, or no process-wide symbols (Windows)
        return None


def release_freed_memory() -> None:
    """Return the C library's free memory to the system (glibc's ``malloc_trim(0)``), if it can."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)
