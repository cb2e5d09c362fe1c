"""The texts of the reports that are not measure tables (a cross-check, a validation, an LLM's calibration,
a fusion), pinned byte for byte on reports built here by hand: every expected line is worked out below from
the report's fields and the command's layout (column widths, 3, 4 or 6 decimals, plurals), not pasted
from an output. They are written by ``render/`` alone; the result types reach it through the renderer
registry, the command line calls it directly."""

from __future__ import annotations

import dataclasses
import importlib
import subprocess
import sys

import pytest

from trec_rag_eval import renderer_registry
from trec_rag_eval.checks.crosscheck import CrosscheckReport, Verdict
from trec_rag_eval.checks.validate import Mismatch, ValidationReport
from trec_rag_eval.fusion.fusion_result import Fusion
from trec_rag_eval.fusion.optimize import Fold, Setting, Tuning
from trec_rag_eval.llm.judging import CalibrationAgreement
from trec_rag_eval.tables import Run

# --- crosscheck -------------------------------------------------------------------------------------------
# The widest measure name is "RBP(p=0.8)" (10 characters, more than the floor of 7): each line is two spaces,
# the name padded to 10, two spaces, then the verdict padded to 10 ("agree     ", "DIFFER    "); a convention's
# lines are indented by the width + 4 = 14.
FAILED_REPORT = CrosscheckReport(
    verdicts=[
        Verdict("AP", "AP", "pytrec_eval", "agree", ours=0.25, theirs=0.25),
        Verdict("P@5", "P@5", "compat", "convention", max_difference=0.0125,
                conventions={"tie_order": ["q1"], "missing_zero": ["q2", "q3"]}, ours=0.4, theirs=0.3875),
        Verdict("nDCG@10", "nDCG@10", "pytrec_eval", "differ", reason="boom", max_difference=0.123456789,
                differing_queries=[f"q{i}" for i in range(1, 8)], ours=0.5, theirs=None),
        Verdict("R@5", "R@5", "pytrec_eval", "differ", max_difference=0.5, differing_queries=["q2"], ours=0.5,
                theirs=0.25),
        Verdict("RBP(p=0.8)", None, None, "unsupported", reason="no such measure in ir-measures"),
    ],
    num_queries=3, settings={"trec_eval_9": False, "tolerance": 1e-9}, ir_measures_version="0.3.7")

FAILED_TEXT = (
    "Cross-check against ir-measures 0.3.7 on 3 queries (trec_eval 10 mode, tolerance 1e-09)\n"  # 1e-9 as :g
    "  AP          agree     AP via pytrec_eval: mean 0.250000\n"
    # max |diff| with 3 significant digits; compat's tie sentence names its ideal ranking too
    "  P@5         agree     P@5 via compat, up to known conventions (max |diff| 0.0125):\n"
    "              - 1 query: the compat provider breaks score ties by doc_id ascending (and its ideal ranking's "
    "equal judgments by score, then qrels order); trec_eval by doc_id descending (q1)\n"
    "              - 2 queries: ir-measures scores a query missing from the run 0 for every measure "
    "(trec_eval -c keeps num_rel and num_q) (q2, q3)\n"
    # 6 significant digits: 0.123456789 -> 0.123457; 5 queries named, the other 2 counted; no mean: n/a
    "  nDCG@10     DIFFER    nDCG@10 via pytrec_eval: max |diff| 0.123457 in 7 queries "
    "(q1, q2, q3, q4, q5, ... 2 more); mean ours 0.500000 vs ir-measures n/a; boom\n"
    "  R@5         DIFFER    R@5 via pytrec_eval: max |diff| 0.5 in 1 query (q2); mean ours 0.500000 vs "
    "ir-measures 0.250000\n"
    "  RBP(p=0.8)  not supported by ir-measures (no such measure in ir-measures)\n"
    "Verdict: FAILED: 1 agree, 1 agree up to known conventions, 2 differ, 1 not supported\n"
)

# Names shorter than 7: the floor of 7 sets the width (indent of a convention's lines: 11)
OK_REPORT = CrosscheckReport(
    verdicts=[
        Verdict("AP", "AP", "pytrec_eval", "agree", ours=0.338869, theirs=0.338869),
        Verdict("RR", "RR", "msmarco", "convention", max_difference=1 / 3,
                conventions={"tie_order": [f"q{i}" for i in range(1, 7)]}, ours=0.5, theirs=0.5),
    ],
    num_queries=6, settings={"trec_eval_9": True, "tolerance": 1e-6}, ir_measures_version="0.3.7")

OK_TEXT = (
    "Cross-check against ir-measures 0.3.7 on 6 queries (trec_eval 9 mode, tolerance 1e-06)\n"
    "  AP       agree     AP via pytrec_eval: mean 0.338869\n"
    "  RR       agree     RR via msmarco, up to known conventions (max |diff| 0.333):\n"
    "           - 6 queries: the msmarco provider breaks score ties by doc_id ascending; trec_eval by doc_id "
    "descending (q1, q2, q3, q4, q5, ... 1 more)\n"
    "Verdict: OK: 1 agree, 1 agree up to known conventions, 0 differ, 0 not supported\n"
)


@pytest.mark.parametrize(("report", "expected"), [(FAILED_REPORT, FAILED_TEXT), (OK_REPORT, OK_TEXT)],
                         ids=["failed", "ok"])
def test_a_crosscheck_reads_as_the_command_prints_it(report, expected):
    assert report.render() == expected and str(report) == expected  # what Python users print
    from trec_rag_eval.render.crosscheck import crosscheck_text

    assert crosscheck_text(report) == expected  # what `crosscheck` prints


def test_the_notebook_table_of_a_crosscheck():
    # one row per measure; numbers of 6 decimals, max |diff| of 3 significant digits; the command's first
    # line as the caption, its verdict as the note; html.escape turns ' into &#x27;
    expected = (
        "<table><caption>Cross-check against ir-measures 0.3.7 on 6 queries (trec_eval 9 mode, tolerance 1e-06)"
        "</caption><thead><tr><th>measure</th><th>verdict</th><th>ir-measures</th><th>ours</th>"
        "<th>ir-measures mean</th><th>max |diff|</th><th>note</th></tr></thead><tbody>"
        "<tr><td>AP</td><td>agree</td><td>AP via pytrec_eval</td><td>0.338869</td><td>0.338869</td><td>0</td>"
        "<td></td></tr>"
        "<tr><td>RR</td><td>agree up to known conventions</td><td>RR via msmarco</td><td>0.500000</td>"
        "<td>0.500000</td><td>0.333</td><td>tie_order: 6 queries</td></tr>"
        "</tbody></table><p>Verdict: OK: 1 agree, 1 agree up to known conventions, 0 differ, 0 not supported</p>")
    assert OK_REPORT._repr_html_() == expected
    unsupported = CrosscheckReport([Verdict("RBP(p=0.8)", None, None, "unsupported", reason="not in it")], 1,
                                   {"trec_eval_9": False, "tolerance": 1e-9}, "0.3.7")
    assert ("<tr><td>RBP(p=0.8)</td><td>not supported by ir-measures</td><td></td><td>n/a</td><td>n/a</td>"
            "<td></td><td>not in it</td></tr>") in unsupported._repr_html_()


# --- validate ---------------------------------------------------------------------------------------------
def test_a_validation_reads_as_the_command_prints_it():
    report = ValidationReport(
        reference_path="published.txt", reference_format="trec_eval", compared=10,
        mismatches=[Mismatch("P_5", "q1", 0.4, 0.6, 0.00005, 12), Mismatch("map", "all", 0.3389, None, 0.00005, None)],
        conventions=[Mismatch("iprec_at_recall_0.10", "q2", 0.5, 1 / 3, 0.00005, 3, "trec_eval_9")],
        not_compared={"foo": "unknown measure"})
    expected = (
        "Validating against published.txt (trec_eval): 10 values compared\n"
        # the title padded to 10; the reference as read (repr), ours with 10 significant digits, the
        # tolerance with 2; the line when the reference has one
        "  DIFFER     P_5 q1: reference 0.4, ours 0.6, allowed +/-5e-05 (line 12)\n"
        "  DIFFER     map all: reference 0.3389, ours missing, allowed +/-5e-05\n"
        "  convention iprec_at_recall_0.10 q2: reference 0.5, ours 0.3333333333, allowed +/-5e-05 (line 3): "
        "matches under trec_eval 9 / pytrec_eval conventions (float32 scores, iprec at floor(p*R+0.9))\n"
        "  skipped    foo: unknown measure\n"
        "Verdict: FAILED: 7 agree, 1 agree under a known convention, 2 differ\n"  # 10 - 2 - 1 = 7
    )
    assert report.render() == expected
    from trec_rag_eval.render.validation import validation_text

    assert validation_text(report) == expected
    clean = ValidationReport("ref.json", "json", 3)
    assert clean.render() == "Validating against ref.json (json): 3 values compared\n" \
                             "Verdict: OK: 3 agree, 0 agree under a known convention, 0 differ\n"


# --- judge --calibrate ------------------------------------------------------------------------------------
def test_a_calibration_reads_as_the_command_prints_it():
    agreement = CalibrationAgreement(
        pairs=4, relevance_level=2, labels=(0, 1, 2, 3),
        confusion=((1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0)),
        kappa_binary=1.0, kappa_graded=0.5, raw_agreement=0.5, binary_agreement=1.0)
    # columns of width max(5, len(label) + 2) = 5, right-aligned; row heads "human N" padded to 7
    expected = (
        "Agreement with the human judgments on 4 calibration documents:\n"
        "  binary (relevant = grade >= 2): Cohen's kappa 1.000, same verdict 100%\n"
        "  graded (linear weights): Cohen's kappa 0.500, same grade 50%\n"
        "  confusion matrix (rows: human grade, columns: LLM grade):\n"
        "             0    1    2    3\n"  # 2 + 7 spaces, then 4 labels of width 5
        "  human 0    1    0    0    0\n"
        "  human 1    0    1    0    0\n"
        "  human 2    0    0    0    1\n"
        "  human 3    0    0    1    0\n"
    )
    assert agreement.render() == expected
    from trec_rag_eval.render.calibration import calibration_text

    assert calibration_text(agreement) == expected


def test_an_undefined_kappa_and_a_wide_label():
    # label 1000 widens every column to len("1000") + 2 = 6; "human 1000" is longer than 7 and is not cut
    agreement = CalibrationAgreement(
        pairs=3, relevance_level=1, labels=(0, 1000),
        confusion=((0, 1), (0, 2)), kappa_binary=None, kappa_graded=None, raw_agreement=2 / 3,
        binary_agreement=2 / 3)
    assert agreement.render() == (
        "Agreement with the human judgments on 3 calibration documents:\n"
        "  binary (relevant = grade >= 1): Cohen's kappa undefined (a single label), same verdict 67%\n"
        "  graded (linear weights): Cohen's kappa undefined (a single label), same grade 67%\n"
        "  confusion matrix (rows: human grade, columns: LLM grade):\n"
        "              0  1000\n"
        "  human 0     0     1\n"
        "  human 1000     0     2\n"
    )


# --- fuse -------------------------------------------------------------------------------------------------
RUN = Run({"q1": {"a": 0.5, "b": 0.25}, "q2": {"c": 1.0}})


def test_a_fusion_reads_as_the_command_prints_it():
    fusion = Fusion(RUN, ["bm25", "dense"], "rrf", "none", 60, None, None)
    assert str(fusion) == "Fused 2 runs (bm25, dense) with rrf k=60: 2 queries, 3 documents\n"
    from trec_rag_eval.render.fusion import fusion_text

    assert fusion_text(fusion) == str(fusion)


TUNING = Tuning("nDCG@10", "weights", 11,
                [Fold(1, 4, Setting(60, [0.7, 0.3]), 0.61234, 0.5), Fold(2, 4, Setting(60, [0.5, 0.5]), 0.6, 0.55556)],
                held_out=0.527775, training=0.60617, chosen=Setting(60, [0.7, 0.3]), chosen_score=0.6, n_queries=8,
                seed=42)
TUNED = Fusion(RUN, ["bm25", "dense"], "wsum", "minmax", None, [0.7, 0.3], 100, TUNING)


def test_a_tuned_fusion_reads_as_the_command_prints_it():
    # columns: fold 4 wide, queries 7, chosen 15 ("weights=0.7,0.3", left-aligned), training 8, held-out 8,
    # two spaces between them and before the first; a measure's value with 4 decimals
    assert str(TUNED) == (
        "Fused 2 runs (bm25, dense) with wsum norm=minmax weights=0.7,0.3 depth=100: 2 queries, 3 documents\n"
        "\n"
        "weights chosen on nDCG@10 by 2-fold cross-validation over 8 queries (seed 42), 11 settings tried:\n"
        "  fold  queries  chosen           training  held-out\n"
        "     1        4  weights=0.7,0.3    0.6123    0.5000\n"
        "     2        4  weights=0.5,0.5    0.6000    0.5556\n"
        "nDCG@10: 0.5278 held out (each query scored with the setting chosen without it), 0.6062 on the "
        "training folds\n"
        "written with weights=0.7,0.3, chosen on all 8 queries (nDCG@10 0.6000 on those same queries: optimistic)\n"
    )


def test_the_notebook_tables_of_a_fusion():
    fusion = Fusion(RUN, ["bm25", "dense"], "rrf", "none", 60, None, None)
    assert fusion._repr_html_() == (
        "<table><caption>rrf k=60 of bm25, dense (first 20 of 3 rows)</caption><thead><tr><th>query_id</th>"
        "<th>doc_id</th><th>rank</th><th>score</th></tr></thead><tbody>"
        "<tr><td>q1</td><td>a</td><td>1</td><td>0.5000</td></tr>"
        "<tr><td>q1</td><td>b</td><td>2</td><td>0.2500</td></tr>"
        "<tr><td>q2</td><td>c</td><td>1</td><td>1.0000</td></tr></tbody></table>")
    assert TUNED._repr_html_() == (
        "<table><caption>wsum norm=minmax weights=0.7,0.3 depth=100 of bm25, dense</caption><thead><tr>"
        "<th>fold</th><th>queries</th><th>chosen</th><th>training nDCG@10</th><th>held-out nDCG@10</th></tr>"
        "</thead><tbody>"
        "<tr><td>1</td><td>4</td><td>weights=0.7,0.3</td><td>0.6123</td><td>0.5000</td></tr>"
        "<tr><td>2</td><td>4</td><td>weights=0.5,0.5</td><td>0.6000</td><td>0.5556</td></tr>"
        "<tr><td>all</td><td>8</td><td>weights=0.7,0.3</td><td>0.6062</td><td>0.5278</td></tr>"
        "</tbody></table>")


# --- the registry -----------------------------------------------------------------------------------------
def test_a_renderer_is_registered_by_the_type_itself_not_by_its_name():
    # a name could be misspelt and never match, and str() would print something else in silence
    with pytest.raises(TypeError, match="register_renderer takes the result type itself"):
        renderer_registry.register_renderer("trec_rag_eval.fusion.fusion_result.Fusion", "text", str)


def _ways_asked() -> list[tuple[str, str, str]]:
    """(module, class, way) of every ``show(self, way)`` a class of the package makes."""
    import ast
    from pathlib import Path

    package = Path(renderer_registry.__file__).parent
    asked = []
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                for call in ast.walk(node):
                    if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "show"
                            and len(call.args) >= 2 and isinstance(call.args[1], ast.Constant)):
                        asked.append((module, node.name, call.args[1].value))
    return sorted(set(asked))


def test_every_result_type_has_a_renderer_for_each_way_it_asks():
    asked = _ways_asked()
    assert len({(module, name) for module, name, _ in asked}) >= 10  # every result type of the package
    for module, name, way in asked:
        cls = getattr(importlib.import_module(module), name)
        assert renderer_registry.renderer_for(cls, way) is not None, (module, name, way)


def test_a_type_nobody_registered_is_an_error_not_its_repr():
    @dataclasses.dataclass
    class Unregistered:
        value: int = 1

        def __str__(self) -> str:
            return str(renderer_registry.show(self, "text"))

    with pytest.raises(TypeError, match="Unregistered cannot be shown as 'text': no renderer is registered"):
        str(Unregistered())


def test_a_misspelt_registrar_fails_the_first_time_a_value_is_shown():
    @renderer_registry.shown_by("trec_rag_eval.render.results:register_evaluatoin")
    @dataclasses.dataclass
    class Misspelt:
        def __str__(self) -> str:
            return str(renderer_registry.show(self, "text"))

    with pytest.raises(AttributeError, match="register_evaluatoin"):
        str(Misspelt())


def test_showing_an_evaluation_loads_no_other_results_renderers():
    # the registrar of each type is called for that type alone: an evaluation's table needs no scipy
    script = ("import sys, trec_rag_eval as tre\n"
              "e = tre.evaluate({'1': {'a': 1}}, {'1': {'a': 1.0}}, ['P@1'])\n"
              "str(e), e._repr_html_()\n"
              "others = ('trec_rag_eval.compare', 'trec_rag_eval.engine', 'trec_rag_eval.checks')\n"
              "print(sorted(m for m in sys.modules if m in ('scipy', 'polars') or m.startswith(others)))\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout == "[]\n"


def test_crosscheck_json_writes_a_mean_with_no_value_as_null():
    # a measure whose mean is NaN on our side (trec_eval's -nan) was written NaN, which is no JSON: every data
    # format of ours writes no value as null
    import json
    import math

    from trec_rag_eval.render.crosscheck import crosscheck_json

    nan_report = CrosscheckReport([Verdict("P@5", "P@5", "pytrec_eval", "differ", max_difference=math.nan,
                                           ours=math.nan, theirs=0.5)], 1, {}, "0.3.1")

    def refuse(constant):
        raise ValueError(constant)

    written = json.loads("".join(crosscheck_json([("run.txt", nan_report)])), parse_constant=refuse)
    assert written["verdicts"][0]["ours"] is None and written["verdicts"][0]["max_difference"] is None
    assert written["verdicts"][0]["theirs"] == 0.5
