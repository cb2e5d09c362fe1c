"""Small pandas and polars frames (the columns read by Arrow, ``tables.bulk.frame_columns``) give the numbers of
the same judgments and run given as dicts of dicts, whatever path the ranking takes with them: ties across the
cut of a measure's depth, the same documents ranked for many queries, judgments with and without negative values,
-M and -J; and every error the row path words is still worded so.

The dict of dicts is the reference here: its numbers are those of the TREC files (test_in_memory_paths.py)."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest
from conftest import first_by_default

import trec_rag_eval as tre
from trec_rag_eval.service.inputs import as_qrels, as_run
from trec_rag_eval.tables import CheckedColumns

LIBRARIES = ["pandas", "pandas-object", "polars"]


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
    if library == "polars":
        import polars as pl

        return pl.DataFrame(columns)
    import pandas as pd

    if library == "pandas-object":  # ids as Python objects, not Arrow's: read from the frame's lists
        return pd.DataFrame({name: pd.array(column, dtype=object) if name != value else column
                             for name, column in columns.items()})
    return pd.DataFrame(columns)


def _values(evaluation) -> dict:
    return {name: evaluation.summary[name] for name in evaluation.names if name != "runid"} | {
        (q, name): value for q, values in evaluation.to_dict().items() for name, value in values.items()}


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("seed", first_by_default(range(4), keep=2))
@pytest.mark.parametrize("library", LIBRARIES)
@pytest.mark.parametrize("negative", [True, False])
@pytest.mark.parametrize("options", [{}, {"max_retrieved": 7}, {"judged_only": True}])
def test_small_frames_give_the_numbers_of_the_same_dicts(seed, library, negative, options):
    pytest.importorskip(library.split("-")[0])
    qrels, run = _pair(seed, negative)
    frames = _frame(library, qrels, "relevance"), _frame(library, run, "score")
    for measures in (["nDCG@10", "P@5", "RR"], ["all_trec"]):  # a depth the ranking stops at; every row read
        expected = _values(tre.evaluate(qrels, run, measures, **options))
        ours = _values(tre.evaluate(*frames, measures, **options))
        assert ours == expected


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_small_frames_of_judgments_serve_the_ranking_as_one_dict_a_query(library):
    # judgments with no negative value are looked up in one dict per query block (CheckedColumns.judged_dicts), as a
    # dict of dicts' own are; a negative judgment (in the pool, not judged) is numbered as before
    pytest.importorskip(library)
    qrels, _ = _pair(3, negative=False)
    made = as_qrels(_frame(library, qrels, "relevance")).data
    assert isinstance(made, CheckedColumns) and made.judged_dicts is not None
    assert dict(zip(made.blocks[0], made.judged_dicts, strict=True)) == qrels
    assert all(type(doc) is str for judged in made.judged_dicts for doc in judged)
    qrels["q-neg"] = {"d1": -1, "d2": 1}
    made = as_qrels(_frame(library, qrels, "relevance")).data
    assert isinstance(made, CheckedColumns) and made.blocks is not None and made.judged_dicts is None


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
    # the judgments' dicts hold the frame's own values (Python ints), each pair once; the columns are the frame's
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"query_id": ["b", "b", "a"], "doc_id": ["x", "y", "x"], "relevance": [2, 0, 1]})
    made = as_qrels(frame).data
    assert made["query_id"] == ["b", "b", "a"] and made["doc_id"] == ["x", "y", "x"]
    assert np.array_equal(made["relevance"], [2, 0, 1]) and made.judged_dicts == [{"x": 2, "y": 0}, {"x": 1}]
