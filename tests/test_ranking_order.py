"""Search results earn their order: final-score order, no graph-only hit, current before superseded (random stores)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memory_daemon.core.config import Limits
from memory_daemon.memory.service import MemoryService, NewMemory
from memory_daemon.retrieval.hybrid import (FEEDBACK_HITS, activated_entities, below_every_current, final_scores,
                                            ordered_by_precedence, reranked, revisions_above_revised)
from memory_daemon.store.memories import PARTIAL_UPDATE_KEY
from memory_daemon.retrieval.lexical import IndexedMemory, LexicalIndex
from memory_daemon.store import Database, MemoryRepository

WORDS = ["billing", "deploy", "postgres", "invoice", "queue", "thursday", "token", "redis", "backup", "oncall"]
ENTITIES = ["ledgercore", "ana ruiz", "billing api", "kafka"]
PAST = ["", "before", "used to"]  # "before" and "used to" make a question about the past


@pytest.fixture(scope="module")
def service():
    root = Path(tempfile.mkdtemp(prefix="rank"))
    database = Database(root / "test.duckdb")
    yield MemoryService(MemoryRepository(database), Limits())
    database.close()
    shutil.rmtree(root, ignore_errors=True)


memory_specs = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),  # words
        st.lists(st.sampled_from(ENTITIES), max_size=2, unique=True),  # entities
        st.one_of(st.none(), st.integers(0, 20)),  # supersedes an earlier memory (index modulo those saved)
    ),
    min_size=0, max_size=12,
)
queries = st.tuples(st.lists(st.sampled_from(WORDS + ["zebra"]), min_size=1, max_size=4),
                    st.lists(st.sampled_from(ENTITIES), max_size=1), st.sampled_from(PAST))

_namespaces = iter(range(10**9))


@settings(max_examples=60, deadline=None)
@given(memory_specs, queries, st.booleans(), st.integers(1, 12))
@example([(["billing"], ["ledgercore"], None), (["zebra"], ["ledgercore"], None),
          (["origami"], ["ledgercore", "kafka"], None), (["billing", "invoice"], [], 0)],
         (["billing"], ["ledgercore"], ""), False, 10)  # graph-only memories share the query's entity
def test_hits_come_in_final_score_order_and_each_matches_the_query(service, specs, query, include_history, limit):
    namespace = f"rank{next(_namespaces)}"
    saved = []
    for words, entities, replaces in specs:
        supersedes = saved[replaces % len(saved)] if replaces is not None and saved else ""
        if supersedes and service.open(namespace, [supersedes])[0].superseded_by:
            supersedes = ""  # a memory is replaced once
        saved.append(service.save(namespace, NewMemory(" ".join(words), entities=tuple(entities),
                                                       supersedes=supersedes)).memory.id)
    words, entities, past = query
    text = " ".join([past, *words, *entities]).strip()
    hits = service.search(namespace, text, limit, (), "", "", include_history=include_history)

    assert len(hits) <= limit
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True), "hits must come in the order of the score they report"
    for hit in hits:  # no encoder here: the words are what a hit must match
        assert hit.signal_scores.get("lexical", 0) > 0, f"{hit.memory.content!r} matched only by {hit.signal_scores}"
    looking_back = bool(past)
    if not include_history and not looking_back:
        stale = [h.memory.superseded_by is not None for h in hits]
        assert stale == sorted(stale), "a superseded memory came before a current one"


def test_a_graph_only_memory_never_outranks_a_text_match(service):
    """Four memories that share the query's entity but none of its words, beside two that match its words."""
    namespace = "graph-only"
    for text in ("LedgerCore is maintained by Ana Ruiz", "LedgerCore moved to the new rack",
                 "Ana Ruiz is on leave in May", "LedgerCore has three replicas"):
        service.save(namespace, NewMemory(text, entities=("ledgercore", "ana ruiz")))
    matching = [service.save(namespace, NewMemory(text, entities=("ledgercore",))).memory.id
                for text in ("Invoices are exported nightly from LedgerCore", "invoice export retries three times")]
    hits = service.search(namespace, "how are invoices exported?", 10, (), "", "")
    top = [h.memory.id for h in hits[:2]]
    assert sorted(top) == sorted(matching)
    assert all(h.signal_scores.get("lexical", 0) > 0 for h in hits)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.001, 0.1), st.booleans(), st.floats(0.0, 1.0)), min_size=1, max_size=12),
       st.integers(0, 8), st.booleans())
@example([(0.0625, False, 0.0), (0.0625, True, 0.0), (0.001953125, False, 0.0)], 2, False)  # a current score < 0
def test_the_reranker_keeps_superseded_memories_after_current_ones_whatever_it_reads(service, specs, depth, history):
    """Any verdicts of the relevance model, at any depth: only current hits (all hits when the past is asked for)
    are read, at most `depth` of them, each stays above every hit it did not read, and a superseded memory still
    comes after every current one."""
    namespace = f"rerank{next(_namespaces)}"
    ids = [service.save(namespace, NewMemory(f"memory {n}")).memory.id for n in range(len(specs) + 1)]
    for n, (_score, superseded, _p) in enumerate(specs):
        if superseded:
            service.save(namespace, NewMemory(f"memory {n} again", supersedes=ids[n]))
    rows = {row.id: row for row in service.open(namespace, ids[:len(specs)])}
    final = {ids[n]: score for n, (score, _s, _p) in enumerate(specs)}
    verdicts = {rows[ids[n]].content: p for n, (_score, _s, p) in enumerate(specs)}
    asked: list[list[str]] = []

    def relevance(query: str, texts):
        asked.append(list(texts))
        return [verdicts[t] for t in texts]

    final = final_scores(final, rows, False)
    read = reranked(final, rows, "memory", relevance, depth, 0.02, history)
    not_read = [final[m] for m in final if m not in read and (history or not rows[m].superseded_by)]
    assert not read or not not_read or min(final[m] for m in read) > max(not_read), \
        "a hit the reranker did not read came before one it read"
    if not history:
        below_every_current(final, rows)
    assert len(read) <= depth and all(history or not rows[m].superseded_by for m in read)
    assert not asked or len(asked[0]) >= 2
    if not history:
        order = sorted(final, key=lambda m: -final[m])
        stale = [rows[m].superseded_by is not None for m in order]
        assert stale == sorted(stale), "a superseded memory came before a current one"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.001, 0.1), st.booleans()), min_size=1, max_size=10),
       st.lists(st.sampled_from([True, False, None]), min_size=45, max_size=45), st.integers(0, 6),
       st.lists(st.booleans(), min_size=10, max_size=10))
@example([(0.05, False), (0.05, False), (0.05, False)], [True] * 45, 3, [True] * 10)  # equal scores: still ordered
@example([(0.05, False), (0.04, False), (0.03, False)], [True] * 45, 3, [False] * 10)  # nothing about the question
def test_the_precedence_order_takes_the_read_hits_own_scores_and_never_reads_a_superseded_one(service, specs, verdicts,
                                                                                               depth, about):
    """Any verdicts of the precedence model, at any depth, any readings of relevance: only current hits are read, at
    most `depth`, in pairs in time order with at least one memory about the question (a verdict: the newer answers,
    the older, or not sure), and only a hit about the question wins a pair; the read hits keep their places above
    every hit not read, the scores among them are theirs (in a new order), a hit that wins every pair it is in comes
    first, and a superseded memory still comes after every current one."""
    namespace = f"precede{next(_namespaces)}"
    ids = [service.save(namespace, NewMemory(f"note {n}")).memory.id for n in range(len(specs) + 1)]
    for n, (_score, superseded) in enumerate(specs):
        if superseded:
            service.save(namespace, NewMemory(f"note {n} again", supersedes=ids[n]))
    rows = {row.id: row for row in service.open(namespace, ids[:len(specs)])}
    final = final_scores({ids[n]: score for n, (score, _s) in enumerate(specs)}, rows, False)
    below_every_current(final, rows)  # as search does before the precedence order
    before = dict(final)
    read_pairs: list[tuple[str, str]] = []
    order = {rows[m].content: n for n, m in enumerate(ids[:len(specs)])}

    relevant = {m for n, m in enumerate(ids[:len(specs)]) if about[n]}

    def precedence(question: str, pairs):
        read_pairs.extend(pairs)
        assert all(order[older] < order[newer] for older, newer in pairs), "a pair was not in time order"
        assert all(ids[order[older]] in relevant or ids[order[newer]] in relevant for older, newer in pairs), \
            "a pair with neither memory about the question was read"
        return verdicts[:len(pairs)]

    wins = ordered_by_precedence(final, rows, "note", precedence, depth, lambda hits: relevant.intersection(hits))
    assert all(not rows[m].superseded_by for m in wins) and len(wins) <= max(depth, 0)
    assert all(wins[m] == 0 for m in wins if m not in relevant), "a hit not about the question won a pair"
    assert not wins or len(wins) >= 2
    if wins:
        assert len(read_pairs) == sum(1 for i, a in enumerate(wins) for b in list(wins)[i + 1:]
                                      if a in relevant or b in relevant)
        unread = [before[m] for m in final if m not in wins]
        assert not unread or min(final[m] for m in wins) >= max(unread), "an unread hit came before a read one"
        assert all(abs(a - b) < 1e-9 for a, b in zip(sorted(final[m] for m in wins), sorted(before[m] for m in wins)))
        ranked = sorted(wins, key=lambda m: -final[m])
        assert len(set(final[m] for m in wins)) == len(wins), "two read hits share a score: their order is unsure"
        unbeaten = [m for m in wins if wins[m] == len(wins) - 1]
        assert not unbeaten or ranked[0] == unbeaten[0]
        stale = [rows[m].superseded_by is not None for m in sorted(final, key=lambda m: -final[m])]
        assert stale == sorted(stale), "a superseded memory came before a current one"
    else:
        assert final == before


@settings(max_examples=80, deadline=None)
@given(st.lists(st.lists(st.sampled_from(ENTITIES), max_size=3, unique=True), min_size=10, max_size=10),
       st.dictionaries(st.integers(0, 9), st.floats(0.0, 10.0), min_size=FEEDBACK_HITS, max_size=10),
       st.dictionaries(st.integers(0, 9), st.floats(0.3, 1.0), max_size=10))
def test_the_graph_signal_needs_nothing_from_the_dense_one_once_the_words_found_enough(entities, words, meaning):
    """The search computes the graph signal while the dense one still runs whenever BM25 found FEEDBACK_HITS
    memories: the entities it activates must then be the same with or without the dense hits."""
    memories = [IndexedMemory(f"m{n}", f"memory {n}", tuple(keys)) for n, keys in enumerate(entities)]
    lexical = LexicalIndex(lambda _namespace: memories)
    lexical_found = {f"m{n}": score for n, score in words.items()}
    dense_found = {f"m{n}": score for n, score in meaning.items()}
    seeds = {"kafka": 1.0}

    def neighbours(_namespaces, keys):
        return {key: [(f"{key} team", 0.9)] for key in keys}

    alone = activated_entities(lexical, ["ns"], seeds, {"lexical": lexical_found}, 0.5, neighbours)
    with_dense = activated_entities(lexical, ["ns"], seeds, {"lexical": lexical_found, "dense": dense_found}, 0.5,
                                    neighbours)
    assert alone == with_dense


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.001, 0.1), min_size=2, max_size=10), st.lists(st.booleans(), min_size=5, max_size=5),
       st.lists(st.sampled_from([True, False, None]), min_size=5, max_size=5), st.integers(1, 6))
@example([0.05, 0.05], [True] * 5, [False] * 5, 1)  # equal scores: the older memory still comes first
def test_the_partial_update_reader_orders_only_its_pairs_and_only_where_it_is_sure(service, scores, linked, verdicts,
                                                                                    depth):
    """Any scores, any partial links (each memory in one pair at most: hit 2k+1 revises hit 2k), any verdicts of the
    reader, at any depth: a pair is read only when one of it is among the best `depth` hits, the older memory first;
    a sure verdict puts the memory it names strictly above the other and reports 1.0 and 0.0 for the two; no other
    hit's score moves, and a verdict of not sure leaves the pair to the cosine margin (no dense scores here: unmoved)."""
    namespace = f"partial{next(_namespaces)}"
    ids = [service.save(namespace, NewMemory(f"note {n}")).memory.id for n in range(len(scores))]
    rows = {row.id: row for row in service.open(namespace, ids)}
    pairs = [(ids[k], ids[k + 1]) for k in range(0, len(ids) - 1, 2) if linked[k // 2]]
    for revised, revision in pairs:
        rows[revision] = replace(rows[revision], meta={PARTIAL_UPDATE_KEY: revised})
    final = dict(zip(ids, scores))
    before = dict(final)
    best = set(sorted(ids, key=lambda m: (-final[m], -rows[m].created_at.timestamp(), m))[:depth])
    asked: list[tuple[str, str]] = []

    def reader(question: str, read):
        asked.extend(read)
        return verdicts[:len(read)]

    readings = revisions_above_revised(final, rows, {}, "note", reader, depth)
    expected = [(rows[a].content, rows[b].content) for a, b in pairs if best.intersection((a, b))]
    assert sorted(asked) == sorted(expected), "a pair was read out of order, or one outside the best hits"
    said = dict(zip([(a, b) for a, b in pairs if best.intersection((a, b))], verdicts))
    moved = set()
    for (revised, revision), verdict in said.items():
        if verdict is not None:
            winner, loser = (revision, revised) if verdict else (revised, revision)
            assert final[winner] > final[loser] and readings[winner] == 1.0 and readings[loser] == 0.0
            moved.add(winner)
    assert set(readings) == {m for pair, v in said.items() if v is not None for m in pair}
    assert all(final[m] == before[m] for m in ids if m not in moved), "a hit the reader did not name moved"
