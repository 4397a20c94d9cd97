"""compile_context never fails on a valid task: a property over random stores on a real daemon."""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass, field

from hypothesis import example, given, settings
from hypothesis import strategies as st


STORE_WORDS = ["billing", "service", "database", "postgres", "invoice", "retry", "queue", "deploy", "thursday", "token"]
UNRELATED_WORDS = ["zebra", "origami", "sandwich", "volcano"]
PUNCTUATION = ["...", "?!", "—", "🙂", "#"]
SEPARATORS = [" ", "   ", "\t", "\n\n ", ", ", " - "]
SESSIONS = ["", "s1", "s2"]
SUBJECTS = ["billing_service", "auth service", "queue"]
PREDICATES = ["database", "owner", "uses"]  # uses accumulates values, the others hold one at a time
VALID_FROM = ["", "2025-01-01T00:00:00Z", "2026-06-01T00:00:00Z", "2031-01-01T00:00:00Z"]  # the last is scheduled
EPISODE_KINDS = ["invariant", "adr", "bug_root_cause", "migration", "incident", "session_note"]
CITATION = re.compile(r"\[(MEM|FACT|EP|DEC|SESSION):([^\]]+)\]")


@dataclass(frozen=True)
class SaveMemory:
    text: str
    session: str = ""
    replaces: int | None = None  # index of an earlier saved memory this one supersedes
    extract_facts: bool = False


@dataclass(frozen=True)
class UpsertFact:
    subject: str
    predicate: str
    object: str
    valid_from: str = ""


@dataclass(frozen=True)
class RetireFact:
    pick: int  # index of the active fact to end now


@dataclass(frozen=True)
class RecordEpisode:
    kind: str
    title: str
    body: str = ""


@dataclass(frozen=True)
class LogDecision:
    question: str
    chosen: str
    session: str = ""
    worked: bool | None = None


@dataclass
class BuiltStore:
    memory_ids: list[str] = field(default_factory=list)
    episode_ids: set[str] = field(default_factory=set)
    decision_ids: set[str] = field(default_factory=set)


@st.composite
def texts(draw, words=tuple(STORE_WORDS), max_words=6):
    """Words from a small vocabulary, odd whitespace and punctuation between and around them; or punctuation alone."""
    if draw(st.integers(0, 5)) == 0:
        return draw(st.sampled_from(PUNCTUATION))
    chosen = draw(st.lists(st.sampled_from(words), min_size=1, max_size=max_words))
    text = "".join(word + draw(st.sampled_from(SEPARATORS)) for word in chosen)
    return draw(st.sampled_from(["", "  ", "\n"])) + text + draw(st.sampled_from(["", "?", "!!", " ..."]))


@st.composite
def tasks(draw):
    """Tasks that match all of the store, part of it or none of it, from one word to a few hundred characters."""
    words = draw(st.sampled_from([STORE_WORDS, UNRELATED_WORDS, STORE_WORDS + UNRELATED_WORDS]))
    return draw(texts(tuple(words), max_words=8)) * draw(st.sampled_from([1, 1, 2, 30]))


operations = st.one_of(
    st.builds(SaveMemory, texts(), st.sampled_from(SESSIONS), st.none() | st.integers(0, 20), st.booleans()),
    st.builds(SaveMemory, texts(), st.sampled_from(SESSIONS), st.integers(0, 20)),  # supersedes an earlier one
    st.builds(UpsertFact, st.sampled_from(SUBJECTS), st.sampled_from(PREDICATES), texts(max_words=3),
              st.sampled_from(VALID_FROM)),
    st.builds(RetireFact, st.integers(0, 20)),
    st.builds(RecordEpisode, st.sampled_from(EPISODE_KINDS), texts(), texts() | st.just("")),
    st.builds(LogDecision, texts(), texts(max_words=2), st.sampled_from(SESSIONS), st.none() | st.booleans()),
)

ALL_SUPERSEDED = [SaveMemory("billing invoice retry", "s1"), SaveMemory("postgres database", "s1"),
                  SaveMemory("thursday deploy", "s1", replaces=0), SaveMemory("queue token", "s2", replaces=1)]
STORE = [SaveMemory("billing service database postgres", "s1"), UpsertFact("billing_service", "database", "postgres"),
         RecordEpisode("invariant", "every invoice retry carries an idempotency token"),
         LogDecision("which queue for billing?", "postgres queue", "s1", worked=True)]
ONLY_FACTS = [UpsertFact("billing_service", "database", "postgres", "2025-01-01T00:00:00Z"),
              UpsertFact("billing_service", "database", "mysql", "2026-06-01T00:00:00Z"),
              UpsertFact("queue", "uses", "retry token"), UpsertFact("queue", "owner", "thursday team"), RetireFact(1)]
ONLY_EPISODES = [RecordEpisode("invariant", "billing never retries an invoice twice", "retry token"),
                 RecordEpisode("adr", "postgres is the billing database"), RecordEpisode("session_note", "  ...  ", "")]


def _build_store(client, operations) -> BuiltStore:
    built = BuiltStore()
    for operation in operations:
        if isinstance(operation, SaveMemory):
            earlier, replaces = built.memory_ids, operation.replaces
            supersedes = earlier[replaces % len(earlier)] if replaces is not None and earlier else ""
            built.memory_ids.append(client.save_memory(content=operation.text, session_id=operation.session,
                                                       supersedes=supersedes,
                                                       extract_facts=operation.extract_facts).memory.id)
        elif isinstance(operation, UpsertFact):
            client.upsert_fact(subject=operation.subject, predicate=operation.predicate, object=operation.object,
                               valid_from=operation.valid_from, create_entities=True)
        elif isinstance(operation, RetireFact):
            active = client.read_graph(limit=1000).facts
            if active:
                client.retire_fact(fact_id=active[operation.pick % len(active)].id)
        elif isinstance(operation, RecordEpisode):
            built.episode_ids.add(client.record_episode(kind=operation.kind, title=operation.title,
                                                        body=operation.body).episode.id)
        else:
            decision = client.log_decision(type="architecture", question=operation.question, chosen=operation.chosen,
                                           session_id=operation.session).decision.id
            built.decision_ids.add(decision)
            if operation.worked is not None:
                client.record_outcome(decision_id=decision, was_successful=operation.worked)
    return built


def _assert_context_is_current_cited_and_within_budget(client, built: BuiltStore, session: str, budget: int, reply):
    assert reply.max_tokens == budget
    assert reply.tokens_used == math.ceil(len(reply.markdown) / 4) <= budget
    current_memories = {m.id for m in client.open_memories(ids=built.memory_ids).memories
                        if not m.superseded_by and not m.archived_at} if built.memory_ids else set()
    active_facts = {f.id for f in client.read_graph(limit=1000).facts}
    citable = {"MEM": current_memories, "FACT": active_facts, "EP": built.episode_ids, "DEC": built.decision_ids,
               "SESSION": {session} - {""}}
    citations = CITATION.findall(reply.markdown)
    for kind, cited in citations:
        assert cited in citable[kind], f"[{kind}:{cited}] is not a current item of this namespace:\n{reply.markdown}"
    assert {cited for _, cited in citations} == {item.id for item in reply.items}
    assert all(item.text in reply.markdown for item in reply.items)


@settings(max_examples=40, deadline=None)
@given(store=st.lists(operations, max_size=10), task=tasks(), session=st.sampled_from(SESSIONS),
       budget=st.integers(50, 1200))
@example(store=ALL_SUPERSEDED, task="billing invoice retry postgres database", session="s1", budget=400)
@example(store=STORE, task="zebra origami sandwich volcano", session="", budget=350)  # no word or meaning shared: all scores zero
@example(store=[], task="billing service database", session="s1", budget=50)  # an empty namespace
@example(store=ONLY_FACTS, task="which database does billing_service use; who owns the queue?", session="", budget=200)
@example(store=ONLY_EPISODES, task="retry an invoice in billing", session="s2", budget=120)
@example(store=STORE, task="billing service database postgres " * 30, session="s1", budget=50)  # long task, least budget
def test_compile_context_never_fails_and_cites_only_current_items(module_daemon, store, task, session, budget):
    with module_daemon.client(f"p{uuid.uuid4().hex[:12]}") as client:
        built = _build_store(client, store)
        reply = client.compile_context(task=task, session_id=session, max_tokens=budget)
        _assert_context_is_current_cited_and_within_budget(client, built, session, budget, reply)
