"""``evaluate_runs``: each run, in the order given, as a ``RunOutcome``, on this machine (threads sharing the
judgments; a large run in pieces or read ahead, ``service.large_runs``) or spread out (``service.spread``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from trec_rag_eval.call_scope import carried
from trec_rag_eval.errors import TrecRagEvalError, UsageError
from trec_rag_eval.evaluation.run_notes import query_set_warnings
from trec_rag_eval.io.formats import FORMATS
from trec_rag_eval.notes import warning
from trec_rag_eval.run_outcome import RunOutcome, evaluate_run_file, map_chunks
from trec_rag_eval.service import large_runs
from trec_rag_eval.service.inputs import doc_id_map, run_from_any_shape
from trec_rag_eval.service.spread import evaluate_spread

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.io.chunks import DocIdMap
    from trec_rag_eval.io.id_paths import IdLocator
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.service.large_runs import Progress, RunReader
    from trec_rag_eval.service.spread import TaskProgress
    from trec_rag_eval.tables import Qrels, Run

AHEAD_PER_THREAD = 2
"""Runs evaluated on this machine at most this many per thread ahead of the one the caller waits for."""


def evaluate_runs(qrels: Qrels, runs: Sequence[Any], measures: list[Measure], settings: Settings, *,
                  labels: Sequence[str] | None = None, run_format: str = "auto", doc_map: Any = None,
                  id: IdLocator | None = None,
                  stream: bool | None = None, chunk_bytes: int = 64 << 20, jobs: int | None = None,
                  progress: Progress | None = None, ahead: RunReader | None = None, cluster: Any = None,
                  shards: bool = False, task_progress: TaskProgress | None = None,
                  qrels_from: Callable[[], Qrels] | None = None,
                  render: Callable[[Evaluation], Any] | None = None) -> Iterator[RunOutcome]:
    """Each run of ``runs`` (paths or in-memory runs), in that order, as a ``RunOutcome``.

    ``stream``: True reads every run file in pieces of about ``chunk_bytes`` (the run must be grouped
    by query); None reads in pieces only the runs too large for the memory available
    (``should_stream``), and one of those that is not grouped by query is read whole after all, with
    a note; False never. Runs read whole are evaluated ``jobs`` at a time (default: the number of
    cores) on threads sharing the judgments: polars and numpy release the GIL. ``ahead``: the first
    run, already being read (``read_ahead``). ``cluster``: evaluate on Dask workers (see
    ``trec_rag_eval.cluster``); ``shards``: the files are pieces of one run (one outcome). ``id``:
    where each search result keeps its document id (``run_from_any_shape``). ``qrels_from``: how a cluster's
    workers read ``qrels`` themselves (``qrels_loader``); without it they are sent the table.
    Outcomes come as they are ready, in run order, so a caller can write each before the next is done.
    ``render``: called with each evaluation where it was made (its thread, or a cluster's worker, which
    sends back only what it returns: ``RunOutcome.rendered``, the evaluation being released there).
    """
    mapping = doc_id_map(doc_map)
    # a run in memory is named by its label when the caller gave one (a mapping's key), else "run"
    tags = [None if labels is None or isinstance(run, (str, os.PathLike)) else str(label)
            for run, label in zip(runs, labels if labels is not None else runs, strict=True)]
    labels = [os.fspath(run) if isinstance(run, (str, os.PathLike)) else (
        str(labels[index]) if labels is not None else "run" if len(runs) == 1 else f"run {index + 1}")
        for index, run in enumerate(runs)]
    if stream and mapping is not None:
        raise UsageError("doc_map reads each run whole: not with stream=True",
                         {"doc_map": "doc_map", "stream=True": "stream"})
    if stream and (cluster is not None or shards):
        raise UsageError("stream=True reads one run in pieces on this machine: not with cluster= or shards=True",
                         {"stream=True": "stream", "cluster=": "cluster", "shards=True": "shards"})
    if stream and run_format in FORMATS and FORMATS[run_format].whole:
        raise UsageError("stream=True reads TREC runs; JSON results are read whole", {"stream=True": "stream"})
    if shards and mapping is not None:
        raise UsageError("doc_map reads each run whole: not with shards=True",
                         {"doc_map": "doc_map", "shards=True": "shards"})
    if id is not None and shards:
        raise UsageError("id= reads results in memory or JSON results: not with shards=True", {"shards=True": "shards"})
    # with id=, a cluster is sent the runs read here (its workers read run files without it)
    in_memory = [_in_memory(run, qrels, tag, id, read_files=id is not None and cluster is not None)
                 for run, tag in zip(runs, tags, strict=True)]
    if cluster is not None or shards:
        for outcome in evaluate_spread(qrels, runs, labels, in_memory, measures, settings, run_format, mapping,
                                        cluster, shards, task_progress, qrels_from, render):
            yield outcome.render_with(render)  # one run split over the workers: its parts are combined here
        return
    yield from _evaluate_here(qrels, runs, labels, [tag is not None for tag in tags], in_memory, measures, settings,
                              run_format, mapping, stream, chunk_bytes, jobs, progress, ahead, id, render)


def _in_memory(run: Any, qrels: Qrels, tag: str | None, id: IdLocator | None, read_files: bool = False
               ) -> Callable[[], Run] | None:
    """How to make the ``Run`` of a run given in memory (``run_from_any_shape``, named by its caller's label ``tag``
    when there is one), for the thread or task that evaluates it; None for a run file, unless
    ``read_files`` (then it is read here, whole)."""
    if isinstance(run, (str, os.PathLike)) and not read_files:
        return None
    if tag is None:
        return lambda: run_from_any_shape(run, qrels, id=id)
    return lambda: run_from_any_shape(run, qrels, name=f"run {tag!r}", run_tag=tag, id=id)


def _evaluate_here(qrels: Qrels, runs: Sequence[Any], labels: list[str], named: list[bool],
                   in_memory: list[Callable[[], Run] | None],
                   measures: list[Measure],
                   settings: Settings, run_format: str, mapping: DocIdMap | None, stream: bool | None,
                   chunk_bytes: int, jobs: int | None, progress: Progress | None,
                   ahead: RunReader | None, id: IdLocator | None,
                   render: Callable[[Evaluation], Any] | None = None) -> Iterator[RunOutcome]:
    """``evaluate_runs`` on this machine: threads for runs read whole, one at a time in pieces. A run
    is evaluated (and rendered, with ``render``) at most ``AHEAD_PER_THREAD`` runs per thread ahead of
    the one its caller waits for, so what is held for the caller is bounded whatever the number of runs."""
    paths = [os.fspath(run) if isinstance(run, (str, os.PathLike)) else None for run in runs]
    if ahead is not None and (not paths or paths[0] != ahead.path):
        ahead = None
    # a run already being read ahead is read whole: read_ahead asked should_stream before starting it
    streamed = [path is not None and not (index == 0 and ahead is not None) and mapping is None and id is None
                and stream is not False and (bool(stream) or large_runs.should_stream(path, run_format))
                for index, path in enumerate(paths)]

    def one(index: int) -> RunOutcome:
        return evaluate_one(index).render_with(render)

    def evaluate_one(index: int) -> RunOutcome:
        label, path = labels[index], paths[index]
        try:
            make = in_memory[index]
            if make is not None:
                run, notes = map_chunks(make(), mapping, qrels)
                from trec_rag_eval.evaluation.evaluate import evaluate_tables

                evaluation = evaluate_tables(qrels, run, measures, settings)
                # a run in memory that its caller did not name is said by its source ("run (dict)")
                return RunOutcome(label if named[index] else run.source, evaluation,
                                  notes + query_set_warnings(evaluation))
            assert path is not None  # not in memory: a run file
            notes = []
            if streamed[index]:
                from trec_rag_eval.io.trec import RunNotGroupedError

                try:
                    evaluation = large_runs.evaluate_in_pieces(qrels, path, measures, settings, chunk_bytes, progress)
                    return RunOutcome(label, evaluation, query_set_warnings(evaluation))
                except RunNotGroupedError:
                    if stream:  # asked for explicitly: the error says how to sort the file
                        raise
                    notes.append(warning("not grouped by query, so read whole instead of in pieces"))
            read = None
            if index == 0 and ahead is not None:
                # the evaluation's modules (~12 ms of imports) load while the run is still being parsed,
                # not after, when the ranking waits for them
                import trec_rag_eval.evaluation.evaluate  # noqa: F401

                read = ahead.result()
            evaluation, more = evaluate_run_file(qrels, path, measures, settings, run_format, mapping, read, id)
            return RunOutcome(label, evaluation, notes + more)
        except TrecRagEvalError as err:
            return RunOutcome(label, error=err)

    workers = min(len(runs), jobs or os.cpu_count() or 1) if len(runs) > 1 else 1
    if workers > 1 and not any(streamed):
        from collections import deque
        from concurrent.futures import Future, ThreadPoolExecutor, wait

        pool = ThreadPoolExecutor(max_workers=workers)
        futures: deque[Future[RunOutcome]] = deque()
        submitted = 0
        try:
            for _ in range(len(runs)):  # in run order, each as soon as it and those before it are done
                while submitted < len(runs) and len(futures) < AHEAD_PER_THREAD * workers:
                    futures.append(pool.submit(carried(one), submitted))  # in this call's scope
                    submitted += 1
                future = futures.popleft()
                # waited for in short steps: a thread blocked on a lock does not see Ctrl-C, a loop does
                while wait([future], timeout=0.1).not_done:
                    pass
                yield future.result()
        except BaseException:  # Ctrl-C, or the caller stopped reading: leave at once
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return
    for index in range(len(runs)):
        yield one(index)
