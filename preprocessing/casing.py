"""How often English writes a word capitalised (models/word_casing): the evidence a capital letter gives for a name."""

from __future__ import annotations

from collections.abc import Mapping

from preprocessing.registry import ModelUnavailable, verified_model

WORD_CASING_MODEL = "word_casing"
TABLE = "casing.tsv"
# Capitalised in fewer than one in five of its uses, sentence starts included: a common word ("dentist" 0.06,
# "settings" 0.06, "ping" 0.10), whose capital at a sentence start or in a heading says nothing.
COMMON_WORD_SHARE = 0.2
# Capitalised in nine uses in ten: a name ("priya" 0.92, "galway" 0.95) wherever it stands, even at a sentence start,
# where interjections and greetings are nearly always capitalised too ("ah" 0.86, "hi" 0.76).
NAME_WORD_SHARE = 0.9
# A capital in mid-sentence marks a name already; the word need only be capitalised more often than not
# ("Spotify" 0.69, "Acme" 0.73), which rules out capitalised common words ("the Settings page", 0.06).
MARKED_NAME_SHARE = 0.5
# The table's shares have two decimals: one float object each, shared by every word that has it.
_SHARES = {f"{i / 100:.2f}": i / 100 for i in range(101)}


class WordCasing:
    """Lower-case word -> share of its uses written Capitalised; words the table lacks are unknown (None)."""

    def __init__(self, shares: Mapping[str, float]) -> None:
        self._shares = shares

    @classmethod
    def load(cls) -> "WordCasing":
        """The table in models/word_casing after its sha256 matched the manifest (ModelUnavailable otherwise)."""
        fields = verified_model(WORD_CASING_MODEL).file(TABLE).read_text(encoding="utf-8").split()
        return cls(dict(zip(fields[0::2], map(_SHARES.__getitem__, fields[1::2]))))

    @classmethod
    def load_or_empty(cls) -> "WordCasing":
        """The table, or an empty one when it is missing or corrupt: spaCy's names are then taken as they come, and
        a missing table costs only the casing evidence, not the entity stage."""
        try:
            return cls.load()
        except ModelUnavailable:
            return cls({})

    def capitalised_share(self, word: str) -> float | None:
        return self._shares.get(word.lower())

    def is_common_word(self, word: str) -> bool:
        share = self._shares.get(word.lower())
        return share is not None and share < COMMON_WORD_SHARE

