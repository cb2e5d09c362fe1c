"""Work spread over the cores this process may use: numpy's sorts and gathers and polars' hashing
and joins release the GIL, so threads of one process share the ranking's (and the kernels') work
without copying its arrays to other processes."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def sort_threads() -> int:
    """Threads for the ranking's sorts, hashing and matching, and for the kernels: the cores this process may use."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def on_threads(work: Callable[[int], T], items: range | list[int], threads: int | None = None) -> list[T]:
    """``[work(i) for i in items]``, on up to ``threads`` (None: ``sort_threads()``) threads when there
    are several items."""
    threads = min(threads or sort_threads(), len(items))
    if threads <= 1:
        return [work(i) for i in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(work, items))
