"""The one place that decides ranking, ties, relevance and which queries count (trec_eval's form_res_rels).

For every evaluated query:

1. Queries: every query of the qrels, in byte order of the id (``"10"`` before ``"2"``). A qrels
   query missing from the run is evaluated as trec_eval ``-c`` does: against a ranking of one
   document that is in no qrels, after which num_ret is 0 and every measure scores 0.
   ``queries="intersection"`` keeps only queries present in both (trec_eval 9, pytrec_eval).
   Queries only in the run are never evaluated.
2. Order: score descending, then doc_id descending in byte order. The rank column is ignored.
3. ``max_retrieved`` (``-M``) keeps the first n documents, then ``judged_only`` (``-J``) removes
   every document without a judgment >= 0, and the ranks close up. A document listed twice for one
   query is an error when both are among the documents -M keeps (trec_eval: "duplicate docs");
   below the cut it is never seen, as in trec_eval.
4. Relevance of a ranked document: its qrels value when >= 0; -2 when the qrels give a negative
   value ("in the pool, not judged"); -1 when the qrels do not mention it ("not in the pool").
   Relevant means value >= relevance_level (``-l``); graded measures use the values as gains. A
   document judged under several subtopics (ndeval's intent-aware qrels) has its highest judgment
   (``tables.per_document``); the intent-aware measures read the subtopics' own judgments beside
   the ranking (``evaluation.subtopics``).

This module states the rules and applies them in that order; the work is done by three modules
beside it: ``core.ordering`` puts the rows in that order, ``core.matching`` gives each row its
relevance and refuses a document listed twice in one query, and ``core.column_operations`` holds the few
operations on the id strings (query lookup, gathering, filtering), once per form the tables come
in: Python lists for small files (``tables.Columns``, so a small evaluation never imports polars or
pyarrow), an Arrow table for large runs read by the fast TREC reader, or polars frames.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field, replace
from itertools import compress
from typing import Any

import numpy as np

from trec_rag_eval.core.column_operations import (
    Strings,
    distinct_queries,
    doc_column,
    gather,
    keep_where,
    numbers,
    offsets_of,
    row_index,
)
from trec_rag_eval.core.matching import NOT_IN_POOL, Judgments, judge_rows, match_lists, refuse_repeats
from trec_rag_eval.core.ordering import bincount, block_starts, block_tops, ranking_order
from trec_rag_eval.core.parallel import sort_threads
from trec_rag_eval.errors import UsageError
from trec_rag_eval.tables import (
    CheckedColumns,
    Qrels,
    Run,
    byte_key,
    derived_from,
    large_run_data,
    per_document,
    qrels_query_ids,
)
from trec_rag_eval.tables.checked_columns import ArrowIds

LIST_FORM_MAX_ROWS = 50_000
"""Tables held as lists are ranked as lists up to this many run rows (faster than importing
polars below ~50,000 rows, slower above); larger ones are converted to polars frames first."""
CHECKED_LIST_MAX_ROWS = 5_000_000
"""A run made from an in-memory shape (``tables.CheckedColumns``: its ids already Python strings, its pairs
checked) is ranked as lists up to this many rows: each row's judgment is one dict lookup, where the Arrow
path would first copy every id into Arrow's buffers (1M rows of a dict of dicts: 1.1-1.3 s against 1.5-1.6 s
on two cores); above it, the multi-threaded Arrow path (``tables.large_run_data``)."""


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
    judged_cache: dict[object, object] = field(default_factory=dict, repr=False)
    """What the kernels derive from ``judged`` and ``judged_offsets`` alone (the ideal rankings): the
    judgments' own (``Judgments.cache``), kept with a ``Qrels`` as its judgments are, so many runs
    evaluated against one ``Qrels`` derive them once."""

    @property
    def num_queries(self) -> int:
        return len(self.query_ids)

    @property
    def missing_queries(self) -> list[str]:
        return list(compress(self.query_ids, self.missing))

    def thread_ranges(self, threads: int | None = None) -> list[tuple[int, int]]:
        """Consecutive ranges of whole queries with about as many ranked and judged rows each, one per thread
        the kernels run on (``KERNEL_SPLIT_ROWS``); one range for a run too small to be worth threads."""
        if len(self.rel) < KERNEL_SPLIT_ROWS:  # before asking the system for its cores: most runs stop here
            return [(0, self.num_queries)]
        threads = min(threads or sort_threads(), self.num_queries)
        if threads <= 1:
            return [(0, self.num_queries)]
        load = self.offsets + self.judged_offsets  # rows up to each query, both kinds
        cuts = np.searchsorted(load, np.arange(1, threads) * (load[-1] / threads)).tolist()
        bounds = sorted({0, *(min(max(c, 1), self.num_queries - 1) for c in cuts), self.num_queries})
        return list(zip(bounds[:-1], bounds[1:], strict=True))

    def between(self, first: int, stop: int) -> RankedQueries:
        """The queries ``first:stop``, as views of these arrays."""
        low, high = int(self.offsets[first]), int(self.offsets[stop])
        judged_low, judged_high = int(self.judged_offsets[first]), int(self.judged_offsets[stop])
        return RankedQueries(query_ids=self.query_ids[first:stop], offsets=self.offsets[first:stop + 1] - low,
                             rel=self.rel[low:high], judged_offsets=self.judged_offsets[first:stop + 1] - judged_low,
                             judged=self.judged[judged_low:judged_high], missing=self.missing[first:stop],
                             run_tag=self.run_tag)


KERNEL_SPLIT_ROWS = 1 << 20
"""Ranked rows from which the kernels run on every core, each thread on a range of whole queries
(``RankedQueries.thread_ranges``: a measure's value for a query reads that query's rows alone, so the values
are the same bits)."""


def byte_sorted(values: list[str]) -> list[str]:
    """Ids in trec_eval's order: byte order of their UTF-8 (``strcmp``), so ``"10"`` before ``"2"``. Ids all
    ASCII (told by one C call) are in that order as Python compares them: no key made per id."""
    if "".join(values).isascii():
        return sorted(values)
    return sorted(values, key=byte_key)


def rank(
    qrels: Qrels,
    run: Run,
    *,
    max_retrieved: int | None = None,
    judged_only: bool = False,
    queries: str = "qrels",
    float32_scores: bool = False,
    ids_descending: bool = True,
    depth: int | None = None,
) -> RankedQueries:
    """Align a run with its qrels into ``RankedQueries`` (see the module docstring for the rules).

    ``ids_descending=False`` breaks ties by doc_id ascending: trec_eval's rule for preference judgments
    (form_prefs_counts), before -M as after.

    ``depth``: no measure reads a document ranked below it in its query (the evaluation's ``ranks_read``): a
    run held as lists is put in order whole, but only each query's first ``depth`` rows are matched with the
    judgments and kept (the rows past it are still looked at for a document listed twice; a run matched
    through hashes keeps every row). Each query's count of rows is then at most ``depth``.

    ``float32_scores`` rounds scores to 32-bit floats before ranking, as trec_eval 9 and
    pytrec_eval do, so scores equal at float precision tie and doc_id decides; a score beyond the
    float range (3.4e38) becomes +-infinity, as C's conversion makes it.

    How it stays fast whatever the line order: every row's query is looked up once (for Arrow's
    dictionary-encoded ids, once per distinct id of each chunk). A run written one query at a time
    is recognised in linear time (checked, not assumed): blocks already in score order are kept,
    the few that are not are sorted on their own, and blocks are moved by slices (on a second
    thread, while the judgments are matched); a run whose queries are interleaved is sorted in
    parts of whole queries on every core, each by its scores then by a radix sort of its query
    numbers (``core.ordering``). Doc ids are compared as strings only inside groups of tied scores.
    Judgments and duplicates are found through 64-bit (query, document) hashes (``core.matching``:
    a grouped run in parts of whole queries, one per core; an interleaved one chunk by chunk on every
    core), every judgment match verified on the strings and any repeated hash on the real pairs; the
    qrels' side (their keys, the ideal rankings) is made on a second thread while the run's rows are
    hashed. The only array as long as the run that is kept is ``rel``, one small integer per row;
    the run's doc ids are never copied whole.
    """
    if queries not in ("qrels", "intersection"):
        raise UsageError(f"queries must be 'qrels' or 'intersection', got {queries!r}")
    if max_retrieved is not None and max_retrieved < 0:
        raise UsageError(f"max_retrieved must be >= 0, got {max_retrieved}")
    qrels = per_document(qrels)  # intent-aware qrels: one judgment per document (rule 4)
    run_data: Any
    qrels_data: Any  # columns by name: Columns (lists), a polars DataFrame (Series) or an Arrow table
    rows = len(run.data["score"]) if isinstance(run.data, dict) else None
    if isinstance(qrels.data, dict) and rows is not None and (
            rows <= LIST_FORM_MAX_ROWS or (isinstance(run.data, CheckedColumns) and rows <= CHECKED_LIST_MAX_ROWS)):
        run_data, qrels_data = run.data, qrels.data  # lists: no polars needed
    else:
        run_data, qrels_data = large_run_data(run), qrels.frame

    keyed = not isinstance(doc_column(run_data), (list, ArrowIds))  # matched through hashes, not dicts of judgments
    # lists are ranked on this thread alone: a thread pool would cost more than the work it shares
    with _beside() if keyed else _Here() as beside:  # the judgments, the order of a grouped run
        # 1. every row's query: its index among the evaluated queries (byte order of the id), or -1.
        #    One lookup per row, so the line order of the file does not matter.
        known = derived_from(qrels)
        if "query_ids" not in known:
            known["query_ids"] = byte_sorted(qrels_query_ids(qrels, distinct_queries(qrels_data)))
        qrels_ids = known["query_ids"]
        # the judgments of the qrels' queries need nothing from the run: prepared beside from the start, once
        # per Qrels (then many runs evaluated against one Qrels pay for their own rows alone)
        judging = beside.submit(_qrels_judgments, known, qrels_data, qrels_ids, keyed) if queries == "qrels" else None
        if "query_index" not in known:
            known["query_index"] = dict(zip(qrels_ids, range(len(qrels_ids)), strict=True))
        row_query = row_index(run_data, known["query_index"])
        # rows of queries that are not evaluated (none, usually: one pass to find out)
        outside = row_query < 0 if len(row_query) and row_query.min() < 0 else None
        extra = [] if outside is None else byte_sorted(distinct_queries(run_data, outside))
        query_ids = qrels_ids
        if queries == "intersection":
            present = bincount(row_query if outside is None else row_query[~outside], len(qrels_ids)) > 0
            if not present.all():
                query_ids = [q for q, p in zip(qrels_ids, present.tolist(), strict=True) if p]
                # the last entry renumbers -1 (not evaluated) to itself
                renumber = np.append(np.where(present, np.cumsum(present) - 1, -1), -1).astype(np.int32)
                row_query = renumber[row_query]
        # with the intersection, once the run's queries are known: beside while the rows are hashed; the qrels' own,
        # kept with them, when the run has every query of the qrels (pytrec_eval's drop-in evaluates so)
        if judging is None:
            judging = beside.submit(_qrels_judgments, known, qrels_data, qrels_ids, keyed) if query_ids is qrels_ids \
                else beside.submit(Judgments, qrels_data, query_ids, keyed)
        scores = numbers(run_data["score"], np.float64)
        if float32_scores:
            # C's double -> float conversion, as trec_eval 9 makes it: beyond 3.4e38 a score becomes
            # +-infinity (and ties with the others there), which numpy would also announce with a warning
            with np.errstate(over="ignore"):
                scores = scores.astype(np.float32).astype(np.float64)
        doc_ids = doc_column(run_data)  # a small frame's: as Arrow holds them, the rows read made strings
        if outside is not None:  # drop the rows of queries that are not evaluated
            inside = ~outside
            row_query, scores, doc_ids = row_query[inside], scores[inside], keep_where(doc_ids, inside)
        own_rows = outside is None  # every row of the run, as it holds them: what it derives is kept with it
        del outside

        # 2. relevance and duplicates, in file order; 3. order: query, score descending, then doc_id
        #    descending. A run written one query at a time is put in order on the second thread while
        #    its judgments are matched (numpy and polars release the GIL); an interleaved run is
        #    sorted after, once the judgment keys are freed (its sort is the peak of memory)
        # rows made one query after the other, each query once (a dict of dicts), all kept: their blocks are known
        blocks = run_data.blocks if isinstance(run_data, CheckedColumns) and own_rows else None
        starts = block_starts(row_query, None if blocks is None else blocks[1])
        retrieved = None  # the rows of each query before -M, when it cuts some
        if max_retrieved is not None and len(row_query):
            retrieved = bincount(row_query, len(query_ids), starts)
            if retrieved.max() > max_retrieved:
                # -M cuts before anything is matched, as in trec_eval: a document listed twice is refused
                # only when both are among the documents kept
                row_query, scores, doc_ids = _first_of_each_query(row_query, scores, doc_ids, starts,
                                                                  len(query_ids), max_retrieved, ids_descending)
                starts, own_rows = block_starts(row_query), False
        counts = bincount(row_query, len(query_ids), starts)
        if depth is not None and not keyed and len(counts) and counts.max() > depth:
            rel = _top_rows(run, query_ids, judging.result(), row_query, scores, doc_ids, starts, counts,
                            depth, ids_descending, distinct=isinstance(run_data, CheckedColumns),
                            kept_as=("block tops", depth, ids_descending, float32_scores) if own_rows else None)
            judgments = judging.result()
            retrieved = counts if retrieved is None else retrieved
            counts = np.minimum(counts, depth)
        else:
            ordering = beside.submit(ranking_order, row_query, scores, doc_ids, starts, ids_descending) \
                if keyed and starts is not None else None
            if keyed:
                rel = judge_rows(run, query_ids, judging.result, row_query, doc_ids, starts)
            else:  # every row read (a small frame's ids numbered by their dictionary, made strings at ties only)
                rel = match_lists(run, query_ids, judging.result(), row_query, doc_ids, starts,
                                  distinct=isinstance(run_data, CheckedColumns))
            judgments = judging.result()
            reorder = ranking_order(row_query, scores, doc_ids, starts, ids_descending) if ordering is None \
                else ordering.result()
            rel = reorder.apply(rel)
    del row_query, scores, doc_ids

    # queries missing from the run get trec_eval's dummy ranking: one document in no qrels (not a query
    # whose every row -M 0 cut)
    missing = (counts if retrieved is None else retrieved) == 0
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

    return RankedQueries(
        query_ids=query_ids,
        offsets=offsets_of(counts),
        rel=rel,
        judged_offsets=judgments.judged_offsets,
        judged=judgments.judged,
        missing=missing,
        judged_cache=judgments.cache,
        run_tag=run.run_tag,
        extra_queries=extra,
    )


def _beside() -> Any:
    """Two threads beside the ranking's own (the judgments, the order of a grouped run)."""
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=2)


class _Done:
    """A result already there, asked for as a future's."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def result(self) -> Any:
        return self.value


def _qrels_judgments(known: dict[Hashable, Any], qrels_data: Any, qrels_ids: list[str], keyed: bool) -> Judgments:
    """The judgments of every query of the qrels, ready for matching: made once per ``Qrels`` and kept with it
    (``known``, its ``derived_from``)."""
    if ("judgments", keyed) not in known:
        known["judgments", keyed] = Judgments(qrels_data, qrels_ids, keyed)
    return known["judgments", keyed]  # type: ignore[no-any-return]


class _Here:
    """``_beside`` for work too small to share: each task done when submitted, on this thread."""

    def __enter__(self) -> _Here:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, work: Any, *args: Any) -> _Done:
        return _Done(work(*args))


def only_judged(ranked: RankedQueries) -> RankedQueries:
    """The same queries with trec_eval's -J applied afterwards: unjudged documents removed."""
    rel, counts = _judged_rows(ranked.rel, np.diff(ranked.offsets))
    return replace(ranked, rel=rel, offsets=offsets_of(counts), cache={})


def _top_rows(run: Run, query_ids: list[str], judgments: Judgments, row_query: np.ndarray, scores: np.ndarray,
              doc_ids: Strings, starts: np.ndarray | None, counts: np.ndarray, depth: int, ids_descending: bool,
              distinct: bool, kept_as: tuple[object, ...] | None = None) -> np.ndarray:
    """The judgments of each query's first ``depth`` rows in trec_eval's order, in that order (``rank``'s
    ``depth``): every row is put in order, a document listed twice refused among all of them, and only the
    rows kept are matched with the judgments. Blocks of one length (``ordering.block_tops``) give their first
    rows alone; ``kept_as``: the rows are all the run's, and those rows are kept with it by that key
    (``derived_from``), so a run evaluated again (other judgments, other measures of the same depth) finds them."""
    if not distinct:
        refuse_repeats(run, query_ids, row_query, doc_ids, starts)
    if starts is not None:
        known = derived_from(run) if kept_as is not None else {}
        tops = known.get(kept_as)
        if tops is None:
            tops = block_tops(scores, doc_ids, starts, depth, ids_descending)
            if tops is not None and kept_as is not None:
                known[kept_as] = tops
        if tops is not None:  # the blocks in query order, each its first rows
            block_query = row_query[starts]
            if (block_query[1:] < block_query[:-1]).any():
                by_query = block_query.argsort()
                tops, block_query = tops[by_query], block_query[by_query]
            kept = tops.ravel()
            return match_lists(run, query_ids, judgments, block_query.repeat(depth), gather(doc_ids, kept),
                               np.arange(0, len(kept), depth), distinct=True)
    reorder = ranking_order(row_query, scores, doc_ids, starts, ids_descending)
    order = reorder.permutation if reorder.permutation is not None else reorder.apply(np.arange(len(row_query)))
    ranked_query = row_query[order]
    kept = order[np.arange(len(order)) - _starts(counts)[ranked_query] < depth]
    return match_lists(run, query_ids, judgments, row_query[kept], gather(doc_ids, kept), None, distinct=True)


def _first_of_each_query(row_query: np.ndarray, scores: np.ndarray, doc_ids: Any, starts: np.ndarray | None,
                         num_queries: int, max_retrieved: int, ids_descending: bool = True
                         ) -> tuple[np.ndarray, np.ndarray, Any]:
    """-M: the first ``max_retrieved`` rows of each query in trec_eval's order (query, score
    descending, doc_id descending or ascending), in that order."""
    order = ranking_order(row_query, scores, doc_ids, starts, ids_descending).apply(np.arange(len(row_query)))
    ranked_query = row_query[order]
    position = np.arange(len(order)) - _starts(bincount(ranked_query, num_queries))[ranked_query]
    kept = order[position < max_retrieved]
    return row_query[kept], scores[kept], gather(doc_ids, kept)


def _judged_rows(rel: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """-J: keep the rows with a judgment >= 0; the ranks of each query close up."""
    qidx = np.repeat(np.arange(len(counts)), counts)
    keep = rel >= 0
    return rel[keep], np.bincount(qidx[keep], minlength=len(counts)).astype(np.int64)


def _starts(counts: np.ndarray) -> np.ndarray:
    """First row of each query, from the number of rows of each."""
    return offsets_of(counts)[:-1]
