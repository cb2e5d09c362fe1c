"""Every output of every command goes through one writer: checked before the work, written all or
none, and every operating-system failure one ``Error:`` line naming the file, never a traceback.

The machine that runs the tests may be root (where chmod does not stop a write), so permission and
disk-full failures of files are injected at the operating-system call; standard output is really
redirected to /dev/full and to a closed pipe, in a child process.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO, first_by_default, invoke

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
RUN = "1 Q0 a 1 2.0 r\n1 Q0 x 2 1.0 r\n2 Q0 c 1 1.0 r\n"
DATASET = [{"id": "q1", "query": "first", "relevant": ["a"]}, {"id": "q2", "query": "second\tone", "relevant": ["b"]}]


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    s = tmp_path / "run2.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    s.write_text(RUN.replace(" r\n", " s\n").replace("2.0", "0.5"))
    return str(q), str(r), str(s)


def _commands(files, out):
    q, r, s = files
    return {
        "evaluate -o": ["-o", out, q, r],
        "convert --qrels": ["convert", q, "--qrels", out],
        "convert --run": ["convert", r, "--run", out],
        "convert --json": ["convert", r, "--json", out],
        "report -o": ["report", q, r, s, "-o", out],
        "compare --plot": ["compare", "--plot", out + ".png", q, r, s],
        "search -o": ["search", os.path.join(REPO, "fixtures", "eval_dataset_fr.json"), "--corpus",
                      os.path.join(REPO, "fixtures", "corpus_fr.jsonl"), "-o", out],
    }


def _only_error(result, tmp_path, *, code=1):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.startswith("Warning:")]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    leftovers = [name for name in os.listdir(tmp_path) if name.startswith(".")]
    assert leftovers == []  # no temporary file left behind
    return lines[0]


@pytest.mark.parametrize("command", ["evaluate -o", "convert --qrels", "convert --run", "convert --json",
                                     "report -o", "compare --plot", "search -o"])
def test_missing_folder(files, tmp_path, command):
    out = str(tmp_path / "nowhere" / "out.txt")
    line = _only_error(invoke(*_commands(files, out)[command]), tmp_path)
    assert f"the folder {tmp_path / 'nowhere'} does not exist" in line


@pytest.mark.parametrize("command", ["evaluate -o", "convert --qrels", "convert --json", "report -o"])
def test_output_is_a_folder(files, tmp_path, command):
    folder = tmp_path / "folder"
    folder.mkdir()
    result = invoke(*_commands(files, str(folder))[command], "--force")
    said = f"Error: cannot write {folder}: is a folder, expected a file name\n"
    assert (result.exit_code, result.stderr) == (1, said)
    assert os.listdir(folder) == []


# every command with a full disk by default; a refused write and a read-only disk with -m slow
@pytest.mark.parametrize("failure", first_by_default([errno.ENOSPC, errno.EACCES, errno.EROFS]))
@pytest.mark.parametrize("command", ["evaluate -o", "convert --qrels", "report -o", "compare --plot"])
def test_operating_system_failures_while_writing(files, tmp_path, monkeypatch, command, failure):
    import trec_rag_eval.io.atomic as atomic

    def fail(*args, **kwargs):
        raise OSError(failure, os.strerror(failure))

    monkeypatch.setattr(atomic.os, "fsync", fail)
    out = str(tmp_path / "out.txt")
    line = _only_error(invoke(*_commands(files, out)[command]), tmp_path)
    assert line.endswith(f": {os.strerror(failure)}")
    assert not any(name.startswith("out.txt") for name in os.listdir(tmp_path))


def test_two_outputs_naming_the_same_file_are_refused_before_anything_is_written(tmp_path):
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(DATASET[:1]))
    same = tmp_path / "same.txt"
    for spelling in (str(same), str(tmp_path / "." / "same.txt")):
        result = invoke("convert", str(dataset), "--qrels", str(same), "--topics", spelling, "--force")
        assert result.exit_code == 2
        assert result.stderr == f"Error: two outputs name the same file: {same} and {spelling}\n"
        assert not same.exists()


def test_a_failing_second_output_leaves_no_first_output(tmp_path):
    # a query text holding a tab cannot go into a topics file: the qrels file must not stay behind
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(DATASET))
    result = invoke("convert", str(dataset), "--qrels", str(tmp_path / "d.qrels"), "--topics",
                    str(tmp_path / "d.topics"))
    assert result.exit_code == 1
    assert sorted(os.listdir(tmp_path)) == ["d.json"]


def test_a_failing_move_puts_back_what_force_replaced(tmp_path, monkeypatch):
    import trec_rag_eval.io.atomic as atomic

    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps(DATASET[:1]))
    qrels, topics = tmp_path / "d.qrels", tmp_path / "d.topics"
    qrels.write_text("old qrels\n")
    topics.write_text("old topics\n")
    real_replace = os.replace

    def replace(source, target):
        if str(target) == str(topics) and str(source).endswith(".tmp"):
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real_replace(source, target)

    monkeypatch.setattr(atomic.os, "replace", replace)
    result = invoke("convert", str(dataset), "--qrels", str(qrels), "--topics", str(topics), "--force")
    assert result.exit_code == 1
    assert result.stderr == f"Error: cannot write {topics}: {os.strerror(errno.EIO)}\n"
    assert qrels.read_text() == "old qrels\n" and topics.read_text() == "old topics\n"
    assert sorted(os.listdir(tmp_path)) == ["d.json", "d.qrels", "d.topics"]


def test_an_existing_pipe_is_written_in_place_not_replaced(files, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()))
    reader.start()
    result = invoke("-m", "P.1", "-o", str(fifo), *files[:2])
    reader.join(timeout=30)
    assert result.exit_code == 0, result.output
    assert received == ["P_1                   \tall\t1.0000\n"]
    assert fifo.is_fifo()


def _child(args, **kwargs):
    return subprocess.run([sys.executable, "-m", "trec_rag_eval", *args], cwd=REPO, capture_output=False,
                          stderr=subprocess.PIPE, text=True, timeout=120, **kwargs)


def test_standard_output_on_a_full_disk(files):
    with open("/dev/full", "w") as full:  # the shell's '> /dev/full'
        result = _child(["-q", "-m", "all_trec", *files[:2]], stdout=full)
    assert result.returncode == 1
    assert result.stderr == "Error: cannot write standard output: No space left on device\n"


# a child process each (a second or more): the first by default, the others with -m slow
@pytest.mark.parametrize("command", first_by_default([
    ["measures"], ["measures", "--markdown"], ["crosscheck", "-m", "P.1"], ["crosscheck", "-f", "json", "-m", "P.1"],
    ["demo"], ["validate"], ["validate", "-f", "json"], ["report", "--no-plots", "-o"], ["search", "-o"], ["search"],
    ["convert"]]))
def test_every_command_on_a_full_disk(files, tmp_path, command):
    # measures, crosscheck, validate, demo, report, search and convert printed with click.echo:
    # an OSError traceback at '> /dev/full'
    reference = tmp_path / "reference.txt"
    reference.write_text("P_1\tall\t1.0000\n")  # as 'trec_eval -m P.1' prints it for files[:2]
    data = Path(__file__).resolve().parents[1] / "trec_rag_eval" / "engine" / "data"
    search = [*command[:1], "--corpus", str(data / "corpus_fr.jsonl"), str(data / "eval_dataset_fr.json"), *command[1:]]
    args = {"crosscheck": [*command, *files[:2]],
            "validate": [*command, *files[:2], str(reference)],
            "report": [*command, str(tmp_path / "report.html"), *files],
            "search": search + ([str(tmp_path / "searched.txt")] if command[1:] else []),
            "convert": [*command, str(data / "eval_dataset_fr.json"), "--qrels", str(tmp_path / "converted.qrels")],
            }.get(command[0], command)
    with open("/dev/full", "w") as full:
        result = _child(args, stdout=full)
    assert result.returncode == 1, result.stderr
    assert result.stderr.endswith("Error: cannot write standard output: No space left on device\n"), result.stderr
    assert "Traceback" not in result.stderr


def test_standard_output_closed_early(files):
    # as 'trec-rag-eval ... | head -1' once head has gone: the pipe has no reader left
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = _child(["-q", "-m", "all_trec", *files[:2]], stdout=write_end)
    finally:
        os.close(write_end)
    assert result.returncode == 1
    assert result.stderr == "Error: cannot write standard output: Broken pipe\n"


def test_an_empty_runs_folder_is_an_error(files, tmp_path):
    empty = tmp_path / "runs"
    (empty / "sub").mkdir(parents=True)
    out = tmp_path / "out.txt"
    result = invoke("-o", str(out), files[0], str(empty))
    assert result.exit_code == 1
    assert result.stderr == f"Error: {empty}: no run file in this folder (sub-folders are not read)\n"
    assert not out.exists()


def test_a_beir_folder_is_read_by_every_command(files, tmp_path):
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\ta\t1\n2\tc\t1\n")
    (beir / "queries.jsonl").write_text('{"_id": "1", "text": "one"}\n{"_id": "2", "text": "two"}\n')
    _, r, s = files
    assert invoke("-m", "P.1", str(beir), r).stdout == "P_1                   \tall\t1.0000\n"
    assert invoke("compare", "-m", "P@1", str(beir), r, s).exit_code == 0
    crosscheck = invoke("crosscheck", "-m", "P@1", str(beir), r)
    assert "is a directory" not in crosscheck.stderr
    assert invoke("validate", str(beir), r, r).exit_code in (0, 1)


def test_an_unreadable_file_in_a_runs_folder(files, tmp_path, monkeypatch):
    # chmod 000 does not stop root, so the refusal is injected where the file is opened
    import builtins

    runs = tmp_path / "runs"
    runs.mkdir()
    locked = runs / "locked.txt"
    locked.write_text(RUN)
    real_open = builtins.open

    def guarded(file, *args, **kwargs):
        if str(file) == str(locked):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    for args in ([str(runs)], [str(locked)]):
        result = invoke("-m", "P.1", files[0], *args)
        assert result.exit_code == 1
        assert result.stderr == f"Error: {locked}: cannot read the file: Permission denied\n"


def test_a_progress_file_that_cannot_be_written_is_one_error(tmp_path):
    # the LLM progress file is an output too: under a regular file its folder cannot exist
    from test_generate import CORPUS, SETTINGS, ScriptedServer

    from trec_rag_eval.errors import OutputError
    from trec_rag_eval.llm.client import make_client
    from trec_rag_eval.llm.queries import generate_dataset

    blocker = tmp_path / "file"
    blocker.write_text("x")
    with ScriptedServer({}) as server, pytest.raises(OutputError, match=r"cannot write .*file/progress.jsonl: "):
        generate_dataset(CORPUS, tmp_path / "d.json", SETTINGS, make_client(server.base_url, api_key="dummy"),
                         progress_path=blocker / "progress.jsonl", show_progress=False)


@pytest.mark.parametrize("which", ["evaluate qrels", "evaluate run", "compare run", "report qrels", "convert"])
def test_force_never_writes_over_an_input_of_the_same_command(files, tmp_path, which):
    # '-o q.txt --force q.txt r.txt' replaced the qrels with the results table, and
    # 'convert ds.json --qrels ds.json --force' the dataset with its own qrels: --force replaces files, not
    # the data the command reads
    q, r, s = files
    dataset = tmp_path / "ds.json"
    dataset.write_text(json.dumps([{"requête": "a", "pertinents": ["d1"]}]), encoding="utf-8")
    target = {"evaluate qrels": q, "evaluate run": r, "compare run": s, "report qrels": q,
              "convert": str(dataset)}[which]
    before = Path(target).read_bytes()
    spelled = os.path.join(os.path.dirname(target), ".", os.path.basename(target))  # another spelling, one file
    args = {"evaluate qrels": ["-o", spelled, "--force", q, r],
            "evaluate run": ["-o", spelled, "--force", q, r],
            "compare run": ["compare", "-o", spelled, "--force", q, r, s],
            "report qrels": ["report", "--no-plots", "-o", spelled, "--force", q, r, s],
            "convert": ["convert", str(dataset), "--qrels", spelled, "--force"]}[which]
    result = invoke(*args)
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith(f"Error: the output {spelled} is also an input ("), result.stderr
    assert "writing it would destroy what is being read; choose another output" in result.stderr
    assert Path(target).read_bytes() == before


def test_standard_output_alone_looks_at_no_input(files, monkeypatch):
    # with nothing written to a file there is nothing an output could replace: no input's head is read to
    # find what it brings along (a BEIR TSV's queries.jsonl), no input is even looked up
    from trec_rag_eval.io import output_checks

    q, r, _ = files
    looked: list[str] = []
    monkeypatch.setattr(output_checks, "files_read", lambda path: looked.append(path) or [])
    output_checks.check_outputs_against_inputs([None], False, [q, r], [None])
    assert looked == []
    output_checks.check_outputs_against_inputs([None], False, [q, r], [q + ".progress"])
    assert looked == [q, r]  # a progress file is written: checked against every input
