"""Whose fact a statement states: the user's own ("my", "our team's"), or a named other's (a possessor, a named group,
a subject its own possessive pronoun points back to), or, by the holder model, another's with no such mark."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

FIRST_PERSON = frozenset("i me my mine myself we us our ours ourselves".split())
# Nouns that name a group as the holder of a fact ("the platform team's standup", "the Quince team moved their
# triage", "Ormsby's Eastport subsidiary moved its deadline"). Not "branch" or "office": those are as often the value.
GROUP_NOUNS = frozenset("team squad department dept subsidiary".split())
# People the user names by their relation to the user: "my sister's dentist" is the sister's, not the user's.
PEOPLE_NOUNS = frozenset("mum mom mother dad father parents sister brother son daughter wife husband partner girlfriend "
                         "boyfriend nephew niece cousin aunt uncle grandma grandpa grandmother grandfather neighbour "
                         "neighbor kid kids child children boss colleague coworker friend flatmate roommate "
                         "landlord".split())
# A possessive of time or quantity states no holder ("three months' notice", "today's build").
TIME_NOUNS = frozenset("second seconds minute minutes hour hours day days week weeks month months year years today "
                       "tonight tomorrow yesterday".split())
SUBJECT_ROLES = ("nsubj", "nsubjpass", "poss")
CLAUSE_SUBJECTS = ("nsubj", "nsubjpass")
# A possessive pronoun of the third person: "Kasia switched her day off" states Kasia's day off.
THIRD_PERSON_POSSESSIVES = frozenset("his her hers their theirs".split())
# What may stand between a possessive's marker and the noun it possesses ("Theo's new swimming lessons").
NOUN_PHRASE_TAGS = frozenset("JJ JJR JJS NN NNS NNP NNPS CD VBG HYPH".split())
# Only a text with a possessive, a group noun or a possessive pronoun can name another holder: the others are not
# parsed.
_MAY_NAME_A_HOLDER = re.compile(r"\w(?:'s|’s|s'|s’)\W|\b(?:" + "|".join(sorted(GROUP_NOUNS | THIRD_PERSON_POSSESSIVES))
                                + r")\b", re.I)
# A question with one of these asks about someone else too ("does my brother still like Fornacella's?"): the holder
# model's reading of a hit as another's own fact says nothing against it.
THIRD_PERSON_PRONOUNS = frozenset("he him his she her hers they them their theirs".split())
# A question with one of these asks for a person, or about one it does not name ("Who approves my claims now?", "the
# guy I climb with"): its answer names a person, which is what the holder model reads as another's own fact.
PERSON_WORDS = frozenset("who whom whose guy guys person people someone somebody anyone anybody".split())
_CAPITALISED_WORD = re.compile(r"(?<=\s)(?!I\b|I['’])[A-Z]\w*")
# An assistant's own note names the person it serves "the user" ("The user dislikes comments that restate the code").
_USER_WORD = re.compile(r"\buser(?:'s|’s)?(?!\w)", re.I)
_FIRST_PERSON_WORD = re.compile(r"\b(?:" + "|".join(sorted(FIRST_PERSON)) + r")\b(?!-)", re.I)
_WORD = re.compile(r"[a-z0-9]+")
# One person by several names: "Mum went back home" answers "is my mother still living with us?".
KIN_NAMES = {
    "mother": "mum mom mommy mummy mama mother", "father": "dad daddy papa father",
    "grandmother": "grandma granny gran nan nana grandmother", "grandfather": "grandpa grandad granddad grandfather",
    "partner": "partner wife husband spouse girlfriend boyfriend", "child": "kid kids child children",
}
_KIN = {name: kin for kin, names in KIN_NAMES.items() for name in names.split()}
REMEMBERED_TEXTS = 16384


@dataclass(frozen=True)
class Holders:
    first_person: bool  # the user speaks of their own ("I", "my", "our")
    others: frozenset[str]  # named holders: a possessor ("theo", "platform team"), a named group ("quince team")


@dataclass(frozen=True)
class StatementHolders:
    """Whose fact a stored statement states, as search reads it: by the parse, and by the holder model (None
    without it)."""
    holders: Holders
    other: bool | None


# The version of the parse rules below: a reading kept under other rules is made again (memory/holder_readings.py).
RULES_DIGEST = hashlib.md5(Path(__file__).read_bytes(), usedforsecurity=False).hexdigest()[:12]


def readings_tag(model: str | None) -> str:
    """What a kept reading of statements was made with: the holder model (HolderModel.version) and these parse
    rules."""
    return f"{model or 'no-model'}:{RULES_DIGEST}"


def read_holders(doc) -> Holders:
    """The holders a parsed text (a spaCy Doc) names."""
    mine = {t.i for t in doc if _first_person(t)}
    others: set[str] = set()
    for token in doc:
        if _possessor(token):
            _claim(token, _names(token), token.lower_ in PEOPLE_NOUNS, mine, others)
        elif token.lower_ in GROUP_NOUNS and token.dep_ in SUBJECT_ROLES:
            modifiers = [c.lower_ for c in token.children if c.dep_ in ("compound", "amod", "nmod")]
            if modifiers and not FIRST_PERSON & set(modifiers):
                others.add(" ".join([*modifiers, token.lower_]))
        elif _named_subject(token) and _pointed_back_to(token):
            names = _names(token)
            _claim(token, names, bool(PEOPLE_NOUNS & set(names)), mine, others)
    return Holders(bool(mine), frozenset(others))


def _names(token) -> list[str]:
    """A holder's words: the token and the names compounded with it ("the platform team's"), not its whole subtree:
    a parse error there can hang a verb on it ("Switched Marlow's formatter")."""
    return [c.lower_ for c in token.children if c.dep_ == "compound" and c.i < token.i] + [token.lower_]


def _claim(token, names: list[str], relative: bool, mine: set[int], others: set[str]) -> None:
    """Name the token a holder of the fact, unless the user owns it and it is no relative ("our team's standup", "our
    cat Biscuit loves her kibble" are the user's); a relative the user owns takes the fact from the user ("my sister's
    dentist", "my sister moved her appointment")."""
    owned_by_user = {c.i for c in token.children if c.i in mine}
    if owned_by_user and not relative:
        return
    mine -= owned_by_user
    others.add(" ".join(names))


def _named_subject(token) -> bool:
    """A clause's subject that can hold a fact of its own: a name ("Kasia", "dan"), a relative ("Dad", "my sister"),
    or a bare noun ("sales"); not a pronoun, a group noun (read above) or a noun with a determiner ("the client")."""
    if token.dep_ not in CLAUSE_SUBJECTS or token.lower_ in GROUP_NOUNS:
        return False
    if token.pos_ == "PROPN" or token.lower_ in PEOPLE_NOUNS:
        return True
    return token.pos_ == "NOUN" and not any(c.dep_ in ("det", "poss") for c in token.children)


def _pointed_back_to(subject) -> bool:
    """A third-person possessive pronoun in the subject's own clause points back to it: "Kasia switched her day off",
    "dan renewed his", "Dad thought his blood type was A positive" (through a clause whose subject is what the pronoun
    owns); not "Marta said the client moved his meeting", where another subject comes between, nor "her friend Javier
    takes over", where the pronoun is inside the subject and points to someone else."""
    verb = subject.head
    # Inside a subject of the verb: the parser may split "his cousin Javier" into two subjects.
    within_subject = {t.i for c in verb.children if c.dep_ in CLAUSE_SUBJECTS for t in c.subtree}
    for token in verb.subtree:
        if token.lower_ not in THIRD_PERSON_POSSESSIVES or (token.lower_ in ("her", "their") and token.tag_ != "PRP$"):
            continue
        if token.i in within_subject:
            continue
        path = {token.i}
        for ancestor in token.ancestors:
            if ancestor.i == verb.i:
                return True
            if ancestor.pos_ in ("VERB", "AUX") and any(c.dep_ in CLAUSE_SUBJECTS and c.i not in path
                                                        for c in ancestor.children):
                break
            path.add(ancestor.i)
    return False


def _possessor(token) -> bool:
    """A noun in the possessive that owns a noun after it: "Theo's swimming lessons", not the contraction of "is" the
    parser can take for one ("knee's complaining", "Renovation's done, …", "Jonah's a good lead")."""
    if token.dep_ != "poss" or token.tag_ in ("PRP", "PRP$") or token.lower_ in TIME_NOUNS:
        return False
    marker = next((c for c in token.children if c.tag_ == "POS"), None)
    owned = token.head
    if marker is None or owned.pos_ not in ("NOUN", "PROPN") or owned.i <= marker.i:
        return False
    if owned.lower_.endswith("ing") and owned.i == marker.i + 1:
        after = token.doc[owned.i + 1] if owned.i + 1 < len(token.doc) else None
        if owned.dep_ == "ROOT" or after is None or after.is_punct or after.tag_ in ("RB", "IN", "RP", "TO"):
            return False  # "knee's complaining, so…", "Jonah's leaving on Friday": a verb the tagger read as a noun
    return all(t.tag_ in NOUN_PHRASE_TAGS and t.dep_ != "punct" for t in token.doc[marker.i + 1:owned.i])


def _first_person(token) -> bool:
    """"I", "my", "our"...; not a word glued to a hyphen ("us-east" is a region)."""
    glued = not token.whitespace_ and token.i + 1 < len(token.doc) and token.doc[token.i + 1].text == "-"
    return token.lower_ in FIRST_PERSON and not glued


def may_name_a_holder(text: str) -> bool:
    """Whether the text has a possessive, a group noun or "his", "her", "their": only such a text can name a holder
    of its own."""
    return bool(_MAY_NAME_A_HOLDER.search(text + " "))


def speaks_of_the_user(text: str) -> bool:
    """The text has a first-person word (without a parse; "us-east" is not one)."""
    return bool(_FIRST_PERSON_WORD.search(text))


def holders_differ(first_text: str, first: Holders, second_text: str, second: Holders) -> bool:
    """The second text states its fact of a holder the first does not name, and the first is the user's own (the
    second does not speak of the user), or of a holder the second does not name."""
    first_words, second_words = _words(first_text), _words(second_text)
    if all(_words(h) <= first_words for h in second.others):
        return False
    if first.first_person and not second.first_person:
        return True
    return any(not _words(h) <= second_words for h in first.others)


def _words(text: str) -> set[str]:
    """The text's words, each name of a relative as one ("mum" and "mother" are one person)."""
    return {_KIN.get(word, word) for word in _WORD.findall(text.lower())}


def names_the_user(text: str) -> bool:
    """The text names "the user" (an assistant's note about the person it serves): the holder model, which has read no
    such note, takes "the user" for a third party, so it is not asked about such a text."""
    return bool(_USER_WORD.search(text))


def asks_only_of_the_user(question: str, asked: Holders) -> bool:
    """The question is about the user's own fact alone: in the first person, naming no holder, relative, third-person
    pronoun or capitalised name, and asking for no person ("Which floor is my team on?", not "does my brother still
    like Fornacella's?", "where does my mentor Kasia sit?" or "who signs off my expenses now?")."""
    words = set(_WORD.findall(question.lower()))
    return asked.first_person and not asked.others \
        and not words & (PEOPLE_NOUNS | THIRD_PERSON_PRONOUNS | PERSON_WORDS) and not _CAPITALISED_WORD.search(question)


class HolderReader:
    """text -> Holders, through a spaCy parse, remembering the texts it read (a memory meets many new texts); and,
    with the holder model, whether texts state another's own fact with no mark the parse reads (the daemon keeps
    that reading per memory: memory_daemon/memory/holder_readings.py)."""

    def __init__(self, parse: Callable[[str], object],
                 others_model: Callable[[Sequence[str]], list[bool]] | None = None) -> None:
        self._parsed = lru_cache(maxsize=REMEMBERED_TEXTS)(lambda text: read_holders(parse(text)))
        self._others_model = others_model  # texts -> whether each states another's own fact (HolderModel.others)

    def statements(self, texts: Sequence[str]) -> list[StatementHolders]:
        """Each stored statement's holders by the parse, and by the holder model: another person's or group's own fact
        with no mark the parse reads ("legal moved down to floor 2", "hes gone off fornacella's"; None without it)."""
        others = self._others_model(texts) if self._others_model is not None else None
        return [StatementHolders(self.holders(text), None if others is None else others[i])
                for i, text in enumerate(texts)]

    def holders(self, text: str) -> Holders:
        """The text's holders; a text without a possessive, a group noun or a possessive pronoun is not parsed."""
        if not may_name_a_holder(text):
            return Holders(speaks_of_the_user(text), frozenset())
        return self._parsed(text)

    def names_other_holder(self, existing: str, new_text: str) -> bool:
        """Whether the new text states its fact of another holder than the memory: "theo's allergy retest came back
        clear" does not update "I'm allergic to penicillin", nor "the platform team moved their deploys to ap-south"
        "my team's services deploy to us-east"."""
        new = self.holders(new_text)
        # Not the holder model: it reads the next step of a chain on a shared thing as another's ("docs got ported
        # again, this time to Docusaurus so product can embed React widgets"), and would keep the older version current.
        return bool(new.others) and holders_differ(existing, self.holders(existing), new_text, new)
