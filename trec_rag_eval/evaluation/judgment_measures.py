"""Evaluating against judgment groups and preferences (``tables.judgment_kinds``): the run ranked against them
(``align_kind``).

Each kind of judgments feeds its own measures, as in trec_eval (whose other measures fail on them; which fit which
is ``measures.requests.check_judgments``). The run is ranked once against the judged documents, numbered
(``core.preference_ranking``, ``core.group_ranking``), by the ranking of ``core.ranking`` (ties by doc_id ascending
for preferences, as trec_eval breaks them there).
"""

from __future__ import annotations

from typing import Any

from trec_rag_eval.core.ranking import RankedQueries, rank
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.errors import DuplicateDocumentError
from trec_rag_eval.tables import Qrels, Run, duplicate_error


def align_kind(judgments: Any, run: Run, settings: Settings) -> tuple[RankedQueries, Qrels, dict[str, Any]]:
    """``run`` ranked against judgment groups or preferences: the ranking (its queries, the judged documents
    numbered as its relevance), those numbered judgments, and the judgments aligned with it (``views``, by the
    name their kernels read them by)."""
    kind = judgments.kind
    if kind == "preferences":
        from trec_rag_eval.core.preference_ranking import number_preference_documents, preference_view

        documents: Any = number_preference_documents(judgments)
    else:
        from trec_rag_eval.core.group_ranking import group_view, number_group_documents

        documents = number_group_documents(judgments)
    try:
        ranked = rank(documents.qrels, run, max_retrieved=settings.max_retrieved, judged_only=False,
                      queries=settings.queries, float32_scores=settings.trec_eval_9,
                      ids_descending=kind != "preferences")
    except DuplicateDocumentError as err:
        raise duplicate_error(run, err.query_id, err.doc_id) from None
    if kind == "preferences":
        return ranked, documents.qrels, {"preferences": preference_view(judgments, documents, ranked)}
    return ranked, documents.qrels, {"groups": group_view(documents, ranked, settings.judged_only)}
