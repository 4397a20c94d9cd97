"""Candidate (subject, predicate, object) fact triples read off one message's spaCy dependency parse."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from preprocessing.fact_lexicon import (
    ADJECTIVE_PREP,
    AGE,
    BARE_PASSIVE_DEPS,
    BE_FORMS,
    CHANGE,
    CHANGE_ADVERBS,
    CHOSE,
    CLOSING,
    DISCOURSE_NOUNS,
    ENDED,
    FENCE,
    FILLERS,
    HOSTED_ON,
    INDEFINITE,
    IS,
    IS_A,
    LEFT_MODIFIERS,
    LISTENS_ON,
    LOCATED_IN,
    MOVE_VERBS,
    MOVED_TO,
    NAME,
    NOUNISH,
    OPENING,
    OWNED_BY,
    PASSIVE_PREP_OBJECT,
    PERSON_NOUNS,
    PERSON_STATUS_WORDS,
    PLACE_VERBS,
    PORT,
    POSSESSIVE_PRONOUNS,
    Predicate,
    PREDICATE_NAME,
    PURPOSES,
    RENAME,
    RENAMED_TO,
    REPLACED_BY,
    RIGHT_MODIFIERS,
    RIGHT_PREPS,
    SCHEDULE_VERBS,
    SCHEDULED,
    SET_VERBS,
    STATE,
    STATUS,
    SUBJECT_PRONOUNS,
    TEAM,
    USER,
    USES,
    VERB_OBJECT,
    VERB_PREP_OBJECT,
    VERSION,
    VERSION_VERBS,
)
from preprocessing.parse_tree import (
    bare_infinitive_object,
    clauses_of,
    conjuncts_of,
    direct_object,
    glued_word,
    hedged,
    instead_of,
    is_question,
    is_status,
    is_time,
    is_version,
    is_wh,
    lemma_of,
    looks_like_path,
    misread_verb,
    negation_of,
    next_word,
    normalise_key,
    noun_predicate,
    only_glued_children,
    past_be,
    port_number,
    prep_objects,
    preps_of,
    rename_target,
    same_role_neighbour,
    strip_span,
    transient,
    vague,
)

# The patterns, their parse signatures and their limits are documented in docs/fact-extraction.md; the words they
# read are in fact_lexicon.py, the parse-tree readings they share in parse_tree.py.
MAX_TRIPLES = 16  # per message
MAX_SENTENCE_TOKENS = 80  # longer "sentences" are lists, logs or run-ons the parser gets wrong


@dataclass(frozen=True)
class FactTriple:
    subject: str  # as written, minus determiners and possessive pronouns; "user"/"team" for I/we
    predicate: str  # normalised lower snake_case: "uses", "depends_on", "database", "deploy_day"
    object: str  # as written, minus determiners and backticks
    subject_key: str  # an entity key where the subject is an entity ("postgresql 16"), else the generic key
    object_key: str
    object_is_entity: bool  # the object is exactly one entity found by EntityExtractor
    singular: bool  # one active value per (subject, predicate): a new one supersedes the old
    change: str  # STATE | CHANGE | RENAME | ENDED
    previous_object: str | None = None  # the old value when the sentence names it: "from MySQL to Postgres"
    previous_key: str | None = None
    subject_is_entity: bool = False


# ---------------------------------------------------------------------------
# Public entry point


def extract_triples(doc: Any, entities: Sequence[Any] = ()) -> tuple[FactTriple, ...]:
    """Fact triples in a parsed spaCy doc; entities are EntityExtractor entities of the same text (char offsets, key).

    Pure and cheap (no second parse); never raises: a doc without a dependency
    parse, or anything the rules cannot read, gives ().
    """
    try:
        if not len(doc) or not doc.has_annotation("DEP"):
            return ()
        return _Reader(doc, entities).read()
    except Exception:  # noqa: BLE001 - suggestions are optional; odd input must never break analysis
        return ()


# ---------------------------------------------------------------------------
# Reading one doc


@dataclass(frozen=True)
class _Phrase:
    text: str
    key: str
    is_entity: bool
    tokens: frozenset[int]


class _Reader:
    def __init__(self, doc: Any, entities: Sequence[Any]) -> None:
        self.doc = doc
        self.text = doc.text
        self.all_entities = sorted(((e.start, e.end, e.key, e.label) for e in entities), key=lambda e: (e[0], -e[1]))
        self.entity_starts = [e[0] for e in self.all_entities]
        self.entities = self.all_entities  # those of the sentence being read
        self.fences = [m.span() for m in FENCE.finditer(self.text)] if "```" in self.text or "~~~" in self.text else []
        self.found: list[FactTriple] = []
        self.seen: set[tuple[str, str, str]] = set()
        self.token_starts = [t.idx for t in doc]
        self.sent = doc[:]  # the sentence being read

    def read(self) -> tuple[FactTriple, ...]:
        for sent in self.doc.sents:
            if len(self.found) >= MAX_TRIPLES:
                break
            if len(sent) > MAX_SENTENCE_TOKENS or self._in_fence(sent) or is_question(sent):
                continue
            self.sent = sent
            self.entities = self.all_entities[
                bisect_left(self.entity_starts, sent.start_char) : bisect_left(self.entity_starts, sent.end_char)
            ]
            for verb, inherited in clauses_of(sent.root):
                self._clause(verb, inherited)
        return tuple(self.found[:MAX_TRIPLES])

    def _in_fence(self, sent) -> bool:
        return any(sent.start_char < end and start < sent.end_char for start, end in self.fences)

    # -- clauses ---------------------------------------------------------------

    def _clause(self, verb, inherited) -> None:
        if hedged(verb):
            return
        negation = negation_of(verb)
        if negation == "negated":
            return  # "billing doesn't use Redis": a negative fact has no value to store
        lemma = lemma_of(verb)
        subjects = [c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass", "expl")]
        subject = subjects[0] if subjects else inherited
        if subject is None or subject.dep_ == "expl":
            return  # an imperative ("use Postgres for billing") or "there is ..."
        change = CHANGE if any(
            c.lower_ in CHANGE_ADVERBS and c.dep_ == "advmod" and not list(c.children) for c in verb.children
        ) else STATE
        if negation == ENDED:
            change = ENDED
        passive = any(c.dep_ == "auxpass" for c in verb.children) or (subject.dep_ == "nsubjpass")
        if lemma == "be" or (verb.pos_ == "AUX" and verb.lower_ in BE_FORMS):
            self._copula(verb, subject, change)
        elif passive and verb.tag_ == "VBN":
            self._passive(verb, lemma, subject, change)
        else:
            self._active(verb, lemma, subject, change)

    def _active(self, verb, lemma: str, subject, change: str) -> None:
        past = verb.tag_ == "VBD" or any(
            c.dep_ == "aux" and c.lower_ in ("had", "did", "was", "were") for c in verb.children
        )
        preps = preps_of(verb)
        obj = direct_object(verb)
        if obj is not None:
            preps += preps_of(obj)
        if change == ENDED and (lemma in MOVE_VERBS or lemma in VERSION_VERBS or lemma in SET_VERBS
                                or lemma in ("rename", "replace")):
            return  # "we didn't move X to Y anymore" states no value
        if lemma == "rename":
            target = rename_target(verb, preps)
            if obj is not None and target is not None:
                self._add_each([obj], RENAMED_TO, [target], RENAME)
            return
        if lemma == "replace" and obj is not None:
            new = prep_objects(preps, ("with", "by"))
            if new:
                self._add_each([obj], REPLACED_BY, new[:1], CHANGE)
            return
        if lemma in MOVE_VERBS or lemma in VERSION_VERBS:
            self._move(verb, lemma, subject, obj, preps)
            return
        if lemma in SET_VERBS and obj is not None:
            targets = prep_objects(preps, ("to",))
            owner = self._owner(obj) or self._subject_phrase(subject)
            if targets and owner is not None and not vague(obj):
                predicate = Predicate(noun_predicate(obj), obj.tag_ != "NNS")
                self._add(owner, predicate, self._object(targets[0]), CHANGE)
            return
        if lemma in PLACE_VERBS and obj is not None:
            places = [
                t for t in prep_objects(preps, ("in", "at", "on", "to", "under", "inside"))
                if self._entity_at(t) is not None or t.ent_type_ or looks_like_path(t.text)
            ]  # "we keep secrets in Vault", not "we keep estimates in t-shirt sizes"
            if places:
                self._add_each([obj], PLACE_VERBS[lemma], places[:1], change)
                return
        if lemma in SCHEDULE_VERBS and obj is None:
            days = [t for t in prep_objects(preps, ("on",)) if is_time(t)]
            if days and not past:
                owner = self._subject_phrase(subject)
                if owner is not None:
                    self._add(owner, Predicate(f"{lemma}_day", True), self._object(days[0]), change)
                return
        rule = VERB_OBJECT.get(lemma) if obj is not None else None
        objects = [obj] if rule else []
        if rule is None:
            for prep in preps:
                rule = VERB_PREP_OBJECT.get((lemma, prep.lower_))
                if rule:
                    objects = prep_objects([prep], (prep.lower_,))
                    break
        if rule is None or not objects:
            return
        if lemma == "live" and self._is_technology(objects[0]) and subject.lower_ in SUBJECT_PRONOUNS:
            return  # "I live in neovim" (but "the wiki lives in Notion")
        if (past or transient(verb)) and not rule.event and change == STATE:
            return  # "billing used MySQL", "I'm working on X today": not a lasting current state
        previous = instead_of(verb)
        if previous is not None:
            change = CHANGE  # "billing now uses Postgres instead of MySQL"
        if rule in (USES, CHOSE):
            subject_phrase = self._system_from_purpose(subject, verb, objects[0])
            if subject_phrase is not None:
                self._add_objects(subject_phrase, rule, objects, change, previous)
                return
        self._add_each(conjuncts_of(subject), rule, objects, change, previous)

    def _move(self, verb, lemma: str, subject, obj, preps) -> None:
        targets = prep_objects(preps, ("to", "onto", "into"))
        if not targets:
            # "`src/legacy` was moved to `archive/legacy`": the parser reads "to archive" as an infinitive.
            to = next((t for t in verb.subtree if t.i > verb.i and t.lower_ == "to" and t.dep_ == "aux"), None)
            after = next_word(to) if to is not None else None
            if after is None or self._entity_at(after) is None:
                return
            targets = [after]
        previous = prep_objects(preps, ("from",))
        target = targets[0]
        if obj is None:
            # "we switched from MySQL to Postgres for billing", "I moved to Berlin"
            moved = self._system_from_purpose(subject, verb, None)
            if moved is None:
                moved = self._subject_phrase(subject)
        else:
            moved = self._phrase(obj)
        if moved is None:
            return
        if lemma in VERSION_VERBS or (lemma == "upgrade" and is_version(target)):
            if not is_version(target):
                return
            self._add(moved, VERSION, self._object(target), CHANGE)
            return
        self._add(moved, MOVED_TO, self._object(target), CHANGE, previous[0] if previous else None)

    def _passive(self, verb, lemma: str, subject, change: str) -> None:
        preps = preps_of(verb)
        if change == ENDED and (lemma in MOVE_VERBS or lemma in ("rename", "call", "name", "replace")):
            return
        if lemma in ("rename", "call", "name"):
            target = rename_target(verb, preps)
            if target is None:
                return
            if lemma == "rename" or change == CHANGE:
                self._add_each([subject], RENAMED_TO, [target], RENAME)
            else:  # "my dog is called Biscuit" states a name, not a rename
                self._add_each([subject], NAME, [target], STATE)
            return
        if lemma in MOVE_VERBS:
            self._move(verb, lemma, subject, subject, preps)
            return
        for prep in preps:
            key = (lemma, "by" if prep.dep_ == "agent" else prep.lower_)
            if key not in PASSIVE_PREP_OBJECT:
                continue
            objects = prep_objects([prep], (prep.lower_,))
            if not objects:
                return
            rule = PASSIVE_PREP_OBJECT[key]
            if rule is None:  # "Postgres is used by billing" -> (billing, uses, Postgres)
                active = VERB_OBJECT[lemma]
                self._add_each(objects, active, [subject], change)
            elif rule is REPLACED_BY:
                self._add_each([subject], rule, objects[:1], CHANGE)
            else:
                if past_be(verb) and not rule.event and change == STATE and rule is not LOCATED_IN:
                    return
                self._add_each(conjuncts_of(subject), rule, objects, change)
            return
        complements = [c for c in verb.children if c.dep_ not in BARE_PASSIVE_DEPS]
        if not complements and is_status(verb) and not transient(verb):
            self._status(subject, verb, change)

    def _copula(self, verb, subject, change: str) -> None:
        if transient(verb) or subject.lower_ in DISCOURSE_NOUNS:
            return
        if past_be(verb) and change == STATE:
            # "Kafka was our queue": no longer true. Participles ("the repo was archived") come through _passive.
            return
        attrs = [c for c in verb.children if c.dep_ in ("attr",)]
        acomps = [c for c in verb.children if c.dep_ in ("acomp",)]
        if not attrs and not acomps:
            # The tagger sometimes reads a name at the end as punctuation: "the queue is RabbitMQ" (RabbitMQ/".").
            attrs = [c for c in verb.rights if c.dep_ in ("punct", "dep", "npadvmod", "dobj") and not c.is_punct
                     and self._entity_at(c) is not None][:1]
        if not attrs and acomps and (acomps[0].pos_ == "PROPN" or self._entity_at(acomps[0]) is not None):
            attrs = acomps  # "the project's dependencies are numpy": a name the tagger read as an adjective
        if attrs:
            attr = attrs[0]
            if is_status(attr) and only_glued_children(attr):
                self._status(subject, attr, change)  # "i'm vegan"
            else:
                self._copula_attr(subject, attr, change)
            return
        if acomps:
            adjective = acomps[0]
            for prep in preps_of(adjective):
                rule = ADJECTIVE_PREP.get((adjective.lower_, prep.lower_))
                if rule:
                    self._add_each(conjuncts_of(subject), rule, prep_objects([prep], (prep.lower_,)), change)
                    return
            if is_status(adjective) and only_glued_children(adjective):
                self._status(subject, adjective, change)
            return
        adverbs = [c for c in verb.children if c.dep_ in ("advmod", "prt") and is_status(c)]
        if adverbs and not preps_of(verb):
            self._status(subject, adverbs[0], change)  # "the staging server is down"
            return
        for prep in preps_of(verb):
            objects = prep_objects([prep], (prep.lower_,))
            if not objects:
                continue
            target = objects[0]
            phrase = self._object(target)
            if port_number(target) is not None:
                self._add_each(conjuncts_of(subject), USES, objects[:1], change)  # "X is on port 8082" -> port
            elif prep.lower_ in ("on", "at") and is_time(target):
                # "the team sync is on Wednesdays", "our standup is at 9:30"
                self._add_each(conjuncts_of(subject), SCHEDULED, objects[:1], change)
            elif prep.lower_ == "on" and self._is_technology(target):
                # "we're on Node 20", "billing is on Postgres 16"
                self._add_each(conjuncts_of(subject), USES, objects, change)
            elif prep.lower_ in ("in", "at", "under") and (
                target.ent_type_ in ("GPE", "LOC", "FAC") or looks_like_path(phrase.text)
            ):
                self._add_each(conjuncts_of(subject), LOCATED_IN, objects[:1], change)
            return

    def _copula_attr(self, subject, attr, change: str) -> None:
        if is_wh(attr) or vague(attr) or attr.pos_ == "PRON":
            return
        indefinite = any(c.dep_ == "det" and c.lower_ in INDEFINITE for c in attr.children)
        counted = attr.like_num or any(c.dep_ == "nummod" for c in attr.lefts)
        subject_owner = self._owner(subject)
        attr_owner = self._owner(attr)
        if attr.pos_ == "PROPN" and any(c.tag_ == "POS" for c in attr.children):
            # "auth-gateway is Lucía's now": a bare possessive names the owner
            self._add_each(conjuncts_of(subject), OWNED_BY, [attr], change)
        elif indefinite:
            # "Kafka is a message broker", "my sister is a nurse"; not "we are 30 people"
            if not counted:
                self._add_each(conjuncts_of(subject), IS_A, [attr], change)
        elif subject_owner is not None and subject.pos_ in ("NOUN", "PROPN"):
            # "the API's database is MySQL", "our deploy day is Thursday", "the owner of billing is Priya"
            if attr.like_num and subject.lower_ in PERSON_NOUNS:
                # "my grandmother is 96": an age, not the user's grandmother
                self._add_objects(self._phrase(subject), AGE, [attr], change)
                return
            predicate = Predicate(noun_predicate(subject), subject.tag_ != "NNS")
            self._add_objects(subject_owner, predicate, [attr], change)
        elif attr_owner is not None and attr.pos_ in ("NOUN", "PROPN") and not self._is_thing(attr):
            # "Redis 7 is our cache", "Priya is the tech lead for billing", "Dana is my manager", "Nia is the PM for X"
            predicate = Predicate(noun_predicate(attr), True)
            for value in conjuncts_of(subject):
                phrase = self._subject_phrase(value)
                if phrase is not None and phrase.key not in (USER, TEAM):
                    self._add(attr_owner, predicate, phrase, change)
        elif _is_proper(attr, self):
            # "the staging database is Postgres 15"; not "I'm Sam" or "we're 12 people"
            if subject.lower_ not in SUBJECT_PRONOUNS and subject.lower_ != "team":
                self._add_each(conjuncts_of(subject), IS, [attr], change)
        elif attr.pos_ == "NOUN" and not counted:
            # "Priya is the tech lead"
            self._add_each(conjuncts_of(subject), IS_A, [attr], change)

    def _is_thing(self, token) -> bool:
        """A technology, identifier or path: "X is the Postgres of ..." names no role."""
        entity = self._entity_at(token)
        return entity is not None and entity[3] in ("TECHNOLOGY", "CODE", "PATH")

    def _status(self, subject, word, change: str) -> None:
        for value in conjuncts_of(subject):
            phrase = self._subject_phrase(value)
            if phrase is not None and (phrase.key not in (USER, TEAM) or glued_word(word) in PERSON_STATUS_WORDS):
                value = glued_word(word)
                self._add(phrase, STATUS, _Phrase(value, value, False, frozenset({word.i})), change)

    # -- phrases -----------------------------------------------------------------

    def _owner(self, noun) -> _Phrase | None:
        """The possessor of a noun: "the API's" database, "our" deploy day, the owner "of billing"."""
        for child in noun.children:
            if child.dep_ == "poss":
                if child.lower_ in POSSESSIVE_PRONOUNS:
                    name = POSSESSIVE_PRONOUNS[child.lower_]
                    return _Phrase(name, name, False, frozenset({child.i}))
                if child.pos_ == "PRON":
                    return None  # his, her, their, its, your: whose is unknown here
                return self._phrase(child)
        for child in noun.children:
            if child.dep_ == "prep" and child.lower_ in ("of", "for"):
                objects = [c for c in child.children if c.dep_ == "pobj"]
                if objects and objects[0].pos_ in NOUNISH and not vague(objects[0]):
                    return self._phrase(objects[0])
        return None

    def _subject_phrase(self, token) -> _Phrase | None:
        lower = token.lower_
        if lower in SUBJECT_PRONOUNS:
            name = SUBJECT_PRONOUNS[lower]
            return _Phrase(name, name, False, frozenset({token.i}))
        if token.pos_ == "PRON" or is_wh(token) or vague(token) or lower in ("lets", "let"):
            return None  # it, they, this, someone: the reference is not in this sentence
        if lower == "team" and not any(c.dep_ in ("compound", "amod", "nmod") for c in token.children):
            if all(c.lower_ in ("my", "our", "the") for c in token.children if c.dep_ in ("det", "poss")):
                return _Phrase(TEAM, TEAM, False, frozenset({token.i}))
        # "the wiki" tagged ADJ is still the subject the parser says it is
        mistagged = token.dep_ in ("nsubj", "nsubjpass") and any(c.dep_ == "det" for c in token.children)
        if (token.pos_ not in NOUNISH and not self._entity_at(token) and not mistagged) or token.like_num:
            return None  # "8080 is the api": a bare number is a value, not a subject
        return self._phrase(token)

    def _object(self, token) -> _Phrase:
        if token.lower_ in SUBJECT_PRONOUNS:
            name = SUBJECT_PRONOUNS[token.lower_]
            return _Phrase(name, name, False, frozenset({token.i}))
        return self._phrase(token)

    def _system_from_purpose(self, subject, verb, obj) -> _Phrase | None:
        """"we use Postgres for billing" -> billing: a team's choice for a named system is that system's.

        obj None (a move): only a "for" on the verb counts; "switched to the half in Porto" moved no Porto.
        """
        phrase = self._subject_phrase(subject)
        if phrase is None or phrase.key not in (USER, TEAM):
            return None
        preps = preps_of(verb) + (preps_of(obj) if obj is not None else [])
        for prep in preps:
            if prep.lower_ not in (("for", "in") if obj is not None else ("for",)):
                continue
            for pobj in prep.children:
                if pobj.dep_ != "pobj" or pobj.tag_ == "VBG" or pobj.pos_ not in ("NOUN", "PROPN") or vague(pobj):
                    continue
                if pobj.ent_type_ in ("DATE", "TIME") or pobj.lower_ in PURPOSES or pobj.tag_ == "NNS" or (
                    pobj.lower_.endswith("ing") and list(pobj.lefts)
                ):
                    # "for now", "for caching", "for tickets", "for frontend tests", "for type checking":
                    # a time or a purpose, not a system ("for billing", "for the billing service")
                    continue
                return self._phrase(pobj)
        return None

    def _entity_at(self, token) -> tuple[int, int, str, str] | None:
        for entity in self.entities:
            if entity[0] <= token.idx < entity[1]:
                return entity
        return None

    def _is_technology(self, token) -> bool:
        entity = self._entity_at(token)
        return token.ent_type_ == "TECHNOLOGY" or (entity is not None and entity[3] == "TECHNOLOGY")

    def _phrase(self, token) -> _Phrase:
        """The noun phrase headed by token, as text and key: modifiers, versions, glued tokens, entities."""
        doc = self.doc
        sent = self.sent
        start = end = token.i
        for child in token.lefts:
            if child.dep_ in LEFT_MODIFIERS:
                if child.dep_ == "poss" and child.pos_ == "PRON":
                    start = max(start, child.right_edge.i + 1)
                    continue
                start = min(start, child.left_edge.i)
        if token.i < token.head.i and misread_verb(token.head):
            start = min(start, token.head.left_edge.i)
        for i in range(token.i - 1, start - 1, -1):
            if doc[i].pos_ == "CCONJ" or doc[i].text in (",", ";"):
                start = i + 1  # a misattached conjunct: "Python 3.12 and Poetry" is two phrases
                break
        for child in token.rights:
            if child.dep_ in RIGHT_MODIFIERS or (child.dep_ == "prep" and child.lower_ in RIGHT_PREPS and any(
                c.dep_ == "pobj" for c in child.children
            )):
                end = max(end, child.right_edge.i)
        # Two nouns the parser gave the same role side by side are one name: "the terraform modules" (dobj, dobj).
        while end + 1 < sent.end and same_role_neighbour(token, doc[end + 1]):
            end = max(end + 1, doc[end + 1].right_edge.i)
        # Tokens glued without spaces belong together: "accounts-api", "user-service", "v2.1-beta".
        while end + 1 < sent.end and not doc[end].whitespace_ and doc[end + 1].text not in CLOSING and (
            doc[end + 1].tag_ != "POS"
        ):
            end += 1
        while start - 1 >= sent.start and not doc[start - 1].whitespace_ and doc[start - 1].text not in OPENING and (
            doc[start].text not in CLOSING and doc[start - 1].tag_ != "POS"
        ):
            start -= 1
        while start < end and (
            doc[start].pos_ in ("DET", "CCONJ", "ADP", "PUNCT", "SCONJ", "INTJ") or doc[start].tag_ == "PRP$"
            or doc[start].lower_ in FILLERS
        ) and (doc[start].whitespace_ or doc[start].is_punct):
            start += 1  # "the", "our", a stray "and", "btw"; not "on" in "on-call"
        while end > start and (
            doc[end].pos_ in ("CCONJ", "ADP", "PUNCT", "SYM", "INTJ") or doc[end].tag_ == "POS"
            or doc[end].lower_ in FILLERS or not any(ch.isalnum() for ch in doc[end].text)
        ):
            end -= 1  # "Postgres." "accountant 🙂" "Redis btw"
        start_char, end_char = doc[start].idx, doc[end].idx + len(doc[end].text)
        # An entity that starts or ends inside the phrase extends it: "Postgres" + "16" as two objects is "Postgres 16".
        for e_start, e_end, _key, _label in self.entities:
            if e_start < end_char and start_char < e_end and e_start >= sent.start_char and e_end <= sent.end_char:
                first, last = bisect_left(self.token_starts, e_start), bisect_left(self.token_starts, e_end)
                added = [doc[i] for i in range(first, last) if not start_char <= doc[i].idx < end_char]
                if any(t.pos_ in ("ADP", "CCONJ", "VERB", "AUX") for t in added):
                    continue  # a DATE like "March 3rd to March 17th" is two values here
                start_char, end_char = min(start_char, e_start), max(end_char, e_end)
        s, e = strip_span(self.text, start_char, end_char)
        surface = " ".join(self.text[s:e].split())
        tokens = frozenset(range(bisect_left(self.token_starts, s), bisect_left(self.token_starts, e))) | {token.i}
        for e_start, e_end, key, _label in self.entities:
            if (e_start, e_end) == (s, e):
                return _Phrase(surface, key, True, tokens)
        return _Phrase(surface, normalise_key(surface), False, tokens)

    # -- output ----------------------------------------------------------------------

    def _add_each(self, subjects, predicate: Predicate, objects, change: str, previous=None) -> None:
        for subject in subjects:
            phrase = self._subject_phrase(subject)
            if phrase is not None:
                self._add_objects(phrase, predicate, objects, change, previous)

    def _add_objects(self, subject: _Phrase, predicate: Predicate, objects, change: str, previous=None) -> None:
        covered: set[int] = set(subject.tokens)
        if previous is not None:
            covered |= self._phrase(previous).tokens
        for head in objects:
            for value in conjuncts_of(head):
                if value.i in covered or is_wh(value) or vague(value):
                    continue
                if value.pos_ == "PRON" and value.lower_ not in SUBJECT_PRONOUNS:
                    continue
                if value.pos_ not in NOUNISH and value.pos_ != "PRON" and not self._entity_at(value):
                    misread = value.pos_ == "VERB" and (
                        bare_infinitive_object(value) or (value.dep_ == "pobj" and not list(value.children))
                    )
                    if not (misread or (predicate is IS_A and value.pos_ in ("ADJ", "VERB"))):
                        continue
                port = port_number(value)
                if port is not None and predicate in (USES, HOSTED_ON, LISTENS_ON, SCHEDULED):
                    # "the admin api runs on port 8082" -> (admin api, port, 8082)
                    covered |= {value.i, port.i}
                    self._add(subject, PORT, _Phrase(port.text, port.text, False, frozenset({port.i})), change)
                    continue
                phrase = self._object(value)
                covered |= phrase.tokens
                self._add(subject, predicate, phrase, change, previous)

    def _add(self, subject: _Phrase, predicate: Predicate, obj: _Phrase, change: str, previous=None) -> None:
        if not subject.key or not obj.key or subject.key == obj.key or not PREDICATE_NAME.fullmatch(predicate.name):
            return
        if len(self.found) >= MAX_TRIPLES:
            return
        identity = (subject.key, predicate.name, obj.key)
        if identity in self.seen:
            return
        self.seen.add(identity)
        previous_phrase = self._object(previous) if previous is not None else None
        self.found.append(
            FactTriple(
                subject=subject.text,
                predicate=predicate.name,
                object=obj.text,
                subject_key=subject.key,
                object_key=obj.key,
                object_is_entity=obj.is_entity,
                singular=predicate.singular,
                change=change,
                previous_object=previous_phrase.text if previous_phrase else None,
                previous_key=previous_phrase.key if previous_phrase else None,
                subject_is_entity=subject.is_entity,
            )
        )


def _is_proper(token, reader: _Reader) -> bool:
    return (
        token.pos_ in ("PROPN", "NUM", "X", "SYM")
        or token.like_num
        or reader._entity_at(token) is not None
        or bool(token.ent_type_)
        or looks_like_path(token.text)
        or "_" in token.text
    )
