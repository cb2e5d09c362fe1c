"""Per-evaluation derived arrays shared by the kernels, computed once and cached.

Everything here works on all queries at once, and per-query results are gathered with
``np.bincount``, which adds the rows of a query in rank order, the same order as trec_eval's loops,
so sums round exactly as trec_eval's do.

A run of 7,000 queries x 1,000 documents has 7M rows, of which a few hundred thousand have a
judgment at all: the rest are documents outside the pool, which no measure but a few counts
(num_ret, unj, rbp_resid, relstring). So the kernels read ``pooled``, the rows with a qrels entry
(found in one pass over the int8 judgments, shared by every measure and relevance level), with
their query and rank; nothing as long as the run is built for them. A term a row outside the pool
would add is 0, and adding 0.0 to a running sum leaves it unchanged, so sums over the pooled rows
are bit for bit the sums over every row. ``qidx`` and ``pos`` (one int64 per row) remain for the
few measures that need every row (ERR, the RAG ideal of retrieved documents, a gain given to
documents outside the pool).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import NamedTuple

import numpy as np

from trec_rag_eval.core.matching import NOT_IN_POOL
from trec_rag_eval.core.ranking import RankedQueries


class Rows(NamedTuple):
    """Some ranked rows (ascending), with their query, 1-based rank and judgment; the rows of query i
    are ``offsets[i]:offsets[i+1]`` of these arrays."""

    rows: np.ndarray
    q: np.ndarray
    pos: np.ndarray
    rel: np.ndarray
    offsets: np.ndarray

    def where(self, mask: np.ndarray) -> Rows:
        """The rows where ``mask`` holds."""
        q = self.q[mask]
        offsets = q.searchsorted(np.arange(len(self.offsets)))  # where each query's rows begin among these
        return Rows(self.rows[mask], q, self.pos[mask], self.rel[mask], offsets)




class Context:
    """Views of ``RankedQueries`` at one relevance level (``-l``)."""

    def __init__(self, ranked: RankedQueries, relevance_level: int = 1, options: dict | None = None) -> None:
        self.ranked = ranked
        self.options = options or {}
        self.level = relevance_level
        self.Q = len(ranked.query_ids)
        self.rel = ranked.rel
        self.offsets = ranked.offsets
        self._cnt_at: dict[object, np.ndarray] = {}

    def reset_missing(self, parameterised: bool) -> np.ndarray:
        """Queries missing from the run whose value is reset to 0 (or ''): all of them, except, with
        trec_eval's leftovers asked for (``options["leftovers"]``, ``--format trec -c``), those of a
        parameterised utility, relstring or rbp_resid. trec_eval 10 clears these measures for its
        dummy ranking by their bare names, so ``utility_1,-1,0,0`` keeps the dummy's -1."""
        if parameterised and self.options.get("leftovers"):
            return np.zeros(self.Q, dtype=bool)
        return self.ranked.missing

    # -- rows -----------------------------------------------------------------------------------
    @cached_property
    def qidx(self) -> np.ndarray:
        """Query index of every ranked row."""
        return np.arange(self.Q, dtype=np.int64).repeat(self.offsets[1:] - self.offsets[:-1])

    @cached_property
    def pos(self) -> np.ndarray:
        """1-based rank of every row within its query."""
        return np.arange(len(self.rel), dtype=np.int64) - self.offsets[:-1][self.qidx] + 1

    @cached_property
    def pooled(self) -> Rows:
        """The rows that may be judged or relevant at this level: those with a qrels entry (judged or
        UNJUDGED), unless the level is negative (then every row: outside the pool is -1)."""
        return self.candidates(every_row=self.level <= NOT_IN_POOL)

    def query_offsets(self, query: np.ndarray) -> np.ndarray:
        """Where each query's rows start and end (``offsets[i]:offsets[i + 1]``) among rows grouped by query,
        from each row's query number (ascending): where each query number would be inserted, as ``candidates``
        finds the pooled rows' offsets; a binary search per query, not a count over every row."""
        return query.searchsorted(np.arange(self.Q + 1))  # type: ignore[no-any-return]

    def candidates(self, every_row: bool = False) -> Rows:
        """The rows with a qrels entry (``every_row``: all rows), shared by all contexts of the ranking."""
        key = ("rows", every_row)
        cache = self.ranked.cache
        if key not in cache:
            if every_row:
                rows = np.arange(len(self.rel), dtype=np.int64)
                cache[key] = Rows(rows, self.qidx, self.pos, self.rel, self.offsets.astype(np.int64))
            else:
                rows = (self.rel != NOT_IN_POOL).nonzero()[0]  # numpy's functions reach these methods through Python
                offsets = rows.searchsorted(self.offsets).astype(np.int64)
                q = np.arange(self.Q, dtype=np.int64).repeat(offsets[1:] - offsets[:-1])
                cache[key] = Rows(rows, q, rows - self.offsets[q] + 1, self.rel[rows], offsets)
        found = cache[key]
        assert isinstance(found, Rows)
        return found

    @cached_property
    def relevant_mask(self) -> np.ndarray:
        """Which pooled rows are relevant at this level."""
        return self.pooled.rel >= self.level

    @cached_property
    def rel_rows(self) -> np.ndarray:
        """Row numbers of the relevant retrieved documents, in rank order."""
        return self.pooled.rows[self.relevant_mask]

    # -- the relevant rows alone: most measures need nothing else, so nothing per row is built --
    @cached_property
    def rel_q(self) -> np.ndarray:
        """Query of each relevant retrieved row."""
        return self.pooled.q[self.relevant_mask]

    @cached_property
    def nonrel_mask(self) -> np.ndarray:
        """Which pooled rows are judged non-relevant (0 <= judgment < level)."""
        rel = self.pooled.rel
        return (rel >= 0) & (rel < self.level)

    def judged_count(self, k: int | None = None) -> np.ndarray:
        """Per query, the retrieved documents with a judgment (>= 0), in the top k when given."""
        pooled = self.pooled
        mask = pooled.rel >= 0
        if k is not None:
            mask &= pooled.pos <= k
        return np.bincount(pooled.q[mask], minlength=self.Q).astype(np.int64)

    @cached_property
    def rel_pos(self) -> np.ndarray:
        """Rank (1-based) of each relevant retrieved row."""
        return self.pooled.pos[self.relevant_mask]

    @cached_property
    def rel_cnt(self) -> np.ndarray:
        """cnt(rank) at each relevant retrieved row: 1 for the first relevant row of its query, ..."""
        first = self.query_offsets(self.rel_q)[:-1]
        return np.arange(len(self.rel_rows)) - first[self.rel_q] + 1

    def query_of(self, rows: np.ndarray) -> np.ndarray:
        """Query index of the given rows (sorted or not), without building one per row."""
        if "qidx" in self.__dict__:
            return self.qidx[rows]
        return self.offsets.searchsorted(rows, side="right") - 1  # type: ignore[no-any-return]

    # -- per query ------------------------------------------------------------------------------
    @cached_property
    def N(self) -> np.ndarray:
        """num_ret: ranked documents per query after -M and -J."""
        return (self.offsets[1:] - self.offsets[:-1]).astype(np.int64)  # type: ignore[no-any-return]

    @cached_property
    def judged_qidx(self) -> np.ndarray:
        judged = self.ranked.judged_offsets
        return np.arange(self.Q, dtype=np.int64).repeat(judged[1:] - judged[:-1])

    @cached_property
    def R(self) -> np.ndarray:
        """num_rel: judged documents with relevance >= level, retrieved or not."""
        return self.per_query_count(self.judged_qidx, self.ranked.judged >= self.level)

    @cached_property
    def nonrel_judged(self) -> np.ndarray:
        """Judged non-relevant documents in the qrels (0 <= relevance < level)."""
        judged = self.ranked.judged
        return self.per_query_count(self.judged_qidx, (judged >= 0) & (judged < self.level))

    @cached_property
    def rel_ret(self) -> np.ndarray:
        """num_rel_ret: relevant documents retrieved."""
        return np.bincount(self.rel_q, minlength=self.Q).astype(np.int64)

    @cached_property
    def max_level(self) -> np.ndarray:
        """Largest judged relevance per query (0 when nothing is judged)."""
        out = np.zeros(self.Q, dtype=np.int64)
        starts = self.ranked.judged_offsets
        has = starts[1:] > starts[:-1]
        out[has] = self.ranked.judged[starts[:-1][has]]
        return out

    # -- helpers --------------------------------------------------------------------------------
    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per-query number of rows where mask holds."""
        return np.bincount(self.qidx[mask], minlength=self.Q).astype(np.int64)

    def per_query_count(self, qidx: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return np.bincount(qidx[mask], minlength=self.Q).astype(np.int64)

    def sum_by_rank(self, table: np.ndarray, select: Callable[[np.ndarray], np.ndarray],
                    block_rows: int = 1 << 20) -> np.ndarray:
        """Per query, the sum in rank order of ``table[rank - 1]`` over the rows whose judgments
        ``select`` keeps (a boolean mask of a slice of ``rel``): bit for bit the sum over the kept rows
        alone (the others add 0.0), a block of whole queries at a time, never an array as long as the
        run. A block whose queries all have the same length (a run cut at one depth) is a matrix, one
        query a row, summed left to right by ``cumsum`` (always sequential, as trec_eval's loop)."""
        out = np.zeros(self.Q)
        offsets = self.offsets
        first = 0
        while first < self.Q:
            last = int(np.searchsorted(offsets, offsets[first] + block_rows, side="right")) - 1
            last = min(max(last, first + 1), self.Q)
            start, stop = int(offsets[first]), int(offsets[last])
            lengths = np.diff(offsets[first:last + 1])
            keep = select(self.rel[start:stop])
            width = int(lengths[0])
            if width and (lengths == width).all():
                grid = np.where(keep.reshape(-1, width), table[:width], 0.0)
                out[first:last] = np.cumsum(grid, axis=1)[:, -1]
            elif stop > start:
                local = np.repeat(np.arange(last - first, dtype=np.int64), lengths)
                rank = np.arange(stop - start, dtype=np.int64) - (offsets[first:last] - start)[local]
                weights = np.where(keep, table[rank], 0.0)
                out[first:last] = np.bincount(local, weights=weights, minlength=last - first)
            first = last
        return out

    def sum(self, values: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
        """Per-query sum of ``values`` over ``rows`` (all rows when None), added in rank order."""
        qidx = self.qidx if rows is None else self.query_of(rows)
        if len(qidx) == 0:
            return np.zeros(self.Q)
        return np.bincount(qidx, weights=values, minlength=self.Q)

    def cnt_at(self, k: int | np.ndarray) -> np.ndarray:
        """Relevant documents in the top k (k may differ per query); cnt(N) when k > N. For one k
        for all queries, kept: P, R, F1 and HitRate at the same k ask for the same counts."""
        if np.isscalar(k):
            if k not in self._cnt_at:
                self._cnt_at[k] = np.bincount(self.rel_q[self.rel_pos <= k], minlength=self.Q).astype(np.int64)
            return self._cnt_at[k]
        limit = np.asarray(k)[self.rel_q]
        return np.bincount(self.rel_q[self.rel_pos <= limit], minlength=self.Q).astype(np.int64)


def segment_cumsum_int(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at each segment; exact for integers."""
    total = np.cumsum(values)
    if len(total) == 0:
        return total
    starts = offsets[:-1]
    lengths = np.diff(offsets)
    before = np.where(starts > 0, total[np.maximum(starts - 1, 0)], 0)
    return total - np.repeat(before, lengths)


def segment_cumsum_float(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at each segment, added left to right within the segment.

    Built on a padded (segments x longest) matrix so each running sum is the plain sequential
    sum trec_eval computes, not a difference of large prefix sums.
    """
    lengths = np.diff(offsets)
    if len(values) == 0:
        return values.astype(np.float64)
    width = int(lengths.max())
    grid = np.zeros((len(lengths), width))
    rows = np.repeat(np.arange(len(lengths)), lengths)
    cols = np.arange(len(values)) - np.repeat(offsets[:-1], lengths)
    grid[rows, cols] = values
    np.cumsum(grid, axis=1, out=grid)
    return grid[rows, cols]


def segment_suffix_max(values: np.ndarray, segments: np.ndarray, num_segments: int) -> np.ndarray:
    """For each element, the maximum of it and every later element of its segment (exact).

    ``segments`` must be non-decreasing. Values are replaced by their exact rank among all
    values, so the running maximum works on integers and gives back the original floats.
    """
    if len(values) == 0:
        return values.astype(np.float64)
    uniques, ranks = np.unique(values, return_inverse=True)
    width = len(uniques)
    keys = ranks.astype(np.int64) + (num_segments - 1 - segments.astype(np.int64)) * width
    running = np.maximum.accumulate(keys[::-1])[::-1]
    return uniques[running - (num_segments - 1 - segments.astype(np.int64)) * width]


def ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, and 0 where the denominator is 0 (trec_eval's convention)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    out = np.zeros(np.broadcast(numerator, denominator).shape)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out
