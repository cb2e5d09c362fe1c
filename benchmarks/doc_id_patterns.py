"""What a document id pattern costs on a large chunk run, against the plain Python a user would write.

A seeded run of QUERIES x DEPTH chunk ids (``doc<N>#<k>``, about a fifth of them distinct) is mapped
to documents three ways, each timed (median of --repeats) and checked to give Python's ``re`` answers:

- ``re loop``: the peer, what one writes by hand: ``re.search`` once per distinct id, then polars
  replaces the column (the pattern's own semantics, no time bound, Ctrl-C ignored in a thread);
- ``trec-rag-eval``: ``DocIdMap.series`` with a pattern polars' engine runs (``^(.*)#\\d+$``: rewritten
  with explicit code points, provably the same as ``re``);
- ``trec-rag-eval, re in a child``: the same with ``(?i)``, which keeps Python's ``re``, run in a
  child process under a time budget per id.

    python benchmarks/doc_id_patterns.py                     # 1,000 x 1,000 (1M rows)
    python benchmarks/doc_id_patterns.py --queries 200 --repeats 3
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import time


def _run_ids(queries: int, depth: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    documents = queries * depth // 5
    return [f"doc{rng.randrange(documents)}#{rng.randrange(20)}" for _ in range(queries * depth)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    import polars as pl

    from trec_rag_eval.io.chunks import DocIdMap

    ids = pl.Series("doc_id", _run_ids(args.queries, args.depth, args.seed), dtype=pl.Utf8)
    pattern = r"^(.*)#\d+$"
    compiled = re.compile(pattern)

    def re_loop() -> pl.Series:
        distinct = ids.unique().to_list()
        table = {}
        for chunk_id in distinct:
            match = compiled.search(chunk_id)
            table[chunk_id] = match.group(1) if match else None
        return ids.replace_strict(table, default=None, return_dtype=pl.Utf8)

    ours = DocIdMap.from_pattern(pattern)
    ours_in_python = DocIdMap.from_pattern(re.compile(pattern, re.IGNORECASE))
    ways = {"re loop (peer)": re_loop, "trec-rag-eval": lambda: ours.series(ids),
            "trec-rag-eval, re in a child": lambda: ours_in_python.series(ids)}
    expected = re_loop().to_list()
    times = {}
    for name, way in ways.items():
        measured = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            got = way()
            measured.append(time.perf_counter() - start)
        assert got.to_list() == expected, f"{name} differs from re"
        times[name] = statistics.median(measured)
    peer = times["re loop (peer)"]
    print(f"{len(ids):,} ids ({ids.n_unique():,} distinct), pattern {pattern!r}, median of {args.repeats}")
    for name, seconds in times.items():
        print(f"  {name:32s} {seconds:7.3f} s   {peer / seconds:5.2f}x the peer's speed")


if __name__ == "__main__":
    main()
