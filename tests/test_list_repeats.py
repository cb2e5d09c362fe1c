"""A document given twice in one query's list of ids ({query_id: [doc_id, ...]}) is refused naming both
positions, for judgments and for runs, and 1 beside "1" in one list names both spellings."""

from __future__ import annotations

import pytest

from trec_rag_eval.errors import InputFormatError


@pytest.mark.parametrize(("qrels", "run", "said"), [
    ({"q": {"a": 1}}, {"q": ["a", "b", "a"]}, "run (dict): query 'q': document 'a' listed twice in its list "
                                               "(positions 1 and 3)"),
    ({"q": ["a", "a"]}, {"q": ["a"]}, "qrels (dict): query 'q': document 'a' judged twice in its list "
                                      "(positions 1 and 2)"),
    ({"q": {"1": 1}}, {"q": ["1", 1]}, "run (dict): query 'q': document '1' listed twice in its list "
                                       "(as '1' at position 1 and as 1 at position 2)"),
])
def test_a_document_twice_in_a_list_of_ids_names_both_positions(qrels, run, said):
    # before: ValueError: invalid literal for int() with base 10: 'a', raised while wording the error
    import trec_rag_eval as tre

    with pytest.raises(InputFormatError) as info:
        tre.evaluate(qrels, run, "P@5")
    assert str(info.value) == said
