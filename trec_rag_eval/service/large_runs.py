"""Runs too large for the memory, on this machine: read in pieces (``should_stream``, ``evaluate_in_pieces``,
with a bar over the bytes read, ``byte_progress``), or read on a background thread while the judgments are read
(``read_ahead``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from trec_rag_eval.call_scope import carried
from trec_rag_eval.io.loading import FORMATS

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.tables import Qrels, Run

STREAM_MEMORY_SHARE = 4
"""A run is read in pieces when it would take more than 1/STREAM_MEMORY_SHARE of the available memory."""
GZIP_RATIO = 8
"""A gzip run counts as this many times its size (a typical ratio for runs)."""
LEAST_MEMORY = 64 << 20
"""The least memory taken to be available (64 MiB: less, and the process itself could hardly run): a run that
would not take a quarter of it even as gzip (up to 2 MiB) is read whole without asking the system how much it has."""
IN_PIECES = "trec"
"""The one format whose runs are read in pieces (``io.trec.pieces.iter_run_chunks``); the others are read whole."""

Progress = Callable[[str], AbstractContextManager[Callable[[int], None]]]
"""Given a run's path, a context in which to report the bytes read so far (for runs read in pieces)."""


def evaluate_in_pieces(qrels: Qrels, path: str, measures: list[Measure], settings: Settings, chunk_bytes: int,
                        progress: Progress | None) -> Evaluation:
    from trec_rag_eval.evaluation.streaming import evaluate_pieces
    from trec_rag_eval.io.trec.pieces import iter_run_chunks

    if progress is None:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes), measures, settings)
    with progress(path) as advance:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes, advance), measures, settings)


def byte_progress() -> Progress:
    """How a run read in pieces shows its progress: the library's tqdm bar over the file's bytes (a
    bar in a terminal, a widget in a notebook, an update every few seconds in a log file)."""
    import sys

    from trec_rag_eval.io.sources import basename
    from trec_rag_eval.io.sources import size as size_of
    from trec_rag_eval.progress import bar

    @contextmanager
    def display(path: str) -> Iterator[Callable[[int], None]]:
        size = max(size_of(path), 1)
        with bar(size, f"reading {basename(path)}", unit="B", file=sys.stderr, scale=True) as shown:

            def advance(done: int) -> None:
                shown.update(min(done, size) - shown.n)

            yield advance

    return display

def should_stream(path: str, size: int | None, run_format: str = "auto") -> bool:
    """Whether the run at ``path``, a file of ``size`` bytes (None: no file, a pipe, a folder), is better read in
    pieces: a TREC run larger than a quarter of the memory available now (a gzip file counted at eight times its
    size). JSON results are read whole. A file too small to matter even as gzip is not opened to see whether it
    is, and one too small to matter even in ``LEAST_MEMORY`` does not ask how much memory is available."""
    if (run_format in FORMATS and FORMATS[run_format].whole) or size is None \
            or size * STREAM_MEMORY_SHARE * GZIP_RATIO <= LEAST_MEMORY:
        return False
    available = available_memory()
    if available is None:
        return False
    size *= STREAM_MEMORY_SHARE
    if size * GZIP_RATIO <= available:
        return False
    from trec_rag_eval.io.sources import is_gzip

    return size * (GZIP_RATIO if is_gzip(path) else 1) > available


def available_memory() -> int | None:
    """Memory the system can give without swapping (MemAvailable counts reclaimable page cache);
    None when the system does not say."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:  # the kernel's figures, not a user's file
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


class RunReader:
    """A TREC run file read on a background thread (``read_ahead``): the result, or the error, of
    ``io.loading.load_run_report`` when asked for."""

    def __init__(self, path: str, run_format: str) -> None:
        import threading

        self.path = path
        self._done = threading.Event()
        self._value: tuple[Run, Any] | None = None
        self._error: BaseException | None = None
        # a daemon, so it never keeps a process alive by itself; whoever starts it still waits for it (wait)
        threading.Thread(target=carried(self._read), args=(run_format,), name="trec-rag-eval read-ahead",
                         daemon=True).start()

    def _read(self, run_format: str) -> None:
        from trec_rag_eval.io.loading import load_run_report

        try:
            self._value = load_run_report(self.path, run_format)
        except BaseException as err:  # handed to the thread that asks for the run
            self._error = err
        finally:
            self._done.set()

    def wait(self) -> None:
        """Until the reading is over. Whoever starts a reader waits for it before leaving, even on an
        error: an interpreter that exits while pyarrow's threads still parse can crash on its way out."""
        self._done.wait()

    def result(self) -> tuple[Run, Any]:
        """The run and its report, once read; the reader's error if it failed."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def read_ahead(path: str, size: int | None, run_format: str = "auto", stream: bool | None = None
               ) -> RunReader | None:
    """Start reading the run at ``path``, a file of ``size`` bytes (None: no file), on a background thread, if
    the service (``pipeline.run_outcomes``) would read it whole as a large TREC file; None otherwise.

    Called before the judgments are read: pyarrow parses the run (without the GIL) while polars reads
    the qrels, instead of one after the other. Pass the reader to ``pipeline.run_outcomes(ahead=...)``,
    and ``wait()`` for it before returning, whatever happens."""
    from trec_rag_eval.errors import TrecRagEvalError
    from trec_rag_eval.io.loading import detect_format
    from trec_rag_eval.io.trec.qrels_runs import SMALL_FILE_BYTES

    if stream or size is None or size < SMALL_FILE_BYTES:
        return None
    try:
        fmt = detect_format(path) if run_format == "auto" else run_format
    except (OSError, TrecRagEvalError):  # said by the reader in its turn, after the qrels' errors
        return None
    if fmt != "trec" or should_stream(path, size, fmt):
        return None
    return RunReader(path, fmt)
