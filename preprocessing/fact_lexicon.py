"""The words fact extraction reads: change kinds, the predicate tables, verb classes, status and filler words, verb forms."""

from __future__ import annotations

import re
from dataclasses import dataclass

STATE = "state"  # a plain statement of how things are: "billing uses Postgres"
CHANGE = "change"  # the sentence reports a change to this value: "we moved X to Y", "X now uses Y"
RENAME = "rename"  # the subject's name changed: "X was renamed to Y"
ENDED = "ended"  # the fact stopped being true: "we don't use npm anymore", "Priya no longer owns billing"

USER = "user"  # I, me, my
TEAM = "team"  # we, us, our, "my team", "the team"
@dataclass(frozen=True)
class Predicate:
    name: str
    singular: bool
    event: bool = False  # a decision or a move: the past tense still states the current value


# ---------------------------------------------------------------------------
# The predicate tables

USES = Predicate("uses", False)
CHOSE = Predicate("uses", False, event=True)  # "we went with X", "we picked X": a decision, so past tense counts
DEPENDS_ON = Predicate("depends_on", False)
OWNS = Predicate("owns", False)
OWNED_BY = Predicate("owned_by", True)
LEADS = Predicate("leads", False)
LED_BY = Predicate("led_by", True)
LOCATED_IN = Predicate("located_in", True)
WORKS_AT = Predicate("works_at", True)
WORKS_ON = Predicate("works_on", False)
REPORTS_TO = Predicate("reports_to", True)
PREFERS = Predicate("prefers", False)
HOSTED_ON = Predicate("hosted_on", True)
MOVED_TO = Predicate("moved_to", True, event=True)
RENAMED_TO = Predicate("renamed_to", True, event=True)
REPLACED_BY = Predicate("replaced_by", True, event=True)
VERSION = Predicate("version", True, event=True)
NAME = Predicate("name", True)
IS = Predicate("is", True)
IS_A = Predicate("is_a", False)
STATUS = Predicate("status", True)
PORT = Predicate("port", True)
LISTENS_ON = Predicate("listens_on", True)
AGE = Predicate("age", True)
SCHEDULED = Predicate("scheduled", True)

# Active verb + direct object: "billing uses Postgres", "Priya owns billing".
VERB_OBJECT: dict[str, Predicate] = {
    "use": USES,
    "adopt": CHOSE,
    "choose": CHOSE,
    "pick": CHOSE,
    "select": CHOSE,
    "require": DEPENDS_ON,
    "import": DEPENDS_ON,
    "own": OWNS,
    "maintain": OWNS,
    "lead": LEADS,
    "manage": LEADS,
    "prefer": PREFERS,
}

# Active verb + preposition + object: "auth depends on Redis", "I live in Lisbon".
VERB_PREP_OBJECT: dict[tuple[str, str], Predicate] = {
    ("depend", "on"): DEPENDS_ON,
    ("depend", "upon"): DEPENDS_ON,
    ("rely", "on"): DEPENDS_ON,
    ("run", "on"): USES,
    ("listen", "on"): LISTENS_ON,
    ("build", "on"): USES,
    ("go", "with"): CHOSE,
    ("settle", "on"): CHOSE,
    ("decide", "on"): CHOSE,
    ("live", "in"): LOCATED_IN,
    ("live", "at"): LOCATED_IN,
    ("work", "at"): WORKS_AT,
    ("work", "for"): WORKS_AT,
    ("work", "on"): WORKS_ON,
    ("report", "to"): REPORTS_TO,
    ("deploy", "to"): HOSTED_ON,
    ("deploy", "on"): HOSTED_ON,
}

# Passive participle + preposition (or "by" agent): "billing is owned by Priya", "auth is written in Go".
# None as the predicate means "invert to the active form": "Postgres is used by billing" -> (billing, uses, Postgres).
PASSIVE_PREP_OBJECT: dict[tuple[str, str], Predicate | None] = {
    ("own", "by"): OWNED_BY,
    ("maintain", "by"): OWNED_BY,
    ("lead", "by"): LED_BY,
    ("manage", "by"): LED_BY,
    ("run", "by"): LED_BY,
    ("use", "by"): None,
    ("write", "in"): USES,
    ("build", "with"): USES,
    ("build", "on"): USES,
    ("build", "in"): USES,
    ("implement", "in"): USES,
    ("power", "by"): USES,
    ("back", "by"): USES,
    ("host", "on"): HOSTED_ON,
    ("host", "at"): HOSTED_ON,
    ("host", "in"): HOSTED_ON,
    ("host", "by"): HOSTED_ON,
    ("deploy", "to"): HOSTED_ON,
    ("deploy", "on"): HOSTED_ON,
    ("deploy", "at"): HOSTED_ON,
    ("serve", "from"): HOSTED_ON,
    ("locate", "in"): LOCATED_IN,
    ("define", "in"): LOCATED_IN,
    ("configure", "in"): LOCATED_IN,
    ("locate", "at"): LOCATED_IN,
    ("store", "in"): LOCATED_IN,
    ("store", "at"): LOCATED_IN,
    ("store", "on"): LOCATED_IN,
    ("keep", "in"): LOCATED_IN,
    ("base", "in"): LOCATED_IN,
    ("base", "at"): LOCATED_IN,
    ("move", "to"): MOVED_TO,
    ("migrate", "to"): MOVED_TO,
    ("switch", "to"): MOVED_TO,
    ("port", "to"): MOVED_TO,
    ("rename", "to"): RENAMED_TO,
    ("rename", "as"): RENAMED_TO,
    ("replace", "by"): REPLACED_BY,
    ("replace", "with"): REPLACED_BY,
}

# Verbs that move their object somewhere: "we moved the frontend to Vercel", "we switched from MySQL to Postgres".
MOVE_VERBS = frozenset({"move", "migrate", "switch", "port", "transfer", "relocate", "shift", "upgrade", "downgrade"})
VERSION_VERBS = frozenset({"upgrade", "downgrade", "bump", "pin"})
# "we changed the deploy day to Friday", "I set my editor to vim": the object names the attribute.
SET_VERBS = frozenset({"change", "set", "update"})
# "we keep the secrets in Vault", "we host the docs on Netlify".
PLACE_VERBS: dict[str, Predicate] = {"keep": LOCATED_IN, "store": LOCATED_IN, "put": LOCATED_IN,
                                      "host": HOSTED_ON, "deploy": HOSTED_ON, "run": HOSTED_ON}
# "we deploy on Thursdays": a day named after these verbs is a schedule, not a host.
SCHEDULE_VERBS = frozenset({"deploy", "release", "ship", "meet"})

# "X is <adjective> <prep> Y".
ADJECTIVE_PREP: dict[tuple[str, str], Predicate] = {
    ("allergic", "to"): Predicate("allergic_to", False),
    ("responsible", "for"): OWNS,
    ("compatible", "with"): Predicate("compatible_with", False),
    ("dependent", "on"): DEPENDS_ON,
    ("based", "in"): LOCATED_IN,
    ("located", "in"): LOCATED_IN,
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
WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
QUESTION_OPENERS = frozenset(
    "is are am was were do does did can could should would will shall has have had may might must "
    "what which who whom whose where when why how isn't aren't doesn't don't didn't won't can't".split()
)

SUBJECT_PRONOUNS = {"i": USER, "me": USER, "myself": USER, "we": TEAM, "us": TEAM, "ourselves": TEAM}
POSSESSIVE_PRONOUNS = {"my": USER, "our": TEAM}
VAGUE_NOUNS = frozenset(
    "thing things stuff something anything everything nothing one ones lot lots bit way kind sort".split()
)
VAGUE_DETERMINERS = frozenset(
    "which what whatever this that these those much many some any every each all enough several few more less".split()
)
# Nouns that frame an answer rather than name a thing: "the problem is the timeout".
DISCOURSE_NOUNS = frozenset(
    "problem issue answer question point idea reason thing solution fix trick goal plan catch difference result "
    "output error bug takeaway gist".split()
)
TRANSIENT = frozenset({"today", "tonight", "yesterday", "tomorrow", "again"})
FILLERS = frozenset("btw fyi ok okay so oh also anyway hey hi lol".split())
BE_FORMS = frozenset("be is are am was were been being 's 're 'm ’s ’re ’m".split())
PAST_BE = frozenset({"was", "were"})
BARE_PASSIVE_DEPS = frozenset({"nsubjpass", "nsubj", "auxpass", "aux", "punct", "advmod", "cc", "conj"})
OPEN_MARKS = frozenset({"if", "whether", "how", "what"})
INDEFINITE = frozenset({"a", "an", "some", "any", "another"})
QUOTES = "`'\"“”‘’"
CLOSING = frozenset(list(".,;:!?)]}") + list(QUOTES) + ["...", "…"])
OPENING = frozenset(list("([{") + list(QUOTES))
NOUNISH = frozenset({"NOUN", "PROPN", "NUM", "X", "SYM"})
LEFT_MODIFIERS = frozenset({"compound", "amod", "nummod", "nmod", "quantmod", "poss", "npadvmod", "hmod", "punct"})
RIGHT_MODIFIERS = frozenset({"nummod", "compound", "npadvmod"})
RIGHT_PREPS = frozenset({"of", "per"})
FENCE = re.compile(r"(`{3,}|~{3,})[\s\S]*?(?:\1|\Z)")
VERSION_TEXT = re.compile(r"v?\d+(?:\.\d+){0,3}(?:\.x)?", re.IGNORECASE)
SNAKE = re.compile(r"[^a-z0-9]+")
PREDICATE_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")  # what the graph store accepts as a predicate
WEEKDAY = re.compile(r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?")


def verb_forms() -> dict[str, str]:
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


VERB_FORMS = verb_forms()
