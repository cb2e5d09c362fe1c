"""Checks for the classic mistakes of RAG evaluation data, reported as warnings, never errors.

Each warning has a stable ``code``, a ``count`` and a few ``examples``, in file order:

* ``unknown_ids``: retrieved ids that appear nowhere in the qrels, reported when fewer than half of
  the dataset queries with results retrieved a single judged document. Unjudged documents are normal
  (a RAG dataset judges a few documents per query and they count as non-relevant), so the check
  stays quiet for an ordinary run; it speaks when the run and the dataset probably use different
  ids (another chunking, document ids vs chunk ids: llama_index#16361) or nothing judged is found.
* ``extra_queries``: queries in the results but not in the dataset (they are not evaluated).
* ``missing_queries``: dataset queries with no result list (they score 0 on every measure).
* ``duplicate_ids``: an id listed twice in one result list (only its first place is kept).
* ``empty_results``: empty result lists (the query scores 0).
* ``no_relevant``: dataset queries without any relevant document (they can only score 0, or are
  left out, depending on the measure: either way the mean says less than it seems).
* ``score_order``: result lists whose scores rise along the list (a distance, lower is better): they
  are ranked in the list's order all the same, as every ordered list is (``io.ranked_lists``), and
  the sentence is the one every other path says (``io.ranked_lists.order_warning``).
"""

from __future__ import annotations

from dataclasses import dataclass

from trec_rag_eval.io.ranked_lists import REPEATED_IDS, repeat_examples
from trec_rag_eval.io.ranked_lists import order_warning as order_warning  # the sentence, for the CLI too
from trec_rag_eval.tables import Qrels, ResultsReport, Run, column_list


@dataclass(frozen=True)
class RagWarning:
    """One finding: ``str()`` gives a one-line message with the count and the examples."""

    code: str
    count: int
    message: str
    examples: tuple[str, ...] = ()

    def __str__(self) -> str:
        if not self.examples:
            return self.message
        more = ", ..." if self.count > len(self.examples) else ""
        return f"{self.message} (e.g. {', '.join(self.examples)}{more})"


def check_rag(
    qrels: Qrels,
    run: Run,
    report: ResultsReport | None = None,
    *,
    relevance_level: int = 1,
    max_examples: int = 3,
    evaluated: bool = False,
) -> list[RagWarning]:
    """Run every check; return the warnings that apply, in the order of the module docstring.

    ``report`` (from ``load_run_report`` / ``read_results_report``) adds what a Run cannot show:
    repeated ids and empty lists. ``relevance_level`` is the grade from which a document counts as
    relevant (trec_eval's ``-l``). ``evaluated``: the run went through ``evaluate``, which already
    warned if no query retrieved a judged document, so ``unknown_ids`` speaks only when some did.
    """
    warnings: list[RagWarning] = []
    report = report or ResultsReport()
    judged_query_ids = column_list(qrels, "query_id")
    dataset_queries = _dataset_queries(qrels, judged_query_ids)
    dataset_set = set(dataset_queries)
    run_query_ids, run_doc_ids = column_list(run, "query_id"), column_list(run, "doc_id")
    run_queries = _unique(run_query_ids)
    run_set = set(run_queries) | set(report.empty)

    def add(code: str, items: list[str], message: str) -> None:
        if items:
            warnings.append(
                RagWarning(code, len(items), message.format(n=len(items)), tuple(items[:max_examples]))
            )

    judged = set(column_list(qrels, "doc_id"))
    retrieved = _unique(run_doc_ids)
    unknown = [repr(d) for d in retrieved if d not in judged]
    judged_by_query = {q for q, d in zip(run_query_ids, run_doc_ids, strict=True) if d in judged}
    with_results = [q for q in run_queries if q in dataset_set]
    hits = sum(q in judged_by_query for q in with_results)
    if unknown and with_results and 2 * hits < len(with_results) and not (evaluated and hits == 0):
        add(
            "unknown_ids",
            unknown,
            f"{len(unknown)} of {len(retrieved)} distinct retrieved ids never appear in the qrels and only "
            f"{hits} of {len(with_results)} queries retrieved any judged document: do the results and the "
            "dataset use the same ids (same chunking)?",
        )
    add(
        "extra_queries",
        [q for q in run_queries if q not in dataset_set],
        "{n} queries are in the results but not in the dataset (they are not evaluated)",
    )
    add(
        "missing_queries",
        [q for q in dataset_queries if q not in run_set],
        "{n} dataset queries have no results (they score 0)",
    )
    add(
        "duplicate_ids",
        repeat_examples(report.duplicates),
        REPEATED_IDS,
    )
    add("empty_results", list(report.empty), "{n} result lists are empty (those queries score 0)")
    relevant_queries = {q for q, r in zip(judged_query_ids, column_list(qrels, "relevance"), strict=True)
                        if r >= relevance_level}
    add(
        "no_relevant",
        [q for q in dataset_queries if q not in relevant_queries],
        f"{{n}} dataset queries have no relevant document (relevance >= {relevance_level}); "
        "they cannot score above 0",
    )
    if report.disordered:
        warnings.append(RagWarning("score_order", len(report.disordered), order_warning(report.disordered)))
    return warnings


def _dataset_queries(qrels: Qrels, judged_query_ids: list[str]) -> list[str]:
    """Query ids in file order: the topics' order, then first appearance among the judgments."""
    return _unique(list(qrels.topics or {}) + judged_query_ids)


def _unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))
