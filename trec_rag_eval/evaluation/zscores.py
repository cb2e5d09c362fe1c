"""Values as z-scores against per-query means and standard deviations (trec_eval's ``-Z``;
docs/trec_eval_conventions.md §11.4).

Each query's value v of a measure becomes (v - mean) / stddev, with the mean and standard deviation the
z-scores file gives for that query and that measure (by the name trec_eval prints: ``P_10``). A standard
deviation of 0 gives 0 when v is the mean and -1000000 otherwise; so does a query or a measure the file lacks
(trec_eval's ``MISSING_ZSCORE_VALUE``). For gm_map and gm_bpref, v is the logarithm trec_eval keeps per query,
log(max(v, 1e-5)). The summary is then taken over the z-scores as over raw values (mean, sum, or exp of the
mean for the geometric means), except num_q (the number of queries: ``Family.zscore``) and num_rel's under -c
(recounted over the qrels: ``aggregation.recounted_under_c``), which trec_eval computes afresh. runid and
relstring are not numbers: they stay as they are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from trec_rag_eval.evaluation.aggregation import GM_FLOOR, aggregate, recounted_under_c, sequential_sum
from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.io.trec.zscores import ZScores, read_zscores
from trec_rag_eval.measures.by_measure import ByMeasure
from trec_rag_eval.measures.model import Measure

MISSING_ZSCORE = -1000000.0
"""trec_eval's value for a query or measure the z-scores file lacks."""


def zscored(evaluation: Evaluation, zscores: ZScores) -> Evaluation:
    """``evaluation`` with every numeric value a z-score (see the module docstring), marked ``zscored``."""
    values: dict[Measure, Any] = {}
    summary: dict[Measure, Any] = {}
    count = len(evaluation.query_ids)
    for measure in evaluation.measures:
        family = measure.spec
        raw = evaluation.values.get(measure)
        kept = evaluation.summary.get(measure)
        if family.run_tag or family.value_type == "str" or family.aggregate == "none" or raw is None \
                or not family.zscore:
            if raw is not None:
                values[measure] = raw
            summary[measure] = kept
            continue
        per_query = np.asarray(raw, dtype=np.float64)
        if family.aggregate == "gmean":
            per_query = np.log(np.maximum(per_query, GM_FLOOR))
        z = _standardised(per_query, evaluation.query_ids, measure.trec_name, zscores)
        values[measure] = z
        if recounted_under_c(measure, evaluation.settings.complete):
            summary[measure] = kept  # not taken over the per-query values: trec_eval's own count
        elif family.aggregate == "gmean":  # the mean of the logarithms' z-scores, as trec_eval takes it
            summary[measure] = math.exp(sequential_sum(z) / count) if count else 0.0
        else:
            summary[measure] = aggregate(measure, z, count, run_tag=evaluation.run_tag)
    return replace(evaluation, values=ByMeasure.of(evaluation.measures, values),
                   summary=ByMeasure.of(evaluation.measures, summary), zscored=True)


def zscores_of(value: Any) -> ZScores:
    """The means and standard deviations of ``zscores=``: a path to trec_eval's -Z file, or ``ZScores`` as is."""
    return value if isinstance(value, ZScores) else read_zscores(value)


class ZScoredRender:
    """A render of evaluations as z-scores (picklable: for a cluster's workers as for threads)."""

    def __init__(self, render: Callable[[Evaluation], Any], zscores: ZScores) -> None:
        self.render, self.zscores = render, zscores

    def __call__(self, evaluation: Evaluation) -> Any:
        return self.render(zscored(evaluation, self.zscores))


def _standardised(values: np.ndarray, query_ids: list[str], name: str, zscores: ZScores) -> np.ndarray:
    out = np.full(len(values), MISSING_ZSCORE, dtype=np.float64)
    for i, query_id in enumerate(query_ids):
        found = zscores.stats.get((query_id, name))
        if found is None:
            continue
        mean, stddev = found
        if stddev:
            out[i] = (values[i] - mean) / stddev
        elif values[i] == mean:
            out[i] = 0.0
    return out
