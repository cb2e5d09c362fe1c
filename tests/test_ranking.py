"""The one ranking rule, whatever order the lines come in (the fast paths must not change it)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from conftest import first_by_default
from hypothesis import given, settings
from hypothesis import strategies as st

from trec_rag_eval.core import ordering
from trec_rag_eval.core.ranking import rank
from trec_rag_eval.tables import RUN_SCHEMA, Qrels, Run, run_columns

pytestmark = pytest.mark.usefixtures("table_form")  # lists and polars frames alike


@st.composite
def pairs(draw):
    n_queries = draw(st.integers(1, 5))
    rows, judgments = [], {}
    for q in range(n_queries):
        qid = draw(st.sampled_from(["1", "2", "10", "a", "B", "é"])) + str(q)
        docs = draw(st.lists(st.sampled_from([f"d{i}" for i in range(30)]), min_size=0, max_size=12, unique=True))
        for d in docs:
            rows.append((qid, d, float(draw(st.integers(0, 3)))))  # few distinct scores: many ties
        judgments[qid] = {d: draw(st.integers(-1, 3)) for d in docs[: len(docs) // 2 + 1]} or {"dx": 1}
    return rows, judgments


def _expected(rows, judgments):
    """The rule written the slow way: per query, sort by (score desc, doc_id desc in bytes)."""
    out = []
    for qid in sorted(judgments, key=lambda q: q.encode()):
        by_doc = sorted((r for r in rows if r[0] == qid), key=lambda r: r[1].encode(), reverse=True)
        ranked = sorted(by_doc, key=lambda r: -r[2])  # stable: doc_id descending stays within a score
        if not ranked:
            out.append(-1)  # the dummy document of a query missing from the run
        for _, doc, _ in ranked:
            value = judgments[qid].get(doc)
            out.append(-1 if value is None else (-2 if value < 0 else value))
    return out


def _any_line_order(data, random):
    rows, judgments = data
    qrels = Qrels.from_dict(judgments)
    expected = _expected(rows, judgments)
    shuffled = list(rows)
    random.shuffle(shuffled)
    # grouped by query, blocks in random order, scores descending, ties in random order: the fast path
    blocks = {}
    for r in shuffled:
        blocks.setdefault(r[0], []).append(r)
    grouped = [r for q in random.sample(list(blocks), len(blocks)) for r in sorted(blocks[q], key=lambda r: -r[2])]
    # grouped by query, each block in random line order: its blocks out of score order are sorted on their own,
    # together (few rows a block) or one by one (BLOCK_SORT_MIN_ROWS rows a block on average)
    unsorted = [r for q in random.sample(list(blocks), len(blocks)) for r in random.sample(blocks[q], len(blocks[q]))]
    for order in (shuffled, grouped, unsorted):
        # the two sorts of a small run (SMALL_SORT_ROWS), or the blocks recognised and sorted as a large run's
        for one_by_one, small in ((False, 0), (True, 0), (False, 1 << 14)):
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(ordering, "BLOCK_SORT_MIN_ROWS", 1 if one_by_one else 1 << 30)
                patch.setattr(ordering, "SMALL_SORT_ROWS", small)
                for run in (Run(pl.DataFrame(order, schema=RUN_SCHEMA, orient="row"), checked=True),
                            Run(run_columns(order), checked=True)):
                    assert rank(qrels, run).rel.tolist() == expected


@pytest.mark.parametrize("examples", first_by_default([40, 150]))  # 150 examples with -m slow
def test_any_line_order_gives_the_trec_eval_ranking(examples):
    settings(max_examples=examples, deadline=None)(given(pairs(), st.randoms(use_true_random=False))(_any_line_order))()


@settings(max_examples=60, deadline=None)
@given(pairs(), st.randoms(use_true_random=False), st.booleans(), st.booleans())
def test_a_run_given_as_a_dict_of_dicts_is_ranked_by_the_rule(data, random, empty, foreign):
    """A dict of dicts is read as blocks of one query each, whose starts the ranking takes from their lengths
    (``ordering.block_starts``): the same ranking, with queries in any order, a query answered with an empty
    dict, and (``foreign``) a query the qrels do not have, whose rows are dropped, so that the blocks are found
    from the rows again."""
    rows, judgments = data
    by_query: dict[str, dict[str, float]] = {}
    for query, doc, score in rows:
        by_query.setdefault(query, {})[doc] = score
    if empty:
        by_query.setdefault("empty", {})
    if foreign:
        by_query["foreign"] = {"d1": 5.0, "d2": 1.0}
    shuffled = dict(random.sample(list(by_query.items()), len(by_query)))
    assert rank(Qrels.from_dict(judgments), Run(shuffled)).rel.tolist() == _expected(rows, judgments)
    cut = rank(Qrels.from_dict(judgments), Run(shuffled), depth=3)  # matched through hashes, every row is kept
    offsets = cut.offsets.tolist()
    kept = [v for a, b in zip(offsets[:-1], offsets[1:], strict=True) for v in cut.rel[a:b][:3].tolist()]
    assert kept == _top(rows, judgments, 3)


def test_block_lengths_that_are_not_the_rows_are_not_trusted():
    """``block_starts`` takes the starts from the blocks' lengths only when they add up to the rows; else it finds
    them in the rows, as without lengths (a table whose rows were cut would otherwise be ranked in wrong blocks)."""
    rows = np.array([2, 2, 0, 0, 0, 1], dtype=np.int32)
    assert ordering.block_starts(rows, [2, 0, 3, 1]).tolist() == [0, 2, 5]
    assert ordering.block_starts(rows, [2, 3]).tolist() == ordering.block_starts(rows).tolist() == [0, 2, 5]
    assert ordering.block_starts(rows, [3, 3]).tolist() == [0, 3]  # trusted: they add up (each block its query)


def _top(rows, judgments, depth):
    """``_expected`` cut at each query's first ``depth`` rows."""
    out = []
    for qid in sorted(judgments, key=lambda q: q.encode()):
        mine = [r for r in rows if r[0] == qid]
        out.extend(_expected(mine, {qid: judgments[qid]})[:depth])
    return out


def test_doc_id_descending_in_byte_order_breaks_ties():
    qrels = Qrels.from_dict({"q": {"d9": 1}})
    run = Run.from_dict({"q": {"d10": 1.0, "d9": 1.0, "D9": 1.0, "d90": 1.0}})
    # bytes: "d90" > "d9" > "d10" > "D9"
    assert rank(qrels, run).rel.tolist() == [-1, 1, -1, -1]
    assert np.array_equal(rank(qrels, run, max_retrieved=2).rel, [-1, 1])


def test_ids_given_as_numbers_are_read_as_their_text():
    # pytrec_eval and ranx dicts sometimes carry int ids: they mean what a TREC file would spell
    qrels = Qrels.from_dict({1: {10: 1, 9: 0}})
    run = Run.from_dict({1: {10: 2.0, 9: 2.0}})
    assert qrels.to_dict() == {"1": {"10": 1, "9": 0}}
    # a tie: doc ids compared as text, "9" > "10", so 9 (judged 0) comes first
    ranked = rank(qrels, run)
    assert ranked.query_ids == ["1"] and ranked.rel.tolist() == [0, 1]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 2000), st.sampled_from([1, 2, 7, 300, 70_000, 200_000]), st.integers(1, 600),
       st.integers(1, 4), st.sampled_from([np.int32, np.int64]), st.randoms(use_true_random=False))
def test_sort_in_parts_on_threads_orders_by_group_then_score(n, groups, part_rows, threads, dtype, random):
    """The interleaved-run sort (parts of whole groups on threads, a radix sort of the group numbers
    16 bits at a time: more than 65,536 groups take two passes) gives what numpy's lexsort gives on
    (group ascending, score descending), and every row once."""
    from trec_rag_eval.core import ordering, parallel

    rng = np.random.default_rng(random.randrange(1 << 32))
    group = rng.integers(0, groups, n).astype(dtype)
    scores = np.round(rng.random(n) * 5, 1)  # few distinct scores: many ties, in any order
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ordering, "SORT_PART_ROWS", part_rows)
        patch.setattr(parallel, "sort_threads", lambda: threads)
        order = ordering._order_by_group_then_score(group, scores)
    expected = np.lexsort((-scores, group))
    assert np.array_equal(group[order], group[expected]) and np.array_equal(scores[order], scores[expected])
    assert np.array_equal(np.sort(order), np.arange(n))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.integers(1, 300), st.sampled_from([1, 3, 100])), min_size=1, max_size=40),
       st.sampled_from([1, 8, 1 << 30]), st.randoms(use_true_random=False))
def test_blocks_sorted_one_by_one_order_by_block_then_score(lengths, matrix_from, random):
    """Query blocks out of score order, sorted each on its own (``_order_within_blocks``): what numpy's
    lexsort gives on (block ascending, score descending), every row once; ties (few distinct scores,
    -0.0 beside 0.0, infinities) in any order."""
    rng = np.random.default_rng(random.randrange(1 << 32))
    lengths = np.array(lengths)
    group = np.repeat(np.arange(len(lengths)), lengths)
    scores = rng.choice([-np.inf, -1.5, -0.0, 0.0, 0.25, 3.0, np.inf], len(group))
    # blocks of one length sorted as the rows of a matrix (MATRIX_MIN_BLOCKS of them on), or each alone
    patch = pytest.MonkeyPatch()
    patch.setattr(ordering, "MATRIX_MIN_BLOCKS", matrix_from)
    order = ordering._order_within_blocks(scores, lengths)
    expected = np.lexsort((-scores, group))
    assert np.array_equal(group[order], group[expected]) and np.array_equal(scores[order], scores[expected])
    assert np.array_equal(np.sort(order), np.arange(len(group)))
    # a NaN (Run.from_dict keeps one) takes the place the sort of every row together gives it: first
    scores[rng.integers(0, len(scores), max(1, len(scores) // 10))] = np.nan
    together = ordering._order_by_group_then_score(group, scores, 1)
    order = ordering._order_within_blocks(scores, lengths)
    patch.undo()
    assert np.array_equal(group[order], group[together])
    assert np.array_equal(scores[order], scores[together], equal_nan=True)


@pytest.mark.parametrize("rows", [63, 64, 300])
def test_a_nan_score_ranks_alike_whichever_way_its_block_is_sorted(rows):
    # Run.from_dict and frames keep a NaN score; a block out of order is sorted with the others or on its own
    # (BLOCK_SORT_MIN_ROWS), and the NaN document takes the same place both ways
    import random

    shuffled = [("q1", f"d{i:03d}", float("nan") if i == 5 else float(i)) for i in range(rows)]
    random.Random(1).shuffle(shuffled)
    qrels = Qrels.from_dict({"q1": {"d005": 1}})
    places = []
    for threshold in (1, 1 << 30):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(ordering, "BLOCK_SORT_MIN_ROWS", threshold)
            run = Run(pl.DataFrame(shuffled, schema=RUN_SCHEMA, orient="row"), checked=True)
            places.append(rank(qrels, run).rel.tolist())
    assert places[0] == places[1]


@pytest.mark.parametrize("seed", range(12))
def test_blocks_of_one_length_are_sorted_as_a_matrix_and_give_the_trec_eval_ranking(seed, monkeypatch):
    """A small run whose queries come in blocks of one length (a run cut at one depth, as a dict of dicts gives
    it) is sorted block by block as the rows of one matrix, its blocks then put in query order: the rule written
    the slow way (``_expected``) holds, blocks in any order, lines in score order or not, many ties."""
    import random

    rng = random.Random(seed)
    width = rng.randint(1, 12)
    queries = rng.sample(["1", "2", "10", "a", "B", "é", "q7", "Q"], rng.randint(2, 6))
    rows, judgments = [], {}
    for qid in queries:
        docs = rng.sample([f"d{i}" for i in range(30)], width)
        rows += [(qid, d, float(rng.randint(0, 3))) for d in docs]
        judgments[qid] = {d: rng.randint(-1, 3) for d in docs[: width // 2 + 1]}
    shown = []
    real = ordering._small_order
    monkeypatch.setattr(ordering, "_small_order", lambda *args: shown.append(args[-1]) or real(*args))
    expected = _expected(rows, judgments)
    for sort_lines in (False, True):
        lines = sorted(rows, key=lambda r: -r[2]) if sort_lines else rows
        by_query = [r for q in queries for r in lines if r[0] == q]
        assert rank(Qrels.from_dict(judgments), Run(run_columns(by_query), checked=True)).rel.tolist() == expected
    assert all(len(starts) == len(queries) for starts in shown) and len(shown) == 2  # the matrix's way was taken
