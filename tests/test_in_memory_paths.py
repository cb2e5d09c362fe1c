"""Judgments and runs handed over in memory give the numbers of the same data read from TREC files, whatever
path the library takes with them: ranked as Python lists (small; their judgments looked up in a table
of every (query, document) or, when that is too large, in each query's dict), as the fast reader's Arrow table (a large
dict of dicts, its query ids encoded from the dict's blocks), or as polars frames (ids that are not ASCII);
and ``Qrels`` prepared once give the same numbers to every run evaluated against them.

The TREC file path is the reference: its numbers are trec_eval's (tests/golden, test_trec_eval_golden.py).
"""

from __future__ import annotations

import pickle
import random
from typing import Any
from unittest import mock

import numpy as np
import pytest
from conftest import first_by_default

import trec_rag_eval as tre
from trec_rag_eval.core import matching, ranking
from trec_rag_eval.tables import derived_from, is_arrow

MEASURES = ["all_trec"]


def _pair(seed: int, ascii_ids: bool = True, negative: bool = True) -> tuple[dict, dict]:
    rng = random.Random(seed)
    accent = "" if ascii_ids else "é"
    queries = [f"{rng.choice(['q', 'Q', '1'])}{i}" for i in range(rng.randint(3, 12))]
    grades = [-1, 0, 0, 1, 2, 3] if negative else [0, 0, 1, 2, 3]
    qrels = {q: {f"d{d}{accent if d % 3 == 0 else ''}": rng.choice(grades)
                 for d in rng.sample(range(40), rng.randint(1, 12))} for q in queries}
    run = {}
    for q in queries[:-1] if len(queries) > 3 else queries:  # one query of the qrels missing from the run
        docs = rng.sample(range(40), rng.randint(1, 30))
        run[q] = {f"d{d}{accent if d % 3 == 0 else ''}": float(rng.choice([1, 2, 2, 3, rng.random()]))
                  for d in docs}  # few distinct scores: ties for doc_id to break
    run["extra"] = {"d1": 1.0}
    return qrels, run


def _written(tmp_path, qrels: dict, run: dict) -> tuple[str, str]:
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()),
                          encoding="utf-8")
    run_path.write_text("".join(f"{q} Q0 {d} 0 {s!r} run\n" for q, docs in run.items() for d, s in docs.items()),
                        encoding="utf-8")
    return str(qrels_path), str(run_path)


def _values(evaluation) -> dict:
    return {name: evaluation.summary[name] for name in evaluation.names if name != "runid"} | {
        (q, name): value for q, values in evaluation.to_dict().items() for name, value in values.items()}


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("seed", first_by_default(range(6), keep=2))
@pytest.mark.parametrize("ascii_ids", [True, False])
def test_a_dict_of_dicts_gives_the_file_s_numbers_on_every_path(tmp_path, monkeypatch, seed, ascii_ids):
    qrels, run = _pair(seed, ascii_ids)
    expected = _values(tre.evaluate(*_written(tmp_path, qrels, run), MEASURES))
    as_lists = _values(tre.evaluate(qrels, run, MEASURES))
    # the lists' judgments looked up in each query's dict, as when their table of every (query, document) is too large
    monkeypatch.setattr(matching, "DENSE_TABLE_MAX_BYTES", -1)
    searched = _values(tre.evaluate(qrels, run, MEASURES))
    monkeypatch.setattr(ranking, "LIST_FORM_MAX_ROWS", -1)  # every table ranked as a large one
    monkeypatch.setattr(ranking, "CHECKED_LIST_MAX_ROWS", -1)
    table = tre.Run(run)
    as_large = _values(tre.evaluate(qrels, table, MEASURES))
    # ASCII ids: the fast reader's Arrow table, made from the dict's blocks; others: a polars frame
    assert is_arrow(table.data) == ascii_ids
    assert as_lists.keys() == expected.keys() == as_large.keys() == searched.keys()
    for key, value in expected.items():
        assert as_lists[key] == pytest.approx(value, abs=1e-12), key
        assert searched[key] == pytest.approx(value, abs=1e-12), key
        assert as_large[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("seed", first_by_default(range(6), keep=2))
@pytest.mark.parametrize("measures", [MEASURES, ["nDCG@10", "P@5"]])
def test_judgments_given_as_a_dict_of_dicts_are_looked_up_in_their_own_dicts(tmp_path, seed, measures):
    """Judgments with no negative value given as a dict of dicts serve the ranking as their own dicts (copied:
    ``CheckedColumns.judged_dicts``), not numbered pair by pair: the file's numbers, for every run row judged
    or not, and the user's dicts changed after the table was made change nothing."""
    qrels, run = _pair(seed, negative=False)
    expected = _values(tre.evaluate(*_written(tmp_path, qrels, run), measures))
    prepared = tre.Qrels(qrels)
    assert prepared.data.judged_dicts is not None  # the path taken
    for query in qrels.values():  # changed after the table was made: nothing of it is read
        query.update({doc: 3 for doc in list(query)[:2]}, new_doc=1)
    for values in (_values(tre.evaluate(prepared, run, measures)), _values(tre.evaluate(prepared, run, measures))):
        assert values.keys() == expected.keys()
        for key, value in expected.items():
            assert values[key] == pytest.approx(value, abs=1e-12), key
    assert pickle.loads(pickle.dumps(prepared.data)).judged_dicts is None  # a worker gets the columns alone
    # a negative judgment (in the pool, not judged) is no value a row may take as it is: numbered as before
    assert tre.Qrels(_pair(seed)[0] | {"neg": {"d1": -1}}).data.judged_dicts is None


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("grade_kind", ["int", "float", "numpy", "numpy float", "large"])
@pytest.mark.parametrize("judged_docs", [40, 300])
def test_every_row_s_judgment_whatever_the_type_of_the_grades_and_the_number_of_judged_documents(tmp_path, grade_kind,
                                                                                              judged_docs):
    """A run's rows get their judgments as a list of Python ints, made an array through a bytearray when each is
    0 to 255 (``matching._small_ints``) and by numpy otherwise: grades given as floats (1.0) or above 127 (int64
    judgments), numpy's ints and floats, and more than 255 judged documents (the number of a row's document above a
    byte) give ir_measures' numbers (its pytrec_eval) on the same judgments as ints, for the whole ranking (AP, MRR)
    and its top."""
    import ir_measures

    rng = random.Random(judged_docs)
    convert = {"int": int, "float": float, "numpy": np.int64, "numpy float": np.float64,
               "large": lambda grade: 100 * grade}[grade_kind]
    qrels = {f"q{q}": {f"d{d}": convert(rng.choice([0, 1, 2, 3])) for d in rng.sample(range(judged_docs), 30)}
             for q in range(12)}
    run = {f"q{q}": {f"d{d}": rng.choice([1.0, 2.0, rng.random()]) for d in rng.sample(range(judged_docs), 35)}
           for q in range(12)}
    written = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
    names = {"AP": "AP", "MRR": "RR", "R@35": "R@35", "nDCG@10": "nDCG@10", "P@5": "P@5", "NumRelRet": "NumRet(rel=1)"}
    measured = {(m.query_id, str(m.measure)): m.value for m in ir_measures.pytrec_eval.iter_calc(
        [ir_measures.parse_measure(theirs) for theirs in names.values()], written, run)}
    expected = {(query, ours): measured[query, theirs] for query in run for ours, theirs in names.items()}
    for judgments in (qrels, tre.Qrels(qrels), tre.Qrels(written), _written(tmp_path, written, run)[0]):
        values = tre.evaluate(judgments, run, list(names)).to_dict()
        got = {(query, name): value for query, row in values.items() for name, value in row.items()}
        assert got.keys() == expected.keys()
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("seed", first_by_default(range(6), keep=2))
def test_judgments_given_as_lists_of_relevant_ids_give_the_file_s_numbers(tmp_path, seed):
    """Lists of relevant ids are judgments of 1 (the README's list shape), looked up in a dict made of each list
    (``CheckedColumns.judged_dicts``): the numbers of the same judgments written as a qrels file."""
    qrels, run = _pair(seed, negative=False)
    relevant = {q: [d for d, grade in docs.items() if grade > 0] for q, docs in qrels.items()}
    relevant = {q: ids for q, ids in relevant.items() if ids}
    expected = _values(tre.evaluate(*_written(tmp_path, {q: dict.fromkeys(ids, 1) for q, ids in relevant.items()},
                                              run), MEASURES))
    prepared = tre.Qrels(relevant)
    assert prepared.data.judged_dicts is not None  # the path taken
    values = _values(tre.evaluate(prepared, run, MEASURES))
    assert values.keys() == expected.keys()
    for key, value in expected.items():
        assert values[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
def test_qrels_prepared_once_serve_every_run_and_leave_nothing_behind_when_sent():
    qrels_dict, _ = _pair(7)
    qrels = tre.Qrels(qrels_dict)
    runs = [_pair(seed)[1] for seed in range(8, 12)]
    # the ideal rankings kept with the judgments (every judged document's) beside one made of each run's own
    measures = ["AP", "nDCG@10", "nDCG", "nDCG(ideal='retrieved')@5", "nDCG(gains={0:1,1:2,3:9})@3", "P(rel=2)@5"]
    for run, settings in zip(runs, [{}, {"queries": "intersection"}, {"relevance_level": 2}, {}], strict=True):
        # the same numbers as judgments made anew for each run
        assert tre.evaluate(qrels, run, measures, **settings).to_dict() == \
            tre.evaluate(qrels_dict, run, measures, **settings).to_dict()
    derived_from(qrels)["probe"] = np.arange(3)
    assert list(derived_from(qrels)["probe"]) == [0, 1, 2]  # kept with the table
    assert "query_ids" in derived_from(qrels)  # what the evaluations derived from the judgments
    # a table sent to a worker (pickled) carries its rows, not what was derived from them
    sent = pickle.loads(pickle.dumps(qrels))
    assert sent.to_dict() == qrels.to_dict() and "_derived" not in sent.__dict__


@pytest.fixture
def reads(monkeypatch):
    """The times judgments in memory were read into a table (``service.inputs.qrels_data``), none kept before."""
    from trec_rag_eval.service import inputs

    made: list[object] = []
    real = inputs.qrels_data
    monkeypatch.setattr(inputs, "qrels_data", lambda value, *args, **kwargs: made.append(value) or real(value, *args,
                                                                                                        **kwargs))
    monkeypatch.setattr(inputs, "_PREPARED", {})
    return made


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
def test_a_qrels_dict_given_again_with_the_same_content_is_read_once(tmp_path, reads):
    """A training loop or a sweep that hands ``evaluate`` its qrels dict at every call has it read once: the same
    content (the same dict, or an equal copy) gives the same table; a dict changed in place is read again and gives
    the changed judgments' numbers (those of a qrels file written from it)."""
    import copy

    qrels, run = _pair(21, negative=False)
    first = _values(tre.evaluate(qrels, run, MEASURES))
    assert first == _values(tre.evaluate(*_written(tmp_path, qrels, run), MEASURES))
    assert _values(tre.evaluate(qrels, run, MEASURES)) == first
    assert _values(tre.evaluate(copy.deepcopy(qrels), run, MEASURES)) == first
    assert tre.read_qrels(qrels) is tre.read_qrels(qrels)
    assert len(reads) == 1
    query = next(iter(run.keys() & qrels.keys()))
    judged = next(doc for doc in run[query] if doc in qrels[query])
    qrels[query][judged] = 3 - qrels[query][judged]  # changed in place: 0 <-> 3, 1 <-> 2
    changed = _values(tre.evaluate(qrels, run, MEASURES))
    assert len(reads) == 2 and changed != first
    assert changed == _values(tre.evaluate(*_written(tmp_path, qrels, run), MEASURES))


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_qrels_frame_given_again_with_the_same_content_is_read_once(reads, monkeypatch, library):
    """A pandas or polars frame of judgments given again (the same frame, or an equal one made anew) is read once; a
    frame changed in place (pandas' ``loc``) or one of other dtypes is read again, and so is every frame of at most
    ``PREPARED_MIN_FRAME_ROWS`` rows (read as lists, faster than pickled). By hand: the run ranks d1 then d2; P@1 is
    1 while d1 is relevant, 0 once it is judged 0; R@2 is 2/3 when d1, d2 and d3 are relevant."""
    from trec_rag_eval.service import inputs

    module = pytest.importorskip(library)
    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    monkeypatch.setattr(inputs, "PREPARED_MIN_FRAME_ROWS", 3)
    two = module.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    for _ in range(2):
        assert tre.evaluate(two, run, "P@1").summary["P@1"] == 1.0
    assert len(reads) == 2
    monkeypatch.setattr(inputs, "PREPARED_MIN_FRAME_ROWS", 2)
    reads.clear()

    def frame(grades: list[int], dtype: str = "int64"):
        columns = {"query_id": ["q1", "q1", "q1"], "doc_id": ["d1", "d2", "d3"], "relevance": grades}
        if library == "pandas":
            return module.DataFrame(columns).astype({"relevance": dtype})
        return module.DataFrame(columns).cast({"relevance": getattr(module, dtype.capitalize())})

    judgments = frame([1, 0, 1])
    for given in (judgments, judgments, frame([1, 0, 1])):
        assert tre.evaluate(given, run, "P@1").summary["P@1"] == 1.0
    assert len(reads) == 1
    assert tre.evaluate(frame([1, 0, 1], "int32"), run, "P@1").summary["P@1"] == 1.0
    assert len(reads) == 2
    if library == "pandas":
        judgments.loc[0, "relevance"] = 0
        assert tre.evaluate(judgments, run, "P@1").summary["P@1"] == 0.0
        assert len(reads) == 3
    assert tre.evaluate(frame([1, 1, 1]), run, "R@2").summary["R@2"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_kept_frame_is_told_by_the_bytes_of_its_columns_their_types_and_where_a_slice_starts(reads, monkeypatch,
                                                                                             library):
    """A frame's content is compared by its columns' bytes (``tables.small_frames.frame_content``), never by bytes
    alone: a boolean column (refused: booleans are not grades) holds the bytes of an int8 column of 1 and 0; slices
    of a frame share its buffers; a frame changed in place (pandas' ``loc``, polars' item assignment), a doc id
    changed for another of its length, a column of Python strings (compared by the frame's pickle), each read again.
    By hand: the run ranks d1 then d2, so P@1 is 1 when d1 is relevant and 0 when it is unjudged or judged 0."""
    from trec_rag_eval.service import inputs

    module = pytest.importorskip(library)
    monkeypatch.setattr(inputs, "PREPARED_MIN_FRAME_ROWS", 2)
    run = {"q1": {"d1": 2.0, "d2": 1.0}}

    def frame(docs: list[str], grades: list[Any], dtype: str = "int8", strings: str | None = None):
        columns = {"query_id": ["q1"] * len(docs), "doc_id": docs, "relevance": grades}
        if library == "pandas":
            made = module.DataFrame(columns).astype({"relevance": dtype})
            return made if strings is None else made.astype({"doc_id": strings, "query_id": strings})
        return module.DataFrame(columns).cast({"relevance": module.Boolean if dtype == "bool" else module.Int8})

    def p_at_1(judgments: Any) -> float:
        return tre.evaluate(judgments, run, "P@1").summary["P@1"]

    judgments = frame(["d1", "d2", "d3", "d4"], [1, 0, 1, 1])
    assert [p_at_1(judgments), p_at_1(judgments)] == [1.0, 1.0] and len(reads) == 1
    with pytest.raises(tre.InputFormatError, match="relevance"):
        p_at_1(frame(["d1", "d2", "d3", "d4"], [True, False, True, True], "bool"))
    assert p_at_1(frame(["d9", "d2", "d3", "d4"], [1, 0, 1, 1])) == 0.0
    # two slices of four rows of one frame, the same buffers: d1 to d4, then d2 to d5 (d1 unjudged)
    five = frame(["d1", "d2", "d3", "d4", "d5"], [1, 1, 1, 1, 1])
    assert [p_at_1(five[0:4]), p_at_1(five[1:5])] == [1.0, 0.0]
    assert len(reads) == 5
    if library == "pandas":
        judgments.loc[0, "relevance"] = 0
        assert p_at_1(judgments) == 0.0
        judgments.loc[0, "relevance"], judgments.loc[0, "doc_id"] = 1, "d5"
        assert p_at_1(judgments) == 0.0
        python_strings = frame(["d1", "d2", "d3", "d4"], [1, 0, 1, 1], strings="object")
        assert [p_at_1(python_strings), p_at_1(python_strings)] == [1.0, 1.0]
        python_strings.loc[0, "doc_id"] = "d5"
        assert p_at_1(python_strings) == 0.0
        assert len(reads) == 9
    else:
        judgments[0, "relevance"] = 0
        assert p_at_1(judgments) == 0.0 and len(reads) == 6


def test_kept_judgments_are_told_apart_by_type_and_name_and_never_kept_when_refused(reads):
    """1, 1.0 and True are equal in Python but not to the library: a grade True is refused (bools are not grades)
    even after a dict of 1 was read; a dict that is refused is refused again, in the same words; judgments read under
    another name carry that name; numpy's 1.0 (whose 8 bytes are those of a grade out of range, and of a bytes
    value) never stands for them; dicts past ``PREPARED_MAX_JUDGMENTS`` are read at every call."""
    from trec_rag_eval.service import inputs

    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    assert tre.evaluate({"q1": {"d1": 1}}, run, "P@1").summary["P@1"] == 1.0
    assert tre.evaluate({"q1": {"d1": 1.0}}, run, "P@1").summary["P@1"] == 1.0
    assert len(reads) == 2  # 1.0 is read anew
    for _ in range(2):
        with pytest.raises(tre.InputFormatError, match=r"query 'q1', document 'd1': the relevance True is not an "):
            tre.evaluate({"q1": {"d1": True}}, run, "P@1")
    assert len(reads) == 4 and len(inputs._PREPARED) == 2
    assert inputs.as_qrels({"q1": {"d1": 1}}, "dev").source == "dev (dict)"
    assert inputs.as_qrels({"q1": {"d1": 1}}).source == "qrels (dict)"
    assert len(reads) == 5  # the same judgments under another name are read for it
    for _ in range(2):
        assert tre.evaluate({"q1": {"d1": np.float64(1.0)}}, run, "P@1").summary["P@1"] == 1.0
    assert len(reads) == 6
    same_bytes = np.float64(1.0).view(np.int64)
    with pytest.raises(tre.InputFormatError, match=f"the relevance {same_bytes} is "):
        tre.evaluate({"q1": {"d1": int(same_bytes)}}, run, "P@1")
    with pytest.raises(tre.InputFormatError, match="the relevance b'"):
        tre.evaluate({"q1": {"d1": np.float64(1.0).tobytes()}}, run, "P@1")
    assert len(reads) == 8
    large = {"q1": {f"d{i}": 1 for i in range(1, inputs.PREPARED_MAX_JUDGMENTS + 2)}}
    for _ in range(2):
        assert tre.evaluate(large, run, "P@1").summary["P@1"] == 1.0
    assert len(reads) == 10


def test_the_judgments_kept_are_those_used_last_within_a_count_and_a_total(reads, monkeypatch):
    """A notebook that evaluates against several judgments in turn (a development and a test set, each dataset of a
    benchmark, each shape of the same judgments) has each read once while at most ``PREPARED_KEPT`` of them, of at
    most ``PREPARED_KEPT_JUDGMENTS`` judgments in all, are used in turn; past either, the judgments used longest ago
    are let go (one used again is the newest), read again when they come back. By hand: the run ranks d1 first, so
    P@1 is 1 against judgments where d1 is relevant, 0 where it is not."""
    from trec_rag_eval.service import inputs

    monkeypatch.setattr(inputs, "PREPARED_KEPT", 3)
    run = {"q1": {"d1": 2.0, "d2": 1.0}}
    sets = [{"q1": {"d1": grade, "d2": 1 - grade}} for grade in (1, 0)] + [{"q1": {"d1": 1, "d2": 1}}]
    for _ in range(3):  # three judgments in turn, three kept: each read once
        assert [tre.evaluate(qrels, run, "P@1").summary["P@1"] for qrels in sets] == [1.0, 0.0, 1.0]
    assert len(reads) == 3
    tre.evaluate(sets[0], run, "P@1")  # used again: now the newest; sets[1] is the oldest used
    assert tre.evaluate({"q1": {"d3": 1}}, run, "P@1").summary["P@1"] == 0.0  # a fourth: sets[1] let go
    assert len(reads) == 4
    assert tre.evaluate(sets[0], run, "P@1").summary["P@1"] == 1.0 and len(reads) == 4
    assert tre.evaluate(sets[1], run, "P@1").summary["P@1"] == 0.0 and len(reads) == 5
    # the total: three judgments kept at most, so two judgments of two keep the one used last alone
    monkeypatch.setattr(inputs, "_PREPARED", {})
    monkeypatch.setattr(inputs, "PREPARED_KEPT_JUDGMENTS", 3)
    for _ in range(2):
        assert [tre.evaluate(qrels, run, "P@1").summary["P@1"] for qrels in sets[:2]] == [1.0, 0.0]
    assert len(reads) == 9 and len(inputs._PREPARED) == 1
    assert tre.evaluate(sets[1], run, "P@1").summary["P@1"] == 0.0 and len(reads) == 9


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_a_small_data_frame_is_read_as_lists_and_gives_the_file_s_numbers(tmp_path, monkeypatch, library):
    # below SMALL_FRAME_ROWS a frame's columns become lists, ranked without polars' hashing; above, the frame is
    # ranked by polars as before: both give the numbers of the same data read from TREC files
    from trec_rag_eval.service.inputs import as_run
    from trec_rag_eval.tables import CheckedColumns, shapes

    module = pytest.importorskip(library)
    qrels, run = _pair(3)
    expected = _values(tre.evaluate(*_written(tmp_path, qrels, run), MEASURES))

    def frame(nested: dict, value: str):
        rows = [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]
        return module.DataFrame({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                                 value: [r[2] for r in rows]})

    frames = frame(qrels, "relevance"), frame(run, "score")
    assert isinstance(as_run(frames[1]).data, CheckedColumns)  # what evaluate() makes of the frame
    as_lists = _values(tre.evaluate(*frames, MEASURES))
    monkeypatch.setattr(shapes, "SMALL_FRAME_ROWS", -1)
    assert not isinstance(as_run(frames[1]).data, dict)
    as_frames = _values(tre.evaluate(*frames, MEASURES))
    for key, value in expected.items():
        assert as_lists[key] == pytest.approx(value, abs=1e-12), key
        assert as_frames[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("arrow_type", ["string", "large_string", "string_view"])
def test_pandas_frames_of_every_arrow_string_type_give_the_file_s_numbers(tmp_path, arrow_type):
    # pandas holds ids in Arrow with pd.ArrowDtype(...) (and its "str" dtype): each Arrow string type is read,
    # the views too (Arrow's own length function has no kernel for them), and an empty id is still named
    pd = pytest.importorskip("pandas")
    pa = pytest.importorskip("pyarrow")
    dtype = pd.ArrowDtype(getattr(pa, arrow_type)())
    qrels, run = _pair(5)
    expected = _values(tre.evaluate(*_written(tmp_path, qrels, run), MEASURES))

    def frame(nested: dict, value: str):
        rows = [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]
        return pd.DataFrame({"query_id": pd.array([r[0] for r in rows], dtype=dtype),
                             "doc_id": pd.array([r[1] for r in rows], dtype=dtype), value: [r[2] for r in rows]})

    ours = _values(tre.evaluate(frame(qrels, "relevance"), frame(run, "score"), MEASURES))
    assert ours.keys() == expected.keys()
    for key, value in expected.items():
        assert ours[key] == pytest.approx(value, abs=1e-12), key
    bad = pd.DataFrame({"query_id": pd.array(["1", "1"], dtype=dtype), "doc_id": pd.array(["a", ""], dtype=dtype),
                        "score": [1.0, 2.0]})
    with pytest.raises(tre.InputFormatError, match=r"^run \(pandas DataFrame\): row 2: expected a query_id, a "
                                                   r"doc_id and a score .*, got '1', '', 2\.0"):
        tre.Run(bad)


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
@pytest.mark.parametrize("kind", ["Table", "RecordBatch"])
def test_an_arrow_table_gives_the_file_s_numbers_and_names_its_bad_rows(tmp_path, kind):
    # pyarrow's Table and RecordBatch with ir_measures' column names, as pandas and polars frames are read
    pa = pytest.importorskip("pyarrow")
    qrels, run = _pair(4)
    expected = _values(tre.evaluate(*_written(tmp_path, qrels, run), MEASURES))

    def table(nested: dict, value: str):
        rows = [(q, d, v) for q, docs in nested.items() for d, v in docs.items()]
        made = pa.table({"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows],
                         value: [r[2] for r in rows]})
        return made if kind == "Table" else made.combine_chunks().to_batches()[0]

    ours = _values(tre.evaluate(table(qrels, "relevance"), table(run, "score"), MEASURES))
    assert ours.keys() == expected.keys()
    for key, value in expected.items():
        assert ours[key] == pytest.approx(value, abs=1e-12), key
    with pytest.raises(tre.InputFormatError, match=rf"^run \(Arrow {kind}\): row 2: document 'a' listed twice "
                                                   r"for query '1' \(first at row 1\)"):
        tre.Run(getattr(pa, kind).from_pydict({"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": [1.0, 2.0]}))
    with pytest.raises(tre.InputFormatError, match=r"a score \(a number other than NaN\), got '1', 'b', nan"):
        tre.Run(pa.table({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]}))
    with pytest.raises(tre.InputFormatError, match=r"needs the columns query_id, doc_id, relevance; it has "
                                                   r"query_id, doc$"):
        tre.Qrels(pa.table({"query_id": ["1"], "doc": ["a"]}))


def test_a_list_of_measure_names_is_parsed_once_per_process_and_again_after_a_registration(monkeypatch):
    # a sweep or a training loop asks for the same list on every call: the names are parsed on the first call
    # only, and a family registered since is seen by the next call (a name unknown before it then means the new
    # family; in a process of its own, so that the registry of this one stays as it is)
    import subprocess
    import sys

    from trec_rag_eval.measures import requests

    parsed: list[str] = []
    real = requests.parse_notation
    monkeypatch.setattr(requests, "parse_notation", lambda text: parsed.append(text) or real(text))
    qrels, run = {"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 2.0, "d2": 1.0}}
    names = ["nDCG@2", "P@1", "RR@2"]
    first = tre.evaluate(qrels, run, names)
    assert set(parsed) == set(names)
    parsed.clear()
    for _ in range(3):
        assert tre.evaluate(qrels, run, names).summary_by_name == first.summary_by_name
    assert parsed == []
    code = """
import numpy as np, trec_rag_eval as tre
from trec_rag_eval.measures.model import Family, register
qrels, run, names = {"q1": {"d1": 1, "d2": 0}}, {"q1": {"d1": 2.0, "d2": 1.0}}, ["P@1", "Toyhit@1"]
try:
    tre.evaluate(qrels, run, names)
except tre.MeasureSyntaxError as err:
    print("before:", err.reason)
register(Family("toyhit", lambda ctx, m: (ctx.cnt_at(int(m.cutoff)) > 0).astype(np.float64), "A toy.",
                kind="int_cutoffs", defaults=(1,), names=("Toyhit@k",)))
print("after:", tre.evaluate(qrels, run, names).summary_by_name)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["before: unknown measure (see: trec-rag-eval measures)",
                                       "after: {'P@1': 1.0, 'Toyhit@1': 1.0}"]


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")
def test_the_intersection_of_every_judged_query_uses_the_judgments_kept_with_the_qrels():
    # pytrec_eval's drop-in evaluates with queries="intersection": a run that has every judged query needs no
    # judgments of its own, and gives the numbers of judgments made anew
    qrels_dict, _ = _pair(21)
    run = {q: {f"d{d}": float(d % 7) for d in range(30)} for q in qrels_dict}  # every judged query, ties included
    qrels = tre.Qrels(qrels_dict)
    measures = ["AP", "nDCG@10", "nDCG", "Rprec", "P(rel=2)@5"]
    first = tre.evaluate(qrels, run, measures).to_dict()  # queries="qrels": the judgments made, and kept
    for settings in ({"queries": "intersection"}, {"queries": "intersection", "relevance_level": 2}):
        expected = tre.evaluate(qrels_dict, run, measures, **settings).to_dict()
        with mock.patch.object(ranking, "Judgments", side_effect=AssertionError("judgments made again")):
            assert tre.evaluate(qrels, run, measures, **settings).to_dict() == expected
    assert tre.evaluate(qrels, run, measures).to_dict() == first


@pytest.mark.filterwarnings("ignore::trec_rag_eval.errors.TrecRagEvalWarning")  # recorded where compared
@pytest.mark.parametrize("seed", first_by_default(range(4), keep=2))
def test_one_run_in_memory_gives_the_same_numbers_warnings_and_errors_on_the_short_path_and_the_long(seed):
    """One run in memory with no keyword but the settings' fields is evaluated by the short path
    (``service.pipeline._in_memory_outcome``); any other keyword (``jobs=1`` here, which changes nothing for one run)
    sends it through the machinery of many runs. Both give the same values, the same warnings in the same order, and
    the same error; ``evaluate_many`` of the run alone and beside another gives its same outcome."""
    import warnings

    qrels, run = _pair(seed)
    results = {q: [{"id": d, "score": s} for d, s in docs.items()] for q, docs in run.items()}
    bad = {"q": [{"id": "a", "score": 1.0}, {"id": "", "score": 0.5}]}  # an empty id: the row path's error

    def outcome(**options):
        made = []
        for given in (run, results, bad):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    found = _values(tre.evaluate(qrels, given, MEASURES, relevance_level=1, **options))
                except tre.TrecRagEvalError as err:
                    found = (type(err).__name__, str(err))
            made.append((found, [str(w.message) for w in caught]))
        return made

    assert outcome() == outcome(jobs=1)
    alone = next(iter(tre.evaluate_many(qrels, {"mine": results}, MEASURES)))
    beside = next(iter(tre.evaluate_many(qrels, {"mine": results, "other": run}, MEASURES)))
    assert (alone.label, [str(note) for note in alone.notes]) == (beside.label, [str(note) for note in beside.notes])
    assert _values(alone.evaluation) == _values(beside.evaluation)
    failed = next(iter(tre.evaluate_many(qrels, [bad], MEASURES)))
    long_failed = next(iter(tre.evaluate_many(qrels, [bad, run], MEASURES)))
    assert (failed.label, str(failed.error)) == ("run", str(long_failed.error)) and long_failed.label == "run 1"
