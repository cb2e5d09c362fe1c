"""Run tags and file names are drawn as written: matplotlib must not parse them as TeX math (a tag
``$x^^y$`` ended ``report`` and ``compare --plot`` in a ParseSyntaxException, no report written)."""

from __future__ import annotations

import pytest

from trec_rag_eval.cli import main

pytest.importorskip("matplotlib")

TAGS = ["$x^^y$", "$\\foo{$", "a$b", "$\\alpha$"]


def _files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 1\n2 0 d1 1\n3 0 d3 1\n")
    runs = []
    for index, tag in enumerate(TAGS):
        path = tmp_path / f"run{index}.txt"
        docs = ["d1", "d2", "d3"][index % 3:] + ["d1", "d2", "d3"][: index % 3]
        path.write_text("".join(f"{q} Q0 {d} {r + 1} {3 - r} {tag}\n" for q in (1, 2, 3) for r, d in enumerate(docs)))
        runs.append(str(path))
    return str(qrels), runs


def _main(args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    return exit_info.value.code, capsys.readouterr()


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_compare_plot_draws_math_looking_run_tags_as_text(tmp_path, capsys, suffix):
    qrels, runs = _files(tmp_path)
    plot = tmp_path / f"plot{suffix}"
    code, captured = _main(["compare", qrels, *runs, "--plot", str(plot)], capsys)
    assert code in (0, None), captured.err
    assert "Traceback" not in captured.err and plot.stat().st_size > 0
    if suffix == ".svg":  # the text is kept as typed (SVG text as paths carries no string; the legend id does)
        assert "ParseSyntaxException" not in plot.read_text()


def test_report_with_math_looking_run_tags_is_written(tmp_path, capsys):
    qrels, runs = _files(tmp_path)
    page = tmp_path / "report.html"
    code, captured = _main(["report", qrels, *runs, "-o", str(page)], capsys)
    assert code in (0, None), captured.err
    text = page.read_text()
    assert "<img" in text or "<svg" in text
    assert all(tag.replace("&", "&amp;").replace("<", "&lt;") in text or tag in text for tag in ["$x^^y$", "a$b"])


def test_comparison_plot_from_python_draws_text_as_written(tmp_path):
    import trec_rag_eval

    qrels, runs = _files(tmp_path)
    comparison = trec_rag_eval.compare(qrels, {tag: run for tag, run in zip(TAGS, runs, strict=True)}, ["P@1", "MRR"])
    figure = comparison.plot()
    texts = [text.get_text() for text in figure.findobj(lambda artist: hasattr(artist, "get_text"))]
    assert any("$x^^y$" in text for text in texts)
    assert all(not text.get_parse_math() for text in figure.findobj(lambda a: hasattr(a, "get_parse_math"))
               if text.get_text())
    figure.savefig(tmp_path / "user.png")   # saved by the user, outside our code: still no TeX parsing
