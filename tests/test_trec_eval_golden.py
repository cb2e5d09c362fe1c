"""Byte-for-byte agreement with trec_eval 10 on our own golden files (tests/golden/).

Each ``trec_eval`` line of tests/golden/commands.txt is run here as ``trec-rag-eval --format trec`` with
the same arguments, and must print exactly the file trec_eval 10 printed for it (tests/golden/expected/,
written by regenerate.py with trec_eval built from usnistgov/trec_eval f4253652c8efd0d86ddffd0d163cc0a0f813111a).
The inputs are written by make_inputs.py from a seed, so these checks run on any clone; the same
checks on trec_eval's own test data are in test_trec_eval_reference.py, where ../shared is present.
"""

from __future__ import annotations

import os

import pytest
from conftest import GOLDEN, golden_module, golden_path, invoke

REGENERATE = golden_module("regenerate")
CASES = REGENERATE.read_commands()
TREC_EVAL_10 = [case for case in CASES if case.tool == "trec_eval"]


def _resolved(args: tuple[str, ...]) -> list[str]:
    inputs = os.path.join(GOLDEN, "inputs")
    return [os.path.join(inputs, a) if os.path.isfile(os.path.join(inputs, a)) else a for a in args]


@pytest.mark.usefixtures("table_form")  # read and ranked as Python lists, then as polars/Arrow columns
@pytest.mark.parametrize("case", TREC_EVAL_10, ids=[f"{c.line}:{c.expected}" for c in TREC_EVAL_10])
def test_prints_the_bytes_trec_eval_printed(case):
    result = invoke("--format", "trec", *_resolved(case.args))
    assert result.exit_code == 0, result.stderr
    with open(golden_path(f"expected/{case.expected}"), encoding="utf-8", newline="") as handle:
        assert result.stdout == handle.read(), case.command


def test_the_golden_files_are_what_the_committed_scripts_make():
    # every input is the seeded generator's output, every expected file comes from a command line,
    # and every command line names files that exist
    assert golden_module("make_inputs").main(["--check"]) == 0
    named = {case.expected for case in CASES}
    on_disk = {os.path.relpath(os.path.join(root, f), os.path.join(GOLDEN, "expected"))
               for root, _, files in os.walk(os.path.join(GOLDEN, "expected")) for f in files}
    assert on_disk == named
    for case in CASES:
        assert all(os.path.isfile(golden_path(name)) for name in case.args[-2:]), case.command
    # the conventions the cases must cover, each on at least one trec_eval 10 line
    flags = " ".join(" ".join(case.args) for case in TREC_EVAL_10)
    for needed in ("-c", "-J", "-M", "-l", "-q", "-n", "-N", "all_trec", "official", "set", "relstring",
                   "iprec_at_recall", "ndcg.", "qrels.graded", "run.trunc", "run.ties.messy",
                   "qrels.binary.comments", "qrels.msmarco", "-R prefs", "-R qrels_prefs", "-R qrels_jg", "all_prefs",
                   "qrels_jg", "-Z", "prefs.mixed.comments", "qrels.groups.comments"):
        assert needed in flags, needed


def test_options_may_follow_the_files():
    qrels, run = golden_path("qrels.binary"), golden_path("run.ties")
    before = invoke("--format", "trec", "-m", "P.5", "-q", qrels, run)
    after = invoke(qrels, run, "-q", "-mP.5", "--format", "trec")
    assert before.exit_code == 0 and before.stdout == after.stdout
    # trec_eval's own P_5 of topic 10 (its default measures include P.5)
    with open(golden_path("expected/out.binary.q"), encoding="utf-8") as handle:
        line = next(line for line in handle if line.startswith("P_5 ") and "\t10\t" in line)
    assert line in after.stdout


def test_a_missing_query_scores_zero_and_is_named_on_stderr():
    # run.trunc lacks topics 10 and 302 (make_inputs.py): without -c they count, score 0, and are named
    result = invoke("--format", "trec", "-m", "P.10", "-q", golden_path("qrels.binary"), golden_path("run.trunc"))
    assert result.exit_code == 0, result.stderr
    assert "P_10                  \t302\t0.0000\n" in result.stdout
    assert "P_10                  \t10\t0.0000\n" in result.stdout
    assert "missing from the run" in result.stderr and "302" in result.stderr and "10" in result.stderr


def test_intersection_drops_missing_queries():
    # six qrels topics (2, 10, 301, 302, 303, 400), two of them missing from run.trunc
    result = invoke("--format", "trec", "-m", "num_q", "--intersection", golden_path("qrels.binary"),
                    golden_path("run.trunc"))
    assert result.stdout == "num_q                 \tall\t4\n"
