"""Where each judgment came from: human qrels, and LLM judgments kept in a sidecar beside them.

``judge`` writes two files: ``judged.qrels``, a plain TREC qrels file holding every human judgment
as it was plus the LLM's grades for the holes (so any tool reads it), and the sidecar
``judged.qrels.llm.tsv`` listing every LLM judgment with its provenance:

    query_id<TAB>doc_id<TAB>grade<TAB>kind<TAB>model

``kind`` is ``hole`` (a document no human judged: its grade is in the qrels file too) or
``calibration`` (a document a human judged, asked again to measure agreement: the qrels file keeps
the human grade). ``select_judgments`` rebuilds the three views ``evaluate --judgments`` offers:

- ``human``: the qrels without the holes the LLM filled (what the humans said);
- ``llm``: the LLM's judgments only (holes and calibration documents);
- ``both``: the qrels file as it is (human judgments, holes filled by the LLM).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.atomic import write_atomic
from trec_rag_eval.io.sources import SIDECAR_SUFFIX, is_file, read_text
from trec_rag_eval.syntax import RELEVANCE_RANGE, parse_integer, quote
from trec_rag_eval.tables import Qrels, column_list, qrels_columns

JUDGMENT_SOURCES = ("human", "llm", "both")
SIDECAR_HEADER = ("query_id", "doc_id", "grade", "kind", "model")
KINDS = ("hole", "calibration")


class LLMJudgment(NamedTuple):
    """One grade given by a model; ``kind`` is ``hole`` or ``calibration``: a line of the sidecar, a record (a
    named tuple: a dataclass's methods are compiled when its class is made)."""

    query_id: str
    doc_id: str
    grade: int
    kind: str
    model: str




def sidecar_path_for(qrels_path: str | os.PathLike[str]) -> Path:
    """``judged.qrels`` -> ``judged.qrels.llm.tsv``."""
    path = Path(qrels_path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def write_llm_judgments(judgments: Iterable[LLMJudgment], path: str | os.PathLike[str], *,
                        force: bool = False) -> int:
    """Write the sidecar (header line, then one judgment a line); return the number of judgments."""
    rows = ["\t".join(SIDECAR_HEADER) + "\n"]
    rows += [f"{j.query_id}\t{j.doc_id}\t{j.grade}\t{j.kind}\t{j.model}\n" for j in judgments]
    write_atomic(path, "".join(rows), force)
    return len(rows) - 1


def read_llm_judgments(path: str | os.PathLike[str]) -> list[LLMJudgment]:
    """Read a sidecar written by ``write_llm_judgments``; errors name the file and the line."""
    return [judgment for _, judgment in _read_sidecar(os.fspath(path))]


def _read_sidecar(name: str) -> list[tuple[int, LLMJudgment]]:
    """(line number, judgment) of every judgment of the sidecar ``name``."""
    out: list[tuple[int, LLMJudgment]] = []
    seen: dict[tuple[str, str], int] = {}
    for line_no, raw in enumerate(read_text(name).split("\n"), start=1):  # lines end at \n only
        line = raw.rstrip("\r")
        if not line.strip():
            continue
        fields = line.split("\t")
        if line_no == 1 and tuple(fields) == SIDECAR_HEADER:
            continue
        if len(fields) != len(SIDECAR_HEADER):
            columns = " ".join(SIDECAR_HEADER)
            reason = f"expected {len(SIDECAR_HEADER)} tab-separated columns ({columns}), got {len(fields)}"
            raise InputFormatError(name, line_no, reason, line)
        query_id, doc_id, grade, kind, model = fields
        try:
            value = parse_integer(grade, RELEVANCE_RANGE)  # the qrels' own syntax and range
        except ValueError:
            low, high = RELEVANCE_RANGE
            raise InputFormatError(name, line_no, f"the grade {quote(grade)} is not an integer from {low} to {high}",
                                   line) from None
        if kind not in KINDS:
            raise InputFormatError(name, line_no, f"the kind {kind!r} is not one of {', '.join(KINDS)}", line)
        if (query_id, doc_id) in seen:
            reason = f"{query_id} {doc_id} is already judged at line {seen[(query_id, doc_id)]}"
            raise InputFormatError(name, line_no, reason, line)
        seen[(query_id, doc_id)] = line_no
        out.append((line_no, LLMJudgment(query_id, doc_id, value, kind, model)))
    return out


def _check_sidecar(qrels: Qrels, sidecar: str, judgments: list[tuple[int, LLMJudgment]]) -> None:
    """Each hole of the sidecar is a line of the qrels with the LLM's grade, each calibration
    document a line of the qrels: else the qrels were edited since, or the sidecar is another's,
    and the views would drop human judgments or score grades the qrels no longer hold."""
    grades = dict(zip(zip(column_list(qrels, "query_id"), column_list(qrels, "doc_id"), strict=True),
                      column_list(qrels, "relevance"), strict=True))
    for line_no, j in judgments:
        grade = grades.get((j.query_id, j.doc_id))
        if grade is None:
            why = "the qrels do not judge it"
        elif j.kind == "hole" and int(grade) != j.grade:
            why = f"the qrels give it {int(grade)}"
        else:
            continue
        raise InputFormatError(sidecar, line_no, f"the LLM judgment of {j.query_id} {j.doc_id} ({j.kind}, grade "
                               f"{j.grade}) does not match {qrels.source}: {why}; the sidecar belongs to other "
                               "qrels or they were edited since judge wrote both (judge again, or delete the sidecar "
                               "to use the qrels as they are)")


def select_judgments(qrels: Qrels, llm: list[LLMJudgment], which: str) -> Qrels:
    """The ``human``, ``llm`` or ``both`` view of judged qrels (see the module docstring)."""
    if which not in JUDGMENT_SOURCES:
        raise UsageError(f"judgments must be one of {', '.join(JUDGMENT_SOURCES)}, got {which!r}")
    if which == "both":
        return qrels
    if which == "llm":
        rows = [(j.query_id, "0", j.doc_id, j.grade) for j in llm]
        if not rows:
            raise UsageError(f"{qrels.source}: there are no LLM judgments to evaluate with")
        return Qrels(qrels_columns(rows), f"{qrels.source} (LLM judgments)", qrels.topics, checked=True)
    filled = {(j.query_id, j.doc_id) for j in llm if j.kind == "hole"}
    columns = [column_list(qrels, name) for name in ("query_id", "iteration", "doc_id", "relevance")]
    rows = [(q, it, d, int(r)) for q, it, d, r in zip(*columns, strict=True) if (q, d) not in filled]
    return Qrels(qrels_columns(rows), f"{qrels.source} (human judgments)", qrels.topics, checked=True)


def choose_judgments(path: str | os.PathLike[str], qrels: Qrels, which: str | None) -> tuple[Qrels, str | None]:
    """The ``which`` view (default ``both``) of ``qrels`` read from ``path`` when ``judge`` left its
    sidecar beside it, with a note saying which; ``qrels`` as read and no note otherwise."""
    sidecar = os.fspath(path) + SIDECAR_SUFFIX  # beside a URL, the URL's object of that name
    if not is_file(sidecar):
        if which is not None:
            raise UsageError(f"{which} judgments asked, but {qrels.source} has no LLM judgments beside it "
                             f"(expected {sidecar}, which judge writes)")
        return qrels, None
    lines = _read_sidecar(sidecar)
    _check_sidecar(qrels, sidecar, lines)
    llm = [judgment for _, judgment in lines]
    which = which or "both"
    holes = sum(j.kind == "hole" for j in llm)
    described = {"human": "human judgments only (the LLM's left out)",
                 "llm": f"the LLM's {len(llm)} judgments only",
                 "both": f"human judgments and {holes} holes filled by the LLM"}.get(which, which)
    return select_judgments(qrels, llm, which), f"judgments: {which}: {described} ({sidecar})"
