"""Small pandas and polars frames (the columns read by Arrow, ``tables.bulk.frame_columns``; a polars frame of at
most ``small_frames.POLARS_LIST_MAX_ROWS`` rows is read as lists, so here polars frames take Arrow's path at every
size but in the cases named "polars-lists") give the numbers of the same judgments and run given as dicts of dicts,
whatever path the ranking takes with them: ties across the cut of a measure's depth, the same documents ranked for
many queries, judgments with and without negative values, -M and -J; and every error the row path words is still
worded so.

The dict of dicts is the reference here: its numbers are those of the TREC files (test_in_memory_paths.py)."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from conftest import first_by_default

import trec_rag_eval as tre
from trec_rag_eval.service.inputs import as_qrels, as_run
from trec_rag_eval.tables import CheckedColumns, bulk, small_frames
from trec_rag_eval.tables.checked_columns import ArrowIds, FrameColumns

LIBRARIES = ["pandas", "pandas-object", "pandas-lists", "polars", "polars-lists"]
POLARS_LIST_MAX_ROWS = small_frames.POLARS_LIST_MAX_ROWS  # the library's, before the fixture below sets it
PANDAS_LIST_MAX_ROWS = small_frames.PANDAS_LIST_MAX_ROWS


@pytest.fixture(autouse=True)
def _arrow_for_frames_of_any_size(monkeypatch):
    monkeypatch.setattr(small_frames, "POLARS_LIST_MAX_ROWS", 0)
    monkeypatch.setattr(small_frames, "PANDAS_LIST_MAX_ROWS", 0)


def _pair(seed: int, negative: bool) -> tuple[dict, dict]:
    """Judgments and a run of a few queries, the same 40 documents ranked for each, few distinct scores (ties
    that a depth of 5 or 10 cuts through)."""
    rng = random.Random(seed)
    queries = [f"{rng.choice(['q', 'Q', '1'])}{i}" for i in range(rng.randint(3, 9))]
    grades = [-1, 0, 0, 1, 2, 3] if negative else [0, 0, 1, 2, 3]
    qrels = {q: {f"d{d}": rng.choice(grades) for d in rng.sample(range(40), rng.randint(1, 15))} for q in queries}
    run = {q: {f"d{d}": float(rng.choice([1, 2, 2, 3, 3, 3, rng.random()])) for d in rng.sample(range(40), 30)}
           for q in queries[1:]}  # the first query missing from the run
    run["extra"] = {"d1": 1.0, "d2": 1.0}  # a query the judgments do not know
    return qrels, run


def _frame(library: str, nested: dict, value: str):
    rows = [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]
    columns = {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], value: [r[2] for r in rows]}
    if library.startswith("polars"):
        import polars as pl

        return pl.DataFrame(columns)
    import pandas as pd

    if library == "pandas-object":  # ids as Python objects, not Arrow's: read from the frame's lists
        frame = pd.DataFrame(columns).astype({"query_id": object, "doc_id": object})
        assert frame["doc_id"].dtype == object
        return frame
    return pd.DataFrame(columns)


def _values(evaluation) -> dict:
    return {name: evaluation.summary[name] for name in evaluation.names if name != "runid"} | {
        (q, name): value for q, values in evaluation.to_dict().items() for name, value in values.items()}


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("seed", first_by_default(range(4), keep=2))
@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("negative", [True, False])
@pytest.mark.parametrize("options", [{}, {"max_retrieved": 7}, {"judged_only": True}])
def test_small_frames_give_the_numbers_of_the_same_dicts(monkeypatch, seed, library, negative, options):
    pytest.importorskip(library.split("-")[0])
    qrels, run = _pair(seed, negative)
    frames = _frame(library, qrels, "relevance"), _frame(library, run, "score")
    if library.endswith("-lists"):  # read as lists, as a frame of this size is
        monkeypatch.setattr(small_frames, f"{library.split('-')[0].upper()}_LIST_MAX_ROWS", max(map(len, frames)))
        assert not any(isinstance(made.data, FrameColumns) for made in (as_qrels(frames[0]),
                                                                              as_run(frames[1], None)))
    for measures in (["nDCG@10", "P@5", "RR"], ["all_trec"]):  # a depth the ranking stops at; every row read
        expected = _values(tre.evaluate(qrels, run, measures, **options))
        ours = _values(tre.evaluate(*frames, measures, **options))
        assert ours == expected


@pytest.mark.parametrize("library", ["polars", "pandas"])
def test_a_frame_is_read_as_lists_up_to_its_row_limit_and_by_arrow_above(monkeypatch, library):
    # a few hundred rows of a frame cost less as lists than through Arrow's kernels, whose calls cost more than such
    # a frame's rows (docs/speed.md); the judgments and the run are read the same way on either side of the limit
    module = pytest.importorskip(library)
    name, limit = (("POLARS_LIST_MAX_ROWS", POLARS_LIST_MAX_ROWS) if library == "polars"
                   else ("PANDAS_LIST_MAX_ROWS", PANDAS_LIST_MAX_ROWS))
    monkeypatch.setattr(small_frames, name, limit)
    for rows, arrow in ((limit, False), (limit + 1, True)):
        judged = module.DataFrame({"query_id": [f"q{i // 10}" for i in range(rows)],
                                   "doc_id": [f"d{i}" for i in range(rows)], "relevance": [i % 3 for i in range(rows)]})
        ranked = module.DataFrame({"query_id": judged["query_id"], "doc_id": judged["doc_id"],
                                   "score": [float(-i) for i in range(rows)]})
        qrels, run = as_qrels(judged), as_run(ranked, None)
        assert isinstance(qrels.data, FrameColumns) is arrow and isinstance(run.data, FrameColumns) is arrow
        assert isinstance(qrels.data, CheckedColumns) and isinstance(run.data, CheckedColumns)  # checked in bulk
        evaluation = tre.evaluate(judged, ranked, "P@5")
        expected = tre.evaluate(_nested(judged, "relevance"), _nested(ranked, "score"), "P@5")  # the same dicts
        assert evaluation.to_dict() == expected.to_dict()
        # by hand: each query's first five by score are its rows 10k..10k+4, graded i % 3, so 3 or 4 of five relevant
        assert set(evaluation.to_dict()["q0"].values()) == {0.6}  # rows 0-4: grades 0 1 2 0 1


def _nested(frame, value: str) -> dict:
    out: dict = {}
    for q, d, v in zip(frame["query_id"].to_list(), frame["doc_id"].to_list(), frame[value].to_list(), strict=True):
        out.setdefault(q, {})[d] = v
    return out


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_small_frames_of_judgments_are_numbered_by_arrow_s_dictionary(monkeypatch, library):
    # a small frame's judgments are numbered by the codes of Arrow's dictionary of their doc ids (no string made
    # for each row); when the table of every (query, number) would be too large, each query's dict is made of
    # the lists the columns then make: the same numbers either way
    from trec_rag_eval.core import matching

    pytest.importorskip(library)
    qrels, run = _pair(3, negative=True)
    frames = _frame(library, qrels, "relevance"), _frame(library, run, "score")
    made = as_qrels(frames[0]).data
    assert isinstance(made, FrameColumns) and not dict.__contains__(made, "doc_id")
    names, codes = made.doc_ids.numbered()
    assert [names[c] for c in codes.tolist()] == [d for docs in qrels.values() for d in docs]
    expected = _values(tre.evaluate(qrels, run, ["all_trec"]))
    assert _values(tre.evaluate(*frames, ["all_trec"])) == expected
    monkeypatch.setattr(matching, "DENSE_TABLE_MAX_BYTES", -1)
    assert _values(tre.evaluate(*frames, ["all_trec"])) == expected


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("library", ["pandas", "polars"])
@pytest.mark.parametrize("dense", [True, False])
def test_a_small_frame_beside_a_dict_of_dicts_gives_the_numbers_of_the_two_dicts(monkeypatch, library, dense):
    # judgments and run in two shapes: the frame's run rows (ArrowIds) matched with a dict of dicts' own dicts of
    # each query (made strings there, row by row) or with its numbered judged documents, and a frame's judgments
    # with a dict's run: every row read (all_trec), the numbers of the two given as dicts of dicts
    from trec_rag_eval.core import matching

    pytest.importorskip(library)
    qrels, run = _pair(5, negative=False)  # no negative grade: the dict of dicts' own dicts serve (judged_dicts)
    frames = _frame(library, qrels, "relevance"), _frame(library, run, "score")
    assert tre.Qrels(qrels).data.judged_dicts is not None and isinstance(as_run(frames[1]).data, FrameColumns)
    if not dense:
        monkeypatch.setattr(matching, "DENSE_TABLE_MAX_BYTES", -1)
    expected = _values(tre.evaluate(qrels, run, ["all_trec"]))
    assert _values(tre.evaluate(qrels, frames[1], ["all_trec"])) == expected
    assert _values(tre.evaluate(frames[0], run, ["all_trec"])) == expected


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_small_frame_s_bad_rows_are_named_as_before(library):
    # what the whole-column checks refuse, the row path words: a document twice in one query (both rows), an
    # empty id, a NaN score, a relevance that is no integer
    module = pytest.importorskip(library)
    qrels = {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "relevance": [1, 0, 2]}
    run = {"query_id": ["q1", "q1", "q1", "q2"], "doc_id": ["a", "b", "a", "a"], "score": [3.0, 2.0, 1.0, 1.0]}
    source = re.escape(f"run ({library} DataFrame)")
    with pytest.raises(tre.InputFormatError, match=rf"^{source}: row 3: document 'a' listed twice for query 'q1' "
                                                   r"\(first at row 1\)$"):
        tre.evaluate(module.DataFrame(qrels), module.DataFrame(run), "nDCG@10")
    with pytest.raises(tre.InputFormatError, match=rf"^{source}: row 2: expected a query_id, a doc_id and a score "
                                                   r".*, got 'q1', '', 2\.0$"):
        tre.evaluate(module.DataFrame(qrels), module.DataFrame({**run, "doc_id": ["a", "", "c", "a"]}), "nDCG@10")
    with pytest.raises(tre.InputFormatError, match=rf"^{source}: row 4"):
        tre.evaluate(module.DataFrame(qrels), module.DataFrame({**run, "doc_id": ["a", "b", "c", "a"],
                                                                "score": [3.0, 2.0, 1.0, float("nan")]}), "nDCG@10")
    with pytest.raises(tre.InputFormatError, match=r"^qrels \(\w+ DataFrame\): row 2"):
        tre.evaluate(module.DataFrame({**qrels, "relevance": [1.0, 0.5, 2.0]}), module.DataFrame(run), "nDCG@10")


def test_a_pandas_frame_of_integer_and_text_ids_says_they_are_one_query():
    # 1 and "1" in one object column are one query id in a TREC file: refused by the row path, not merged
    pd = pytest.importorskip("pandas")
    run = pd.DataFrame({"query_id": pd.array([1, "1"], dtype=object), "doc_id": ["a", "b"], "score": [1.0, 2.0]})
    with pytest.raises(tre.InputFormatError, match=r"the query id '1' and the query id 1 \(row 1\) are one id '1'"):
        as_run(run)


def test_small_frames_of_judgments_keep_every_row_s_value():
    # the judgments' columns are the frame's, their iteration "0" as a file without one gives it
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"query_id": ["b", "b", "a"], "doc_id": ["x", "y", "x"], "relevance": [2, 0, 1]})
    made = as_qrels(frame).data
    assert list(made) == ["query_id", "iteration", "doc_id", "relevance"] and len(made) == 4
    assert made["query_id"] == ["b", "b", "a"] and made["doc_id"] == ["x", "y", "x"] and made["iteration"] == ["0"] * 3
    assert np.array_equal(made["relevance"], [2, 0, 1]) and "score" not in made and made.get("score") is None
    qrels = tre.Qrels(made)
    assert qrels.to_dict() == {"b": {"x": 2, "y": 0}, "a": {"x": 1}} and qrels.frame["iteration"].to_list() == ["0"] * 3


def _large_pair(seed: int, shared: bool) -> tuple[dict, dict]:
    """10 queries of 300 documents each, a few tied scores: the same 400 documents ranked for every query
    (``shared``), or each query's own (as most runs are)."""
    rng = random.Random(seed)

    def doc(query: int, number: int) -> str:
        return f"d{number}" if shared else f"q{query}-d{number}"

    qrels = {f"q{i}": {doc(i, d): rng.choice([0, 1, 2]) for d in rng.sample(range(400), 40)} for i in range(10)}
    run = {f"q{i}": {doc(i, d): rng.choice([1.0, 2.0]) if rng.random() < 0.05 else rng.random()
                     for d in rng.sample(range(400), 300)} for i in range(10)}
    return qrels, run


@pytest.mark.parametrize("library", ["pandas", "polars", "string", "large_string", "string_view"])
@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("measures", [["nDCG@5", "P@5"], ["MAP", "R@1000"]])
def test_a_small_frame_s_run_makes_strings_of_the_rows_the_ranking_reads_alone(monkeypatch, library, shared,
                                                                                measures):
    # a small frame's run keeps its doc ids as Arrow holds them (checked_columns.ArrowIds): ranking to a depth makes
    # strings of the rows inside it and of the tied rows only, whether the documents repeat across queries (their
    # strings made from Arrow's dictionary) or not (from the column); each Arrow string type pandas may hold. A
    # measure of every row (MAP) has the rows matched with the judgments by their dictionary codes (each distinct
    # document looked up once, matching.match_lists): no row made a string but the tied ones

    if library in ("pandas", "polars"):
        module = pytest.importorskip(library)
        make = module.DataFrame
    else:
        pd = pytest.importorskip("pandas")
        pa = pytest.importorskip("pyarrow")
        dtype = pd.ArrowDtype(getattr(pa, library)())

        def make(columns: dict):
            return pd.DataFrame({name: pd.array(column, dtype=dtype) if name in ("query_id", "doc_id") else column
                                 for name, column in columns.items()})
    qrels, run = _large_pair(2, shared)
    frames = [make({"query_id": [q for q, docs in nested.items() for _ in docs],
                    "doc_id": [d for docs in nested.values() for d in docs],
                    value: [v for docs in nested.values() for v in docs.values()]})
              for nested, value in ((qrels, "relevance"), (run, "score"))]
    made = as_run(frames[1]).data
    assert isinstance(made, FrameColumns)
    read: list[int] = []
    gather = ArrowIds.gather
    rows = sum(map(len, run.values()))

    def counted(ids, asked=None):  # the run's rows made strings (None: all); the judgments' ids may be made whole
        if len(ids.docs) == rows:
            read.append(len(ids) if asked is None else len(asked))
        return gather(ids, asked)

    missing = FrameColumns.__missing__

    def refused(columns, name):  # the judgments' ids may be made (ids with a separator: map_chunks' guess reads them)
        if columns.value_column == "score":
            raise AssertionError(f"the run's whole {name} column was made")
        return missing(columns, name)

    monkeypatch.setattr(ArrowIds, "gather", counted)
    monkeypatch.setattr(FrameColumns, "__missing__", refused)
    ours = _values(tre.evaluate(frames[0], frames[1], measures))
    monkeypatch.undo()
    assert ours == _values(tre.evaluate(qrels, run, measures))
    # the first 1,000 ids (map_chunks' look at them), the tied rows, the first 5 of each query (nDCG@5, P@5)
    assert read and sum(read) < rows / 2


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_small_frame_s_run_columns_are_whole_to_whoever_walks_them(library):
    # the lists a small frame's run makes on first use are its rows' ids, in order, kept; walking the columns
    # (iterating, items(), comparing, pickling, a polars frame) sees all three, in the usual order
    import pickle


    module = pytest.importorskip(library)
    columns = {"query_id": ["b", "b", "a", "c"], "doc_id": ["x", "é", "x", "y"], "score": [1.0, 3.0, 2.0, 2.0]}
    made = as_run(module.DataFrame(columns)).data
    assert isinstance(made, FrameColumns) and "doc_id" in made and "iteration" not in made
    assert made.get("iteration") is None and len(made) == 3 and made.blocks == (["b", "a", "c"], [2, 1, 1])
    assert list(made) == list(made.keys()) == ["query_id", "doc_id", "score"]
    assert made["doc_id"] is made["doc_id"] and made["doc_id"] == columns["doc_id"]
    assert made["query_id"] == columns["query_id"] and made.get("query_id") == columns["query_id"]
    assert [(k, list(v)) for k, v in made.items()] == list(columns.items())
    sent = pickle.loads(pickle.dumps(made))
    assert type(sent) is CheckedColumns and sent.blocks == made.blocks and list(sent) == list(made)
    assert all(list(sent[name]) == list(made[name]) for name in made)
    assert made != {}
    run = tre.Run(made)
    assert run.frame["doc_id"].to_list() == columns["doc_id"] and run.to_dict() == {
        "b": {"x": 1.0, "é": 3.0}, "a": {"x": 2.0}, "c": {"y": 2.0}}
    # the ids of some rows, of rows kept, of every row
    ids = ArrowIds(*_encoded(["x", "é", "x", "y"]))
    assert ids.gather(np.array([3, 0, 1])) == ["y", "x", "é"]
    kept = ids.keep(np.array([False, True, True, True]))
    assert len(kept) == 3 and kept.strings() == ["é", "x", "y"] and kept.gather(np.array([2, 0])) == ["y", "é"]
    assert ids.strings() == ["x", "é", "x", "y"]


def _encoded(ids: list[str]):
    pa = pytest.importorskip("pyarrow")
    docs = pa.array(ids, type=pa.large_string())
    encoded = docs.dictionary_encode()
    return docs, encoded.dictionary, encoded.indices.to_numpy(zero_copy_only=False)


def test_the_queries_of_rows_made_in_blocks_are_those_of_their_rows():
    # the ranking reads the query ids of rows made one query after the other from their blocks, not their rows: a
    # query given no row ({} in a dict) is none of the run's queries, as when they were read from the rows
    from trec_rag_eval.core.ranking import rank
    from trec_rag_eval.tables import query_id_set

    qrels = tre.Qrels({"q1": {"a": 1}, "q2": {}, "q0": {"b": 1}})
    run = tre.Run({"q1": {"a": 1.0}, "q3": {}, "q4": {"b": 1.0}, "q5": {}})
    ranked = rank(qrels, run)
    assert ranked.query_ids == ["q0", "q1", "q2"] and ranked.extra_queries == ["q4"]
    assert ranked.missing_queries == ["q0", "q2"] and query_id_set(run) == {"q1", "q4"}


@pytest.mark.parametrize("shape", ["pandas", "pandas-large", "numpy-columns", "polars"])
def test_a_table_made_of_a_frame_or_numpy_columns_keeps_its_values_when_they_change(shape):
    # a Run or Qrels is a value: writing into the frame or the numpy array it was made of afterwards (pandas'
    # df.loc[...] = x writes in place into the frame's own buffer; polars' df[i, name] = x changes the frame
    # object, which a polars frame of the tables' own types would be) leaves it as it was made
    from trec_rag_eval.tables.shapes import SMALL_FRAME_ROWS

    rows = SMALL_FRAME_ROWS + 1 if shape == "pandas-large" else 3
    # (the ids as tuples: a dict of columns checked as a frame's are, not taken as a reader's own columns)
    run = {"query_id": ("q1",) * rows, "doc_id": tuple(f"d{i}" for i in range(rows)),
           "score": np.arange(rows, 0, -1, dtype=np.float64)}  # d0 first
    qrels = {"query_id": ("q1", "q1"), "doc_id": ("d0", "d1"), "relevance": np.array([1, 0])}
    if shape.startswith("pandas"):
        pd = pytest.importorskip("pandas")
        run, qrels = pd.DataFrame(run), pd.DataFrame(qrels)
    if shape == "polars":
        pl = pytest.importorskip("polars")
        run, qrels = pl.DataFrame(run), pl.DataFrame(qrels)
    made_run, made_qrels = tre.Run(run), tre.Qrels(qrels)
    if shape.startswith("pandas"):
        run.loc[0, "score"] = -1.0  # d0 last
        qrels.loc[0, "relevance"] = 0
    elif shape == "polars":
        run[0, "score"] = -1.0
        qrels[0, "relevance"] = 0
    else:
        run["score"][0] = -1.0
        qrels["relevance"][0] = 0
    # d0, judged 1, is ranked first by the scores the tables were made with: P@1 = 1/1
    assert tre.evaluate(made_qrels, made_run, "P@1").summary["P@1"] == 1.0


@pytest.mark.parametrize("bad, words", [
    ({"doc_id": ["", "a"]}, "the doc id is empty"),
    ({"score": np.array([np.nan, 1.0])}, "the score nan is not a number"),
    ({"doc_id": ["a", "a"]}, "twice"),
])
def test_a_dict_of_columns_shaped_as_a_readers_own_is_checked_when_given_to_evaluate(bad, words):
    # ids in lists and the scores a float64 numpy array is the shape the file readers hand the tables; given by
    # a caller it is checked as any dict of columns is (before, it was taken as it was: the empty doc id ranked
    # first and P@1 came out 0.0 with no error)
    run = {"query_id": ["q1", "q1"], "doc_id": ["b", "a"], "score": np.array([3.0, 1.0]), **bad}
    with pytest.raises(tre.InputFormatError, match=words):
        tre.evaluate({"q1": {"a": 1}}, run, "P@1")
    qrels = {"query_id": ["q1", "q1"], "doc_id": ["a", ""], "relevance": np.array([1, 0])}
    with pytest.raises(tre.InputFormatError, match="the doc id is empty"):
        tre.evaluate(qrels, {"q1": {"a": 1.0}}, "P@1")


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("failure", [TypeError("takes 2 positional arguments but 3 were given"),
                                     AttributeError("'BlockManager' object has no attribute 'iget_values'")])
def test_a_pandas_frame_is_read_by_its_public_columns_when_its_private_one_fails(monkeypatch, failure):
    # a small pandas frame's columns are read by DataFrame._get_column_array, a private method: a pandas whose
    # method changed (another signature, another inside) falls back to frame[name], with the same numbers
    pd = pytest.importorskip("pandas")
    qrels, run = _pair(1, negative=False)
    frames = _frame("pandas", qrels, "relevance"), _frame("pandas", run, "score")

    def changed(self, *args):
        raise failure

    monkeypatch.setattr(pd.DataFrame, "_get_column_array", changed, raising=False)
    assert _values(tre.evaluate(*frames, ["nDCG@10", "P@5"])) == _values(tre.evaluate(qrels, run, ["nDCG@10", "P@5"]))


def _padded_views(ids: list[str], padding: int):
    """An Arrow string_view array of ids of 12 bytes or fewer, held in their views, the bytes of each view past its
    id filled with ``padding`` in every other row (Arrow asks for 0 there; a producer may leave anything)."""
    pa = pytest.importorskip("pyarrow")
    views = np.zeros((len(ids), 16), dtype=np.uint8)
    for row, text in enumerate(ids):
        data = text.encode()
        views[row, :4] = np.frombuffer(np.int32(len(data)).tobytes(), dtype=np.uint8)
        views[row, 4:] = padding if row % 2 else 0
        views[row, 4:4 + len(data)] = list(data)
    return pa.Array.from_buffers(pa.string_view(), len(ids), [None, pa.py_buffer(views)])


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("padding", [0, 7, 255])
def test_short_ids_in_string_views_are_read_by_their_bytes_alone(padding):
    # polars' short ids are held in their 16-byte views (length, then the bytes): a query's block is where its id
    # changes, whatever the bytes past the id hold; long ids (in a data buffer) are read by Arrow's compare
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    qrels, run = _pair(2, negative=False)
    run["a query id of 27 characters"] = {"d1": 1.0, "d2": 0.5}  # not held in its view: Arrow's way for all

    def frame(nested: dict, value: str, queries: list[str] | None = None):
        rows = [(q, d, v) for q, docs in nested.items() for d, v in docs.items() if queries is None or q in queries]
        return pd.DataFrame({
            "query_id": pd.arrays.ArrowExtensionArray(pa.chunked_array([_padded_views([r[0] for r in rows], padding)]))
            if queries is not None else pd.array([r[0] for r in rows], dtype=pd.ArrowDtype(pa.string_view())),
            "doc_id": pd.arrays.ArrowExtensionArray(pa.chunked_array([_padded_views([r[1] for r in rows], padding)])),
            value: [r[2] for r in rows]})

    short = [q for q in run if len(q) <= 12]
    made = as_run(frame(run, "score", short)).data
    assert made.blocks == (short, [len(run[q]) for q in short])
    assert made["doc_id"] == [d for q in short for d in run[q]]
    for queries in (short, None):
        ours = tre.evaluate(frame(qrels, "relevance", list(qrels)), frame(run, "score", queries), ["nDCG@10", "P@5"])
        expected = tre.evaluate(qrels, {q: run[q] for q in (short if queries else run)}, ["nDCG@10", "P@5"])
        assert _values(ours) == _values(expected)
    twice = pd.DataFrame({"query_id": pd.arrays.ArrowExtensionArray(pa.chunked_array([_padded_views(["q1"] * 3,
                                                                                                    padding)])),
                          "doc_id": pd.arrays.ArrowExtensionArray(pa.chunked_array([_padded_views(["a", "b", "a"],
                                                                                                  padding)])),
                          "score": [3.0, 2.0, 1.0]})
    with pytest.raises(tre.InputFormatError, match=re.escape("row 3: document 'a' listed twice for query 'q1' "
                                                             "(first at row 1)")):
        as_run(twice)


@pytest.mark.parametrize("kind", ["string", "large_string", "string_view"])
def test_a_small_frame_s_query_blocks_are_where_its_ids_change(kind):
    # the blocks of rows of one query id are found from the ids' views by numpy (polars' views of 12 bytes or
    # fewer), Arrow's compare otherwise: ids of every length around that limit, of characters of several bytes and
    # NUL bytes (an id and the same id with a NUL more are two ids), a slice of a longer array; each block's id is
    # its rows' id

    pa = pytest.importorskip("pyarrow")
    rng = random.Random(7)
    letters = ["a", "b", "é", "\x00", "字"]
    for _ in range(300):
        ids = ["".join(rng.choice(letters) for _ in range(rng.choice([1, 2, 7, 8, 9, 12, 13, 16, 17, 20])))
               for _ in range(rng.randint(1, 6))]
        ids += [ids[0] + "\x00", "a" * 16, "a" * 15, "a" * 17]
        rows = [query for query in ids for _ in range(rng.randint(1, 3))]
        array = pa.array(["before", *rows], type=getattr(pa, kind)()).slice(1)
        starts, names = bulk._query_blocks(array)
        expected = [row for row in range(len(rows)) if row == 0 or rows[row] != rows[row - 1]]
        assert starts.tolist() == expected and names == [rows[row] for row in expected]


@pytest.mark.parametrize("library", ["pandas", "polars", "string", "large_string", "string_view"])
def test_a_small_frame_s_first_ids_are_told_letters_and_digits_from_their_bytes(library):
    # a run's first ids are looked at for chunk ids only when they hold some character other than a letter or a
    # digit (str.isalnum of their join); a small frame's Arrow ids tell it from their bytes (tables.column_alnum),
    # or say they cannot (None: bytes beyond ASCII, views longer than 12 bytes), whatever their bytes
    from trec_rag_eval.tables import column_alnum

    pd = pytest.importorskip("pandas")
    for ids in (["d1", "D1555982", "x" * 12], ["d1", "doc::p3"], ["d1", "é2"], ["d1", "x" * 13], ["a b", "é"]):
        ids = ids * 3
        columns = {"query_id": [f"q{i}" for i in range(len(ids))], "doc_id": ids, "score": [1.0] * len(ids)}
        if library == "polars":
            frame = pytest.importorskip("polars").DataFrame(columns)
        elif library == "pandas":
            frame = pd.DataFrame(columns)
        else:
            pa = pytest.importorskip("pyarrow")
            dtype = pd.ArrowDtype(getattr(pa, library)())
            frame = pd.DataFrame({**columns, "query_id": pd.array(columns["query_id"], dtype=dtype),
                                  "doc_id": pd.array(ids, dtype=dtype)})
        run = tre.Run(frame)
        for rows in (1, 2, 1000):
            told = column_alnum(run, "doc_id", rows)
            assert told in (None, "".join(ids[:rows]).isalnum())
            if "".join(ids[:rows]).isascii() and library not in ("string_view", "polars"):
                assert told is not None  # pandas' strings: told from their bytes whenever they are ASCII


def test_a_small_pandas_frame_s_columns_are_looked_up_by_name():
    # a pandas frame's columns are found by name in its index (no list of its names is made): a column the
    # evaluation does not read may be given twice, or be named by a number, and the frame is read as it is; one of
    # its own given twice, or missing, is still refused in the row path's words
    pd = pytest.importorskip("pandas")

    rows = {"query_id": ["q1", "q1", "q2"], "doc_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]}
    frame = pd.DataFrame({**rows, "note": ["x", "y", "z"], 7: [1, 2, 3]})
    frame = pd.concat([frame, frame[["note"]]], axis=1)  # "note" twice
    made = as_run(frame).data
    assert isinstance(made, FrameColumns) and made.blocks == (["q1", "q2"], [2, 1])
    assert as_run(frame).to_dict() == {"q1": {"a": 3.0, "b": 2.0}, "q2": {"a": 1.0}}
    twice = pd.concat([pd.DataFrame(rows), pd.DataFrame(rows)[["doc_id"]]], axis=1)
    with pytest.raises(tre.InputFormatError, match=re.escape("the column 'doc_id' appears 2 times")):
        as_run(twice)
    with pytest.raises(tre.InputFormatError, match=re.escape("needs the columns query_id, doc_id, relevance")):
        as_qrels(pd.DataFrame(rows))
    judged = pd.DataFrame({"query_id": ["q1", "q1"], "iteration": ["0", "1"], "doc_id": ["a", "a"],
                           "relevance": [1, 2]})
    assert as_qrels(judged).data["iteration"] == ["0", "1"]
