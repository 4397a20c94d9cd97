"""Candidate (subject, predicate, object) fact triples read off one message's spaCy dependency parse."""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

# The patterns, their parse signatures and their limits are documented in docs/fact-extraction.md.

STATE = "state"  # a plain statement of how things are: "billing uses Postgres"
CHANGE = "change"  # the sentence reports a change to this value: "we moved X to Y", "X now uses Y"
RENAME = "rename"  # the subject's name changed: "X was renamed to Y"
ENDED = "ended"  # the fact stopped being true: "we don't use npm anymore", "Priya no longer owns billing"

USER = "user"  # I, me, my
TEAM = "team"  # we, us, our, "my team", "the team"

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


@dataclass(frozen=True)
class Predicate:
    name: str
    singular: bool
    event: bool = False  # a decision or a move: the past tense still states the current value


# ---------------------------------------------------------------------------
# The predicate tables

_USES = Predicate("uses", False)
_CHOSE = Predicate("uses", False, event=True)  # "we went with X", "we picked X": a decision, so past tense counts
_DEPENDS_ON = Predicate("depends_on", False)
_OWNS = Predicate("owns", False)
_OWNED_BY = Predicate("owned_by", True)
_LEADS = Predicate("leads", False)
_LED_BY = Predicate("led_by", True)
_LOCATED_IN = Predicate("located_in", True)
_WORKS_AT = Predicate("works_at", True)
_WORKS_ON = Predicate("works_on", False)
_REPORTS_TO = Predicate("reports_to", True)
_PREFERS = Predicate("prefers", False)
_HOSTED_ON = Predicate("hosted_on", True)
_MOVED_TO = Predicate("moved_to", True, event=True)
_RENAMED_TO = Predicate("renamed_to", True, event=True)
_REPLACED_BY = Predicate("replaced_by", True, event=True)
_VERSION = Predicate("version", True, event=True)
_NAME = Predicate("name", True)
_IS = Predicate("is", True)
_IS_A = Predicate("is_a", False)
_STATUS = Predicate("status", True)
_PORT = Predicate("port", True)
_LISTENS_ON = Predicate("listens_on", True)
_AGE = Predicate("age", True)
_SCHEDULED = Predicate("scheduled", True)

# Active verb + direct object: "billing uses Postgres", "Priya owns billing".
VERB_OBJECT: dict[str, Predicate] = {
    "use": _USES,
    "adopt": _CHOSE,
    "choose": _CHOSE,
    "pick": _CHOSE,
    "select": _CHOSE,
    "require": _DEPENDS_ON,
    "import": _DEPENDS_ON,
    "own": _OWNS,
    "maintain": _OWNS,
    "lead": _LEADS,
    "manage": _LEADS,
    "prefer": _PREFERS,
}

# Active verb + preposition + object: "auth depends on Redis", "I live in Lisbon".
VERB_PREP_OBJECT: dict[tuple[str, str], Predicate] = {
    ("depend", "on"): _DEPENDS_ON,
    ("depend", "upon"): _DEPENDS_ON,
    ("rely", "on"): _DEPENDS_ON,
    ("run", "on"): _USES,
    ("listen", "on"): _LISTENS_ON,
    ("build", "on"): _USES,
    ("go", "with"): _CHOSE,
    ("settle", "on"): _CHOSE,
    ("decide", "on"): _CHOSE,
    ("live", "in"): _LOCATED_IN,
    ("live", "at"): _LOCATED_IN,
    ("work", "at"): _WORKS_AT,
    ("work", "for"): _WORKS_AT,
    ("work", "on"): _WORKS_ON,
    ("report", "to"): _REPORTS_TO,
    ("deploy", "to"): _HOSTED_ON,
    ("deploy", "on"): _HOSTED_ON,
}

# Passive participle + preposition (or "by" agent): "billing is owned by Priya", "auth is written in Go".
# None as the predicate means "invert to the active form": "Postgres is used by billing" -> (billing, uses, Postgres).
PASSIVE_PREP_OBJECT: dict[tuple[str, str], Predicate | None] = {
    ("own", "by"): _OWNED_BY,
    ("maintain", "by"): _OWNED_BY,
    ("lead", "by"): _LED_BY,
    ("manage", "by"): _LED_BY,
    ("run", "by"): _LED_BY,
    ("use", "by"): None,
    ("write", "in"): _USES,
    ("build", "with"): _USES,
    ("build", "on"): _USES,
    ("build", "in"): _USES,
    ("implement", "in"): _USES,
    ("power", "by"): _USES,
    ("back", "by"): _USES,
    ("host", "on"): _HOSTED_ON,
    ("host", "at"): _HOSTED_ON,
    ("host", "in"): _HOSTED_ON,
    ("host", "by"): _HOSTED_ON,
    ("deploy", "to"): _HOSTED_ON,
    ("deploy", "on"): _HOSTED_ON,
    ("deploy", "at"): _HOSTED_ON,
    ("serve", "from"): _HOSTED_ON,
    ("locate", "in"): _LOCATED_IN,
    ("define", "in"): _LOCATED_IN,
    ("configure", "in"): _LOCATED_IN,
    ("locate", "at"): _LOCATED_IN,
    ("store", "in"): _LOCATED_IN,
    ("store", "at"): _LOCATED_IN,
    ("store", "on"): _LOCATED_IN,
    ("keep", "in"): _LOCATED_IN,
    ("base", "in"): _LOCATED_IN,
    ("base", "at"): _LOCATED_IN,
    ("move", "to"): _MOVED_TO,
    ("migrate", "to"): _MOVED_TO,
    ("switch", "to"): _MOVED_TO,
    ("port", "to"): _MOVED_TO,
    ("rename", "to"): _RENAMED_TO,
    ("rename", "as"): _RENAMED_TO,
    ("replace", "by"): _REPLACED_BY,
    ("replace", "with"): _REPLACED_BY,
}

# Verbs that move their object somewhere: "we moved the frontend to Vercel", "we switched from MySQL to Postgres".
MOVE_VERBS = frozenset({"move", "migrate", "switch", "port", "transfer", "relocate", "shift", "upgrade", "downgrade"})
VERSION_VERBS = frozenset({"upgrade", "downgrade", "bump", "pin"})
# "we changed the deploy day to Friday", "I set my editor to vim": the object names the attribute.
SET_VERBS = frozenset({"change", "set", "update"})
# "we keep the secrets in Vault", "we host the docs on Netlify".
PLACE_VERBS: dict[str, Predicate] = {"keep": _LOCATED_IN, "store": _LOCATED_IN, "put": _LOCATED_IN,
                                      "host": _HOSTED_ON, "deploy": _HOSTED_ON, "run": _HOSTED_ON}
# "we deploy on Thursdays": a day named after these verbs is a schedule, not a host.
SCHEDULE_VERBS = frozenset({"deploy", "release", "ship", "meet"})

# "X is <adjective> <prep> Y".
ADJECTIVE_PREP: dict[tuple[str, str], Predicate] = {
    ("allergic", "to"): Predicate("allergic_to", False),
    ("responsible", "for"): _OWNS,
    ("compatible", "with"): Predicate("compatible_with", False),
    ("dependent", "on"): _DEPENDS_ON,
    ("based", "in"): _LOCATED_IN,
    ("located", "in"): _LOCATED_IN,
}

# "X is deprecated": only these adjectives and participles are a status; "the weather is nice" is not a fact.
STATUS_WORDS = frozenset(
    "deprecated archived obsolete legacy frozen paused cancelled canceled discontinued retired sunset sunsetted "
    "unmaintained unsupported experimental beta stable live down broken flaky blocked done finished complete "
    "completed shipped merged released enabled disabled required optional mandatory private public protected "
    "read-only readonly open-source closed-source free paid".split()
)
# The statuses "I"/"we" can have: "I'm vegan", "we're remote"; not "I'm done", "I'm free".
PERSON_STATUS_WORDS = frozenset(
    "vegetarian vegan pescatarian married engaged single divorced widowed pregnant retired colorblind colourblind "
    "left-handed right-handed remote diabetic lactose-intolerant gluten-free".split()
)

# "my grandmother is 96" is her age.
PERSON_NOUNS = frozenset(
    "mom mum dad mother father parent parents sister brother sibling wife husband partner spouse son daughter kid "
    "kids child children baby grandmother grandfather grandma grandpa aunt uncle cousin niece nephew friend "
    "roommate dog cat".split()
)

# "X's owner is Priya" -> owned_by, like the passive "X is owned by Priya".
NOUN_PREDICATES = {"owner": "owned_by", "maintainer": "owned_by", "db": "database", "repo": "repository"}

# Verbs and nouns whose clause complement is the user's statement: "remember that ...", "Note: ...".
REPORT_WORDS = frozenset({"remember", "note", "know", "fyi", "reminder", "mind", "notice"})
# "we decided to use X": the complement is a decision already made.
DECISION_VERBS = frozenset({"decide", "agree", "choose", "vote"})
HEDGES = frozenset(
    {"maybe", "perhaps", "probably", "possibly", "hopefully", "ideally", "apparently", "supposedly", "presumably"}
)
HEDGE_VERBS = frozenset({"think", "guess", "believe", "suppose", "assume", "wonder", "hope", "doubt", "suspect"})
# Hearsay: "billing uses Postgres, Sarah said" is not the user's own statement.
SAY_VERBS = frozenset({"say", "tell", "claim", "hear", "mention", "read", "write"})
CHANGE_ADVERBS = frozenset({"now"})
# "we use Redis for caching" names a purpose, not a system that uses Redis.
PURPOSES = frozenset(
    "caching cache logging logs testing tests monitoring metrics tracing alerting search searching storage queueing "
    "queuing messaging scheduling deployment deployments deploys builds linting formatting analytics development "
    "prototyping reporting work fun now everything".split()
)
# Adjectives that add nothing to an attribute name: "our main database" is our database.
FILLER_ADJECTIVES = frozenset("main primary current new actual real usual only whole".split())
_WH = frozenset({"WDT", "WP", "WP$", "WRB"})
_QUESTION_OPENERS = frozenset(
    "is are am was were do does did can could should would will shall has have had may might must "
    "what which who whom whose where when why how isn't aren't doesn't don't didn't won't can't".split()
)

_SUBJECT_PRONOUNS = {"i": USER, "me": USER, "myself": USER, "we": TEAM, "us": TEAM, "ourselves": TEAM}
_POSSESSIVE_PRONOUNS = {"my": USER, "our": TEAM}
_VAGUE_NOUNS = frozenset(
    "thing things stuff something anything everything nothing one ones lot lots bit way kind sort".split()
)
_VAGUE_DETERMINERS = frozenset(
    "which what whatever this that these those much many some any every each all enough several few more less".split()
)
# Nouns that frame an answer rather than name a thing: "the problem is the timeout".
DISCOURSE_NOUNS = frozenset(
    "problem issue answer question point idea reason thing solution fix trick goal plan catch difference result "
    "output error bug takeaway gist".split()
)
TRANSIENT = frozenset({"today", "tonight", "yesterday", "tomorrow", "again"})
_FILLERS = frozenset("btw fyi ok okay so oh also anyway hey hi lol".split())
_BE_FORMS = frozenset("be is are am was were been being 's 're 'm ’s ’re ’m".split())
_PAST_BE = frozenset({"was", "were"})
_BARE_PASSIVE_DEPS = frozenset({"nsubjpass", "nsubj", "auxpass", "aux", "punct", "advmod", "cc", "conj"})
_OPEN_MARKS = frozenset({"if", "whether", "how", "what"})
_INDEFINITE = frozenset({"a", "an", "some", "any", "another"})
_QUOTES = "`'\"“”‘’"
_CLOSING = frozenset(list(".,;:!?)]}") + list(_QUOTES) + ["...", "…"])
_OPENING = frozenset(list("([{") + list(_QUOTES))
_NOUNISH = frozenset({"NOUN", "PROPN", "NUM", "X", "SYM"})
_LEFT_MODIFIERS = frozenset({"compound", "amod", "nummod", "nmod", "quantmod", "poss", "npadvmod", "hmod", "punct"})
_RIGHT_MODIFIERS = frozenset({"nummod", "compound", "npadvmod"})
_RIGHT_PREPS = frozenset({"of", "per"})
_FENCE = re.compile(r"(`{3,}|~{3,})[\s\S]*?(?:\1|\Z)")
_VERSION_TEXT = re.compile(r"v?\d+(?:\.\d+){0,3}(?:\.x)?", re.IGNORECASE)
_SNAKE = re.compile(r"[^a-z0-9]+")
_PREDICATE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")  # what the graph store accepts as a predicate
_WEEKDAY = re.compile(r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?")


def _verb_forms() -> dict[str, str]:
    irregular = {
        "ran": "run", "running": "run", "built": "build", "wrote": "write", "written": "write", "led": "lead",
        "went": "go", "gone": "go", "going": "go", "goes": "go", "chose": "choose", "chosen": "choose",
        "kept": "keep", "put": "put", "putting": "put", "set": "set", "setting": "set", "based": "base",
        "relies": "rely", "relied": "rely", "relying": "rely", "preferred": "prefer", "preferring": "prefer",
        "transferred": "transfer", "transferring": "transfer", "shipped": "ship", "shipping": "ship",
        "picked": "pick", "pinned": "pin", "pinning": "pin", "agreed": "agree", "depended": "depend",
        "backed": "back", "met": "meet", "noted": "note", "knew": "know", "known": "know",
        "said": "say", "says": "say", "told": "tell", "heard": "hear",
    }
    forms: dict[str, str] = dict(irregular)
    bases = (
        set(VERB_OBJECT) | {v for v, _ in VERB_PREP_OBJECT} | {v for v, _ in PASSIVE_PREP_OBJECT} | MOVE_VERBS
        | VERSION_VERBS | SET_VERBS | set(PLACE_VERBS) | SCHEDULE_VERBS | DECISION_VERBS | HEDGE_VERBS
        | REPORT_WORDS | SAY_VERBS | {"rename", "call", "replace", "name"}
    )
    for base in bases:
        stem = base[:-1] if base.endswith("e") else base
        candidates = [base, base + "s", base + "es", stem + "ed", stem + "ing"]
        if base.endswith("y") and base[-2:-1] not in "aeiou":
            candidates += [base[:-1] + "ies", base[:-1] + "ied"]
        for form in candidates:
            forms.setdefault(form, base)
    return forms


_VERB_FORMS = _verb_forms()


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
        self.fences = [m.span() for m in _FENCE.finditer(self.text)] if "```" in self.text or "~~~" in self.text else []
        self.found: list[FactTriple] = []
        self.seen: set[tuple[str, str, str]] = set()
        self.token_starts = [t.idx for t in doc]
        self.sent = doc[:]  # the sentence being read

    def read(self) -> tuple[FactTriple, ...]:
        for sent in self.doc.sents:
            if len(self.found) >= MAX_TRIPLES:
                break
            if len(sent) > MAX_SENTENCE_TOKENS or self._in_fence(sent) or _is_question(sent):
                continue
            self.sent = sent
            self.entities = self.all_entities[
                bisect_left(self.entity_starts, sent.start_char) : bisect_left(self.entity_starts, sent.end_char)
            ]
            for verb, inherited in _clauses(sent.root):
                self._clause(verb, inherited)
        return tuple(self.found[:MAX_TRIPLES])

    def _in_fence(self, sent) -> bool:
        return any(sent.start_char < end and start < sent.end_char for start, end in self.fences)

    # -- clauses ---------------------------------------------------------------

    def _clause(self, verb, inherited) -> None:
        if _hedged(verb):
            return
        negation = _negation(verb)
        if negation == "negated":
            return  # "billing doesn't use Redis": a negative fact has no value to store
        lemma = _lemma(verb)
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
        if lemma == "be" or (verb.pos_ == "AUX" and verb.lower_ in _BE_FORMS):
            self._copula(verb, subject, change)
        elif passive and verb.tag_ == "VBN":
            self._passive(verb, lemma, subject, change)
        else:
            self._active(verb, lemma, subject, change)

    def _active(self, verb, lemma: str, subject, change: str) -> None:
        past = verb.tag_ == "VBD" or any(
            c.dep_ == "aux" and c.lower_ in ("had", "did", "was", "were") for c in verb.children
        )
        preps = _preps(verb)
        obj = _direct_object(verb)
        if obj is not None:
            preps += _preps(obj)
        if change == ENDED and (lemma in MOVE_VERBS or lemma in VERSION_VERBS or lemma in SET_VERBS
                                or lemma in ("rename", "replace")):
            return  # "we didn't move X to Y anymore" states no value
        if lemma == "rename":
            target = _rename_target(verb, preps)
            if obj is not None and target is not None:
                self._add_each([obj], _RENAMED_TO, [target], RENAME)
            return
        if lemma == "replace" and obj is not None:
            new = _prep_objects(preps, ("with", "by"))
            if new:
                self._add_each([obj], _REPLACED_BY, new[:1], CHANGE)
            return
        if lemma in MOVE_VERBS or lemma in VERSION_VERBS:
            self._move(verb, lemma, subject, obj, preps)
            return
        if lemma in SET_VERBS and obj is not None:
            targets = _prep_objects(preps, ("to",))
            owner = self._owner(obj) or self._subject_phrase(subject)
            if targets and owner is not None and not _vague(obj):
                predicate = Predicate(_noun_predicate(obj), obj.tag_ != "NNS")
                self._add(owner, predicate, self._object(targets[0]), CHANGE)
            return
        if lemma in PLACE_VERBS and obj is not None:
            places = [
                t for t in _prep_objects(preps, ("in", "at", "on", "to", "under", "inside"))
                if self._entity_at(t) is not None or t.ent_type_ or _looks_like_path(t.text)
            ]  # "we keep secrets in Vault", not "we keep estimates in t-shirt sizes"
            if places:
                self._add_each([obj], PLACE_VERBS[lemma], places[:1], change)
                return
        if lemma in SCHEDULE_VERBS and obj is None:
            days = [t for t in _prep_objects(preps, ("on",)) if _is_time(t)]
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
                    objects = _prep_objects([prep], (prep.lower_,))
                    break
        if rule is None or not objects:
            return
        if lemma == "live" and self._is_technology(objects[0]) and subject.lower_ in _SUBJECT_PRONOUNS:
            return  # "I live in neovim" (but "the wiki lives in Notion")
        if (past or _transient(verb)) and not rule.event and change == STATE:
            return  # "billing used MySQL", "I'm working on X today": not a lasting current state
        previous = _instead_of(verb)
        if previous is not None:
            change = CHANGE  # "billing now uses Postgres instead of MySQL"
        if rule in (_USES, _CHOSE):
            subject_phrase = self._system_from_purpose(subject, verb, objects[0])
            if subject_phrase is not None:
                self._add_objects(subject_phrase, rule, objects, change, previous)
                return
        self._add_each(_conjuncts(subject), rule, objects, change, previous)

    def _move(self, verb, lemma: str, subject, obj, preps) -> None:
        targets = _prep_objects(preps, ("to", "onto", "into"))
        if not targets:
            # "`src/legacy` was moved to `archive/legacy`": the parser reads "to archive" as an infinitive.
            to = next((t for t in verb.subtree if t.i > verb.i and t.lower_ == "to" and t.dep_ == "aux"), None)
            after = _next_word(to) if to is not None else None
            if after is None or self._entity_at(after) is None:
                return
            targets = [after]
        previous = _prep_objects(preps, ("from",))
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
        if lemma in VERSION_VERBS or (lemma == "upgrade" and _is_version(target)):
            if not _is_version(target):
                return
            self._add(moved, _VERSION, self._object(target), CHANGE)
            return
        self._add(moved, _MOVED_TO, self._object(target), CHANGE, previous[0] if previous else None)

    def _passive(self, verb, lemma: str, subject, change: str) -> None:
        preps = _preps(verb)
        if change == ENDED and (lemma in MOVE_VERBS or lemma in ("rename", "call", "name", "replace")):
            return
        if lemma in ("rename", "call", "name"):
            target = _rename_target(verb, preps)
            if target is None:
                return
            if lemma == "rename" or change == CHANGE:
                self._add_each([subject], _RENAMED_TO, [target], RENAME)
            else:  # "my dog is called Biscuit" states a name, not a rename
                self._add_each([subject], _NAME, [target], STATE)
            return
        if lemma in MOVE_VERBS:
            self._move(verb, lemma, subject, subject, preps)
            return
        for prep in preps:
            key = (lemma, "by" if prep.dep_ == "agent" else prep.lower_)
            if key not in PASSIVE_PREP_OBJECT:
                continue
            objects = _prep_objects([prep], (prep.lower_,))
            if not objects:
                return
            rule = PASSIVE_PREP_OBJECT[key]
            if rule is None:  # "Postgres is used by billing" -> (billing, uses, Postgres)
                active = VERB_OBJECT[lemma]
                self._add_each(objects, active, [subject], change)
            elif rule is _REPLACED_BY:
                self._add_each([subject], rule, objects[:1], CHANGE)
            else:
                if _past_be(verb) and not rule.event and change == STATE and rule is not _LOCATED_IN:
                    return
                self._add_each(_conjuncts(subject), rule, objects, change)
            return
        complements = [c for c in verb.children if c.dep_ not in _BARE_PASSIVE_DEPS]
        if not complements and _is_status(verb) and not _transient(verb):
            self._status(subject, verb, change)

    def _copula(self, verb, subject, change: str) -> None:
        if _transient(verb) or subject.lower_ in DISCOURSE_NOUNS:
            return
        if _past_be(verb) and change == STATE:
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
            if _is_status(attr) and _only_glued_children(attr):
                self._status(subject, attr, change)  # "i'm vegan"
            else:
                self._copula_attr(subject, attr, change)
            return
        if acomps:
            adjective = acomps[0]
            for prep in _preps(adjective):
                rule = ADJECTIVE_PREP.get((adjective.lower_, prep.lower_))
                if rule:
                    self._add_each(_conjuncts(subject), rule, _prep_objects([prep], (prep.lower_,)), change)
                    return
            if _is_status(adjective) and _only_glued_children(adjective):
                self._status(subject, adjective, change)
            return
        adverbs = [c for c in verb.children if c.dep_ in ("advmod", "prt") and _is_status(c)]
        if adverbs and not _preps(verb):
            self._status(subject, adverbs[0], change)  # "the staging server is down"
            return
        for prep in _preps(verb):
            objects = _prep_objects([prep], (prep.lower_,))
            if not objects:
                continue
            target = objects[0]
            phrase = self._object(target)
            if _port_number(target) is not None:
                self._add_each(_conjuncts(subject), _USES, objects[:1], change)  # "X is on port 8082" -> port
            elif prep.lower_ in ("on", "at") and _is_time(target):
                # "the team sync is on Wednesdays", "our standup is at 9:30"
                self._add_each(_conjuncts(subject), _SCHEDULED, objects[:1], change)
            elif prep.lower_ == "on" and self._is_technology(target):
                # "we're on Node 20", "billing is on Postgres 16"
                self._add_each(_conjuncts(subject), _USES, objects, change)
            elif prep.lower_ in ("in", "at", "under") and (
                target.ent_type_ in ("GPE", "LOC", "FAC") or _looks_like_path(phrase.text)
            ):
                self._add_each(_conjuncts(subject), _LOCATED_IN, objects[:1], change)
            return

    def _copula_attr(self, subject, attr, change: str) -> None:
        if _is_wh(attr) or _vague(attr) or attr.pos_ == "PRON":
            return
        indefinite = any(c.dep_ == "det" and c.lower_ in _INDEFINITE for c in attr.children)
        counted = attr.like_num or any(c.dep_ == "nummod" for c in attr.lefts)
        subject_owner = self._owner(subject)
        attr_owner = self._owner(attr)
        if attr.pos_ == "PROPN" and any(c.tag_ == "POS" for c in attr.children):
            # "auth-gateway is Lucía's now": a bare possessive names the owner
            self._add_each(_conjuncts(subject), _OWNED_BY, [attr], change)
        elif indefinite:
            # "Kafka is a message broker", "my sister is a nurse"; not "we are 30 people"
            if not counted:
                self._add_each(_conjuncts(subject), _IS_A, [attr], change)
        elif subject_owner is not None and subject.pos_ in ("NOUN", "PROPN"):
            # "the API's database is MySQL", "our deploy day is Thursday", "the owner of billing is Priya"
            if attr.like_num and subject.lower_ in PERSON_NOUNS:
                # "my grandmother is 96": an age, not the user's grandmother
                self._add_objects(self._phrase(subject), _AGE, [attr], change)
                return
            predicate = Predicate(_noun_predicate(subject), subject.tag_ != "NNS")
            self._add_objects(subject_owner, predicate, [attr], change)
        elif attr_owner is not None and attr.pos_ in ("NOUN", "PROPN") and not self._is_thing(attr):
            # "Redis 7 is our cache", "Priya is the tech lead for billing", "Dana is my manager", "Nia is the PM for X"
            predicate = Predicate(_noun_predicate(attr), True)
            for value in _conjuncts(subject):
                phrase = self._subject_phrase(value)
                if phrase is not None and phrase.key not in (USER, TEAM):
                    self._add(attr_owner, predicate, phrase, change)
        elif _is_proper(attr, self):
            # "the staging database is Postgres 15"; not "I'm Sam" or "we're 12 people"
            if subject.lower_ not in _SUBJECT_PRONOUNS and subject.lower_ != "team":
                self._add_each(_conjuncts(subject), _IS, [attr], change)
        elif attr.pos_ == "NOUN" and not counted:
            # "Priya is the tech lead"
            self._add_each(_conjuncts(subject), _IS_A, [attr], change)

    def _is_thing(self, token) -> bool:
        """A technology, identifier or path: "X is the Postgres of ..." names no role."""
        entity = self._entity_at(token)
        return entity is not None and entity[3] in ("TECHNOLOGY", "CODE", "PATH")

    def _status(self, subject, word, change: str) -> None:
        for value in _conjuncts(subject):
            phrase = self._subject_phrase(value)
            if phrase is not None and (phrase.key not in (USER, TEAM) or _glued_word(word) in PERSON_STATUS_WORDS):
                value = _glued_word(word)
                self._add(phrase, _STATUS, _Phrase(value, value, False, frozenset({word.i})), change)

    # -- phrases -----------------------------------------------------------------

    def _owner(self, noun) -> _Phrase | None:
        """The possessor of a noun: "the API's" database, "our" deploy day, the owner "of billing"."""
        for child in noun.children:
            if child.dep_ == "poss":
                if child.lower_ in _POSSESSIVE_PRONOUNS:
                    name = _POSSESSIVE_PRONOUNS[child.lower_]
                    return _Phrase(name, name, False, frozenset({child.i}))
                if child.pos_ == "PRON":
                    return None  # his, her, their, its, your: whose is unknown here
                return self._phrase(child)
        for child in noun.children:
            if child.dep_ == "prep" and child.lower_ in ("of", "for"):
                objects = [c for c in child.children if c.dep_ == "pobj"]
                if objects and objects[0].pos_ in _NOUNISH and not _vague(objects[0]):
                    return self._phrase(objects[0])
        return None

    def _subject_phrase(self, token) -> _Phrase | None:
        lower = token.lower_
        if lower in _SUBJECT_PRONOUNS:
            name = _SUBJECT_PRONOUNS[lower]
            return _Phrase(name, name, False, frozenset({token.i}))
        if token.pos_ == "PRON" or _is_wh(token) or _vague(token) or lower in ("lets", "let"):
            return None  # it, they, this, someone: the reference is not in this sentence
        if lower == "team" and not any(c.dep_ in ("compound", "amod", "nmod") for c in token.children):
            if all(c.lower_ in ("my", "our", "the") for c in token.children if c.dep_ in ("det", "poss")):
                return _Phrase(TEAM, TEAM, False, frozenset({token.i}))
        # "the wiki" tagged ADJ is still the subject the parser says it is
        mistagged = token.dep_ in ("nsubj", "nsubjpass") and any(c.dep_ == "det" for c in token.children)
        if (token.pos_ not in _NOUNISH and not self._entity_at(token) and not mistagged) or token.like_num:
            return None  # "8080 is the api": a bare number is a value, not a subject
        return self._phrase(token)

    def _object(self, token) -> _Phrase:
        if token.lower_ in _SUBJECT_PRONOUNS:
            name = _SUBJECT_PRONOUNS[token.lower_]
            return _Phrase(name, name, False, frozenset({token.i}))
        return self._phrase(token)

    def _system_from_purpose(self, subject, verb, obj) -> _Phrase | None:
        """"we use Postgres for billing" -> billing: a team's choice for a named system is that system's.

        obj None (a move): only a "for" on the verb counts; "switched to the half in Porto" moved no Porto.
        """
        phrase = self._subject_phrase(subject)
        if phrase is None or phrase.key not in (USER, TEAM):
            return None
        preps = _preps(verb) + (_preps(obj) if obj is not None else [])
        for prep in preps:
            if prep.lower_ not in (("for", "in") if obj is not None else ("for",)):
                continue
            for pobj in prep.children:
                if pobj.dep_ != "pobj" or pobj.tag_ == "VBG" or pobj.pos_ not in ("NOUN", "PROPN") or _vague(pobj):
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
            if child.dep_ in _LEFT_MODIFIERS:
                if child.dep_ == "poss" and child.pos_ == "PRON":
                    start = max(start, child.right_edge.i + 1)
                    continue
                start = min(start, child.left_edge.i)
        if token.i < token.head.i and _misread_verb(token.head):
            start = min(start, token.head.left_edge.i)
        for i in range(token.i - 1, start - 1, -1):
            if doc[i].pos_ == "CCONJ" or doc[i].text in (",", ";"):
                start = i + 1  # a misattached conjunct: "Python 3.12 and Poetry" is two phrases
                break
        for child in token.rights:
            if child.dep_ in _RIGHT_MODIFIERS or (child.dep_ == "prep" and child.lower_ in _RIGHT_PREPS and any(
                c.dep_ == "pobj" for c in child.children
            )):
                end = max(end, child.right_edge.i)
        # Two nouns the parser gave the same role side by side are one name: "the terraform modules" (dobj, dobj).
        while end + 1 < sent.end and _same_role_neighbour(token, doc[end + 1]):
            end = max(end + 1, doc[end + 1].right_edge.i)
        # Tokens glued without spaces belong together: "accounts-api", "user-service", "v2.1-beta".
        while end + 1 < sent.end and not doc[end].whitespace_ and doc[end + 1].text not in _CLOSING and (
            doc[end + 1].tag_ != "POS"
        ):
            end += 1
        while start - 1 >= sent.start and not doc[start - 1].whitespace_ and doc[start - 1].text not in _OPENING and (
            doc[start].text not in _CLOSING and doc[start - 1].tag_ != "POS"
        ):
            start -= 1
        while start < end and (
            doc[start].pos_ in ("DET", "CCONJ", "ADP", "PUNCT", "SCONJ", "INTJ") or doc[start].tag_ == "PRP$"
            or doc[start].lower_ in _FILLERS
        ) and (doc[start].whitespace_ or doc[start].is_punct):
            start += 1  # "the", "our", a stray "and", "btw"; not "on" in "on-call"
        while end > start and (
            doc[end].pos_ in ("CCONJ", "ADP", "PUNCT", "SYM", "INTJ") or doc[end].tag_ == "POS"
            or doc[end].lower_ in _FILLERS or not any(ch.isalnum() for ch in doc[end].text)
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
        s, e = _strip_span(self.text, start_char, end_char)
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
            for value in _conjuncts(head):
                if value.i in covered or _is_wh(value) or _vague(value):
                    continue
                if value.pos_ == "PRON" and value.lower_ not in _SUBJECT_PRONOUNS:
                    continue
                if value.pos_ not in _NOUNISH and value.pos_ != "PRON" and not self._entity_at(value):
                    misread = value.pos_ == "VERB" and (
                        _bare_infinitive_object(value) or (value.dep_ == "pobj" and not list(value.children))
                    )
                    if not (misread or (predicate is _IS_A and value.pos_ in ("ADJ", "VERB"))):
                        continue
                port = _port_number(value)
                if port is not None and predicate in (_USES, _HOSTED_ON, _LISTENS_ON, _SCHEDULED):
                    # "the admin api runs on port 8082" -> (admin api, port, 8082)
                    covered |= {value.i, port.i}
                    self._add(subject, _PORT, _Phrase(port.text, port.text, False, frozenset({port.i})), change)
                    continue
                phrase = self._object(value)
                covered |= phrase.tokens
                self._add(subject, predicate, phrase, change, previous)

    def _add(self, subject: _Phrase, predicate: Predicate, obj: _Phrase, change: str, previous=None) -> None:
        if not subject.key or not obj.key or subject.key == obj.key or not _PREDICATE_NAME.fullmatch(predicate.name):
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


# ---------------------------------------------------------------------------
# Parse helpers


def normalise_key(text: str) -> str:
    """The generic entity key (as EntityExtractor gives CODE and spaCy entities), minus leading determiners."""
    key = " ".join(text.replace("`", "").strip().strip(_QUOTES).split()).lower()
    for prefix in ("the ", "a ", "an ", "our ", "my ", "your ", "their ", "its "):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    for suffix in ("'s", "’s", "()"):
        if key.endswith(suffix):
            key = key[: -len(suffix)]
    return key.strip(_QUOTES).rstrip(" .,;:!?")


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and (text[start] in _QUOTES or text[start].isspace()):
        start += 1
    while end > start and (text[end - 1] in _QUOTES or text[end - 1] in ".,;:!?" or text[end - 1].isspace()):
        end -= 1
    return start, end


def _lemma(token) -> str:
    lower = token.lower_
    if lower in _BE_FORMS and (token.pos_ == "AUX" or lower in ("is", "are", "am", "was", "were", "be")):
        return "be"
    return _VERB_FORMS.get(lower, lower)


def _clauses(root) -> Iterator[tuple[Any, Any]]:
    """The clauses that state something: the root, its verb conjuncts, a remembered or decided complement."""
    stack: list[tuple[Any, Any]] = [(root, None)]
    while stack:
        verb, inherited = stack.pop()
        lemma = _lemma(verb)
        if lemma in REPORT_WORDS or verb.lower_ in REPORT_WORDS:
            for child in verb.children:
                if child.dep_ in ("ccomp", "acl", "appos", "relcl") and child.pos_ in ("VERB", "AUX"):
                    if not any(c.dep_ == "mark" and c.lower_ in _OPEN_MARKS for c in child.children):
                        stack.append((child, None))  # not "remember whether ..."
        elif lemma not in HEDGE_VERBS and lemma not in SAY_VERBS:
            # A comma splice the parser hung under the next clause: "Priya no longer owns billing, Bob does".
            for child in verb.lefts:
                if child.dep_ == "ccomp" and child.pos_ in ("VERB", "AUX") and any(
                    c.dep_ in ("nsubj", "nsubjpass") for c in child.children
                ):
                    stack.append((child, None))
        if lemma in DECISION_VERBS:
            subject = next((c for c in verb.children if c.dep_ == "nsubj"), inherited)
            for child in verb.children:
                if child.dep_ == "xcomp" and child.pos_ == "VERB":
                    stack.append((child, subject))
        if verb.pos_ in ("VERB", "AUX"):
            yield verb, inherited
        elif _misread_verb(verb):
            # The small model tags "runs", "relies" as plural nouns after a lower-case subject:
            # "the ingest job runs on Kubernetes" -> ROOT "runs" (NNS) with "job" as its compound.
            nouns = [c for c in verb.lefts if c.pos_ in _NOUNISH]
            yield verb, next((c for c in nouns if c.dep_ == "nsubj"), nouns[-1])
        subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), inherited)
        for child in verb.children:
            if child.dep_ == "conj" and child.pos_ in ("VERB", "AUX"):
                stack.append((child, subject))


def _misread_verb(token) -> bool:
    lemma = _VERB_FORMS.get(token.lower_)
    return (
        token.dep_ == "ROOT"
        and token.pos_ in ("NOUN", "PROPN")
        and token.lower_.endswith("s")
        and lemma is not None
        and (lemma in VERB_OBJECT or any(v == lemma for v, _ in VERB_PREP_OBJECT))
        and any(c.pos_ in _NOUNISH for c in token.lefts)
        and any(c.dep_ in ("prep", "dobj", "compound", "appos") or c.pos_ in _NOUNISH for c in token.rights)
    )


def _is_question(sent) -> bool:
    """A "?" near the end, a WH-word or auxiliary first ("does the api use Redis"), or a WH-word on the root."""
    tokens = [t for t in sent if not t.is_space]
    if not tokens:
        return True
    if any(t.text == "?" for t in tokens[-3:]):
        return True
    if tokens[0].lower_ in _QUESTION_OPENERS and (tokens[0].tag_ in _WH or tokens[0].pos_ == "AUX"):
        return True
    return any(c.tag_ in _WH for c in sent.root.children)  # "how do I make the api use Postgres"


def _hedged(verb) -> bool:
    for child in verb.children:
        if child.dep_ == "aux" and child.tag_ == "MD":
            return True  # should, could, might, will
        if child.lower_ == "never":
            return True
        if child.lower_ in HEDGES:
            return True
        if child.dep_ in ("parataxis", "advcl") and _lemma(child) in HEDGE_VERBS:
            return True
        if child.dep_ == "mark" and child.lower_ in ("if", "unless", "whether", "once", "when", "until"):
            return True
    return verb.lower_ in ("let", "lets")


def _same_role_neighbour(token, nxt) -> bool:
    return (
        nxt.head.i == token.head.i
        and nxt.dep_ in (token.dep_, "punct", "dep")
        and token.dep_ in ("dobj", "pobj", "attr", "nsubj")
        and nxt.pos_ in ("NOUN", "PROPN")
        and nxt.ent_type_ not in ("DATE", "TIME")
        and nxt.lower_ not in TRANSIENT
    )


def _glued_run(token) -> tuple[int, int]:
    """Token indices [start, end] of the run written without spaces around token: "lactose-intolerant"."""
    doc = token.doc
    start = end = token.i
    while start > 0 and not doc[start - 1].whitespace_ and doc[start - 1].text not in _OPENING:
        start -= 1
    while end + 1 < len(doc) and not doc[end].whitespace_ and doc[end + 1].text not in _CLOSING:
        end += 1
    return start, end


def _is_status(token) -> bool:
    word = _glued_word(token)
    return word in STATUS_WORDS or word in PERSON_STATUS_WORDS


def _glued_word(token) -> str:
    start, end = _glued_run(token)
    return token.doc[start : end + 1].text.lower()


def _only_glued_children(token) -> bool:
    start, end = _glued_run(token)
    return all(start <= c.i <= end for c in token.children)


def _is_time(token) -> bool:
    return token.ent_type_ in ("DATE", "TIME") or _WEEKDAY.fullmatch(token.lower_) is not None


def _port_number(token):
    """The number in "port 8082"."""
    if token.lower_ != "port":
        return None
    for child in token.children:
        if child.dep_ in ("nummod", "appos", "compound", "npadvmod") and child.text.isdigit() and len(child.text) <= 5:
            return child
    nxt = token.nbor(1) if token.i + 1 < len(token.doc) else None
    return nxt if nxt is not None and nxt.text.isdigit() and len(nxt.text) <= 5 else None


def _negation(verb) -> str:
    """"": not negated; ENDED: "not ... anymore", "no longer"; "negated": any other negation."""
    negated = ended = False
    for child in verb.children:
        if child.dep_ == "neg" or child.lower_ == "no":
            negated = True
        if child.lower_ in ("anymore", "longer") or (
            child.lower_ == "more" and any(c.lower_ == "any" for c in child.children)
        ):
            ended = True
            if any(c.lower_ == "no" for c in child.children):
                negated = True  # "no longer"
    if not negated:
        return ""
    return ENDED if ended else "negated"


def _preps(token) -> list:
    """Prepositions on token, and those hanging off them: "from CircleCI to GitHub Actions" nests "to" under "from".

    A "to" the parser read as an infinitive marker counts too when what follows is a bare word:
    "renamed to corekit" comes out as to/aux + corekit/xcomp(VB).
    """
    found = [c for c in token.children if c.dep_ in ("prep", "agent", "dative") and c.pos_ in ("ADP", "PART")]
    for prep in list(found):
        for child in prep.children:
            if child.dep_ == "prep":
                nested = [child]
            elif child.dep_ == "pobj":
                nested = [c for c in child.children if c.dep_ == "prep"]
            else:
                nested = []
            found.extend(c for c in nested if c.pos_ == "ADP")
    for child in token.children:
        if child.dep_ == "xcomp" and _bare_infinitive_object(child):
            found.extend(c for c in child.children if c.dep_ == "aux" and c.lower_ == "to")
    return found


def _bare_infinitive_object(token) -> bool:
    """A name misread as a verb after "to": only the "to" and glued punctuation hang off it."""
    return token.tag_ == "VB" and all(
        (c.dep_ == "aux" and c.lower_ == "to") or c.dep_ == "punct" for c in token.children
    ) and any(c.dep_ == "aux" and c.lower_ == "to" for c in token.children)


def _prep_objects(preps, words: Iterable[str]) -> list:
    words = tuple(words)
    found = []
    for prep in preps:
        if prep.lower_ not in words:
            continue
        if prep.dep_ == "aux":  # see _preps: "to" + a bare word misread as an infinitive
            found.append(prep.head)
            continue
        objects = [c for c in prep.children if c.dep_ in ("pobj", "pcomp") and c.tag_ not in _WH]
        if not objects:
            # The small model sometimes leaves the object unattached ("depends on RabbitMQ" with RabbitMQ as
            # punct): take the next word, and the nouns conjoined to the verb after it.
            nxt = _next_word(prep)
            if nxt is not None and (nxt.pos_ in _NOUNISH or nxt.ent_type_ or nxt.tag_ in (",", "FW")):
                objects = [nxt] + [
                    c for c in prep.head.children if c.dep_ == "conj" and c.i > nxt.i and c.pos_ in ("NOUN", "PROPN")
                ]
        found.extend(objects)
    return found


def _next_word(token):
    doc = token.doc
    for i in range(token.i + 1, min(len(doc), token.i + 4)):
        if doc[i].is_sent_start:
            break
        if doc[i].pos_ == "DET" or doc[i].text in _QUOTES:
            continue
        return doc[i]
    return None


def _direct_object(verb):
    for child in verb.children:
        if child.dep_ in ("dobj", "obj"):
            return child
    # The small model reads "we migrated billing from X" as an xcomp gerund; a bare one is the object.
    for child in verb.children:
        if child.dep_ in ("xcomp", "ccomp", "oprd") and child.tag_ in ("VBG", "NN", "NNS", "NNP") and not any(
            c.dep_ in ("nsubj", "dobj", "aux") for c in child.children
        ):
            return child
    return None


def _instead_of(verb):
    """The old value in "... instead of MySQL" / "... rather than MySQL", whatever the parser attached it to."""
    tokens = list(verb.subtree)
    for n, token in enumerate(tokens[:-2]):
        if (token.lower_, tokens[n + 1].lower_) in (("instead", "of"), ("rather", "than")):
            for after in tokens[n + 2 :]:
                if after.pos_ in _NOUNISH:
                    return after
    return None


def _rename_target(verb, preps):
    targets = _prep_objects(preps, ("to", "as", "into"))
    if targets:
        return targets[0]
    for child in verb.children:
        if child.dep_ in ("oprd", "xcomp", "attr") and child.pos_ in _NOUNISH:
            return child
    return None


def _conjuncts(token) -> list:
    if token is None:
        return []
    found = [token]
    for child in token.children:
        if child.dep_ == "conj" and (child.pos_ == token.pos_ or child.pos_ in _NOUNISH):
            found.extend(_conjuncts(child))
        elif child.dep_ == "appos" and child.pos_ in _NOUNISH and any(
            t.lower_ in ("and", "&") for t in token.doc[token.i + 1 : child.i]
        ):
            found.extend(_conjuncts(child))  # "Python 3.12 and Poetry" read as an apposition
    return found


def _noun_predicate(noun) -> str:
    """The attribute a possessed noun names: "deploy day" -> deploy_day, "favorite editor" -> favorite_editor."""
    start = noun.i
    for child in reversed(list(noun.lefts)):
        if child.dep_ in ("compound", "amod", "nmod", "punct") and child.right_edge.i == start - 1:
            if child.dep_ == "amod" and child.lower_ in FILLER_ADJECTIVES:
                break
            start = child.left_edge.i
        else:
            break
    words = [t.lower_ for t in noun.doc[start : noun.i + 1] if t.dep_ != "punct" or t.text == "-"]
    name = _SNAKE.sub("_", " ".join(words)).strip("_")
    return NOUN_PREDICATES.get(name, name)


def _is_proper(token, reader: _Reader) -> bool:
    return (
        token.pos_ in ("PROPN", "NUM", "X", "SYM")
        or token.like_num
        or reader._entity_at(token) is not None
        or bool(token.ent_type_)
        or _looks_like_path(token.text)
        or "_" in token.text
    )


def _is_version(token) -> bool:
    return _VERSION_TEXT.fullmatch(token.text) is not None


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or re.search(r"\.[A-Za-z]{1,5}$", text) is not None


def _past_be(verb) -> bool:
    return verb.lower_ in _PAST_BE or any(c.dep_ in ("aux", "auxpass") and c.lower_ in _PAST_BE for c in verb.children)


def _is_wh(token) -> bool:
    return token.tag_ in _WH


def _vague(token) -> bool:
    """A placeholder, a quantity or a pointing word: "something", "too much memory", "this PR", "every push"."""
    return token.lower_ in _VAGUE_NOUNS or any(
        c.dep_ in ("det", "amod", "predet") and c.lower_ in _VAGUE_DETERMINERS for c in token.children
    )


def _transient(verb) -> bool:
    """Today's news rather than a lasting fact: "my laptop is slow today", "I'm working on X right now"."""
    for child in verb.children:
        if child.lower_ in TRANSIENT and child.dep_ in ("advmod", "npadvmod"):
            return True
        if child.dep_ == "npadvmod" and any(c.dep_ == "det" and c.lower_ == "this" for c in child.children):
            return True  # "this week", "this morning"
        if child.lower_ == "now" and any(c.lower_ == "right" for c in child.children):
            return True
    return False
