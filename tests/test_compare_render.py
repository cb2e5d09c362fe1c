"""Renderings of a Comparison: table, Markdown, LaTeX, CSV, JSON, pictures. Synthetic per-query values."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from trec_rag_eval.compare import compare_values
from trec_rag_eval.compare.comparison import Comparison
from trec_rag_eval.errors import UsageError
from trec_rag_eval.render.comparison import (
    comparison_dict,
    render,
    render_csv,
    render_json,
    render_latex,
    render_markdown,
    render_table,
    verdict,
    verdicts,
)
from trec_rag_eval.render.plot import save_plot

QUERIES = ["q1", "q2", "q3", "q4", "q5", "q6"]


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    # B beats A by exactly 0.1 on five queries and ties on one; C equals A except q6.
    a = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6])
    b = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.6])
    c = np.array([0.1, 0.2, 0.3, 0.4, 0.5, 0.3])
    values = {
        "A": {"nDCG@10": a, "R_5": a / 2},
        "B": {"nDCG@10": b, "R_5": b / 2},
        "C": {"nDCG@10": c, "R_5": c / 2},
    }
    return compare_values(values, QUERIES, n_resamples=500, seed=1)


def test_table_rows_footer_and_verdicts(comparison: Comparison) -> None:
    text = render_table(comparison)
    lines = text.splitlines()
    assert lines[0] == "Comparison of 3 runs over 6 queries (baseline: A)"
    header = lines[2].split()
    assert header == ["measure", "run", "mean", "delta", "95%", "CI", "p", "(Holm)", "d", "W/T/L", "MDD"]
    b_row = next(line for line in lines if line.strip().startswith("B ") and "5/1/0" in line)
    assert "+0.083" in b_row  # (5 * 0.1) / 6
    assert "Verdicts:" in lines
    assert lines[-1].startswith("paired t-test, Holm correction over 4 comparisons, alpha 0.05;")
    assert "paired t-interval, not adjusted; 6 queries; baseline A." in lines[-1]  # no seed: nothing drawn


def test_per_query_adds_one_row_per_measure_and_query(comparison: Comparison) -> None:
    text = render_table(comparison, per_query=True)
    assert "Per-query values and deltas (run - baseline):" in text
    q6 = [line.split() for line in text.splitlines() if line.startswith("q6 ")]
    # query_id measure A B delta-B C delta-C
    assert q6[0] == ["q6", "nDCG@10", "0.6000", "0.6000", "+0.000", "0.3000", "-0.300"]
    assert len(q6) == 2


def test_markdown_is_a_pipe_table_with_verdicts(comparison: Comparison) -> None:
    text = render_markdown(comparison)
    lines = text.splitlines()
    assert lines[2] == "| measure | run | mean | delta | 95% CI | p (Holm) | d | W/T/L | MDD |"
    assert lines[3] == "|:---|:---|---:|---:|---:|---:|---:|---:|---:|"
    assert sum(1 for line in lines if line.startswith("- **")) == 4
    assert lines[-1].startswith("_paired t-test") and lines[-1].endswith("_")


def test_latex_booktabs_marks_and_escaping(comparison: Comparison) -> None:
    text = render_latex(comparison)
    assert "\\toprule" in text and "\\midrule" in text and "\\bottomrule" in text
    assert "Run & nDCG@10 & R\\_5 \\\\" in text
    b_pair = comparison.pair("nDCG@10", "B")
    assert b_pair.significant  # B is the best mean of both measures: in bold, marked better than A
    assert f"B & \\textbf{{{b_pair.run_mean:.4f}}}$^{{\\dagger}}$ &" in text
    # A's means carry no mark: an invisible one keeps the column's numbers aligned
    assert "A (baseline) & 0.3500\\hphantom{$^{\\dagger}$} & 0.1750\\hphantom{$^{\\dagger}$} \\\\" in text
    assert "\\caption{Mean over 6 queries." in text


def test_csv_long_format(comparison: Comparison) -> None:
    rows = list(csv.DictReader(io.StringIO(render_csv(comparison))))
    assert len(rows) == 2 * 3  # measures x runs
    b = next(r for r in rows if r["measure"] == "nDCG@10" and r["run"] == "B")
    assert b["query_id"] == "all"
    assert float(b["delta"]) == pytest.approx(0.5 / 6)
    assert (b["wins"], b["ties"], b["losses"]) == ("5", "1", "0")
    a = next(r for r in rows if r["measure"] == "nDCG@10" and r["run"] == "A")
    assert a["delta"] == "" and float(a["value"]) == pytest.approx(0.35)
    per_query = list(csv.DictReader(io.StringIO(render_csv(comparison, per_query=True))))
    assert len(per_query) == 6 + 2 * 2 * 6  # summary + measures x other runs x queries
    c6 = next(r for r in per_query if r["query_id"] == "q6" and r["run"] == "C" and r["measure"] == "nDCG@10")
    assert float(c6["delta"]) == pytest.approx(-0.3)


def test_json_is_plain_data(comparison: Comparison) -> None:
    data = json.loads(render_json(comparison, per_query=True))
    assert data["baseline"] == "A" and data["runs"] == ["A", "B", "C"] and data["n_queries"] == 6
    assert "seed" not in data and data["test"] == "t" and data["correction"] == "holm"  # the t-test draws nothing
    first = data["comparisons"][0]
    assert (first["measure"], first["run"]) == ("nDCG@10", "B")
    assert first["verdict"] == verdict(comparison, comparison.pairs[0])
    assert data["per_query_deltas"]["nDCG@10"]["C"]["q6"] == pytest.approx(-0.3)
    assert data["means"]["A"]["nDCG@10"] == pytest.approx(0.35)
    assert comparison_dict(comparison) == json.loads(render_json(comparison))


def test_identical_runs_say_so() -> None:
    a = np.linspace(0, 1, 5)
    comparison = compare_values({"A": {"m": a}, "B": {"m": a.copy()}}, list("abcde"), n_resamples=100)
    assert verdicts(comparison) == [("m", "B vs A: identical on every query")]
    assert json.loads(render_json(comparison))["comparisons"][0]["min_detectable_delta"] is None


def test_unknown_format() -> None:
    comparison = compare_values({"A": {"m": [0.1, 0.2]}, "B": {"m": [0.2, 0.1]}}, ["1", "2"], n_resamples=50)
    with pytest.raises(UsageError, match="^unknown format 'xml'; expected one of table, markdown, latex, json, csv$"):
        render(comparison, "xml")


def test_plot_png_and_svg(tmp_path, comparison: Comparison) -> None:
    png = tmp_path / "deltas.png"
    svg = tmp_path / "deltas.svg"
    save_plot(comparison, png)
    save_plot(comparison, svg)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = svg.read_text()
    assert "<svg" in text and "</svg>" in text
    with pytest.raises(UsageError, match=r"the plot file must end in \.png or \.svg"):
        save_plot(comparison, tmp_path / "deltas.pdf")


def test_the_seed_is_said_where_something_is_drawn_alone(tmp_path) -> None:
    # the t-test with its t-interval draws nothing: no seed in the footer, the caption, the header or the JSON;
    # a bootstrap interval or the randomization test draws: the seed is said everywhere
    values = {"A": {"m": np.array([0.1, 0.2, 0.3, 0.4])}, "B": {"m": np.array([0.2, 0.2, 0.5, 0.4])}}
    queries = ["q1", "q2", "q3", "q4"]
    plain = compare_values(values, queries, test="t", interval="t", seed=7)
    assert "seed" not in render_table(plain) and "seed" not in render_latex(plain)
    assert "seed" not in json.loads(render_json(plain)) and "n_resamples" not in json.loads(render_json(plain))
    for drawn in (compare_values(values, queries, test="t", interval="bootstrap", seed=7, n_resamples=200),
                  compare_values(values, queries, test="randomization", seed=7, n_resamples=200)):
        assert "seed 7" in render_table(drawn) and "seed 7" in render_latex(drawn)
        assert json.loads(render_json(drawn))["seed"] == 7 and json.loads(render_json(drawn))["n_resamples"] == 200
