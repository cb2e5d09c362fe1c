"""Several runs in trec_eval's format: each run's lines say which run they belong to,
and one run alone stays trec_eval's output byte for byte."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import invoke

REPO = Path(__file__).resolve().parent.parent
QRELS = str(REPO / "fixtures" / "qrels.txt")
BM25 = str(REPO / "fixtures" / "run_bm25.txt")
HYBRID = str(REPO / "fixtures" / "run_hybrid.txt")


def _line(name: str, query: str, value: str) -> str:
    return f"{name:<22}\t{query}\t{value}\n"  # trec_eval's "%-22s\t%s\t%s\n"


def test_one_run_is_trec_evals_output_unchanged():
    # trec_eval 10 -m map qrels.txt run_bm25.txt prints this one line, and no runid
    result = invoke("-m", "AP", QRELS, BM25)
    assert result.stdout == _line("map", "all", "0.3389")


def test_a_folder_of_runs_opens_each_block_with_its_runid(tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(BM25, folder / "bm25.txt")
    shutil.copy(HYBRID, folder / "hybrid.txt")
    result = invoke("-m", "AP", QRELS, str(folder))
    assert result.exit_code == 0, result.output
    # trec_eval 10 -m map: run_bm25.txt (tag bm25) 0.3389, run_hybrid.txt (tag hybrid) 0.6254
    assert result.stdout == (_line("runid", "all", "bm25") + _line("map", "all", "0.3389")
                             + _line("runid", "all", "hybrid") + _line("map", "all", "0.6254"))


def test_per_query_lines_follow_their_runs_runid():
    result = invoke("-q", "-m", "P.5", QRELS, BM25, HYBRID)
    blocks = result.stdout.split(_line("runid", "all", "hybrid"))
    assert len(blocks) == 2 and blocks[0].startswith(_line("runid", "all", "bm25"))
    # trec_eval 10 -q -m P.5 qrels.txt run_hybrid.txt: q1 0.6000, q2 0.4000, q3 0.6000
    assert blocks[1].startswith(_line("P_5", "q1", "0.6000") + _line("P_5", "q2", "0.4000"))
    assert blocks[1].endswith(_line("P_5", "all", invoke("-m", "P.5", QRELS, HYBRID).stdout.split("\t")[2].strip()))


def test_a_runid_asked_for_is_printed_once_per_run():
    result = invoke("-m", "official", QRELS, BM25, HYBRID)
    assert result.stdout.count("runid") == 2
    assert result.stdout.startswith(_line("runid", "all", "bm25") + _line("num_q", "all", "8"))


def test_a_run_whose_tag_an_earlier_block_gave_is_named_by_its_path(tmp_path):
    # each block is written as its run is done: a later run's tag is not known yet when the
    # first block is written, so the first keeps its tag and the later runs sharing it are named by path
    copy, again = tmp_path / "bm25_again.txt", tmp_path / "bm25_third.txt"
    shutil.copy(BM25, copy)  # the same tag, bm25, in all three files
    shutil.copy(BM25, again)
    result = invoke("-m", "AP", QRELS, BM25, str(copy), HYBRID, str(again))
    assert result.stdout == (_line("runid", "all", "bm25") + _line("map", "all", "0.3389")
                             + _line("runid", "all", str(copy)) + _line("map", "all", "0.3389")
                             + _line("runid", "all", "hybrid") + _line("map", "all", "0.6254")
                             + _line("runid", "all", str(again)) + _line("map", "all", "0.3389"))


def test_no_summary_still_names_the_runs():
    result = invoke("-q", "-n", "-m", "P.5", QRELS, BM25, HYBRID)
    assert result.stdout.count("\tall\t") == 2 and result.stdout.startswith(_line("runid", "all", "bm25"))


def test_several_runs_asked_label_every_run_printed_even_when_one_fails(tmp_path):
    # the second run does not exist: the first is printed with its runid (trec_eval 10 -m map: 0.3389), then
    # the error; nothing would say whose numbers they are without it
    missing = str(tmp_path / "nope.txt")
    result = invoke("-m", "map", QRELS, BM25, missing)
    assert result.exit_code == 1
    assert result.stdout == _line("runid", "all", "bm25") + _line("map", "all", "0.3389")
    assert result.stderr == f"Error: {missing}: no such file\n"
    # the failing run first: the same label
    result = invoke("-m", "map", QRELS, missing, BM25)
    assert result.exit_code == 1 and result.stdout == _line("runid", "all", "bm25") + _line("map", "all", "0.3389")


def test_every_format_labels_the_one_run_left_of_several(tmp_path):
    missing = str(tmp_path / "nope.txt")
    table = invoke("-m", "AP", "-f", "table", QRELS, BM25, missing)
    assert table.stdout.startswith(f"run: {BM25}\n"), table.stdout
    json_out = invoke("-m", "AP", "-f", "json", QRELS, BM25, missing)
    import json

    assert isinstance(json.loads(json_out.stdout), list)  # a list of runs, as several runs asked give
    csv_out = invoke("-m", "AP", "-f", "csv", QRELS, BM25, missing)
    assert csv_out.stdout.splitlines()[0] == invoke("-m", "AP", "-f", "csv", QRELS, BM25, HYBRID).stdout.splitlines()[0]
