"""trec_eval's -Z: each query's value as a z-score against that query's mean and standard deviation."""

from __future__ import annotations

import math

import pytest
from conftest import invoke

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.evaluation.zscores import zscored
from trec_rag_eval.io.trec.qrels_runs import parse_qrels_text, parse_run_text
from trec_rag_eval.io.trec.zscores import ZScores, read_zscores

# q1: a relevant at rank 1, b not: P@2 = 1/2, map 1, num_rel 1. q2: c relevant at rank 2: P@2 = 1/2, map 1/2.
QRELS = "q1 0 a 1\nq1 0 b 0\nq2 0 c 1\n"
RUN = "q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\nq2 Q0 d 1 2 r\nq2 Q0 c 2 1 r\n"


def _evaluation(measures):
    return evaluate_tables(parse_qrels_text(QRELS), parse_run_text(RUN), measures)


def test_values_by_hand():
    stats = ZScores({("q1", "P_2"): (0.3, 0.1), ("q2", "P_2"): (0.5, 0.0), ("q1", "map"): (0.5, 0.25),
                     ("q1", "num_rel"): (2.0, 0.5), ("q2", "num_rel"): (3.0, 0.0)})
    z = zscored(_evaluation(["P.2", "map", "num_rel", "num_q"]), stats)
    # P_2: q1 (0.5 - 0.3) / 0.1 = 2; q2 standard deviation 0 and the value is the mean: 0; mean (2 + 0) / 2
    assert list(z.values["P@2"]) == [pytest.approx(2.0), 0.0] and z.summary["P@2"] == pytest.approx(1.0)
    # map: q1 (1 - 0.5) / 0.25 = 2; q2 not in the file: -1000000; mean of the two
    assert list(z.values["map"]) == [2.0, -1000000.0] and z.summary["map"] == (2.0 - 1000000.0) / 2
    # num_rel, a count: (1 - 2) / 0.5 = -2; q2 standard deviation 0, value 1 not the mean 3: -1000000; summed
    assert list(z.values["num_rel"]) == [-2.0, -1000000.0] and z.summary["num_rel"] == -1000002.0
    # num_q stays the number of queries
    assert z.summary["num_q"] == 2 and z.zscored


def test_the_geometric_means_take_the_logarithm_trec_eval_keeps():
    # gm_map per query is log(max(AP, 1e-5)): q1 log 1 = 0, q2 log 0.5; with mean 0 and deviation 1 the z-scores
    # are those logs, and the summary exp of their mean: exp((0 + log 0.5) / 2) = sqrt(0.5)
    stats = ZScores({("q1", "gm_map"): (0.0, 1.0), ("q2", "gm_map"): (0.0, 1.0)})
    z = zscored(_evaluation(["gm_map"]), stats)
    assert z.summary["gm_map"] == pytest.approx(math.sqrt(0.5))


def test_the_command_prints_z_before_every_number(tmp_path):
    qrels, run, stats = tmp_path / "qrels", tmp_path / "run", tmp_path / "z"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    # trec_eval 10 printed exactly these lines for this file (without its comment and blank line); it crashes
    # when a measure's name sorts after every name its file gives the last query (its binary search reads past
    # them), where we write -1000000, as its documentation says of a missing mean
    stats.write_text("q1 num_ret 1 0.5\nq2 num_ret 2 1\n# a comment\n\nq1 relstring_2 0 1\nq2 relstring_2 0 1\n"
                     "q1 runid 0 1\nq2 runid 0 1\n")
    result = invoke("-q", "-Z", str(stats), "-m", "num_ret", "-m", "relstring.2", "-m", "runid", str(qrels), str(run))
    assert result.exit_code == 0, result.stderr
    # num_ret, a count, is written as the other numbers: q1 (2 - 1) / 0.5, q2 (2 - 2) / 1, summed
    assert result.stdout == ("Znum_ret               \tq1\t2.0000\nrelstring_2           \tq1\t'10'\n"
                             "Znum_ret               \tq2\t0.0000\nrelstring_2           \tq2\t'-1'\n"
                             "runid                 \tall\tr\nZnum_ret               \tall\t2.0000\n")


@pytest.mark.parametrize(("text", "error"), [
    ("q1 map 0.5\n", "{z}:1: expected 4 columns (query_id measure mean stddev), got 3: 'q1 map 0.5'"),
    ("q1 map x 0.1\n", "{z}:1: mean must be a number, got 'x': 'q1 map x 0.1'"),
    ("q1 map 0.5 nan\n", "{z}:1: standard deviation is NaN: 'q1 map 0.5 nan'"),
    ("q1 map 0.5 0.1\nq1 P_5 0 1\nq1 map 0.4 0.1\n",
     "{z}:3: measure 'map' of query 'q1' given twice (first at line 1): 'q1 map 0.4 0.1'"),
    ("# nothing\n", "{z}: no means found, expected lines of query_id measure mean stddev"),
])
def test_a_bad_line_is_named(tmp_path, text, error):
    path = tmp_path / "z"
    path.write_text(text)
    with pytest.raises(InputFormatError) as caught:
        read_zscores(path)
    assert str(caught.value) == error.format(z=path)


def test_only_trec_eval_s_lines_show_z_scores(tmp_path):
    qrels, run, stats = tmp_path / "qrels", tmp_path / "run", tmp_path / "z"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    stats.write_text("q1 map 0.5 0.1\n")
    result = invoke("-Z", str(stats), "--format", "json", str(qrels), str(run))
    assert (result.exit_code, result.stderr) == (2, "Error: -Z prints trec_eval's z-score lines: --format trec only\n")


def test_python_callers_ask_for_z_scores_as_the_command_does(tmp_path):
    import trec_rag_eval as tre

    qrels, run, stats = tmp_path / "qrels", tmp_path / "run", tmp_path / "z"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    stats.write_text("q1 map 0.5 0.25\nq2 map 0.5 0.25\n")
    # map: q1 (1 - 0.5) / 0.25 = 2, q2 (0.5 - 0.5) / 0.25 = 0: their mean
    evaluation = tre.evaluate(str(qrels), str(run), "map", zscores=str(stats))
    assert evaluation.zscored and evaluation.summary["map"] == 1.0
    printed = invoke("-m", "map", "-Z", str(stats), str(qrels), str(run)).stdout
    assert printed == "Zmap                   \tall\t1.0000\n"
