"""Readings of a spaCy dependency parse that fact extraction shares: clauses, lemmas, negation, questions, hedges, objects."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from preprocessing.fact_lexicon import (
    BE_FORMS,
    CLOSING,
    DECISION_VERBS,
    ENDED,
    FILLER_ADJECTIVES,
    HEDGE_VERBS,
    HEDGES,
    NOUN_PREDICATES,
    NOUNISH,
    OPEN_MARKS,
    OPENING,
    PAST_BE,
    PERSON_STATUS_WORDS,
    QUESTION_OPENERS,
    QUOTES,
    REPORT_WORDS,
    SAY_VERBS,
    SNAKE,
    STATUS_WORDS,
    TRANSIENT,
    VAGUE_DETERMINERS,
    VAGUE_NOUNS,
    VERB_FORMS,
    VERB_OBJECT,
    VERB_PREP_OBJECT,
    VERSION_TEXT,
    WEEKDAY,
    WH_TAGS,
)




def normalise_key(text: str) -> str:
    """The generic entity key (as EntityExtractor gives CODE and spaCy entities), minus leading determiners."""
    key = " ".join(text.replace("`", "").strip().strip(QUOTES).split()).lower()
    for prefix in ("the ", "a ", "an ", "our ", "my ", "your ", "their ", "its "):
        if key.startswith(prefix):
            key = key[len(prefix) :]
    for suffix in ("'s", "’s", "()"):
        if key.endswith(suffix):
            key = key[: -len(suffix)]
    return key.strip(QUOTES).rstrip(" .,;:!?")


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and (text[start] in QUOTES or text[start].isspace()):
        start += 1
    while end > start and (text[end - 1] in QUOTES or text[end - 1] in ".,;:!?" or text[end - 1].isspace()):
        end -= 1
    return start, end


def lemma_of(token) -> str:
    lower = token.lower_
    if lower in BE_FORMS and (token.pos_ == "AUX" or lower in ("is", "are", "am", "was", "were", "be")):
        return "be"
    return VERB_FORMS.get(lower, lower)


def clauses_of(root) -> Iterator[tuple[Any, Any]]:
    """The clauses that state something: the root, its verb conjuncts, a remembered or decided complement."""
    stack: list[tuple[Any, Any]] = [(root, None)]
    while stack:
        verb, inherited = stack.pop()
        lemma = lemma_of(verb)
        if lemma in REPORT_WORDS or verb.lower_ in REPORT_WORDS:
            for child in verb.children:
                if child.dep_ in ("ccomp", "acl", "appos", "relcl") and child.pos_ in ("VERB", "AUX"):
                    if not any(c.dep_ == "mark" and c.lower_ in OPEN_MARKS for c in child.children):
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
        elif misread_verb(verb):
            # The small model tags "runs", "relies" as plural nouns after a lower-case subject:
            # "the ingest job runs on Kubernetes" -> ROOT "runs" (NNS) with "job" as its compound.
            nouns = [c for c in verb.lefts if c.pos_ in NOUNISH]
            yield verb, next((c for c in nouns if c.dep_ == "nsubj"), nouns[-1])
        subject = next((c for c in verb.children if c.dep_ in ("nsubj", "nsubjpass")), inherited)
        for child in verb.children:
            if child.dep_ == "conj" and child.pos_ in ("VERB", "AUX"):
                stack.append((child, subject))


def misread_verb(token) -> bool:
    lemma = VERB_FORMS.get(token.lower_)
    return (
        token.dep_ == "ROOT"
        and token.pos_ in ("NOUN", "PROPN")
        and token.lower_.endswith("s")
        and lemma is not None
        and (lemma in VERB_OBJECT or any(v == lemma for v, _ in VERB_PREP_OBJECT))
        and any(c.pos_ in NOUNISH for c in token.lefts)
        and any(c.dep_ in ("prep", "dobj", "compound", "appos") or c.pos_ in NOUNISH for c in token.rights)
    )


def is_question(sent) -> bool:
    """A "?" near the end, a WH-word or auxiliary first ("does the api use Redis"), or a WH-word on the root."""
    tokens = [t for t in sent if not t.is_space]
    if not tokens:
        return True
    if any(t.text == "?" for t in tokens[-3:]):
        return True
    if tokens[0].lower_ in QUESTION_OPENERS and (tokens[0].tag_ in WH_TAGS or tokens[0].pos_ == "AUX"):
        return True
    return any(c.tag_ in WH_TAGS for c in sent.root.children)  # "how do I make the api use Postgres"


def hedged(verb) -> bool:
    for child in verb.children:
        if child.dep_ == "aux" and child.tag_ == "MD":
            return True  # should, could, might, will
        if child.lower_ == "never":
            return True
        if child.lower_ in HEDGES:
            return True
        if child.dep_ in ("parataxis", "advcl") and lemma_of(child) in HEDGE_VERBS:
            return True
        if child.dep_ == "mark" and child.lower_ in ("if", "unless", "whether", "once", "when", "until"):
            return True
    return verb.lower_ in ("let", "lets")


def same_role_neighbour(token, nxt) -> bool:
    return (
        nxt.head.i == token.head.i
        and nxt.dep_ in (token.dep_, "punct", "dep")
        and token.dep_ in ("dobj", "pobj", "attr", "nsubj")
        and nxt.pos_ in ("NOUN", "PROPN")
        and nxt.ent_type_ not in ("DATE", "TIME")
        and nxt.lower_ not in TRANSIENT
    )


def glued_run(token) -> tuple[int, int]:
    """Token indices [start, end] of the run written without spaces around token: "lactose-intolerant"."""
    doc = token.doc
    start = end = token.i
    while start > 0 and not doc[start - 1].whitespace_ and doc[start - 1].text not in OPENING:
        start -= 1
    while end + 1 < len(doc) and not doc[end].whitespace_ and doc[end + 1].text not in CLOSING:
        end += 1
    return start, end


def is_status(token) -> bool:
    word = glued_word(token)
    return word in STATUS_WORDS or word in PERSON_STATUS_WORDS


def glued_word(token) -> str:
    start, end = glued_run(token)
    return token.doc[start : end + 1].text.lower()


def only_glued_children(token) -> bool:
    start, end = glued_run(token)
    return all(start <= c.i <= end for c in token.children)


def is_time(token) -> bool:
    return token.ent_type_ in ("DATE", "TIME") or WEEKDAY.fullmatch(token.lower_) is not None


def port_number(token):
    """The number in "port 8082"."""
    if token.lower_ != "port":
        return None
    for child in token.children:
        if child.dep_ in ("nummod", "appos", "compound", "npadvmod") and child.text.isdigit() and len(child.text) <= 5:
            return child
    nxt = token.nbor(1) if token.i + 1 < len(token.doc) else None
    return nxt if nxt is not None and nxt.text.isdigit() and len(nxt.text) <= 5 else None


def negation_of(verb) -> str:
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


def preps_of(token) -> list:
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
        if child.dep_ == "xcomp" and bare_infinitive_object(child):
            found.extend(c for c in child.children if c.dep_ == "aux" and c.lower_ == "to")
    return found


def bare_infinitive_object(token) -> bool:
    """A name misread as a verb after "to": only the "to" and glued punctuation hang off it."""
    return token.tag_ == "VB" and all(
        (c.dep_ == "aux" and c.lower_ == "to") or c.dep_ == "punct" for c in token.children
    ) and any(c.dep_ == "aux" and c.lower_ == "to" for c in token.children)


def prep_objects(preps, words: Iterable[str]) -> list:
    words = tuple(words)
    found = []
    for prep in preps:
        if prep.lower_ not in words:
            continue
        if prep.dep_ == "aux":  # see preps_of: "to" + a bare word misread as an infinitive
            found.append(prep.head)
            continue
        objects = [c for c in prep.children if c.dep_ in ("pobj", "pcomp") and c.tag_ not in WH_TAGS]
        if not objects:
            # The small model sometimes leaves the object unattached ("depends on RabbitMQ" with RabbitMQ as
            # punct): take the next word, and the nouns conjoined to the verb after it.
            nxt = next_word(prep)
            if nxt is not None and (nxt.pos_ in NOUNISH or nxt.ent_type_ or nxt.tag_ in (",", "FW")):
                objects = [nxt] + [
                    c for c in prep.head.children if c.dep_ == "conj" and c.i > nxt.i and c.pos_ in ("NOUN", "PROPN")
                ]
        found.extend(objects)
    return found


def next_word(token):
    doc = token.doc
    for i in range(token.i + 1, min(len(doc), token.i + 4)):
        if doc[i].is_sent_start:
            break
        if doc[i].pos_ == "DET" or doc[i].text in QUOTES:
            continue
        return doc[i]
    return None


def direct_object(verb):
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


def instead_of(verb):
    """The old value in "... instead of MySQL" / "... rather than MySQL", whatever the parser attached it to."""
    tokens = list(verb.subtree)
    for n, token in enumerate(tokens[:-2]):
        if (token.lower_, tokens[n + 1].lower_) in (("instead", "of"), ("rather", "than")):
            for after in tokens[n + 2 :]:
                if after.pos_ in NOUNISH:
                    return after
    return None


def rename_target(verb, preps):
    targets = prep_objects(preps, ("to", "as", "into"))
    if targets:
        return targets[0]
    for child in verb.children:
        if child.dep_ in ("oprd", "xcomp", "attr") and child.pos_ in NOUNISH:
            return child
    return None


def conjuncts_of(token) -> list:
    if token is None:
        return []
    found = [token]
    for child in token.children:
        if child.dep_ == "conj" and (child.pos_ == token.pos_ or child.pos_ in NOUNISH):
            found.extend(conjuncts_of(child))
        elif child.dep_ == "appos" and child.pos_ in NOUNISH and any(
            t.lower_ in ("and", "&") for t in token.doc[token.i + 1 : child.i]
        ):
            found.extend(conjuncts_of(child))  # "Python 3.12 and Poetry" read as an apposition
    return found


def noun_predicate(noun) -> str:
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
    name = SNAKE.sub("_", " ".join(words)).strip("_")
    return NOUN_PREDICATES.get(name, name)



def is_version(token) -> bool:
    return VERSION_TEXT.fullmatch(token.text) is not None


def looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or re.search(r"\.[A-Za-z]{1,5}$", text) is not None


def past_be(verb) -> bool:
    return verb.lower_ in PAST_BE or any(c.dep_ in ("aux", "auxpass") and c.lower_ in PAST_BE for c in verb.children)


def is_wh(token) -> bool:
    return token.tag_ in WH_TAGS


def vague(token) -> bool:
    """A placeholder, a quantity or a pointing word: "something", "too much memory", "this PR", "every push"."""
    return token.lower_ in VAGUE_NOUNS or any(
        c.dep_ in ("det", "amod", "predet") and c.lower_ in VAGUE_DETERMINERS for c in token.children
    )


def transient(verb) -> bool:
    """Today's news rather than a lasting fact: "my laptop is slow today", "I'm working on X right now"."""
    for child in verb.children:
        if child.lower_ in TRANSIENT and child.dep_ in ("advmod", "npadvmod"):
            return True
        if child.dep_ == "npadvmod" and any(c.dep_ == "det" and c.lower_ == "this" for c in child.children):
            return True  # "this week", "this morning"
        if child.lower_ == "now" and any(c.lower_ == "right" for c in child.children):
            return True
    return False
