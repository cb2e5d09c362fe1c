"""CONTRIBUTING.md's recipes stay true: every file they name exists, and every code example they quote is
the code as it stands in the file the recipe names."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEXT = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")


def test_every_file_named_exists():
    named = set(re.findall(r"`((?:trec_rag_eval|tests)/[\w/]+(?:\.py)?)`", TEXT))
    assert len(named) > 15
    missing = [path for path in sorted(named) if "<name>" not in path and not (ROOT / path).exists()]
    assert not missing, missing


def test_every_quoted_example_is_the_code_of_its_file():
    # each ```python block follows the sentence naming its file; its lines stand in that file as written
    files = {
        "def success(": "trec_rag_eval/measures/binary.py",
        'Family("success"': "trec_rag_eval/measures/registry.py",
        '"HitRate": Name(': "trec_rag_eval/measures/notation.py",
    }
    blocks = re.findall(r"```python\n(.*?)```", TEXT, re.S)
    assert len(blocks) == len(files)
    for block in blocks:
        [path] = [path for start, path in files.items() if block.lstrip().startswith(start)]
        source = (ROOT / path).read_text(encoding="utf-8")
        for line in block.splitlines():
            assert line.strip() in source, (path, line)


def test_the_facade_rule_it_states_is_the_contract():
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    [facade] = [c for c in contracts["contracts"] if c["name"] == "The command line goes through the facade"]
    assert facade["source_modules"] == ["trec_rag_eval.cli"]
    for module in ("trec_rag_eval.service", "trec_rag_eval.core", "trec_rag_eval.measures", "trec_rag_eval.cluster"):
        assert module in facade["forbidden_modules"]
    assert "trec_rag_eval.io.atomic" not in facade["forbidden_modules"]
    assert "A command never imports a reader, the core, the measures" in TEXT
