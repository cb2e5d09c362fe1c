"""Every reader opens files the one way (io/sources.py): bytes that are not UTF-8, plain or gzip, are an
error naming the file and the line, never a UnicodeDecodeError traceback."""

from __future__ import annotations

import gzip

import pytest
from conftest import invoke

from trec_rag_eval.checks.validate import read_reference_scores
from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.json.content import read_dataset, read_results
from trec_rag_eval.io.json.corpus import read_corpus
from trec_rag_eval.io.published.beir import read_beir
from trec_rag_eval.io.trec.pieces import iter_run_chunks
from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels, read_trec_run
from trec_rag_eval.io.trec.topics import load_topics
from trec_rag_eval.llm.client import read_progress
from trec_rag_eval.llm.queries import GenerationSettings

BAD = b"\xe9"  # 'e acute' in Latin-1: not a UTF-8 sequence

# reader, name of the file, its content with BAD on line 2
READERS = {
    "qrels": (read_trec_qrels, "qrels.txt", b"1 0 d1 1\n1 0 d" + BAD + b" 1\n"),
    "run": (read_trec_run, "run.txt", b"1 Q0 d1 1 2.0 t\n1 Q0 d" + BAD + b" 2 1.0 t\n"),
    "run in pieces": (lambda p: list(iter_run_chunks(p)), "run.txt", b"1 Q0 d1 1 2.0 t\n1 Q0 d" + BAD + b" 2 1.0 t\n"),
    "dataset": (read_dataset, "d.jsonl",
                b'{"query": "a", "relevant": ["d1"]}\n{"query": "' + BAD + b'", "relevant": []}\n'),
    "results": (read_results, "r.json", b'{"q1": ["d1"],\n "q2": ["d' + BAD + b'"]}\n'),
    "topics": (load_topics, "topics.tsv", b"1\tone\n2\tt" + BAD + b"o\n"),
    "beir": (read_beir, "qrels.tsv", b"query-id\tcorpus-id\tscore\nq" + BAD + b"\td1\t1\n"),
    "validate reference": (read_reference_scores, "ref.txt", b"P_5\tall\t0.2\nP_10\t" + BAD + b"\t0.1\n"),
    "bm25 corpus": (read_corpus, "corpus.jsonl", b'{"id": "d1", "text": "a"}\n{"id": "d2", "text": "' + BAD + b'"}\n'),
    "generation progress": (lambda p: read_progress(p, GenerationSettings("m").identity,
                                                    lambda record: record["doc_id"], "questions"), "p.jsonl",
                            b'{"doc_id": "d1", "questions": []}\n{"doc_id": "' + BAD + b'", "questions": []}\n'),
}


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
@pytest.mark.parametrize("reader", sorted(READERS))
def test_non_utf8_bytes_name_the_file_and_the_line(tmp_path, reader, compressed):
    read, name, content = READERS[reader]
    path = tmp_path / name
    path.write_bytes(gzip.compress(content) if compressed else content)
    with pytest.raises(InputFormatError) as err:
        read(path if reader == "generation progress" else str(path))
    assert err.value.path == str(path)
    assert err.value.line_no == 2
    assert str(err.value).startswith(f"{path}:2: not UTF-8 text (byte 0xe9)")


@pytest.mark.parametrize("args", [
    ["evaluate", "{qrels}", "{run}"],
    ["validate", "{good_qrels}", "{good_run}", "{reference}"],
    ["search", "{dataset}", "--corpus", "{corpus}"],
])
def test_the_cli_answers_with_one_error_line(tmp_path, args):
    files = {
        "qrels": b"1 0 d1 1\n1 0 d" + BAD + b" 1\n",
        "run": b"1 Q0 d1 1 2.0 t\n",
        "good_qrels": b"1 0 d1 1\n",
        "good_run": b"1 Q0 d1 1 2.0 t\n",
        "reference": b"P_5\tall\t0.2\nP_10\t" + BAD + b"\t0.1\n",
        "dataset": b'[{"id": "1", "query": "a", "relevant": ["d1"]}]',
        "corpus": b'{"id": "d1", "text": "a"}\n{"id": "d2", "text": "' + BAD + b'"}\n',
    }
    paths = {}
    for key, content in files.items():
        paths[key] = tmp_path / key
        paths[key].write_bytes(content)
    argv = [a.format(**paths) for a in args]
    if argv[0] == "evaluate":
        argv = argv[1:]
    result = invoke(*argv)
    bad = next(str(paths[k]) for k in ("qrels", "reference", "corpus") if str(paths[k]) in argv)
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: {bad}:2: not UTF-8 text (byte 0xe9)\n"
