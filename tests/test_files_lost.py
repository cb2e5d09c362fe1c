"""No command can lose a user's file: every output, sidecar and progress file is checked against every
input (files inside input folders and the files an input brings along included) before any work or any
LLM call, whatever the spelling: another path, a symbolic link, a hard link, a folder reached through a
link. ``--force`` replaces an earlier output, never what the command reads.

Each case writes the input's bytes first and checks them afterwards: the oracle is "unchanged".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import invoke
from test_generate import CORPUS
from test_generate import ScriptedServer as Generator
from test_judge import DATASET as JUDGE_DATASET
from test_judge import FAKE_GRADES, FakeJudge
from test_judge import RUN as JUDGE_RUN

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
RUN = "1 Q0 a 1 2.0 r\n1 Q0 x 2 1.0 r\n2 Q0 c 1 1.0 r\n"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _refused(result, *, request_count: int | None = None) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("Error: ")]
    assert len(lines) == 1, result.stderr
    assert "delete" not in lines[0]  # never advises deleting a user's file
    return lines[0]


@pytest.fixture
def runs_folder(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    folder = tmp_path / "sw"
    folder.mkdir()
    (folder / "run_hybrid.txt").write_text(RUN)
    (folder / "run_bm25.txt").write_text(RUN.replace(" r\n", " b\n"))
    os.symlink("run_bm25.txt", folder / "deltas.png")
    return tmp_path


@pytest.mark.parametrize("command", [
    ["-o", "{sw}/run_hybrid.txt", "{q}", "{sw}"],                       # a run of the folder, replaced
    ["-o", "{sw}/new_table.txt", "{q}", "{sw}"],                        # a new file, read as a run next time
    ["compare", "-o", "{sw}/run_bm25.txt", "{q}", "{sw}/run_hybrid.txt", "{sw}/run_bm25.txt"],
    ["report", "--no-plots", "-o", "{sw}/run_hybrid.txt", "{q}", "{sw}/run_hybrid.txt", "{sw}/run_bm25.txt"],
    ["compare", "--plot", "{sw}/deltas.png", "{q}", "{sw}/run_hybrid.txt", "{sw}/run_bm25.txt"],  # a link to a run
])
def test_an_output_inside_an_input_folder_is_refused(runs_folder, command):
    # `trec-rag-eval qrels.txt sw -o sw/run_hybrid.txt --force` replaced that run with the table
    before = _snapshot(runs_folder)
    args = [a.format(sw=runs_folder / "sw", q=runs_folder / "qrels.txt") for a in command]
    line = _refused(invoke(*args, "--force"))
    assert "inside the input folder" in line or "is also an input" in line, line
    assert _snapshot(runs_folder) == before


def test_a_partition_of_a_parquet_input_folder_is_refused(tmp_path):
    # `convert parts --run parts/a.parquet --force` overwrote a partition of its own input
    import polars as pl

    parts = tmp_path / "parts"
    parts.mkdir()
    pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [2.0, 1.0]}).write_parquet(parts / "a.parquet")
    pl.DataFrame({"query_id": ["2"], "doc_id": ["c"], "score": [1.0]}).write_parquet(parts / "b.parquet")
    before = _snapshot(tmp_path)
    for output in ("a.parquet", "c.parquet", "run.txt"):
        line = _refused(invoke("convert", str(parts), "--run", str(parts / output), "--force"))
        assert f"inside the input folder {parts}" in line
    # the same folder reached through a symbolic link is the same folder
    os.symlink(parts, tmp_path / "alias")
    _refused(invoke("convert", str(parts), "--run", str(tmp_path / "alias" / "a.parquet"), "--force"))
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("spelling", ["hard link", "symbolic link", "dotted", "linked folder"])
@pytest.mark.parametrize("command", ["evaluate", "compare", "report", "convert --qrels", "convert --json"])
def test_every_spelling_of_an_input_is_the_input(tmp_path, spelling, command):
    qrels = tmp_path / "data" / "qrels.txt"
    qrels.parent.mkdir()
    qrels.write_text(QRELS)
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    if spelling == "hard link":
        target = tmp_path / "other_name.txt"
        os.link(qrels, target)
    elif spelling == "symbolic link":
        target = tmp_path / "link.txt"
        os.symlink(qrels, target)
    elif spelling == "dotted":
        target = tmp_path / "data" / ".." / "data" / "qrels.txt"
    else:
        os.symlink(qrels.parent, tmp_path / "alias")
        target = tmp_path / "alias" / "qrels.txt"
    before = _snapshot(tmp_path)
    args = {"evaluate": ["-o", str(target), str(qrels), str(run)],
            "compare": ["compare", "-o", str(target), str(qrels), str(run), str(run)],
            "report": ["report", "--no-plots", "-o", str(target), str(qrels), str(run), str(run)],
            "convert --qrels": ["convert", str(qrels), "--qrels", str(target)],
            "convert --json": ["convert", str(qrels), "--json", str(target)]}[command]
    line = _refused(invoke(*args, "--force"))
    assert f"is also an input ({qrels})" in line, line
    assert _snapshot(tmp_path) == before


def test_the_files_an_input_brings_along_are_inputs(tmp_path):
    # evaluate --judgments reads QRELS.llm.tsv; a BEIR qrels TSV takes its query texts from queries.jsonl
    qrels = tmp_path / "judged.qrels"
    qrels.write_text(QRELS)
    sidecar = tmp_path / "judged.qrels.llm.tsv"
    sidecar.write_text("query_id\tdoc_id\tgrade\tkind\tmodel\n1\tb\t0\tcalibration\tm\n")
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    beir = tmp_path / "beir" / "qrels"
    beir.mkdir(parents=True)
    (beir / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\ta\t1\n2\tc\t1\n")
    queries = tmp_path / "beir" / "queries.jsonl"
    queries.write_text('{"_id": "1", "text": "one"}\n{"_id": "2", "text": "two"}\n')
    before = _snapshot(tmp_path)
    line = _refused(invoke("-o", str(sidecar), "--force", str(qrels), str(run)))
    assert f"is also an input ({sidecar})" in line
    line = _refused(invoke("-o", str(queries), "--force", str(beir / "test.tsv"), str(run)))
    assert f"is also an input ({queries})" in line
    assert _snapshot(tmp_path) == before


def test_search_refuses_its_dataset_corpus_and_doc_map(tmp_path):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in CORPUS), encoding="utf-8")
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps([{"id": "q1", "query": "tomates", "relevant": ["d_ok"]}]), encoding="utf-8")
    doc_map = tmp_path / "map.tsv"
    doc_map.write_text("d_ok\td_ok\n")
    before = _snapshot(tmp_path)
    for target in (dataset, corpus, doc_map):
        args = ["search", str(dataset), "--corpus", str(corpus), "--doc-map", str(doc_map), "-o", str(target)]
        line = _refused(invoke(*args, "--force"))
        assert f"is also an input ({target})" in line
    assert _snapshot(tmp_path) == before


# --- the LLM commands: output, sidecar, progress file and inputs are four different files -----------------


@pytest.fixture
def judge_files(tmp_path):
    dataset = tmp_path / "dataset.json"
    dataset.write_text(json.dumps(JUDGE_DATASET), encoding="utf-8")
    run = tmp_path / "run.txt"
    run.write_text(JUDGE_RUN, encoding="utf-8")
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"id": d, "text": f"[{d}] passage {d}"}) + "\n" for d in FAKE_GRADES),
                      encoding="utf-8")
    (tmp_path / "out.qrels").write_text("an earlier output the user keeps\n")
    return tmp_path


@pytest.mark.parametrize("progress, expected", [
    ("out.qrels", "the progress file {p} is also the output {p}"),
    ("out.qrels.llm.tsv", "the progress file {p} is also the output {p}"),
    ("dataset.json", "the progress file {p} is also an input ({p})"),
    ("corpus.jsonl", "the progress file {p} is also an input ({p})"),
    ("run.txt", "the progress file {p} is also an input ({p})"),
])
@pytest.mark.parametrize("force", [True, False])
def test_judge_refuses_a_progress_file_that_is_an_output_or_an_input_before_any_call(
        judge_files, monkeypatch, progress, expected, force):
    # `-o out.qrels --progress-file out.qrels --force` printed "Wrote out.qrels" and exit 0, and out.qrels was
    # gone (removing the progress file removed it); without --force every LLM call was made before the refusal
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    tmp = judge_files
    if not force:
        (tmp / "out.qrels").unlink()
    before = _snapshot(tmp)
    p = str(tmp / progress)
    with FakeJudge() as server:
        result = invoke("judge", str(tmp / "dataset.json"), str(tmp / "run.txt"), "--corpus", str(tmp / "corpus.jsonl"),
                        "--depth", "3", "--model", "m", "--base-url", server.base_url, "-o", str(tmp / "out.qrels"),
                        "--progress-file", p, *(["--force"] if force else []))
    line = _refused(result)
    assert expected.format(p=p) in line, line
    assert "choose another progress file" in line
    assert server.requests == []  # refused before the first call
    assert _snapshot(tmp) == before


@pytest.mark.parametrize("progress", ["g.json", "corpus.jsonl", "linked-to-output"])
@pytest.mark.parametrize("force", [True, False])
def test_generate_refuses_a_progress_file_that_is_the_output_or_the_corpus_before_any_call(
        tmp_path, monkeypatch, progress, force):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in CORPUS), encoding="utf-8")
    output = tmp_path / "g.json"
    if force:
        output.write_text("[]\n")
    if progress == "linked-to-output":
        os.symlink(output, tmp_path / progress)
    before = _snapshot(tmp_path)
    with Generator({}) as server:
        result = invoke("generate-queries", str(corpus), "--model", "m", "--base-url", server.base_url,
                        "-o", str(output), "--progress-file", str(tmp_path / progress), *(["--force"] if force else []))
    line = _refused(result)
    assert f"the progress file {tmp_path / progress} is also" in line, line
    assert server.requests == []
    assert _snapshot(tmp_path) == before


def test_the_library_checks_the_progress_file_too(tmp_path):
    from test_generate import SETTINGS

    from trec_rag_eval.errors import UsageError
    from trec_rag_eval.llm.client import make_client
    from trec_rag_eval.llm.queries import generate_dataset

    output = tmp_path / "g.json"
    output.write_text("[]\n")
    with Generator({}) as server, pytest.raises(UsageError, match="the progress file .* is also the output"):
        generate_dataset(CORPUS, output, SETTINGS, make_client(server.base_url, api_key="dummy"), force=True,
                         progress_path=output, show_progress=False)
    assert server.requests == []
    assert output.read_text() == "[]\n"


def test_a_hard_link_outside_an_input_folder_to_a_file_inside_it_is_that_file(runs_folder):
    # found by the fuzz test: another name of sw/run_hybrid.txt, outside sw/, was written over
    os.link(runs_folder / "sw" / "run_hybrid.txt", runs_folder / "alias.txt")
    before = _snapshot(runs_folder)
    line = _refused(invoke("-o", str(runs_folder / "alias.txt"), "--force", str(runs_folder / "qrels.txt"),
                           str(runs_folder / "sw")))
    assert f"is also an input ({runs_folder / 'sw' / 'run_hybrid.txt'}, in the input folder" in line, line
    assert _snapshot(runs_folder) == before


def test_fuse_refuses_the_judgments_its_optimize_qrels_brings_along(tmp_path):
    # --optimize QRELS with --judgments reads QRELS.llm.tsv: writing the fused run there would replace it
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    sidecar = tmp_path / "qrels.txt.llm.tsv"
    sidecar.write_text("query_id\tdoc_id\tgrade\tkind\tmodel\n")
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    before = _snapshot(tmp_path)
    line = _refused(invoke("fuse", str(run), str(run), "--optimize", str(qrels), "-o", str(sidecar), "--force"))
    assert f"is also an input ({sidecar})" in line
    assert _snapshot(tmp_path) == before


@pytest.mark.parametrize("special", ["/dev/fd/1", "fifo"])
def test_a_progress_file_that_is_a_device_or_a_pipe_is_refused(tmp_path, monkeypatch, special):
    # the progress file is removed once the work is done: run as root, `--progress-file /dev/stdout` removed the
    # machine's /dev/stdout, and /dev/null became a regular file; a pipe could not be read back (it hung).
    # Only names a regression cannot destroy are used here: /dev/fd/1 (the same stream as /dev/stdout, under
    # /proc, which refuses removal) and a pipe of the test's own.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d, ensure_ascii=False) + "\n" for d in CORPUS), encoding="utf-8")
    if special == "fifo":
        special = str(tmp_path / "fifo")
        os.mkfifo(special)
    with Generator({}) as server:
        result = invoke("generate-queries", str(corpus), "--model", "m", "--base-url", server.base_url,
                        "-o", str(tmp_path / "g.json"), "--progress-file", special)
    assert result.exit_code == 1, result.stderr
    assert f"Error: cannot write {special}: is not a regular file (a device or a pipe)" in result.stderr
    assert server.requests == []
    assert os.path.exists(special)


def test_a_stream_redirected_to_a_file_is_written_in_place_never_replaced(tmp_path):
    # `-o /dev/stdout --force > out.txt`: /dev/stdout then names a regular file, and was replaced (renamed
    # over: the machine's /dev/stdout link became a file) or, as a progress file, removed. /dev/fd/1 is the
    # same stream, and a regression there fails instead of touching /dev.
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    out = tmp_path / "out.txt"
    with open(out, "wb") as handle:
        result = subprocess.run([sys.executable, "-m", "trec_rag_eval", "-m", "P.1", "-o", "/dev/fd/1", "--force",
                                 str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")], stdout=handle,
                                stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": REPO}, timeout=60)
    assert result.returncode == 0, result.stderr
    # q1: a (relevant) first -> 1; q2: c (relevant) first -> 1
    assert out.read_text() == "P_1                   \tall\t1.0000\n"
    assert os.path.islink("/dev/fd")


def test_an_output_that_is_a_link_writes_its_file_and_keeps_the_link(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "results.txt").write_text("last week's table\n")
    os.symlink("results.txt", tmp_path / "latest.txt")
    result = invoke("-m", "P.1", "-o", str(tmp_path / "latest.txt"), "--force", str(tmp_path / "qrels.txt"),
                    str(tmp_path / "run.txt"))
    assert result.exit_code == 0, result.stderr
    assert os.path.islink(tmp_path / "latest.txt")
    assert (tmp_path / "results.txt").read_text() == "P_1                   \tall\t1.0000\n"


def test_a_stream_appended_to_by_the_shell_keeps_what_it_held(tmp_path):
    # `-o /dev/stdout >> log.txt` reopened the stream for writing, which emptied the log
    import subprocess
    import sys

    from conftest import REPO

    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    log = tmp_path / "log.txt"
    log.write_text("yesterday's line\n")
    with open(log, "ab") as handle:
        result = subprocess.run([sys.executable, "-m", "trec_rag_eval", "-m", "P.1", "-o", "/dev/fd/1",
                                 str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")], stdout=handle,
                                stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": REPO}, timeout=60)
    assert result.returncode == 0, result.stderr
    assert log.read_text() == "yesterday's line\nP_1                   \tall\t1.0000\n"
