"""JSON datasets, results and validate's reference: a depth limit and bounded numbers, each turned
into one ``file:line`` error instead of a RecursionError, OverflowError or ValueError traceback."""

from __future__ import annotations

import json

import pytest
from conftest import invoke

QRELS = "1 0 a 1\n1 0 b 0\n"
RUN = "1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n"


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return str(path)


def _error(result, code=1):
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1, result.stderr
    return result.stderr


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("text", [
    '[{"query": "q", "relevant": ' + DEEP + "}]",
    '{"1": ' + DEEP + "}",
    '{"query": "q", "relevant": ["a"]}\n{"query": "r", "relevant": ' + DEEP + "}\n",
    DEEP,
])
def test_deep_json_dataset(tmp_path, text):
    dataset = _write(tmp_path, "d.json", text)
    stderr = _error(invoke("convert", dataset, "--qrels", str(tmp_path / "out.qrels")))
    assert stderr.startswith(f"Error: {dataset}:")
    assert "nested too deeply" in stderr


def test_deep_json_results(tmp_path):
    qrels = _write(tmp_path, "q.txt", QRELS)
    results = _write(tmp_path, "r.json", '{"1": [' + DEEP + "]}")
    stderr = _error(invoke(qrels, results))
    assert stderr.startswith(f"Error: {results}:1: ") and "nested too deeply" in stderr


@pytest.mark.parametrize("grade,reason", [
    ("1" + "0" * 30, "the relevance of 'a' must be an integer from -2147483648 to 2147483647"),
    ("1e30", "the relevance of 'a' must be an integer from -2147483648 to 2147483647"),
    ("1" * 5000, "the number '1111111111"),
])
def test_json_relevance_bounds(tmp_path, grade, reason):
    dataset = _write(tmp_path, "d.json", '[{"id": "1", "query": "q", "relevant": {"a": ' + grade + "}}]")
    stderr = _error(invoke("convert", dataset, "--qrels", str(tmp_path / "out.qrels")))
    assert stderr.startswith(f"Error: {dataset}:1: ")
    assert reason in stderr


@pytest.mark.parametrize("score", ["1" * 400, "-" + "9" * 400, "1" * 5000])
def test_json_score_bounds(tmp_path, score):
    qrels = _write(tmp_path, "q.txt", QRELS)
    results = _write(tmp_path, "r.json", '{"1": [{"id": "a", "score": ' + score + '}, {"id": "b", "score": 1}]}')
    stderr = _error(invoke(qrels, results))
    assert stderr.startswith(f"Error: {results}:1: ")
    assert "out of range" in stderr


@pytest.mark.parametrize("text", ["[]", "{}", "\n[\n]\n"])
def test_an_empty_dataset_names_the_file(tmp_path, text):
    dataset = _write(tmp_path, "d.json", text)
    run = _write(tmp_path, "r.txt", RUN)
    stderr = _error(invoke(dataset, run))
    assert stderr == f"Error: {dataset}: the dataset holds no query\n"


@pytest.mark.parametrize("reference", [
    b"\xff\xfe\x00binary\x00",
    b"map\tall\t0.5\xe9\n",
    ('{"summary": ' + DEEP + "}").encode(),
])
def test_validate_bad_reference(tmp_path, reference):
    qrels = _write(tmp_path, "q.txt", QRELS)
    run = _write(tmp_path, "r.txt", RUN)
    ref = _write(tmp_path, "ref.txt", reference)
    stderr = _error(invoke("validate", qrels, run, ref))
    assert stderr.startswith(f"Error: {ref}")


@pytest.mark.parametrize("reference", ["{}", "runid\tall\tr\n", '{"1": {"map": null}}', "[{}]",
                                       "unknown_measure\tall\t0.5\n"])
def test_validate_with_nothing_comparable_fails(tmp_path, reference):
    qrels = _write(tmp_path, "q.txt", QRELS)
    run = _write(tmp_path, "r.txt", RUN)
    ref = _write(tmp_path, "ref.txt", reference)
    result = invoke("validate", qrels, run, ref)
    stderr = _error(result)
    assert stderr.startswith(f"Error: {ref}: nothing to compare: ")


def test_validate_reads_numbers_in_c_syntax(tmp_path):
    qrels = _write(tmp_path, "q.txt", QRELS)
    run = _write(tmp_path, "r.txt", RUN)
    # trec_eval prints 1.0000 for P_1 here; '1_0' is not a number in C (nor in trec_eval's output)
    ok = invoke("validate", qrels, run, _write(tmp_path, "ok.txt", "P_1\tall\t1.0000\n"))
    assert ok.exit_code == 0, ok.output
    bad = _error(invoke("validate", qrels, run, _write(tmp_path, "bad.txt", "P_1\tall\t1_0\n")))
    assert bad == f"Error: {tmp_path / 'bad.txt'}:1: expected a number, got '1_0': 'P_1\\tall\\t1_0'\n"


def test_json_numbers_as_before(tmp_path):
    # the bounds refuse nothing a real dataset holds: grades 0..3, float grades 2.0, scores 1e-3
    dataset = _write(tmp_path, "d.json", json.dumps([{"id": "1", "query": "q", "relevant": {"a": 3, "b": 2.0}}]))
    results = _write(tmp_path, "r.json",
                     '{"1": [{"id": "a", "score": 1e-3}, {"id": "b", "score": 12345678901234567890}]}')
    result = invoke("-m", "P.1", dataset, results)
    assert result.exit_code == 0, result.output
    assert result.stdout == "P_1                   \tall\t1.0000\n"


@pytest.mark.parametrize("text, line", [
    ('{"1": {"\\ud800": 1}}', 1),                       # a high surrogate alone, in a key
    ('[{"query": "q",\n "relevant": ["\\udc00x"]}]', 2),   # a low surrogate alone, in a value
    ('{"1": {"a\\uD83D": 1}}', 1),                        # upper-case hex, at the end of a string
])
def test_json_lone_surrogate_escape_is_one_error(tmp_path, text, line):
    # a \\ud800 escape alone decodes to a string no file (nor polars) can hold: it was a
    # UnicodeEncodeError traceback in convert, crosscheck and evaluate's writers
    dataset = _write(tmp_path, "d.json", text)
    stderr = _error(invoke("convert", dataset, "--qrels", str(tmp_path / "out.qrels")))
    assert stderr.startswith(f"Error: {dataset}:{line}: ") and "surrogate" in stderr
    assert not (tmp_path / "out.qrels").exists()
    _error(invoke("crosscheck", dataset, _write(tmp_path, "r.txt", RUN)))


def test_json_surrogate_pairs_and_escaped_backslashes_are_text(tmp_path):
    # a proper pair is one character (U+1F600); '\\\\ud800' is a backslash then the letters 'ud800'
    dataset = _write(tmp_path, "d.json", '{"1": {"\\ud83d\\ude00": 1, "\\\\ud800": 1}}')
    out = tmp_path / "out.qrels"
    result = invoke("convert", dataset, "--qrels", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8") == "1 0 \U0001F600 1\n1 0 \\ud800 1\n"
