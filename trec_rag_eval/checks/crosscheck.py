"""Cross-check our values against ir-measures on the same qrels and run.

For every requested measure that ir-measures supports, every (query, measure) value and every
aggregate is compared. A difference is a failure unless one of the known conventions explains
it, which is shown by recomputing our value under that convention and finding ir-measures'
number exactly:

* ``float32``: pytrec_eval (trec_eval 9.0.x) keeps run scores as 32-bit floats;
* ``iprec9``: trec_eval 9 cuts iprec_at_recall at floor(p*R + 0.9), v10 at lround(p*R);
* ``tie_order``: the msmarco and judged providers break score ties by doc_id ascending;
* ``missing_zero``: ir-measures scores a query missing from the run 0 for every measure
  (trec_eval -c gives num_rel its real value and num_q 1);
* ``negative_judged``: ir-measures' Judged counts a negative judgment as a judgment;
* ``float64``: in trec_eval 9 mode our scores are rounded to float32, the other providers
  read doubles;
* ``all_negative``: a query whose judgments are all negative is kept from pytrec_eval, whose
  trec_eval 9 code crashes the process on it (or reuses another query's data); trec_eval 10
  refuses such qrels. We score it with R = 0 (docs/trec_eval_conventions.md §1.1); it is not compared;
* ``all_relevant``: ir-measures' Accuracy divides by zero on a query whose top k is all relevant, so the
  query is not asked of it (ours is 1);
* ``unretrieved_first``: compat's ideal ranking orders equal judgments by run score, unretrieved documents
  at 0, so above retrieved ones scored 0 or less (ours puts unretrieved documents last).

cwl_eval reads tied documents in the order they come, so every provider is handed the run in trec_eval's
ranking order; compat's ties are checked on its side (it is asked again with the ties broken our way).

ir-measures is imported lazily; without it ``MissingDependencyError`` names the extra.
"""

from __future__ import annotations

import contextlib
import io
import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from trec_rag_eval.core.settings import Settings, settings_of
from trec_rag_eval.errors import MissingDependencyError, UsageError
from trec_rag_eval.measures.cwl import CWL_DEPTH
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.syntax import is_number
from trec_rag_eval.tables import Qrels, Run, per_document

CONVENTIONS: dict[str, str] = {
    "float32": "pytrec_eval keeps run scores as 32-bit floats (trec_eval 9): scores equal at float "
               "precision tie and doc_id decides; trec_eval 9 mode matches it",
    "iprec9": "trec_eval 9 (pytrec_eval) cuts iprec_at_recall at floor(p*R + 0.9), v10 at lround(p*R); "
              "trec_eval 9 mode matches it",
    "tie_order": "the {provider} provider breaks score ties by doc_id ascending{extra}; trec_eval by doc_id descending",
    "missing_zero": "ir-measures scores a query missing from the run 0 for every measure "
                    "(trec_eval -c keeps num_rel and num_q)",
    "negative_judged": "ir-measures' Judged counts a negative judgment (-1, unjudged in the pool) as judged",
    "float64": "trec_eval 9 mode rounds our scores to float32; the {provider} provider reads doubles",
    "all_relevant": "every document of the query's top k is relevant: ir-measures' Accuracy divides by zero there "
                    "(no non-relevant document), so it is not asked; here no pair is misordered and the value is 1",
    "unretrieved_first": "compat orders its ideal ranking's equal judgments by run score, unretrieved documents "
                         "scoring 0: above retrieved ones scored 0 or less; here unretrieved documents come last",
    "no_subtopic": "no subtopic of the query has a relevant document: ndeval divides 0 by 0 (NaN) for nNRBP, "
                   "here the value is 0 as for every other measure",
    "cwl_depth": "cwl_eval reads the ranking to rank 1000 and spreads RBP's weights over those ranks (rank 1 weighs "
                 "(1-p)/(1-p^1000)); trec_eval's RBP weighs rank 1 (1-p), at any depth",
    "all_negative": "the query's judgments are all negative: pytrec_eval crashes on such a query (trec_eval 10 "
                    "refuses it), so it is not compared",
}

# the tolerance each provider's printed precision allows (gdeval.pl prints %.5f)
_PROVIDER_TOLERANCE = {"gdeval": 5e-6 + 1e-12}


@dataclass
class Verdict:
    """The comparison of one measure: ``status`` is agree, convention, differ or unsupported."""

    measure: str
    ir_measures: str | None
    provider: str | None
    status: str
    reason: str = ""
    max_difference: float = 0.0
    differing_queries: list[str] = field(default_factory=list)
    conventions: dict[str, list[str]] = field(default_factory=dict)
    ours: float | None = None
    theirs: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@shown_by("trec_rag_eval.render.results:register_crosscheck_report")
@dataclass
class CrosscheckReport:
    """Verdicts per measure, in the order asked; ``ok`` is False when any measure differs."""

    verdicts: list[Verdict]
    num_queries: int
    settings: dict[str, Any]
    ir_measures_version: str

    @property
    def ok(self) -> bool:
        return all(v.status != "differ" for v in self.verdicts)

    def render(self) -> str:
        """The ``crosscheck`` command's lines (``render.crosscheck``)."""
        return str(show(self, "text"))

    def __str__(self) -> str:
        """The ``crosscheck`` command's lines."""
        return self.render()

    def _repr_html_(self) -> str:
        return str(show(self, "html"))

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "num_queries": self.num_queries, "settings": self.settings,
                "ir_measures_version": self.ir_measures_version, "verdicts": [v.to_dict() for v in self.verdicts]}


def _import_ir_measures() -> Any:
    try:
        import ir_measures
    except ImportError:  # pragma: no cover - exercised by monkeypatching in tests
        raise MissingDependencyError("ir-measures", "crosscheck") from None
    return ir_measures


def ir_measures_name(measure: Measure, relevance_level: int = 1, judged_only: bool = False) -> tuple[str | None, str]:
    """The ir-measures notation of one of our measures, or (None, why not): its registry entry says
    (``Family.ir_measures``)."""
    spec = measure.spec.ir_measures
    if spec is None:
        return None, "no such measure in ir-measures"
    return spec.name_of(measure, measure.spec, relevance_level, judged_only)


def ir_measures_object(ir_measures: Any, measure: Measure, relevance_level: int = 1, judged_only: bool = False) -> Any:
    """ir-measures' measure object for one of ours (``ir_measures_name`` says it in its notation), built from
    its registry and the parameters' values, never through its parser of names: that parser refuses negative
    values (``RBP(p=-0.1)``) and uses ``ast.Num``, which Python 3.14 removed."""
    spec = measure.spec.ir_measures
    assert spec is not None
    args, _ = spec.arguments_of(measure, measure.spec, relevance_level, judged_only)
    assert args is not None
    base = ir_measures.measures.registry[spec.name]
    params = {(base.AT_PARAM if key == "@" else key): value for key, value in args}
    return base(**params)


def _tie_ascending(run: Run) -> Run:
    """The same run with ties broken by doc_id ascending (msmarco / judged providers): each
    document's score becomes minus its position under (score desc, doc_id asc)."""
    frame = (run.frame.sort(["query_id", "score", "doc_id"], descending=[False, True, False])
             .with_columns((-pl.int_range(pl.len()).over("query_id")).cast(pl.Float64).alias("score")))
    return Run(frame, run.run_tag, run.source, empty_queries=run.empty_queries, checked=True)


def _float32(run: Run) -> Run:
    return Run(run.frame.with_columns(pl.col("score").cast(pl.Float32).cast(pl.Float64)), run.run_tag, run.source,
               empty_queries=run.empty_queries, checked=True)


def _truncate(run: Run, max_retrieved: int) -> Run:
    frame = (run.frame.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
             .filter(pl.int_range(pl.len()).over("query_id") < max_retrieved))
    return Run(frame, run.run_tag, run.source, empty_queries=run.empty_queries, checked=True)


def _same(a: float, b: float, tolerance: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= tolerance


DEFAULT_MEASURES = (
    "P@5", "P@10", "P(rel=2)@5", "R@100", "AP", "AP@100", "RR", "RR@10", "nDCG", "nDCG@10",
    "nDCG(dcg='exp-log2')@10", "nDCG(judged_only=True)", "Rprec", "Bpref", "infAP", "Success@5", "SetP", "SetR",
    "SetF", "SetF(beta=2.0)", "SetAP", "IPrec@0.5", "NumQ", "NumRel", "NumRet", "NumRelRet", "Judged@10",
    "ERR@20", "F1@5", "HitRate@5", "RBP(rel=1)", "Compat", "Accuracy", "SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10",
    "NERR9(max_rel=3)@10", "NERR10(max_rel=3)", "NERR11(max_rel=3)", "INST(max_rel=3)", "INSQ(max_rel=3)",
    "BPM(max_rel=3)@10",
)
"""What ``crosscheck`` compares when no measure is asked for: every measure ir-measures can compute
in its several providers, with parameters (rel, judged_only, gains), plus the RAG names."""


def crosscheck_tables(
    qrels: Qrels,
    run: Run,
    measures: list[str] | list[Measure] | None = None,
    settings: Settings | None = None,
    *,
    tolerance: float = 1e-9,
    doc_map: Any = None,
    **overrides: Any,
) -> CrosscheckReport:
    """Compare our per-query values and aggregates with ir-measures' (see the module docstring).

    ``doc_map`` maps the run's chunk ids to documents first (see ``io.chunks``), so both sides score
    the same collapsed run.

    ``settings`` as for ``evaluate``; ir-measures follows the relevance level, -J, -M (the run is cut
    to its top documents for it) and the query set. It has no collection size (``num_docs``) and no
    -c recount of num_rel, so both sides are computed without them."""
    if not is_number(tolerance) or not tolerance >= 0:  # NaN too: every value would "differ"
        raise UsageError(f"tolerance must be a number >= 0, got {tolerance!r}")
    ir_measures = _import_ir_measures()
    from trec_rag_eval.evaluation.evaluate import evaluate_tables
    from trec_rag_eval.measures.requests import resolve_measures

    chosen = settings_of(settings, **overrides)
    resolved = [m for m in resolve_measures(list(DEFAULT_MEASURES) if measures is None else measures)
                if m.spec.value_type != "str"]
    if doc_map is not None:
        from trec_rag_eval.io.chunk_collapse import collapse_run

        run, _ = collapse_run(run, doc_map, qrels)
    if chosen.max_retrieved is not None:
        run = _truncate(run, chosen.max_retrieved)  # ir-measures has no -M: give it the same top documents
    base = chosen.but(max_retrieved=None, complete=False, num_docs=0)
    trec_eval_10 = base.but(trec_eval_9=False)
    ours = evaluate_tables(qrels, run, resolved, base)
    variants: dict[str, Any] = {}

    def variant(name: str) -> Any:
        if name not in variants:
            if name == "float32":
                variants[name] = evaluate_tables(qrels, _float32(run), resolved, trec_eval_10)
            elif name == "iprec9":
                variants[name] = evaluate_tables(qrels, run, resolved, base.but(trec_eval_9=True))
            elif name == "tie_order":
                variants[name] = evaluate_tables(qrels, _tie_ascending(run), resolved, trec_eval_10)
            elif name == "float64":
                variants[name] = evaluate_tables(qrels, run, resolved, trec_eval_10)
            elif name == "negative_judged":
                variants[name] = evaluate_tables(_judged_negative(qrels), run, resolved, base)
            elif name == "tie_order+negative_judged":
                variants[name] = evaluate_tables(_judged_negative(qrels), _tie_ascending(run), resolved, trec_eval_10)
            elif name == "cwl_depth":
                variants[name] = evaluate_tables(qrels, _truncate(run, CWL_DEPTH), resolved, base)
        return variants[name]

    # which ir-measures measure and provider stands for each of ours
    targets: dict[Measure, Any] = {}
    written: dict[Measure, str] = {}
    verdicts: dict[Measure, Verdict] = {}
    for m in resolved:
        name, why = ir_measures_name(m, chosen.relevance_level, chosen.judged_only)
        if name is None:
            verdicts[m] = Verdict(str(m), None, None, "unsupported", why)
            continue
        theirs = ir_measures_object(ir_measures, m, chosen.relevance_level, chosen.judged_only)
        provider = next((p for p in ir_measures.DefaultPipeline.providers
                         if p.is_available() and _supports(p, theirs)), None)
        if provider is None:
            verdicts[m] = Verdict(str(m), name, None, "unsupported", _no_provider(ir_measures, theirs))
            continue
        if provider.NAME == "gdeval" and not all(q.isdigit() for q in ours.query_ids):
            verdicts[m] = Verdict(str(m), name, "gdeval", "unsupported", "gdeval.pl needs numeric query ids")
            continue
        targets[m] = (theirs, provider)
        written[m] = name  # every parameter written, ir_measures' defaults too (its repr leaves them out)

    # intent-aware qrels: pyndeval reads every subtopic (the iteration); the others one judgment per document
    subtopic_qrels = [ir_measures.Qrel(q, d, int(r), str(i)) for q, i, d, r in
                      qrels.frame.select("query_id", "iteration", "doc_id", "relevance").iter_rows()]
    ir_qrels = [ir_measures.Qrel(q, d, int(r)) for q, d, r in
                per_document(qrels).frame.select("query_id", "doc_id", "relevance").iter_rows()]
    # handed over in trec_eval's ranking order, query by query: cwl_eval keeps tied documents in the order
    # they come (and reads a query's rows as one block); the others sort for themselves
    ranked_rows = run.frame.select("query_id", "doc_id", "score").sort(
        ["query_id", "score", "doc_id"], descending=[False, True, True])
    ir_run = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in ranked_rows.iter_rows()]
    all_negative = _judged_only_negative(qrels)
    # compat scores the unretrieved documents of its ideal ranking 0, above retrieved ones scored below 0
    low_scores = set(ranked_rows.filter(pl.col("score") <= 0)["query_id"].unique().to_list())
    by_provider: dict[str, list[Measure]] = {}
    for m, (_, provider) in targets.items():
        by_provider.setdefault(provider.NAME, []).append(m)
    results: dict[Any, dict[str, float]] = {}
    retied: dict[Any, dict[str, float]] = {}
    # queries a provider cannot score, left out of its input and compared by a named convention
    withheld: dict[Measure, tuple[str, set[str]]] = {}
    calls: list[tuple[str, list[Measure]]] = []
    for provider_name, group in by_provider.items():
        # accuracy divides by zero on some queries, which depend on each measure's cutoff and level; pyndeval
        # reads the run once for all its invocations (other rel, alpha or beta get nothing): one call each
        alone = provider_name in ("accuracy", "pyndeval")
        calls += [(provider_name, [m]) for m in group] if alone else [(provider_name, group)]
    for provider_name, group in calls:
        provider = targets[group[0]][1]
        wanted = list(dict.fromkeys(targets[m][0] for m in group))
        given_qrels, given_run = (subtopic_qrels if provider_name == "pyndeval" else ir_qrels), ir_run
        if provider_name == "pytrec_eval" and all_negative:
            given_qrels = [q for q in ir_qrels if q.query_id not in all_negative]
            given_run = [d for d in ir_run if d.query_id not in all_negative]
        if provider_name == "accuracy":
            level = group[0].rel if group[0].rel is not None else chosen.relevance_level
            cutoff = int(group[0].cutoff) if group[0].cutoff is not None else None
            undefined = _only_relevant(ir_qrels, ir_run, cutoff, level)
            withheld[group[0]] = ("all_relevant", undefined)
            given_run = [d for d in ir_run if d.query_id not in undefined]
        try:
            # pyndeval warns on stderr when no query has two subtopics, cwl_eval's provider logs each judgment
            # clipped to [min_rel, max_rel] (the measures' definition here); the verdicts say what matters
            with contextlib.redirect_stderr(io.StringIO()), _quiet("ir_measures", "ir_measures.cwl_eval"):
                for metric in provider.iter_calc(wanted, given_qrels, given_run):
                    results.setdefault(metric.measure, {})[metric.query_id] = float(metric.value)
            if provider_name in _RETIED:
                # the same ranking without ties (positive scores falling with trec_eval's rank): what it gives
                # where its tie-breaking does not decide
                untied = [ir_measures.ScoredDoc(d.query_id, d.doc_id, float(len(given_run) - i))
                          for i, d in enumerate(given_run)]
                for metric in provider.iter_calc(wanted, given_qrels, untied):
                    retied.setdefault(metric.measure, {})[metric.query_id] = float(metric.value)
        except Exception as err:  # a provider failing on this data is reported, not raised
            for m in group:
                verdicts[m] = Verdict(str(m), written[m], provider_name, "unsupported",
                                      f"ir-measures failed: {type(err).__name__}: {err}".strip())
                targets.pop(m)

    missing = set(ours.missing_queries)
    for m, (theirs_measure, provider) in targets.items():
        theirs_values = results.get(theirs_measure, {})
        tol = max(tolerance, _PROVIDER_TOLERANCE.get(provider.NAME, 0.0))
        values = np.asarray(ours.values[m], dtype=np.float64)
        candidates = _conventions_for(provider.NAME, m, chosen.trec_eval_9)
        differing: list[str] = []
        explained: dict[str, list[str]] = {}
        max_diff = 0.0
        for i, qid in enumerate(ours.query_ids):
            theirs_value = theirs_values.get(qid, float(theirs_measure.DEFAULT))
            ours_value = float(values[i])
            if _same(ours_value, theirs_value, tol):
                continue
            if not (math.isnan(ours_value) or math.isnan(theirs_value)):
                max_diff = max(max_diff, abs(ours_value - theirs_value))
            reason = None
            convention, skipped = withheld.get(m, ("", set()))
            if qid in skipped:
                reason = convention
            elif provider.NAME in _RETIED and _same(ours_value, retied.get(theirs_measure, {}).get(
                    qid, float(theirs_measure.DEFAULT)), tol):
                reason = "unretrieved_first" if qid in low_scores else "tie_order"
            elif provider.NAME == "pyndeval" and math.isnan(theirs_value) and ours_value == 0.0:
                reason = "no_subtopic"
            elif provider.NAME == "pytrec_eval" and qid in all_negative:
                reason = "all_negative"
            elif qid in missing and theirs_value == 0.0 and not math.isnan(ours_value):
                reason = "missing_zero"
            else:
                for key in candidates:
                    alternative = float(np.asarray(variant(key).values[m], dtype=np.float64)[i])
                    if key == "cwl_depth":  # cwl_eval spreads RBP's weights over its 1000 ranks
                        alternative /= 1.0 - float(m.named.get("p", 0.9)) ** CWL_DEPTH
                    if _same(alternative, theirs_value, tol):
                        reason = key
                        break
            if reason is None:
                differing.append(qid)
            else:
                for part in reason.split("+"):
                    explained.setdefault(part, []).append(qid)
        ours_mean = _as_float(ours.summary.get(m))
        theirs_mean = _aggregate(theirs_measure, [theirs_values.get(q, float(theirs_measure.DEFAULT))
                                                  for q in ours.query_ids])
        verdict = Verdict(str(m), written[m], provider.NAME, "agree", ours=ours_mean, theirs=theirs_mean,
                          max_difference=max_diff, conventions=explained)
        aggregate_agrees = ours_mean is None or theirs_mean is None or _same(ours_mean, theirs_mean, max(tol, 1e-9))
        if differing:
            verdict.status = "differ"
            verdict.differing_queries = differing
        elif explained:
            verdict.status = "convention"
        elif not aggregate_agrees:
            verdict.status = "differ"
            verdict.reason = "per-query values agree but the aggregates do not"
        verdicts[m] = verdict

    return CrosscheckReport(
        verdicts=[verdicts[m] for m in resolved],
        num_queries=len(ours.query_ids),
        settings={"trec_eval_9": chosen.trec_eval_9, "relevance_level": chosen.relevance_level,
                  "judged_only": chosen.judged_only, "max_retrieved": chosen.max_retrieved, "queries": chosen.queries,
                  "tolerance": tolerance},
        ir_measures_version=getattr(ir_measures, "__version__", "?"),
    )


_RETIED = ("compat",)
"""Providers whose ties are checked on their side: compat breaks run ties by doc_id ascending and ideal-ranking
ties by run score then qrels order, which no reordering of our run reproduces; given the ranking without ties,
it must agree."""


@contextlib.contextmanager
def _quiet(*names: str) -> Iterator[None]:
    """Loggers of a library held to errors for the duration."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def _only_relevant(qrels: list[Any], run: list[Any], cutoff: int | None, level: int) -> set[str]:
    """The queries whose top ``cutoff`` documents (all without one) are every one relevant: ir-measures'
    Accuracy divides by their zero non-relevant documents. ``run`` is in ranking order."""
    judged: dict[tuple[str, str], int] = {(q.query_id, q.doc_id): q.relevance for q in qrels}
    queries = {q.query_id for q in qrels}
    seen: dict[str, int] = {}
    verdict: dict[str, bool] = {}
    for doc in run:
        rank = seen[doc.query_id] = seen.get(doc.query_id, 0) + 1
        if doc.query_id not in queries or (cutoff is not None and rank > cutoff):
            continue
        relevant = judged.get((doc.query_id, doc.doc_id), 0) >= level
        verdict[doc.query_id] = verdict.get(doc.query_id, True) and relevant
    return {q for q, every in verdict.items() if every}


def _no_provider(ir_measures: Any, theirs: Any) -> str:
    """Why no provider computes ``theirs`` here: the providers that would, and how to install them."""
    would = [p for p in ir_measures.providers.registry.values() if _supports(p, theirs)]
    if not would:
        return "no ir-measures provider computes it"
    in_pipeline = {p.NAME for p in ir_measures.DefaultPipeline.providers}
    parts = []
    for p in would:
        if p.NAME not in in_pipeline:
            parts.append(f"{p.NAME}, which ir-measures leaves out of its default pipeline")
        else:
            parts.append(f"{p.NAME}, not installed here ({_install_hint(p)})")
    return "needs the ir-measures provider " + " or ".join(parts)


def _supports(provider: Any, measure: Any) -> bool:
    try:
        return bool(provider.supports(measure))
    except Exception:  # a provider that cannot even answer (its package half-installed)
        return False


def _install_hint(provider: Any) -> str:
    try:
        return str(provider.install_instructions())
    except Exception:
        return f"pip install ir-measures[{provider.NAME}]"


def _conventions_for(provider: str, measure: Measure, trec_eval_9: bool) -> list[str]:
    """The conventions that may explain a difference with ``provider``: its own, then the measure's
    (``IrMeasures.conventions``, each for the provider it names, or any)."""
    if provider == "pytrec_eval":
        out = [] if trec_eval_9 else ["float32"]
    else:
        out = ["float64"] if trec_eval_9 else []
        if provider in ("msmarco", "judged", "pyndeval"):
            out.append("tie_order")
    spec = measure.spec.ir_measures
    for key, where in spec.conventions if spec else ():
        if where in (provider, "") and not (trec_eval_9 and key == "iprec9"):  # trec_eval 9 mode cuts so itself
            out.append(key)
    return out


def _judged_only_negative(qrels: Qrels) -> set[str]:
    """The queries whose every judgment is negative (in the pool, not judged)."""
    best = qrels.frame.group_by("query_id").agg(pl.col("relevance").max())
    return set(best.filter(pl.col("relevance") < 0)["query_id"].to_list())


def _judged_negative(qrels: Qrels) -> Qrels:
    """The qrels with negative judgments read as 0, i.e. as judged (ir-measures' Judged)."""
    return Qrels(qrels.frame.with_columns(pl.col("relevance").clip(lower_bound=0)), qrels.source, checked=True)


def _as_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _aggregate(measure: Any, values: list[float]) -> float | None:
    """ir-measures' aggregate over our query set: a sum for Num*, else a mean."""
    if not values:
        return None
    total = 0.0
    for value in values:
        total += value
    return total if measure.NAME.startswith("Num") else total / len(values)
