"""What an evaluation tells the user about its query set, worded once for every path (the command
line, ``evaluate`` and ``compare`` from Python, a run in memory or in a file), as ``notes.Note`` values."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trec_rag_eval.notes import Note, note, warning

if TYPE_CHECKING:
    from trec_rag_eval.evaluation.evaluate import Evaluation
    from trec_rag_eval.io.chunk_collapse import CollapseReport


def query_set_warnings(evaluation: Evaluation) -> list[Note]:
    """Queries missing from the run (scored 0, named) and queries only in the run (counted). A query the
    run answered with an empty result list (a search that found nothing) is not missing: it is counted in
    the evaluation's footer (``Evaluation.empty_queries``), not warned about."""
    out = []
    empty = set(evaluation.empty_queries)
    missing = [q for q in evaluation.missing_queries if q not in empty]
    extra = evaluation.extra_queries
    if missing:
        out.append(missing_queries_warning(missing))
    if extra:
        out.append(warning(f"{len(extra)} quer{'y' if len(extra) == 1 else 'ies'} in the run but not in the qrels, "
                           "ignored"))
    return out


def missing_queries_warning(missing: list[str]) -> Note:
    """The warning for qrels queries a run does not answer (they score 0 on every measure)."""
    shown = ", ".join(missing[:10]) + (f", ... ({len(missing) - 10} more)" if len(missing) > 10 else "")
    return warning(f"{len(missing)} qrels quer{'y' if len(missing) == 1 else 'ies'} missing from the run, "
                   f"scored 0: {shown}")


def collapse_notes(report: CollapseReport) -> list[Note]:
    """What mapping a run's chunk ids to documents did (a note), then its warnings (``io.chunks``)."""
    return [note(report.summary())] + [warning(text) for text in report.warnings()]


def warn_query_set(evaluation: Evaluation, source: str) -> None:
    """``query_set_warnings`` as ``TrecRagEvalWarning``s, each led by the run's ``source``, pointing at
    the caller's line."""
    for said in query_set_warnings(evaluation):
        said.about(source).warn()
