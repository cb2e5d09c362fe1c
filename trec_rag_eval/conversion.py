"""Convert judgments and runs between JSON datasets and results, TREC files and Parquet, losing nothing.

``convert`` is what ``trec-rag-eval convert`` and ``trec_rag_eval.convert`` do: read INPUT in any
format (detected), write the files asked for, all of them or none (``io.atomic.all_or_none``), and say
what was written and what the user should know (``notes.Note``). Outputs are checked against the
inputs before anything is read or written.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trec_rag_eval.errors import UsageError
from trec_rag_eval.notes import Note, note, warning

if TYPE_CHECKING:
    from trec_rag_eval.tables import Qrels

PathArg = str | os.PathLike[str]


@dataclass
class ConversionReport:
    """What ``convert`` wrote (one line per file: ``Wrote FILE: ...``) and its notes."""

    written: list[str] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    def __str__(self) -> str:
        return "\n".join(self.written)


def convert_files(input_path: PathArg, *, qrels: PathArg | None = None, topics: PathArg | None = None,
                  run: PathArg | None = None, json: PathArg | None = None, dataset: PathArg | None = None,
                  kind: str | None = None, qrels_format: str = "auto", run_format: str = "auto", keys: str = "en",
                  run_tag: str | None = None, scores: bool = True, force: bool = False,
                  check: bool = True) -> ConversionReport:
    """Write ``input_path``'s judgments as TREC qrels (``qrels``; Parquet when it ends in ``.parquet``)
    and its query texts as a topics file (``topics``; by default beside ``qrels``), its results as a
    TREC run (``run``; results keyed by query text need the ``dataset``), or a TREC file as JSON
    (``json``: a dataset, with ``topics`` read for its texts, or results; ``kind`` says which when the
    file could be both, ``keys`` the dataset's key language, ``scores=False`` plain id lists). Existing
    files are kept unless ``force``; every file is written atomically, all of them or none.
    ``check=False``: the outputs were already checked against the inputs (``io.atomic.check_output_paths``)."""
    from trec_rag_eval.io.atomic import all_or_none
    from trec_rag_eval.io.loading import load_qrels

    source = os.fspath(input_path)
    qrels, topics, run, json, dataset = (_text(path) for path in (qrels, topics, run, json, dataset))
    if json is not None and (qrels or run):
        raise UsageError("json= cannot be combined with qrels= or run=: convert one way at a time",
                         {"json=": "json_out", "qrels=": "qrels_out", "run=": "run_out"})
    if not (qrels or topics or run or json):
        raise UsageError("nothing to write: give qrels= (and topics=), run=, or json=",
                         {"qrels=": "qrels_out", "topics=": "topics_out", "run=": "run_out", "json=": "json_out"})
    report = ConversionReport()
    if json is not None:
        if check:
            _check([json], force, [source, dataset, topics])  # topics is read here
        with all_or_none(force=force):
            report.written.append(_to_json(source, json, topics, dataset, kind, qrels_format, run_format, keys,
                                           scores, force))
        return report
    topics_is_default = qrels is not None and topics is None
    judgments = None
    if topics_is_default:
        # the default topics file is claimed only when there are topics to write: converting TREC
        # qrels (no texts) must not trip over the topics file an earlier conversion left beside them
        judgments = load_qrels(source, qrels_format)
        topics = _default_topics_path(qrels) if judgments.topics else None  # type: ignore[arg-type]
    if check:
        _check([qrels, topics, run], force, [source, dataset])
    with all_or_none(force=force):
        _to_trec(source, qrels, (topics, topics_is_default), run, dataset, qrels_format, run_format, run_tag,
                 force, report, judgments)
    return report


def _text(path: PathArg | None) -> str | None:
    return None if path is None else os.fspath(path)


def _check(outputs: list[str | None], force: bool, inputs: list[str | None]) -> None:
    """No output replaces or joins an input (``io.output_checks.check_outputs_against_inputs``)."""
    from trec_rag_eval.io.output_checks import check_outputs_against_inputs

    check_outputs_against_inputs(outputs, force, inputs)


def _to_trec(input_path: str, qrels_out: str | None, topics: tuple[str | None, bool], run_out: str | None,
             dataset_path: str | None, qrels_format: str, run_format: str, run_tag: str | None, force: bool,
             report: ConversionReport, dataset: Qrels | None = None) -> None:
    """Write the qrels, topics (path, whether it is the default one) and run asked for, said in
    ``report``. ``dataset``: INPUT's judgments, if already read."""
    from trec_rag_eval.checks.rag import check_rag, order_warning
    from trec_rag_eval.io.loading import detect_kind, for_output, load_qrels, load_run_report
    from trec_rag_eval.io.writers import write_topics
    from trec_rag_eval.tables import query_id_set

    topics_path, topics_is_default = topics
    if qrels_out is not None or topics_path is not None:
        dataset = dataset or load_qrels(input_path, qrels_format)
        if qrels_out is not None:
            write = _judgments_writer(dataset, qrels_out)
            count = write(dataset, qrels_out, force=force)
            queries = dataset.frame["query_id"].n_unique()
            report.written.append(f"Wrote {qrels_out}: {count} judgments for {queries} queries")
        if dataset.topics and topics_path is not None:
            count = write_topics(dataset.topics, topics_path, force=force)
            report.written.append(f"Wrote {topics_path}: {count} query texts")
            unjudged = sorted(set(dataset.topics) - query_id_set(dataset))
            if unjudged and qrels_out is not None:
                # a qrels file has no line for a query without any judgment: the topics file keeps it
                shown = ", ".join(unjudged[:10]) + (", ..." if len(unjudged) > 10 else "")
                them = "it" if len(unjudged) == 1 else "them"
                report.notes.append(note(
                    f"{len(unjudged)} quer{'y has' if len(unjudged) == 1 else 'ies have'} no judged document, "
                    f"so no line in {qrels_out}: {shown}. {topics_path} keeps {them}: evaluate with "
                    f"topics={topics_path} to count {them} (scored 0), as the JSON dataset does.",
                    parameters={"topics=": "topics_file"}))
        elif not topics_is_default:
            raise UsageError(f"{input_path} holds no query texts to write to {topics_path}")
    if run_out is not None:
        if dataset_path is not None:
            dataset = load_qrels(dataset_path, qrels_format)
        elif dataset is None and detect_kind(input_path) == "both":
            dataset = load_qrels(input_path, qrels_format)
        run, read = load_run_report(input_path, run_format, dataset)
        written = for_output(run_out)
        assert written.write_run is not None
        count = written.write_run(run, run_out, run_tag=run_tag, force=force)
        queries = run.frame["query_id"].n_unique()
        report.written.append(f"Wrote {run_out}: {count} {written.unit} for {queries} queries")
        if dataset is not None:
            report.notes.extend(warning(str(found)) for found in check_rag(dataset, run, read))
        elif read.disordered:  # said with a dataset by check_rag, in the same words
            report.notes.append(warning(order_warning(read.disordered)))


def _to_json(input_path: str, json_out: str, topics_path: str | None, dataset_path: str | None, kind: str | None,
             qrels_format: str, run_format: str, keys: str, scores: bool, force: bool) -> str:
    """Write INPUT as JSON; return what to say once it is in place."""
    from trec_rag_eval.io.loading import detect_kind, load_qrels, load_run
    from trec_rag_eval.io.writers import write_dataset_json, write_results_json

    if kind is None:
        kind = detect_kind(input_path)
        if kind == "both":
            raise UsageError(f"{input_path} holds both judgments and results: say which with kind=", {"kind=": "kind"})
    if kind == "dataset":
        qrels = load_qrels(input_path, qrels_format, topics=topics_path)
        if qrels.kind == "preferences":  # their own JSON: one object per line of the prefs file
            count = _judgments_writer(qrels, json_out)(qrels, json_out, force=force)
            return f"Wrote {json_out}: {count} preferences"
        count = write_dataset_json(qrels, json_out, keys=keys, force=force)
        return f"Wrote {json_out}: {count} queries"
    dataset = load_qrels(dataset_path, qrels_format) if dataset_path is not None else None
    run = load_run(input_path, run_format, dataset)
    count = write_results_json(run, json_out, scores=scores, force=force)
    return f"Wrote {json_out}: results for {count} queries"


def _judgments_writer(judgments: Qrels, path: str) -> Any:
    """How to write ``judgments`` to ``path``: in the format its name asks for (``io.loading.for_output``);
    preferences in theirs (prefs text, Parquet or JSON rows: ``io.prefs_files.write_preferences``)."""
    if judgments.kind == "preferences":
        from trec_rag_eval.io.prefs_files import write_preferences

        return write_preferences
    from trec_rag_eval.io.loading import for_output

    write = for_output(path).write_qrels
    assert write is not None
    return write


def _default_topics_path(qrels_out: str) -> str:
    path = Path(qrels_out)
    candidate = path.with_suffix(".topics")
    return str(candidate if candidate != path else path.with_name(path.name + ".topics"))
