"""The column layer of the ranking: the few operations it needs on a column of ids or scores, each
written once per form the tables come in (``trec_rag_eval.tables``): a Python ``list`` (small
tables, ranked without importing polars or pyarrow), a polars ``Series``, or a pyarrow
``ChunkedArray`` (large runs from the fast TREC reader: query ids dictionary-encoded, one chunk at a
time so that no copy of a whole column is made)."""

from __future__ import annotations

from collections.abc import Callable
from itertools import compress, repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from trec_rag_eval.core import parallel
from trec_rag_eval.tables.arrow import ArrowExport, arrow_ints, is_arrow, polars_numbers, string_buffers
from trec_rag_eval.tables.checked_columns import ArrowIds, CheckedColumns, FrameColumns

if TYPE_CHECKING:
    import polars as pl

Strings = Any
"""A column of ids: a ``list[str]`` (small tables), a small frame's doc ids as Arrow holds them (``ArrowIds``, ranked
as a list is: its rows made strings when gathered), a polars ``Series`` of strings or a pyarrow ``ChunkedArray``
(large runs from the fast reader; query ids dictionary-encoded)."""


def doc_column(data: Any) -> Strings:
    """The doc ids of a table's columns as the ranking reads them: a small frame's as Arrow holds them
    (``ArrowIds``) until their list is made; every other form's column as it is."""
    if isinstance(data, FrameColumns) and not dict.__contains__(data, "doc_id"):
        return data.doc_ids
    return data["doc_id"]


def doc_numbers(data: Any) -> tuple[list[str], np.ndarray] | None:
    """A small frame's distinct doc ids and each row's number among them (``ArrowIds.numbered``: Arrow's
    dictionary and codes), whose rows hold each (query, document) pair once; None for every other form."""
    if isinstance(data, FrameColumns):
        return data.doc_ids.numbered()
    return None


def id_list(values: Strings) -> Strings:
    """A column of ids as a list when it is ``ArrowIds`` (every row made a string); any other as it is."""
    return values.strings() if isinstance(values, ArrowIds) else values


def distinct(values: Strings) -> list[str]:
    """The distinct values of a column (of a list in their first order; of polars or Arrow in any)."""
    if isinstance(values, list):
        return list(dict.fromkeys(values))
    return values.unique().to_pylist() if is_arrow(values) else values.unique().to_list()


def distinct_queries(data: Any, mask: np.ndarray | None = None) -> list[str]:
    """The distinct query ids of a table's columns (``distinct``), of the rows where ``mask`` is true when given:
    for rows made one query after the other (``CheckedColumns.blocks``), from the blocks' ids, not the rows'."""
    blocks = data.blocks if isinstance(data, CheckedColumns) else None
    if blocks is None:
        return distinct(data["query_id"] if mask is None else gather(data["query_id"], np.flatnonzero(mask)))
    ids, lengths = blocks
    if mask is None:
        return list(compress(ids, lengths))  # a query of no rows ({"q": {}} in a dict) has no id among the rows'
    firsts = np.cumsum([0, *lengths[:-1]], dtype=np.int64)  # each block's first row
    return [query for query, first, length in zip(ids, firsts.tolist(), lengths, strict=True)
            if length and mask[first]]


def gather(values: Strings, rows: np.ndarray) -> Strings:
    """The values at ``rows``: a list from a list or ``ArrowIds``, else a polars Series. From Arrow, chunk by chunk
    (Arrow's own take would first join every chunk into one copy of the column)."""
    if isinstance(values, list):
        if len(rows) > 1:  # itemgetter gives a tuple of two or more values, in C: half a list comprehension's time
            return list(itemgetter(*rows.tolist())(values))
        return [values[i] for i in rows.tolist()]
    if isinstance(values, ArrowIds):
        return values.gather(rows)
    if not is_arrow(values):
        return values.gather(polars_numbers(rows))
    import polars as pl

    if len(rows) == 0:
        return series(values.slice(0, 0))
    starts = np.cumsum([0] + [len(chunk) for chunk in values.chunks])
    chunk_of = np.searchsorted(starts, rows, side="right") - 1
    ascending = bool(np.all(chunk_of[1:] >= chunk_of[:-1]))  # already in chunk order (rows found by flatnonzero)
    by_chunk = np.arange(len(rows)) if ascending else np.argsort(chunk_of, kind="stable")
    bounds = np.searchsorted(chunk_of[by_chunk], np.arange(len(starts)))
    parts = [series(_take(chunk, rows[by_chunk[bounds[i]: bounds[i + 1]]] - starts[i]))
             for i, chunk in enumerate(values.chunks) if bounds[i + 1] > bounds[i]]
    joined = pl.concat(parts)
    return joined if ascending else joined.gather(polars_numbers(np.argsort(by_chunk)))  # back to the order of rows


def _take(array: Any, indices: np.ndarray) -> Any:
    """``array.take(indices)`` of an Arrow array; a string array without nulls is gathered with numpy
    from its buffers (Arrow's take is a pyarrow.compute function, whose import costs ~25 ms)."""
    import pyarrow as pa

    if array.type != pa.string() or array.null_count:
        return array.take(arrow_ints(indices))
    offsets, data = string_buffers(array)
    first, lengths = offsets[indices], offsets[indices + 1] - offsets[indices]
    new_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    return pa.StringArray.from_buffers(len(indices), pa.py_buffer(new_offsets),
                                       pa.py_buffer(data[row_ranges(first, lengths)]))


def keep_where(values: Strings, mask: np.ndarray) -> Strings:
    """The values where ``mask`` is true, in the same form."""
    if isinstance(values, list):
        return [v for v, keep in zip(values, mask.tolist(), strict=True) if keep]
    if isinstance(values, ArrowIds):
        return values.keep(mask)
    if is_arrow(values):  # the mask as Arrow bits (pa.array() would import pandas when it is installed)
        import pyarrow as pa

        bits = pa.py_buffer(np.packbits(mask, bitorder="little"))
        return values.filter(pa.Array.from_buffers(pa.bool_(), len(mask), [None, bits]))
    return values.filter(mask)


def numbers(values: Any, dtype: type[np.number]) -> np.ndarray:
    """A numeric column as a numpy array: a view of Arrow's buffers when it is one chunk."""
    if isinstance(values, (np.ndarray, list)) or not is_arrow(values):  # the list form told first, as above
        return np.asarray(values, dtype=dtype)
    parts = [_arrow_numbers(chunk, dtype) for chunk in values.chunks]
    return parts[0] if len(parts) == 1 else np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _arrow_numbers(array: Any, dtype: type[np.number]) -> np.ndarray:
    """The values of a numeric Arrow array without nulls, as a view of its buffer (pyarrow's own
    to_numpy imports pandas when it is installed: 0.4 s)."""
    size = np.dtype(dtype).itemsize
    return np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array), offset=array.offset * size)


def series(values: Strings) -> pl.Series:
    """A polars Series of a column held by polars or Arrow (for the few rows that need one)."""
    if not is_arrow(values):
        return values
    import polars as pl

    return pl.Series(ArrowExport(values))


def slice_rows(values: Strings, start: int, stop: int) -> Strings:
    """Rows start..stop - 1 of a column, in the same form (no copy of Arrow or polars data)."""
    if isinstance(values, list):
        return values[start:stop]
    return values.slice(start, stop - start)


def index_in(ids: Strings, index_of: dict[str, int]) -> np.ndarray:
    """The index of each id in ``index_of`` (int32), or -1: one hash lookup per row (for Arrow's
    dictionary-encoded ids, one per distinct id)."""
    if isinstance(ids, list):
        return np.fromiter(map(index_of.get, ids, repeat(-1)), dtype=np.int32, count=len(ids))
    if is_arrow(ids):  # each chunk has its own dictionary: one lookup per distinct id of a chunk
        out = np.empty(len(ids), dtype=np.int32)

        def look_up(chunk: Any, low: int, high: int) -> None:  # np.take releases the GIL
            lookup = np.array([index_of.get(q, -1) for q in chunk.dictionary.to_pylist()], dtype=np.int32)
            # np.take, not lookup[codes]: no 64-bit copy of the codes, no temporary result; "clip": with
            # the default "raise", numpy writes to a temporary first (Arrow's codes are always in range)
            np.take(lookup, _arrow_numbers(chunk.indices, np.int32), out=out[low:high], mode="clip")

        over_chunks(ids, look_up)
        return out
    import polars as pl

    mapping = pl.DataFrame({"query_id": list(index_of), "qidx": list(index_of.values())},
                           schema={"query_id": pl.Utf8, "qidx": pl.Int32})
    joined = pl.DataFrame({"query_id": ids}).join(mapping, on="query_id", how="left", maintain_order="left")
    return joined["qidx"].fill_null(-1).to_numpy()


def row_index(data: Any, index_of: dict[str, int]) -> np.ndarray:
    """Each row's query of a table's columns: its index in ``index_of``, or -1 (``index_in``); rows made from
    a dict of dicts (``CheckedColumns.blocks``) look each query up once, not each row."""
    blocks = data.blocks if isinstance(data, CheckedColumns) else None
    if blocks is None:
        return index_in(data["query_id"], index_of)
    ids, lengths = blocks
    return np.repeat(index_in(ids, index_of), lengths)


def over_chunks(column: Any, work: Callable[[Any, int, int], object], threads: int | None = None) -> None:
    """``work(chunk, low, high)`` for every chunk of an Arrow column (its rows low..high - 1 of the
    column), the chunks dealt out in turn to up to ``threads`` threads (None: ``sort_threads()``):
    for work whose numpy and polars steps release the GIL."""
    chunks = column.chunks
    bounds = np.cumsum([0] + [len(chunk) for chunk in chunks]).tolist()
    step = min(threads or parallel.sort_threads(), max(len(chunks), 1))

    def every_step_th(first: int) -> None:
        for i in range(first, len(chunks), step):
            work(chunks[i], bounds[i], bounds[i + 1])

    parallel.on_threads(every_step_th, range(step))


def row_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The rows start[i] .. start[i] + length[i] - 1 of every range, one range after the other."""
    ends = np.cumsum(lengths)
    return np.arange(ends[-1] if len(ends) else 0) + np.repeat(starts - (ends - lengths), lengths)


def offsets_of(counts: np.ndarray) -> np.ndarray:
    """Where each query's rows start and where the last one ends, from the number of rows of each: 0, then the
    running total (int64, one value more than ``counts``); query i's rows are ``offsets[i]:offsets[i + 1]``."""
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)


def query_offsets(query: np.ndarray, num_queries: int) -> np.ndarray:
    """``offsets_of`` the rows of each query, from each row's query number (rows grouped by query)."""
    return offsets_of(np.bincount(query, minlength=num_queries))
