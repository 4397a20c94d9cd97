"""Duplicate and update detection: compares a new message with its nearest memories and recommends what to do."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from functools import lru_cache
from itertools import islice, zip_longest
from pathlib import Path

import numpy as np

from preprocessing.bounds import DEDUP_CHARS, RULE_CHARS, text_prefix
from preprocessing.stopwords import STOPWORDS


class DedupAction(str, Enum):
    """MERGE: the memory already says this. UPDATE_CANDIDATE: same subject, changed fact. REVIEW: similar, unsure."""

    MERGE = "MERGE"
    REVIEW = "REVIEW"
    NEW = "NEW"
    UPDATE_CANDIDATE = "UPDATE_CANDIDATE"


@dataclass(frozen=True)
class DedupCandidate:
    memory_id: str
    text: str
    similarity: float  # cosine between the new text's embedding and this memory's embedding
    # The texts of this memory's earlier versions (those it superseded or revised in part), newest first, where the
    # caller looked them up: RelationJudge reads them when this memory is worded as a change.
    earlier: tuple[str, ...] = ()


@dataclass(frozen=True)
class DedupVerdict:
    action: DedupAction
    memory_id: str | None  # the matched memory for MERGE / REVIEW / UPDATE_CANDIDATE
    similarity: float
    reasons: tuple[str, ...]
    relation: str = ""  # the relation model's label for the matched memory; "" when the rules decided
    degraded: str = ""  # why the decision fell back (the relation model failed), "" when it did not
    # Other versions of the memory an update replaces ("search runs Elasticsearch 7.10", said twice; "I take oat
    # milk" before "trying almond milk", for "went back to oat milk"): replaced with it.
    also_updates: tuple[str, ...] = ()


@dataclass(frozen=True)
class DedupThresholds:
    duplicate_similarity: float = 0.85  # the product's "dedup similarity" setting
    related_similarity: float = 0.6  # below this: NEW


# A pair whose wording agrees almost word for word is a duplicate a little below the
# cosine setting: MiniLM scores "Uploads are capped at 10MB" vs "The max upload size is 10 MB" 0.84.
LEXICAL_MERGE_MARGIN = 0.1
LEXICAL_MERGE_CONTAINMENT = 0.6
# Word pairs tried for a fuzzy match (a shared stem) per comparison: a few hundred for any real pair of texts, and the
# cap on a crafted one whose every word starts alike.
FUZZY_TRIALS = 20_000
# A message that announces a change of a shared subject ("we migrated CI to GitHub Actions")
# is an update even when MiniLM puts it under related_similarity.
UPDATE_MARGIN = 0.2
# Share of the frame (content words outside the conflicting values) both sides must agree on
# before a conflict counts as an update of the same fact rather than a different fact; stricter
# when the embedding also doubts the two are related.
FRAME_AGREEMENT = 0.6
FRAME_AGREEMENT_BELOW_RELATED = 0.7

# --- lexicon: general English, no sentences from any data set ------------------------------------

# Function words, and the hedges and asides that say nothing about the fact itself.
_STOPWORDS = STOPWORDS | frozenset("""
always another approximately around basically bit btw currently fyi generally heads kind know lot many much
normally note ok okay please pm pretty quite really remember reminder roughly sort still typically usually well
""".split())

_NEGATORS = frozenset("not no never none nothing nobody neither nor without cannot".split())
_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "thirteen": "13", "fourteen": "14",
    "fifteen": "15", "sixteen": "16", "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
    "thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000", "once": "1", "twice": "2", "noon": "12", "midnight": "0",
    # Ordinals from third on; "first" and "second" are too often not numbers ("first, run the tests").
    "third": "3", "fourth": "4", "fifth": "5", "sixth": "6", "seventh": "7", "eighth": "8", "ninth": "9",
    "tenth": "10", "eleventh": "11", "twelfth": "12",
}

_WEEKDAYS = {d: d for d in "monday tuesday wednesday thursday friday saturday sunday".split()}
# Short forms count only when capitalised: "Wed" is Wednesday, "wed" is a verb.
_WEEKDAY_ABBREVIATIONS = {"Mon": "monday", "Tue": "tuesday", "Tues": "tuesday", "Wed": "wednesday",
                          "Thu": "thursday", "Thur": "thursday", "Thurs": "thursday", "Fri": "friday",
                          "Sat": "saturday", "Sun": "sunday"}
_MONTHS = {m: m for m in "january february march april june july august september october november december".split()}
_MONTH_ABBREVIATIONS = {"Jan": "january", "Feb": "february", "Mar": "march", "Apr": "april", "Jun": "june",
                        "Jul": "july", "Aug": "august", "Sep": "september", "Sept": "september",
                        "Oct": "october", "Nov": "november", "Dec": "december"}

# Words that swap for each other without a change of meaning of the slot they fill would be
# synonyms; these are the opposite: two members in the same place mean two different facts.
_CONTRAST_SETS = {
    "time of day": frozenset("morning afternoon evening night tonight".split()),
    "frequency": frozenset("hourly daily nightly weekly biweekly fortnightly monthly quarterly yearly annually".split()),
    "work location": frozenset("home office remote onsite hybrid".split()),
    "environment": frozenset("dev development staging prod production sandbox qa uat".split()),
    "log level": frozenset("debug info warn warning error critical fatal trace".split()),
    "indentation": frozenset("tab tabs space spaces".split()),
    "side": frozenset("left right".split()),
    "order": frozenset("ascending descending".split()),
}
_CONTRAST_WORDS = frozenset().union(*_CONTRAST_SETS.values())
# Contrast sets whose members name another instance of a thing, not another value of it: "the staging API key" and
# "the production API key" are two keys, so a message about one never updates a memory about the other.
_INSTANCE_CONTRASTS = ("environment",)
_CONTRAST_ALIASES = {"production": "prod", "development": "dev", "tabs": "tab", "spaces": "space",
                     "warning": "warn", "fortnightly": "biweekly", "annually": "yearly"}

# Opposites that are not a negation of each other (negations live in _NEGATIVE).
_ANTONYMS = tuple((a, b) for a, b in (pair.split("/") for pair in """
start/stop start/finish begin/end add/remove keep/delete keep/remove kept/delete kept/remove create/delete add/delete
install/uninstall increase/decrease raise/lower before/after public/private
internal/external required/optional mandatory/optional manual/automatic manual/automated manually/automatically
synchronous/asynchronous dark/light pass/fail success/failure lock/unlock show/hide visible/hidden max/min
maximum/minimum more/less more/fewer higher/lower faster/slower early/late earlier/later first/last upper/lower
above/below inside/outside local/remote safe/unsafe stable/unstable valid/invalid good/bad best/worst
import/export upload/download encrypt/decrypt win/lose buy/sell
""".split()))

# Phrases by which a message announces that a fact changed. Classes, not words, are compared, so
# "rather than" in the memory and "instead of" in the message cancel out.
_MARKERS: dict[str, re.Pattern[str]] = {
    "now": re.compile(r"\b(?:now|nowadays|these days|from now on|going forward|as of (?:today|now|this \w+|\w+day)"
                      r"|starting (?:next|this|today|tomorrow|from|\w+day)|anymore|any more|no longer|no more)\b"),
    "changed": re.compile(r"\b(?:switch(?:ed|ing)?(?: over)?(?: to)?|chang(?:ed|ing|es)(?: to)?|mov(?:ed|ing|es)(?: to)?"
                          r"|migrat(?:ed|ing|es)(?: to)?|replac(?:ed|ing|es)(?: with| by)?|renam(?:ed|ing|es)(?: to)?"
                          r"|reschedul(?:ed|ing)(?: to| for)?|postpon(?:ed|ing)(?: to| until)?|push(?:ed)? (?:back|out|to)"
                          r"|upgrad(?:ed|ing)(?: to)?|downgrad(?:ed|ing)(?: to)?|rewr(?:itten|ote)(?: in)?"
                          r"|became|has become|turned into|went (?:up|down)(?: to)?|grew(?: to)?|shrank(?: to)?"
                          r"|(?:increased|decreased|raised|lowered|cut|bumped|reduced|dropped) to|joined|transferred to"
                          r"|t(?:ook|aken|akes) over(?: from)?|handed (?:over|off)(?: to)?)\b"),
    "ceased": re.compile(r"\b(?:quit|stopped|cancel+ed|gave up|given up|dropped|abandoned|retired)\b"),
    "instead": re.compile(r"\b(?:instead(?: of)?|rather than|in place of)\b"),
    "correction": re.compile(r"\b(?:actually|(?:it )?turns out|correction|i was wrong|to be clear)\b"),
}
_ANY_MARKER = re.compile("|".join(p.pattern for p in _MARKERS.values()), re.I)


# Words by which a later statement revises an earlier one without the comparison markers above.
_REVISING = re.compile(r"\b(?:again|back (?:to|into|on|in)|revers(?:e|ed|al)|misread|mishear\w*|misheard|misremember\w*"
                       r"|mis(?:took|taken)|mistake|wrong|correct(?:ed|s|ion)|disabled|enabled|sold|bought|got rid of"
                       r"|cancel\w*|from next \w+|from (?:now|then) on|later|earlier|new policy|wrote back|checked)\b", re.I)


# Words by which a statement says an earlier state came back ("we are back to gofumpt", "bought a car again",
# "leadership reversed the policy"): it restates what an intermediate change replaced.
_RETURNING = re.compile(r"\b(?:again|back (?:to|into|on|in)|revers(?:e|ed|es|al|ing)|revert(?:ed|ing|s)?|undo(?:ne)?|undid"
                        r"|roll(?:ed|ing)? back|reinstat(?:e|ed|es|ing)|restor(?:e|ed|es|ing)|once more)\b", re.I)


def announces_return(text: str) -> bool:
    """The text says an earlier state is back ("again", "back to", "reversed", "reverted", "restored")."""
    return bool(_RETURNING.search(text_prefix(text, RULE_CHARS)))


_NAME_KINDS = ("value", "initial_name")


def shares_topic(text: str, other: str) -> bool:
    """The two texts have a content word or a kind of value (a number, a weekday, a month, a name) in common: the
    least a message that does not name its subject ("pushed it to 10 June") needs to update an earlier one."""
    first, second = _analyse(text), _analyse(other)
    if {w.key for w in first.content if w.kind != "number"} & {w.key for w in second.content if w.kind != "number"}:
        return True
    if any(getattr(first, kind) and getattr(second, kind) for kind in ("numbers", "weekdays", "months")):
        return True
    return any(w.kind in _NAME_KINDS for w in first.content) and any(w.kind in _NAME_KINDS for w in second.content)


def contradicts(text: str, other: str) -> bool:
    """The two texts cannot both be true as stated: another number, day, month, contrasting word or name in the same
    place, or the opposite polarity ("clusters run Kubernetes 1.28" / "all clusters are on 1.30")."""
    old, new = _analyse(other), _analyse(text)
    return bool(_conflicts(old, new, _align(old, new))[0])


def states_a_new_number(text: str, other: str) -> bool:
    """The text writes in digits a number (a version, time or amount: "2am" is "02:00") that the other text does not
    hold in any spelling: "3.10" after "3.9". A number written in words, or one the text leaves out, is not a new one."""
    written = {w.key for w in _analyse(text).content if w.kind == "number" and (w.surface[0].isdigit() or w.surface[0] == "$")}
    return bool(written - _analyse(other).numbers)


def names_other_instance(text: str, other: str) -> bool:
    """The texts are about different instances of a thing: each names an environment, and not the same one."""
    return _other_instance(_analyse(other), _analyse(text))


def _other_instance(old: _Analysis, new: _Analysis) -> bool:
    """Both texts name a member of an instance contrast set (an environment), and no member in common."""
    for name in _INSTANCE_CONTRASTS:
        before = {w for n, w in old.contrasts if n == name}
        after = {w for n, w in new.contrasts if n == name}
        if before and after and not before & after:
            return True
    return False


def announces_change(text: str) -> bool:
    """The text says something changed, stopped, came back or was corrected ("moved it to", "no longer",
    "actually", "again", "I misread")."""
    text = text_prefix(text, RULE_CHARS)
    return bool(_ANY_MARKER.search(text) or _REVISING.search(text) or _RETURNING.search(text))

# Polarity: a negator, a word with a negation inside it ("I dislike X" agrees with "I don't like X"
# and contradicts "I like X"; "turned off" contradicts "enabled"), or ceasing ("I quit coffee").
_NEGATIVE = re.compile(r"\b(?:not|no|never|none|nothing|nobody|neither|nor|without|cannot|anymore|any more"
                       r"|dislik\w*|hat(?:e|es|ed|ing)|avoid\w*|refus\w*|den(?:y|ies|ied)|forb[ai]d\w*|prohibit\w*"
                       r"|ban(?:s|ned)?|disabl\w*|disallow\w*|exclud\w*|reject\w*|off|closed|false|inactive"
                       r"|unavailable|offline)\b")
_NEGATING_MARKERS = ("ceased",)
# Idioms of liking and disliking, reduced to the verb they mean so that polarity and alignment see it.
_IDIOMS = (
    (re.compile(r"\b(?:can ?not|could not) (?:stand|bear)\b", re.I), "hate"),
    (re.compile(r"\b(?:am|is|are|was|were) (?:a |an |)?(?:big |huge |)?fans? of\b", re.I), "like"),
    (re.compile(r"\b(?:am|is|are|was|were) (?:really |very |)?(?:fond of|keen on|into)\b", re.I), "like"),
)
# "every two weeks" and "biweekly" are one value; "every week" and "weekly" another.
_FREQUENCIES = (
    (re.compile(r"\b(?:every|each) (?:two|2|other|second) weeks?\b", re.I), "biweekly"),
    (re.compile(r"\b(?:every|each|per|once an?|(?<=times )an?) (day|night|week|month|quarter|year|hour)\b", re.I), None),
)
_FREQUENCY_WORDS = {"day": "daily", "night": "nightly", "week": "weekly", "month": "monthly",
                    "quarter": "quarterly", "year": "yearly", "hour": "hourly"}
_STRONG_MARKERS = ("changed", "ceased", "correction")
_REPLACING_MARKERS = ("changed", "instead")

_CONTRACTIONS = (
    (re.compile(r"\b(can)'t\b", re.I), r"\1 not"), (re.compile(r"\b(wo)n't\b", re.I), "will not"),
    (re.compile(r"n't\b", re.I), " not"), (re.compile(r"'m\b", re.I), " am"), (re.compile(r"'re\b", re.I), " are"),
    (re.compile(r"'ve\b", re.I), " have"), (re.compile(r"'ll\b", re.I), " will"), (re.compile(r"'d\b", re.I), " would"),
    (re.compile(r"'s\b", re.I), ""), (re.compile(r"(?<=s)'(?=\s|$)"), ""),
)
_TOKEN = re.compile(r"\$?\d[\d,]*(?:[.:]\d+)*[^\W\d_]*|[^\W\d_]\w*(?:[.-]\w+)*|[.!?;:]")
_WORD_RUN = re.compile(r"\w+")
_OPENING_WORDS = 64
_NUMBER = re.compile(r"^\$?(\d[\d,]*(?:[.:]\d+)*)([^\W\d_]*)$")
_VERSION = re.compile(r"^[vV](\d+(?:\.\d+)+|\d+)$")
_TECH_TERM = re.compile(r"\d|[._]|[a-z][A-Z]")  # digits, dots, underscores or camelCase
# A word after these is a verb, and participles and -ly adverbs qualify a verb: none of them is a slot value.
_PRONOUNS_AND_MODALS = frozenset("i we you they he she to will would should can could must may might do does did not never".split())
_NOT_A_SLOT_SUFFIXES = ("ed", "en", "ing", "ly")


@lru_cache(maxsize=16384)
def _stem(word: str) -> str:
    """Crude suffix stripping: enough to match deploy/deploys/deployed, never aimed at linguistic roots."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (("ies", "y"), ("ied", "y"), ("sses", "ss")):
        if word.endswith(suffix):
            return word[: -len(suffix)] + replacement
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix, minimum in (("ing", 6), ("ed", 5), ("ly", 6), ("ment", 9)):
        if word.endswith(suffix) and len(word) >= minimum:
            word = word[: -len(suffix)]
            if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _spelling(word: str) -> str:
    # British and American spellings of one word must compare equal: colour/color, organise/organize.
    if len(word) >= 6 and word.find("our") >= 2:
        word = word.replace("our", "or")
    if len(word) >= 7:
        word = re.sub(r"is(e|ed|es|ing|ation)$", r"iz\1", word)
    return word


def _number(token: str, following: str) -> str | None:
    """Canonical form of a numeric token (\"$1,800\" -> 1800, \"3 pm\" -> 15, \"10:00\" -> 10, \"5k\" -> 5000)."""
    version = _VERSION.match(token)
    if version:
        return version.group(1)
    match = _NUMBER.match(token)
    if not match:
        return None
    digits, unit = match.group(1).replace(",", ""), match.group(2).lower()
    digits = re.sub(r":00$", "", digits)
    if unit == "k" and digits.isdigit():
        digits = str(int(digits) * 1000)
    afternoon = (unit or following) in ("pm", "p.m")
    if afternoon and digits.isdigit() and int(digits) < 12:
        digits = str(int(digits) + 12)
    elif afternoon and ":" in digits:
        hour, minute = digits.split(":", 1)
        digits = f"{int(hour) + 12}:{minute}" if hour.isdigit() and int(hour) < 12 else digits
    return digits.lstrip("0") or "0"


@dataclass(frozen=True)
class _Word:
    """One content word: its comparison key, surface form, what kind of value it is, and hints about its role."""

    key: str
    surface: str
    kind: str  # "word", "value" (name or tech term), "number", "weekday", "month", "initial_name"
    verb_like: bool = False  # follows a pronoun, modal, negator or "to", or looks like a participle or adverb
    polar: bool = False  # carries a negation itself ("disabled", "off", "dislike")


_SLOT_KINDS = ("number", "weekday", "month")


@dataclass(frozen=True)
class _Analysis:
    """Everything the rules need from one text, computed once per text."""

    content: tuple[_Word, ...]
    lowered: tuple[str, ...]  # every normalised word, stopwords included, for antonyms and contrasts
    numbers: frozenset[str]
    weekdays: frozenset[str]
    months: frozenset[str]
    contrasts: frozenset[tuple[str, str]]  # (contrast set, member)
    markers: frozenset[str]
    negated: bool


def _expand(text: str) -> str:
    """Contractions spelled out, frequencies and idioms in one form, so both texts tokenise alike."""
    text = text.replace("\u2019", "'").replace("`", " ")
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    for pattern, word in _FREQUENCIES:
        text = pattern.sub(lambda m: word or _FREQUENCY_WORDS[m.group(1).lower()], text)
    for pattern, word in _IDIOMS:
        text = pattern.sub(word, text)
    return text


def _analyse(text: str) -> _Analysis:
    """Content words, values, change markers and polarity of the text's first DEDUP_CHARS characters."""
    return _analysed(text_prefix(text, DEDUP_CHARS))


@lru_cache(maxsize=4096)
def _analysed(text: str) -> _Analysis:
    """_analyse of a text already cut to size (cached: check() sees a message many times)."""
    expanded = _expand(text)
    lower = expanded.lower()
    markers = frozenset(name for name, pattern in _MARKERS.items() if pattern.search(lower))
    # Marker words are evidence of change, not content: "moved to Friday" compares as "Friday".
    raw: list[str] = []
    after_marker: set[int] = set()  # positions of words that came right after a marker ("Actually Jonas ...")
    for piece_index, piece in enumerate(_ANY_MARKER.split(expanded)):
        if piece_index:
            after_marker.add(len(raw))
        raw += _TOKEN.findall(piece)
    shouting = sum(c.isupper() for c in expanded) > 0.6 * max(1, sum(c.isalpha() for c in expanded))

    words: list[_Word] = []
    lowered: list[str] = []
    numbers: set[str] = set()
    weekdays: set[str] = set()
    months: set[str] = set()
    initial = True
    for index, token in enumerate(raw):
        if token in ".!?;:":
            initial = True
            continue
        # A word after a marker does not open its sentence: "Actually Jonas will do it" names Jonas.
        was_initial, initial = initial and index not in after_marker, False
        following = raw[index + 1].lower() if index + 1 < len(raw) else ""
        previous = raw[index - 1].lower() if index > 0 else ""
        low = token.lower()
        number = _number(token, following) if (token[0].isdigit() or token[0] == "$" or _VERSION.match(token)) else None
        if number is None and low in _NUMBER_WORDS:
            number = _NUMBER_WORDS[low]
        if number is not None:
            numbers.add(number)
            words.append(_Word(number, token, "number"))
            glued = _NUMBER.match(token)
            unit = glued.group(2).lower() if glued else ""
            if unit and unit not in ("k", "st", "nd", "rd", "th", "am", "pm"):
                lowered.append(unit)
                words.append(_Word(_stem(unit), unit, "word"))
            continue
        day = _WEEKDAYS.get(low) or _WEEKDAYS.get(low[:-1]) or _WEEKDAY_ABBREVIATIONS.get(token)
        if day:
            weekdays.add(day)
            words.append(_Word(day, token, "weekday"))
            lowered.append(day)
            continue
        month = (_MONTHS.get(low) if low != "march" or token[0].isupper() else None) or _MONTH_ABBREVIATIONS.get(token)
        if token == "May" and (not was_initial or following[:1].isdigit() or previous[:1].isdigit()):
            month = "may"
        if month:
            months.add(month)
            words.append(_Word(month, token, "month"))
            lowered.append(month)
            continue
        kind = _kind(token, was_initial, following, shouting)
        for part in _word_parts(low):
            part = _spelling(part)
            lowered.append(part)
            if part in _STOPWORDS or part in _NEGATORS:
                continue
            words.append(_Word(_stem(part), part, kind,
                               verb_like=previous in _PRONOUNS_AND_MODALS or part.endswith(_NOT_A_SLOT_SUFFIXES),
                               polar=bool(_NEGATIVE.fullmatch(part))))

    contrasts = frozenset((name, _CONTRAST_ALIASES.get(w, w)) for w in set(lowered) & _CONTRAST_WORDS
                          for name, members in _CONTRAST_SETS.items() if w in members)
    negated = bool(_NEGATIVE.search(lower)) or any(m in markers for m in _NEGATING_MARKERS)
    return _Analysis(tuple(words), tuple(lowered), frozenset(numbers), frozenset(weekdays), frozenset(months),
                     contrasts, markers, negated)


def _word_parts(low: str) -> list[str]:
    """Hyphenated words: "bullet-point" compares as "bullet point", but "wi-fi" and "e-mail" as "wifi" and "email"."""
    if not re.fullmatch(r"[a-z]+(?:-[a-z]+)+", low):
        return [low]
    parts = low.split("-")
    return parts if all(len(p) >= 3 for p in parts) else [low.replace("-", "")]


def _kind(token: str, initial: bool, following: str, shouting: bool) -> str:
    """'value' for names and tech terms (Postgres, new_checkout, us-east-1, JSON), else 'word'."""
    if _TECH_TERM.search(token):
        return "value"
    if shouting:
        return "word"
    if len(token) >= 2 and token.isupper():
        return "value"
    if token[0].isupper() and not initial:
        return "value"
    # A capitalised first word followed by a third-person verb is most likely a person or product
    # ("Bob owns billing"); trusted only when the other text also starts with one (see _value_swap).
    if token[0].isupper() and following.endswith("s") and not following.endswith("ss") \
            and not token.lower().endswith(("s", "ing", "ed")):
        return "initial_name"
    return "word"


def _same(a: _Word, b: _Word) -> bool:
    if a.key == b.key:
        return True
    if a.kind in _SLOT_KINDS or b.kind in _SLOT_KINDS:
        return False
    short, long = sorted((a.key, b.key), key=len)
    common = next((n for n in range(len(short), 0, -1) if long.startswith(short[:n])), 0)
    # Shared stems (allergic/allergy, config/configuration) and abbreviations (prod/production, docs/documentation).
    return common >= 5 or (common == len(short) >= 3 and len(long) >= 2 * len(short))


@dataclass(frozen=True)
class _Comparison:
    """Content of two texts aligned word by word: how much both say and what only one of them says."""

    shared: int
    only_old: tuple[_Word, ...]
    only_new: tuple[_Word, ...]
    old_keys: tuple[str, ...]
    new_keys: tuple[str, ...]  # matched words carry the old text's key, so the sequences can be diffed

    def containment(self) -> float:
        """Share of the shorter text's content that the other text also has."""
        smaller = min(len(self.old_keys), len(self.new_keys))
        return self.shared / smaller if smaller else 1.0

    def old_covered(self) -> float:
        """Share of the memory's content that the message repeats."""
        return self.shared / len(self.old_keys) if self.old_keys else 0.0


def _align(old: _Analysis, new: _Analysis) -> _Comparison:
    # Exact keys first, so a fuzzy match never takes a word that has an exact partner.
    free: dict[str, list[int]] = {}
    for i, word in enumerate(old.content):
        free.setdefault(word.key, []).append(i)
    matches: list[int | None] = [free[w.key].pop(0) if free.get(w.key) else None for w in new.content]
    used = {i for i in matches if i is not None}
    # Different keys match only when they share their first three letters (see _same), so each word is tried
    # against those alone, in order, and against FUZZY_TRIALS of them in all however long the texts are.
    by_start: dict[str, list[int]] = {}
    for i, word in enumerate(old.content):
        by_start.setdefault(word.key[:3], []).append(i)
    trials = FUZZY_TRIALS
    for position, word in enumerate(new.content):
        if matches[position] is not None or len(word.key) < 3:
            continue
        for i in by_start.get(word.key[:3], ()):
            trials -= 1
            if trials < 0:
                break
            if i not in used and _same(old.content[i], word):
                matches[position] = i
                used.add(i)
                break
    new_keys = [word.key if i is None else old.content[i].key for word, i in zip(new.content, matches)]
    only_new = [word for word, i in zip(new.content, matches) if i is None]
    only_old = tuple(w for i, w in enumerate(old.content) if i not in used)
    return _Comparison(len(used), only_old, tuple(only_new), tuple(w.key for w in old.content), tuple(new_keys))


def _differ(old: frozenset[str], new: frozenset[str]) -> bool:
    """Each side has a value the other lacks; a value only added ("March 3" -> "March 3, 10 am") is not a conflict."""
    return bool(old and new and old - new and new - old)


def _conflicts(old: _Analysis, new: _Analysis, comparison: _Comparison) -> tuple[list[str], set[str]]:
    """Reasons why the two texts cannot both be true as stated, and the word keys those reasons explain."""
    reasons: list[str] = []
    explained: set[str] = set()
    slots = [("numbers", old.numbers, new.numbers), ("weekday", old.weekdays, new.weekdays),
             ("month", old.months, new.months)]
    for name in sorted({n for n, _ in old.contrasts | new.contrasts}):
        slots.append((name, frozenset(w for n, w in old.contrasts if n == name),
                      frozenset(w for n, w in new.contrasts if n == name)))
    for label, a, b in slots:
        if _differ(a, b):
            reasons.append(f"{label} differ: {', '.join(sorted(a - b))} vs {', '.join(sorted(b - a))}")
            explained |= {_stem(w) for w in a | b} | a | b

    old_stems, new_stems = set(map(_stem, old.lowered)), set(map(_stem, new.lowered))
    opposites = [(x, y) for a, b in _ANTONYMS for x, y in ((a, b), (b, a))
                 if _stem(x) in old_stems and _stem(y) in new_stems
                 and _stem(x) not in new_stems and _stem(y) not in old_stems]
    # "not on" says the same as "off": an opposite and a negation cancel out.
    if bool(opposites) != (old.negated != new.negated):
        if opposites:
            reasons.extend(f"opposites: {x} vs {y}" for x, y in dict.fromkeys(opposites))
        else:
            reasons.append("negation differs" if new.negated else "negation removed")
    explained |= {_stem(w) for pair in opposites for w in pair}
    explained |= {w.key for w in comparison.only_old + comparison.only_new if w.polar}

    swap = _value_swap(comparison)
    if swap:
        old_values, new_values = swap
        reasons.append(f"{' '.join(w.surface for w in old_values)} replaced by {' '.join(w.surface for w in new_values)}")
        explained |= {w.key for w in old_values + new_values}
    return reasons, explained


def _value_swap(comparison: _Comparison) -> tuple[list[_Word], list[_Word]] | None:
    """Names or tech terms that one text has where the other has different ones."""
    for kinds in (("value",), ("initial_name",)):
        old_values = [w for w in comparison.only_old if w.kind in kinds]
        new_values = [w for w in comparison.only_new if w.kind in kinds]
        if old_values and new_values:
            return old_values, new_values
    return None


def _frame_agreement(comparison: _Comparison, explained: set[str]) -> float:
    """Share of the non-conflicting content the two texts agree on (1.0: only the conflicting slot differs)."""
    if not comparison.shared:
        return 0.0
    unexplained = [len([w for w in side if w.key not in explained and w.kind not in _SLOT_KINDS])
                   for side in (comparison.only_old, comparison.only_new)]
    return comparison.shared / (comparison.shared + max(unexplained))


def _slot_swap(comparison: _Comparison) -> tuple[str, bool] | None:
    """One slot alone differs between otherwise aligned texts: its description, and whether it is the last slot.

    Paraphrases swap verbs ("I live in" / "I'm based in"); a changed fact swaps an object ("the default
    branch is master" / "... main"), most often at the end.
    """
    if set(comparison.old_keys) == set(comparison.new_keys):
        return None
    replaced = _one_replaced_run(comparison.old_keys, comparison.new_keys)
    if replaced is None:
        return None
    i1, i2, j1, j2 = replaced
    if comparison.shared < 2 or i2 - i1 > 2 or j2 - j1 > 2:
        return None
    if any(w.verb_like or w.polar or w.kind in _SLOT_KINDS for w in comparison.only_old + comparison.only_new):
        return None
    # The object: subject and predicate both precede it and nothing follows.
    is_object = i1 >= 2 and j1 >= 2 and i2 == len(comparison.old_keys) and j2 == len(comparison.new_keys)
    return (f"{' '.join(w.surface for w in comparison.only_old)} replaced by "
            f"{' '.join(w.surface for w in comparison.only_new)}"), is_object


def _one_replaced_run(old: Sequence[str], new: Sequence[str]) -> tuple[int, int, int, int] | None:
    """(i1, i2, j1, j2) when replacing old[i1:i2] by new[j1:j2] is the only edit, in linear time: what differs
    between the longest common start and end, unless it is an insertion, a deletion, or shares a key (a move)."""
    shortest = min(len(old), len(new))
    start = 0
    while start < shortest and old[start] == new[start]:
        start += 1
    end = 0
    while end < shortest - start and old[-1 - end] == new[-1 - end]:
        end += 1
    i2, j2 = len(old) - end, len(new) - end
    if start == i2 or start == j2 or set(old[start:i2]) & set(new[start:j2]):
        return None
    return start, i2, start, j2


class DeduplicationChecker:
    """Recommends what to do with a new message given its nearest stored memories."""

    def __init__(self, thresholds: DedupThresholds = DedupThresholds()) -> None:
        self.thresholds = thresholds

    def check(self, new_text: str, candidates: Sequence[DedupCandidate]) -> DedupVerdict:
        if not candidates:
            return DedupVerdict(DedupAction.NEW, None, 0.0, ("no similar memories",))
        verdicts = [self.compare(new_text, c) for c in candidates]
        # An existing duplicate means nothing new needs storing, even if an older memory conflicts.
        for action in (DedupAction.MERGE, DedupAction.UPDATE_CANDIDATE, DedupAction.REVIEW):
            matching = [v for v in verdicts if v.action == action]
            if matching:
                return max(matching, key=lambda v: v.similarity)
        best = max(verdicts, key=lambda v: v.similarity)
        return DedupVerdict(DedupAction.NEW, None, best.similarity, best.reasons)

    def compare(self, new_text: str, candidate: DedupCandidate) -> DedupVerdict:
        similarity = float(candidate.similarity)
        related = self.thresholds.related_similarity

        def verdict(action: DedupAction, *reasons: str | None) -> DedupVerdict:
            memory_id = None if action == DedupAction.NEW else candidate.memory_id
            unique = tuple(dict.fromkeys(r for r in reasons if r))
            return DedupVerdict(action, memory_id, similarity, (f"cosine {similarity:.2f}", *unique))

        if same_words(new_text, candidate.text):
            return verdict(DedupAction.MERGE, "same text")
        if similarity < related - UPDATE_MARGIN:
            return verdict(DedupAction.NEW)  # what follows can only find NEW this far apart: skip the analysis
        old, new = _analyse(candidate.text), _analyse(new_text)
        comparison = _align(old, new)
        conflicts, explained = _conflicts(old, new, comparison)
        frame = _frame_agreement(comparison, explained)
        new_markers = sorted(new.markers - old.markers)
        marker_reason = f"change marker: {', '.join(new_markers)}" if new_markers else None
        swap = _slot_swap(comparison)

        if similarity >= related - UPDATE_MARGIN and not _other_instance(old, new):
            # A conflict on a shared frame: same subject and predicate, a different value. A message that
            # announces the change may add an explanation, so it only has to repeat the memory.
            same_fact = frame >= (FRAME_AGREEMENT if similarity >= related else FRAME_AGREEMENT_BELOW_RELATED) or (
                bool(new_markers) and max(frame, comparison.old_covered()) >= FRAME_AGREEMENT)
            if conflicts and same_fact:
                return verdict(DedupAction.UPDATE_CANDIDATE, *conflicts, marker_reason)
            # The message says something changed and brings a value the memory lacks. Replacement
            # verbs name the new value outright; "now" alone needs a value that also left.
            replacing = any(m in _REPLACING_MARKERS for m in new_markers)
            substituted = bool(comparison.only_new) and (
                replacing or bool(comparison.only_old) or any(w.kind != "word" for w in comparison.only_new))
            anchored = any(m in _STRONG_MARKERS for m in new_markers) or (
                comparison.shared >= 1 and (frame >= FRAME_AGREEMENT or similarity >= related))
            if new_markers and substituted and anchored:
                novel = " ".join(w.surface for w in comparison.only_new)
                return verdict(DedupAction.UPDATE_CANDIDATE, marker_reason, f"new value: {novel}", *conflicts)
            if swap and swap[1] and similarity >= related:
                return verdict(DedupAction.UPDATE_CANDIDATE, swap[0])

        if similarity < related:
            return verdict(DedupAction.NEW)
        if conflicts:
            return verdict(DedupAction.REVIEW, *conflicts)
        overlap = f"content overlap {comparison.containment():.2f}"
        if max(len(new_text), len(candidate.text)) > DEDUP_CHARS:
            # Only the openings were compared; what follows may differ, and a merge would drop it unsaved.
            return verdict(DedupAction.REVIEW, overlap, f"compared by their first {DEDUP_CHARS:,} characters only")
        if similarity >= self.thresholds.duplicate_similarity and not swap:
            return verdict(DedupAction.MERGE, overlap)
        # Below the cosine setting, merge only wording that agrees and adds no name, number or date.
        adds_value = any(w.kind != "word" for w in comparison.only_old + comparison.only_new)
        if (similarity >= self.thresholds.duplicate_similarity - LEXICAL_MERGE_MARGIN
                and comparison.containment() >= LEXICAL_MERGE_CONTAINMENT and not adds_value and not swap):
            return verdict(DedupAction.MERGE, overlap)
        return verdict(DedupAction.REVIEW, overlap, swap[0] if swap else None)


def same_words(text: str, other: str) -> bool:
    """The two texts have the same words, case aside. Their first words are compared first: two long texts that
    differ early cost nothing more, and only copies are read whole."""
    text, other = text.lower(), other.lower()
    openings = zip_longest(*(islice(_WORD_RUN.finditer(t), _OPENING_WORDS) for t in (text, other)))
    if not all(a is not None and b is not None and a.group() == b.group() for a, b in openings):
        return False
    return _WORD_RUN.findall(text) == _WORD_RUN.findall(other)


_EXPECTED = {"duplicate": DedupAction.MERGE, "update": DedupAction.UPDATE_CANDIDATE}


def evaluate_dedup(path: Path, encoder=None, checker: DeduplicationChecker | None = None) -> dict:
    """Encodes each labelled pair, runs compare(), and scores MERGE against gold "duplicate" (plus update recall/precision)."""
    if encoder is None:
        from preprocessing.encoder import SentenceEncoder

        encoder = SentenceEncoder.from_registry()
    checker = checker or DeduplicationChecker()
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    # One text per call: the int8 encoder's vectors shift slightly with the padding of a batch,
    # which would make the scores depend on the order of the file.
    texts = list(dict.fromkeys(t for r in rows for t in (r["existing"], r["new"])))
    vectors = {t: np.asarray(encoder.encode([t]))[0] for t in texts}
    similarities = [float(vectors[r["existing"]] @ vectors[r["new"]]) for r in rows]

    confusion: dict[str, dict[str, int]] = {}
    errors: list[dict] = []
    predicted: list[DedupAction] = []
    for index, (row, similarity) in enumerate(zip(rows, similarities)):
        verdict = checker.compare(row["new"], DedupCandidate(f"pair-{index}", row["existing"], float(similarity)))
        predicted.append(verdict.action)
        gold = row["label"]
        confusion.setdefault(gold, {}).setdefault(verdict.action.value, 0)
        confusion[gold][verdict.action.value] += 1
        wrong = verdict.action != _EXPECTED[gold] if gold in _EXPECTED else verdict.action in _EXPECTED.values()
        if wrong and len(errors) < 20:
            errors.append({"existing": row["existing"], "new": row["new"], "label": gold,
                           "predicted": verdict.action.value, "similarity": round(float(similarity), 3),
                           "reasons": list(verdict.reasons)})

    labels = [r["label"] for r in rows]
    true_merge = sum(g == "duplicate" and p == DedupAction.MERGE for g, p in zip(labels, predicted))
    predicted_merge = sum(p == DedupAction.MERGE for p in predicted)
    duplicates, updates = labels.count("duplicate"), labels.count("update")
    precision = true_merge / predicted_merge if predicted_merge else 0.0
    recall = true_merge / duplicates if duplicates else 0.0
    true_update = sum(g == "update" and p == DedupAction.UPDATE_CANDIDATE for g, p in zip(labels, predicted))
    predicted_update = sum(p == DedupAction.UPDATE_CANDIDATE for p in predicted)
    return {
        "pairs": len(rows),
        "duplicates": duplicates,
        "updates": updates,
        "different": labels.count("different"),
        "precision": precision,
        "recall": recall,
        "f1": 2 * precision * recall / (precision + recall) if precision + recall else 0.0,
        "false_positive_rate": (predicted_merge - true_merge) / (len(rows) - duplicates) if len(rows) > duplicates else 0.0,
        "update_recall": true_update / updates if updates else 0.0,
        "update_precision": true_update / predicted_update if predicted_update else 0.0,
        "confusion": confusion,
        "errors": errors,
    }
