"""Preference judgments aligned with a ranking: each judged document's place, each group's preferences.

trec_eval's form_prefs_counts, in columns (docs/trec_eval_conventions.md §11.2). For one query:

1. The run is ranked by score descending, ties by doc_id **ascending** (the preference measures' own rule;
   every other measure breaks ties by doc_id descending), then cut at -M; a document listed twice among
   the documents kept is an error. -J and -l change nothing here.
2. Its judged documents (those of any preference line of the query) are numbered: the retrieved ones
   0, 1, ... in rank order (``judged_ret`` of them), the others after them in doc_id order (byte order).
   Document a is "retrieved above" b when its number is lower.
3. Each judgment group (a user's need) of the query holds preferences: within one subgroup, a document of a
   higher level is preferred to one of a lower level. A group of one subgroup is kept as its lines
   (``entries``): every pair of its lines at different levels is a preference, counted once per pair of
   lines (a line written twice counts twice). A group of several subgroups is made transitive: its
   preferences are the pairs of documents (``pairs``) that the closure of its subgroups' preferences
   orders, each once; a cycle is an error (trec_eval aborts). A document of such a group is relevant
   when its last level (subgroups in byte order, levels descending) is above 0, non-relevant at 0.

The run is ranked by ``core.ranking.rank`` against ``number_preference_documents``: qrels whose relevance is each
judged document's number, so every ranked row knows its document.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from trec_rag_eval.core.column_operations import offsets_of, query_offsets
from trec_rag_eval.core.ranking import RankedQueries
from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, byte_key
from trec_rag_eval.tables.judgment_kinds import Preferences


@dataclass(frozen=True)
class JudgedDocuments:
    """The distinct (query_id, doc_id) pairs of some preferences, numbered in byte order of the query id,
    then of the doc id; ``qrels`` holds each pair with its number as relevance (iteration ``"0"``)."""

    query_ids: list[str]
    doc_ids: list[str]
    number: dict[tuple[str, str], int]
    qrels: Qrels


def number_preference_documents(prefs: Preferences) -> JudgedDocuments:
    """The judged documents of ``prefs``, numbered (see ``JudgedDocuments``)."""
    pairs = sorted(set(zip(prefs.data["query_id"], prefs.data["doc_id"], strict=True)),
                   key=lambda pair: (byte_key(pair[0]), byte_key(pair[1])))
    query_ids, doc_ids = [q for q, _ in pairs], [d for _, d in pairs]
    qrels = Qrels({"query_id": query_ids, "iteration": ["0"] * len(pairs), "doc_id": doc_ids,
                   "relevance": np.arange(len(pairs), dtype=np.int64)}, prefs.source, prefs.topics, prefs.unjudged,
                  checked=True)
    return JudgedDocuments(query_ids, doc_ids, {pair: i for i, pair in enumerate(pairs)}, qrels)


@dataclass(frozen=True)
class PreferenceView:
    """The preferences of the evaluated queries (``ranked.query_ids``), aligned with their ranking.

    Per query: ``judged_ret`` and ``judged`` (documents retrieved and judged, judged in all). Per group,
    in query order then byte order of the group's name: ``group_query``, ``group_arrays`` (True: made
    transitive, its preferences in ``pairs``; False: its lines in ``entries``). ``entries``: the lines of
    the one-subgroup groups as (group, document number, level), sorted by group then number. ``pairs``:
    the preferences of the other groups as (group, number of the preferred document, number of the other);
    ``docs``: their documents as (group, number, last level).
    """

    num_queries: int
    judged_ret: np.ndarray
    judged: np.ndarray
    group_query: np.ndarray
    group_arrays: np.ndarray
    entry_group: np.ndarray
    entry_rank: np.ndarray
    entry_level: np.ndarray
    pair_group: np.ndarray
    pair_winner: np.ndarray
    pair_loser: np.ndarray
    doc_group: np.ndarray
    doc_rank: np.ndarray
    doc_level: np.ndarray
    source: str = "<prefs>"
    query_ids: tuple[str, ...] = ()
    group_names: tuple[str, ...] = ()

    @property
    def num_groups(self) -> int:
        return len(self.group_query)


def preference_view(prefs: Preferences, documents: JudgedDocuments, ranked: RankedQueries) -> PreferenceView:
    """Align ``prefs`` with ``ranked`` (the run ranked against ``documents.qrels``, ties by doc_id ascending)."""
    index_of = {q: i for i, q in enumerate(ranked.query_ids)}
    num_docs = len(documents.doc_ids)
    doc_query = np.array([index_of.get(q, -1) for q in documents.query_ids], dtype=np.int64)
    num_queries = ranked.num_queries
    judged = np.bincount(doc_query[doc_query >= 0], minlength=num_queries).astype(np.int64)
    # the retrieved judged documents of each query, in rank order
    rel = np.asarray(ranked.rel, dtype=np.int64)
    row_query = np.repeat(np.arange(num_queries), np.diff(ranked.offsets))
    hit = rel >= 0
    retrieved_doc, retrieved_query = rel[hit], row_query[hit]
    judged_ret = np.bincount(retrieved_query, minlength=num_queries).astype(np.int64)
    rank = np.full(num_docs, -1, dtype=np.int64)
    starts = offsets_of(judged_ret)[:-1]
    rank[retrieved_doc] = np.arange(len(retrieved_doc)) - starts[retrieved_query]
    # the others after them, in number order (doc_id byte order within a query)
    rest = np.flatnonzero((rank < 0) & (doc_query >= 0))
    rest_query = doc_query[rest]
    rest_starts = query_offsets(rest_query, num_queries)[:-1]
    rank[rest] = judged_ret[rest_query] + np.arange(len(rest)) - rest_starts[rest_query]

    # the lines of the evaluated queries, and their groups in query order, then byte order of the name
    data = prefs.data
    line_doc = np.array([documents.number[pair] for pair in zip(data["query_id"], data["doc_id"], strict=True)],
                        dtype=np.int64)
    line_query = doc_query[line_doc] if len(line_doc) else line_doc
    kept = np.flatnonzero(line_query >= 0)
    names = sorted({(int(line_query[i]), data["group"][i]) for i in kept.tolist()},
                   key=lambda item: (item[0], byte_key(item[1])))
    group_of = {name: g for g, name in enumerate(names)}
    line_group = np.array([group_of[(int(line_query[i]), data["group"][i])] for i in kept.tolist()], dtype=np.int64)
    subgroups: dict[int, set[str]] = {}
    for g, i in zip(line_group.tolist(), kept.tolist(), strict=True):
        subgroups.setdefault(g, set()).add(data["subgroup"][i])
    group_query = np.array([q for q, _ in names], dtype=np.int64)
    group_arrays = np.array([len(subgroups[g]) > 1 for g in range(len(names))], dtype=bool)
    line_rank, line_level = rank[line_doc[kept]], data["level"][kept]

    single = ~group_arrays[line_group]
    order = np.lexsort((line_rank[single], line_group[single]))
    entry_group, entry_rank = line_group[single][order], line_rank[single][order]
    entry_level = line_level[single][order]

    pair_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    doc_parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for g in np.flatnonzero(group_arrays).tolist():
        lines = kept[line_group == g]
        winners, losers, docs, last = _transitive(prefs, lines, rank[line_doc[lines]], names[g][1],
                                                  ranked.query_ids[names[g][0]])
        pair_parts.append((np.full(len(winners), g, dtype=np.int64), winners, losers))
        doc_parts.append((np.full(len(docs), g, dtype=np.int64), docs, last))
    pair_group, pair_winner, pair_loser = _joined(pair_parts, (np.int64, np.int64, np.int64))
    doc_group, doc_rank, doc_level = _joined(doc_parts, (np.int64, np.int64, np.float64))
    return PreferenceView(num_queries, judged_ret, judged, group_query, group_arrays, entry_group, entry_rank,
                          entry_level, pair_group, pair_winner, pair_loser, doc_group, doc_rank, doc_level,
                          prefs.source, tuple(ranked.query_ids), tuple(name for _, name in names))


def _joined(parts: Sequence[tuple[np.ndarray, ...]], dtypes: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    if not parts:
        return tuple(np.zeros(0, dtype=dtype) for dtype in dtypes)
    return tuple(np.concatenate([part[k] for part in parts]).astype(dtypes[k]) for k in range(len(dtypes)))


def level_pairs(block: np.ndarray, level: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (higher, lower) pair of positions within the same block at different levels: positions are
    sorted by block then level descending; returns the positions of the higher and of the lower line."""
    n = len(block)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    new_block = np.concatenate([[True], block[1:] != block[:-1]])
    new_level = new_block | np.concatenate([[True], level[1:] != level[:-1]])
    block_start = np.maximum.accumulate(np.where(new_block, np.arange(n), 0))
    level_start = np.maximum.accumulate(np.where(new_level, np.arange(n), 0))
    above = level_start - block_start  # lines of the block at higher levels
    lower = np.repeat(np.arange(n), above)
    first = np.repeat(block_start, above)
    higher = first + np.arange(len(lower)) - np.repeat(np.cumsum(above) - above, above)
    return higher, lower


def _transitive(prefs: Preferences, lines: np.ndarray, ranks: np.ndarray, group: str, query_id: str
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The preferences of a group of several subgroups, made transitive: (winners, losers) as document
    numbers, its documents and each one's last level (subgroups in byte order, levels descending, then
    numbers: the order trec_eval reads them in)."""
    data = prefs.data
    subgroup_names = sorted({data["subgroup"][i] for i in lines.tolist()}, key=byte_key)
    subgroup = np.array([subgroup_names.index(data["subgroup"][i]) for i in lines.tolist()], dtype=np.int64)
    level = data["level"][lines]
    order = np.lexsort((ranks, -level, subgroup))
    docs, local = np.unique(ranks, return_inverse=True)
    final = np.full(len(docs), -1, dtype=np.int64)
    np.maximum.at(final, local[order], np.arange(len(order)))  # each document's last line in that order
    last = level[order][final]
    higher, lower = level_pairs(subgroup[order], level[order])
    n = len(docs)
    reach = np.zeros((n, n), dtype=bool)
    reach[local[order][higher], local[order][lower]] = True
    np.fill_diagonal(reach, True)
    while True:  # squared until nothing is added: every path, of any length
        grown = (reach.astype(np.float32) @ reach.astype(np.float32)) > 0
        if np.array_equal(grown, reach):
            break
        reach = grown
    np.fill_diagonal(reach, False)
    both = reach & reach.T
    if both.any():
        a, b = (int(i) for i in np.argwhere(both)[0])
        found = {int(r): data["doc_id"][i] for r, i in zip(ranks.tolist(), lines.tolist(), strict=True)}
        raise InputFormatError(prefs.source, None, f"the preferences of group {quote(group)}, query {quote(query_id)}, "
                               f"contradict each other: document {quote(found[int(docs[a])])} is preferred to "
                               f"{quote(found[int(docs[b])])} and the other way round (through its subgroups)")
    win, lose = np.nonzero(reach)
    return docs[win], docs[lose], docs, last
