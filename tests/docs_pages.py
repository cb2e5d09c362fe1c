"""The documentation the tests read: README.md and the pages of the site (docs/, built by mkdocs.yml)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def page(name: str) -> str:
    """The text of ``README.md`` or of a page of the site (``"measures.md"``, ``"guides/rag-engineer.md"``)."""
    path = REPO / name if name == "README.md" else DOCS / name
    return path.read_text(encoding="utf-8")


def page_names() -> list[str]:
    """README.md, then every page of the site, in path order."""
    return ["README.md", *sorted(str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md"))]


def section(text: str, heading: str) -> str:
    """The section of ``text`` opened by the line ``heading`` (``"## Output formats"``), to the next heading of its
    level or above (outside code blocks)."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.rstrip("\n") == heading)
    fenced = False
    for end in range(start + 1, len(lines)):
        line = lines[end]
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(rf"^#{{1,{level}}} ", line):
            return "".join(lines[start:end])
    return "".join(lines[start:])


def blocks(text: str) -> list[tuple[str, str]]:
    """The fenced code blocks of ``text``: (language, body)."""
    return [(lang, body) for lang, body in FENCE.findall(text)]


def shown_outputs(text: str) -> list[tuple[str, str]]:
    """(python block, the ``text`` block right after it): a block followed, with nothing but blank lines between,
    by a ``text`` block shows what it prints."""
    pairs = []
    found = list(FENCE.finditer(text))
    for first, second in zip(found, found[1:], strict=False):
        if first.group(1) == "python" and second.group(1) == "text" and not text[first.end():second.start()].strip():
            pairs.append((first.group(2), second.group(2)))
    return pairs
