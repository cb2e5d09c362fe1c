"""The table of equivalents of docs/guides/coming-from.md ("you write" | "with trec-rag-eval"), row by row: each row's
call to trec_eval, pytrec_eval, ir_measures or ranx and ours give the same numbers. trec_eval's rows are checked
on the golden files (trec_eval 10's and 9's own output, tests/golden/), the others by calling the tool. A row added
to the table without its check here fails the first test."""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import invoke
from docs_pages import page

import trec_rag_eval as tre

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden"
FIXTURES = REPO / "fixtures"
QRELS, BM25, HYBRID = (str(FIXTURES / name) for name in ("qrels.txt", "run_bm25.txt", "run_hybrid.txt"))


def _table_rows() -> list[str]:
    """The first cell of each row of the table (the tools' own rows, not the headings naming a tool)."""
    table = page("guides/coming-from.md").split("## The calls, side by side", 1)[1].split("\n\n", 2)[1]
    rows = [line.split(" | ")[0].removeprefix("| ") for line in table.splitlines()[2:]]
    return [row for row in rows if not row.startswith("**")]


def _golden(*args: str) -> str:
    """Ours, as the row writes it, run in tests/golden/inputs."""
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(GOLDEN / "inputs")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = invoke(*args)
    assert result.exit_code == 0, result.stderr
    return result.stdout


def _expected(name: str) -> str:
    return (GOLDEN / "expected" / name).read_text(encoding="utf-8")


def _summary_line(output: str, measure: str) -> str:
    [line] = [line for line in output.splitlines() if re.match(rf"{re.escape(measure)}\s+\tall\t", line)]
    return line


# --- trec_eval: the same flags, the same bytes (trec_eval's lines from tests/golden/commands.txt) --------------

def _trec_eval_default() -> None:
    # trec_eval qrels.binary run.ties > out.binary
    assert _golden("-m", "official", "qrels.binary", "run.ties") == _expected("out.binary")


def _trec_eval_all() -> None:
    # trec_eval -m all_trec -q -c qrels.binary run.trunc > out.binary.aqc
    assert _golden("-q", "-c", "-m", "all_trec", "qrels.binary", "run.trunc") == _expected("out.binary.aqc")


def _trec_eval_flags() -> None:
    # trec_eval -m all_trec -q -l3 -J -M15 qrels.graded run.ties > out.graded.aqlJM: its ndcg_cut_10 over all
    ours = _golden("-l3", "-J", "-M15", "-m", "ndcg_cut.10", "qrels.graded", "run.ties")
    assert ours == _summary_line(_expected("out.graded.aqlJM"), "ndcg_cut_10") + "\n"
    # attached values read as trec_eval reads them
    assert _golden("-l3", "-J", "-M15", "-mndcg_cut.10", "qrels.graded", "run.ties") == ours


def _trec_eval_inputs() -> None:
    # trec_eval -m all_prefs -q -R prefs prefs.mixed run.ties > out.prefs.mixed: its prefs_simp over all
    ours = _golden("-R", "prefs", "-m", "prefs_simp", "prefs.mixed", "run.ties")
    assert ours == _summary_line(_expected("out.prefs.mixed"), "prefs_simp") + "\n"
    assert _golden("-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.groups", "run.ties") == _expected("out.groups")
    assert (_golden("-q", "-m", "all_trec", "-Z", "zscores.binary", "qrels.binary", "run.ties")
            == _expected("out.binary.aqZ"))


def _trec_eval_9() -> None:
    # trec_eval 9.0.8 -m all_trec -q qrels.binary run.ties > v9/out.binary.aq: every line of it, in its order
    # (trec_eval 10 added rbp, rbp_resid and unj, which 9 does not print)
    ours = _golden("--trec-eval-9", "-q", "-m", "all_trec", "qrels.binary", "run.ties").splitlines()
    theirs = _expected("v9/out.binary.aq").splitlines()
    kept = [line for line in ours if line.split()[0] in {line.split()[0] for line in theirs}]
    assert kept == theirs
    # and trec_eval 10's differ there: the flag changes something
    assert _golden("-q", "-m", "all_trec", "qrels.binary", "run.ties").splitlines() != ours


# --- pytrec_eval -----------------------------------------------------------------------------------------------

QRELS_DICT = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}, "q3": {"d1": 2, "d4": 1}}
RUN_DICT = {"q1": {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "q2": {"d1": 1.5, "d2": 0.2, "d3": 0.5},
            "q3": {"d4": 2.0, "d1": 1.0, "d5": 3.0}}


def _pytrec_import() -> None:
    import pytrec_eval as theirs

    from trec_rag_eval import pytrec_eval as ours

    measures = {"map", "ndcg_cut.10", "P.5", "iprec_at_recall"}
    expected = theirs.RelevanceEvaluator(QRELS_DICT, measures).evaluate(RUN_DICT)
    got = ours.RelevanceEvaluator(QRELS_DICT, measures).evaluate(RUN_DICT)
    assert got.keys() == expected.keys()
    for query in expected:
        assert got[query] == pytest.approx(expected[query], abs=1e-12), query


def _pytrec_evaluate() -> None:
    import pytrec_eval

    theirs = pytrec_eval.RelevanceEvaluator(QRELS_DICT, {"map", "ndcg_cut.10"}).evaluate(RUN_DICT)
    ours = tre.evaluate(QRELS_DICT, RUN_DICT, ["map", "ndcg_cut.10"]).to_dict()
    assert ours.keys() == theirs.keys()
    for query, values in theirs.items():
        assert {"map": ours[query]["AP"], "ndcg_cut_10": ours[query]["nDCG@10"]} == pytest.approx(values, abs=1e-12)


def _pytrec_aggregate() -> None:
    import pytrec_eval

    per_query = pytrec_eval.RelevanceEvaluator(QRELS_DICT, {"map"}).evaluate(RUN_DICT)
    theirs = pytrec_eval.compute_aggregated_measure("map", [values["map"] for values in per_query.values()])
    assert tre.evaluate(QRELS_DICT, RUN_DICT, ["map"]).summary["map"] == pytest.approx(theirs, abs=1e-12)


# --- ir_measures -----------------------------------------------------------------------------------------------

def _ir_measures_inputs():
    import ir_measures

    return list(ir_measures.read_trec_qrels(QRELS)), list(ir_measures.read_trec_run(BM25))


def _ir_measures_aggregate() -> None:
    import ir_measures
    from ir_measures import AP, nDCG

    qrels, run = _ir_measures_inputs()
    theirs = ir_measures.calc_aggregate([nDCG @ 10, AP], qrels, run)
    ours = tre.evaluate(qrels, run, [nDCG @ 10, AP]).summary
    for measure in (nDCG @ 10, AP):
        assert ours[measure] == pytest.approx(theirs[measure], abs=1e-12)


def _per_query(metrics) -> dict[tuple[str, str], float]:
    return {(m.query_id, str(m.measure)): m.value for m in metrics}


def _ir_measures_iter() -> None:
    import ir_measures
    from ir_measures import P, nDCG

    qrels, run = _ir_measures_inputs()
    theirs = _per_query(ir_measures.iter_calc([nDCG @ 10, P @ 5], qrels, run))
    ours = {(row.query_id, name): value for row in tre.iter_evaluate(qrels, run, [nDCG @ 10, P @ 5])
            for name, value in row.values.items()}
    assert ours == pytest.approx(theirs, abs=1e-12)
    result = tre.evaluate(qrels, run, [nDCG @ 10, P @ 5])
    assert {(q, m): v for q, values in result.per_query.items() for m, v in values.items()} == pytest.approx(theirs)


def _ir_measures_evaluator() -> None:
    import ir_measures
    from ir_measures import AP

    evaluator = ir_measures.evaluator([AP], ir_measures.read_trec_qrels(QRELS))
    qrels = tre.read_qrels(QRELS)
    for path in (BM25, HYBRID):
        theirs = evaluator.calc_aggregate(ir_measures.read_trec_run(path))
        assert tre.evaluate(qrels, path, [AP]).summary[AP] == pytest.approx(theirs[AP], abs=1e-12)


def _ir_measures_read() -> None:
    import ir_measures

    qrels, run = _ir_measures_inputs()
    assert tre.read_qrels(QRELS).to_dict() == {
        query: dict(docs) for query, docs in ir_measures.util.QrelsConverter(qrels).as_dict_of_dict().items()}
    assert tre.read_run(BM25).to_dict() == {
        query: dict(docs) for query, docs in ir_measures.util.RunConverter(run).as_dict_of_dict().items()}
    assert ir_measures.calc_aggregate([ir_measures.AP], qrels, run)[ir_measures.AP] == pytest.approx(
        tre.evaluate(tre.read_qrels(QRELS), tre.read_run(BM25), "AP").summary["AP"], abs=1e-12)


def _ir_measures_parse() -> None:
    import ir_measures

    for text in ("P(rel=2)@5", "nDCG@10", "AP", "R@100"):
        theirs = ir_measures.parse_measure(text)
        ours = tre.parse_measure(text)
        assert str(ours) == str(theirs) == text
        qrels, run = _ir_measures_inputs()
        assert tre.evaluate(qrels, run, [ours]).summary[text] == pytest.approx(
            ir_measures.calc_aggregate([theirs], qrels, run)[theirs], abs=1e-12)


def _ir_measures_cli() -> None:
    done = subprocess.run([sys.executable, "-m", "ir_measures", "-q", QRELS, BM25, "nDCG@10 P@5"],
                          capture_output=True, text=True, check=True)
    theirs = {(q, m): float(v) for q, m, v in (line.split("\t") for line in done.stdout.splitlines())}
    result = invoke("-q", "-m", "nDCG@10", "-m", "P@5", QRELS, BM25)
    names = {"ndcg_cut_10": "nDCG@10", "P_5": "P@5"}
    ours = {(q, names[m.strip()]): float(v) for m, q, v in (line.split("\t") for line in result.stdout.splitlines())}
    assert ours == pytest.approx(theirs, abs=1e-4)   # both print 4 decimals
    assert len(ours) == 2 * (8 + 1)  # 8 queries and all


def _crosscheck() -> None:
    result = invoke("crosscheck", "-m", "nDCG@10", "-m", "P@5", QRELS, BM25)
    assert result.exit_code == 0, result.stderr
    assert "ir-measures" in result.stdout or "ir_measures" in result.stdout


# --- ranx ------------------------------------------------------------------------------------------------------

def _dicts() -> tuple[dict, dict[str, dict]]:
    """The judgments and the two runs as ``{query: {doc: value}}`` (ranx's ``Qrels(dict)`` and ``Run(dict)``)."""
    return (tre.read_qrels(QRELS).to_dict(),
            {name: tre.read_run(path).to_dict() for name, path in (("bm25", BM25), ("hybrid", HYBRID))})


def _ranx_runs():
    # built from the dicts, as the row writes them: ranx's file reader and its to_dict() compile for seconds
    import ranx

    qrels, runs = _dicts()
    return ranx.Qrels(qrels), [ranx.Run(run, name=name) for name, run in runs.items()]


def _ranx_objects() -> None:
    import ranx

    qrels, runs = _dicts()
    by_dicts = tre.evaluate(qrels, runs["bm25"], "nDCG@10").summary["nDCG@10"]
    assert tre.evaluate(tre.Qrels(qrels), tre.Run(runs["bm25"]), "nDCG@10").summary["nDCG@10"] == by_dicts
    assert by_dicts == pytest.approx(ranx.evaluate(ranx.Qrels(qrels), ranx.Run(runs["bm25"]), "ndcg@10"), abs=1e-12)
    assert by_dicts == pytest.approx(0.4772, abs=5e-5)  # trec_eval 10: ndcg_cut_10 0.4772 (docs' transcripts)


def _ranx_evaluate() -> None:
    import ranx

    qrels, runs = _dicts()
    names = ["ndcg@10", "map", "recall@100", "precision@5", "mrr", "hit_rate@5"]
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(runs["bm25"]), names)
    ours = tre.evaluate(qrels, runs["bm25"], names).summary
    for name in names:
        assert ours[name] == pytest.approx(theirs[name], abs=1e-12), name


def _ranx_compare(stat_test: str, ours_test: str) -> None:
    import ranx

    qrels, runs = _ranx_runs()
    metrics = ["ndcg@10", "precision@5"]
    theirs = ranx.compare(qrels, runs, metrics, stat_test=stat_test).to_dict()
    qrels_dict, dicts = _dicts()
    pairs = tre.compare(qrels_dict, dicts, metrics, pairs="all", test=ours_test)
    for metric in metrics:
        assert pairs.pair(metric, "bm25", "hybrid").p_value == pytest.approx(
            theirs["bm25"]["comparisons"]["hybrid"][metric], abs=1e-12)
        if ours_test == "t":  # against a baseline too
            baseline = tre.compare(qrels_dict, dicts, metrics)
            assert baseline.pair(metric, "hybrid").p_value == pytest.approx(
                theirs["bm25"]["comparisons"]["hybrid"][metric], abs=1e-12)


def _ranx_latex() -> None:
    qrels, dicts = _dicts()
    for result in (tre.compare(qrels, dicts, "nDCG@10", pairs="all"), tre.compare(qrels, dicts, "nDCG@10")):
        latex = result.to_latex(caption="Our runs", label="tab:runs")
        assert "\\caption{Our runs" in latex and "\\label{tab:runs}" in latex and "\\textbf{" in latex


def _ranx_fuse() -> None:
    import ranx

    _, runs = _ranx_runs()
    dicts = list(_dicts()[1].values())
    for method, norm in (("rrf", None), ("mnz", "zmuv")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # ranx's zmuv divides 0 by 0 on a one-document query
            theirs = ranx.fuse(runs, method=method, **({"norm": norm} if norm else {})).to_dict()
        ours = tre.fuse(dicts, method, norm).to_dict()["run"]
        assert ours.keys() == theirs.keys()
        for query in theirs:
            assert ours[query] == pytest.approx(theirs[query], rel=1e-9, abs=1e-12), (method, query)


def _ranx_optimize() -> None:
    import ranx

    qrels, runs = _ranx_runs()
    theirs = ranx.optimize_fusion(qrels, runs, norm="min-max", method="wsum", metric="ndcg@10", show_progress=False)
    qrels_dict, dicts = _dicts()
    ours = tre.fuse(list(dicts.values()), "wsum", "min-max", optimize=qrels_dict, measure="nDCG@10")
    assert ours.weights == pytest.approx([float(w) for w in theirs["weights"]])
    assert ours.tuning is not None and len(ours.tuning.folds) == 5  # and the score held out


def _ranx_make_comparable() -> None:
    import ranx

    qrels_dict, dicts = _dicts()
    qrels = ranx.Qrels(qrels_dict)
    partial = {query: docs for query, docs in dicts["bm25"].items() if query != "q1"}
    theirs = ranx.evaluate(qrels, ranx.Run(partial).make_comparable(qrels), "ndcg@10")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = tre.evaluate(qrels_dict, partial, "nDCG@10")
    assert ours.summary["nDCG@10"] == pytest.approx(theirs, abs=1e-12)
    assert ours.missing_queries == ["q1"] and any("q1" in str(w.message) for w in caught)  # named


CHECKS: dict[str, Callable[[], None]] = {
    "`trec_eval qrels run`": _trec_eval_default,
    "`trec_eval -q -c -m all_trec qrels run`": _trec_eval_all,
    "`trec_eval -l3 -J -M15 -m ndcg_cut.10 qrels run`": _trec_eval_flags,
    "`trec_eval -R prefs -m prefs_simp prefs run`, `-R qrels_jg`, `-Z zscores`": _trec_eval_inputs,
    "trec_eval 9 (inside pytrec_eval): float32 scores, its iprec rounding": _trec_eval_9,
    "`import pytrec_eval`": _pytrec_import,
    '`pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10"}).evaluate(run)`': _pytrec_evaluate,
    '`pytrec_eval.compute_aggregated_measure("map", values)`': _pytrec_aggregate,
    "`ir_measures.calc_aggregate([nDCG@10, AP], qrels, run)`": _ir_measures_aggregate,
    "`ir_measures.iter_calc(measures, qrels, run)`": _ir_measures_iter,
    "`ir_measures.evaluator(measures, qrels)` then `.calc_aggregate(run)` per run": _ir_measures_evaluator,
    "`ir_measures.read_trec_qrels(path)`, `read_trec_run(path)`": _ir_measures_read,
    '`ir_measures.parse_measure("P(rel=2)@5")`': _ir_measures_parse,
    '`ir_measures -q qrels run "nDCG@10 P@5"`': _ir_measures_cli,
    "two providers disagree": _crosscheck,
    "`Qrels(qrels_dict)`, `Run(run_dict)`": _ranx_objects,
    '`evaluate(qrels, run, ["ndcg@10", "map", "recall@100"])`': _ranx_evaluate,
    '`compare(qrels, runs, metrics, stat_test="student")`': lambda: _ranx_compare("student", "t"),
    '`compare(..., stat_test="tukey")`': lambda: _ranx_compare("tukey", "tukey"),
    "`report.to_latex()`": _ranx_latex,
    '`fuse(runs, method="rrf")`, `method="mnz", norm="zmuv"`': _ranx_fuse,
    '`optimize_fusion(qrels, runs, method="wsum")`': _ranx_optimize,
    "`make_comparable`": _ranx_make_comparable,
}


def test_every_row_of_the_table_has_its_check():
    assert _table_rows() == list(CHECKS)


@pytest.mark.parametrize("row", list(CHECKS))
def test_the_row_gives_the_same_numbers(row):
    pytest.importorskip("ranx")
    pytest.importorskip("ir_measures")
    pytest.importorskip("pytrec_eval")
    CHECKS[row]()
