"""Validate our scores against a reference scores file, e.g. the numbers behind a published table.

The file is read by ``io.reference_scores`` (trec_eval or ir-measures output, with or without per-query
values, or JSON). Measure names may be trec_eval's printed names (``P_5``, ``ndcg_cut_10``, ``set_F_2.0``) or
notation (``P@5``, ``nDCG@10``). A value differs when it is further from ours than the
reference's printed precision allows: half a unit of its last printed digit. When a difference
disappears under a known convention (trec_eval 9 / pytrec_eval: float32 scores and
floor(p*R + 0.9) for iprec; trec_eval 9 without -c: averages over the run's queries only), it is
reported as that convention, not as a failure.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from trec_rag_eval.core.settings import Settings, settings_of
from trec_rag_eval.errors import InputFormatError, MeasureSyntaxError, TrecRagEvalError, UsageError
from trec_rag_eval.io.reference_scores import SUMMARY, ReferenceValue, read_reference
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, Run

VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    # name: (what it means, the Settings fields it changes)
    "trec_eval_9": ("trec_eval 9 / pytrec_eval conventions (float32 scores, iprec at floor(p*R+0.9))",
                    {"trec_eval_9": True}),
    "intersection": ("averaged over the queries in both qrels and run (trec_eval 9 without -c, pytrec_eval)",
                     {"queries": "intersection"}),
    "trec_eval_9_intersection": ("trec_eval 9 conventions and averages over the run's queries",
                                 {"trec_eval_9": True, "queries": "intersection"}),
}


@dataclass
class Mismatch:
    measure: str
    query_id: str
    reference: float
    ours: float | None
    tolerance: float
    line: int | None
    convention: str | None = None


@shown_by("trec_rag_eval.render.results:register_validation_report")
@dataclass
class ValidationReport:
    """Every compared value; ``mismatches`` are failures, ``conventions`` are explained."""

    reference_path: str
    reference_format: str
    compared: int
    mismatches: list[Mismatch] = field(default_factory=list)
    conventions: list[Mismatch] = field(default_factory=list)
    not_compared: dict[str, str] = field(default_factory=dict)
    measures: list[str] = field(default_factory=list)
    """The measures asked (``measures=``, ``-m``): their values alone are compared; empty: every value."""
    left_out: int = 0
    """Values of the reference not compared because their measure was not asked."""

    @property
    def ok(self) -> bool:
        return not self.mismatches

    def render(self) -> str:
        """The ``validate`` command's lines (``render.validation``)."""
        return str(show(self, "text"))

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "reference": self.reference_path, "format": self.reference_format,
                "compared": self.compared, "mismatches": [m.__dict__ for m in self.mismatches],
                "conventions": [m.__dict__ for m in self.conventions], "not_compared": self.not_compared,
                "measures": self.measures or None, "left_out": self.left_out}


def read_reference_scores(path: str) -> tuple[str, list[ReferenceValue]]:
    """Read a reference scores file (``io.reference_scores``); a three-column file with no ``all`` row is
    trec_eval's when its first field is a measure name."""
    return read_reference(path, _is_measure)


def _is_measure(name: str) -> bool:
    try:
        resolve_name(name)
    except TrecRagEvalError:
        return False
    return True


def resolve_name(name: str) -> Measure:
    """A printed measure name, trec_eval's (``ndcg_cut_10``, ``set_F_2.0``) or notation (``nDCG@10``)."""
    from trec_rag_eval.measures.ir_notation import parse_notation
    from trec_rag_eval.measures.registry import FAMILIES, TREC_EVAL_FAMILIES
    from trec_rag_eval.measures.trec_syntax import parse_trec_measures

    if name in TREC_EVAL_FAMILIES and FAMILIES[name].kind not in ("int_cutoffs", "real_cutoffs"):
        return parse_trec_measures([name])[0]
    for family in sorted(TREC_EVAL_FAMILIES, key=len, reverse=True):
        if name.startswith(family + "_") and len(name) > len(family) + 1:
            measures = parse_trec_measures([f"{family}.{name[len(family) + 1:]}"])
            if len(measures) == 1:
                return measures[0]
    return parse_notation(name)


def validate_tables(
    qrels: Qrels,
    run: Run,
    reference_path: str,
    settings: Settings | None = None,
    measures: list[Measure] | None = None,
    **overrides: Any,
) -> ValidationReport:
    """Compare our scores with every value of the reference file, or with those of ``measures`` alone (each
    must be in the file), see the module docstring; ``settings`` as for ``evaluate``."""
    from trec_rag_eval.evaluation.evaluate import evaluate_tables

    if measures is not None and not measures:
        raise UsageError("measures= is empty: name the measures to compare, or leave it out to compare every value",
                         {"measures=": "measures"})
    path = os.fspath(reference_path)
    fmt, values = read_reference_scores(path)
    named: dict[str, Measure] = {}
    skipped: dict[str, str] = {}
    for ref in values:
        if ref.measure in named or ref.measure in skipped:
            continue
        try:
            named[ref.measure] = resolve_name(ref.measure)
        except (MeasureSyntaxError, TrecRagEvalError) as err:
            skipped[ref.measure] = f"unknown measure name ({str(err).splitlines()[0]})"
    left_out = 0
    if measures is not None:
        held = list(dict.fromkeys(named.values()))
        missing = [m for m in measures if m not in held]
        if missing:
            error = InputFormatError(path, None, f"no value of {', '.join(map(str, missing))} to compare (measures= "
                                                 f"asked for {'it' if len(missing) == 1 else 'them'}; the reference "
                                                 f"holds {', '.join(map(str, held)) or 'no known measure'})")
            error.parameters = {"measures=": "measures"}
            raise error
        left_out = sum(1 for ref in values if ref.measure in named and named[ref.measure] not in measures)
        named = {name: m for name, m in named.items() if m in measures}
        skipped = {}  # the measures not asked are not read: whether we know them does not matter
    measures_of = named
    wanted = list(dict.fromkeys(measures_of.values()))
    chosen = settings_of(settings, **overrides)
    ours = evaluate_tables(qrels, run, wanted, chosen)
    variants: dict[str, Any] = {}

    def lookup(evaluation: Any, measure: Measure, query_id: str) -> float | None:
        if query_id == SUMMARY:
            value = evaluation.summary.get(measure)
        elif query_id in evaluation.query_ids and measure in evaluation.values:
            value = evaluation.values[measure][evaluation.query_ids.index(query_id)]
        else:
            return None
        return None if value is None or isinstance(value, str) else float(value)

    if not measures_of:  # a verdict over nothing would read as agreement
        why = (f"no measure of the reference is known: {', '.join(quote(name, 40) for name in list(skipped)[:5])}"
               if skipped else "the reference holds no score (runid and relstring lines, nulls and "
               "strings are not scores)")
        raise InputFormatError(os.fspath(reference_path), None, f"nothing to compare: {why}")
    report = ValidationReport(path, fmt, 0, not_compared=skipped,
                              measures=[] if measures is None else [str(m) for m in measures], left_out=left_out)
    for ref in values:
        measure = measures_of.get(ref.measure)
        if measure is None:
            continue
        report.compared += 1
        value = lookup(ours, measure, ref.query_id)
        if value is not None and _close(value, ref.value, ref.tolerance):
            continue
        mismatch = Mismatch(ref.measure, ref.query_id, ref.value, value, ref.tolerance, ref.line)
        for key, (_, changes) in VARIANTS.items():
            if changes.get("trec_eval_9") and chosen.trec_eval_9:
                continue
            if key not in variants:
                try:
                    variants[key] = evaluate_tables(qrels, run, wanted, chosen.but(complete=False, **changes))
                except TrecRagEvalError:
                    variants[key] = None
            if variants[key] is None:
                continue
            alternative = lookup(variants[key], measure, ref.query_id)
            if alternative is not None and _close(alternative, ref.value, ref.tolerance):
                mismatch.convention = key
                break
        (report.conventions if mismatch.convention else report.mismatches).append(mismatch)
    return report


def _close(ours: float, reference: float, tolerance: float) -> bool:
    if math.isnan(ours) or math.isnan(reference):
        return math.isnan(ours) and math.isnan(reference)
    return abs(ours - reference) <= tolerance
