"""Generate test queries from documents with an LLM, as the French RAG tutorial this tool follows does, resumably.

For each document, one chat-completions request asks for ``n`` questions the document answers; the
document becomes the relevant one for each of them. The client, concurrency, retries, token
accounting and resumable progress file are ``llm.client``'s, shared with ``llm.judging``. The dataset
file is written atomically at the end, only when every document succeeded, and never over an
existing file unless ``force`` is set.

Decided here:
- Questions are deduplicated on their normalised text (case, accents, punctuation, spaces); the
  first in corpus order is kept.
- Each question stores its lexical overlap with its document: the share of its content words
  (``engine.tokens.Analyzer``: folded, stop words removed) that occur in the document. The French
  RAG tutorial this tool follows warns that generated questions reuse the document's words and so inflate scores.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trec_rag_eval.arguments import check_count
from trec_rag_eval.engine.tokens import Analyzer, fold_accents
from trec_rag_eval.errors import TrecRagEvalWarning, UsageError, warn
from trec_rag_eval.io.atomic import check_output_paths, write_atomic
from trec_rag_eval.llm.client import (
    ChatCaller,
    LLMFailure,
    LLMSettings,
    MalformedReply,
    Task,
    make_client,
    progress_path_for,
    redacted_excerpt,
    retry_delay,
    run_tasks,
)
from trec_rag_eval.notes import Note, warning
from trec_rag_eval.progress import bar

__all__ = ["GenerationFailure", "GenerationReport", "GenerationSettings", "build_dataset", "build_prompt",
           "generate_dataset", "lexical_overlap", "make_client", "normalise_question", "overlap_warning",
           "parse_questions", "progress_path_for", "retry_delay"]

PROMPTS = {
    # The French RAG tutorial's prompt, word for word.
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
"""One document could not get its questions (the shared ``llm.client`` failure)."""


@dataclass(frozen=True)
class GenerationSettings(LLMSettings):
    """What to ask for (``n`` questions, in ``language``) and how hard to try (``LLMSettings``)."""

    n: int = 3
    language: str = "fr"

    def check(self) -> None:
        check_count("n (questions per document)", self.n, parameter="n")
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
    shortfalls: list[tuple[str, int]] = field(default_factory=list)  # (doc_id, questions kept) below n
    empty: list[str] = field(default_factory=list)  # documents with an empty text: nothing to ask about
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
    """The French RAG tutorial's prompt (French) or its English translation."""
    return PROMPTS[language].format(document=document, n=n)


# A list item's marker: "1." "1)" "(1)" "1 -" "Q1:" "Question 1 :", maybe in bold ("**1.**"), or "-" "*" "•"
_LIST_MARKER = re.compile(
    r"^\s*(?:[*_]{0,3}(?:\(?\d{1,3}\s*[.)\]:-]|(?:q|question)\s*\d{1,3}\s*[.):-]?)[*_]{0,3}|[-*•·–—]+)\s*",
    re.IGNORECASE,
)
_WRAPPERS = "\"'`«»“”„‘’*_ \t"


def parse_questions(content: str, n: int) -> list[str]:
    """The questions of a model's reply, at most ``n``, in order.

    Real replies are not one question per line: they open with an intro ("Voici trois questions :"),
    number or bullet their items, leave blank lines, quote or embolden the questions and close
    with a remark. So: when some lines carry a list marker, only those lines are questions;
    otherwise, when some lines end with a question mark, only those; otherwise every line that
    does not end with a colon (an intro). Markers, quotes and Markdown emphasis are stripped. A
    list item wrapped over lines is joined back (the next line, before any blank one, while the item
    stops mid-sentence); a list nested deeper (an answer under each question) is not
    questions. A reply in JSON (a list of strings, or an object holding one), fenced or not, gives
    its strings.
    """
    from_json = _json_questions(content)
    if from_json is not None:
        return [text for text in (_clean(item) for item in from_json) if text][:n]
    marked = _marked_items(content)
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if marked:
        candidates = marked
    else:
        asking = [line for line in lines if _clean(line).endswith("?")]
        candidates = asking or [line for line in lines if not line.rstrip(_WRAPPERS).endswith(":")]
    questions = [text for text in (_clean(line) for line in candidates) if text]
    return questions[:n]


def _marked_items(content: str) -> list[str]:
    """The items of the reply's outermost list, each joined over the lines it was wrapped on."""
    def indent(line: str) -> int:
        return len(line) - len(line.lstrip())

    lines = content.splitlines()
    marked = [i for i, line in enumerate(lines) if _LIST_MARKER.match(line) and _LIST_MARKER.sub("", line).strip()]
    if not marked:
        return []
    top = min(indent(lines[i]) for i in marked)
    items: list[str] = []
    open_item = False  # the last line was part of the current item
    for i, line in enumerate(lines):
        if not line.strip() or line.strip().startswith("```"):
            open_item = False
        elif i in marked and indent(line) <= top:
            items.append(_LIST_MARKER.sub("", line).strip())
            open_item = True
        elif i in marked:  # a nested list: an answer, a note, not a question
            open_item = False
        elif open_item and not _clean(items[-1]).endswith(("?", ".", "!", ":", "…", "？", "。", "！", "：")):
            # cut mid-sentence (a full-width mark ends a Chinese or Japanese sentence)
            items[-1] += " " + line.strip()
        else:
            open_item = False
    return items


def _json_questions(content: str) -> list[str] | None:
    """The strings of a reply in JSON (``["...", ...]`` or ``{"questions": [...]}``), else None."""
    text = content.strip()
    if text.startswith("```"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
        text = text.rsplit("```", 1)[0].strip()
    if not text.startswith(("[", "{")):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if isinstance(data, dict):
        data = next((value for value in data.values() if isinstance(value, list)), None)
    if isinstance(data, list) and data and all(isinstance(item, str) for item in data):
        return data
    return None


def _clean(text: str) -> str:
    """A question without its wrapping quotes, emphasis or spaces."""
    previous = None
    while previous != text:
        previous = text
        text = text.strip().strip(_WRAPPERS).strip()
    return text


MAX_QUESTION_CHARS = 1000
"""A question is at most this many characters: a longer line is a paragraph, not a query."""
MAX_REPLY_CHARS = 100_000
"""A reply longer than this (tens of pages, for a few questions), or than 200 characters per question
asked when that is more, is refused whole: a runaway model or a server sending something else, never
questions to keep."""
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def question_problem(text: str) -> str | None:
    """Why ``text`` is not a question to keep, or None: a question holds words (a letter at least: a
    bare "2" or "?" is not one), no control character (a NUL is binary data, not text), and at
    most ``MAX_QUESTION_CHARS`` characters."""
    if not isinstance(text, str):
        return f"{text!r} is not text"
    control = _CONTROL.search(text)
    if control is not None:
        return f"it holds the control character {control.group(0)!r}"
    if len(text) > MAX_QUESTION_CHARS:
        return f"it is {len(text)} characters long (a question has at most {MAX_QUESTION_CHARS})"
    if not any(ch.isalpha() for ch in text):
        return f"{text!r} holds no words"
    return None


def checked_questions(content: str, n: int) -> list[str]:
    """The questions of a reply (``parse_questions``), each checked with ``question_problem``:
    ``MalformedReply`` when the reply is too long or holds a control character (binary data, not
    text), or when no question is left."""
    limit = max(MAX_REPLY_CHARS, 200 * n)
    if len(content) > limit:
        raise MalformedReply(f"the reply is {len(content)} characters long, more than the {limit} "
                             f"that {n} questions can take")
    control = _CONTROL.search(content)
    if control is not None:
        raise MalformedReply(f"the reply holds the control character {control.group(0)!r}: binary data, not text")
    candidates = parse_questions(content, n + 50)  # room for the lines set aside below
    questions = [text for text in candidates if question_problem(text) is None][:n]
    if not questions:
        reasons = "; ".join(problem for problem in map(question_problem, candidates[:3]) if problem)
        raise MalformedReply("no question found in the message" + (f" ({reasons})" if reasons else ""))
    return questions


def _questions_problem(questions: Any) -> str | None:
    """Why the questions read back from a progress file are not a list of questions, or None."""
    if not isinstance(questions, list) or not questions:
        return f"{redacted_excerpt(repr(questions), 80)} is not a list of questions"
    problems = (question_problem(question) for question in questions)
    return next((f"not a question: {problem}" for problem in problems if problem is not None), None)


def _question_parser(n: int) -> Callable[[str], list[str]]:
    def parse(content: str) -> list[str]:
        return checked_questions(content, n)

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
    show_progress: bool = True,
) -> GenerationReport:
    """Generate ``settings.n`` questions per document and write the dataset to ``output``.

    ``on_document(doc_id, error_or_None)`` is called in the calling thread as each document ends;
    ``show_progress`` draws a progress bar on stderr (a widget in a notebook). Documents left with
    fewer than ``n`` questions (a short reply, duplicates removed) are listed in
    ``GenerationReport.shortfalls`` and named in a ``TrecRagEvalWarning``. Once the dataset is
    written, the progress file is removed: it served its purpose, and a later run with other
    settings must not trip over it.
    """
    settings.check()
    output = Path(output)
    progress = Path(progress_path) if progress_path is not None else progress_path_for(output)
    check_output_paths([output], force, progress=[progress])  # before any call: the progress file is not the output
    report = GenerationReport(output=output, progress_path=progress, documents=len(documents))
    texts = {d["id"]: d["text"] for d in documents}
    # a document with an empty text answers nothing: questions "about" it would be the model's invention
    report.empty = [d["id"] for d in documents if not d["text"].strip()]
    if report.empty:
        shown = ", ".join(report.empty[:10]) + (", ..." if len(report.empty) > 10 else "")
        warn(f"{len(report.empty)} of {len(documents)} documents have an empty text and were not sent to the "
             f"model (no questions for them): {shown}", TrecRagEvalWarning)
    tasks = [Task(d["id"], build_prompt(d["text"], settings.n, settings.language), {"doc_id": d["id"]})
             for d in documents if d["text"].strip()]
    with ExitStack() as stack:
        on_task = on_document
        if show_progress:
            progress_bar = stack.enter_context(bar(len(tasks), "Generating", unit="doc"))

            def on_task(doc_id: str, error: str | None) -> None:
                progress_bar.update(1)
                if on_document:
                    on_document(doc_id, error)

        outcome = run_tasks(tasks, ChatCaller(client, settings, sleep=sleep), _question_parser(settings.n),
                            progress, settings.identity, lambda record: str(record["doc_id"]), "questions", on_task,
                            check=_questions_problem)
        if show_progress:
            progress_bar.update(outcome.resumed)
    done = {key: list(record["questions"]) for key, record in outcome.done.items()}
    report.resumed_documents = outcome.resumed
    report.generated_documents = outcome.completed
    report.failures = outcome.failures
    report.requests, report.retries = outcome.requests, outcome.retries
    report.prompt_tokens, report.completion_tokens = outcome.prompt_tokens, outcome.completion_tokens

    report.dataset, report.duplicates_removed = build_dataset(
        [(d["id"], done[d["id"]]) for d in documents if d["id"] in done], texts, settings.language
    )
    report.shortfalls = _shortfalls(report.dataset, [d["id"] for d in documents if d["id"] in done
                                                     and d["text"].strip()], settings)
    if report.shortfalls:
        warn(shortfall_warning(report, settings.n), TrecRagEvalWarning)
    if report.failures:
        return report
    write_atomic(output, json.dumps(report.dataset, ensure_ascii=False, indent=2) + "\n", force=force)
    report.written = True
    progress.unlink(missing_ok=True)
    return report


def _shortfalls(
    dataset: list[dict[str, Any]], doc_ids: list[str], settings: GenerationSettings
) -> list[tuple[str, int]]:
    relevant_key = "pertinents" if settings.language == "fr" else "relevant"
    kept = Counter(item[relevant_key][0] for item in dataset)
    return [(doc_id, kept[doc_id]) for doc_id in doc_ids if kept[doc_id] < settings.n]


def shortfall_warning(report: GenerationReport, n: int) -> str:
    """Which documents got fewer than ``n`` questions, and the total against the one asked for."""
    done = report.documents - len(report.failures)
    shown = ", ".join(f"{doc_id}: {kept}" for doc_id, kept in report.shortfalls[:10])
    more = f", ... ({len(report.shortfalls) - 10} more)" if len(report.shortfalls) > 10 else ""
    return (
        f"{len(report.shortfalls)} of {done} documents kept fewer than {n} questions ({shown}{more}): "
        f"{len(report.dataset)} instead of {n * done}, after {report.duplicates_removed} duplicates removed. "
        "The model gave fewer questions than asked, or repeated itself."
    )


def build_dataset(
    generated: Iterable[tuple[str, list[str]]], texts: dict[str, str], language: str
) -> tuple[list[dict[str, Any]], int]:
    """Dataset rows (the French RAG tutorial's keys, or English ones), deduplicated; returns (rows,
    number of duplicates removed).

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


def overlap_warning(mean_overlap: float) -> Note:
    """The warning that generated questions are easier than real ones, with this dataset's figure."""
    return warning(
        f"generated questions reuse on average {mean_overlap:.0%} of their content words from "
        "their source document. Such questions are easier than real user queries and inflate scores: "
        "use them to compare configurations with each other, never to claim an absolute quality level."
    )
