"""Generate test queries from documents with an LLM, as the seed lesson does, resumably.

For each document, one chat-completions request asks for ``n`` questions the document answers; the
document becomes the relevant one for each of them. The client, concurrency, retries, token
accounting and resumable progress file are ``engine.llm``'s, shared with ``judge``. The dataset
file is written atomically at the end, only when every document succeeded, and never over an
existing file unless ``force`` is set.

Decided here:
- Questions are deduplicated on their normalised text (case, accents, punctuation, spaces); the
  first in corpus order is kept.
- Each question stores its lexical overlap with its document: the share of its content words
  (``engine.tokens.Analyzer``: folded, stop words removed) that occur in the document. The seed
  lesson warns that generated questions reuse the document's words and so inflate scores.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trec_rag_eval.engine.llm import (
    ChatCaller,
    LLMFailure,
    LLMSettings,
    MalformedReply,
    Task,
    make_client,
    progress_path_for,
    retry_delay,
    run_tasks,
)
from trec_rag_eval.engine.tokens import Analyzer, fold_accents
from trec_rag_eval.errors import UsageError
from trec_rag_eval.io.atomic import refuse_overwrite, write_atomic

__all__ = ["GenerationFailure", "GenerationReport", "GenerationSettings", "build_dataset", "build_prompt",
           "generate_dataset", "lexical_overlap", "make_client", "normalise_question", "overlap_warning",
           "parse_questions", "progress_path_for", "retry_delay"]

PROMPTS = {
    # The seed lesson's prompt, word for word.
    "fr": (
        "Voici un document :\n\n{document}\n\n"
        "Génère {n} questions auxquelles ce document répond. "
        "Retourne uniquement les questions, une par ligne."
    ),
    "en": (
        "Here is a document:\n\n{document}\n\n"
        "Write {n} questions that this document answers. "
        "Return only the questions, one per line."
    ),
}

GenerationFailure = LLMFailure
"""One document could not get its questions (the shared ``engine.llm`` failure)."""


@dataclass(frozen=True)
class GenerationSettings(LLMSettings):
    """What to ask for (``n`` questions, in ``language``) and how hard to try (``LLMSettings``)."""

    n: int = 3
    language: str = "fr"

    def check(self) -> None:
        if self.n < 1:
            raise UsageError(f"-n must be at least 1, got {self.n}")
        if self.language not in PROMPTS:
            raise UsageError(f"unsupported language {self.language!r}: expected one of {', '.join(PROMPTS)}")
        super().check()

    @property
    def identity(self) -> dict[str, Any]:
        """What a progress file must have been made with to be resumed."""
        return {"model": self.model, "n": self.n, "language": self.language}


@dataclass
class GenerationReport:
    """What a generation run did; ``dataset`` is what was (or would be) written."""

    output: Path
    progress_path: Path
    dataset: list[dict[str, Any]] = field(default_factory=list)
    written: bool = False
    documents: int = 0
    resumed_documents: int = 0          # done by an earlier run, read back from the progress file
    generated_documents: int = 0        # done by this run
    failures: list[tuple[str, str]] = field(default_factory=list)   # (doc_id, reason)
    duplicates_removed: int = 0
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0              # this run only
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def mean_overlap(self) -> float | None:
        values = [item["lexical_overlap"] for item in self.dataset if item.get("lexical_overlap") is not None]
        return sum(values) / len(values) if values else None


def build_prompt(document: str, n: int, language: str = "fr") -> str:
    """The seed lesson's prompt (French) or its English translation."""
    return PROMPTS[language].format(document=document, n=n)


_LIST_MARKER = re.compile(r"^\s*(?:[-*•·]+|\(?\d{1,3}[.)\]:-]|q\d{1,3}[.):-])\s*", re.IGNORECASE)


def parse_questions(content: str, n: int) -> list[str]:
    """Questions from a reply: one per non-empty line, list markers (``1.``, ``-``) stripped, at most n."""
    questions = []
    for line in content.splitlines():
        text = _LIST_MARKER.sub("", line).strip().strip('"«» ').strip()
        if text:
            questions.append(text)
    return questions[:n]


def _question_parser(n: int) -> Callable[[str], list[str]]:
    def parse(content: str) -> list[str]:
        questions = parse_questions(content, n)
        if not questions:
            raise MalformedReply("no question found in the message")
        return questions

    return parse


def normalise_question(text: str) -> str:
    """The deduplication key: lowercase, accents folded, punctuation dropped, spaces collapsed."""
    return " ".join(re.findall(r"[^\W_]+", fold_accents(text.lower())))


def lexical_overlap(question: str, document: str, language: str = "fr") -> float | None:
    """Share of the question's distinct content words found in the document; None when it has none."""
    analyze = Analyzer(language)
    words = set(analyze(question))
    if not words:
        return None
    return len(words & set(analyze(document))) / len(words)


# --- resumable generation -------------------------------------------------------------------------


def generate_dataset(
    documents: Sequence[dict[str, str]],
    output: str | os.PathLike[str],
    settings: GenerationSettings,
    client: Any,
    force: bool = False,
    progress_path: str | os.PathLike[str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_document: Callable[[str, str | None], None] | None = None,
) -> GenerationReport:
    """Generate ``settings.n`` questions per document and write the dataset to ``output``.

    ``on_document(doc_id, error_or_None)`` is called in the calling thread as each document ends.
    """
    settings.check()
    output = Path(output)
    progress = Path(progress_path) if progress_path is not None else progress_path_for(output)
    refuse_overwrite(output, force)
    report = GenerationReport(output=output, progress_path=progress, documents=len(documents))
    texts = {d["id"]: d["text"] for d in documents}
    tasks = [Task(d["id"], build_prompt(d["text"], settings.n, settings.language), {"doc_id": d["id"]})
             for d in documents]
    outcome = run_tasks(tasks, ChatCaller(client, settings, sleep=sleep), _question_parser(settings.n), progress,
                        settings.identity, lambda record: str(record["doc_id"]), "questions", on_document)
    done = {key: list(record["questions"]) for key, record in outcome.done.items()}
    report.resumed_documents = outcome.resumed
    report.generated_documents = outcome.completed
    report.failures = outcome.failures
    report.requests, report.retries = outcome.requests, outcome.retries
    report.prompt_tokens, report.completion_tokens = outcome.prompt_tokens, outcome.completion_tokens

    report.dataset, report.duplicates_removed = build_dataset(
        [(d["id"], done[d["id"]]) for d in documents if d["id"] in done], texts, settings.language
    )
    if report.failures:
        return report
    write_atomic(output, json.dumps(report.dataset, ensure_ascii=False, indent=2) + "\n", force=force)
    report.written = True
    return report


def build_dataset(
    generated: Iterable[tuple[str, list[str]]], texts: dict[str, str], language: str
) -> tuple[list[dict[str, Any]], int]:
    """Seed-shaped dataset items, deduplicated; returns (items, number of duplicates removed).

    Ids are ``{doc_id}-q{position in the reply}``, stable across reruns.
    """
    query_key, relevant_key = ("requête", "pertinents") if language == "fr" else ("query", "relevant")
    seen: set[str] = set()
    items: list[dict[str, Any]] = []
    duplicates = 0
    for doc_id, questions in generated:
        for position, question in enumerate(questions, start=1):
            key = normalise_question(question)
            if not key or key in seen:
                duplicates += 1
                continue
            seen.add(key)
            overlap = lexical_overlap(question, texts[doc_id], language)
            items.append({
                "id": f"{doc_id}-q{position}",
                query_key: question,
                relevant_key: [doc_id],
                "lexical_overlap": None if overlap is None else round(overlap, 4),
            })
    return items, duplicates


def overlap_warning(mean_overlap: float) -> str:
    """The seed lesson's warning, with this dataset's figure."""
    return (
        f"Warning: generated questions reuse on average {mean_overlap:.0%} of their content words from "
        "their source document. Such questions are easier than real user queries and inflate scores: "
        "use them to compare configurations with each other, never to claim an absolute quality level."
    )
