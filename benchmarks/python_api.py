"""trec-rag-eval from Python, against the peers a notebook user would call instead, in one process.

    python benchmarks/python_api.py                  # every size, shape, measure set and peer: ~10 min idle
    python benchmarks/python_api.py --quick          # 1 x 10, 50 x 100 and 1,000 x 1,000, nDCG@10 only: ~2 min
    python benchmarks/python_api.py --sizes 50x100 --measures ndcg --shapes dict --no-commands

What is timed, each the wall time of one call as a user makes it (the median of several, tools taking
turns so that a change of load hits all of them):

- ``tre.evaluate(qrels, run, measures)`` with the qrels and the run in each in-memory shape: a dict of
  dicts (pytrec_eval's and ranx's shape), lists of ids (``{query_id: [doc_id, ...]}``, best first), search
  results (``{query_id: [{"id", "score"}, ...]}``, best first: what a search function returns),
  pandas and polars DataFrames (ir_measures' columns); and on prebuilt tables (``tre.Qrels``, ``tre.Run``)
  and with the qrels prepared once (``tre.Qrels``) and the run a dict;
- pytrec_eval on the dict of dicts, its ``RelevanceEvaluator`` built inside the timing (what one call costs
  a user who evaluates once) and outside (prepared once, then ``evaluate`` per run); the same two calls with
  ``trec_rag_eval.pytrec_eval``, the drop-in (its dicts checked equal to pytrec_eval's, to 1e-9); and
  pytrec_eval on the lists of ids, the search results and the pandas and polars frames, made into its dicts in
  the timing (it reads nothing else), so that each has a peer on the same input beside the strict ratio to
  pytrec_eval on ready dicts;
- ir_measures' ``calc_aggregate`` on the dict of dicts and on the pandas frame (its providers pick
  pytrec_eval); ranx's ``evaluate`` on the dict of dicts, its first call (numba's compilation) reported
  apart, then warm;
- a sweep: 1,000 runs of 50 x 100 against one qrels (ours with the qrels prepared once as ``tre.Qrels``,
  pytrec_eval and the drop-in with their evaluator built once);
- whole processes (``--no-commands`` leaves them out): the README's quick start command
  (``trec-rag-eval fixtures/qrels.txt fixtures/run_bm25.txt``) against the ``ir_measures`` command line on
  the same pair, and the first ``tre.compare`` of two runs in a fresh process (the call, not the
  interpreter's start).

Measure sets: ``ndcg`` (nDCG@10), ``rag`` (P, R, HitRate and nDCG at 1, 3, 5, 10, MRR, MAP: what every peer
has; our RAG table adds F1) and ``official`` (trec_eval's official set; pytrec_eval's nickname, no
ir_measures or ranx equivalent). Sizes are queries x documents per query (the run); every query has a fifth
as many judgments, graded 0-3. ``1x10``, one query of ten documents, is what a call costs whatever its size
(a loop that evaluates each question as it is answered pays it each time). Every ratio is ours / the peer's
(below 1: we are faster); the means of each pair of tools are compared (pytrec_eval: to 1e-9), so a speed figure
is never a wrong number.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # trec_rag_eval from this checkout

import trec_rag_eval as tre  # noqa: E402

SIZES = {"1x10": (1, 10), "50x100": (50, 100), "1000x1000": (1000, 1000), "10000x100": (10000, 100)}
SHAPES = ("dict", "lists", "results", "pandas", "polars")
OURS = {"ndcg": ["nDCG@10"], "rag": [f"{m}@{k}" for m in ("P", "R", "HitRate", "nDCG") for k in (1, 3, 5, 10)]
        + ["MRR", "MAP"], "official": "official"}
PYTREC = {"ndcg": {"ndcg_cut.10"}, "rag": {"P.1,3,5,10", "recall.1,3,5,10", "success.1,3,5,10",
                                           "ndcg_cut.1,3,5,10", "recip_rank", "map"}, "official": {"official"}}
PYTREC_KEY = {"nDCG@10": "ndcg_cut_10", "MRR": "recip_rank", "MAP": "map",
              **{f"{m}@{k}": f"{p}_{k}" for m, p in (("P", "P"), ("R", "recall"), ("HitRate", "success"),
                                                     ("nDCG", "ndcg_cut")) for k in (1, 3, 5, 10)}}
RANX = {"ndcg": ["ndcg@10"], "rag": [f"{m}@{k}" for m in ("precision", "recall", "hit_rate", "ndcg")
                                     for k in (1, 3, 5, 10)] + ["mrr", "map"]}
RANX_COMPILED: set[str] = set()
"""The measure sets ranx has evaluated in this process: numba compiled their functions at the first call."""


def make_pair(queries: int, depth: int, seed: int = 1) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    qrels = {f"q{i}": {f"d{j}": rng.randint(0, 3) for j in rng.sample(range(depth * 2), max(1, depth // 5))}
             for i in range(queries)}
    run = {f"q{i}": {f"d{j}": rng.random() for j in rng.sample(range(depth * 2), depth)} for i in range(queries)}
    return qrels, run


def shaped(qrels: dict, run: dict, shape: str) -> tuple[Any, Any]:
    """The same judgments and run in another in-memory shape (made outside the timing)."""
    if shape == "dict":
        return qrels, run
    if shape == "lists":  # relevant documents (grade 1: the list shape has no grades), the ranking best first
        return ({q: [d for d, r in docs.items() if r > 0] for q, docs in qrels.items()},
                {q: sorted(docs, key=docs.__getitem__, reverse=True) for q, docs in run.items()})
    if shape == "results":  # what a search function returns: hits best first, each with its id and score
        return qrels, {q: [{"id": d, "score": s} for d, s in sorted(docs.items(), key=lambda h: (h[1], h[0]),
                                                                     reverse=True)] for q, docs in run.items()}
    rows_q = [(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    rows_r = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    columns_q = dict(zip(("query_id", "doc_id", "relevance"), map(list, zip(*rows_q, strict=True)), strict=True))
    columns_r = dict(zip(("query_id", "doc_id", "score"), map(list, zip(*rows_r, strict=True)), strict=True))
    if shape == "pandas":
        import pandas as pd

        return pd.DataFrame(columns_q), pd.DataFrame(columns_r)
    import polars as pl

    return pl.DataFrame(columns_q), pl.DataFrame(columns_r)


FRAMES = ("pandas", "polars")
MADE_INTO_DICTS = ("lists", "results", *FRAMES)
"""The shapes pytrec_eval does not read: timed beside ours as a user gives them to it, made into its dicts."""


def nested(frame: Any, value: str) -> dict[str, dict[str, Any]]:
    """A pandas or polars frame as pytrec_eval's dict of dicts, by the loop a user writes for it (the columns as
    lists, one pass over their rows)."""
    made: dict[str, dict[str, Any]] = {}
    for query_id, doc_id, number in zip(frame["query_id"].to_list(), frame["doc_id"].to_list(),
                                        frame[value].to_list(), strict=True):
        made.setdefault(query_id, {})[doc_id] = number
    return made


def timed(calls: dict[str, Callable[[], Any]], budget: float, least: int = 3, most: int = 200) -> dict[str, float]:
    """The median wall time of each call, the calls taking turns in an order shuffled every round (a fixed
    order would always put the same call after the same other one, whose code and data it finds in the caches or
    has to bring back: ~20% of a small call on a loaded machine); each warmed once, untimed."""
    for call in calls.values():
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    turns = random.Random(0)
    order = list(calls)
    started = time.perf_counter()
    while True:
        turns.shuffle(order)
        for name in order:
            call = calls[name]
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
        rounds = len(next(iter(times.values())))
        if rounds >= most or (rounds >= least and time.perf_counter() - started > budget):
            break
    return {name: statistics.median(values) for name, values in times.items()}


def timed_alone(calls: dict[str, Callable[[], Any]], budget: float, least: int = 3, most: int = 200
                ) -> dict[str, float]:
    """The median wall time of each call made again and again on its own, as in a loop that does nothing else
    (a sweep, a validation step of each epoch): its code and data stay in the caches. ``timed``'s turns are the
    other case, a call between other work."""
    medians: dict[str, float] = {}
    for name, call in calls.items():
        call()
        values: list[float] = []
        started = time.perf_counter()
        while len(values) < most and (len(values) < least or time.perf_counter() - started < budget / len(calls)):
            start = time.perf_counter()
            call()
            values.append(time.perf_counter() - start)
        medians[name] = statistics.median(values)
    return medians


def show(value: float) -> str:
    return f"{value * 1e3:9.2f} ms" if value < 1 else f"{value:9.3f} s "


def check_means(ours: Any, theirs: dict[str, dict[str, float]], measures: str) -> float:
    """The largest difference between our means and pytrec_eval's (per query values averaged) over the
    measures both name alike."""
    if measures == "official":
        return 0.0
    worst = 0.0
    for name in OURS[measures]:
        key = PYTREC_KEY[name]
        mean = statistics.fmean(values[key] for values in theirs.values())
        worst = max(worst, abs(ours.summary[name] - mean))
    return worst


def same_dicts(ours: dict[str, dict[str, float]], theirs: dict[str, dict[str, float]]) -> None:
    """The drop-in's dict is pytrec_eval's: the same queries and keys, values within 1e-9 (NaN as NaN)."""
    import math

    assert list(ours) == list(theirs) and all(ours[q].keys() == theirs[q].keys() for q in theirs), "keys differ"
    for query_id, values in theirs.items():
        for key, value in values.items():
            mine = ours[query_id][key]
            assert abs(mine - value) <= 1e-9 or math.isnan(mine) and math.isnan(value), (query_id, key, mine, value)


def calls_for(qrels: dict, run: dict, measures: str, shapes: list[str], peers: bool
              ) -> tuple[dict[str, Callable[[], Any]], Any, float | None]:
    """The calls timed for one size and measure set, pytrec_eval's evaluator built once, and ranx's first
    call's time (None without the peers, or for the official set)."""
    import pytrec_eval

    from trec_rag_eval import pytrec_eval as drop_in

    ours_m, pytrec_m = OURS[measures], PYTREC[measures]
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, pytrec_m)
    ours_evaluator = drop_in.RelevanceEvaluator(qrels, pytrec_m)
    same_dicts(ours_evaluator.evaluate(run), evaluator.evaluate(run))
    calls: dict[str, Callable[[], Any]] = {
        "pytrec_eval (built in the timing)": lambda: pytrec_eval.RelevanceEvaluator(qrels, pytrec_m).evaluate(run),
        "pytrec_eval (built once)": lambda: evaluator.evaluate(run),
        "trec_rag_eval.pytrec_eval (built in the timing)":
            lambda: drop_in.RelevanceEvaluator(qrels, pytrec_m).evaluate(run),
        "trec_rag_eval.pytrec_eval (built once)": lambda: ours_evaluator.evaluate(run)}
    for shape in shapes:
        q, r = shaped(qrels, run, shape)
        calls[f"ours: {shape}"] = lambda q=q, r=r: tre.evaluate(q, r, ours_m)
        if shape in FRAMES:  # pytrec_eval reads dicts only: a user with a frame makes them first
            calls[f"pytrec_eval: {shape}, made into its dicts in the timing"] = lambda q=q, r=r: \
                pytrec_eval.RelevanceEvaluator(nested(q, "relevance"), pytrec_m).evaluate(nested(r, "score"))
        elif shape == "lists":  # each relevant document judged 1, each ranked one scored by its place from the end
            calls["pytrec_eval: lists, made into its dicts in the timing"] = lambda q=q, r=r: \
                pytrec_eval.RelevanceEvaluator({query: dict.fromkeys(docs, 1) for query, docs in q.items()},
                                               pytrec_m).evaluate(
                    {query: {doc: len(docs) - place for place, doc in enumerate(docs)} for query, docs in r.items()})
        elif shape == "results":  # a dict of each query's hits' scores, as a user writes it
            calls["pytrec_eval: results, made into its dicts in the timing"] = lambda r=r: \
                pytrec_eval.RelevanceEvaluator(qrels, pytrec_m).evaluate(
                    {query: {hit["id"]: hit["score"] for hit in hits} for query, hits in r.items()})
    prepared = tre.Qrels(qrels)
    calls["ours: tre.Qrels once, run a dict"] = lambda: tre.evaluate(prepared, run, ours_m)
    tables = (tre.Qrels(qrels), tre.Run(run))
    calls["ours: prebuilt tre.Qrels and tre.Run"] = lambda: tre.evaluate(*tables, ours_m)
    if not peers or measures == "official":
        return calls, evaluator, None
    import ir_measures
    import ranx

    ir_m = [ir_measures.parse_measure(m.replace("HitRate", "Success")) for m in ours_m]
    calls["ir_measures: dict"] = lambda: ir_measures.calc_aggregate(ir_m, qrels, run)
    if "pandas" in shapes:
        pq, pr = shaped(qrels, run, "pandas")
        calls["ir_measures: pandas"] = lambda: ir_measures.calc_aggregate(ir_m, pq, pr)
    start = time.perf_counter()
    ranx.evaluate(qrels, run, RANX[measures])
    first = time.perf_counter() - start
    if measures in RANX_COMPILED:  # compiled by an earlier table: this was no first call
        first = None
    RANX_COMPILED.add(measures)
    calls["ranx: dict (warm)"] = lambda: ranx.evaluate(qrels, run, RANX[measures])
    return calls, evaluator, first


def in_memory(sizes: list[str], shapes: list[str], measure_sets: list[str], budget: float, peers: bool) -> bool:
    agree = True
    for size in sizes:
        queries, depth = SIZES[size]
        qrels, run = make_pair(queries, depth)
        print(f"\n## {size}: {queries:,} queries x {depth:,} documents ({queries * depth:,} run rows)\n")
        for measures in measure_sets:
            calls, evaluator, first = calls_for(qrels, run, measures, shapes, peers)
            medians = timed(calls, budget)
            alone = timed_alone(calls, budget)
            built, once = medians["pytrec_eval (built in the timing)"], medians["pytrec_eval (built once)"]
            print(f"### {measures}\n")
            print("Taking turns: the calls in an order shuffled every round, each after another tool's (a call "
                  "between other work). In a loop: each call made again and again on its own (a sweep, a "
                  "validation step per epoch).\n")
            print("| call | median, taking turns | / pytrec_eval built in the timing | / pytrec_eval built once "
                  "| median, in a loop | / pytrec_eval built in the timing, in a loop |")
            print("|---|---|---|---|---|---|")
            alone_built = alone["pytrec_eval (built in the timing)"]
            for name, value in medians.items():
                print(f"| {name} | {show(value)} | {value / built:.2f} | {value / once:.2f} "
                      f"| {show(alone[name])} | {alone[name] / alone_built:.2f} |")
            if first is not None:
                print(f"| ranx: first call (numba compiles) | {show(first)} | | |")
            for shape in MADE_INTO_DICTS:  # the same input in pytrec_eval, its dicts made in the timing
                theirs = medians.get(f"pytrec_eval: {shape}, made into its dicts in the timing")
                if theirs is not None:
                    print(f"\nours on the {shape} / pytrec_eval on them (its dicts made in the timing): "
                          f"{medians[f'ours: {shape}'] / theirs:.2f}")
            # pytrec_eval is trec_eval 9 inside (scores as 32-bit floats before ranking): our means under its
            # conventions are compared with its own, so that a tie only float32 makes does not count as a difference
            worst = check_means(tre.evaluate(qrels, run, OURS[measures], trec_eval_9=True, queries="intersection"),
                                evaluator.evaluate(run), measures)
            agree &= worst <= 1e-9
            print(f"\nmeans against pytrec_eval's: largest difference {worst:.1e}"
                  f"{'' if worst <= 1e-9 else '  <-- DIFFER'}\n")
    return agree


def sweep(runs: int, budget: float) -> None:
    import pytrec_eval

    qrels, _ = make_pair(50, 100)
    many = [make_pair(50, 100, seed)[1] for seed in range(2, runs + 2)]
    from trec_rag_eval import pytrec_eval as drop_in

    prepared = tre.Qrels(qrels)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    ours_evaluator = drop_in.RelevanceEvaluator(qrels, {"ndcg_cut.10"})
    medians = timed({"ours (tre.Qrels once)": lambda: [tre.evaluate(prepared, r, "nDCG@10") for r in many],
                     "pytrec_eval (evaluator built once)": lambda: [evaluator.evaluate(r) for r in many],
                     "trec_rag_eval.pytrec_eval (evaluator built once)":
                         lambda: [ours_evaluator.evaluate(r) for r in many]},
                    budget, least=3, most=5)
    ours, theirs = medians["ours (tre.Qrels once)"], medians["pytrec_eval (evaluator built once)"]
    drop = medians["trec_rag_eval.pytrec_eval (evaluator built once)"]
    print(f"\n## A sweep: {runs:,} runs of 50 x 100 against one qrels (nDCG@10)\n")
    print(f"ours {show(ours)}, pytrec_eval {show(theirs)}: ratio {ours / theirs:.2f}; "
          f"trec_rag_eval.pytrec_eval {show(drop)}: ratio {drop / theirs:.2f}")


def commands(repeats: int) -> None:
    """Whole processes: the quick start against the ir_measures command line, and a first comparison."""
    root = HERE.parent
    bin_dir = Path(sys.executable).parent  # console scripts called directly, not through shims
    # the warm-up run of each command writes its bytecode, as pip's install of a package does: a shell that
    # forbids it (PYTHONDONTWRITEBYTECODE) would time the compilation of every module at every run instead
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONPATH": str(root)}
    qrels, run = str(root / "fixtures/qrels.txt"), str(root / "fixtures/run_bm25.txt")
    ours = [str(bin_dir / "trec-rag-eval"), qrels, run]
    theirs = [str(bin_dir / "ir_measures"), qrels, run, "P@1 P@3 P@5 P@10 R@1 R@3 R@5 R@10 Success@1 Success@3 "
              "Success@5 Success@10 nDCG@1 nDCG@3 nDCG@5 nDCG@10 RR AP"]
    times: dict[str, list[float]] = {"trec-rag-eval QRELS RUN": [], "ir_measures QRELS RUN (the same measures)": []}
    for index in range(repeats + 1):
        for name, command in zip(times, (ours, theirs), strict=True):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=env)
            if index:  # the first of each is a warm-up (page cache, bytecode)
                times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) for name, values in times.items()}
    first, second = medians.values()
    print(f"\n## The quick start command, whole process (median of {repeats})\n")
    for name, value in medians.items():
        print(f"{name:45s} {show(value)}")
    print(f"ratio {first / second:.2f}")
    code = ("import time, trec_rag_eval as tre\n"
            "start = time.perf_counter()\n"
            "tre.compare('fixtures/qrels.txt', ['fixtures/run_bm25.txt', 'fixtures/run_hybrid.txt'])\n"
            "print(time.perf_counter() - start)\n")
    firsts = [float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                                   cwd=root, env=env).stdout) for _ in range(repeats)]
    print(f"\nthe first tre.compare of two runs in a fresh process: {show(statistics.median(firsts))} "
          f"(median of {repeats}; the call alone, imports it triggers included)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default=",".join(SIZES), help="comma-separated: " + ", ".join(SIZES))
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated: " + ", ".join(SHAPES))
    parser.add_argument("--measures", default="ndcg,rag,official", help="comma-separated: ndcg, rag, official")
    parser.add_argument("--budget", type=float, default=2.0, help="seconds of timing per table (at least 3 rounds)")
    parser.add_argument("--sweep", type=int, default=1000, help="runs in the sweep (0: no sweep)")
    parser.add_argument("--repeats", type=int, default=7, help="runs of each whole-process command")
    parser.add_argument("--no-peers", action="store_true", help="ir_measures and ranx left out")
    parser.add_argument("--no-commands", action="store_true", help="whole processes left out")
    parser.add_argument("--quick", action="store_true", help="1x10, 50x100 and 1000x1000, nDCG@10, a sweep of 200")
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.measures, args.sweep, args.budget = "1x10,50x100,1000x1000", "ndcg", 200, 1.0
    import warnings

    warnings.simplefilter("ignore")  # a peer's deprecation notices; ours would only say queries are missing
    print(f"# trec-rag-eval from Python: {sys.version.split()[0]}, {os.cpu_count()} cores")
    agree = in_memory(args.sizes.split(","), args.shapes.split(","), args.measures.split(","), args.budget,
                      not args.no_peers)
    if args.sweep:
        sweep(args.sweep, args.budget)
    if not args.no_commands:
        commands(args.repeats)
    if not agree:
        print("\nSOME MEANS DIFFER FROM PYTREC_EVAL'S: the timings above are not of the same numbers")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
