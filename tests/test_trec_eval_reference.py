"""Byte-for-byte agreement with trec_eval v10 on its own test data (../shared/reference/trec_eval).

An extra beside test_trec_eval_golden.py (our own golden files, which run everywhere): this module is
collected only where ../shared/reference sits beside the checkout (see conftest.py). Each case is a row
of the table in that folder's README: the same flags and files must print exactly the expected file.
The first fifteen are trec_eval's own quicktest (its Makefile), the others outputs of trec_eval 10 on the same
data.
"""

from __future__ import annotations

import os

import pytest
import pytrec_eval as oracle
from conftest import REFERENCE, invoke, reference_path
from test_pytrec_eval import agree_with_trec_eval_9

from trec_rag_eval import pytrec_eval

pytestmark = pytest.mark.usefixtures("table_form")  # lists and polars frames alike

MEAS_PARAMS = ["-q", "-miprec_at_recall..10,.20,.25,.75,.50", "-m", "P.5,7,3", "-m", "recall.20,2000",
               "-m", "Rprec_mult.5.0,0.2,0.35", "-mutility.2,-1,0,0", "-m", "11pt_avg..25,.5,.75",
               "-mndcg.1=3,2=9,4=4.5", "-mndcg_cut.10,20,23.4", "-msuccess.2,5,20", "qrels.test", "results.test"]

CASES = [
    ("out.test", ["qrels.test", "results.test"]),
    ("out.test", ["qrels.test.with-comments", "results.test"]),
    ("out.comment.test", ["qrels.comment.test", "results.comment.test"]),
    ("out.test.a", ["-m", "all_trec", "qrels.test", "results.test"]),
    ("out.test.aq", ["-m", "all_trec", "-q", "qrels.test", "results.test"]),
    ("out.test.aqc", ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"]),
    ("out.test.aqcM", ["-m", "all_trec", "-q", "-c", "-M100", "qrels.test", "results.trunc"]),
    ("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"]),
    ("out.test.meas_params", MEAS_PARAMS),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.test", "prefs.results.test"]),
    ("out.test.prefs", ["-m", "all_prefs", "-q", "-R", "prefs", "prefs.comment.test", "prefs.results.test"]),
    ("out.test.qrels_prefs", ["-m", "all_prefs", "-q", "-R", "qrels_prefs", "qrels.test", "results.test"]),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.123", "results.test"]),
    ("out.test.qrels_jg", ["-m", "qrels_jg", "-q", "-R", "qrels_jg", "qrels.comments.123", "results.test"]),
    ("out.test.aqZ", ["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"]),
    ("out.302.aq.current", ["-q", "-m", "all_trec", "qrels-302.test", "results-302.test"]),
    ("out.comment.test.aq.current", ["-q", "-m", "all_trec", "qrels.comment.test", "results.comment.test"]),
    ("out.rel_level.aq.current", ["-q", "-m", "all_trec", "qrels.rel_level", "results.test"]),
    ("out.rel_level.aqJ.current", ["-q", "-J", "-m", "all_trec", "qrels.rel_level", "results.test"]),
]


@pytest.mark.parametrize("expected,args", CASES, ids=[f"{e}:{a[-2]}" for e, a in CASES])
def test_prints_trec_eval_expected_file(expected, args):
    expected_path = reference_path(expected)
    resolved = [os.path.join(REFERENCE, a) if os.path.exists(os.path.join(REFERENCE, a)) else a for a in args]
    result = invoke("--format", "trec", *resolved)
    assert result.exit_code == 0, result.stderr
    with open(expected_path, encoding="utf-8") as handle:
        assert result.stdout == handle.read()


def test_the_quicktest_is_every_check_of_trec_eval_s_makefile():
    # trec_eval's `make quicktest` (its Makefile at f425365) compares fifteen outputs with these files: every
    # one is among the cases above, as many times
    makefile = ["out.test", "out.test", "out.comment.test", "out.test.a", "out.test.aq", "out.test.aqc",
                "out.test.aqcM", "out.test.aql", "out.test.prefs", "out.test.prefs", "out.test.qrels_prefs",
                "out.test.qrels_jg", "out.test.qrels_jg", "out.test.meas_params", "out.test.aqZ"]
    assert sorted(expected for expected, _ in CASES[:15]) == sorted(makefile)


def test_options_may_follow_the_files():
    qrels, run = reference_path("qrels.test"), reference_path("results.test")
    before = invoke("--format", "trec", "-m", "P.5", "-q", qrels, run)
    after = invoke(qrels, run, "-q", "-mP.5", "--format", "trec")
    assert before.stdout == after.stdout
    assert "P_5                   \t301\t0.0000\n" in after.stdout


def test_missing_query_is_scored_zero_and_named_on_stderr():
    # results.trunc lacks topic 302: by default it counts, scores 0, and a warning names it
    result = invoke("--format", "trec", "-m", "P.10", "-q", reference_path("qrels.test"),
                    reference_path("results.trunc"))
    assert "P_10                  \t302\t0.0000\n" in result.stdout
    assert "302" in result.stderr and "missing from the run" in result.stderr


def test_intersection_drops_missing_queries():
    result = invoke("--format", "trec", "-m", "num_q", "--intersection", reference_path("qrels.test"),
                    reference_path("results.trunc"))
    assert result.stdout == "num_q                 \tall\t2\n"


# --- trec_rag_eval.pytrec_eval on the files of pytrec_eval's own integration test (trec_eval 9.0.8's outputs) ---

@pytest.mark.parametrize("qrels_name, expected, options", [
    ("qrels.test", "v9.0.8_expected/out.test", {}),
    ("qrels.rel_level", "v9.0.8_expected/out.test.aql", {"relevance_level": 2}),
])
def test_the_pytrec_eval_module_on_trec_eval_9_s_test_files(qrels_name, expected, options):
    with open(reference_path(qrels_name), encoding="utf-8") as lines:
        qrels = pytrec_eval.parse_qrel(lines)
    with open(reference_path("results.test"), encoding="utf-8") as lines:
        run = pytrec_eval.parse_run(lines)
    with open(reference_path(qrels_name), encoding="utf-8") as qrel_lines, \
            open(reference_path("results.test"), encoding="utf-8") as run_lines:
        assert (qrels, run) == (oracle.parse_qrel(qrel_lines), oracle.parse_run(run_lines))
    agree_with_trec_eval_9(qrels, run, reference_path(expected), **options)
