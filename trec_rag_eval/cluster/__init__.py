"""Evaluate on a Dask cluster: many runs at once, or one run too large for one machine.

``cluster`` is a ``dask.distributed.Client`` (used as it is and left open), a scheduler address
(``tcp://10.0.0.5:8786``) or ``local:N`` (a LocalCluster of N worker processes on this machine's
loopback, started and stopped here). dask and distributed are the ``[dask]`` extra, imported only
here and only when asked.

Workers read the runs themselves, where they lie: every run path must be readable by every worker
under the same name (a shared or network file system, object storage mounted alike, or one machine).
The qrels given by their path are read by a task on a worker (which Dask can compute again, so a lost
worker costs only its own work); qrels given in memory are sent to every worker once.

* ``iter_run_tasks``: one task per run (read, evaluate, notes: ``run_outcome.evaluate_run``, the
  step the single machine takes), each outcome given in run order as soon as it is done. A run
  with bad input fails alone, its error naming the file and the line; the others still report.
  Dask re-runs the tasks of a worker lost mid-way on the workers left (up to its
  ``distributed.scheduler.allowed-failures``).
* ``evaluate_partitioned``: one run given as Parquet partitions or TREC text shards (or an
  in-memory ``Run``). Each piece (a file, a slice of rows of a large Parquet file, or a byte range
  of a large TREC text file, cut at line ends) is read by a task, and its rows go by query id to
  buckets: while the (piece, bucket) pairs are few (``PAIRS_LIMIT``), split where they are read and
  handed on by a task per pair, the cheapest way in processor time; beyond, by Dask's peer-to-peer
  shuffle (``dask.dataframe``), worker to worker, with a number of tasks linear in the pieces and
  buckets (7 per piece and 2 per bucket, measured), where a task per pair would grow with the
  square of the data. Each bucket, holding whole queries, is evaluated by the kernels of the
  in-memory path (``evaluation.streaming.evaluate_piece``), and the per-query values are
  aggregated here by ``combine_pieces``, the streaming path's aggregation: the same numbers as the
  in-memory path, byte for byte in trec_eval's format.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trec_rag_eval.cluster.connection import ClusterError as ClusterError
from trec_rag_eval.cluster.connection import connect as connect
from trec_rag_eval.cluster.connection import local_workers as local_workers
from trec_rag_eval.cluster.partitions import evaluate_partitioned
from trec_rag_eval.cluster.run_tasks import Progress as Progress
from trec_rag_eval.cluster.run_tasks import evaluate_run_tasks, refuse_pipes, run_kind
from trec_rag_eval.cluster.run_tasks import iter_run_tasks as iter_run_tasks
from trec_rag_eval.errors import UsageError

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.tables import Qrels

__all__ = ["ClusterError", "Progress", "connect", "evaluate_on_cluster", "evaluate_partitioned", "evaluate_run_tasks",
           "iter_run_tasks", "local_workers"]


def evaluate_on_cluster(qrels: Qrels, run: Any, measures: list[Measure], settings: Settings, *, cluster: Any,
                        run_format: str = "auto", doc_map: Any = None) -> Evaluation:
    """One run evaluated on the cluster (``trec_rag_eval.evaluate(..., cluster=...)``).

    ``run``: a path (a Parquet file or directory, or a TREC file: split by query id over the
    workers; JSON results, or any run with ``doc_map``: one task), a list of paths (shards of one
    run) or a ``Run`` in memory (split here, each bucket sent once). Bad input raises its error.
    """
    from trec_rag_eval.tables import Run

    if isinstance(run, (str, os.PathLike)):
        refuse_pipes([os.fspath(run)])
    if isinstance(run, (str, os.PathLike)) and (doc_map is not None or run_kind(os.fspath(run), run_format) == "json"):
        [outcome] = evaluate_run_tasks(qrels, [os.fspath(run)], measures, settings, cluster=cluster,
                                       run_format=run_format, doc_map=doc_map)
        if outcome.error is not None:
            raise outcome.error
        for said in outcome.notes:
            said.warn()
        assert outcome.evaluation is not None
        return outcome.evaluation
    collapse = None
    if doc_map is not None:
        if not isinstance(run, Run):
            raise UsageError("doc_map reads each run whole: not with a run in shards (a list of paths)")
        from trec_rag_eval.io.chunk_collapse import collapse_run

        run, collapse = collapse_run(run, doc_map, qrels)  # in memory already: mapped here, then split
    if not isinstance(run, (str, os.PathLike, Run)) and not (
            isinstance(run, Sequence) and all(isinstance(p, (str, os.PathLike)) for p in run)):
        raise UsageError(f"run must be a path, a list of paths (shards) or a Run, got {type(run).__name__}")
    evaluation = evaluate_partitioned(qrels, run, measures, settings, cluster=cluster, run_format=run_format)
    evaluation.collapse = collapse
    return evaluation
