"""The memory domain: validates input, then saves, finds, opens, reinforces and imports memories."""

from __future__ import annotations

import functools
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from memory_daemon.core.config import Limits
from memory_daemon.core.logs import log_event
from memory_daemon.core.secrets import SecretFilter
from memory_daemon.activation.analyzer import ActivationPipeline, Analysis
from memory_daemon.core.errors import InvalidArgument, NotFound, Unavailable, known_fault
from memory_daemon.core.heap import release_freed_memory
from memory_daemon.core.priority import run_in_background
from memory_daemon.core.config import RetrievalSettings
from memory_daemon.retrieval.lexical import IndexedMemory, LexicalIndex
from memory_daemon.retrieval.hybrid import HybridRetriever, ScoredMemory, SearchQuery, check_signals
from memory_daemon.memory.dynamics import (
    IMPORTED_AT_KEY, MAX_CONSOLIDATE, Cluster, checked_cluster_settings, clusters_of, should_promote, to_archive,
    used_by,
)
from memory_daemon.memory.holder_readings import HolderReadings
from memory_daemon.memory.update_checks import UpdateCheckPass
from memory_daemon.retrieval.row_cache import RowCache
from memory_daemon.store import MemoryRepository, MemoryRow
from memory_daemon.store.memories import PARTIAL_UPDATE_KEY, indexed_digest
from memory_daemon.store.corrections import CorrectionRepository, Forgotten
from memory_daemon.store.holder_readings import HolderReadingStore
from memory_daemon.store.update_checks import UpdateCheckQueue
from memory_daemon.core.timefmt import format_iso, parse_iso, utc_now
from memory_daemon.core.validation import checked_json, checked_text
from memory_daemon.retrieval.vectors import IndexState, VectorIndex
from cortexd.connect import GLOBAL_NAMESPACE
from proxy_server.namespace import NAMESPACE_PATTERN
from preprocessing.dedup import (
    UPDATE_MARGIN, DedupAction, DedupCandidate, DedupThresholds, DedupVerdict, announces_change, announces_return,
    names_other_instance, shares_topic,
)
from preprocessing.context import changes_unnamed_subject, leans_on_context, names_no_subject, points_back
from preprocessing.entities import entity_key
from preprocessing.relation_dedup import IMPORT_CANDIDATE_FLOOR, SURE_UPDATE, JudgedPair, RelationJudge, sure_updates
from preprocessing.bounds import DEDUP_CHARS, text_prefix
from preprocessing.terms import salient_keys

DEFAULT_STRENGTH = 1.0
MAX_STRENGTH = 2.0
TOUCH_BOOST = 0.1
DEFAULT_SEARCH_LIMIT = 10
IMPORT_BATCH = 500
IMPORT_PART = 100  # an import batch is embedded and stored in parts of this many, the next embedded as one is stored
SESSION_LOOKBACK = 5  # recent memories of a session an implicit update may refer to
REFERENT_CANDIDATES = 3  # an imported record naming its subject by pronoun is read against the 3 memories before it
ANNOUNCED_UPDATE_SIMILARITY = 0.55  # cosine above which a memory announcing a change updates an older one
SECOND_UPDATE_MARGIN = 0.05  # a second older memory this close to the best is updated too
# The cosine from which a memory that says an earlier state is back updates the current version of a replaced memory
# it restates: dedup's floor for a stated update of a shared subject.
RETURN_SIMILARITY = DedupThresholds().related_similarity - UPDATE_MARGIN
IMPORT_PAIRS = 4  # an imported record is read against its four nearest memories: imports are bulk work
CONTEXT_UPDATE_PAIRS = 1  # the pair of a context's memories read for an update import left unlinked (11 ms a pair here)
# The closest pair of a context's memories (or of search's best hits) the precedence model reads with the task: three
# took compile_context's p50 at 100,000 memories from 26 to 43 ms (README, Quality, "Session 46, D").
CONTEXT_PRECEDENCE_PAIRS = 1
ClosePair = tuple[float, MemoryRow, MemoryRow]  # (cosine, older, newer): two memories of a namespace in time order
IMPORT_UPDATE_SIMILARITY = 0.85  # an imported record that states no change updates only a near-paraphrase
EMBED_BATCH = 16
LEXICAL_CANDIDATES = 3  # dedup candidates found by words, besides the nearest by meaning
QUERY_VECTORS_KEPT = 16  # recent query embeddings kept: a search over every kind embeds its query once
DEFAULT_FORGET_MATCHES, MAX_FORGET_MATCHES = 10, 50  # memories a forget by query previews or forgets


def checked_namespace(namespace: str) -> str:
    """The namespace if it is 1-64 letters, digits, '.', '_' or '-' (starting alphanumeric): the rule the proxy,
    the hooks and the CLI check before they call (proxy_server.namespace)."""
    if not NAMESPACE_PATTERN.fullmatch(namespace):
        raise InvalidArgument(
            f"namespace {namespace[:80]!r} is invalid: use 1-64 letters, digits, '.', '_' or '-', starting alphanumeric"
        )
    return namespace


@functools.cache
def _embedding_pool() -> ThreadPoolExecutor:
    """Bulk embedding (imports, consolidation): background work, at background priority."""
    return ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1)), thread_name_prefix="cortexd-embed",
                              initializer=run_in_background)


def _entity_keys(name: str) -> tuple[str, ...]:
    """The keys a memory may file an entity under: "Postgres 16" is "postgresql 16", or "postgresql" alone."""
    key = entity_key(name)
    base = re.sub(r"(?:\s+v?\d[\w.]*)+$", "", key)
    return tuple(dict.fromkeys(k for k in (key, base) if k))


def _points_back_to_change(text: str) -> bool:
    """Announces a change of something named earlier in the session ("pushed it to 10 June")."""
    return changes_unnamed_subject(text) or points_back(text) and announces_change(text)


def new_memory_id() -> str:
    return "mem_" + uuid.uuid4().hex[:16]


def clipped_to_bytes(text: str, limit: int) -> str:
    """The text cut to at most `limit` bytes of UTF-8, at a character boundary, marked with "…" when cut."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    return encoded[: max(0, limit - 3)].decode("utf-8", errors="ignore") + "…"


def visible_namespaces(namespace: str) -> tuple[str, ...]:
    """A caller sees its own namespace and the shared global one."""
    return (namespace,) if namespace == GLOBAL_NAMESPACE else (namespace, GLOBAL_NAMESPACE)


def indexed(row: MemoryRow) -> IndexedMemory:
    """What the lexical index keeps of a memory: its text and tags, and its entities (given or spotted cheaply)."""
    return IndexedMemory(row.id, " ".join((row.content, row.context, *row.tags)),
                         tuple(dict.fromkeys((*row.entities, *salient_keys(row.content)))),
                         indexed_digest(row.content, row.context, row.tags, row.entities))


FILL_DELAY_SECONDS = 1.0


class _StoredMemories:
    """The lexical index's view of the store; every row it reads also fills the row cache."""

    CHUNK = 1_000  # ids per IN list

    def __init__(self, repository: MemoryRepository, rows: RowCache) -> None:
        self._repository = repository
        self._rows = rows
        self._unfilled: set[str] = set()  # namespaces loaded from a save whose rows wait for their first search
        self._unfilled_lock = threading.Lock()

    def all(self, namespace: str) -> list[IndexedMemory]:
        rows = self._repository.all_in(namespace)
        self._rows.put(rows)
        return [indexed(r) for r in rows]

    def hashes(self, namespace: str) -> dict[str, int]:
        return self._repository.indexed_hashes(namespace)

    def fingerprint(self, namespace: str) -> tuple[int, int]:
        return self._repository.indexed_fingerprint(namespace)

    def some(self, namespace: str, ids) -> list[IndexedMemory]:
        found = []
        for start in range(0, len(ids), self.CHUNK):
            rows = self._repository.get_many(list(ids[start: start + self.CHUNK]), (namespace,))
            self._rows.put(rows)
            found += [indexed(r) for r in rows]
        return found

    def fill_rows_in_background(self, namespace: str) -> None:
        """A namespace whose index came from its save has no rows cached yet: read them in bulk once its first
        search has been answered (fill_after_search), while searches fetch their own few meanwhile. Turning 100,000
        rows into objects holds the interpreter for seconds, which that first search, still loading the vector
        index, would otherwise wait for."""
        with self._unfilled_lock:
            self._unfilled.add(namespace)

    def fill_after_search(self, namespaces: Iterable[str]) -> None:
        """Start the bulk read of the searched namespaces still waiting for one, FILL_DELAY_SECONDS from now."""
        with self._unfilled_lock:
            due = [n for n in namespaces if n in self._unfilled]
            self._unfilled.difference_update(due)
        for namespace in due:
            self._fill_in_background(namespace)

    def _fill_in_background(self, namespace: str) -> None:
        def fill() -> None:
            run_in_background()
            time.sleep(FILL_DELAY_SECONDS)
            try:
                self._rows.fill(lambda: self._repository.all_in(namespace))
            except Exception as error:  # noqa: BLE001 - the daemon stopping, say: searches fetch their own rows
                log_event("row_cache_not_filled", level=logging.WARNING, namespace=namespace, detail=str(error))
            release_freed_memory()

        threading.Thread(target=fill, name="cortexd-row-cache", daemon=True).start()


@dataclass(frozen=True)
class NewMemory:
    content: str
    tags: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    strength: float | None = None
    source: str = ""
    context: str = ""
    session_id: str = ""
    meta: dict = field(default_factory=dict)
    extract_facts: bool | None = None  # None: the daemon's setting
    supersedes: str = ""  # id of an older memory this one replaces


@dataclass(frozen=True)
class ImportItem:
    external_id: str
    text: str
    namespace: str
    timestamp: str
    speaker: str = ""
    session: str = ""


@dataclass(frozen=True)
class SaveOutcome:
    memory: MemoryRow
    auto_filled: tuple[str, ...] = ()
    deduplication: DedupVerdict | None = None
    dedup_content: str = ""
    merged: bool = False
    degraded: tuple[str, ...] = ()
    facts: tuple = ()  # FactRows recorded from the content
    superseded_facts: tuple = ()  # FactRows the content ended
    superseded_memories: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnalyzeItem:
    message: str
    session_id: str
    namespace: str


@dataclass(frozen=True)
class ForgetOutcome:
    forgotten: Forgotten
    matches: tuple[MemoryRow, ...] = ()  # what a query found (the preview, or what was forgotten)
    previewed: bool = False
    purged: bool = False


@dataclass
class ImportOutcome:
    imported: int = 0
    skipped: int = 0
    errors: list[str] = field(default_factory=list)
    checks_pending: int = 0  # imported statements (of any import) still waiting for their update check


class MemoryService:
    def __init__(self, repository: MemoryRepository, limits: Limits, activation: ActivationPipeline | None = None,
                 graph=None, retrieval: RetrievalSettings = RetrievalSettings(), sessions=None,
                 secrets: SecretFilter = SecretFilter(), index_root: Path | None = None) -> None:
        self._repository = repository
        self._secrets = secrets  # every text stored is redacted first (but where config turns it off)
        self._sessions = sessions  # SessionMemory: memories saved in a session join its working memory
        self._graph = graph  # GraphService: facts stated in saved memories are recorded there
        self._limits = limits
        self._activation = activation
        self._corrections = CorrectionRepository(repository.database)
        # index_root: where large namespaces' vector graphs are saved (the daemon's data dir); None keeps them in RAM
        self._vectors = VectorIndex(repository.embeddings, retrieval.vector_graph_from, index_root,
                                    repository.embedded_rows, repository.embeddings_of, repository.embedded_fingerprint,
                                    repository.superseded_in)
        self._rows = RowCache(repository.get_many)
        self._retrieval = retrieval
        stored = self._stored_memories = _StoredMemories(repository, self._rows)
        self._lexical = LexicalIndex(stored, index_root, retrieval.lexical_save_from, stored.fill_rows_in_background)
        self._query_vectors: dict[str, object] = {}  # query text -> read-only embedding, oldest first
        self._query_vectors_lock = threading.Lock()
        # Imported statements are read for updates by a background pass (started by start_background_passes)
        self._update_queue = UpdateCheckQueue(repository.database)
        self._update_checks = UpdateCheckPass(self._update_queue, self.check_queued, self.models_loaded)
        # Whose fact each memory states is read once, in the background after it is written, and kept (search uses it)
        reads_holders = activation is not None and activation.settings.entities and retrieval.holder_factor < 1
        self._holder_readings = HolderReadings(
            HolderReadingStore(repository.database), activation.statements, lambda: activation.holder_readings_tag,
            self._update_checks.busy, sweep=activation.settings.holder_readings_sweep) if reads_holders else None
        self._retriever = HybridRetriever(
            self._rows, self._lexical, self._vectors, self.embed_query, retrieval,
            graph.neighbour_keys if graph is not None else None,
            activation.relevance if activation is not None else None,
            activation.holders if activation is not None else None,
            self._holder_readings.statements if self._holder_readings is not None else None,
            activation.precedence if activation is not None and activation.settings.precedence_model else None,
            activation.partial_updates if activation is not None and activation.settings.partial_model else None,
            self.newer_answering if activation is not None and activation.settings.precedence_model else None,
        )

    @property
    def limits(self) -> Limits:
        return self._limits

    def _stored(self, rows: list[MemoryRow], session_notes: bool = False) -> None:
        """Index rows just written: lexical index and row cache (and, for saves, the session's working memory)."""
        self._rows.put(rows)
        if session_notes and self._sessions is not None:
            for row in rows:
                self._sessions.add_note(row.namespace, row.session_id, row.id, row.content, row.created_at)
        for row in rows:
            self._lexical.add(row.namespace, [indexed(row)])
        if self._holder_readings is not None:
            self._holder_readings.queue(rows)

    def embed_query(self, text: str):
        """The query's embedding (None without an encoder); the last few are kept, as one search may embed twice."""
        if self._activation is None:
            return None
        with self._query_vectors_lock:
            vector = self._query_vectors.get(text)
        if vector is None:
            vectors = self._activation.embed_for_search([text])
            if vectors is None:
                return None
            vector = vectors[0]
            vector.setflags(write=False)
            with self._query_vectors_lock:
                self._query_vectors[text] = vector
                while len(self._query_vectors) > QUERY_VECTORS_KEPT:
                    self._query_vectors.pop(next(iter(self._query_vectors)))
        return vector

    def save(self, namespace: str, new: NewMemory) -> SaveOutcome:
        """Validate, fill in what the caller left out, then store, or reinforce the memory it duplicates."""
        row = self._validated_row(namespace, new)
        if new.supersedes:
            self.open(namespace, [new.supersedes])  # NotFound before anything is stored
        if self._activation is None:
            self._repository.insert(row)
            self._stored([row], session_notes=True)
            replaced = self._supersede(row, [new.supersedes] if new.supersedes else [])
            return SaveOutcome(row, superseded_memories=replaced)
        analysis = self._activation.analyze(row.content, row.session_id, self._neighbours(namespace, row.content),
                                            remember_turn=False)
        auto_filled = []
        found_entities = self._kept_entities(e.key for e in analysis.entities)
        if not row.entities and found_entities:
            row = replace(row, entities=found_entities)
            auto_filled.append("entities")
        suggested_tags = [t for t in analysis.tags if len(t) <= self._limits.max_tag_chars][: self._limits.max_tags]
        if not row.tags and suggested_tags:
            row = replace(row, tags=self._clean_tags(suggested_tags))
            auto_filled.append("tags")
        if new.strength is None:
            row = replace(row, strength=analysis.strength)
            auto_filled.append("strength")
        verdict = analysis.deduplication
        # A caller who names the memory this one supersedes says it is new information: it is never merged away.
        if verdict is not None and verdict.action == DedupAction.MERGE and verdict.memory_id and not new.supersedes:
            existing = self._repository.record_use(verdict.memory_id, (namespace,), utc_now(), TOUCH_BOOST)
            if existing is not None:
                self._rows.put([existing])
                return SaveOutcome(existing, (), verdict, analysis.dedup_content, True, analysis.degraded)
        implicit = self._implicit_update(row, analysis)
        if implicit is not None:
            # "moved it to 10:15" is only findable with what "it" was: keep that as the memory's context.
            row = replace(row, context=row.context or self._implicit_context(implicit),
                          entities=self._kept_entities((*row.entities, *implicit.entities)))
        if verdict is not None and verdict.relation == "PARTIAL_UPDATE" and verdict.memory_id:
            # The older memory stays current for the part this one leaves unchanged; the link says which it revises.
            row = replace(row, meta={**row.meta, PARTIAL_UPDATE_KEY: verdict.memory_id})
        self._repository.insert(row, analysis.embedding)
        self._stored([row], session_notes=True)
        if analysis.embedding is not None:
            self._vectors.add(namespace, [(row.id, row.content, analysis.embedding)])
        facts, ended, problems = self._record_facts(namespace, row.id, analysis, new.extract_facts)
        replaced = self._supersede(row, self._replaced_memories(row, new, analysis, ended, implicit))
        return SaveOutcome(row, tuple(auto_filled), verdict, analysis.dedup_content, False,
                           analysis.degraded + problems, facts, ended, replaced)

    def _replaced_memories(self, row: MemoryRow, new: NewMemory, analysis: Analysis, ended_facts,
                           implicit: MemoryRow | None) -> list[str]:
        """Older memories the new one replaces: named by the caller, found by dedup as an update, the source of a
        fact it ended, or the session memory an update that does not name its subject refers to."""
        replaced = [new.supersedes] if new.supersedes else []
        verdict = analysis.deduplication
        judged = verdict is not None and bool(verdict.relation)  # the relation model read the neighbours
        if verdict is not None and verdict.action == DedupAction.UPDATE_CANDIDATE and verdict.memory_id \
                and verdict.relation != "PARTIAL_UPDATE":
            replaced += [verdict.memory_id, *verdict.also_updates]
        replaced += [f.source for f in ended_facts if f.source.startswith("mem_") and f.source != row.id]
        if implicit is not None and not replaced:
            replaced.append(implicit.id)
        if not replaced and not judged and analysis.intent.intent in ("UPDATE_INFO", "SAVE_FACT", "SAVE_DECISION",
                                                                       "SAVE_PREFERENCE"):
            replaced += [m.id for m in self._announced_updates(row, analysis.embedding, {})]
        return list(dict.fromkeys(replaced))

    def _implicit_update(self, row: MemoryRow, analysis: Analysis) -> MemoryRow | None:
        """For an UPDATE_INFO message that leans on the conversation ("moved it to Thursdays"): the most similar
        recent memory of its session, which it most likely changes."""
        if analysis.intent.intent != "UPDATE_INFO" or not row.session_id or analysis.embedding is None \
                or not (leans_on_context(row.content) or _points_back_to_change(row.content)):
            return None
        earlier = {m.id: m for m in self._repository.recent_in_session(row.namespace, row.session_id, SESSION_LOOKBACK)
                   if m.superseded_by is None and shares_topic(row.content, m.content)}
        if not earlier:
            return None
        return self._closest(row.namespace, analysis.embedding, earlier) or next(iter(earlier.values()))

    def _closest(self, namespace: str, vector, candidates: dict[str, MemoryRow]) -> MemoryRow | None:
        """The current candidate nearest to the vector, or None when none is among the 200 nearest."""
        scored = {m: s for m, s in self._vectors.nearest(namespace, vector, 200, include_superseded=False)
                  if m in candidates}
        return candidates[max(scored, key=scored.get)] if scored else None

    def _supersede(self, row: MemoryRow, old_ids: list[str]) -> tuple[str, ...]:
        now = utc_now()
        for old_id in old_ids:
            self._repository.mark_superseded(old_id, row.id, now)
            self._rows.mark_superseded(old_id, row.id, now)
            self._vectors.mark_superseded(row.namespace, old_id, row.id)
        return tuple(old_ids)

    def _record_facts(self, namespace: str, memory_id: str, analysis: Analysis, requested: bool | None):
        """Upsert the facts the memory states, with the memory as their source; a failure never fails the save."""
        wanted = self._activation.settings.extract_facts if requested is None else requested
        if not wanted or self._graph is None or not analysis.suggested_facts:
            return (), (), ()
        facts, ended, problems = [], [], []
        for triple in analysis.suggested_facts:
            try:
                recorded, closed = self._graph.record_stated_fact(namespace, triple, memory_id)
            except Exception as error:
                # The memory is stored by now: a fault recording one of its facts (a bad triple, a full disk) is
                # reported with the save, which succeeded, instead of failing it.
                fault = known_fault(error)
                if fault is None:
                    raise
                problems.append(f"facts: ({triple.subject[:80]}, {triple.predicate}, {triple.object[:80]}) "
                                f"not recorded: {fault}")
                continue
            facts += recorded
            ended += closed
        return tuple(facts), tuple(ended), tuple(problems)

    def analyze(self, items: list[AnalyzeItem]) -> list[Analysis]:
        if self._activation is None:
            raise Unavailable("activation is not configured in this daemon")
        for item in items:
            self._checked_text(item.message, "message")
            checked_text(item.session_id, "session_id", self._limits.max_id_chars, required=False)
            checked_namespace(item.namespace)
        # The turns kept for context and the reply's context_used (which a hook saves) never hold a secret.
        items = [replace(item, message=self._secrets.text(item.namespace, item.message)) for item in items]
        return self._activation.analyze_batch(
            [(item.message, item.session_id) for item in items],
            lambda index, embedding: self._neighbours(items[index].namespace, items[index].message)(embedding),
        )

    def models_loaded(self) -> bool:
        """Whether the model load has finished (a daemon without models has nothing to load)."""
        return self._activation is None or self._activation.is_loaded()

    def model_statuses(self):
        if self._activation is None:
            return [], ()
        self._activation.wait_loaded()
        return list(self._activation.statuses), self._activation.degraded()

    def _nearest_texts(self, namespace: str, vector, limit: int, include_superseded: bool = True,
                       exclude=None, unstored: dict[str, MemoryRow] | None = None) -> list[DedupCandidate]:
        """VectorIndex.nearest with each memory's text, read from the row cache (the vector index keeps none);
        `unstored`: rows newer than the store's (an update check round's, stored at its end)."""
        nearest = self._vectors.nearest(namespace, vector, limit, include_superseded, exclude)
        rows = {r.id: r for r in self._rows.get_many([m for m, _s in nearest], (namespace,))}
        rows.update((m, unstored[m]) for m, _s in nearest if unstored and m in unstored)
        return self._with_earlier_versions(namespace, [DedupCandidate(m, rows[m].content, s)
                                                       for m, s in nearest if m in rows], rows)

    def _updated_ids(self, namespace: str, memory_id: str, row: MemoryRow | None) -> list[str]:
        """The memories a memory is linked to as their update: those it superseded, and the one it revises in part
        (read from `row`, when given)."""
        ids = self._vectors.earlier_versions(namespace, memory_id)
        if row is not None and (revised := row.meta.get(PARTIAL_UPDATE_KEY)) and revised not in ids:
            ids.append(revised)
        return ids

    def _with_earlier_versions(self, namespace: str, candidates: list[DedupCandidate],
                               rows: dict[str, MemoryRow] | None = None) -> list[DedupCandidate]:
        """Each candidate that is a change, with the texts of its earlier versions, newest first: the memories it
        superseded and the one it revised in part. A memory that has them is a change whatever its words ("sorry,
        wrong box: …", "Halved that today"); the relation judge reads them to tell the next step of a chain from
        another statement on the change's subject. `rows`: the candidates' rows where the caller has them."""
        rows = dict(rows or {})
        if missing := [c.memory_id for c in candidates if c.memory_id not in rows]:
            rows.update((r.id, r) for r in self._rows.get_many(missing, (namespace,)))
        earlier: dict[str, list[str]] = {}
        for candidate in candidates:
            ids = self._updated_ids(namespace, candidate.memory_id, rows.get(candidate.memory_id))
            if ids:
                earlier[candidate.memory_id] = ids
        if not earlier:
            return candidates
        rows = {r.id: r for r in self._rows.get_many([m for ids in earlier.values() for m in ids], (namespace,))}
        newest_first = {m: sorted((rows[e] for e in ids if e in rows), key=lambda r: r.created_at, reverse=True)
                        for m, ids in earlier.items()}
        return [replace(c, earlier=tuple(r.content for r in newest_first[c.memory_id])) if c.memory_id in earlier
                else c for c in candidates]

    def _neighbours(self, namespace: str, text: str):
        """The text's dedup candidates: its nearest current memories by meaning, and the best few by words (an update
        that swaps the value can sit far from the old text in MiniLM's space and still share its words)."""
        limit = self._activation.settings.dedup_candidates

        def lookup(embedding) -> list[DedupCandidate]:
            found = {c.memory_id: c for c in self._nearest_texts(namespace, embedding, limit, include_superseded=False)}
            words = text_prefix(text, DEDUP_CHARS)
            worded = [m for m, _score in self._lexical.search((namespace,), words, LEXICAL_CANDIDATES + limit)
                      if m not in found and self._vectors.current_version(namespace, m) == m][:LEXICAL_CANDIDATES]
            vectors = self._vectors.vectors_of(namespace, worded)
            rows = {r.id: r for r in self._rows.get_many(list(vectors), (namespace,))}
            by_words = [DedupCandidate(m, rows[m].content, float(vector @ embedding))
                        for m, vector in vectors.items() if m in rows]
            found.update((c.memory_id, c) for c in self._with_earlier_versions(namespace, by_words, rows))
            return list(found.values())

        return lookup

    def search(self, namespace: str, text: str, limit: int, tags: Iterable[str], since: str, until: str,
               signals: Iterable[str] = (), session_id: str = "", include_history: bool = False,
               entity: str = "") -> list[ScoredMemory]:
        return self.retrieve(self.search_query(namespace, text, limit, tags, since, until, signals, session_id,
                                               include_history, entity))

    def retrieve(self, query: SearchQuery) -> list[ScoredMemory]:
        found = self._retriever.search(query)
        self._stored_memories.fill_after_search(query.namespaces)
        return found

    def lexical_query_weight(self, query: SearchQuery) -> float:
        """The BM25 score of a perfect match for the query over these memories (to compare with other indexes)."""
        return self._lexical.query_weight(query.namespaces, query.text)

    def search_query(self, namespace: str, text: str, limit: int, tags: Iterable[str], since: str, until: str,
                     signals: Iterable[str] = (), session_id: str = "", include_history: bool = False,
                     entity: str = "") -> SearchQuery:
        """The checked query: a clear error for an empty query, a bad limit, time, signal or entity."""
        if not text.strip():
            raise InvalidArgument("query must not be empty")
        checked_text(text, "query", self._limits.max_query_chars)
        limit = limit or DEFAULT_SEARCH_LIMIT
        if not 1 <= limit <= self._limits.max_search_limit:
            raise InvalidArgument(f"limit must be between 1 and {self._limits.max_search_limit}, got {limit}")
        query = SearchQuery(
            namespaces=visible_namespaces(namespace),
            text=text,
            limit=limit,
            tags=self._clean_tags(tags),
            since=parse_iso(since, "since"),
            until=parse_iso(until, "until"),
            signals=tuple(dict.fromkeys(s.strip().lower() for s in signals)),
            session_id=checked_text(session_id, "session_id", self._limits.max_id_chars, required=False),
            include_history=include_history,
            entity_keys=_entity_keys(checked_text(entity, "entity", self._limits.max_entity_chars)) if entity.strip() else (),
        )
        check_signals(query.signals)
        return query

    def close_pairs(self, rows: Sequence[MemoryRow]) -> list[ClosePair]:
        """(cosine, older, newer) for each pair of these memories in one namespace, in time order, at a cosine of
        IMPORT_CANDIDATE_FLOOR or more; closest first. compile_context computes them once for its two readings of
        its memories (`updated_among`, `answered_by_newer`)."""
        pairs: list[ClosePair] = []
        for namespace in dict.fromkeys(r.namespace for r in rows):
            same = [r for r in rows if r.namespace == namespace]
            vectors = self._vectors.vectors_of(namespace, [r.id for r in same])
            pairs += [(cosine, older, newer) for older in same for newer in same
                      if newer.created_at > older.created_at and older.id in vectors and newer.id in vectors
                      and (cosine := float(vectors[older.id] @ vectors[newer.id])) >= IMPORT_CANDIDATE_FLOOR]
        return sorted(pairs, key=lambda p: -p[0])

    def answered_by_newer(self, question: str, pairs: Sequence[ClosePair]) -> set[str]:
        """The ids of the older memories of those `close_pairs` whose newer memory answers `question` now
        (`answering_pairs`)."""
        return {older.id for older, _ in self.answering_pairs(question, pairs)}

    def newer_answering(self, question: str, rows: Sequence[MemoryRow]) -> list[tuple[str, str]]:
        """(older id, newer id) for each close pair of these memories whose newer memory answers `question` now
        (`answering_pairs`): search's reading of its best hits."""
        return [(older.id, newer.id) for older, newer in self.answering_pairs(question, self.close_pairs(rows))]

    def answering_pairs(self, question: str, pairs: Sequence[ClosePair]) -> list[tuple[MemoryRow, MemoryRow]]:
        """(older, newer) for those `close_pairs` whose newer memory answers `question` now: the precedence model is
        sure of it, and the relation judge, reading the same pair without the question, reads the
        newer as an update (or a restatement) of the older that none of its checks overruled. Not a partial update,
        whose older memory still answers what the newer left ("Checkout service config: timeout 600 ms, 2 retries"
        beside "we raised the checkout timeout to 1200 ms", for the retries; the partial-update reader decides
        those), nor another instance's or holder's change ("Upgraded the production database to Postgres 16" beside
        "The staging database is Postgres 14"), nor a statement both can hold ("contractor access to compass
        revoked" beside "I have the editor role on the Compass analytics workspace"). The CONTEXT_PRECEDENCE_PAIRS
        closest pairs are read in one call; without either model, or if one fails, none."""
        judge = self._activation.dedup if self._activation is not None else None
        if not isinstance(judge, RelationJudge) or not self._activation.settings.precedence_model or not pairs:
            return []
        closest = list(pairs[:CONTEXT_PRECEDENCE_PAIRS])
        verdicts = self._activation.precedence(question, [(older.content, newer.content) for _, older, newer in closest])
        sure = [pair for pair, newer_answers in zip(closest, verdicts or ()) if newer_answers]
        if not sure:
            return []
        try:
            judged = self._judged_pairs(judge, sure)
        except Exception as error:  # noqa: BLE001 - a failing model never fails a search or a compile_context
            log_event("precedence_guard_failed", level=logging.WARNING, error=repr(error))
            return []
        return [(older, newer) for (_, older, newer), pair in zip(sure, judged, strict=True)
                if pair.relation.label in ("UPDATE", "DUPLICATE") and not pair.overruled]

    def _judged_pairs(self, judge: RelationJudge, pairs: Sequence[ClosePair]) -> list[JudgedPair]:
        """The relation judge's reading of each (cosine, older, newer) pair, with all its checks, in one call: the
        newer memory read as a new text against the older, whose earlier versions it is given."""
        known = {older.id: older for _, older, _ in pairs}
        return judge.judge_pairs([
            (newer.content, self._with_earlier_versions(
                older.namespace, [DedupCandidate(older.id, older.content, cosine)], known)[0])
            for cosine, older, newer in pairs])

    def updated_among(self, pairs: Sequence[ClosePair]) -> set[str]:
        """The ids of the older memories of those `close_pairs` that their newer memory wholly updates, read as import
        reads a record against its neighbours: the relation judge with all its checks, a sure UPDATE no check
        overruled. Import reads a record against its IMPORT_PAIRS nearest memories only, so an update of a memory
        further away stays unlinked; a context that shows both leaves the older out. A pair whose newer memory is
        linked to what it updates already (it superseded a memory, or revises one in part) is not read: one record
        replaces one statement, as import has it, and the judge reads another holder's change ("brams feet grew
        again, hes a 33 now", which superseded Bram's old size) as a sure update of the user's own fact ("My shoe
        size is 43 EU"). The closest CONTEXT_UPDATE_PAIRS such pairs are read, in one model call; without the
        relation model, or if it fails, none."""
        judge = self._activation.dedup if self._activation is not None else None
        if not isinstance(judge, RelationJudge) or not pairs:
            return set()
        linked: dict[str, bool] = {}
        for _, _, newer in pairs:
            if newer.id not in linked:
                linked[newer.id] = bool(self._updated_ids(newer.namespace, newer.id, newer))
        unlinked = [pair for pair in pairs if not linked[pair[2].id]]
        try:
            judged = self._judged_pairs(judge, unlinked[:CONTEXT_UPDATE_PAIRS])
        except Exception as error:  # noqa: BLE001 - a failing model never fails a compile_context
            log_event("context_update_check_failed", level=logging.WARNING, error=repr(error))
            return set()
        return {pair.candidate.memory_id for pair in sure_updates(judged)}

    def open(self, namespace: str, ids: Iterable[str]) -> list[MemoryRow]:
        wanted = list(dict.fromkeys(i.strip() for i in ids))
        if not wanted or any(not i for i in wanted):
            raise InvalidArgument("ids must be a non-empty list of memory ids")
        if len(wanted) > self._limits.max_ids_per_open:
            raise InvalidArgument(f"ids: at most {self._limits.max_ids_per_open} per call, got {len(wanted)}")
        for memory_id in wanted:
            checked_text(memory_id, "ids", self._limits.max_id_chars)
        found = {row.id: row for row in self._repository.get_many(wanted, visible_namespaces(namespace))}
        missing = [i for i in wanted if i not in found]
        if missing:
            raise NotFound(f"no memory with id {', '.join(missing)} in namespace {namespace!r}")
        return [found[i] for i in wanted]

    def current_ids(self, namespace: str, ids: Iterable[str]) -> set[str]:
        """Those of the ids whose memory is stored and still current: neither superseded nor archived."""
        return {row.id for row in self._repository.get_many(list(dict.fromkeys(ids)), visible_namespaces(namespace))
                if row.superseded_by is None and row.archived_at is None}

    def touch(self, namespace: str, memory_id: str, boost_strength: bool) -> MemoryRow:
        if not memory_id.strip():
            raise InvalidArgument("id must not be empty")
        checked_text(memory_id, "id", self._limits.max_id_chars)
        row = self._repository.record_use(
            memory_id.strip(), visible_namespaces(namespace), utc_now(), TOUCH_BOOST if boost_strength else 0.0
        )
        if row is None:
            raise NotFound(f"no memory with id {memory_id} in namespace {namespace!r}")
        self._rows.put([row])
        return row

    # -- corrections -------------------------------------------------------------------------------------------

    def forget(self, namespace: str, ids: Iterable[str], query: str = "", confirm: bool = False, limit: int = 0,
               purge: bool = False, reason: str = "") -> ForgetOutcome:
        """Delete memories of the caller's own namespace for good (by id, or a query's matches once confirmed)."""
        wanted = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
        query = query.strip()
        if bool(wanted) == bool(query):
            raise InvalidArgument("forget_memory needs either ids or a query, not both")
        reason = checked_text(self._secrets.text(namespace, reason), "reason", self._limits.max_source_chars,
                              required=False)
        if query:
            if not 0 <= limit <= MAX_FORGET_MATCHES:
                raise InvalidArgument(f"limit must be between 1 and {MAX_FORGET_MATCHES}, got {limit}")
            self._checked_text(query, "query")
            matches = tuple(hit.memory for hit in self.search(namespace, query, limit or DEFAULT_FORGET_MATCHES, (),
                                                              "", "", include_history=True)
                            if hit.memory.namespace == namespace)
            if not confirm:
                return ForgetOutcome(Forgotten(tuple((m.id, m.content) for m in matches)), matches, previewed=True)
            wanted = [m.id for m in matches]
        else:
            matches = tuple(self.open(namespace, wanted))
            foreign = [m.id for m in matches if m.namespace != namespace]
            if foreign:
                raise InvalidArgument(f"{', '.join(foreign)} belong to the shared {GLOBAL_NAMESPACE!r} namespace; "
                                      f"forget them from there")
        forgotten = self._corrections.forget(wanted, namespace, reason, utc_now())
        self._drop_from_caches(namespace, [memory_id for memory_id, _ in forgotten.memories],
                               [text for _, text in forgotten.memories])
        self._index_again(namespace, forgotten.cleared)
        purged = bool(purge and forgotten.memories)
        if purged:
            self._repository.database.rewrite()
        return ForgetOutcome(forgotten, matches, purged=purged)

    def edit(self, namespace: str, memory_id: str, content: str, reason: str = "",
             drop_history: bool = False) -> tuple[MemoryRow, int]:
        """Replace a memory's text (same id); search, facts and embedding follow. Returns (row, history versions)."""
        checked_text(memory_id, "id", self._limits.max_id_chars)
        content = self._checked_text(self._secrets.text(namespace, content), "content")
        reason = checked_text(self._secrets.text(namespace, reason), "reason", self._limits.max_source_chars,
                              required=False)
        (old,) = self.open(namespace, [memory_id])
        if old.namespace != namespace:
            raise InvalidArgument(f"{old.id} belongs to the shared {GLOBAL_NAMESPACE!r} namespace; edit it from there")
        analysis = self._activation.analyze(content, "", None, remember_turn=False) \
            if self._activation is not None else None
        entities = self._kept_entities(e.key for e in analysis.entities) if analysis is not None else old.entities
        new = replace(old, content=content, entities=entities or old.entities)
        embedding = analysis.embedding if analysis is not None else None
        versions = self._corrections.edit(old, new, embedding, reason, utc_now(), keep_history=not drop_history)
        cleared: list[str] = []
        if drop_history:
            cleared, _replies = self._corrections.scrub(namespace, [old.content])
        if self._graph is not None:
            self._corrections.forget_facts_of(old.id, namespace)
        self._drop_from_caches(namespace, [old.id], [old.content] if drop_history else [])
        if embedding is not None:  # a namespace served by its graph takes the new vector in place of the old
            self._vectors.add(namespace, [(old.id, content, embedding)])
        self._stored([new])
        self._index_again(namespace, cleared)
        if analysis is not None:
            self._record_facts(namespace, old.id, analysis, None)
        return new, versions

    def unarchive(self, namespace: str, ids: Iterable[str]) -> list[MemoryRow]:
        """Archived memories of the caller's namespace back into search, counted as used now."""
        wanted = [row.id for row in self.open(namespace, ids) if row.namespace == namespace]
        rows = self._corrections.unarchive(wanted, namespace, utc_now()) if wanted else []
        self._rows.put(rows)
        return rows

    def _index_again(self, namespace: str, ids: Sequence[str]) -> None:
        """Memories changed in place behind the caches (a context cleared): read again, and indexed with their text
        as stored now."""
        if ids:
            self._rows.drop(ids)
            self._lexical.drop(namespace, ids)
            self._stored(self._repository.get_many(list(ids), (namespace,)))

    def _drop_from_caches(self, namespace: str, ids: list[str], texts: list[str]) -> None:
        """Every RAM copy of forgotten memories or texts: rows, indexes (reloaded on the next search), session notes,
        recent turns and analyses, the relation model's pair cache, query vectors, the graph's edges."""
        self._rows.drop(ids)
        self._lexical.drop(namespace, ids)
        self._vectors.drop(namespace, ids)
        if self._holder_readings is not None:
            self._holder_readings.forget(ids)
        if self._sessions is not None:
            self._sessions.drop(ids)
        if self._activation is not None and texts:
            self._activation.forget_texts(texts)
        with self._query_vectors_lock:
            self._query_vectors.clear()
        if self._graph is not None:
            self._graph.forget_caches([namespace])

    # -- dynamics ----------------------------------------------------------------------------------------------

    def observe_usage(self, namespace: str, ids: Iterable[str], response: str) -> tuple[list[MemoryRow], list[str]]:
        """Reinforce the retrieved memories the response drew on; report the others as unused."""
        self._checked_text(response, "response")
        rows = self.open(namespace, ids)
        used = [self.touch(namespace, row.id, boost_strength=True) for row in rows if used_by(row, response)]
        used_ids = {row.id for row in used}
        return used, [row.id for row in rows if row.id not in used_ids]

    def promote(self, namespace: str, ids: Iterable[str], auto: bool) -> list[MemoryRow]:
        ids = [i.strip() for i in ids if i.strip()]
        if not ids and not auto:
            raise InvalidArgument("promote_memory needs ids, or auto=true to promote by the rule")
        chosen = [row.id for row in self.open(namespace, ids)] if ids else []
        if auto:
            chosen += [row.id for row in self._repository.all_in(namespace) if should_promote(row) and not row.long_term]
        promoted = self._repository.set_long_term(list(dict.fromkeys(chosen)), (namespace,)) if chosen else []
        self._rows.put(promoted)
        return promoted

    def collect_garbage(self, namespace: str, apply: bool, threshold: float | None,
                        grace_days: float | None = None) -> tuple[list[str], int, int, int]:
        """(ids archived, or only found when not `apply`; memories checked; long-term kept; spared by the grace
        period); archiving never deletes."""
        rows = self._repository.all_in(namespace)
        doomed, spared = to_archive(rows, self._retrieval, threshold, grace_days)
        if apply and doomed:
            now = utc_now()
            self._repository.archive([r.id for r in doomed], now)
            self._rows.put(replace(r, archived_at=now) for r in doomed)
        return [r.id for r in doomed], len(rows), sum(r.long_term for r in rows), spared

    def clusters(self, namespace: str, similarity: float | None, limit: int) -> list[Cluster]:
        similarity, limit = checked_cluster_settings(similarity, limit)
        ids, texts, matrix, superseded = self._repository.texts_and_embeddings(namespace)
        keep = [i for i, memory_id in enumerate(ids) if memory_id not in superseded]
        return clusters_of([ids[i] for i in keep], [texts[i] for i in keep], matrix[keep], similarity, limit)

    def consolidate(self, namespace: str, ids: Iterable[str], content: str) -> tuple[MemoryRow, list[str]]:
        """One new memory from several, with provenance in meta; the originals are superseded by it."""
        wanted = list(dict.fromkeys(i.strip() for i in ids if i.strip()))
        if not 2 <= len(wanted) <= MAX_CONSOLIDATE:
            raise InvalidArgument(f"ids: consolidate 2 to {MAX_CONSOLIDATE} memories, got {len(wanted)}")
        originals = self.open(namespace, wanted)
        text = content.strip() or " ".join(dict.fromkeys(row.content.strip() for row in originals))
        merged = NewMemory(
            content=text, tags=tuple(dict.fromkeys(t for row in originals for t in row.tags))[: self._limits.max_tags],
            entities=self._kept_entities(e for row in originals for e in row.entities),
            strength=min(2.0, max(row.strength for row in originals)), source="consolidation",
            meta={"consolidated_from": wanted}, extract_facts=False,
        )
        row = self._validated_row(namespace, merged)
        embeddings = self._embeddings([row.content])
        self._repository.insert(row, embeddings[0] if embeddings else None)
        self._stored([row])
        if embeddings:
            self._vectors.add(namespace, [(row.id, row.content, embeddings[0])])
        self._supersede(row, wanted)
        return row, wanted

    def export(self, namespace: str, offset: int, limit: int) -> tuple[list[MemoryRow], int]:
        if offset < 0 or not 0 <= limit <= 1000:
            raise InvalidArgument("offset must be >= 0 and limit between 1 and 1000")
        limit = limit or 500
        rows = self._repository.page(namespace, offset, limit)
        return rows, (offset + len(rows) if len(rows) == limit else 0)

    def import_items(self, items: Iterable[ImportItem]) -> ImportOutcome:
        """Store records in batches; each bad record is reported by id and skipped, the rest go in."""
        outcome = ImportOutcome()
        batch: list[ImportItem] = []
        last_turns: dict[tuple[str, str], str] = {}  # (namespace, session) -> the text of its latest turn so far
        with self._update_checks.importing():
            for item in items:
                batch.append(item)
                if len(batch) >= IMPORT_BATCH:
                    self._import_batch(batch, outcome, last_turns)
                    batch = []
            self._import_batch(batch, outcome, last_turns)
        outcome.checks_pending = sum(self._update_checks.counts().values())
        return outcome

    def start_background_passes(self) -> None:
        """The update checks of imported statements, and the holder model's reading of memories written."""
        self._update_checks.start()
        if self._holder_readings is not None:
            self._holder_readings.start()

    def stop_background_passes(self) -> None:
        """Stop each pass after its current round; queued update checks stay in the store for the next start."""
        self._update_checks.stop()
        if self._holder_readings is not None:
            self._holder_readings.stop()

    def holder_readings_pending(self) -> int:
        """Memories written and not yet read in the background for whose fact they state."""
        return self._holder_readings.pending() if self._holder_readings is not None else 0

    def update_checks_pending(self) -> dict[str, int]:
        """Namespace -> imported statements still waiting for their update check."""
        return self._update_checks.counts()

    def wait_for_update_checks(self, timeout: float) -> bool:
        """Whether every queued update check was done within `timeout` seconds."""
        return self._update_checks.wait_until_done(timeout)

    def count(self) -> int:
        return self._repository.count()

    def namespaces(self) -> list[tuple[str, int, int, int, int]]:
        return self._repository.namespace_counts()

    def forget_indexes(self, namespaces: Iterable[str]) -> None:
        """Rows reached these namespaces behind the indexes' back (a restore): drop the indexes so the next search
        reloads them from the store. The row cache needs nothing: it holds no id the restore could add."""
        for namespace in namespaces:
            self._lexical.forget(namespace)
            self._vectors.forget(namespace)

    def index_states(self) -> list[IndexState]:
        """How dense search runs in each loaded namespace (exact, graph, or building with exact meanwhile)."""
        return self._vectors.states()

    def rebuild_indexes(self, namespace: str) -> str:
        """Drop the namespace's indexes and load them again from the store (`cortexd reindex`); returns the dense
        search mode it serves in now."""
        self._lexical.rebuild(namespace)
        return self._vectors.rebuild(namespace)

    def load_saved_indexes_in_background(self, done: threading.Event) -> None:
        """Start loading the indexes saved beside the store, largest namespace first: one thread for the lexical
        indexes and one for the vector graphs, so the two loads of a namespace overlap and a restarted daemon's
        first search finds them loaded or loading instead of loading one after the other when it arrives. Sets
        `done` when both threads have finished (at once when nothing was saved)."""
        largest_first = [n for n, *_counts in sorted(self._repository.namespace_counts(), key=lambda c: -c[1])]

        def load_each(load: Callable[[str], bool]) -> None:  # at full priority: a first search may be waiting on it
            for namespace in largest_first:
                try:
                    load(namespace)
                except Exception as error:  # noqa: BLE001 - the daemon stopping, say: the first search loads it
                    log_event("saved_index_not_loaded", level=logging.WARNING, namespace=namespace, detail=str(error))
                    return

        loaders = [threading.Thread(target=load_each, args=(load,), name="cortexd-index-load", daemon=True)
                   for load in (self._lexical.load_saved, self._vectors.load_saved)]
        for loader in loaders:
            loader.start()

        def set_when_loaded() -> None:
            for loader in loaders:
                loader.join()
            done.set()
            release_freed_memory()

        threading.Thread(target=set_when_loaded, name="cortexd-index-load", daemon=True).start()

    def save_indexes(self) -> int:
        """Save the vector graphs and lexical indexes changed since their last save; how many were saved. Then hand
        the heap freed since back to the OS: a save's copies of every id, and the models' batches (their sessions
        keep no arena), which glibc would otherwise keep at their peak (a trim takes about 2 ms)."""
        saved = self._vectors.save_unsaved() + self._lexical.save_unsaved()
        release_freed_memory()
        return saved

    def recent(self, namespace: str, limit: int) -> list[MemoryRow]:
        return self._repository.recent(visible_namespaces(namespace), limit)

    def _import_batch(self, batch: list[ImportItem], outcome: ImportOutcome,
                      last_turns: dict[tuple[str, str], str]) -> None:
        rows: list[MemoryRow] = []
        turns: set[str] = set()  # records with a speaker: turns of a transcript
        seen: set[tuple[str, str]] = set()
        by_namespace: dict[str, list[str]] = {}
        for item in batch:
            by_namespace.setdefault(item.namespace, []).append(item.external_id)
        existing = {
            (ns, ext) for ns, ids in by_namespace.items() for ext in self._repository.existing_external_ids(ns, ids)
        }
        for item in batch:
            key = (item.namespace, item.external_id)
            if item.external_id and (key in existing or key in seen):
                outcome.skipped += 1
                continue
            try:
                checked_text(item.external_id, "id", self._limits.max_id_chars, required=False)
                row = self._validated_row(checked_namespace(item.namespace), NewMemory(
                    content=item.text, source=f"import:{item.speaker}" if item.speaker else "import",
                    session_id=item.session))
                created = parse_iso(item.timestamp, "timestamp")
            except InvalidArgument as error:
                outcome.errors.append(f"record {item.external_id or '(no id)'}: {error}")
                continue
            if created is not None:
                row = replace(row, created_at=created, last_used_at=created,
                              meta={**row.meta, IMPORTED_AT_KEY: format_iso(row.created_at)})
            rows.append(replace(row, external_id=item.external_id or None))
            if item.speaker:
                turns.add(rows[-1].id)
            seen.add(key)
        # Records are applied in the order they happened, not the order they arrived, so updates find what they update.
        rows.sort(key=lambda r: r.created_at)
        stored_turns = self._stored_session_ends([row for row in rows if row.id in turns], last_turns)
        rows = [self._with_turn_before(row, last_turns, stored_turns) if row.id in turns else row for row in rows]
        # In parts, each embedded while the part before it is stored: the encoder and the store take turns otherwise.
        parts = [rows[start: start + IMPORT_PART] for start in range(0, len(rows), IMPORT_PART)]
        ahead = self._embedding_started([row.content for row in parts[0]]) if parts else None
        for number, part in enumerate(parts):
            embeddings = self._embedded(ahead)
            if number + 1 < len(parts):
                ahead = self._embedding_started([row.content for row in parts[number + 1]])
            self._store_imported(part, embeddings, turns)
            outcome.imported += len(part)

    def _store_imported(self, rows: list[MemoryRow], embeddings, turns: set[str]) -> None:
        """Index and store imported rows in one transaction. Statements (not transcript turns: what was said is kept
        as history) join the update-check queue in it, and reach the vector index when their check has run, so that
        each check reads only what came before its statement; the lexical index has every row at once."""
        queued = [row for row in rows if row.id not in turns] if embeddings is not None else []
        self._update_checks.queue(queued)
        try:
            if embeddings is not None:
                by_namespace: dict[str, list] = {}
                for row, vector in zip(rows, embeddings, strict=True):
                    if row.id in turns:
                        by_namespace.setdefault(row.namespace, []).append((row.id, row.content, vector))
                for namespace, items in by_namespace.items():
                    self._vectors.add(namespace, items, load=True)
            self._repository.insert_many(rows, embeddings, queued, utc_now())
        except BaseException:
            self._update_checks.unqueue(queued)
            raise
        self._stored(rows)

    def _stored_session_ends(self, turns: list[MemoryRow],
                             last_turns: dict[tuple[str, str], str]) -> dict[tuple[str, str], MemoryRow]:
        """(namespace, session) -> the store's newest memory of each session these turns open (one query per namespace
        and batch, so the cost does not grow with the number of sessions)."""
        wanted: dict[str, set[str]] = {}
        for row in turns:
            if row.session_id and (row.namespace, row.session_id) not in last_turns:
                wanted.setdefault(row.namespace, set()).add(row.session_id)
        return {(namespace, session): memory for namespace, sessions in wanted.items()
                for session, memory in self._repository.latest_in_sessions(namespace, sorted(sessions)).items()}

    def _with_turn_before(self, row: MemoryRow, last_turns: dict[tuple[str, str], str],
                          stored_turns: dict[tuple[str, str], MemoryRow]) -> MemoryRow:
        """A turn of a transcript keeps the turn before it in its session as context: a reply ("yes, last week!") is
        found by the words of what it answers. The lexical index reads the context; the embedding does not."""
        key = (row.namespace, row.session_id)
        before = last_turns.get(key)
        if before is None and row.session_id:
            earlier = stored_turns.get(key)
            before = earlier.content if earlier is not None and earlier.created_at <= row.created_at else None
        if row.session_id:
            last_turns[key] = row.content
        if not before or row.context:
            return row
        return replace(row, context=clipped_to_bytes(f"in reply to: {before}", self._limits.max_context_bytes))

    def check_queued(self, rows: list[MemoryRow], gone: Sequence[str] = ()) -> None:
        """The update check of queued imported statements (UpdateCheckPass), oldest first: each is read against the
        memories before it (statements still queued are not), and the updates found are stored, with the checks
        taken off the queue, in one transaction. A statement older than the memory it matches (a late arrival) is
        itself the superseded one."""
        checker = self._activation.dedup if self._activation and self._activation.settings.dedup else None
        judge = checker if isinstance(checker, RelationJudge) else None
        limit = self._activation.settings.dedup_candidates if checker else 0
        vectors = {namespace: self._repository.embeddings_of(namespace, [r.id for r in rows if r.namespace == namespace])
                   for namespace in {row.namespace for row in rows}}
        checked: set[str] = set()
        in_batch = {row.id: row for row in rows}
        updates: list[tuple[str, str]] = []
        revised: list[MemoryRow] = []
        for position, row in enumerate(rows):
            vector = vectors[row.namespace].get(row.id)
            if vector is not None:
                # Queued, and its own check still to come: read later, against this one.
                not_yet = functools.partial(self._not_checked_yet, row.namespace, checked)
                found, pairs = self._updates_of(row, vector, rows[:position], in_batch, judge, checker, limit, not_yet)
                self._vectors.add(row.namespace, [(row.id, row.content, vector)], load=True)
                for pair in pairs:
                    self._vectors.mark_superseded(row.namespace, *pair)
                updates += pairs
                if found is not row:
                    revised.append(found)
                    in_batch[row.id] = found
            checked.add(row.id)
        now = utc_now()
        self._update_queue.finish([*checked, *gone], updates, revised, now)
        for old_id, new_id in updates:
            self._rows.mark_superseded(old_id, new_id, now)
        for namespace in {row.namespace for row in revised}:
            self._index_again(namespace, [row.id for row in revised if row.namespace == namespace])

    def _not_checked_yet(self, namespace: str, checked: set[str], memory_id: str) -> bool:
        return memory_id not in checked and self._update_checks.waiting(namespace, memory_id)

    def _updates_of(self, row: MemoryRow, vector, earlier: list[MemoryRow], in_batch: dict[str, MemoryRow],
                    judge: RelationJudge | None, checker, limit: int, not_yet) -> tuple[MemoryRow, list[tuple[str, str]]]:
        """The imported statement as it is to be stored (an implicit reference's context, a partial update's mark)
        and the (older id, newer id) pairs of what it updates; memories for which `not_yet` says True are not read."""
        pairs: list[tuple[str, str]] = []
        implicit, revised = None, ""
        if referent := self._implicit_import_update(row, vector, earlier, judge, not_yet):
            referred, relation = referent
            # As on save: what "it" was is kept as context, so the record is found by the old subject.
            row = replace(row, context=row.context or self._implicit_context(referred))
            if relation == "UPDATE":
                implicit = referred
                pairs.append((implicit.id, row.id))
            else:
                revised = referred.id
        if judge is not None:
            nearest = self._nearest_texts(row.namespace, vector, limit, include_superseded=False, exclude=not_yet,
                                          unstored=in_batch)
            replaced_ids, revised_too = self._imported_updates(judge, row, nearest, implicit)
            revised = revised or revised_too
            for replaced in replaced_ids:
                if (later := self._in_time_order(row, replaced, in_batch)) and later not in pairs:
                    pairs.append(later)
            if revised and not pairs and self._in_time_order(row, revised, in_batch) == (revised, row.id):
                # As on save: the older memory stays current for the part this one leaves unchanged.
                row = replace(row, meta={**row.meta, PARTIAL_UPDATE_KEY: revised})
        # Without the relation model, the rules below answer only when no implicit update was found.
        elif implicit is None and (announced := self._announced_updates(row, vector, in_batch, not_yet)):
            pairs += [(old.id, row.id) for old in announced]
        elif implicit is None and checker is not None:
            nearest = self._nearest_texts(row.namespace, vector, limit, include_superseded=False, exclude=not_yet)
            verdict = checker.check(row.content, nearest)
            # Imported logs hold many look-alike lines ("turn 5", "turn 6"); without a stated change only
            # a near-paraphrase counts as an update.
            if verdict.action == DedupAction.UPDATE_CANDIDATE and verdict.memory_id and (
                    announces_change(row.content) or verdict.similarity >= IMPORT_UPDATE_SIMILARITY) \
                    and (pair := self._in_time_order(row, verdict.memory_id, in_batch)):
                pairs.append(pair)
        return row, pairs

    def _in_time_order(self, row: MemoryRow, other_id: str, in_batch: dict[str, MemoryRow]) -> tuple[str, str] | None:
        """(older id, newer id) for an imported record and the memory it updates; a record older than that memory
        (a late arrival) is itself the superseded one. None when the memory is gone."""
        other = in_batch.get(other_id) or next(iter(self._rows.get_many([other_id], (row.namespace,))), None)
        if other is None:
            return None
        return (other.id, row.id) if other.created_at <= row.created_at else (row.id, other.id)

    @staticmethod
    def _imported_updates(judge: RelationJudge, row: MemoryRow, candidates: list[DedupCandidate],
                          referent: MemoryRow | None = None) -> tuple[list[str], str]:
        """The memories an imported record replaces: the memory it refers to by pronoun (`referent`) or else, of
        those the relation model is sure it updates wholly, the closest in meaning; with that one's other versions
        among those (RelationJudge.versions_of). And the one it surely revises in part ("" for none). A log or a
        conversation holds many turns on one topic, and none of them should retire another on a doubtful reading."""
        try:
            judged = judge.judge(row.content, candidates[:IMPORT_PAIRS], floor=IMPORT_CANDIDATE_FLOOR)
        except Exception:  # noqa: BLE001 - a failing model leaves the record current; the import goes on
            return [], ""
        # A pair the number rules decided ("build 41 passed" after "build 40 passed") is an update only when it says
        # so or is a near-paraphrase: imported logs hold many look-alike lines that differ by a number.
        stated = announces_change(row.content)
        sure = sure_updates(judged, lambda p: stated or p.candidate.similarity >= IMPORT_UPDATE_SIMILARITY)
        replaced: list[str] = []
        if sure or referent is not None:
            best = DedupCandidate(referent.id, referent.content, 1.0) if referent is not None \
                else max(sure, key=lambda p: p.candidate.similarity).candidate
            replaced = judge.replaced_with_versions(best, sure)
        partial = [p for p in judged if p.relation.label == "PARTIAL_UPDATE" and p.relation.confidence >= SURE_UPDATE
                   and not p.overruled]
        return replaced, max(partial, key=lambda p: p.relation.confidence).candidate.memory_id if partial else ""

    def _implicit_import_update(self, row: MemoryRow, vector, earlier_in_batch: list[MemoryRow],
                                judge: RelationJudge | None, not_yet) -> tuple[MemoryRow, str] | None:
        """(the memory, "UPDATE" or "PARTIAL_UPDATE") for an imported record that names its subject only by pronoun
        ("bumped it to 2.0 this week", "she moved it to Wednesdays"). With the relation model: one of the namespace's
        REFERENT_CANDIDATES newest current memories before it, whatever their cosine (such a record shares few words
        and little meaning with what it changes; see _referent_updated). Without: the most similar earlier memory of
        its session that shares a word with it, when it announces a change."""
        if judge is not None and names_no_subject(row.content):
            return self._referent_updated(judge, row, vector, earlier_in_batch, not_yet)
        if not row.session_id or not _points_back_to_change(row.content):
            return None
        earlier = {m.id: m for m in earlier_in_batch[-SESSION_LOOKBACK * 4:]
                   if m.session_id == row.session_id and m.namespace == row.namespace}
        earlier.update((m.id, m) for m in self._repository.recent_in_session(row.namespace, row.session_id,
                                                                             SESSION_LOOKBACK, row.created_at)
                       if m.id != row.id and not not_yet(m.id))
        earlier = {m: memory for m, memory in earlier.items() if shares_topic(row.content, memory.content)}
        closest = self._closest(row.namespace, vector, earlier) if earlier else None
        return (closest, "UPDATE") if closest else None

    def _referent_updated(self, judge: RelationJudge, row: MemoryRow, vector,
                          earlier_in_batch: list[MemoryRow], not_yet) -> tuple[MemoryRow, str] | None:
        """The newest current memories before the record (this batch's and the store's), each read with it by the
        relation model; of those it surely reads the record as updating (wholly or in part), one that shares a word
        or a kind of value with it, then the closest in meaning, since it reads a pronoun statement as an update of
        almost anything ("she switched it to Thursdays" after "Ms. Ortega lives in Valencia": UPDATE 1.00); "UPDATE"
        only where it is sure the update is whole."""
        in_batch = [m for m in earlier_in_batch if m.namespace == row.namespace
                    and self._vectors.current_version(row.namespace, m.id) == m.id]
        # The store's newest before it, but the record itself, those whose check is still to come, and those this
        # round of checks has superseded already (the store learns of them at the round's end).
        stored = [m for m in self._repository.latest_current_before(row.namespace, row.created_at, REFERENT_CANDIDATES,
                                                                    exclude=row.id)
                  if not not_yet(m.id) and self._vectors.current_version(row.namespace, m.id) == m.id]
        newest = sorted({m.id: m for m in [*in_batch[-REFERENT_CANDIDATES:], *stored]}.values(),
                        key=lambda m: m.created_at, reverse=True)[:REFERENT_CANDIDATES]
        updated: dict[str, tuple[MemoryRow, str]] = {}
        for memory in newest:
            try:
                # One pair a call: int8 activations are scaled per call, and a borderline pair read beside others
                # can cross the bar ("Mrs. Adler charges 35" read 0.51 alone, 0.91 beside the piano lesson).
                # Not a cosine: the candidate was chosen by time, so the floor is off.
                candidate = self._with_earlier_versions(row.namespace, [DedupCandidate(memory.id, memory.content, 1.0)],
                                                        {memory.id: memory})
                pair = judge.judge(row.content, candidate, floor=-1.0)[0]
            except Exception:  # noqa: BLE001 - a failing model leaves the record current; the import goes on
                return None
            probabilities = pair.relation.probabilities
            if probabilities["UPDATE"] + probabilities["PARTIAL_UPDATE"] >= SURE_UPDATE and not pair.overruled:
                # Wholly only when the model is sure of that; else the older memory stays current.
                whole = probabilities["UPDATE"] >= SURE_UPDATE
                updated[memory.id] = (memory, "UPDATE" if whole else "PARTIAL_UPDATE")
        if len(updated) > 1:  # prefer those with a word or a kind of value in common ("to 22" / "Node 18")
            updated = {m: u for m, u in updated.items() if shares_topic(row.content, u[0].content)} or updated
        if not updated:
            return None
        closest = self._closest(row.namespace, vector, {m: memory for m, (memory, _) in updated.items()}) \
            if len(updated) > 1 else None
        return updated[closest.id if closest else next(iter(updated))]

    def _announced_updates(self, row: MemoryRow, vector, known: dict[str, MemoryRow],
                           not_yet=None) -> list[MemoryRow]:
        """The older current memories a memory announcing a change ("we moved deploys to Thursdays", "the plan went
        up to 12 dollars", "I misread the booking") updates: the closest on its topic, and a second one nearly as
        close (a reversal "back to Django" matches both the original and what replaced it). A match with an
        outdated version stands for the topic's current version: "we bought a car again" is closest to "we have a
        car", but what it changes is "we sold the car"."""
        if vector is None or not announces_change(row.content):
            return []
        close: dict[str, float] = {}
        returning = announces_return(row.content)
        for candidate in self._nearest_texts(row.namespace, vector, 5, exclude=not_yet):
            m, text, s = candidate.memory_id, candidate.text, candidate.similarity
            current = self._vectors.current_version(row.namespace, m)
            # A state said to be back ("we bought a car again") restates a replaced version, often in other words:
            # a replaced version on its topic is enough from the lower cosine of a stated update.
            restated = returning and current != m and s >= RETURN_SIMILARITY and shares_topic(row.content, text)
            if (s >= ANNOUNCED_UPDATE_SIMILARITY or restated) and current != row.id and s > close.get(current, -1.0) \
                    and not names_other_instance(row.content, text):  # "production has SSO" is not about staging
                close[current] = s
        if not close:
            return []
        missing = [m for m in close if m not in known]
        rows = {**{m: known[m] for m in close if m in known},
                **{r.id: r for r in self._rows.get_many(missing, (row.namespace,))}}
        older = sorted(((rows[m], s) for m, s in close.items() if m in rows and rows[m].created_at <= row.created_at),
                       key=lambda pair: -pair[1])
        return [m for m, s in older[:2] if s >= older[0][1] - SECOND_UPDATE_MARGIN]

    def _embeddings(self, texts: list[str]) -> list | None:
        return self._embedded(self._embedding_started(texts))

    def _embedding_started(self, texts: list[str]) -> tuple[list[list[int]], list[Future], int] | None:
        """Start embedding the texts on the embedding pool; _embedded() collects them (None without an encoder)."""
        if self._activation is None or not texts:
            return None
        # Batches of similar length: each is padded to its longest text, so mixing lengths wastes most of the work.
        # The encoder runs one thread per call (what a single message wants); batches run side by side on the cores.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[start: start + EMBED_BATCH] for start in range(0, len(order), EMBED_BATCH)]
        return batches, [_embedding_pool().submit(self._activation.embed, [texts[i] for i in batch])
                         for batch in batches], len(texts)

    @staticmethod
    def _embedded(started: tuple[list[list[int]], list[Future], int] | None) -> list | None:
        """The embeddings _embedding_started() began, in the texts' order; None if the encoder gave none."""
        if started is None:
            return None
        batches, futures, count = started
        chunks = [future.result() for future in futures]
        if any(chunk is None for chunk in chunks):
            return None
        vectors: list = [None] * count
        for batch, chunk in zip(batches, chunks, strict=True):
            for i, vector in zip(batch, chunk, strict=True):
                vectors[i] = vector
        return vectors

    def _validated_row(self, namespace: str, new: NewMemory) -> MemoryRow:
        """The row to store, once every field is within its limit; nothing is stored before this passes. The limits
        are checked on what was sent (an oversized field is refused before anything reads it) and again after
        secrets are redacted (a marker can be longer than the secret it replaces)."""
        self._checked_fields(new)
        secrets = self._secrets
        new = replace(new, content=secrets.text(namespace, new.content), context=secrets.text(namespace, new.context),
                      tags=secrets.texts(namespace, new.tags), entities=secrets.texts(namespace, new.entities),
                      source=secrets.text(namespace, new.source), meta=secrets.value(namespace, new.meta))
        content, strength, entities, source, session_id = self._checked_fields(new)
        now = utc_now()
        return MemoryRow(
            id=new_memory_id(), namespace=namespace, content=content, tags=self._clean_tags(new.tags),
            entities=entities, strength=strength, created_at=now, last_used_at=now, use_count=0,
            source=source, context=new.context, session_id=session_id, meta=dict(new.meta),
        )

    def _checked_fields(self, new: NewMemory) -> tuple[str, float, tuple[str, ...], str, str]:
        """(content, strength, entities, source, session_id) once each field is within its limit."""
        limits = self._limits
        content = self._checked_text(new.content, "content")
        strength = DEFAULT_STRENGTH if new.strength is None else new.strength
        if not 0.0 <= strength <= MAX_STRENGTH:
            raise InvalidArgument(f"strength must be between 0.0 and {MAX_STRENGTH}, got {strength}")
        entities = tuple(dict.fromkeys(e.strip() for e in new.entities if e.strip()))
        if len(entities) > limits.max_entities:
            raise InvalidArgument(f"entities: at most {limits.max_entities}, got {len(entities)}")
        for entity in entities:
            checked_text(entity, "entities", limits.max_entity_chars)
        source = checked_text(new.source, "source", limits.max_source_chars, required=False)
        context_size = len(new.context.encode("utf-8"))
        if context_size > limits.max_context_bytes:
            raise InvalidArgument(f"context is {context_size} bytes; the limit is {limits.max_context_bytes} bytes")
        session_id = checked_text(new.session_id, "session_id", limits.max_id_chars, required=False)
        checked_text(new.supersedes, "supersedes", limits.max_id_chars, required=False)
        checked_json(new.meta, "meta", limits.max_meta_depth, limits.max_meta_bytes)
        return content, strength, entities, source, session_id

    def _kept_entities(self, names: Iterable[str]) -> tuple[str, ...]:
        """Entities found in the text, within the limits: extraction can take a 60,000-character token for a name,
        which no one would look up by, so one past the length limit is left out rather than stored."""
        kept = (n for n in dict.fromkeys(names) if n and len(n) <= self._limits.max_entity_chars)
        return tuple(kept)[: self._limits.max_entities]

    def _implicit_context(self, earlier: MemoryRow) -> str:
        """What "it" was, for a memory that updates an earlier one without naming it, within the context limit."""
        return clipped_to_bytes(f"re: {earlier.content}", self._limits.max_context_bytes)

    def _checked_text(self, text: str, field: str) -> str:
        """The text stripped; empty or over the size limit is an error naming the field and the limit."""
        stripped = text.strip()
        if not stripped:
            raise InvalidArgument(f"{field} must not be empty")
        size = len(stripped.encode("utf-8"))
        if size > self._limits.max_content_bytes:
            raise InvalidArgument(f"{field} is {size} bytes; the limit is {self._limits.max_content_bytes} bytes")
        return stripped

    def _clean_tags(self, tags: Iterable[str]) -> tuple[str, ...]:
        cleaned = tuple(dict.fromkeys(t.strip().lower() for t in tags if t.strip()))
        if len(cleaned) > self._limits.max_tags:
            raise InvalidArgument(f"tags: at most {self._limits.max_tags}, got {len(cleaned)}")
        for tag in cleaned:
            if len(tag) > self._limits.max_tag_chars:
                raise InvalidArgument(f"tags: {tag[:20]!r}… is longer than {self._limits.max_tag_chars} characters")
        return cleaned
