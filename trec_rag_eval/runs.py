"""Evaluate one run file against judgments already read, with what the user should be told about it.

The one step both the single-machine command (a thread per run) and a Dask worker (a task per run,
see ``cluster``) take: read the run where it lies (any format), map chunk ids to documents when
asked, evaluate, and list the notes and warnings: queries missing from the run or only in it, and
for JSON results the RAG checks. Each note is a ``"Warning: ..."`` or ``"Note: ..."`` line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.io.tables import Qrels, Run
    from trec_rag_eval.measures.model import Measure


def evaluate_run_file(qrels: Qrels, path: str, measures: list[Measure], settings: Settings,
                      run_format: str = "auto", doc_map: Any = None) -> tuple[Evaluation, list[str]]:
    """The evaluation of the run at ``path`` and its notes (see the module's docstring)."""
    from trec_rag_eval.evaluation.evaluate import evaluate
    from trec_rag_eval.io.load import detect_format, load_run_report

    run, report = load_run_report(path, run_format, qrels)
    run, notes = map_chunks(run, doc_map, qrels)
    evaluation = evaluate(qrels, run, measures, settings)
    if run_format == "json" or (run_format == "auto" and detect_format(path) == "json"):
        # JSON results get the RAG checks, which also cover missing and extra queries
        from trec_rag_eval.checks.rag import check_rag

        checks = check_rag(qrels, run, report, evaluated=True, relevance_level=settings.relevance_level)
        return evaluation, notes + [f"Warning: {warning}" for warning in checks]
    return evaluation, notes + [f"Warning: {warning}" for warning in query_set_warnings(evaluation)]


def map_chunks(run: Run, doc_map: Any, qrels: Qrels) -> tuple[Run, list[str]]:
    """``io.chunks.collapse_run`` and its lines (what it did, then its warnings); the run unchanged
    and no line when there is no mapping."""
    if doc_map is None:
        return run, []
    from trec_rag_eval.io.chunks import collapse_run

    collapsed, report = collapse_run(run, doc_map, qrels)
    return collapsed, [f"Note: {report.summary()}"] + [f"Warning: {w}" for w in report.warnings()]


def query_set_warnings(evaluation: Evaluation) -> list[str]:
    """Queries missing from the run (scored 0, named) and queries only in the run (counted)."""
    out = []
    missing, extra = evaluation.missing_queries, evaluation.extra_queries
    if missing:
        out.append(missing_queries_warning(missing))
    if extra:
        out.append(f"{len(extra)} quer{'y' if len(extra) == 1 else 'ies'} in the run but not in the qrels, ignored")
    return out


def missing_queries_warning(missing: list[str]) -> str:
    """The warning for qrels queries a run does not answer (they score 0 on every measure)."""
    shown = ", ".join(missing[:10]) + (f", ... ({len(missing) - 10} more)" if len(missing) > 10 else "")
    return f"{len(missing)} qrels quer{'y' if len(missing) == 1 else 'ies'} missing from the run, scored 0: {shown}"
