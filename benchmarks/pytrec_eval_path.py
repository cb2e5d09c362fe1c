"""The pytrec_eval peer, as a script: read qrels and run, evaluate, print the means.

Run as a subprocess by benchmarks/run.py so its wall time and peak memory are measured like any CLI:

    python benchmarks/pytrec_eval_path.py QRELS RUN --measures five|rag|official|all_trec --reader polars|loop
    python benchmarks/pytrec_eval_path.py QRELS RUN --measures all_trec --per-query   # trec_eval -q's values too

pytrec_eval needs dict-of-dicts (``{query_id: {doc_id: score}}``), so the reader's job is to build those
Python objects as fast as possible:

- ``loop``: a tight Python loop over the lines (``line.split()``, any whitespace, any line order);
- ``polars``: polars' multi-threaded CSV reader (single-space separated files, as the generator writes
  them; ``benchmarks/run.py`` uses ``loop`` for trec_eval's tab-separated test files), then one
  ``to_list()`` per column and ``dict(zip(...))`` per query over a sort by query id.

Output: one ``name<TAB>mean`` line per measure, in our canonical names (``P@10``, ``R@100``, ``AP``, ...),
means over the queries pytrec_eval evaluates (those in both files). F1@k is computed per query from P@k
and R@k (2PR / (P + R), 0 when both are 0) and then averaged, like trec-rag-eval's F1@k.
``official`` and ``all_trec`` ask pytrec_eval for trec_eval's nicknames (its all_trec is trec_eval 9's: no
unj, rbp, rbp_resid) and print the mean of every numeric measure under trec_eval's name;
``--per-query`` first writes every per-query value (``name<TAB>query<TAB>value``), as ``trec_eval -q``.
"""

from __future__ import annotations

import argparse
import sys
from itertools import islice

# pytrec_eval measure -> our canonical name, per measure set.
MEASURE_SETS: dict[str, dict[str, str]] = {
    "five": {
        "P_10": "P@10",
        "recall_100": "R@100",
        "map": "AP",
        "recip_rank": "RR",
        "ndcg_cut_10": "nDCG@10",
    },
    "rag": {
        **{f"P_{k}": f"P@{k}" for k in (1, 3, 5, 10)},
        **{f"recall_{k}": f"R@{k}" for k in (1, 3, 5, 10)},
        **{f"success_{k}": f"HitRate@{k}" for k in (1, 3, 5, 10)},
        **{f"ndcg_cut_{k}": f"nDCG@{k}" for k in (1, 3, 5, 10)},
        "recip_rank": "MRR",
        "map": "MAP",
    },
}
PYTREC_MEASURES: dict[str, set[str]] = {
    "five": {"P.10", "recall.100", "map", "recip_rank", "ndcg_cut.10"},
    "official": {"official"},
    "all_trec": {"all_trec"},
    "rag": {"P.1,3,5,10", "recall.1,3,5,10", "success.1,3,5,10", "ndcg_cut.1,3,5,10", "recip_rank", "map"},
}
F1_CUTOFFS = {"five": (), "rag": (1, 3, 5, 10), "official": (), "all_trec": ()}
TEXT_MEASURES = {"runid", "relstring"}  # not numbers: no mean


def read_qrels_loop(path: str) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as lines:
        for line in lines:
            query_id, _, doc_id, relevance = line.split()
            qrels.setdefault(query_id, {})[doc_id] = int(relevance)
    return qrels


def read_run_loop(path: str) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = {}
    last_query_id = None
    current: dict[str, float] = {}
    with open(path) as lines:
        for line in lines:
            query_id, _, doc_id, _, score, _ = line.split()
            if query_id != last_query_id:
                current = run.setdefault(query_id, {})
                last_query_id = query_id
            current[doc_id] = float(score)
    return run


def _grouped(frame, value_column: str) -> dict:
    """{query_id: {doc_id: value}} from a polars frame, one pass over Python lists.

    Runs are normally grouped by query already (one stretch of lines per query); then no sort is
    needed. Otherwise a stable sort by query id groups them first.
    """
    stretches = frame["query_id"].rle()
    if stretches.len() != frame["query_id"].n_unique():
        frame = frame.sort("query_id", maintain_order=True)
        stretches = frame["query_id"].rle()
    query_ids = stretches.struct.field("value").to_list()
    counts = stretches.struct.field("len").to_list()
    pairs = zip(frame["doc_id"].to_list(), frame[value_column].to_list(), strict=False)
    del frame, stretches
    return {query_id: dict(islice(pairs, count)) for query_id, count in zip(query_ids, counts, strict=False)}


def read_qrels_polars(path: str) -> dict[str, dict[str, int]]:
    import polars as pl

    frame = pl.read_csv(
        path,
        separator=" ",
        has_header=False,
        new_columns=["query_id", "iteration", "doc_id", "relevance"],
        schema_overrides={"query_id": pl.Utf8, "iteration": pl.Utf8, "doc_id": pl.Utf8, "relevance": pl.Int64},
        columns=[0, 2, 3],
    )
    return _grouped(frame, "relevance")


def read_run_polars(path: str) -> dict[str, dict[str, float]]:
    import polars as pl

    frame = pl.read_csv(
        path,
        separator=" ",
        has_header=False,
        new_columns=["query_id", "q0", "doc_id", "rank", "score", "run_tag"],
        schema_overrides={
            "query_id": pl.Utf8,
            "q0": pl.Utf8,
            "doc_id": pl.Utf8,
            "rank": pl.Int64,
            "score": pl.Float64,
            "run_tag": pl.Utf8,
        },
        columns=[0, 2, 4],
    )
    return _grouped(frame, "score")


READERS = {
    "loop": (read_qrels_loop, read_run_loop),
    "polars": (read_qrels_polars, read_run_polars),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="pytrec_eval peer for the benchmark")
    parser.add_argument("qrels")
    parser.add_argument("run")
    parser.add_argument("--measures", choices=sorted(PYTREC_MEASURES), default="five")
    parser.add_argument("--per-query", action="store_true", help="write every per-query value first")
    parser.add_argument("--reader", choices=sorted(READERS), default="polars")
    args = parser.parse_args(argv)

    import pytrec_eval

    read_qrels, read_run = READERS[args.reader]
    qrels = read_qrels(args.qrels)
    run = read_run(args.run)
    per_query = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES[args.measures]).evaluate(run)
    out = sys.stdout
    if args.measures in MEASURE_SETS:
        names = MEASURE_SETS[args.measures]
    else:  # a nickname: every numeric measure it gave, under trec_eval's name
        first = next(iter(per_query.values()), {})
        names = {name: name for name in first if name not in TEXT_MEASURES}
    if args.per_query:
        for query_id, values in per_query.items():
            out.writelines(f"{name}\t{query_id}\t{value:.4f}\n" if isinstance(value, float) else
                           f"{name}\t{query_id}\t{value}\n" for name, value in values.items())
    count = len(per_query)
    sums = dict.fromkeys(names, 0.0)
    f1_sums = dict.fromkeys(F1_CUTOFFS[args.measures], 0.0)
    for values in per_query.values():
        for measure in names:
            sums[measure] += values[measure]
        for k in f1_sums:
            precision, recall = values[f"P_{k}"], values[f"recall_{k}"]
            if precision + recall > 0:
                f1_sums[k] += 2 * precision * recall / (precision + recall)
    for measure, name in names.items():
        out.write(f"{name}\t{sums[measure] / count if count else 0.0:.10f}\n")
    for k, total in f1_sums.items():
        out.write(f"F1@{k}\t{total / count if count else 0.0:.10f}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
