"""``trec-rag-eval plan`` and ``tre.plan``: the shipped fixtures' pilot planned through the command and the
facade, every output format, the notebook table, the DataFrame, the power curves, and the refusals."""

from __future__ import annotations

import csv
import io
import json
import math
import os

import numpy as np
import pytest
from conftest import REPO

import trec_rag_eval as tre
from trec_rag_eval.compare.planning import plan_values

statsmodels_power = pytest.importorskip("statsmodels.stats.power")

QRELS = os.path.join(REPO, "fixtures", "qrels.txt")
BM25 = os.path.join(REPO, "fixtures", "run_bm25.txt")
HYBRID = os.path.join(REPO, "fixtures", "run_hybrid.txt")
PRIMARY = ["nDCG@10", "R@5", "MRR"]


@pytest.fixture(scope="module")
def per_query():
    """The fixtures' per-query values of each primary measure, from the evaluator (aligned by query)."""
    bm25 = tre.evaluate(QRELS, BM25, PRIMARY).per_query
    hybrid = tre.evaluate(QRELS, HYBRID, PRIMARY).per_query
    queries = sorted(bm25)
    return {m: (np.array([bm25[q][m] for q in queries]), np.array([hybrid[q][m] for q in queries])) for m in PRIMARY}


def test_the_fixtures_plan_is_statsmodels_and_compares_mdd(run_cli, per_query):
    result = run_cli("plan", "--delta", "0.02", "-f", "json", QRELS, BM25, HYBRID)
    assert result.exit_code == 0, result.stderr
    planned = json.loads(result.stdout)
    assert list(planned["measures"]) == PRIMARY and planned["pilot_queries"] == 8 and planned["at_queries"] == 8
    comparison = tre.compare(QRELS, [BM25, HYBRID])
    for measure, (a, b) in per_query.items():
        sd = float(np.std(b - a, ddof=1))
        design = planned["measures"][measure]["designs"]["paired_t"]
        expected = statsmodels_power.TTestPower().solve_power(effect_size=0.02 / sd, alpha=0.05, power=0.8)
        assert design["queries"] == math.ceil(expected)
        assert planned["measures"][measure]["variance"] == pytest.approx(sd ** 2, rel=1e-12)
        # the delta the pilot detects is compare's MDD, the same paired t-test's
        assert design["detectable_delta"] == pytest.approx(comparison.pair(measure, "hybrid").min_detectable_delta,
                                                           rel=1e-9)


def test_the_facade_and_per_query_values_give_the_same_plan(per_query):
    # the same data in another shape gives the same numbers: runs read from files, or per-query arrays
    from_files = tre.plan(QRELS, [BM25, HYBRID], ["nDCG@10", "R@5"], delta=0.05, ci_width=0.1)
    values = {"bm25": {m: per_query[m][0] for m in ("nDCG@10", "R@5")},
              "hybrid": {m: per_query[m][1] for m in ("nDCG@10", "R@5")}}
    from_values = plan_values(values, [f"q{i}" for i in range(8)], delta=0.05, ci_width=0.1)
    assert from_files.plans == from_values.plans
    assert from_files.sources["qrels"] == QRELS and from_files.runs == ["bm25", "hybrid"]


def test_the_text_has_one_verdict_per_measure(run_cli):
    result = run_cli("plan", "--delta", "0.02", QRELS, BM25, HYBRID)
    assert result.exit_code == 0 and result.stderr == ""
    lines = result.stdout.splitlines()
    assert lines[0] == ("Queries needed, from a pilot of 2 runs (bm25, hybrid) over 8 queries: delta 0.020, "
                        "alpha 0.05, power 0.8")
    verdicts = lines[lines.index("Verdicts:") + 1: lines.index("Verdicts:") + 4]
    assert [line.split()[0] for line in verdicts] == PRIMARY
    for line in verdicts:
        assert line.count(". ") == 0 and line.endswith(".")  # one sentence each
        assert "a wide range, as 8 queries pin the variance down only within a factor of 9.5" in line


def test_more_runs_plan_anova_and_tukey(run_cli, tmp_path):
    fused = tmp_path / "rrf.txt"
    assert run_cli("fuse", BM25, HYBRID, "-o", str(fused)).exit_code == 0
    result = run_cli("plan", "-m", "nDCG@10", "--delta", "0.05", "--queries", "100", "-f", "json", QRELS, BM25,
                     HYBRID, str(fused))
    planned = json.loads(result.stdout)["measures"]["nDCG@10"]
    assert set(planned["designs"]) == {"anova", "tukey_hsd"} and planned["variance_df"] == 14
    assert planned["designs"]["tukey_hsd"]["queries"] >= planned["designs"]["anova"]["queries"]
    text = run_cli("plan", "-m", "nDCG@10", "--delta", "0.05", QRELS, BM25, HYBRID, str(fused)).stdout
    assert "a one-way ANOVA over the 3 runs needs" in text and "and a Tukey HSD" in text


@pytest.mark.parametrize("fmt, start", [
    ("markdown", "**Queries needed, from a pilot of 2 runs"),
    ("latex", "\\begin{table}[t]\n\\centering\n\\begin{tabular}{llrrrrrr}\n\\toprule\nmeasure & design & sd &"),
    ("csv", "measure,design,runs,pilot_queries,variance,variance_df,variance_low,variance_high,delta,ci_width,"
            "alpha,power,queries,approx_queries,queries_low,queries_high,pilot_power,at_queries,detectable_delta,"
            "power_at_queries\n"),
])
def test_every_format(run_cli, fmt, start):
    result = run_cli("plan", "--delta", "0.02", "--ci-width", "0.1", "-f", fmt, QRELS, BM25, HYBRID)
    assert result.exit_code == 0 and result.stdout.startswith(start)
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(result.stdout)))
        assert [(r["measure"], r["design"]) for r in rows] == [(m, d) for m in PRIMARY for d in ("paired_t",
                                                                                                  "ci_width")]
        assert rows[0]["queries"].isdigit() and rows[1]["pilot_power"] == ""  # an interval has no power
    if fmt == "markdown":
        assert "| nDCG@10 | paired t-test |" in result.stdout and "- **R@5**: a paired t-test needs" in result.stdout


def test_the_notebook_table_the_dataframe_and_the_repr():
    result = tre.plan(QRELS, [BM25, HYBRID], "R@5", delta=0.02)
    page = result._repr_html_()
    assert page.startswith("<table><caption>Queries needed, from a pilot of 2 runs") and "<b>R@5</b>: a paired" in page
    frame = result.to_pandas()
    assert list(frame["design"]) == ["paired_t"] and int(frame["queries"].iloc[0]) == result.plans[0].designs[0].queries
    assert repr(result) == f"TopicSetPlan(runs=['bm25', 'hybrid'], pilot_queries=8, delta=0.020, R@5=" \
                           f"{result.plans[0].designs[0].queries})"
    assert str(result) == result.render("table")


def test_the_power_curves(run_cli, tmp_path):
    png = tmp_path / "power.png"
    result = run_cli("plan", "--delta", "0.02", "--plot", str(png), QRELS, BM25, HYBRID)
    assert result.exit_code == 0 and png.read_bytes()[:4] == b"\x89PNG" and result.stderr == f"Wrote {png}\n"
    figure = tre.plan(QRELS, [BM25, HYBRID], delta=0.02).plot()
    panels = [axes for axes in figure.axes if axes.get_title()]
    assert [axes.get_title() for axes in panels] == PRIMARY
    assert [line.get_label() for line in panels[0].lines][:3] == ["delta 0.010", "delta 0.020", "delta 0.040"]
    again = run_cli("plan", "--delta", "0.02", "--plot", str(png), QRELS, BM25, HYBRID)
    assert again.exit_code == 2 and again.stderr == f"Error: {png} already exists; use --force to overwrite it\n"
    bad = run_cli("plan", "--delta", "0.02", "--plot", str(tmp_path / "x.pdf"), QRELS, BM25, HYBRID)
    assert bad.exit_code == 2 and "the plot file must end in .png or .svg" in bad.stderr


@pytest.mark.parametrize("arguments, error", [
    ([QRELS, BM25, "--delta", "0.02"], "plan needs a pilot of at least two runs, got 1"),
    ([QRELS, BM25, HYBRID], "plan needs --delta D: the smallest difference worth detecting (0.02: two points of "
                            "nDCG)"),
    ([QRELS, BM25, HYBRID, "--delta", "0"], "--delta must be positive, got 0.0"),
    ([QRELS, BM25, HYBRID, "--delta", "-0.02"], "--delta must be positive, got -0.02"),
    ([QRELS, BM25, HYBRID, "--delta", "0.02", "--alpha", "1"], "--alpha must be between 0 and 1, got 1.0"),
    ([QRELS, BM25, HYBRID, "--delta", "0.02", "--alpha", "0"], "--alpha must be between 0 and 1, got 0.0"),
    ([QRELS, BM25, HYBRID, "--delta", "0.02", "--power", "1.5"], "--power must be between 0 and 1, got 1.5"),
    ([QRELS, BM25, HYBRID, "--delta", "0.02", "--confidence", "0"], "--confidence must be between 0 and 1, got 0.0"),
    ([QRELS, BM25, HYBRID, "--delta", "0.02", "--ci-width", "-1"], "--ci-width must be positive, got -1.0"),
    ([QRELS, BM25, HYBRID, "--delta", "0.02", "--queries", "1"], "--queries must be at least 2, got 1"),
])
def test_bad_input_is_one_error_line(run_cli, arguments, error):
    result = run_cli("plan", *arguments)
    assert result.exit_code == 2 and result.stdout == "" and result.stderr == f"Error: {error}\n"


def test_a_delta_wider_than_the_measure_is_said_with_its_flag(run_cli):
    result = run_cli("plan", "-m", "P@5", "--delta", "1.5", QRELS, BM25, HYBRID)
    assert result.exit_code == 0
    assert result.stderr == ("Warning: --delta 1.500 is more than P@5 can differ by (its values span 1): no two runs "
                             "differ by that much, whatever the number of queries\n")


def test_output_file_is_not_overwritten(run_cli, tmp_path):
    out = tmp_path / "plan.txt"
    out.write_text("keep me")
    refused = run_cli("plan", "--delta", "0.02", "-o", str(out), QRELS, BM25, HYBRID)
    assert refused.exit_code == 2 and out.read_text() == "keep me"
    done = run_cli("plan", "--delta", "0.02", "-o", str(out), "--force", QRELS, BM25, HYBRID)
    assert done.exit_code == 0 and out.read_text().startswith("Queries needed")
