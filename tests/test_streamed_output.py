"""The evaluate command writes each run's output as it is done, in run order: each run's text is
made where the run was evaluated (its thread, or its Dask worker), laid out by ``render.output.Document``,
and written through standard output or ``io.atomic.OutputFile``. The reference for the bytes is the
rendering of the whole list of evaluations at once (``json.dumps`` of the list of documents, the csv header and
every run's rows, trec_eval's lines, ``summary_table``): two paths, one output. Numbers are trec_eval 10's."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import invoke

import trec_rag_eval as tre
from trec_rag_eval import api
from trec_rag_eval.errors import OutputExistsError
from trec_rag_eval.io.atomic import OutputFile
from trec_rag_eval.render.data_formats import csv_rows, jsonl_rows, to_dict
from trec_rag_eval.render.output import Document, RunRenderer, RunText
from trec_rag_eval.render.table import per_query_table, summary_table
from trec_rag_eval.render.trec import per_query_lines, summary_text
from trec_rag_eval.run_outcome import RunOutcome

REPO = Path(__file__).resolve().parent.parent
QRELS = str(REPO / "fixtures" / "qrels.txt")
BM25 = str(REPO / "fixtures" / "run_bm25.txt")
HYBRID = str(REPO / "fixtures" / "run_hybrid.txt")


def _line(name: str, query: str, value: str) -> str:
    return f"{name:<22}\t{query}\t{value}\n"  # trec_eval's "%-22s\t%s\t%s\n"


@pytest.fixture(scope="module")
def evaluations():
    return [tre.evaluate(QRELS, path, ["P@5", "AP", "nDCG@10"]) for path in (BM25, HYBRID, BM25)]


def trec_text(evaluation, per_query: bool = False, runid: bool = True) -> str:
    """trec_eval's lines of one run: each query's (``-q``), then the ``all`` lines (with a runid asked, or not)."""
    return "".join(per_query_lines(evaluation) if per_query else []) + summary_text(evaluation, runid)


def to_json(evaluations, per_query: bool) -> str:
    documents = [to_dict(e, per_query) for e in evaluations]
    return json.dumps(documents[0] if len(documents) == 1 else documents, indent=2, ensure_ascii=False) + "\n"


def to_csv(evaluations, per_query: bool) -> str:
    return "run,query_id,measure,value\n" + "".join(csv_rows(e, per_query) for e in evaluations)


def to_jsonl(evaluations, per_query: bool) -> str:
    return "".join(jsonl_rows(e, per_query) for e in evaluations)


def _document(fmt: str, evaluations, labels, per_query: bool = False) -> tuple[str, list[int]]:
    """The Document's output, and how much of it was written after each add (then after close)."""
    written: list[str] = []
    document = Document(fmt, written.append)
    sizes = []
    render = RunRenderer(fmt, per_query)
    for label, evaluation in zip(labels, evaluations, strict=True):
        document.add(label, render(evaluation))
        sizes.append(len("".join(written)))
    document.close()
    sizes.append(len("".join(written)))
    return "".join(written), sizes


@pytest.mark.parametrize("column_wise", [False, True])
@pytest.mark.parametrize("per_query", [False, True])
@pytest.mark.parametrize("count", [1, 2, 3])
def test_run_by_run_is_the_whole_lists_output(evaluations, per_query, count, column_wise, monkeypatch):
    if column_wise:  # the per-query text built a column at a time, as for a large evaluation
        monkeypatch.setattr("trec_rag_eval.render.output_formats.COLUMN_WISE_FROM", 0)
    chosen, labels = evaluations[:count], ["a.txt", "b.txt", "c.txt"][:count]
    assert _document("json", chosen, labels, per_query)[0] == to_json(chosen, per_query)
    assert _document("csv", chosen, labels, per_query)[0] == to_csv(chosen, per_query)
    assert _document("jsonl", chosen, labels, per_query)[0] == to_jsonl(chosen, per_query)
    tables = [per_query_table(e) if per_query else summary_table(e, f"run: {label}" if count > 1 else None)
              for label, e in zip(labels, chosen, strict=True)]
    assert _document("table", chosen, labels, per_query)[0] == "\n".join(tables)
    if count == 1:
        assert _document("trec", chosen, labels, per_query)[0] == trec_text(chosen[0], per_query)
    else:  # each block: its runid line, then trec_eval's lines without a runid measure (none asked here)
        names = ["bm25", "hybrid", labels[2] if count == 3 else None][:count]
        assert _document("trec", chosen, labels, per_query)[0] == "".join(
            _line("runid", "all", name) + trec_text(e, per_query) for name, e in zip(names, chosen, strict=True))


def test_each_run_is_written_when_the_next_arrives_the_last_at_the_close(evaluations):
    text, sizes = _document("trec", evaluations, ["a.txt", "b.txt", "c.txt"])
    # nothing after the first (one run alone prints no runid line: known only when a second comes)
    assert sizes[0] == 0
    first = _line("runid", "all", "bm25") + trec_text(evaluations[0], runid=False)
    second = _line("runid", "all", "hybrid") + trec_text(evaluations[1], runid=False)
    assert sizes[1] == len(first + second) and text.startswith(first + second)
    # the third shares the first's tag (bm25): named by its path; the bm25 run's AP is trec_eval's 0.3389
    assert text[sizes[1]:] == _line("runid", "all", "c.txt") + trec_text(evaluations[2], runid=False)
    assert _line("map", "all", "0.3389") in text[sizes[1]:]
    assert sizes[2] == sizes[3] == len(text)


def test_a_runid_asked_for_stays_in_its_place_for_one_run_and_is_not_repeated_among_several():
    # trec_eval 10 -q -m runid -m P.5 qrels.txt run_bm25.txt prints exactly this
    p5 = ["0.2000", "0.4000", "0.4000", "0.4000", "0.0000", "0.2000", "0.4000", "0.0000"]
    expected = "".join(_line("P_5", f"q{i + 1}", v) for i, v in enumerate(p5)) + _line("runid", "all", "bm25") + \
        _line("P_5", "all", "0.2500")
    assert invoke("-q", "-m", "runid", "-m", "P.5", QRELS, BM25).stdout == expected
    # among several, the block opens with it, once
    several = invoke("-q", "-m", "runid", "-m", "P.5", QRELS, BM25, HYBRID).stdout
    assert several.startswith(_line("runid", "all", "bm25") + _line("P_5", "q1", "0.2000"))
    assert several.count("runid") == 2 and _line("runid", "all", "hybrid") in several


def test_json_of_several_runs_is_one_document_with_trec_evals_numbers():
    result = invoke("--format", "json", "-q", "-m", "AP", QRELS, BM25, HYBRID)
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout)
    # trec_eval 10 -m map: run_bm25.txt 0.3389, run_hybrid.txt 0.6254
    assert [(r["run"], round(r["summary"]["AP"], 4)) for r in runs] == [("bm25", 0.3389), ("hybrid", 0.6254)]


def test_a_bad_run_among_good_ones_the_others_written_then_its_error(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 nan tag\n")
    out = tmp_path / "out.json"
    result = invoke("--format", "json", "-m", "AP", "-o", str(out), QRELS, BM25, str(bad), HYBRID)
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("Error:")] == [
        line for line in result.stderr.splitlines() if "bad.txt" in line and line.startswith("Error:")]
    assert [r["run"] for r in json.loads(out.read_text())] == ["bm25", "hybrid"]
    # the same with one good run left: several runs were asked, so the document is their list, of one
    alone = tmp_path / "alone.json"
    result = invoke("--format", "json", "-m", "AP", "-o", str(alone), QRELS, str(bad), HYBRID)
    assert result.exit_code == 1 and [r["run"] for r in json.loads(alone.read_text())] == ["hybrid"]
    assert sorted(os.listdir(tmp_path)) == ["alone.json", "bad.txt", "out.json"]  # no temporary file left


def test_the_output_file_appears_complete_or_not_at_all(tmp_path):
    target = tmp_path / "out.txt"
    with OutputFile(target) as out:
        out.write("first\n")
        assert not target.exists()  # the pieces go to a temporary file beside it
        out.write("second\n")
        out.commit()
    assert target.read_text() == "first\nsecond\n"
    with pytest.raises(KeyboardInterrupt), OutputFile(tmp_path / "stopped.txt") as out:
        out.write("half\n")
        raise KeyboardInterrupt
    assert sorted(os.listdir(tmp_path)) == ["out.txt"]  # nothing half-written, no temporary file
    with pytest.raises(OutputExistsError):
        OutputFile(target)  # never over a user's file without force
    with OutputFile(target, force=True) as out:
        out.write("again\n")
        out.commit()
    assert target.read_text() == "again\n" and sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_a_cluster_lost_mid_run_leaves_no_output_file(tmp_path, monkeypatch):
    from trec_rag_eval.cluster import ClusterError

    def outcomes(*args, **kwargs):  # the first run given, then the scheduler is lost
        render = kwargs["render"]
        yield RunOutcome(BM25, rendered=render(tre.evaluate(QRELS, BM25, ["AP"])))
        raise ClusterError("lost the Dask scheduler at tcp://127.0.0.1:1 mid-run (CommClosedError); is it still "
                           "running?")

    monkeypatch.setattr(api, "evaluate_many", outcomes)
    out = tmp_path / "out.txt"
    result = invoke("-m", "AP", "-o", str(out), QRELS, BM25, HYBRID)
    assert result.exit_code == 1 and result.stderr.startswith("Error: lost the Dask scheduler")
    assert os.listdir(tmp_path) == []


def test_standard_output_gets_each_run_before_the_next_is_evaluated(monkeypatch):
    import trec_rag_eval.io.atomic as atomic

    printed: list[str] = []
    write_stream = atomic.write_stream
    monkeypatch.setattr(atomic, "write_stream", lambda text, stream: (printed.append(text), write_stream(text, stream)))
    printed_before: list[str] = []

    def outcomes(*args, **kwargs):
        for path in (BM25, HYBRID, BM25):
            printed_before.append("".join(printed))
            yield RunOutcome(path, rendered=kwargs["render"](tre.evaluate(QRELS, path, ["AP"])))

    monkeypatch.setattr(api, "evaluate_many", outcomes)
    result = invoke("-m", "AP", QRELS, BM25, HYBRID, BM25)
    assert result.exit_code == 0
    assert printed_before[:2] == ["", ""]  # the first is held until the second says there are several
    # before the third run is evaluated, the first two are printed (trec_eval 10 -m map: 0.3389, 0.6254)
    assert printed_before[2] == (_line("runid", "all", "bm25") + _line("map", "all", "0.3389")
                                 + _line("runid", "all", "hybrid") + _line("map", "all", "0.6254"))
    assert result.stdout == printed_before[2] + _line("runid", "all", BM25) + _line("map", "all", "0.3389")


def test_evaluate_many_renders_on_the_thread_and_releases_the_evaluation(tmp_path):
    seen = []

    def render(evaluation):
        seen.append(evaluation.run_tag)
        return RunRenderer("trec")(evaluation)

    outcomes = list(tre.evaluate_many(QRELS, [BM25, HYBRID], ["AP"], render=render, jobs=2))
    assert [o.evaluation for o in outcomes] == [None, None] and sorted(seen) == ["bm25", "hybrid"]
    assert [o.rendered.summary_alone for o in outcomes] == [_line("map", "all", "0.3389"),
                                                            _line("map", "all", "0.6254")]
    # without render, the evaluations, as before
    plain = list(tre.evaluate_many(QRELS, [BM25, HYBRID], ["AP"]))
    assert [o.rendered for o in plain] == [None, None] and plain[1].evaluation.run_tag == "hybrid"


def test_threads_evaluate_a_bounded_number_of_runs_ahead_of_the_reader(tmp_path):
    from trec_rag_eval.service.pipeline import AHEAD_PER_THREAD

    folder = tmp_path / "runs"
    folder.mkdir()
    for i in range(12):
        shutil.copy(BM25, folder / f"run{i:02}.txt")
    done = []

    def render(evaluation):
        done.append(evaluation.run_tag)
        return RunText("trec", evaluation.run_tag, ())

    outcomes = tre.evaluate_many(QRELS, [str(folder)], ["AP"], render=render, jobs=2)
    next(outcomes)
    # the first given, at most two threads x AHEAD_PER_THREAD in flight, one more submitted: not the 12
    assert len(done) <= AHEAD_PER_THREAD * 2 + 1
    outcomes.close()


@pytest.mark.slow  # a cluster of its own (one worker: both runs rendered in the same process)
def test_on_a_cluster_the_text_is_made_on_the_worker():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=":0", silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        outcomes = list(tre.evaluate_many(QRELS, [BM25, HYBRID], ["AP"], cluster=client,
                                          render=lambda e: (os.getpid(), RunRenderer("trec")(e))))
    assert [o.evaluation for o in outcomes] == [None, None]
    pids = {pid for pid, _ in (o.rendered for o in outcomes)}
    assert len(pids) == 1 and os.getpid() not in pids  # rendered in the worker's process, not here
    assert [text.summary_alone for _, text in (o.rendered for o in outcomes)] == [
        _line("map", "all", "0.3389"), _line("map", "all", "0.6254")]


@pytest.mark.slow  # a command line starting its own cluster
def test_the_command_on_a_cluster_prints_the_threads_bytes(tmp_path):
    pytest.importorskip("distributed")
    args = ["-q", "-m", "all_trec", QRELS, BM25, HYBRID]
    here = invoke(*args)
    spread = invoke("--cluster", "local:1", *args)
    assert spread.exit_code == here.exit_code == 0
    assert spread.stdout == here.stdout and here.stdout.count("runid") == 2


@pytest.mark.parametrize("runs", [1, 2])
def test_the_per_query_lines_are_written_a_block_at_a_time(monkeypatch, evaluations, runs):
    # -q's 25 MB for 7,000 queries is written a block of whole queries at a time, never joined into one
    # string: each write is one block (or a line that holds the blocks together), in order
    from trec_rag_eval.render import trec

    monkeypatch.setattr("trec_rag_eval.render.output_formats.COLUMN_WISE_FROM", 0)
    monkeypatch.setattr(trec, "BLOCK_LINES", 6)  # 3 measures: 2 queries a block
    writes: list[str] = []
    document = Document("trec", writes.append)
    for evaluation in evaluations[:runs]:
        document.add(evaluation.run_tag, RunRenderer("trec", per_query=True)(evaluation))
    document.close()
    if runs == 1:
        assert "".join(writes) == trec_text(evaluations[0], per_query=True)
    blocks = [w for w in writes if w.count("\n") > 1 and "\tall\t" not in w]
    queries = len(evaluations[0].query_ids)
    assert len(blocks) == runs * -(-queries // 2)  # one write per block of two queries
    assert all(len({line.split("\t")[1] for line in b.splitlines()}) <= 2 for b in blocks)
