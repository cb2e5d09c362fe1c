"""trec_eval's order of the rows of a run: query, score descending, then doc_id descending in byte
order, computed as cheaply as the run's line order allows.

A run written one query at a time with scores descending (nearly every run) is recognised in linear
time and only its groups of tied scores are sorted by doc id, its query blocks moved into place; a
block out of order (a fusion step or a re-ranker writing by doc id) is sorted on its own; a run whose
queries are interleaved is sorted whole, in parts of whole queries on every core. Doc ids are
compared as strings only inside groups of tied scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trec_rag_eval.allocators import release_freed_memory
from trec_rag_eval.core.column_operations import Strings, gather, row_ranges, series
from trec_rag_eval.core.parallel import on_threads
from trec_rag_eval.tables import byte_key
from trec_rag_eval.tables.arrow import polars_numbers
from trec_rag_eval.tables.checked_columns import ArrowIds


@dataclass
class Reorder:
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
            out = out[row_ranges(starts, lengths)]  # the blocks' rows in their new order, in one gather
        return out


def block_starts(row_query: np.ndarray, lengths: list[int] | None = None) -> np.ndarray | None:
    """The first row of each block of rows of one query, or None when the lines are interleaved
    (more blocks than queries: some query comes back after another) or there are no rows. ``lengths``: the rows
    are known to come in blocks of these lengths, each of its own query (``CheckedColumns.blocks``, every row
    kept): the starts are theirs, the blocks of no row left out, and ``row_query`` is not read."""
    if len(row_query) == 0:
        return None
    if lengths is not None:
        sizes = np.array(lengths, dtype=np.int64)
        if not sizes.all():
            sizes = sizes[sizes > 0]
        ends = sizes.cumsum()
        if len(ends) and ends[-1] == len(row_query):  # else lengths not of these rows: found from the rows below
            return ends - sizes  # type: ignore[no-any-return]
    changes = row_query[1:] != row_query[:-1]
    if np.count_nonzero(changes) + 1 > int(row_query.max()) + 1:
        return None  # more blocks than query numbers
    starts = np.concatenate(([0], changes.nonzero()[0] + 1))  # no copy of ``changes`` with a first True
    block_query = row_query[starts]
    block_query.sort()
    return None if (block_query[1:] == block_query[:-1]).any() else starts


def block_lengths(starts: np.ndarray, n: int) -> np.ndarray:
    """The number of rows (int64) of each block of ``n`` rows, from where each starts (``block_starts``):
    three numpy steps where ``np.diff(np.append(...))`` takes seven, through Python."""
    ends = np.empty(len(starts), dtype=np.int64)
    ends[:-1] = starts[1:]
    ends[-1:] = n
    return ends - starts  # type: ignore[no-any-return]


def bincount(values: np.ndarray, minlength: int = 0, starts: np.ndarray | None = None,
             step: int = 1 << 20) -> np.ndarray:
    """``np.bincount`` (int64) of a column as long as the run, a piece at a time: bincount converts
    its input to 64-bit integers, a copy twice the size of an int32 column otherwise made at once.
    ``starts``: the blocks of a column where each value makes one block (``block_starts``), whose
    lengths are the counts."""
    if starts is not None and len(starts):
        out = np.zeros(max(minlength, int(values[starts].max()) + 1), dtype=np.int64)
        out[values[starts]] = block_lengths(starts, len(values))
        return out
    if len(values) <= step:
        return np.bincount(values, minlength=minlength).astype(np.int64)
    out = np.zeros(max(minlength, int(values.max()) + 1), dtype=np.int64)
    for start in range(0, len(values), step):
        out += np.bincount(values[start: start + step], minlength=len(out))
    return out


def ranking_order(row_query: np.ndarray, scores: np.ndarray, doc_ids: Strings,
                  starts: np.ndarray | None, ids_descending: bool = True) -> Reorder:
    """How to put rows in trec_eval order: query, score descending, doc_id descending (ascending when
    ``ids_descending`` is False: trec_eval's order for preference judgments).

    Runs are nearly always written one query at a time with scores descending; that is checked
    in linear time (``starts``: the query blocks, ``block_starts``), and then only the groups of
    tied scores are sorted by doc_id and the query blocks moved into place. A block whose lines are
    out of order (a fusion step or a re-ranker writing by doc id) is sorted on its own, so a few
    such blocks cost only their own rows. Lines of queries interleaved through the file (``starts``
    None) are sorted in full (``_sorted_rows``).
    """
    reorder = Reorder()
    n = len(scores)
    if n == 0:
        return reorder
    if n <= SMALL_SORT_ROWS and not np.isnan(scores).any():
        reorder.permutation = _small_order(row_query, scores, doc_ids, ids_descending, starts)
        return reorder
    if starts is None:
        reorder.permutation = _sorted_rows(row_query, scores, doc_ids, ids_descending=ids_descending)
        return reorder
    block_query = row_query[starts]
    lengths = block_lengths(starts, n)
    compared = np.empty(n, dtype=bool)  # one array for both comparisons of neighbours, and a last False
    compared[-1] = False
    np.greater(scores[1:], scores[:-1], out=compared[:-1])  # a higher score right after a lower one
    compared[starts[1:] - 1] = False  # across two blocks: not a rise
    unsorted = np.logical_or.reduceat(compared, starts)  # the blocks with a rise inside
    places, sources = [], []
    ties = np.flatnonzero(np.equal(scores[1:], scores[:-1], out=compared[:-1]))
    del compared
    ties = ties[~_members(ties + 1, starts)]  # equal scores of two different queries do not tie
    tie_block = np.searchsorted(starts, ties, side="right") - 1
    keep = ~unsorted[tie_block]  # ties inside an unsorted block are found once it is sorted
    if keep.any():
        tied_places, tied_rows = _sort_ties(ties[keep], tie_block[keep], scores, doc_ids, None,
                                            ids_descending=ids_descending)
        places.append(tied_places)
        sources.append(tied_rows)
    if unsorted.any():
        rows = row_ranges(starts[unsorted], lengths[unsorted])
        block = np.repeat(np.arange(np.count_nonzero(unsorted)), lengths[unsorted])
        places.append(rows)
        # one thread: a grouped run is put in order beside the judgment lookup, which uses the others
        sources.append(_sorted_rows(block, scores[rows], doc_ids, rows, threads=1, lengths=lengths[unsorted],
                                    ids_descending=ids_descending))
    if places:
        reorder.places, reorder.sources = np.concatenate(places), np.concatenate(sources)
    if np.any(block_query[1:] < block_query[:-1]):
        by_query = np.argsort(block_query, kind="stable")
        reorder.blocks = (starts[by_query], lengths[by_query])
    return reorder


SMALL_SORT_ROWS = 1 << 14
"""Up to this many rows (small files, dicts, small frames) the order is found by two sorts of every row
(``_small_order``): fewer numpy calls than recognising blocks and sorting the out-of-order ones, whose fixed
cost (some thirty calls) is most of a small evaluation's ranking."""


def _small_order(row_query: np.ndarray, scores: np.ndarray, doc_ids: Strings, ids_descending: bool = True,
                 starts: np.ndarray | None = None) -> np.ndarray:
    """The rows in trec_eval order (query, score descending, doc_id descending, or ascending when not
    ``ids_descending``) of a small run without NaN scores: a sort of the scores, reversed, then a stable sort
    by query, then each run of tied scores sorted by doc id (``_sort_ties``). A run whose queries come in blocks
    of one length (``starts``: a run cut at one depth, as a dict of dicts or a file of one query at a time
    gives it) has each block sorted as a row of one matrix, then the blocks put in query order: half the
    work of sorting every row together. Without NaN the order is fully determined, so it is the order
    ``ranking_order`` gives by its other ways (tested); a NaN, which compares with nothing, takes those."""
    n = len(scores)
    if starts is not None and len(starts) > 1 and n % len(starts) == 0 and \
            bool((starts[1:] - starts[:-1] == n // len(starts)).all()):
        width = n // len(starts)
        order = np.negative(scores).reshape(len(starts), width).argsort(axis=1)  # best first; ties sorted below
        order += np.arange(0, n, width)[:, None]
        order = order[row_query[starts].argsort()].ravel()
    else:
        order = scores.argsort()[::-1]  # the order among equal scores does not matter: ties are sorted below
        queries = row_query[order]
        if len(queries) and queries.max() < 1 << 16:  # numpy's stable sort of 16-bit integers is a radix sort
            queries = queries.astype(np.uint16)
        order = order[queries.argsort(kind="stable")]
    group, ordered = row_query[order], scores[order]
    ties = ((group[1:] == group[:-1]) & (ordered[1:] == ordered[:-1])).nonzero()[0]
    if len(ties):
        places, sources = _sort_ties(ties, group[ties], scores, doc_ids, order, ids_descending=ids_descending)
        order[places] = sources
    return order


def block_tops(scores: np.ndarray, doc_ids: Strings, starts: np.ndarray, depth: int,
               ids_descending: bool = True) -> np.ndarray | None:
    """The rows of each query block's first ``depth`` in trec_eval's order (score descending, then doc_id
    descending, or ascending when not ``ids_descending``), a matrix of one block a row, the blocks in their order
    among the rows; None unless every block has one length, longer than ``depth``, and no score is NaN (a run cut
    at one depth, as a dict of dicts gives it, of at most ``SMALL_SORT_ROWS`` rows): then ``ranking_order``. The
    blocks are sorted as the rows of one matrix, as ``_small_order`` sorts them, and runs of tied scores by doc id
    (``_sort_ties``); the rows below ``depth`` are left out without being put in their places."""
    n, count = len(scores), len(starts)
    if not count or n > SMALL_SORT_ROWS or n % count or n // count <= depth:
        return None
    width = n // count
    if not (starts == np.arange(0, n, width)).all() or np.isnan(scores).any():  # count starts: arange's length
        return None
    negated = np.negative(scores)
    order = negated.reshape(count, width).argsort(axis=1)  # best first
    order += np.arange(0, n, width)[:, None]
    ranked = negated.take(order)  # take: a copy per value, where take_along_axis's index arrays cost ten times more
    tied = ranked[:, 1:] == ranked[:, :-1]
    if tied.any():
        block, column = np.nonzero(tied)
        flat = order.ravel()
        places, sources = _sort_ties(block * width + column, block, scores, doc_ids, flat,
                                     ids_descending=ids_descending)
        flat[places] = sources
    return np.ascontiguousarray(order[:, :depth])


def _sorted_rows(group: np.ndarray, scores: np.ndarray, doc_ids: Strings,
                 rows: np.ndarray | None = None, threads: int | None = None,
                 lengths: np.ndarray | None = None, ids_descending: bool = True) -> np.ndarray:
    """Rows in order of group (ascending), score descending, doc_id descending (or ascending).

    ``group`` and ``scores`` are given for some rows (``rows``; None: all rows, in order). The
    scores are sorted once; then one integer per row, group * n + the row's rank by score, is
    sorted in place, which brings the groups together with their rows in score order. Both are
    numpy's vectorised sorts (AVX-512 where the CPU has it); doc ids are compared only inside ties.
    ``lengths``: the groups are already together, 0, 1, 2, ... one after the other, this many rows
    each; groups of ``BLOCK_SORT_MIN_ROWS`` rows or more on average are then sorted each on its own.
    """
    if lengths is not None and len(lengths) and len(scores) >= BLOCK_SORT_MIN_ROWS * len(lengths):
        order = _order_within_blocks(scores, lengths)
    else:
        order = _order_by_group_then_score(group, scores, threads)
    ties = _tied_positions(order, group, scores, threads)
    if len(ties):
        places, sources = _sort_ties(ties, group[order[ties]], scores, doc_ids, order, rows, ids_descending)
    if rows is not None:
        order = rows[order]
    if len(ties):
        order[places] = sources
    return order


BLOCK_SORT_MIN_ROWS = 64
"""Groups (query blocks out of score order) of at least this many rows on average are sorted one by one:
one small argsort per block costs less than sorting all their rows together, then by block (700 blocks
of 1,000 rows: 10 ms against 44), until the loop's own cost per block takes over (blocks of 10 rows)."""


def _order_within_blocks(scores: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Positions (int32) of consecutive blocks of ``lengths`` rows, each block's in score order,
    best first (equal scores in any order): each block's ascending order reversed, as
    ``_order_by_group_then_score`` takes it, so a NaN (kept by ``Run.from_dict``) comes first either way.

    Blocks of one length (a run cut at one depth: nearly every run) are sorted as the rows of one matrix, in
    one call (10,000 blocks of 100 rows: ~25 ms, against ~130 ms one block at a time); a length shared by
    fewer than ``MATRIX_MIN_BLOCKS`` blocks, one block at a time."""
    out = np.empty(len(scores), dtype=np.int32)
    starts = np.cumsum(lengths) - lengths
    alone = np.ones(len(lengths), dtype=bool)
    counts = np.bincount(lengths)
    for length in np.flatnonzero(counts >= MATRIX_MIN_BLOCKS).tolist():
        chosen = np.flatnonzero(lengths == length)
        alone[chosen] = False
        rows = starts[chosen][:, None] + np.arange(length)
        # ascending order reversed, row by row; the same positions a block gets alone
        out[rows] = scores[rows].argsort(axis=1)[:, ::-1] + starts[chosen][:, None]
    for start, length in zip(starts[alone].tolist(), lengths[alone].tolist(), strict=True):
        end = start + length
        out[start:end] = scores[start:end].argsort()[::-1]  # the method: numpy's function adds two Python calls
        out[start:end] += start
    return out


MATRIX_MIN_BLOCKS = 8
"""Blocks of one length sorted together as a matrix from this many on (``_order_within_blocks``)."""


SORT_PART_ROWS = 1 << 19
"""Rows of an interleaved run are sorted in parts of about this many (whole groups each), on
``sort_threads()`` threads: numpy's sorts and gathers release the GIL, and the temporary arrays
of a part are a fraction of the run's."""


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
    counts = bincount(group)
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

    on_threads(part, range(len(ranges)), threads)
    release_freed_memory()  # the parts' temporary arrays, freed on the threads
    return out


def _tied_positions(order: np.ndarray, group: np.ndarray, scores: np.ndarray, threads: int | None = None,
                    step: int = 1 << 20) -> np.ndarray:
    """Positions p of ``order`` whose row has the group and score of the row at p + 1 (in pieces,
    so no array of the sorted scores as long as the run is made; on ``sort_threads()`` threads)."""

    def piece(start: int) -> np.ndarray:
        rows = order[start: start + step + 1]
        g, s = group[rows], scores[rows]
        return np.flatnonzero((g[1:] == g[:-1]) & (s[1:] == s[:-1])) + start

    found = on_threads(piece, range(0, max(len(order) - 1, 0), step), threads)
    return np.concatenate(found) if found else np.zeros(0, dtype=np.int64)


def _members(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """Which values are in ``sorted_set`` (ascending, distinct): np.isin by binary search, which
    also spares a small evaluation the import of numpy.ma that np.isin and np.unique make."""
    at = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
    return sorted_set[at] == values if len(sorted_set) else np.zeros(len(values), dtype=bool)


def _sort_ties(ties: np.ndarray, group: np.ndarray, scores: np.ndarray, doc_ids: Strings,
               order: np.ndarray | None, rows: np.ndarray | None = None,
               ids_descending: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Sort each run of tied scores by doc_id descending (byte order; ascending if not ``ids_descending``).

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
    if isinstance(doc_ids, (list, ArrowIds)):  # the tied rows' ids as Python strings
        groups, docs = group[pair].tolist(), gather(doc_ids, picked)
        by_doc = sorted(range(len(places)), key=lambda i: byte_key(docs[i]),
                        reverse=ids_descending)
        by_doc.sort(key=lambda i: (groups[i], -tied_scores[i]))  # stable: doc_id stays descending within a tie
        return places, picked[np.array(by_doc, dtype=np.int64)]
    import polars as pl

    tied = pl.DataFrame({
        # + 0.0 turns -0.0 into 0.0: C compares them equal, so the sort must too
        "g": polars_numbers(group[pair]), "s": polars_numbers(tied_scores + 0.0),
        "doc_id": series(gather(doc_ids, picked)), "row": polars_numbers(picked),
    }).sort(["g", "s", "doc_id"], descending=[False, True, ids_descending])
    return places, tied["row"].to_numpy()
