"""The output formats: one registry (``render.output_formats``) that every command, renderer and result reads.

Each format writing evaluations gives the same bytes value by value and a column at a time (its two bodies are
compared here on small evaluations, whatever ``COLUMN_WISE_FROM`` says); every command's ``--format`` choices
are the registry's; no list of format names is written anywhere else in the package; a format registered from
outside the package reaches the command line and the library with nothing else changed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import click
import pytest
from conftest import REPO, invoke

import trec_rag_eval as tre
from trec_rag_eval.errors import UsageError
from trec_rag_eval.render.output_formats import (
    ALL_PAIRS,
    COMPARISON,
    EVALUATION,
    OUTPUT_FORMATS,
    OutputFormat,
    choices,
    register_output_format,
)

QRELS = {"1": {"a": 1, "b": 0}, "2": {"a": 2}}
RUN = {"1": {"a": 2.0, "b": 1.0}, "2": {"b": 1.0, "a": 0.5}}

# query ids and a run tag a column path could mishandle (a comma, a quote, non-ASCII, a tab), a string measure
# (relstring), NaN (judged_only leaves q"2 nothing: trec_eval's -nan), integers (num_ret), a query missing
ODD_QRELS = {"q,1": {"a": 2, "b": 0, "c": 1}, 'q"2': {"x": 3}, "é\t3": {"d": 0}, "q4": {"z": 1}}
ODD_RUN = {"q,1": {"a": 3.0, "b": 2.0, "u": 1.5, "c": 1.0}, 'q"2': {"u": 2.0}, "é\t3": {"u": 1.0, "d": 0.5}}
TEXTS = {"a": "one two", "b": "three words here", "c": "x", "u": "four five six seven"}


def _evaluations() -> list[tre.Evaluation]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the query missing from the run
        run = tre.Run.from_dict(ODD_RUN, run_tag='tag,"x"')
        return [tre.evaluate(ODD_QRELS, run, ["all_trec", "nDCG@3", "Judged@2"]),
                tre.evaluate(ODD_QRELS, ODD_RUN, ["all_trec", "F1@2"], judged_only=True),
                tre.evaluate(ODD_QRELS, ODD_RUN, ["P@1", "P@2", "AP"], corpus=TEXTS)]


def _refused(fmt: OutputFormat, per_query: bool, summary: bool, context: bool) -> bool:
    try:
        fmt.check(per_query, summary, context)
    except UsageError:
        return True
    return False


@pytest.mark.parametrize("name", choices(EVALUATION))
def test_each_format_writes_the_same_bytes_value_by_value_and_a_column_at_a_time(name):
    fmt = OUTPUT_FORMATS[name]
    for evaluation in _evaluations():
        for per_query in (True, False):
            for summary in (True, False):
                if _refused(fmt, per_query, summary, evaluation.context is not None):
                    continue
                by_value = "".join(fmt.body(evaluation, per_query, summary))
                assert "".join(fmt.body_columns(evaluation, per_query, summary)) == by_value, (name, per_query)


def test_the_two_bodies_are_compared_on_values_worth_comparing():
    plain, judged, with_context = _evaluations()
    assert "  -nan\n" in "".join(OUTPUT_FORMATS["trec"].body(judged, True, True))
    assert "relstring             \tq,1\t'20-1'\n" in "".join(OUTPUT_FORMATS["trec"].body(plain, True, True))
    assert "\"q,1\"" in "".join(OUTPUT_FORMATS["csv"].body(plain, True, True))
    assert "tokens@2" in "".join(OUTPUT_FORMATS["table"].body(with_context, True, True))


def test_a_large_evaluation_takes_the_column_path_and_a_small_one_the_value_path(monkeypatch):
    calls = []

    class Probe(OutputFormat):
        name = "probe-path"
        summary = "which body was asked"

        def body(self, evaluation, per_query, summary):
            calls.append("value")
            return ("",)

        def body_columns(self, evaluation, per_query, summary):
            calls.append("columns")
            return ("",)

    probe = Probe()
    evaluation = _evaluations()[0]
    values = len(evaluation.query_ids) * len([m for m in evaluation.measures if m.spec.per_query])
    monkeypatch.setattr("trec_rag_eval.render.output_formats.COLUMN_WISE_FROM", values)
    probe.run_text(evaluation, True, True)
    probe.run_text(evaluation, False, True)  # the summary alone: nothing per query to build by columns
    monkeypatch.setattr("trec_rag_eval.render.output_formats.COLUMN_WISE_FROM", values + 1)
    probe.run_text(evaluation, True, True)
    assert calls == ["columns", "value", "value"]


def test_every_renderer_named_by_a_format_exists():
    import importlib

    for fmt in OUTPUT_FORMATS.values():
        for kind, renderer in fmt.renders.items():
            target = getattr(renderer, "target", None)
            if target is not None:
                module, function = target
                assert callable(getattr(importlib.import_module(f"trec_rag_eval.render.{module}"), function)), \
                    (fmt.name, kind)


def test_comparisons_and_all_pairs_render_in_each_of_their_formats():
    from trec_rag_eval.compare import compare_values
    from trec_rag_eval.compare.allpairs import compare_all_pairs

    values = {"A": {"m": [0.1, 0.5, 0.9]}, "B": {"m": [0.2, 0.4, 1.0]}, "C": {"m": [0.0, 0.1, 0.2]}}
    comparison = compare_values(values, ["1", "2", "3"], n_resamples=50)
    pairs = compare_all_pairs(values, ["1", "2", "3"], n_resamples=50)
    for name in choices(COMPARISON):
        assert comparison.render(name) == OUTPUT_FORMATS[name].render(COMPARISON, comparison)
    for name in choices(ALL_PAIRS):
        assert pairs.render(name) == OUTPUT_FORMATS[name].render(ALL_PAIRS, pairs)
    listed = choices(ALL_PAIRS)
    with pytest.raises(UsageError, match=f"^unknown format 'nope'; expected one of {', '.join(listed)}$"):
        pairs.render("nope")
    with pytest.raises(UsageError, match=f"^format=trec writes an evaluation, not the all-pairs table: the all-pairs "
                                         f"table is written as {', '.join(listed[:-1])} or {listed[-1]}$"):
        pairs.render("trec")  # a format of another kind of result: said what it writes


def _command(name: str) -> click.Command:
    from trec_rag_eval.cli import cli

    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return command


@pytest.mark.parametrize("command, kinds", [
    ("evaluate", (EVALUATION,)), ("compare", (COMPARISON, ALL_PAIRS)), ("agree", ("agreement",)),
    ("crosscheck", ("crosscheck",)), ("validate", ("validation",)), ("plan", ("plan",))])
def test_every_commands_format_choices_are_the_registrys(command, kinds):
    option = next(p for p in _command(command).params if "--format" in p.opts)
    assert tuple(option.type.choices) == choices(*kinds)
    help_text = " ".join(option.help.split())
    assert all(f"{name} (" in help_text for name in choices(*kinds))


def test_an_unknown_format_is_a_usage_error_naming_the_choices():
    evaluation = tre.evaluate(QRELS, RUN, ["P@1", "AP"])
    expected = f"unknown format 'xml'; expected one of {', '.join(choices(EVALUATION))}"
    assert choices(EVALUATION)[:5] == ("trec", "table", "json", "csv", "jsonl")
    with pytest.raises(UsageError, match=f"^{re.escape(expected)}$"):
        evaluation.render("xml")


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="the output format 'csv' is registered already"):
        register_output_format(OUTPUT_FORMATS["csv"])


# A list of format names written by hand goes stale when a format is added: the registry says them.
_NAME = r"(?:``|[`'\"])?(?:{names})(?:``|[`'\"])?"
_SEPARATOR = r"\s*(?:,|\||/|\bor\b|\band\b)\s*(?:\bor\b|\band\b)?\s*"


def test_no_list_of_format_names_is_written_outside_the_registry():
    names = "|".join(sorted((re.escape(name) for name in OUTPUT_FORMATS), key=len, reverse=True))
    one = _NAME.format(names=names)
    listing = re.compile(rf"\b{one}(?:{_SEPARATOR}{one}){{2,}}\b", re.IGNORECASE)
    package = Path(REPO) / "trec_rag_eval"
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "output_formats.py":
            continue
        text = path.read_text(encoding="utf-8")
        for match in listing.finditer(" ".join(text.split())):
            said = re.findall(rf"(?i)\b(?:{names})\b", match.group(0))
            if len({name.casefold() for name in said}) >= 3 and not all(name.isupper() for name in said):
                found.append(f"{path.relative_to(package)}: {match.group(0)}")  # (TREC, JSON: input formats)
    assert not found, found


TOY = '''
from trec_rag_eval.render.output_formats import OutputFormat, register_output_format


class Toy(OutputFormat):
    """query<space>measure<space>value lines: a format registered from outside the package."""

    name = "toy"
    summary = "query measure value"

    def body(self, evaluation, per_query, summary):
        queries = evaluation.query_ids if per_query else []
        rows = [f"{q} {m} {float(evaluation.values[str(m)][i])!r}\\n" for i, q in enumerate(queries)
                for m in evaluation.measures]
        return ["".join(rows) + ("".join(f"all {m} {v!r}\\n" for m, v in evaluation.summary.items()) if summary
                                 else "")]

    body_columns = body


register_output_format(Toy())
'''


def test_a_format_registered_from_outside_reaches_the_command_and_the_library(tmp_path):
    (tmp_path / "toy_format.py").write_text(TOY)
    script = ("import toy_format, sys\nimport trec_rag_eval as tre\n"
              "print(tre.evaluate({'1': {'a': 1}}, {'1': {'a': 1.0, 'b': 2.0}}, ['P@1', 'AP']).render('toy'), end='')\n"
              "from trec_rag_eval.cli import main\nmain(sys.argv[1:])\n")
    qrels, run = tmp_path / "q.txt", tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n")
    run.write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 2.0 t\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), REPO]))
    result = subprocess.run([sys.executable, "-c", script, "-q", "-m", "P@1", "-m", "AP", "--format", "toy",
                             str(qrels), str(run)], env=env, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    # P@1 = 0 (b first), AP = (1/2) / 1
    assert result.stdout == "all P@1 0.0\nall AP 0.5\n" + "1 P@1 0.0\n1 AP 0.5\nall P@1 0.0\nall AP 0.5\n"
    shown = subprocess.run([sys.executable, "-c", script, "evaluate", "--help"], env=env, capture_output=True,
                           text=True, check=True)
    assert "toy (query measure value)" in " ".join(shown.stdout.split())
    assert f"[{'|'.join(choices(EVALUATION))}|toy]" in shown.stdout


def test_the_command_help_says_each_format():
    # compared without whitespace: click wraps the help at spaces and after hyphens ("tab-" then "separated" on the
    # next line), so a summary's own hyphens and spaces may come back either way
    text = "".join(invoke("evaluate", "--help").stdout.split())
    for name in choices(EVALUATION):
        assert "".join(f"{name} ({OUTPUT_FORMATS[name].about(EVALUATION)}".split()) in text


def test_a_value_no_float_holds_is_null_in_json_and_empty_in_csv_value_by_value_and_column_wise():
    # NaN was null (JSON) and an empty field (CSV); inf was Infinity, which is no JSON, and "inf" in the CSV.
    # One rule for every data format: a value that is no finite float is null / an empty field, written the same
    # whether the body is built value by value or a column at a time
    import numpy as np

    import trec_rag_eval
    from trec_rag_eval.render import data_formats

    evaluation = trec_rag_eval.evaluate({"q1": {"a": 1}, "q2": {"b": 1}}, {"q1": {"a": 1.0}, "q2": {"a": 1.0}},
                                        ["P@1"])
    evaluation.values["P@1"][:] = [np.inf, -np.inf]  # no measure gives these yet: the writers must not pass them
    for by_value, by_column in [(data_formats.json_text, data_formats.json_text_columns),
                                (data_formats.csv_rows, data_formats.csv_rows_columns),
                                (data_formats.jsonl_rows, data_formats.jsonl_rows_columns)]:
        text = by_value(evaluation, True)
        assert text == by_column(evaluation, True)
        assert "inf" not in text.lower()
    assert data_formats.csv_rows(evaluation, True).splitlines()[:2] == ["run,q1,P@1,", "run,q2,P@1,"]
    assert '"value": null' in data_formats.jsonl_rows(evaluation, True).splitlines()[0]
