"""Fill the holes of the judgments with an LLM relevance assessor, and say how far to trust it.

A dataset judges a few documents per query; everything else a retriever returns is unjudged and
counts as non-relevant, so a retriever that surfaces relevant but unlabelled passages scores lower.
As TREC's recent RAG evaluations do, ``judge_holes`` pools the top ``depth`` documents of one or
more runs, and asks a model to grade every unjudged one on a 0-3 scale:

    0 unrelated, 1 related but does not answer, 2 partly answers, 3 answers.

The prompt is our own (French or English). Human judgments are never changed. With ``calibrate``
= N, the model is also asked about N human-judged documents per query (drawn with a seeded random
generator), and ``CalibrationAgreement`` gives Cohen's kappa (binary and linearly weighted) and the confusion
matrix between the humans and the model.

The client, concurrency, retries, token accounting and resumable progress file are ``llm.client``'s,
shared with ``generate-queries``. Outputs are written only when every asked document got a grade
(unless ``allow_failures``), never over existing files unless ``force``; the progress file is then
removed, as ``generate-queries`` does.

Pooling follows the ranking rule (score descending, doc id descending; see ``io.writers.ranked``);
documents are graded in pool order: by rank, then run order. A negative qrels value (trec_eval's
"in the pool, not judged") is a hole too. A pooled document absent from the corpus cannot be shown
to the model: it stays a hole and is counted; so does one whose text is empty (or only spaces),
which the model could only guess about.
"""

from __future__ import annotations

import os
import random
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trec_rag_eval.arguments import check_count
from trec_rag_eval.errors import MissingDependencyError, UsageError
from trec_rag_eval.io.atomic import all_or_none, check_output_paths
from trec_rag_eval.io.judgments import LLMJudgment, sidecar_path_for, write_llm_judgments
from trec_rag_eval.io.output_checks import files_read
from trec_rag_eval.llm.client import (
    ChatCaller,
    LLMSettings,
    MalformedReply,
    Task,
    progress_path_for,
    redacted_excerpt,
    run_tasks,
)
from trec_rag_eval.notes import Note, note, warning
from trec_rag_eval.renderer_registry import show, shown_by
from trec_rag_eval.tables import Qrels, Run, column_list, qrels_columns

GRADES = (0, 1, 2, 3)

PROMPTS = {
    "en": (
        "You judge whether a passage answers a search query.\n\n"
        "Query: {query}\n\nPassage:\n{passage}\n\n"
        "Grade the passage on this scale:\n"
        "0 = unrelated to the query\n"
        "1 = related to the query, but does not answer it\n"
        "2 = partly answers the query\n"
        "3 = answers the query\n\n"
        "Reply with the grade only: one digit, 0, 1, 2 or 3."
    ),
    "fr": (
        "Tu évalues si un passage répond à une requête de recherche.\n\n"
        "Requête : {query}\n\nPassage :\n{passage}\n\n"
        "Note le passage selon cette échelle :\n"
        "0 = sans rapport avec la requête\n"
        "1 = en rapport avec la requête, mais n'y répond pas\n"
        "2 = répond en partie à la requête\n"
        "3 = répond à la requête\n\n"
        "Réponds uniquement par la note : un chiffre, 0, 1, 2 ou 3."
    ),
}


def build_judge_prompt(query: str, passage: str, language: str = "fr") -> str:
    """Our grading prompt, in French or English, stating the 0-3 scale."""
    return PROMPTS[language].format(query=query, passage=passage)


_INTEGER = re.compile(r"-?\d+(?:[.,]\d+)?")
_NOT_THE_GRADE = re.compile(
    r"<think>.*?(?:</think>|$)"  # a reasoning model's trace (vLLM, Ollama), closed or cut off
    r"|\b0\s*(?:-|–|—|to|à|a)\s*3\b"  # the scale quoted back: "0-3", "0 to 3", "de 0 à 3"
    r"|(?<=\d)\s*(?:/|out of|sur)\s*3\b",  # the scale's top after the grade: "1/3", "2 out of 3", "2 sur 3"
    re.DOTALL | re.IGNORECASE)


def parse_grade(content: str) -> int:
    """The grade of a reply: its one number, which must be 0, 1, 2 or 3 (``"2"``, ``"Grade: 2"``,
    ``"**3**"``, ``"Note : 1/3"``), once a reasoning trace (``<think>...</think>``) and the scale
    quoted back (``"On the 0-3 scale: 2"``, ``"2 out of 3"``) are set aside. A reply giving two
    different numbers (``"Grade 3, or maybe 1"``) is ambiguous: like a reply without a grade, it
    raises ``MalformedReply`` (the document gets no grade this run, and a rerun asks again)."""
    numbers = list(dict.fromkeys(match.group(0) for match in _INTEGER.finditer(_NOT_THE_GRADE.sub(" ", content))))
    shown = redacted_excerpt(content, 80)
    if not numbers:
        raise MalformedReply(f"no grade in {shown!r}")
    if len(numbers) > 1:
        raise MalformedReply(f"ambiguous grade: {' and '.join(numbers[:3])} in {shown!r}")
    text = numbers[0]
    if text not in ("0", "1", "2", "3"):
        raise MalformedReply(f"{text} is not a grade of the 0-3 scale in {shown!r}")
    return int(text)


def grade_problem(grade: Any) -> str | None:
    """Why a grade read back from a progress file is not one, or None."""
    if type(grade) is int and grade in GRADES:
        return None
    return f"{grade!r} is not a grade of the 0-3 scale"


@dataclass(frozen=True)
class JudgeSettings(LLMSettings):
    """What to ask (``language``, ``depth``, ``calibrate`` human-judged documents per query drawn with
    ``seed``, passages cut at ``max_chars`` characters so a long document cannot overflow the
    model's context) and how hard to try (``LLMSettings``)."""

    language: str = "fr"
    depth: int = 10
    calibrate: int = 0
    seed: int = 42
    max_chars: int = 8000

    def check(self) -> None:
        if self.language not in PROMPTS:
            raise UsageError(f"unsupported language {self.language!r}: expected one of {', '.join(PROMPTS)}")
        check_count("the depth", self.depth)
        check_count("max_chars", self.max_chars)
        check_count("calibrate", self.calibrate, least=0, parameter="calibrate")
        super().check()

    @property
    def identity(self) -> dict[str, Any]:
        """What a progress file must have been made with to be resumed (a grade depends on these)."""
        return {"model": self.model, "language": self.language, "max_chars": self.max_chars}


@shown_by("trec_rag_eval.render.results:register_calibration_agreement")
@dataclass(frozen=True)
class CalibrationAgreement:
    """Human grades against the model's on the calibration documents.

    ``kappa_binary``: Cohen's kappa on relevant (grade >= ``relevance_level``) or not;
    ``kappa_graded``: Cohen's kappa with linear weights over the grades; None when undefined (fewer
    than two documents, or both raters giving a single label). ``confusion[i][j]``: documents the
    humans graded ``labels[i]`` and the model ``labels[j]``.
    """

    pairs: int
    relevance_level: int
    labels: tuple[int, ...]
    confusion: tuple[tuple[int, ...], ...]
    kappa_binary: float | None
    kappa_graded: float | None
    raw_agreement: float
    binary_agreement: float

    def render(self) -> str:
        """What ``judge --calibrate`` prints: the kappas and the confusion matrix (``render.calibration``)."""
        return str(show(self, "text"))


def agreement(human: Sequence[int], model: Sequence[int], relevance_level: int = 1) -> CalibrationAgreement:
    """Cohen's kappa (scikit-learn's ``cohen_kappa_score``) and the confusion matrix."""
    try:
        from sklearn.metrics import cohen_kappa_score, confusion_matrix
    except ImportError:
        raise MissingDependencyError("scikit-learn", "llm") from None
    if len(human) != len(model):
        raise ValueError("human and model grades differ in length")
    labels = tuple(sorted(set(GRADES) | set(human) | set(model)))
    if human:
        matrix = confusion_matrix(list(human), list(model), labels=list(labels)).tolist()
    else:
        matrix = [[0] * len(labels) for _ in labels]
    binary_h = [int(g >= relevance_level) for g in human]
    binary_m = [int(g >= relevance_level) for g in model]

    def kappa(a: list[int], b: list[int], weights: str | None) -> float | None:
        # kappa is 0/0 when both raters use one and the same label: undefined, not a number to print
        if len(a) < 2 or len(set(a) | set(b)) < 2:
            return None
        value = float(cohen_kappa_score(a, b, weights=weights, labels=list(labels) if weights else None))
        return None if value != value else value

    same = sum(h == m for h, m in zip(human, model, strict=True))
    same_binary = sum(h == m for h, m in zip(binary_h, binary_m, strict=True))
    return CalibrationAgreement(
        pairs=len(human),
        relevance_level=relevance_level,
        labels=labels,
        confusion=tuple(tuple(int(c) for c in row) for row in matrix),
        kappa_binary=kappa(binary_h, binary_m, None),
        kappa_graded=kappa(list(human), list(model), "linear"),
        raw_agreement=same / len(human) if human else 0.0,
        binary_agreement=same_binary / len(human) if human else 0.0,
    )


@dataclass
class JudgeReport:
    """What a judging run did; ``qrels`` and ``judgments`` are what was (or would be) written."""

    output: Path
    sidecar: Path
    progress_path: Path
    queries: int = 0
    pooled: int = 0                       # distinct (query, document) pairs in the pooled top depth
    holes: int = 0                        # of which unjudged by humans
    missing_text: list[tuple[str, str]] = field(default_factory=list)   # holes absent from the corpus
    empty_text: list[tuple[str, str]] = field(default_factory=list)     # holes whose text is empty or blank
    skipped_queries: list[str] = field(default_factory=list)            # in a run, no query text
    truncated: list[str] = field(default_factory=list)                  # documents cut at max_chars
    asked: int = 0                        # holes + calibration documents sent to the model
    resumed: int = 0
    graded_now: int = 0
    failures: list[tuple[str, str, str]] = field(default_factory=list)  # (query_id, doc_id, reason)
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    judgments: list[LLMJudgment] = field(default_factory=list)
    qrels: Qrels | None = None
    agreement: CalibrationAgreement | None = None
    written: bool = False
    # per run pooled: (its name, Judged@depth with the human judgments, with the holes filled); set by api.judge
    coverage: list[tuple[str, float, float]] = field(default_factory=list)
    # what the user should know: the holes left without a text, the passages cut, the queries not judged
    notes: list[Note] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def grade_counts(self, kind: str = "hole") -> dict[int, int]:
        counts = dict.fromkeys(GRADES, 0)
        for judgment in self.judgments:
            if judgment.kind == kind:
                counts[judgment.grade] = counts.get(judgment.grade, 0) + 1
        return counts


def pool(runs: Sequence[Run], depth: int) -> dict[str, list[str]]:
    """query_id -> distinct doc ids of the top ``depth`` of every run, by rank then run order."""
    from trec_rag_eval.io.writers import ranked

    by_rank: dict[str, list[tuple[int, int, str]]] = {}
    for position, run in enumerate(runs):
        frame = ranked(run)
        for query_id, doc_id, rank in frame.select("query_id", "doc_id", "rank").iter_rows():
            if rank <= depth:
                by_rank.setdefault(query_id, []).append((rank, position, doc_id))
    return {query_id: list(dict.fromkeys(doc for _, _, doc in sorted(rows)))
            for query_id, rows in by_rank.items()}


def _key(query_id: str, doc_id: str) -> str:
    return f"{query_id}\t{doc_id}"


def judge_holes(
    qrels: Qrels,
    runs: Sequence[Run],
    corpus: dict[str, str],
    output: str | os.PathLike[str],
    settings: JudgeSettings,
    client: Any,
    *,
    relevance_level: int = 1,
    force: bool = False,
    allow_failures: bool = False,
    progress_path: str | os.PathLike[str] | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_start: Callable[[int], None] | None = None,
    on_task: Callable[[str, str | None], None] | None = None,
    previous: Sequence[LLMJudgment] = (),
    corpus_name: str = "the corpus",
) -> JudgeReport:
    """Grade the unjudged pooled documents (and ``settings.calibrate`` judged ones per query); write
    the qrels with the holes filled to ``output`` and the LLM judgments to its ``.llm.tsv`` sidecar.
    An ``output`` ending in ``.json`` is a JSON dataset (with the query texts, keys in the prompt's
    language: ``requête``/``pertinents`` or ``query``/``relevant``); anything else TREC qrels.

    ``qrels`` needs query texts (``topics``); ``corpus`` maps doc_id -> text. ``relevance_level``
    is the binary threshold of the agreement report. ``on_start(number of documents to grade)`` is
    called once the pool is known; ``on_task(key, error_or_None)`` as each grade ends.

    ``previous``: the LLM judgments of an earlier run whose output ``qrels`` is (its sidecar). Its
    filled holes are judged, so they are not asked again, but they are not human judgments: they are
    never drawn for calibration. They are carried into the new sidecar, so provenance is kept.

    ``report.notes`` says what could not be judged as asked (``corpus_name``: how they name the corpus).
    """
    settings.check()
    output = Path(output)
    sidecar = sidecar_path_for(output)
    progress = Path(progress_path) if progress_path is not None else progress_path_for(output)
    # before any call: the outputs and the progress file are distinct, and none is a file read
    inputs = [name for source in (qrels.source, *(run.source for run in runs))
              if isinstance(source, str) and source and os.path.exists(source) for name in files_read(source)]
    check_output_paths([output, sidecar], force, inputs, [progress])
    topics = qrels.topics or {}
    if not topics:
        raise UsageError(f"{qrels.source}: the judgments have no query texts to show the model "
                         "(give a JSON dataset, or TREC qrels with topics=...)", {"topics=...": "topics"})
    report = JudgeReport(output=output, sidecar=sidecar, progress_path=progress)

    human: dict[tuple[str, str], int] = {}     # every judgment of the qrels, earlier LLM holes included
    judged_by_query: dict[str, list[str]] = {}  # the humans' judged documents with a text, per query
    earlier_holes = {(j.query_id, j.doc_id) for j in previous if j.kind == "hole"}
    for q, d, r in zip(*(column_list(qrels, c) for c in ("query_id", "doc_id", "relevance")), strict=True):
        human[(q, d)] = int(r)
        if r >= 0 and corpus.get(d, "").strip() and (q, d) not in earlier_holes:
            judged_by_query.setdefault(q, []).append(d)
    pooled = pool(runs, settings.depth)
    report.skipped_queries = sorted(q for q in pooled if q not in topics)
    rng = random.Random(settings.seed)
    tasks: list[Task] = []
    for query_id in topics:
        docs = pooled.get(query_id, [])
        report.queries += 1
        report.pooled += len(docs)
        for doc_id in docs:
            if human.get((query_id, doc_id), -1) >= 0:
                continue
            report.holes += 1
            if doc_id not in corpus:
                report.missing_text.append((query_id, doc_id))
                continue
            if not corpus[doc_id].strip():  # nothing to show: a grade would be the model's guess
                report.empty_text.append((query_id, doc_id))
                continue
            tasks.append(_task(query_id, doc_id, "hole", topics[query_id], corpus[doc_id], settings))
        if settings.calibrate:
            judged = sorted(judged_by_query.get(query_id, []))
            for doc_id in rng.sample(judged, min(settings.calibrate, len(judged))):
                tasks.append(_task(query_id, doc_id, "calibration", topics[query_id], corpus[doc_id], settings))
    report.asked = len(tasks)
    report.truncated = sorted({task.fields["doc_id"] for task in tasks
                               if len(corpus[task.fields["doc_id"]]) > settings.max_chars})
    report.notes = unjudged_notes(report, corpus_name, settings.max_chars)
    if on_start:
        on_start(len(tasks))

    outcome = run_tasks(tasks, ChatCaller(client, settings, sleep=sleep), parse_grade, progress,
                        settings.identity, lambda record: _key(record["query_id"], record["doc_id"]), "grade",
                        on_task, check=grade_problem)
    report.resumed, report.graded_now = outcome.resumed, outcome.completed
    report.requests, report.retries = outcome.requests, outcome.retries
    report.prompt_tokens, report.completion_tokens = outcome.prompt_tokens, outcome.completion_tokens
    report.failures = [(*key.split("\t", 1), reason) for key, reason in outcome.failures]  # type: ignore[misc]

    for task in tasks:
        record = outcome.done.get(task.key)
        if record is not None:
            report.judgments.append(LLMJudgment(task.fields["query_id"], task.fields["doc_id"], int(record["grade"]),
                                                task.fields["kind"], settings.model))
    calibration = [j for j in report.judgments if j.kind == "calibration"]
    now = {(j.query_id, j.doc_id) for j in report.judgments}
    report.judgments = [j for j in previous if (j.query_id, j.doc_id) not in now] + report.judgments
    if calibration:
        report.agreement = agreement([human[(j.query_id, j.doc_id)] for j in calibration],
                                     [j.grade for j in calibration], relevance_level)
    rows = [(q, it, d, int(r)) for q, it, d, r in
            zip(*(column_list(qrels, c) for c in ("query_id", "iteration", "doc_id", "relevance")), strict=True)]
    holes = {(j.query_id, j.doc_id): j.grade for j in report.judgments
             if j.kind == "hole" and (j.query_id, j.doc_id) not in earlier_holes}
    # a pooled document the qrels list with a negative value (unjudged) takes the model's grade in place
    rows = [(q, it, d, holes.pop((q, d), r)) if r < 0 else (q, it, d, r) for q, it, d, r in rows]
    rows += [(q, "0", d, grade) for (q, d), grade in holes.items()]
    report.qrels = Qrels(qrels_columns(rows), str(output), qrels.topics, checked=True)
    if report.failures and not allow_failures:
        return report
    from trec_rag_eval.io.writers import write_dataset_json, write_trec_qrels

    with all_or_none(force=force):  # the judgments and their sidecar: both or neither
        if output.suffix.lower() == ".json":   # a JSON dataset keeps the query texts
            write_dataset_json(report.qrels, output, keys=settings.language, force=force)
        else:
            write_trec_qrels(report.qrels, output, force=force)
        write_llm_judgments(report.judgments, sidecar, force=force)
    report.written = True
    # its work is in the outputs now; a later run with another model or language starts clean
    progress.unlink(missing_ok=True)
    return report


def unjudged_notes(report: JudgeReport, corpus_name: str, max_chars: int) -> list[Note]:
    """What the pool left out or cut: holes absent from the corpus or with an empty text (they stay
    holes), passages cut at ``max_chars``, run queries without a query text; the first five of each
    named."""
    out = []
    if report.missing_text:
        shown = ", ".join(f"{q}/{d}" for q, d in report.missing_text[:5])
        out.append(warning(f"{len(report.missing_text)} unjudged documents are not in {corpus_name} and stay holes: "
                           f"{shown}"))
    if report.empty_text:
        shown = ", ".join(f"{q}/{d}" for q, d in report.empty_text[:5])
        out.append(warning(f"{len(report.empty_text)} unjudged documents have an empty text in {corpus_name}: not "
                           f"shown to the model, they stay holes: {shown}"))
    if report.truncated:
        out.append(note(f"{len(report.truncated)} documents were cut at {max_chars} characters for the model "
                        f"(max_chars): {', '.join(report.truncated[:5])}", parameters={"max_chars": "max_chars"}))
    if report.skipped_queries:
        out.append(warning(f"{len(report.skipped_queries)} run queries have no query text and were not judged: "
                           f"{', '.join(report.skipped_queries[:5])}"))
    return out


def _task(query_id: str, doc_id: str, kind: str, query: str, passage: str, settings: JudgeSettings) -> Task:
    if len(passage) > settings.max_chars:
        passage = passage[: settings.max_chars] + " [...]"
    return Task(_key(query_id, doc_id), build_judge_prompt(query, passage, settings.language),
                {"query_id": query_id, "doc_id": doc_id, "kind": kind})
