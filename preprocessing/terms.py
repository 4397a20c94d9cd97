"""Code-aware search terms: words, numbers, versions and identifiers with their parts, lightly stemmed, no stopwords."""

from __future__ import annotations

import re
from functools import lru_cache

from preprocessing.bounds import RULE_CHARS, TERM_CHARS, text_prefix
from preprocessing.stopwords import STOPWORDS as FUNCTION_WORDS

# Function words, and the words of asking rather than of the topic ("tell me what I said about the deploy").
STOPWORDS = FUNCTION_WORDS | frozenset(("tell", "say", "said", "remember"))
# A token: letters/digits, optionally joined by . _ - / (identifiers, versions, paths) and kept whole.
_TOKEN = re.compile(r"[A-Za-z0-9]+(?:[._\-/][A-Za-z0-9]+)*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_JOINERS = re.compile(r"[._\-/]")
_VERSION = re.compile(r"v?\d+(?:\.\d+)*")


def stem(word: str) -> str:
    """A light English suffix stripper: "deploys", "deployed", "deploying" -> "deploy"; "moved" -> "move".

    Queries and documents go through the same function, so consistency matters more than linguistics.
    """
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    for suffix in ("ing", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return _restore(word[: -len(suffix)])
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _restore(base: str) -> str:
    """Undo what -ed/-ing did to the base: "runn" -> "run", "mov" -> "move", "us" -> "use"."""
    if len(base) >= 3 and base[-1] == base[-2] and base[-1] not in "lsz":
        return base[:-1]
    if base[-1] in "vucz" or (len(base) == 2 and base[-1] == "s"):
        return base + "e"
    return base


@lru_cache(maxsize=1 << 17)
def is_identifier(token: str) -> bool:
    """snake_case, CamelCase, dotted, pathed or versioned tokens: worth an exact-match boost."""
    lower = token.lower()
    if _VERSION.fullmatch(lower):
        return "." in lower or lower.startswith("v")
    return bool(_JOINERS.search(token)) or (any(c.isupper() for c in token[1:]) and any(c.islower() for c in token))


def terms(text: str) -> list[str]:
    """Every term occurrence, in order (repeats kept, for term frequencies).

    An identifier yields itself (lower-cased) and its parts: "AuthService" -> authservice, auth, service;
    "src/api.py" -> src/api.py, src, api, py; "3.12" -> 3.12, 3, 12.
    """
    found: list[str] = []
    for token in _tokens(text):
        found.extend(_token_terms(token))
    return found


def _tokens(text: str) -> list[str]:
    """The text's tokens, each cut to TERM_CHARS: a 64 KiB run of letters is one token, and the caches below would
    otherwise keep whole texts as keys."""
    return [token[:TERM_CHARS] for token in _TOKEN.findall(text)]


@lru_cache(maxsize=1 << 17)
def _token_terms(token: str) -> tuple[str, ...]:
    """One token's terms (cached: the same words recur across a whole store, and indexing a million memories
    would otherwise split and stem them again each time)."""
    lower = token.lower()
    parts = [p for piece in _JOINERS.split(token) for p in _CAMEL.findall(piece)]
    if len(parts) > 1 or _JOINERS.search(token):
        return (lower, *(stem(p.lower()) for p in parts if p.lower() not in STOPWORDS))
    return () if lower in STOPWORDS else (stem(lower),)


def query_terms(text: str) -> list[str]:
    """The distinct terms of a query, in order."""
    return list(dict.fromkeys(terms(text)))


def identifiers(text: str) -> set[str]:
    """The identifier tokens of a text, lower-cased: what an exact-identifier boost matches."""
    return {token.lower() for token in _tokens(text) if is_identifier(token)}


# A question about how things were, not how they are: "which Python did we use before the upgrade?"
_ASKS_ABOUT_THE_PAST = re.compile(
    r"\b(?:before|previous(?:ly)?|used to|originally|formerly|former|at first|initially|prior to|in the past"
    r"|back then|back when|old(?:er)?|earlier|first (?:one|version|choice))\b", re.IGNORECASE)


def asks_about_the_past(query: str) -> bool:
    """The query asks what was true earlier, so outdated memories are answers, not noise."""
    return bool(_ASKS_ABOUT_THE_PAST.search(query))


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'._\-/]*[A-Za-z0-9]|[A-Za-z]")
MAX_NAME_WORDS = 6  # a longer capitalised run is a title or shouting, not one name: it is cut into runs this long


def salient_keys(text: str) -> set[str]:
    """Cheap entity keys without a parse: identifiers, names (capitalised words and runs of them, not the first
    word of a sentence unless it looks like a name) and known technology names, in their canonical form, from the
    text's first RULE_CHARS characters."""
    from preprocessing.gazetteer import TechnologyGazetteer  # a dict lookup, no spaCy

    gazetteer = TechnologyGazetteer.load()
    text = text_prefix(text, RULE_CHARS)
    keys = set(identifiers(text))
    words = [(m.group(), m.start()) for m in _WORD.finditer(text)]
    run: list[str] = []

    def close_run() -> None:
        if run:
            keys.add(" ".join(run).lower())
            run.clear()

    for i, (word, start) in enumerate(words):
        lower = word.lower().strip("'")
        form = gazetteer.plain.get(lower)
        if form is not None:
            keys.add(form.canonical.lower())
        sentence_start = i == 0 or _last_mark_before(text, start) in ".!?:\n"
        if word[0].isupper() and lower not in STOPWORDS and not (sentence_start and word.istitle() and len(words) > 1
                                                                  and _common_word(lower)):
            if len(run) == MAX_NAME_WORDS:
                close_run()  # a capitalised title or a shouted paragraph, not one name
            run.append(word.strip("'"))
        else:
            close_run()
    close_run()
    return {k for k in keys if 1 < len(k) <= TERM_CHARS and k not in STOPWORDS}


def _last_mark_before(text: str, start: int) -> str:
    """The last non-space character before `start` ("" at the start): read backwards over the spaces only, since
    copying the text up to every word costs its length squared."""
    at = start - 1
    while at >= 0 and text[at].isspace():
        at -= 1
    return text[at] if at >= 0 else ""


def _common_word(lower: str) -> bool:
    """A capitalised sentence opener that is an ordinary word ("Moved", "Deploys"), not a name."""
    return lower in STOPWORDS or lower.endswith(("ed", "ing", "ly")) or stem(lower) != lower
