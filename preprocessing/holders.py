"""Whose fact a statement states: the user's own ("my", "our team's"), or a named other's (a possessor, a named group)."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())
# Nouns that name a group as the holder of a fact ("the platform team's standup", "the Quince team moved their
# triage", "Ormsby's Eastport subsidiary moved its deadline"). Not "branch" or "office": those are as often the value.
GROUP_NOUNS = frozenset("team squad department dept subsidiary".split())
# A possessive of time or quantity states no holder ("three months' notice", "today's build").
TIME_NOUNS = frozenset("second seconds minute minutes hour hours day days week weeks month months year years today "
                       "tonight tomorrow yesterday".split())
SUBJECT_ROLES = ("nsubj", "nsubjpass", "poss")
# Only a text with a possessive or a group noun can name another holder: the others are not parsed.
_MAY_NAME_A_HOLDER = re.compile(r"\w(?:'s|’s|s'|s’)\W|\b(?:" + "|".join(sorted(GROUP_NOUNS)) + r")\b", re.I)
_WORD = re.compile(r"[a-z0-9]+")
REMEMBERED_TEXTS = 4096


@dataclass(frozen=True)
class Holders:
    first_person: bool  # the user speaks of their own ("I", "my", "our")
    others: frozenset[str]  # named holders: a possessor ("theo", "the platform team"), a named group ("quince team")


def read_holders(doc) -> Holders:
    """The holders a parsed text (a spaCy Doc) names."""
    first = any(_first_person(t) for t in doc)
    others: set[str] = set()
    for token in doc:
        if token.dep_ == "poss" and token.tag_ not in ("PRP", "PRP$") and token.head.pos_ in ("NOUN", "PROPN") \
                and any(child.tag_ == "POS" for child in token.children) and token.lower_ not in TIME_NOUNS \
                and not any(child.lower_ in FIRST_PERSON for child in token.children):  # "our team's": the user's
            # The possessor and the names compounded with it ("the platform team's"), not the whole subtree: a
            # parse error there can hang a verb on it ("Switched Marlow's formatter").
            words = [c.lower_ for c in token.children if c.dep_ == "compound" and c.i < token.i] + [token.lower_]
            if words and not FIRST_PERSON & set(words):
                others.add(" ".join(words))
        elif token.lower_ in GROUP_NOUNS and token.dep_ in SUBJECT_ROLES:
            modifiers = [c.lower_ for c in token.children if c.dep_ in ("compound", "amod", "nmod")]
            if modifiers and not FIRST_PERSON & set(modifiers):
                others.add(" ".join([*modifiers, token.lower_]))
    return Holders(first, frozenset(others))


def _first_person(token) -> bool:
    """"I", "my", "our"...; not a word glued to a hyphen ("us-east" is a region)."""
    glued = not token.whitespace_ and token.i + 1 < len(token.doc) and token.doc[token.i + 1].text == "-"
    return token.lower_ in FIRST_PERSON and not glued


class HolderReader:
    """text -> Holders, through a spaCy pipeline, remembering the texts it read (a memory meets many new texts)."""

    def __init__(self, parse: Callable[[str], object]) -> None:
        self._parse = parse
        self._read: OrderedDict[str, Holders] = OrderedDict()
        self._lock = threading.Lock()

    def holders(self, text: str) -> Holders:
        with self._lock:
            known = self._read.get(text)
        if known is not None:
            return known
        read = read_holders(self._parse(text))
        with self._lock:
            self._read[text] = read
            while len(self._read) > REMEMBERED_TEXTS:
                self._read.popitem(last=False)
        return read

    def names_other_holder(self, existing: str, new_text: str) -> bool:
        """The new text states its fact of a holder the memory does not name, and the memory's fact is the user's own
        (the new text does not speak of the user), or of a holder the new text does not name: "theo's allergy retest
        came back clear" does not update "I'm allergic to penicillin", nor "the platform team moved their deploys to
        ap-south" "my team's services deploy to us-east"."""
        if not _MAY_NAME_A_HOLDER.search(new_text + " "):
            return False
        new = self.holders(new_text)
        existing_words, new_words = set(_WORD.findall(existing.lower())), set(_WORD.findall(new_text.lower()))
        only_new = {h for h in new.others if not set(_WORD.findall(h)) <= existing_words}
        if not only_new:
            return False
        old = self.holders(existing)
        if old.first_person and not new.first_person:
            return True
        return any(not set(_WORD.findall(h)) <= new_words for h in old.others)
