"""One ranking rule per shape: which inputs are ordered lists and which are scored.

* **Ordered lists** are ranked as given, best first: a list per query (of doc ids, of hits
  ``{"id", "score"}``, of ``(id, score)`` pairs, of LangChain / LlamaIndex objects) in memory, in a
  JSON/JSONL results file, or returned by a search engine. Their scores are kept when trec_eval's
  rule ranks the list in its order with them (they fall along it; tied ones stand in doc id order,
  descending); otherwise (no scores, ties in another order, distances that rise) the list's order
  gives the scores ``n, n-1, ..., 1``, so no tie-breaking
  rule can reorder it, and a run written to a TREC file (``convert``, ``write_trec_run``) ranks in the
  list's order in trec_eval too. Scores that rise somewhere along a list contradict its order (a
  distance, lower is better): that is said, in the same words on every path (``order_warning``).
* **Scored** inputs are ranked by trec_eval's rule (score descending, then doc id descending): TREC
  run files, Parquet, ``{query_id: {doc_id: score}}`` in memory or in a JSON file (pytrec_eval's and
  ranx's shape), DataFrames and ``ScoredDoc`` rows. Their order carries no meaning.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from trec_rag_eval.tables import byte_key


def list_scores(scores: Sequence[float | None], doc_ids: Sequence[str] | None = None) -> tuple[list[float], bool]:
    """The scores that rank a list in its order, and whether the given ones contradict the order.

    Given scores are kept when every one is a finite number and trec_eval's rule ranks the list in
    its order with them: they fall along the list, and where two are equal the doc ids (``doc_ids``,
    when given) already stand in trec_eval's tie order, descending (so a run written in trec_eval's
    order, as JSON, reads back with every score). Otherwise the list gets ``n, n-1, ..., 1``. The
    scores contradict the order when one rises above the one before it (ties do not: the list
    decides between them)."""
    n = len(scores)
    given = [s for s in scores if s is not None and math.isfinite(s)]
    if len(given) == n and all(_before(given, doc_ids, i) for i in range(n - 1)):
        return [float(s) for s in given], False
    rising = len(given) == n and any(b > a for a, b in zip(given, given[1:], strict=False))
    return [float(n - position) for position in range(n)], rising


def lists_scores(scores: np.ndarray, doc_ids: Sequence[str], lengths: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """``list_scores`` of many lists at once, given end to end (``lengths``: each list's count of rows; every score
    given, as float64): the scores that rank each list in its order, end to end, and whether each list's scores
    rise along it. Told on whole columns by numpy; Python compares doc ids at the ties alone (two equal scores
    next to each other in one list), in trec_eval's byte order, as ``list_scores`` does."""
    n = len(scores)
    sizes = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(sizes)
    row_list = np.repeat(np.arange(len(sizes)), sizes)
    lacking = np.zeros(len(sizes), dtype=bool)  # a list with a score that is no finite number keeps none of them
    finite = np.isfinite(scores)
    if not finite.all():
        lacking[row_list[~finite]] = True
    inside = row_list[1:] == row_list[:-1]  # each row and the next, in one list
    rising = np.zeros(len(sizes), dtype=bool)
    rising[row_list[:-1][inside & (scores[1:] > scores[:-1])]] = True
    disordered = rising.copy()
    for i in np.flatnonzero(inside & (scores[1:] == scores[:-1])).tolist():
        if not byte_key(doc_ids[i]) > byte_key(doc_ids[i + 1]):  # a tie in another order than trec_eval's
            disordered[row_list[i]] = True
    kept = ~(lacking | disordered)
    if kept.all():  # every list keeps its own scores (a search engine's, falling along it): nothing to replace
        return scores, rising & ~lacking
    by_rank = (ends[row_list] - np.arange(n)).astype(np.float64)  # n, n - 1, ..., 1 down each list
    return np.where(kept[row_list], scores, by_rank), rising & ~lacking


def _before(scores: list[float], doc_ids: Sequence[str] | None, i: int) -> bool:
    """Whether trec_eval's rule ranks item i before item i + 1 (score, then doc id descending in byte order)."""
    if scores[i] != scores[i + 1]:
        return scores[i] > scores[i + 1]
    return doc_ids is not None and byte_key(doc_ids[i]) > byte_key(doc_ids[i + 1])


REPEATED_IDS = "{n} ids are listed more than once in one result list (only the first place is kept)"
"""What a document given twice in one result list is said as (its first place kept), read from a file or in memory."""


def repeat_examples(repeats: Iterable[tuple[object, str, int]]) -> list[str]:
    """Each document given more than once in one result list, from ``(query id, doc id, times given)``, as every
    warning and check shows it: ``q1: 'doc' x2``."""
    return [f"{query_id}: {doc_id!r} x{times}" for query_id, doc_id, times in repeats]


def repeat_warning(repeats: Sequence[tuple[object, str, int]], limit: int = 3) -> str:
    """The one sentence for documents given more than once in one result list (``repeats``: ``(query id, doc id,
    times given)``), from a results file, search results in memory or a search engine, as ``checks.rag`` says it."""
    more = ", ..." if len(repeats) > limit else ""
    return f"{REPEATED_IDS.format(n=len(repeats))} (e.g. {', '.join(repeat_examples(repeats[:limit]))}{more})"


def order_warning(queries: Sequence[str], limit: int = 3) -> str:
    """The one sentence for result lists whose scores rise along the list (the ``queries``)."""
    count = len(queries)
    shown = ", ".join(queries[:limit]) + (", ..." if count > limit else "")
    lists = "result list has" if count == 1 else "result lists have"
    return (f"{count} {lists} scores that rise along the list (distances, lower is better?): ranked in the "
            f"list's order, as given, best first, not by score; give scores that fall along each list "
            f"(similarities), or none (e.g. {shown})")
