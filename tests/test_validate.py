"""`validate` against trec_eval's expected files (v10 and v9.0.8), ir-measures output and JSON."""

from __future__ import annotations

import json

import pytest
from conftest import invoke, reference_path

from trec_rag_eval.checks.validate import read_reference
from trec_rag_eval.io.reference import printed_tolerance


def test_printed_tolerance_is_half_the_last_digit() -> None:
    assert printed_tolerance("0.1234") == pytest.approx(5e-5)
    assert printed_tolerance("561") == pytest.approx(0.5)
    assert printed_tolerance("1e-05") == pytest.approx(5e-6)


def test_trec_eval_v10_output_validates() -> None:
    result = invoke("validate", reference_path("qrels.test"), reference_path("results.test"),
                    reference_path("out.test.aq"))
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1] == "Verdict: OK: 383 agree, 0 agree under a known convention, 0 differ"


def test_trec_eval_9_output_names_the_iprec_convention() -> None:
    result = invoke("validate", reference_path("qrels.test"), reference_path("results.test"),
                    reference_path("v9.0.8_expected/out.test.aq"))
    assert result.exit_code == 0
    assert "convention iprec_at_recall_0.60 302: reference 0.142, ours 0.1528239203" in result.stdout
    assert result.stdout.splitlines()[-1] == "Verdict: OK: 357 agree, 6 agree under a known convention, 0 differ"


def test_a_changed_value_fails_with_its_line(tmp_path) -> None:
    lines = open(reference_path("out.test")).read().splitlines()
    # out.test line 6 is map: 0.1785 -> 0.1790 (beyond +/-0.00005)
    assert lines[5].startswith("map")
    lines[5] = lines[5].replace("0.1785", "0.1790")
    path = tmp_path / "changed.txt"
    path.write_text("\n".join(lines) + "\n")
    result = invoke("validate", reference_path("qrels.test"), reference_path("results.test"), str(path))
    assert result.exit_code == 1
    # ours is trec_eval's 0.1785 (out.test) at full precision
    assert "  DIFFER     map all: reference 0.179, ours 0.17854" in result.stdout
    assert "allowed +/-5e-05 (line 6)" in result.stdout
    assert result.stdout.splitlines()[-1] == "Verdict: FAILED: 28 agree, 0 agree under a known convention, 1 differ"


def test_ir_measures_output_and_json(tmp_path) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = list(ir_measures.read_trec_qrels(reference_path("qrels.test")))
    run = list(ir_measures.read_trec_run(reference_path("results.test")))
    measures = [ir_measures.parse_measure(m) for m in ("P@10", "nDCG@10", "AP", "RR", "R@100")]
    rows = [f"{m.query_id}\t{m.measure}\t{m.value:.4f}" for m in ir_measures.iter_calc(measures, qrels, run)]
    rows += [f"all\t{m}\t{v:.4f}" for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()]
    tsv = tmp_path / "irm.tsv"
    tsv.write_text("\n".join(rows) + "\n")
    assert read_reference(str(tsv))[0] == "ir-measures"
    result = invoke("validate", reference_path("qrels.test"), reference_path("results.test"), str(tsv))
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "Verdict: OK: 20 agree, 0 agree under a known convention, 0 differ"
    # pytrec_eval's shape: {query_id: {trec name: value}}, full precision
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: r for d, r in docs.items()} for q, docs in _dict(qrels, "relevance").items()}, {"map", "ndcg_cut"})
    scores = evaluator.evaluate(_dict(run, "score"))
    path = tmp_path / "pytrec.json"
    path.write_text(json.dumps(scores))
    result = invoke("validate", reference_path("qrels.test"), reference_path("results.test"), str(path))
    assert result.exit_code == 0, result.stdout
    assert "Verdict: OK: 30 agree" in result.stdout


def _dict(rows, field: str) -> dict:
    out: dict = {}
    for row in rows:
        out.setdefault(row.query_id, {})[row.doc_id] = getattr(row, field)
    return out


def test_bad_reference_line_is_named(tmp_path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("map\tall\t0.1785\nP_5 all\n")
    result = invoke("validate", reference_path("qrels.test"), reference_path("results.test"), str(path))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {path}:2: expected 3 columns (measure query value or query measure value), "
                             "got 2: 'P_5 all'\n")
