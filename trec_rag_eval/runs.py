"""Evaluate run files against judgments already read, with what the user should be told about each.

``evaluate_run_file`` is the one step both the single machine (a thread per run, ``evaluate_run_files``)
and a Dask worker (a task per run, see ``cluster``) take: read the run where it lies (any format), map
chunk ids to documents when asked, evaluate, and list the notes and warnings: queries missing from
the run or only in it, and for JSON results the RAG checks. Each note is a ``"Warning: ..."`` or
``"Note: ..."`` line. ``evaluate_run_files`` also decides which runs are read in pieces (a run
larger than the memory can hold) and evaluates several runs at once.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

# worded where every path finds them (compare, the evaluate of a run in memory); said here too
from trec_rag_eval.evaluation.notes import missing_queries_warning as missing_queries_warning
from trec_rag_eval.evaluation.notes import query_set_warnings as query_set_warnings

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.io.tables import Qrels, Run
    from trec_rag_eval.measures.model import Measure


def evaluate_run_file(qrels: Qrels, path: str, measures: list[Measure], settings: Settings,
                      run_format: str = "auto", doc_map: Any = None,
                      ahead: RunReader | None = None) -> tuple[Evaluation, list[str]]:
    """The evaluation of the run at ``path`` and its notes (see the module's docstring); ``ahead``:
    the run already being read (``read_ahead``)."""
    from trec_rag_eval.evaluation.evaluate import evaluate
    from trec_rag_eval.io.load import detect_format, load_run_report

    run, report = ahead.result() if ahead is not None else load_run_report(path, run_format, qrels)
    run, notes = map_chunks(run, doc_map, qrels)
    evaluation = evaluate(qrels, run, measures, settings)
    if run_format == "json" or (run_format == "auto" and detect_format(path) == "json"):
        # JSON results get the RAG checks, which also cover missing and extra queries
        from trec_rag_eval.checks.rag import check_rag

        checks = check_rag(qrels, run, report, evaluated=True, relevance_level=settings.relevance_level)
        return evaluation, notes + [f"Warning: {warning}" for warning in checks]
    return evaluation, notes + [f"Warning: {warning}" for warning in query_set_warnings(evaluation)]


def map_chunks(run: Run, doc_map: Any, qrels: Qrels) -> tuple[Run, list[str]]:
    """``io.chunks.collapse_run`` and its lines (what it did, then its warnings). Without a mapping,
    the run unchanged, and a note when its ids look like chunks of judged documents (with the
    pattern that would map them, ``io.chunks.guess_doc_id_pattern``)."""
    if doc_map is None:
        from trec_rag_eval.io.chunks import guess_doc_id_pattern

        guess = guess_doc_id_pattern(run, qrels)
        if guess is None:
            return run, []
        pattern, chunk_id, doc_id = guess
        return run, [f"Note: the retrieved ids look like chunks of judged documents ({chunk_id!r} of {doc_id!r}): "
                     f"score them as their documents with doc_map='{pattern}'"]
    from trec_rag_eval.io.chunks import collapse_run

    collapsed, report = collapse_run(run, doc_map, qrels)
    return collapsed, [f"Note: {report.summary()}"] + [f"Warning: {w}" for w in report.warnings()]


STREAM_MEMORY_SHARE = 4
"""A run is read in pieces when it would take more than 1/STREAM_MEMORY_SHARE of the available memory."""
GZIP_RATIO = 8
"""A gzip run counts as this many times its size (a typical ratio for runs)."""


def should_stream(path: str, run_format: str = "auto") -> bool:
    """Whether the run at ``path`` is better read in pieces: a TREC run larger than a quarter of the
    memory available now (a gzip file counted at eight times its size). JSON results are read whole."""
    from trec_rag_eval.io.text import is_gzip

    if run_format == "json" or not os.path.isfile(path):
        return False
    available = available_memory()
    if available is None:
        return False
    size = os.path.getsize(path) * (GZIP_RATIO if is_gzip(path) else 1)
    return size * STREAM_MEMORY_SHARE > available


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


Progress = Callable[[str], AbstractContextManager[Callable[[int], None]]]
"""Given a run's path, a context in which to report the bytes read so far (for runs read in pieces)."""


class RunReader:
    """A TREC run file read on a background thread (``read_ahead``): the result, or the error, of
    ``io.load.load_run_report`` when asked for."""

    def __init__(self, path: str, run_format: str) -> None:
        import threading

        self.path = path
        self._done = threading.Event()
        self._value: tuple[Run, Any] | None = None
        self._error: BaseException | None = None
        # a daemon, so it never keeps a process alive by itself; whoever starts it still waits for it (wait)
        threading.Thread(target=self._read, args=(run_format,), name="trec-rag-eval read-ahead", daemon=True).start()

    def _read(self, run_format: str) -> None:
        from trec_rag_eval.io.load import load_run_report

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


def read_ahead(paths: list[str], run_format: str = "auto", stream: bool | None = None) -> RunReader | None:
    """Start reading the first run of ``paths`` on a background thread, if ``evaluate_run_files``
    would read it whole as a large TREC file; None otherwise.

    Called before the judgments are read: pyarrow parses the run (without the GIL) while polars reads
    the qrels, instead of one after the other. Pass the reader to ``evaluate_run_files(ahead=...)``,
    and ``wait()`` for it before returning, whatever happens."""
    from trec_rag_eval.errors import TrecRagEvalError
    from trec_rag_eval.io.load import detect_format
    from trec_rag_eval.io.trec import SMALL_FILE_BYTES

    if not paths or stream:
        return None
    path = os.fspath(paths[0])
    try:
        if not os.path.isfile(path) or os.path.getsize(path) < SMALL_FILE_BYTES:
            return None
        fmt = detect_format(path) if run_format == "auto" else run_format
    except (OSError, TrecRagEvalError):  # said by the reader in its turn, after the qrels' errors
        return None
    if fmt != "trec" or should_stream(path, fmt):
        return None
    return RunReader(path, fmt)


def evaluate_run_files(qrels: Qrels, paths: list[str], measures: list[Measure], settings: Settings, *,
                       run_format: str = "auto", doc_map: Any = None, stream: bool | None = None,
                       chunk_bytes: int = 64 << 20, jobs: int | None = None,
                       progress: Progress | None = None,
                       ahead: RunReader | None = None) -> list[tuple[Evaluation, list[str]]]:
    """Each run of ``paths``, in that order, with its notes (as ``evaluate_run_file``).

    ``stream``: True reads every run in pieces of about ``chunk_bytes`` (the run must be grouped by
    query); None reads in pieces only the runs too large for the memory available
    (``should_stream``), and one of those that is not grouped by query is read
    whole after all, with a note; False never. Runs read whole are evaluated ``jobs`` at a time
    (default: the number of cores) on threads sharing the judgments: polars and numpy release the GIL.
    ``ahead``: the first run, already being read (``read_ahead``).
    """
    from trec_rag_eval.errors import UsageError

    if stream and doc_map is not None:
        raise UsageError("doc_map reads each run whole: not with stream=True")
    if ahead is not None and (not paths or os.fspath(paths[0]) != ahead.path):
        ahead = None
    # a run already being read ahead is read whole: read_ahead asked should_stream before starting it
    streamed = [not (index == 0 and ahead is not None) and doc_map is None and stream is not False
                and (bool(stream) or should_stream(path, run_format)) for index, path in enumerate(paths)]
    if any(streamed) and run_format == "json":
        raise UsageError("stream=True reads TREC runs; JSON results are read whole")

    def one(index: int) -> tuple[Evaluation, list[str]]:
        path = paths[index]
        notes: list[str] = []
        if streamed[index]:
            from trec_rag_eval.io.trec import RunNotGroupedError

            try:
                evaluation = _evaluate_in_pieces(qrels, path, measures, settings, chunk_bytes, progress)
                return evaluation, [f"Warning: {w}" for w in query_set_warnings(evaluation)]
            except RunNotGroupedError:
                if stream:  # asked for explicitly: the error says how to sort the file
                    raise
                notes.append("Warning: not grouped by query, so read whole instead of in pieces")
        evaluation, more = evaluate_run_file(qrels, path, measures, settings, run_format, doc_map,
                                             ahead if index == 0 else None)
        return evaluation, notes + more

    workers = min(len(paths), jobs or os.cpu_count() or 1)
    if workers > 1 and not any(streamed):
        from concurrent.futures import ThreadPoolExecutor, wait

        pool = ThreadPoolExecutor(max_workers=workers)
        futures = [pool.submit(one, index) for index in range(len(paths))]
        try:
            # waited for in short steps: a thread blocked on a lock does not see Ctrl-C, a loop does
            while wait(futures, timeout=0.1).not_done:
                pass
        except KeyboardInterrupt:  # leave at once: children matching a pattern are stopped as Python exits
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return [future.result() for future in futures]
    return [one(i) for i in range(len(paths))]


def _evaluate_in_pieces(qrels: Qrels, path: str, measures: list[Measure], settings: Settings, chunk_bytes: int,
                        progress: Progress | None) -> Evaluation:
    from trec_rag_eval.evaluation.streaming import evaluate_pieces
    from trec_rag_eval.io.trec import iter_run_chunks

    if progress is None:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes), measures, settings)
    with progress(path) as advance:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes, advance), measures, settings)
