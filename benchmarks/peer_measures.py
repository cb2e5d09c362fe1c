"""The measures ir_measures computes through its optional providers (Compat, Accuracy, the C/W/L family,
the intent-aware family), timed here and in the provider, in the same run, on one seeded pair.

    python benchmarks/peer_measures.py                    # 300 queries x 100 documents, 3 subtopics
    python benchmarks/peer_measures.py --queries 1000 --depth 200 --repeats 3

Each line: the family, our evaluation time (median of the repeats, the ranking included), the provider's
(``iter_calc`` over ir_measures tuples, conversion excluded), the ratio, and the largest per-query
difference between the two (ties are broken by the rank both are given, so it is 0 up to rounding).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FAMILIES = {
    "compat": ["Compat", "Compat(p=0.8)"],
    "accuracy": ["Accuracy@10", "Accuracy"],
    "cwl_eval": ["SDCG(max_rel=3)@10", "NERR8(max_rel=3)@10", "NERR10(max_rel=3)", "INST(max_rel=3)",
                 "INSQ(max_rel=3)", "BPM(max_rel=3)@10"],
    "pyndeval": ["alpha_nDCG@10", "ERR_IA@10", "nERR_IA@10", "NRBP", "nNRBP", "P_IA@10", "AP_IA", "StRecall@10"],
}


def pair(queries: int, depth: int, subtopics: int, seed: int):  # type: ignore[no-untyped-def]
    from trec_rag_eval.tables import Qrels, Run, qrels_columns, run_columns

    rng = np.random.default_rng(seed)
    qrels_rows, run_rows = [], []
    for q in range(queries):
        judged = rng.choice(depth * 2, size=min(depth, 60), replace=False)
        for s in range(1, subtopics + 1):
            grades = rng.choice([0, 0, 0, 1, 2, 3], size=len(judged))
            qrels_rows += [(str(q), str(s), f"d{d}", int(g)) for d, g in zip(judged, grades, strict=True)]
        docs = rng.choice(depth * 2, size=depth, replace=False)
        scores = np.round(rng.random(depth) * 50) / 10  # ties
        run_rows += [(str(q), f"d{d}", float(x)) for d, x in zip(docs, scores, strict=True)]
    return Qrels(qrels_columns(qrels_rows), "bench"), Run(run_columns(run_rows), "bench")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--subtopics", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=20240607)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    import ir_measures

    from trec_rag_eval.evaluation.evaluate import evaluate_tables
    from trec_rag_eval.tables import per_document

    qrels, run = pair(args.queries, args.depth, args.subtopics, args.seed)
    ranked = run.frame.sort(["query_id", "score", "doc_id"], descending=[False, True, True])
    # the provider gets trec_eval's ranking as distinct scores, so both rank alike
    theirs_run = [ir_measures.ScoredDoc(q, d, float(len(ranked) - i))
                  for i, (q, d) in enumerate(ranked.select("query_id", "doc_id").iter_rows())]
    subtopic_qrels = [ir_measures.Qrel(q, d, int(r), i) for q, i, d, r in qrels.frame.iter_rows()]
    document_qrels = [ir_measures.Qrel(q, d, int(r)) for q, _, d, r in per_document(qrels).frame.iter_rows()]
    untied = run.frame.join(ranked.with_row_index("at").select("query_id", "doc_id", "at"), on=["query_id", "doc_id"])
    from trec_rag_eval.tables import Run

    ours_run = Run(untied.select("query_id", "doc_id", (len(ranked) - untied["at"]).cast(float).alias("score")))
    print(f"{args.queries} queries x {args.depth} documents, {args.subtopics} subtopics; median of {args.repeats}")
    print(f"{'provider':<10} {'measures':>8} {'ours (s)':>9} {'theirs (s)':>11} {'ratio':>7} {'max |diff|':>11}")
    for name, measures in FAMILIES.items():
        provider = ir_measures.providers.registry[name]
        if not provider.is_available():
            print(f"{name:<10} not installed ({provider.install_instructions()})")
            continue
        given = subtopic_qrels if name == "pyndeval" else document_qrels
        ours_t, theirs_t, theirs = [], [], {}
        for _ in range(args.repeats):
            start = time.perf_counter()
            ours = evaluate_tables(qrels, ours_run, measures)
            ours_t.append(time.perf_counter() - start)
            start = time.perf_counter()
            theirs = {}
            for text in measures:  # one call each: pyndeval reads the run once for all its invocations
                measure = ir_measures.parse_measure(text)
                for metric in provider.iter_calc([measure], given, theirs_run):
                    theirs[(text, metric.query_id)] = float(metric.value)
            theirs_t.append(time.perf_counter() - start)
        diff = max((abs(float(ours.per_query[q][text]) - theirs.get((text, q), 0.0))
                    for text in measures for q in ours.query_ids
                    if not np.isnan(theirs.get((text, q), 0.0))), default=0.0)
        a, b = statistics.median(ours_t), statistics.median(theirs_t)
        print(f"{name:<10} {len(measures):>8} {a:>9.3f} {b:>11.3f} {b / a:>6.1f}x {diff:>11.2g}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
