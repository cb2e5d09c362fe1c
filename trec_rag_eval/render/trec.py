"""trec_eval's output, byte for byte: ``%-22s\\t%s\\t%6.4f`` lines, integer measures as ``%ld``.

The per-query lines (``-q``: one per query and measure, ~670,000 for ``-m all_trec`` on 7,000 queries)
are built a column at a time (``render.columns``), never one Python call per line.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.measures.model import Measure

if TYPE_CHECKING:
    import polars as pl

COLUMN_WISE_FROM = 20_000
"""Per-query values from which the output is built a column at a time (polars); below, one call per
value is done before polars would be imported (a small evaluation never loads it)."""


def format_trec_value(measure: Measure, value: Any) -> str:
    """trec_eval's text of one value (its ``%6.4f``, counts as ``%ld``, NaN as glibc's ``-nan``), the one
    number format of its lines; ``format_trec_column`` writes the same bytes a column at a time."""
    kind = measure.spec.value_type
    if kind == "str":
        return f"'{value}'" if measure.family == "relstring" else str(value)
    if kind == "int":
        return str(int(value))
    if math.isnan(value):
        return "%6s" % "-nan"  # glibc prints C's 0/0 this way
    return "%6.4f" % value


def format_trec_column(measure: Measure, values: Any) -> pl.Series:
    """``format_trec_value`` of every value of one per-query column, as a string Series."""
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
    return "%-22s\t%s\t%s\n" % (measure.trec_name, query_id, format_trec_value(measure, value))


def per_query_measures(evaluation: Evaluation) -> list[Measure]:
    """The measures with a value per query, in output order (trec_eval prints num_q in the summary only:
    its per-query value is 1)."""
    return [m for m in evaluation.measures
            if m.spec.per_query and str(m) in evaluation.values and m.family != "num_q"]


def trec_text(evaluation: Evaluation, per_query: bool = False, summary: bool = True, runid: bool = True) -> str:
    """Per-query lines (``-q``) in query order, then the ``all`` block (unless ``-n``; without its
    ``runid`` line when ``runid`` is False)."""
    return (per_query_text(evaluation) if per_query else "") + (summary_text(evaluation, runid) if summary else "")


def per_query_text(evaluation: Evaluation) -> str:
    """The per-query lines (``-q``), in query order."""
    measures = per_query_measures(evaluation)
    queries = len(evaluation.query_ids)
    if measures and queries * len(measures) < COLUMN_WISE_FROM:
        table = [(m, "%-22s\t" % m.trec_name, evaluation.values[str(m)]) for m in measures]
        return "".join(f"{name}{query_id}\t{format_trec_value(m, column[i])}\n"
                       for i, query_id in enumerate(evaluation.query_ids) for m, name, column in table)
    if measures and queries:
        return "".join(_per_query_blocks(evaluation, measures))
    return ""


def summary_text(evaluation: Evaluation, runid: bool = True) -> str:
    """The ``all`` lines (without the ``runid`` line when ``runid`` is False)."""
    return "".join(_line(measure, "all", value) for measure in evaluation.measures
                   if (value := evaluation.summary.get(measure)) is not None and (runid or measure.family != "runid"))


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


FORMAT_BATCH_VALUES = 1 << 17
"""Per-query values formatted in one call: a few measures' columns at once (one pass instead of one per
measure), not all of them (the call's temporary arrays grow with it)."""


def _formatted_columns(evaluation: Evaluation, measures: list[Measure]) -> list[pl.Series]:
    """``format_trec_column`` of each measure's per-query values; the real-valued ones (most of them) are
    formatted a batch of measures at a time, then sliced."""
    import numpy as np

    from trec_rag_eval.render import columns

    queries = len(evaluation.query_ids)
    real = [m for m in measures if m.spec.value_type not in ("str", "int")]
    per_batch = max(1, FORMAT_BATCH_VALUES // max(1, queries))
    sliced: dict[str, pl.Series] = {}
    for first in range(0, len(real) if per_batch > 1 else 0, per_batch):
        batch = real[first:first + per_batch]
        values = np.concatenate([np.asarray(evaluation.values[str(m)], dtype=np.float64) for m in batch])
        text = columns.fixed(values, 4, nan="-nan").str.pad_start(6)
        sliced.update({str(m): text.slice(i * queries, queries) for i, m in enumerate(batch)})
    return [sliced[str(m)] if str(m) in sliced else format_trec_column(m, evaluation.values[str(m)])
            for m in measures]


def trec_lines(evaluation: Evaluation, per_query: bool = False, summary: bool = True) -> Iterator[str]:
    """``trec_text`` line by line."""
    text = trec_text(evaluation, per_query, summary)
    start = 0
    while start < len(text):
        end = text.index("\n", start) + 1
        yield text[start:end]
        start = end

