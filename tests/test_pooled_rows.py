"""The kernels read only the ranked rows with a qrels entry (``Context.pooled``): a row outside the pool
adds nothing to any sum, so every value must be bit for bit the one computed over every row (the way the
kernels worked before, and still do where a negative level or a custom gain reaches outside the pool)."""

from __future__ import annotations

import numpy as np
import pytest

import trec_rag_eval as tre
from trec_rag_eval.core.kernel_context import Context, Rows

MEASURES = ["all_trec", "Judged@5", "Judged", "F1@3", "ERR@10", "nDCG(gains={1:3,2:9})@5", "nDCG(dcg='exp-log2')@5",
            "ndcg_rel.1=3,2=9", "Rndcg.0=1,1=2", "G.2=5", "rbp.p=0.5", "rbp_resid.p=0.8", "infAP",
            "nDCG(gains={0:-1})@10", "rbp.0=-1,1=3", "RBP(rel=2)@5", "RBP@3", "relstring.4", "unj.2,7",
            "P(denominator='returned')@5", "nDCG(ideal='retrieved')@5"]


def _pair(seed: int) -> tuple[dict, dict]:
    """Queries of 0-40 ranked documents (tied scores included), judged 0-3, some -1 (unjudged in the
    qrels), some unjudged documents retrieved, one query with nothing relevant, one missing."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        docs = [f"d{i}" for i in range(60)]
        judged = rng.choice(60, size=int(rng.integers(1, 25)), replace=False)
        qrels[f"q{q}"] = {docs[i]: int(rng.choice([-1, 0, 0, 1, 2, 3])) for i in judged}
        if q == 3:
            qrels["q3"] = {d: 0 for d in qrels["q3"]}
        if q == 5:
            continue  # missing from the run
        ranked = rng.choice(60, size=int(rng.integers(0, 41)), replace=False)
        run[f"q{q}"] = {docs[i]: float(rng.integers(0, 8)) for i in ranked}
    return qrels, run


_CANDIDATES = Context.candidates


def _every_row(self: Context, every_row: bool = True) -> Rows:
    return _CANDIDATES(self, every_row=True)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("level", [0, 1, 2, 4])
@pytest.mark.parametrize("judged_only", [False, True])
def test_the_pooled_rows_give_the_values_of_every_row(seed: int, level: int, judged_only: bool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, run = _pair(seed)
    fast = tre.evaluate(qrels, run, MEASURES, relevance_level=level, judged_only=judged_only)
    with monkeypatch.context() as patch:
        patch.setattr(Context, "pooled", property(_every_row))
        patch.setattr(Context, "candidates", _every_row)
        slow = tre.evaluate(qrels, run, MEASURES, relevance_level=level, judged_only=judged_only)
    assert fast.query_ids == slow.query_ids and list(fast.values) == list(slow.values)
    for name in fast.values:
        a, b = fast.values[name], slow.values[name]
        if isinstance(a, list):
            assert a == b, name
        else:
            np.testing.assert_array_equal(a, b, err_msg=name)  # equal to the bit, NaN where NaN


@pytest.mark.parametrize("depths", ["equal", "unequal"])
def test_rbp_resid_adds_the_unjudged_ranks_in_order(depths: str) -> None:
    """rbp_resid = p^N + (1-p) * (p^(k-1) summed over the unjudged ranks k, in rank order, one addition at a
    time): exactly trec_eval's loop, whether every query has the same depth (summed as a matrix) or not."""
    rng = np.random.default_rng(5)
    p = 0.8
    qrels, run = {}, {}
    for q in range(30):
        depth = 50 if depths == "equal" else int(rng.integers(1, 60))
        docs = [f"d{i}" for i in range(depth)]
        run[f"q{q}"] = {d: float(depth - i) for i, d in enumerate(docs)}
        qrels[f"q{q}"] = {d: int(rng.integers(0, 3)) for d in docs if rng.random() < 0.3} or {"x": 1}
    got = tre.evaluate(qrels, run, ["rbp_resid.p=0.8"])
    for i, q in enumerate(got.query_ids):
        ranked = sorted(run[q], key=lambda d: -run[q][d])
        unknown, power = 0.0, 1.0
        for doc in ranked:
            if doc not in qrels[q]:
                unknown += power
            power *= p
        expected = power + (1 - p) * unknown if any(d not in qrels[q] for d in ranked) else 0.0
        assert got.values["rbp_resid.p=0.8"][i] == expected, q
