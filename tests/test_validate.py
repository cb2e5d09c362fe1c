"""`validate` against trec_eval's output (v10 and v9.0.8, on our golden files), ir-measures output and JSON."""

from __future__ import annotations

import json
import re

import pytest
from conftest import golden_path, invoke

from trec_rag_eval.checks.validate import read_reference_scores
from trec_rag_eval.io.reference_scores import printed_tolerance

QRELS, RUN = golden_path("qrels.binary"), golden_path("run.ties")
V10, V9 = golden_path("expected/out.binary.aq"), golden_path("expected/v9/out.binary.aq")


def _values(path: str) -> dict[tuple[str, str], str]:
    """(measure, query) -> the printed value of a trec_eval output file, but runid and relstring
    (a name and strings, not numbers: validate does not compare them)."""
    out = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            name, query, value = line.rstrip("\n").split("\t")
            if not name.startswith(("runid", "relstring")):
                out[name.strip(), query] = value
    return out


def test_printed_tolerance_is_half_the_last_digit() -> None:
    assert printed_tolerance("0.1234") == pytest.approx(5e-5)
    assert printed_tolerance("561") == pytest.approx(0.5)
    assert printed_tolerance("1e-05") == pytest.approx(5e-6)


def test_trec_eval_v10_output_validates() -> None:
    result = invoke("validate", QRELS, RUN, V10)
    assert result.exit_code == 0
    agree = len(_values(V10))  # every value trec_eval 10 printed (668 here)
    assert result.stdout.splitlines()[-1] == f"Verdict: OK: {agree} agree, 0 agree under a known convention, 0 differ"


def test_trec_eval_9_output_names_the_iprec_convention() -> None:
    result = invoke("validate", QRELS, RUN, V9)
    assert result.exit_code == 0
    # the values trec_eval 9.0.8 and 10 print differently on the same files: iprec_at_recall and 11pt_avg
    # only (recall level p as floor(p*R + 0.9) relevant documents, not lround(p*R)); all agree under that
    # known convention, every other value agrees plainly
    v9, v10 = _values(V9), _values(V10)
    changed = {key: value for key, value in v9.items() if v10[key] != value}
    assert changed and {name.split("_at_")[0] for name, _ in changed} == {"iprec", "11pt_avg"}
    for (name, query), value in changed.items():
        found = re.search(rf"  convention {re.escape(name)} {query}: reference {float(value):g}, ours (\S+),",
                          result.stdout)
        assert found, (name, query)
        assert f"{float(found.group(1)):.4f}" == v10[name, query]  # ours is trec_eval 10's value
    assert result.stdout.splitlines()[-1] == (f"Verdict: OK: {len(v9) - len(changed)} agree, {len(changed)} agree "
                                              "under a known convention, 0 differ")


def test_a_changed_value_fails_with_its_line(tmp_path) -> None:
    lines = open(golden_path("expected/out.binary")).read().splitlines()
    # out.binary line 6 is map; trec_eval 10 printed V, the changed file says V + 0.0005 (beyond +/-0.00005)
    assert lines[5].startswith("map")
    name, query, printed = lines[5].split("\t")
    changed = f"{float(printed) + 0.0005:.4f}"
    lines[5] = "\t".join([name, query, changed])
    path = tmp_path / "changed.txt"
    path.write_text("\n".join(lines) + "\n")
    result = invoke("validate", QRELS, RUN, str(path))
    assert result.exit_code == 1
    found = re.search(rf"  DIFFER     map all: reference {float(changed):g}, ours (\S+),", result.stdout)
    assert found and f"{float(found.group(1)):.4f}" == printed  # ours is trec_eval's value at full precision
    assert "allowed +/-5e-05 (line 6)" in result.stdout
    agree = len(_values(golden_path("expected/out.binary"))) - 1
    assert result.stdout.splitlines()[-1] == (f"Verdict: FAILED: {agree} agree, 0 agree under a known convention, "
                                              "1 differ")


def test_ir_measures_output_and_json(tmp_path) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels = list(ir_measures.read_trec_qrels(QRELS))
    six = tmp_path / "six_columns.txt"  # ir-measures' reader refuses the extra columns trec_eval ignores
    six.write_text("".join(" ".join(line.split()[:6]) + "\n" for line in open(RUN)))
    run = list(ir_measures.read_trec_run(str(six)))
    measures = [ir_measures.parse_measure(m) for m in ("P@10", "nDCG@10", "AP", "RR", "R@100")]
    rows = [f"{m.query_id}\t{m.measure}\t{m.value:.4f}" for m in ir_measures.iter_calc(measures, qrels, run)]
    rows += [f"all\t{m}\t{v:.4f}" for m, v in ir_measures.calc_aggregate(measures, qrels, run).items()]
    tsv = tmp_path / "irm.tsv"
    tsv.write_text("\n".join(rows) + "\n")
    assert read_reference_scores(str(tsv))[0] == "ir-measures"
    result = invoke("validate", QRELS, RUN, str(tsv))
    assert result.exit_code == 0, result.stdout
    assert result.stdout.splitlines()[-1] == (f"Verdict: OK: {len(rows)} agree, 0 agree under a known convention, "
                                              "0 differ")
    # pytrec_eval's shape: {query_id: {trec name: value}}, full precision
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {d: r for d, r in docs.items()} for q, docs in _dict(qrels, "relevance").items()}, {"map", "ndcg_cut"})
    scores = evaluator.evaluate(_dict(run, "score"))
    path = tmp_path / "pytrec.json"
    path.write_text(json.dumps(scores))
    result = invoke("validate", QRELS, RUN, str(path))
    assert result.exit_code == 0, result.stdout
    assert f"Verdict: OK: {sum(len(values) for values in scores.values())} agree" in result.stdout


def _dict(rows, field: str) -> dict:
    out: dict = {}
    for row in rows:
        out.setdefault(row.query_id, {})[row.doc_id] = getattr(row, field)
    return out


def test_bad_reference_line_is_named(tmp_path) -> None:
    path = tmp_path / "bad.txt"
    path.write_text("map\tall\t0.1785\nP_5 all\n")
    result = invoke("validate", QRELS, RUN, str(path))
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {path}:2: expected 3 columns (measure query value or query measure value), "
                             "got 2: 'P_5 all'\n")
