"""No two modules of the package share a file name for unrelated things: a name shared says one feature, whose
command (cli/), text (render/) and logic modules may carry it; anything else is named for what it holds."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "trec_rag_eval"

FEATURES = {
    "agreement": "agree: the agreement of two sets of judgments (compare/) and its text (render/)",
    "allpairs": "compare --all-pairs: every pair of runs tested (compare/) and its tables (render/)",
    "analyses": "the analyses of judgments and runs: their facade functions (api/) and their bodies (service/)",
    "chunks": "the chunk -> document mapping: its file and map (io/) and its --doc-id-pattern/--doc-map flags (cli/)",
    "comparison": "compare: a comparison with a baseline (compare/) and its text in every format (render/)",
    "crosscheck": "the cross-check with ir-measures: the check (checks/), the command (cli/), its text (render/)",
    "evaluate": "evaluating a run: the evaluation (evaluation/) and the default command (cli/)",
    "measures": "the measures command (cli/) and its listing (render/)",
    "planning": "plan: the topic set size plan (compare/) and its tables (render/)",
    "zscores": "trec_eval's -Z: its file read (io/trec/) and the values made z-scores with it (evaluation/)",
}
"""The names one feature's modules share, each with what it is; any other name is one module's."""


def shared_names() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name != "__init__.py":
            where[path.stem].append(str(path.parent.relative_to(PACKAGE.parent)))
    return {name: places for name, places in where.items() if len(places) > 1}


def test_a_shared_module_name_is_one_feature_s():
    shared = shared_names()
    unrelated = {name: places for name, places in shared.items() if name not in FEATURES}
    assert unrelated == {}, "name each module for what it holds, or say the feature they share in FEATURES"
    assert sorted(FEATURES) == sorted(shared), "a feature whose name is no longer shared leaves FEATURES"


def test_one_module_a_feature_a_package():
    for name, places in shared_names().items():
        assert len(places) == len(set(places)), name
        logic = [place for place in places if place.split("/")[1] not in ("cli", "render")]
        assert len(logic) <= 2, (name, places)  # -Z's reader and its use are the most one feature has
