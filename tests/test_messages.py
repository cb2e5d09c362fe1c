"""Messages that used to be wrong or raw: each names what the user must look at."""

from __future__ import annotations

import warnings

import pytest

import trec_rag_eval
from trec_rag_eval.cli import main


def _main(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    return exit_info.value.code, capsys.readouterr()


# --- --trec-eval-9 and scores beyond the float range ---------------------------------------------------

def test_trec_eval_9_scores_beyond_float_range_become_infinity_without_numpy_noise(tmp_path, capsys):
    # before: numpy's raw "RuntimeWarning: overflow encountered in cast" on stderr
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 1\n")
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 d1 1 2e39 t\n1 Q0 d2 2 1e39 t\n")
    # trec_eval 10 (doubles): d1 (2e39) ranks first, P@1 = 1. trec_eval 9 casts to float: both scores
    # become +inf and tie, so doc_id descending decides: d2 first, P@1 = 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert trec_rag_eval.evaluate(str(qrels), str(run), ["P@1"]).value("P@1", "1") == 1.0
        assert trec_rag_eval.evaluate(str(qrels), str(run), ["P@1"], trec_eval_9=True).value("P@1", "1") == 0.0
    code, captured = _main([str(qrels), str(run), "--trec-eval-9", "-m", "P.1"], capsys)
    assert code in (0, None)
    assert "RuntimeWarning" not in captured.err and "overflow" not in captured.err, captured.err
    assert captured.out.split() == ["P_1", "all", "0.0000"]


# --- duplicates across Parquet partitions ---------------------------------------------------------------

def test_a_pair_judged_twice_across_qrels_partitions_cites_its_own_two_rows(tmp_path):
    # before: the first two rows of ANY repeated pairs were cited (here q1/a and q2/b), and the row was
    # shown with an 'iteration' column the file does not have
    import polars as pl

    from trec_rag_eval.errors import InputFormatError

    folder = tmp_path / "qrels"
    folder.mkdir()
    pl.DataFrame({"query_id": ["q1", "q3"], "doc_id": ["a", "c"], "relevance": [1, 1]}).write_parquet(
        folder / "part-0.parquet")
    pl.DataFrame({"query_id": ["q2", "q2"], "doc_id": ["b", "b"], "relevance": [1, 0]}).write_parquet(
        folder / "part-1.parquet")
    pl.DataFrame({"query_id": ["q1"], "doc_id": ["a"], "relevance": [2]}).write_parquet(folder / "part-2.parquet")
    with pytest.raises(InputFormatError) as caught:
        trec_rag_eval.read_qrels(folder)
    # in row order, the first row repeating an earlier pair is part-1's row 2 (q2, b), first at its row 1
    assert str(caught.value) == (f"{folder / 'part-1.parquet'}: row 2: document 'b' judged twice for query 'q2' "
                                 "(first at row 1): {'query_id': 'q2', 'doc_id': 'b', 'relevance': 0}")
    (folder / "part-1.parquet").unlink()
    with pytest.raises(InputFormatError) as caught:
        trec_rag_eval.read_qrels(folder)
    assert str(caught.value) == (f"{folder / 'part-2.parquet'}: row 1: document 'a' judged twice for query 'q1' "
                                 f"(first at {folder / 'part-0.parquet'}: row 1): "
                                 "{'query_id': 'q1', 'doc_id': 'a', 'relevance': 2}")


# --- a run taken for BEIR (three fields on its first line) ------------------------------------------

@pytest.mark.parametrize("first", [
    b"q1 Q0 d1",                                        # a run line cut short
    b"\xb4\x7f\x1f\xfd\xcd\xb2IIz\x0b\xc3\x130V\xcb2",  # random bytes before a valid run (a VT splits them)
    b"query-id\tcorpus-id\tscore",                      # BEIR qrels given as the run
])
def test_a_run_whose_first_line_has_three_fields_is_an_error_on_line_1(tmp_path, capsys, first):
    # before: "run.txt: this looks like BEIR qrels (three columns), not a run", with no line number
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_bytes(first + b"\nq1 Q0 d1 1 2 t\n")
    code, captured = _main([str(qrels), str(run)], capsys)
    assert code == 1
    assert captured.err.startswith(f"Error: {run}:1: "), captured.err
    assert "Traceback" not in captured.err


def test_bom_or_blank_lines_before_a_cut_first_line_keep_its_number(tmp_path, capsys):
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\n")
    run = tmp_path / "run.txt"
    run.write_bytes(b"\xef\xbb\xbf\n\nq1 Q0 d1\nq1 Q0 d1 1 2 t\n")
    code, captured = _main([str(qrels), str(run)], capsys)
    assert code == 1 and captured.err.startswith(f"Error: {run}:3: expected 6 columns"), captured.err
