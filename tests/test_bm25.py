"""The built-in BM25 engine and its French/English analyser, on hand-made corpora and the shipped one."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from trec_rag_eval.engine.bm25 import BM25Engine, read_corpus
from trec_rag_eval.engine.tokens import Analyzer, fold_accents
from trec_rag_eval.errors import InputFormatError, MissingDependencyError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = FIXTURES / "corpus_fr.jsonl"


@pytest.fixture(scope="module")
def shipped() -> BM25Engine:
    return BM25Engine(CORPUS)


def test_analyser_folds_accents_splits_elisions_and_drops_stop_words():
    assert Analyzer("fr")("Comment l'élève installe-t-il Python ? Œuvre, 3 chats") == [
        "eleve", "installe", "python", "oeuvre", "3", "chats"
    ]
    assert Analyzer("fr", remove_stop_words=False)("Où est l'eau") == ["ou", "est", "eau"]
    assert Analyzer("en")("How do I install Python on Windows?") == ["install", "python", "windows"]
    assert fold_accents("Ça déçoit à l'hôpital") == "Ca decoit a l'hopital"


def test_a_stemmer_is_applied_after_stop_words():
    assert Analyzer("fr", stemmer=lambda word: word[:4])("les tomates mûres") == ["toma", "mure"]


def test_bm25_score_matches_the_lucene_formula_by_hand():
    docs = [{"id": "a", "text": "chat noir"}, {"id": "b", "text": "chien blanc chat"},
            {"id": "c", "text": "oiseau"}]
    engine = BM25Engine(docs, k1=1.5, b=0.75)
    # Lucene's BM25 (no (k1 + 1) factor): idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)).
    # N = 3, df(chat) = 2: idf = ln(1 + (3 - 2 + 0.5) / (2 + 0.5)) = ln(1.6); avgdl = (2 + 3 + 1) / 3 = 2.
    # a: tf 1, dl 2 -> 1 / (1 + 1.5 * (0.25 + 0.75 * 2/2)) = 1 / 2.5
    # b: tf 1, dl 3 -> 1 / (1 + 1.5 * (0.25 + 0.75 * 3/2)) = 1 / 3.0625
    results = engine.search("chat", 10)
    assert [r["id"] for r in results] == ["a", "b"]            # c shares no word: not returned
    assert results[0]["score"] == pytest.approx(math.log(1.6) / 2.5, rel=1e-6)
    assert results[1]["score"] == pytest.approx(math.log(1.6) / 3.0625, rel=1e-6)


def test_equal_scores_come_out_in_doc_id_order_and_k_is_respected():
    docs = [{"id": doc_id, "text": "même texte"} for doc_id in ("z", "m", "a")]
    engine = BM25Engine(docs)
    assert [r["id"] for r in engine.search("texte", 10)] == ["a", "m", "z"]
    assert [r["id"] for r in engine.search("texte", 2)] == ["a", "m"]
    assert engine.search("le la les de", 10) == []               # stop words only


def _only_passage_with(word: str) -> str:
    """The id of the single shipped passage whose tokens contain ``word`` (checked, not assumed)."""
    analyze = Analyzer("fr")
    holders = [d["id"] for d in read_corpus(CORPUS) if word in analyze(d["text"])]
    assert len(holders) == 1, (word, holders)
    return holders[0]


@pytest.mark.parametrize(
    ("query", "distinctive_word", "expected_top"),
    [
        # Each query holds a word that occurs in exactly one passage, so BM25 must rank it first.
        ("certificat Let's Encrypt", "encrypt", "doc_https_certbot"),
        ("éviter les grumeaux dans la pâte", "grumeaux", "doc_cuisine_crepes"),
        ("qui a dessiné l'escalier de Chambord", "chambord", "doc_chateaux_loire"),
        ("se protéger d'un RANCONGICIEL", "rancongiciel", "doc_sauvegarde"),   # accents folded both sides
        ("la foudre tombe près de moi", "foudre", "doc_meteo_orages"),
        ("commande chmod pour un script", "chmod", "doc_linux_permissions"),
    ],
)
def test_shipped_corpus_ranks_the_passage_holding_a_distinctive_word_first(
    shipped, query, distinctive_word, expected_top
):
    assert _only_passage_with(distinctive_word) == expected_top
    assert shipped.search(query, 5)[0]["id"] == expected_top


def test_shipped_corpus_reverse_proxy_query_finds_both_nginx_passages(shipped):
    # "nginx" occurs in doc_nginx_proxy and doc_nginx_config only; "proxy" also in doc_nginx_proxy
    # (three times) and doc_python_web never: the proxy passage first, the config one second.
    top = [r["id"] for r in shipped.search("configurer nginx comme reverse proxy", 3)]
    assert top[:2] == ["doc_nginx_proxy", "doc_nginx_config"]


def test_shipped_fixtures_are_well_formed():
    docs = read_corpus(CORPUS)
    assert len(docs) == 50
    ids = {d["id"] for d in docs}
    dataset = json.loads((FIXTURES / "eval_dataset_fr.json").read_text(encoding="utf-8"))
    assert len(dataset) == 30
    for item in dataset:
        assert set(item["pertinents"]) <= ids and set(item["non_pertinents"]) <= ids
        assert set(item["pertinents"].values()) <= {1, 2, 3}


def test_corpus_errors_name_the_file_and_line(tmp_path):
    bad = tmp_path / "corpus.jsonl"
    bad.write_text('{"id": "a", "text": "x"}\n\n{"id": "b"}\n', encoding="utf-8")
    with pytest.raises(InputFormatError) as err:
        read_corpus(bad)
    assert str(err.value) == f'{bad}:3: expected an object with "id" and "text": \'{{"id": "b"}}\''
    bad.write_text('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n', encoding="utf-8")
    with pytest.raises(InputFormatError, match=r":2: duplicate document id 'a' \(first on line 1\)"):
        read_corpus(bad)


def test_missing_bm25s_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'trec-rag-eval\[bm25\]'"):
        BM25Engine([{"id": "a", "text": "x"}])
