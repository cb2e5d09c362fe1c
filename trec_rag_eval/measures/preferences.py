"""The preference measures (trec_eval's ``prefs_*``), over the judgment groups of every query at once.

Counts per group are those of ``measures.preference_counts`` (fulfilled and possible preferences: retrieved,
implied, not occurring; relevant and non-relevant documents). Per query, as trec_eval computes them:

* ``prefs_num_prefs_poss`` / ``_ful`` / ``_ful_ret``: preferences possible, fulfilled (retrieved or implied),
  fulfilled among retrieved documents; summed, not averaged, over queries;
* ``prefs_simp``: fulfilled / possible over all groups together (0 when nothing is possible); ``_ret`` counts
  only pairs both retrieved, ``_imp`` only pairs with at least one retrieved;
* ``prefs_pair``: the mean over pairs of documents of the share of their preferences (from every group) that
  the ranking fulfils; a pair neither of which is retrieved scores 0 (``_ret``: pairs both retrieved only;
  ``_imp``: pairs with one retrieved at least);
* ``prefs_avgjg``: fulfilled / possible per group (a group with nothing possible adds 0), averaged over the
  groups of the query (``_ret``, ``_imp``: as for prefs_simp); 0 when the sum is 0;
* ``prefs_avgjg_Rnonrel``: as prefs_avgjg, with each group's non-relevant documents (level 0; level <= 0 in a
  group of one subgroup) counted as many as its relevant ones, R (``_ret``: retrieved ones): with N < R
  non-relevant, R (R - N) fulfilled preferences are added for the retrieved relevant documents (and R (R - N)
  possible ones for all of them); with N > R, only the first R non-relevant documents count (rank order, the
  unretrieved after the retrieved) and the group's preferences are counted again, as trec_eval's
  ``recalculate`` does: in a group of one subgroup, its lowest level stands for the non-relevant ones, and
  every line of the group (that level's too) is paired with its first R lines; a group whose counts are 0
  makes the query's sum NaN, and the query 0. Where the lowest level holds fewer than R lines trec_eval reads
  past them, so its value is not defined: the query's value is NaN, with a warning naming the query and group.
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from trec_rag_eval.core.column_operations import offsets_of
from trec_rag_eval.core.kernel_context import Context
from trec_rag_eval.core.preference_ranking import PreferenceView
from trec_rag_eval.errors import TrecRagEvalWarning, warn
from trec_rag_eval.measures.model import Measure
from trec_rag_eval.measures.preference_counts import (
    GroupCounts,
    PairSums,
    group_counts,
    level_codes,
    line_counts,
    pair_sums,
)
from trec_rag_eval.syntax import quote


def _view(ctx: Context) -> PreferenceView:
    view = ctx.options.get("preferences")
    if view is None:  # built by the evaluation for preference judgments
        raise ValueError("the preference measures need preference judgments aligned with the ranking")
    return cast(PreferenceView, view)


def _shared(ctx: Context, key: str, make: Any) -> Any:
    cache = ctx.ranked.cache
    if key not in cache:
        cache[key] = make()
    return cache[key]


def _counts(ctx: Context) -> GroupCounts:
    return cast(GroupCounts, _shared(ctx, "prefs_counts", lambda: group_counts(_view(ctx))))


def _pairs(ctx: Context) -> PairSums:
    return cast(PairSums, _shared(ctx, "prefs_pairs", lambda: pair_sums(_view(ctx))))


def _per_query(ctx: Context, values: np.ndarray) -> np.ndarray:
    """Per-group values summed per query, in group order (trec_eval's loop)."""
    view = _view(ctx)
    return np.bincount(view.group_query, weights=values, minlength=view.num_queries)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (trec_eval leaves the value at 0)."""
    out = np.zeros(len(numerator), dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def _averaged(ctx: Context, per_group: np.ndarray) -> np.ndarray:
    """The mean over a query's groups of ``per_group``, 0 unless the sum is above 0 (a NaN sum: 0)."""
    view = _view(ctx)
    total = _per_query(ctx, per_group)
    groups = np.bincount(view.group_query, minlength=view.num_queries)
    with np.errstate(invalid="ignore"):
        above = total > 0
    return np.where(above, total / np.maximum(groups, 1), 0.0)


def num_prefs_possible(ctx: Context, m: Measure) -> np.ndarray:
    """Preferences possible, whether or not their documents are retrieved."""
    c = _counts(ctx)
    return _per_query(ctx, c.poss_ret + c.poss_imp + c.notoccur)


def num_prefs_fulfilled(ctx: Context, m: Measure) -> np.ndarray:
    """Preferences fulfilled, implied ones (only the preferred document retrieved) included."""
    c = _counts(ctx)
    return _per_query(ctx, c.ful_ret + c.ful_imp)


def num_prefs_fulfilled_ret(ctx: Context, m: Measure) -> np.ndarray:
    """Preferences fulfilled between retrieved documents."""
    return _per_query(ctx, _counts(ctx).ful_ret)


def prefs_simp(ctx: Context, m: Measure) -> np.ndarray:
    """Fulfilled / possible preferences, over all groups; 0 when none is possible."""
    c = _counts(ctx)
    return _ratio(_per_query(ctx, c.ful_ret + c.ful_imp), _per_query(ctx, c.poss_ret + c.poss_imp + c.notoccur))


def prefs_simp_ret(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_simp over the preferences between retrieved documents."""
    c = _counts(ctx)
    return _ratio(_per_query(ctx, c.ful_ret), _per_query(ctx, c.poss_ret))


def prefs_simp_imp(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_simp over the preferences with at least one document retrieved."""
    c = _counts(ctx)
    return _ratio(_per_query(ctx, c.ful_ret + c.ful_imp), _per_query(ctx, c.poss_ret + c.poss_imp))


def prefs_pair(ctx: Context, m: Measure) -> np.ndarray:
    """Mean over pairs of documents of the share of their preferences fulfilled."""
    p = _pairs(ctx)
    return _ratio(p.sum_ret_imp, p.pairs_ret + p.pairs_imp + p.pairs_none)


def prefs_pair_ret(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_pair over pairs of retrieved documents."""
    p = _pairs(ctx)
    return _ratio(p.sum_ret, p.pairs_ret)


def prefs_pair_imp(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_pair over pairs with at least one document retrieved."""
    p = _pairs(ctx)
    return _ratio(p.sum_ret_imp, p.pairs_ret + p.pairs_imp)


def prefs_avgjg(ctx: Context, m: Measure) -> np.ndarray:
    """Fulfilled / possible per group, averaged over the query's groups."""
    c = _counts(ctx)
    return _averaged(ctx, _ratio(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp + c.notoccur))


def prefs_avgjg_ret(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_avgjg over the preferences between retrieved documents."""
    c = _counts(ctx)
    return _averaged(ctx, _ratio(c.ful_ret, c.poss_ret))


def prefs_avgjg_imp(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_avgjg over the preferences with at least one document retrieved."""
    c = _counts(ctx)
    return _averaged(ctx, _ratio(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp))


def prefs_avgjg_rnonrel(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_avgjg with as many non-relevant documents as relevant ones in each group (see the module)."""
    return _rnonrel_values(ctx, retrieved_only=False)


def prefs_avgjg_rnonrel_ret(ctx: Context, m: Measure) -> np.ndarray:
    """prefs_avgjg_Rnonrel over retrieved documents: R and N count the retrieved ones."""
    return _rnonrel_values(ctx, retrieved_only=True)


def _rnonrel_values(ctx: Context, retrieved_only: bool) -> np.ndarray:
    view = _view(ctx)
    ratios, undefined = _rnonrel(view, _counts(ctx), retrieved_only)
    values = _averaged(ctx, ratios)
    if undefined.any():
        values[view.group_query[undefined]] = np.nan
        name = "prefs_avgjg_Rnonrel_ret" if retrieved_only else "prefs_avgjg_Rnonrel"
        groups = np.flatnonzero(undefined)
        shown = ", ".join(f"query {quote(view.query_ids[view.group_query[g]])} group {quote(view.group_names[g])}"
                          for g in groups[:3]) + (f" and {len(groups) - 3} more" if len(groups) > 3 else "")
        warn(TrecRagEvalWarning(
            f"{view.source}: {name} is not defined (NaN) for {shown}: the group's lowest level holds fewer lines "
            "than the group has relevant documents, and trec_eval reads past them (what it prints there depends on "
            "its memory); give the group's non-relevant documents one level (0) to score it"))
    return values


def _rnonrel(view: PreferenceView, c: GroupCounts, retrieved_only: bool) -> tuple[np.ndarray, np.ndarray]:
    """Each group's fulfilled / possible with its non-relevant documents counted as many as its relevant ones
    (NaN for 0 / 0, as trec_eval's division gives), and which groups have no defined value."""
    if retrieved_only:
        big, small = c.num_rel_ret, c.num_nonrel_ret
        ful = c.ful_ret + c.num_rel_ret * (big - small)
        poss = c.poss_ret + c.num_rel * (big - small)
    else:
        big, small = c.num_rel, c.num_nonrel
        ful = c.ful_ret + c.ful_imp + c.num_rel_ret * (big - small)
        poss = c.poss_ret + c.poss_imp + c.notoccur + c.num_rel * (big - small)
    again = big < small
    lines = again & ~view.group_arrays
    undefined = np.zeros(view.num_groups, dtype=bool)
    if lines.any():
        ful_lines, poss_lines, undefined = _recount_lines(view, lines, big, retrieved_only)
        ful, poss = np.where(lines, ful_lines, ful), np.where(lines, poss_lines, poss)
    arrays = again & view.group_arrays
    if arrays.any():
        ful_arrays, poss_arrays = _recount_arrays(view, arrays, c.num_rel, retrieved_only)
        ful, poss = np.where(arrays, ful_arrays, ful), np.where(arrays, poss_arrays, poss)
    with np.errstate(invalid="ignore", divide="ignore"):
        return ful / poss, undefined


def _recount_lines(view: PreferenceView, chosen: np.ndarray, relevant: np.ndarray, retrieved_only: bool
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """trec_eval's recount for groups of one subgroup: the preferences between the levels above the lowest,
    then every line of the group against the first R lines of the lowest level; and the groups where those are
    fewer than R (trec_eval reads past them: no defined value)."""
    n = view.num_groups
    keep = chosen[view.entry_group]
    group, rank, level = view.entry_group[keep], view.entry_rank[keep], view.entry_level[keep]
    code = level_codes(level)
    retrieved = rank < view.judged_ret[view.group_query[group]]
    lowest = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(lowest, group, code)
    last = code == lowest[group]
    above = ~last
    counts = line_counts(group[above], rank[above], code[above], retrieved[above], n)
    if retrieved_only:
        ful, poss = counts[0], counts[1].copy()
    else:
        ful, poss = counts[0] + counts[2], counts[1] + counts[3] + counts[4]
    # the lines of the lowest level, in rank order (entries are sorted by group, then rank)
    in_last = np.flatnonzero(last)
    last_group = group[in_last]
    size = np.bincount(last_group, minlength=n)
    start = offsets_of(size)[:-1]
    position = np.arange(len(in_last)) - start[last_group]
    wanted = relevant.astype(np.int64)
    size_ret = np.bincount(last_group[retrieved[in_last]], minlength=n)
    if retrieved_only:
        short = chosen & (size < wanted) & (size_ret == size)
        taken = position < np.minimum(wanted, size_ret)[last_group]
    else:
        short = chosen & (size < wanted)
        taken = position < wanted[last_group]
    targets = in_last[taken]
    span = int(rank.max()) + 2 if len(rank) else 2
    keys = np.sort(group * span + rank)
    limit = rank[targets] if retrieved_only else np.minimum(
        rank[targets], view.judged_ret[view.group_query[group[targets]]])
    before = np.searchsorted(keys, group[targets] * span + limit, "left") - np.searchsorted(
        keys, group[targets] * span, "left")
    ful = ful + np.bincount(group[targets], weights=before.astype(np.float64), minlength=n)
    paired = (np.bincount(group[retrieved], minlength=n) if retrieved_only else np.bincount(group, minlength=n))
    poss = poss + paired * np.bincount(group[targets], minlength=n)
    return ful, poss, short


def _recount_arrays(view: PreferenceView, chosen: np.ndarray, num_rel: np.ndarray, retrieved_only: bool
                    ) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's recount for transitive groups: the non-relevant documents after the first R (rank order;
    ``retrieved_only``: among the retrieved, R still the group's relevant documents) are left out."""
    n = view.num_groups
    njr = view.judged_ret[view.group_query]
    keep = chosen[view.doc_group] & (view.doc_level == 0)
    if retrieved_only:
        keep &= view.doc_rank < njr[view.doc_group]
    group, rank = view.doc_group[keep], view.doc_rank[keep]
    order = np.lexsort((rank, group))
    group, rank = group[order], rank[order]
    size = np.bincount(group, minlength=n)
    start = offsets_of(size)[:-1]
    position = np.arange(len(group)) - start[group]
    first_out = njr.copy()  # nothing left out among the retrieved when there are not R + 1
    at = position == num_rel[group].astype(np.int64)
    first_out[group[at]] = rank[at]
    out = rank >= first_out[group]
    span = int(view.judged.max()) + 1 if len(view.judged) else 1
    dropped = np.sort(group[out] * span + rank[out])

    def is_dropped(ranks: np.ndarray) -> np.ndarray:
        keys = view.pair_group * span + ranks
        found = np.minimum(np.searchsorted(dropped, keys), max(len(dropped) - 1, 0))
        return dropped[found] == keys if len(dropped) else np.zeros(len(keys), dtype=bool)

    winner, loser = view.pair_winner, view.pair_loser
    kept = chosen[view.pair_group] & ~is_dropped(winner) & ~is_dropped(loser)
    limit = njr[view.pair_group]
    if retrieved_only:
        kept &= (winner < limit) & (loser < limit)
    ful = np.bincount(view.pair_group, weights=(kept & (winner < loser) & (winner < limit)).astype(np.float64),
                      minlength=n)
    poss = np.bincount(view.pair_group, weights=kept.astype(np.float64), minlength=n)
    return ful, poss
