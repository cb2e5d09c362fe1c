"""Preference judgments (trec_eval's -R prefs and -R qrels_prefs): values worked out by hand, the readers'
errors, every way in (text, Parquet, JSON, memory, Python objects) giving the same numbers.

Notation of the hand computations: a run's judged documents are numbered in rank order, the unretrieved
ones after them; "a>b" is a preference for a over b, fulfilled when a is above b (a lower number) and a is
retrieved.
"""

from __future__ import annotations

import math
import re
import warnings

import pytest
from conftest import invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import InputFormatError, TrecRagEvalWarning, UsageError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.io.prefs_files import preferences_of_qrels, read_preferences, write_preferences
from trec_rag_eval.io.trec.prefs import parse_prefs_text, read_prefs, read_qrels_prefs
from trec_rag_eval.io.trec.qrels_runs import parse_qrels_text, parse_run_text
from trec_rag_eval.tables.judgment_kinds import Preferences

pytestmark = pytest.mark.usefixtures("table_form")  # lists and polars frames alike

ALL_PREFS = "all_prefs"


def _rows(prefs: Preferences) -> list[tuple]:
    return list(zip(*(prefs.data[name] for name in ("query_id", "group", "subgroup", "doc_id")),
                    prefs.data["level"].tolist(), strict=True))


def _values(prefs_text: str, run_text: str, measures: str | list[str] = ALL_PREFS, **settings) -> dict:
    evaluation = evaluate_tables(parse_prefs_text(prefs_text), parse_run_text(run_text), measures, **settings)
    return {m.trec_name: evaluation.summary[m] for m in evaluation.measures}


# one group, one subgroup: a 2, b 1, c 0, d 0. Run: c, a, x (unjudged), b; d not retrieved.
# Numbers: c 0, a 1, b 2 (retrieved, rank order), d 3.
# a>b: 1 < 2, fulfilled (retrieved)   a>c: 1 > 0, not (retrieved)   b>c: 2 > 0, not (retrieved)
# a>d, b>d: only the preferred one retrieved: fulfilled (implied)
ONE_GROUP = "q u s a 2\nq u s b 1\nq u s c 0\nq u s d 0\n"
ONE_RUN = "q Q0 c 1 4.0 r\nq Q0 a 2 3.0 r\nq Q0 x 3 2.0 r\nq Q0 b 4 1.0 r\n"


def test_one_group_of_one_subgroup_by_hand():
    v = _values(ONE_GROUP, ONE_RUN)
    counts = ("num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret")
    assert [v[name] for name in counts] == [1, 5, 3, 1]
    # fulfilled / possible: all 3/5, retrieved pairs 1/3, pairs with one retrieved at least 3/5
    for name in ("prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp"):
        assert v[name] == pytest.approx(3 / 5), name
    for name in ("prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret"):
        assert v[name] == pytest.approx(1 / 3), name
    # R = 2 relevant (a, b) >= N = 2 non-relevant: nothing added: 3/5
    assert v["prefs_avgjg_Rnonrel"] == pytest.approx(3 / 5)
    # retrieved: R = 2 (a, b), N = 1 (c): R (R - N) = 2 fulfilled added, and R (R - N) possible: (1 + 2) / (3 + 2)
    assert v["prefs_avgjg_Rnonrel_ret"] == pytest.approx(3 / 5)


def test_ties_are_broken_by_doc_id_ascending():
    # a 2 > b 1, both scored 1.0: trec_eval's preference measures rank a (the smaller id) first, so the
    # preference is fulfilled; every other measure would rank b first
    assert _values("q u s a 2\nq u s b 1\n", "q Q0 b 1 1.0 r\nq Q0 a 2 1.0 r\n", "prefs_simp_ret") == {
        "prefs_simp_ret": 1.0}


def test_the_non_relevant_documents_cut_to_r_by_hand():
    # a 1, b 0, c 0, d 0: R = 1 < N = 3. Run a, b, c: numbers a 0, b 1, c 2, d 3.
    # trec_eval's recount: no pair above the lowest level (only a there); then every line of the group (a, b,
    # c, d) against the first R = 1 line of the lowest level (b, number 1): fulfilled when numbered below
    # min(1, 3 retrieved), a only: 1 of 4.
    # Retrieved only: R = 1 (a), N = 2 (b, c): the retrieved lines (a, b, c) against b: a only, 1 of 3.
    v = _values("q u s a 1\nq u s b 0\nq u s c 0\nq u s d 0\n", "q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 c 3 1 r\n",
                ["prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret"])
    assert v == {"prefs_avgjg_Rnonrel": 1 / 4, "prefs_avgjg_Rnonrel_ret": 1 / 3}


def test_a_group_of_several_subgroups_is_made_transitive_by_hand():
    # s1: a > b; s2: b > c; so a > c too. Run c, a, b: numbers c 0, a 1, b 2.
    # a>b fulfilled (1 < 2); b>c not (2 > 0); a>c not (1 > 0): 1 of 3.
    # Last levels (subgroups in byte order, levels descending): a 2, b 2 (s2), c 1: R = 3 relevant, N = 0:
    # R (R - N) = 9 fulfilled and possible added: (1 + 9) / (3 + 9)
    v = _values("q u s1 a 2\nq u s1 b 1\nq u s2 b 2\nq u s2 c 1\n", "q Q0 c 1 3 r\nq Q0 a 2 2 r\nq Q0 b 3 1 r\n",
                ["prefs_num_prefs_poss", "prefs_simp", "prefs_avgjg_Rnonrel"])
    assert v == {"prefs_num_prefs_poss": 3, "prefs_simp": 1 / 3, "prefs_avgjg_Rnonrel": 10 / 12}


def test_two_groups_that_disagree_by_hand():
    # u1: a > b, a > c (both fulfilled by the run a, b, c); u2: b > a (not fulfilled).
    # simp: 2 of 3. pair: (a, b) has 1 preference each way, 1/2; (a, c) 1 of 1: (1/2 + 1) / 2.
    # avgjg: u1 2/2, u2 0/1: (1 + 0) / 2.
    v = _values("q u1 s a 2\nq u1 s b 1\nq u1 s c 1\nq u2 s b 2\nq u2 s a 1\n",
                "q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 c 3 1 r\n", ["prefs_simp", "prefs_pair", "prefs_avgjg"])
    assert v == {"prefs_simp": 2 / 3, "prefs_pair": 0.75, "prefs_avgjg": 0.5}


def test_the_formats_own_examples_count_their_preferences():
    # trec_eval's description of the prefs format (get_prefs.c): these lines "establish a total of 13
    # preferences" ...
    thirteen = "q1 u1 s1 d1 3.0\nq1 u1 s1 d2 2.0\nq1 u1 s1 d3 0.0\nq1 u1 s1 d4 6.0\nq1 u1 s1 d5 0.0\nq1 u1 s1 d6 2.0\n"
    run = "q1 Q0 d1 1 1 r\n"
    assert _values(thirteen, run, "prefs_num_prefs_poss") == {"prefs_num_prefs_poss": 13}
    # ... and these "5 preferences (1>2, 1>3, 2>3, 2>4, 1>4)", through transitivity
    five = "q1 u1 s1 d1 3.0\nq1 u1 s1 d2 2.0\nq1 u1 s1 d3 1.0\nq1 u1 s2 d2 5.0\nq1 u1 s2 d4 4.0\n"
    assert _values(five, run, "prefs_num_prefs_poss") == {"prefs_num_prefs_poss": 5}


def test_a_line_written_twice_counts_twice_in_a_group_of_one_subgroup():
    # a 1 > b 0 with a's line twice: two preferences, both fulfilled by the run a, b; prefs_pair counts the
    # pair of documents once
    v = _values("q u s a 1\nq u s a 1\nq u s b 0\n", "q Q0 a 1 2 r\nq Q0 b 2 1 r\n",
                ["prefs_num_prefs_poss", "prefs_pair"])
    assert v == {"prefs_num_prefs_poss": 2, "prefs_pair": 1.0}


def test_a_query_missing_from_the_run_keeps_its_possible_preferences():
    # trec_eval -c: the missing query is ranked as one document in no judgment: nothing retrieved, 5 possible
    evaluation = evaluate_tables(parse_prefs_text(ONE_GROUP + "q2 u s a 1\nq2 u s b 0\n"), parse_run_text(ONE_RUN),
                                 ["prefs_num_prefs_poss", "prefs_simp"])
    assert evaluation.query_ids == ["q", "q2"] and evaluation.missing_queries == ["q2"]
    assert list(evaluation.values["prefs_num_prefs_poss"]) == [5, 1]
    assert list(evaluation.values["prefs_simp"]) == [pytest.approx(0.6), 0.0]


def test_max_retrieved_cuts_before_the_documents_are_numbered():
    # -M 2 keeps c and a (numbers c 0, a 1; then b 2, d 3): a>b and a>d fulfilled (a alone retrieved), a>c not
    # (1 > 0), b>c not (c alone), b>d neither retrieved
    v = _values(ONE_GROUP, ONE_RUN, ["prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"], max_retrieved=2)
    assert v == {"prefs_num_prefs_ful": 2, "prefs_num_prefs_ful_ret": 0}


# -- refused, with the line ------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "error"), [
    ("q u s a 1\nq u s b\n", "<prefs>:2: expected 5 columns (query_id group subgroup doc_id level), got 4: 'q u s b'"),
    ("q u s a 1\n\n# c\nq u s b 1 x\n",
     "<prefs>:4: expected 5 columns (query_id group subgroup doc_id level), got 6: 'q u s b 1 x'"),
    ("q u s a high\n", "<prefs>:1: level must be a number, got 'high': 'q u s a high'"),
    ("q u s a 3abc\n", "<prefs>:1: level must be a number, got '3abc': 'q u s a 3abc'"),
    ("q u s a nan\n", "<prefs>:1: level is NaN, which orders nothing: 'q u s a nan'"),
    ("q u s a 1\nq u s a 2\n", "<prefs>:2: document 'a' has two levels (1 and 2) in subgroup 's' of group 'u', "
                               "query 'q' (first at line 1)"),
    ("q u s1 a 0\nq u s2 b 1\nq u s2 a 2\n", "<prefs>:3: document 'a' is non-relevant (level 0) in one subgroup of "
                                             "group 'u', query 'q', and relevant (level above 0) in another (first at "
                                             "line 1)"),
    ("# only a comment\n\n", "<prefs>: no preferences found, expected lines of query_id group subgroup doc_id level"),
])
def test_a_bad_line_is_named(text, error):
    with pytest.raises(InputFormatError) as caught:
        parse_prefs_text(text)
    assert str(caught.value) == error


def test_comment_and_blank_lines_anywhere_change_nothing(tmp_path):
    # trec_eval takes one comment line at a time, never the last line, and no blank line: all are fine here
    plain = tmp_path / "plain"
    plain.write_text(ONE_GROUP)
    messy = tmp_path / "messy"
    messy.write_bytes(b"# one\n# two\n\n" + ONE_GROUP.replace(" ", "\t", 1).replace("\n", "\r\n").encode() + b"# end\n")
    assert _rows(read_prefs(messy)) == _rows(read_prefs(plain))
    assert list(read_prefs(messy).lines) == [4, 5, 6, 7]


def test_a_qrels_file_read_as_preferences(tmp_path):
    # -R qrels_prefs: the iteration column is the group, one subgroup, the relevance the level (any number)
    qrels = tmp_path / "qrels"
    qrels.write_text("q u a 2\nq u b 1.5\nq u c 0\nq u d 0\n")
    prefs = read_qrels_prefs(qrels)
    assert prefs.data["subgroup"] == ["0"] * 4 and list(prefs.data["level"]) == [2.0, 1.5, 0.0, 0.0]
    five = tmp_path / "five"
    five.write_text("q u s a 1\n")
    with pytest.raises(InputFormatError) as caught:
        read_qrels_prefs(five)
    assert str(caught.value) == f"{five}:1: expected 4 columns (query_id group doc_id level), got 5: 'q u s a 1'"
    # a qrels table read as preferences gives the same numbers as its file
    table = parse_qrels_text("q u a 2\nq u b 1\nq u c 0\nq u d 0\n")
    run = parse_run_text(ONE_RUN)
    assert evaluate_tables(preferences_of_qrels(table), run, ALL_PREFS).summary == evaluate_tables(
        parse_prefs_text(ONE_GROUP.replace(" s ", " 0 ")), run, ALL_PREFS).summary


def test_contradicting_subgroups_are_refused():
    # trec_eval aborts on a cycle made by the transitive closure of a group
    with pytest.raises(InputFormatError) as caught:
        _values("q u s1 a 2\nq u s1 b 1\nq u s2 b 2\nq u s2 a 1\n", "q Q0 a 1 1 r\n")
    assert str(caught.value) == ("<prefs>: the preferences of group 'u', query 'q', contradict each other: document "
                                 "'a' is preferred to 'b' and the other way round (through its subgroups)")


def test_where_trec_eval_reads_past_its_lines_the_value_is_nan_and_said():
    # R = 2 relevant (a, b) < N = 3 non-relevant (c 0, c2 0, d -1): trec_eval pairs the lines of the group with
    # the first R = 2 lines of its lowest level (-1), which holds one: it reads past it. The run retrieves a
    # alone: of the 9 preferences (a and b over the three below them and each other, c and c2 over d), a's 4
    # are fulfilled (implied), for prefs_simp
    text = "q u s a 2\nq u s b 1\nq u s c 0\nq u s c2 0\nq u s d -1\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        v = _values(text, "q Q0 a 1 3 r\n", ["prefs_avgjg_Rnonrel", "prefs_simp"])
    assert math.isnan(v["prefs_avgjg_Rnonrel"]) and v["prefs_simp"] == 4 / 9
    [said] = [w for w in caught if issubclass(w.category, TrecRagEvalWarning)]
    assert "prefs_avgjg_Rnonrel is not defined (NaN) for query 'q' group 'u'" in str(said.message)


# -- which measures fit which judgments ----------------------------------------------------------------

def test_a_measure_of_relevance_judgments_is_refused_on_preferences():
    with pytest.raises(UsageError) as caught:
        evaluate_tables(parse_prefs_text(ONE_GROUP), parse_run_text(ONE_RUN), "map")
    assert str(caught.value) == (
        "map scores relevance judgments (qrels: one grade per document), and <prefs> holds preference judgments: ask "
        "for the prefs_* measures (all_prefs), or read the qrels as qrels (format='trec')")
    with pytest.raises(UsageError, match=r"prefs_simp scores preference judgments, .* read them with format='prefs'"):
        evaluate_tables(parse_qrels_text("q 0 a 1\n"), parse_run_text(ONE_RUN), "prefs_simp")


def test_the_command_line_says_its_flags_and_picks_the_prefs_set(tmp_path):
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(ONE_GROUP)
    run.write_text(ONE_RUN)
    refused = invoke("-R", "prefs", "-m", "map", str(prefs), str(run))
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (f"Error: map scores relevance judgments (qrels: one grade per document), and {prefs} "
                              "holds preference judgments: ask for the prefs_* measures (all_prefs), or read the qrels "
                              "as qrels (--qrels-format trec)\n")
    # without -m: trec_eval's prefs set; -J and -l are said to change nothing
    default = invoke("-R", "prefs", "--format", "trec", "-J", "-l", "2", str(prefs), str(run))
    assert default.exit_code == 0, default.stderr
    assert [line.split()[0] for line in default.stdout.splitlines()] == [
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp",
        "prefs_pair", "prefs_avgjg"]
    assert default.stderr == ("Note: -J and -l change nothing for preference judgments (their levels order the "
                              "documents; every retrieved document is ranked)\n")


# -- every way in gives the same numbers; convert loses nothing -------------------------------------------

def test_parquet_json_and_python_rows_give_the_numbers_of_the_text(tmp_path):
    text = tmp_path / "prefs.txt"
    text.write_text(ONE_GROUP + "q2 g1 s1 a 2.5\nq2 g1 s1 b 1\nq2 g1 s2 b 3\nq2 g1 s2 c -1\n")
    run = parse_run_text(ONE_RUN + "q2 Q0 b 1 1 r\nq2 Q0 c 2 1 r\n")
    expected = evaluate_tables(read_prefs(text), run, ALL_PREFS).summary
    for suffix in (".parquet", ".json", ".jsonl", ".copy"):
        path = tmp_path / f"prefs{suffix}"
        assert write_preferences(read_prefs(text), path) == 8
        again = read_preferences(path)
        assert _rows(again) == _rows(read_prefs(text))
        assert list(again.data["level"]) == [2.0, 1.0, 0.0, 0.0, 2.5, 1.0, 3.0, -1.0]
        assert evaluate_tables(again, run, ALL_PREFS).summary == expected, suffix
    rows = [tuple(line.split()[:4]) + (float(line.split()[4]),) for line in text.read_text().splitlines()]
    assert evaluate_tables(Preferences(rows), run, ALL_PREFS).summary == expected
    assert tre.evaluate(Preferences(rows), run, ALL_PREFS).summary == expected


def test_convert_writes_preferences_in_every_format_and_back(tmp_path):
    source = tmp_path / "prefs.txt"
    source.write_text(ONE_GROUP)
    for name in ("out.parquet", "out.json", "out.txt"):
        result = invoke("convert", "--qrels-format", "prefs", str(source), "--qrels", str(tmp_path / name))
        assert result.exit_code == 0, result.stderr
        assert result.stdout == f"Wrote {tmp_path / name}: 4 judgments for 1 queries\n"
    assert (tmp_path / "out.txt").read_text() == ONE_GROUP
    back = invoke("convert", str(tmp_path / "out.parquet"), "--qrels", str(tmp_path / "back.txt"))
    assert back.exit_code == 0, back.stderr
    assert (tmp_path / "back.txt").read_text() == ONE_GROUP
    json_out = invoke("convert", "--qrels-format", "prefs", str(source), "--json", str(tmp_path / "rows.json"))
    assert (json_out.exit_code, json_out.stdout) == (0, f"Wrote {tmp_path / 'rows.json'}: 4 preferences\n")
    assert _rows(read_preferences(tmp_path / "rows.json")) == _rows(read_prefs(source))


def test_json_rows_errors_name_the_row_or_line(tmp_path):
    rows = tmp_path / "rows.json"
    rows.write_text('[{"query_id": "q", "group": "u", "subgroup": "s", "doc_id": "a", "level": 1},\n'
                    ' {"query_id": "q", "group": "u", "subgroup": "s", "doc_id": "b"}]\n')
    with pytest.raises(InputFormatError) as caught:
        read_preferences(rows)
    assert str(caught.value).startswith(f"{rows}: row 2: expected an object with the keys query_id, group, subgroup, "
                                        "doc_id, level, got ")
    lines = tmp_path / "rows.jsonl"
    lines.write_text('{"query_id": "q", "group": "u", "subgroup": "s", "doc_id": "a", "level": 1}\n\n'
                     '{"query_id": "q", "group": "u", "subgroup": "s", "doc_id": "b b", "level": 0}\n')
    with pytest.raises(InputFormatError) as caught:
        read_preferences(lines)
    assert str(caught.value) == f"{lines}:3: document id 'b b' contains whitespace, which a TREC file cannot hold"


def test_a_preferences_url_reads_as_the_local_file(tmp_path):
    import fsspec

    local = tmp_path / "prefs.txt"
    local.write_text(ONE_GROUP)
    with fsspec.open("memory://prefs/judgments.txt", "w") as handle:
        handle.write(ONE_GROUP)
    run = parse_run_text(ONE_RUN)
    assert evaluate_tables(read_prefs("memory://prefs/judgments.txt"), run, ALL_PREFS).summary == evaluate_tables(
        read_prefs(local), run, ALL_PREFS).summary


def test_a_run_read_in_pieces_gives_the_numbers_of_the_whole_run(tmp_path):
    prefs, run = tmp_path / "prefs", tmp_path / "run"
    prefs.write_text(ONE_GROUP + "q2 u s a 1\nq2 u s b 0\n")
    run.write_text(ONE_RUN + "q2 Q0 b 1 2 r\nq2 Q0 a 2 1 r\n")
    whole = invoke("-R", "prefs", "-q", "-m", ALL_PREFS, str(prefs), str(run))
    pieces = invoke("-R", "prefs", "-q", "-m", ALL_PREFS, "--stream", "--chunk-size", "1", str(prefs), str(run))
    assert whole.exit_code == pieces.exit_code == 0, pieces.stderr
    assert whole.stdout == pieces.stdout


def test_compare_scores_preferences_and_the_cross_check_refuses_them(tmp_path):
    prefs, run_a, run_b = tmp_path / "prefs", tmp_path / "a", tmp_path / "b"
    prefs.write_text(ONE_GROUP)
    run_a.write_text(ONE_RUN)
    run_b.write_text(ONE_RUN.replace(" r\n", " b\n").replace("4.0", "0.5"))  # c last: a>c and b>c fulfilled
    compared = tre.compare(str(prefs), [str(run_a), str(run_b)], "prefs_simp", qrels_format="prefs")
    assert compared.summary == {"r": {"prefs_simp": pytest.approx(3 / 5)}, "b": {"prefs_simp": 1.0}}  # by run tag
    said = ("the cross-check computes the measures with ir-measures too, which reads relevance judgments (qrels) "
            "only: not with prefs judgments")
    with pytest.raises(UsageError, match=f"^{re.escape(said)}$"):
        tre.crosscheck(str(prefs), str(run_a), "prefs_simp", qrels_format="prefs")  # before anything is read
    with pytest.raises(UsageError, match=f"^{re.escape(said)}$"):
        tre.crosscheck(tmp_path / "missing", str(run_a), "prefs_simp", qrels_format="prefs")
    with pytest.raises(UsageError, match="^the cross-check computes the measures with ir-measures too, which reads "
                                         "relevance judgments \\(qrels\\) only: not with the preference judgments of "):
        tre.crosscheck(tre.read_qrels(str(prefs), "prefs"), str(run_a), "prefs_simp")  # a table: known once read
    refused = invoke("--crosscheck", "-R", "prefs", "-m", "prefs_simp", str(prefs), str(run_a))
    assert (refused.exit_code, refused.stdout, refused.stderr) == (
        2, "", "Error: --crosscheck computes the measures with ir-measures too, which reads relevance judgments "
               "(qrels) only: not with prefs judgments\n")


def test_compare_without_measures_compares_trec_eval_s_preference_set(tmp_path):
    # trec_eval's `prefs` set, less runid and num_q and the counts (summed, not averaged over queries)
    prefs, run_a, run_b = tmp_path / "prefs", tmp_path / "a", tmp_path / "b"
    prefs.write_text(ONE_GROUP)
    run_a.write_text(ONE_RUN)
    run_b.write_text(ONE_RUN.replace(" r\n", " b\n"))
    compared = tre.compare(str(prefs), [str(run_a), str(run_b)], qrels_format="prefs")
    assert [str(m) for m in compared.measures] == ["prefs_simp", "prefs_pair", "prefs_avgjg"]


def test_read_qrels_is_annotated_with_every_kind_it_returns(tmp_path):
    # a prefs file read by tre.read_qrels is a Preferences, not a Qrels: its annotation says both, so a type checker
    # makes the caller tell them apart (``.kind``)
    import typing

    path = tmp_path / "prefs.txt"
    path.write_text("q1 g1 s1 a 2\nq1 g1 s1 b 1\n", encoding="utf-8")
    assert isinstance(tre.read_qrels(path, format="prefs"), Preferences)
    assert typing.get_type_hints(tre.read_qrels)["return"] == tre.Qrels | Preferences
