"""Qrels of several judgment groups (trec_eval's ``-R qrels_jg``) aligned with a ranking, one group at a time
(docs/trec_eval_conventions.md §11.1).

trec_eval's form_res_rels_jg: the run is ranked once (score descending, ties by doc_id descending, cut at
-M), and each judgment group of a query judges that ranking as if its judgments were the only qrels: a
document the group does not judge is "not in the pool" (-1) for it, one it judges negative "not judged"
(-2), and -J removes, for each group, the documents that group does not judge (>= 0). The result is
``RankedQueries`` whose queries are the (query, group) pairs, in query order then byte order of the group's
name, on which every measure of one judgment per document is computed as usual.

The run is ranked by ``core.ranking.rank`` against ``number_group_documents``: qrels whose relevance is each
judged document's number, so every ranked row knows its document.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trec_rag_eval.core.column_operations import offsets_of, query_offsets
from trec_rag_eval.core.matching import NOT_IN_POOL, UNJUDGED
from trec_rag_eval.core.ranking import RankedQueries, only_judged
from trec_rag_eval.tables import Qrels, byte_key, column_list


@dataclass(frozen=True)
class GroupedDocuments:
    """The judgments of grouped qrels with their documents numbered: ``qrels`` holds each distinct (query_id,
    doc_id) with its number as relevance; ``query_ids``, ``groups``, ``docs`` and ``relevance`` are the
    judgments (one per row of the qrels), ``docs`` as numbers."""

    qrels: Qrels
    query_ids: list[str]
    groups: list[str]
    docs: np.ndarray
    relevance: np.ndarray


def number_group_documents(qrels: Qrels) -> GroupedDocuments:
    """The documents of ``qrels`` (their iteration column naming the groups), numbered."""
    query_ids, groups = column_list(qrels, "query_id"), column_list(qrels, "iteration")
    doc_ids, relevance = column_list(qrels, "doc_id"), np.asarray(column_list(qrels, "relevance"), dtype=np.int64)
    number: dict[tuple[str, str], int] = {}
    docs = np.array([number.setdefault(pair, len(number)) for pair in zip(query_ids, doc_ids, strict=True)],
                    dtype=np.int64)
    pairs = list(number)
    numbered = Qrels({"query_id": [q for q, _ in pairs], "iteration": ["0"] * len(pairs),
                      "doc_id": [d for _, d in pairs], "relevance": np.arange(len(pairs), dtype=np.int64)},
                     qrels.source, qrels.topics, qrels.unjudged, checked=True)
    return GroupedDocuments(numbered, query_ids, groups, docs, relevance)


@dataclass(frozen=True)
class GroupView:
    """The (query, group) pairs of the evaluated queries as queries of their own (``ranked``), and each one's
    query (``group_query``, an index into the evaluation's queries)."""

    ranked: RankedQueries
    group_query: np.ndarray
    num_queries: int


def group_view(documents: GroupedDocuments, ranked: RankedQueries, judged_only: bool) -> GroupView:
    """Each group of each query of ``ranked`` (the run ranked against ``documents.qrels``) judging its ranking."""
    index_of = {q: i for i, q in enumerate(ranked.query_ids)}
    row_query = np.array([index_of.get(q, -1) for q in documents.query_ids], dtype=np.int64)
    keep = np.flatnonzero(row_query >= 0)
    names = sorted({(int(row_query[i]), documents.groups[i]) for i in keep.tolist()},
                   key=lambda item: (item[0], byte_key(item[1])))
    group_of = {name: g for g, name in enumerate(names)}
    row_group = np.array([group_of[(int(row_query[i]), documents.groups[i])] for i in keep.tolist()], dtype=np.int64)
    group_query = np.array([q for q, _ in names], dtype=np.int64)
    num_groups, num_docs = len(names), int(documents.docs.max()) + 1 if len(documents.docs) else 1

    # every ranked row of a query, once for each of its groups (group after group)
    counts = np.diff(ranked.offsets)
    lengths = counts[group_query]
    firsts = np.repeat(ranked.offsets[group_query] - offsets_of(lengths)[:-1], lengths)
    rows = firsts + np.arange(int(lengths.sum()))
    doc = np.asarray(ranked.rel, dtype=np.int64)[rows]
    pseudo = np.repeat(np.arange(num_groups), lengths)
    # each row's judgment in its group: the group's value, UNJUDGED below 0, NOT_IN_POOL when it has none
    keys = row_group * num_docs + documents.docs[keep]
    order = np.argsort(keys, kind="stable")
    sorted_keys, values = keys[order], documents.relevance[keep][order]
    wanted = pseudo * num_docs + doc
    at = np.minimum(np.searchsorted(sorted_keys, wanted), max(len(sorted_keys) - 1, 0))
    found = (doc >= 0) & (sorted_keys[at] == wanted) if len(sorted_keys) else np.zeros(len(doc), dtype=bool)
    rel = np.full(len(doc), NOT_IN_POOL, dtype=np.int64)
    rel[found] = np.where(values[at[found]] >= 0, values[at[found]], UNJUDGED)
    # the ideal ranking of each group: its judgments >= 0, best first
    judged = values >= 0
    judged_group, judged_value = row_group[order][judged], values[judged]
    by_value = np.lexsort((-judged_value, judged_group))
    judged_offsets = query_offsets(judged_group, num_groups)
    view = RankedQueries(
        query_ids=[f"{ranked.query_ids[q]} {name}" for q, name in names],
        offsets=offsets_of(lengths), rel=rel,
        judged_offsets=judged_offsets, judged=judged_value[by_value],
        missing=ranked.missing[group_query], run_tag=ranked.run_tag)
    return GroupView(only_judged(view) if judged_only else view, group_query, ranked.num_queries)

