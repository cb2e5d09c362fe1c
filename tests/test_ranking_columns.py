"""The ranking's column layer (``core.column_operations``): each operation gives the same values whatever form the
column comes in (a Python list, a polars Series, an Arrow ChunkedArray cut in any chunks, as the fast
TREC reader makes it), the list form being the plain Python meaning written out in the test."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from trec_rag_eval.core.column_operations import (
    distinct,
    gather,
    index_in,
    keep_where,
    numbers,
    over_chunks,
    row_ranges,
    series,
    slice_rows,
)

IDS = st.lists(st.sampled_from(["1", "10", "2", "a", "B", "é", "d10", "d9", "日本"]), max_size=30)


def _chunked(values: list, sizes: list[int], kind: str = "string") -> pa.ChunkedArray:
    """``values`` as an Arrow ChunkedArray in chunks of the given sizes (the last one takes the rest);
    ``kind="dictionary"``: dictionary-encoded, each chunk with its own dictionary (the reader's query ids)."""
    parts, at = [], 0
    for size in [*sizes, len(values)]:
        part = values[at: at + size]
        at += len(part)
        if part or not parts:
            parts.append(part)
    if kind == "dictionary":
        codes = pa.dictionary(pa.int32(), pa.string())
        return pa.chunked_array([pa.array(p, pa.string()).dictionary_encode() for p in parts], type=codes)
    return pa.chunked_array([pa.array(p, pa.string() if kind == "string" else pa.float64()) for p in parts])


def _as_list(values) -> list:
    if isinstance(values, list):
        return values
    if isinstance(values, pl.Series):
        return values.to_list()
    return values.to_pylist()


def _forms(values: list, sizes: list[int], kind: str = "string") -> list:
    return [values, pl.Series(values, dtype=pl.Utf8), _chunked(values, sizes, kind)]


sizes = st.lists(st.integers(0, 7), max_size=6)


@settings(max_examples=80, deadline=None)
@given(IDS, sizes, st.data())
def test_every_operation_gives_the_same_values_in_every_form(values, chunk_sizes, data):
    n = len(values)
    rows = np.array(data.draw(st.lists(st.integers(0, max(n - 1, 0)), max_size=12) if n else st.just([])),
                    dtype=np.int64)
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    start = data.draw(st.integers(0, n))
    stop = data.draw(st.integers(start, n))
    for column in _forms(values, chunk_sizes):
        assert sorted(distinct(column)) == sorted(set(values))
        assert _as_list(gather(column, rows)) == [values[i] for i in rows.tolist()]
        assert _as_list(gather(column, np.sort(rows))) == [values[i] for i in sorted(rows.tolist())]
        assert _as_list(keep_where(column, mask)) == [v for v, keep in zip(values, mask, strict=True) if keep]
        assert _as_list(slice_rows(column, start, stop)) == values[start:stop]
        if not isinstance(column, list):
            assert series(column).to_list() == values
    index_of = {q: i for i, q in enumerate(sorted(set(values[::2])))}  # some ids known, the others -1
    expected = [index_of.get(v, -1) for v in values]
    for column in (values, pl.Series(values, dtype=pl.Utf8), _chunked(values, chunk_sizes, "dictionary")):
        found = index_in(column, index_of)
        assert found.dtype == np.int32 and found.tolist() == expected


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(allow_nan=False), max_size=20), sizes)
def test_numbers_reads_every_chunk(scores, chunk_sizes):
    expected = np.array(scores, dtype=np.float64)
    for column in (scores, expected, _chunked(scores, chunk_sizes, "float")):
        got = numbers(column, np.float64)
        assert got.dtype == np.float64 and np.array_equal(got, expected)


def test_over_chunks_visits_every_chunk_once_with_its_rows():
    column = _chunked([str(i) for i in range(10)], [3, 0, 4])  # chunks of 3, 4, 3 rows
    seen = []
    over_chunks(column, lambda chunk, low, high: seen.append((chunk.to_pylist(), low, high)), threads=2)
    assert sorted(seen, key=lambda s: s[1]) == [(["0", "1", "2"], 0, 3), (["3", "4", "5", "6"], 3, 7),
                                                (["7", "8", "9"], 7, 10)]


def test_row_ranges():
    # rows 5, 6, 7 then 0 then none then 2, 3
    assert row_ranges(np.array([5, 0, 9, 2]), np.array([3, 1, 0, 2])).tolist() == [5, 6, 7, 0, 2, 3]
    assert row_ranges(np.array([], dtype=np.int64), np.array([], dtype=np.int64)).tolist() == []
