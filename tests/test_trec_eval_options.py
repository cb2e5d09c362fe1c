"""Every option of trec_eval (trec_eval.c: ``hvqm:cl:nD:JN:M:R:T:oZ:`` and their long names) either works as
in trec_eval or is refused in one ``Error:`` line, never with click's usage screen."""

from __future__ import annotations

import pytest
from conftest import golden_path, invoke

QRELS, RUN = golden_path("qrels.binary"), golden_path("run.ties")


def _trec(*args: str):
    return invoke("--format", "trec", *args, QRELS, RUN)


@pytest.mark.parametrize(("long", "short"), [
    (["--query_eval_wanted"], ["-q"]), (["--complete_rel_info_wanted"], ["-c"]), (["--level_for_rel", "2"], ["-l2"]),
    (["--level_for_rel=2"], ["-l", "2"]), (["--nosummary", "-q"], ["-n", "-q"]), (["--Judged_docs_only"], ["-J"]),
    (["--Number_docs_in_coll", "5000", "-m", "utility.1,-1,0,1"], ["-N5000", "-m", "utility.1,-1,0,1"]),
    (["--Max_retrieved_per_topic=10"], ["-M", "10"]), (["--measure", "P.5"], ["-m", "P.5"]),
    (["--Rel_info_format", "qrels"], ["-R", "qrels"]), (["--Results_format=trec_results"], ["-T", "trec_results"]),
])
def test_trec_eval_s_long_options_are_its_short_ones(long, short):
    measures = [] if any(a.startswith(("-m", "--measure")) for a in long) else ["-m", "P.5", "-m", "map"]
    spelled, plain = _trec(*long, *measures), _trec(*short, *measures)
    assert spelled.exit_code == plain.exit_code == 0, spelled.stderr
    assert spelled.stdout == plain.stdout


@pytest.mark.parametrize("flag", [["-v"], ["--version"], ["-q", "-v"]])
def test_v_says_the_version_wherever_it_stands(flag):
    result = invoke(*flag, QRELS, RUN)
    assert result.exit_code == 0 and result.stdout.startswith("trec-rag-eval, version ")


def test_r_and_t_name_trec_eval_s_formats():
    assert _trec("-R", "qrels", "-T", "trec_results", "-m", "map").stdout == _trec("-m", "map").stdout


@pytest.mark.parametrize(("args", "error"), [
    (["-R", "trec"], "Error: -R 'trec': trec_eval reads judgments as qrels, qrels_jg, prefs, qrels_prefs "
                     "(--qrels-format also reads JSON, BEIR and Parquet judgments)\n"),
    (["-R", "prefs", "--qrels-format", "trec"], "Error: -R prefs and --qrels-format trec contradict each other: give "
                                               "one\n"),
    (["-T", "json"], "Error: -T 'json': trec_eval reads runs as trec_results only (--run-format also reads JSON "
                     "results and Parquet)\n"),
    (["-T", "trec_results", "--run-format", "json"], "Error: -T trec_results and --run-format json contradict each "
                                                     "other: give one\n"),
    (["-D", "1"], "Error: -D '1': trec_eval's debugging output is not reproduced; drop -D (to evaluate one query, "
                  "as -D N.QUERY does, keep only that query's judgments)\n"),
    (["--Debug_level=0.301"], "Error: -D '0.301': trec_eval's debugging output is not reproduced; drop -D (to "
                              "evaluate one query, as -D N.QUERY does, keep only that query's judgments)\n"),
    (["--Output_old_results_format", "x"], "Error: --Output_old_results_format is obsolete in trec_eval and changes "
                                          "nothing: drop it\n"),
    (["-o", "-q"], "Error: -o names the output file, and took the option '-q': trec_eval's -o (obsolete, taking no "
                   "value) has no place here: drop it\n"),
    (["-l", "two"], "Error: Invalid value for '-l' / '--level' / '--relevance-level': 'two' is not a whole number "
                    "(ASCII digits, optional sign)\n"),
])
def test_refused_in_one_line(args, error):
    result = invoke(*args, QRELS, RUN)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", error)


def test_trec_eval_s_o_taking_the_qrels_is_said():
    # trec_eval's -o takes no value; ours names the output file, and here took the qrels
    result = invoke("-o", QRELS, RUN)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr == (f"Error: -o names the output file here, and took {QRELS!r}, which leaves no RUN: "
                             "trec_eval's -o (obsolete, taking no value) has no place here: drop it\n")


def test_h_helps():
    result = invoke("-h")
    assert result.exit_code == 0 and "-R FORMAT" in invoke("evaluate", "-h").stdout
    assert "-Z FILE" in invoke("evaluate", "--help").stdout and "-T FORMAT" in invoke("evaluate", "--help").stdout


def test_no_usage_screen_for_a_mistake_on_the_evaluate_command():
    for args in (["--no-such-option"], [QRELS], ["-m"]):
        result = invoke(*args) if args != [QRELS] else invoke(QRELS)
        assert result.exit_code == 2 and result.stderr.startswith("Error: ") and "Usage:" not in result.stderr, args
