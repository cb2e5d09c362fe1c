"""Preference judgments in any file: prefs text (``io.trec.prefs``), Parquet, or JSON rows; and how each is
written (the format registry, ``io.loading``, recognises them beside the other formats).

* text: ``query_id group subgroup doc_id level`` a line (trec_eval's ``-R prefs``);
* Parquet: the columns ``query_id``, ``group``, ``subgroup``, ``doc_id``, ``level`` (others ignored);
* JSON: an array of objects with those keys, or JSON Lines (one object a line).

Each is read into a ``Preferences`` table, checked as the text reader checks its lines (errors name the
row, or the line of a JSON Lines file). ``write_preferences`` writes the format its output's name asks
for (``.parquet``, ``.json``, ``.jsonl``; text otherwise). A qrels file read as preferences (``-R
qrels_prefs``) in Parquet or JSON is read as judgments, then as preferences (``preferences_of_qrels``).
"""

from __future__ import annotations

import io
import json
import os
from typing import Any

import numpy as np

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.io.atomic import refuse_overwrite, write_atomic
from trec_rag_eval.io.ids import check_ids, id_problem
from trec_rag_eval.io.sources import read_bytes, read_head, read_text
from trec_rag_eval.io.trec import prefs as text
from trec_rag_eval.syntax import quote
from trec_rag_eval.tables import Qrels, ResultsReport, Run, column_list
from trec_rag_eval.tables.judgment_kinds import PREFERENCE_COLUMNS, GroupedQrels, Preferences, preference_columns

_KEYS = set(PREFERENCE_COLUMNS)


def read_preferences(path: str | os.PathLike[str]) -> Preferences:
    """Preferences from text, Parquet or JSON (told apart by the content)."""
    from trec_rag_eval.io.loading import is_parquet

    name = os.fspath(path)
    if is_parquet(name):
        return _parquet(name)
    data = read_bytes(name)
    if data.lstrip()[:1] in (b"[", b"{"):
        return _json(name)
    return text.read_prefs(name)


def read_qrels_as_preferences(path: str | os.PathLike[str]) -> Preferences:
    """A qrels file read as preferences (trec_eval's ``-R qrels_prefs``): TREC text by ``io.trec.prefs`` (a level may
    be any number), Parquet or a JSON dataset read as judgments first (``preferences_of_qrels``)."""
    name = os.fspath(path)
    qrels = _other_qrels(name)
    return text.read_qrels_prefs(name) if qrels is None else preferences_of_qrels(qrels)


def read_grouped(path: str | os.PathLike[str]) -> GroupedQrels:
    """Qrels of judgment groups (trec_eval's ``-R qrels_jg``) from a TREC, Parquet or JSON qrels file: the
    iteration column (or key) names the group."""
    from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels

    name = os.fspath(path)
    qrels = _other_qrels(name) or read_trec_qrels(name)
    return GroupedQrels(qrels.data, qrels.source, qrels.topics, qrels.unjudged, checked=True)


def _other_qrels(path: str) -> Qrels | None:
    """Judgments of a Parquet file or a JSON dataset; None for text (read by the caller)."""
    from trec_rag_eval.io.loading import is_parquet
    from trec_rag_eval.io.parquet import read_parquet_qrels

    if is_parquet(path):
        return read_parquet_qrels(path)
    if read_head(path, 64).lstrip()[:1] in ("[", "{"):
        from trec_rag_eval.io.json.datasets import read_dataset

        return read_dataset(path)
    return None


def preferences_of_qrels(qrels: Qrels) -> Preferences:
    """Judgments read as trec_eval's ``-R qrels_prefs`` reads a qrels file: the iteration is the group, one
    subgroup each, the relevance the level."""
    count = len(column_list(qrels, "query_id"))
    return Preferences({"query_id": column_list(qrels, "query_id"), "group": column_list(qrels, "iteration"),
                        "subgroup": [text.QRELS_PREFS_SUBGROUP] * count, "doc_id": column_list(qrels, "doc_id"),
                        "level": np.asarray(column_list(qrels, "relevance"), dtype=np.float64)}, qrels.source,
                       checked=True)


def refuse_as_run(path: str, qrels: Qrels | None, id: Any) -> tuple[Run, ResultsReport]:
    """Detection found preferences (Parquet or JSON) where a run was expected."""
    raise InputFormatError(path, None, f"this holds preference judgments ({', '.join(PREFERENCE_COLUMNS)}), not a "
                           "run: the judgments come first, then the runs")


def write_preferences(prefs: Preferences, path: str | os.PathLike[str], *, force: bool = False) -> int:
    """Write ``prefs`` as its output's name says (``.parquet``, ``.json``, ``.jsonl``; text otherwise); return
    the rows written."""
    name = os.fspath(path).lower()
    data = prefs.data
    if not len(prefs):
        raise InputFormatError(prefs.source, None, "no preferences to write")
    if not (name.endswith(".parquet") or name.endswith(".json") or name.endswith(".jsonl")):
        return text.write_prefs(prefs, path, force=force)
    check_ids(prefs.source, data["query_id"], data["doc_id"])
    if name.endswith(".parquet"):
        refuse_overwrite(path, force)
        buffer = io.BytesIO()
        prefs.frame.write_parquet(buffer, statistics=True)
        write_atomic(path, buffer.getvalue(), force)
        return len(prefs)
    rows = [json.dumps({"query_id": q, "group": g, "subgroup": s, "doc_id": d, "level": _number(float(v))},
                       ensure_ascii=False)
            for q, g, s, d, v in zip(*(data[key] for key in PREFERENCE_COLUMNS), strict=True)]
    body = "\n".join(rows) + "\n" if name.endswith(".jsonl") else "[\n" + ",\n".join(rows) + "\n]\n"
    write_atomic(path, body, force)
    return len(prefs)


def _number(level: float) -> int | float | str:
    """A level as JSON holds it: an integer when it is one, else the float (infinities as text)."""
    if level.is_integer() and abs(level) < 1e15:
        return int(level)
    return level if abs(level) != float("inf") else ("inf" if level > 0 else "-inf")


def _parquet(path: str) -> Preferences:
    import polars as pl

    try:
        frame = pl.read_parquet(path, columns=list(PREFERENCE_COLUMNS))
    except Exception as err:  # a missing column, a damaged file: polars' reason, with the file
        raise InputFormatError(path, None, f"cannot read the preferences ({', '.join(PREFERENCE_COLUMNS)}): "
                               f"{str(err).splitlines()[0]}") from None
    return _checked(path, [tuple(row) for row in frame.iter_rows()], "row")


def _json(path: str) -> Preferences:
    content = read_text(path)
    stripped = content.lstrip()
    rows: list[tuple[int, Any]] = []
    if stripped.startswith("["):
        try:
            values = json.loads(content)
        except json.JSONDecodeError as err:
            raise InputFormatError(path, err.lineno, f"not valid JSON: {err.msg}") from None
        rows = list(enumerate(values, start=1))
        unit = "row"
    else:
        unit = "line"
        for line_no, line in enumerate(content.split("\n"), start=1):
            if not line.strip():
                continue
            try:
                rows.append((line_no, json.loads(line)))
            except json.JSONDecodeError as err:
                raise InputFormatError(path, line_no, f"not valid JSON: {err.msg}", line) from None
    values = []
    for number, row in rows:
        if not isinstance(row, dict) or not _KEYS <= set(row):
            raise _error(path, unit, number, f"expected an object with the keys {', '.join(PREFERENCE_COLUMNS)}, "
                         f"got {quote(json.dumps(row, ensure_ascii=False))}")
        level = row["level"]
        if isinstance(level, str) and level in ("inf", "-inf"):
            level = float(level)
        values.append((*(row[key] for key in PREFERENCE_COLUMNS[:4]), level))
    return _checked(path, values, unit, [number for number, _ in rows])


def _error(path: str, unit: str, number: int, reason: str) -> InputFormatError:
    return InputFormatError(path, number, reason) if unit == "line" else InputFormatError(path, None,
                                                                                           f"row {number}: {reason}")


def _checked(path: str, rows: list[tuple[Any, ...]], unit: str, numbers: list[int] | None = None) -> Preferences:
    """The rows as ``Preferences``, each checked as the text reader checks a line (ids may be integers)."""
    numbers = numbers or list(range(1, len(rows) + 1))
    if not rows:
        raise InputFormatError(path, None, "no preferences found")
    for number, row in zip(numbers, rows, strict=True):
        for label, value, is_query in (("query id", row[0], True), ("group", row[1], False),
                                       ("subgroup", row[2], False), ("document id", row[3], False)):
            problem = (id_problem(str(value), is_query) if isinstance(value, (str, int)) and not isinstance(value, bool)
                       else "is not a string")
            if problem is not None:
                raise _error(path, unit, number, f"{label} {quote(str(value))} {problem}")
        level = row[4]
        if isinstance(level, bool) or not isinstance(level, (int, float)) or level != level:
            raise _error(path, unit, number, f"level must be a number other than NaN, got {quote(str(level))}")
    return Preferences(preference_columns(rows, path), path, lines=np.array(numbers, dtype=np.int64), unit=unit,
                       checked=True)
