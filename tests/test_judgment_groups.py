"""Qrels of several judgment groups (trec_eval's -R qrels_jg): map_avgjg, P_avgjg and Rprec_mult_avgjg worked
out by hand, -J group by group, and the judgments they fit."""

from __future__ import annotations

import pytest
from conftest import invoke

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.prefs_files import read_grouped
from trec_rag_eval.io.trec.qrels_runs import parse_run_text
from trec_rag_eval.tables.judgment_kinds import GroupedQrels

pytestmark = pytest.mark.usefixtures("table_form")  # lists and polars frames alike

# group 1: a 1, b 0 (R = 1); group 2: a 0, b 1, c 1 (R = 2)
GROUPS = "q 1 a 1\nq 1 b 0\nq 2 a 0\nq 2 b 1\nq 2 c 1\n"


def _grouped(tmp_path, text: str) -> GroupedQrels:
    path = tmp_path / "qrels.jg"
    path.write_text(text)
    return read_grouped(path)


def test_each_group_is_scored_as_its_own_qrels_then_averaged(tmp_path):
    # run a, b, x (x in no group).
    # group 1: a relevant at rank 1: AP 1/1; P@5 1/5; Rprec_mult 1.0: cutoff floor(1 * 1 + 0.9) = 1: P@1 = 1
    # group 2: b relevant at rank 2: AP (1/2) / 2; P@5 1/5; cutoff floor(1 * 2 + 0.9) = 2: P@2 = 1/2
    run = parse_run_text("q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 x 3 1 r\n")
    evaluation = evaluate_tables(_grouped(tmp_path, GROUPS), run, ["map_avgjg", "P_avgjg.5", "Rprec_mult_avgjg.1.0"])
    assert {m.trec_name: evaluation.summary[m] for m in evaluation.measures} == {
        "map_avgjg": (1.0 + 0.25) / 2, "P_avgjg_5": (0.2 + 0.2) / 2, "Rprec_mult_avgjg_1.00": (1.0 + 0.5) / 2}


def test_judged_only_drops_what_each_group_has_not_judged(tmp_path):
    # group 2 also judges y 0. Run y, a, b.
    # without -J: group 1 y(-1) a(1) b(0): AP (1/2)/1; group 2 y(0) a(0) b(1): AP (1/3)/2
    # with -J: group 1 drops y (not judged there): a b: AP 1; group 2 keeps it: AP (1/3)/2
    grouped = _grouped(tmp_path, GROUPS + "q 2 y 0\n")
    run = parse_run_text("q Q0 y 1 5 r\nq Q0 a 2 3 r\nq Q0 b 3 2 r\n")
    assert evaluate_tables(grouped, run, "map_avgjg").summary["map_avgjg"] == pytest.approx((0.5 + 1 / 6) / 2)
    assert evaluate_tables(grouped, run, "map_avgjg", judged_only=True).summary["map_avgjg"] == pytest.approx(
        (1.0 + 1 / 6) / 2)


def test_the_relevance_level_applies_in_every_group(tmp_path):
    # -l 2: group 1 (a 2, b 1) has a relevant; group 2 (b 1) none: (AP 1 + 0) / 2
    grouped = _grouped(tmp_path, "q 1 a 2\nq 1 b 1\nq 2 b 1\n")
    run = parse_run_text("q Q0 a 1 2 r\nq Q0 b 2 1 r\n")
    assert evaluate_tables(grouped, run, "map_avgjg", relevance_level=2).summary["map_avgjg"] == 0.5


def test_a_document_judged_twice_in_one_group_is_refused_with_both_lines(tmp_path):
    with pytest.raises(InputFormatError) as caught:
        _grouped(tmp_path, "q 1 a 1\nq 2 a 0\nq 1 a 0\n")
    assert str(caught.value) == (f"{tmp_path / 'qrels.jg'}:3: document 'a' judged twice for query 'q' in iteration "
                                 "(subtopic) '1' (first at line 1)")


def test_the_measures_fit_judgment_groups_only(tmp_path):
    grouped = _grouped(tmp_path, GROUPS)
    run = parse_run_text("q Q0 a 1 3 r\n")
    with pytest.raises(UsageError) as caught:
        evaluate_tables(grouped, run, "P.5")
    assert str(caught.value) == (
        f"P_5 scores relevance judgments (qrels: one grade per document), and {tmp_path / 'qrels.jg'} holds judgment "
        "groups (qrels whose iteration column names the group): ask for map_avgjg, P_avgjg or Rprec_mult_avgjg "
        "(qrels_jg), or read the qrels as qrels (format='trec')")
    plain = invoke("-m", "map_avgjg", str(tmp_path / "qrels.jg"), str(tmp_path / "qrels.jg"))
    assert plain.exit_code == 2 and plain.stderr.startswith(
        "Error: map_avgjg scores judgment groups (qrels whose iteration column names the group), and ")
    assert plain.stderr.endswith("or read the qrels with --qrels-format qrels_jg\n")
    # runid and num_q fit every kind; without -m the command evaluates trec_eval's qrels_jg set
    default = evaluate_tables(grouped, run)
    assert [m.trec_name for m in default.measures][:3] == ["runid", "num_q", "map_avgjg"]


def test_parquet_grouped_qrels_give_the_numbers_of_the_text(tmp_path):
    import polars as pl

    text = _grouped(tmp_path, GROUPS)
    path = tmp_path / "groups.parquet"
    pl.DataFrame({"query_id": ["q"] * 5, "iteration": ["1", "1", "2", "2", "2"], "doc_id": list("ababc"),
                  "relevance": [1, 0, 0, 1, 1]}).write_parquet(path)
    run = parse_run_text("q Q0 a 1 3 r\nq Q0 b 2 2 r\n")
    assert evaluate_tables(read_grouped(path), run, "qrels_jg").summary == evaluate_tables(
        text, run, "qrels_jg").summary
