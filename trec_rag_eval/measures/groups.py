"""Measures averaged over judgment groups (trec_eval's ``map_avgjg``, ``P_avgjg``, ``Rprec_mult_avgjg``).

Qrels of several judgment groups (``-R qrels_jg``: the iteration column names the group, e.g. one user's
judgments) are scored group by group: each group judges the query's ranking as if its judgments were the only
qrels (``core.group_ranking``), the measure of one judgment per document is computed for it (map, P@k, Rprec_mult,
with their edge cases: 0 when the group has no relevant document), and the query's value is the mean over its
groups, added in byte order of the group's name as trec_eval adds them.
"""

from __future__ import annotations

from typing import cast

import numpy as np

from trec_rag_eval.core.group_ranking import GroupView
from trec_rag_eval.core.kernel_context import Context
from trec_rag_eval.measures import binary
from trec_rag_eval.measures.model import Measure


def _view(ctx: Context) -> GroupView:
    view = ctx.options.get("groups")
    if view is None:  # built by the evaluation for judgment-group qrels
        raise ValueError("the *_avgjg measures need judgment-group qrels aligned with the ranking")
    return cast(GroupView, view)


def _per_group(ctx: Context) -> tuple[GroupView, Context]:
    """The groups' view and a context over its (query, group) queries at this measure's level."""
    view = _view(ctx)
    key = ("groups", ctx.level)
    cache = ctx.ranked.cache
    if key not in cache:
        cache[key] = Context(view.ranked, ctx.level, {k: v for k, v in ctx.options.items() if k != "groups"})
    return view, cast(Context, cache[key])


def _mean_over_groups(view: GroupView, values: np.ndarray) -> np.ndarray:
    """Each query's mean of its groups' values (summed in group order, then divided by their number)."""
    total = np.bincount(view.group_query, weights=np.asarray(values, dtype=np.float64), minlength=view.num_queries)
    groups = np.bincount(view.group_query, minlength=view.num_queries)
    return total / np.maximum(groups, 1)


def map_avgjg(ctx: Context, m: Measure) -> np.ndarray:
    """AP of each judgment group (sum of P@k at its relevant retrieved documents, divided by its R; 0 when R
    = 0), averaged over the query's groups."""
    view, inner = _per_group(ctx)
    return _mean_over_groups(view, binary.average_precision(inner, Measure("map")))


def p_avgjg(ctx: Context, m: Measure) -> np.ndarray:
    """P@k of each judgment group (always divided by k), averaged over the query's groups."""
    view, inner = _per_group(ctx)
    return _mean_over_groups(view, binary.precision(inner, Measure("P", m.cutoff)))


def rprec_mult_avgjg(ctx: Context, m: Measure) -> np.ndarray:
    """P@floor(x R + 0.9) of each judgment group (R its relevant documents; 0 at a cutoff below 1), averaged
    over the query's groups."""
    view, inner = _per_group(ctx)
    return _mean_over_groups(view, binary.r_precision_mult(inner, Measure("Rprec_mult", m.cutoff)))
