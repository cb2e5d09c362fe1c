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

import numpy as np

from trec_rag_eval.core.context import Context
from trec_rag_eval.core.matching import UNJUDGED
from trec_rag_eval.measures.model import Measure

CWL_DEPTH = 1000
"""cwl_eval's ranking depth (its ``max_n``, which ir_measures keeps)."""

_BLOCK_CELLS = 1 << 22  # queries x depth per block: 32 MB of doubles


def scaled_gains(ctx: Context, m: Measure) -> np.ndarray:
    """The gain of every ranked row in [0, 1] (see the module docstring)."""
    low, high = int(m.param("min_rel", 0)), int(m.param("max_rel"))
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


def _continuation(m: Measure, gains: np.ndarray) -> np.ndarray:
    """C_i for every rank of every query of the block (rank i = column i-1)."""
    rank = np.arange(1, CWL_DEPTH + 1, dtype=np.float64)
    family = m.family
    k = int(m.cutoff) if m.cutoff is not None else CWL_DEPTH
    before_k = rank < k
    if family == "SDCG":
        # C_i = log(i+1)/log(i+2) for i < k: E_i = 1/log2(i+1), DCG's discount, for i <= k
        return np.broadcast_to(np.where(before_k, np.log(rank + 1) / np.log(rank + 2), 0.0), gains.shape)
    if family == "NERR8":
        return np.where(before_k, 1.0 - gains, 0.0)
    if family == "NERR9":
        return np.where(before_k, rank / (rank + 1.0) * (1.0 - gains), 0.0)
    if family == "NERR10":
        return float(m.param("p", 0.9)) * (1.0 - gains)
    target = float(m.param("T", 1.0))
    if family == "NERR11":
        return ((rank + 2 * target - 1) / (rank + 2 * target)) ** 2 * (1.0 - gains)
    if family == "INSQ":
        return np.broadcast_to(((rank + 2 * target - 1) / (rank + 2 * target)) ** 2, gains.shape)
    if family == "INST":
        remaining = target - np.cumsum(gains, axis=1)  # T_i: the gain still wanted after rank i
        return ((rank + target + remaining - 1) / (rank + target + remaining)) ** 2
    if family == "BPM":
        # static BPM: go on while the gain so far is below T and fewer than k documents are seen
        return ((np.cumsum(gains, axis=1) < target) & before_k).astype(np.float64)
    raise ValueError(f"not a C/W/L measure: {family}")


def expected_utility(ctx: Context, m: Measure) -> np.ndarray:
    """sum_i W_i g_i per query (see the module docstring)."""
    gains = scaled_gains(ctx, m)
    out = np.zeros(ctx.Q)
    step = max(1, _BLOCK_CELLS // CWL_DEPTH)
    for first in range(0, ctx.Q, step):
        last = min(ctx.Q, first + step)
        grid = _grid(ctx, gains, first, last)
        reach = np.ones_like(grid)  # E_i = C_1 ... C_{i-1}
        np.cumprod(_continuation(m, grid)[:, :-1], axis=1, out=reach[:, 1:])
        out[first:last] = (reach * grid).sum(axis=1) / reach.sum(axis=1)
    return out
