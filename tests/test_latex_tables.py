"""The LaTeX tables of a comparison and of all pairs are ready for a paper: a table float with its caption and
label, each measure's highest mean in bold, and superscripts that keep their place in the column."""

from __future__ import annotations

import re

import numpy as np
import pytest

from trec_rag_eval.compare import compare_values
from trec_rag_eval.compare.allpairs import compare_all_pairs

QUERIES = [f"q{i}" for i in range(8)]


def _balanced(text: str) -> None:
    body = text.replace("\\{", "").replace("\\}", "")
    depth = 0
    for ch in body:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        assert depth >= 0, text
    assert depth == 0
    assert re.findall(r"\\begin\{(\w+)\}", text) == list(reversed(re.findall(r"\\end\{(\w+)\}", text)))


@pytest.fixture(scope="module")
def all_pairs():
    # on m1, A is about 0.9 on every one of 20 queries, B 0.5, C 0.1: each run beats every run below it (A beats
    # b and c, B beats c: checked below); on m2 the three tie
    noise = np.random.default_rng(3).normal(0, 0.01, size=(3, 20))
    values = {run: {"m1": level + noise[i], "m2": np.full(20, 0.5)}
              for i, (run, level) in enumerate((("A", 0.9), ("B", 0.5), ("C", 0.1)))}
    result = compare_all_pairs(values, [f"q{i}" for i in range(20)], seed=1, n_resamples=2000)
    assert result.letters("m1") == {"A": "bc", "B": "c", "C": ""} and result.letters("m2") == dict.fromkeys("ABC", "")
    return result


def test_all_pairs_letters_keep_their_place_and_the_best_is_bold(all_pairs):
    text = all_pairs.to_latex(caption="Three runs.", label="tab:three")
    rows = {line.split(" & ")[1]: line.split(" & ")[2:] for line in text.splitlines()
            if re.match(r"[abc] & ", line)}
    # m1: the letters used in the column are b and c: A has both, B has c in c's place, C has none (space kept)
    means = {run: f"{all_pairs.means[run]['m1']:.4f}" for run in "ABC"}
    assert rows["A"][0] == f"\\textbf{{{means['A']}}}$^{{bc}}$"
    assert rows["B"][0] == f"{means['B']}$^{{\\phantom{{b}}c}}$"
    assert rows["C"][0] == f"{means['C']}\\hphantom{{$^{{bc}}$}}"
    # m2: a tie, no letter: every mean is the best, in bold, and nothing is reserved for letters
    assert [row[1] for row in rows.values()] == ["\\textbf{0.5000} \\\\"] * 3
    assert text.startswith("\\begin{table}[t]\n\\centering\n\\caption{Three runs. \\textbf{Bold}: the highest mean")
    assert "\\label{tab:three}\n\\begin{tabular}{llrr}\n\\toprule\n & Run & m1 & m2 \\\\\n\\midrule\n" in text
    assert text.endswith("\\bottomrule\n\\end{tabular}\n\\end{table}\n")
    _balanced(text)
    # the output format gives the same table with its default caption and label
    assert all_pairs.render("latex") == all_pairs.to_latex()
    assert "\\caption{Mean over 20 queries." in all_pairs.render("latex")
    assert "\\label{tab:all-pairs}" in all_pairs.render("latex")


def test_comparison_marks_are_aligned_and_the_best_is_bold():
    a = np.full(8, 0.2)
    values = {"base": {"m": a, "n": a}, "better": {"m": a + 0.3, "n": a}, "worse": {"m": a - 0.1, "n": a}}
    comparison = compare_values(values, QUERIES, measures=["m", "n"])
    text = comparison.to_latex(label=None)
    rows = [line for line in text.splitlines() if " & " in line and not line.startswith("Run")]
    # m: better is significantly above the baseline (dagger), worse below (double dagger); the baseline has
    # no mark and keeps its width; n: every run ties, in bold, with no mark anywhere
    assert rows == ["base (baseline) & 0.2000\\hphantom{$^{\\dagger}$} & \\textbf{0.2000} \\\\",
                    "better & \\textbf{0.5000}$^{\\dagger}$ & \\textbf{0.2000} \\\\",
                    "worse & 0.1000$^{\\ddagger}$ & \\textbf{0.2000} \\\\"]
    assert "\\label" not in text
    assert "\\caption{Mean over 8 queries. \\textbf{Bold}: the highest mean of each measure." in text
    _balanced(text)
    assert comparison.render("latex") == comparison.to_latex()


def test_names_are_escaped_in_the_table():
    values = {"bm_25 & co": {"P@5": np.full(8, 0.5)}, "100%": {"P@5": np.full(8, 0.25)}}
    text = compare_values(values, QUERIES).to_latex(caption="Runs #1.")
    assert "bm\\_25 \\& co (baseline) & \\textbf{0.5000}" in text and "100\\% & 0.2500" in text
    _balanced(text)
