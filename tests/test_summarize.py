"""Every measure's summary taken at once (``evaluation.evaluate.summarize``, one cumulative sum over a matrix of
measures x queries) is the summary ``aggregate`` takes of each measure alone, to the bit: the same doubles (the sign
of a zero included), the same None, run tag and strings, the same refusal of a sum that overflows, under -c and
without. The values given are any numbers: these rules read a measure's family only for how it is aggregated."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import trec_rag_eval as tre
from trec_rag_eval.errors import UsageError
from trec_rag_eval.evaluation.aggregation import aggregate
from trec_rag_eval.evaluation.evaluate import summarize

NAMES = ["P@5", "num_ret", "gm_map", "runid", "num_rel", "relstring@3", "map", "num_q", "gm_bpref", "nDCG@10"]
MEASURES = [tre.parse_measure(name) for name in NAMES]


def _one_at_a_time(values: dict[Any, Any], num_queries: int, judgments: Any, complete: bool) -> dict[Any, Any]:
    """What each measure's summary was before: ``aggregate`` called measure by measure, in order."""
    return {m: aggregate(m, values.get(m), num_queries, judgments, complete, "tag") for m in MEASURES}


def _same(ours: Any, theirs: Any) -> bool:
    """Equal to the bit: a float's sign of zero and NaN included; anything else by ==."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return ours.hex() == theirs.hex() or (math.isnan(ours) and math.isnan(theirs))
    return type(ours) is type(theirs) and ours == theirs


def _assert_same(values: dict[Any, Any], num_queries: int, judgments: Any = None, complete: bool = False) -> None:
    try:
        expected = _one_at_a_time(values, num_queries, judgments, complete)
    except UsageError as err:  # a sum of finite values that overflows: refused alike, naming the same measure
        with pytest.raises(UsageError) as raised:
            summarize(MEASURES, values, num_queries, judgments, complete, "tag")
        assert str(raised.value) == str(err)
        return
    got = summarize(MEASURES, values, num_queries, judgments, complete, "tag")
    assert list(got) == MEASURES
    assert all(_same(got[m], expected[m]) for m in MEASURES), {str(m): (got[m], expected[m]) for m in MEASURES
                                                               if not _same(got[m], expected[m])}


def _values(columns: dict[str, Any], n: int | None = None) -> dict[Any, Any]:
    """Keyed by Measure, as the kernels give them (runid has none); with ``n``, the measures ``columns`` leaves out
    given n values of 0.5 (n strings for relstring)."""
    assert set(columns) <= set(NAMES)
    if n is not None:
        columns = {name: ["-"] * n if m.spec.value_type == "str" else np.full(n, 0.5)
                   for name, m in zip(NAMES, MEASURES, strict=True)} | columns
    return {m: columns[name] for name, m in zip(NAMES, MEASURES, strict=True) if name in columns and not m.spec.run_tag}


def test_the_summaries_at_once_are_each_measure_s_alone_on_chosen_values() -> None:
    # in query order from 0.0: 1e16 + 1 + 1 - 1e16 is 0.0 one at a time (pairwise, 2.0); all -0.0 sum to 0.0
    n = 4
    columns = {
        "P@5": np.array([1e16, 1.0, 1.0, -1e16]),
        "num_ret": np.array([3, 0, 7, 2], dtype=np.int64),
        "gm_map": np.array([0.0, 1e-7, 0.5, -0.0]),  # floored at 1e-5 before the logarithm
        "num_rel": np.array([1, 2, 0, 5], dtype=np.int32),
        "relstring@3": ["R--", "---", "RR-", "-R-"],
        "map": np.array([-0.0, -0.0, -0.0, -0.0]),
        "num_q": np.ones(n, dtype=np.int64),
        "gm_bpref": np.array([0.25, 0.5, 1.0, 0.125], dtype=np.float32),  # float32 made float64 before the floor
        "nDCG@10": np.array([0.1, 0.2, 0.3, 0.4]),
    }
    _assert_same(_values(columns), n)
    _assert_same(_values(columns), n, judgments=np.array([2, 1, 0, -1, 3]), complete=True)  # num_rel recounted
    _assert_same(_values(columns), n, judgments=None, complete=True)  # nothing to recount over: the sum
    assert summarize(MEASURES, _values(columns), n, None, False, "tag")[MEASURES[0]] == 0.0
    assert math.copysign(1.0, summarize(MEASURES, _values(columns), n, None, False, "tag")[MEASURES[6]]) == 1.0


def test_no_query_a_nan_an_infinity_and_an_overflow_are_each_measure_s_alone() -> None:
    empty = {name: ([] if m.spec.value_type == "str" else np.array([], dtype=np.float64))
             for name, m in zip(NAMES, MEASURES, strict=True) if not m.spec.run_tag}
    _assert_same(_values(empty), 0)  # no query: the means None, the sums 0.0
    special = {"P@5": np.array([0.5, np.nan]), "nDCG@10": np.array([np.inf, 0.5]), "map": np.array([-np.inf, 1.0]),
               "gm_map": np.array([np.inf, 1.0]), "num_ret": np.array([1, 2])}
    _assert_same(_values(special, 2), 2)  # non-finite values give a non-finite summary, kept as trec_eval prints it
    overflow = {"P@5": np.array([0.5, 0.5]), "num_ret": np.array([1e308, 1e308]), "map": np.array([1e308, 1e308])}
    _assert_same(_values(overflow, 2), 2)  # the first measure whose finite values' sum overflows is refused
    with pytest.raises(UsageError, match="^measure 'NumRet' has no finite value on this run"):
        summarize(MEASURES, _values(overflow, 2), 2, None, False, "tag")
    ragged = {"P@5": np.array([0.5, 0.25, 0.125]), "map": [0.5, 0.25], "nDCG@10": np.array([[0.5, 0.25]])}
    _assert_same(_values(ragged, 2), 2)  # columns of another length or shape, or lists: each measure's own way


@pytest.mark.parametrize("seed", range(40))
def test_the_summaries_at_once_are_each_measure_s_alone_on_seeded_values(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 60))
    scale = 10.0 ** rng.integers(-12, 300)
    columns: dict[str, Any] = {}
    for name, m in zip(NAMES, MEASURES, strict=True):
        if m.spec.run_tag:
            continue
        if m.spec.value_type == "str":
            columns[name] = ["".join(rng.choice(["R", "-"], 3)) for _ in range(n)]
        elif m.spec.value_type == "int":
            columns[name] = rng.integers(0, 1000, n)
        else:
            column = rng.standard_normal(n) * scale
            column[rng.random(n) < 0.2] = -0.0
            column[rng.random(n) < 0.1] = 0.0
            columns[name] = column
    judgments = rng.integers(-1, 4, 3 * n)
    _assert_same(_values(columns), n)
    _assert_same(_values(columns), n, judgments, complete=True)
