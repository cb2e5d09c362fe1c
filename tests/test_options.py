"""Options and measure requests: C's number syntax (ASCII only), bounded integers, clean errors.

trec_eval reads integer -m parameters with atol (ASCII digits, ``P.５`` is 0 and refused as a
cutoff), real ones with atof; every other option here is a whole number in our syntax, bounded,
so a 20-digit -M is a usage error (exit 2), never an OverflowError.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import invoke

QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 1\n"
RUN = "1 Q0 a 1 2.0 r\n1 Q0 x 2 1.0 r\n2 Q0 c 1 1.0 r\n"


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "qrels.txt"
    r = tmp_path / "run.txt"
    q.write_text(QRELS)
    r.write_text(RUN)
    return str(q), str(r)


def _one_error_line(result, code=2):
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    return result.stderr


@pytest.mark.parametrize("spec,reason", [
    ("P.５", "cutoffs must be positive integers"),
    ("P.٩", "cutoffs must be positive integers"),
    ("P.99999999999999999999", "cutoff '99999999999999999999' is out of range (1 to 2147483647)"),
    ("iprec_at_recall.nan", "cutoffs must be finite numbers"),
    ("iprec_at_recall..5,inf", "cutoffs must be finite numbers"),
    ("utility.1,-1,nan,0", "coefficients must be finite numbers"),
    ("ndcg.1=nan", "gains must be finite numbers"),
    ("ndcg.99999999999=2", "judgment '99999999999' is out of range (-2147483648 to 2147483647)"),
])
def test_trec_measure_parameters(files, spec, reason):
    stderr = _one_error_line(invoke("-m", spec, *files))
    assert stderr.startswith(f"Error: bad measure {spec!r}: {reason}\n")


@pytest.mark.parametrize("spec,reason", [
    ("P@５", "the cutoff after @ must be a positive integer"),
    ("P@99999999999999999999", "the cutoff after @ must be a positive integer (at most 2147483647)"),
    ("P(rel=99999999999)@5", "rel must be an integer from 0 to 2147483647"),
    ("P(rel=-1)@5", "rel must be an integer from 0 to 2147483647"),
    ("nDCG(gains={１:2})", "expected a value: a number, 'text', True, False or {judgment: gain}"),
])
def test_notation_numbers(files, spec, reason):
    stderr = _one_error_line(invoke("-m", spec, *files))
    assert stderr.startswith(f"Error: bad measure {spec!r}: {reason}\n")


def test_a_non_ascii_gain_key_is_not_a_judgment(files):
    # trec_eval ignores a pair whose key is not an integer (as it does 'p='): ndcg.１=5 is plain ndcg
    plain = invoke("-q", "-m", "ndcg", *files).stdout.replace("ndcg ", "x")
    odd = invoke("-q", "-m", "ndcg.１=5", *files).stdout
    assert [line.split("\t")[1:] for line in odd.splitlines()] == [line.split("\t")[1:] for line in plain.splitlines()]


def test_a_huge_measure_request_is_quoted_short(files):
    spec = "x" * 100_000
    stderr = _one_error_line(invoke("-m", spec, *files))
    assert "(100000 characters)" in stderr
    assert len(stderr) < 500


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "jsonl", "trec"])
@pytest.mark.parametrize("spec", ["relstring.5", "utility.1,-1,0,0", "11pt_avg.0.5,1"])
def test_real_list_measures_render_in_every_format(files, fmt, spec):
    result = invoke("-q", "-m", spec, "--format", fmt, *files)
    assert result.exit_code == 0, result.output
    if spec == "relstring.5":
        assert "'1-'" in result.stdout or '"1-"' in result.stdout or "1-" in result.stdout


@pytest.mark.parametrize("args", [
    ["-M", "99999999999999999999"], ["-M", "1_0"], ["-M", "１０"], ["-M", "-1"],
    ["--stream", "--chunk-size", "99999999999999999999"], ["--chunk-size", "0"],
    ["-N", "99999999999999999999"], ["-j", "99999999999999999999"],
    ["-l", "-1"], ["-l", "1_0"], ["-l", "99999999999"],
])
def test_integer_options_are_bounded(files, args):
    stderr = _one_error_line(invoke(*args, *files))
    assert stderr.startswith("Usage:") or stderr.startswith("Error:")
    assert f"Invalid value for '{args[0]}'" in stderr or f"Invalid value for '{args[-2]}'" in stderr


def test_an_integer_option_takes_a_number_as_it_is_and_bounds_it():
    # a default is a number already: taken as it is within the range, refused in the words the user's text is
    # refused in outside it (a default out of range is a mistake of the command's own)
    import click

    from trec_rag_eval.cli.params import Integer

    bounded = Integer(1, 10, "why not")
    assert bounded.convert(10, None, None) == 10
    assert bounded.convert("7", None, None) == 7
    for value in (0, "0"):
        with pytest.raises(click.BadParameter, match=r"^'0' is out of range: from 1 to 10 \(why not\)$"):
            bounded.convert(value, None, None)
    with pytest.raises(click.BadParameter, match="^'True' is not a whole number"):
        bounded.convert(True, None, None)


def test_negative_level_is_refused_not_miscounted(files):
    # trec_eval -l -1 counts nothing consistently: num_rel_ret skips the unjudged document x while
    # P and map count it as relevant. Refused: a negative judgment means "not judged".
    stderr = _one_error_line(invoke("-l", "-1", "-m", "num_rel_ret", *files))
    assert "a negative level would make unjudged documents relevant" in stderr


@pytest.mark.parametrize("args", [["--seed", "-1"], ["--seed", "99999999999999999999999"],
                                  ["--n-resamples", "99999999999999999999"], ["--alpha", "nan"],
                                  ["--alpha", "1_0"], ["--confidence", "2"]])
def test_compare_options_are_bounded(files, args):
    q, r = files
    stderr = _one_error_line(invoke("compare", *args, q, r, r))
    assert "Invalid value" in stderr


def test_randomization_on_a_single_query(tmp_path):
    q = tmp_path / "q.txt"
    q.write_text("1 0 a 1\n")
    a = tmp_path / "a.txt"
    a.write_text("1 Q0 a 1 2 A\n")
    b = tmp_path / "b.txt"
    b.write_text("1 Q0 a 1 2 B\n1 Q0 x 1 3 B\n")
    result = invoke("compare", "--test", "randomization", "-m", "P@1", "--n-resamples", "100", str(q), str(a), str(b))
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("fmt", ["json", "csv", "jsonl", "table"])
def test_measure_order_is_kept_outside_trec_format(files, fmt):
    result = invoke("-m", "nDCG@10", "-m", "Rprec", "-m", "P.5", "-m", "infAP", "-m", "AP", "--format", fmt, *files)
    assert result.exit_code == 0, result.output
    names = ["nDCG@10", "Rprec", "P@5", "infAP", "AP"]
    if fmt == "json":
        assert list(json.loads(result.stdout)["summary"]) == names
    else:
        positions = [result.stdout.index(name) for name in ["nDCG", "Rprec", "infAP", "AP "] if name in result.stdout]
        assert positions == sorted(positions)


def test_trec_format_keeps_trec_eval_order(files):
    result = invoke("-m", "infAP", "-m", "Rprec", "-m", "P.5", "--format", "trec", *files)
    assert [line.split()[0] for line in result.stdout.splitlines()] == ["Rprec", "P_5", "infAP"]


@pytest.mark.parametrize("keywords", [{"relevance_level": -1}, {"max_retrieved": 2**64}, {"num_docs": 2**70}])
def test_library_settings_are_bounded(keywords):
    from trec_rag_eval.core.settings import Settings
    from trec_rag_eval.errors import UsageError

    with pytest.raises(UsageError, match=f"{next(iter(keywords))} must be from"):
        Settings(**keywords)


@pytest.mark.parametrize("command", [["fuse", "RUN_A", "RUN_B"], ["report", "QRELS", "RUN_A", "RUN_B", "--no-plots"]])
def test_a_required_output_left_out_is_a_usage_error_not_a_traceback(command, tmp_path):
    # click 8.4 took an explicit default=None for a given value: a required -o could be missing and the
    # command ended in a TypeError traceback on None
    from click.testing import CliRunner

    from trec_rag_eval.cli import cli

    fixtures = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fixtures")
    paths = {"QRELS": os.path.join(fixtures, "qrels.txt"), "RUN_A": os.path.join(fixtures, "run_bm25.txt"),
             "RUN_B": os.path.join(fixtures, "run_hybrid.txt")}
    result = CliRunner().invoke(cli, [paths.get(word, word) for word in command])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Missing option '-o'" in result.output
