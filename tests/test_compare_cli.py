"""End to end: TREC files -> ``trec-rag-eval compare`` / ``report`` -> verdicts, formats, files.

The main case is the tutorial's warning: on thirty queries a 0.02 difference is noise and a 0.10
drop in recall@5 is a clear signal. The runs are built so that R@5 per query is known by hand
(hits in the top five / five relevant passages), and the expected p-values come from scipy on
those hand values, not from our evaluator.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

N_QUERIES = 30
HITS_A = [1 + (q * 7) % 4 for q in range(N_QUERIES)]  # relevant passages in A's top five: 1..4
CHANGE_B = [+1] * 8 + [-1] * 5 + [0] * 17  # net +3 hits over 30 queries: R@5 +0.02
CHANGE_C = [-1] * 17 + [+1] * 2 + [0] * 11  # net -15 hits: R@5 -0.10


def write_seed_example(directory: Path) -> dict[str, Path]:
    """Qrels with five relevant passages per query, and runs A, B (+0.02 R@5) and C (-0.10 R@5)."""
    qrels: list[str] = []
    runs: dict[str, list[str]] = {"A": [], "B": [], "C": []}
    for q in range(N_QUERIES):
        qid = f"q{q + 1:02d}"
        relevant = [f"{qid}-rel{j}" for j in range(5)]
        other = [f"{qid}-doc{j:02d}" for j in range(15)]
        qrels += [f"{qid} 0 {doc} 1" for doc in relevant] + [f"{qid} 0 {doc} 0" for doc in other[:5]]
        for tag, change in (("A", 0), ("B", CHANGE_B[q]), ("C", CHANGE_C[q])):
            hits = HITS_A[q] + change
            ranking = relevant[:hits] + other[: 5 - hits] + relevant[hits:] + other[5 - hits :]
            runs[tag] += [f"{qid} Q0 {doc} {rank} {21 - rank} {tag}" for rank, doc in enumerate(ranking, 1)]
    paths = {"qrels": directory / "qrels.txt"}
    paths["qrels"].write_text("\n".join(qrels) + "\n")
    for tag, lines in runs.items():
        paths[tag] = directory / f"run_{tag}.txt"
        paths[tag].write_text("\n".join(lines) + "\n")
    return paths


def _hand_recall_at_5(changes: list[int]) -> np.ndarray:
    return np.array([(h + c) / 5 for h, c in zip(HITS_A, changes, strict=True)])


@pytest.fixture
def seed_files(tmp_path: Path) -> dict[str, str]:
    return {name: str(path) for name, path in write_seed_example(tmp_path).items()}


def test_seed_warning_small_delta_is_noise_large_drop_is_significant(run_cli, seed_files) -> None:
    f = seed_files
    result = run_cli("compare", "--no-primary", "-m", "R@5", "-f", "json", f["qrels"], f["A"], f["B"], f["C"])
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["n_queries"] == 30 and data["baseline"] == "A"
    by_run = {c["run"]: c for c in data["comparisons"]}

    a, b, c = _hand_recall_at_5([0] * 30), _hand_recall_at_5(CHANGE_B), _hand_recall_at_5(CHANGE_C)
    assert data["means"]["A"]["R@5"] == pytest.approx(a.mean())
    assert by_run["B"]["delta"] == pytest.approx(0.02)
    assert by_run["C"]["delta"] == pytest.approx(-0.10)
    p_b = stats.ttest_rel(b, a).pvalue
    p_c = stats.ttest_rel(c, a).pvalue
    assert by_run["B"]["p_value"] == pytest.approx(p_b, rel=1e-9)
    assert by_run["C"]["p_value"] == pytest.approx(p_c, rel=1e-9)
    # Holm over the two comparisons, by hand: the smaller p doubled, the larger kept (running max).
    assert by_run["C"]["p_adjusted"] == pytest.approx(2 * p_c, rel=1e-9)
    assert by_run["B"]["p_adjusted"] == pytest.approx(max(p_b, 2 * p_c), rel=1e-9)

    assert by_run["B"]["significant"] is False
    assert by_run["C"]["significant"] is True
    assert by_run["B"]["verdict"].startswith(
        f"B vs A: not significant after Holm over 2 comparisons (p = {p_b:.3f} uncorrected), +0.020, 95% CI [")
    assert by_run["C"]["verdict"].startswith(
        "C worse: -0.100, p < 0.001 after Holm over 2 comparisons (p < 0.001 uncorrected), 95% CI [")
    # The query set cannot resolve 0.02: the smallest detectable delta is well above it.
    assert by_run["B"]["min_detectable_delta"] > 0.05
    assert (by_run["B"]["wins"], by_run["B"]["ties"], by_run["B"]["losses"]) == (8, 17, 5)
    assert by_run["C"]["ci"][1] < 0 < by_run["B"]["ci"][1] and by_run["B"]["ci"][0] < 0


def test_seed_warning_with_the_randomization_test_and_two_runs(run_cli, seed_files) -> None:
    f = seed_files
    small = run_cli(
        "compare", "--no-primary", "-m", "R@5", "--test", "randomization", "-f", "json", f["qrels"], f["A"], f["B"]
    )
    large = run_cli(
        "compare", "--no-primary", "-m", "R@5", "--test", "randomization", "-f", "json", f["qrels"], f["A"], f["C"]
    )
    small_pair = json.loads(small.stdout)["comparisons"][0]
    large_pair = json.loads(large.stdout)["comparisons"][0]
    assert small_pair["significant"] is False and small_pair["p_value"] > 0.2
    assert large_pair["significant"] is True and large_pair["p_value"] < 0.01


def test_table_output_verdicts_and_footer(run_cli, seed_files) -> None:
    f = seed_files
    result = run_cli("compare", "--no-primary", "-m", "R@5", "--seed", "7", f["qrels"], f["A"], f["B"], f["C"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "Comparison of 3 runs over 30 queries (baseline: A)"
    assert any(line.startswith("  R@5  B vs A: not significant after Holm over 2 comparisons (p = ") for line in lines)
    assert any(line.startswith("  R@5  C worse: -0.100, p < 0.001 after Holm over 2 comparisons") for line in lines)
    assert lines[-1].startswith("paired t-test, Holm correction over 2 comparisons, alpha 0.05;")
    # the t-test with its t-interval draws nothing at random: the footer names no seed (--seed gets a Note)
    assert "not adjusted; 30 queries; baseline A." in lines[-1] and "seed" not in lines[-1]


def test_baseline_by_name_or_file_and_reproducible(run_cli, seed_files) -> None:
    f = seed_files
    files = [f["qrels"], f["A"], f["B"], f["C"]]
    by_name = run_cli("compare", "--no-primary", "-m", "R@5", "-b", "C", "-f", "json", *files)
    by_file = run_cli("compare", "--no-primary", "-m", "R@5", "-b", f["C"], "-f", "json", *files)
    assert by_name.stdout == by_file.stdout
    data = json.loads(by_name.stdout)
    assert data["baseline"] == "C"
    assert {c["run"]: c["delta"] for c in data["comparisons"]} == pytest.approx({"A": 0.10, "B": 0.12})


def test_formats_and_per_query(run_cli, seed_files) -> None:
    f = seed_files
    args = ["--no-primary", "-m", "R@5", "-m", "P@5", f["qrels"], f["A"], f["B"]]
    rows = list(csv.DictReader(io.StringIO(run_cli("compare", "-f", "csv", "--per-query", *args).stdout)))
    assert len(rows) == 2 * 2 + 2 * 30  # summary (measures x runs) + per query (measures x queries)
    q01 = next(r for r in rows if r["query_id"] == "q01" and r["measure"] == "R@5")
    assert float(q01["delta"]) == pytest.approx(0.2) and float(q01["baseline_value"]) == pytest.approx(0.2)
    latex = run_cli("compare", "-f", "latex", *args).stdout
    assert latex.startswith("\\begin{table}") and "\\toprule" in latex
    markdown = run_cli("compare", "-f", "markdown", *args).stdout
    assert "| R@5 | A (baseline) | 0.5000 |" in markdown


def test_plot_file(run_cli, seed_files, tmp_path: Path) -> None:
    f = seed_files
    png = tmp_path / "deltas.png"
    result = run_cli("compare", "--no-primary", "-m", "R@5", "--plot", str(png), f["qrels"], f["A"], f["B"], f["C"])
    assert result.exit_code == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    again = run_cli("compare", "--no-primary", "-m", "R@5", "--plot", str(png), f["qrels"], f["A"], f["B"])
    assert again.exit_code == 2
    assert again.stderr == f"Error: {png} already exists; use --force to overwrite it\n"
    bad = run_cli("compare", "--plot", str(tmp_path / "x.pdf"), f["qrels"], f["A"], f["B"])
    assert bad.exit_code == 2 and "the plot file must end in .png or .svg" in bad.stderr


def test_report_writes_a_page_and_never_overwrites_without_force(run_cli, seed_files, tmp_path: Path) -> None:
    f = seed_files
    out = tmp_path / "report.html"
    first = run_cli("report", "--no-primary", "-m", "R@5", f["qrels"], f["A"], f["B"], f["C"], "-o", str(out))
    assert first.exit_code == 0, first.stderr
    assert first.stdout == f"Wrote {out}: 3 runs, 1 measures, 30 queries\n"
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and page.count("data:image/png;base64,") == 2
    assert "C worse: -0.100" in page
    out.write_text("keep me")
    refused = run_cli("report", "--no-primary", "-m", "R@5", f["qrels"], f["A"], f["B"], "-o", str(out))
    assert refused.exit_code == 2
    assert refused.stderr == f"Error: {out} already exists; use --force to overwrite it\n"
    assert out.read_text() == "keep me"
    forced = run_cli("report", "--no-primary", "-m", "R@5", "--force", f["qrels"], f["A"], f["B"], "-o", str(out))
    assert forced.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")


def test_usage_errors_are_one_line(run_cli, seed_files) -> None:
    f = seed_files
    one = run_cli("compare", f["qrels"], f["A"])
    assert one.exit_code == 2 and one.stderr == "Error: compare needs at least two runs, got 1\n"
    bad = run_cli("compare", "-b", "Z", f["qrels"], f["A"], f["B"])
    assert bad.stderr == "Error: --baseline 'Z' is neither a run name nor a run file; runs: A, B\n"


def test_bad_run_line_names_file_and_line(run_cli, seed_files, tmp_path: Path) -> None:
    broken = tmp_path / "broken.txt"
    broken.write_text("q01 Q0 d1 1 2.0 X\nq01 Q0 d2 2\n")
    result = run_cli("compare", seed_files["qrels"], seed_files["A"], str(broken))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {broken}:2:")
    assert result.stderr.count("\n") == 1


def test_a_run_missing_queries_is_named_on_stderr(tmp_path):
    # q2 has judgments but run B never answers it: it scores 0 in the comparison, and the user is told
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\n")
    run_a = tmp_path / "a.txt"
    run_a.write_text("q1 Q0 d1 1 2 A\nq2 Q0 d2 1 2 A\n")
    run_b = tmp_path / "b.txt"
    run_b.write_text("q1 Q0 d1 1 2 B\n")
    from conftest import invoke

    result = invoke("compare", "-m", "P@1", str(qrels), str(run_a), str(run_b))
    assert result.exit_code == 0, result.stderr
    assert f"Warning: {run_b}: 1 qrels query missing from the run, scored 0: q2\n" in result.stderr
    assert str(run_a) not in result.stderr
