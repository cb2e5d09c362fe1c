"""One run evaluated against judgments already read, with what the user should be told about it.

``evaluate_run`` is the one step every run takes once it is read (made in memory, or read from its file by
whoever evaluates it: ``service.inputs.read_run_file`` on this machine, a Dask worker's task per run in
``cluster``): map chunk ids to documents when asked, evaluate, and list the notes (``notes.Note``): queries
missing from the run or only in it, and for JSON results the RAG checks. ``RunOutcome`` is what every path
hands back for one run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import TrecRagEvalError
from trec_rag_eval.lazy_modules import LazyModule
from trec_rag_eval.notes import Note, note, warning

if TYPE_CHECKING:
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.evaluation import evaluate
    from trec_rag_eval.io.chunks import CollapseReport
    from trec_rag_eval.measures.model import Measure
    from trec_rag_eval.tables import Qrels, ResultsReport, Run
else:  # RunOutcome's evaluation, imported when its annotations are read (typing.get_type_hints), not with this module
    evaluate = LazyModule("trec_rag_eval.evaluation.evaluate")


@dataclass
class RunOutcome:
    """One run of an evaluation of several: its evaluation and notes, or the error that stopped it
    (a run with bad input fails alone, on every path). ``label``: the run as the user named it (its
    path, or its name in a mapping)."""

    label: str
    evaluation: evaluate.Evaluation | None = None
    notes: list[Note] = field(default_factory=list)
    error: TrecRagEvalError | None = None
    rendered: Any = None
    """With ``render=``: what it made of the evaluation, where the run was evaluated (the evaluation
    itself is then None: released there, not sent back)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    def render_with(self, render: Callable[[evaluate.Evaluation], Any] | None) -> RunOutcome:
        """This outcome with its evaluation rendered by ``render`` (and released); unchanged without
        ``render``, when it failed, or when it was rendered already (on a worker)."""
        if render is not None and self.evaluation is not None:
            self.rendered, self.evaluation = render(self.evaluation), None
        return self


def evaluate_run(qrels: Qrels, run: Run, measures: list[Measure], settings: Settings, doc_map: Any = None,
                 report: ResultsReport | None = None) -> tuple[evaluate.Evaluation, list[Note]]:
    """One run, read from a file (with its reader's ``report``) or made in memory, evaluated as the service
    chose (measures and settings) and the notes about it (see the module's docstring): its chunk ids mapped to
    documents when asked (``map_chunks``), then the RAG checks for search results, else the query set's
    warnings."""
    from trec_rag_eval.evaluation.evaluate import evaluate_measures

    run, notes, collapse = map_chunks(run, doc_map, qrels)
    evaluation = evaluate_measures(qrels, run, measures, settings)
    evaluation.collapse = collapse
    if report is not None and report.searched:
        # JSON results get the RAG checks, which also cover missing and extra queries
        from trec_rag_eval.checks.rag import check_rag

        checks = check_rag(qrels, run, report, evaluated=True, relevance_level=settings.relevance_level)
        return evaluation, notes + [warning(str(check)) for check in checks]
    return evaluation, notes + evaluation.query_set_warnings()


def map_chunks(run: Run, doc_map: Any, qrels: Qrels) -> tuple[Run, list[Note], CollapseReport | None]:
    """``io.chunk_collapse.collapse_run``, its notes (what it did, then its warnings) and its report, for the
    evaluation to keep (``Evaluation.collapse``). Without a mapping, the run unchanged, no report, and a note
    when its ids look like chunks of judged documents (with the pattern that would map them,
    ``io.chunk_guess.guess_doc_id_pattern``): looked for only when one of the first ids has a separator
    before which a judged id could end (a character neither letter nor digit: none in ``d17``, MS MARCO's
    numbers), told by one C call without reading the judgments."""
    if doc_map is None:
        from trec_rag_eval.io.chunk_guess import HINT_SAMPLE, guess_doc_id_pattern
        from trec_rag_eval.tables import column_alnum, column_head, derived_from

        known = derived_from(run)  # the run's own: told once per Run, whatever it is evaluated against
        if "head" not in known:
            alnum = column_alnum(run, "doc_id", HINT_SAMPLE)  # a small frame's, from its bytes: no string an id
            head = [] if alnum else column_head(run, "doc_id", HINT_SAMPLE)
            if alnum is None:
                text = "".join(head)
                # ASCII ids (nearly all) are told by the bytes' table of letters and digits, seven times faster
                alnum = text.encode().isalnum() if text.isascii() else text.isalnum()
            known["head"] = None if alnum else head
        head = known["head"]
        guess = None if head is None else guess_doc_id_pattern(head, qrels)
        if guess is None:
            return run, [], None
        pattern, chunk_id, doc_id = guess
        return run, [note(f"the retrieved ids look like chunks of judged documents ({chunk_id!r} of {doc_id!r}): "
                          f"score them as their documents with doc_map='{pattern}'",
                          parameters={"doc_map='": "doc_id_pattern"})], None
    from trec_rag_eval.io.chunk_collapse import collapse_run

    collapsed, report = collapse_run(run, doc_map, qrels)
    return collapsed, report.notes(), report
