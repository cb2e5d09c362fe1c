"""One field splitter and one number syntax on every reader path, as trec_eval's C reads them.

Expected values are worked out by hand from trec_eval's rules (docs/trec_eval_conventions.md §1): fields are
separated by C ``isspace`` (space, tab, CR, VT, FF), scores are ``strtod`` numbers, relevance ``atol``
integers, ASCII only. Every test runs on the small-file line reader and on the polars reader.
"""

from __future__ import annotations

import gzip

import pytest
from conftest import invoke

from trec_rag_eval.syntax import atof_prefix, atol_prefix, parse_integer, parse_real, quote, split_fields

pytestmark = pytest.mark.usefixtures("table_form")

UNICODE_SPACES = ["\xa0", "\u2003", "\u3000", "\x85", "\u2028", "\u2029", "\x1c", "\x1d", "\x1e", "\x1f"]


def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return str(path)


def _counts(tmp_path, qrels, run, *extra):
    q = _write(tmp_path, "qrels.txt", qrels)
    r = _write(tmp_path, "run.txt", run)
    return invoke("--format", "trec", "-m", "num_ret", "-m", "num_rel_ret", "-m", "P.1", *extra, q, r)


@pytest.mark.parametrize("space", UNICODE_SPACES, ids=[f"U+{ord(c):04X}" for c in UNICODE_SPACES])
def test_unicode_whitespace_is_part_of_a_field(tmp_path, space):
    # 'b<space>c' is one doc id for trec_eval: the line has 6 fields, the score is 1.0, and the doc
    # is judged relevant under that same id. Splitting it would read the rank 2 as the score.
    doc = f"b{space}c"
    result = _counts(tmp_path, f"1 0 a 0\n1 0 {doc} 1\n", f"1 Q0 {doc} 2 1.0 r\n1 Q0 a 1 0.5 r\n")
    assert result.stderr == ""
    assert result.stdout == ("num_ret               \tall\t2\nnum_rel_ret           \tall\t1\n"
                             "P_1                   \tall\t1.0000\n")


@pytest.mark.parametrize("separator", ["\t", "\x0b", "\x0c", "\r", "  "], ids=["tab", "VT", "FF", "CR", "2sp"])
def test_c_whitespace_separates_fields(tmp_path, separator):
    # C isspace: a VT, FF or CR inside a line separates two fields, on both reader paths
    run = f"1{separator}Q0 a 1 2.0 r\n1 Q0 b{separator}2 1.0 r\n"
    result = _counts(tmp_path, f"1 0{separator}a 1\n1 0 b 0\n", run)
    assert result.stderr == ""
    assert result.stdout == ("num_ret               \tall\t2\nnum_rel_ret           \tall\t1\n"
                             "P_1                   \tall\t1.0000\n")


@pytest.mark.parametrize("score", ["1_000", "１２", "٩٩", "1.0f", "0x", "1e", "--1", "+ 1", "nan(x y)"])
def test_scores_beyond_c_syntax_are_refused(tmp_path, score):
    result = _counts(tmp_path, "1 0 a 1\n", f"1 Q0 a 1 {score} r\n")
    assert result.exit_code == 1
    assert result.stderr.startswith(f"Error: {tmp_path / 'run.txt'}:1: score must be a number, got ")


@pytest.mark.parametrize("relevance", ["1_0", "１", "٩", "1.0", "1e2", "0x1"])
def test_relevance_beyond_c_integers_is_refused(tmp_path, relevance):
    result = _counts(tmp_path, f"1 0 a {relevance}\n", "1 Q0 a 1 1 r\n")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tmp_path / 'qrels.txt'}:1: relevance must be an integer, "
                             f"got {relevance!r}: '1 0 a {relevance}'\n")


@pytest.mark.parametrize("relevance", ["99999999999999999999", "2147483648", "-2147483649"])
def test_relevance_out_of_range_is_refused(tmp_path, relevance):
    result = _counts(tmp_path, f"1 0 a {relevance}\n", "1 Q0 a 1 1 r\n")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tmp_path / 'qrels.txt'}:1: relevance must be an integer from -2147483648 "
                             f"to 2147483647, got {relevance!r}: '1 0 a {relevance}'\n")


def test_c_number_forms_are_read_as_strtod_reads_them(tmp_path):
    # hex 0x10 = 16 outranks 15; 'Infinity' outranks everything; '+.5e1' = 5; 1e400 overflows to inf
    # and ties with Infinity, so doc id descending puts 'e' before 'd'.
    run = ("1 Q0 a 1 15 r\n1 Q0 b 2 0x10 r\n1 Q0 c 3 +.5e1 r\n1 Q0 d 4 Infinity r\n1 Q0 e 5 1e400 r\n"
           "1 Q0 f 6 -INF r\n")
    result = _counts(tmp_path, "1 0 a 0\n1 0 b 1\n1 0 e 1\n", run, "-q", "-m", "relstring.6", "-m", "P.3")
    assert result.stderr == ""
    assert "relstring_6           \t1\t'1-10--'\n" in result.stdout  # e d b a c f


def test_a_byte_order_mark_is_dropped_on_every_path(tmp_path):
    # the same bytes give the same numbers below and above the small-file threshold, gzip or not
    qrels = b"\xef\xbb\xbf1 0 a 1\n1 0 b 1\n"
    run = b"\xef\xbb\xbf1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n"
    expected = ("num_ret               \tall\t2\nnum_rel_ret           \tall\t2\n"
                "P_1                   \tall\t1.0000\n")
    assert _counts(tmp_path, qrels, run).stdout == expected
    q = _write(tmp_path, "q.gz", gzip.compress(qrels))
    r = _write(tmp_path, "r.gz", gzip.compress(run))
    result = invoke("--format", "trec", "-m", "num_ret", "-m", "num_rel_ret", "-m", "P.1", q, r)
    assert result.stdout == expected
    streamed = invoke("--stream", "--format", "trec", "-m", "num_ret", "-m", "num_rel_ret", "-m", "P.1", q, r)
    assert streamed.stdout == expected


def test_a_mark_inside_the_file_is_data(tmp_path):
    # only the first bytes of a file may be a byte-order mark; later it is part of the query id '\ufeff2'
    run = "1 Q0 a 1 2 r\n\ufeff2 Q0 b 1 1 r\n"
    result = _counts(tmp_path, "1 0 a 1\n2 0 b 1\n", run, "-q")
    assert "num_ret               \t2\t0\n" in result.stdout  # query 2 is missing from the run


def test_syntax_functions():
    assert split_fields(" a\tb\x0bc\x0cd\re  f\xa0g ") == ["a", "b", "c", "d", "e", "f\xa0g"]
    assert parse_real("0x1.8p1") == 3.0 and parse_real("-inf") == float("-inf")
    assert parse_real("1e-400") == 0.0
    with pytest.raises(ValueError, match="not a number"):
        parse_real(" 1")
    assert parse_integer("-007") == -7
    with pytest.raises(ValueError, match="out of range"):
        parse_integer("9223372036854775808")
    # atol / atof as trec_eval reads -m parameters: a prefix, the rest ignored, nothing gives 0
    assert atol_prefix("23.4") == 23 and atol_prefix("abc") == 0 and atol_prefix("５") == 0
    assert atol_prefix(" -99999999999999999999x") == -(2**63)  # saturates as glibc's strtol
    assert atof_prefix(".25x") == 0.25 and atof_prefix("0x10") == 16.0 and atof_prefix("٩") == 0.0
    assert quote("x" * 100) == repr("x" * 80) + "... (100 characters)"


def test_a_huge_id_is_quoted_short_with_its_length(tmp_path):
    doc = "x" * 1_000_000
    result = _counts(tmp_path, "1 0 a 1\n", f"1 Q0 {doc} 1 1 r\n1 Q0 {doc} 2 0.5 r\n")
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tmp_path / 'run.txt'}:2: document {doc[:80]!r}... (1000000 characters) "
                             "listed twice for query '1' (first at line 1)\n")
    bad = _counts(tmp_path, "1 0 a 1\n", f"1 Q0 a 1 x{doc} r\n")
    assert bad.stderr == (f"Error: {tmp_path / 'run.txt'}:1: score must be a number, got {'x' * 80!r}... "
                          f"(1000001 characters): {('1 Q0 a 1 x' + doc)[:80]!r}... (1000012 characters)\n")


@pytest.mark.parametrize("run", ["\n", "\n\n  \n", "# only a comment\n\n"])
def test_a_run_without_a_result_line_is_an_error(tmp_path, run):
    # decided (docs/evaluator.md, Bad input): trec_eval -c would score every query 0; an empty run is nearly always a
    # crashed retriever or a truncated file, so it is refused, naming the file
    result = _counts(tmp_path, "1 0 a 1\n", run)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: {tmp_path / 'run.txt'}: no results found, expected lines of "
                             "query_id Q0 doc_id rank score run_tag\n")


@pytest.mark.parametrize("space", ["\xa0", "\u3000", "\x1c"])
def test_a_unicode_space_in_place_of_a_separator_is_named(tmp_path, space):
    result = _counts(tmp_path, f"1 0 a 1\n1 0 b{space}1\n", "1 Q0 a 1 1 r\n")
    name = {"\xa0": "no-break space", "\u3000": "ideographic space", "\x1c": "control character"}[space]
    assert result.stderr == (
        f"Error: {tmp_path / 'qrels.txt'}:2: expected 4 columns (query_id iteration doc_id relevance), got 3 "
        f"(the {name} U+{ord(space):04X} is part of a field, not a separator: fields are separated by spaces "
        f"or tabs): {f'1 0 b{space}1'!r}\n")


@pytest.mark.parametrize("grade", ["1_0", "１", "99999999999"])
def test_llm_judgment_grades_take_the_qrels_syntax(tmp_path, grade):
    from trec_rag_eval.errors import InputFormatError
    from trec_rag_eval.io.judgments import read_llm_judgments

    sidecar = _write(tmp_path, "j.llm.tsv", f"query_id\tdoc_id\tgrade\tkind\tmodel\n1\td\u2028x\t{grade}\thole\tm\n")
    with pytest.raises(InputFormatError, match=":2: the grade .* is not an integer from -2147483648 to 2147483647"):
        read_llm_judgments(sidecar)


def test_the_fast_path_takes_plain_files_and_sees_pairs_across_windows(tmp_path):
    # a plain run larger than many scanning windows stays on the fast path (a space at a window's
    # end once sent every large run the slow way); two spaces are seen wherever the windows cut
    # them: every position around the end of the 8th window
    from trec_rag_eval.io.trec.fast_path import LAYOUT_WINDOW_BYTES, _layout_of_file, polars_can_read
    from trec_rag_eval.io.trec.qrels_runs import Source

    line = b"1 Q0 d1 1 2.5 tag\n"
    plain = line * ((9 << 20) // len(line))
    path = tmp_path / "run.txt"
    cut_at = 8 * LAYOUT_WINDOW_BYTES
    # letters around the two spaces, so no other byte pair gives them away
    doubled = [plain[:at - 2] + b"ab  cd" + plain[at + 4:] for at in range(cut_at - 2, cut_at + 10)]
    for data, readable in ((plain, True), *((data, False) for data in doubled),
                           (plain + b"1 Q0 d2 1 2.5 tag ", False), (plain + "\u00e9".encode() + b"\n", True),
                           (plain + b"\xff\n", False)):
        path.write_bytes(data)
        assert (not _layout_of_file(str(path))[0]) is readable
        assert polars_can_read(Source(str(path), data))[0] is readable


@pytest.mark.parametrize("field", range(6))
def test_bytes_that_are_not_utf8_in_a_large_run_name_their_line(tmp_path, field):
    # pyarrow's parse no longer checks UTF-8 (the separator check decodes any file with a byte above
    # 127 and keeps the parse only for a UTF-8 file): a bad byte in any field of a large run still
    # sends it the careful way, which names the line and the byte
    lines = [f"1 Q0 d{i} {i + 1} {1000 - i} tag\n".encode() for i in range(60_000)]
    fields = lines[7].split(b" ")
    fields[field] = fields[field][:1] + b"\xe9" + fields[field][1:]
    lines[7] = b" ".join(fields)
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("1 0 d1 1\n")
    run.write_bytes(b"".join(lines))
    assert run.stat().st_size > 1 << 20  # above SMALL_FILE_BYTES (unless table_form lowered it): the fast path first
    result = invoke("-m", "P.1", str(qrels), str(run))
    assert result.exit_code == 1, result.output
    assert result.stderr == f"Error: {run}:8: not UTF-8 text (byte 0xe9)\n"


@pytest.mark.parametrize("where", [0, 12_345, 29_999, 59_999])
def test_a_nan_score_anywhere_in_a_large_run_names_its_line(tmp_path, monkeypatch, where):
    # the fast reader sees a NaN score in any of its chunks (the first, one in the middle, the last
    # line of a chunk, the file's last line) and leaves the file to the careful reader, which names it
    from trec_rag_eval.io.trec import fast_path

    monkeypatch.setattr(fast_path, "RUN_BLOCK_BYTES", 64 << 10)  # many chunks
    lines = [f"1 Q0 d{i} {i + 1} {60_000 - i} tag\n" for i in range(60_000)]
    lines[where] = f"1 Q0 d{where} {where + 1} nan tag\n"
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("1 0 d1 1\n")
    run.write_text("".join(lines))
    result = invoke("-m", "P.1", str(qrels), str(run))
    assert result.exit_code == 1, result.output
    assert result.stderr == (f"Error: {run}:{where + 1}: score is NaN, which has no place in a ranking: "
                             f"'1 Q0 d{where} {where + 1} nan tag'\n")


@pytest.mark.parametrize("values,dtype", [([1, 2**40], "Int64"), ([1, 2**63 + 5], "UInt64"), ([1.0, 1e30], "Float64")])
def test_parquet_relevance_takes_the_same_range(tmp_path, values, dtype):
    import polars as pl

    qrels = tmp_path / "q.parquet"
    pl.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": values},
                 schema={"query_id": pl.Utf8, "doc_id": pl.Utf8, "relevance": getattr(pl, dtype)}).write_parquet(qrels)
    result = invoke("-m", "P.1", str(qrels), _write(tmp_path, "run.txt", "1 Q0 a 1 1 r\n"))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"Error: {qrels}: row 2: relevance must be an integer")  # 1e30: not one
    assert result.stderr.count("\n") == 1
