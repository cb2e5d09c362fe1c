"""compare says what it tested: independent intervals, measures in the order
given, verdicts naming the correction and the uncorrected p, a short primary set when no measure is asked, and
no detectable delta beyond what the measure can take."""

from __future__ import annotations

import dataclasses
import html
import re
import sys

import numpy as np
import pytest
from conftest import invoke
from scipy import stats as scipy_stats
from test_compare_cli import write_seed_example

from trec_rag_eval.compare import PRIMARY_MEASURES, RAG_MEASURES, compare_runs, compare_values
from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels, read_trec_run
from trec_rag_eval.render.comparison import render_table, verdict


@pytest.fixture
def seed(tmp_path):
    paths = write_seed_example(tmp_path)
    return read_trec_qrels(paths["qrels"]), [read_trec_run(paths[t]) for t in ("A", "B", "C")], paths


def test_an_interval_does_not_depend_on_the_other_measures_runs_or_test(seed):
    qrels, runs, _ = seed
    for test in ("t", "randomization"):
        alone = compare_runs(qrels, runs[:2], measures=["nDCG@10"], n_resamples=2000, test=test)
        crowded = compare_runs(qrels, runs, measures=["R@5", "P@5", "nDCG@10"], n_resamples=2000, test=test)
        a, b = alone.pair("nDCG@10", "B"), crowded.pair("nDCG@10", "B")
        assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    # the bootstrap, asked for, does not depend on the test either
    alone = compare_runs(qrels, runs[:2], measures=["nDCG@10"], n_resamples=2000, interval="bootstrap")
    crowded = compare_runs(qrels, runs, measures=["R@5", "P@5", "nDCG@10"], n_resamples=2000, test="randomization",
                      interval="bootstrap")
    a, b = alone.pair("nDCG@10", "B"), crowded.pair("nDCG@10", "B")
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)


def test_the_cli_interval_is_the_same_with_other_measures_before_it(seed):
    _, _, paths = seed
    files = [str(paths["qrels"]), str(paths["A"]), str(paths["B"])]
    alone = invoke("compare", "-f", "csv", "-m", "nDCG@10", *files).stdout.splitlines()
    crowded = invoke("compare", "-f", "csv", "-m", "R@5", "-m", "nDCG@10", *files).stdout.splitlines()
    def interval(lines):
        # ci_low, ci_high (p_adjusted differs, rightly: the family of comparisons is larger)
        return [line.split(",")[7:9] for line in lines if line.startswith("all,nDCG@10,B,")]

    assert interval(alone) and interval(alone) == interval(crowded)


def test_measures_keep_the_order_given(seed):
    # the measures asked, exactly those, in the order given, each once (RR is MRR,
    # recall.5 is R@5): `-m R@5 -m MRR -m nDCG@10` used to come back in the primary set's order
    qrels, runs, paths = seed
    comparison = compare_runs(qrels, runs[:2], measures=["R@5", "MAP", "nDCG@10", "RR", "P@5", "MRR"], n_resamples=200)
    assert comparison.measures == ["R@5", "MAP", "nDCG@10", "RR", "P@5"]
    out = invoke("compare", "-f", "csv", "-m", "P@5", "-m", "MRR", "-m", "recall.5", "-m", "MAP",
                 str(paths["qrels"]), str(paths["A"]), str(paths["B"])).stdout
    assert [line.split(",")[1] for line in out.splitlines()[1:] if ",B," in line] == ["P@5", "MRR", "R@5", "MAP"]
    out = invoke("compare", "-f", "csv", "-m", "R@5", "-m", "MRR", "-m", "nDCG@10",
                 str(paths["qrels"]), str(paths["A"]), str(paths["B"])).stdout
    assert [line.split(",")[1] for line in out.splitlines()[1:] if ",B," in line] == ["R@5", "MRR", "nDCG@10"]


def test_m_compares_exactly_the_measures_asked_and_holm_covers_them_alone(seed):
    # `compare -m P@5` once compared nDCG@10, R@5, MRR and P@5 and corrected over all four
    qrels, runs, paths = seed
    files = [str(paths["qrels"]), str(paths["A"]), str(paths["B"]), str(paths["C"])]
    result = invoke("compare", "-m", "P@5", *files)
    assert result.exit_code == 0, result.stderr
    # 1 measure x 2 runs against the baseline: Holm covers 2 comparisons, and each verdict says so
    assert "Holm correction over 2 comparisons" in result.stdout
    verdicts = [line for line in result.stdout.splitlines() if " vs A: " in line or "better:" in line
                or "worse:" in line]
    assert len(verdicts) == 2 and all("over 2 comparisons" in line for line in verdicts)
    assert [line.split()[0] for line in verdicts] == ["P@5"] * 2
    # the Python call compares the same family, with the same numbers
    comparison = compare_runs(qrels, runs, measures="P@5")
    assert comparison.measures == ["P@5"] and len(comparison.pairs) == 2
    # one pre-registered measure and two runs: one comparison, so its p-value is not inflated at all
    pair = compare_runs(qrels, runs[:2], measures=["P@5"]).pair("P@5", "B")
    assert pair.p_adjusted == pair.p_value
    # --primary (primary=True) asks for the primary set before the -m measures
    result = invoke("compare", "--primary", "-m", "P@5", *files)
    assert "Holm correction over 8 comparisons" in result.stdout
    assert compare_runs(qrels, runs, measures="P@5", primary=True).measures == ["nDCG@10", "R@5", "MRR", "P@5"]
    # --all-measures: the whole RAG table in its order, and a -m beyond it is added at the end
    full = invoke("compare", "--all-measures", "-m", "MAP", "-m", "ERR@10", "-f", "csv", *files[:3]).stdout
    rows = [line.split(",")[1] for line in full.splitlines() if ",B," in line]
    assert rows[:2] == ["P@1", "P@3"] and rows[-3:] == ["MRR", "MAP", "ERR@10"] and len(rows) == 23
    assert compare_runs(qrels, runs[:2], all_measures=True, n_resamples=200).measures == list(RAG_MEASURES)


def test_the_default_is_the_short_primary_set_and_the_full_table_is_still_there(seed):
    qrels, runs, paths = seed
    assert PRIMARY_MEASURES == ("nDCG@10", "R@5", "MRR")
    assert compare_runs(qrels, runs[:2], n_resamples=200).measures == ["nDCG@10", "R@5", "MRR"]
    files = [str(paths["qrels"]), str(paths["A"]), str(paths["B"])]
    default = invoke("compare", "-f", "json", *files)
    assert '"measures": [\n    "nDCG@10",\n    "R@5",\n    "MRR"\n  ]' in default.stdout
    full = invoke("compare", "--all-measures", "-f", "csv", *files).stdout
    assert len([line for line in full.splitlines() if ",B," in line]) == 22


def test_no_primary_compares_only_the_measures_given(seed):
    qrels, runs, paths = seed
    assert compare_runs(qrels, runs, measures=["P@5", "RR"], primary=False).measures == ["P@5", "RR"]
    files = [str(paths["qrels"]), str(paths["A"]), str(paths["B"]), str(paths["C"])]
    alone = invoke("compare", "--no-primary", "-m", "R@5", *files)
    assert "Holm correction over 2 comparisons" in alone.stdout
    with pytest.raises(UsageError, match="primary=False compares only the measures given, and none was given"):
        compare_runs(qrels, runs, primary=False)
    refused = invoke("compare", "--no-primary", *files)
    assert refused.exit_code == 2
    assert refused.stderr == "Error: --no-primary compares only -m, and none was given\n"


def test_the_verdict_says_what_was_tested_with_the_uncorrected_p():
    # 22 measures; on the first, B is better by 0.3 on 10 of 20 queries: p about 0.012 alone,
    # not significant once Holm has 22 comparisons to cover
    rng = np.random.default_rng(3)
    queries = [f"q{i}" for i in range(20)]
    base = rng.uniform(0.2, 0.6, size=20)
    values = {"A": {}, "B": {}}
    for m in range(22):
        values["A"][f"m{m}"] = base
        values["B"][f"m{m}"] = base + (rng.normal(0.05, 0.08, size=20) if m == 0 else rng.normal(0, 0.05, 20))
    comparison = compare_values(values, queries, n_resamples=500)
    pair = comparison.pair("m0", "B")
    raw = scipy_stats.ttest_rel(values["B"]["m0"], values["A"]["m0"]).pvalue
    assert raw < 0.05 and not pair.significant
    sentence = verdict(comparison, pair)
    assert f"not significant after Holm over 22 comparisons (p = {raw:.3f} uncorrected" in sentence
    assert "within noise" not in sentence


def test_the_detectable_delta_is_not_shown_beyond_the_measures_range():
    # two queries: the t-test at power 0.8 would need a delta of about 4 on a measure bounded by 1
    values = {"A": {"P@5": [0.2, 0.6]}, "B": {"P@5": [0.4, 0.4]}}
    comparison = compare_values(values, ["q1", "q2"], n_resamples=200)
    pair = comparison.pair("P@5", "B")
    assert np.isnan(pair.min_detectable_delta)
    assert "4.084" not in render_table(comparison)
    assert "too few queries (2) to detect any difference P@5 can take" in verdict(comparison, pair)
    # an unbounded measure (DCG) keeps its number
    values = {"A": {"DCG@5": [0.2, 0.6]}, "B": {"DCG@5": [0.4, 0.4]}}
    assert compare_values(values, ["q1", "q2"], n_resamples=200).pairs[0].min_detectable_delta > 1


def test_a_detectable_delta_far_beyond_the_range_is_said_in_a_few_digits():
    # alpha 1e-300 and two queries: the t quantile of 5e-301 at 1 df is about 6e299, the delta it needs about 1e299;
    # its 300 digits were printed in full (".2f")
    values = {"A": {"P@5": [0.1, 0.5]}, "B": {"P@5": [0.3, 0.4]}}
    comparison = compare_values(values, ["q1", "q2"], alpha=1e-300)
    pair = comparison.pair("P@5", "B")
    assert 1e298 < pair.mdd_beyond_span < 1e300
    sentence = verdict(comparison, pair)
    assert sentence.endswith(f"a paired t-test at power 0.8 would need {pair.mdd_beyond_span:.3g})")
    assert not re.search(r"\d{10}", sentence)


def test_a_detectable_delta_no_float_holds_is_said_so():
    # at the smallest normal alpha two queries' critical value is ~3e307, and with an sd of 1414 the delta
    # (noncentrality x sd / sqrt(2)) is beyond the largest float: the MDD is inf. An unbounded measure says no
    # difference is detected (it said "this query set detects about inf"); a bounded one says that what it would
    # need lies beyond its range, in words
    unbounded = {"A": {"DCG@5": [0.0, 1000.0]}, "B": {"DCG@5": [1000.0, 0.0]}}
    comparison = compare_values(unbounded, ["q1", "q2"], alpha=sys.float_info.min)
    pair = comparison.pair("DCG@5", "B")
    assert pair.min_detectable_delta == np.inf
    assert verdict(comparison, pair).endswith("; this query set detects no difference a float holds")
    assert "about inf" not in render_table(comparison)
    bounded = dataclasses.replace(pair, measure="P@5", min_detectable_delta=np.nan, mdd_beyond_span=np.inf,
                                  value_span=1.0)
    assert verdict(comparison, bounded).endswith(
        "too few queries (2) to detect any difference P@5 can take (its values span 1; a paired t-test at power 0.8 "
        "would need a difference beyond the largest float)")


def test_a_detectable_delta_no_float_holds_is_an_empty_csv_cell_as_it_is_null_in_json():
    # the same inf MDD as above: JSON writes null (it has no inf), so the CSV leaves the cell empty, as it does
    # for NaN, rather than writing "inf", which a reader of the JSON and of the CSV would see differently
    import csv
    import io
    import json

    from trec_rag_eval.render.comparison import comparison_dict, render_csv

    unbounded = {"A": {"DCG@5": [0.0, 1000.0]}, "B": {"DCG@5": [1000.0, 0.0]}}
    comparison = compare_values(unbounded, ["q1", "q2"], alpha=sys.float_info.min)
    rows = list(csv.DictReader(io.StringIO(render_csv(comparison))))
    assert [row["min_detectable_delta"] for row in rows if row["run"] == "B"] == [""]
    assert "inf" not in render_csv(comparison)
    assert "Infinity" not in json.dumps(comparison_dict(comparison))


# --- matplotlib is optional; the report says what it compares ------------------------------------


def test_plot_and_report_without_matplotlib_fail_before_printing_anything(seed, tmp_path, monkeypatch):
    _, _, paths = seed
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    files = [str(paths["qrels"]), str(paths["A"]), str(paths["B"])]
    plotted = invoke("compare", "--plot", str(tmp_path / "deltas.png"), *files)
    assert (plotted.exit_code, plotted.stdout) == (1, "")
    assert plotted.stderr == ("Error: --plot needs the package 'matplotlib': pip install 'trec-rag-eval[plot]'\n")
    report = invoke("report", "-o", str(tmp_path / "r.html"), *files)
    assert report.exit_code == 1 and "pip install 'trec-rag-eval[plot]'" in report.stderr
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "deltas.png").exists()
    plain = invoke("report", "--no-plots", "-o", str(tmp_path / "r.html"), *files)
    assert plain.exit_code == 0, plain.stderr
    assert "<img" not in (tmp_path / "r.html").read_text()


def test_the_report_header_says_what_it_compares(seed, tmp_path):
    _, _, paths = seed
    out = tmp_path / "r.html"
    result = invoke("report", "--no-plots", "-l", "2", "-o", str(out), str(paths["qrels"]), str(paths["A"]),
                    str(paths["B"]))
    assert result.exit_code == 0, result.stderr
    page = out.read_text()
    header = page[page.index('<table id="inputs">'):page.index("</table>")]
    from trec_rag_eval import __version__

    for text in (str(paths["qrels"]), str(paths["A"]), str(paths["B"]), f"trec-rag-eval {__version__}",
                 "paired t-test, Holm correction", "paired t-interval", "nDCG@10, R@5, MRR"):
        assert html.escape(text, quote=False) in header, text
    assert "seed" not in header  # the t-test with its t-interval draws nothing at random
    assert "<th>relevance level</th><td>2</td>" in header
    assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", header)


@pytest.mark.parametrize(
    ("measure", "reason"),
    [("gm_map", "GMAP summarises the queries by a geometric mean"),
     ("num_rel", "NumRel summarises the queries by a sum"),
     ("runid", "runid has no numeric value per query"),
     ("relstring", "relstring has no numeric value per query")],
)
def test_a_measure_compare_cannot_test_as_evaluate_reports_it_is_refused(seed, measure, reason):
    # compare tests means of per-query values: GMAP's column held the arithmetic mean of AP (0.339 where
    # evaluate says gm_map 0.066), NumRel a mean where evaluate says a sum; runid was dropped in silence
    qrels, runs, paths = seed
    with pytest.raises(UsageError, match=reason):
        compare_runs(qrels, runs[:2], measures=[measure], n_resamples=200)
    result = invoke("compare", "-m", measure, str(paths["qrels"]), str(paths["A"]), str(paths["B"]))
    assert result.exit_code == 2 and reason in result.stderr and result.stdout == ""
