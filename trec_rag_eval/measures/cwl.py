"""The C/W/L family (Moffat et al.; Azzopardi, Thomas & Moffat, SIGIR 2019): SDCG, NERR8-NERR11, INST,
INSQ and BPM, as cwl_eval computes them.

A C/W/L measure is a user model: C_i is the probability that a user who has seen rank i goes on to rank
i+1. The weight of rank i is W_i = E_i / sum_j E_j with E_i = C_1 ... C_{i-1} (E_1 = 1), and the measure
is the expected gain per document, sum_i W_i g_i. As in cwl_eval, the ranking is read to a depth of
``CWL_DEPTH`` = 1000 documents: longer runs are cut there, shorter ones padded with documents of gain 0,
and both sums run over all 1000 ranks (the measures that never stop, INST, INSQ, NERR10 and NERR11,
depend on that depth).

Gains (ir_measures' convention for cwl_eval): a judgment j (a negative one read as 0) is clipped to
[min_rel, max_rel] and scaled to (j - min_rel) / (max_rel - min_rel); a document without a judgment gains 0.
Every cost is 1.

The kernels build a (queries x 1000) matrix a block of queries at a time: bounded memory, no loop over
single queries.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from trec_rag_eval.core.kernel_context import Context
from trec_rag_eval.core.matching import UNJUDGED
from trec_rag_eval.measures.model import Measure

CWL_DEPTH = 1000
"""cwl_eval's ranking depth (its ``max_n``, which ir_measures keeps)."""

_BLOCK_CELLS = 1 << 22  # queries x depth per block: 32 MB of doubles


def scaled_gains(ctx: Context, m: Measure) -> np.ndarray:
    """The gain of every ranked row in [0, 1] (see the module docstring)."""
    low, high = int(m.named.get("min_rel", 0)), int(m.named["max_rel"])  # required by the notation
    judgment = np.where(ctx.rel == UNJUDGED, 0, np.maximum(ctx.rel, 0)).astype(np.float64)
    gains = (np.clip(judgment, low, high) - low) / float(high - low)
    return np.where((ctx.rel >= 0) | (ctx.rel == UNJUDGED), gains, 0.0)


def _grid(ctx: Context, gains: np.ndarray, first: int, last: int) -> np.ndarray:
    """Gains of queries first..last-1 as a (queries x CWL_DEPTH) matrix, 0 past each ranking's end."""
    grid = np.zeros((last - first, CWL_DEPTH))
    start, stop = int(ctx.offsets[first]), int(ctx.offsets[last])
    rows = np.arange(start, stop)
    positions = ctx.pos[start:stop]
    keep = positions <= CWL_DEPTH
    grid[ctx.qidx[start:stop][keep] - first, positions[keep] - 1] = gains[rows[keep]]
    return grid


Continuation = Callable[[Measure, np.ndarray, np.ndarray], np.ndarray]
"""A user model: C_i for every rank of every query of a block (rank i = column i-1), from the measure,
``rank`` (1 to CWL_DEPTH) and the block's gains."""


def _before(m: Measure, rank: np.ndarray) -> np.ndarray:
    """Whether each rank is above the measure's cutoff k (every rank when it has none)."""
    return rank < (int(m.cutoff) if m.cutoff is not None else CWL_DEPTH)


def _number(m: Measure, key: str) -> float:
    """The measure's parameter ``key``, or its default (the family's registry entry)."""
    return float(m.named.get(key, m.spec.params[key].default))


def _sdcg(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    # C_i = log(i+1)/log(i+2) for i < k: E_i = 1/log2(i+1), DCG's discount, for i <= k
    return np.broadcast_to(np.where(_before(m, rank), np.log(rank + 1) / np.log(rank + 2), 0.0), gains.shape)


def _nerr8(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    return np.where(_before(m, rank), 1.0 - gains, 0.0)


def _nerr9(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    return np.where(_before(m, rank), rank / (rank + 1.0) * (1.0 - gains), 0.0)


def _nerr10(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    return _number(m, "p") * (1.0 - gains)


def _nerr11(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    target = _number(m, "T")
    return ((rank + 2 * target - 1) / (rank + 2 * target)) ** 2 * (1.0 - gains)


def _insq(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    target = _number(m, "T")
    return np.broadcast_to(((rank + 2 * target - 1) / (rank + 2 * target)) ** 2, gains.shape)


def _inst(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    target = _number(m, "T")
    remaining = target - np.cumsum(gains, axis=1)  # T_i: the gain still wanted after rank i
    return ((rank + target + remaining - 1) / (rank + target + remaining)) ** 2


def _bpm(m: Measure, rank: np.ndarray, gains: np.ndarray) -> np.ndarray:
    # static BPM: go on while the gain so far is below T and fewer than k documents are seen
    target = _number(m, "T")
    return ((np.cumsum(gains, axis=1) < target) & _before(m, rank)).astype(np.float64)


def expected_utility(ctx: Context, m: Measure, continuation: Continuation) -> np.ndarray:
    """sum_i W_i g_i per query under the user model ``continuation`` (see the module docstring)."""
    gains = scaled_gains(ctx, m)
    rank = np.arange(1, CWL_DEPTH + 1, dtype=np.float64)
    out = np.zeros(ctx.Q)
    step = max(1, _BLOCK_CELLS // CWL_DEPTH)
    for first in range(0, ctx.Q, step):
        last = min(ctx.Q, first + step)
        grid = _grid(ctx, gains, first, last)
        reach = np.ones_like(grid)  # E_i = C_1 ... C_{i-1}
        np.cumprod(continuation(m, rank, grid)[:, :-1], axis=1, out=reach[:, 1:])
        out[first:last] = (reach * grid).sum(axis=1) / reach.sum(axis=1)
    return out


def sdcg(ctx: Context, m: Measure) -> np.ndarray:
    """SDCG@k: DCG's discount to rank k, scaled by the discount's own sum."""
    return expected_utility(ctx, m, _sdcg)


def nerr8(ctx: Context, m: Measure) -> np.ndarray:
    """NERR8@k: go on with probability 1 - g_i up to rank k."""
    return expected_utility(ctx, m, _nerr8)


def nerr9(ctx: Context, m: Measure) -> np.ndarray:
    """NERR9@k: go on with probability (i/(i+1)) (1 - g_i) up to rank k."""
    return expected_utility(ctx, m, _nerr9)


def nerr10(ctx: Context, m: Measure) -> np.ndarray:
    """NERR10: go on with probability p (1 - g_i)."""
    return expected_utility(ctx, m, _nerr10)


def nerr11(ctx: Context, m: Measure) -> np.ndarray:
    """NERR11: go on with probability ((i+2T-1)/(i+2T))^2 (1 - g_i)."""
    return expected_utility(ctx, m, _nerr11)


def insq(ctx: Context, m: Measure) -> np.ndarray:
    """INSQ: go on with probability ((i+2T-1)/(i+2T))^2."""
    return expected_utility(ctx, m, _insq)


def inst(ctx: Context, m: Measure) -> np.ndarray:
    """INST: go on with probability ((i+T+T_i-1)/(i+T+T_i))^2, T_i the gain still wanted."""
    return expected_utility(ctx, m, _inst)


def bpm(ctx: Context, m: Measure) -> np.ndarray:
    """BPM@k (static): go on while the gain so far is below T and fewer than k documents are seen."""
    return expected_utility(ctx, m, _bpm)
