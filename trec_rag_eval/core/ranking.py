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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.tables import Qrels, Run

NOT_IN_POOL = -1
UNJUDGED = -2


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
        return [q for q, m in zip(self.query_ids, self.missing) if m]


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

    How it stays fast: query ids become small integers once; one stable integer sort groups the
    queries (runs are almost always already sorted by score within a query, which is checked, not
    assumed); doc ids are compared as strings only inside groups of tied scores; judgments are
    found through a 64-bit hash join whose every match is then verified on the real strings.
    """
    if queries not in ("qrels", "intersection"):
        raise UsageError(f"queries must be 'qrels' or 'intersection', got {queries!r}")
    if max_retrieved is not None and max_retrieved < 0:
        raise UsageError(f"max_retrieved must be >= 0, got {max_retrieved}")
    run_frame, qrels_frame = run.frame, qrels.frame

    # 1. query ids -> codes (byte order) -> evaluated query index, or -1
    run_ids = run_frame["query_id"].unique().to_list()
    qrels_ids = qrels_frame["query_id"].unique().to_list()
    all_ids = _byte_sorted(list(set(run_ids).union(qrels_ids)))
    code_of = {q: i for i, q in enumerate(all_ids)}
    run_id_set = set(run_ids)
    if queries == "intersection":
        query_ids = _byte_sorted([q for q in qrels_ids if q in run_id_set])
    else:
        query_ids = _byte_sorted(qrels_ids)
    extra = _byte_sorted(list(run_id_set.difference(qrels_ids)))
    lookup = np.full(len(all_ids), -1, dtype=np.int64)
    lookup[[code_of[q] for q in query_ids]] = np.arange(len(query_ids))
    enum = pl.Enum(all_ids)
    run_qidx = lookup[run_frame["query_id"].cast(enum).to_physical().to_numpy()]
    rows = np.flatnonzero(run_qidx >= 0)
    qidx = run_qidx[rows]
    scores = run_frame["score"].to_numpy()[rows]
    if float32_scores:
        scores = scores.astype(np.float32).astype(np.float64)
    scores = scores + 0.0  # -0.0 becomes 0.0: C compares them equal, so they must tie here too

    # 2. order: score descending, then doc_id descending
    order = _ranking_order(qidx, scores, lambda picked: run_frame["doc_id"].gather(rows[picked]))
    rows, qidx = rows[order], qidx[order]

    # 3. queries missing from the run get trec_eval's dummy ranking: one document in no qrels
    missing = np.ones(len(query_ids), dtype=bool)
    missing[qidx] = False
    dummy = np.flatnonzero(missing)
    rows = np.concatenate([rows, np.full(len(dummy), -1, dtype=np.int64)])
    qidx = np.concatenate([qidx, dummy])
    if len(dummy):
        regroup = np.argsort(qidx, kind="stable")
        rows, qidx = rows[regroup], qidx[regroup]

    # 4. -M: the first n of each query
    if max_retrieved is not None:
        offsets = _offsets(qidx, len(query_ids))
        keep = np.arange(len(qidx)) - offsets[qidx] < max_retrieved
        rows, qidx = rows[keep], qidx[keep]

    # 5. relevance of each ranked document (duplicates are checked on the same hashed keys)
    real = rows >= 0
    keys = _pair_keys(_doc_hash(run_frame["doc_id"])[rows[real]], qidx[real])
    _reject_duplicates(run, rows, qidx, keys)
    rel = _relevance(qrels_frame, run_frame, rows, qidx, lookup, enum, keys)

    # 6. -J: only judged documents, ranks closing up
    if judged_only:
        keep = rel >= 0
        rel, qidx = rel[keep], qidx[keep]

    # judged documents of each query (retrieved or not), best first: the ideal rankings
    qrels_qidx = lookup[qrels_frame["query_id"].cast(enum).to_physical().to_numpy()]
    relevance = qrels_frame["relevance"].to_numpy()
    judged_mask = (qrels_qidx >= 0) & (relevance >= 0)
    judged_q, judged_rel = qrels_qidx[judged_mask], relevance[judged_mask].astype(np.int64)
    judged_order = np.lexsort((-judged_rel, judged_q))
    return RankedQueries(
        query_ids=query_ids,
        offsets=_offsets(qidx, len(query_ids)),
        rel=rel,
        judged_offsets=_offsets(judged_q, len(query_ids)),
        judged=judged_rel[judged_order],
        missing=missing,
        run_tag=run.run_tag,
        extra_queries=extra,
    )


def _offsets(qidx: np.ndarray, num_queries: int) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(np.bincount(qidx, minlength=num_queries))]).astype(np.int64)


def _ranking_order(qidx: np.ndarray, scores: np.ndarray, doc_ids_of) -> np.ndarray:
    """Permutation putting rows in trec_eval order: query, score descending, doc_id descending.

    ``doc_ids_of(positions)`` returns the doc ids (a polars Series) of the given rows; it is
    called only for rows whose score ties with a neighbour's.
    """
    order = _group_by_query(qidx)
    q, s = qidx[order], scores[order]
    same_query = q[1:] == q[:-1]
    if np.any(same_query & (s[1:] > s[:-1])):  # not already sorted by score: sort fully
        order = np.lexsort((-scores, qidx))
        q, s = qidx[order], scores[order]
        same_query = q[1:] == q[:-1]
    tie = same_query & (s[1:] == s[:-1])
    if tie.any():
        in_group = np.zeros(len(q), dtype=bool)
        in_group[1:] |= tie
        in_group[:-1] |= tie
        places = np.flatnonzero(in_group)
        group = pl.DataFrame({
            "q": q[places], "s": s[places], "doc_id": doc_ids_of(order[places]), "row": order[places],
        }).sort(["q", "s", "doc_id"], descending=[False, True, True])
        order[places] = group["row"].to_numpy()
    return order


def _group_by_query(qidx: np.ndarray) -> np.ndarray:
    """Stable permutation sorting rows by query. Runs list each query in one block (in any
    query order), which is recognised in linear time; anything else gets a stable sort."""
    n = len(qidx)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.concatenate([[0], np.flatnonzero(qidx[1:] != qidx[:-1]) + 1])
    block_query = qidx[starts]
    if len(np.unique(block_query)) != len(block_query):
        return np.argsort(qidx, kind="stable")
    lengths = np.diff(np.append(starts, n))
    block_order = np.argsort(block_query, kind="stable")
    new_starts = np.concatenate([[0], np.cumsum(lengths[block_order])[:-1]])
    return np.repeat(starts[block_order] - new_starts, lengths[block_order]) + np.arange(n)


def _doc_hash(doc_ids: pl.Series) -> np.ndarray:
    return doc_ids.hash(seed=20240607).to_numpy()


def _pair_keys(doc_hash: np.ndarray, qidx: np.ndarray) -> np.ndarray:
    """A 64-bit key per (query, document); collisions are possible and always verified."""
    with np.errstate(over="ignore"):
        return doc_hash * np.uint64(0x9E3779B97F4A7C15) + qidx.astype(np.uint64)


def _relevance(qrels_frame: pl.DataFrame, run_frame: pl.DataFrame, rows: np.ndarray, qidx: np.ndarray,
               lookup: np.ndarray, enum: pl.Enum, run_keys: np.ndarray) -> np.ndarray:
    """Judgment of every ranked row: >= 0 judged, UNJUDGED (-2) negative in qrels, NOT_IN_POOL (-1).

    ``run_keys`` are the hashed (query, document) keys of the real rows (``rows >= 0``).
    """
    rel = np.full(len(rows), NOT_IN_POOL, dtype=np.int64)
    real = np.flatnonzero(rows >= 0)  # dummy rows of missing queries stay out of the pool
    if len(real) == 0:
        return rel
    qrels_qidx = lookup[qrels_frame["query_id"].cast(enum).to_physical().to_numpy()]
    usable = np.flatnonzero(qrels_qidx >= 0)
    qrels_docs = qrels_frame["doc_id"].gather(usable)
    qrels_q = qrels_qidx[usable]
    qrels_rel = qrels_frame["relevance"].to_numpy()[usable]
    qrels_keys = _pair_keys(_doc_hash(qrels_docs), qrels_q)
    pairs = pl.DataFrame({"key": run_keys}).with_row_index("i").join(
        pl.DataFrame({"key": qrels_keys, "j": np.arange(len(qrels_keys), dtype=np.int64)}), on="key", how="inner")
    if pairs.height and pairs["i"].n_unique() != pairs.height:  # two judgments share a key
        return _relevance_by_strings(qrels_docs, qrels_q, qrels_rel, run_frame["doc_id"].gather(rows[real]),
                                     qidx[real], rel, real)
    hit = pairs["i"].to_numpy().astype(np.int64)
    if len(hit):
        match = pairs["j"].to_numpy()
        same = (run_frame["doc_id"].gather(rows[real[hit]]) == qrels_docs.gather(match)).to_numpy()
        same &= qidx[real[hit]] == qrels_q[match]
        if not same.all():  # a hash collision: redo exactly
            return _relevance_by_strings(qrels_docs, qrels_q, qrels_rel, run_frame["doc_id"].gather(rows[real]),
                                         qidx[real], rel, real)
        values = qrels_rel[match]
        rel[real[hit]] = np.where(values < 0, UNJUDGED, values)
    return rel


def _relevance_by_strings(qrels_docs, qrels_q, qrels_rel, run_docs, run_q, rel, real):
    judgments = pl.DataFrame({"q": qrels_q, "doc_id": qrels_docs, "relevance": qrels_rel})
    joined = pl.DataFrame({"q": run_q, "doc_id": run_docs}).join(
        judgments, on=["q", "doc_id"], how="left", maintain_order="left")
    values = joined["relevance"]
    judged = values.is_not_null().to_numpy()
    raw = values.fill_null(0).to_numpy()
    rel[real[judged]] = np.where(raw[judged] < 0, UNJUDGED, raw[judged])
    return rel


def _reject_duplicates(run: Run, rows: np.ndarray, qidx: np.ndarray, keys: np.ndarray) -> None:
    """A document twice in one query's ranking is an error (trec_eval: "duplicate docs")."""
    if len(keys) == 0 or pl.Series(keys).n_unique() == len(keys):
        return
    real = rows[rows >= 0]
    pairs = pl.DataFrame({"q": qidx[rows >= 0], "doc_id": run.frame["doc_id"].gather(real)})
    duplicated = pairs.is_duplicated()
    if not duplicated.any():
        return  # only a hash collision
    first = int(real[np.flatnonzero(duplicated.to_numpy())[0]])
    raise run.duplicate_error(run.frame["query_id"][first], run.frame["doc_id"][first])
