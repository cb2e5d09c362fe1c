"""Every registered family's ``value_range`` holds what its kernel computes: on seeded random judgments (graded -1 to
3, some documents unjudged or outside the pool) and runs (tied scores, short and empty rankings), no query's value
of any measure of the family falls outside it. A family left at the default (0, 1) whose values are counts or sums
(a cumulative gain, say) fails here; ``compare`` relies on the range to refuse a detectable delta wider than it."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

import trec_rag_eval as tre
from trec_rag_eval.measures.registry import FAMILIES

ASKED = {  # the families that need a parameter to be asked: a measure of each, as tests/test_kernel_threads.py asks
    "SDCG": ["SDCG(max_rel=3)@5"], "NERR8": ["NERR8(max_rel=3)@5"], "NERR9": ["NERR9(max_rel=3)@5"],
    "NERR10": ["NERR10(p=0.5,max_rel=3)"], "NERR11": ["NERR11(max_rel=3)"], "INST": ["INST(max_rel=3)"],
    "INSQ": ["INSQ(max_rel=3)"], "BPM": ["BPM(T=2.0,max_rel=3)@5"],
}


def _inputs(seed: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(30):
        docs = [f"d{i}" for i in range(int(rng.integers(1, 25)))]
        qrels[f"q{q}"] = {d: int(rng.integers(-1, 4)) for d in docs if rng.random() < 0.7}
        pool = docs + [f"x{i}" for i in range(5)]  # x: never judged
        run[f"q{q}"] = {d: float(rng.integers(0, 6)) for d in pool if rng.random() < 0.8}
    return qrels, run


def _judgments(family: str, qrels: dict[str, dict[str, int]], folder: Path) -> object:
    """The judgments the family scores: preferences (one group, one subgroup: the grades order the documents),
    judgment groups (the documents of a query dealt to two groups), or the qrels themselves."""
    if family.startswith("prefs_"):
        return tre.Preferences([(q, "g1", "s1", d, float(level)) for q, judged in qrels.items()
                                for d, level in judged.items()])
    if family.endswith("_avgjg"):
        path = folder / "groups.txt"
        path.write_text("".join(f"{q} {'g1' if i % 2 else 'g2'} {d} {level}\n" for q, judged in qrels.items()
                                for i, (d, level) in enumerate(judged.items())), encoding="utf-8")
        return tre.read_qrels(path, format="qrels_jg")
    return qrels


@pytest.mark.parametrize("family", [name for name, family in FAMILIES.items()
                                    if family.value_type == "float" and family.value_range is not None])
def test_every_value_is_within_the_family_s_range(family, tmp_path):
    low, high = FAMILIES[family].value_range
    qrels, run = _inputs(14)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluation = tre.evaluate(_judgments(family, qrels, tmp_path), run, ASKED.get(family, family))
    for name, values in evaluation.values.items():
        finite = [v for v in values if v is not None and not math.isnan(v)]
        assert finite, name
        outside = [v for v in finite if not low - 1e-12 <= v <= high + 1e-12]
        assert outside == [], f"{name}: values outside value_range {(low, high)}: {outside[:3]}"
