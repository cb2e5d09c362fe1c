"""docs/trec_eval_conventions.md is the project's own statement of trec_eval's rules: the code and tests cite
its sections, and every section they cite exists (a renumbered section fails here, not in a reader's hands)."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import REPO

ROOT = Path(REPO)
CONVENTIONS = ROOT / "docs" / "trec_eval_conventions.md"
CITATION = re.compile(r"trec_eval_conventions\.md((?:\s*(?:§\d+(?:\.\d+)?|,|and|-))+)")


def _sources() -> list[Path]:
    return [*sorted((ROOT / "trec_rag_eval").rglob("*.py")), *sorted((ROOT / "tests").glob("*.py")),
            ROOT / "README.md", ROOT / "CONTRIBUTING.md",
            *sorted(path for path in (ROOT / "docs").rglob("*.md") if path != CONVENTIONS)]


def _sections() -> set[str]:
    text = CONVENTIONS.read_text(encoding="utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.MULTILINE))


def test_every_cited_section_exists():
    sections = _sections()
    assert {"1.1", "2", "5.2", "8", "10"} <= sections
    cited = []
    for path in _sources():
        text = " ".join(path.read_text(encoding="utf-8").split())
        for match in CITATION.finditer(text):
            numbers = re.findall(r"§(\d+(?:\.\d+)?)", match.group(1))
            cited += [(path.name, number) for number in numbers]
    assert len(cited) >= 6
    assert [c for c in cited if c[1] not in sections] == []


def test_the_rules_are_cited_from_the_repository_not_from_outside_it():
    outside = [path.name for path in _sources()
               if path.name != Path(__file__).name and "TREC_EVAL_SEMANTICS" in path.read_text(encoding="utf-8")]
    assert outside == []
