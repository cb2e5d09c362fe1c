"""`crosscheck` and `--crosscheck` on the golden files (tests/golden) report agreement."""

from __future__ import annotations

import re

import pytest
from conftest import golden_path, invoke

pytest.importorskip("ir_measures")


@pytest.mark.parametrize("qrels, run", [
    ("qrels.binary", "run.ties"),
    ("qrels.graded", "run.ties"),
    ("qrels.msmarco", "run.msmarco"),
    ("qrels.binary", "run.trunc"),
])
def test_crosscheck_command_agrees_on_golden_data(qrels: str, run: str) -> None:
    result = invoke("crosscheck", golden_path(qrels), golden_path(run))
    assert result.exit_code == 0, result.output
    assert "Verdict: OK" in result.stdout
    assert "DIFFER" not in result.stdout


def test_crosscheck_all_trec_names_the_iprec_convention() -> None:
    result = invoke("crosscheck", "-m", "all_trec", golden_path("qrels.binary"), golden_path("run.ties"))
    assert result.exit_code == 0, result.output
    # topic 302 has R = 77: p = 0.9 asks for lround(69.3) = 69 relevant documents (v10) but
    # floor(70.2) = 70 (trec_eval 9), and the precisions there differ (expected/v9/out.binary.aq: 0.0889,
    # expected/out.binary.aq: 0.0940)
    assert re.search(r"IPrec@0.9 .*\n.*floor\(p\*R \+ 0.9\).*\(302\)", result.stdout)
    assert re.search(r"RprecMult@0.2 +not supported by ir-measures", result.stdout)
    assert invoke("crosscheck", "--trec-eval-9", "-m", "iprec_at_recall", golden_path("qrels.binary"),
                  golden_path("run.ties")).stdout.count("agree     IPrec") == 11


def test_evaluate_crosscheck_flag_reports_agreement() -> None:
    result = invoke("--crosscheck", "-m", "P.5", "-m", "nDCG@10", golden_path("qrels.binary"),
                    golden_path("run.ties"))
    assert result.exit_code == 0, result.output
    assert "Verdict: OK" in result.output


def test_crosscheck_missing_queries_named() -> None:
    result = invoke("crosscheck", "-m", "NumRel", "-m", "AP", golden_path("qrels.binary"),
                    golden_path("run.trunc"))
    assert result.exit_code == 0
    # run.trunc lacks topics 10 and 302 (tests/golden/make_inputs.py)
    assert "ir-measures scores a query missing from the run 0" in result.stdout and "(10, 302)" in result.stdout


def test_missing_ir_measures_gives_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "ir_measures":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    result = invoke("crosscheck", golden_path("qrels.binary"), golden_path("run.ties"))
    assert result.exit_code == 1
    assert result.stderr == ("Error: this feature needs the package 'ir-measures': "
                             "pip install 'trec-rag-eval[crosscheck]'\n")


def test_a_real_difference_fails(tmp_path) -> None:
    import trec_rag_eval.checks.crosscheck as module
    from trec_rag_eval.checks.crosscheck import crosscheck_tables
    from trec_rag_eval.tables import Qrels, Run

    qrels = Qrels.from_dict({"1": {"a": 1, "b": 1}})
    run = Run.from_dict({"1": {"a": 2.0, "x": 1.0}})
    honest = crosscheck_tables(qrels, run, ["AP"])
    assert honest.ok
    # a deliberately wrong name mapping (AP compared with P@1) must be caught, with the query named
    original = module.ir_measures_object
    module.ir_measures_object = lambda ir_measures, m, *a: ir_measures.P @ 1
    try:
        report = crosscheck_tables(qrels, run, ["AP"])
    finally:
        module.ir_measures_object = original
    assert not report.ok
    assert report.verdicts[0].differing_queries == ["1"] and report.verdicts[0].max_difference == pytest.approx(0.5)
    assert "DIFFER" in report.render() and "Verdict: FAILED" in report.render()


def test_a_query_judged_only_negative_is_not_given_to_pytrec_eval(tmp_path) -> None:
    # pytrec_eval (trec_eval 9's code) crashes the process (SIGSEGV) on a query whose judgments are
    # all negative when bpref is asked with num_rel, map or Rprec; trec_eval 10 refuses such qrels
    # (exit 4). Run in a child process: a crash must show up as a failed test, not a dead pytest.
    import subprocess
    import sys
    from pathlib import Path

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 a -1\n2 0 a 1\n")
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n2 Q0 a 1 3 r\n")
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-m", "trec_rag_eval", "crosscheck", "-m", "bpref", "-m", "num_rel",
                           "-m", "map", "-m", "num_ret", str(qrels), str(run)],
                          cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    # query 1 is not compared, and the report says why; query 2 agrees
    assert "judgments are all negative" in done.stdout and "(1)" in done.stdout
    assert "DIFFER" not in done.stdout


def test_the_help_says_what_the_crosscheck_extra_adds_not_that_it_is_needed():
    # ir-measures is installed with the package (setup.cfg install_requires): the command runs without the extra
    text = invoke("crosscheck", "--help").output
    assert "Needs:" not in text
    assert "ir-measures comes with the package" in " ".join(text.split())
