"""Time trec-rag-eval against its peers, end to end, in the same run, alternating, in three line orders.

    python benchmarks/run.py            # 7,000 queries x 1,000 documents (7M lines), 3 orders, 3 repeats
    python benchmarks/run.py --quick    # 500 queries x 1,000, a few minutes
    python benchmarks/run.py --queries 2000 --depth 500 --repeats 5 --orders sorted,shuffled
    python benchmarks/run.py --trec-eval /path/to/trec_eval     # trec_eval's C binary as one more peer
    python benchmarks/run.py --invocation all_trec,all_trec-q --orders sorted --trec-eval /path/to/trec_eval

Every tool runs as a subprocess reading the same two files and printing its means, so wall time
includes interpreter start-up, imports, parsing, evaluation and output, as a user sees it:

- ``trec-rag-eval``: the console script;
- ``ir_measures``: its CLI (pytrec_eval underneath, with ir_measures' own reader);
- ``pytrec_eval (polars)`` / ``pytrec_eval (loop)``: benchmarks/pytrec_eval_path.py, pytrec_eval fed by
  the fastest reader we could write (polars, multi-threaded) and by a tight Python loop;
- ``trec_eval``: with ``--trec-eval PATH``, a trec_eval binary (build it from the usnistgov/trec_eval
  sources; nothing here depends on it). For the RAG set it prints per-query P and R (``-q``), from
  which F1 is computed outside the timing.

The same pair is timed in three line orders (``--orders``; see generate.py --order): ``sorted`` (one
block per query, rank order), ``partial`` (10 % of the query blocks in random line order) and
``shuffled`` (every line shuffled, queries interleaved); the qrels file is the same.

The invocations (``--invocation``, all by default), each timed with the peers that compute the same set:

- ``five``: ``-m P.10 -m recall.100 -m map -m recip_rank -m ndcg_cut.10`` (every peer);
- ``rag``: our default, no -m: P/R/F1/HitRate/nDCG at 1,3,5,10, MRR, MAP (every peer, in its notation,
  F1 computed per query from P and R);
- ``official``: trec_eval's default set (``trec_eval QRELS RUN``; ours ``-m official``): trec_eval and
  pytrec_eval (``{'official'}``; ir_measures has no gm_map nor run id);
- ``all_trec`` and ``all_trec-q``: ``-m all_trec``, without and with the per-query lines (``-q``):
  trec_eval and pytrec_eval (``{'all_trec'}``: trec_eval 9's set, without unj, rbp and rbp_resid; with
  -q the script writes every per-query value too).

Runs alternate tool by tool (A B C A B C ...) and each figure is the median of --repeats. Wall time is
measured around the child; peak memory is the child's peak resident set from GNU time's %M (see
time_once for why not os.wait4 from here). Before timing, the means printed by every tool are compared
side by side, so a speed win is never a wrong answer.

The small case (trec_eval's own test files, 1,500 run lines) measures start-up latency.
The report (Markdown) goes to stdout and to benchmarks/data/results-<size>.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (benchmarks/generate.py, next to this file)

OUT_DIR = generate.DATA_DIR
REFERENCE_DIR = HERE.parent.parent / "shared" / "reference" / "trec_eval"  # ../shared beside the checkout
PYTREC_SCRIPT = HERE / "pytrec_eval_path.py"
OURS = "trec-rag-eval"

STANDARD_TREC = ["P.10", "recall.100", "map", "recip_rank", "ndcg_cut.10"]
STANDARD_IRM = "P@10 R@100 AP RR nDCG@10"
CUTOFFS = (1, 3, 5, 10)
RAG_IRM = " ".join(
    [f"{family}@{k}" for family in ("P", "R", "Success", "nDCG") for k in CUTOFFS] + ["RR", "AP"]
)
INVOCATIONS = ("five", "rag", "official", "all_trec", "all_trec-q")
# trec_eval's own commands: the targets against trec_eval (speed and memory) apply to these
TREC_EVAL_INVOCATIONS = ("five", "official", "all_trec", "all_trec-q")
INVOCATION_TITLES = {
    "five": "-m " + " -m ".join(STANDARD_TREC),
    "rag": "default RAG set (no -m)",
    "official": "the official set (trec_eval QRELS RUN; ours -m official)",
    "all_trec": "-m all_trec",
    "all_trec-q": "-q -m all_trec (per-query output)",
}
TREC_EVAL_RAG = [f"{family}.{','.join(map(str, CUTOFFS))}" for family in ("P", "recall", "success", "ndcg_cut")] + [
    "recip_rank", "map"]
ORDERS = generate.ORDERS

# Every notation -> one comparison key (AP and MAP are the same mean, so are RR and MRR).
_ALIASES = {"map": "AP", "MAP": "AP", "AP": "AP", "recip_rank": "RR", "MRR": "RR", "RR": "RR"}
_PATTERNS = [
    (re.compile(r"^P[_@.](\d+)$"), "P@{}"),
    (re.compile(r"^(?:recall|R)[_@.](\d+)$"), "R@{}"),
    (re.compile(r"^(?:ndcg_cut|nDCG)[_@.](\d+)$"), "nDCG@{}"),
    (re.compile(r"^(?:success|Success|HitRate)[_@.](\d+)$"), "HitRate@{}"),
    (re.compile(r"^F1[_@.](\d+)$"), "F1@{}"),
]


def canonical(name: str) -> str | None:
    """Our comparison key for a measure name in any tool's notation, or None if not one we compare."""
    if name in _ALIASES:
        return _ALIASES[name]
    for pattern, template in _PATTERNS:
        match = pattern.match(name)
        if match:
            return template.format(match.group(1))
    return None


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_means(text: str) -> dict[str, float]:
    """Means from a tool's output: ``name value``, ``name all value`` (trec_eval), ``all name value``
    (ir_measures -q), a Markdown/plain table with one row of means, or JSON with a "summary" mapping.

    Per-query lines are skipped; F1@k is added from per-query P@k and R@k when only those are given.
    """
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError:
            data = None
        if data is not None:
            if isinstance(data, list) and data:
                data = data[0]
            summary = data.get("summary", data) if isinstance(data, dict) else {}
            return {key: float(v) for k, v in summary.items() if (key := canonical(k)) and _float(str(v)) is not None}
    means: dict[str, float] = {}
    per_query: dict[str, dict[str, float]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        tokens = [t for t in re.split(r"[\s|]+", line.strip()) if t]
        if not tokens or set("".join(tokens)) <= set("-:+="):
            continue
        value = _float(tokens[-1])
        if len(tokens) == 2 and value is not None and canonical(tokens[0]):
            means[canonical(tokens[0])] = value
        elif len(tokens) == 3 and value is not None and tokens[1] == "all" and canonical(tokens[0]):
            means[canonical(tokens[0])] = value
        elif len(tokens) == 3 and value is not None and canonical(tokens[0]) and not canonical(tokens[1]):
            per_query.setdefault(tokens[1], {})[canonical(tokens[0])] = value  # trec_eval -q: measure qid value
        elif len(tokens) == 3 and value is not None and canonical(tokens[1]):
            if tokens[0] == "all":
                means[canonical(tokens[1])] = value
            else:
                per_query.setdefault(tokens[0], {})[canonical(tokens[1])] = value
        elif sum(canonical(t) is not None for t in tokens) >= 2:
            header = tokens
        elif header and len(tokens) >= len(header) - 1 and tokens[0].lower() in {"all", "mean", "means"}:
            values = tokens[-len([h for h in header if canonical(h)]):]
            for name, cell in zip([h for h in header if canonical(h)], values, strict=False):
                if _float(cell) is not None:
                    means[canonical(name)] = float(cell)
    if per_query:
        for k in CUTOFFS:
            if f"F1@{k}" not in means and all(f"P@{k}" in v and f"R@{k}" in v for v in per_query.values()):
                f1 = [
                    2 * v[f"P@{k}"] * v[f"R@{k}"] / (v[f"P@{k}"] + v[f"R@{k}"]) if v[f"P@{k}"] + v[f"R@{k}"] else 0.0
                    for v in per_query.values()
                ]
                means[f"F1@{k}"] = sum(f1) / len(f1)
    return means


def printed_places(text: str) -> int:
    """The fewest decimals a tool printed its values with (how closely its means can agree)."""
    if text.lstrip().startswith(("{", "[")):
        return 15  # JSON carries full float64 precision
    places = [len(m.group(1)) for m in re.finditer(r"\d\.(\d+)(?![\d.])", text)]
    return min(places) if places else 10


@dataclass
class Tool:
    name: str
    argv: list[str]  # without the measure arguments and files
    for_set: dict[str, list[str]]  # invocation -> argv tail (files included); an invocation absent: not run
    # Extra arguments for one untimed run whose output is used for the agreement check (full precision).
    check_args: list[str] = field(default_factory=list)


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    error: str | None = None
    output: str = ""


def executable(name: str) -> str:
    """The real console script next to this interpreter (not a pyenv shim, which adds its own start-up)."""
    beside = Path(sys.executable).parent / name
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if not found:
        raise SystemExit(f"Error: {name} not found (pip install it, or activate the environment that has it)")
    return found


def ours_command() -> list[str]:
    """The console script when trec-rag-eval is installed, else ``python -m trec_rag_eval`` from this
    checkout (``child_environment`` puts it on PYTHONPATH)."""
    beside = Path(sys.executable).parent / OURS
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "trec_rag_eval"]


def all_tools(qrels: Path, run: Path, small: bool, pytrec_readers: list[str], trec_eval: str | None = None
              ) -> list[Tool]:
    files = [str(qrels), str(run)]
    five = [arg for name in STANDARD_TREC for arg in ("-m", name)]
    result = [
        # Timed as a user runs it (default output); the means are checked on one extra --format json run.
        Tool(OURS, ours_command(), {"five": [*five, *files], "rag": files, "official": ["-m", "official", *files],
                                    "all_trec": ["-m", "all_trec", *files],
                                    "all_trec-q": ["-q", "-m", "all_trec", *files]}, ["--format", "json"]),
        Tool(
            "ir_measures CLI",
            [executable("ir_measures")],
            # -q for the RAG set: F1 needs per-query P and R (computed here, outside the timing).
            {"five": [*files, STANDARD_IRM, "-p", "10"], "rag": [*files, RAG_IRM, "-p", "10", "-q"]},
        ),
    ]
    # trec_eval's test files are tab-separated with padded scores: only the loop reader reads them.
    for reader in ["loop"] if small else pytrec_readers:
        script = [*files, "--reader", reader, "--measures"]
        result.append(
            Tool(
                f"pytrec_eval ({reader})",
                [sys.executable, str(PYTREC_SCRIPT)],
                {"five": [*script, "five"], "rag": [*script, "rag"], "official": [*script, "official"],
                 "all_trec": [*script, "all_trec"], "all_trec-q": [*script, "all_trec", "--per-query"]},
            )
        )
    if trec_eval:
        rag = [arg for name in TREC_EVAL_RAG for arg in ("-m", name)]
        result.append(Tool("trec_eval", [trec_eval],
                           {"five": [*five, *files], "rag": ["-q", *rag, *files], "official": files,
                            "all_trec": ["-m", "all_trec", *files], "all_trec-q": ["-q", "-m", "all_trec", *files]}))
    return result


def child_environment(data: Path) -> dict[str, str]:
    """The children's environment: bytecode caching on, as in any normal installation.

    This sandbox sets PYTHONDONTWRITEBYTECODE, which would make every start recompile trec-rag-eval's
    (editable, never cached) sources while the peers' site-packages ship compiled; all children share one
    cache under benchmarks/data/pycache instead, filled by an untimed warm-up run of each tool.
    """
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str((data / "pycache").resolve())
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), *filter(None, [env.get("PYTHONPATH")])])
    return env


CHILD_ENV: dict[str, str] | None = None


GNU_TIME = "/usr/bin/time"


def time_once(argv: list[str], stdout_path: Path) -> tuple[float, int, int, str]:
    """(wall seconds, peak RSS in KB, exit code, stderr) of one child.

    Peak RSS comes from GNU time's %M, i.e. wait4() in a tiny intermediate process. Calling os.wait4
    here directly is wrong on Linux: exec() keeps the RSS high-water mark of the process image it
    replaces, and subprocess forks (vforks) from this interpreter, so every child would report at
    least this process's own peak (verified: /bin/true "used" 504 MB after the parent touched 500 MB).
    Without GNU time we fall back to os.wait4, whose floor is this process's peak (kept small: the
    pair is generated in a subprocess).
    """
    err_path = stdout_path.with_suffix(".err")
    rss_path = stdout_path.with_suffix(".rss")
    use_time = os.access(GNU_TIME, os.X_OK)
    full = [GNU_TIME, "-f", "%M", "-o", str(rss_path), *argv] if use_time else argv
    with open(stdout_path, "wb") as out, open(err_path, "wb") as err:
        started = time.perf_counter()
        child = subprocess.Popen(full, stdout=out, stderr=err, env=CHILD_ENV)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if use_time:
        lines = rss_path.read_text().split()
        rss_kb = int(lines[-1]) if lines and lines[-1].isdigit() else 0
    else:
        # Linux reports ru_maxrss in KB (macOS in bytes).
        rss_kb = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    return wall, rss_kb, child.returncode, err_path.read_text(errors="replace")


def ensure_pair(data: Path, queries: int, depth: int, seed: int, log, order: str = "sorted") -> tuple[Path, Path]:
    """Generate the pair in a subprocess (keeps this process, the children's parent, small)."""
    qrels, run = generate.pair_paths(data, queries, depth, seed, order)
    if not (qrels.exists() and run.exists()):
        log(f"generating {run.name} ...")
        subprocess.run(
            [sys.executable, str(HERE / "generate.py"), "--queries", str(queries), "--depth", str(depth),
             "--seed", str(seed), "--out", str(data), "--order", order],
            check=True, stdout=sys.stderr,
        )
    return qrels, run


def bench_case(label: str, tool_list: list[Tool], repeats: int, work: Path, log,
               invocations: tuple[str, ...] = INVOCATIONS) -> dict[str, dict[str, Timing]]:
    """Alternate the tools (A B C A B C ...) for each invocation; keep every timing."""
    results: dict[str, dict[str, Timing]] = {}
    for measure_set in invocations:
        tool_list_here = [tool for tool in tool_list if measure_set in tool.for_set]
        timings = {tool.name: Timing() for tool in tool_list_here}
        for repeat in range(repeats):
            for tool in tool_list_here:
                timing = timings[tool.name]
                if timing.error:
                    continue
                out_path = work / f"{label}-{measure_set}-{re.sub(r'[^a-z_]+', '_', tool.name.lower())}.out"
                wall, rss_kb, code, stderr = time_once([*tool.argv, *tool.for_set[measure_set]], out_path)
                if code != 0:
                    last = [line for line in stderr.splitlines() if line.strip()][-1:] or [f"exit {code}"]
                    timing.error = f"failed (exit {code}): {last[0][:160]}"
                    log(f"  {label} {measure_set} {tool.name}: {timing.error}")
                    continue
                timing.wall.append(wall)
                timing.rss_kb.append(rss_kb)
                timing.output = out_path.read_text()
                log(f"  {label} {measure_set} #{repeat + 1} {tool.name}: {wall:.2f} s, {rss_kb / 1024:.0f} MB")
        for tool in tool_list_here:
            timing = timings[tool.name]
            if tool.check_args and not timing.error:
                out_path = work / f"{label}-{measure_set}-{re.sub(r'[^a-z_]+', '_', tool.name.lower())}.check"
                _, _, code, stderr = time_once([*tool.argv, *tool.check_args, *tool.for_set[measure_set]], out_path)
                timing.output = out_path.read_text() if code == 0 else ""
                if code != 0:
                    log(f"  {label} {measure_set} {tool.name} check run failed: {stderr.strip()[-160:]}")
        results[measure_set] = timings
    return results


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _fmt_wall(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds < 10 else f"{seconds:.1f} s"


def _fmt_mem(kb: float) -> str:
    return f"{kb / 1024:.0f} MB" if kb < 1024 * 1024 else f"{kb / 1024 / 1024:.2f} GB"


def timing_table(timings: dict[str, Timing]) -> list[str]:
    ours = timings.get(OURS)
    base_wall = _median(ours.wall) if ours and ours.wall else None
    base_rss = _median(ours.rss_kb) if ours and ours.rss_kb else None
    rows = [
        "| tool | wall (median) | runs | peak RSS (median) | wall / trec-rag-eval | RSS / trec-rag-eval |",
        "|---|---|---|---|---|---|",
    ]
    for name, timing in timings.items():
        if timing.error or not timing.wall:
            rows.append(f"| {name} | {timing.error or 'not run'} | | | | |")
            continue
        wall, rss = _median(timing.wall), _median(timing.rss_kb)
        runs = " / ".join(f"{w:.2f}" for w in timing.wall)
        wall_ratio = f"{wall / base_wall:.1f}x" if base_wall else "n/a"
        rss_ratio = f"{rss / base_rss:.2f}x" if base_rss else "n/a"
        bold = "**" if name == OURS else ""
        rows.append(
            f"| {bold}{name}{bold} | {bold}{_fmt_wall(wall)}{bold} | {runs} | {_fmt_mem(rss)} "
            f"| {wall_ratio} | {rss_ratio} |"
        )
    return rows


# The targets of the 7M-line pair (issue 11), checked on every run of that size: per line order, how
# many times faster than each anchor peer trec-rag-eval must be (the peer's median over ours), and
# a peak memory of at most MEMORY_FACTOR x the run file's size (trec_eval's own footprint on it).
WALL_TARGETS = {
    "sorted": (("ir_measures CLI", 10.0), ("pytrec_eval (polars)", 3.5)),
    "partial": (("ir_measures CLI", 10.0), ("pytrec_eval (polars)", 3.5)),
    "shuffled": (("ir_measures CLI", 8.0), ("pytrec_eval (polars)", 2.5)),
}
MEMORY_FACTOR = 2.0
PARTIAL_LIMIT = 1.25  # partial's time at most this many times sorted's
SMALL_WALL_LIMIT = 0.3


TREC_EVAL_FACTOR = 5.0  # issue 22: trec_eval's own commands at least 5x faster, in no more memory


def targets_table(case: str, timings: dict[str, Timing], run_bytes: int = 0, invocation: str = "five") -> list[str]:
    """Met / not met for each target that applies: ``case`` is "small" (start-up) or a line order.

    Against the Python peers (issue 11): the five standard measures and the RAG set. Against trec_eval
    (issue 22, when it was timed): its four everyday commands at least 5x faster, and a peak memory no
    larger than trec_eval's own on the same files."""
    ours = timings.get(OURS)
    if ours is None or not ours.wall:
        return []
    wall, rss = _median(ours.wall), _median(ours.rss_kb)
    rows = ["| target | measured | met? |", "|---|---|---|"]
    if case == "small":
        rows.append(f"| trec-rag-eval under {SMALL_WALL_LIMIT} s | {_fmt_wall(wall)} "
                    f"| {'yes' if wall < SMALL_WALL_LIMIT else 'no'} |")
        return rows
    peers = WALL_TARGETS[case] if invocation in ("five", "rag") else ()
    trec_eval = timings.get("trec_eval")
    timed_trec_eval = trec_eval is not None and not trec_eval.error and bool(trec_eval.wall)
    if invocation in TREC_EVAL_INVOCATIONS and timed_trec_eval:
        peers = (*peers, ("trec_eval", TREC_EVAL_FACTOR))
    for name, ratio in peers:
        peer = timings.get(name)
        if peer is None or peer.error or not peer.wall:
            continue
        measured = _median(peer.wall) / wall
        rows.append(f"| {ratio:g}x faster than {name} | {measured:.1f}x | {'yes' if measured >= ratio else 'no'} |")
    limit_kb = MEMORY_FACTOR * run_bytes / 1024
    rows.append(f"| peak memory at most {MEMORY_FACTOR:g}x the run file ({_fmt_mem(limit_kb)}) | {_fmt_mem(rss)} "
                f"| {'yes' if rss <= limit_kb else 'no'} |")
    if invocation in TREC_EVAL_INVOCATIONS and trec_eval is not None and timed_trec_eval:
        theirs = _median(trec_eval.rss_kb)
        rows.append(f"| peak memory at most trec_eval's ({_fmt_mem(theirs)}) | {_fmt_mem(rss)} "
                    f"| {'yes' if rss <= theirs else 'no'} |")
    return rows


def order_targets(by_order: dict[str, dict[str, dict[str, Timing]]]) -> list[str]:
    """partial within PARTIAL_LIMIT x sorted's time, per measure set (both orders timed in this run)."""
    if "sorted" not in by_order or "partial" not in by_order:
        return []
    rows = ["| target | measure set | partial / sorted | met? |", "|---|---|---|---|"]
    for measure_set in by_order["sorted"]:
        if measure_set not in by_order["partial"]:
            continue
        base, other = by_order["sorted"][measure_set].get(OURS), by_order["partial"][measure_set].get(OURS)
        if not base or not other or not base.wall or not other.wall:
            continue
        ratio = _median(other.wall) / _median(base.wall)
        rows.append(f"| partial within {PARTIAL_LIMIT}x of sorted | {measure_set} | {ratio:.2f}x "
                    f"| {'yes' if ratio <= PARTIAL_LIMIT else 'no'} |")
    return rows


def agreement_table(timings: dict[str, Timing], invocation: str = "rag") -> tuple[list[str], bool]:
    """Means side by side; a row disagrees when tools differ by more than their printed precision.
    F1@k is asked for by the RAG set only (elsewhere per-query P and R would give it to some tools)."""
    parsed = {name: parse_means(t.output) for name, t in timings.items() if t.output}
    if invocation != "rag":
        parsed = {name: {k: v for k, v in means.items() if not k.startswith("F1@")} for name, means in parsed.items()}
    places = {name: printed_places(t.output) for name, t in timings.items() if t.output}
    names = list(parsed)
    keys: list[str] = []
    for means in parsed.values():
        keys += [k for k in means if k not in keys]
    rows = [
        "| measure | " + " | ".join(names) + " | max difference | agree? |",
        "|---|" + "---|" * (len(names) + 2),
    ]
    all_agree = True
    for key in keys:
        values = [parsed[name].get(key) for name in names]
        present = [(v, places[n]) for v, n in zip(values, names, strict=False) if v is not None]
        spread = max(v for v, _ in present) - min(v for v, _ in present) if present else 0.0
        tolerance = sum(sorted(0.5 * 10.0 ** -p for _, p in present)[-2:]) + 1e-12
        agree = len(present) == len(names) and spread <= tolerance
        all_agree &= agree
        cells = " | ".join("missing" if v is None else f"{v:.10f}" for v in values)
        rows.append(f"| {key} | {cells} | {spread:.1e} | {'yes' if agree else '**NO**'} |")
    return rows, all_agree


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def machine() -> list[str]:
    cpu = "unknown"
    memory = "unknown"
    try:
        cpu = next(
            line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")
        )
        kb = int(next(line.split()[1] for line in open("/proc/meminfo") if line.startswith("MemTotal")))
        memory = f"{kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration, ValueError):
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    commit = subprocess.run(
        ["git", "-C", str(HERE), "describe", "--always", "--dirty"], capture_output=True, text=True
    ).stdout.strip()
    packages = ", ".join(
        f"{p} {_version(p)}"
        for p in ("trec-rag-eval", "numpy", "polars", "pyarrow", "ir-measures", "pytrec-eval-terrier", "click")
    )
    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    return [
        f"- CPU: {cpu}; {usable} usable cores (nproc), memory {memory}; load average {load} (1/5/15 min)",
        f"- OS: {platform.platform()}; Python {platform.python_version()} ({platform.python_implementation()})",
        f"- Packages: {packages}; trec-rag-eval commit {commit or 'unknown'}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=None, help="queries in the big case (7000; --quick: 500)")
    parser.add_argument("--depth", type=int, default=generate.DEFAULT_DEPTH, help="run lines per query (1000)")
    parser.add_argument("--seed", type=int, default=generate.DEFAULT_SEED)
    parser.add_argument("--repeats", type=int, default=None, help="timed runs per tool (3; --quick: 3)")
    parser.add_argument("--small-repeats", type=int, default=None, help="timed runs on trec_eval's files (10)")
    parser.add_argument("--quick", action="store_true", help="mid-size case (500 queries), a few minutes")
    parser.add_argument("--skip-small", action="store_true", help="skip the start-up case")
    parser.add_argument("--skip-big", action="store_true", help="skip the generated case")
    parser.add_argument(
        "--pytrec-readers", default="polars,loop", help="readers feeding pytrec_eval on the big case (polars,loop)"
    )
    parser.add_argument("--orders", default=",".join(ORDERS),
                        help="line orders of the run to time, comma-separated (sorted,partial,shuffled)")
    parser.add_argument("--invocation", default=",".join(INVOCATIONS),
                        help=f"what to time, comma-separated ({','.join(INVOCATIONS)}; all by default)")
    parser.add_argument("--trec-eval", metavar="PATH", default=None,
                        help="a trec_eval binary to time as one more peer (not needed otherwise)")
    parser.add_argument("--only-trec-eval", action="store_true",
                        help="with --trec-eval: time trec-rag-eval against trec_eval alone (its targets; much shorter)")
    parser.add_argument("--data", type=Path, default=OUT_DIR, help="where pairs and outputs go (benchmarks/data)")
    args = parser.parse_args(argv)
    orders = [o.strip() for o in args.orders.split(",") if o.strip()]
    if not set(orders) <= set(ORDERS):
        parser.error(f"--orders: choose among {', '.join(ORDERS)}")
    invocations = tuple(i.strip() for i in args.invocation.split(",") if i.strip())
    if not invocations or not set(invocations) <= set(INVOCATIONS):
        parser.error(f"--invocation: choose among {', '.join(INVOCATIONS)}")
    if args.only_trec_eval and not args.trec_eval:
        parser.error("--only-trec-eval needs --trec-eval PATH")
    if args.trec_eval and not os.access(args.trec_eval, os.X_OK):
        parser.error(f"--trec-eval: {args.trec_eval} is not an executable file")
    queries = args.queries or (500 if args.quick else generate.DEFAULT_QUERIES)
    repeats = args.repeats or 3
    small_repeats = args.small_repeats or (5 if args.quick else 10)
    readers = [r.strip() for r in args.pytrec_readers.split(",") if r.strip()]

    def tools(*given, **named) -> list[Tool]:
        every = all_tools(*given, **named)
        return [t for t in every if t.name in (OURS, "trec_eval")] if args.only_trec_eval else every

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    work = args.data / "out"
    work.mkdir(parents=True, exist_ok=True)
    global CHILD_ENV
    CHILD_ENV = child_environment(args.data)
    # Untimed warm-up of every tool (bytecode cache, page cache) on a tiny pair.
    tiny = ensure_pair(args.data, 20, 50, args.seed, log)
    for tool in tools(*tiny, False, readers, args.trec_eval):
        for measure_set in invocations:
            if measure_set in tool.for_set:
                time_once([*tool.argv, *tool.for_set[measure_set]], work / "warm-up.out")
    report = ["## Benchmark", "", *machine(), ""]
    all_agree = True

    if not args.skip_small:
        qrels, results = REFERENCE_DIR / "qrels.test", REFERENCE_DIR / "results.test"
        if qrels.exists() and results.exists():
            log(f"small case: {results} ({sum(1 for _ in open(results)):,} lines), {small_repeats} repeats")
            timed = bench_case("small", tools(qrels, results, True, readers, args.trec_eval), small_repeats, work, log,
                               invocations)
            report += ["### Start-up: trec_eval's test files (qrels.test, results.test: 1,500 run lines)", ""]
            for measure_set, timings in timed.items():
                report += [f"Measures: {measure_set}", "", *timing_table(timings), "", *targets_table("small", timings),
                           ""]
                rows, agree = agreement_table(timings, measure_set)
                all_agree &= agree
                report += ["<details><summary>means side by side</summary>", "", *rows, "", "</details>", ""]
        else:
            log(f"small case skipped: {qrels} or {results} not found")

    if not args.skip_big:
        by_order: dict[str, dict[str, dict[str, Timing]]] = {}
        full_size = (queries, args.depth) == (generate.DEFAULT_QUERIES, generate.DEFAULT_DEPTH)
        for order in orders:
            qrels, run = ensure_pair(args.data, queries, args.depth, args.seed, log, order)
            size_mb = run.stat().st_size / 1e6
            lines = queries * args.depth
            log(f"big case, {order} lines: {run} ({lines:,} lines, {size_mb:.0f} MB), {repeats} repeats")
            # Warm the page cache so the first tool does not pay for the disk.
            for path in (qrels, run):
                with open(path, "rb") as handle:
                    while handle.read(1 << 24):
                        pass
            timed = bench_case(f"q{queries}-d{args.depth}-{order}",
                               tools(qrels, run, False, readers, args.trec_eval), repeats, work, log, invocations)
            by_order[order] = timed
            report += [
                f"### Synthetic pair, {order} lines: {queries:,} queries x {args.depth:,} documents "
                f"({lines:,} run lines, {size_mb:.0f} MB; seed {args.seed})",
                "",
            ]
            for measure_set, timings in timed.items():
                report += [f"Measures: {INVOCATION_TITLES[measure_set]}", "", *timing_table(timings), ""]
                if full_size:  # the targets are set for the 7M-line pair
                    report += [*targets_table(order, timings, run.stat().st_size, measure_set), ""]
                rows, agree = agreement_table(timings, measure_set)
                all_agree &= agree
                report += ["Means side by side:", "", *rows, ""]
        if full_size and order_targets(by_order):
            report += ["### Line order", "", *order_targets(by_order), ""]

    rerun = "python benchmarks/run.py" + (" --quick" if args.quick else "")
    if args.queries:
        rerun += f" --queries {args.queries}"
    if args.depth != generate.DEFAULT_DEPTH:
        rerun += f" --depth {args.depth}"
    if orders != list(ORDERS):
        rerun += f" --orders {','.join(orders)}"
    if args.trec_eval:
        rerun += " --trec-eval PATH"
    if invocations != INVOCATIONS:
        rerun += f" --invocation {','.join(invocations)}"
    if readers != ["polars", "loop"]:
        rerun += f" --pytrec-readers {','.join(readers)}"
    rerun += " --only-trec-eval" * args.only_trec_eval
    rerun += " --skip-small" * args.skip_small + " --skip-big" * args.skip_big
    report += [
        f"Wall: median of {repeats} alternating runs (start-up case: {small_repeats}); peak RSS: the child's "
        f"maximum resident set ({'GNU time %M' if os.access(GNU_TIME, os.X_OK) else 'os.wait4'}). "
        "Ratios: tool / trec-rag-eval (higher = trec-rag-eval better).",
        f"Rerun: `{rerun}`",
        "",
    ]
    if not all_agree:
        report.insert(2, "**WARNING: the tools' means disagree beyond printed precision (see below).**\n")
    text = "\n".join(report)
    print(text)
    name = f"results-q{queries}-d{args.depth}.md" if not args.skip_big else "results-small.md"
    (args.data / name).write_text(text)
    log(f"report written to {args.data / name}")
    return 0 if all_agree else 1


if __name__ == "__main__":
    sys.exit(main())
