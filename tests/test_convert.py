"""``trec-rag-eval convert`` and the writers: literal TREC lines, atomic no-clobber writes, round trips,
and the same numbers whether a dataset is evaluated as JSON or as its converted TREC files."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trec_rag_eval.cli import cli, main
from trec_rag_eval.errors import InputFormatError, UsageError
from trec_rag_eval.io.loading import load_qrels, load_run
from trec_rag_eval.io.writers import (
    write_dataset_json,
    write_results_json,
    write_topics,
    write_trec_qrels,
    write_trec_run,
)
from trec_rag_eval.tables import Qrels, Run

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TUTORIAL = FIXTURES / "eval_dataset_tutorial.json"
TUTORIAL_RESULTS = FIXTURES / "results_tutorial.json"

SEED_QRELS_LINES = """\
q1 0 doc_install_python 1
q1 0 doc_setup_env 1
q1 0 doc_cuisine 0
q2 0 doc_nginx_proxy 1
q2 0 doc_nginx_config 1
q2 0 doc_python_web 0
"""
SEED_TOPICS_LINES = "q1\tcomment installer Python sur Windows\nq2\tconfigurer nginx comme reverse proxy\n"
SEED_RUN_LINES = """\
q1 Q0 doc_cuisine 1 5 results_tutorial
q1 Q0 doc_setup_env 2 4 results_tutorial
q1 Q0 doc_python_web 3 3 results_tutorial
q1 Q0 doc_install_python 4 2 results_tutorial
q1 Q0 doc_venv 5 1 results_tutorial
q2 Q0 doc_nginx_config 1 4 results_tutorial
q2 Q0 doc_apache 2 3 results_tutorial
q2 Q0 doc_python_web 3 2 results_tutorial
q2 Q0 doc_nginx_proxy 4 1 results_tutorial
"""


def run_cli(args: list[str]):
    return CliRunner().invoke(cli, args, catch_exceptions=False)


def run_main(args: list[str], capsys) -> tuple[int, str, str]:
    """The console entry point, which turns library errors into one ``Error:`` line."""
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    out, err = capsys.readouterr()
    return exit_info.value.code, out, err


# ---------------------------------------------------------------- the seed, literally


def test_seed_dataset_converts_to_the_expected_qrels_and_topics(tmp_path):
    qrels, topics = tmp_path / "eval.qrels", tmp_path / "eval.topics"
    result = run_cli(["convert", str(TUTORIAL), "--qrels", str(qrels), "--topics", str(topics)])
    assert result.exit_code == 0
    assert result.output == f"Wrote {qrels}: 6 judgments for 2 queries\nWrote {topics}: 2 query texts\n"
    assert qrels.read_text(encoding="utf-8") == SEED_QRELS_LINES
    assert topics.read_text(encoding="utf-8") == SEED_TOPICS_LINES


def test_topics_file_defaults_beside_the_qrels(tmp_path):
    qrels = tmp_path / "eval.qrels"
    assert run_cli(["convert", str(TUTORIAL), "--qrels", str(qrels)]).exit_code == 0
    assert (tmp_path / "eval.topics").read_text(encoding="utf-8") == SEED_TOPICS_LINES


def test_results_keyed_by_text_convert_to_a_run_with_ranks_and_decreasing_scores(tmp_path):
    run = tmp_path / "results.run"
    result = CliRunner().invoke(
        cli, ["convert", str(TUTORIAL_RESULTS), "--run", str(run), "--dataset", str(TUTORIAL)]
    )
    assert result.exit_code == 0
    assert run.read_text(encoding="utf-8") == SEED_RUN_LINES


def test_back_to_json_with_french_keys_gives_the_seed_items_with_ids(tmp_path):
    qrels, topics, back = tmp_path / "eval.qrels", tmp_path / "eval.topics", tmp_path / "back.json"
    qrels.write_text(SEED_QRELS_LINES, encoding="utf-8")
    topics.write_text(SEED_TOPICS_LINES, encoding="utf-8")
    result = run_cli(["convert", str(qrels), "--topics", str(topics), "--json", str(back), "--keys", "fr"])
    assert result.exit_code == 0, result.output
    expected = json.loads(TUTORIAL.read_text(encoding="utf-8"))
    for number, item in enumerate(expected, start=1):
        item["id"] = f"q{number}"
    assert json.loads(back.read_text(encoding="utf-8")) == expected


def test_run_back_to_json_keeps_order_and_scores(tmp_path):
    run, back = tmp_path / "r.run", tmp_path / "r.json"
    run.write_text("7 Q0 b 1 0.5 t\n7 Q0 a 2 0.5 t\n7 Q0 c 3 2.25 t\n", encoding="utf-8")
    assert run_cli(["convert", str(run), "--json", str(back)]).exit_code == 0
    # score descending, then doc_id descending: c (2.25), then b before a on the tie
    assert json.loads(back.read_text(encoding="utf-8")) == {
        "7": [{"id": "c", "score": 2.25}, {"id": "b", "score": 0.5}, {"id": "a", "score": 0.5}]
    }


# ---------------------------------------------------------------- overwrite, atomicity, errors


def test_existing_file_is_kept_without_force(tmp_path, capsys):
    qrels = tmp_path / "eval.qrels"
    qrels.write_text("keep me\n", encoding="utf-8")
    code, out, err = run_main(["convert", str(TUTORIAL), "--qrels", str(qrels)], capsys)
    assert (code, out, err) == (2, "", f"Error: {qrels} already exists; use --force to overwrite it\n")
    assert qrels.read_text(encoding="utf-8") == "keep me\n"
    assert not (tmp_path / "eval.topics").exists()  # nothing half-written either
    code, _, _ = run_main(["convert", str(TUTORIAL), "--qrels", str(qrels), "--force"], capsys)
    assert code == 0 and qrels.read_text(encoding="utf-8") == SEED_QRELS_LINES
    assert sorted(os.listdir(tmp_path)) == ["eval.qrels", "eval.topics"]  # no temporary file left


def test_writers_refuse_to_overwrite_and_write_no_partial_file(tmp_path):
    qrels = Qrels.from_dict({"q1": {"d1": 1}})
    target = tmp_path / "q.txt"
    write_trec_qrels(qrels, target)
    with pytest.raises(UsageError, match="already exists; pass force=True"):
        write_trec_qrels(qrels, target)
    bad = Qrels.from_dict({"q1": {"d1": 1, "d 2": 0}}, source="mem")
    with pytest.raises(InputFormatError) as err:
        write_trec_qrels(bad, tmp_path / "bad.txt")
    assert str(err.value) == "mem: document id 'd 2' contains whitespace, which a TREC file cannot hold"
    assert sorted(os.listdir(tmp_path)) == ["q.txt"]


def test_topics_with_line_break_is_refused(tmp_path):
    with pytest.raises(InputFormatError, match="holds a tab or a line break"):
        write_topics({"q1": "two\nlines"}, tmp_path / "t.tsv")


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            '[{"query": "a", "relevant": ["d1"]}\n{"query": "b"}]',
            "invalid JSON at column 1: Expecting ',' delimiter",
        ),
        (
            '[{"query": "a"}]',
            "item 1 (query q1): missing required key 'pertinents' or 'relevant' or "
            "'reference_context_ids' (keys present: 'query')",
        ),
        (
            '[{"query": "a", "relevant": {"d1": "yes"}}]',
            "item 1 (query q1): key 'relevant': the relevance of 'd1' is not a number: \"yes\"",
        ),
        (
            '[{"id": "my query", "query": "a", "relevant": ["d1"]}]',
            "item 1: query id ('id') 'my query' contains whitespace, which a TREC file cannot hold",
        ),
    ],
)
def test_bad_input_gives_one_error_line_and_exit_1(tmp_path, capsys, text, expected):
    dataset = tmp_path / "bad.json"
    dataset.write_text(text, encoding="utf-8")
    code, out, err = run_main(["convert", str(dataset), "--qrels", str(tmp_path / "q.txt")], capsys)
    line = 2 if "\n" in text else 1
    assert (code, out, err) == (1, "", f"Error: {dataset}:{line}: {expected}\n")


def test_usage_errors(tmp_path, capsys):
    code, _, err = run_main(["convert", str(TUTORIAL)], capsys)
    assert (code, err) == (2, "Error: nothing to write: give --qrels (and --topics), --run, or --json\n")
    code, _, err = run_main(["convert", str(TUTORIAL), "--qrels", "a", "--json", "b"], capsys)
    assert code == 2 and "cannot be combined" in err


def test_convert_warns_about_rag_mistakes(tmp_path):
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"q1": ["doc_setup_env", "doc_setup_env"], "q3": ["x"]}), encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["convert", str(results), "--run", str(tmp_path / "r.run"), "--dataset", str(TUTORIAL)]
    )
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if line.startswith("Warning:")]
    assert warnings == [
        "Warning: 1 queries are in the results but not in the dataset (they are not evaluated) (e.g. q3)",
        "Warning: 1 dataset queries have no results (they score 0) (e.g. q2)",
        "Warning: 1 ids are listed more than once in one result list (only the first place is kept) "
        "(e.g. q1: 'doc_setup_env' x2)",
    ]


# ---------------------------------------------------------------- evaluation: JSON == TREC, hand-checked


def test_seed_evaluates_to_hand_checked_numbers_as_json_and_as_trec(tmp_path):
    from trec_rag_eval.evaluation.evaluate import evaluate_tables

    qrels_json = load_qrels(TUTORIAL)
    run_json = load_run(TUTORIAL_RESULTS, qrels=qrels_json)
    write_trec_qrels(qrels_json, tmp_path / "q.txt")
    write_trec_run(run_json, tmp_path / "r.txt")
    qrels_trec, run_trec = load_qrels(tmp_path / "q.txt"), load_run(tmp_path / "r.txt")
    names = ["P@1", "P@3", "R@3", "R@5", "RR", "AP", "nDCG@5"]
    from_json, from_trec = evaluate_tables(qrels_json, run_json, names), evaluate_tables(qrels_trec, run_trec, names)
    # q1 ranks: cuisine(0) setup_env(1) python_web(0) install_python(1) venv(-); 2 relevant
    # q2 ranks: nginx_config(1) apache(-) python_web(0) nginx_proxy(1); 2 relevant
    dcg = lambda ranks: sum(1 / math.log2(r + 1) for r in ranks)  # noqa: E731
    expected = {
        "P@1": (0 + 1) / 2,
        "P@3": (1 / 3 + 1 / 3) / 2,
        "R@3": (1 / 2 + 1 / 2) / 2,
        "R@5": 1.0,
        "RR": (1 / 2 + 1) / 2,
        "AP": ((1 / 2 + 2 / 4) / 2 + (1 + 2 / 4) / 2) / 2,
        "nDCG@5": (dcg([2, 4]) / dcg([1, 2]) + dcg([1, 4]) / dcg([1, 2])) / 2,
    }
    for name, value in expected.items():
        assert from_json.value(name) == pytest.approx(value, abs=1e-12), name
    assert from_json.summary_by_name == from_trec.summary_by_name
    assert from_json.query_ids == from_trec.query_ids
    for name in names:
        assert list(from_json.values[name]) == list(from_trec.values[name])


def test_cli_prints_identical_numbers_for_json_and_converted_trec(tmp_path):
    qrels, topics, run = tmp_path / "eval.qrels", tmp_path / "eval.topics", tmp_path / "results.run"
    assert run_cli(["convert", str(TUTORIAL), "--qrels", str(qrels), "--topics", str(topics)]).exit_code == 0
    assert (
        run_cli(
            [
                "convert",
                str(TUTORIAL_RESULTS),
                "--run",
                str(run),
                "--dataset",
                str(TUTORIAL),
                "--run-tag",
                "results_tutorial",
            ]
        ).exit_code
        == 0
    )
    for extra in ([], ["-q", "-m", "all_trec"]):
        trec = CliRunner().invoke(cli, ["evaluate", *extra, str(qrels), str(run)])
        assert trec.exit_code == 0, trec.output
        as_json = CliRunner().invoke(cli, ["evaluate", *extra, str(TUTORIAL), str(TUTORIAL_RESULTS)])
        assert as_json.exit_code == 0, as_json.output
        assert as_json.stdout.replace(str(TUTORIAL_RESULTS), "RUN") == trec.stdout.replace(str(run), "RUN")


# ---------------------------------------------------------------- round trips (hypothesis)

# Ids: any text a TREC file can hold (no whitespace, no lone surrogate); texts: anything one line holds.
ID = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=8)
TEXT = st.text(
    st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\x85"), max_size=20
)
QUERY_ID = ID.filter(lambda i: not i.startswith("#"))  # a line starting with '#' is a TREC comment
GRADE = st.integers(min_value=-1, max_value=4)


@st.composite
def datasets(draw):
    """A dataset as JSON items: French or English keys, some ids given, graded or binary."""
    french = draw(st.booleans())
    keys = ("requête", "pertinents", "non_pertinents") if french else ("query", "relevant", "non_relevant")
    graded = draw(st.booleans())
    items, used = [], set()
    for position in range(1, draw(st.integers(1, 6)) + 1):
        item: dict = {keys[0]: draw(TEXT)}
        query_id = draw(st.one_of(st.none(), QUERY_ID.filter(lambda i: i not in used)))
        if query_id is not None and (query_id in used or f"q{position}" == query_id):
            query_id = None
        if query_id is not None:
            item["id"] = query_id
        used.add(query_id if query_id is not None else f"q{position}")
        docs = draw(st.lists(ID, unique=True, max_size=5))
        if graded:
            item[keys[1]] = {d: draw(GRADE) for d in docs}
        else:
            split = draw(st.integers(0, len(docs)))
            item[keys[1]], item[keys[2]] = docs[:split], docs[split:]
        items.append(item)
    first = items[0]
    if not any(first.get(k) for k in keys[1:]):  # an empty qrels file is refused by every reader
        first[keys[1]] = {"d": 1} if graded else ["d"]
    ids = [item.get("id") for item in items]
    generated = {f"q{i}" for i, given in enumerate(ids, start=1) if given is None}
    if generated & {i for i in ids if i is not None}:
        for item in items:
            item.pop("id", None)
    return items


def judgments(qrels: Qrels) -> dict[str, dict[str, int]]:
    return qrels.to_dict()


def scores(run: Run) -> dict[str, dict[str, float]]:
    return run.to_dict()


SETTINGS = settings(
    max_examples=int(os.environ.get("ROUND_TRIP_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


@SETTINGS
@given(items=datasets(), jsonl=st.booleans(), data=st.data())
def test_json_to_trec_to_json_round_trip(tmp_path_factory, items, jsonl, data):
    folder = tmp_path_factory.mktemp("rt")
    source = folder / ("d.jsonl" if jsonl else "d.json")
    text = (
        "".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items)
        if jsonl
        else json.dumps(items, ensure_ascii=False, indent=1)
    )
    source.write_text(text, encoding="utf-8")
    original = load_qrels(source)
    write_trec_qrels(original, folder / "q.txt")
    write_topics(original.topics or {}, folder / "t.tsv")
    via_trec = load_qrels(folder / "q.txt", topics=folder / "t.tsv")
    assert judgments(via_trec) == judgments(original)
    # the query text is each item's first key; ids are the item's, else q<position>
    assert (
        via_trec.topics
        == original.topics
        == {item.get("id", f"q{n}"): next(iter(item.values())) for n, item in enumerate(items, start=1)}
    )
    write_dataset_json(via_trec, folder / "back.json", keys=data.draw(st.sampled_from(["en", "fr"])))
    back = load_qrels(folder / "back.json")
    assert judgments(back) == judgments(original) and back.topics == original.topics

    # results: ordered lists keyed by query id, possibly with repeats; the ranking must survive
    query_ids = list(original.topics or {})
    results = {q: data.draw(st.lists(ID, max_size=6)) for q in query_ids}
    results[query_ids[0]].append("d")  # at least one result: an empty run file is refused too
    (folder / "r.json").write_text(json.dumps(results, ensure_ascii=False), encoding="utf-8")
    run = load_run(folder / "r.json", qrels=original)
    for q, listed in results.items():
        kept = list(dict.fromkeys(listed))
        got = [(d, s) for qq, d, s in run.frame.iter_rows() if qq == q]
        assert [d for d, _ in got] == kept
        # strictly decreasing: no tie left for a tie-breaking rule to reorder
        assert all(a[1] > b[1] for a, b in zip(got, got[1:], strict=False))
    write_trec_run(run, folder / "r.txt")
    via_run = load_run(folder / "r.txt")
    assert scores(via_run) == scores(run)
    write_results_json(via_run, folder / "r2.json", scores=data.draw(st.booleans()))
    assert scores(load_run(folder / "r2.json")) == scores(run)


@SETTINGS
@given(
    qrels_rows=st.dictionaries(st.tuples(QUERY_ID, ID), GRADE, min_size=1, max_size=15),
    run_rows=st.dictionaries(
        st.tuples(QUERY_ID, ID), st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=15
    ),
    texts=st.dictionaries(QUERY_ID, TEXT, max_size=4),
    separator=st.sampled_from([" ", "\t"]),
)
def test_trec_to_json_to_trec_round_trip(tmp_path_factory, qrels_rows, run_rows, texts, separator):
    folder = tmp_path_factory.mktemp("rt")
    lines = [separator.join([q, "0", d, str(r)]) + "\n" for (q, d), r in qrels_rows.items()]
    (folder / "q.txt").write_text("".join(lines), encoding="utf-8")
    topics = {q: t for q, t in texts.items()}
    (folder / "t.tsv").write_text("".join(f"{q}\t{t}\n" for q, t in topics.items()), encoding="utf-8")
    lines = [separator.join([q, "Q0", d, "0", repr(s), "tag"]) + "\n" for (q, d), s in run_rows.items()]
    (folder / "r.txt").write_text("".join(lines), encoding="utf-8")
    expected_judgments: dict[str, dict[str, int]] = {}
    for (q, d), r in qrels_rows.items():
        expected_judgments.setdefault(q, {})[d] = r
    expected_scores: dict[str, dict[str, float]] = {}
    for (q, d), s in run_rows.items():
        expected_scores.setdefault(q, {})[d] = s

    qrels = load_qrels(folder / "q.txt", topics=folder / "t.tsv" if topics else None)
    assert judgments(qrels) == expected_judgments
    write_dataset_json(qrels, folder / "d.json")
    back = load_qrels(folder / "d.json")
    assert judgments(back) == expected_judgments
    assert (back.topics or {}) == topics
    write_trec_qrels(back, folder / "q2.txt")
    assert judgments(load_qrels(folder / "q2.txt")) == expected_judgments
    run = load_run(folder / "r.txt")
    write_results_json(run, folder / "r.json")
    via_json = load_run(folder / "r.json")
    assert scores(via_json) == expected_scores
    write_trec_run(via_json, folder / "r2.txt")
    assert scores(load_run(folder / "r2.txt")) == expected_scores
