"""Seeded random qrels and runs for the cross-checks against ir_measures' providers.

Each pair has graded judgments (with negative ones: in the pool, not judged), retrieved documents
without a judgment, exact score ties, queries of the qrels missing from the run, a query of the run
missing from the qrels, and rankings shorter and longer than the usual cutoffs.
"""

from __future__ import annotations

import random

from trec_rag_eval.tables import Qrels, Run

DOCS = [f"d{i}" for i in range(25)]
SCORES = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 7.25]


def random_pair(seed: int, max_grade: int = 3, subtopics: int = 0) -> tuple[Qrels, Run]:
    """Qrels and run from ``seed``. With ``subtopics`` > 0 the qrels are intent-aware (ndeval's
    ``query_id subtopic doc_id relevance``): each judged document gets a judgment per subtopic."""
    rng = random.Random(seed)
    queries = [str(q) for q in range(1, rng.randint(2, 6) + 1)]
    rows: list[tuple[str, str, str, int]] = []
    for q in queries:
        docs = rng.sample(DOCS, rng.randint(1, 14))
        if subtopics:
            for s in range(1, rng.randint(1, subtopics) + 1):
                for d in docs:
                    rows.append((q, str(s), d, rng.choice([-1, 0, 0, 0, 1, 1, max_grade])))
        else:
            for d in docs:
                rows.append((q, "0", d, rng.choice([-1, 0, 0, 1, 1, 2, max_grade])))
    run: dict[str, dict[str, float]] = {}
    for q in [q for q in queries if rng.random() < 0.85] + ["99"]:
        docs = rng.sample(DOCS, rng.randint(1, 20))
        run[q] = {d: rng.choice(SCORES) for d in docs}
    if not any(q in run for q in queries):
        run[queries[0]] = {DOCS[0]: 1.0}
    columns = {"query_id": [r[0] for r in rows], "iteration": [r[1] for r in rows],
               "doc_id": [r[2] for r in rows], "relevance": [r[3] for r in rows]}
    return Qrels(columns, f"qrels#{seed}"), Run.from_dict(run)
