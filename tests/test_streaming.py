"""The streaming path (runs larger than memory) prints exactly what the in-memory path prints."""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from conftest import first_by_default, golden_path, invoke

from trec_rag_eval.errors import InputFormatError
from trec_rag_eval.evaluation.evaluate import evaluate_tables
from trec_rag_eval.evaluation.streaming import evaluate_pieces
from trec_rag_eval.io.trec.pieces import iter_run_chunks
from trec_rag_eval.io.trec.qrels_runs import read_trec_qrels, read_trec_run

pytestmark = pytest.mark.usefixtures("table_form")  # lists and polars frames alike


def _generate(tmp_path, queries=120, depth=60, seed=3):
    """A mid-size graded pair with ties, unjudged docs, qrels-only and run-only queries."""
    rng = np.random.default_rng(seed)
    qrels_lines, run_lines = [], []
    for q in range(queries):
        qid = f"q{q}"
        docs = rng.choice(400, size=depth, replace=False)
        judged = rng.choice(400, size=25, replace=False)
        for d in judged:
            qrels_lines.append(f"{qid} 0 d{d} {rng.choice([-1, 0, 0, 1, 2, 3])}")
        if q % 17 == 5:
            continue  # a qrels query missing from the run
        scores = np.round(rng.random(depth) * 4, 1)  # one decimal: many ties
        for rank, (d, s) in enumerate(zip(docs, scores, strict=False), 1):
            run_lines.append(f"{qid} Q0 d{d} {rank} {s} gen")
    run_lines += [f"extra{i} Q0 d1 1 1.0 gen" for i in range(3)]  # run-only queries
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("\n".join(qrels_lines) + "\n")
    run.write_text("\n".join(run_lines) + "\n")
    return str(qrels), str(run)


def _same(a, b):
    assert a.query_ids == b.query_ids
    assert a.missing_queries == b.missing_queries
    assert a.extra_queries == b.extra_queries
    for m in a.measures:
        assert a.summary[m] == b.summary[m] or (np.isnan(a.summary[m]) and np.isnan(b.summary[m])), str(m)
        if m in a.values:
            if isinstance(a.values[m], list):
                assert a.values[m] == b.values[m]
            else:
                np.testing.assert_array_equal(a.values[m], b.values[m], err_msg=str(m))


# -l and -M with -m slow
@pytest.mark.parametrize("options", first_by_default([{}, {"judged_only": True}, {"relevance_level": 2},
                                                    {"max_retrieved": 7}], keep=2))
def test_small_memory_budget_gives_the_same_numbers(tmp_path, options):
    qrels_path, run_path = _generate(tmp_path)
    qrels = read_trec_qrels(qrels_path)
    budget = 2048  # bytes per piece: about 80 lines, so the run arrives in dozens of pieces
    pieces = list(iter_run_chunks(run_path, chunk_bytes=budget))
    assert len(pieces) > 50
    # bounded memory: a piece holds at most the budget plus the one query that straddles it
    assert max(p.frame.height for p in pieces) <= budget // 30 + 60
    streamed = evaluate_pieces(qrels, iter(pieces), ["all_trec", "P@3", "nDCG@5"], **options)
    whole = evaluate_tables(qrels, read_trec_run(run_path), ["all_trec", "P@3", "nDCG@5"], **options)
    _same(whole, streamed)
    assert streamed.missing_queries  # the generator made some


def test_cli_stream_flag_prints_identical_output(tmp_path):
    # the golden MS MARCO pair, each topic's block followed by one of a topic the qrels lack (ignored),
    # so that the 2.3 MB run arrives in three pieces of 1 MB with judged topics in each
    qrels, run = golden_path("qrels.msmarco"), str(tmp_path / "run.txt")
    blocks: dict[str, list[str]] = {}
    with open(golden_path("run.msmarco"), encoding="utf-8") as handle:
        for line in handle:
            blocks.setdefault(line.split()[0], []).append(line)
    with open(run, "w", encoding="utf-8") as handle:
        for number, lines in enumerate(blocks.values()):
            handle.writelines(lines)
            handle.writelines(f"pad-{number} Q0 p{number}-{i} {i + 1} {1 / (i + 1)} pad\n" for i in range(400))
    assert 2_000_000 < os.path.getsize(run) < 3_000_000
    whole = invoke("--format", "trec", "-q", "-m", "all_trec", qrels, run)
    streamed = invoke("--format", "trec", "-q", "-m", "all_trec", "--stream", "--chunk-size", "1", qrels, run)
    assert streamed.exit_code == 0, streamed.stderr
    assert streamed.stdout == whole.stdout
    # and both are trec_eval 10's bytes for the golden pair, but the run's name (the padding's tag comes last)
    with open(golden_path("expected/out.msmarco.aq"), encoding="utf-8") as handle:
        expected = handle.read().replace("\tall\tmsmarco_run\n", "\tall\tpad\n")
    assert streamed.stdout == expected


def test_progress_bar_on_stderr(tmp_path):
    qrels, run = _generate(tmp_path)
    result = invoke("--stream", "--progress", "-m", "P.5", qrels, run)
    # tqdm's bar, as search and generate-queries show theirs (one mechanism; a widget in a notebook)
    assert "reading run.txt:   0%|" in result.stderr and "reading run.txt: 100%|" in result.stderr


def test_ungrouped_run_is_refused_with_the_fix(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("a 0 d1 1\nb 0 d1 1\n")
    run.write_text("a Q0 d1 1 2 t\nb Q0 d1 1 2 t\na Q0 d2 2 1 t\n")
    with pytest.raises(InputFormatError, match="comes back after other queries"):
        list(iter_run_chunks(str(run), chunk_bytes=14))


def test_comment_and_blank_lines_inside_a_query_do_not_split_it(tmp_path):
    # a grouped run, with a comment and a blank line among query 1's lines and a comment between the queries:
    # wherever a piece ends (pieces of 1 to 90 bytes), no query is refused as coming back, and the pieces hold
    # the rows of the file read whole (lines 1, 3, 5 for query 1; line 7 for query 2, counted by hand)
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 d1 1 3 t\n# note\n1 Q0 d2 2 2 t\n\n1 Q0 d3 3 1 t\n# next\n2 Q0 d9 1 1 last\n")
    whole = {"1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "2": {"d9": 1.0}}
    assert read_trec_run(str(path)).to_dict() == whole
    for size in range(1, 91):
        pieces = list(iter_run_chunks(str(path), chunk_bytes=size))
        assert {q: docs for piece in pieces for q, docs in piece.to_dict().items()} == whole, size
        assert pieces[-1].run_tag == "last"


def test_automatic_streaming_falls_back_to_reading_whole_when_the_run_is_not_grouped(tmp_path, monkeypatch):
    # a large run is streamed without being asked; if it turns out not to be grouped by query, the
    # user gets the numbers anyway (read whole), not an error about an option they never gave
    import trec_rag_eval.service.inputs as streaming

    monkeypatch.setattr(streaming, "should_stream", lambda path, size, run_format: True)
    qrels = golden_path("qrels.binary")
    interleaved = golden_path("run.trunc")  # topics 2, 301, 303, 400 interleaved
    automatic = invoke("--format", "trec", "-m", "map", qrels, interleaved)
    assert automatic.exit_code == 0, automatic.stderr
    assert "not grouped by query, so read whole" in automatic.stderr
    monkeypatch.setattr(streaming, "should_stream", lambda path, size, run_format: False)
    assert automatic.stdout == invoke("--format", "trec", "-m", "map", qrels, interleaved).stdout
    explicit = invoke("--stream", "-m", "map", qrels, interleaved)
    assert explicit.exit_code == 1 and "comes back after other queries" in explicit.stderr


def test_the_library_streams_a_run_too_large_for_the_memory(tmp_path, monkeypatch):
    # the choice is the library's, so Python callers get it too: a run over a quarter of the memory
    # available (here 4 times its size, so just under) is read in pieces, with the same numbers
    import trec_rag_eval.service.inputs as streaming
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.measures.requests import parse_measures

    qrels_path, run_path = _generate(tmp_path)
    size = os.path.getsize(run_path)
    monkeypatch.setattr(streaming, "LEAST_MEMORY", 0)  # a small file stands for a large one
    monkeypatch.setattr(streaming, "available_memory", lambda: 4 * size - 1)
    assert streaming.should_stream(run_path, size)
    monkeypatch.setattr(streaming, "available_memory", lambda: 4 * size)
    assert not streaming.should_stream(run_path, size)
    measures = parse_measures(["all_trec"])
    opened: list[str] = []

    @contextlib.contextmanager
    def progress(path):
        opened.append(path)
        yield lambda done: None

    monkeypatch.setattr(streaming, "available_memory", lambda: size)
    [streamed] = _evaluations(read_trec_qrels(qrels_path), [run_path], measures, Settings(), progress=progress)
    assert opened == [run_path]  # read in pieces: the progress context was entered
    monkeypatch.setattr(streaming, "available_memory", lambda: None)  # unknown: read whole
    [whole] = _evaluations(read_trec_qrels(qrels_path), [run_path], measures, Settings(), progress=progress)
    assert opened == [run_path]
    _same(whole, streamed)


def test_a_gzip_run_counts_eight_times_its_size_and_a_small_run_is_not_opened(tmp_path, monkeypatch):
    # a gzip run over a quarter of the memory once decompressed (8 times its size: 32 times its size over 4)
    # is read in pieces, a plain one of the same size is not; a file too small to matter even as gzip is not
    # opened to look at its first bytes
    import gzip

    import trec_rag_eval.io.sources as sources
    import trec_rag_eval.service.inputs as streaming

    plain = tmp_path / "run.txt"
    plain.write_bytes(b"1 Q0 a 1 1.0 r\n" * 100)
    packed = tmp_path / "run.txt.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    size = os.path.getsize(packed)
    plain.write_bytes(plain.read_bytes()[:size])
    assert os.path.getsize(plain) == size
    monkeypatch.setattr(streaming, "LEAST_MEMORY", 0)
    monkeypatch.setattr(streaming, "available_memory", lambda: 32 * size - 1)
    assert streaming.should_stream(str(packed), size)
    assert not streaming.should_stream(str(plain), size)
    monkeypatch.setattr(streaming, "available_memory", lambda: 32 * size)
    monkeypatch.setattr(sources, "is_gzip", lambda path: pytest.fail(f"{path} opened"))
    assert not streaming.should_stream(str(packed), size)


def test_several_runs_on_threads_give_each_run_its_own_numbers(tmp_path):
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.measures.requests import parse_measures

    qrels_path, run_path = _generate(tmp_path)
    other = tmp_path / "other.txt"
    other.write_text("".join(line for i, line in enumerate(open(run_path)) if i % 3))
    measures, qrels = parse_measures(["all_trec"]), read_trec_qrels(qrels_path)
    paths = [run_path, str(other), run_path]
    together = _evaluations(qrels, paths, measures, Settings(), jobs=3)
    for path, evaluation in zip(paths, together, strict=True):
        [alone] = _evaluations(qrels, [path], measures, Settings(), jobs=1)
        _same(alone, evaluation)
    assert together[0].summary["map"] != together[1].summary["map"]


def _evaluations(qrels, paths, measures, settings, **options):
    """The evaluations the service gives for ``paths``, each run's error raised."""
    from trec_rag_eval.service.pipeline import evaluate_runs

    out = []
    for outcome in evaluate_runs(qrels, paths, measures, settings, **options):
        if outcome.error is not None:
            raise outcome.error
        out.append(outcome.evaluation)
    return out


def test_python_callers_get_the_command_s_streaming_and_warnings(tmp_path, monkeypatch):
    # trec_rag_eval.evaluate on a run file takes the same decisions as the command line
    import trec_rag_eval as tre
    import trec_rag_eval.service.inputs as inputs
    import trec_rag_eval.service.large_runs as runs
    from trec_rag_eval.errors import TrecRagEvalWarning

    qrels_path, run_path = _generate(tmp_path)
    whole = evaluate_tables(read_trec_qrels(qrels_path), read_trec_run(run_path), ["all_trec"])
    pieces: list[str] = []
    real = runs.evaluate_in_pieces
    monkeypatch.setattr(runs, "evaluate_in_pieces", lambda *a: pieces.append(a[1]) or real(*a))
    monkeypatch.setattr(inputs, "LEAST_MEMORY", 0)
    monkeypatch.setattr(inputs, "available_memory", lambda: os.path.getsize(run_path))  # too small: in pieces
    with pytest.warns(TrecRagEvalWarning, match=r"qrels quer(y|ies) missing from the run, scored 0"):
        streamed = tre.evaluate(qrels_path, run_path, ["all_trec"])
    assert pieces == [run_path]
    _same(whole, streamed)


def test_a_query_missing_from_a_streamed_run_is_the_only_warning(tmp_path):
    """q2 is judged but not retrieved: scored 0 and named, as without --stream. Scoring it is not
    'the run holds no result for any query': q1 has one (P@1: q1 1, q2 0 -> 0.5)."""
    (tmp_path / "qrels.txt").write_text("q1 0 A 1\nq2 0 A 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 A 1 1 r\n")
    for options in ([], ["--stream"], ["--shards"]):
        result = invoke(*options, "-m", "P.1", "--format", "trec", str(tmp_path / "qrels.txt"),
                        str(tmp_path / "run.txt"))
        assert (result.exit_code, result.stdout) == (0, "P_1                   \tall\t0.5000\n")
        assert result.stderr == f"Warning: {tmp_path / 'run.txt'}: 1 qrels query missing from the run, scored 0: q2\n"


def test_each_run_file_is_asked_its_size_once(tmp_path, monkeypatch):
    """Whether the first run is read ahead and whether each run is read in pieces are decided on one size per run
    file, asked once where the runs are listed (``service.inputs.run_files``), a folder's files' too. Neither
    decision asks io.sources again whether the run is a file, or how large."""
    import trec_rag_eval.io.sources as sources

    qrels_path, run_path = _generate(tmp_path)
    folder = tmp_path / "runs"
    folder.mkdir()
    other = folder / "other.txt"
    other.write_text(open(run_path).read())
    asked: list[str] = []
    real = sources.size_if_file
    monkeypatch.setattr(sources, "size_if_file", lambda path: asked.append(path) or real(path))
    monkeypatch.setattr(sources, "size", lambda path: pytest.fail(f"size({path}) asked again"))
    result = invoke("-m", "map", "--format", "trec", qrels_path, run_path, str(folder))
    assert result.exit_code == 0, result.stderr
    assert sorted(asked) == sorted([run_path, str(folder), str(other)])  # the folder: no file, so it is listed


def test_a_run_read_in_pieces_recounts_num_rel_under_c_one_per_document(tmp_path):
    # intent-aware qrels: a relevant under subtopics 1 and 2 of query 1 is one relevant document, as every measure
    # but the intent-aware ones reads it; relevant documents a, b (query 1) and c (query 2): 3, not the 4 lines
    qrels_path = tmp_path / "twice.qrels"
    qrels_path.write_text("1 1 a 1\n1 2 a 2\n1 1 b 1\n1 2 d 0\n2 1 c 1\n")
    run_path = tmp_path / "run.txt"
    run_path.write_text("1 Q0 a 1 2.0 r\n1 Q0 x 2 1.0 r\n2 Q0 c 1 1.0 r\n")
    qrels = read_trec_qrels(qrels_path)
    streamed = evaluate_pieces(qrels, iter_run_chunks(str(run_path), chunk_bytes=16), ["num_rel"], complete=True)
    whole = evaluate_tables(qrels, read_trec_run(run_path), ["num_rel"], complete=True)
    assert whole.summary["num_rel"] == 3
    _same(whole, streamed)


def test_the_memory_available_is_asked_only_for_a_run_that_could_need_pieces(tmp_path, monkeypatch):
    # reading /proc/meminfo for every run file is a cost the small ones never need: a run whose worst case (as gzip,
    # 8 times its size, taking 4 times that in memory: 32 times its size) fits in the least memory assumed
    # available (LEAST_MEMORY) is read whole without asking; a larger one asks once
    import trec_rag_eval.service.inputs as streaming

    asked: list[int] = []
    monkeypatch.setattr(streaming, "available_memory", lambda: asked.append(1) or 1 << 40)
    run = tmp_path / "run.txt"
    run.write_bytes(b"1 Q0 a 1 1.0 r\n")
    assert not streaming.should_stream(str(run), os.path.getsize(run))
    assert asked == []
    assert not streaming.should_stream(str(run), streaming.LEAST_MEMORY // 32)
    assert asked == []
    assert not streaming.should_stream(str(run), streaming.LEAST_MEMORY // 32 + 1)
    assert asked == [1]
