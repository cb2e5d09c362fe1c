"""Points where our numbers must be trec_eval 10's, byte for byte, or a documented sensible 0.

Every expected block below is trec_eval 10's own output on the same files (the binary built from
usnistgov/trec_eval v10.0), pasted with the command that made it.
"""

from __future__ import annotations

import json

import pytest
from conftest import invoke

# 'trec_eval -m rbp.p=0.9 -m rbp_resid.p=0.9 q r': rbp_resid's mean 0.37305 lies at a rounding tie
# of the 4th decimal; p^k by repeated multiplication (trec_eval's loop) gives 0.3731, pow() 0.3730
RBP_QRELS = ("0 0 d0 1\n1 0 d0 2\n1 0 d3 1\n1 0 d4 2\n1 0 d5 0\n1 0 d6 2\n1 0 d7 0\n1 0 d8 1\n1 0 d9 -1\n"
             "1 0 d10 0\n")
RBP_RUN = "0 Q0 d0 0 4 t\n1 Q0 d11 0 4 t\n1 Q0 d8 1 0 t\n1 Q0 d5 2 4 t\n1 Q0 d10 3 4 t\n"

# a qrels query (2) missing from the run
QRELS = "1 0 a 1\n1 0 b 0\n1 0 e -1\n2 0 c 1\n2 0 d 1\n3 0 z 1\n"
RUN = "1 Q0 a 1 2 r\n1 Q0 x 2 1 r\n1 Q0 e 2 0.5 r\n3 Q0 y 1 1 r\n"
LEFTOVER_MEASURES = ["-m", "utility.1,-1,0,0", "-m", "utility", "-m", "relstring.3", "-m", "relstring",
                     "-m", "rbp_resid.p=0.5", "-m", "rbp_resid", "-m", "unj.2"]
# trec_eval -q -c -m utility.1,-1,0,0 -m utility -m relstring.3 -m relstring -m rbp_resid.p=0.5
#           -m rbp_resid -m unj.2 qrels run
TREC_EVAL_C = """\
relstring_3           \t1\t'1-.'
utility_1,-1,0,0      \t1\t-1.0000
rbp_resid_p=0.5       \t1\t0.5000
unj_2                 \t1\t0.5000
relstring_3           \t2\t'-'
utility_1,-1,0,0      \t2\t-1.0000
rbp_resid_p=0.5       \t2\t1.0000
unj_2                 \t2\t0.0000
relstring_3           \t3\t'-'
utility_1,-1,0,0      \t3\t-1.0000
rbp_resid_p=0.5       \t3\t1.0000
unj_2                 \t3\t0.5000
utility_1,-1,0,0      \tall\t-1.0000
rbp_resid_p=0.5       \tall\t0.8333
unj_2                 \tall\t0.3333
"""
# trec_eval -c -J -q -m iprec_at_recall.0 -m 11pt_avg, query 2 missing: its dummy document is dropped
TREC_EVAL_C_J = """\
iprec_at_recall_0.00  \t1\t1.0000
11pt_avg              \t1\t1.0000
iprec_at_recall_0.00  \t2\t  -nan
11pt_avg              \t2\t  -nan
iprec_at_recall_0.00  \tall\t  -nan
11pt_avg              \tall\t  -nan
"""


@pytest.fixture
def files(tmp_path):
    def write(qrels, run):
        q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
        q.write_text(qrels)
        r.write_text(run)
        return str(q), str(r)
    return write


def test_rbp_sums_as_trec_eval_at_a_rounding_tie(files):
    result = invoke("-m", "rbp.p=0.9", "-m", "rbp_resid.p=0.9", *files(RBP_QRELS, RBP_RUN))
    assert result.stdout == "rbp_p=0.9             \tall\t0.0682\nrbp_resid_p=0.9       \tall\t0.3731\n"


def test_trec_format_with_c_reproduces_trec_eval_leftovers(files):
    result = invoke("--format", "trec", "-q", "-c", *LEFTOVER_MEASURES, *files(QRELS, RUN))
    assert result.stdout == TREC_EVAL_C


def test_without_c_a_missing_query_scores_zero(files):
    # our default evaluates every qrels query too, but a missing one is 0 (and '') on every measure
    result = invoke("--format", "trec", "-q", *LEFTOVER_MEASURES, *files(QRELS, RUN))
    expected = TREC_EVAL_C.replace("relstring_3           \t2\t'-'", "relstring_3           \t2\t''")
    expected = expected.replace("utility_1,-1,0,0      \t2\t-1.0000", "utility_1,-1,0,0      \t2\t0.0000")
    expected = expected.replace("rbp_resid_p=0.5       \t2\t1.0000", "rbp_resid_p=0.5       \t2\t0.0000")
    expected = expected.replace("utility_1,-1,0,0      \tall\t-1.0000", "utility_1,-1,0,0      \tall\t-0.6667")
    expected = expected.replace("rbp_resid_p=0.5       \tall\t0.8333", "rbp_resid_p=0.5       \tall\t0.5000")
    assert result.stdout == expected


def test_leftovers_never_leave_the_trec_format(files):
    result = invoke("--format", "json", "-q", "-c", *LEFTOVER_MEASURES, *files(QRELS, RUN))
    assert json.loads(result.stdout)["per_query"]["2"] == {
        "Utility": 0.0, "relstring@3": "", "RBPResid(p=0.5)": 0.0,
        "Unj@2": 0.0}


QRELS_J = "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 1\n"
RUN_J = "1 Q0 a 1 2 r\n1 Q0 x 2 1 r\n"


def test_judged_only_missing_query_scores_zero(files):
    # query 1: x is dropped by -J, a is relevant at rank 1: iprec and 11pt_avg 1.0 (R = 1);
    # query 2, missing from the run, scores 0 as docs/conventions.md says: means (1 + 0) / 2
    q, r = files(QRELS_J, RUN_J)
    result = invoke("-J", "-q", "-m", "IPrec@0.0", "-m", "11pt_avg", "--format", "json", q, r)
    payload = json.loads(result.stdout)
    assert list(payload["summary"].values()) == [0.5, 0.5]
    assert list(payload["per_query"]["2"].values()) == [0.0, 0.0]
    trec = invoke("-J", "-m", "iprec_at_recall.0", "-m", "11pt_avg", q, r)
    assert trec.stdout == "iprec_at_recall_0.00  \tall\t0.5000\n11pt_avg              \tall\t0.5000\n"
    # trec_eval 9 (missing queries add 0, divisor 2) prints 0.5000 too
    nine = invoke("-J", "--trec-eval-9", "-m", "iprec_at_recall.0", "-m", "11pt_avg", q, r)
    assert nine.stdout == trec.stdout


def test_judged_only_with_c_reproduces_trec_eval(files):
    result = invoke("-c", "-J", "-q", "-m", "iprec_at_recall.0", "-m", "11pt_avg", *files(QRELS_J, RUN_J))
    assert result.stdout == TREC_EVAL_C_J


def test_crosscheck_calls_no_nan_an_agreement(files):
    q, r = files(QRELS_J, RUN_J)
    result = invoke("crosscheck", "-J", "-m", "IPrec@0.0", "--format", "json", q, r)
    verdict = json.loads(result.stdout)["verdicts"][0]
    assert verdict["ours"] == 0.5
    assert verdict["status"] in ("agree", "convention")
