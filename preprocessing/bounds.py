"""How much of a text each analysis reads: a capped prefix cut between words, so any text costs bounded, linear work."""

from __future__ import annotations

import re

# spaCy (tokenizer, tagger, NER, parser) costs ≈ 0.15-0.2 ms a token here: it reads ≈ 300 tokens of a message at
# most, ≈ 50 ms, beside the encoder's ≈ 35 ms for its 256 word pieces.
PARSE_CHARS = 1_500
PARSE_TOKENS = 300  # text of one-character tokens ("= = = …") is cut by its tokens instead
# A longer run without whitespace (a hash, a minified line, a pasted blob) is read as its first 100 characters:
# spaCy's tokenizer peels punctuation off a run one character at a time, quadratic in the run's length.
WORD_CHARS = 100
RULE_CHARS = 4_000  # the regex rules: save and recall phrases, importance cues, change markers, tag candidates
DEDUP_CHARS = 2_000  # dedup aligns two texts word by word, costs growing with the square of their words
ENCODER_CHARS = 4_000  # the encoder keeps 256 word pieces: 4,000 characters hold them unless words average 15+
INTENT_CHARS = 2_000  # the intent model keeps 128 word pieces; the rules read as much
TERM_CHARS = 256  # a search term (a word, a path, an identifier) longer than this is indexed by its start

_WORD_EDGE_SHARE = 10  # a prefix is cut after the last whitespace in its final tenth, when there is one
_LONG_RUN = re.compile(r"(?<!\S)\S{%d,}" % (WORD_CHARS + 1))


def text_prefix(text: str, limit: int) -> str:
    """The text itself when it fits, else its first `limit` characters, ended after the last whitespace in their
    final tenth so no word is cut in half. A literal prefix: offsets into it are offsets into the text."""
    if len(text) <= limit:
        return text
    if text[limit].isspace():
        return text[:limit]
    floor = limit - max(1, limit // _WORD_EDGE_SHARE)
    for end in range(limit, floor, -1):
        if text[end - 1].isspace():
            return text[:end]
    return text[:limit]


def short_words(text: str) -> str:
    """The text with every whitespace-free run longer than WORD_CHARS cut to its first WORD_CHARS characters and the
    rest of the run blanked to spaces: the same length, so offsets into it are offsets into the text."""
    return _LONG_RUN.sub(lambda m: m.group()[:WORD_CHARS] + " " * (len(m.group()) - WORD_CHARS), text)
