"""Runs evaluated spread out: over the workers of a Dask cluster (``trec_rag_eval.cluster``), who read the judgments'
file themselves (``qrels_loader``), or a run given as pieces (``shards``), with a bar over the cluster's tasks
(``task_progress``)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import InputFormatError, TrecRagEvalError
from trec_rag_eval.run_outcome import RunOutcome, map_chunks
from trec_rag_eval.service.inputs import read_judgments

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.io.chunks import DocIdMap
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.tables import Qrels, Run

TaskProgress = Callable[[int, int], None]
"""Called with (tasks done, tasks in all) as a cluster finishes its tasks."""


def evaluate_spread(qrels: Qrels, runs: Sequence[Any], labels: list[str], in_memory: list[Callable[[], Run] | None],
                     measures: list[Measure],
                     settings: Settings, run_format: str, mapping: DocIdMap | None, cluster: Any, shards: bool,
                     task_progress: TaskProgress | None, qrels_from: Callable[[], Qrels] | None = None,
                     render: Callable[[Evaluation], Any] | None = None) -> Iterator[RunOutcome]:
    """``evaluate_runs`` with ``cluster`` or ``shards``."""
    paths = [os.fspath(run) for run in runs if isinstance(run, (str, os.PathLike))]
    if any(make is not None for make in in_memory):  # each run in memory is split here, its buckets sent
        from trec_rag_eval.cluster import evaluate_on_cluster

        for make, label in zip(in_memory, labels, strict=True):
            try:
                assert make is not None
                table, notes, collapse = map_chunks(make(), mapping, qrels)
                evaluation = evaluate_on_cluster(qrels, table, measures, settings, cluster=cluster)
                evaluation.collapse = collapse
                yield RunOutcome(label, evaluation, notes + evaluation.query_set_warnings())
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
                from trec_rag_eval.io.loading import load_run_shards

                evaluation = evaluate_tables(qrels, load_run_shards(paths, run_format), measures, settings)
            else:
                from trec_rag_eval.cluster import evaluate_partitioned

                evaluation = evaluate_partitioned(qrels, paths if shards else paths[0], measures, settings,
                                                  cluster=cluster, run_format=run_format, progress=task_progress,
                                                  qrels_from=qrels_from)
        except TrecRagEvalError as err:
            yield RunOutcome(labels[0], error=err)
            return
        yield RunOutcome(labels[0], evaluation, evaluation.query_set_warnings())
        return
    from trec_rag_eval.cluster import iter_run_tasks

    for outcome, label in zip(iter_run_tasks(qrels, paths, measures, settings, cluster=cluster,
                                                 run_format=run_format, doc_map=mapping, progress=task_progress,
                                                 qrels_from=qrels_from, render=render),
                              labels, strict=True):
        outcome.label = label
        yield outcome


def _read_whole(path: str, run_format: str) -> bool:
    """Whether the run file at ``path`` is read whole (``io.loading.Format.whole``: JSON results); a
    missing file is said here."""
    from trec_rag_eval.io.loading import is_whole
    from trec_rag_eval.io.sources import STANDARD_INPUT, exists

    if path != STANDARD_INPUT and not exists(path):
        raise InputFormatError(path, None, "no such file")
    return is_whole(run_format, path)

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


def qrels_loader(qrels: Any, *, format: str | None = None, topics: str | os.PathLike[str] | None = None,
                 judgments: str | None = None) -> Callable[[], Qrels] | None:
    """How a cluster's worker reads the same judgments as ``read_judgments`` from their file (a
    picklable call), when ``qrels`` is the path of a file or folder, and ``topics`` one too; None
    otherwise (qrels in memory, standard input or a pipe, or named by an ir_datasets id: read here and sent)."""
    import functools

    from trec_rag_eval.io.sources import exists, read_once

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
