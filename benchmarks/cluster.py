"""Time evaluation on a Dask cluster against the single-machine path, on generated data.

    python benchmarks/cluster.py runs                 # 20 TREC runs of 500,000 lines: threads vs --cluster local:2
    python benchmarks/cluster.py parquet              # one 70M-row Parquet run (70 partitions) on --cluster local:2
    python benchmarks/cluster.py parquet --queries 7000 --files 7 --single   # 7M rows, and the in-memory path too
    python benchmarks/cluster.py memory               # the command's peak memory for 10, 50, 200 runs (-q -m all_trec)
    python benchmarks/cluster.py memory --code /tmp/before   # the same, of another checkout (before/after)
    python benchmarks/cluster.py text                 # one 70M-line TREC file: one machine, then split on local:2
    python benchmarks/cluster.py text --queries 7000  # the same at 7M lines (the scaling)

``text`` times one TREC text file of ``--queries`` x ``--depth`` lines (every query spread over the whole file,
as logged traffic is) evaluated with ``-q -m all_trec``: first on one machine (the command line, threads), then
split on a LocalCluster of ``--workers`` processes, started beforehand (its start-up timed apart) and driven from
this process, so that the scheduler's own count of the tasks it ran (a scheduler plugin) and each worker's peak
memory and processor time (``getrusage`` on the worker) can be read: the command line would hide them. The
cluster's per-query output, rendered here as the command renders it, is compared byte for byte with the command's.
``--ways auto,p2p`` (default) measures the cluster both ways rows can reach their bucket: the default (a task per
(piece, bucket) pair while there are few) and Dask's p2p shuffle (what runs beyond ``PAIRS_LIMIT`` pairs).

Every timing is a subprocess (``python -m trec_rag_eval ...``, output to /dev/null), so it covers start-up,
the LocalCluster's start, reading, evaluation and output as a user sees them. The cluster's start-up alone is
timed on trec_eval-sized input and reported, so throughput can be given with and without it. The data is
seeded: queries ``q<n>``, each with ``--depth`` retrieved documents (random scores, some tied) and 60
judgments (grades 0-2, 50 of them among the retrieved). Each Parquet partition holds a slice of every
query's documents, as partitions written by time do: every query spans every file. The machine's load
average (``os.getloadavg``) is printed beside each figure: on a shared machine it says how much of the two
cores the run really had. Both paths print the same bytes; this script checks it on its first repeat.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "cluster"
JUDGED = 60
JUDGED_RETRIEVED = 50


def _query_frame(queries: int, depth: int, seed: int, part: int = 0, parts: int = 1) -> pl.DataFrame:
    """Rows (query_id, doc_id, score) of the documents k = part, part + parts, ... of every query."""
    rng = np.random.default_rng(seed * 1000 + part)
    ks = np.arange(part, depth, parts, dtype=np.int64)
    q = np.repeat(np.arange(queries, dtype=np.int64), ks.size)
    k = np.tile(ks, queries)
    doc = (q * 7919 + k * 104729) % 10_000_019  # distinct within a query (104729 is prime)
    score = np.round(rng.random(q.size) * 100, 2)  # two decimals: a few % of tied scores
    return pl.DataFrame({"query_id": q, "doc_id": doc, "score": score}).with_columns(
        ("q" + pl.col("query_id").cast(pl.Utf8)).alias("query_id"),
        ("d" + pl.col("doc_id").cast(pl.Utf8)).alias("doc_id"))


def _qrels(queries: int, depth: int, path: Path) -> None:
    rng = np.random.default_rng(7)
    q = np.repeat(np.arange(queries, dtype=np.int64), JUDGED)
    j = np.tile(np.arange(JUDGED, dtype=np.int64), queries)
    k = np.where(j < JUDGED_RETRIEVED, j * (depth // JUDGED_RETRIEVED), depth + j)  # 10 judged, never retrieved
    doc = (q * 7919 + k * 104729) % 10_000_019
    frame = pl.DataFrame({"query_id": "q" + pl.Series(q).cast(pl.Utf8), "iteration": "0",
                          "doc_id": "d" + pl.Series(doc).cast(pl.Utf8), "relevance": rng.integers(0, 3, q.size)})
    frame.write_csv(path, separator=" ", include_header=False)


def _trec(frame: pl.DataFrame, path: Path, tag: str) -> None:
    frame.select("query_id", pl.lit("Q0").alias("q0"), "doc_id", pl.lit(1).alias("rank"), "score",
                 pl.lit(tag).alias("run_tag")).write_csv(
        path, separator=" ", include_header=False)


def _time(args: list[str], out: Path | None = None) -> float:
    start = time.perf_counter()
    with open(out or os.devnull, "w") as sink:
        subprocess.run([sys.executable, "-m", "trec_rag_eval", *args], cwd=REPO, stdout=sink, check=True)
    return time.perf_counter() - start


def _load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def _startup(workers: int) -> float:
    reference = REPO.parent / "shared" / "reference" / "trec_eval"
    return _time(["--cluster", f"local:{workers}", "-m", "map", str(reference / "qrels.test"),
                  str(reference / "results.test")])


def bench_runs(args: argparse.Namespace) -> None:
    folder = DATA / f"runs-{args.runs}x{args.queries}x{args.depth}"
    folder.mkdir(parents=True, exist_ok=True)
    qrels = folder / "qrels.txt"
    if not qrels.exists():
        _qrels(args.queries, args.depth, qrels)
    runs = []
    for r in range(args.runs):
        path = folder / f"run{r:02d}.txt"
        if not path.exists():
            _trec(_query_frame(args.queries, args.depth, seed=r), path, f"run{r}")
        runs.append(str(path))
    lines = args.runs * args.queries * args.depth
    print(f"{args.runs} runs x {args.queries * args.depth:,} lines = {lines:,} lines, -m {args.measure}")
    print(f"cluster start-up alone (local:{args.workers}): {_startup(args.workers):.1f} s  [{_load()}]")
    common = ["-m", args.measure, str(qrels), *runs]
    for repeat in range(args.repeats):
        check = repeat == 0
        threads = _time(["-j", str(args.workers), *common], folder / "threads.out" if check else None)
        print(f"threads (-j {args.workers}): {threads:.1f} s, {lines / threads / 1e6:.2f}M lines/s  [{_load()}]")
        spread = _time(["--cluster", f"local:{args.workers}", *common], folder / "cluster.out" if check else None)
        print(f"--cluster local:{args.workers}: {spread:.1f} s, {lines / spread / 1e6:.2f}M lines/s  [{_load()}]")
        if check:
            same = (folder / "threads.out").read_bytes() == (folder / "cluster.out").read_bytes()
            print(f"same output: {same}")


def bench_parquet(args: argparse.Namespace) -> None:
    folder = DATA / f"parquet-{args.queries}x{args.depth}-{args.files}"
    partitions = folder / "run"
    partitions.mkdir(parents=True, exist_ok=True)
    qrels = folder / "qrels.txt"
    if not qrels.exists():
        _qrels(args.queries, args.depth, qrels)
    start = time.perf_counter()
    for part in range(args.files):
        path = partitions / f"part-{part:04d}.parquet"
        if not path.exists():
            _query_frame(args.queries, args.depth, seed=1, part=part, parts=args.files).with_columns(
                run_tag=pl.lit("big")).write_parquet(path)
    rows = args.queries * args.depth
    size = sum(p.stat().st_size for p in partitions.iterdir())
    print(f"one run of {rows:,} rows in {args.files} Parquet partitions ({size / 1e9:.2f} GB), "
          f"-m {args.measure} (generated or found in {time.perf_counter() - start:.0f} s)")
    startup = _startup(args.workers)
    print(f"cluster start-up alone (local:{args.workers}): {startup:.1f} s  [{_load()}]")
    for repeat in range(args.repeats):
        check = repeat == 0 and args.single
        spread = _time(["--cluster", f"local:{args.workers}", "-m", args.measure, str(qrels), str(partitions)],
                       folder / "cluster.out" if check else None)
        per_worker = rows / (spread - startup) / args.workers
        print(f"--cluster local:{args.workers}: {spread:.1f} s, {rows / spread / 1e6:.2f}M rows/s; without start-up "
              f"{per_worker / 1e6:.2f}M rows/s per worker  [{_load()}]")
        if args.single:
            alone = _time(["-m", args.measure, str(qrels), str(partitions)], folder / "single.out" if check else None)
            print(f"in memory, one process: {alone:.1f} s, {rows / alone / 1e6:.2f}M rows/s  [{_load()}]")
            if check:
                same = (folder / "single.out").read_bytes() == (folder / "cluster.out").read_bytes()
                print(f"same output: {same}")


PEAK = "PEAK_RSS_KB"
_PEAK_AT_EXIT = (  # the command run as `python -m trec_rag_eval`, saying its own peak resident memory as it exits
    "import atexit, os, resource, sys\n"
    "def said(*_):\n"
    f"    sys.stderr.write('\\n{PEAK} %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
    "    sys.stderr.flush()\n"
    "leave = os._exit\n"
    "os._exit = lambda code: (said(), leave(code))  # the command ends with os._exit, skipping atexit\n"
    "atexit.register(said)\n"
    "sys.argv[0] = 'trec-rag-eval'\n"
    "from trec_rag_eval.cli import main\n"
    "main()\n")


def _peak(args: list[str], code: Path) -> tuple[float, float]:
    """(peak resident memory of the command's own process in MB, seconds): the client alone, not the
    worker processes of a LocalCluster (its children; RUSAGE_SELF counts this process only). The package
    is imported from ``code`` (-P: not from the working directory, this checkout)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-P", "-c", _PEAK_AT_EXIT, *args], cwd=REPO, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(code)})
    took = time.perf_counter() - start
    lines = [line for line in done.stderr.splitlines() if line.startswith(PEAK)]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"the command failed ({done.returncode}): {done.stderr[-2000:]}")
    return int(lines[-1].split()[1]) / 1024, took


def bench_memory(args: argparse.Namespace) -> None:
    """The command's peak memory against the number of runs: flat when each run's output is written as it
    is done (issue 28), growing when every evaluation and the whole text are held until the end."""
    counts = [int(n) for n in args.counts.split(",")]
    folder = DATA / f"memory-{max(counts)}x{args.queries}x{args.depth}"
    folder.mkdir(parents=True, exist_ok=True)
    qrels = folder / "qrels.txt"
    if not qrels.exists():
        _qrels(args.queries, args.depth, qrels)
    runs = []
    for r in range(max(counts)):
        path = folder / f"run{r:03d}.txt"
        if not path.exists():
            _trec(_query_frame(args.queries, args.depth, seed=r), path, f"run{r}")
        runs.append(str(path))
    code = Path(args.code).resolve()
    print(f"runs of {args.queries * args.depth:,} lines ({args.queries} queries), -q -m {args.measure}, output to "
          f"/dev/null; code: {code}")
    print("path                 runs   peak MB   seconds", flush=True)
    for path in args.paths.split(","):
        where = ["--cluster", f"local:{args.workers}"] if path == "cluster" else ["-j", str(args.workers)]
        for count in counts:
            peak, took = _peak([*where, "-q", "-m", args.measure, str(qrels), *runs[:count]], code)
            name = f"local:{args.workers}" if path == "cluster" else f"threads -j {args.workers}"
            print(f"{name:<20} {count:>4} {peak:>9.0f} {took:>9.1f}  [{_load()}]", flush=True)


def _command(args: list[str], out: Path) -> tuple[float, float, float]:
    """(wall seconds, processor seconds, peak resident MB) of one command line, by GNU time."""
    report = out.with_suffix(".time")
    with open(out, "w") as sink:
        subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", str(report), sys.executable, "-m", "trec_rag_eval",
                        *args], cwd=REPO, stdout=sink, check=True)
    wall, user, system, peak_kb = report.read_text().split()[-4:]
    return float(wall), float(user) + float(system), int(peak_kb) / 1024


def _usage() -> tuple[float, float]:
    """(processor seconds, peak resident MB) of the process that calls it (a worker, from client.run)."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime, used.ru_maxrss / 1024


def bench_text(args: argparse.Namespace) -> None:
    from distributed.diagnostics.plugin import SchedulerPlugin

    import trec_rag_eval as tre
    import trec_rag_eval.cluster.partitions as cluster_module
    from trec_rag_eval.cluster import connect
    from trec_rag_eval.cluster.partitions import _pieces

    class CountTasks(SchedulerPlugin):
        name = "count-tasks"

        def __init__(self) -> None:
            self.keys: set = set()

        def update_graph(self, scheduler, *, keys, tasks=None, **kwargs):  # type: ignore[no-untyped-def]
            self.keys.update(tasks or ())

    folder = DATA / f"text-{args.queries}x{args.depth}"
    folder.mkdir(parents=True, exist_ok=True)
    qrels, run = folder / "qrels.txt", folder / "run.txt"
    if not qrels.exists():
        _qrels(args.queries, args.depth, qrels)
    start = time.perf_counter()
    if not run.exists() and not args.generate_only:  # in a process of its own: not in this one's peak memory
        subprocess.run([sys.executable, __file__, "text", "--generate-only", "--queries", str(args.queries), "--depth",
                        str(args.depth)], check=True)
    if not run.exists():
        parts = max(1, args.queries * args.depth // 5_000_000)
        with open(folder / "run.part", "wb") as out:  # every query's documents k = part, part + parts, ...
            for part in range(parts):
                _query_frame(args.queries, args.depth, seed=1, part=part, parts=parts).select(
                    "query_id", pl.lit("Q0").alias("q0"), "doc_id", pl.lit(1).alias("rank"), "score",
                    pl.lit("big").alias("run_tag")).write_csv(
                    out, separator=" ", include_header=False)
        (folder / "run.part").rename(run)
    if args.generate_only:
        return
    lines = args.queries * args.depth
    pieces = len(_pieces(str(run), "auto")[1])
    print(f"one TREC run of {lines:,} lines ({run.stat().st_size / 1e9:.2f} GB, {pieces} byte ranges), -q -m "
          f"{args.measure} (generated or found in {time.perf_counter() - start:.0f} s)  [{_load()}]")
    single = folder / "single.out"
    wall, cpu, peak = _command(["-q", "-m", args.measure, str(qrels), str(run)], single)
    print(f"one machine (threads): {wall:.1f} s, {lines / wall / 1e6:.2f}M lines/s; {cpu:.1f} CPU-s, "
          f"{lines / cpu / 1e6:.2f}M lines per CPU-s; peak {peak:,.0f} MB  [{_load()}]")
    pairs_limit = cluster_module.PAIRS_LIMIT
    start = time.perf_counter()
    with connect(f"local:{args.workers}") as client:  # as the command line starts it
        print(f"LocalCluster of {args.workers} workers started in {time.perf_counter() - start:.1f} s  [{_load()}]")
        client.register_plugin(CountTasks())
        rounds = [(way, repeat) for repeat in range(args.repeats) for way in args.ways.split(",")]
        for way, repeat in rounds:  # the first pays the workers' imports (polars, pyarrow, pandas, dask)
            # how the rows reach their bucket: the default (a task per pair while they are few), or p2p always
            cluster_module.PAIRS_LIMIT = 0 if way == "p2p" else pairs_limit
            client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins["count-tasks"].keys.clear())
            before = client.run(_usage)
            start = time.perf_counter()
            evaluation = tre.evaluate(str(qrels), str(run), args.measure, order="trec", cluster=client)
            spread = time.perf_counter() - start
            after = client.run(_usage)
            tasks = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.plugins["count-tasks"].keys))
            worker_cpu = sum(after[w][0] - before[w][0] for w in after)
            peaks = ", ".join(f"{after[w][1]:,.0f}" for w in sorted(after))
            print(f"--cluster local:{args.workers} (started), {way}, repeat {repeat + 1}: {spread:.1f} s, "
                  f"{lines / spread / 1e6:.2f}M lines/s, {lines / spread / args.workers / 1e6:.2f}M lines/s per "
                  f"worker; {worker_cpu:.1f} worker CPU-s, {lines / worker_cpu / 1e6:.2f}M lines per CPU-s; {tasks} "
                  f"tasks; worker peaks {peaks} MB; client peak {_usage()[1]:,.0f} MB  [{_load()}]")
            print(f"  per worker against one machine: {lines / spread / args.workers / (lines / wall):.2f}x by the "
                  f"clock, {(lines / worker_cpu) / (lines / cpu):.2f}x per CPU-s", flush=True)
            text = evaluation.render("trec", per_query=True).encode()
            print(f"  same output as one machine: {text == single.read_bytes()}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="what", required=True)
    runs = sub.add_parser("runs", help="many runs: the threaded path against --cluster local:N")
    runs.add_argument("--runs", type=int, default=20)
    runs.add_argument("--queries", type=int, default=1000)
    runs.add_argument("--depth", type=int, default=500)
    big = sub.add_parser("parquet", help="one Parquet run in partitions on --cluster local:N")
    big.add_argument("--queries", type=int, default=70_000)
    big.add_argument("--depth", type=int, default=1000)
    big.add_argument("--files", type=int, default=70)
    big.add_argument("--single", action="store_true", help="also time the in-memory path and compare outputs")
    memory = sub.add_parser("memory", help="the command's peak memory (client) for more and more runs")
    memory.add_argument("--counts", default="10,50,200", help="numbers of runs (default: 10,50,200)")
    memory.add_argument("--queries", type=int, default=200)
    memory.add_argument("--depth", type=int, default=100)
    memory.add_argument("--paths", default="threads,cluster", help="threads, cluster or both (default)")
    memory.add_argument("--code", default=str(REPO), help="the checkout whose command is measured (PYTHONPATH)")
    text = sub.add_parser("text", help="one TREC text file: one machine, then split on a LocalCluster")
    text.add_argument("--queries", type=int, default=70_000)
    text.add_argument("--depth", type=int, default=1000)
    text.add_argument("--ways", default="auto,p2p", help="how rows reach their bucket: auto (the default: a task per "
                      "pair while they are few), p2p (always), or both (default)")
    text.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    for each in (runs, big, memory, text):
        each.add_argument("--workers", type=int, default=2)
        each.add_argument("--repeats", type=int, default=1)
        each.add_argument("--measure", default="all_trec")
    args = parser.parse_args()
    {"runs": bench_runs, "parquet": bench_parquet, "memory": bench_memory, "text": bench_text}[args.what](args)


if __name__ == "__main__":
    main()
