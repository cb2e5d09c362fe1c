"""A frame's content as the kept judgments compare it (``tables.small_frames.frame_content``): two frames whose contents
are equal hold the same values in columns of the same names and dtypes, whatever their storage (numpy, Arrow, Python
objects), their chunks or the slices of one frame's buffers they are. Frames are generated from rows of a few ids
(empty, longer than the 12 bytes a string view holds, not ASCII) and grades, stored in every dtype a user's frame
may have; each slice of one is compared with every other (they share its buffers), with the same rows in another
dtype and with the rows one cell changed. Equal contents must never stand for different frames (the converse, the
same frame told apart, only costs a read)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trec_rag_eval.tables.small_frames import frame_content

IDS = st.sampled_from(["q1", "q2", "", "a query id of more than twelve bytes", "é", "d1"])
ROWS = st.lists(st.tuples(IDS, IDS, st.integers(0, 1)), min_size=1, max_size=7)  # grades alike: slices may match
PANDAS_GRADES = ["int8", "int64", "uint64", "float64", "bool", "Int64", "int64[pyarrow]", "object"]
PANDAS_IDS = ["str", "object", "string[pyarrow]"]
POLARS_GRADES = ["Int8", "Int64", "UInt64", "Float64", "Boolean"]


def _frame(library: str, rows: list[tuple[str, str, int]], grades: str, ids: str) -> Any:
    columns = {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
               "relevance": [r[2] > 0 if grades in ("bool", "Boolean") else r[2] for r in rows]}
    if library == "pandas":
        pd = pytest.importorskip("pandas")
        return pd.DataFrame(columns).astype({"query_id": ids, "doc_id": ids, "relevance": grades})
    pl = pytest.importorskip("polars")
    return pl.DataFrame(columns).cast({"relevance": getattr(pl, grades)})


def _same(library: str, a: Any, b: Any) -> bool:
    """The same values (missing ones alike) in columns of the same names and dtypes."""
    if library == "pandas":
        return (list(a.columns) == list(b.columns) and list(map(str, a.dtypes)) == list(map(str, b.dtypes))
                and a.reset_index(drop=True).equals(b.reset_index(drop=True)))
    return a.schema == b.schema and a.equals(b)


def _changed(rows: list[tuple[str, str, int]], at: int, field: int) -> list[tuple[str, str, int]]:
    row = list(rows[at % len(rows)])
    row[field] = row[field] + 1 if field == 2 else row[field] + "x"
    return [*rows[:at % len(rows)], (row[0], row[1], row[2]), *rows[at % len(rows) + 1:]]


@pytest.mark.parametrize("library", ["pandas", "polars"])
@settings(max_examples=100, deadline=None)
@given(rows=ROWS, grades=st.integers(0, 7), other_grades=st.integers(0, 7), ids=st.integers(0, 2),
       other_ids=st.integers(0, 2), at=st.integers(0, 6), field=st.integers(0, 2))
def test_equal_contents_are_equal_frames(library, rows, grades, other_grades, ids, other_ids, at, field):
    kinds = PANDAS_GRADES if library == "pandas" else POLARS_GRADES
    grade, other_grade = kinds[grades % len(kinds)], kinds[other_grades % len(kinds)]
    base = _frame(library, rows, grade, PANDAS_IDS[ids])
    slices = [base[start:stop] for start in range(len(rows)) for stop in range(start + 1, len(rows) + 1)]
    candidates = [*slices, _frame(library, rows, other_grade, PANDAS_IDS[other_ids]),
                  _frame(library, _changed(rows, at, field), grade, PANDAS_IDS[ids])]
    contents = [frame_content(frame, library == "pandas") for frame in candidates]
    for i, (a, content_a) in enumerate(zip(candidates, contents, strict=True)):
        for b, content_b in zip(candidates[i + 1:], contents[i + 1:], strict=True):
            if content_a is not None and content_a == content_b:
                assert _same(library, a, b), (a, b)
    assert contents[0] == frame_content(slices[0], library == "pandas")  # told the same way every time
