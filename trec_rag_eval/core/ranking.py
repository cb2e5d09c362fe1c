"""The one place that decides ranking, ties, relevance and which queries count (trec_eval's form_res_rels).

For every evaluated query:

1. Queries: every query of the qrels, in byte order of the id (``"10"`` before ``"2"``). A qrels
   query missing from the run is evaluated as trec_eval ``-c`` does: against a ranking of one
   document that is in no qrels, after which num_ret is 0 and every measure scores 0.
   ``queries="intersection"`` keeps only queries present in both (trec_eval 9, pytrec_eval).
   Queries only in the run are never evaluated.
2. Order: score descending, then doc_id descending in byte order. The rank column is ignored.
3. ``max_retrieved`` (``-M``) keeps the first n documents, then ``judged_only`` (``-J``) removes
   every document without a judgment >= 0, and the ranks close up.
4. Relevance of a ranked document: its qrels value when >= 0; -2 when the qrels give a negative
   value ("in the pool, not judged"); -1 when the qrels do not mention it ("not in the pool").
   Relevant means value >= relevance_level (``-l``); graded measures use the values as gains.

The tables come as polars frames or, for small files, as Python lists (``tables.Columns``). The
steps are the same for both; the few that touch the id strings (blocks of equal query ids,
matching judgments, duplicates, doc ids of tied scores) say it once per form, side by side, so a
small evaluation never imports polars.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from itertools import groupby
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.tables import Qrels, Run, qrels_query_ids

if TYPE_CHECKING:
    import polars as pl

Strings = Any
"""A column of ids: a ``list[str]`` (small tables) or a polars ``Series`` of strings."""

NOT_IN_POOL = -1
UNJUDGED = -2
LIST_FORM_MAX_ROWS = 50_000
"""Tables held as lists are ranked as lists up to this many run rows (faster than importing
polars below ~50,000 rows, slower above); larger ones are converted to polars frames first."""


@dataclass
class RankedQueries:
    """Aligned arrays for all evaluated queries; kernels read these and nothing else.

    Rows of ``rel`` are ranked documents, query after query; ``offsets[i]:offsets[i+1]`` are the
    rows of query i. Judged documents (relevance >= 0) of query i, retrieved or not, are
    ``judged[judged_offsets[i]:judged_offsets[i+1]]``, sorted by relevance descending.
    """

    query_ids: list[str]
    offsets: np.ndarray
    rel: np.ndarray
    judged_offsets: np.ndarray
    judged: np.ndarray
    missing: np.ndarray
    run_tag: str
    extra_queries: list[str] = field(default_factory=list)
    cache: dict[object, object] = field(default_factory=dict, repr=False)

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def missing_queries(self) -> list[str]:
        return [q for q, m in zip(self.query_ids, self.missing, strict=False) if m]


def _byte_sorted(values: list[str]) -> list[str]:
    return sorted(values, key=lambda text: text.encode("utf-8", "surrogateescape"))


def rank(
    qrels: Qrels,
    run: Run,
    *,
    max_retrieved: int | None = None,
    judged_only: bool = False,
    queries: str = "qrels",
    float32_scores: bool = False,
) -> RankedQueries:
    """Align a run with its qrels into ``RankedQueries`` (see the module docstring for the rules).

    ``float32_scores`` rounds scores to 32-bit floats before ranking, as trec_eval 9 and
    pytrec_eval do, so scores equal at float precision tie and doc_id decides.

    How it stays fast: the run is seen as blocks of equal query ids (one per query in almost every
    run), so query ids are looked up once per block; a run already sorted by score within each
    block is recognised in linear time (checked, not assumed), so doc ids are compared as strings
    only inside groups of tied scores and blocks are moved by slices; judgments are found through a
    64-bit hash join whose every match is verified on the real strings. The only array as long as
    the run that is kept is ``rel``, one small integer per row.
    """
    if queries not in ("qrels", "intersection"):
        raise UsageError(f"queries must be 'qrels' or 'intersection', got {queries!r}")
    if max_retrieved is not None and max_retrieved < 0:
        raise UsageError(f"max_retrieved must be >= 0, got {max_retrieved}")
    run_data: Any
    qrels_data: Any  # columns by name: Columns (lists) or a polars DataFrame (Series)
    if isinstance(run.data, dict) and isinstance(qrels.data, dict) and len(run.data["query_id"]) <= LIST_FORM_MAX_ROWS:
        run_data, qrels_data = run.data, qrels.data  # lists: no polars needed
    else:
        run_data, qrels_data = run.frame, qrels.frame

    # 1. query ids -> evaluated query index (byte order of the id), or -1; the run is read as
    #    blocks of equal query ids (one block per query in almost every run)
    block_ids, lengths = _blocks(run_data["query_id"])
    run_id_set = set(block_ids)
    qrels_ids = qrels_query_ids(qrels, _distinct(qrels_data["query_id"]))
    if queries == "intersection":
        query_ids = _byte_sorted([q for q in qrels_ids if q in run_id_set])
    else:
        query_ids = _byte_sorted(qrels_ids)
    extra = _byte_sorted(list(run_id_set.difference(qrels_ids)))
    index_of = {q: i for i, q in enumerate(query_ids)}
    block_qidx = np.array([index_of.get(q, -1) for q in block_ids], dtype=np.int32)
    scores = np.asarray(run_data["score"], dtype=np.float64)
    if float32_scores:
        scores = scores.astype(np.float32).astype(np.float64)
    query_col, doc_ids = run_data["query_id"], run_data["doc_id"]
    if (block_qidx < 0).any():  # drop the blocks of queries that are not evaluated
        keep_block = block_qidx >= 0
        rows = np.flatnonzero(np.repeat(keep_block, lengths))
        block_qidx, lengths = block_qidx[keep_block], lengths[keep_block]
        scores, query_col, doc_ids = scores[rows], _gather(query_col, rows), _gather(doc_ids, rows)

    # 2. relevance and duplicates, in file order
    qrels_qidx = _qrels_index(qrels_data["query_id"], index_of)
    relevance = np.asarray(qrels_data["relevance"], dtype=np.int64)
    if isinstance(query_col, list):
        rel = _match_lists(run, qrels_data, relevance, qrels_qidx, query_col, doc_ids)
    else:
        keys = _pair_keys(query_col, doc_ids)
        _reject_duplicates(run, query_col, doc_ids, keys)
        rel = _relevance(qrels_data, qrels_qidx, query_col, doc_ids, keys)

    # 3. order: score descending, then doc_id descending; no per-row query index is needed
    rel = _ranking_order(block_qidx, lengths, scores, doc_ids).apply(rel)
    counts = np.bincount(block_qidx, weights=lengths, minlength=len(query_ids)).astype(np.int64)

    # queries missing from the run get trec_eval's dummy ranking: one document in no qrels
    missing = counts == 0
    if missing.any():
        rel = np.insert(rel, _starts(counts)[missing], NOT_IN_POOL)
        counts[missing] = 1

    # -M: the first n of each query; then -J: only judged documents, ranks closing up
    if max_retrieved is not None:
        qidx = np.repeat(np.arange(len(query_ids)), counts)
        rel = rel[np.arange(len(rel)) - _starts(counts)[qidx] < max_retrieved]
        counts = np.minimum(counts, max_retrieved)
    if judged_only:
        rel, counts = _judged_rows(rel, counts)

    # judged documents of each query (retrieved or not), best first: the ideal rankings
    judged_mask = (qrels_qidx >= 0) & (relevance >= 0)
    judged_q, judged_rel = qrels_qidx[judged_mask], relevance[judged_mask].astype(np.int64)
    judged_order = np.lexsort((-judged_rel, judged_q))
    return RankedQueries(
        query_ids=query_ids,
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        rel=rel,
        judged_offsets=_offsets(judged_q, len(query_ids)),
        judged=judged_rel[judged_order],
        missing=missing,
        run_tag=run.run_tag,
        extra_queries=extra,
    )


def only_judged(ranked: RankedQueries) -> RankedQueries:
    """The same queries with trec_eval's -J applied afterwards: unjudged documents removed."""
    rel, counts = _judged_rows(ranked.rel, np.diff(ranked.offsets))
    return replace(ranked, rel=rel, offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), cache={})


def _judged_rows(rel: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """-J: keep the rows with a judgment >= 0; the ranks of each query close up."""
    qidx = np.repeat(np.arange(len(counts)), counts)
    keep = rel >= 0
    return rel[keep], np.bincount(qidx[keep], minlength=len(counts)).astype(np.int64)


def _starts(counts: np.ndarray) -> np.ndarray:
    """First row of each query, from the number of rows of each."""
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)


def _offsets(qidx: np.ndarray, num_queries: int) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.bincount(qidx, minlength=num_queries))]).astype(np.int64)


@dataclass
class _Reorder:
    """How to put rows in trec_eval order, without a full permutation when the run allows it.

    ``places``/``sources``: positions rewritten inside groups of tied scores (values[places] =
    values[sources]); ``blocks``: (starts, lengths) of the query blocks in the order they must
    take; ``permutation``: a full permutation, for runs that are not grouped and sorted.
    """

    places: np.ndarray | None = None
    sources: np.ndarray | None = None
    blocks: tuple[np.ndarray, np.ndarray] | None = None
    permutation: np.ndarray | None = None

    def apply(self, values: np.ndarray) -> np.ndarray:
        if self.permutation is not None:
            return values[self.permutation]
        out = values
        if self.places is not None:
            out = values.copy()
            out[self.places] = values[self.sources]
        if self.blocks is not None:
            starts, lengths = self.blocks
            out = np.concatenate([out[a: a + n] for a, n in zip(starts.tolist(), lengths.tolist(), strict=False)])
        return out


def _ranking_order(block_qidx: np.ndarray, lengths: np.ndarray, scores: np.ndarray,
                   doc_ids: Strings) -> _Reorder:
    """How to put rows in trec_eval order: query, score descending, doc_id descending.

    Runs are nearly always written one query at a time with scores descending; that is checked
    in linear time, and then only the groups of tied scores are sorted by doc_id and the query
    blocks moved into place. Anything else is sorted in full.
    """
    reorder = _Reorder()
    n = len(scores)
    if n == 0:
        return reorder
    starts = _starts(lengths)
    grouped = np.bincount(block_qidx).max() <= 1  # each query in one block
    rises = np.flatnonzero(scores[1:] > scores[:-1]) + 1  # a higher score after a lower one
    if grouped and _members(rises, starts).all():
        ties = np.flatnonzero(scores[1:] == scores[:-1])
        ties = ties[~_members(ties + 1, starts)]  # equal scores of two different queries do not tie
        if len(ties):
            block = np.searchsorted(starts, ties, side="right") - 1
            reorder.places, reorder.sources = _sort_ties(ties, block, scores, doc_ids, None)
        if np.any(block_qidx[1:] < block_qidx[:-1]):
            by_query = np.argsort(block_qidx, kind="stable")
            reorder.blocks = (starts[by_query], lengths[by_query])
        return reorder
    qidx = np.repeat(block_qidx, lengths)
    order = np.lexsort((-scores, qidx))
    q, s = qidx[order], scores[order]
    ties = np.flatnonzero((q[1:] == q[:-1]) & (s[1:] == s[:-1]))
    if len(ties):
        places, sources = _sort_ties(ties, q[ties], s, doc_ids, order)
        order[places] = sources
    reorder.permutation = order
    return reorder


def _members(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which values are in ``sorted_set`` (ascending, distinct): np.isin by binary search, which
    also spares a small evaluation the import of numpy.ma that np.isin and np.unique make."""
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values if len(sorted_set) else np.zeros(len(values), dtype=bool)


def _sort_ties(ties: np.ndarray, group: np.ndarray, scores: np.ndarray, doc_ids: Strings,
               order: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Sort each run of tied scores by doc_id descending (byte order).

    ``ties[i]``: position ties[i]+1 ties position ties[i], within group ``group[i]``; ``scores``
    are in position order; ``order`` maps positions to rows of ``doc_ids`` (None: the same).
    Returns (places, sources): the row to put at each place.
    """
    places = np.concatenate([ties, ties + 1])
    places.sort()
    places = places[np.concatenate([[True], places[1:] != places[:-1]])]  # ties and ties + 1, once each
    pair = np.searchsorted(ties, places, side="right") - 1  # the tie pair each place belongs to
    picked = places if order is None else order[places]
    if isinstance(doc_ids, list):
        groups, tied_scores, docs = group[pair].tolist(), scores[places].tolist(), _gather(doc_ids, picked)
        by_doc = sorted(range(len(places)), key=lambda i: docs[i].encode("utf-8", "surrogateescape"), reverse=True)
        by_doc.sort(key=lambda i: (groups[i], -tied_scores[i]))  # stable: doc_id stays descending within a tie
        return places, picked[np.array(by_doc, dtype=np.int64)]
    import polars as pl

    tied = pl.DataFrame({
        # + 0.0 turns -0.0 into 0.0: C compares them equal, so the sort must too
        "g": group[pair], "s": scores[places] + 0.0, "doc_id": doc_ids.gather(picked), "row": picked,
    }).sort(["g", "s", "doc_id"], descending=[False, True, True])
    return places, tied["row"].to_numpy()


def _blocks(query_ids: Strings) -> tuple[list[str], np.ndarray]:
    """Runs of equal query ids, in file order: (the id of each, its number of rows)."""
    if isinstance(query_ids, list):
        runs = [(query_id, sum(1 for _ in rows)) for query_id, rows in groupby(query_ids)]
        return [r[0] for r in runs], np.array([r[1] for r in runs], dtype=np.int64)
    blocks = query_ids.rle().struct.unnest()
    return blocks["value"].to_list(), blocks["len"].to_numpy().astype(np.int64)


def _distinct(values: Strings) -> list[str]:
    return list(dict.fromkeys(values)) if isinstance(values, list) else values.unique().to_list()


def _gather(values: Strings, rows: np.ndarray) -> Strings:
    return [values[i] for i in rows.tolist()] if isinstance(values, list) else values.gather(rows)


def _match_lists(run: Run, qrels_data: dict[str, Any], relevance: np.ndarray, qrels_qidx: np.ndarray,
                 query_ids: list[str], doc_ids: list[str]) -> np.ndarray:
    """Judgment of every row (as ``_relevance``) and the duplicate check (as ``_reject_duplicates``),
    for tables held as lists: one dictionary lookup per row."""
    judgments = {(q, d): int(r) for q, d, r, i in zip(qrels_data["query_id"], qrels_data["doc_id"], relevance.tolist(),
                                                     qrels_qidx.tolist(), strict=True) if i >= 0}
    values: list[int] = []
    seen: set[tuple[str, str]] = set()
    for pair in zip(query_ids, doc_ids, strict=True):
        if pair in seen:
            raise run.duplicate_error(*pair)
        seen.add(pair)
        judged = judgments.get(pair)
        values.append(NOT_IN_POOL if judged is None else judged if judged >= 0 else UNJUDGED)
    return np.array(values, dtype=_rel_dtype(relevance))


def _rel_dtype(relevance: np.ndarray) -> type[np.integer]:
    """int8 when the judgments allow: ``rel`` is the one array as long as the run that evaluation keeps."""
    return np.int8 if len(relevance) == 0 or (relevance.min() >= -128 and relevance.max() <= 127) else np.int64


def _pair_keys(query_ids: pl.Series, doc_ids: pl.Series) -> np.ndarray:
    """A 64-bit hash per (query, document); collisions are possible and always resolved exactly."""
    import polars as pl

    return pl.DataFrame({"q": query_ids, "d": doc_ids}).hash_rows(seed=20240607).to_numpy()


def _qrels_index(ids: Strings, index_of: dict[str, int]) -> np.ndarray:
    """The evaluated-query index of each judgment's query, or -1."""
    if isinstance(ids, list):
        return np.array([index_of.get(q, -1) for q in ids], dtype=np.int32)
    import polars as pl

    mapping = pl.DataFrame({"query_id": list(index_of), "qidx": list(index_of.values())},
                           schema={"query_id": pl.Utf8, "qidx": pl.Int32})
    joined = pl.DataFrame({"query_id": ids}).join(mapping, on="query_id", how="left", maintain_order="left")
    return joined["qidx"].fill_null(-1).to_numpy()


def _relevance(qrels_frame: pl.DataFrame, qrels_qidx: np.ndarray, query_col: pl.Series, doc_ids: pl.Series,
               keys: np.ndarray) -> np.ndarray:
    """Judgment of every row: >= 0 judged, UNJUDGED (-2) negative in qrels, NOT_IN_POOL (-1).

    A hash join on (query, document) keys; every match is verified on the real strings, and a
    collision sends the whole join to an exact string join. The result is as narrow an integer
    type as the judgments allow: it is the one array as long as the run that evaluation keeps.
    """
    import polars as pl

    relevance = qrels_frame["relevance"].to_numpy()
    rel = np.full(len(keys), NOT_IN_POOL, dtype=_rel_dtype(relevance))
    if len(keys) == 0:
        return rel
    usable = np.flatnonzero(qrels_qidx >= 0)
    qrels_queries = qrels_frame["query_id"].gather(usable)
    qrels_docs = qrels_frame["doc_id"].gather(usable)
    qrels_rel = relevance[usable]
    qrels_keys = _pair_keys(qrels_queries, qrels_docs)
    pairs = pl.DataFrame({"key": keys}).with_row_index("i").join(
        pl.DataFrame({"key": qrels_keys, "j": np.arange(len(qrels_keys), dtype=np.int64)}), on="key", how="inner")
    hit = pairs["i"].to_numpy().astype(np.int64)
    match = pairs["j"].to_numpy()
    exact = pl.Series(qrels_keys).n_unique() == len(qrels_keys)  # else two judgments share a key
    if exact and len(hit):
        exact = bool((doc_ids.gather(hit) == qrels_docs.gather(match)).all()) and bool(
            (query_col.gather(hit) == qrels_queries.gather(match)).all())
    if not exact:  # a hash collision: redo exactly
        return _relevance_by_strings(qrels_queries, qrels_docs, qrels_rel, query_col, doc_ids, rel)
    values = qrels_rel[match]
    rel[hit] = np.where(values < 0, UNJUDGED, values)
    return rel


def _relevance_by_strings(qrels_queries, qrels_docs, qrels_rel, query_col, doc_ids, rel):
    import polars as pl

    judgments = pl.DataFrame({"q": qrels_queries, "doc_id": qrels_docs, "relevance": qrels_rel})
    joined = pl.DataFrame({"q": query_col, "doc_id": doc_ids}).join(
        judgments, on=["q", "doc_id"], how="left", maintain_order="left")
    values = joined["relevance"]
    judged = values.is_not_null().to_numpy()
    raw = values.fill_null(0).to_numpy()
    rel[judged] = np.where(raw[judged] < 0, UNJUDGED, raw[judged])
    return rel


def _reject_duplicates(run: Run, query_col: pl.Series, doc_ids: pl.Series, keys: np.ndarray) -> None:
    """A document twice in one query's ranking is an error (trec_eval: "duplicate docs")."""
    import polars as pl

    if len(keys) == 0 or pl.Series(keys).n_unique() == len(keys):
        return
    pairs = pl.DataFrame({"query_id": query_col, "doc_id": doc_ids})
    duplicated = pairs.is_duplicated()
    if not duplicated.any():
        return  # only a hash collision
    query_id, doc_id = pairs.filter(duplicated).row(0)
    raise run.duplicate_error(query_id, doc_id)
