"""Progress bars for long work (search, query generation, judging, a run read in pieces, tasks on
a cluster, a long comparison), through tqdm: the one mechanism of the library and the command line.

tqdm draws a bar in a terminal, a widget in a notebook (``tqdm.auto``) and plain updates in a log
file, where click's bar printed its label and nothing more.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any, TypeVar

T = TypeVar("T")


def progress_bar(items: Iterable[T], total: int | None, label: str, unit: str = "it", enabled: bool = True,
                 file: IO[str] | None = None) -> Iterator[T]:
    """Iterate over ``items``, showing progress on ``file`` (default stderr) when ``enabled``."""
    if not enabled:
        yield from items
        return
    with bar(total, label, unit, file) as progress:
        for item in items:
            yield item
            progress.update(1)


def bar(total: int | None, label: str, unit: str = "it", file: IO[str] | None = None, scale: bool = False) -> Any:
    """A tqdm bar to ``update(n)`` by hand (``with bar(...) as b: ... b.update(1)``); ``scale``
    shows large counts with SI prefixes (bytes: 1.2MB)."""
    tqdm = _tqdm_class()
    stream = file if file is not None else sys.stderr
    interactive = bool(getattr(stream, "isatty", lambda: False)())
    # a log file gets a line every few seconds, not one per update
    return tqdm(total=total, desc=label, unit=unit, file=stream, mininterval=0.1 if interactive else 5.0,
                dynamic_ncols=interactive, ascii=not interactive, unit_scale=scale)


def _tqdm_class() -> Any:
    """tqdm's widget in a Jupyter kernel (``tqdm.auto``) when ipywidgets is installed (the ``notebook`` extra),
    its text bar everywhere else: without ipywidgets, ``tqdm.auto`` would warn ``IProgress not found`` in
    every cell that shows a bar, and draw the text bar all the same."""
    if "ipykernel" in sys.modules:
        from importlib.util import find_spec

        if find_spec("ipywidgets") is None:
            from tqdm.std import tqdm as text_bar

            return text_bar
    from tqdm.auto import tqdm

    return tqdm
