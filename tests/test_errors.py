"""Every bad input gives one clear line naming the file, the line and what was expected (verbatim)."""

from __future__ import annotations

import gzip

import pytest
from conftest import invoke

pytestmark = pytest.mark.usefixtures("table_form")  # lists and polars frames alike

GOOD_QRELS = "1 0 d1 1\n1 0 d2 0\n"
GOOD_RUN = "1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 1.5 tag\n"


def _files(tmp_path, qrels=GOOD_QRELS, run=GOOD_RUN):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(qrels)
    r.write_text(run)
    return str(q), str(r)


CASES = [
    ("1 0 d1 1\n1 0 d2\n", GOOD_RUN,
     "{q}:2: expected 4 columns (query_id iteration doc_id relevance), got 3: '1 0 d2'"),
    ("1 0 d1 1\n1 0 d2 1 extra\n", GOOD_RUN,
     "{q}:2: expected 4 columns (query_id iteration doc_id relevance), got 5: '1 0 d2 1 extra'"),
    ("1 0 d1 1\n1 0 d2 2.5\n", GOOD_RUN, "{q}:2: relevance must be an integer, got '2.5': '1 0 d2 2.5'"),
    ("1 0 d1 1\n1 0 d2 0\n1 0 d1 2\n", GOOD_RUN, "{q}:3: document 'd1' judged twice for query '1' (first at line 1)"),
    (GOOD_QRELS, "1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 1.5\n",
     "{r}:2: expected 6 columns (query_id Q0 doc_id rank score run_tag), got 5: '1 Q0 d2 2 1.5'"),
    (GOOD_QRELS, "1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 high tag\n",
     "{r}:2: score must be a number, got 'high': '1 Q0 d2 2 high tag'"),
    (GOOD_QRELS, "1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 nan tag\n",
     "{r}:2: score is NaN, which has no place in a ranking: '1 Q0 d2 2 nan tag'"),
    (GOOD_QRELS, "1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 1.5 tag\n# a comment\n1 Q0 d1 3 1.0 tag\n",
     "{r}:4: document 'd1' listed twice for query '1' (first at line 1)"),
    ("", GOOD_RUN, "{q}: empty file"),
    (GOOD_QRELS, "", "{r}: empty file"),
    ("# only a comment\n", GOOD_RUN,
     "{q}: no judgments found, expected lines of query_id iteration doc_id relevance"),
]


@pytest.mark.parametrize("qrels,run,message", CASES)
def test_bad_file_gives_one_line_with_file_and_line(tmp_path, qrels, run, message):
    q, r = _files(tmp_path, qrels, run)
    result = invoke(q, r)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "Error: " + message.format(q=q, r=r) + "\n"


def test_missing_file(tmp_path):
    q, _ = _files(tmp_path)
    result = invoke(q, str(tmp_path / "nope.txt"))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {tmp_path / 'nope.txt'}: no such file\n"


def test_broken_gzip(tmp_path):
    q, _ = _files(tmp_path)
    good = gzip.compress(GOOD_RUN.encode())
    broken = tmp_path / "run.txt.gz"
    broken.write_bytes(good[: len(good) // 2])
    result = invoke(q, str(broken))
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {broken}: broken gzip file (")
    assert result.stderr.count("\n") == 1


def test_gzip_and_odd_whitespace_are_read(tmp_path):
    q, _ = _files(tmp_path)
    run = tmp_path / "run.txt.gz"
    # tabs, repeated spaces, CRLF, a comment, a blank line and extra columns are all valid input
    run.write_bytes(gzip.compress(b"# run\n1\tQ0\td1\t1\t2.5\ttag\r\n\n1  Q0 d2 2 1.5 tag extra\r\n"))
    result = invoke("--format", "trec", "-m", "P.1", "-m", "num_ret", q, str(run))
    assert result.stdout == "num_ret               \tall\t2\nP_1                   \tall\t1.0000\n"


@pytest.mark.parametrize("run_text", [
    "# a comment line\n1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 1.5 tag\n",  # a comment: polars is told to look for them
    "1 Q0 d#1 1 2.5 tag\n1 Q0 d2 2 1.5 tag\n",  # a '#' inside an id is no comment
    "1 Q0 d1 1 2.5 tag\n1 Q0 d2 2 1.5 tag\n",  # no '#' at all: polars is told not to look
])
def test_comment_lines_are_skipped_and_only_they(tmp_path, run_text):
    q, _ = _files(tmp_path)
    run = tmp_path / "run.txt"
    run.write_text(run_text)
    result = invoke("--format", "trec", "-q", "-m", "num_ret", "-m", "num_rel_ret", q, str(run))
    # GOOD_QRELS judges d1 relevant: d#1 is another document, the comment line no document at all
    rel_ret = "0" if "d#1" in run_text else "1"
    assert result.stdout == (f"num_ret               \t1\t2\nnum_rel_ret           \t1\t{rel_ret}\n"
                             f"num_ret               \tall\t2\nnum_rel_ret           \tall\t{rel_ret}\n")


@pytest.mark.parametrize("measure,message", [
    ("foo", "Error: bad measure 'foo': unknown measure (see: trec-rag-eval measures)\n  foo\n  ^^^\n"),
    ("P.", "Error: bad measure 'P.': a '.' must be followed by parameters\n  P.\n   ^\n"),
    ("P.0", "Error: bad measure 'P.0': cutoffs must be positive integers\n  P.0\n    ^\n"),
    ("P.5,5", "Error: bad measure 'P.5,5': the same cutoff is given twice\n  P.5,5\n    ^^^\n"),
    ("ndcg.1=3,x", "Error: bad measure 'ndcg.1=3,x': malformed pair, expected key=value\n  ndcg.1=3,x\n"
                   "           ^\n"),
    ("utility.1,2", "Error: bad measure 'utility.1,2': utility takes exactly 4 coefficients a,b,c,d\n"
                    "  utility.1,2\n          ^^^\n"),
])
def test_bad_measure_points_at_the_characters(tmp_path, measure, message):
    q, r = _files(tmp_path)
    result = invoke("-m", measure, q, r)
    assert result.exit_code == 2
    assert result.stderr == message


def test_output_file_is_never_overwritten_without_force(tmp_path):
    q, r = _files(tmp_path)
    out = tmp_path / "scores.txt"
    out.write_text("precious\n")
    result = invoke(q, r, "-o", str(out))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {out} already exists; use --force to overwrite it\n"
    assert out.read_text() == "precious\n"
    assert invoke(q, r, "-o", str(out), "--force").exit_code == 0
    assert "P" in out.read_text()


def test_infinite_scores_rank_first_and_last(tmp_path):
    # +inf sorts above every finite score, -inf below: a defined order, so they are accepted
    q, r = _files(tmp_path, "1 0 a 1\n1 0 b 0\n1 0 c 0\n", "1 Q0 a 1 -inf t\n1 Q0 b 2 inf t\n1 Q0 c 3 0 t\n")
    result = invoke("--format", "trec", "-m", "recip_rank", q, r)
    assert result.stdout == "recip_rank            \tall\t0.3333\n"
