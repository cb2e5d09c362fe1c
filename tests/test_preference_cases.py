"""Every measure of ``all_prefs`` and ``qrels_jg`` against trec_eval 10 on seeded random judgments.

``tests/golden/generated/*.json`` hold 60 cases each: preference files (``-R prefs``, and qrels read as
preferences, ``-R qrels_prefs``) and judgment-group qrels (``-R qrels_jg``) with their runs, drawn from a seed
by ``tests/golden/preference_cases.py``, with trec_eval 10's ``-q`` output on each (written by that script with
trec_eval built from usnistgov/trec_eval f4253652c8efd0d86ddffd0d163cc0a0f813111a). The first case of each
file runs by default, the others with ``-m slow``.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import GOLDEN, first_by_default, golden_module, golden_path, invoke

CASES = {kind: json.loads(open(os.path.join(GOLDEN, "generated", f"{kind}.json"), encoding="utf-8").read())
         for kind in ("prefs", "qrels_jg")}


def _print_as_trec_eval(tmp_path, case: dict) -> None:
    judgments, run = tmp_path / "judgments", tmp_path / "run"
    judgments.write_text(case["judgments"], encoding="utf-8")
    run.write_text(case["run"], encoding="utf-8")
    result = invoke("--format", "trec", *case["args"], str(judgments), str(run))
    assert result.exit_code == 0, result.stderr
    assert result.stdout == case["expected"], " ".join(case["args"])


@pytest.mark.usefixtures("table_form")  # read and ranked as Python lists, then as polars/Arrow columns
@pytest.mark.parametrize("number", first_by_default(range(len(CASES["prefs"]))))
def test_every_preference_measure_prints_what_trec_eval_printed(tmp_path, number):
    _print_as_trec_eval(tmp_path, CASES["prefs"][number])


@pytest.mark.usefixtures("table_form")
@pytest.mark.parametrize("number", first_by_default(range(len(CASES["qrels_jg"]))))
def test_every_judgment_group_measure_prints_what_trec_eval_printed(tmp_path, number):
    _print_as_trec_eval(tmp_path, CASES["qrels_jg"][number])


def test_the_cases_are_what_the_seed_draws_and_reach_every_rule():
    assert golden_module("preference_cases").main(["--check"]) == 0
    prefs, groups = CASES["prefs"], CASES["qrels_jg"]
    flags = [" ".join(case["args"]) for case in prefs + groups]
    for needed in ("-c", "-M", "-R qrels_prefs", "-R prefs"):
        assert any(needed in text for text in flags), needed
    assert any("-J" in text for text in flags) and any("-l 2" in text for text in flags)

    def values(case: dict, name: str) -> list[str]:
        return [line.split("\t")[2] for line in case["expected"].splitlines()
                if line.split("\t")[0].strip() == name and line.split("\t")[1] != "all"]

    # no measure is 0 throughout: each of them is compared on values that say something
    for name in ("prefs_num_prefs_ful_ret", "prefs_pair", "prefs_avgjg_Rnonrel", "prefs_avgjg_Rnonrel_ret",
                 "prefs_pair_ret", "prefs_simp_imp", "prefs_avgjg_imp"):
        assert any(v not in ("0", "0.0000") for case in prefs for v in values(case, name)), name
    for name in ("map_avgjg", "P_avgjg_5", "Rprec_mult_avgjg_1.00"):
        assert any(v != "0.0000" for case in groups for v in values(case, name)), name
    # groups of several subgroups (made transitive) and several groups on one query (prefs_pair)
    subgroups = [{tuple(line.split()[:3]) for line in case["judgments"].splitlines()} for case in prefs]
    assert any(len({(q, g) for q, g, _ in lines}) < len(lines) for lines in subgroups)


@pytest.mark.slow  # starts a local Dask cluster
@pytest.mark.parametrize(("options", "inputs", "expected"), [
    (["-m", "all_prefs", "-q", "-R", "prefs"], ["prefs.mixed", "run.ties"], "out.prefs.mixed"),
    (["-m", "qrels_jg", "-q", "-R", "qrels_jg"], ["qrels.groups", "run.ties"], "out.groups"),
])
def test_a_cluster_prints_the_same_bytes(options, inputs, expected):
    result = invoke("--cluster", "local:2", *options, *(golden_path(name) for name in inputs))
    assert result.exit_code == 0, result.stderr
    with open(golden_path(f"expected/{expected}"), encoding="utf-8") as handle:
        assert result.stdout == handle.read()
