"""The plain-text tables and verdict lines every renderer of a comparison, all pairs and a plan prints."""

from trec_rag_eval.render.text_table import aligned_lines, labelled_lines


def test_columns_as_wide_as_their_widest_cell_without_a_trailing_space():
    rows = [["run", "P@5", "note"], ["bm25", "0.4", ""], ["hybrid-long", "0.52", "x"]]
    assert aligned_lines(rows, right={1}) == ["run           P@5  note",
                                              "bm25          0.4",
                                              "hybrid-long  0.52  x"]


def test_verdict_lines_pad_their_labels_to_the_widest_asked_for():
    items = [("P@5", "A better"), ("nDCG@10", "not significant")]
    assert labelled_lines(items) == ["  P@5      A better", "  nDCG@10  not significant"]
    # the widest of every measure, though one has no line: "recall@1000" is 11 characters
    assert labelled_lines(items[:1], ["P@5", "recall@1000"]) == ["  P@5          A better"]
    assert labelled_lines([]) == []
