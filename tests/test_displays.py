"""What a result shows in Python is what the command line prints: ``str()`` is the command's text, the
notebook table (``_repr_html_``) carries the same information, ``Comparison.plot()`` draws its figure."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import trec_rag_eval as tre
from tests.conftest import invoke

REPO = Path(__file__).resolve().parent.parent
QRELS = str(REPO / "fixtures" / "qrels.txt")
BM25 = str(REPO / "fixtures" / "run_bm25.txt")
HYBRID = str(REPO / "fixtures" / "run_hybrid.txt")
DATASET = REPO / "fixtures" / "eval_dataset_fr.json"
CORPUS = REPO / "fixtures" / "corpus_fr.jsonl"


def test_str_of_an_evaluation_is_the_commands_table():
    result = invoke(QRELS, BM25)
    assert result.exit_code == 0
    evaluation = tre.evaluate(QRELS, BM25)
    assert str(evaluation) == result.stdout
    # every measure shown, not "+16 more"; trec_eval 10: ndcg_cut_10 all 0.4772
    assert "more)" not in str(evaluation) and re.search(r"\nnDCG .* 0\.4772\n", str(evaluation))


@pytest.mark.parametrize(("args", "format", "per_query"), [
    (["-m", "P@5", "-m", "nDCG@10", "--format", "trec"], "trec", False),
    (["-q", "-m", "P@5", "-m", "AP"], "trec", True),
    (["-m", "P@5", "--format", "json"], "json", False),
    (["-q", "-m", "P@5", "--format", "csv"], "csv", True),
    (["-q", "-m", "P@5", "-m", "AP", "--format", "jsonl"], "jsonl", True),
    (["--format", "jsonl"], "jsonl", False),
    (["-q"], "table", True),
])
def test_every_format_of_the_command_is_reachable_from_python(args, format, per_query):
    measures = [a for i, a in enumerate(args) if i and args[i - 1] == "-m"] or None
    result = invoke(*args, QRELS, BM25)
    assert result.exit_code == 0, result.output
    evaluation = tre.evaluate(QRELS, BM25, measures)
    assert evaluation.render(format, per_query=per_query) == result.stdout


def test_str_of_a_comparison_is_the_commands_report():
    result = invoke("compare", QRELS, BM25, HYBRID)
    assert result.exit_code == 0, result.output
    comparison = tre.compare(QRELS, [BM25, HYBRID])
    assert str(comparison) == result.stdout
    assert comparison.render("markdown") == invoke("compare", "--format", "markdown", QRELS, BM25, HYBRID).stdout


def test_str_of_a_crosscheck_is_the_commands_report():
    result = invoke("crosscheck", QRELS, BM25)
    assert result.exit_code == 0, result.output
    report = tre.crosscheck(QRELS, BM25)
    assert result.stdout == f"run: {BM25}\n" + str(report)  # the command names each run it checks
    assert "Verdict(" not in str(report)


def test_str_of_an_engine_evaluation_is_the_search_commands_text(tmp_path):
    from trec_rag_eval.engine.bm25 import BM25Engine

    result = invoke("search", str(DATASET), "--corpus", str(CORPUS), "--no-progress")
    assert result.exit_code == 0, result.output
    # the command's engine is BM25 over the corpus, whose texts give the context tokens
    report = tre.Evaluator(BM25Engine(CORPUS), run_tag="bm25", progress=False, corpus=CORPUS).evaluate(DATASET)
    latency = re.compile(r"p50 [0-9.]+ ms, p95 [0-9.]+ ms")  # timings differ from run to run
    assert latency.sub("p50 _ ms, p95 _ ms", str(report)) == latency.sub("p50 _ ms, p95 _ ms", result.stdout)
    assert str(report).startswith("bm25 on eval_dataset_fr.json\n")


def test_the_notebook_table_of_a_comparison_carries_the_commands_information():
    comparison = tre.compare(QRELS, [BM25, HYBRID])
    page = comparison._repr_html_()
    for column in ("MDD", "W/T/L", "<th>d</th>", "95% CI", "p (Holm)"):
        assert column in page
    nDCG = comparison.pair("nDCG@10", "hybrid")
    assert f"{nDCG.wins}/{nDCG.ties}/{nDCG.losses}" in page and f"{nDCG.min_detectable_delta:.3f}" in page
    assert f"{nDCG.effect_size:+.2f}" in page
    # a difference the query set cannot tell from 0 is "not significant", with what the set can detect;
    # never "noise"
    assert "noise" not in page
    assert "not significant after Holm" in page and "this query set detects about" in page
    assert "paired t-test" in page and "paired t-interval" in page  # the footer names the test and interval
    assert "seed" not in page  # which draw nothing at random


def test_the_notebook_table_of_an_evaluation_is_the_commands_table():
    evaluation = tre.evaluate(QRELS, BM25)
    page = evaluation._repr_html_()
    assert "<th>@10</th>" in page and "<td>nDCG</td>" in page and "0.4772" in page
    assert "queries: 8; run: bm25" in page


def test_a_dict_runs_caption_does_not_read_run_run():
    evaluation = tre.evaluate({"q1": {"a": 1}}, {"q1": {"a": 1.0}}, "RR")
    assert "run run" not in evaluation._repr_html_()
    assert "queries: 1" in evaluation._repr_html_()


def test_the_notebook_tables_of_an_engine_and_a_crosscheck():
    report = tre.Evaluator(lambda query, k: ["doc_setup_env"], progress=False).evaluate(DATASET)
    page = report._repr_html_()
    assert "engine on eval_dataset_fr.json" in page and "latency per query: p50" in page and "<td>MRR</td>" in page
    check = tre.crosscheck(QRELS, BM25, ["AP", "F1@5"])._repr_html_()
    assert "<td>AP</td><td>agree</td>" in check and "0.338869" in check  # trec_eval 10: map all 0.3389
    assert "not supported by ir-measures" in check and "Verdict: OK" in check


def test_a_comparison_plots_itself(monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    comparison = tre.compare(QRELS, [BM25, HYBRID], ["nDCG@10", "P@5"])
    figure = comparison.plot()
    assert isinstance(figure, Figure)
    titles = [ax.get_title() for ax in figure.get_axes()]
    assert any("nDCG@10" in t for t in titles) and any("P@5" in t for t in titles)


def test_the_result_types_know_no_renderer():
    # the layers import one way: the result types (every module below the facade and render) reach render
    # through the renderer registry only
    import ast

    package = REPO / "trec_rag_eval"
    above = {"render", "cli", "api", "__main__.py"}
    for path in package.rglob("*.py"):
        if path.relative_to(package).parts[0] in above:
            continue
        tree = ast.parse(path.read_text())
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert not any(str(m) == "trec_rag_eval.render" or str(m).startswith("trec_rag_eval.render.")
                       for m in imported), path
