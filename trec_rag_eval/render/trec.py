"""trec_eval's output, byte for byte: ``%-22s\\t%s\\t%6.4f`` lines, integer measures as ``%ld``.

The per-query lines (``-q``: one per query and measure, ~670,000 for ``-m all_trec`` on 7,000 queries)
are built a column at a time (``render.columns``), never one Python call per line.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.measures.model import Measure

if TYPE_CHECKING:
    import polars as pl

COLUMN_WISE_FROM = 20_000
"""Per-query values from which the output is built a column at a time (polars); below, one call per
value is done before polars would be imported (a small evaluation never loads it)."""


def format_value(measure: Measure, value: Any) -> str:
    kind = measure.spec.value_type
    if kind == "str":
        return f"'{value}'" if measure.family == "relstring" else str(value)
    if kind == "int":
        return str(int(value))
    if math.isnan(value):
        return "%6s" % "-nan"  # glibc prints C's 0/0 this way
    return "%6.4f" % value


def format_column(measure: Measure, values: Any) -> pl.Series:
    """``format_value`` of every value of one per-query column, as a string Series."""
    import polars as pl

    from trec_rag_eval.render import columns

    kind = measure.spec.value_type
    if kind == "str":
        text = columns.strings([str(v) for v in values])
        return pl.select(pl.concat_str([pl.lit("'"), text, pl.lit("'")])).to_series() \
            if measure.family == "relstring" else text
    if kind == "int":
        return columns.integers(values)
    return columns.fixed(values, 4, nan="-nan").str.pad_start(6)


def _line(measure: Measure, query_id: str, value: Any) -> str:
    return "%-22s\t%s\t%s\n" % (measure.trec_name, query_id, format_value(measure, value))


def per_query_measures(evaluation: Evaluation) -> list[Measure]:
    """The measures with a value per query, in output order (trec_eval prints num_q in the summary only:
    its per-query value is 1)."""
    return [m for m in evaluation.measures
            if m.spec.per_query and str(m) in evaluation.values and m.family != "num_q"]


def trec_text(evaluation: Evaluation, per_query: bool = False, summary: bool = True, runid: bool = True) -> str:
    """Per-query lines (``-q``) in query order, then the ``all`` block (unless ``-n``; without its
    ``runid`` line when ``runid`` is False)."""
    parts: list[str] = []
    if per_query:
        measures = per_query_measures(evaluation)
        queries = len(evaluation.query_ids)
        if measures and queries * len(measures) < COLUMN_WISE_FROM:
            table = [(m, "%-22s\t" % m.trec_name, evaluation.values[str(m)]) for m in measures]
            parts.append("".join(f"{name}{query_id}\t{format_value(m, column[i])}\n"
                                 for i, query_id in enumerate(evaluation.query_ids) for m, name, column in table))
        elif measures and queries:
            parts += _per_query_blocks(evaluation, measures)
    if summary:
        for measure in evaluation.measures:
            value = evaluation.summary.get(measure)
            if value is not None and (runid or measure.family != "runid"):
                parts.append(_line(measure, "all", value))
    return "".join(parts)


BLOCK_LINES = 1 << 16
"""Per-query lines built at a time: the text of a block is made while the next is not, so the output's
memory is its own size, not that of polars' columns for every line (~100 MB for 670,000 lines)."""


def _per_query_blocks(evaluation: Evaluation, measures: list[Measure]) -> list[str]:
    from trec_rag_eval.render import columns

    names = ["%-22s" % m.trec_name for m in measures]
    formatted = _formatted_columns(evaluation, measures)
    step = max(1, BLOCK_LINES // len(measures))
    blocks = []
    for first in range(0, len(evaluation.query_ids), step):
        ids = evaluation.query_ids[first:first + step]
        values = columns.interleave([column.slice(first, len(ids)) for column in formatted])
        blocks.append(columns.separated([columns.cycle(names, len(ids)), columns.repeat_each(ids, len(measures)),
                                         values]))
    return blocks


def _formatted_columns(evaluation: Evaluation, measures: list[Measure]) -> list[pl.Series]:
    """``format_column`` of each measure's per-query values; the real-valued ones (most of them) are
    formatted in one call over all their values, then sliced: one pass instead of one per measure."""
    import numpy as np

    from trec_rag_eval.render import columns

    real = [m for m in measures if m.spec.value_type not in ("str", "int")]
    if len(real) < 2:
        return [format_column(m, evaluation.values[str(m)]) for m in measures]
    queries = len(evaluation.query_ids)
    values = np.concatenate([np.asarray(evaluation.values[str(m)], dtype=np.float64) for m in real])
    text = columns.fixed(values, 4, nan="-nan").str.pad_start(6)
    sliced = {str(m): text.slice(i * queries, queries) for i, m in enumerate(real)}
    return [sliced[str(m)] if str(m) in sliced else format_column(m, evaluation.values[str(m)]) for m in measures]


def trec_lines(evaluation: Evaluation, per_query: bool = False, summary: bool = True) -> Iterator[str]:
    """``trec_text`` line by line."""
    text = trec_text(evaluation, per_query, summary)
    start = 0
    while start < len(text):
        end = text.index("\n", start) + 1
        yield text[start:end]
        start = end


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
        return trec_text(evaluations[0], per_query, summary)
    tags = [e.run_tag for e in evaluations]
    unique = len(set(tags)) == len(tags)
    out = []
    for evaluation, path in zip(evaluations, paths, strict=True):
        label = evaluation.run_tag if unique else path
        out.append("%-22s\t%s\t%s\n" % ("runid", "all", label))
        out.append(trec_text(evaluation, per_query, summary, runid=False))
    return "".join(out)
