"""Memory dynamics: reinforcement by observed use, promotion to long-term, archiving gc, clustering, consolidation."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from memory_daemon.core.config import RetrievalSettings
from memory_daemon.core.errors import InvalidArgument
from memory_daemon.retrieval.hybrid import temporal_score
from memory_daemon.store import MemoryRow
from memory_daemon.core.timefmt import format_iso, utc_now
from preprocessing.terms import query_terms

PROMOTE_USE_COUNT = 3
PROMOTE_STRENGTH = 1.5
FORGET_THRESHOLD = 0.05
GRACE_DAYS, MAX_GRACE_DAYS = 30.0, 3650.0
IMPORTED_AT_KEY = "imported_at"  # meta key: when an import stored the memory (its created_at is the record's own)
CLUSTER_SIMILARITY = 0.85
MAX_CONSOLIDATE = 50
USED_TERM_SHARE = 0.3  # share of a memory's terms an answer must repeat to count as using it
USED_MIN_TERMS = 2


@dataclass(frozen=True)
class Cluster:
    ids: tuple[str, ...]
    contents: tuple[str, ...]
    mean_similarity: float


def used_by(memory: MemoryRow, response: str) -> bool:
    """Whether an answer drew on a memory: it repeats enough of the memory's distinctive terms."""
    memory_terms = set(query_terms(memory.content))
    shared = memory_terms & set(query_terms(response))
    return len(shared) >= min(USED_MIN_TERMS, len(memory_terms)) and len(shared) >= USED_TERM_SHARE * len(memory_terms)


def should_promote(memory: MemoryRow) -> bool:
    """The promotion rule: used at least 3 times, or strength of at least 1.5."""
    return memory.use_count >= PROMOTE_USE_COUNT or memory.strength >= PROMOTE_STRENGTH


def forgettable(memory: MemoryRow, settings: RetrievalSettings, threshold: float, now) -> bool:
    """A short-term, current memory whose decayed strength fell below the threshold."""
    return not memory.long_term and memory.archived_at is None and memory.superseded_by is None \
        and temporal_score(memory, now, settings) < threshold


def clusters_of(ids: Sequence[str], texts: Sequence[str], matrix: np.ndarray, similarity: float,
                limit: int) -> list[Cluster]:
    """Greedy single-pass clustering: each memory joins the first earlier seed it is similar enough to."""
    if len(ids) < 2:
        return []
    normed = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-9)
    assigned = np.full(len(ids), -1)
    groups: list[list[int]] = []
    for i in range(len(ids)):
        if assigned[i] >= 0:
            continue
        scores = normed[i + 1:] @ normed[i]
        members = [i] + [i + 1 + j for j in np.nonzero(scores >= similarity)[0] if assigned[i + 1 + j] < 0]
        if len(members) > 1:
            for m in members:
                assigned[m] = len(groups)
            groups.append(members)
    clusters = []
    for members in groups[:limit]:
        block = normed[members]
        pairwise = block @ block.T
        mean = float((pairwise.sum() - len(members)) / (len(members) * (len(members) - 1)))
        clusters.append(Cluster(tuple(ids[m] for m in members), tuple(texts[m] for m in members), round(mean, 4)))
    return clusters


def within_grace(memory: MemoryRow, now: datetime, grace_days: float) -> bool:
    """Stored, imported or used in the last `grace_days`: an import keeps its records' own (old) times, so its
    own time is in meta (IMPORTED_AT_KEY); without the grace gc would archive a fresh import of old talk at once."""
    since = now - timedelta(days=grace_days)
    imported = memory.meta.get(IMPORTED_AT_KEY)
    return memory.last_used_at >= since or memory.created_at >= since or \
        (isinstance(imported, str) and imported >= format_iso(since))


def to_archive(rows: Sequence[MemoryRow], settings: RetrievalSettings, threshold: float | None,
               grace_days: float | None = None) -> tuple[list[MemoryRow], int]:
    """(the rows gc archives: forgettable at the threshold, 0.05 when None, and outside the grace period, 30 days
    when None; how many forgettable rows the grace period spared)."""
    threshold = FORGET_THRESHOLD if threshold is None else threshold
    grace_days = GRACE_DAYS if grace_days is None else grace_days
    if not 0.0 <= threshold <= 2.0:
        raise InvalidArgument(f"forget_threshold must be in [0, 2], got {threshold}")
    if not 0.0 <= grace_days <= MAX_GRACE_DAYS:
        raise InvalidArgument(f"grace_days must be in [0, {MAX_GRACE_DAYS}], got {grace_days}")
    now = utc_now()
    forgettable_rows = [r for r in rows if forgettable(r, settings, threshold, now)]
    doomed = [r for r in forgettable_rows if not within_grace(r, now, grace_days)]
    return doomed, len(forgettable_rows) - len(doomed)


def checked_cluster_settings(similarity: float | None, limit: int) -> tuple[float, int]:
    similarity = CLUSTER_SIMILARITY if similarity is None else similarity
    if not 0.5 <= similarity <= 1.0:
        raise InvalidArgument(f"similarity must be in [0.5, 1], got {similarity}")
    if not 0 <= limit <= 200:
        raise InvalidArgument(f"limit must be between 1 and 200, got {limit}")
    return similarity, limit or 50
