"""What is said when the judgments and a run do not meet: no query to evaluate (an error), or no query id shared (a
warning, every query scoring 0), for the evaluation of a run read whole and of one read in pieces alike."""

from __future__ import annotations

from trec_rag_eval.errors import TrecRagEvalWarning, UsageError, warn
from trec_rag_eval.tables import Qrels, Run, query_id_set


def no_query_error(qrels: Qrels, run: Run) -> UsageError:
    """Nothing to evaluate, naming the files: the qrels hold no judgment, or qrels and run share no query."""
    if not query_id_set(qrels):
        return UsageError(f"no query to evaluate: {qrels.source} holds no judgment")
    return UsageError(f"no query to evaluate: {qrels.source} and {run.source} share no query id")


def warn_no_common_query(qrels_queries: list[str], run_queries: list[str], source: str) -> None:
    """The warning for a run none of whose queries is in the qrels (every query scores 0)."""
    warn(
        f"{source}: the qrels and the run share no query id, so every query scores 0 "
        f"(qrels: {_sample(qrels_queries)}; run: {_sample(run_queries)}): do both name the queries the same way?",
        TrecRagEvalWarning,
    )


def _sample(ids: list[str], limit: int = 5) -> str:
    return ", ".join(ids[:limit]) + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")
