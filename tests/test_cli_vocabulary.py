"""One vocabulary across commands: the same flag for the same thing in evaluate, compare, report,
search, crosscheck and validate, and the older spellings still accepted."""

from __future__ import annotations

import json
import os

import click
import pytest
from conftest import REPO, invoke

from trec_rag_eval.cli import LazyGroup, commands

QRELS = os.path.join(REPO, "fixtures", "qrels.txt")
BM25 = os.path.join(REPO, "fixtures", "run_bm25.txt")
HYBRID = os.path.join(REPO, "fixtures", "run_hybrid.txt")

# parameter -> the flags every command that has it spells it with
SPELLINGS = {
    "relevance_level": {"-l", "--level", "--relevance-level"},
    "max_retrieved": {"-M", "--max-retrieved"},
    "judged_only": {"-J", "--judged-only"},
    "intersection": {"--intersection"},
    "trec_eval_9": {"--trec-eval-9"},
    "qrels_format": {"--qrels-format"},
    "run_format": {"--run-format"},
    "output": {"-o", "--output"},
    "measures": {"-m", "--measure"},
    "per_query": {"-q", "--per-query"},
}
FORMAT_FLAGS = {"-f", "--format"}
# which command offers what (where it makes sense: compare pairs runs on the qrels' queries, so it has
# no --intersection; search runs a dataset through an engine, so it has no -M or input formats)
EXPECTED = {
    "evaluate": {"relevance_level", "max_retrieved", "judged_only", "intersection", "trec_eval_9", "qrels_format",
                 "run_format", "output", "measures", "per_query", "format"},
    "compare": {"relevance_level", "max_retrieved", "judged_only", "trec_eval_9", "qrels_format", "run_format",
                "output", "measures", "per_query", "format"},
    "report": {"relevance_level", "max_retrieved", "judged_only", "trec_eval_9", "qrels_format", "run_format",
               "output", "measures", "per_query"},
    "search": {"relevance_level", "output", "measures", "format"},
    "crosscheck": {"relevance_level", "max_retrieved", "judged_only", "intersection", "trec_eval_9", "qrels_format",
                   "run_format", "output", "measures", "format"},
    "validate": {"relevance_level", "max_retrieved", "judged_only", "intersection", "trec_eval_9", "qrels_format",
                 "run_format", "output", "measures", "format"},
}


def _command(name: str) -> click.Command:
    command = LazyGroup().get_command(click.Context(click.Command("x")), name)
    assert command is not None
    return command


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_same_thing_has_the_same_flags_in_every_command(name):
    assert name in commands()
    found = set()
    for param in _command(name).params:
        if not isinstance(param, click.Option):
            continue
        flags = set(param.opts) | set(param.secondary_opts)
        if FORMAT_FLAGS <= flags:
            found.add("format")
        elif param.name in SPELLINGS or "--format" in flags:
            assert flags == SPELLINGS.get(param.name, FORMAT_FLAGS), (name, param.name, flags)
            found.add(param.name)
    assert found == EXPECTED[name]


def test_level_and_its_older_spelling_give_the_same_numbers():
    for command in (["compare"], []):  # report takes compare's options (the test above)
        new = invoke(*command, "-l", "2", QRELS, BM25, HYBRID)
        old = invoke(*command, "--relevance-level", "2", QRELS, BM25, HYBRID)
        longer = invoke(*command, "--level", "2", QRELS, BM25, HYBRID)
        assert new.exit_code == 0, new.stderr
        assert new.stdout == old.stdout == longer.stdout
        assert new.stdout != invoke(*command, QRELS, BM25, HYBRID).stdout  # the level was applied


def test_compare_writes_to_a_file_with_o_and_refuses_to_replace_it(tmp_path):
    out = tmp_path / "table.md"
    printed = invoke("compare", "-f", "markdown", QRELS, BM25, HYBRID)
    written = invoke("compare", "--format", "markdown", "-o", str(out), QRELS, BM25, HYBRID)
    assert written.exit_code == 0 and written.stdout == ""
    assert out.read_text(encoding="utf-8") == printed.stdout
    again = invoke("compare", "-o", str(out), QRELS, BM25, HYBRID)
    assert again.exit_code == 2
    assert again.stderr == f"Error: {out} already exists; use --force to overwrite it\n"


def test_compare_takes_the_trec_eval_9_conventions_as_evaluate_does(tmp_path):
    # two documents whose scores differ only beyond float32 precision: trec_eval 9 ties them, and
    # the doc id decides (d2 before d1); trec_eval 10 ranks d1 first
    qrels, a, b = tmp_path / "q.txt", tmp_path / "a.txt", tmp_path / "b.txt"
    qrels.write_text("1 0 d1 1\n2 0 x 1\n")
    a.write_text("1 Q0 d1 1 1.0000000001 a\n1 Q0 d2 2 1.0 a\n2 Q0 x 1 1 a\n")
    b.write_text("1 Q0 d1 1 2 b\n1 Q0 d2 2 1 b\n2 Q0 x 1 1 b\n")
    ten = json.loads(invoke("compare", "--no-primary", "-m", "RR", "-f", "json", str(qrels), str(a), str(b)).stdout)
    nine = json.loads(invoke("compare", "--no-primary", "-m", "RR", "-f", "json", "--trec-eval-9", str(qrels), str(a),
                             str(b)).stdout)
    # run a: RR 1 on both queries under trec_eval 10; under trec_eval 9 query 1 has RR 1/2: mean 0.75
    assert ten["means"]["a"]["RR"] == 1.0
    assert nine["means"]["a"]["RR"] == 0.75
    assert ten["means"]["b"]["RR"] == nine["means"]["b"]["RR"] == 1.0
    evaluated = invoke("--trec-eval-9", "-m", "recip_rank", "--format", "trec", str(qrels), str(a)).stdout
    assert evaluated.splitlines()[-1].split() == ["recip_rank", "all", "0.7500"]


def test_crosscheck_and_validate_read_the_formats_they_are_told(tmp_path):
    result = invoke("crosscheck", "--qrels-format", "json", "-m", "P@5", QRELS, BM25)
    assert result.exit_code == 1 and "Error:" in result.stderr  # a TREC file read as JSON is refused
    assert invoke("crosscheck", "--qrels-format", "trec", "--run-format", "trec", "-m", "P@5", "-f", "json",
                  QRELS, BM25).exit_code == 0
