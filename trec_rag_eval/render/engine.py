"""The text of an engine's evaluation (``trec-rag-eval search`` and ``str(EngineEvaluation)``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from trec_rag_eval.render.table import summary_table

if TYPE_CHECKING:
    from trec_rag_eval.engine.harness import EngineEvaluation


def latency_line(evaluation: EngineEvaluation) -> str:
    outcome = evaluation.outcome
    return (f"latency per query: p50 {outcome.latency_p50 * 1000:.2f} ms, "
            f"p95 {outcome.latency_p95 * 1000:.2f} ms ({len(outcome.latencies)} queries)")


def default_title(evaluation: EngineEvaluation) -> str:
    """``bm25 on dataset.json``: the run tag and the dataset's file name (or how it was given)."""
    return f"{evaluation.run.run_tag} on {os.path.basename(evaluation.qrels.source) or evaluation.qrels.source}"


def engine_report(evaluation: EngineEvaluation, title: str | None = None) -> str:
    """The measures table (titled), then the latency line, as ``search`` prints them."""
    table = summary_table(evaluation.result, title=default_title(evaluation) if title is None else title)
    return f"{table}\n{latency_line(evaluation)}\n"
