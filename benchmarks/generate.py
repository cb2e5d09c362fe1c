"""Generate a seeded synthetic MS MARCO-sized qrels/run pair for the benchmark.

Default shape (the issue's "real size"): 7,000 queries; 30-50 graded judgments per query (grades 0-3,
about 5 % of the queries with no relevant document); a run of 1,000 documents per query (7 million
lines, about 260 MB) written as ``qid Q0 docid rank score tag`` with single spaces, in rank order,
where about 1 % of the lines are exact ties: a tied line copies the score of the line above, so the
ranking rule (score descending, then doc id descending) and not the file order decides their order.

Ids look like MS MARCO's (integers: query ids below 1.2 million, passage ids below 8.8 million).
Relevant documents are placed preferentially near the top of the run, so precision, nDCG and RR are
neither 0 nor 1. Everything is drawn from one ``numpy.random.Generator`` seeded by ``--seed``: the
same seed and sizes give byte-identical files.

    python benchmarks/generate.py                      # 7,000 x 1,000 into benchmarks/data/
    python benchmarks/generate.py --queries 500        # the --quick size
    python benchmarks/generate.py --queries 50 --depth 100 --out /tmp/small
    python benchmarks/generate.py --order partial      # the same pair, 10 % of the query blocks shuffled

``--order`` changes only the order of the run's lines, never their content (the qrels file is the same):
``sorted`` writes every query in one block in rank order; ``partial`` leaves about 10 % of the queries'
blocks (drawn with the seed) in random line order, as a fusion step or a re-ranker that writes by doc id
does; ``shuffled`` shuffles all the lines of the file, so queries are interleaved.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

DEFAULT_SEED = 20240607
DEFAULT_QUERIES = 7_000
DEFAULT_DEPTH = 1_000
DATA_DIR = Path(__file__).resolve().parent / "data"

QUERY_ID_SPACE = 1_200_000  # MS MARCO query ids are below this
DOC_ID_SPACE = 8_841_823  # number of MS MARCO v1 passages
MIN_JUDGMENTS, MAX_JUDGMENTS = 30, 50
GRADE_SHARES = (0.575, 0.236, 0.113, 0.076)  # share of judgments graded 0, 1, 2, 3
NO_RELEVANT_SHARE = 0.05  # queries whose judgments are all 0
ORDERS = ("sorted", "partial", "shuffled")
PARTIAL_SHARE = 0.1  # share of the queries whose block is left in random line order by --order partial
TIE_RATE = 0.01  # share of run lines (below rank 1) that copy the score of the line above
RUN_TAG = "synthetic"
# Scores are integers of 1e-6 units written with 6 decimals; gaps of at least 1e-4 keep distinct
# scores distinct even for tools that read scores as float32 (resolution ~4e-6 near 50).
TOP_SCORE_UNITS = (45_000_000, 55_000_000)
GAP_UNITS = (100, 50_000)


@dataclass(frozen=True)
class Pair:
    """A generated qrels/run pair as column arrays (one row per judgment / per run line)."""

    qrels_query_id: np.ndarray  # int64
    qrels_doc_id: np.ndarray  # int64
    qrels_relevance: np.ndarray  # int64
    run_query_id: np.ndarray  # int64, grouped by query, in rank order
    run_doc_id: np.ndarray  # int64
    run_rank: np.ndarray  # int64, 1..depth
    run_score_units: np.ndarray  # int64, score * 1e6

    @property
    def tie_lines(self) -> int:
        """Run lines whose score equals the score of the line above (same query)."""
        same_query = self.run_query_id[1:] == self.run_query_id[:-1]
        return int(np.count_nonzero(same_query & (self.run_score_units[1:] == self.run_score_units[:-1])))

    def describe(self) -> str:
        grades = np.bincount(self.qrels_relevance, minlength=4)
        queries = np.unique(self.qrels_query_id)
        relevant = np.unique(self.qrels_query_id[self.qrels_relevance > 0])
        return (
            f"qrels: {self.qrels_query_id.size:,} judgments over {queries.size:,} queries, "
            f"grades 0/1/2/3 = {'/'.join(f'{g:,}' for g in grades)}, "
            f"{queries.size - relevant.size:,} queries with no relevant document; "
            f"run: {self.run_query_id.size:,} lines, {self.tie_lines:,} tied lines "
            f"({100 * self.tie_lines / max(self.run_query_id.size, 1):.2f} %)"
        )


def _unique_rows(rng: np.random.Generator, rows: int, width: int, high: int) -> np.ndarray:
    """A (rows, width) int64 matrix of ids in [0, high), distinct within each row."""
    ids = rng.integers(0, high, size=(rows, width), dtype=np.int64)
    while True:
        ordered = np.sort(ids, axis=1)
        bad = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if bad.size == 0:
            return ids
        ids[bad] = rng.integers(0, high, size=(bad.size, width), dtype=np.int64)


def generate(
    queries: int = DEFAULT_QUERIES,
    depth: int = DEFAULT_DEPTH,
    seed: int = DEFAULT_SEED,
    tie_rate: float = TIE_RATE,
) -> Pair:
    """Draw a qrels/run pair; deterministic for (queries, depth, seed, tie_rate)."""
    if queries < 1 or depth < 1:
        raise ValueError("queries and depth must be at least 1")
    rng = np.random.default_rng(seed)
    query_ids = np.sort(rng.choice(QUERY_ID_SPACE, size=queries, replace=False)).astype(np.int64)

    # Per query: `depth` retrieved documents, then MAX_JUDGMENTS spare ids for judged-but-unretrieved ones.
    doc_ids = _unique_rows(rng, queries, depth + MAX_JUDGMENTS, DOC_ID_SPACE)
    run_docs, spare_docs = doc_ids[:, :depth], doc_ids[:, depth:]

    # Scores: strictly decreasing integer micro-units, except tied lines that repeat the line above.
    gaps = rng.integers(GAP_UNITS[0], GAP_UNITS[1], size=(queries, depth), dtype=np.int64, endpoint=True)
    gaps[:, 0] = 0
    gaps[rng.random((queries, depth)) < tie_rate] = 0
    gaps[:, 0] = 0
    top = rng.integers(TOP_SCORE_UNITS[0], TOP_SCORE_UNITS[1], size=(queries, 1), dtype=np.int64)
    scores = top - np.cumsum(gaps, axis=1)

    # Judgments: n per query; a share of them retrieved, at ranks drawn without replacement with a
    # Zipf-like preference for the top (Gumbel top-k over log-weights -0.8 * log(rank)).
    n_judged = rng.integers(MIN_JUDGMENTS, MAX_JUDGMENTS, size=queries, endpoint=True)
    n_retrieved = np.minimum(np.rint(n_judged * rng.uniform(0.5, 0.9, size=queries)).astype(np.int64), depth)
    ranks = np.arange(1, depth + 1, dtype=np.float64)
    keys = -0.8 * np.log(ranks)[None, :] + rng.gumbel(size=(queries, depth))
    top_k = min(MAX_JUDGMENTS, depth)
    if top_k < depth:
        candidates = np.argpartition(-keys, top_k - 1, axis=1)[:, :top_k]
    else:
        candidates = np.broadcast_to(np.arange(depth), (queries, depth)).copy()
    order = np.argsort(-np.take_along_axis(keys, candidates, axis=1), axis=1, kind="stable")
    positions = np.take_along_axis(candidates, order, axis=1)  # 0-based rank positions, best key first

    slot = np.arange(MAX_JUDGMENTS)[None, :]
    judged = slot < n_judged[:, None]  # (queries, MAX_JUDGMENTS): which slots are judgments
    retrieved = slot < n_retrieved[:, None]  # the first n_retrieved slots are retrieved documents
    padded_positions = np.zeros((queries, MAX_JUDGMENTS), dtype=np.int64)
    padded_positions[:, :top_k] = positions
    judged_docs = np.where(
        retrieved,
        np.take_along_axis(run_docs, np.minimum(padded_positions, depth - 1), axis=1),
        spare_docs,
    )
    # Grade from a latent quality: better for documents retrieved near the top, thresholds at the
    # quantiles that give GRADE_SHARES overall.
    latent = rng.normal(size=(queries, MAX_JUDGMENTS))
    latent += np.where(retrieved, 0.6 - 0.4 * np.log(padded_positions + 1.0), -0.6)
    cuts = np.quantile(latent[judged], np.cumsum(GRADE_SHARES)[:-1])
    grades = np.searchsorted(cuts, latent).astype(np.int64)
    no_relevant = rng.random(queries) < NO_RELEVANT_SHARE
    grades[no_relevant] = 0
    # Judgments in a shuffled order within each query, as qrels files usually are.
    shuffle = np.argsort(rng.random((queries, MAX_JUDGMENTS)) + ~judged, axis=1)
    judged_docs = np.take_along_axis(judged_docs, shuffle, axis=1)
    grades = np.take_along_axis(grades, shuffle, axis=1)
    judged = np.take_along_axis(judged, shuffle, axis=1)

    return Pair(
        qrels_query_id=np.broadcast_to(query_ids[:, None], judged.shape)[judged],
        qrels_doc_id=judged_docs[judged],
        qrels_relevance=grades[judged],
        run_query_id=np.repeat(query_ids, depth),
        run_doc_id=run_docs.reshape(-1),
        run_rank=np.tile(np.arange(1, depth + 1, dtype=np.int64), queries),
        run_score_units=scores.reshape(-1),
    )


def in_order(pair: Pair, order: str, seed: int = DEFAULT_SEED) -> Pair:
    """The same run lines in another file order (see ``--order``); the qrels are untouched.

    The permutation is drawn from its own generator (seeded by ``seed``), so the three orders of a
    pair hold exactly the same lines.
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")
    if order == "sorted":
        return pair
    rng = np.random.default_rng([seed, ORDERS.index(order)])
    lines = pair.run_query_id.size
    if order == "shuffled":
        rows = rng.permutation(lines)
    else:
        # blocks are contiguous: a random key inside each chosen block, the block's start outside
        starts = np.flatnonzero(np.concatenate([[True], pair.run_query_id[1:] != pair.run_query_id[:-1]]))
        block = np.cumsum(np.isin(np.arange(lines), starts)) - 1
        chosen = rng.random(starts.size) < PARTIAL_SHARE
        within = np.where(chosen[block], rng.random(lines), np.arange(lines) - starts[block])
        rows = np.lexsort((within, block))
    return Pair(
        qrels_query_id=pair.qrels_query_id,
        qrels_doc_id=pair.qrels_doc_id,
        qrels_relevance=pair.qrels_relevance,
        run_query_id=pair.run_query_id[rows],
        run_doc_id=pair.run_doc_id[rows],
        run_rank=pair.run_rank[rows],
        run_score_units=pair.run_score_units[rows],
    )


def write_pair(pair: Pair, qrels_path: Path, run_path: Path) -> None:
    """Write ``qid 0 docid rel`` and ``qid Q0 docid rank score tag`` with single spaces, in chunks."""
    import polars as pl

    qrels_path.parent.mkdir(parents=True, exist_ok=True)
    run_path.parent.mkdir(parents=True, exist_ok=True)
    pl.DataFrame(
        {
            "query_id": pair.qrels_query_id,
            "iteration": pl.repeat("0", pair.qrels_query_id.size, eager=True),
            "doc_id": pair.qrels_doc_id,
            "relevance": pair.qrels_relevance,
        }
    ).write_csv(qrels_path, include_header=False, separator=" ", quote_style="never")
    # Scores as exact decimal text built from the integer micro-units (no float rounding anywhere).
    whole, micro = np.divmod(pair.run_score_units, 1_000_000)
    pl.DataFrame(
        {
            "query_id": pair.run_query_id,
            "q0": pl.repeat("Q0", pair.run_query_id.size, eager=True),
            "doc_id": pair.run_doc_id,
            "rank": pair.run_rank,
            "score": pl.Series(whole).cast(pl.Utf8)
            + "."
            + pl.Series(micro).cast(pl.Utf8).str.pad_start(6, "0"),
            "tag": pl.repeat(RUN_TAG, pair.run_query_id.size, eager=True),
        }
    ).write_csv(run_path, include_header=False, separator=" ", quote_style="never")


def pair_paths(out_dir: Path, queries: int, depth: int, seed: int, order: str = "sorted") -> tuple[Path, Path]:
    """File names that say what is inside, so sizes, seeds and orders never overwrite each other
    (the qrels file is the same for every order)."""
    stem = f"synthetic-q{queries}-d{depth}-s{seed}"
    run_stem = stem if order == "sorted" else f"{stem}-{order}"
    return out_dir / f"{stem}.qrels", out_dir / f"{run_stem}.run"


def ensure_pair(out_dir: Path, queries: int, depth: int, seed: int, log=print,
                order: str = "sorted") -> tuple[Path, Path]:
    """Generate the pair unless both files already exist; return (qrels_path, run_path)."""
    qrels_path, run_path = pair_paths(out_dir, queries, depth, seed, order)
    if not (qrels_path.exists() and run_path.exists()):
        started = time.perf_counter()
        pair = in_order(generate(queries, depth, seed), order, seed)
        write_pair(pair, qrels_path, run_path)
        log(f"generated {run_path.name} in {time.perf_counter() - started:.1f} s: {pair.describe()}")
    return qrels_path, run_path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="number of queries (7000)")
    parser.add_argument("--depth", type=int, default=DEFAULT_DEPTH, help="run lines per query (1000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed ({DEFAULT_SEED})")
    parser.add_argument("--out", type=Path, default=DATA_DIR, help="output directory (benchmarks/data)")
    parser.add_argument("--order", choices=ORDERS, default="sorted",
                        help="line order of the run: sorted (one block per query, rank order), partial (~10 %% "
                        "of the blocks in random order), shuffled (all lines)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    pair = in_order(generate(args.queries, args.depth, args.seed), args.order, args.seed)
    qrels_path, run_path = pair_paths(args.out, args.queries, args.depth, args.seed, args.order)
    write_pair(pair, qrels_path, run_path)
    print(f"{qrels_path}\n{run_path}\n{pair.describe()}")
    print(f"({time.perf_counter() - started:.1f} s, run file {run_path.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
