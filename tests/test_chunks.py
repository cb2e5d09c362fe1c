"""Chunk -> document mapping: runs of chunk ids scored against judgments made per document."""

from __future__ import annotations

import json
import math
import re

import polars as pl
import pytest

from trec_rag_eval.cli import main
from trec_rag_eval.compare import compare_runs
from trec_rag_eval.engine.harness import Evaluator
from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.chunk_collapse import collapse_run
from trec_rag_eval.io.chunks import DocIdMap, read_doc_map
from trec_rag_eval.tables import Qrels, Run

# Judgments per document. q1: A=2, B=1, C=0. q2: a=1, a0=0.
QRELS = Qrels.from_dict({"q1": {"docA": 2, "docB": 1, "docC": 0}, "q2": {"a": 1, "a0": 0}})

# q1 retrieves docA through two chunks and docB through two; docX is judged nowhere.
# q2: the best chunks of "a" and "a0" tie at 3.0. As chunk ids "a::7" > "a0::1" (':' 0x3a > '0' 0x30
# at the second byte), so "a" would come first; as documents "a0" > "a", so "a0" comes first: the tie
# is decided on the document ids after the collapse.
CHUNK_RUN = {
    "q1": {"docA::1": 9.0, "docC::0": 8.0, "docA::2": 7.0, "docB::3": 6.0, "docX::1": 5.0, "docB::1": 4.0},
    "q2": {"a::7": 3.0, "a0::1": 3.0, "a::2": 1.0},
}
# The document run a retriever working on whole documents would have returned.
DOC_RUN = {"q1": {"docA": 9.0, "docC": 8.0, "docB": 6.0, "docX": 5.0}, "q2": {"a": 3.0, "a0": 3.0}}
PATTERN = r"^(.*)::\d+$"

# Hand computation, ranking after collapse (score desc, then doc id desc in bytes):
#   q1: docA(2) docC(0) docB(1) docX(-)      q2: a0(0) a(1)  (tie at 3.0: "a0" > "a")
LOG2_3 = math.log2(3)
EXPECTED = {
    # q1: relevant in the top 3 = docA, docB -> 2/3; q2: a only -> 1/3
    "P@3": {"q1": 2 / 3, "q2": 1 / 3},
    # q1: 4 documents retrieved, 2 relevant -> 2/5 (docA counted once: its second chunk would make it 3/5)
    "P@5": {"q1": 2 / 5, "q2": 1 / 5},
    "R@3": {"q1": 1.0, "q2": 1.0},
    # q2: first relevant at rank 2
    "MRR": {"q1": 1.0, "q2": 0.5},
    # q1: DCG = 2/log2(2) + 0 + 1/log2(4) = 2.5; IDCG = 2 + 1/log2(3).  q2: DCG = 1/log2(3), IDCG = 1
    "nDCG@3": {"q1": 2.5 / (2 + 1 / LOG2_3), "q2": 1 / LOG2_3},
}


def _values(evaluation) -> dict[str, dict[str, float]]:
    return {name: dict(zip(evaluation.query_ids, map(float, evaluation.values[name]), strict=True))
            for name in evaluation.names}


def _assert_expected(evaluation) -> None:
    got = _values(evaluation)
    for name, per_query in EXPECTED.items():
        for query_id, value in per_query.items():
            assert got[name][query_id] == pytest.approx(value, abs=1e-12), (name, query_id)


def test_a_chunk_run_collapsed_by_pattern_scores_as_the_document_run():
    chunk = evaluate_tables(QRELS, Run.from_dict(CHUNK_RUN), list(EXPECTED), doc_map=PATTERN)
    document = evaluate_tables(QRELS, Run.from_dict(DOC_RUN), list(EXPECTED))
    _assert_expected(chunk)
    _assert_expected(document)
    report = chunk.collapse
    assert report.collapsed and (report.rows_in, report.rows_out, report.merged) == (9, 6, 3)
    assert report.unmapped == ()


def test_without_a_mapping_the_chunk_run_scores_zero():
    evaluation = evaluate_tables(QRELS, Run.from_dict(CHUNK_RUN), ["P@3", "nDCG@3"])
    assert all(value == 0 for name in evaluation.names for value in evaluation.values[name])


# the second pattern has a lookahead, which polars' regex engine lacks: Python's re maps then
@pytest.mark.parametrize("pattern", [PATTERN, r"^(.+?)(?=::\d+$)"])
@pytest.mark.parametrize("form", ["lists", "polars"])
def test_collapse_keeps_each_document_once_at_its_best_chunk_score(form, pattern):
    chunk_run = Run.from_dict(CHUNK_RUN)
    if form == "polars":   # large runs are polars frames: the same collapse, done by polars
        chunk_run = Run(chunk_run.frame, checked=True)
    run, report = collapse_run(chunk_run, pattern, QRELS)
    assert run.to_dict() == DOC_RUN
    assert (report.distinct_ids, report.mapped_ids, report.rows_out) == (9, 9, 6)
    _assert_expected(evaluate_tables(QRELS, chunk_run, list(EXPECTED), doc_map=pattern))


@pytest.mark.parametrize("form", ["lists", "polars"])
def test_a_nan_score_never_beats_a_real_one_and_unmapped_ids_are_counted(form):
    run = Run.from_dict({"q1": {"d::1": float("nan"), "d::2": 1.0, "e::1": float("nan"), "f": 0.5},
                         "q2": {"f": 2.0}})
    if form == "polars":
        run = Run(run.frame, checked=True)
    collapsed, report = collapse_run(run, PATTERN)
    got = collapsed.to_dict()
    assert got["q1"]["d"] == 1.0 and math.isnan(got["q1"]["e"]) and got["q1"]["f"] == 0.5
    assert report.unmapped == (("f", 2),)


@pytest.mark.parametrize("fmt", ["tsv", "json", "json-list", "parquet"])
def test_a_chunk_run_collapsed_by_a_map_file_scores_as_the_document_run(tmp_path, fmt):
    # opaque node ids, the document only in the map
    nodes = {chunk: f"node-{i:02d}" for i, chunk in enumerate(sorted({c for d in CHUNK_RUN.values() for c in d}))}
    node_run = Run.from_dict({q: {nodes[c]: s for c, s in docs.items()} for q, docs in CHUNK_RUN.items()})
    table = {node: chunk.rsplit("::", 1)[0] for chunk, node in nodes.items()}
    path = tmp_path / f"map.{fmt}"
    if fmt == "tsv":
        path.write_text("chunk_id\tdoc_id\n" + "".join(f"{n}\t{d}\n" for n, d in table.items()), encoding="utf-8")
    elif fmt == "json":
        path.write_text(json.dumps(table), encoding="utf-8")
    elif fmt == "json-list":
        path.write_text(json.dumps([{"node_id": n, "doc_id": d} for n, d in table.items()]), encoding="utf-8")
    else:
        pl.DataFrame({"chunk_id": list(table), "doc_id": list(table.values())}).write_parquet(path)
    assert read_doc_map(path) == table
    evaluation = evaluate_tables(QRELS, node_run, list(EXPECTED), doc_map=DocIdMap.from_file(path))
    _assert_expected(evaluation)


def test_a_callable_and_a_dict_map_as_the_pattern_does():
    for mapping in (lambda chunk: chunk.rsplit("::", 1)[0],
                    {c: c.rsplit("::", 1)[0] for docs in CHUNK_RUN.values() for c in docs}):
        _assert_expected(evaluate_tables(QRELS, Run.from_dict(CHUNK_RUN), list(EXPECTED), doc_map=mapping))


def test_judgments_per_chunk_are_left_alone():
    # the qrels judge chunks: docA::1 relevant, docA::2 not. Collapsing would lose that.
    qrels = Qrels.from_dict({"q1": {"docA::1": 0, "docA::2": 1, "docB::3": 1}})
    run = Run.from_dict({"q1": CHUNK_RUN["q1"]})
    evaluation = evaluate_tables(qrels, run, ["P@3", "P@6"], doc_map=PATTERN)
    report = evaluation.collapse
    assert not report.collapsed and report.chunk_judgments == 3
    assert "judgments per chunk are used as they are" in report.warnings()[0]
    # ranking of chunks: docA::1(0) docC::0(-) docA::2(1) docB::3(1) docX::1(-) docB::1(-)
    assert float(evaluation.value("P@3")) == pytest.approx(1 / 3)
    assert float(evaluation.value("P@6")) == pytest.approx(2 / 6)


def test_unmapped_ids_are_kept_counted_and_reported():
    run = Run.from_dict({"q1": {"docA::1": 3.0, "docB": 2.0}, "q2": {"docB": 1.0, "a::1": 0.5}})
    collapsed, report = collapse_run(run, PATTERN, QRELS)
    assert collapsed.to_dict() == {"q1": {"docA": 3.0, "docB": 2.0}, "q2": {"docB": 1.0, "a": 0.5}}
    assert report.unmapped == (("docB", 2),)
    assert report.warnings() == [
        f"1 of 3 retrieved ids (2 rows) are not covered by pattern '{PATTERN}' and were kept as they are: docB (2)"
    ]


@pytest.mark.parametrize("form", ["lists", "polars"])
def test_a_mapping_that_leaves_most_retrieved_ids_unknown_warns(form):
    # the pattern cuts the wrong part: documents "1", "2", "7"... are judged nowhere
    run = Run.from_dict(CHUNK_RUN)
    _, report = collapse_run(run if form == "lists" else Run(run.frame, checked=True), r"::(\d+)$", QRELS)
    assert (report.unknown_share, report.queries_with_judged, report.queries_with_results) == (1.0, 0, 2)
    assert report.warnings()[-1] == (
        "after mapping with pattern '::(\\d+)$', only 0 of 2 queries retrieve a document judged for them and "
        "100.0% of the retrieved documents are judged for no query: check that the mapping gives the ids the qrels use"
    )


@pytest.mark.parametrize("form", ["lists", "polars"])
def test_sparse_judgments_with_a_right_mapping_do_not_warn(form):
    # each query judges one document and retrieves it among 9 documents judged nowhere: 90% unknown,
    # but every query finds a judged document, so the mapping is right
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 0}})
    run = Run.from_dict({q: {f"{d}::0": 10.0} | {f"x{q}{i}::1": float(i) for i in range(9)}
                         for q, d in (("q1", "a"), ("q2", "b"))})
    _, report = collapse_run(run if form == "lists" else Run(run.frame, checked=True), PATTERN, qrels)
    assert report.unknown_share == pytest.approx(18 / 20)
    assert (report.queries_with_judged, report.queries_with_results) == (2, 2)
    assert report.warnings() == []


def test_bad_patterns_and_map_files_are_clear_errors(tmp_path):
    with pytest.raises(UsageError) as usage:
        DocIdMap.from_pattern(r"#\d+$")
    # the pattern as the user typed it (not its repr, which doubles the backslashes)
    assert str(usage.value) == ("the document id pattern '#\\d+$' has no group: put the document id in "
                                "parentheses, e.g. '^(.*)#\\d+$'")
    with pytest.raises(UsageError) as usage:
        DocIdMap.from_pattern(r"(\d")
    assert str(usage.value) == ("the document id pattern '(\\d' is not a regular expression: missing ), "
                                "unterminated subpattern at position 0")
    bad = tmp_path / "map.tsv"
    bad.write_text("c1\td1\nc1\td2\n", encoding="utf-8")
    with pytest.raises(InputFormatError) as err:
        read_doc_map(bad)
    assert str(err.value).startswith(f"{bad}:2: chunk 'c1' is mapped to 'd1' (line 1) and to 'd2'")
    bad.write_text("c1 d1\n", encoding="utf-8")
    with pytest.raises(InputFormatError, match=r"map.tsv:1: expected 2 tab-separated columns"):
        read_doc_map(bad)


def test_bad_rows_of_parquet_and_json_map_files_are_named(tmp_path):
    """A map file's fault names its row (1 is the first row, as for Parquet runs) or JSON item."""
    path = tmp_path / "map.parquet"
    pl.DataFrame({"chunk_id": ["c1", "c2", "c3"], "doc_id": ["d1", "d2", None]}).write_parquet(path)
    with pytest.raises(InputFormatError) as err:
        read_doc_map(path)
    assert str(err.value) == f"{path}: row 3: empty chunk id or document id"
    pl.DataFrame({"chunk_id": ["c1", "c2", "c1"], "doc_id": ["d1", "d2", "d9"]}).write_parquet(path)
    with pytest.raises(InputFormatError) as err:
        read_doc_map(path)
    assert str(err.value) == f"{path}: row 3: chunk 'c1' is mapped to 'd1' (row 1) and to 'd9'"
    listed = tmp_path / "map.json"
    listed.write_text(json.dumps([{"chunk_id": "c1", "doc_id": "d1"}, {"chunk_id": "c2", "doc_id": ""}]))
    with pytest.raises(InputFormatError) as err:
        read_doc_map(listed)
    assert str(err.value) == f"{listed}:1: item 2: the document id '' is empty"  # items count from 1
    listed.write_text(json.dumps({"c1": "d1", "c2": ""}))
    with pytest.raises(InputFormatError) as err:
        read_doc_map(listed)
    assert str(err.value) == f"{listed}:1: key 'c2': the document id '' is empty"


def test_a_jsonl_map_of_one_line_is_its_one_row(tmp_path):
    # one line of JSONL is also a JSON object; {"chunk_id": "c1", "doc_id": "d1"} maps c1 to d1, it does not
    # map chunks named "chunk_id" and "doc_id"
    path = tmp_path / "map.jsonl"
    path.write_text('{"chunk_id": "c1", "doc_id": "d1"}\n')
    assert read_doc_map(path) == {"c1": "d1"}
    path.write_text('{"node_id": "c1", "document_id": "d1", "text": "..."}\n')
    assert read_doc_map(path) == {"c1": "d1"}
    path.write_text('{"chunk_id": "c1", "doc_id": "d1"}\n{"chunk_id": "c2", "doc_id": "d1"}\n')
    assert read_doc_map(path) == {"c1": "d1", "c2": "d1"}
    path.write_text('{"c1": "d1", "c2": "d2"}\n')  # an object keyed by chunk id stays one
    assert read_doc_map(path) == {"c1": "d1", "c2": "d2"}


def test_compare_and_the_harness_collapse_too():
    comparison = compare_runs(QRELS, {"chunks": Run.from_dict(CHUNK_RUN), "docs": Run.from_dict(DOC_RUN)},
                         measures=["P@3"], doc_map=PATTERN)
    assert comparison.means["chunks"]["P@3"] == pytest.approx(0.5)     # (2/3 + 1/3) / 2
    assert comparison.means["docs"]["P@3"] == pytest.approx(0.5)

    def engine(query: str, k: int) -> list[str]:   # best first, chunk ids
        return {"q1 text": ["docA::1", "docC::0", "docA::2", "docB::3", "docX::1", "docB::1"]}.get(query, [])

    dataset = [{"id": "q1", "query": "q1 text", "relevant": {"docA": 2, "docB": 1}, "non_relevant": ["docC"]}]
    evaluator = Evaluator(engine, doc_map=lambda chunk: chunk.split("::")[0])
    # asked for 3 chunks, the engine gives docA, docC, docA: two documents, one relevant
    assert evaluator.evaluate(dataset, k_values=(3,)).summary["P@3"] == pytest.approx(1 / 3)
    # asked for 6 chunks: docA, docC, docB, docX after the collapse
    report = evaluator.evaluate(dataset, k_values=(3,), depth=6)
    assert report.summary["P@3"] == pytest.approx(2 / 3)
    assert report.run.to_dict()["q1"]["docA::2"] == 4.0   # the run keeps the chunk ids (third of 6: 6 - 2)
    assert report.result.collapse.merged == 2


def test_the_library_takes_the_pattern_by_the_command_lines_name_too(tmp_path):
    """``doc_id_pattern=`` is ``doc_map=`` given a regular expression, under the name ``--doc-id-pattern`` gives it:
    the same numbers (EXPECTED, computed by hand above), from every function that maps chunks."""
    import trec_rag_eval as tre

    qrels, run = _files(tmp_path)
    with pytest.warns(tre.TrecRagEvalWarning, match="chunk ids mapped by pattern"):
        _assert_expected(tre.evaluate(qrels, run, list(EXPECTED), doc_id_pattern=PATTERN))
    [outcome] = tre.evaluate_many(qrels, [run], list(EXPECTED), doc_id_pattern=PATTERN)
    _assert_expected(outcome.evaluation)
    with pytest.warns(tre.TrecRagEvalWarning, match="chunk ids mapped by pattern"):
        comparison = tre.compare(qrels, {"chunks": run, "again": run}, ["P@3"], doc_id_pattern=PATTERN)
    assert comparison.means["chunks"]["P@3"] == pytest.approx(0.5)     # (2/3 + 1/3) / 2
    with pytest.warns(tre.TrecRagEvalWarning, match="chunk ids mapped by pattern"):
        mapped = tre.read_run(run, qrels=tre.read_qrels(qrels), doc_id_pattern=PATTERN)
    assert sorted(mapped.to_dict()["q1"]) == ["docA", "docB", "docC", "docX"]
    assert Evaluator(lambda query, k: [], doc_id_pattern=PATTERN).doc_map == PATTERN
    with pytest.raises(UsageError, match=r"^doc_id_pattern= needs the qrels \(qrels=\)"):
        tre.read_run(run, doc_id_pattern=PATTERN)


def test_a_pattern_and_a_map_both_given_are_refused_in_one_wording_before_anything_is_read(tmp_path):
    """Every function that maps chunks refuses both ways at once, in the library's words, which the command line
    says with its flags (``cli.FLAGS``): no file is read first (the qrels here are missing)."""
    import trec_rag_eval as tre
    from trec_rag_eval.cli import FLAGS

    missing, both = tmp_path / "missing.txt", {"doc_map": {"docA::1": "docA"}, "doc_id_pattern": PATTERN}
    calls = [
        lambda: tre.evaluate(missing, missing, **both),
        lambda: tre.evaluate_many(missing, [missing], **both),
        lambda: tre.compare(missing, [missing, missing], **both),
        lambda: tre.plan(missing, [missing, missing], delta=0.1, **both),
        lambda: tre.crosscheck(missing, missing, **both),
        lambda: tre.validate(missing, missing, missing, **both),
        lambda: tre.read_run(missing, qrels=QRELS, **both),
        lambda: tre.judge(missing, [missing], missing, tmp_path / "out.qrels", model="m", **both),
        lambda: Evaluator(lambda query, k: [], **both),
    ]
    for call in calls:
        with pytest.raises(UsageError) as refused:
            call()
        assert str(refused.value) == "give doc_id_pattern or doc_map, not both"
        assert refused.value.worded(FLAGS) == "give --doc-id-pattern or --doc-map, not both"
    with pytest.raises(UsageError, match="doc_id_pattern must be a regular expression, got dict"):
        tre.evaluate(missing, missing, doc_id_pattern={"docA::1": "docA"})


def _files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 docA 2\nq1 0 docB 1\nq1 0 docC 0\nq2 0 a 1\nq2 0 a0 0\n", encoding="utf-8")
    run = tmp_path / "chunks.txt"
    lines = [f"{q} Q0 {c} 0 {s} chunky\n" for q, docs in CHUNK_RUN.items() for c, s in docs.items()]
    run.write_text("".join(lines), encoding="utf-8")
    return qrels, run


def test_cli_evaluate_compare_and_crosscheck_take_the_mapping(tmp_path, capsys):
    qrels, run = _files(tmp_path)
    with pytest.raises(SystemExit) as exit_:
        main(["-m", "P.3", "-q", "--doc-id-pattern", PATTERN, str(qrels), str(run)])
    assert exit_.value.code == 0
    out, err = capsys.readouterr()
    assert out == ("P_3                   \tq1\t0.6667\nP_3                   \tq2\t0.3333\n"
                   "P_3                   \tall\t0.5000\n")
    assert f"Note: {run}: chunk ids mapped by pattern '{PATTERN}': 9 retrieved chunks -> 6 documents" in err

    doc_map = tmp_path / "map.tsv"
    doc_map.write_text("".join(f"{c}\t{c.split('::')[0]}\n" for d in CHUNK_RUN.values() for c in d), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_:
        main(["compare", "-m", "P@3", "--doc-map", str(doc_map), str(qrels), str(run), str(run)])
    assert exit_.value.code == 0
    out, _ = capsys.readouterr()
    assert "0.500" in out

    with pytest.raises(SystemExit) as exit_:
        main(["--doc-id-pattern", PATTERN, "--doc-map", str(doc_map), str(qrels), str(run)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "Error: give --doc-id-pattern or --doc-map, not both\n"
    with pytest.raises(SystemExit) as exit_:
        main(["crosscheck", "-m", "P@3", "-m", "nDCG@3", "--doc-id-pattern", PATTERN, str(qrels), str(run)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, out + err
    assert "chunk ids mapped by pattern" in err


def test_the_library_crosscheck_collapses_before_both_sides():
    from trec_rag_eval.checks.crosscheck import crosscheck_tables

    report = crosscheck_tables(QRELS, Run.from_dict(CHUNK_RUN), ["P@3", "nDCG@3", "RR"], doc_map=PATTERN)
    assert report.ok


@pytest.mark.parametrize("chunk_ids, pattern", [
    (["docA#1", "docC#0", "docB#3"], r"^(.*)#\d+$"),
    (["docA.1", "docC.0", "docB.3"], r"^(.*)\.\d+$"),
    (["docA::p2", "docC::p1", "docB::p9"], r"^(.*)::p\d+$"),
    (["docA_chunk_1", "docC_chunk_2", "docB_chunk_3"], r"^(.*)_chunk_\d+$"),
])
def test_ids_that_look_like_chunks_of_judged_documents_get_a_pattern_suggested(chunk_ids, pattern):
    from trec_rag_eval.io.chunk_guess import guess_doc_id_pattern

    run = Run.from_dict({"q1": {c: 3.0 - i for i, c in enumerate(chunk_ids)}})
    guess = guess_doc_id_pattern(chunk_ids, QRELS)
    assert guess == (pattern, chunk_ids[0], "docA")
    collapsed, _ = collapse_run(run, guess[0], QRELS)
    assert set(collapsed.to_dict()["q1"]) == {"docA", "docB", "docC"}
    # document ids, or ids unrelated to the judged ones: nothing to suggest
    assert guess_doc_id_pattern([d for q in DOC_RUN.values() for d in q], QRELS) is None
    assert guess_doc_id_pattern(["x#1", "y#2"], QRELS) is None


def test_the_chunk_guess_reads_no_judgment_when_no_retrieved_id_has_a_separator():
    """A chunk id is a judged id, a separator (a character neither letter nor digit) and a number: in a run
    whose sampled ids are all letters and digits (``d17``, MS MARCO's numbers, ``dé1``) none can be one, and
    no guess is made (``map_chunks``: the run as it is, no note) without building the set of judged ids, which
    the guess would otherwise make on every call."""
    from trec_rag_eval.run_outcome import map_chunks

    class Untouchable:
        def __getattr__(self, name):
            raise AssertionError(f"the judgments were read ({name})")

    for ids in (["d17", "d3"], ["7267", "1"], ["dé1", "x2"]):
        run = Run.from_dict({"q1": {i: 1.0 for i in ids}})
        assert map_chunks(run, None, Untouchable()) == (run, [], None)
    with pytest.raises(AssertionError, match="judgments were read"):  # one separator is enough to look
        map_chunks(Run.from_dict({"q1": {"d17": 1.0, "d3#1": 0.5}}), None, Untouchable())


def test_evaluate_suggests_the_pattern_on_a_chunk_run(tmp_path, capsys):
    qrels, run = _files(tmp_path)
    with pytest.raises(SystemExit):
        main(["-m", "P.3", str(qrels), str(run)])
    err = capsys.readouterr().err
    assert (f"Note: {run}: the retrieved ids look like chunks of judged documents ('docA::1' of 'docA'): "
            "score them as their documents with --doc-id-pattern '^(.*)::\\d+$'") in err


def test_search_scores_the_chunks_an_engine_returns_as_their_documents(tmp_path, capsys):
    corpus = tmp_path / "chunks.jsonl"
    chunks = {"tomates#0": "repiquer les tomates en mai", "tomates#1": "arroser les tomates le soir",
              "compost#0": "le compost alterne matieres vertes et brunes", "compost#1": "retourner le compost"}
    corpus.write_text("".join(json.dumps({"id": c, "text": t}) + "\n" for c, t in chunks.items()), encoding="utf-8")
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps([{"id": "q1", "query": "tomates", "relevant": ["tomates"]},
                                   {"id": "q2", "query": "compost", "relevant": ["compost"]}]), encoding="utf-8")
    run = tmp_path / "run.txt"
    with pytest.raises(SystemExit) as exit_:
        main(["search", str(dataset), "--corpus", str(corpus), "-k", "4", "-m", "P@1", "-m", "P@2",
              "--doc-id-pattern", r"^(.*)#\d+$", "-o", str(run)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, err
    # each query matches the two chunks of its document only: one document, at rank 1
    assert "chunk ids mapped by pattern '^(.*)#\\d+$': 4 retrieved chunks -> 2 documents" in err
    assert re.search(r"^P +1\.0000 +0\.5000$", out, re.MULTILINE), out
    assert "tomates#1" in run.read_text(encoding="utf-8")     # the run keeps the engine's chunk ids


@pytest.mark.parametrize("shape", ["file", "dict"])
def test_the_library_keeps_what_the_collapse_did(tmp_path, shape):
    # tre.evaluate and evaluate_many hand back the collapse report (Evaluation.collapse) for a run file and a run
    # in memory, as evaluate_tables does: 9 chunk rows -> 6 documents, 3 merged (docA::2, docB::1 and a::2)
    import trec_rag_eval as tre

    qrels = {query: dict(docs) for query, docs in QRELS.to_dict().items()}
    run: object = CHUNK_RUN
    if shape == "file":
        run = tmp_path / "chunks.txt"
        run.write_text("".join(f"{q} Q0 {d} 0 {s} t\n" for q, docs in CHUNK_RUN.items() for d, s in docs.items()))
    with pytest.warns(Warning):  # docX is judged nowhere: said, as it is without the report
        results = [tre.evaluate(qrels, run, list(EXPECTED), doc_map=PATTERN),
                   next(tre.evaluate_many(qrels, [run], list(EXPECTED), doc_map=PATTERN)).evaluation]
    for result in results:
        _assert_expected(result)
        report = result.collapse
        assert report is not None and report.collapsed
        assert (report.rows_in, report.rows_out, report.merged) == (9, 6, 3)


def test_cli_validate_takes_the_mapping(tmp_path, capsys):
    """validate scores the run as the reference was scored: with its chunks mapped to documents (P@3 by hand as in
    EXPECTED: q1 docA, docB relevant in the top 3 -> 2/3; q2 a alone -> 1/3), the published values agree; unmapped,
    no chunk id is judged, so they differ; both ways of mapping at once are refused as every command refuses them."""
    qrels, run = _files(tmp_path)
    reference = tmp_path / "published.txt"
    reference.write_text("P_3\tq1\t0.6667\nP_3\tq2\t0.3333\nP_3\tall\t0.5000\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_:
        main(["validate", "--doc-id-pattern", PATTERN, str(qrels), str(run), str(reference)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, out + err
    assert "chunk ids mapped by pattern" in err

    doc_map = tmp_path / "map.tsv"
    doc_map.write_text("".join(f"{c}\t{c.split('::')[0]}\n" for d in CHUNK_RUN.values() for c in d), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_:
        main(["validate", "--doc-map", str(doc_map), str(qrels), str(run), str(reference)])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0, out + err

    with pytest.raises(SystemExit) as exit_:
        main(["validate", str(qrels), str(run), str(reference)])
    capsys.readouterr()
    assert exit_.value.code == 1

    with pytest.raises(SystemExit) as exit_:
        main(["validate", "--doc-id-pattern", PATTERN, "--doc-map", str(doc_map), str(qrels), str(run), str(reference)])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == "Error: give --doc-id-pattern or --doc-map, not both\n"
