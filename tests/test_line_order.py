"""The order of a run's lines changes nothing: the same generated pair, written sorted, with a tenth of
its query blocks shuffled, and with all lines shuffled, prints the same bytes (in memory and streamed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import benchmark_generator, invoke

from trec_rag_eval.core import matching, ordering, parallel
from trec_rag_eval.io.trec import fast_path
from trec_rag_eval.io.trec.qrels_runs import SMALL_FILE_BYTES, read_trec_run
from trec_rag_eval.tables.arrow import is_arrow

generate = benchmark_generator()
QUERIES, DEPTH, SEED = 300, 200, 5  # 60,000 lines, ~2.5 MB: the fast (Arrow) reader, several stream pieces


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """{order: (qrels path, run path)}; one qrels file for the three runs."""
    out = tmp_path_factory.mktemp("orders")
    return {order: tuple(str(p) for p in generate.ensure_pair(out, QUERIES, DEPTH, SEED, log=lambda _: None,
                                                               order=order))
            for order in generate.ORDERS}


def _blocks(run_path: str) -> list[tuple[str, list[int]]]:
    """(query id, ranks in file order) of each run of equal query ids."""
    blocks: list[tuple[str, list[int]]] = []
    for line in Path(run_path).read_text().splitlines():
        query_id, _, _, rank, _, _ = line.split(" ")
        if not blocks or blocks[-1][0] != query_id:
            blocks.append((query_id, []))
        blocks[-1][1].append(int(rank))
    return blocks


def test_the_three_files_hold_the_same_lines_in_the_announced_orders(pair):
    lines = {order: Path(run).read_text().splitlines() for order, (_, run) in pair.items()}
    assert sorted(lines["sorted"]) == sorted(lines["partial"]) == sorted(lines["shuffled"])
    assert all(Path(run).stat().st_size > SMALL_FILE_BYTES for _, run in pair.values())  # the fast path
    sorted_blocks = _blocks(pair["sorted"][1])
    assert len(sorted_blocks) == QUERIES and all(ranks == sorted(ranks) for _, ranks in sorted_blocks)
    partial = _blocks(pair["partial"][1])
    assert len(partial) == QUERIES  # still one block per query
    disordered = sum(ranks != sorted(ranks) for _, ranks in partial)
    # each block is shuffled with probability 0.1: Binomial(300, 0.1), mean 30, sd 5.2
    assert 10 <= disordered <= 50
    assert len(_blocks(pair["shuffled"][1])) > QUERIES * DEPTH // 2  # queries interleaved everywhere


@pytest.mark.parametrize("order", ["partial", "shuffled"])
def test_same_bytes_in_every_order(pair, order):
    qrels, run = pair["sorted"]
    expected = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    assert expected.exit_code == 0, expected.stderr
    assert len(expected.stdout.splitlines()) > QUERIES * 90  # all_trec: 96 lines per query, then the means
    got = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, pair[order][1])
    assert got.exit_code == 0, got.stderr
    assert got.stdout == expected.stdout


@pytest.mark.parametrize("order", ["sorted", "partial"])
def test_same_bytes_streamed_in_pieces(pair, order):
    qrels, run = pair[order]
    whole = invoke("--format", "trec", "-q", "-m", "all_trec", *pair["sorted"])
    streamed = invoke("--format", "trec", "-q", "-m", "all_trec", "--stream", "--chunk-size", "1", qrels, run)
    assert streamed.exit_code == 0, streamed.stderr
    assert streamed.stdout == whole.stdout


def test_only_the_unsorted_blocks_are_sorted(pair, monkeypatch):
    """A partly shuffled run is put in order block by block (no permutation of every row); an
    interleaved one needs the full sort."""
    calls: list[tuple[int, bool]] = []
    full_sort = ordering._sorted_rows

    def spy(group, scores, doc_ids, rows=None, threads=None, lengths=None, ids_descending=True):
        calls.append((len(scores), rows is None))
        return full_sort(group, scores, doc_ids, rows, threads, lengths, ids_descending)

    monkeypatch.setattr(ordering, "_sorted_rows", spy)
    qrels = pair["sorted"][0]
    assert invoke("-m", "map", qrels, pair["partial"][1]).exit_code == 0
    partial_blocks = sum(ranks != sorted(ranks) for _, ranks in _blocks(pair["partial"][1]))
    assert calls == [(partial_blocks * DEPTH, False)]  # the rows of the disordered blocks only
    calls.clear()
    assert invoke("-m", "map", qrels, pair["shuffled"][1]).exit_code == 0
    assert calls == [(QUERIES * DEPTH, True)]
    calls.clear()
    assert invoke("-m", "map", qrels, pair["sorted"][1]).exit_code == 0
    assert calls == []


def test_fast_reader_keeps_query_ids_as_codes_and_reads_comment_lines(pair, tmp_path):
    run = read_trec_run(pair["shuffled"][1])
    assert is_arrow(run.data) and run.run_tag == "synthetic"
    assert str(run.data.schema.field("query_id").type) == "dictionary<values=string, indices=int32, ordered=0>"
    assert run.data.column_names == ["query_id", "doc_id", "score"]  # nothing the ranking does not use
    # comment lines (which pyarrow cannot skip by itself) keep the fast path and change nothing; one
    # that looks like a result line (six fields, a number fifth) sends the file the careful way
    text = Path(pair["sorted"][1]).read_text().splitlines(keepends=True)
    qrels = pair["sorted"][0]
    plain = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, pair["sorted"][1]).stdout
    for comment, fast in (("# seven fields in this comment line", True), ("#q Q0 d1 1 2.5 tag", False)):
        commented = tmp_path / "commented.run"
        commented.write_text("# written by a test\n" + "".join(text[:1000]) + comment + "\n" + "".join(text[1000:]))
        with_comments = read_trec_run(str(commented))
        assert is_arrow(with_comments.data) == fast
        assert len(with_comments.frame) == QUERIES * DEPTH
        assert invoke("--format", "trec", "-q", "-m", "all_trec", qrels, str(commented)).stdout == plain


@pytest.mark.parametrize("order", ["sorted", "partial", "shuffled"])
def test_threads_and_small_pieces_give_the_same_bytes(pair, order, monkeypatch):
    """The work spread over threads gives the bytes of one thread: an interleaved run sorted in
    parts of whole queries (``SORT_PART_ROWS``: ~4,000 rows here, ~15 parts), a grouped one judged
    in 3 parts of whole queries, the queries looked up and the (query, doc) keys hashed chunk by
    chunk, and the read in Arrow chunks of 64 KB (~40 of them), on 3 threads."""
    qrels, run = pair["sorted"]
    expected = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    monkeypatch.setattr(ordering, "SORT_PART_ROWS", 4096)
    monkeypatch.setattr(matching, "JUDGE_PART_MIN_ROWS", 4096)
    monkeypatch.setattr(parallel, "sort_threads", lambda: 3)
    monkeypatch.setattr(fast_path, "RUN_BLOCK_BYTES", 1 << 16)
    assert read_trec_run(pair[order][1]).data["doc_id"].num_chunks > 30
    got = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, pair[order][1])
    assert got.exit_code == 0, got.stderr
    assert got.stdout == expected.stdout


@pytest.mark.parametrize("where", [0.1, 0.5, 0.95])
def test_a_duplicate_is_found_in_any_part(pair, where, monkeypatch, tmp_path):
    """A grouped run is judged in one part per thread (each part whole queries, checked for a
    document twice on its own): a duplicate near the start, the middle or the end is named."""
    monkeypatch.setattr(matching, "JUDGE_PART_MIN_ROWS", 4096)
    monkeypatch.setattr(parallel, "sort_threads", lambda: 3)
    qrels, run = pair["sorted"]
    lines = Path(run).read_text().splitlines(keepends=True)
    at = int(len(lines) * where) // DEPTH * DEPTH + 7  # the 8th line of a query's block
    query, _, doc = lines[at - 1].split()[:3]
    fields = lines[at].split(" ")
    fields[2] = doc  # the document of the line before, in the same query
    lines[at] = " ".join(fields)
    doubled = tmp_path / "doubled.run"
    doubled.write_text("".join(lines))
    assert is_arrow(read_trec_run(str(doubled)).data)  # the fast reader, so the parts
    got = invoke("-m", "map", qrels, str(doubled))
    assert got.exit_code == 1 and f"'{doc}'" in got.stderr and f"'{query}'" in got.stderr, got.stderr


def test_queries_only_in_the_run_count_for_nothing_in_every_order(pair, tmp_path):
    """Lines of queries the qrels do not judge are left out (trec_eval's rule) on the fast path too:
    the same bytes as the run without those lines, whatever their order."""
    qrels, _ = pair["sorted"]
    judged = Path(qrels).read_text().splitlines(keepends=True)
    dropped = set(sorted({line.split()[0] for line in judged})[::3])
    fewer = tmp_path / "fewer.qrels"
    fewer.write_text("".join(line for line in judged if line.split()[0] not in dropped))
    lines = Path(pair["sorted"][1]).read_text().splitlines(keepends=True)
    trimmed = tmp_path / "trimmed.run"
    trimmed.write_text("".join(line for line in lines if line.split()[0] not in dropped))
    assert trimmed.stat().st_size > SMALL_FILE_BYTES  # the fast reader on both sides
    expected = invoke("--format", "trec", "-q", "-m", "all_trec", str(fewer), str(trimmed))
    assert expected.exit_code == 0, expected.stderr
    for order in ("sorted", "partial", "shuffled"):
        got = invoke("--format", "trec", "-q", "-m", "all_trec", str(fewer), pair[order][1])
        assert got.exit_code == 0, got.stderr
        assert got.stdout == expected.stdout


def test_a_retrieved_document_whose_key_is_a_judgments_is_verified_on_the_strings(pair, monkeypatch):
    """One unjudged document of a query is given the (query, doc) key of a judged document of the same
    query (a hash collision between a run row and one judgment, the judgments' keys all distinct):
    the check of every match on the strings sends it to the exact join, and the bytes are those of
    the run without the collision."""
    import polars as pl

    from trec_rag_eval.tables.arrow import ArrowExport

    qrels, run = pair["sorted"]
    expected = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    judged = {}
    for line in Path(qrels).read_text().splitlines():
        query, _, doc, relevance = line.split()
        judged.setdefault(query, {})[doc] = int(relevance)
    query = Path(run).read_text().split(" ", 1)[0]  # the first query of the run
    target = next(doc for doc, relevance in judged[query].items() if relevance > 0)
    ranked_docs = [line.split()[2] for line in Path(run).read_text().splitlines() if line.split()[0] == query]
    impostor = next(doc for doc in ranked_docs if doc not in judged[query])
    real = matching._pair_keys

    def colliding(queries, docs, threads=None):
        keys = real(queries, docs, threads)
        series = docs if isinstance(docs, pl.Series) else pl.Series(ArrowExport(docs))
        rows = np.flatnonzero((series == impostor).to_numpy())
        if len(rows):
            keys[rows] = real(queries[rows], pl.Series([target] * len(rows)))
        return keys

    monkeypatch.setattr(matching, "_pair_keys", colliding)
    got = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    assert got.exit_code == 0, got.stderr
    assert got.stdout == expected.stdout


def test_hash_collisions_are_resolved_exactly(pair, monkeypatch):
    """Judgments and duplicates are found through 64-bit (query, doc) hashes; when hashes collide
    (forced here: 4,096 values for 60,000 rows and their ~12,000 judgments, so that about three judgments
    share each key and every key is shared by ~15 rows), the exact joins on the strings give the same
    bytes, and a real duplicate is still named. (Five values took 45 s: every row then matched a fifth
    of the judgments in the join that finds the collision; 4,096 force the same paths in 3 s.)"""
    qrels, run = pair["sorted"]
    expected = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    real = matching._pair_keys
    monkeypatch.setattr(matching, "_pair_keys",
                        lambda queries, docs, threads=None: real(queries, docs, threads) % np.uint64(4096))
    # the paths taken: rows whose key two judgments share (the exact join on the strings), and rows
    # sharing a key without being duplicates (the duplicate check on the strings, which finds none)
    shared_hits: list[bool] = []
    real_of, real_reject = matching.Judgments.of, matching._reject_duplicates
    rejects: list[int] = []

    def of(self, keys, *args, **kwargs):
        values, counts = np.unique(self.keys, return_counts=True)
        shared_hits.append(bool(np.isin(keys, values[counts > 1]).any()))
        return real_of(self, keys, *args, **kwargs)

    def reject(*args, **kwargs):
        rejects.append(1)
        return real_reject(*args, **kwargs)

    monkeypatch.setattr(matching.Judgments, "of", of)
    monkeypatch.setattr(matching, "_reject_duplicates", reject)
    for order in ("sorted", "shuffled"):
        got = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, pair[order][1])
        assert got.exit_code == 0, got.stderr
        assert got.stdout == expected.stdout
        assert any(shared_hits) and rejects, order
        shared_hits.clear()
        rejects.clear()
    lines = Path(run).read_text().splitlines(keepends=True)
    doubled = Path(run).with_name("doubled.run")
    doubled.write_text("".join(lines) + lines[5])  # the sixth line again at the end
    query, _, doc = lines[5].split()[:3]
    got = invoke("-m", "map", qrels, str(doubled))
    assert got.exit_code == 1 and f"'{doc}'" in got.stderr and f"'{query}'" in got.stderr
