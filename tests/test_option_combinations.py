"""Options that cannot go together are refused once, by the library, in its words: the same sentence from
Python (naming its parameters) and from the command line (naming its flags, ``cli.FLAGS``), one ``Error:``
line, before anything is read (the qrels here do not exist: reading them would be another error)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import REPO, invoke

import trec_rag_eval as tre
from trec_rag_eval.cli import FLAGS
from trec_rag_eval.errors import UsageError

MISSING = str(Path(REPO) / "fixtures" / "no-such-qrels.txt")
RUN = str(Path(REPO) / "fixtures" / "run_bm25.txt")
QRELS = str(Path(REPO) / "fixtures" / "qrels.txt")
CORPUS = str(Path(REPO) / "fixtures" / "corpus_fr.jsonl")
PATTERN = r"^(.*)#\d+$"

# flags, the keywords of the same call from Python (evaluate_many), the library's sentence, the command's
CASES = [
    (["--stream", "--doc-id-pattern", PATTERN], {"stream": True, "doc_map": PATTERN},
     "doc_map reads each run whole: not with stream=True",
     "--doc-id-pattern or --doc-map reads each run whole: not with --stream"),
    (["--stream", "--cluster", "local:1"], {"stream": True, "cluster": "local:1"},
     "stream=True reads one run in pieces on this machine: not with cluster= or shards=True",
     "--stream reads one run in pieces on this machine: not with --cluster or --shards"),
    (["--stream", "--shards"], {"stream": True, "shards": True},
     "stream=True reads one run in pieces on this machine: not with cluster= or shards=True",
     "--stream reads one run in pieces on this machine: not with --cluster or --shards"),
    (["--stream", "--run-format", "json"], {"stream": True, "run_format": "json"},
     "stream=True reads TREC runs in pieces; json runs are read whole",
     "--stream reads TREC runs in pieces; json runs are read whole"),
    (["--stream", "--run-format", "parquet"], {"stream": True, "run_format": "parquet"},
     "stream=True reads TREC runs in pieces; parquet runs are read whole",
     "--stream reads TREC runs in pieces; parquet runs are read whole"),
    (["--stream", "--id-key", "metadata.source"], {"stream": True, "id": "metadata.source"},
     "id= finds the document ids of JSON results, read whole: not with stream=True",
     "--id-key finds the document ids of JSON results, read whole: not with --stream"),
    (["--shards", "--doc-id-pattern", PATTERN], {"shards": True, "doc_map": PATTERN},
     "doc_map reads each run whole: not with shards=True",
     "--doc-id-pattern or --doc-map reads each run whole: not with --shards"),
    (["--shards", "--id-key", "metadata.source"], {"shards": True, "id": "metadata.source"},
     "id= finds the document ids of JSON results, read whole: not with shards=True",
     "--id-key finds the document ids of JSON results, read whole: not with --shards"),
    (["--shards", "--corpus", CORPUS], {"shards": True, "corpus": CORPUS},
     "corpus= counts the tokens of each run's results: not with shards=True",
     "--corpus counts the tokens of each run's results: not with --shards"),
    (["--tokenizer", "json:dumps"], {"tokenizer": "json:dumps"},
     "tokenizer= counts the tokens of the results' texts: give them with corpus=",
     "--tokenizer counts the tokens of the results' texts: give them with --corpus"),
    (["-c", "--intersection"], {"complete": True, "queries": "intersection"},
     "complete=True and queries='intersection' contradict each other",
     "-c and --intersection contradict each other"),
    (["--cluster", "local:0"], {"cluster": "local:0"},
     "cluster=local:0: expected local:N with N, the number of worker processes, >= 1",
     "--cluster local:0: expected local:N with N, the number of worker processes, >= 1"),
]


@pytest.mark.parametrize(("flags", "keywords", "library", "command"), CASES, ids=[" ".join(c[0][:2]) for c in CASES])
def test_a_combination_is_refused_once_in_one_wording(flags, keywords, library, command):
    result = invoke(*flags, MISSING, RUN)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {command}\n")
    with pytest.raises(UsageError) as caught:
        tre.evaluate_many(MISSING, [RUN], **keywords)  # refused at the call, before anything is read
    assert str(caught.value) == library
    assert caught.value.worded(FLAGS) == command


@pytest.mark.parametrize(("flags", "keywords", "library", "command"), CASES[:1] + CASES[-2:],
                         ids=["stream doc_map", "complete intersection", "cluster local:0"])
def test_evaluate_refuses_them_in_the_same_words(flags, keywords, library, command):
    with pytest.raises(UsageError, match=f"^{library}$".replace("(", r"\(").replace(")", r"\)")):
        tre.evaluate(MISSING, RUN, **keywords)


@pytest.mark.parametrize(("keywords", "library", "command"), [
    ({"stream": True}, "doc_id_pattern reads each run whole: not with stream=True",
     "--doc-id-pattern or --doc-map reads each run whole: not with --stream"),
    ({"shards": True}, "doc_id_pattern reads each run whole: not with shards=True",
     "--doc-id-pattern or --doc-map reads each run whole: not with --shards"),
], ids=["stream", "shards"])
def test_a_pattern_given_as_doc_id_pattern_is_refused_by_that_name(keywords, library, command):
    """doc_id_pattern= is doc_map= by another name: a caller who gave it is told of it, not of doc_map, which it did
    not give (the command line's sentence the same)."""
    with pytest.raises(UsageError) as caught:
        tre.evaluate_many(MISSING, [RUN], doc_id_pattern=PATTERN, **keywords)
    assert str(caught.value) == library
    assert caught.value.worded(FLAGS) == command
    if "stream" in keywords:  # evaluate has no shards=
        with pytest.raises(UsageError, match=f"^{re.escape(library)}$"):
            tre.evaluate(MISSING, RUN, doc_id_pattern=PATTERN, **keywords)


def test_what_only_python_can_ask_is_refused_in_the_library_s_words_too():
    with pytest.raises(UsageError) as caught:
        tre.evaluate_many(MISSING, [{"q1": {"d1": 1.0}}], shards=True)
    assert str(caught.value) == "shards=True takes run files: give the pieces as paths"
    with pytest.raises(UsageError) as caught:
        tre.evaluate_many(MISSING, [RUN], zscores="z.txt", corpus=CORPUS)
    assert str(caught.value) == ("zscores= gives z-scores of the measures; the context cost of corpus= has none: "
                                 "not both")


def test_the_command_line_checks_none_of_them_itself():
    """Every sentence above is the library's: no module of the command line holds one (the pieces that set
    them apart), nor a format name of its own to refuse --stream with."""
    sources = "".join(path.read_text(encoding="utf-8") for path in (Path(REPO) / "trec_rag_eval" / "cli").glob("*.py"))
    for piece in ("read each run whole", "reads each run whole", "in pieces on this machine", "are read whole",
                  "contradict each other\"", "expected local:N", "takes run files", "counts the tokens of",
                  "no place for them", "z-score lines", "as a whole run", "relevance judgments (qrels) only",
                  "tests every pair of runs: use", "the all-pairs table", "at least two runs", "tunes --optimize",
                  "chooses the judgments of", "deltas to a baseline"):
        assert piece not in sources, piece
    evaluate = (Path(REPO) / "trec_rag_eval" / "cli" / "evaluate.py").read_text(encoding="utf-8")
    assert '"json"' not in evaluate


# an evaluation's output format and what the evaluation holds: refused by the format (render.output_formats)
# when Python renders the evaluation, and by the command line in the same words, said with its flags
QRELS_DICT = {"q1": {"a": 1}, "q2": {"c": 1}}
RUN_DICT = {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}}
TEXTS = {"a": "one two", "b": "three", "c": "four"}
WITHOUT_TOKENS = ("corpus= adds the context tokens to the table, json, csv and jsonl formats: not with format=trec "
                  "(its lines have no place for them)")
WITHOUT_Z = "zscores= prints trec_eval's z-score lines: format=trec only"


def test_a_format_without_the_context_cost_refuses_an_evaluation_that_has_it():
    evaluation = tre.evaluate(QRELS_DICT, RUN_DICT, "P@1", corpus=TEXTS)
    assert "tokens" in evaluation.render("table")
    with pytest.raises(UsageError) as caught:
        evaluation.render("trec")  # its lines would drop the context cost in silence
    assert str(caught.value) == WITHOUT_TOKENS
    assert caught.value.worded(FLAGS) == ("--corpus adds the context tokens to the table, json, csv and jsonl "
                                          "formats: not with --format trec (its lines have no place for them)")
    result = invoke("--corpus", CORPUS, "-m", "P@1", "--format", "trec", MISSING, RUN)  # before anything is read
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {caught.value.worded(FLAGS)}\n")


def test_a_format_other_than_trec_eval_s_refuses_z_scores(tmp_path):
    stats = tmp_path / "z"
    stats.write_text("q1 P_1 0.5 0.25\nq2 P_1 0.5 0.25\n")
    evaluation = tre.evaluate(QRELS_DICT, RUN_DICT, "P@1", zscores=str(stats))
    assert evaluation.render("trec") == "ZP_1                   \tall\t2.0000\n"  # P@1 = 1 twice: (1 - 0.5) / 0.25
    with pytest.raises(UsageError) as caught:
        evaluation.render("json")  # z-scores under the measures' own names
    assert str(caught.value) == WITHOUT_Z
    assert caught.value.worded(FLAGS) == "-Z prints trec_eval's z-score lines: --format trec only"
    result = invoke("-Z", str(stats), "--format", "json", MISSING, RUN)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {caught.value.worded(FLAGS)}\n")


def test_the_renderer_handed_to_the_service_refuses_them_when_it_is_made():
    from trec_rag_eval.render.output import RunRenderer

    with pytest.raises(UsageError, match=f"^{re.escape(WITHOUT_TOKENS)}$"):
        RunRenderer("trec", context=True)
    with pytest.raises(UsageError, match=f"^{re.escape(WITHOUT_Z)}$"):
        RunRenderer("csv", zscored=True)


@pytest.mark.parametrize(("call", "sentence"), [
    (lambda runs: tre.compare(MISSING, runs), "compare needs at least two runs, got 1"),
    (lambda runs: tre.compare(MISSING, runs, pairs="all"), "compare needs at least two runs, got 1"),
    (lambda runs: tre.plan(MISSING, runs, delta=0.02), "plan needs a pilot of at least two runs, got 1"),
], ids=["compare", "compare all pairs", "plan"])
def test_one_run_is_refused_before_anything_is_read_in_the_command_s_words(call, sentence):
    """The qrels do not exist: read first, they would be the error; the command says the same sentence (its
    QRELS must exist: click checks it)."""
    for runs in ([RUN], {"a": RUN}):
        with pytest.raises(UsageError, match=f"^{sentence}$"):
            call(runs)
    command = sentence.split()[0]
    result = invoke(command, *(["--delta", "0.02"] if command == "plan" else []), QRELS, RUN)
    assert (result.exit_code, result.stderr) == (2, f"Error: {sentence}\n")


def test_a_cross_check_of_shards_is_refused_before_any_work_in_the_library_s_words():
    """The evaluate command's --crosscheck is tre.crosscheck of each run evaluated: the facade checks the
    options of evaluate_many it cannot follow (the same check tre.crosscheck makes of its qrels_format)."""
    from trec_rag_eval import api

    with pytest.raises(UsageError) as caught:
        api.check_crosscheck(shards=True)  # a run in pieces: the cross-check reads a run whole
    assert str(caught.value) == "the cross-check reads each run file as a whole run: not with shards=True"
    assert caught.value.worded(FLAGS) == "--crosscheck reads each run file as a whole run: not with --shards"
    result = invoke("--crosscheck", "--shards", MISSING, RUN, RUN)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {caught.value.worded(FLAGS)}\n")


def test_fuse_judgments_without_optimize_is_the_library_s_sentence(tmp_path):
    with pytest.raises(UsageError) as caught:
        tre.fuse([RUN, str(Path(REPO) / "fixtures" / "run_hybrid.txt")], judgments="human")
    assert str(caught.value) == ("judgments= tunes optimize= (the qrels on which the setting is chosen): give "
                                 "optimize=, or leave it out")
    fused = tre.fuse([RUN, str(Path(REPO) / "fixtures" / "run_hybrid.txt")], judgments=None)  # None: left out
    assert fused.n_queries > 0
    result = invoke("fuse", "--judgments", "human", RUN, str(Path(REPO) / "fixtures" / "run_hybrid.txt"),
                    "-o", str(tmp_path / "fused.txt"))
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", "Error: --judgments tunes --optimize (the qrels on which the setting is chosen): give --optimize, or "
               "leave it out\n")


HYBRID = str(Path(REPO) / "fixtures" / "run_hybrid.txt")
COMPARE_CASES = [
    (["--test", "tukey"], {"test": "tukey"}, "test=tukey tests every pair of runs: use pairs='all'",
     "--test tukey tests every pair of runs: use --all-pairs"),
    (["--all-pairs", "--confidence", "0.9"], {"pairs": "all", "confidence": 0.9},
     "confidence= shows deltas to a baseline (and their intervals); pairs='all' has none",
     "--confidence shows deltas to a baseline (and their intervals); --all-pairs has none"),
    (["--all-pairs", "--interval", "bootstrap"], {"pairs": "all", "interval": "bootstrap"},
     "interval= shows deltas to a baseline (and their intervals); pairs='all' has none",
     "--interval shows deltas to a baseline (and their intervals); --all-pairs has none"),
]


@pytest.mark.parametrize(("flags", "keywords", "library", "command"), COMPARE_CASES, ids=["tukey", "confidence",
                                                                                           "interval"])
def test_compare_refuses_what_its_pairs_do_not_have_before_anything_is_read(flags, keywords, library, command):
    with pytest.raises(UsageError) as caught:
        tre.compare(MISSING, [RUN, HYBRID], **keywords)
    assert str(caught.value) == library
    assert caught.value.worded(FLAGS) == command
    result = invoke("compare", *flags, QRELS, RUN, HYBRID)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {command}\n")


ALL_PAIRS_SHOW = [
    (["--per-query"], {"per_query": True},
     "per_query=True shows deltas to a baseline (and their intervals); pairs='all' has none",
     "-q shows deltas to a baseline (and their intervals); --all-pairs has none"),
    (["--plot", "deltas.png"], {"plot": "deltas.png"},
     "plot= shows deltas to a baseline (and their intervals); pairs='all' has none",
     "--plot shows deltas to a baseline (and their intervals); --all-pairs has none"),
    (["-q", "--plot", "deltas.png"], {"per_query": True, "plot": "deltas.png"},
     "per_query=True and plot= show deltas to a baseline (and their intervals); pairs='all' has none",
     "-q and --plot show deltas to a baseline (and their intervals); --all-pairs has none"),
]


@pytest.mark.parametrize(("flags", "keywords", "library", "command"), ALL_PAIRS_SHOW,
                         ids=["per query", "plot", "both"])
def test_what_only_deltas_to_a_baseline_show_is_refused_for_every_pair_in_the_library_s_words(
        flags, keywords, library, command, tmp_path, monkeypatch):
    """The command's -q and --plot (what it prints and draws) are checked by the facade before any work
    (``api.check_compare``), as the library checks the interval of a comparison of every pair."""
    from trec_rag_eval import api

    with pytest.raises(UsageError) as caught:
        api.check_compare("all", **keywords)
    assert str(caught.value) == library
    assert caught.value.worded(FLAGS) == command
    api.check_compare("baseline", **keywords)  # deltas to a baseline have them
    monkeypatch.chdir(tmp_path)
    result = invoke("compare", "--all-pairs", *flags, QRELS, RUN, HYBRID)
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {command}\n")
    assert not (tmp_path / "deltas.png").exists()


def test_a_format_of_another_result_is_named_for_what_it_writes():
    comparison = tre.compare(QRELS, [RUN, HYBRID], "P@5")
    with pytest.raises(UsageError) as caught:
        comparison.render("html")
    said = ("format=html writes the all-pairs table, not a comparison with a baseline: a comparison with a baseline "
            "is written as table, markdown, latex, json or csv")
    assert str(caught.value) == said
    result = invoke("compare", "-f", "html", QRELS, RUN, HYBRID)  # the command adds where its HTML page is
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"Error: --format {said[7:]}, or as an HTML page by the report command\n")


@pytest.mark.parametrize("id", ["", "metadata..source", ".source"])
def test_an_empty_key_path_for_the_results_ids_is_refused_at_the_call_before_anything_is_read(id):
    library = f"id must be a key path such as 'metadata.source' or a callable result -> id, got {id!r}"
    for call in (lambda: tre.evaluate_many(MISSING, [RUN], id=id), lambda: tre.evaluate(MISSING, RUN, id=id),
                 lambda: tre.compare(MISSING, [RUN, HYBRID], id=id), lambda: tre.crosscheck(MISSING, RUN, id=id),
                 lambda: tre.plan(MISSING, [RUN, HYBRID], delta=0.02, id=id)):
        with pytest.raises(UsageError) as caught:
            call()  # the qrels do not exist: read first, they would be the error
        assert str(caught.value) == library
    command = f"--id-key must be a key path such as 'metadata.source' or a callable result -> id, got {id!r}"
    assert caught.value.worded(FLAGS) == command
    for args in (["--id-key", id, MISSING, RUN], ["--id-key", id, MISSING, RUN, HYBRID],
                 ["compare", "--id-key", id, QRELS, RUN, HYBRID],
                 ["plan", "--delta", "0.02", "--id-key", id, QRELS, RUN, HYBRID]):
        result = invoke(*args)
        assert (result.exit_code, result.stdout, result.stderr) == (2, "", f"Error: {command}\n")


@pytest.mark.parametrize("keywords", [{"per_query": True}, {"plot": "deltas.png"}], ids=["per query", "plot"])
def test_what_only_the_command_shows_is_no_parameter_of_the_library_s_comparison_whichever_its_pairs(keywords):
    """Each query's deltas (-q) and their figure (--plot) are what the compare command prints and draws from the
    comparison; ``tre.compare`` has no such parameter. It refuses them as any setting it does not know, for every
    pair as for deltas to a baseline, and never says that deltas to a baseline would show them."""
    name = next(iter(keywords))
    for pairs in ("baseline", "all"):
        with pytest.raises(TypeError, match=f"^unknown evaluation setting '{name}'; expected one of "):
            tre.compare(QRELS, [RUN, HYBRID], pairs=pairs, **keywords)
