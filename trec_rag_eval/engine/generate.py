"""Generate test queries from documents with an LLM, as the seed lesson does, resumably.

For each document, one chat-completions request asks for ``n`` questions the document answers; the
document becomes the relevant one for each of them. Any OpenAI-compatible endpoint works (vLLM,
Ollama, llama.cpp, hosted APIs) through the ``openai`` client.

Robustness, decided here once:
- At most ``concurrency`` requests are in flight (a thread pool).
- 429 and 5xx replies, timeouts and connection errors are retried up to ``max_retries`` times,
  waiting ``Retry-After`` when the server sends it, else ``backoff * 2**attempt`` seconds (capped).
  Other 4xx replies and malformed replies fail the document at once. The client's own retries
  are switched off so that these are the only ones.
- Each finished document is appended as one JSON line to a progress file beside the output, so a
  crash or Ctrl-C loses nothing; a rerun skips the documents already there. The dataset file is
  written atomically at the end, only when every document succeeded, and never over an existing
  file unless ``force`` is set.
- Questions are deduplicated on their normalised text (case, accents, punctuation, spaces); the
  first in corpus order is kept.
- Each question stores its lexical overlap with its document: the share of its content words
  (``engine.tokens.Analyzer``: folded, stop words removed) that occur in the document. The seed
  lesson warns that generated questions reuse the document's words and so inflate scores.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trec_rag_eval.engine.tokens import Analyzer, fold_accents
from trec_rag_eval.errors import InputFormatError, MissingDependencyError, TrecRagEvalError, UsageError
from trec_rag_eval.io.atomic import refuse_overwrite, write_atomic
from trec_rag_eval.io.text import read_text

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

MAX_BACKOFF_SECONDS = 60.0


class GenerationFailure(TrecRagEvalError):
    """One document could not get its questions (after retries when the error was retryable).

    ``unreachable``: the server never answered at all (connection refused or lost), which says
    nothing about the document and everything about the endpoint."""

    def __init__(self, message: str, unreachable: bool = False) -> None:
        super().__init__(message)
        self.unreachable = unreachable


@dataclass(frozen=True)
class GenerationSettings:
    """What to ask for and how hard to try."""

    model: str
    n: int = 3
    language: str = "fr"
    concurrency: int = 4
    timeout: float = 60.0
    max_retries: int = 5
    backoff: float = 1.0
    temperature: float | None = None

    def check(self) -> None:
        if self.n < 1:
            raise UsageError(f"-n must be at least 1, got {self.n}")
        if self.language not in PROMPTS:
            raise UsageError(f"unsupported language {self.language!r}: expected one of {', '.join(PROMPTS)}")
        if self.concurrency < 1:
            raise UsageError(f"the concurrency must be at least 1, got {self.concurrency}")
        if self.timeout <= 0:
            raise UsageError(f"the timeout must be positive, got {self.timeout}")
        if self.max_retries < 0:
            raise UsageError(f"max retries cannot be negative, got {self.max_retries}")


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


def retry_delay(headers: Any, attempt: int, backoff: float) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): ``Retry-After`` if given, else exponential.

    ``Retry-After`` may be seconds or an HTTP date; ``retry-after-ms`` (sent by OpenAI) wins.
    """
    seconds: float | None = None
    if headers is not None:
        if headers.get("retry-after-ms"):
            seconds = _number(headers["retry-after-ms"])
            seconds = None if seconds is None else seconds / 1000
        if seconds is None and headers.get("retry-after"):
            value = headers["retry-after"]
            seconds = _number(value)
            if seconds is None:
                try:
                    seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
                except (TypeError, ValueError):
                    seconds = None
    if seconds is None:
        seconds = backoff * 2**attempt
    return min(max(seconds, 0.0), MAX_BACKOFF_SECONDS)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def make_client(base_url: str | None, api_key: str | None = None) -> Any:
    """An ``openai.OpenAI`` client with its own retries off; key from OPENAI_API_KEY.

    A local server (any ``base_url``) may need no key: a placeholder is sent then.
    """
    try:
        import openai
    except ImportError:
        raise MissingDependencyError("openai", "llm") from None
    key = api_key or os.environ.get("OPENAI_API_KEY")
    if not key:
        if base_url is None:
            raise UsageError("set OPENAI_API_KEY, or give --base-url for a local server that needs no key")
        key = "no-key"
    return openai.OpenAI(base_url=base_url, api_key=key, max_retries=0)


class QueryGenerator:
    """Asks the model for each document's questions, with retries; thread-safe."""

    def __init__(
        self,
        client: Any,
        settings: GenerationSettings,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        settings.check()
        self.client = client
        self.settings = settings
        self.sleep = sleep
        self._lock = threading.Lock()
        self.requests = 0
        self.retries = 0
        self.delays: list[float] = []

    def questions_for(self, document: str) -> tuple[list[str], int, int]:
        """(questions, prompt_tokens, completion_tokens) for one document; raises GenerationFailure."""
        import openai

        settings = self.settings
        messages = [{"role": "user", "content": build_prompt(document, settings.n, settings.language)}]
        options: dict[str, Any] = {"timeout": settings.timeout}
        if settings.temperature is not None:
            options["temperature"] = settings.temperature
        for attempt in range(settings.max_retries + 1):
            with self._lock:
                self.requests += 1
            headers = None
            try:
                response = self.client.chat.completions.create(
                    model=settings.model, messages=messages, **options
                )
            except openai.APIStatusError as err:
                if err.status_code != 429 and err.status_code < 500:
                    raise GenerationFailure(f"HTTP {err.status_code}: {_short(err.message)}") from None
                reason = f"HTTP {err.status_code}"
                headers = err.response.headers
            except openai.APITimeoutError:
                reason = f"no reply within {settings.timeout:g} s"
            except openai.APIConnectionError as err:
                reason = f"connection failed ({_short(str(err))})"
            except (openai.APIResponseValidationError, ValueError) as err:
                raise GenerationFailure(f"malformed reply ({_short(str(err))})") from None
            else:
                return _read_reply(response, settings.n)
            if attempt == settings.max_retries:
                unreachable = reason.startswith("connection failed")
                raise GenerationFailure(f"{reason}, gave up after {attempt + 1} attempts", unreachable)
            delay = retry_delay(headers, attempt, settings.backoff)
            with self._lock:
                self.retries += 1
                self.delays.append(delay)
            self.sleep(delay)
        raise AssertionError("unreachable")


def _read_reply(response: Any, n: int) -> tuple[list[str], int, int]:
    try:
        content = response.choices[0].message.content
    except (AttributeError, IndexError, KeyError, TypeError):
        reason = f"malformed reply: no choices[0].message.content in {_short(repr(response))}"
        raise GenerationFailure(reason) from None
    if not isinstance(content, str) or not content.strip():
        raise GenerationFailure("malformed reply: empty message content")
    questions = parse_questions(content, n)
    if not questions:
        raise GenerationFailure("malformed reply: no question found in the message")
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    return questions, prompt_tokens, completion_tokens


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- resumable generation -------------------------------------------------------------------------


def progress_path_for(output: str | os.PathLike[str]) -> Path:
    """The sidecar progress file: ``dataset.json`` -> ``dataset.json.progress.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".progress.jsonl")


def read_progress(path: Path, settings: GenerationSettings) -> dict[str, list[str]]:
    """doc_id -> questions already generated. A torn last line (crash mid-write) is ignored."""
    done: dict[str, list[str]] = {}
    if not path.exists():
        return done
    lines = read_text(str(path)).splitlines()
    for line_no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            doc_id, questions = str(record["doc_id"]), list(record["questions"])
        except (json.JSONDecodeError, KeyError, TypeError):
            if line_no == len(lines):
                break  # torn by an interrupted write: that document is simply done again
            reason = "not a progress record; delete the file to start over"
            raise InputFormatError(str(path), line_no, reason, line) from None
        made_with = (record.get("model"), record.get("n"), record.get("language"))
        if made_with != (settings.model, settings.n, settings.language):
            raise UsageError(
                f"{path} was made with model={made_with[0]!r}, n={made_with[1]}, language={made_with[2]!r}; "
                f"use the same settings to resume, or delete it to start over"
            )
        done[doc_id] = questions
    return done


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
    done = read_progress(progress, settings)
    texts = {d["id"]: d["text"] for d in documents}
    todo = [d for d in documents if d["id"] not in done]
    report.resumed_documents = len(documents) - len(todo)
    generator = QueryGenerator(client, settings, sleep=sleep)

    if todo:
        progress.parent.mkdir(parents=True, exist_ok=True)
        pool = ThreadPoolExecutor(settings.concurrency)
        with open(progress, "a", encoding="utf-8") as sidecar, pool:
            pending: dict[Future[tuple[list[str], int, int]], str] = {
                pool.submit(generator.questions_for, d["text"]): d["id"] for d in todo
            }
            try:
                while pending:
                    finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                    for future in finished:
                        doc_id = pending.pop(future)
                        try:
                            questions, prompt_tokens, completion_tokens = future.result()
                        except GenerationFailure as err:
                            if err.unreachable and report.generated_documents == 0:
                                # nothing has worked yet: stop rather than wait out every document
                                raise GenerationFailure(
                                    f"cannot reach the endpoint: {err}; nothing was generated "
                                    "(check --base-url; a rerun resumes where it stopped)") from None
                            report.failures.append((doc_id, str(err)))
                            if on_document:
                                on_document(doc_id, str(err))
                            continue
                        report.prompt_tokens += prompt_tokens
                        report.completion_tokens += completion_tokens
                        report.generated_documents += 1
                        done[doc_id] = questions
                        record = {"doc_id": doc_id, "questions": questions, "model": settings.model,
                                  "n": settings.n, "language": settings.language,
                                  "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
                        sidecar.write(json.dumps(record, ensure_ascii=False) + "\n")
                        sidecar.flush()
                        if on_document:
                            on_document(doc_id, None)
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
    report.requests = generator.requests
    report.retries = generator.retries

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
