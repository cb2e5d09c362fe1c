"""A measure's value over queries, by trec_eval's rules (docs/trec_eval_conventions.md §5.2): the mean, the sum
(num_* counts), the geometric mean (gm_*), num_rel recounted under -c."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from trec_rag_eval.errors import UsageError
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.syntax import quote

GM_FLOOR = 1e-5  # trec_eval's floor for gm_map and gm_bpref


def sequential_sum(values: np.ndarray) -> float:
    """Sum in query order, one addition at a time, from 0.0, as trec_eval does (np.sum would pair them; without
    the 0.0, values all -0.0 would sum to -0.0, which trec_eval's mean never is)."""
    return 0.0 + float(values.cumsum()[-1]) if len(values) else 0.0


def aggregate(measure: Measure, values: Any, num_queries: int, judgments: Any = None,
              complete_flag: bool = False, run_tag: str = "") -> Any:
    """The summary value of one measure over queries (trec_eval's rules: docs/trec_eval_conventions.md §5.2).
    ``judgments``: the judgment values of every qrels query (``RankedQueries.judged``, or a qrels table's
    relevance column), which ``-c`` recounts num_rel over (``recounted_under_c``)."""
    family = measure.spec
    if family.run_tag:
        return run_tag
    if family.aggregate == "none":
        return None
    if recounted_under_c(measure, complete_flag) and judgments is not None:
        return float((np.asarray(judgments) > 0).sum())
    array = np.asarray(values, dtype=np.float64)
    if num_queries == 0 and family.aggregate != "sum":
        return None  # a mean over no query has no value (an empty run under queries="intersection")
    with np.errstate(over="ignore", invalid="ignore"):  # a sum that overflows is refused just below
        if family.aggregate == "sum":
            total = sequential_sum(array)
        elif family.aggregate == "gmean":
            total = math.exp(sequential_sum(np.log(np.maximum(array, GM_FLOOR))) / num_queries)
        else:
            total = sequential_sum(array) / num_queries
    if not math.isfinite(total) and np.isfinite(array).all():
        # finite values whose sum overflows (utility.1e308,-1,0,1 over two queries): trec_eval prints inf
        raise UsageError(f"measure {quote(str(measure))} has no finite value on this run with its parameters (its "
                         "values' sum overflows; trec_eval prints inf or nan there)")
    return total


def recounted_under_c(measure: Measure, complete_flag: bool) -> bool:
    """Whether trec_eval's summary of ``measure`` is not taken over its per-query values: -c recounts num_rel over
    the qrels as judgments > 0, whatever -l says (a rule of trec_eval's -c summary about this one count, its
    per-query values keeping -l; not a property of the measure). Under -c every qrels query is evaluated, so
    the ranking's judgments (``RankedQueries.judged``, one per document) are every judgment of the qrels."""
    return measure.spec.name == "num_rel" and complete_flag
