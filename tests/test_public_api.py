"""The public API (``import trec_rag_eval``): one call over every input shape, results that fit Python.

Expected numbers come from ir-measures (pytrec_eval inside) on the same files, or from hand computation
written out in the test; never from our own output.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import trec_rag_eval as tre
from trec_rag_eval.errors import InputFormatError

REPO = Path(__file__).resolve().parent.parent
QRELS = REPO / "fixtures" / "qrels.txt"
RUN = REPO / "fixtures" / "run_bm25.txt"
# the measures ir-measures computes with pytrec_eval, under our names and its own
MEASURES = {"nDCG@10": "nDCG@10", "P@5": "P@5", "R@10": "R@10", "AP": "AP", "RR": "RR", "Success@1": "Success@1"}


def _lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def expected():
    """ir-measures' per-query values and means on the fixture pair: {measure: {query_id: value}}, {measure: mean}."""
    ir_measures = pytest.importorskip("ir_measures")
    qrels = list(ir_measures.read_trec_qrels(str(QRELS)))
    run = list(ir_measures.read_trec_run(str(RUN)))
    wanted = [ir_measures.parse_measure(name) for name in MEASURES.values()]
    per_query: dict[str, dict[str, float]] = {}
    for metric in ir_measures.iter_calc(wanted, qrels, run):
        per_query.setdefault(str(metric.measure), {})[metric.query_id] = metric.value
    means = {str(m): v for m, v in ir_measures.calc_aggregate(wanted, qrels, run).items()}
    return per_query, means


def _qrels_shapes():
    rows = [(q, it, d, int(r)) for q, it, d, r in _lines(QRELS)]
    pytrec: dict[str, dict[str, int]] = {}
    for q, _, d, r in rows:
        pytrec.setdefault(q, {})[d] = r
    seed = [{"id": q, "pertinents": {d: r for d, r in docs.items() if r > 0},
             "non_pertinents": [d for d, r in docs.items() if r == 0]} for q, docs in pytrec.items()]
    shapes = {
        "path str": str(QRELS),
        "Path": QRELS,
        "Qrels": tre.read_qrels(QRELS),
        "pytrec dict": pytrec,
        "seed list of dicts": seed,
    }
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    columns = {"query_id": [r[0] for r in rows], "doc_id": [r[2] for r in rows], "relevance": [r[3] for r in rows]}
    shapes["pandas"] = pd.DataFrame(columns)
    shapes["pandas with iteration"] = pd.DataFrame({**columns, "iteration": [r[1] for r in rows]})
    shapes["polars"] = pl.DataFrame(columns)
    shapes["Qrels(pandas)"] = tre.Qrels(pd.DataFrame(columns))
    ir_measures = pytest.importorskip("ir_measures")
    shapes["ir_measures Qrel list"] = [ir_measures.Qrel(q, d, r, it) for q, it, d, r in rows]
    shapes["ir_measures Qrel generator"] = (ir_measures.Qrel(q, d, r) for q, _, d, r in rows)
    return shapes


def _run_shapes():
    rows = [(q, d, float(s)) for q, _, d, _, s, _ in _lines(RUN)]
    pytrec: dict[str, dict[str, float]] = {}
    for q, d, s in rows:
        pytrec.setdefault(q, {})[d] = s
    # the ranked lists, best first: score descending, ties by doc_id descending (trec_eval's order)
    ranked = {q: sorted(docs, key=lambda d: (docs[d], d), reverse=True) for q, docs in pytrec.items()}
    shapes = {
        "path str": str(RUN),
        "Path": RUN,
        "Run": tre.read_run(RUN),
        "pytrec dict": pytrec,
        "ranked id lists": ranked,
    }
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    columns = {"query_id": [r[0] for r in rows], "doc_id": [r[1] for r in rows], "score": [r[2] for r in rows]}
    shapes["pandas"] = pd.DataFrame(columns)
    shapes["polars"] = pl.DataFrame(columns)
    shapes["Run(polars)"] = tre.Run(pl.DataFrame(columns))
    ir_measures = pytest.importorskip("ir_measures")
    shapes["ir_measures ScoredDoc list"] = [ir_measures.ScoredDoc(*r) for r in rows]
    shapes["records"] = [{"query_id": q, "doc_id": d, "score": s} for q, d, s in rows]
    return shapes


@pytest.mark.parametrize("shape", list(_qrels_shapes()))
def test_every_qrels_shape_gives_ir_measures_numbers(shape, expected):
    _assert_ir_measures_numbers(tre.evaluate(_qrels_shapes()[shape], RUN, list(MEASURES)), expected, shape)


@pytest.mark.parametrize("shape", list(_run_shapes()))
def test_every_run_shape_gives_ir_measures_numbers(shape, expected):
    _assert_ir_measures_numbers(tre.evaluate(QRELS, _run_shapes()[shape], list(MEASURES)), expected, shape)


def _assert_ir_measures_numbers(result, expected, shape):
    per_query, means = expected
    for ours, theirs in MEASURES.items():
        assert result.summary[ours] == pytest.approx(means[theirs], abs=1e-12), (shape, ours)
        for query_id, value in per_query[theirs].items():
            assert result.per_query[query_id][ours] == pytest.approx(value, abs=1e-12), (shape, ours, query_id)


def test_json_files_are_read_like_the_cli_reads_them():
    # the tutorial's two items and its results, by hand (docs/rag-data.md): MRR = (1/2 + 1/1) / 2
    fixtures = REPO / "fixtures"
    result = tre.evaluate(fixtures / "eval_dataset_tutorial.json", fixtures / "results_tutorial.json", "MRR")
    assert result.summary["MRR"] == pytest.approx(0.75)


# --- the bugs the issue names, each failing before the fix -----------------------------------------
def test_the_package_exports_its_api():
    for name in ["evaluate", "iter_evaluate", "compare", "crosscheck", "validate", "read_qrels", "read_run",
                 "parse_measure", "Measure", "Qrels", "Run", "Evaluation", "Comparison", "Evaluator",
                 "EngineEvaluation"]:
        assert name in tre.__all__
        assert getattr(tre, name) is not None
    from trec_rag_eval import evaluate  # noqa: F401  (failed before: only __version__ existed)
    assert sorted(tre.__all__) == sorted(tre._EXPORTS)  # every listed name has its module, and only those


def test_the_three_edits_of_an_export_agree():
    # a public name is in _EXPORTS (its module), __all__, and the TYPE_CHECKING imports (for type checkers)
    import ast

    tree = ast.parse((REPO / "trec_rag_eval" / "__init__.py").read_text(encoding="utf-8"))
    typed = {(alias.asname or alias.name, node.module)
             for block in tree.body if isinstance(block, ast.If) and ast.unparse(block.test) == "TYPE_CHECKING"
             for node in ast.walk(block) if isinstance(node, ast.ImportFrom) and node.module != "typing"
             for alias in node.names}
    assert typed == set(tre._EXPORTS.items())
    assert sorted(tre.__all__) == sorted(tre._EXPORTS)


def test_evaluate_takes_dicts():
    # before: AttributeError: 'dict' object has no attribute 'data'
    qrels = {"q1": {"a": 1, "b": 0, "c": 2}, "q2": {"d": 1}}
    run = {"q1": {"b": 3.0, "a": 2.0, "x": 1.0}, "q2": {"y": 1.0}}
    result = tre.evaluate(qrels, run, ["P@2", "RR"])
    # q1 ranking b, a, x: P@2 = 1/2, RR = 1/2; q2 finds nothing: 0
    assert result.summary["P@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert result.per_query == {"q1": {"P@2": 0.5, "RR": 0.5}, "q2": {"P@2": 0.0, "RR": 0.0}}


def test_qrels_takes_a_pandas_frame():
    pd = pytest.importorskip("pandas")
    qrels = tre.Qrels(pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]}))
    assert qrels.to_dict() == {"1": {"a": 1, "b": 0}}


def test_one_measure_string_is_one_measure():
    # before: the string was read letter by letter ("bad measure 'n'")
    result = tre.evaluate(QRELS, RUN, "nDCG@10")
    assert list(result.summary) == ["nDCG@10"]
    assert result.summary["nDCG@10"] == pytest.approx(0.4772, abs=5e-5)  # trec_eval 10: ndcg_cut_10 all 0.4772


def test_summary_is_keyed_by_name_and_still_takes_measures():
    result = tre.evaluate(QRELS, RUN, ["nDCG@10", "MAP"])
    assert list(result.summary) == ["nDCG@10", "MAP"]
    assert result.summary["MAP"] == result.summary["AP"] == result.summary["map"]
    assert result.summary[tre.parse_measure("AP")] == result.summary["MAP"]
    assert result.summary["ndcg_cut.10"] == result.summary["nDCG@10"]
    assert dict(result.summary) == {"nDCG@10": result.summary["nDCG@10"], "MAP": result.summary["AP"]}
    with pytest.raises(KeyError):
        result.summary["P@5"]


def test_per_query_has_one_shape_everywhere():
    # Evaluation, EngineEvaluation and Comparison: per_query[query_id][measure name] (pytrec_eval's shape)
    dataset = [{"id": "q1", "query": "chat", "relevant": ["a"]}, {"id": "q2", "query": "chien", "relevant": ["b"]}]
    report = tre.Evaluator(lambda query, k: ["a", "b"]).evaluate(dataset, measures=["RR"])
    direct = tre.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": ["a", "b"], "q2": ["a", "b"]}, "RR")
    assert report.per_query == direct.per_query == {"q1": {"RR": 1.0}, "q2": {"RR": 0.5}}
    comparison = tre.compare({"q1": {"a": 1}, "q2": {"b": 1}},
                             {"A": {"q1": ["a", "b"], "q2": ["a", "b"]}, "B": {"q1": ["b", "a"], "q2": ["b", "a"]}},
                             "RR")
    # RR asked: RR compared, alone, under the name asked (MRR still finds it)
    assert comparison.measures == ["RR"]
    assert {q: {"RR": row["RR"]} for q, row in comparison.per_query["A"].items()} == direct.per_query
    assert {q: row["MRR"] for q, row in comparison.per_query["B"].items()} == {"q1": 0.5, "q2": 1.0}
    assert {run: means["RR"] for run, means in comparison.summary.items()} == {"A": 0.75, "B": 0.75}
    assert comparison.to_dict()["B"]["q1"]["RR"] == 0.5
    json.dumps(comparison.to_dict())


def test_to_dict_is_pytrec_eval_shape():
    result = tre.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 2.0, "b": 1.0}, "q2": {"a": 2.0, "b": 1.0}},
                          ["RR", "P@1"])
    assert result.to_dict() == {"q1": {"RR": 1.0, "P@1": 1.0}, "q2": {"RR": 0.5, "P@1": 0.0}}
    json.dumps(result.to_dict())  # plain data


def test_frames_long_and_wide():
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    result = tre.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 2.0, "b": 1.0}, "q2": {"a": 2.0, "b": 1.0}},
                          ["RR", "P@1"])
    long = result.to_pandas()
    assert isinstance(long, pd.DataFrame)
    assert list(long.columns) == ["run", "query_id", "measure", "value"]
    assert long.values.tolist() == [["run", "q1", "RR", 1.0], ["run", "q1", "P@1", 1.0],
                                    ["run", "q2", "RR", 0.5], ["run", "q2", "P@1", 0.0]]
    wide = result.to_pandas("wide")
    assert list(wide.columns) == ["query_id", "RR", "P@1"]
    assert wide.values.tolist() == [["q1", 1.0, 1.0], ["q2", 0.5, 0.0]]
    frame = result.to_polars("wide")
    assert isinstance(frame, pl.DataFrame) and frame.rows() == [("q1", 1.0, 1.0), ("q2", 0.5, 0.0)]
    assert result.to_polars().columns == ["run", "query_id", "measure", "value"]
    with pytest.raises(ValueError, match="'long' or 'wide'"):
        result.to_pandas("tall")


def test_to_pandas_without_pandas_names_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    result = tre.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, "RR")
    with pytest.raises(tre.MissingDependencyError, match=r"pip install"):
        result.to_pandas()


def test_reprs_are_short_and_notebooks_get_a_table():
    result = tre.evaluate(QRELS, RUN)  # the whole RAG set, 8 queries
    text = repr(result)
    assert text.startswith("Evaluation(run='bm25', queries=8, ") and len(text) < 400
    html = result._repr_html_()
    # the command line's table: a header row, one row per measure family (P, R, F1, HitRate, nDCG), then a
    # header row and MRR, MAP below
    assert html.count("<tr>") == 1 + 5 + 1 + 2 and "<td>nDCG</td>" in html and "0.4772" in html
    comparison = tre.compare(QRELS, [RUN, REPO / "fixtures" / "run_hybrid.txt"])
    assert len(repr(comparison)) < 400 and "<table" in comparison._repr_html_()
    dataset = REPO / "fixtures" / "eval_dataset_fr.json"
    report = tre.Evaluator(lambda query, k: ["doc_setup_env"]).evaluate(dataset)
    assert len(repr(report)) < 400 and "<table" in report._repr_html_()


def test_unknown_shapes_name_what_is_accepted():
    with pytest.raises(TypeError, match=r"qrels.*path.*Qrels.*dict.*DataFrame"):
        tre.evaluate(42, RUN)
    with pytest.raises(TypeError, match=r"run.*path.*Run.*dict.*DataFrame"):
        tre.evaluate(QRELS, {1, 2})


@pytest.mark.parametrize("call", [
    lambda: tre.read_run(42),
    lambda: tre.read_run(None),
    lambda: tre.evaluate(QRELS, 42),
    lambda: list(tre.iter_evaluate(QRELS, 42)),
    lambda: tre.crosscheck(QRELS, 42),
    lambda: tre.context_cost(42, {"a": "x"}),
], ids=["read_run", "read_run None", "evaluate", "iter_evaluate", "crosscheck", "context_cost"])
def test_a_run_of_a_type_no_entry_point_takes_is_a_usage_error(call):
    # the library's error (the command line's exit 2), naming every shape taken; a TypeError still, as it was
    with pytest.raises(tre.UsageError) as refused:
        call()
    assert isinstance(refused.value, TypeError)
    assert str(refused.value).startswith("run must be a path (TREC run, JSON results), a Run, a dict")


@pytest.mark.parametrize("call", [
    lambda: tre.evaluate(42, RUN),
    lambda: tre.read_qrels(42),
    lambda: tre.compare(42, [RUN, RUN]),
    lambda: tre.agree(QRELS, 42, runs=[RUN]),
    lambda: tre.compare(QRELS, [RUN, 42]),
    lambda: tre.fuse([RUN, 42]),
    lambda: tre.evaluate_many(QRELS, 42),
    lambda: tre.compare(QRELS, 42),
], ids=["evaluate", "read_qrels", "compare", "agree", "compare run", "fuse run", "evaluate_many runs",
        "compare runs"])
def test_judgments_and_runs_of_a_type_no_entry_point_takes_are_usage_errors(call):
    with pytest.raises(tre.UsageError) as refused:
        call()
    assert isinstance(refused.value, TypeError)
    assert re.match(r"(qrels|run 2|runs) must be ", str(refused.value)), str(refused.value)


def test_a_run_in_memory_refuses_a_file_format():
    # format= (run_format=) says how a file is read: given with a run in memory it was ignored without a word
    with pytest.raises(tre.UsageError) as refused:
        tre.read_run({"q": {"a": 1.0}}, format="trec")
    assert str(refused.value) == "format= describes a run file: give the run as its path"
    with pytest.raises(tre.UsageError) as refused:
        tre.evaluate(QRELS, {"q": {"a": 1.0}}, run_format="trec")
    assert str(refused.value) == "run_format= describes a run file: give the run as its path"
    assert tre.read_run({"q": {"a": 1.0}}, format="auto").to_dict() == {"q": {"a": 1.0}}


@pytest.mark.parametrize("call", [
    lambda: tre.compare(QRELS, [{"q": {"a": 1.0}}, {"q": {"b": 1.0}}], run_format="trec"),
    lambda: tre.crosscheck(QRELS, {"q": {"a": 1.0}}, run_format="trec"),
], ids=["compare", "crosscheck"])
def test_the_analyses_refuse_a_run_format_for_runs_in_memory(call):
    # as evaluate does: the format of run files, given with no run file, was ignored without a word
    with pytest.raises(tre.UsageError) as refused:
        call()
    assert str(refused.value) == "run_format= describes a run file: give the run as its path"


def test_convert_refuses_what_is_not_a_path_in_the_library_s_words():
    # it said "expected str, bytes or os.PathLike object, not dict"
    with pytest.raises(tre.UsageError) as refused:
        tre.convert({"q": {"a": 1}})
    assert str(refused.value) == "convert reads a file: give input_path as its path, got dict"


def test_read_qrels_takes_judgments_in_memory_as_read_run_takes_a_run():
    # it said "expected str, bytes or os.PathLike object, not dict"; format= and topics= describe a file
    assert tre.read_qrels({"q": {"a": 1}}).to_dict() == {"q": {"a": 1}}
    with pytest.raises(tre.UsageError) as refused:
        tre.read_qrels({"q": {"a": 1}}, format="trec")
    assert str(refused.value) == "topics= and format= describe a qrels file: give the qrels as its path"
    with pytest.raises(TypeError, match=r"measures"):
        tre.evaluate(QRELS, RUN, 10)


def test_bad_values_in_python_objects_name_the_query_and_document():
    with pytest.raises(InputFormatError, match=r"query 'q1', document 'a': the relevance 1.5 is not an integer"):
        tre.evaluate({"q1": {"a": 1.5}}, {"q1": {"a": 1.0}})
    with pytest.raises(InputFormatError, match=r"query 'q1', document 'a': the score 'high' is not a number"):
        tre.evaluate({"q1": {"a": 1}}, {"q1": {"a": "high"}})
    with pytest.raises(InputFormatError, match=r"the score nan is not a number"):
        tre.evaluate({"q1": {"a": 1}}, {"q1": {"a": float("nan")}})


def test_duplicates_in_rows_are_refused_with_both_rows():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["1", "1", "1"], "doc_id": ["a", "b", "a"], "score": [3.0, 2.0, 1.0]})
    with pytest.raises(InputFormatError, match=r"row 3: document 'a' listed twice for query '1' \(first at row 1\)"):
        tre.evaluate({"1": {"a": 1}}, frame)


def test_a_frame_without_the_columns_says_which():
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputFormatError, match=r"needs the columns query_id, doc_id, score; it has q, d, s"):
        tre.evaluate(QRELS, pd.DataFrame({"q": ["1"], "d": ["a"], "s": [1.0]}))


@pytest.mark.parametrize("asked, name", [
    ("ndcg@10", "nDCG@10"), ("recall@100", "R@100"), ("precision@5", "P@5"), ("mrr", "MRR"), ("map", "AP"),
    ("hit_rate@5", "HitRate@5"), ("map@100", "MAP@100"), ("mrr@10", "MRR@10"), ("f1@5", "F1@5"),
    ("r-precision", "Rprec"), ("bpref", "Bpref"), ("ndcg", "nDCG"),
])
def test_ranx_names_are_aliases(asked, name):
    assert tre.parse_measure(asked) == tre.parse_measure(name)
    result = tre.evaluate(QRELS, RUN, [asked])
    assert result.summary[asked] == result.summary[name]


def test_measures_in_every_form_give_the_same_numbers():
    forms = ["nDCG@10", ["nDCG@10"], [tre.parse_measure("nDCG@10")], tre.parse_measure("nDCG@10"), "ndcg_cut.10",
             ["ndcg@10"]]
    values = {tre.evaluate(QRELS, RUN, form).summary["nDCG@10"] for form in forms}
    assert len(values) == 1


def test_iter_evaluate_yields_one_query_at_a_time(expected):
    per_query, _ = expected
    stream = tre.iter_evaluate(QRELS, RUN, ["AP", "nDCG@10"])
    first = next(stream)
    assert first.query_id == "q1"
    assert first.values["AP"] == pytest.approx(per_query["AP"]["q1"], abs=1e-12)
    rest = list(stream)
    assert [r.query_id for r in rest] == [f"q{i}" for i in range(2, 9)]
    assert rest[-1].values["nDCG@10"] == pytest.approx(per_query["nDCG@10"]["q8"], abs=1e-12)


def test_settings_go_through_one_value():
    qrels = {"1": {"a": 1, "c": 2, "d": 1, "b": 0}}
    run = {"1": {"b": 3.0, "a": 2.0, "c": 2.0, "x": 1.0}}
    # the worked example of docs/conventions.md: with -l 2 only c is relevant, at rank 2: AP = (1/2) / 1
    assert tre.evaluate(qrels, run, "AP", relevance_level=2).summary["AP"] == 0.5
    assert tre.evaluate(qrels, run, "AP", settings=tre.Settings(relevance_level=2)).summary["AP"] == 0.5
    with pytest.raises(TypeError, match="unknown evaluation setting 'level'"):
        tre.evaluate(qrels, run, "AP", level=2)


def test_the_one_liner_of_the_issue_works():
    code = "import trec_rag_eval as t; print(t.evaluate('fixtures/qrels.txt', 'fixtures/run_bm25.txt', 'nDCG@10'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert "nDCG      0.4772" in out  # trec_eval 10: ndcg_cut_10 all 0.4772


def test_every_entry_point_reads_one_measure_string_as_one_measure():
    # siblings of the letter-by-letter bug: the library's own compare, the engine harness, streaming
    from trec_rag_eval.compare import compare_runs, compare_values
    from trec_rag_eval.evaluation.streaming import evaluate_pieces

    qrels, run_a, run_b = (tre.Qrels({"q1": {"a": 1}, "q2": {"b": 1}}), tre.Run({"q1": ["a", "b"], "q2": ["a", "b"]}),
                           tre.Run({"q1": ["b", "a"], "q2": ["b", "a"]}))
    assert compare_runs(qrels, {"A": run_a, "B": run_b}, "P@10").measures == ["P@10"]
    assert compare_values({"A": {"RR": [1.0, 0.5]}, "B": {"RR": [0.5, 1.0]}}, ["q1", "q2"], measures="RR").measures == [
        "RR"]
    dataset = [{"id": "q1", "query": "chat", "relevant": ["a"]}, {"id": "q2", "query": "chien", "relevant": ["b"]}]
    assert list(tre.Evaluator(lambda query, k: ["a", "b"]).evaluate(dataset, measures="RR").summary) == ["RR"]
    pieces = evaluate_pieces(qrels, [run_a], "nDCG@10")
    assert list(pieces.summary) == ["nDCG@10"]


def _from_python_blocks() -> list[str]:
    from docs_pages import blocks, page

    return [body for lang, body in blocks(page("python.md")) if lang == "python"]


def test_the_from_python_page_runs(monkeypatch, capsys):
    # docs/python.md; its pytrec_eval drop-in moved to docs/guides/coming-from.md (tests/test_docs_pages.py runs it)
    pytest.importorskip("pandas")
    monkeypatch.chdir(REPO)
    blocks = _from_python_blocks()
    assert len(blocks) == 3  # the tour, judgments read once, the notebook
    for block in blocks:
        exec(compile(block, "docs/python.md", "exec"), {})  # noqa: S102 - the page's own example
    printed = capsys.readouterr().out
    # trec_eval 10 on the same pair: ndcg_cut_10 0.4772, map 0.3389, recall_10 0.6208
    assert printed.startswith("measure      @10\n----------------\nnDCG      0.4772\nR         0.6208\n\n"
                              "MAP       0.3389\n\nqueries: 8; run: bm25\n")
    # the judgments read once, two runs: trec_eval 10's ndcg_cut_10 on each pair, 0.4772 and 0.6342
    assert "fixtures/run_bm25.txt 0.4772\nfixtures/run_hybrid.txt 0.6342\n" in printed


def test_the_notebook_numbers_of_the_from_python_page():
    pd = pytest.importorskip("pandas")
    qrels = pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d3"], "relevance": [2, 0, 1]})
    run = {"q1": {"d2": 3.0, "d1": 2.5}, "q2": {"d9": 1.0, "d3": 0.5}}
    result = tre.evaluate(qrels, run, ["nDCG@10", "MRR"])
    # q1 ranks d2 (0), d1 (2): DCG 2/log2(3), IDCG 2; q2 ranks d9, d3 (1): DCG 1/log2(3), IDCG 1
    from math import log2

    assert result.summary["nDCG@10"] == pytest.approx((1 / log2(3) + 1 / log2(3)) / 2)
    assert result.summary["MRR"] == 0.5  # both first relevant at rank 2
    assert "nDCG@10 0.6309, MRR 0.5000" in (REPO / "docs" / "python.md").read_text(encoding="utf-8")


def test_crosscheck_and_the_demo_need_no_extra():
    # `pip install .` then --crosscheck and `trec-rag-eval demo` work: what they import is a requirement
    import configparser
    import re

    config = configparser.ConfigParser()
    config.read(REPO / "setup.cfg")
    required = {re.split(r"[<>=!~ ]", line.strip())[0].lower()
                for line in config["options"]["install_requires"].splitlines() if line.strip()
                and not line.strip().startswith("#")}
    assert {"ir-measures", "bm25s"} <= required
    assert "pandas" not in required  # optional: only to_pandas imports it


def test_polars_frames_of_other_types_are_brought_to_the_schema():
    pl = pytest.importorskip("polars")
    qrels = tre.Qrels(pl.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "relevance": [1.0, 0.0]}))
    assert qrels.to_dict() == {"1": {"a": 1, "b": 0}}
    run = tre.Run(pl.DataFrame({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [2.5, 1.5]},
                               schema_overrides={"score": pl.Float32}))
    assert run.to_dict() == {"1": {"a": 2.5, "b": 1.5}}
    with pytest.raises(InputFormatError, match=r"row 2 \(query '1', document 'b'\): the relevance 0.5 is not"):
        tre.Qrels(pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, 0.5]}))
    # a frame that already has the schema's types is checked by evaluate (Run() trusts it, as the readers do)
    with pytest.raises(InputFormatError, match=r"row 2: expected a query_id, a doc_id and a score"):
        tre.evaluate({"1": {"a": 1}}, pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"],
                                                    "score": [1.0, float("nan")]}))
    with pytest.raises(InputFormatError, match=r"the score column holds String, not numbers"):
        tre.Run(pl.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": ["high"]}))


def test_a_run_as_a_search_function_returns_it():
    # the French RAG tutorial keeps moteur.rechercher(query) results: [{"id": ..., "score": ...}, ...] per query
    qrels = {"q1": {"a": 1, "c": 1}, "q2": {"b": 1}}
    run = {"q1": [{"id": "x", "score": 3.0}, {"id": "a", "score": 2.0}, {"id": "c", "score": 2.0}],
           "q2": [("b", 0.9), ("y", 0.1)]}
    result = tre.evaluate(qrels, run, ["RR", "P@3"])
    # q1: the tie a/c keeps the list order (scores not strictly decreasing: the list is the ranking),
    # first relevant at rank 2: RR 1/2, P@3 2/3; q2: b first, RR 1, P@3 1/3
    assert result.per_query == {"q1": {"RR": 0.5, "P@3": 2 / 3}, "q2": {"RR": 1.0, "P@3": 1 / 3}}


def test_crosscheck_and_validate_take_the_same_shapes():
    from conftest import golden_path

    pytest.importorskip("ir_measures")
    qrels = {"1": {"a": 1, "b": 1}}
    report = tre.crosscheck(qrels, {"1": {"a": 2.0, "x": 1.0}}, ["AP", "nDCG@10", "MRR"])
    assert report.ok and [v.status for v in report.verdicts] == ["agree"] * 3
    # trec_eval v10's own -q output of a golden pair validates, the run given as a Run and the qrels as a path
    validation = tre.validate(golden_path("qrels.binary"), tre.read_run(golden_path("run.ties")),
                              golden_path("expected/out.binary.aq"))
    assert validation.ok


def test_pandas_frames_are_checked_whichever_way_they_convert():
    pd = pytest.importorskip("pandas")
    cases = [
        ({"query_id": ["1", "1"], "doc_id": ["a", 1.5], "score": [1.0, 2.0]},
         "row 2 (query '1', document 1.5): the doc id must be a string or an integer"),
        ({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": ["x", 2.0]},
         "row 1 (query '1', document 'a'): the score 'x' is not a number"),
        ({"query_id": [1, 1], "doc_id": ["a", "a"], "score": [1.0, 2.0]},
         "row 2: document 'a' listed twice for query '1' (first at row 1)"),
        ({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]},
         "row 2: expected a query_id, a doc_id and a score (a number other than NaN), got '1', 'b', nan"),
    ]
    for columns, message in cases:
        with pytest.raises(InputFormatError) as info:
            tre.Run(pd.DataFrame(columns))
        assert str(info.value) == f"run (pandas DataFrame): {message}"


def test_a_table_built_from_a_path_says_how_to_read_it():
    with pytest.raises(TypeError, match=r"Qrels\(\) takes the data itself; a file is read by "
                                        r"trec_rag_eval.read_qrels\('qrels.txt'\)"):
        tre.Qrels("qrels.txt")
    with pytest.raises(TypeError, match=r"trec_rag_eval.read_run"):
        tre.Run(RUN)


def test_relevance_out_of_the_readers_range_or_not_finite_is_a_row_error_in_every_shape():
    """A TREC file's relevance is an integer from -2147483648 to 2147483647 (the readers' range); a
    Python object's is held to the same, and NaN or infinity (a float column with a gap) is named, not
    a polars cast error or an OverflowError."""
    pd = pytest.importorskip("pandas")
    pl = pytest.importorskip("polars")
    np = pytest.importorskip("numpy")
    run = {"1": {"a": 1.0}}
    range_error = "the relevance {} is not an integer from -2147483648 to 2147483647"
    for value, shown in [(2**31, "2147483648"), (10**30, str(10**30)), (-(2**31) - 1, "-2147483649")]:
        with pytest.raises(InputFormatError) as info:
            tre.evaluate({"1": {"a": value}}, run)
        assert str(info.value) == "qrels (dict): query '1', document 'a': " + range_error.format(shown)
    frames = [
        (pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, np.nan]}), "pandas"),
        (pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, float("nan")]}), "polars"),
        (pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, np.inf]}), "pandas"),
        (pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1.0, 1e30]}), "pandas"),
        (pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 2**64 - 1]},
                      schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "relevance": pl.UInt64}), "polars"),
        (pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 2**40]}), "pandas"),
    ]
    for frame, library in frames:
        with pytest.raises(InputFormatError) as info:
            tre.evaluate(frame, run)
        message = str(info.value)
        assert message.startswith(f"qrels ({library} DataFrame): row 2 (query '1', document 'b'): the relevance "), \
            message
        assert message.endswith("is not an integer from -2147483648 to 2147483647"), message
    # in range, from a float or an unsigned column: read as the integers they hold (AP by hand: a at rank 1 = 1)
    ok = pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]},
                      schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "relevance": pl.UInt64})
    assert tre.evaluate(ok, run, "AP").summary["AP"] == 1.0
    assert tre.evaluate(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [2.0]}), run,
                        "AP", relevance_level=2).summary["AP"] == 1.0


def test_ir_measures_measure_objects_are_measures_too(expected):
    """A user coming from ir_measures passes its objects (``ir_measures.nDCG@10``): they read as their
    names, and give ir_measures' own numbers."""
    ir_measures = pytest.importorskip("ir_measures")
    _, means = expected
    asked = [ir_measures.nDCG @ 10, ir_measures.AP, ir_measures.RR, ir_measures.P @ 5]
    result = tre.evaluate(QRELS, RUN, asked)
    for measure in asked:
        assert result.summary[str(measure)] == pytest.approx(means[str(measure)], abs=1e-12)
    assert tre.evaluate(QRELS, RUN, ir_measures.AP).summary["AP"] == pytest.approx(means["AP"], abs=1e-12)
    assert tre.parse_measure(ir_measures.nDCG @ 10) == tre.parse_measure("nDCG@10")
    # and as keys of the results, like our own Measure values
    by_name = tre.evaluate(QRELS, RUN, ["nDCG@10", "MAP"])
    assert by_name.summary[ir_measures.nDCG @ 10] == by_name.summary["nDCG@10"]
    assert by_name.per_query["q1"][ir_measures.AP] == by_name.per_query["q1"]["MAP"]
    assert ir_measures.AP in by_name.summary and ir_measures.RR not in by_name.summary
    # a Measure of ours is already parsed
    assert tre.parse_measure(tre.parse_measure("MAP")) == tre.parse_measure("AP")
    with pytest.raises(TypeError, match="a measure must be a name, a Measure or an ir_measures measure, got int: 5"):
        tre.evaluate(QRELS, RUN, [5])


def test_qrels_and_runs_have_a_short_repr():
    """``tre.read_run(path)`` in a notebook cell shows what was read, not every id (the dataclass repr
    printed all the columns). The fixtures: 64 judgment lines and 80 run lines over 8 queries (wc -l)."""
    qrels, run = tre.read_qrels(QRELS), tre.read_run(RUN)
    assert repr(qrels) == f"Qrels(source={str(QRELS)!r}, queries=8, judgments=64)"
    assert repr(run) == f"Run(run_tag='bm25', source={str(RUN)!r}, queries=8, rows=80)"
    assert repr(tre.Qrels({"1": {"a": 1, "b": 0}, "2": {"c": 2}})) == "Qrels(source='<qrels>', queries=2, judgments=3)"
    assert repr(tre.Run({"1": {"a": 1.0}})) == "Run(run_tag='run', source='<run>', queries=1, rows=1)"


def test_compare_takes_runs_from_a_generator(expected):
    """``compare_runs(qrels, (load(p) for p in paths))``: an iterator of runs is a list of runs; one run alone
    (a path, a DataFrame) is still refused. Baseline means from ir-measures."""
    _, means = expected
    hybrid = REPO / "fixtures" / "run_hybrid.txt"
    comparison = tre.compare(QRELS, (path for path in (RUN, hybrid)), "AP")
    assert comparison.summary["bm25"]["AP"] == pytest.approx(means["AP"], abs=1e-12)
    assert list(comparison.summary) == ["bm25", "hybrid"]
    with pytest.raises(TypeError, match="runs must be a list of runs or a mapping"):
        tre.compare(QRELS, str(RUN), "AP")


@pytest.mark.parametrize("options, message", [
    ({"alpha": "0.05"}, "alpha must be between 0 and 1, got '0.05'"),
    ({"confidence": "high"}, "confidence must be between 0 and 1, got 'high'"),
    ({"alpha": float("nan")}, "alpha must be between 0 and 1, got nan"),
    ({"seed": "x"}, "seed must be a non-negative integer (numpy's seeds are), got 'x'"),
    ({"seed": 4.5}, "seed must be a non-negative integer (numpy's seeds are), got 4.5"),
    ({"n_resamples": "1000"}, "n_resamples must be an integer, got '1000'"),
    ({"n_resamples": 0}, "n_resamples must be at least 1, got 0"),
])
def test_compare_names_a_bad_option(options, message):
    """Options of the wrong type were a TypeError about '<' between str and int."""
    with pytest.raises(tre.UsageError) as refused:
        tre.compare(QRELS, [RUN, REPO / "fixtures" / "run_hybrid.txt"], "AP", **options)
    assert str(refused.value) == message


@pytest.mark.parametrize("tolerance", ["x", -1e-9, float("nan"), True])
def test_crosscheck_names_a_bad_tolerance(tolerance):
    with pytest.raises(tre.UsageError) as refused:
        tre.crosscheck(QRELS, RUN, "AP", tolerance=tolerance)
    assert str(refused.value) == f"tolerance must be a number >= 0, got {tolerance!r}"



def test_qrels_from_dict_checks_values_as_the_dict_shape_does():
    """``Qrels.from_dict`` (found by help()) took int(1.5) = 1 in silence: it now reads a dict as
    evaluate() does."""
    with pytest.raises(InputFormatError, match=r"query '1', document 'a': the relevance 1.5 is not an integer"):
        tre.Qrels.from_dict({"1": {"a": 1.5}})
    qrels = tre.Qrels.from_dict({1: {"a": 2, "b": -1}}, source="mine")
    assert (qrels.source, qrels.to_dict()) == ("mine", {"1": {"a": 2, "b": -1}})


@pytest.mark.parametrize("printed, asked", [
    ("P_5", "P.5"), ("ndcg_cut_10", "ndcg_cut.10"), ("recall_100", "recall.100"), ("success_1", "success.1"),
    ("map_cut_10", "map_cut.10"), ("iprec_at_recall_0.10", "iprec_at_recall.0.1"),
    ("Rprec_mult_0.20", "Rprec_mult.0.2"), ("relative_P_5", "relative_P.5"), ("set_F_2", "set_F.2"),
])
def test_a_name_as_pytrec_eval_keys_it_is_that_measure(printed, asked):
    """pytrec_eval and trec_eval print P_5 for what trec_eval is asked as -m P.5: code that reads
    pytrec_eval's keys asks for the measure by the same name."""
    assert tre.parse_measure(printed) == tre.parse_measure(asked)


def test_results_asked_by_pytrec_eval_s_keys_are_keyed_and_found_by_them():
    """By hand: one query, a, c and d relevant, b not; the run ranks a, b, c. P@5 = 2/5; recall@100 = 2/3;
    nDCG@10 = (1 + 1/log2(4)) / (1 + 1/log2(3) + 1/log2(4))."""
    import math

    result = tre.evaluate({"1": {"a": 1, "b": 0, "c": 1, "d": 1}}, {"1": {"a": 3.0, "b": 2.0, "c": 1.0}},
                          ["ndcg_cut_10", "P_5", "recall_100"])
    ndcg = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert dict(result.summary) == pytest.approx({"ndcg_cut_10": ndcg, "P_5": 0.4, "recall_100": 2 / 3})
    assert result.per_query["1"]["nDCG@10"] == pytest.approx(ndcg)  # and by every other name of the measure
    asked_ours = tre.evaluate({"1": {"a": 1, "b": 0, "c": 1, "d": 1}}, {"1": {"a": 3.0, "b": 2.0, "c": 1.0}},
                              ["nDCG@10"])
    assert asked_ours.summary["ndcg_cut_10"] == pytest.approx(ndcg)


def test_a_printed_name_of_several_measures_says_the_request_that_asks_for_them():
    with pytest.raises(tre.MeasureSyntaxError) as refused:
        tre.parse_measure("ndcg_cut_20,4")
    assert refused.value.reason == "ndcg_cut_20,4 names 2 measures, not one: ask for them with 'ndcg_cut.20,4'"


def test_the_seed_s_results_dict_keyed_by_query_text_finds_its_queries():
    """The French RAG tutorial keeps results as {query text: [doc ids]} beside its dataset rows: given as Python
    objects they score as the same files do. By hand (AP): the first query's relevant documents come
    at ranks 2 and 4, (1/2 + 2/4) / 2 = 0.5; the second's at ranks 1 and 4, (1 + 2/4) / 2 = 0.75; mean 0.625.
    Before, every key was taken for an unknown query id and every query scored 0."""
    dataset = json.loads((REPO / "fixtures" / "eval_dataset_tutorial.json").read_text(encoding="utf-8"))
    results = json.loads((REPO / "fixtures" / "results_tutorial.json").read_text(encoding="utf-8"))
    result = tre.evaluate(dataset, results, "AP")
    assert result.per_query["q1"]["AP"] == pytest.approx(0.5)
    assert result.per_query["q2"]["AP"] == pytest.approx(0.75)
    assert result.summary["AP"] == pytest.approx(0.625)
    # a text that two queries share names both, as the JSON reader does
    twice = [{"query": "same", "relevant": ["a"]}, {"query": "same", "relevant": ["b"]}]
    with pytest.raises(InputFormatError, match=r"the query text 'same' matches several queries \(q1, q2\)"):
        tre.evaluate(twice, {"same": ["a"]}, "AP")


def test_an_empty_measure_list_is_a_mistake_not_an_empty_result():
    """``measures=[]`` used to return an Evaluation with nothing in it and no word; None asks for the default."""
    from trec_rag_eval.errors import UsageError

    for call in (tre.evaluate, lambda q, r, m: list(tre.iter_evaluate(q, r, m))):
        with pytest.raises(UsageError, match=r"measures is empty: name at least one measure, or leave it out"):
            call(QRELS, RUN, [])
        with pytest.raises(UsageError, match=r"measures is empty"):
            call(QRELS, {"1": {"d": 1.0}}, ())


def test_evaluate_many_gives_one_outcome_per_run_in_order_and_a_bad_run_fails_alone(tmp_path):
    # the facade's several-runs call is the command line's: the same numbers as evaluate, run by run
    qrels, good = REPO / "fixtures" / "qrels.txt", REPO / "fixtures" / "run_bm25.txt"
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 2.5\n", encoding="utf-8")  # five fields: an error on line 1
    outcomes = list(tre.evaluate_many(str(qrels), [str(good), str(bad), {"q1": {"d1": 1.0}}], "MRR"))
    assert [o.label for o in outcomes[:2]] == [str(good), str(bad)]
    assert outcomes[0].evaluation.summary["MRR"] == tre.evaluate(str(qrels), str(good), "MRR").summary["MRR"]
    assert outcomes[1].evaluation is None and f"{bad}:1:" in str(outcomes[1].error)
    assert outcomes[2].error is None  # the run in memory after the bad file is evaluated all the same


def test_a_dict_of_columns_is_checked_as_a_frame_s_rows():
    # {"query_id": [...], "doc_id": [...], "score": [...]} (DataFrame.to_dict("list")) was taken for the readers'
    # own columns, unchecked: integer ids failed deep in the ranking with a traceback, a NaN score was kept
    run = tre.Run({"query_id": [1, 1], "doc_id": ["a", "b"], "score": [2.5, 1.5]})
    assert run.to_dict() == {"1": {"a": 2.5, "b": 1.5}}  # 1 read as a TREC file spells it, as in a frame
    qrels = tre.Qrels({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    assert qrels.to_dict() == {"1": {"a": 1, "b": 0}} and qrels.unjudged == ()
    with pytest.raises(InputFormatError, match=r"^run \(dict\): row 2 \(query '1', document 'b'\): the score nan "
                                               r"is not a number$"):
        tre.Run({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, float("nan")]})
    with pytest.raises(InputFormatError, match=r"^run \(dict\): row 2: document 'a' listed twice for query '1' "
                                               r"\(first at row 1\)$"):
        tre.Run({"query_id": ["1", "1"], "doc_id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(InputFormatError, match=r"^qrels \(dict\): the columns differ in length "
                                               r"\(query_id 2, doc_id 1, relevance 2\)$"):
        tre.Qrels({"query_id": ["1", "1"], "doc_id": ["a"], "relevance": [1, 0]})
    # the same rows as a pandas frame give the same numbers
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.5, 1.5]})
    assert tre.Run(frame).to_dict() == run.to_dict()
    # and evaluate() takes it as it takes the frame (not as a search function's {query_id: results})
    qrels_dict = {"1": {"a": 1}}
    assert tre.evaluate(qrels_dict, {"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.5, 1.5]},
                        ["P@1"]).to_dict() == tre.evaluate(qrels_dict, frame, ["P@1"]).to_dict()
    # judgments with their iteration (ndeval's subtopics): one document under two subtopics is no repeat
    subtopics = tre.Qrels({"query_id": ["1", "1"], "iteration": ["1", "2"], "doc_id": ["a", "a"], "relevance": [1, 0]})
    assert subtopics.frame["iteration"].to_list() == ["1", "2"]
    with pytest.raises(InputFormatError, match=r"^qrels \(dict\): row 2: document 'a' judged twice for query '1' "
                                               r"\(first at row 1\)$"):
        tre.Qrels({"query_id": ["1", "1"], "iteration": ["1", "1"], "doc_id": ["a", "a"], "relevance": [1, 0]})
