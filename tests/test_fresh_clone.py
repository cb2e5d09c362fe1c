"""A fresh clone runs every test: only test_trec_eval_reference.py reads trec_eval's own test data in
../shared (and is not collected without it); every other test reads the golden files committed here."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_only_the_reference_module_reads_the_shared_folder() -> None:
    readers = sorted(path.name for path in TESTS.glob("test_*.py")
                     if path.name not in ("test_trec_eval_reference.py", "test_fresh_clone.py")
                     and any(word in path.read_text(encoding="utf-8") for word in ("reference_path(", "REFERENCE")))
    assert not readers, f"use the golden files (conftest.golden_path) instead of ../shared in: {readers}"
