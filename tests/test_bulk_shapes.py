"""In-memory shapes read in bulk (``tables.bulk``) against the row path (``tables.shapes._check_rows``).

The bulk path decides only whether an object is clean; the row path words what is wrong. So, for any
object: when the bulk path gives columns, the row path accepts the object too and gives the same
columns (same ids, same values, same order); when the row path refuses it, the bulk path gives None.
Objects are generated with every kind of id and value docs/python.md names (strings, integers, numpy
integers, ``bool``, ``None``, floats, empty strings, ``1`` beside ``"1"``) and every kind of value
(floats, integers, NaN, infinities, ``10**400``, ``bool``, strings, numpy numbers).
"""

from __future__ import annotations

import math
import struct
from collections import namedtuple
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import trec_rag_eval as tre
from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.tables import bulk, shapes, small_frames

IDS = st.one_of(st.sampled_from(["a", "b", "c", "10", "2"]), st.integers(0, 3),
                st.sampled_from([np.int64(1), np.int32(2), True, None, 1.5, "", "1"]))
SCORES = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5),
                   st.sampled_from([10**400, True, "1.5", None, np.float32(0.25), np.int64(3), np.float64(2.5)]))
GRADES = st.one_of(st.integers(-3, 4), st.sampled_from([1.0, 2.0, 0.5, math.nan, math.inf, 2**31, -(2**31) - 1,
                                                         10**30, True, "1", None, np.int64(2), np.float64(3.0)]))
Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance", "iteration"], defaults=["0"])
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])


def _row_path(value: Any, value_column: str) -> Any:
    """What the row path alone makes of ``value`` (the bulk path switched off), or the error it raises."""
    source = shapes.source_name(value, value_column)
    try:
        if isinstance(value, dict) and shapes.is_columns(value, value_column):
            iterations = (shapes._iterations(value, source) if value_column == "relevance" and "iteration" in value
                          else None)
            return shapes._check_rows(shapes._column_rows(value, source, value_column), source, value_column,
                                      by_row=True, iterations=iterations)
        if isinstance(value, dict):
            return shapes._check_rows(shapes._nested(value, source, value_column), source, value_column, by_row=False)
        return shapes._check_rows(shapes._records(value, source, value_column, "kinds"), source, value_column,
                                  by_row=True)
    except (InputFormatError, TypeError) as err:
        return err


def _bulk_path(value: Any, value_column: str) -> Any:
    if isinstance(value, dict) and shapes.is_columns(value, value_column):
        return bulk.column_columns(value, value_column)
    if isinstance(value, dict):
        return bulk.nested_columns(value, value_column)
    return bulk.record_columns(value, value_column)


def _same_columns(left: dict[str, Any], right: dict[str, Any]) -> None:
    assert left.keys() == right.keys()
    for name in left:
        a, b = left[name], right[name]
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, name
            assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), name
        else:
            assert list(a) == list(b) and all(type(x) is str for x in a), name


def _agree(value: Any, value_column: str) -> None:
    made = _bulk_path(value, value_column)
    by_rows = _row_path(value, value_column)
    if isinstance(by_rows, Exception):
        assert made is None, (value, by_rows)
    elif made is not None:
        _same_columns(made, by_rows)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(IDS.filter(lambda i: isinstance(i, (str, int))), st.one_of(
    st.dictionaries(IDS, SCORES, max_size=4), st.lists(IDS, max_size=4)), max_size=4))
@example({"q": {"": 1.0}})
@example({"": {"a": 1.0}})
@example({"q": [""]})
@example({"q": {"a": 1.0, 1: 2.0}})
@example({"1": {"a": 1.0}, 1: {"b": 2.0}})
def test_nested_runs(value):
    _agree(value, "score")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(IDS.filter(lambda i: isinstance(i, (str, int))), st.one_of(
    st.dictionaries(IDS, GRADES, max_size=4), st.lists(IDS, max_size=4)), max_size=4))
@example({"q": {"": 1}})
@example({"q": {"a": 2**31}})
@example({"q": {"a": 1.5}})
def test_nested_judgments(value):
    _agree(value, "relevance")


def test_an_ordered_dict_s_own_order_pairs_each_document_with_its_own_value():
    """An OrderedDict moved about (``move_to_end``) iterates in another order than a dict's storage, which
    ``dict.values`` reads: each document must keep its own score and grade, as the row path's ``items()`` pairs
    them. By hand: the run scores a 3.0 and b 1.0, so a (judged 2, b judged 0) is first: RR 1, P@1 1, nDCG 1."""
    from collections import OrderedDict

    run = OrderedDict([("a", 3.0), ("b", 1.0)])
    run.move_to_end("a")  # iterates b, a; a dict's storage still holds a, b
    judged = OrderedDict([("a", 2), ("b", 0)])
    judged.move_to_end("a")
    for value, column in (({"q": run}, "score"), ({"q": judged}, "relevance")):
        _agree(value, column)
        made = _bulk_path(value, column)
        if made is not None:
            assert dict(zip(made["doc_id"], made[column].tolist(), strict=True)) == dict(value["q"])
    evaluation = tre.evaluate({"q": judged}, {"q": run}, ["recip_rank", "P.1", "ndcg"])
    assert evaluation.summary == {"RR": 1.0, "P@1": 1.0, "nDCG": 1.0}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(IDS, IDS, st.one_of(SCORES, GRADES)), max_size=6), st.sampled_from(["score", "relevance"]),
       st.sampled_from(["lists", "tuples", "numpy"]))
def test_dicts_of_columns(rows, value_column, kind):
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[], [], []]
    if kind == "tuples":
        columns = [tuple(column) for column in columns]
    elif kind == "numpy":
        columns = [columns[0], columns[1], np.array(columns[2], dtype=object)]
    _agree(dict(zip(("query_id", "doc_id", value_column), columns, strict=True)), value_column)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(IDS, IDS, st.one_of(SCORES, GRADES)), max_size=6), st.sampled_from(["score", "relevance"]),
       st.sampled_from(["named", "dicts"]))
def test_records(rows, value_column, kind):
    if kind == "dicts":
        records: list[Any] = [{"query_id": q, "doc_id": d, value_column: v} for q, d, v in rows]
    elif value_column == "score":
        records = [ScoredDoc(q, d, v) for q, d, v in rows]
    else:
        records = [Qrel(q, d, v) for q, d, v in rows]
    _agree(records, value_column)


def test_the_usual_shapes_take_the_bulk_path():
    """The shapes people pass, clean, are read in bulk (not only refused consistently)."""
    assert bulk.nested_columns({"q1": {"a": 1.5, "b": 2}, 2: {"c": np.float32(0.5)}}, "score") is None  # mixed keys
    assert bulk.nested_columns({"q1": {"a": 1.5, "b": 2}, "q2": {"c": np.float32(0.5)}}, "score") is not None
    assert bulk.nested_columns({1: {7: 2}, 2: {8: 0}}, "relevance") is not None
    assert bulk.nested_columns({"q1": ["a", "b"], "q2": []}, "relevance") is not None
    assert bulk.column_columns({"query_id": ["1"], "doc_id": ["a"], "score": np.array([0.5])}, "score") is not None
    assert bulk.record_columns([ScoredDoc("1", "a", 0.5), ScoredDoc("1", "b", 0.25)], "score") is not None
    assert bulk.record_columns([{"query_id": "1", "doc_id": "a", "relevance": 2}], "relevance") is not None


def test_a_run_s_query_column_is_made_only_when_asked_and_walks_with_the_others():
    """A run from a dict of dicts (or lists) makes its list of one query id a row only when something reads it: an
    evaluation reads the blocks. Walked, compared or pickled, its columns are the three, in the usual order."""
    import pickle

    ranked = tre.Run({"q1": ["b", "a"], "q2": ["c"]})
    run = tre.Run({"q1": {"a": 1.5, "b": 2.0}, "q2": {"c": 1.0}, "q3": {}})
    for table in (ranked, run):
        tre.evaluate({"q1": {"a": 1}, "q2": {"c": 2}}, table, "nDCG@10")
        assert not dict.__contains__(table.data, "query_id")
    assert ranked.data["query_id"] == ["q1", "q1", "q2"] and ranked.data["score"].tolist() == [2.0, 1.0, 1.0]
    expected = {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "c"]}
    assert list(run.data) == ["query_id", "doc_id", "score"] and len(run.data) == 3 and "query_id" in run.data
    assert {name: run.data[name] for name in ("query_id", "doc_id")} == expected
    assert run.data["score"].tolist() == [1.5, 2.0, 1.0]
    again = pickle.loads(pickle.dumps(run.data))
    assert [list(column) for column in again.values()] == [list(column) for column in run.data.values()]


def test_judgments_query_and_iteration_columns_are_made_only_when_asked_and_walk_with_the_others():
    """Judgments from a dict of dicts (or lists of relevant ids) make their lists of one query id and of one
    iteration "0" a row only when something reads them: an evaluation reads the blocks, and has_subtopics knows
    that a dict of dicts holds one iteration. Walked, compared or pickled, the columns are the four, in order."""
    import pickle

    graded = tre.Qrels({"q1": {"b": 2, "a": 0}, "q2": {"c": 1}, "q3": {}})
    relevant = tre.Qrels({"q1": ["b", "a"], "q2": ["c"]})
    for table in (graded, relevant):
        tre.evaluate(table, {"q1": {"a": 1.5, "b": 2.0}, "q2": {"c": 1.0}}, ["nDCG@10", "AP", "bpref"])
        assert not dict.__contains__(table.data, "query_id") and not dict.__contains__(table.data, "iteration")
    expected = {"query_id": ["q1", "q1", "q2"], "iteration": ["0", "0", "0"], "doc_id": ["b", "a", "c"]}
    for table, grades in ((graded, [2, 0, 1]), (relevant, [1, 1, 1])):
        assert list(table.data) == ["query_id", "iteration", "doc_id", "relevance"] and len(table.data) == 4
        assert {name: table.data[name] for name in expected} == expected
        assert table.data["relevance"].tolist() == grades
        again = pickle.loads(pickle.dumps(table.data))
        assert [list(column) for column in again.values()] == [list(column) for column in table.data.values()]


def test_a_ranked_list_gives_descending_scores_and_keeps_nan_only_when_asked():
    columns = bulk.nested_columns({"q": ["x", "y", "z"], "r": ["w"]}, "score")
    assert columns is not None
    assert columns["query_id"] == ["q", "q", "q", "r"] and columns["doc_id"] == ["x", "y", "z", "w"]
    assert columns["score"].tolist() == [3.0, 2.0, 1.0, 1.0]
    assert bulk.nested_columns({"q": {"a": math.nan}}, "score") is None
    kept = bulk.nested_columns({"q": {"a": math.nan}}, "score", allow_nan=True)
    assert kept is not None and math.isnan(kept["score"][0])


def test_repeated_pairs_are_found_whatever_the_hashes(monkeypatch):
    # the rows' keys mix the strings' hashes; keys that meet send the rows to an exact comparison of the pairs,
    # so a collision (every hash 0 here) never takes distinct pairs for a repeat, nor hides one
    monkeypatch.setattr(bulk, "hash", lambda value: 0, raising=False)
    distinct = {"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "a"], "score": [1.0, 2.0, 3.0]}
    assert bulk.column_columns(distinct, "score") is not None
    assert bulk.column_columns({**distinct, "doc_id": ["a", "b", "b"], "query_id": ["1", "2", "2"]},
                               "score") is None


TEXT_IDS = st.sampled_from(["a", "b", "c", "10", "", None, "é"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(TEXT_IDS, TEXT_IDS, st.one_of(st.integers(-3, 4), st.floats(allow_nan=True))), max_size=8),
       st.sampled_from(["score", "relevance"]), st.sampled_from(["pandas", "polars"]), st.booleans())
def test_small_frames_of_text_ids_agree_with_the_row_path(rows, value_column, library, grouped):
    # a frame whose ids Arrow holds is checked, and its query blocks found, on whole columns (frame_columns);
    # whatever it accepts the row path accepts with the same columns, whatever the row path refuses it refuses
    import pandas as pd
    import polars as pl

    if grouped:  # each query's rows together, as most frames are: the blocks are found
        rows = sorted(rows, key=lambda row: str(row[0]))
    values = [float(v) if value_column == "score" else v for _, _, v in rows]
    if value_column == "relevance" and any(isinstance(v, float) for v in values):
        values = [v if isinstance(v, int) else 0 for v in values]
    columns = {"query_id": [q for q, _, _ in rows], "doc_id": [d for _, d, _ in rows], value_column: values}
    if library == "pandas":
        frame = pd.DataFrame({"query_id": pd.array(columns["query_id"], dtype="str"),
                              "doc_id": pd.array(columns["doc_id"], dtype="str"), value_column: values})
    else:
        frame = pl.DataFrame(columns, schema={"query_id": pl.Utf8, "doc_id": pl.Utf8,
                                              value_column: pl.Float64 if value_column == "score" else pl.Int64})
    made = bulk.frame_columns(small_frames.arrow_array(frame["query_id"]), small_frames.arrow_array(frame["doc_id"]),
                              frame[value_column].to_numpy(), value_column)
    by_rows = _row_path({**columns, value_column: np.asarray(values)}, value_column)
    if isinstance(by_rows, Exception):
        assert made is None, (rows, by_rows)
    elif made is not None:
        _same_columns(made, by_rows)
        ids, lengths = made.blocks
        assert len(set(ids)) == len(ids) and sum(lengths) == len(rows)
        assert [q for q, n in zip(ids, lengths, strict=True) for _ in range(n)] == columns["query_id"]
    if grouped and rows and not isinstance(by_rows, Exception):
        assert made is not None  # the usual frame takes the bulk path


def test_a_small_frame_with_interleaved_queries_is_read_from_its_lists():
    import polars as pl

    frame = pl.DataFrame({"query_id": ["1", "2", "1"], "doc_id": ["a", "b", "c"], "score": [1.0, 2.0, 3.0]})
    assert bulk.frame_columns(frame["query_id"].to_arrow(), frame["doc_id"].to_arrow(), frame["score"].to_numpy(),
                              "score") is None
    columns = shapes.run_data(frame)
    assert columns["query_id"] == ["1", "2", "1"] and columns.blocks is None


def test_an_empty_id_is_found_in_every_arrow_string_type_and_slice():
    # the empty-id check reads the offsets buffer of string and large_string arrays (within the array's own
    # slice of it; string_view is cast to large_string first, where Arrow's own length function has no kernel
    # for it); a slice leaves out what lies outside it
    import pyarrow as pa

    queries = ["q1", "q1", "q2", "q2", "q3"]
    for kind in (pa.string(), pa.large_string(), pa.string_view()):
        def arrow(ids, kind=kind):
            return pa.array(ids, type=kind)

        docs = arrow(["", "a", "b", "c", "d"])
        scores = np.arange(5, dtype=np.float64)
        assert bulk.frame_columns(arrow(queries), docs, scores, "score") is None, kind  # "" at the first row
        made = bulk.frame_columns(arrow(queries)[1:], docs[1:], scores[1:], "score")  # "" left out of the slice
        assert made is not None and made["doc_id"] == ["a", "b", "c", "d"], kind
        assert made.blocks == (["q1", "q2", "q3"], [1, 2, 1]), kind
        tail = arrow(["a", "b", "c", "d", ""])
        assert bulk.frame_columns(arrow(queries)[1:], tail[1:], scores[1:], "score") is None, kind  # last row
        assert bulk.frame_columns(arrow(["q1", "", "q2"]), arrow(["a", "b", "c"]), scores[:3], "score") is None
        chunked = pa.chunked_array([arrow(["a", "b"]), arrow(["", "d", "e"])])  # combined first
        assert bulk.frame_columns(pa.chunked_array([arrow(queries)]), chunked, scores, "score") is None, kind
        # a document twice in one query is refused; the same document in two queries is not
        assert bulk.frame_columns(arrow(queries), arrow(["a", "a", "b", "c", "d"]), scores, "score") is None
        assert bulk.frame_columns(arrow(queries), arrow(["a", "b", "a", "b", "a"]), scores, "score") is not None


def test_queries_with_no_judgment_are_kept_whatever_holds_them():
    # a query given an empty list or dict has no row, yet counts (Qrels.unjudged); told first by the lengths of all
    # the queries' judgments at once, then query by query only when one is empty or has no length
    assert tre.Qrels({"q1": {"a": 1}, "q2": {"b": 0}}).unjudged == ()
    assert tre.Qrels({"q1": {"a": 1}, "q2": {}, "q3": []}).unjudged == ("q2", "q3")
    assert tre.Qrels({7: ["a"], 8: []}).unjudged == ("8",)
    # a value with no length is no empty query: the reading names it as it did
    with pytest.raises(InputFormatError, match="q2"):
        tre.Qrels({"q1": {"a": 1}, "q2": 3})


def test_query_ids_take_trec_eval_s_byte_order_ascii_or_not():
    from trec_rag_eval.core.ranking import byte_sorted

    # strcmp's order: "10" before "2", upper case before lower case
    assert byte_sorted(["2", "b", "10", "B"]) == ["10", "2", "B", "b"]
    # an undecodable byte kept as a surrogate (0x80) sorts by that byte, before "é" (0xC3 0xA9), though Python's
    # own order of the characters (U+DC80 after U+00E9) is the other way
    assert byte_sorted(["é", "\udc80", "b"]) == ["b", "\udc80", "é"]
    assert sorted(["é", "\udc80"]) == ["é", "\udc80"]  # what the key is there for


@pytest.mark.parametrize("count_max", [0, bulk.DISTINCT_COUNT_MAX_KEYS])
@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_small_frames_give_their_own_ids_whether_documents_repeat_across_queries_or_not(monkeypatch, count_max,
                                                                                       library):
    # a frame's doc ids become Python strings from Arrow's dictionary of them when many rows share a document
    # (here 4 documents over 12 rows), from the column itself when few do (12 documents); a document twice in one
    # query is refused whether the pairs are counted in a table of every key or sorted (count_max 0)
    import pandas as pd
    import polars as pl

    monkeypatch.setattr(bulk, "DISTINCT_COUNT_MAX_KEYS", count_max)
    monkeypatch.setattr(small_frames, "POLARS_LIST_MAX_ROWS", 0)  # Arrow's path, which frames take from 257 rows
    monkeypatch.setattr(small_frames, "PANDAS_LIST_MAX_ROWS", 0)
    queries = ["q1"] * 4 + ["q2"] * 4 + ["q3"] * 4
    for docs in (["a", "b", "c", "é"] * 3, [f"d{i}" for i in range(12)]):
        columns = {"query_id": queries, "doc_id": docs, "score": [float(i) for i in range(12)]}
        frame = pd.DataFrame(columns) if library == "pandas" else pl.DataFrame(columns)
        made = shapes.run_data(frame)
        assert isinstance(made, bulk.CheckedColumns) and made.blocks == (["q1", "q2", "q3"], [4, 4, 4])
        assert made["query_id"] == queries and made["doc_id"] == docs
        assert made["score"].tolist() == columns["score"]
        twice = {**columns, "doc_id": docs[:5] + [docs[4]] + docs[6:]}  # the second document of q2 given twice
        frame = pd.DataFrame(twice) if library == "pandas" else pl.DataFrame(twice)
        ids = [small_frames.arrow_array(frame[name]) for name in ("query_id", "doc_id")]
        assert bulk.frame_columns(*ids, frame["score"].to_numpy(), "score") is None
        with pytest.raises(InputFormatError, match=f"row 6: document '{docs[4]}' listed twice for query 'q2' "
                                                   "\\(first at row 5\\)"):
            tre.evaluate(tre.Qrels({"q1": {"a": 1}}), frame, "P@5")


def test_a_polars_frame_s_doc_ids_are_read_as_views_and_cast_where_arrow_has_no_kernel_for_them(monkeypatch):
    # polars' strings reach Arrow as string_view without a copy: an empty doc id is found in the views' lengths;
    # an Arrow whose kernels do not take views has the doc ids cast to large_string, with the same columns
    import polars as pl
    import pyarrow as pa

    frame = pl.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]})
    queries, docs = (small_frames.arrow_array(frame[name]) for name in ("query_id", "doc_id"))
    assert pa.types.is_string_view(docs.type)
    assert bulk.frame_columns(queries, small_frames.arrow_array(pl.Series(["a", "", "b"])), frame["score"].to_numpy(),
                              "score") is None
    blocked = bulk._blocked

    def without_view_kernels(queries, docs, numbers, value_column):
        if pa.types.is_string_view(docs.type):
            raise pa.ArrowNotImplementedError("no kernel for string_view")
        return blocked(queries, docs, numbers, value_column)

    monkeypatch.setattr(bulk, "_blocked", without_view_kernels)
    made = bulk.frame_columns(queries, docs, frame["score"].to_numpy(), "score")
    assert made is not None and made["doc_id"] == ["a", "b", "a"] and made.blocks == (["q1", "q2"], [2, 1])


class _Grade(int):
    pass


class _Score(float):
    pass


@pytest.mark.parametrize(("values", "column", "expected"), [
    # each value exactly a float (scores) or an int of 32 bits (grades): read in one pass
    ([0.5, -0.0, 1e300, -math.inf, 3.0], "score", [0.5, -0.0, 1e300, -math.inf, 3.0]),
    ([3, 0, -1, 2**31 - 1, -(2**31)], "relevance", [3, 0, -1, 2**31 - 1, -(2**31)]),
    ([], "score", []),
    # anything else told by its types, as before: integers among scores, floats among grades, numpy's numbers, a
    # subclass, an int beyond 32 bits (a relevance out of range: refused), bool (refused)
    ([1, 2.5, np.float64(0.25), np.float32(0.5), np.int64(7)], "score", [1.0, 2.5, 0.25, 0.5, 7.0]),
    ([2.0, 1, np.int64(3)], "relevance", [2, 1, 3]),
    ([_Score(0.5), 1.5], "score", None),
    ([_Grade(1), 2], "relevance", None),
    ([2**31, 1], "relevance", None),
    ([True, 1.0], "score", None),
    ([True, 1], "relevance", None),
    # values whose bytes in marshal's format 2 add up as if each were a float (9 bytes: its type code and 8) or an
    # int of 32 bits (5): a string of 4 characters takes 9 (its code, its length in 4, its bytes), an empty one 5;
    # an int (5) and a string of 8 characters (13) take two floats' 18
    (["abcd", 0.5], "score", None),
    (["", 1], "relevance", None),
    ([1, "abcdefgh"], "score", None),
])
def test_values_of_the_usual_type_are_read_in_one_pass_and_others_by_their_types(values, column, expected):
    got = bulk.checked_values(values, column)
    if expected is None:
        assert got is None
        return
    assert got.dtype == (np.float64 if column == "score" else np.int64)
    assert [v.hex() if column == "score" else v for v in got.tolist()] == [
        float(v).hex() if column == "score" else v for v in expected]  # -0.0 kept, every bit
    if column == "score":  # a NaN with a payload of its own, where NaN is allowed: kept as it is, bit for bit
        bits = 0x7FF8000000000001
        kept = bulk.checked_values([struct.unpack("<d", bits.to_bytes(8, "little"))[0], 1.0], column, allow_nan=True)
        assert kept is not None and int(kept[:1].view(np.uint64)[0]) == bits
