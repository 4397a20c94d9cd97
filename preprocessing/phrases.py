"""Explicit memory phrases: finds save requests, recall requests and importance markers in one user message, by rule."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from preprocessing.bounds import RULE_CHARS, text_prefix

# A message holds a few requests at most; its first matches of a rule decide, and the hits are compared pairwise.
MATCHES_PER_RULE = 32
SAVE_REQUEST = "save_request"
RECALL_REQUEST = "recall_request"
IMPORTANCE_MARKER = "importance_marker"


@dataclass(frozen=True)
class MatchedPhrase:
    kind: str  # SAVE_REQUEST | RECALL_REQUEST | IMPORTANCE_MARKER
    text: str  # the matched surface text, sliced from the original message
    start: int  # char offsets into the original message
    end: int


@dataclass(frozen=True)
class PhraseSignals:
    save_request: bool
    recall_request: bool
    importance_marker: bool
    matched_phrases: tuple[MatchedPhrase, ...]


# --- Text that is not the user's own words -------------------------------------------------------------------
# Code, quotations and quoted replies mention "remember" without asking anything of us, so they are blanked out
# before matching. Blanking keeps every offset valid; "_" reads as one opaque word, so `remember "pnpm" is ours`
# still parses as remember + noun + verb.

_CODE_FENCE = re.compile(r"(`{3,}|~{3,})[\s\S]*?(?:\1|\Z)")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_DOUBLE_QUOTED = re.compile(r"\"[^\"\n]{1,300}\"")
# An apostrophe inside or at the end of a word ("don't", "users'") never opens or closes a quotation.
_SINGLE_QUOTED = re.compile(r"(?<![\w'])'(?=\S)[^'\n]{1,300}?(?<=\S)'(?!\w)")
_BLOCKQUOTE = re.compile(r"^[ \t]*>.*$", re.M)
_TYPOGRAPHIC = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'})


_NOT_NEWLINE = re.compile(r"[^\n]")


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """The text with each (start, end) span blanked to "_" but its newlines; rebuilt once, not once per span."""
    pieces, done = [], 0
    for start, end in spans:
        pieces += (text[done:start], _NOT_NEWLINE.sub("_", text[start:end]))
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def mask_non_prose(text: str) -> str:
    """The message with code, quotations and quoted replies blanked to "_", same length as the original."""
    masked = text.translate(_TYPOGRAPHIC)
    for pattern in (_CODE_FENCE, _INLINE_CODE, _BLOCKQUOTE, _DOUBLE_QUOTED, _SINGLE_QUOTED):
        body = masked.strip()
        # A message wrapped whole in quotes is still the user's own request, not a citation.
        spans = [m.span() for m in pattern.finditer(masked)
                 if not (pattern in (_DOUBLE_QUOTED, _SINGLE_QUOTED) and m.group() == body)]
        if spans:
            masked = _blanked(masked, spans)
    return masked


# --- Where a clause starts, and who it is addressed to ---------------------------------------------------------
# A save request is an imperative addressed to the assistant, so the words between the start of the clause and
# the trigger may only be discourse fillers ("ok", "btw", "please") and polite request frames ("could you",
# "I want you to"). "I can't remember", "he told me to remember" and "the Remember me box" all fail this test.

_CLAUSE_BREAK = re.compile(
    r"[.!?;:,()\[\]{}\n\r\t]|[\u2014\u2013]|\s-{1,2}\s|\b(?:and|but|so|btw|plus|anyway|anyways|or|ps)\b", re.I)
_SENTENCE_BREAK = re.compile(r"[.!?]+(?=\s|$)|\n")
_LOOKBACK = 80
_SENTENCE_LOOKBACK = 400

_FILLER = (r"(?:ok(?:ay)?|k|oh|ah|hey|hi|hello|yo|yeah|yes|yep|yup|alright|right|cool|great|nice|perfect|sure|thanks"
           r"|thank\s+you|thx|ty|lol|haha|please|pls|plz|kindly|just|also|now|again|really|definitely|seriously"
           r"|actually|hmm+|um+|well|one\s+more\s+thing|one\s+last\s+thing|fyi|by\s+the\s+way|p\.?s\.?|always"
           r"|from\s+now\s+on|going\s+forward|moving\s+forward|next\s+time|in\s+(?:the\s+)?future|for\s+next\s+time"
           r"|then|quick(?:ly)?|(?:just\s+)?(?:a\s+)?(?:quick\s+)?(?:note|heads[\s-]up|reminder))")
_POLITE = (r"(?:(?:can|could|would|will|wd|cld|can't|won't)\s+(?:you|u|ya)"
           r"|i\s+(?:want|need)\s+(?:you|u)\s+to|i(?:'d|d|\s+would)\s+(?:like|love)\s+(?:you|u)\s+to"
           r"|i'?d\s+(?:love|like|appreciate)\s+(?:it\s+)?if\s+(?:you|u)\s+(?:could|would|can)"
           r"|you\s+(?:should|must|need\s+to|have\s+to|gotta|ought\s+to|better|might\s+want\s+to)"
           r"|you(?:'ll|\s+will)\s+(?:want|need|have)\s+to"
           r"|make\s+sure\s+(?:to|you|u)|be\s+sure\s+to|try\s+to|try\s+and|go\s+ahead\s+and"
           r"|i'?m\s+asking\s+you\s+to|i\s+am\s+asking\s+you\s+to"
           r"|it'?s\s+(?:\w+\s+)?(?:important|vital|crucial|critical|essential)\s+(?:that\s+)?(?:you|u))")
_IMPERATIVE_PREFIX = re.compile(
    rf"^[\s,]*(?:{_FILLER}\b[\s,!.]*)*(?:{_POLITE}\b[\s,]*(?:{_FILLER}\b[\s,]*)*){{0,2}}$", re.I)
# "do you remember…", "d'you recall…", "you remember …?": the speaker asks what the assistant still knows.
_ASKING_PREFIX = re.compile(
    rf"^[\s,]*(?:{_FILLER}\b[\s,]*)*(?:(?:do|did|can|could|d')\s*)?(?:you|u|ya)\s+(?:still\s+|even\s+|possibly\s+)?$",
    re.I)
# A request framed as a question ("could you remember that…?") still asks for a save; its "?" is politeness.
_POLITE_ASK = re.compile(r"\b(?:can|could|would|will|wd|cld)\s+(?:you|u|ya)\b|\bif\s+(?:you|u)\s+(?:could|would)\b",
                         re.I)
_POLITE_WORD = re.compile(rf"\b(?:please|pls|plz|kindly)\b|{_POLITE}", re.I)
_ALWAYS_BEFORE = re.compile(r"\balways[\s,]*$", re.I)

# "remember to run the linter" is a to-do for the task at hand; with a standing-order cue ("from now on",
# "next time", "always remember to…") the same words ask the assistant to keep the rule for later sessions.
_DURABLE = re.compile(
    r"\b(?:from\s+now\s+on|going\s+forward|moving\s+forward|in\s+(?:the\s+)?future|in\s+future\s+\w+|next\s+time"
    r"|every\s*time|for\s+(?:later|the\s+future|future\s+\w+|next\s+time|good)|forever|from\s+here\s+on"
    r"|whenever\s+(?:you|we|i))\b", re.I)


def _clause_prefix(masked: str, start: int) -> str:
    window_start = max(0, start - _LOOKBACK)
    window = masked[window_start:start]
    cut = 0
    for m in _CLAUSE_BREAK.finditer(window):
        cut = m.end()
    return window[cut:]


def _sentence_bounds(masked: str, start: int, end: int) -> tuple[int, int, str]:
    """Start and end of the sentence around [start, end), and its terminator ("" at the end of the message)."""
    window_start = max(0, start - _SENTENCE_LOOKBACK)
    sentence_start = window_start
    for m in _SENTENCE_BREAK.finditer(masked, window_start, start):
        sentence_start = m.end()
    m = _SENTENCE_BREAK.search(masked, end)
    return (sentence_start, m.start(), m.group()) if m else (sentence_start, len(masked), "")


# A "?" closing "remember that I'm vegan, what should I cook?" belongs to the second clause, not the request.
_LATER_QUESTION = re.compile(
    r"[,;:\u2014\u2013-]\s*(?:so\s+|and\s+|but\s+|then\s+)?(?:what|how|why|where|when|who|which|can|could|would"
    r"|should|do|does|did|is|are|any|anything|ok|okay|right|alright|got\s+it|yeah|understood|k|please|pls|thanks)\b",
    re.I)


@dataclass(frozen=True)
class _Context:
    """What the grammar around one trigger says: is it addressed to us, polite, a question, a standing order."""

    prefix: str
    rest: str  # from the trigger to the end of its sentence
    ends_with_question_mark: bool
    imperative: bool
    asking: bool
    polite: bool
    question: bool
    durable: bool


def _context(masked: str, start: int, end: int) -> _Context:
    prefix = _clause_prefix(masked, start)
    sentence_start, sentence_end, terminator = _sentence_bounds(masked, start, end)
    rest = masked[end:sentence_end]
    return _Context(
        prefix=prefix,
        rest=rest,
        ends_with_question_mark="?" in terminator,
        imperative=bool(_IMPERATIVE_PREFIX.match(prefix)),
        asking=bool(_ASKING_PREFIX.match(prefix)),
        polite=bool(_POLITE_ASK.search(prefix)),
        question="?" in terminator and not _LATER_QUESTION.search(rest),
        durable=bool(_DURABLE.search(masked, sentence_start, sentence_end) or _ALWAYS_BEFORE.search(prefix)),
    )


# --- What follows a memory verb -------------------------------------------------------------------------------
# remember / don't forget / memorize / write down take an object. It is memory content when it is a clause
# ("that…", ":", "we use…", "my X is Y"), a pointer to what was just said ("this", "it"), or a possessive fact
# ("my address"); it is a to-do when it is "to" + verb, a question when it is a wh-word, and a thing to act on
# when it is a bare noun phrase with no verb ("don't forget the semicolon").

CONTENT, TODO, WH, NOTHING = "content", "todo", "wh", "nothing"

_TOKEN = re.compile(r"[a-z0-9_']+|[^\sa-z0-9_']")
_PRONOUN_SUBJECT = frozenset(
    "i i'm im i've ive i'll i'd we we're we've we'll we'd you you're youre you've he he's she she's they they're"
    " theyre it's there there's theres".split())
_POSSESSIVE = frozenset("my our mine ours his her their".split())
_FIRST_PERSON = frozenset("i i'm im i've ive i'll i'd me my mine our ours".split())
_POINTER = frozenset("this these it them".split())
_WH = frozenset("how what when where why which who whom whose if whether".split())
_NOSTALGIA = frozenset("time times day days night weekend trip summer winter year".split())
_NOT_AN_OBJECT = frozenset(
    "me myself about vs versus or and of in on at with by from as like than is are was were be been correctly"
    " rightly right yet so not".split())
_SUBORDINATE = re.compile(r"[,;:!?\n]|\b(?:when|if|before|after|because|while|once|since|until|unless)\b", re.I)
# Only unambiguous verb forms: "end", "calls" or "runs" are as often nouns ("the end of the line", "API calls").
_FINITE_VERB = re.compile(
    r"\b(?:is|are|was|were|isn't|aren't|wasn't|weren't|has|have|had|hasn't|haven't|will|won't|can|can't|cannot"
    r"|should|must|does|doesn't|did|didn't|don't|needs|prefers|uses|lives|wants|hates|moved|means|belongs|requires"
    r"|approves|owns|stays|expires|renews|resets|goes|sits|lies)\b", re.I)
_FOLLOWS_POINTER = frozenset(". ! , : ; - \u2014 \u2013 for down too please pls one".split())


def _has_verb(noun_phrase: str) -> bool:
    """True when a noun phrase runs on into a clause of its own ("the API key is in vault")."""
    cut = _SUBORDINATE.search(noun_phrase, 1)
    head = noun_phrase[: cut.start()] if cut else noun_phrase
    return bool(_FINITE_VERB.search(head)) or (cut is not None and cut.group() == ":")


def _read_object(rest: str, pointer_needs_pause: bool = False) -> str:
    body = rest.lstrip()
    if not body:
        return NOTHING
    if body[0] in ":-\u2014\u2013":
        return CONTENT
    if body[0] == ",":
        # "remember, the list is zero-indexed": the comma introduces the thing to keep, unless it is a to-do.
        after = _read_object(body[1:], pointer_needs_pause)
        return NOTHING if after in (TODO, WH) or not body[1:].strip(" \t,.!") else CONTENT
    tokens = _TOKEN.findall(body[:160].lower())
    first, second = tokens[0], (tokens[1] if len(tokens) > 1 else "")
    if first == "to":
        return TODO if second.isalpha() else NOTHING
    if first in _WH:
        return WH
    if first == "that":
        if second in _NOSTALGIA:
            return NOTHING
        return CONTENT
    if first in _POINTER or (first == "the" and second == "following"):
        if not pointer_needs_pause or not second or second in _FOLLOWS_POINTER:
            return CONTENT
        return CONTENT if _has_verb(body.split(None, 1)[1]) else NOTHING
    if first in _PRONOUN_SUBJECT or first in _POSSESSIVE:
        return CONTENT
    if first in ("for", "forever", "going", "from") and _DURABLE.match(body):
        return CONTENT
    if first in _NOT_AN_OBJECT or not (first[0].isalnum() or first[0] == "_"):
        return NOTHING
    return CONTENT if _has_verb(body) else NOTHING


_SUBJECT_OR_AUXILIARY = frozenset(
    "i you we they he she it me us them i'll you'll we'll they'll he'll she'll i'd you'd we'd will would can could"
    " should must might may shall to not never ever always don't didn't doesn't won't can't cannot hardly also just"
    " who which that".split())


def _is_statement(text: str) -> bool:
    tokens = set(_TOKEN.findall(text.lower()))
    return bool(tokens & _FIRST_PERSON) or bool(_FINITE_VERB.search(text))


def _points_back(masked: str, m: re.Match, ctx: _Context) -> bool:
    """True when a bare "remember!" / "don't forget." ends on a statement it can only refer to.

    Either the statement is the sentence before ("The window is 2-4pm. Please don't forget."), or, in unpunctuated
    chat, the words before the trigger in the same run ("my bday is tomorrow dont forget") — but not when those
    words end in a subject or auxiliary, which makes the trigger their verb ("I'll never forget").
    """
    if ctx.rest.strip(" \t!.") or ctx.ends_with_question_mark:
        return False
    if ctx.imperative:
        before = masked[: m.start() - len(ctx.prefix)].rstrip(" \t,;:.!\u2014\u2013-")
        return bool(before) and not before.endswith("?") and _is_statement(_SENTENCE_BREAK.split(before)[-1])
    words = _TOKEN.findall(ctx.prefix.lower())
    return (len(ctx.prefix) < _LOOKBACK and masked[m.end():].strip(" \t!.") == ""
            and bool(words) and words[-1] not in _SUBJECT_OR_AUXILIARY and _is_statement(ctx.prefix))


_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|me|my|mine|we|we're|we've|us|our|ours|you|your)\b", re.I)


# --- The rules --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Hit:
    kind: str
    start: int
    end: int


_Rule = Callable[[str, re.Match], Iterator[_Hit]]

_REMEMBER = re.compile(r"\b(?:remember|remeber|rember|remmber|remembr|rememeber|rmember)\b", re.I)
_MEMORIZE = re.compile(r"\bmemori[sz]e\b", re.I)
_FORGET = re.compile(
    r"\b(?:(?:do\s*n[o']?t|don;t|dnt|never|do\s+not)(?:\s+(?:you|ever))*"
    r"|you\s+(?:must|should)\s*(?:n't|not|never)(?:\s+ever)?|try\s+not\s+to)\s+(?:forg[eo]t+|forgt|4get|4got)\b", re.I)
_EMPHATIC_FORGET = re.compile(r"\b(?:never|ever|must|should)\b", re.I)


def _remember(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if ctx.imperative:
        obj = _read_object(ctx.rest)
        if obj == CONTENT and (ctx.polite or not ctx.question):
            yield _Hit(SAVE_REQUEST, m.start(), m.end())
        elif obj == TODO and ctx.durable:
            yield _Hit(SAVE_REQUEST, m.start(), m.end())
        elif obj == WH and (ctx.polite or _PERSON.search(ctx.rest)):
            yield _Hit(RECALL_REQUEST, m.start(), m.end())
        elif obj == CONTENT and ctx.question and _PERSON.search(ctx.rest):
            yield _Hit(RECALL_REQUEST, m.start(), m.end())
        always = _ALWAYS_BEFORE.search(ctx.prefix)
        if always:
            yield _Hit(IMPORTANCE_MARKER, m.start() - len(ctx.prefix) + always.start(), m.end())
    elif ctx.asking and _read_object(ctx.rest) != TODO and (
            ctx.ends_with_question_mark or ctx.prefix.strip().lower() not in ("you", "u", "ya")):
        yield _Hit(RECALL_REQUEST, m.start(), m.end())
    if _points_back(masked, m, ctx):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


def _memorize(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if ctx.imperative and _read_object(ctx.rest) == CONTENT and (ctx.polite or not ctx.question):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


def _forget(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if _points_back(masked, m, ctx):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())
    if not ctx.imperative:
        return
    obj = _read_object(ctx.rest, pointer_needs_pause=True)
    if (obj == CONTENT and (ctx.polite or not ctx.question)) or (obj == TODO and ctx.durable):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())
    if _EMPHATIC_FORGET.search(m.group()):
        yield _Hit(IMPORTANCE_MARKER, m.start(), m.end())


# "make a note in the changelog" and "write it down in the README" name a document, not the assistant's memory.
_DOCUMENT_TARGET = re.compile(
    r"\s+(?:in|into|on|to|as)\s+(?!(?:your|ur)\b|(?:long[- ]?term\s+)?memory\b|an?\s+(?:note|memory|reminder)\b)",
    re.I)
_MAKE_NOTE = re.compile(
    r"\b(?:make|keep|take)\s+a\s+(?:quick\s+|mental\s+)?note\b|\bmake\s+(?:mental\s+)?note\b", re.I)


def _make_note(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if ctx.imperative and not _DOCUMENT_TARGET.match(masked, m.end()) and (ctx.polite or not ctx.question):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


_TAKE_NOTE_OF = re.compile(r"\btake\s+note\s+of\b", re.I)


def _take_note_of(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if ctx.imperative and _read_object(ctx.rest, pointer_needs_pause=True) == CONTENT and not ctx.question:
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


# "Note that the function returns None" is how explanations talk, so a bare "note that / note:" counts only
# when it is plainly addressed to the assistant (please / could you), states something about the user
# ("note that I'm…", "note: my…"), points back at what was just said ("note that."), or carries a standing-order
# cue ("…going forward").
_NOTE_THAT = re.compile(r"\b(?:take\s+)?note(?:\s+that\b|\s*:|\s+[-\u2014\u2013](?=\s)"
                        r"|(?=\s+(?:i|i'm|im|i've|ive|i'll|my|our|we're|we've)\b))", re.I)


def _note_that(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if not ctx.imperative or (ctx.question and not ctx.polite):
        return
    tokens = _TOKEN.findall(ctx.rest.lower())
    first = tokens[0] if tokens else ""
    points_back = m.group().lower().endswith("that") and (not first or first in _FOLLOWS_POINTER)
    if _POLITE_WORD.search(ctx.prefix) or first in _FIRST_PERSON or points_back or ctx.durable:
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


_NOTE_POINTER = re.compile(r"\bnote\s+(?:this|it)\b(?=\s*(?:[:.!,\u2014\u2013-]|$|for\b))", re.I)
_WRITE_DOWN = re.compile(
    r"\b(?:write|jot|note)\s+(?:(this|that|it|these|them|the\s+following)\s+)?down\b", re.I)


def _write_down(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if not ctx.imperative or (ctx.question and not ctx.polite) or _DOCUMENT_TARGET.match(masked, m.end()):
        return
    if m.group(1) or _read_object(ctx.rest) == CONTENT:
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


def _pointer_note(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if ctx.imperative and (ctx.polite or not ctx.question):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


_KEEP_IN_MIND = re.compile(
    r"\b(?:keep|bear)\s+((?:this|that|it|these|those|all\s+(?:of\s+)?(?:this|that)|the\s+following)\s+)?in\s+mind\b",
    re.I)


def _keep_in_mind(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    # A bare "keep in mind" with nothing after it has to point back at something said just before.
    said_what = m.group(1) or ctx.rest.strip(" \t!.") or _points_back(masked, m, ctx)
    if said_what and ctx.imperative and (ctx.polite or not ctx.question):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


# "One thing to remember: …" announces the fact that follows as something to keep.
_THING_TO_REMEMBER = re.compile(
    r"\b(?:(?:one|another|some|a\s+few|the|an?)\s+)?(?:thing|things|something|detail|fact|point)\s+(?:for\s+you\s+)?"
    r"to\s+(?:remember|keep\s+in\s+mind|note|memori[sz]e)\b(?=\s*(?:[:\-\u2014\u2013]|is\b|are\b))", re.I)
_NOTE_TO_SELF = re.compile(r"\bnote\s+to\s+(?:self|myself|future\s+(?:you|me|self))\b", re.I)
_FUTURE_REFERENCE = re.compile(r"\bfor\s+(?:future|later)\s+ref(?:e|fe)?r[ea]nce\b", re.I)
_FYI_FOR_LATER = re.compile(
    r"\b(?:fyi|for\s+your\s+information|heads[\s-]up|jsyk|just\s+so\s+you\s+know)\b[\s,:\-\u2014\u2013]*"
    r"for\s+(?:later|the\s+future|future\s+(?:reference|sessions?|chats?|conversations?)|next\s+time)\b", re.I)
_FOR_LATER_LEAD = re.compile(
    r"\bfor\s+(?:later|next\s+time|the\s+future|future\s+(?:sessions?|chats?|conversations?))(?=\s*[:,\-\u2014\u2013])",
    re.I)
# "save this" / "store that": a memory request when nothing concrete follows ("save this file" is about a file),
# or when the destination is the assistant's memory or later use.
_SAVE_POINTER = re.compile(
    r"\b(save|store|stash|keep|log|record|hold\s+on\s*to|hang\s+on\s*to)\s+(this|that|these|it|them|the\s+following)"
    r"(?:\s+(?:info|information|details?|facts?|bit|one))?\b", re.I)
_MEMORY_DESTINATION = re.compile(
    r"\s+(?:\w+\s+){0,3}?(?:for\s+(?:later|the\s+future|future|next\s+time|future\s+\w+|safekeeping|good)\b"
    r"|(?:to|in|into)\s+(?:your|ur)\s+(?:long[- ]?term\s+)?(?:memory|memories|notes|memory\s+bank|knowledge\s+base)\b"
    r"|as\s+an?\s+(?:memory|note|preference|fact|reminder)\b)", re.I)
_BARE_MEMORY_DESTINATION = re.compile(r"\s+(?:to|in|into)\s+(?:long[- ]?term\s+)?memory\b", re.I)
_PAUSE = re.compile(
    r"(?:\s+(?:\w+ly|somewhere|safe|away))?\s*(?:$|[:.!,;\u2014\u2013-]|(?:please|pls|plz|thanks|thx|for\s+me)\b)",
    re.I)


def _save_pointer(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if not ctx.imperative or (ctx.question and not ctx.polite):
        return
    verb, pointer = m.group(1).lower(), m.group(2).lower()
    vague = pointer in ("it", "them")  # "save it" / "store it" usually mean a file or a variable
    if _MEMORY_DESTINATION.match(masked, m.end()):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())
    elif not vague and _BARE_MEMORY_DESTINATION.match(masked, m.end()) and _PAUSE.match(
            masked, _BARE_MEMORY_DESTINATION.match(masked, m.end()).end()):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())
    elif not vague and verb.split()[0] in ("save", "store", "hold", "hang") and _PAUSE.match(masked, m.end()):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


_INTO_MEMORY = re.compile(
    r"\b(?:save|store|add|put|commit|write|log|keep|stash|record)\s+(?:(?:this|that|it|these|them|the\s+following)\s+)?"
    r"(?:to|in|into|inside)\s+(?:your|ur)\s+(?:long[- ]?term\s+)?"
    r"(?:memory|memories|memory\s+bank|notes|knowledge\s+base)\b"
    r"|\bcommit\s+(?:(?:this|that|it|these|them|the\s+following)\s+)?to\s+memory\b"
    r"|\b(?:save|store|add|put|write|log)\s+(?:(?:this|that|these|the\s+following)\s+)?(?:to|in|into)\s+"
    r"(?:long[- ]?term\s+)?memory\b(?=\s*(?:$|[:,.!\-\u2014\u2013]|that\b))"
    r"|\bupdate\s+(?:your|ur)\s+(?:memory|memories|notes)\b", re.I)


def _addressed(masked: str, m: re.Match) -> Iterator[_Hit]:
    """Phrases that are requests in themselves, wherever a clause of the user's starts with them."""
    ctx = _context(masked, m.start(), m.end())
    if ctx.imperative and (ctx.polite or not ctx.question):
        yield _Hit(SAVE_REQUEST, m.start(), m.end())


# --- Recall ------------------------------------------------------------------------------------------------------

_SAID = (r"(?:say|said|tell|told|mention(?:ed)?|write|wrote|ask(?:ed)?|decide[d]?|agree[d]?|settle[d]?|share[d]?"
         r"|want(?:ed)?|prefer(?:red)?|like[d]?|plan(?:ned)?|give|gave|given|pick(?:ed)?|choose|chose|chosen"
         r"|call(?:ed)?|name[d]?|discuss(?:ed)?|note[d]?|save[d]?|store[d]?|send|sent|recommend(?:ed)?|book(?:ed)?"
         r"|land(?:ed)?\s+on|go\s+with|went\s+with|use[d]?)")
_RECALL_PATTERNS = re.compile(
    rf"\b(?:what|which|who|where|when|how\s+much|how\s+many)\b[^.?!\n]{{0,60}}?\b(?:did|have|had)\s+(?:i|we)\s+"
    rf"(?:ever\s+|already\s+|just\s+|previously\s+|originally\s+)?{_SAID}\b"
    r"|\b(?:did|have|had)\s+(?:i|we)\s+(?:ever\s+|already\s+|previously\s+)?(?:mention(?:ed)?|tell|told|say|said"
    r"|share[d]?|give|gave|given|ask(?:ed)?|note[d]?|talk(?:ed)?\s+about|discuss(?:ed)?)\b"
    r"|\b(?:did|have|had)\s+(?:i|we)\b[^.?!\n]{0,60}\b(?:last\s+time|before|earlier|previously|yesterday"
    r"|last\s+(?:week|month|year|sprint)|the\s+other\s+day)\b[^.!\n]*\?"
    r"|\bwhat(?:\s+(?:was|were|is|are)|'s|s)\s+(?:the|that|those|my|our|this|these)\b[^.?!\n]{0,60}?\b(?:i|we)\s+"
    r"(?:just\s+|already\s+)?(?:mentioned|told|said|gave|shared|talked|discussed|decided|picked|chose|settled|agreed"
    r"|used|wrote|noted|asked|sent|recommended|liked|named|described|suggested|saved|stored)\b"
    r"|\b(?:what|what's|whats|which|who|where|when|how)\b[^.?!\n]{0,80}\bagain\s*(?:\?|\n|$)"
    r"|\bwhat\s+(?:do|can|did)\s+you\s+(?:still\s+)?(?:remember|recall)\b"
    r"|\b(?:what|everything|anything|all)\s+(?:that\s+)?you\s+(?:still\s+)?(?:remember|recall)\b"
    r"|\b(?:what|everything|anything|all)\s+(?:that\s+)?(?:do\s+|did\s+)?you\s+(?:know|have(?:\s+got)?|got)"
    r"(?:\s+\w+){0,3}?\s+(?:about|on|regarding)\s+(?:me|my|our|us)\b"
    r"|\bwhat\s+have\s+you\s+(?:got\s+)?(?:\w+\s+){0,2}?(?:about|on|regarding)\s+(?:me|my|our|us)\b"
    r"|\b(?:do|did)\s+you\s+(?:still\s+)?(?:know|have)\s+(?:my|our|what\s+my|what\s+our|where\s+i|when\s+my)\b"
    r"|\b(?:i|we)\s+(?:already\s+|just\s+)?(?:told\s+you|mentioned|gave\s+you|shared|said)\b[^?\n]{0,80}"
    r"\b(?:what|which|who|where|when)\b[^?\n]{0,60}\?"
    r"|\b(?:what|what's|whats|which|who|where|when)(?:\s+(?:is|are|was|were)|'s|s)\s+(?:my|our)\s+"
    r"(?!(?:best|next|options?|chances?|problem|mistake|error|issue|bug|fault|role|job\s+here)\b)[^.!\n]*\?"
    r"|\b(?:what|which|where|who|when)\b[^.?!\n]{0,40}\bdo\s+(?:i|we)\s+(?:usually\s+)?(?:use|prefer|like|live"
    r"|work|have)\b[^.!\n]*\?"
    r"|\bwhat\s+was\s+i\s+(?:saying|talking\s+about|telling\s+you)\b"
    r"|\b(?:check|search|look\s+(?:in|through|up\s+in)|query|consult|dig\s+through)\s+(?:your|ur)\s+"
    r"(?:memory|memories|notes)\b", re.I)
_REMIND_ME = re.compile(
    r"\bremind\s+me\b(?!\s+(?:to|tomorrow|later|in|at|on|every|tonight|next|when|once|if\s+i\s+forget))", re.I)
_RECALL_VERB = re.compile(r"\b(?:recall|recollect)\b", re.I)


def _recall_anywhere(masked: str, m: re.Match) -> Iterator[_Hit]:
    yield _Hit(RECALL_REQUEST, m.start(), m.end())


def _remind_me(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if ctx.imperative:
        yield _Hit(RECALL_REQUEST, m.start(), m.end())


def _recall_verb(masked: str, m: re.Match) -> Iterator[_Hit]:
    ctx = _context(masked, m.start(), m.end())
    if (ctx.imperative or ctx.asking) and _read_object(ctx.rest) not in (TODO, NOTHING) and not re.match(
            r"\s*that\b", ctx.rest, re.I):
        yield _Hit(RECALL_REQUEST, m.start(), m.end())
    elif ctx.asking and ctx.question:
        yield _Hit(RECALL_REQUEST, m.start(), m.end())


# --- Importance ----------------------------------------------------------------------------------------------------
# Technical senses ("critical section", "vital signs") and negations ("not very important") are not emphasis.

_IMPORTANCE = re.compile(
    r"\b(?:very|extremely|super|really|incredibly|hugely|critically|especially|vitally|absolutely|seriously"
    r"|particularly|truly|crazy|so|mega|ultra)\s+important\b"
    r"|\b(?:this|that|it)(?:'s|\s+is|\s+was)\s+(?:(?!not\b|less\b|un)\w+\s+)?important\b"
    r"|\bimportant\s+to\s+(?:me|us)\b"
    r"|\bmission[\s-]critical\b"
    r"|\bcritical(?:ly)?\b(?!\s+(?:section|sections|path|mass|thinking|point|points|value|values|region"
    r"|css|rendering|hit|hits|care|theory|race|of|acclaim|reviews?|infrastructure\s+protection))"
    r"|\bcrucial(?:ly)?\b"
    r"|\bvital(?:ly)?\b(?!\s+signs?)"
    r"|\b(?:top|high|highest|utmost|first|number\s+one|#1)[\s-]+priority\b"
    r"|\bpriority\s+(?:one|1|#1|zero|0)\b"
    r"|\b(?:absolutely|really|truly)\s+(?:essential|necessary)\b"
    r"|\b(?:it's|it\s+is|this\s+is)\s+essential\b"
    r"|\bnon[\s-]?negotiable\b"
    r"|\bunder\s+no\s+circumstances\b"
    r"|\bwhatever\s+you\s+do\b"
    r"|\burgent(?:ly)?\b"
    r"|\bimperative\s+that\b", re.I)
_SHOUTED_IMPORTANT = re.compile(r"\bIMPORTANT\b")
_NEGATED = re.compile(r"\b(?:not|n't|no|never|hardly|less|isnt|arent|wasnt)\s+(?:\w+\s+){0,2}$", re.I)
# "Important: …" opening a clause flags what follows; "the important part" does not.
_IMPORTANT_LEAD = re.compile(r"\bimportant\s*[:!\u2014\u2013-]", re.I)


def _importance(masked: str, m: re.Match) -> Iterator[_Hit]:
    before = masked[max(0, m.start() - 30): m.start()].replace("n't", " n't")
    if not _NEGATED.search(before) and not before.endswith("-"):  # "non-critical"
        yield _Hit(IMPORTANCE_MARKER, m.start(), m.end())


def _important_lead(masked: str, m: re.Match) -> Iterator[_Hit]:
    if _IMPERATIVE_PREFIX.match(_clause_prefix(masked, m.start())):
        yield _Hit(IMPORTANCE_MARKER, m.start(), m.end())


# Each rule runs only when one of its words occurs at all: a substring test is far cheaper than a regex scan,
# and most messages contain none of them.
_RULES: tuple[tuple[tuple[str, ...], re.Pattern, _Rule], ...] = (
    (("rem", "rmem"), _REMEMBER, _remember),
    (("memori",), _MEMORIZE, _memorize),
    (("forg", "4g"), _FORGET, _forget),
    (("note",), _MAKE_NOTE, _make_note),
    (("note",), _TAKE_NOTE_OF, _take_note_of),
    (("note",), _NOTE_THAT, _note_that),
    (("note",), _NOTE_POINTER, _pointer_note),
    (("down",), _WRITE_DOWN, _write_down),
    (("mind",), _KEEP_IN_MIND, _keep_in_mind),
    (("note",), _NOTE_TO_SELF, _addressed),
    (("to",), _THING_TO_REMEMBER, _addressed),
    (("ref",), _FUTURE_REFERENCE, _addressed),
    (("for",), _FYI_FOR_LATER, _addressed),
    (("for",), _FOR_LATER_LEAD, _addressed),
    (("save", "stor", "stash", "keep", "log", "record", "hold", "hang"), _SAVE_POINTER, _save_pointer),
    (("memor", "notes", "knowledge"), _INTO_MEMORY, _addressed),
    (("wh", "did", "have", "had", "you", "again", "memor", "notes", "told", "said", "mention", "gave", "shared"),
     _RECALL_PATTERNS, _recall_anywhere),
    (("remind",), _REMIND_ME, _remind_me),
    (("recall", "recollect"), _RECALL_VERB, _recall_verb),
    (("important", "critical", "crucial", "vital", "priority", "essential", "necessary", "negotiable",
      "circumstances", "whatever", "urgent", "imperative"), _IMPORTANCE, _importance),
    (("important",), _IMPORTANT_LEAD, _important_lead),
    (("important",), _SHOUTED_IMPORTANT, _importance),
)


class PhraseDetector:
    """detect(text) -> PhraseSignals: which explicit memory phrases a user message contains, and where."""

    def detect(self, text: str) -> PhraseSignals:
        """Reads the message's first RULE_CHARS characters: a request to remember comes before a pasted document."""
        text = text_prefix(text, RULE_CHARS)
        masked = mask_non_prose(text)
        folded = masked.lower()
        hits: set[_Hit] = set()
        for words, pattern, rule in _RULES:
            if any(w in folded for w in words):
                for m in islice(pattern.finditer(masked), MATCHES_PER_RULE):
                    hits.update(rule(masked, m))
        # Overlapping rules can report nested spans of one kind ("note" inside "make a note"); keep the widest.
        kept = [h for h in hits if not any(
            o != h and o.kind == h.kind and o.start <= h.start and h.end <= o.end for o in hits)]
        phrases = tuple(MatchedPhrase(h.kind, text[h.start:h.end], h.start, h.end)
                        for h in sorted(kept, key=lambda h: (h.start, h.end, h.kind)))
        kinds = {p.kind for p in phrases}
        return PhraseSignals(SAVE_REQUEST in kinds, RECALL_REQUEST in kinds, IMPORTANCE_MARKER in kinds, phrases)


def evaluate_save_requests(path: Path, detector: PhraseDetector | None = None) -> dict:
    """Returns {"messages", "positives", "hard_negatives", "recall", "precision", "false_positive_rate",
    "recall_request_accuracy", "errors": [first 20 misclassified {"text","expected","got"}]} for save_request detection.

    Also "importance_marker_accuracy". Recall and precision are over save_request; the false-positive rate is over
    every message not labelled a save request; the two accuracies are over all messages.
    """
    detector = detector or PhraseDetector()
    rows = [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    true_pos = false_pos = false_neg = recall_agree = importance_agree = 0
    errors: list[dict] = []
    for row in rows:
        signals = detector.detect(row["text"])
        expected = bool(row["save_request"])
        true_pos += expected and signals.save_request
        false_pos += (not expected) and signals.save_request
        false_neg += expected and not signals.save_request
        recall_agree += signals.recall_request == bool(row.get("recall_request", False))
        importance_agree += signals.importance_marker == bool(row.get("importance_marker", False))
        if signals.save_request != expected and len(errors) < 20:
            errors.append({"text": row["text"], "expected": expected, "got": signals.save_request})
    positives = true_pos + false_neg
    others = len(rows) - positives
    return {
        "messages": len(rows),
        "positives": positives,
        "hard_negatives": sum(row.get("kind") == "hard_negative" for row in rows),
        "recall": true_pos / positives if positives else 1.0,
        "precision": true_pos / (true_pos + false_pos) if true_pos + false_pos else 1.0,
        "false_positive_rate": false_pos / others if others else 0.0,
        "recall_request_accuracy": recall_agree / len(rows) if rows else 1.0,
        "importance_marker_accuracy": importance_agree / len(rows) if rows else 1.0,
        "errors": errors,
    }
