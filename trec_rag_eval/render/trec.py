"""trec_eval's output, byte for byte: ``%-22s\\t%s\\t%6.4f`` lines, integer measures as ``%ld``."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.measures.model import Measure


def format_value(measure: Measure, value: Any) -> str:
    kind = measure.spec.value_type
    if kind == "str":
        return f"'{value}'" if measure.family == "relstring" else str(value)
    if kind == "int":
        return str(int(value))
    if math.isnan(value):
        return "%6s" % "-nan"  # glibc prints C's 0/0 this way
    return "%6.4f" % value


def _line(measure: Measure, query_id: str, value: Any) -> str:
    return "%-22s\t%s\t%s\n" % (measure.trec_name, query_id, format_value(measure, value))


def trec_lines(evaluation: Evaluation, per_query: bool = False, summary: bool = True) -> Iterator[str]:
    """Per-query lines (``-q``) in query order, then the ``all`` block (unless ``-n``)."""
    if per_query:
        for index, query_id in enumerate(evaluation.query_ids):
            for measure in evaluation.measures:
                # trec_eval prints num_q in the summary only (its per-query value is 1)
                if measure.spec.per_query and measure in evaluation.values and measure.family != "num_q":
                    yield _line(measure, query_id, evaluation.values[measure][index])
    if summary:
        for measure in evaluation.measures:
            value = evaluation.summary.get(measure)
            if value is not None:
                yield _line(measure, "all", value)


def several_runs_text(evaluations: Sequence[Evaluation], paths: Sequence[str], per_query: bool = False,
                      summary: bool = True) -> str:
    """trec_eval's lines for several runs, one block per run in the order given; one run alone is
    trec_eval's output, byte for byte.

    trec_eval reads one run, so its lines never say which run they belong to: here each block opens
    with trec_eval's own ``runid  all  TAG`` line (the line ``-m runid`` and ``-m official`` print),
    which every reader of trec_eval's output already parses. The value is the run's tag; when two of
    the runs share a tag, it is the run's path instead, so that no two blocks read alike. A ``runid``
    asked with ``-m`` is not printed twice.
    """
    if len(evaluations) == 1:
        return "".join(trec_lines(evaluations[0], per_query, summary))
    tags = [e.run_tag for e in evaluations]
    unique = len(set(tags)) == len(tags)
    out = []
    for evaluation, path in zip(evaluations, paths, strict=True):
        label = evaluation.run_tag if unique else path
        out.append("%-22s\t%s\t%s\n" % ("runid", "all", label))
        out.extend(line for line in trec_lines(evaluation, per_query, summary) if not line.startswith("runid "))
    return "".join(out)
