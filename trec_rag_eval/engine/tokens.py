"""Word tokens for French and English text: the one analyser used by BM25 and by the overlap check.

Steps, always in this order: lowercase, fold accents (``é`` -> ``e``, by Unicode NFKD decomposition
minus combining marks), split on anything that is not a letter or a digit (so French elisions
``l'eau`` give ``l`` and ``eau``), drop one-letter tokens that are not digits, drop stop words
(folded the same way), then apply the optional stemmer. Queries and documents go through the same
steps, so folding can never make a query miss its document.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

# Snowball's French list and Lucene's English list, as shipped by bm25s (bm25s/stopwords.py, MIT),
# plus the question words that every query starts with and no passage is about.
_FRENCH = """
ai aie aient aies ait as au aura aurai auraient aurais aurait auras aurez auriez aurions aurons auront aux
avaient avais avait avec avez aviez avions avons ayant ayante ayantes ayants ayez ayons c ce ces d dans de
des du elle en es est et eu eue eues eurent eus eusse eussent eusses eussiez eussions eut eux eûmes eût
eûtes furent fus fusse fussent fusses fussiez fussions fut fûmes fût fûtes il ils j je l la le les leur
lui m ma mais me mes moi mon même n ne nos notre nous on ont ou par pas pour qu que qui s sa se sera serai
seraient serais serait seras serez seriez serions serons seront ses soient sois soit sommes son sont soyez
soyons suis sur t ta te tes toi ton tu un une vos votre vous y à étaient étais était étant étante étantes
étants étiez étions été étée étées étés êtes
comment quel quelle quels quelles pourquoi combien quand où lequel laquelle lesquels lesquelles
"""
_ENGLISH = """
a an and are as at be but by for if in into is it no not of on or such that the their then there these
they this to was will with
what how why when where which who whom do does
"""

_TOKEN = re.compile(r"[^\W_]+")


def fold_accents(text: str) -> str:
    """``"Élève à l'hôpital"`` -> ``"Eleve a l'hopital"``; ``œ``/``æ`` become ``oe``/``ae``."""
    decomposed = unicodedata.normalize("NFKD", text.replace("œ", "oe").replace("Œ", "OE").replace("æ", "ae"))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def stop_words(language: str, fold: bool = True) -> frozenset[str]:
    """The stop words of ``"fr"`` or ``"en"``, accent-folded when ``fold`` is true."""
    if language not in ("fr", "en"):
        raise ValueError(f"unsupported language {language!r}: expected 'fr' or 'en'")
    words = (_FRENCH if language == "fr" else _ENGLISH).split()
    return frozenset(fold_accents(w) if fold else w for w in words)


class Analyzer:
    """Callable text -> tokens with fixed settings (see the module docstring for the steps)."""

    def __init__(
        self,
        language: str = "fr",
        remove_stop_words: bool = True,
        fold: bool = True,
        stemmer: Callable[[str], str] | None = None,
    ) -> None:
        self.language = language
        self.fold = fold
        self.stop = stop_words(language, fold=fold) if remove_stop_words else frozenset()
        self.stemmer = stemmer

    def __call__(self, text: str) -> list[str]:
        text = text.lower()
        if self.fold:
            text = fold_accents(text)
        tokens = [t for t in _TOKEN.findall(text) if (len(t) > 1 or t.isdigit()) and t not in self.stop]
        if self.stemmer is not None:
            tokens = [self.stemmer(t) for t in tokens]
        return tokens
