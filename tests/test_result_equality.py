"""A result holding numpy arrays (a comparison's per-query values and p-values, a plan's, an agreement's) equals a
result of the same values, NaN equal to NaN, where the equality dataclass made compared the arrays by their truth
and raised "the truth value of an array is ambiguous" (tests/test_table_equality.py: tables and evaluations)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import trec_rag_eval as tre
from trec_rag_eval.value_equality import same_values

QRELS = {f"q{i}": {"a": 1, "b": i % 2} for i in range(6)}
ONE = {f"q{i}": {"a": 1.0 * (i % 3), "b": 0.5, "c": 0.2} for i in range(6)}
TWO = {f"q{i}": {"a": 0.3, "b": 1.0 * (i % 2), "c": 0.1} for i in range(6)}
OTHER = {f"q{i}": {"a": 0.9, "b": 0.1, "c": 0.5} for i in range(6)}

RESULTS = {
    "Comparison": lambda two: tre.compare(QRELS, [ONE, two], ["P@1", "AP"]),
    "AllPairs": lambda two: tre.compare(QRELS, [ONE, two, OTHER], ["AP"], pairs="all"),
    "TopicSetPlan": lambda two: tre.plan(QRELS, [ONE, two], ["AP"], delta=0.1),
    "Agreement": lambda two: tre.agree(QRELS, {**QRELS, "q0": {"a": 0, "b": 1}}, [ONE, two], ["AP"]),
    "Fusion": lambda two: tre.fuse([ONE, two]),
}


@pytest.mark.parametrize("name", list(RESULTS))
def test_a_result_equals_a_result_of_the_same_values(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        first, again, other = RESULTS[name](TWO), RESULTS[name](TWO), RESULTS[name](OTHER)
    assert type(first).__name__ == name
    assert first == again and not first != again
    assert first != other


def test_values_are_compared_value_by_value_and_nan_equals_nan():
    assert same_values({"AP": np.array([0.5, math.nan])}, {"AP": np.array([0.5, math.nan])})
    assert not same_values({"AP": np.array([0.5, math.nan])}, {"AP": np.array([0.5, 0.0])})
    assert same_values([math.nan, 1.0], [float("nan"), 1.0]) and not same_values([1.0], (1.0,))
    assert not same_values({"AP": np.array([0.5])}, {"AP": np.array([0.5]), "P@1": np.array([1.0])})


def test_an_evaluation_with_its_context_cost_equals_one_of_the_same_counts():
    from trec_rag_eval.evaluation.context_cost import ContextCost

    def cost(tokens):
        return ContextCost(ks=[5], query_ids=["q1", "q2"], tokens={5: np.array(tokens)})

    assert cost([120, 80]) == cost([120, 80]) and cost([120, 80]) != cost([120, 81])


@pytest.mark.parametrize("name", ["Comparison", "AllPairs", "TopicSetPlan", "Agreement", "Fusion"])
def test_a_result_compared_by_its_values_is_not_hashable_and_says_so_by_its_class(name):
    # a frozen dataclass with an __eq__ of its own got dataclass's hash of its fields: Hashable said yes, and hash()
    # raised "unhashable type: 'list'" (or would have hashed two equal results, NaN in each, apart)
    from collections.abc import Hashable

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = RESULTS[name](TWO)
    assert not isinstance(result, Hashable)
    with pytest.raises(TypeError, match=f"unhashable type: '{name}'"):
        hash(result)


def test_a_context_cost_is_not_hashable_either():
    from collections.abc import Hashable

    from trec_rag_eval.evaluation.context_cost import ContextCost

    cost = ContextCost(ks=[5], query_ids=["q1"], tokens={5: np.array([120])})
    assert not isinstance(cost, Hashable)
    with pytest.raises(TypeError, match="unhashable type: 'ContextCost'"):
        hash(cost)


def test_an_agreement_with_a_nan_equals_one_of_the_same_values():
    # a kappa undefined (NaN: one grade only) on both sides; dataclass's equality compared the fields as tuples,
    # where NaN differs from NaN, so an agreement differed from its own copy
    from dataclasses import replace

    agreement = RESULTS["Agreement"](TWO)
    one = replace(agreement, labels=replace(agreement.labels, kappa_binary=float("nan")))
    other = replace(agreement, labels=replace(agreement.labels, kappa_binary=float("nan")))  # another NaN object
    assert one == other and one != agreement
