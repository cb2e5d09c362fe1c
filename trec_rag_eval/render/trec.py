"""trec_eval's output, byte for byte: ``%-22s\\t%s\\t%6.4f`` lines, integer measures as ``%ld``.

The per-query lines (``-q``: one per query and measure, ~670,000 for ``-m all_trec`` on 7,000 queries)
are built value by value (``per_query_lines``) for a small evaluation, a column at a time (``render.columnar_text``,
``per_query_blocks``) for a large one: the ``trec`` output format (``render.output_formats``) chooses.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from trec_rag_eval.evaluation.evaluate import Evaluation
from trec_rag_eval.measures.model import Measure

if TYPE_CHECKING:
    import polars as pl

def format_trec_value(measure: Measure, value: Any, zscored: bool = False) -> str:
    """trec_eval's text of one value (its ``%6.4f``, counts as ``%ld``, NaN as glibc's ``-nan``), the one
    number format of its lines; ``format_trec_column`` writes the same bytes a column at a time. ``zscored``
    (-Z): counts are z-scores too, written as the other numbers."""
    kind = measure.spec.value_type
    if kind == "str":
        return f"'{value}'" if measure.spec.quoted else str(value)
    if kind == "int" and not zscored:
        return str(int(value))
    if math.isnan(value):
        return "%6s" % "-nan"  # glibc prints C's 0/0 this way
    return "%6.4f" % value


def format_trec_column(measure: Measure, values: Any, zscored: bool = False) -> pl.Series:
    """``format_trec_value`` of every value of one per-query column, as a string Series."""
    import polars as pl

    from trec_rag_eval.render import columnar_text

    kind = measure.spec.value_type
    if kind == "str":
        text = columnar_text.strings([str(v) for v in values])
        return pl.select(pl.concat_str([pl.lit("'"), text, pl.lit("'")])).to_series() \
            if measure.spec.quoted else text
    if kind == "int" and not zscored:
        return columnar_text.integers(values)
    return columnar_text.fixed(values, 4, nan="-nan", width=6)


def trec_label(measure: Measure, zscored: bool = False) -> str:
    """The name field of a line, padded (``%-22s``); under -Z a number's name is led by ``Z``, as trec_eval's."""
    z = "Z" if zscored and measure.spec.value_type != "str" and not measure.spec.run_tag else ""
    return z + "%-22s" % measure.trec_name


def _line(measure: Measure, query_id: str, value: Any, zscored: bool = False) -> str:
    return "%s\t%s\t%s\n" % (trec_label(measure, zscored), query_id, format_trec_value(measure, value, zscored))


def per_query_measures(evaluation: Evaluation) -> list[Measure]:
    """The measures with a value per query, in output order (trec_eval prints num_q in the summary only:
    its per-query value is 1)."""
    return [m for m in evaluation.measures
            if m.spec.per_query and m.shown in evaluation.values and m.spec.trec_per_query]


def per_query_lines(evaluation: Evaluation) -> list[str]:
    """The per-query lines, value by value (one piece)."""
    measures = per_query_measures(evaluation)
    if not measures or not evaluation.query_ids:
        return []
    z = evaluation.zscored
    table = [(m, trec_label(m, z) + "\t", evaluation.values[m.shown]) for m in measures]
    return ["".join(f"{name}{query_id}\t{format_trec_value(m, column[i], z)}\n"
                    for i, query_id in enumerate(evaluation.query_ids) for m, name, column in table)]


def per_query_blocks(evaluation: Evaluation) -> list[str]:
    """The per-query lines built a column at a time, in blocks of whole queries (in query order): no string
    of all the lines is made."""
    measures = per_query_measures(evaluation)
    if not measures or not evaluation.query_ids:
        return []
    return _per_query_blocks(evaluation, measures)


def summary_text(evaluation: Evaluation, runid: bool = True) -> str:
    """The ``all`` lines (without the ``runid`` line when ``runid`` is False)."""
    return "".join(_line(measure, "all", value, evaluation.zscored) for measure in evaluation.measures
                   if (value := evaluation.summary.get(measure)) is not None and (runid or not measure.spec.run_tag))


BLOCK_LINES = 1 << 16
"""Per-query lines built at a time: the text of a block is made while the next is not, so the output's
memory is its own size, not that of polars' columns for every line (~100 MB for 670,000 lines)."""


def _per_query_blocks(evaluation: Evaluation, measures: list[Measure]) -> list[str]:
    """The per-query lines a block of queries at a time; the blocks split over the cores in contiguous
    groups (polars and numpy release the GIL), each group formatting its own queries' values."""
    from trec_rag_eval.core.parallel import on_threads, sort_threads

    queries = len(evaluation.query_ids)
    step = max(1, BLOCK_LINES // len(measures))
    starts = list(range(0, queries, step))
    groups = min(sort_threads(), len(starts)) if queries * len(measures) >= PARALLEL_FROM else 1
    bounds = [starts[len(starts) * g // groups] for g in range(groups)] + [queries]

    def group(g: int) -> list[str]:
        return _blocks_between(evaluation, measures, bounds[g], bounds[g + 1], step)

    return [block for blocks in on_threads(group, range(groups)) for block in blocks]


PARALLEL_FROM = 1 << 18
"""Per-query lines from which their blocks are built on every core (below, threads cost more than they save)."""


def _blocks_between(evaluation: Evaluation, measures: list[Measure], first: int, last: int, step: int) -> list[str]:
    """The lines of queries ``first`` to ``last`` (excluded), ``step`` queries a block."""
    from trec_rag_eval.render import columnar_text

    names = columnar_text.strings([trec_label(m, evaluation.zscored) for m in measures])
    query_ids = columnar_text.strings(evaluation.query_ids[first:last])
    formatted = _formatted_columns(evaluation, measures, first, last)
    blocks = []
    for start in range(0, last - first, step):
        ids = query_ids.slice(start, step)
        values = columnar_text.interleave([column.slice(start, len(ids)) for column in formatted])
        blocks.append(columnar_text.separated([columnar_text.cycle(names, len(ids)),
                                               columnar_text.repeat_each(ids, len(measures)), values]))
    return blocks


FORMAT_BATCH_VALUES = 1 << 17
"""Per-query values formatted in one call: a few measures' columns at once (one pass instead of one per
measure), not all of them (the call's temporary arrays grow with it)."""


def _formatted_columns(evaluation: Evaluation, measures: list[Measure], first: int, last: int) -> list[pl.Series]:
    """``format_trec_column`` of each measure's values for queries ``first`` to ``last`` (excluded); the
    real-valued ones (most of them) are formatted a batch of measures at a time, then sliced."""
    import numpy as np

    from trec_rag_eval.render import columnar_text

    queries = last - first
    real = [m for m in measures if m.spec.value_type != "str" and (evaluation.zscored or m.spec.value_type != "int")]
    per_batch = max(1, FORMAT_BATCH_VALUES // max(1, queries))
    sliced: dict[str, pl.Series] = {}
    for start in range(0, len(real) if per_batch > 1 else 0, per_batch):
        batch = real[start:start + per_batch]
        values = np.concatenate([np.asarray(evaluation.values[m.shown], dtype=np.float64)[first:last] for m in batch])
        text = columnar_text.fixed(values, 4, nan="-nan", width=6)
        sliced.update({m.shown: text.slice(i * queries, queries) for i, m in enumerate(batch)})
    return [sliced[m.shown] if m.shown in sliced
            else format_trec_column(m, evaluation.values[m.shown][first:last], evaluation.zscored) for m in measures]
