"""Seeded random preference and judgment-group cases, and trec_eval 10's output on each.

    python tests/golden/preference_cases.py --trec-eval /path/to/trec_eval   # rewrites generated/*.json
    python tests/golden/preference_cases.py --check                          # exit 1 if the inputs differ

``generated/prefs.json`` and ``generated/qrels_jg.json`` hold one case each per element: the files (their
text), the trec_eval arguments (``-q -m all_prefs -R prefs`` / ``-R qrels_prefs``, ``-q -m qrels_jg -R
qrels_jg``, with ``-c``, ``-M``, ``-J``, ``-l``) and trec_eval's standard output. The inputs come from
``SEED`` alone (``--check`` regenerates them and compares); the outputs from trec_eval 10 (usnistgov/trec_eval
f4253652c8efd0d86ddffd0d163cc0a0f813111a), so ``test_preference_cases.py`` runs without it.

What the cases hold, to reach every rule of form_prefs_counts and form_res_rels_jg:

- query ids and doc ids whose byte order differs from numeric order; runs with interleaved lines, scores on a
  coarse grid (ties everywhere, broken by doc_id: ascending for preferences, descending for groups), judged
  documents missing from the run, queries missing from the run (with -c);
- preference groups of one subgroup (pairs counted per line, a line written twice counting twice, levels
  <= 0 all non-relevant) and of several (made transitive; negative levels neither relevant nor not), levels
  that are integers or reals, one non-positive level per one-subgroup group (trec_eval reads past the
  lowest level otherwise, in prefs_avgjg_Rnonrel), several groups judging the same documents (prefs_pair);
- judgment groups judging the same documents differently, -1 (pooled, not judged), groups with no relevant
  document.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

SEED = 20261207
HERE = Path(__file__).resolve().parent
OUT = HERE / "generated"
CASES = 60
"""Cases per file."""

_QUERY_IDS = ["2", "10", "301", "q#7", "Q1", "a.b"]


def _docs(rng: random.Random, count: int) -> list[str]:
    ids: set[str] = set()
    while len(ids) < count:
        family = rng.randrange(4)
        number = rng.randrange(1, 60)
        ids.add([f"d{number}", f"D{number}", f"FT-{number}", f"x#{number}"][family])
    return sorted(ids)


def _level(rng: random.Random, latent: int, real: bool, scale: float) -> str:
    """A level for a latent grade: 0 stays 0 (non-relevant), the rest scaled (order kept)."""
    if latent <= 0:
        return str(latent)
    value = latent * scale
    return f"{value:.2f}" if real else str(int(round(value)))


def _prefs_text(rng: random.Random, queries: list[str], pools: dict[str, list[str]]) -> str:
    lines = []
    for query in queries:
        docs = pools[query]
        for g in range(rng.randint(1, 3)):
            group = rng.choice(["u1", "u2", "U3", "10", "9", f"g{g}"]) + ("" if g == 0 else f".{g}")
            nonrel = rng.choice([0, 0, 0, -1])
            latent = {d: rng.choice([nonrel, nonrel, 1, 2, 3, 4]) for d in docs}
            real = rng.random() < 0.3
            if rng.random() < 0.55:  # one subgroup: every pair of lines at different levels
                chosen = rng.sample(docs, rng.randint(2, len(docs)))
                subgroup = rng.choice(["0", "s", "F:Rnk"])
                for d in chosen:
                    lines.append(f"{query} {group} {subgroup} {d} {_level(rng, latent[d], real, 1.0)}")
                    if rng.random() < 0.08:  # a line written twice counts twice
                        lines.append(f"{query} {group} {subgroup} {d} {_level(rng, latent[d], real, 1.0)}")
            else:  # several subgroups: made transitive
                if rng.random() < 0.3:
                    latent.update({d: -2 for d in rng.sample(docs, 1)})
                for s in range(rng.randint(2, 4)):
                    chosen = rng.sample(docs, rng.randint(2, min(len(docs), 5)))
                    scale = rng.choice([1.0, 2.0, 0.5] if real else [1.0, 2.0, 3.0])
                    for d in chosen:
                        lines.append(f"{query} {group} s{s} {d} {_level(rng, latent[d], real, scale)}")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def _qrels_jg_text(rng: random.Random, queries: list[str], pools: dict[str, list[str]]) -> str:
    lines = []
    for query in queries:
        docs = pools[query]
        groups = rng.sample(["0", "1", "2", "10", "a"], rng.randint(1, 3))
        for group in groups:
            none_relevant = rng.random() < 0.15
            for d in rng.sample(docs, rng.randint(1, len(docs))):
                grade = rng.choice([-1, 0, 0, 0] if none_relevant else [-1, 0, 0, 1, 1, 2, 3])
                lines.append(f"{query} {group} {d} {grade}")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def _run_text(rng: random.Random, queries: list[str], pools: dict[str, list[str]], missing: set[str]) -> str:
    lines = []
    for query in queries:
        if query in missing:
            continue
        retrieved = rng.sample(pools[query], rng.randint(1, len(pools[query])))
        retrieved += [f"u{rng.randrange(100)}" for _ in range(rng.randint(0, 4))]
        for rank, doc in enumerate(dict.fromkeys(retrieved), start=1):
            lines.append(f"{query} Q0 {doc} {rank} {rng.choice([1, 2, 2, 3, 3, 3, 4.5, 7])} tag")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def _qrels_prefs_text(rng: random.Random, queries: list[str], pools: dict[str, list[str]]) -> str:
    """A qrels file read as preferences: iteration = group, several grades, -1 and 0 never both in a group."""
    lines = []
    for query in queries:
        for group in rng.sample(["0", "1", "7"], rng.randint(1, 2)):
            nonrel = rng.choice([0, 0, -1])
            for d in rng.sample(pools[query], rng.randint(2, len(pools[query]))):
                lines.append(f"{query} {group} {d} {rng.choice([nonrel, nonrel, 1, 2, 3])}")
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


def make_cases(kind: str) -> list[dict]:
    """The inputs and arguments of every case of ``kind`` (``prefs`` or ``qrels_jg``), from ``SEED``."""
    rng = random.Random(f"{SEED}-{kind}")
    cases = []
    for number in range(CASES):
        queries = rng.sample(_QUERY_IDS, rng.randint(1, 4))
        pools = {q: _docs(rng, rng.randint(3, 12)) for q in queries}
        complete = rng.random() < 0.4
        missing = set(rng.sample(queries, 1)) if complete and len(queries) > 1 else set()
        args = ["-q"] + (["-c"] if complete else [])
        if rng.random() < 0.3:
            args += ["-M", str(rng.randint(1, 6))]
        if kind == "prefs":
            qrels_layout = number % 4 == 3
            judgments = _qrels_prefs_text(rng, queries, pools) if qrels_layout else _prefs_text(rng, queries, pools)
            args += ["-m", "all_prefs", "-R", "qrels_prefs" if qrels_layout else "prefs"]
        else:
            judgments = _qrels_jg_text(rng, queries, pools)
            args += (["-J"] if rng.random() < 0.3 else []) + (["-l", "2"] if rng.random() < 0.3 else [])
            args += ["-m", "qrels_jg", "-R", "qrels_jg"]
        cases.append({"args": args, "judgments": judgments, "run": _run_text(rng, queries, pools, missing)})
    return cases


def trec_eval_output(binary: str, case: dict) -> str:
    with tempfile.TemporaryDirectory() as folder:
        judgments, run = Path(folder, "judgments"), Path(folder, "run")
        judgments.write_text(case["judgments"], encoding="utf-8")
        run.write_text(case["run"], encoding="utf-8")
        done = subprocess.run([binary, *case["args"], str(judgments), str(run)], capture_output=True, text=True)
    if done.returncode != 0 or done.stderr:
        raise RuntimeError(f"trec_eval {' '.join(case['args'])}: exit {done.returncode}: {done.stderr.strip()}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trec-eval", help="trec_eval 10 binary: write generated/*.json with its outputs")
    parser.add_argument("--check", action="store_true", help="compare the committed inputs with SEED's")
    args = parser.parse_args(argv)
    for kind in ("prefs", "qrels_jg"):
        cases = make_cases(kind)
        path = OUT / f"{kind}.json"
        if args.check:
            committed = json.loads(path.read_text(encoding="utf-8"))
            if [{k: c[k] for k in ("args", "judgments", "run")} for c in committed] != cases:
                print(f"{path} differs from the inputs of SEED {SEED}", file=sys.stderr)
                return 1
            continue
        if not args.trec_eval:
            parser.error("give --trec-eval (to write the cases) or --check")
        for case in cases:
            case["expected"] = trec_eval_output(args.trec_eval, case)
        OUT.mkdir(exist_ok=True)
        path.write_text(json.dumps(cases, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(HERE)} ({len(cases)} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
