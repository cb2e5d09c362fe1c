"""Judgment matching: the relevance value of every ranked row, from the qrels of its query, and the
refusal of a document listed twice in one query's ranking.

A row's value is its qrels value when >= 0, ``UNJUDGED`` when the qrels give a negative value (in
the pool, not judged), ``NOT_IN_POOL`` when the qrels do not mention the document for that query.
Small tables (lists) are matched with one dictionary lookup per row, in C, then numpy. Larger ones go through a 64-bit
hash of each (query, document) pair: judgments are found by the rows' keys, duplicates by sorting
them; every match is verified on the strings and every repeated key on the real pairs, so a hash
collision never changes a value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import cached_property
from itertools import chain, repeat
from operator import sub
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.allocators import release_freed_memory
from trec_rag_eval.core import parallel
from trec_rag_eval.core.column_operations import (
    Strings,
    doc_numbers,
    gather,
    id_list,
    over_chunks,
    query_offsets,
    row_index,
    series,
    slice_rows,
)
from trec_rag_eval.errors import DuplicateDocumentError
from trec_rag_eval.tables import Run
from trec_rag_eval.tables.arrow import is_arrow, polars_numbers
from trec_rag_eval.tables.checked_columns import ArrowIds

if TYPE_CHECKING:
    import polars as pl

NOT_IN_POOL = -1
"""The value of a ranked document the qrels do not mention for its query (trec_eval's "not in the pool")."""
UNJUDGED = -2
"""The value of a ranked document the qrels give a negative value (trec_eval's "in the pool, not judged")."""


def match_lists(run: Run, query_ids: list[str], judged: Judgments, row_query: np.ndarray, doc_ids: Strings,
                starts: np.ndarray | None, distinct: bool = False) -> np.ndarray:
    """Judgment of every row (as ``Judgments.of``) and the duplicate check (as ``judge_rows``), for
    tables held as lists: each row's document numbered by one dict of the judged documents
    (``Judgments.numbered``) in C-level iteration (``map(dict.get, ...)``), then each (query, number)
    pair's value gathered from one table by numpy, no Python step per row; judgments of too many documents for
    that table, or given as dicts that serve as they are (``Judgments.given_dicts``), each row in its query's
    dict (``Judgments.by_query``). ``starts``: the query blocks of a
    run written one query at a time (``ordering.block_starts``), whose repeats are looked for block by
    block; ``distinct``: the rows are known to hold each pair once (checked when the run was made from
    an in-memory shape: ``tables.CheckedColumns``), so no repeat is looked for. ``doc_ids``: a list, or a small
    frame's ``ArrowIds``, whose rows become strings only where a dict is asked row by row."""
    n = len(doc_ids)
    if n == 0:
        return np.zeros(0, dtype=judged.dtype)
    if not distinct:
        doc_ids = id_list(doc_ids)
        refuse_repeats(run, query_ids, row_query, doc_ids, starts)
    numbered = None if judged.given_dicts is not None else judged.numbered
    if numbered is not None:
        numbers, table = numbered
        return table[row_query.astype(np.int64) * (len(numbers) + 1)  # type: ignore[no-any-return]
                     + _document_numbers(numbers, doc_ids)]
    doc_ids = id_list(doc_ids)
    # too many judged documents for one table: each row asks its own query's dict, small dicts that stay in the
    # cache where one dict of every judged document would miss it at each lookup
    per_query = judged.by_query
    row_dicts: Iterable[dict[str, int]]
    if starts is not None:
        bounds = [*starts.tolist(), n]  # a few blocks: their lengths by Python's subtraction, not numpy's calls
        lengths = list(map(sub, bounds[1:], bounds[:-1]))
        row_dicts = chain.from_iterable(map(repeat, [per_query[q] for q in row_query[starts].tolist()], lengths))
    else:
        row_dicts = map(per_query.__getitem__, row_query.tolist())
    if judged.dtype != np.int8:
        return np.fromiter(list(map(dict.get, row_dicts, doc_ids, repeat(NOT_IN_POOL))), dtype=judged.dtype, count=n)
    # grades of 0 to 127 (int8, none negative in a query's dict): a document not in its query's dict is given 255,
    # which int8 reads as NOT_IN_POOL (-1)
    return _small_ints(list(map(dict.get, row_dicts, doc_ids, repeat(0xFF))), np.int8)


def _document_numbers(numbers: dict[str, int], doc_ids: Strings) -> np.ndarray:
    """Each row's number among the judged documents (``Judgments.numbered``; ``len(numbers)``, the column of the table
    that holds NOT_IN_POOL, for a document judged in no evaluated query): a list of Python ints, then numpy's
    (faster than np.fromiter over the map itself). Ids Arrow holds with their dictionary (``ArrowIds.numbered``: a
    small frame's) have each distinct id looked up once and the rows' numbers gathered by their codes, no string
    made for each row; any other, each row's id looked up, in C."""
    coded = doc_ids.numbered() if isinstance(doc_ids, ArrowIds) else None
    if coded is not None:
        distinct, codes = coded
        return _small_ints(list(map(numbers.get, distinct, repeat(len(numbers)))), np.int64)[codes]
    return _small_ints(list(map(numbers.get, id_list(doc_ids), repeat(len(numbers)))), np.int64)


def _small_ints(values: list[Any], dtype: type[np.integer]) -> np.ndarray:
    """A list of integers as an array of ``dtype``: through a ``bytearray`` when each is an int of 0 to 255 (one C pass,
    ~3 ns a value, where ``np.fromiter`` takes ~14), else (a number above 255, a grade given as a float) by
    ``np.fromiter``. Either way, int8 reads 255 as -1."""
    try:
        packed = np.frombuffer(bytearray(values), dtype=np.uint8)
    except (TypeError, ValueError):  # not an int of 0 to 255
        packed = np.fromiter(values, dtype=np.int64, count=len(values))
    return packed.astype(dtype)


def refuse_repeats(run: Run, query_ids: list[str], row_query: np.ndarray, doc_ids: list[str],
                   starts: np.ndarray | None) -> None:
    """A document listed twice in one query's rows refused (``DuplicateDocumentError``, the first repeat named),
    for rows held as lists: told by the sizes of sets, each query block's (``starts``) or every pair's."""
    n = len(doc_ids)
    if starts is not None:
        bounds = np.append(starts, n).tolist()
        repeated = any(len(set(doc_ids[a:b])) < b - a for a, b in zip(bounds[:-1], bounds[1:], strict=True))
    else:
        repeated = len(set(zip(row_query.tolist(), doc_ids, strict=True))) < n
    if repeated:
        seen: set[tuple[int, str]] = set()
        for pair in zip(row_query.tolist(), doc_ids, strict=True):  # the first repeat, to name it
            if pair in seen:
                raise DuplicateDocumentError(run.source, query_ids[pair[0]], pair[1])
            seen.add(pair)


DENSE_TABLE_MAX_BYTES = 1 << 23
"""Judgments whose (query, document number) table takes at most this many bytes are looked up in it, one
gather for all rows (``Judgments.numbered``); above, each row in its query's dict (``Judgments.by_query``), as
judgments given as dicts are (``Judgments.given_dicts``) whatever their size."""


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
    over_chunks(doc_ids, lambda chunk, low, high: _mixed(row_query[low:high], series(chunk), keys[low:high]),
                threads)
    return keys


def _mixed(row_query: np.ndarray, doc_ids: pl.Series, out: np.ndarray) -> np.ndarray:
    """The keys of ``_pair_keys`` for a polars Series of doc ids, written to ``out``: polars' hash
    (read in place) xor the query mix, computed in one array of its own."""
    mix = row_query.astype(np.uint64)
    mix += np.uint64(1)
    mix *= _QUERY_MIX
    return np.bitwise_xor(doc_ids.hash(seed=20240607).to_numpy(), mix, out=out)


_QUERY_MIX = np.uint64(0x9E3779B97F4A7C15)
"""An odd 64-bit constant (2**64 / golden ratio): multiplying by it spreads query numbers over all bits."""


JUDGE_PART_MIN_ROWS = 1 << 18
"""A run written one query at a time, of at least twice this many rows, has its judgments matched
in parts of whole queries, one per thread (``sort_threads()``): each part's duplicates are among
its own rows. More parts than threads cost more than they spread: polars builds its set of the
judgments' keys once per part."""


def judge_rows(run: Run, query_ids: list[str], judgments: Callable[[], Judgments], row_query: np.ndarray,
               doc_ids: Strings, starts: np.ndarray | None) -> np.ndarray:
    """Judgment of every row (``Judgments.of``), and a document twice in one query refused.

    Both go through the rows' 64-bit (query, document) keys (``_pair_keys``): a run written one
    query at a time (``starts``: its blocks) is taken in parts of whole queries, each part on its
    own thread (hashed, judged, its keys sorted in place for the duplicate check); an interleaved
    run is one part, hashed chunk by chunk on every core. ``judgments()`` is asked for once a part
    is hashed: they may still be in the making on another thread."""
    n = len(row_query)
    cuts = [0, n]
    count = min(parallel.sort_threads(), n // JUDGE_PART_MIN_ROWS)
    if starts is not None and count > 1:
        # the first block start at or after each 1/count of the rows
        at = np.searchsorted(starts, np.arange(1, count) * (n // count))
        cuts = sorted({0, n, *starts[at[at < len(starts)]].tolist()})
    parts = list(zip(cuts[:-1], cuts[1:], strict=True))

    import threading

    made: list[np.ndarray] = []
    making = threading.Lock()

    def rel_for(judged: Judgments) -> np.ndarray:  # one array for all parts, each writing its rows
        with making:
            if not made:
                made.append(np.full(n, NOT_IN_POOL, dtype=judged.dtype))
        return made[0]

    def judge(index: int) -> bool:
        low, high = parts[index]
        queries, docs = row_query[low:high], slice_rows(doc_ids, low, high)
        keys = _pair_keys(queries, docs, threads=1 if len(parts) > 1 else None)
        judged = judgments()
        judged.of(keys, queries, docs, out=rel_for(judged)[low:high])
        keys.sort()  # in place: the keys are not needed in row order any more
        return bool(np.any(keys[1:] == keys[:-1]))  # a repeated key: a duplicate or a collision

    repeated = parallel.on_threads(judge, range(len(parts)))
    release_freed_memory()  # the parts' keys, freed on the threads
    if any(repeated):
        _reject_duplicates(run, query_ids, row_query, doc_ids)
    return made[0]


class Judgments:
    """The judgments of the evaluated queries: each qrels row's query (index in ``query_ids``, -1 for
    another query) and value, the ideal ranking of each query (its judged documents, retrieved or
    not, best first) and, ``keyed``, the (query, document) keys (``_pair_keys``) that ``of``
    matches run rows with."""

    def __init__(self, qrels_data: Any, query_ids: list[str], keyed: bool) -> None:
        self.qrels_data, self.query_ids, self.num_queries = qrels_data, query_ids, len(query_ids)
        self.qidx = row_index(qrels_data, dict(zip(query_ids, range(len(query_ids)), strict=True)))
        self.relevance = np.asarray(qrels_data["relevance"], dtype=np.int64)
        self.dtype = _rel_dtype(self.relevance)
        judged = (self.qidx >= 0) & (self.relevance >= 0)
        judged_q, judged_rel = self.qidx[judged], self.relevance[judged]
        self.judged_offsets = query_offsets(judged_q, len(query_ids))
        self.judged = _by_query_best_first(judged_q, judged_rel)
        self.cache: dict[object, object] = {}  # what the kernels derive from the judged values alone
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

    @cached_property
    def ranked_values(self) -> np.ndarray:
        """The value a ranked row gets from each qrels line: its relevance when >= 0, UNJUDGED when negative."""
        return np.where(self.relevance < 0, UNJUDGED, self.relevance)

    @cached_property
    def numbered(self) -> tuple[dict[str, int], np.ndarray] | None:
        """For judgments held as lists (``match_lists``), made on first use: a number for each document
        judged in an evaluated query (a dict, doc id -> number) and the table of the value a ranked row of
        each (query, number) gets, at ``query * (len(numbers) + 1) + number``: >= 0 judged, UNJUDGED for a
        negative judgment, NOT_IN_POOL for the pairs nobody judged and for the number ``len(numbers)`` (a
        document no evaluated query judged). None when the table would take more than
        ``DENSE_TABLE_MAX_BYTES``. A small frame's judgments are numbered by Arrow's dictionary of their doc ids
        (``column_operations.doc_numbers``), each pair once: no string made for each row."""
        usable = np.flatnonzero(self.qidx >= 0)
        coded = doc_numbers(self.qrels_data)
        if coded is not None:
            names, codes = coded
            width = len(names) + 1
            if self.num_queries * width * np.dtype(self.dtype).itemsize > DENSE_TABLE_MAX_BYTES:
                return None
            table = np.full(self.num_queries * width, NOT_IN_POOL, dtype=self.dtype)
            table[self.qidx[usable].astype(np.int64) * width + codes[usable]] = self.ranked_values[usable]
            return dict(zip(names, range(len(names)), strict=True)), table
        docs = self.qrels_data["doc_id"]
        if len(usable) < len(self.qidx):
            docs = [docs[i] for i in usable.tolist()]
        distinct_docs = dict.fromkeys(docs)
        numbers = dict(zip(distinct_docs, range(len(distinct_docs)), strict=True))
        width = len(numbers) + 1
        if self.num_queries * width * np.dtype(self.dtype).itemsize > DENSE_TABLE_MAX_BYTES:
            return None
        number = np.fromiter(map(numbers.__getitem__, docs), dtype=np.int64, count=len(docs))
        table = np.full(self.num_queries * width, NOT_IN_POOL, dtype=self.dtype)
        keys = self.qidx[usable].astype(np.int64) * width + number
        values = self.ranked_values[usable]
        order = np.argsort(keys, kind="stable")  # a pair given twice keeps its last line, as by_query's dicts
        last = order[np.append(keys[order][1:] != keys[order][:-1], True)]
        table[keys[last]] = values[last]
        return numbers, table

    @property
    def given_dicts(self) -> list[dict[str, Any]] | None:
        """The judgments' own dicts of each query, when they were given as a dict of dicts that can serve as
        they are (``tables.CheckedColumns.judged_dicts``, copied when the table was made): then ``by_query`` is
        made of them, and ``match_lists`` looks rows up in them rather than numbering every judged document."""
        return getattr(self.qrels_data, "judged_dicts", None)

    @cached_property
    def by_query(self) -> list[dict[str, int]]:
        """For judgments held as lists: one dict per evaluated query, doc id -> the value a ranked row
        gets (>= 0 judged, UNJUDGED for a negative judgment), made on first use: the query's own dict when
        the judgments were given so (``given_dicts``: none negative, copied when the table was made), else
        block by block of rows of one query (as qrels are written), gathered by query first when the rows of
        the queries are interleaved."""
        given = self.given_dicts
        if given is not None:
            of_query = dict(zip(self.qrels_data.blocks[0], given, strict=True))
            return [of_query.get(query, {}) for query in self.query_ids]
        qidx, docs = self.qidx, self.qrels_data["doc_id"]
        values = self.ranked_values
        bounds = np.flatnonzero(qidx[1:] != qidx[:-1]) + 1
        if len(bounds) > 2 * self.num_queries:  # interleaved: the rows of each query together first
            order = np.argsort(qidx, kind="stable")
            qidx, values = qidx[order], values[order]
            docs = [docs[i] for i in order.tolist()]
            bounds = np.flatnonzero(qidx[1:] != qidx[:-1]) + 1
        edges = [0, *bounds.tolist(), len(qidx)]
        values_list = values.tolist()
        per_query: list[dict[str, int]] = [{} for _ in range(self.num_queries)]
        for query, a, b in zip(qidx[edges[:-1]].tolist() if len(qidx) else [], edges[:-1], edges[1:], strict=True):
            if query >= 0:
                per_query[query].update(zip(docs[a:b], values_list[a:b], strict=True))
        return per_query

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
            # an inner join, numbered and put back in order after: at the ranking's peak, it takes less than
            # half the memory of a left join keeping the hits' order, and less time
            found = pl.DataFrame({"key": polars_numbers(keys[hit]),
                                  "at": polars_numbers(np.arange(len(hit), dtype=np.int64))}).join(
                self.index, on="key", how="inner")
            # every hit has a match (is_in): more matches than hits, two judgments share a key (a collision)
            exact = len(found) == len(hit)
            if exact:
                match = np.empty(len(hit), dtype=np.int64)
                match[found["at"].to_numpy()] = found["judgment"].to_numpy()
                exact = bool((row_query[hit] == self.queries[match]).all()) and bool(
                    (series(gather(doc_ids, hit)) == self.docs.gather(polars_numbers(match))).all())
        if not exact:  # a hash collision: redo exactly
            judgments = pl.DataFrame({"q": self.queries, "doc_id": self.docs, "relevance": self.values})
            values = pl.DataFrame({"q": row_query, "doc_id": series(doc_ids)}).join(
                judgments, on=["q", "doc_id"], how="left", maintain_order="left")["relevance"]
            judged = values.is_not_null().to_numpy()
            hit, raw = np.flatnonzero(judged), values.to_numpy()[judged].astype(np.int64)
        else:
            raw = self.values[match]
        rel[hit] = np.where(raw < 0, UNJUDGED, raw)
        return rel


def _by_query_best_first(query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The judgment values (all >= 0) in order of query, then value descending: the values alone, so one sort
    of one integer per value (its query, then its distance below the largest value) gives them, where a
    lexsort would sort by each key in turn; a lexsort still when that integer could overflow."""
    if len(values) == 0:
        return values
    top = int(values.max())
    span = top - int(values.min()) + 1
    if int(query.max()) >= (1 << 62) // span:
        return values[np.lexsort((-values, query))]  # type: ignore[no-any-return]
    keys = query.astype(np.int64) * span + (top - values)
    keys.sort()
    return top - keys % span  # type: ignore[no-any-return]


def _reject_duplicates(run: Run, query_ids: list[str], row_query: np.ndarray, doc_ids: Strings) -> None:
    """A document twice in one query's ranking is an error (trec_eval: "duplicate docs"). Called
    when two rows share a key: a duplicate, or only a hash collision."""
    import polars as pl

    pairs = pl.DataFrame({"q": row_query, "doc_id": series(doc_ids)})
    duplicated = pairs.is_duplicated()
    if not duplicated.any():
        return  # only a hash collision
    query, doc_id = pairs.filter(duplicated).row(0)
    raise DuplicateDocumentError(run.source, query_ids[query], doc_id)
