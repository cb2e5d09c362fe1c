"""Where trec-rag-eval's time and memory go on a generated pair: phase by phase, then the top functions.

    python benchmarks/phases.py                     # 7,000 x 1,000 (generated if missing)
    python benchmarks/phases.py --order shuffled    # the same pair, lines shuffled
    python benchmarks/phases.py --queries 500 --measures rag --cprofile 30
    python benchmarks/phases.py --measures all_trec --per-query   # -q -m all_trec: the render phase too

Phases are timed in one process with wall and CPU time (CPU > wall means several threads worked):
import, read_qrels, read_run, rank (alignment: ranking order, ties, judgments, duplicates),
measures (the kernels), and with ``--per-query`` render (the ``-q`` text in trec_eval's format); the CLI's
summary rendering is what the benchmark's wall time adds on top. Memory:
the peak resident set *during* each phase (Linux resets the high-water mark between phases through
/proc/self/clear_refs; elsewhere the column shows the process's peak so far) and the resident set
after it, which is what the next phase starts from. ``--cprofile N`` adds cProfile's N most expensive
functions (by own time) over read + evaluate. For import detail use
``python -X importtime -m trec_rag_eval QRELS RUN 2> imports.txt``.
"""

from __future__ import annotations

import argparse
import io
import resource
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))  # trec_rag_eval from this checkout

from trec_rag_eval.allocators import settings_for_the_command  # noqa: E402

settings_for_the_command()  # the command's allocator and BLAS settings, before numpy and polars load

import generate  # noqa: E402

STANDARD = ["P.10", "recall.100", "map", "recip_rank", "ndcg_cut.10"]


def _memory_mb() -> tuple[float, float]:
    """(peak since the last reset, current) resident set in MB."""
    try:
        with open("/proc/self/status") as status:
            fields = dict(line.split(":", 1) for line in status)
        return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024
    except (OSError, KeyError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        return peak, peak


def _reset_peak() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # Linux: the peak resident set starts again from the current one
    except OSError:
        pass


class Phases:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float, float]] = []

    def __call__(self, name: str, work):
        _reset_peak()
        wall, cpu = time.perf_counter(), time.process_time()
        result = work()
        elapsed, used = time.perf_counter() - wall, time.process_time() - cpu
        self.rows.append((name, elapsed, used, *_memory_mb()))
        return result

    def table(self) -> str:
        total_wall = sum(r[1] for r in self.rows)
        lines = ["| phase | wall | CPU | share of wall | peak RSS during | RSS after |", "|---|---|---|---|---|---|"]
        for name, wall, cpu, peak, now in self.rows:
            lines.append(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {100 * wall / total_wall:.0f} % | {peak:.0f} MB "
                         f"| {now:.0f} MB |")
        lines.append(f"| total | {total_wall:.2f} s | {sum(r[2] for r in self.rows):.2f} s "
                     f"| | {max(r[3] for r in self.rows):.0f} MB | |")
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=generate.DEFAULT_QUERIES)
    parser.add_argument("--depth", type=int, default=generate.DEFAULT_DEPTH)
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--measures", choices=["standard", "rag", "official", "all_trec"], default="standard")
    parser.add_argument("--per-query", action="store_true", help="also time the -q output (trec_eval's format)")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="also list the top N functions")
    parser.add_argument("--order", choices=generate.ORDERS, default="sorted", help="line order of the run")
    parser.add_argument("--data", type=Path, default=generate.DATA_DIR)
    args = parser.parse_args(argv)
    qrels_path, run_path = generate.ensure_pair(args.data, args.queries, args.depth, args.seed, order=args.order)
    measures = {"standard": STANDARD, "rag": None, "official": ["official"], "all_trec": ["all_trec"]}[args.measures]

    phases = Phases()

    def imports():
        from trec_rag_eval.core.ranking import rank
        from trec_rag_eval.evaluation.evaluate import evaluate_ranked
        from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels, read_trec_run
        from trec_rag_eval.measures.requests import parse_measures

        return evaluate_ranked, rank, read_trec_qrels, read_trec_run, parse_measures

    evaluate_ranked, rank, read_trec_qrels, read_trec_run, parse_measures = phases("import", imports)
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    qrels = phases("read_qrels", lambda: read_trec_qrels(str(qrels_path)))
    run = phases("read_run", lambda: read_trec_run(str(run_path)))
    ranked = phases("rank", lambda: rank(qrels, run))
    result = phases("measures", lambda: evaluate_ranked(ranked, parse_measures(measures, order="trec")))
    if args.per_query:
        text = phases("render", lambda: result.render("trec", per_query=True))
        print(f"-q output: {len(text):,} characters, {text.count(chr(10)):,} lines")
    if profiler is not None:
        profiler.disable()

    print(f"{args.queries:,} queries x {args.depth:,} ({run_path.stat().st_size / 1e6:.0f} MB, {args.order} lines), "
          f"{args.measures} set" + (", per query" if args.per_query else ""))
    print(phases.table())
    print("means:", ", ".join(f"{name} {value:.4f}" for name, value in result.summary.items()
                              if isinstance(value, float)))
    if profiler is not None:
        import pstats

        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(args.cprofile)
        print(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
