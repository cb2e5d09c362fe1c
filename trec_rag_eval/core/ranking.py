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

The tables come as Python lists for small files (``tables.Columns``), as an Arrow table for large
runs read by the fast TREC reader, or as polars frames. The steps are the same for all; the few
that touch the id strings (query lookup, matching judgments, duplicates, doc ids of tied scores)
say it once per form, side by side, so a small evaluation never imports polars or pyarrow.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from trec_rag_eval.errors import DuplicateDocumentError, UsageError
from trec_rag_eval.memory import release_freed_memory
from trec_rag_eval.tables import Qrels, Run, qrels_query_ids
from trec_rag_eval.tables.arrow import ArrowExport, is_arrow, polars_numbers, string_buffers

if TYPE_CHECKING:
    import polars as pl

Strings = Any
"""A column of ids: a ``list[str]`` (small tables), a polars ``Series`` of strings or a pyarrow
``ChunkedArray`` (large runs from the fast reader; query ids dictionary-encoded)."""

T = TypeVar("T")
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
    pytrec_eval do, so scores equal at float precision tie and doc_id decides; a score beyond the
    float range (3.4e38) becomes +-infinity, as C's conversion makes it.

    How it stays fast whatever the line order: every row's query is looked up once (for Arrow's
    dictionary-encoded ids, once per distinct id of each chunk). A run written one query at a time
    is recognised in linear time (checked, not assumed): blocks already in score order are kept,
    the few that are not are sorted on their own, and blocks are moved by slices (on a second
    thread, while the judgments are matched); a run whose queries are interleaved is sorted in
    parts of whole queries on every core, each by its scores then by a radix sort of its query
    numbers (``_sorted_rows``). Doc ids are compared as strings only inside groups of tied scores.
    Judgments and duplicates are found through 64-bit (query, document) hashes (a grouped run in
    parts of whole queries, one per core; an interleaved one chunk by chunk on every core), every
    judgment match verified on the strings and any repeated hash on the real pairs; the qrels' side
    (their keys, the ideal rankings) is made on a second thread while the run's rows are hashed.
    The only array as long as the run that is kept is ``rel``, one small integer per row; the run's
    doc ids are never copied whole.
    """
    if queries not in ("qrels", "intersection"):
        raise UsageError(f"queries must be 'qrels' or 'intersection', got {queries!r}")
    if max_retrieved is not None and max_retrieved < 0:
        raise UsageError(f"max_retrieved must be >= 0, got {max_retrieved}")
    run_data: Any
    qrels_data: Any  # columns by name: Columns (lists), a polars DataFrame (Series) or an Arrow table
    if isinstance(run.data, dict) and isinstance(qrels.data, dict) and len(run.data["query_id"]) <= LIST_FORM_MAX_ROWS:
        run_data, qrels_data = run.data, qrels.data  # lists: no polars needed
    else:
        run_data, qrels_data = run.data if is_arrow(run.data) else run.frame, qrels.frame

    from concurrent.futures import ThreadPoolExecutor

    keyed = not isinstance(run_data["doc_id"], list)  # matched through hashes, not a dict of tuples
    with ThreadPoolExecutor(max_workers=2) as beside:  # the judgments, the order of a grouped run
        # 1. every row's query: its index among the evaluated queries (byte order of the id), or -1.
        #    One lookup per row, so the line order of the file does not matter.
        qrels_ids = _byte_sorted(qrels_query_ids(qrels, _distinct(qrels_data["query_id"])))
        row_query = _index_in(run_data["query_id"], {q: i for i, q in enumerate(qrels_ids)})
        # rows of queries that are not evaluated (none, usually: one pass to find out)
        outside = row_query < 0 if len(row_query) and row_query.min() < 0 else None
        extra = [] if outside is None else _byte_sorted(_distinct(_gather(run_data["query_id"],
                                                                          np.flatnonzero(outside))))
        query_ids = qrels_ids
        if queries == "intersection":
            present = _counts(row_query if outside is None else row_query[~outside], len(qrels_ids)) > 0
            if not present.all():
                query_ids = [q for q, p in zip(qrels_ids, present.tolist(), strict=True) if p]
                # the last entry renumbers -1 (not evaluated) to itself
                renumber = np.append(np.where(present, np.cumsum(present) - 1, -1), -1).astype(np.int32)
                row_query = renumber[row_query]
        # the judgments are prepared beside while the rows are hashed (not while the queries are looked
        # up: two threads running Python code in turns slow that loop of small numpy steps down)
        judging = beside.submit(_Judgments, qrels_data, query_ids, keyed)
        scores = _numbers(run_data["score"], np.float64)
        if float32_scores:
            # C's double -> float conversion, as trec_eval 9 makes it: beyond 3.4e38 a score becomes
            # +-infinity (and ties with the others there), which numpy would also announce with a warning
            with np.errstate(over="ignore"):
                scores = scores.astype(np.float32).astype(np.float64)
        doc_ids = run_data["doc_id"]
        if outside is not None:  # drop the rows of queries that are not evaluated
            inside = ~outside
            row_query, scores, doc_ids = row_query[inside], scores[inside], _keep(doc_ids, inside)
        del outside

        # 2. relevance and duplicates, in file order; 3. order: query, score descending, then doc_id
        #    descending. A run written one query at a time is put in order on the second thread while
        #    its judgments are matched (numpy and polars release the GIL); an interleaved run is
        #    sorted after, once the judgment keys are freed (its sort is the peak of memory)
        starts = _block_starts(row_query)
        ordering = beside.submit(_ranking_order, row_query, scores, doc_ids, starts) if keyed and starts is not None \
            else None
        if keyed:
            rel = _judge_rows(run, query_ids, judging.result, row_query, doc_ids, starts)
        else:
            rel = _match_lists(run, query_ids, qrels_data, judging.result(), row_query, doc_ids)
        judgments = judging.result()
        reorder = _ranking_order(row_query, scores, doc_ids, starts) if ordering is None else ordering.result()
    rel = reorder.apply(rel)
    counts = _counts(row_query, len(query_ids), starts)
    del row_query, scores, doc_ids

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

    return RankedQueries(
        query_ids=query_ids,
        offsets=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        rel=rel,
        judged_offsets=judgments.judged_offsets,
        judged=judgments.judged,
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
        """``values`` in that order; the array given is reordered in place where it can be."""
        if self.permutation is not None:
            return values[self.permutation]  # not np.take: it would copy the int32 permutation as 64-bit first
        out = values
        if self.places is not None:
            out[self.places] = values[self.sources]  # the right side is gathered first, then written
        if self.blocks is not None:
            starts, lengths = self.blocks
            out = np.concatenate([out[a: a + n] for a, n in zip(starts.tolist(), lengths.tolist(), strict=False)])
        return out


def _block_starts(row_query: np.ndarray) -> np.ndarray | None:
    """The first row of each block of rows of one query, or None when the lines are interleaved
    (more blocks than queries: some query comes back after another) or there are no rows."""
    if len(row_query) == 0:
        return None
    changes = row_query[1:] != row_query[:-1]
    if np.count_nonzero(changes) + 1 > int(row_query.max()) + 1:
        return None  # more blocks than query numbers
    starts = np.concatenate([[0], np.flatnonzero(changes) + 1])  # no copy of ``changes`` with a first True
    block_query = np.sort(row_query[starts])
    return None if np.any(block_query[1:] == block_query[:-1]) else starts


def _counts(values: np.ndarray, minlength: int = 0, starts: np.ndarray | None = None,
            step: int = 1 << 20) -> np.ndarray:
    """``np.bincount`` (int64) of a column as long as the run, a piece at a time: bincount converts
    its input to 64-bit integers, a copy twice the size of an int32 column otherwise made at once.
    ``starts``: the blocks of a column where each value makes one block (``_block_starts``), whose
    lengths are the counts."""
    if starts is not None and len(starts):
        out = np.zeros(max(minlength, int(values[starts].max()) + 1), dtype=np.int64)
        out[values[starts]] = np.diff(np.append(starts, len(values)))
        return out
    if len(values) <= step:
        return np.bincount(values, minlength=minlength).astype(np.int64)
    out = np.zeros(max(minlength, int(values.max()) + 1), dtype=np.int64)
    for start in range(0, len(values), step):
        out += np.bincount(values[start: start + step], minlength=len(out))
    return out


def _ranking_order(row_query: np.ndarray, scores: np.ndarray, doc_ids: Strings,
                   starts: np.ndarray | None) -> _Reorder:
    """How to put rows in trec_eval order: query, score descending, doc_id descending.

    Runs are nearly always written one query at a time with scores descending; that is checked
    in linear time (``starts``: the query blocks, ``_block_starts``), and then only the groups of
    tied scores are sorted by doc_id and the query blocks moved into place. A block whose lines are
    out of order (a fusion step or a re-ranker writing by doc id) is sorted on its own, so a few
    such blocks cost only their own rows. Lines of queries interleaved through the file (``starts``
    None) are sorted in full (``_sorted_rows``).
    """
    reorder = _Reorder()
    n = len(scores)
    if n == 0:
        return reorder
    if starts is None:
        reorder.permutation = _sorted_rows(row_query, scores, doc_ids)
        return reorder
    block_query = row_query[starts]
    lengths = np.diff(np.append(starts, n))
    compared = np.empty(n - 1, dtype=bool)  # one array for both comparisons of neighbours
    rises = np.flatnonzero(np.greater(scores[1:], scores[:-1], out=compared)) + 1  # a higher score after a lower
    unsorted = np.zeros(len(starts), dtype=bool)
    unsorted[np.searchsorted(starts, rises[~_members(rises, starts)], side="right") - 1] = True
    places, sources = [], []
    ties = np.flatnonzero(np.equal(scores[1:], scores[:-1], out=compared))
    del compared
    ties = ties[~_members(ties + 1, starts)]  # equal scores of two different queries do not tie
    tie_block = np.searchsorted(starts, ties, side="right") - 1
    keep = ~unsorted[tie_block]  # ties inside an unsorted block are found once it is sorted
    if keep.any():
        tied_places, tied_rows = _sort_ties(ties[keep], tie_block[keep], scores, doc_ids, None)
        places.append(tied_places)
        sources.append(tied_rows)
    if unsorted.any():
        rows = _row_ranges(starts[unsorted], lengths[unsorted])
        block = np.repeat(np.arange(np.count_nonzero(unsorted)), lengths[unsorted])
        places.append(rows)
        # one thread: a grouped run is put in order beside the judgment lookup, which uses the others
        sources.append(_sorted_rows(block, scores[rows], doc_ids, rows, threads=1))
    if places:
        reorder.places, reorder.sources = np.concatenate(places), np.concatenate(sources)
    if np.any(block_query[1:] < block_query[:-1]):
        by_query = np.argsort(block_query, kind="stable")
        reorder.blocks = (starts[by_query], lengths[by_query])
    return reorder


def _row_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The rows start[i] .. start[i] + length[i] - 1 of every range, one range after the other."""
    ends = np.cumsum(lengths)
    return np.arange(ends[-1] if len(ends) else 0) + np.repeat(starts - (ends - lengths), lengths)


def _sorted_rows(group: np.ndarray, scores: np.ndarray, doc_ids: Strings,
                 rows: np.ndarray | None = None, threads: int | None = None) -> np.ndarray:
    """Rows in order of group (ascending), score descending, doc_id descending.

    ``group`` and ``scores`` are given for some rows (``rows``; None: all rows, in order). The
    scores are sorted once; then one integer per row, group * n + the row's rank by score, is
    sorted in place, which brings the groups together with their rows in score order. Both are
    numpy's vectorised sorts (AVX-512 where the CPU has it); doc ids are compared only inside ties.
    """
    if isinstance(doc_ids, list):
        order = np.lexsort((-scores, group))
    else:
        order = _order_by_group_then_score(group, scores, threads)
    ties = _tied_positions(order, group, scores, threads)
    if len(ties):
        places, sources = _sort_ties(ties, group[order[ties]], scores, doc_ids, order, rows)
    if rows is not None:
        order = rows[order]
    if len(ties):
        order[places] = sources
    return order


SORT_PART_ROWS = 1 << 19
"""Rows of an interleaved run are sorted in parts of about this many (whole groups each), on
``sort_threads()`` threads: numpy's sorts and gathers release the GIL, and the temporary arrays
of a part are a fraction of the run's."""


def sort_threads() -> int:
    """Threads for the sorts of the ranking: the cores this process may use."""
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _order_by_group_then_score(group: np.ndarray, scores: np.ndarray, threads: int | None = None) -> np.ndarray:
    """Positions (int32) in order of group ascending, then score descending (equal scores in any order).

    The groups are cut into consecutive ranges of about ``SORT_PART_ROWS`` rows; each part is
    sorted on its own, on ``sort_threads()`` threads, into its place in the result: one
    argsort of the part's scores, then a stable radix sort of its group numbers (16 bits at a
    time) in that order. This is the peak of memory for a run whose lines are interleaved, so a
    part's temporary arrays are all that is added to the run's."""
    n = len(scores)
    out = np.empty(n, dtype=np.int32)
    if n == 0:
        return out
    counts = _counts(group)
    ends = np.cumsum(counts)
    # a part ends with the group holding its last row: [0, b1), [b1, b2), ... [bk, number of groups)
    cuts = np.searchsorted(ends, np.arange(1, -(-n // SORT_PART_ROWS)) * SORT_PART_ROWS) + 1
    bounds = np.concatenate([[0], cuts, [len(counts)]])
    bounds = bounds[np.concatenate([[True], bounds[1:] > bounds[:-1]])]  # increasing: no empty range
    first_row = np.concatenate([[0], ends])
    ranges = list(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
    # the part of each row (one byte or two), so a part finds its rows in one comparison
    part_of = np.repeat(np.arange(len(ranges), dtype=np.uint8 if len(ranges) < 256 else np.int32),
                        np.diff(bounds))[group] if len(ranges) > 1 else None

    def part(index: int) -> None:
        low, high = ranges[index]
        start, stop = int(first_row[low]), int(first_row[high])
        rows = None if part_of is None else np.flatnonzero(part_of == index).astype(np.int32)  # None: every row
        part_scores = scores if rows is None else scores[rows]
        order = np.argsort(part_scores)[::-1].astype(np.int32)  # best first
        del part_scores
        local = (group if rows is None else group[rows]) - low
        number = local[order]
        del local
        for shift in range(0, (high - low - 1).bit_length(), 16):  # least significant 16 bits first
            digits = ((number >> shift) & 0xFFFF).astype(np.uint16)
            moved = np.argsort(digits, kind="stable")  # numpy's radix sort for 16-bit integers
            del digits
            order, number = order[moved], number[moved]
            del moved
        out[start:stop] = order if rows is None else rows[order]

    _on_threads(part, range(len(ranges)), threads)
    release_freed_memory()  # the parts' temporary arrays, freed on the threads
    return out


def _on_threads(work: Callable[[int], T], items: range | list[int], threads: int | None = None) -> list[T]:
    """``[work(i) for i in items]``, on up to ``threads`` (None: ``sort_threads()``) threads when there
    are several items."""
    threads = min(threads or sort_threads(), len(items))
    if threads <= 1:
        return [work(i) for i in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=threads) as pool:
        return list(pool.map(work, items))


def _tied_positions(order: np.ndarray, group: np.ndarray, scores: np.ndarray, threads: int | None = None,
                    step: int = 1 << 20) -> np.ndarray:
    """Positions p of ``order`` whose row has the group and score of the row at p + 1 (in pieces,
    so no array of the sorted scores as long as the run is made; on ``sort_threads()`` threads)."""

    def piece(start: int) -> np.ndarray:
        rows = order[start: start + step + 1]
        g, s = group[rows], scores[rows]
        return np.flatnonzero((g[1:] == g[:-1]) & (s[1:] == s[:-1])) + start

    found = _on_threads(piece, range(0, max(len(order) - 1, 0), step), threads)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _members(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which values are in ``sorted_set`` (ascending, distinct): np.isin by binary search, which
    also spares a small evaluation the import of numpy.ma that np.isin and np.unique make."""
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values if len(sorted_set) else np.zeros(len(values), dtype=bool)


def _sort_ties(ties: np.ndarray, group: np.ndarray, scores: np.ndarray, doc_ids: Strings,
               order: np.ndarray | None, rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Sort each run of tied scores by doc_id descending (byte order).

    ``ties[i]``: position ties[i]+1 ties position ties[i], within group ``group[i]``; ``order``
    maps positions to indices of ``scores`` (None: the same), and ``rows`` those indices to rows of
    ``doc_ids`` (None: the same). Returns (places, sources): the row to put at each place.
    """
    places = np.concatenate([ties, ties + 1])
    places.sort()
    places = places[np.concatenate([[True], places[1:] != places[:-1]])]  # ties and ties + 1, once each
    pair = np.searchsorted(ties, places, side="right") - 1  # the tie pair each place belongs to
    picked = places if order is None else order[places]
    tied_scores = scores[picked]
    if rows is not None:
        picked = rows[picked]
    if isinstance(doc_ids, list):
        groups, docs = group[pair].tolist(), _gather(doc_ids, picked)
        by_doc = sorted(range(len(places)), key=lambda i: docs[i].encode("utf-8", "surrogateescape"), reverse=True)
        by_doc.sort(key=lambda i: (groups[i], -tied_scores[i]))  # stable: doc_id stays descending within a tie
        return places, picked[np.array(by_doc, dtype=np.int64)]
    import polars as pl

    tied = pl.DataFrame({
        # + 0.0 turns -0.0 into 0.0: C compares them equal, so the sort must too
        "g": polars_numbers(group[pair]), "s": polars_numbers(tied_scores + 0.0),
        "doc_id": _series(_gather(doc_ids, picked)), "row": polars_numbers(picked),
    }).sort(["g", "s", "doc_id"], descending=[False, True, True])
    return places, tied["row"].to_numpy()


def _distinct(values: Strings) -> list[str]:
    if isinstance(values, list):
        return list(dict.fromkeys(values))
    return values.unique().to_pylist() if is_arrow(values) else values.unique().to_list()


def _gather(values: Strings, rows: np.ndarray) -> Strings:
    """The values at ``rows``: a list from a list, else a polars Series. From Arrow, chunk by chunk
    (Arrow's own take would first join every chunk into one copy of the column)."""
    if isinstance(values, list):
        return [values[i] for i in rows.tolist()]
    if not is_arrow(values):
        return values.gather(polars_numbers(rows))
    import polars as pl

    if len(rows) == 0:
        return _series(values.slice(0, 0))
    starts = np.cumsum([0] + [len(chunk) for chunk in values.chunks])
    chunk_of = np.searchsorted(starts, rows, side="right") - 1
    ascending = bool(np.all(chunk_of[1:] >= chunk_of[:-1]))  # already in chunk order (rows found by flatnonzero)
    by_chunk = np.arange(len(rows)) if ascending else np.argsort(chunk_of, kind="stable")
    bounds = np.searchsorted(chunk_of[by_chunk], np.arange(len(starts)))
    parts = [_series(_take(chunk, rows[by_chunk[bounds[i]: bounds[i + 1]]] - starts[i]))
             for i, chunk in enumerate(values.chunks) if bounds[i + 1] > bounds[i]]
    joined = pl.concat(parts)
    return joined if ascending else joined.gather(polars_numbers(np.argsort(by_chunk)))  # back to the order of rows


def _take(array: Any, indices: np.ndarray) -> Any:
    """``array.take(indices)`` of an Arrow array; a string array without nulls is gathered with numpy
    from its buffers (Arrow's take is a pyarrow.compute function, whose import costs ~25 ms)."""
    import pyarrow as pa

    if array.type != pa.string() or array.null_count:
        return array.take(_arrow_ints(indices))
    offsets, data = string_buffers(array)
    first, lengths = offsets[indices], offsets[indices + 1] - offsets[indices]
    new_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.StringArray.from_buffers(len(indices), pa.py_buffer(new_offsets),
                                       pa.py_buffer(data[_row_ranges(first, lengths)]))


def _keep(values: Strings, mask: np.ndarray) -> Strings:
    """The values where ``mask`` is true, in the same form."""
    if isinstance(values, list):
        return [v for v, keep in zip(values, mask.tolist(), strict=True) if keep]
    if is_arrow(values):  # the mask as Arrow bits (pa.array() would import pandas when it is installed)
        import pyarrow as pa

        bits = pa.py_buffer(np.packbits(mask, bitorder="little"))
        return values.filter(pa.Array.from_buffers(pa.bool_(), len(mask), [None, bits]))
    return values.filter(mask)


def _numbers(values: Any, dtype: type[np.number]) -> np.ndarray:
    """A numeric column as a numpy array: a view of Arrow's buffers when it is one chunk."""
    if not is_arrow(values):
        return np.asarray(values, dtype=dtype)
    parts = [_arrow_numbers(chunk, dtype) for chunk in values.chunks]
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _arrow_ints(values: np.ndarray) -> Any:
    """int64 numpy values as an Arrow array sharing their buffer (pa.array() would import pandas)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def _arrow_numbers(array: Any, dtype: type[np.number]) -> np.ndarray:
    """The values of a numeric Arrow array without nulls, as a view of its buffer (pyarrow's own
    to_numpy imports pandas when it is installed: 0.4 s)."""
    size = np.dtype(dtype).itemsize
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * size)


def _series(values: Strings) -> pl.Series:
    """A polars Series of a column held by polars or Arrow (for the few rows that need one)."""
    if not is_arrow(values):
        return values
    import polars as pl

    return pl.Series(ArrowExport(values))


def _match_lists(run: Run, query_ids: list[str], qrels_data: dict[str, Any], judged: _Judgments,
                 row_query: np.ndarray, doc_ids: list[str]) -> np.ndarray:
    """Judgment of every row (as ``_Judgments.of``) and the duplicate check (as ``_judge_rows``), for
    tables held as lists: one dictionary lookup per row."""
    judgments = {(i, d): int(r) for d, r, i in zip(qrels_data["doc_id"], judged.relevance.tolist(),
                                                  judged.qidx.tolist(), strict=True) if i >= 0}
    values: list[int] = []
    seen: set[tuple[int, str]] = set()
    for pair in zip(row_query.tolist(), doc_ids, strict=True):
        if pair in seen:
            raise DuplicateDocumentError(run.source, query_ids[pair[0]], pair[1])
        seen.add(pair)
        value = judgments.get(pair)
        values.append(NOT_IN_POOL if value is None else value if value >= 0 else UNJUDGED)
    return np.array(values, dtype=judged.dtype)


def _rel_dtype(relevance: np.ndarray) -> type[np.integer]:
    """int8 when the judgments allow: ``rel`` is the one array as long as the run that evaluation keeps."""
    return np.int8 if len(relevance) == 0 or (relevance.min() >= -128 and relevance.max() <= 127) else np.int64


def _pair_keys(row_query: np.ndarray, doc_ids: Strings, threads: int | None = None) -> np.ndarray:
    """A 64-bit hash per (query index, document); collisions are possible and always resolved exactly.

    polars hashes the doc id; the query number, multiplied by an odd constant (a one-to-one map of
    64-bit integers), is xor-ed in with numpy: one document in two queries never shares a key. Doc
    ids held by Arrow are hashed a chunk at a time, on up to ``threads`` threads (None:
    ``sort_threads()``; polars and numpy release the GIL), so no polars copy of the whole column is
    made."""
    if not is_arrow(doc_ids):
        return _mixed(row_query, doc_ids, np.empty(len(row_query), dtype=np.uint64))
    keys = np.empty(len(row_query), dtype=np.uint64)
    _over_chunks(doc_ids, lambda chunk, low, high: _mixed(row_query[low:high], _series(chunk), keys[low:high]),
                 threads)
    return keys


def _over_chunks(column: Any, work: Callable[[Any, int, int], object], threads: int | None = None) -> None:
    """``work(chunk, low, high)`` for every chunk of an Arrow column (its rows low..high - 1 of the
    column), the chunks dealt out in turn to up to ``threads`` threads (None: ``sort_threads()``):
    for work whose numpy and polars steps release the GIL."""
    chunks = column.chunks
    bounds = np.cumsum([0] + [len(chunk) for chunk in chunks]).tolist()
    step = min(threads or sort_threads(), max(len(chunks), 1))

    def every_step_th(first: int) -> None:
        for i in range(first, len(chunks), step):
            work(chunks[i], bounds[i], bounds[i + 1])

    _on_threads(every_step_th, range(step))


def _mixed(row_query: np.ndarray, doc_ids: pl.Series, out: np.ndarray) -> np.ndarray:
    """The keys of ``_pair_keys`` for a polars Series of doc ids, written to ``out``: polars' hash
    (read in place) xor the query mix, computed in one array of its own."""
    mix = row_query.astype(np.uint64)
    mix += np.uint64(1)
    mix *= _QUERY_MIX
    return np.bitwise_xor(doc_ids.hash(seed=20240607).to_numpy(), mix, out=out)


_QUERY_MIX = np.uint64(0x9E3779B97F4A7C15)
"""An odd 64-bit constant (2**64 / golden ratio): multiplying by it spreads query numbers over all bits."""


def _index_in(ids: Strings, index_of: dict[str, int]) -> np.ndarray:
    """The index of each id in ``index_of`` (int32), or -1: one hash lookup per row (for Arrow's
    dictionary-encoded ids, one per distinct id)."""
    if isinstance(ids, list):
        return np.array([index_of.get(q, -1) for q in ids], dtype=np.int32)
    if is_arrow(ids):  # each chunk has its own dictionary: one lookup per distinct id of a chunk
        out = np.empty(len(ids), dtype=np.int32)

        def look_up(chunk: Any, low: int, high: int) -> None:  # np.take releases the GIL
            lookup = np.array([index_of.get(q, -1) for q in chunk.dictionary.to_pylist()], dtype=np.int32)
            # np.take, not lookup[codes]: no 64-bit copy of the codes, no temporary result; "clip": with
            # the default "raise", numpy writes to a temporary first (Arrow's codes are always in range)
            np.take(lookup, _arrow_numbers(chunk.indices, np.int32), out=out[low:high], mode="clip")

        _over_chunks(ids, look_up)
        return out
    import polars as pl

    mapping = pl.DataFrame({"query_id": list(index_of), "qidx": list(index_of.values())},
                           schema={"query_id": pl.Utf8, "qidx": pl.Int32})
    joined = pl.DataFrame({"query_id": ids}).join(mapping, on="query_id", how="left", maintain_order="left")
    return joined["qidx"].fill_null(-1).to_numpy()


JUDGE_PART_MIN_ROWS = 1 << 18
"""A run written one query at a time, of at least twice this many rows, has its judgments matched
in parts of whole queries, one per thread (``sort_threads()``): each part's duplicates are among
its own rows. More parts than threads cost more than they spread: polars builds its set of the
judgments' keys once per part."""


def _judge_rows(run: Run, query_ids: list[str], judgments: Callable[[], _Judgments], row_query: np.ndarray,
                doc_ids: Strings, starts: np.ndarray | None) -> np.ndarray:
    """Judgment of every row (``_Judgments.of``), and a document twice in one query refused.

    Both go through the rows' 64-bit (query, document) keys (``_pair_keys``): a run written one
    query at a time (``starts``: its blocks) is taken in parts of whole queries, each part on its
    own thread (hashed, judged, its keys sorted in place for the duplicate check); an interleaved
    run is one part, hashed chunk by chunk on every core. ``judgments()`` is asked for once a part
    is hashed: they may still be in the making on another thread."""
    n = len(row_query)
    cuts = [0, n]
    count = min(sort_threads(), n // JUDGE_PART_MIN_ROWS)
    if starts is not None and count > 1:
        # the first block start at or after each 1/count of the rows
        at = np.searchsorted(starts, np.arange(1, count) * (n // count))
        cuts = sorted({0, n, *starts[at[at < len(starts)]].tolist()})
    parts = list(zip(cuts[:-1], cuts[1:], strict=True))

    import threading

    made: list[np.ndarray] = []
    making = threading.Lock()

    def rel_for(judged: _Judgments) -> np.ndarray:  # one array for all parts, each writing its rows
        with making:
            if not made:
                made.append(np.full(n, NOT_IN_POOL, dtype=judged.dtype))
        return made[0]

    def judge(index: int) -> bool:
        low, high = parts[index]
        queries, docs = row_query[low:high], _slice(doc_ids, low, high)
        keys = _pair_keys(queries, docs, threads=1 if len(parts) > 1 else None)
        judged = judgments()
        judged.of(keys, queries, docs, out=rel_for(judged)[low:high])
        keys.sort()  # in place: the keys are not needed in row order any more
        return bool(np.any(keys[1:] == keys[:-1]))  # a repeated key: a duplicate or a collision

    repeated = _on_threads(judge, range(len(parts)))
    release_freed_memory()  # the parts' keys, freed on the threads
    if any(repeated):
        _reject_duplicates(run, query_ids, row_query, doc_ids)
    return made[0]


def _slice(values: Strings, start: int, stop: int) -> Strings:
    """Rows start..stop - 1 of a column, in the same form (no copy of Arrow or polars data)."""
    if isinstance(values, list):
        return values[start:stop]
    return values.slice(start, stop - start)


class _Judgments:
    """The judgments of the evaluated queries: each qrels row's query (index in ``query_ids``, -1 for
    another query) and value, the ideal ranking of each query (its judged documents, retrieved or
    not, best first) and, ``keyed``, the (query, document) keys (``_pair_keys``) that ``of``
    matches run rows with."""

    def __init__(self, qrels_data: Any, query_ids: list[str], keyed: bool) -> None:
        self.qidx = _index_in(qrels_data["query_id"], {q: i for i, q in enumerate(query_ids)})
        self.relevance = np.asarray(qrels_data["relevance"], dtype=np.int64)
        self.dtype = _rel_dtype(self.relevance)
        judged = (self.qidx >= 0) & (self.relevance >= 0)
        judged_q, judged_rel = self.qidx[judged], self.relevance[judged]
        self.judged_offsets = _offsets(judged_q, len(query_ids))
        self.judged = judged_rel[np.lexsort((-judged_rel, judged_q))]
        if keyed:
            import polars as pl

            self.queries, self.values, self.docs = self.qidx, self.relevance, qrels_data["doc_id"]
            if np.any(self.qidx < 0):  # judgments of queries that are not evaluated
                usable = np.flatnonzero(self.qidx >= 0)
                self.queries, self.values = self.qidx[usable], self.relevance[usable]
                self.docs = self.docs.gather(polars_numbers(usable))
            self.keys = _pair_keys(self.queries, self.docs)
            keys = polars_numbers(self.keys)
            self.key_set = keys.implode()
            self.index = pl.DataFrame({"key": keys, "judgment": polars_numbers(np.arange(len(keys), dtype=np.int64))})

    def of(self, keys: np.ndarray, row_query: np.ndarray, doc_ids: Strings,
           out: np.ndarray | None = None) -> np.ndarray:
        """Judgment of each row: >= 0 judged, UNJUDGED (-2) negative in qrels, NOT_IN_POOL (-1);
        written to ``out`` when given (of type ``dtype``, filled with NOT_IN_POOL).

        The rows whose key is a judgment's (polars' is_in, then the numbers of those rows only:
        nothing as long as the rows), then which judgment, by a join of those few keys; every match
        is verified on the real values, and a collision sends the rows to an exact join on the
        strings. The result is as narrow an integer type as the judgments allow: it is the one array
        as long as the run that evaluation keeps."""
        import polars as pl

        rel = np.full(len(keys), NOT_IN_POOL, dtype=self.dtype) if out is None else out
        if len(keys) == 0:
            return rel
        hit = polars_numbers(keys).is_in(self.key_set).arg_true().to_numpy()  # row numbers (32-bit)
        match = np.zeros(0, dtype=np.int64)
        exact = True
        if len(hit):
            # an inner join, numbered and put back in order after: 7 MB of polars' memory per 3.5M-row
            # part where a left join keeping the hits' order took 17 MB (at the ranking's peak), and faster
            found = pl.DataFrame({"key": polars_numbers(keys[hit]),
                                  "at": polars_numbers(np.arange(len(hit), dtype=np.int64))}).join(
                self.index, on="key", how="inner")
            # every hit has a match (is_in): more matches than hits, two judgments share a key (a collision)
            exact = len(found) == len(hit)
            if exact:
                match = np.empty(len(hit), dtype=np.int64)
                match[found["at"].to_numpy()] = found["judgment"].to_numpy()
                exact = bool((row_query[hit] == self.queries[match]).all()) and bool(
                    (_series(_gather(doc_ids, hit)) == self.docs.gather(polars_numbers(match))).all())
        if not exact:  # a hash collision: redo exactly
            judgments = pl.DataFrame({"q": self.queries, "doc_id": self.docs, "relevance": self.values})
            values = pl.DataFrame({"q": row_query, "doc_id": _series(doc_ids)}).join(
                judgments, on=["q", "doc_id"], how="left", maintain_order="left")["relevance"]
            judged = values.is_not_null().to_numpy()
            hit, raw = np.flatnonzero(judged), values.to_numpy()[judged].astype(np.int64)
        else:
            raw = self.values[match]
        rel[hit] = np.where(raw < 0, UNJUDGED, raw)
        return rel


def _reject_duplicates(run: Run, query_ids: list[str], row_query: np.ndarray, doc_ids: Strings) -> None:
    """A document twice in one query's ranking is an error (trec_eval: "duplicate docs"). Called
    when two rows share a key: a duplicate, or only a hash collision."""
    import polars as pl

    pairs = pl.DataFrame({"q": row_query, "doc_id": _series(doc_ids)})
    duplicated = pairs.is_duplicated()
    if not duplicated.any():
        return  # only a hash collision
    query, doc_id = pairs.filter(duplicated).row(0)
    raise DuplicateDocumentError(run.source, query_ids[query], doc_id)
