"""Evaluating against judgment groups and preferences (``tables.judgment_kinds``), and which measures fit which.

Each kind of judgments feeds its own measures, as in trec_eval (whose other measures fail on them): relevance
judgments (qrels) the measures of one grade per document, judgment groups (``-R qrels_jg``) the ``*_avgjg``
measures, preferences (``-R prefs``, ``-R qrels_prefs``) the ``prefs_*`` ones; runid and num_q fit all.
The run is ranked once against the judged documents, numbered (``core.preference_ranking``,
``core.group_ranking``), by the ranking of ``core.ranking`` (ties by doc_id ascending for preferences, as trec_eval
breaks them there).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from trec_rag_eval.core.ranking import RankedQueries, rank
from trec_rag_eval.core.settings import Settings
from trec_rag_eval.errors import DuplicateDocumentError, UsageError
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.notes import Note, note
from trec_rag_eval.tables import Qrels, Run, duplicate_error

if TYPE_CHECKING:
    from trec_rag_eval.tables.judgment_kinds import Preferences

DEFAULT_SETS = {"preferences": "prefs", "groups": "qrels_jg"}
"""The measures evaluated when none are asked for, by kind: trec_eval's nicknames of their own sets."""

_WHAT = {
    "relevance": "relevance judgments (qrels: one grade per document)",
    "groups": "judgment groups (qrels whose iteration column names the group)",
    "preferences": "preference judgments",
}
_HOW = {
    "relevance": "ask for measures of one grade per document (map, P.10, nDCG@10, ...)",
    "groups": "ask for map_avgjg, P_avgjg or Rprec_mult_avgjg (qrels_jg)",
    "preferences": "ask for the prefs_* measures (all_prefs)",
}
_READ = {
    "relevance": "read the qrels as qrels (format='trec')",
    "groups": "read the qrels with format='qrels_jg'",
    "preferences": "read them with format='prefs' (query_id group subgroup doc_id level) or, from a qrels file, "
                   "format='qrels_prefs'",
}
FORMAT_PARAMETERS = {"format='trec'": "trec_format", "format='qrels_jg'": "qrels_jg_format",
                     "format='prefs'": "prefs_format", "format='qrels_prefs'": "qrels_prefs_format"}
"""How the messages name the formats, for the command line to say its -R instead."""


def check_judgments(judgments: Qrels | Preferences, measures: Sequence[Measure]) -> None:
    """Refuse a measure that does not score the kind of ``judgments`` at hand, saying what would."""
    kind = judgments.kind
    for measure in measures:
        reads = measure.spec.judgments
        if reads not in ("any", kind):
            source = getattr(judgments, "source", "the judgments")
            raise UsageError(f"{measure.asked or measure.trec_name} scores {_WHAT[reads]}, and {source} holds "
                             f"{_WHAT[kind]}: {_HOW[kind]}, or {_READ[reads]}", FORMAT_PARAMETERS)


def default_measure_set(judgments: Qrels | Preferences) -> str | None:
    """The measures to evaluate when none are asked for: None (the usual default) for relevance judgments."""
    return DEFAULT_SETS.get(judgments.kind)


def compared_measure_set(judgments: Qrels | Preferences) -> list[str] | None:
    """The measures ``compare`` compares when none are asked for: those of ``default_measure_set`` that score
    the kind itself and are averaged over queries (not runid, num_q, nor the preference counts); None for
    relevance judgments."""
    from trec_rag_eval.measures.registry import FAMILIES, NICKNAMES

    kind, nickname = judgments.kind, default_measure_set(judgments)
    return None if nickname is None else [name for name in NICKNAMES[nickname]
                                          if FAMILIES[name].judgments == kind and FAMILIES[name].aggregate == "mean"]


def judgment_notes(judgments: Qrels | Preferences, settings: Settings) -> list[Note]:
    """What the settings do not change for these judgments: the preference measures read levels, not relevance,
    and no preference document is dropped (trec_eval ignores -J and -l there)."""
    if judgments.kind != "preferences":
        return []
    unused = [text for text, given in (("judged_only=True", settings.judged_only),
                                      (f"relevance_level={settings.relevance_level}", settings.relevance_level != 1))
              if given]
    if not unused:
        return []
    return [note(f"{' and '.join(unused)} change{'s' if len(unused) == 1 else ''} nothing for preference judgments "
                 "(their levels order the documents; every retrieved document is ranked)",
                 parameters={"judged_only=True": "judged_only", f"relevance_level={settings.relevance_level}":
                             "relevance_level"})]


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
