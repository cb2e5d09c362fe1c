"""Where trec-rag-eval's time goes on a generated pair: phase by phase, then the top functions.

    python benchmarks/phases.py                     # 7,000 x 1,000 (generated if missing)
    python benchmarks/phases.py --queries 500 --measures rag --cprofile 30

Phases are timed in one process with wall and CPU time (CPU > wall means several threads worked):
import, read_qrels, read_run, evaluate (alignment + kernels); the CLI's rendering is what the
benchmark's wall time adds on top. ``--cprofile N``
adds cProfile's N most expensive functions (by own time) over read + evaluate. For import detail use
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

import generate  # noqa: E402

STANDARD = ["P.10", "recall.100", "map", "recip_rank", "ndcg_cut.10"]


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Phases:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, float]] = []

    def __call__(self, name: str, work):
        wall, cpu = time.perf_counter(), time.process_time()
        result = work()
        self.rows.append((name, time.perf_counter() - wall, time.process_time() - cpu, _peak_mb()))
        return result

    def table(self) -> str:
        total_wall = sum(r[1] for r in self.rows)
        lines = ["| phase | wall | CPU | share of wall | peak RSS after |", "|---|---|---|---|---|"]
        for name, wall, cpu, peak in self.rows:
            lines.append(f"| {name} | {wall:.2f} s | {cpu:.2f} s | {100 * wall / total_wall:.0f} % | {peak:.0f} MB |")
        lines.append(f"| total | {total_wall:.2f} s | {sum(r[2] for r in self.rows):.2f} s | | |")
        return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=generate.DEFAULT_QUERIES)
    parser.add_argument("--depth", type=int, default=generate.DEFAULT_DEPTH)
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--measures", choices=["standard", "rag"], default="standard")
    parser.add_argument("--cprofile", type=int, default=0, metavar="N", help="also list the top N functions")
    parser.add_argument("--data", type=Path, default=generate.DATA_DIR)
    args = parser.parse_args(argv)
    qrels_path, run_path = generate.ensure_pair(args.data, args.queries, args.depth, args.seed)
    measures = STANDARD if args.measures == "standard" else None

    phases = Phases()

    def imports():
        from trec_rag_eval.evaluation.evaluate import evaluate
        from trec_rag_eval.io.trec import read_qrels, read_run

        return evaluate, read_qrels, read_run

    evaluate, read_qrels, read_run = phases("import", imports)
    profiler = None
    if args.cprofile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    qrels = phases("read_qrels", lambda: read_qrels(str(qrels_path)))
    run = phases("read_run", lambda: read_run(str(run_path)))
    result = phases("evaluate", lambda: evaluate(qrels, run, measures=measures))
    if profiler is not None:
        profiler.disable()

    print(f"{args.queries:,} queries x {args.depth:,} ({run_path.stat().st_size / 1e6:.0f} MB), {args.measures} set")
    print(phases.table())
    print("means:", ", ".join(f"{name} {value:.4f}" for name, value in result.summary.items()))
    if profiler is not None:
        import pstats

        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(args.cprofile)
        print(text.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
