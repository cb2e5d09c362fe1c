"""The benchmark's synthetic pair has the shape the issue asks for, read back from the written files."""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from conftest import benchmark_generator

generate = benchmark_generator()

QUERIES, DEPTH, SEED = 300, 1000, 7


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    out = tmp_path_factory.mktemp("pair")
    args = ["--queries", str(QUERIES), "--depth", str(DEPTH), "--seed", str(SEED), "--out", str(out)]
    assert generate.main(args) == 0
    return generate.pair_paths(out, QUERIES, DEPTH, SEED)


@pytest.fixture(scope="module")
def run_lines(files):
    return files[1].read_text().splitlines()


@pytest.fixture(scope="module")
def qrels_lines(files):
    return files[0].read_text().splitlines()


def test_run_has_depth_lines_per_query_in_trec_format(run_lines):
    assert len(run_lines) == QUERIES * DEPTH
    per_query: dict[str, list[list[str]]] = defaultdict(list)
    for line in run_lines:
        fields = line.split(" ")  # single spaces: exactly 6 non-empty fields
        assert len(fields) == 6 and all(fields), line
        assert fields[1] == "Q0" and fields[5] == "synthetic"
        whole, decimals = fields[4].split(".")
        assert len(decimals) == 6 and whole.lstrip("-").isdigit()
        per_query[fields[0]].append(fields)
    assert len(per_query) == QUERIES
    for rows in per_query.values():
        assert [int(row[3]) for row in rows] == list(range(1, DEPTH + 1))
        assert len({row[2] for row in rows}) == DEPTH  # no duplicate document within a query
        scores = [float(row[4]) for row in rows]
        assert all(a >= b for a, b in zip(scores, scores[1:], strict=False))  # written in rank order


def test_about_one_percent_of_lines_copy_the_score_above(run_lines):
    ties = sum(
        1
        for above, line in zip(run_lines, run_lines[1:], strict=False)
        if above.split(" ")[0] == line.split(" ")[0] and above.split(" ")[4] == line.split(" ")[4]
    )
    # Binomial(299,700 lines, 1 %): mean 2,997, sd 54; 0.8 %-1.2 % is more than 7 sd either side.
    assert 0.008 < ties / len(run_lines) < 0.012


def test_qrels_are_graded_30_to_50_per_query_with_some_queries_without_relevant(qrels_lines, run_lines):
    per_query: dict[str, dict[str, int]] = defaultdict(dict)
    for line in qrels_lines:
        query_id, iteration, doc_id, relevance = line.split(" ")
        assert iteration == "0"
        assert doc_id not in per_query[query_id]  # no duplicate judgment
        per_query[query_id][doc_id] = int(relevance)
    assert len(per_query) == QUERIES
    assert all(30 <= len(judged) <= 50 for judged in per_query.values())
    grades = Counter(grade for judged in per_query.values() for grade in judged.values())
    assert set(grades) == {0, 1, 2, 3}
    assert grades[0] > grades[1] > grades[2] > grades[3] > 0
    without_relevant = [q for q, judged in per_query.items() if max(judged.values()) == 0]
    # 5 % of 300 queries on average: at least one, far fewer than half.
    assert 1 <= len(without_relevant) < QUERIES // 4
    # Judged documents are partly retrieved (measures are neither all 0 nor all 1), partly not.
    retrieved = {(f[0], f[2]) for f in (line.split(" ") for line in run_lines)}
    judged_pairs = {(q, d) for q, judged in per_query.items() for d in judged}
    assert 0.3 < len(judged_pairs & retrieved) / len(judged_pairs) < 0.95


def test_same_seed_gives_identical_files_and_another_seed_does_not(tmp_path):
    def digest(seed: int, out: Path) -> tuple[str, str]:
        generate.main(["--queries", "40", "--depth", "60", "--seed", str(seed), "--out", str(out)])
        qrels, run = generate.pair_paths(out, 40, 60, seed)
        return hashlib.sha256(qrels.read_bytes()).hexdigest(), hashlib.sha256(run.read_bytes()).hexdigest()

    first = digest(11, tmp_path / "a")
    assert digest(11, tmp_path / "b") == first
    other = digest(12, tmp_path / "c")
    assert other[0] != first[0] and other[1] != first[1]


def test_depth_smaller_than_judgments_still_valid(tmp_path):
    pair = generate.generate(queries=20, depth=10, seed=3)
    assert pair.run_query_id.size == 200
    assert pair.qrels_query_id.size >= 20 * 30
    # Every retrieved judged document is one of that query's retrieved documents.
    run = set(zip(pair.run_query_id.tolist(), pair.run_doc_id.tolist(), strict=False))
    judged = list(zip(pair.qrels_query_id.tolist(), pair.qrels_doc_id.tolist(), strict=False))
    assert len(set(judged)) == len(judged)
    assert 0 < sum(p in run for p in judged) <= 200
