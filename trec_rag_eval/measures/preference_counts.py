"""The counts the preference measures are made of, per judgment group, over all queries at once.

For a preference "a over b" of a group (``core.preference_ranking``), with "above" meaning a lower document number
(retrieved documents are numbered in rank order, before the others):

* fulfilled, retrieved: a and b retrieved, a above b;  possible, retrieved: a and b retrieved (either way);
* fulfilled, implied: a retrieved, b not;              possible, implied: exactly one of a and b retrieved;
* not occurring: neither retrieved (possible, never fulfilled).

A group of one subgroup (its lines, ``entries``) is counted without listing its pairs: for each line, the
lines of its group at a higher level, retrieved or not (binary searches over sorted (group, level) keys),
and the fulfilled retrieved pairs as inversions of the level sequence in rank order, counted bit by bit of
the levels' ranks (a stable sort and a running sum per bit). A group of several subgroups has its pairs
listed already (``pairs``). The counts are integers held in float64 (exact below 2**53).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trec_rag_eval.core.preference_ranking import PreferenceView, level_pairs


@dataclass(frozen=True)
class GroupCounts:
    """Per group: preferences fulfilled and possible (the possible include the fulfilled), and its relevant
    (level > 0) and non-relevant (level <= 0 for a one-subgroup group, counted per line; level 0 for a
    transitive group, per document) documents, all of them and the retrieved ones."""

    ful_ret: np.ndarray
    poss_ret: np.ndarray
    ful_imp: np.ndarray
    poss_imp: np.ndarray
    notoccur: np.ndarray
    num_rel: np.ndarray
    num_rel_ret: np.ndarray
    num_nonrel: np.ndarray
    num_nonrel_ret: np.ndarray


def _per_group(group: np.ndarray, weights: np.ndarray, num_groups: int) -> np.ndarray:
    return np.bincount(group, weights=weights.astype(np.float64), minlength=num_groups)


def level_codes(level: np.ndarray) -> np.ndarray:
    """Each level's rank among the distinct levels (0 the lowest)."""
    return np.unique(level, return_inverse=True)[1].astype(np.int64).reshape(-1)


def _higher(group: np.ndarray, code: np.ndarray, among: np.ndarray, span: int) -> np.ndarray:
    """For each line, the lines of ``among`` (a mask) in its group at a higher level."""
    keys = np.sort(group[among] * span + code[among])
    return np.searchsorted(keys, (group + 1) * span, "left") - np.searchsorted(keys, group * span + code, "right")


def inversions(group: np.ndarray, rank: np.ndarray, code: np.ndarray, num_groups: int) -> np.ndarray:
    """Per group, the pairs of lines (a, b) with a above b (lower rank) and a at a higher level."""
    total = np.zeros(num_groups, dtype=np.float64)
    if len(code) == 0:
        return total
    order = np.lexsort((rank, group))
    g, x = group[order], code[order]
    for bit in range(int(x.max()).bit_length() - 1, -1, -1):
        # pairs whose levels first differ at this bit: within one (group, higher bits) class, a 1 above a 0
        prefix = x >> (bit + 1)
        ones = (x >> bit) & 1
        keys = g * (int(prefix.max()) + 1) + prefix
        by_class = np.argsort(keys, kind="stable")  # keeps rank order within a class
        k, b = keys[by_class], ones[by_class]
        before = np.cumsum(b) - b  # ones strictly before, whole array
        first = np.concatenate([[True], k[1:] != k[:-1]])
        before = before - before[first][np.cumsum(first) - 1]
        total += np.bincount(g[by_class], weights=np.where(b == 0, before, 0).astype(np.float64),
                             minlength=num_groups)
    return total


def line_counts(group: np.ndarray, rank: np.ndarray, code: np.ndarray, retrieved: np.ndarray,
                num_groups: int) -> tuple[np.ndarray, ...]:
    """(ful_ret, poss_ret, ful_imp, poss_imp, notoccur) per group of one-subgroup lines: every pair of lines at
    different levels is a preference of the higher over the lower."""
    span = int(code.max()) + 1 if len(code) else 1
    by_retrieved = _higher(group, code, retrieved, span)
    by_other = _higher(group, code, ~retrieved, span)
    poss_ret = _per_group(group[retrieved], by_retrieved[retrieved], num_groups)
    ful_imp = _per_group(group[~retrieved], by_retrieved[~retrieved], num_groups)
    against_imp = _per_group(group[retrieved], by_other[retrieved], num_groups)
    notoccur = _per_group(group[~retrieved], by_other[~retrieved], num_groups)
    ful_ret = inversions(group[retrieved], rank[retrieved], code[retrieved], num_groups)
    return ful_ret, poss_ret, ful_imp, ful_imp + against_imp, notoccur


def pair_counts(group: np.ndarray, winner: np.ndarray, loser: np.ndarray, njr: np.ndarray,
                num_groups: int) -> tuple[np.ndarray, ...]:
    """(ful_ret, poss_ret, ful_imp, poss_imp, notoccur) per group of listed preferences (winner over loser);
    ``njr``: the retrieved judged documents of each preference's query."""
    won, lost = winner < njr, loser < njr
    ful_ret = _per_group(group, won & lost & (winner < loser), num_groups)
    poss_ret = _per_group(group, won & lost, num_groups)
    ful_imp = _per_group(group, won & ~lost, num_groups)
    poss_imp = _per_group(group, won != lost, num_groups)
    notoccur = _per_group(group, ~won & ~lost, num_groups)
    return ful_ret, poss_ret, ful_imp, poss_imp, notoccur


def group_counts(view: PreferenceView, distinct: bool = False) -> GroupCounts:
    """The counts of every group; ``distinct``: a line written twice in a one-subgroup group counted once
    (what a pair of documents counts, in prefs_pair)."""
    n = view.num_groups
    group, rank, level = view.entry_group, view.entry_rank, view.entry_level
    if distinct and len(group):
        once = np.concatenate([[True], (group[1:] != group[:-1]) | (rank[1:] != rank[:-1])])
        group, rank, level = group[once], rank[once], level[once]
    retrieved = rank < view.judged_ret[view.group_query[group]]
    lines = line_counts(group, rank, level_codes(level), retrieved, n)
    njr = view.judged_ret[view.group_query[view.pair_group]]
    pairs = pair_counts(view.pair_group, view.pair_winner, view.pair_loser, njr, n)
    ful_ret, poss_ret, ful_imp, poss_imp, notoccur = (a + b for a, b in zip(lines, pairs, strict=True))
    # relevant and non-relevant: lines of one-subgroup groups (<= 0 is non-relevant), documents of the others
    doc_retrieved = view.doc_rank < view.judged_ret[view.group_query[view.doc_group]]
    relevant, doc_relevant, doc_nonrel = level > 0, view.doc_level > 0, view.doc_level == 0
    num_rel = _per_group(group, relevant, n) + _per_group(view.doc_group, doc_relevant, n)
    num_rel_ret = (_per_group(group, relevant & retrieved, n)
                   + _per_group(view.doc_group, doc_relevant & doc_retrieved, n))
    num_nonrel = _per_group(group, ~relevant, n) + _per_group(view.doc_group, doc_nonrel, n)
    num_nonrel_ret = (_per_group(group, ~relevant & retrieved, n)
                      + _per_group(view.doc_group, doc_nonrel & doc_retrieved, n))
    return GroupCounts(ful_ret, poss_ret, ful_imp, poss_imp, notoccur, num_rel, num_rel_ret, num_nonrel,
                       num_nonrel_ret)


@dataclass(frozen=True)
class PairSums:
    """Per query, for prefs_pair: the sum over document pairs of the share of their preferences that the
    ranking fulfils, and the number of pairs; for pairs both retrieved (``ret``), with one retrieved
    (``imp``) and with neither (counted, never fulfilled: ``none``). ``sum_ret_imp`` adds the pairs both
    retrieved, then those with one retrieved, in trec_eval's order (so it rounds as trec_eval's sum does)."""

    sum_ret: np.ndarray
    sum_ret_imp: np.ndarray
    pairs_ret: np.ndarray
    pairs_imp: np.ndarray
    pairs_none: np.ndarray


def pair_sums(view: PreferenceView) -> PairSums:
    """``PairSums``: a query of one group from its distinct counts (every pair then scores 1 or 0, so the sum is
    a count); a query of several groups from its listed pairs of documents, each share c(a, b) / (c(a, b) +
    c(b, a)) added in trec_eval's order (pairs both retrieved, then the others, each by (a, b))."""
    q = view.num_queries
    groups_per_query = np.bincount(view.group_query, minlength=q)
    single = groups_per_query[view.group_query] == 1
    counts = group_counts(view, distinct=True)

    def one(values: np.ndarray) -> np.ndarray:
        return np.bincount(view.group_query[single], weights=values[single], minlength=q)

    sum_ret = one(counts.ful_ret)
    sum_ret_imp = one(counts.ful_ret + counts.ful_imp)
    pairs_ret, pairs_imp, pairs_none = one(counts.poss_ret), one(counts.poss_imp), one(counts.notoccur)
    several = ~single
    if several.any():
        winner, loser, pair_query = _listed_pairs(view, several)
        shared = _shares(winner, loser, pair_query, view.judged_ret, q)
        sum_ret, sum_ret_imp = sum_ret + shared[0], sum_ret_imp + shared[1]
        pairs_ret, pairs_imp, pairs_none = pairs_ret + shared[2], pairs_imp + shared[3], pairs_none + shared[4]
    return PairSums(sum_ret, sum_ret_imp, pairs_ret, pairs_imp, pairs_none)


def _listed_pairs(view: PreferenceView, chosen: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every preference of the ``chosen`` groups as (winner, loser, query): a one-subgroup group's once per pair
    of lines (a line written twice, twice), a transitive group's as listed."""
    keep = chosen[view.entry_group]
    group, rank, level = view.entry_group[keep], view.entry_rank[keep], view.entry_level[keep]
    order = np.lexsort((-level, group))
    higher, lower = level_pairs(group[order], level[order])
    ranks = rank[order]
    listed = chosen[view.pair_group]
    winner = np.concatenate([ranks[higher], view.pair_winner[listed]])
    loser = np.concatenate([ranks[lower], view.pair_loser[listed]])
    group_of = np.concatenate([group[order][higher], view.pair_group[listed]])
    return winner, loser, view.group_query[group_of]


def _shares(winner: np.ndarray, loser: np.ndarray, query: np.ndarray, njr: np.ndarray,
            num_queries: int) -> tuple[np.ndarray, ...]:
    """(sum_ret, sum_ret_imp, pairs_ret, pairs_imp, pairs_none) per query of listed preferences."""
    if len(winner) == 0:
        return tuple(np.zeros(num_queries, dtype=np.float64) for _ in range(5))
    low, high = np.minimum(winner, loser), np.maximum(winner, loser)
    forward = (winner == low).astype(np.float64)  # the document above is the one preferred
    limit = njr[query]
    kind = np.where(high < limit, 0, np.where(low < limit, 1, 2))
    order = np.lexsort((high, low, kind, query))
    q, k, lo, hi, fw = query[order], kind[order], low[order], high[order], forward[order]
    first = np.concatenate([[True], (q[1:] != q[:-1]) | (lo[1:] != lo[:-1]) | (hi[1:] != hi[:-1])])
    pair = np.cumsum(first) - 1
    ahead = np.bincount(pair, weights=fw)
    total = np.bincount(pair)
    share = ahead / total
    pq, pk = q[first], k[first]
    out = [np.bincount(pq[pk == 0], weights=share[pk == 0], minlength=num_queries),
           np.bincount(pq[pk < 2], weights=share[pk < 2], minlength=num_queries)]  # in order: kind 0, then 1
    for wanted in (0, 1, 2):
        out.append(np.bincount(pq[pk == wanted], minlength=num_queries).astype(np.float64))
    return tuple(out)
