"""Write the golden input files (qrels and runs) into tests/golden/inputs/, from one seed.

    python tests/golden/make_inputs.py            # rewrites tests/golden/inputs/*
    python tests/golden/make_inputs.py --check    # exit 1 if the committed files differ from those SEED generates

The files are our own, written here (no file of trec_eval's test data is copied). They cover the
conventions trec_eval's own test data covers, and a few it does not:

- ``qrels.binary``: judgments 0/1 for six topics whose ids sort in C byte order, not numerically
  (``10`` < ``2`` < ``301``); topic 302 has exactly 77 relevant documents (with R = 77, recall level
  0.6 asks for lround(46.2) = 46 relevant documents in trec_eval 10 and floor(46.2 + 0.9) = 47 in 9.0.x);
  topic 400 has judgments but no relevant document (R = 0). Doc ids mix upper and lower case, digits of
  different lengths (``d9`` / ``d10``) and ``#`` inside the field.
- ``qrels.binary.comments``: the same judgments with ``#`` comment lines (never two in a row, never
  last), CRLF line ends and tabs between fields: trec_eval prints the same bytes for it.
- ``qrels.graded``: the same documents judged -1 (pooled, unjudged), 0, 1, 2, 3 or 4.
- ``run.ties``: every topic of the qrels plus one the qrels lack (ignored); lines of all topics
  interleaved in random order; scores drawn from a coarse grid so that ties are everywhere, each written
  in several spellings (``12.3``, ``12.30``, ``1.23e1``, ``+12.3``); a rank column that contradicts the
  scores; a few lines with extra columns after the tag; one topic with 3 documents (fewer than every
  P cutoff), one with more than 1,000.
- ``run.ties.messy``: the same results with comment lines, blank and whitespace-only lines, leading
  blanks, tabs and CRLF line ends: trec_eval prints the same bytes for it.
- ``run.trunc``: ``run.ties`` without topics 10 and 302 (missing queries, for ``-c``).
- ``prefs.mixed``: preferences (``query_id group subgroup doc_id level``) over the judged documents of every
  topic, for ``-R prefs``: groups of one subgroup (a line written twice) and of several (made transitive, with
  negative levels), integer and real levels, several groups on the same documents; ``prefs.mixed.comments``:
  the same with comment lines, tabs and CRLF line ends.
- ``qrels.groups``: every topic judged by two or three judgment groups (the iteration column), for ``-R
  qrels_jg``; ``qrels.groups.comments``: the same with comment lines, tabs and CRLF.
- ``zscores.binary``: ``query_id measure mean stddev`` for ``-Z``: topic 10 and some measures left out, num_rel's
  standard deviation 0 (its true mean for most topics, a wrong one for 301).
- ``qrels.msmarco`` / ``run.msmarco``: MS MARCO v2.1 segment ids (``msmarco_v2.1_doc_00_880019750#4_16338``)
  and TREC 2024 RAG style topic ids, graded 0-3, a run grouped by topic (so it can be streamed) with 100
  documents for each of 80 topics of which 25 are judged; scores at full double precision, some equal
  only up to float32 precision (1.00000002 / 1.00000001, tied in trec_eval 9, not in 10), and ``inf``,
  ``-inf`` and hexadecimal (``0x1p-2``) scores.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

SEED = 20261201
INPUTS = Path(__file__).resolve().parent / "inputs"

TOPICS = ["2", "10", "301", "302", "303", "400"]
RUN_ONLY_TOPIC = "999"


def _doc_ids(rng: random.Random, count: int) -> list[str]:
    """Distinct doc ids in several families, so that byte order (which breaks score ties) differs
    from numeric and from case-insensitive order."""
    ids: set[str] = set()
    while len(ids) < count:
        family = rng.randrange(6)
        number = rng.randrange(1, 3000)
        if family == 0:
            ids.add(f"d{number}")  # d9 > d10 in byte order
        elif family == 1:
            ids.add(f"D{number}")  # upper case sorts before lower case
        elif family == 2:
            ids.add(f"FBIS3-{number}")
        elif family == 3:
            ids.add(f"FT9{rng.randrange(10)}{rng.randrange(10)}-{number}")
        elif family == 4:
            ids.add(f"CR#9{rng.randrange(10)}E-{number}")  # '#' inside a field is data
        else:
            ids.add(f"la{number:06d}-{rng.randrange(100):02d}")
    return sorted(ids)


def _judgments(rng: random.Random) -> dict[str, dict[str, tuple[int, int]]]:
    """topic -> doc id -> (binary judgment, graded judgment); the graded one is -1 for about 8 % of
    the documents judged 0 in the binary file, and 1-4 for the relevant ones."""
    sizes = {"2": 40, "10": 160, "301": 300, "302": 420, "303": 260, "400": 30}
    relevant_counts = {"2": 6, "10": 23, "301": 41, "302": 77, "303": 35, "400": 0}
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for topic in TOPICS:
        docs = _doc_ids(rng, sizes[topic])
        relevant = set(rng.sample(docs, relevant_counts[topic]))
        judged: dict[str, tuple[int, int]] = {}
        for doc in docs:
            if doc in relevant:
                judged[doc] = (1, rng.choice([1, 1, 1, 2, 2, 3, 4]))
            else:
                judged[doc] = (0, -1 if rng.random() < 0.08 else 0)
        out[topic] = judged
    return out


def _spell(rng: random.Random, value: float) -> str:
    """One score, written in one of several spellings C's strtod reads as the same double."""
    text = f"{value:.1f}"
    choice = rng.randrange(6)
    if choice == 1:
        return f"{value:.2f}"
    if choice == 2:
        return f"{value:.2e}"
    if choice == 3 and value >= 0:
        return "+" + text
    if choice == 4 and value == int(value):
        return str(int(value))
    return text


def _tie_run(rng: random.Random, judgments: dict[str, dict[str, tuple[int, int]]]) -> list[list[str]]:
    depth = {"2": 3, "10": 120, "301": 500, "302": 1100, "303": 400, "400": 25, RUN_ONLY_TOPIC: 30}
    lines: list[list[str]] = []
    for topic, count in depth.items():
        judged = judgments.get(topic, {})
        pool = list(judged)
        unjudged = [d for d in _doc_ids(rng, count + 50) if d not in judged]
        chosen: list[str] = []
        while len(chosen) < count:
            source = pool if pool and rng.random() < 0.6 else unjudged
            doc = source.pop(rng.randrange(len(source)))
            chosen.append(doc)
        for doc in chosen:
            boost = 3.0 if judged.get(doc, (0, 0))[0] == 1 else 0.0
            value = round(max(-5.0, min(25.0, rng.gauss(8.0 + boost, 4.0))), 1)
            if rng.random() < 0.3:
                value = float(round(value))  # more ties on whole numbers
            rank = str(rng.randrange(1, count + 1))  # contradicts the scores: it is ignored
            row = [topic, rng.choice(["Q0", "Q0", "0"]), doc, rank, _spell(rng, value), "ties"]
            if rng.random() < 0.004:
                row += ["extra", "columns", "ignored"]
            lines.append(row)
    rng.shuffle(lines)  # topics interleaved
    lines[-1][5] = "golden_ties"  # the tag of the last line is the run's name
    return lines


def _msmarco(rng: random.Random) -> tuple[list[str], list[str]]:
    topics = sorted({f"2024-{rng.randrange(100000, 999999)}" for _ in range(200)})[:80]
    rng.shuffle(topics)
    judged_topics = set(topics[:25])

    def segment() -> str:
        return (f"msmarco_v2.1_doc_{rng.randrange(60):02d}_{rng.randrange(10**9)}"
                f"#{rng.randrange(40)}_{rng.randrange(10**10)}")

    qrels: list[str] = []
    run: list[str] = []
    for topic in topics:
        docs = sorted({segment() for _ in range(140)})
        if topic in judged_topics:
            for doc in rng.sample(docs, rng.randrange(40, 110)):
                qrels.append(f"{topic} 0 {doc} {rng.choice([0, 0, 0, 1, 1, 2, 3])}")
        retrieved = rng.sample(docs, 100)
        scores = sorted((rng.random() for _ in retrieved), reverse=True)
        special = rng.randrange(8)
        for rank, (doc, score) in enumerate(zip(retrieved, scores, strict=True), 1):
            text = repr(score)
            if special == 0 and rank in (3, 4):
                text = "1.00000002" if rank == 3 else "1.00000001"
            elif special == 1 and rank == 1:
                text = "inf"
            elif special == 2 and rank == 100:
                text = "-inf"
            elif special == 3 and rank == 50:
                text = "0x1p-2"
            run.append(f"{topic} Q0 {doc} {rank} {text} msmarco_run")
    qrels.sort(key=lambda line: line.split()[0])  # grouped by topic, doc order as drawn
    return qrels, run


def _preferences(rng: random.Random, judgments: dict[str, dict[str, tuple[int, int]]]) -> list[str]:
    """Preference lines (query_id group subgroup doc_id level) over the judged documents of every topic: groups
    of one subgroup (integer and real levels, a line written twice) and of several (made transitive, a
    document at a negative level), several groups judging the same documents, one non-positive level per
    one-subgroup group (trec_eval reads past the lowest level otherwise, in prefs_avgjg_Rnonrel)."""
    lines: list[str] = []
    for topic in TOPICS:
        docs = sorted(judgments[topic])
        for number, group in enumerate(rng.sample(["u1", "u2", "U3", "10", "9"], rng.randint(1, 3))):
            nonrel = rng.choice([0, 0, -1])
            latent = {d: rng.choice([nonrel, nonrel, 1, 2, 3]) for d in docs}
            real = number % 2 == 1
            if rng.random() < 0.5:
                for doc in rng.sample(docs, min(len(docs), rng.randint(5, 40))):
                    level = latent[doc] * (1.5 if real and latent[doc] > 0 else 1)
                    lines.append(f"{topic} {group} F:Rnk {doc} {level:g}")
                    if rng.random() < 0.05:
                        lines.append(lines[-1])  # counted twice, as trec_eval counts it
            else:
                for doc in rng.sample(docs, 2):
                    latent[doc] = -2  # neither relevant nor not, in a group of several subgroups
                for subgroup in range(rng.randint(2, 4)):
                    scale = rng.choice([1, 2, 3])
                    for doc in rng.sample(docs, min(len(docs), rng.randint(2, 8))):
                        level = latent[doc] * scale if latent[doc] > 0 else latent[doc]
                        lines.append(f"{topic} {group} s{subgroup} {doc} {level}")
    rng.shuffle(lines)
    return lines


def _groups(rng: random.Random, judgments: dict[str, dict[str, tuple[int, int]]]) -> list[str]:
    """Qrels of judgment groups: every topic judged by two or three groups, on overlapping documents."""
    lines: list[str] = []
    for topic in TOPICS:
        docs = sorted(judgments[topic])
        for group in rng.sample(["0", "1", "2", "a"], rng.randint(2, 3)):
            for doc in rng.sample(docs, rng.randint(len(docs) // 3, len(docs))):
                binary = judgments[topic][doc][0]
                grade = rng.choice([-1, 0, 1, 2, 3]) if rng.random() < 0.2 else binary * rng.choice([1, 2])
                lines.append(f"{topic} {group} {doc} {grade}")
    return lines


ZSCORE_MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
                   "iprec_at_recall_0.00", "iprec_at_recall_0.50", "P_5", "P_10", "P_30", "P_100", "recall_100",
                   "utility", "ndcg", "ndcg_cut_10", "map_cut_100", "success_5", "set_F", "rbp", "unj_10",
                   "num_nonrel_judged_ret", "11pt_avg", "infAP", "gm_bpref"]
"""The measures the z-scores file gives means for (the others of all_trec score -1000000)."""


def _zscores(rng: random.Random, judgments: dict[str, dict[str, tuple[int, int]]]) -> list[str]:
    """``query_id measure mean stddev``: topic 10 left out (all -1000000), a few measures left out per topic,
    num_rel's standard deviation 0 with its true mean (z = 0) and another 0 with a wrong mean (-1000000)."""
    lines: list[str] = []
    for topic in TOPICS:
        if topic == "10":
            continue
        relevant = sum(binary for binary, _ in judgments[topic].values())
        for measure in ZSCORE_MEASURES:
            if rng.random() < 0.1:
                continue
            if measure == "num_rel":
                lines.append(f"{topic} num_rel {relevant if topic != '301' else relevant + 1} 0")
                continue
            mean, spread = (rng.uniform(100, 800), rng.uniform(10, 300)) if measure.startswith("num") else (
                rng.uniform(-3, 0.6) if measure.startswith("gm_") else rng.uniform(0, 0.6), rng.uniform(0.01, 0.4))
            lines.append(f"{topic} {measure} {mean:.4f} {spread:.4f}")
    rng.shuffle(lines)
    return lines


def build() -> dict[str, bytes]:
    rng = random.Random(SEED)
    judgments = _judgments(rng)
    files: dict[str, bytes] = {}

    binary = [f"{t} 0 {d} {b}" for t in TOPICS for d, (b, _) in judgments[t].items()]
    graded = [f"{t} 0 {d} {g}" for t in TOPICS for d, (_, g) in judgments[t].items()]
    files["qrels.binary"] = ("\n".join(binary) + "\n").encode()
    files["qrels.graded"] = ("\n".join(graded) + "\n").encode()
    commented: list[str] = ["# judgments for the golden tests, with comments"]
    for index, line in enumerate(binary):
        commented.append(line.replace(" ", "\t", 1))
        if index in (100, 700):
            commented.append(f"# a comment after line {index}")
    files["qrels.binary.comments"] = ("\r\n".join(commented) + "\r\n").encode()

    run = _tie_run(rng, judgments)
    files["run.ties"] = "".join(" ".join(row) + "\n" for row in run).encode()
    messy: list[str] = ["# a comment line opens the run"]
    for index, row in enumerate(run):
        if index % 97 == 0:
            messy.append("")
        if index % 211 == 0:
            messy.append(" \t ")
        if index % 307 == 0:
            messy.append(f"# comment {index}")
        separator = "\t" if index % 2 else "  "
        messy.append((" " if index % 5 == 0 else "") + separator.join(row))
    files["run.ties.messy"] = ("\r\n".join(messy) + "\r\n").encode()
    trunc = [row for row in run if row[0] not in ("10", "302")]
    files["run.trunc"] = "".join(" ".join(row) + "\n" for row in trunc).encode()

    qrels_ms, run_ms = _msmarco(rng)
    files["qrels.msmarco"] = ("\n".join(qrels_ms) + "\n").encode()
    files["run.msmarco"] = ("\n".join(run_ms) + "\n").encode()

    more = random.Random(SEED + 1)  # the later files draw from their own stream: the ones above stay as they were
    prefs = _preferences(more, judgments)
    files["prefs.mixed"] = ("\n".join(prefs) + "\n").encode()
    files["prefs.mixed.comments"] = _with_comments(prefs)
    groups = _groups(more, judgments)
    files["qrels.groups"] = ("\n".join(groups) + "\n").encode()
    files["qrels.groups.comments"] = _with_comments(groups)
    files["zscores.binary"] = ("\n".join(_zscores(more, judgments)) + "\n").encode()
    return files


def _with_comments(lines: list[str]) -> bytes:
    """The same lines with ``#`` comment lines as trec_eval takes them (never two in a row, never last), tabs
    between some fields and CRLF line ends: trec_eval prints the same bytes for it."""
    out = ["# judgments for the golden tests, with comments"]
    for index, line in enumerate(lines):
        out.append(line.replace(" ", "\t", 1) if index % 3 == 0 else line)
        if index in (5, 50):
            out.append(f"# a comment after line {index}")
    return ("\r\n".join(out) + "\r\n").encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    args = parser.parse_args(argv)
    files = build()
    if args.check:
        stale = [name for name, data in files.items()
                 if not (INPUTS / name).exists() or (INPUTS / name).read_bytes() != data]
        for name in stale:
            print(f"differs from what SEED generates: {INPUTS / name}", file=sys.stderr)
        return 1 if stale else 0
    INPUTS.mkdir(exist_ok=True)
    for name, data in files.items():
        (INPUTS / name).write_bytes(data)
        print(f"wrote {INPUTS / name} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
