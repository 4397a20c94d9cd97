"""Keyword search: a term-overlap ranker behind the `MemorySearcher` interface that hybrid retrieval will replace."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from memory_daemon.store import MemoryRepository, MemoryRow

_TOKEN = re.compile(r"[a-z0-9]+(?:[._\-/][a-z0-9]+)*")
_STOPWORDS = frozenset(
    "a an and are as at be but by did do does for from had has have i in is it its me my of on or our "
    "so that the their them they this to was we were what when where which who why will with you your "
    "about any can could should would how tell said say remember".split()
)
# The store pre-ranks by substring overlap; this many candidates per requested
# result are then re-scored on whole terms, which substring matching can overrate.
_CANDIDATE_FACTOR = 3


def terms_of(text: str) -> list[str]:
    """Lower-case search terms: words, numbers, versions and identifiers, their parts, no stopwords."""
    terms: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        pieces = [token] + ([p for p in re.split(r"[._\-/]", token) if p] if re.search(r"[._\-/]", token) else [])
        for piece in pieces:
            if piece not in _STOPWORDS and piece not in terms:
                terms.append(piece)
    return terms


@dataclass(frozen=True)
class SearchQuery:
    namespaces: tuple[str, ...]
    text: str
    limit: int
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None


@dataclass(frozen=True)
class ScoredMemory:
    memory: MemoryRow
    score: float


class MemorySearcher(Protocol):
    def search(self, query: SearchQuery) -> list[ScoredMemory]: ...


class KeywordSearcher:
    """Ranks by the share of query terms a memory contains; strength and recency break ties."""

    def __init__(self, repository: MemoryRepository) -> None:
        self._repository = repository

    def search(self, query: SearchQuery) -> list[ScoredMemory]:
        terms = terms_of(query.text)
        if not terms:
            return []
        candidates = self._repository.keyword_candidates(
            query.namespaces, terms, query.tags, query.since, query.until, query.limit * _CANDIDATE_FACTOR
        )
        scored = []
        for memory in candidates:
            haystack = set(terms_of(memory.search_text))
            matched = sum(1 for term in terms if term in haystack)
            if matched:
                scored.append(ScoredMemory(memory, matched / len(terms)))
        scored.sort(key=lambda s: (s.score, s.memory.strength, s.memory.created_at), reverse=True)
        return scored[: query.limit]
