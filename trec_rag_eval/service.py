"""The one evaluation service: every entry point evaluates through here.

The facade (``trec_rag_eval.api``) calls it for Python callers; each command of the command line
calls the facade. Whatever the path, the same steps run in the same order, so the same data gives
the same numbers and the same notes:

1. ``read_judgments``: the qrels in any shape (a path in any format, with its topics; a table, a
   dict, a DataFrame), and when ``judge`` left its sidecar, the judgments asked for (human, LLM, both).
2. ``evaluate_runs``: each run, in the order given, as a ``RunOutcome`` (its evaluation and notes,
   or the error that stopped it: a run with bad input fails alone, on every path). A run is a path
   (read where it lies, in pieces when it is too large for the memory, the first one read ahead on a
   background thread while the judgments are read), or any in-memory shape (``run_from_any_shape``). Chunk ids
   are mapped (``doc_map``) and queries missing from a run noted the same way for both. With
   ``cluster``, the runs go to Dask workers (``cluster``); with ``shards``, the files are pieces of
   one run.

Notes are values (``notes.Note``): the facade warns Python callers with them, the command line
prints them with its flags.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from trec_rag_eval.call_scope import carried, per_call
from trec_rag_eval.errors import InputFormatError, TrecRagEvalError, UsageError
from trec_rag_eval.evaluation.run_notes import query_set_warnings
from trec_rag_eval.io.formats import FORMATS
from trec_rag_eval.notes import Note, note, warning
from trec_rag_eval.run_outcome import RunOutcome, evaluate_run_file, map_chunks

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.io.chunks import DocIdMap
    from trec_rag_eval.io.id_paths import IdLocator
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.tables import Qrels, Run

STREAM_MEMORY_SHARE = 4
"""A run is read in pieces when it would take more than 1/STREAM_MEMORY_SHARE of the available memory."""
AHEAD_PER_THREAD = 2
"""Runs evaluated on this machine at most this many per thread ahead of the one the caller waits for."""
GZIP_RATIO = 8
"""A gzip run counts as this many times its size (a typical ratio for runs)."""

Progress = Callable[[str], AbstractContextManager[Callable[[int], None]]]
"""Given a run's path, a context in which to report the bytes read so far (for runs read in pieces)."""
TaskProgress = Callable[[int, int], None]
"""Called with (tasks done, tasks in all) as a cluster finishes its tasks."""


# -- judgments -------------------------------------------------------------------------------------

@per_call
def read_judgments(qrels: Any, *, format: str | None = None, topics: str | os.PathLike[str] | None = None,
                   judgments: str | None = None) -> tuple[Qrels, list[Note]]:
    """The judgments ``qrels`` (a path in any format the library reads, or any in-memory shape) and
    the notes about them. ``topics``: a TREC topics file (its queries with no judgment are evaluated
    too); ``judgments``: which judgments of a qrels file written by ``judge`` count (``"human"``,
    ``"llm"`` or ``"both"``, the default when its sidecar is there)."""
    from trec_rag_eval.io.any_format import load_qrels
    from trec_rag_eval.io.any_input import as_qrels

    is_path = isinstance(qrels, (str, os.PathLike))
    if is_path:
        table = load_qrels(qrels, format, topics=topics)
    else:
        if topics is not None or format not in (None, "auto"):
            raise UsageError("topics= and format= describe a qrels file: give the qrels as its path",
                             {"topics=": "topics", "format=": "qrels_format"})
        table = as_qrels(qrels)
    if judgments is None and not is_path:
        return table, []
    if not is_path:
        raise UsageError("judgments= chooses among the judgments of a qrels file written by judge: give the qrels "
                         f"as that file's path (got {type(qrels).__name__})")
    from trec_rag_eval.io.judgments import choose_judgments

    table, said = choose_judgments(qrels, table, judgments)
    return table, [] if said is None else [note(said)]


def qrels_loader(qrels: Any, *, format: str | None = None, topics: str | os.PathLike[str] | None = None,
                 judgments: str | None = None) -> Callable[[], Qrels] | None:
    """How a cluster's worker reads the same judgments as ``read_judgments`` from their file (a
    picklable call), when ``qrels`` is the path of a file or folder, and ``topics`` one too; None
    otherwise (qrels in memory, standard input or a pipe, or named by an ir_datasets id: read here and sent)."""
    import functools

    from trec_rag_eval.io.location import exists
    from trec_rag_eval.io.text import read_once

    paths = [qrels] + ([topics] if topics is not None else [])
    # a pipe is read here, once: a worker could not read it again
    if not all(isinstance(p, (str, os.PathLike)) and exists(os.fspath(p)) and not read_once(os.fspath(p))
               for p in paths):
        return None
    return functools.partial(_judgments_table, os.fspath(qrels), format, None if topics is None else os.fspath(topics),
                             judgments)


def _judgments_table(path: str, format: str | None, topics: str | None, judgments: str | None) -> Qrels:
    """On a worker: the judgments of ``qrels_loader``."""
    table, _ = read_judgments(path, format=format, topics=topics, judgments=judgments)
    return table


def has_llm_judgments(notes: Sequence[Note]) -> bool:
    """Whether the judgments read by ``read_judgments`` include an LLM's (the judge sidecar was used)."""
    return any(n.message.startswith("judgments: ") and not n.message.startswith("judgments: human")
               for n in notes)


# -- runs --------------------------------------------------------------------------------------------

def doc_id_map(value: Any = None, *, pattern: str | None = None, map_file: str | os.PathLike[str] | None = None
               ) -> DocIdMap | None:
    """The chunk -> document map asked for: ``value`` (anything ``io.chunks.as_doc_map`` takes: a
    regular expression, a dict, a callable, a map file as ``os.PathLike``), or a ``pattern``, or a
    ``map_file``; at most one of them. None when none is given."""
    given = [v for v in (value, pattern, map_file) if v is not None]
    if len(given) > 1:
        raise UsageError("give doc_id_pattern or doc_map, not both", {"doc_id_pattern": "doc_id_pattern",
                                                                      "doc_map": "doc_map"})
    if not given:
        return None
    from trec_rag_eval.io.chunks import DocIdMap, as_doc_map

    if pattern is not None:
        return DocIdMap.from_pattern(pattern)
    if map_file is not None:
        return DocIdMap.from_file(map_file)
    return as_doc_map(value)


def run_from_any_shape(value: Any, qrels: Qrels | None = None, name: str = "run", run_tag: str = "run",
                       id: IdLocator | None = None) -> Run:
    """A run in any shape the library takes (``io.any_input.as_run``), plus what a search function returns,
    per query: ``{query_id: results}`` where results are ``{"id", "score"}`` dicts, ``(id, score)``
    pairs or LangChain / LlamaIndex objects, best first (read as the engine harness reads them:
    ``engine.harness.ranked_results``). A list is ranked in its order, whatever its scores
    (``io.ranked_lists``); scores that rise along it are warned about, as from a file. ``id``: where
    each result keeps its document id (a key path such as ``"metadata.source"`` or a callable,
    ``io.id_paths``), in memory and in a JSON results file."""
    from trec_rag_eval.io import any_input
    from trec_rag_eval.io.id_paths import check_locator
    from trec_rag_eval.tables.shapes import is_columns

    id = check_locator(id)
    if id is not None and isinstance(value, (str, os.PathLike)):
        return any_input.as_run(value, qrels, name, run_tag, id=id)
    if isinstance(value, Mapping) and not is_columns(value, "score"):
        table = _run_from_mapping(value, qrels, name, run_tag, id)
        empty = _empty_queries(value, qrels)
        if not empty:
            return table
        import dataclasses

        return dataclasses.replace(table, empty_queries=empty)
    return any_input.as_run(value, qrels, name, run_tag)


def _empty_queries(value: Mapping[Any, Any], qrels: Qrels | None) -> frozenset[str]:
    """The queries of ``{query: results}`` answered with an empty list (or dict): a search that found
    nothing. Keys are query ids, or the dataset's query texts (``Qrels.topics``)."""
    empty = [key for key, results in value.items() if isinstance(results, (list, tuple, dict)) and not results]
    if not empty:
        return frozenset()
    by_text = {text: query_id for query_id, text in ((qrels.topics if qrels is not None else None) or {}).items()}
    return frozenset(by_text.get(key, str(key)) if isinstance(key, str) else str(key) for key in empty)


def _run_from_mapping(value: Mapping[Any, Any], qrels: Qrels | None, name: str, run_tag: str,
                      id: IdLocator | None) -> Run:
    from trec_rag_eval.io import any_input

    if _holds_any_results(value):
        from trec_rag_eval.engine.harness import ranked_results

        scored: dict[Any, dict[str, float]] = {}
        disordered: list[str] = []
        for query_id, results in value.items():
            doc_ids, scores, rising = ranked_results(results, depth=max(len(results), 1), id=id)
            scored[query_id] = dict(zip(doc_ids, scores, strict=True))
            if rising:
                disordered.append(str(query_id))
        table = any_input.as_run(scored, qrels, name, run_tag)
        if disordered:
            from trec_rag_eval.errors import warn
            from trec_rag_eval.io.ranked_lists import order_warning

            warn(f"{table.source}: {order_warning(disordered)}")
        return table
    return any_input.as_run(value, qrels, name, run_tag)


def _holds_any_results(value: Mapping[Any, Any]) -> bool:
    """Whether some query's value is a list of result items rather than of doc ids (or a dict of scores),
    told by the kinds of the values and of the items, not by a Python step per item."""
    if not any(issubclass(kind, (list, tuple)) for kind in set(map(type, value.values()))):
        return False
    return any(isinstance(results, (list, tuple)) and not all(
        issubclass(kind, (str, int)) for kind in set(map(type, results))) for results in value.values())


def read_whole_run(value: Any, qrels: Qrels, *, name: str = "run", run_tag: str = "run", run_format: str = "auto",
                   doc_map: Any = None, id: IdLocator | None = None) -> tuple[Run, list[Note]]:
    """One run, whole, in any shape (a path in any format, or in memory), its chunk ids mapped to
    documents when ``doc_map`` asks, and the notes about it: the run every command that needs a run
    in memory (compare, crosscheck, validate) evaluates. ``name`` and ``run_tag``: those of a run in
    memory (a file's come from the file); ``id``: where each result keeps its document id (``run_from_any_shape``)."""
    from trec_rag_eval.io.any_format import load_run
    from trec_rag_eval.io.id_paths import check_locator

    if isinstance(value, (str, os.PathLike)):
        run = load_run(value, run_format, qrels, check_locator(id))
    else:
        run = run_from_any_shape(value, qrels, name=name, run_tag=run_tag, id=id)
    return map_chunks(run, doc_id_map(doc_map), qrels)


def expand_run_paths(paths: Sequence[str | os.PathLike[str]], workers_read: bool = False) -> list[str]:
    """Run files as given; a folder stands for the files in it, in name order, except a folder of
    Parquet files, which is one run in partitions. A folder given by URL is listed through fsspec
    (``io.location``): its files are named by the folder's URL, and none is opened here.
    ``workers_read``: a cluster's workers read the runs, with their own credentials; a URL this machine
    lacks the credentials to ask about is then taken for a run file, left to them."""
    from trec_rag_eval.io.location import is_dir, is_dir_here, join, list_dir
    from trec_rag_eval.io.parquet import is_parquet

    out: list[str] = []
    for given in paths:
        path = os.fspath(given)
        if (is_dir_here(path) if workers_read else is_dir(path)) and not is_parquet(path):
            try:
                entries = list_dir(path)
            except OSError as err:
                raise InputFormatError(path, None, f"cannot read the folder: {err.strerror or err}") from None
            found = sorted(join(path, name) for name, is_file in entries if not name.startswith(".") and is_file)
            if not found:
                raise InputFormatError(path, None, "no run file in this folder (sub-folders are not read)")
            out.extend(found)
        else:
            out.append(path)
    return out


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
        for outcome in _evaluate_spread(qrels, runs, labels, in_memory, measures, settings, run_format, mapping,
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
                and stream is not False and (bool(stream) or should_stream(path, run_format))
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
                    evaluation = _evaluate_in_pieces(qrels, path, measures, settings, chunk_bytes, progress)
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


def _evaluate_in_pieces(qrels: Qrels, path: str, measures: list[Measure], settings: Settings, chunk_bytes: int,
                        progress: Progress | None) -> Evaluation:
    from trec_rag_eval.evaluation.streaming import evaluate_pieces
    from trec_rag_eval.io.trec import iter_run_chunks

    if progress is None:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes), measures, settings)
    with progress(path) as advance:
        return evaluate_pieces(qrels, iter_run_chunks(path, chunk_bytes, advance), measures, settings)


def _evaluate_spread(qrels: Qrels, runs: Sequence[Any], labels: list[str], in_memory: list[Callable[[], Run] | None],
                     measures: list[Measure],
                     settings: Settings, run_format: str, mapping: DocIdMap | None, cluster: Any, shards: bool,
                     task_progress: TaskProgress | None, qrels_from: Callable[[], Qrels] | None = None,
                     render: Callable[[Evaluation], Any] | None = None) -> Iterator[RunOutcome]:
    """``evaluate_runs`` with ``cluster`` or ``shards``."""
    paths = [os.fspath(run) for run in runs if isinstance(run, (str, os.PathLike))]
    if any(make is not None for make in in_memory):  # each run in memory is split here, its buckets sent
        if shards:
            raise UsageError("shards=True takes run files: give the pieces as paths", {"shards=True": "shards"})
        from trec_rag_eval.cluster import evaluate_on_cluster

        for make, label in zip(in_memory, labels, strict=True):
            try:
                assert make is not None
                table, notes = map_chunks(make(), mapping, qrels)
                evaluation = evaluate_on_cluster(qrels, table, measures, settings, cluster=cluster)
                yield RunOutcome(label, evaluation, notes + query_set_warnings(evaluation))
            except TrecRagEvalError as err:
                yield RunOutcome(label, error=err)
        return
    # shards are one run; so is a lone run file on a cluster, split by query over the workers, unless its chunk
    # ids are mapped or it holds JSON results: those need the whole run (one task)
    if shards or (len(paths) == 1 and mapping is None and cluster is not None
                  and not _read_whole(paths[0], run_format)):
        try:
            if cluster is None:
                from trec_rag_eval.evaluation.evaluate import evaluate_tables
                from trec_rag_eval.io.any_format import load_run_shards

                evaluation = evaluate_tables(qrels, load_run_shards(paths, run_format), measures, settings)
            else:
                from trec_rag_eval.cluster import evaluate_partitioned

                evaluation = evaluate_partitioned(qrels, paths if shards else paths[0], measures, settings,
                                                  cluster=cluster, run_format=run_format, progress=task_progress,
                                                  qrels_from=qrels_from)
        except TrecRagEvalError as err:
            yield RunOutcome(labels[0], error=err)
            return
        yield RunOutcome(labels[0], evaluation, query_set_warnings(evaluation))
        return
    from trec_rag_eval.cluster import iter_run_tasks

    for outcome, label in zip(iter_run_tasks(qrels, paths, measures, settings, cluster=cluster,
                                                 run_format=run_format, doc_map=mapping, progress=task_progress,
                                                 qrels_from=qrels_from, render=render),
                              labels, strict=True):
        outcome.label = label
        yield outcome


def _read_whole(path: str, run_format: str) -> bool:
    """Whether the run file at ``path`` is read whole (``io.formats.Format.whole``: JSON results); a
    missing file is said here."""
    from trec_rag_eval.io.formats import is_whole
    from trec_rag_eval.io.location import exists
    from trec_rag_eval.io.text import STANDARD_INPUT

    if path != STANDARD_INPUT and not exists(path):
        raise InputFormatError(path, None, "no such file")
    return is_whole(run_format, path)


# -- progress -------------------------------------------------------------------------------------------

def byte_progress() -> Progress:
    """How a run read in pieces shows its progress: the library's tqdm bar over the file's bytes (a
    bar in a terminal, a widget in a notebook, an update every few seconds in a log file)."""
    import sys

    from trec_rag_eval.io.location import basename
    from trec_rag_eval.io.location import size as size_of
    from trec_rag_eval.progress import bar

    @contextmanager
    def display(path: str) -> Iterator[Callable[[int], None]]:
        size = max(size_of(path), 1)
        with bar(size, f"reading {basename(path)}", unit="B", file=sys.stderr, scale=True) as shown:

            def advance(done: int) -> None:
                shown.update(min(done, size) - shown.n)

            yield advance

    return display


@contextmanager
def task_progress() -> Iterator[TaskProgress]:
    """How work on a cluster shows its progress: the library's tqdm bar over the tasks, closed when
    the work ends, even on an error (whose line then starts a line of its own)."""
    import sys

    from trec_rag_eval.progress import bar

    shown: dict[str, Any] = {}

    def report(done: int, total: int) -> None:
        if "bar" not in shown or shown["bar"].total != total:  # a second stage counts its own tasks
            if "bar" in shown:
                shown["bar"].close()
            shown["bar"] = bar(total, "cluster", unit="task", file=sys.stderr)
        shown["bar"].update(done - shown["bar"].n)

    try:
        yield report
    finally:
        if "bar" in shown:
            shown.pop("bar").close()


# -- reading large runs ----------------------------------------------------------------------------------

def should_stream(path: str, run_format: str = "auto") -> bool:
    """Whether the run at ``path`` is better read in pieces: a TREC run larger than a quarter of the
    memory available now (a gzip file counted at eight times its size). JSON results are read whole."""
    from trec_rag_eval.io.location import is_file
    from trec_rag_eval.io.location import size as size_of
    from trec_rag_eval.io.text import is_gzip

    if (run_format in FORMATS and FORMATS[run_format].whole) or not is_file(path):
        return False
    available = available_memory()
    if available is None:
        return False
    size = size_of(path) * (GZIP_RATIO if is_gzip(path) else 1)
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


class RunReader:
    """A TREC run file read on a background thread (``read_ahead``): the result, or the error, of
    ``io.any_format.load_run_report`` when asked for."""

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
        from trec_rag_eval.io.any_format import load_run_report

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
    from trec_rag_eval.io.any_format import detect_format
    from trec_rag_eval.io.location import is_file, size
    from trec_rag_eval.io.trec import SMALL_FILE_BYTES

    if not paths or stream:
        return None
    path = os.fspath(paths[0])
    try:
        if not is_file(path) or size(path) < SMALL_FILE_BYTES:
            return None
        fmt = detect_format(path) if run_format == "auto" else run_format
    except (OSError, TrecRagEvalError):  # said by the reader in its turn, after the qrels' errors
        return None
    if fmt != "trec" or should_stream(path, fmt):
        return None
    return RunReader(path, fmt)
