"""The knowledge-graph domain: validates input, resolves entities, supersedes facts, travels in time, checks integrity."""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime

from memory_daemon.core.config import Limits
from memory_daemon.core.secrets import SecretFilter
from memory_daemon.graph.edges import EdgeIndex
from memory_daemon.core.errors import InvalidArgument, NotFound
from memory_daemon.core.validation import checked_text
from memory_daemon.memory.service import visible_namespaces
from memory_daemon.store.corrections import CorrectionRepository
from memory_daemon.store.graph import (
    DigestMismatch, EntityRow, EpisodeRow, FactRow, GraphCounts, GraphRepository, RelationRow,
)
from memory_daemon.core.timefmt import parse_iso, utc_now
from memory_daemon.graph.timeline import Interval, TimelinePlan, plan_change, plan_correction, plan_retirement
from preprocessing.entities import entity_key, is_technology
from preprocessing.triples import ENDED, FactTriple

EPISODE_KINDS = ("adr", "bug_root_cause", "invariant", "session_note", "migration", "incident", "decision", "conversation")
# Recorded by the daemon itself from a proxy's passive capture, never through record_episode.
OBSERVATION_KIND = "tool_observation"
# Predicates that hold several values at once; every other predicate has one value at a time.
ACCUMULATING_PREDICATES = frozenset({
    "uses", "depends_on", "has", "knows", "likes", "dislikes", "member_of", "works_with", "works_on", "contains",
    "calls", "imports", "integrates_with", "related_to", "mentions", "is_a", "supports", "speaks", "owns",
})
MAX_HOPS = 3
DEFAULT_HOPS = 2
MAX_NEIGHBOURHOOD = 200
DEFAULT_LIMIT = 200
MAX_LIMIT = 1000
MAX_UNKNOWN_KEYS = 100_000
_PREDICATE = re.compile(r"[a-z][a-z0-9_]{0,63}")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def normalised_predicate(predicate: str, field_name: str = "predicate") -> str:
    """"Depends on" -> "depends_on"; 1-64 letters, digits and underscores, starting with a letter."""
    value = re.sub(r"[^a-z0-9]+", "_", predicate.strip().lower()).strip("_")
    if not _PREDICATE.fullmatch(value):
        raise InvalidArgument(f"{field_name}: {predicate[:80]!r} is not a usable name (1-64 letters, digits, '_')")
    return value


def fact_status(row: FactRow, now: datetime) -> str:
    if row.retracted_at is not None:
        return "retracted"
    if row.valid_from > now:
        return "scheduled"
    if row.valid_to is not None and row.valid_to <= now:
        return "superseded" if row.superseded_by else "ended"
    return "active"


def merkle_root(leaves: Sequence[tuple[str, str]]) -> str:
    """Root of a binary SHA-256 tree over (id, digest) leaves in id order; an odd node is carried up."""
    level = [hashlib.sha256(f"{row_id}:{digest}".encode()).digest() for row_id, digest in leaves]
    if not level:
        return hashlib.sha256(b"").hexdigest()
    while len(level) > 1:
        paired = [hashlib.sha256(level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0].hex()


@dataclass(frozen=True)
class FactInput:
    subject: str
    predicate: str
    object: str
    object_kind: str = ""
    valid_from: str = ""
    valid_to: str = ""
    correction: bool = False
    corrects: str = ""
    singular: bool | None = None
    confidence: float | None = None
    source: str = ""
    create_entities: bool = False


@dataclass(frozen=True)
class EpisodeInput:
    kind: str
    title: str
    body: str = ""
    files: tuple[str, ...] = ()
    entities: tuple[str, ...] = ()
    occurred_at: str = ""
    create_entities: bool = False


@dataclass(frozen=True)
class FactOutcome:
    fact: FactRow
    status: str  # created, unchanged or corrected
    superseded: tuple[FactRow, ...] = ()
    retracted_ids: tuple[str, ...] = ()
    created_entities: tuple[EntityRow, ...] = ()


@dataclass(frozen=True)
class EntityView:
    entity: EntityRow
    active: tuple[FactRow, ...]
    history: tuple[FactRow, ...]
    episodes: tuple[EpisodeRow, ...]
    neighbourhood: tuple[tuple[EntityRow, int], ...]
    edges: tuple[FactRow, ...]


@dataclass(frozen=True)
class IntegrityReport:
    rows_checked: int
    merkle_root: str
    problems: tuple[DigestMismatch, ...]
    elapsed_ms: float
    purges: tuple = ()  # (id, kind, purged_at, reason) of the rows purged on purpose

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class _Created:
    entities: list[EntityRow] = field(default_factory=list)


def _list(values: Sequence[str], field_name: str, limits: Limits) -> tuple[str, ...]:
    if len(values) > limits.max_list_items:
        raise InvalidArgument(f"{field_name}: at most {limits.max_list_items} items, got {len(values)}")
    return tuple(dict.fromkeys(checked_text(v, field_name, limits.max_name_chars) for v in values))


def _limit(value: int, default: int = DEFAULT_LIMIT) -> int:
    if value < 0 or value > MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}, got {value}")
    return value or default


class GraphService:
    def __init__(self, repository: GraphRepository, limits: Limits = Limits(),
                 secrets: SecretFilter = SecretFilter()) -> None:
        self._repository = repository
        self._limits = limits
        self._secrets = secrets
        self._db = repository.database
        self._purges = CorrectionRepository(self._db)  # purge_records and the purges verify_integrity reports
        # Entities are never changed, and deleted only by a forget or purge, which calls forget_caches: so a name,
        # once resolved, stays resolved; a name that resolved to nothing stays unresolved until this service
        # creates an entity with that key.
        self._entities_by_key: dict[tuple[str, str], EntityRow] = {}
        self._keys_by_id: dict[str, str] = {}  # entity id -> key; a key never changes
        self._unknown_keys: set[tuple[str, str]] = set()
        self._edges = EdgeIndex(lambda namespace: repository.active_edges([namespace], utc_now()), self._db.writing)

    # -- writes --------------------------------------------------------------

    def upsert_fact(self, namespace: str, request: FactInput) -> FactOutcome:
        """Place a fact in its (subject, predicate) timeline: a change ends the value it replaces, a correction retracts it."""
        limits = self._limits
        request = replace(request, subject=self._secrets.text(namespace, request.subject),
                          object=self._secrets.text(namespace, request.object),
                          source=self._secrets.text(namespace, request.source))
        subject = checked_text(request.subject, "subject", limits.max_name_chars)
        predicate = normalised_predicate(request.predicate)
        value = checked_text(request.object, "object", limits.max_value_chars)
        checked_text(request.corrects, "corrects", limits.max_id_chars, required=False)
        if request.object_kind not in ("", "entity", "literal"):
            raise InvalidArgument(f"object_kind must be 'entity', 'literal' or empty, got {request.object_kind!r}")
        confidence = 1.0 if request.confidence is None else request.confidence
        if not 0.0 <= confidence <= 1.0:
            raise InvalidArgument(f"confidence must be in [0, 1], got {confidence}")
        now = utc_now()
        valid_from = parse_iso(request.valid_from, "valid_from") or now
        valid_to = parse_iso(request.valid_to, "valid_to")
        if valid_to is not None and valid_to <= valid_from:
            raise InvalidArgument(f"valid_to ({request.valid_to}) must be later than valid_from ({valid_from.isoformat()})")
        if request.correction and request.valid_to:
            raise InvalidArgument("a correction covers the corrected fact's interval; leave valid_to empty")
        singular = request.singular if request.singular is not None else predicate not in ACCUMULATING_PREDICATES
        source = checked_text(request.source, "source", limits.max_id_chars, required=False)

        created = _Created()
        with self._creating(created), self._db.transaction() as cursor:
            subject_row = self._resolve(cursor, namespace, subject, request.create_entities, created)
            object_row = self._resolve_object(cursor, namespace, value, request.object_kind, request.create_entities, created)
            object_value = object_row.name if object_row else value
            value_key = object_row.id if object_row else value.lower()
            stored = self._repository.timeline(cursor, namespace, subject_row.id, predicate, None if singular else value_key)
            versions = [_interval(r) for r in stored]
            fact_id = new_id("fact")
            if request.correction:
                plan = plan_correction(versions, self._correction_target(versions, request.corrects, valid_from),
                                       fact_id, value_key, lambda: new_id("fact"))
            else:
                plan = plan_change(versions, fact_id, value_key, valid_from, valid_to, lambda: new_id("fact"))
            if plan.new_fact is None:
                existing = next(r for r in stored if r.id == plan.unchanged_id)
                return FactOutcome(existing, "unchanged", created_entities=tuple(created.entities))
            rows = self._rows_for(plan, {r.id: r for r in stored}, namespace, subject_row.id, predicate,
                                  object_row.id if object_row else None, object_value, singular, confidence, source, now)
            by_id = {r.id: r for r in stored}
            self._repository.retract_facts(cursor, [by_id[i] for i in plan.retract], now)
            fresh = {r.id: r for r in self._repository.insert_facts(cursor, rows.values())}
            self._edges.apply(namespace, plan.retract, fresh.values())
        return FactOutcome(
            fact=fresh[plan.new_fact.id],
            status="corrected" if request.correction else "created",
            superseded=tuple(fresh[i] for i in plan.superseded),
            retracted_ids=plan.retract,
            created_entities=tuple(created.entities),
        )

    def record_stated_fact(self, namespace: str, triple: FactTriple,
                           source: str) -> tuple[tuple[FactRow, ...], tuple[FactRow, ...]]:
        """A fact a saved message states: upsert it, or retire it when the message says it ended.

        Returns (facts recorded, facts the message ended), so the caller can show what changed.
        """
        ended: list[FactRow] = []
        if triple.change == ENDED or (triple.previous_object and not triple.singular):
            gone = triple.object if triple.change == ENDED else triple.previous_object
            for fact in self._active_matches(namespace, triple.subject, triple.predicate, gone):
                ended.append(self.retire_fact(namespace, fact.id, "")[0])
            if triple.change == ENDED:
                return (), tuple(ended)
        outcome = self.upsert_fact(namespace, FactInput(
            subject=triple.subject, predicate=triple.predicate, object=triple.object,
            object_kind="entity" if triple.object_is_entity else "", singular=triple.singular, source=source,
            create_entities=True,
        ))
        return (outcome.fact,), (*ended, *outcome.superseded)

    def _active_matches(self, namespace: str, subject: str, predicate: str, value: str) -> list[FactRow]:
        try:
            entity = self.find_entity(namespace, subject)
        except NotFound:
            return []
        target = self._entity_by_key(namespace, entity_key(value))
        key = target.id if target else value.strip().lower()
        now = utc_now()
        return [f for f in self._repository.timeline(self._db.cursor(), entity.namespace, entity.id,
                                                     normalised_predicate(predicate), key)
                if fact_status(f, now) == "active"]

    def retire_fact(self, namespace: str, fact_id: str, valid_to_text: str) -> tuple[FactRow, tuple[str, ...]]:
        fact_id = checked_text(fact_id, "fact_id", self._limits.max_id_chars)
        now = utc_now()
        valid_to = parse_iso(valid_to_text, "valid_to") or now
        with self._db.transaction() as cursor:
            rows = self._repository.facts_by_id([namespace], [fact_id])
            if not rows:
                raise NotFound(f"no fact {fact_id!r} in namespace {namespace!r}")
            target = rows[0]
            if target.retracted_at is not None:
                current = current_links([replace(target, superseded_by=target.id)],
                                        self._repository.timelines_of([target.subject_id]))[0].superseded_by
                raise InvalidArgument(f"fact_id: fact {fact_id} was revised at {target.retracted_at.isoformat()}; "
                                      f"its current version is {current}")
            if valid_to <= target.valid_from:
                raise InvalidArgument(f"valid_to must be later than the fact's valid_from ({target.valid_from.isoformat()})")
            if target.valid_to is not None and valid_to >= target.valid_to:
                raise InvalidArgument(f"fact_id: fact {fact_id} already ended at {target.valid_to.isoformat()}")
            stored = self._repository.timeline(cursor, namespace, target.subject_id, target.predicate,
                                               None if target.singular else (target.object_id or target.object_value.lower()))
            plan = plan_retirement([_interval(r) for r in stored], _interval(target), valid_to, lambda: new_id("fact"))
            rows_by_id = self._rows_for(plan, {r.id: r for r in stored}, namespace, target.subject_id, target.predicate,
                                        target.object_id, target.object_value, target.singular, target.confidence,
                                        target.source, now)
            by_id = {r.id: r for r in stored}
            self._repository.retract_facts(cursor, [by_id[i] for i in plan.retract], now)
            fresh = {r.id: r for r in self._repository.insert_facts(cursor, rows_by_id.values())}
            self._edges.apply(namespace, plan.retract, fresh.values())
        return fresh[plan.new_fact.id], plan.retract

    def record_episode(self, namespace: str, request: EpisodeInput,
                       kinds: Sequence[str] = EPISODE_KINDS) -> tuple[EpisodeRow, tuple[EntityRow, ...]]:
        kind = request.kind.strip().lower()
        if kind not in kinds:
            raise InvalidArgument(f"kind {request.kind[:40]!r} is not one of: {', '.join(kinds)}")
        request = replace(request, title=self._secrets.text(namespace, request.title),
                          body=self._secrets.text(namespace, request.body),
                          files=self._secrets.texts(namespace, request.files),
                          entities=self._secrets.texts(namespace, request.entities))
        title = checked_text(request.title, "title", self._limits.max_value_chars)
        body = checked_text(request.body, "body", self._limits.max_body_chars, required=False)
        files = _list(request.files, "files", self._limits)
        mentions = _list(request.entities, "entities", self._limits)
        now = utc_now()
        occurred_at = parse_iso(request.occurred_at, "occurred_at") or now
        created = _Created()
        with self._creating(created), self._db.transaction() as cursor:
            entity_ids = tuple(dict.fromkeys(
                self._resolve(cursor, namespace, name, request.create_entities, created).id for name in mentions
            ))
            row = EpisodeRow(new_id("ep"), namespace, kind, title, body, files, entity_ids, occurred_at, now)
            self._repository.insert_episode(cursor, row)
        return self._repository.episodes_by_id([namespace], [row.id])[0], tuple(created.entities)

    def create_relation(self, namespace: str, from_id: str, relation: str, to_id: str, strength: float | None) -> RelationRow:
        strength = 1.0 if strength is None else strength
        if not 0.0 <= strength <= 1.0:
            raise InvalidArgument(f"strength must be in [0, 1], got {strength}")
        name = normalised_predicate(relation, "relation")
        visible = visible_namespaces(namespace)
        for field_name, node in (("from_id", from_id), ("to_id", to_id)):
            if not self._repository.node_exists(visible, checked_text(node, field_name, self._limits.max_name_chars)):
                raise NotFound(f"no memory, entity, episode or fact with id {node!r} in namespace {namespace!r}")
        if from_id == to_id:
            raise InvalidArgument("a relation needs two different ids")
        row = RelationRow(new_id("rel"), namespace, from_id, name, to_id, strength, utc_now())
        self._repository.insert_relation(row)
        return row

    # -- reads ---------------------------------------------------------------

    def query_entity(self, namespace: str, reference: str, hops: int | None, include_retracted: bool) -> EntityView:
        hops = DEFAULT_HOPS if hops is None else hops
        if not 0 <= hops <= MAX_HOPS:
            raise InvalidArgument(f"hops must be between 0 and {MAX_HOPS}, got {hops}")
        visible = visible_namespaces(namespace)
        entity = self.find_entity(namespace, reference)
        now = utc_now()
        facts = self._repository.facts_of(visible, entity.id)
        facts = current_links(facts, facts)
        active = tuple(f for f in facts if fact_status(f, now) == "active")
        # A row retracted only because its interval was re-cut lives on in its copy; only rows whose value
        # was withdrawn (corrections) are history worth showing.
        by_id = {f.id: f for f in facts}
        revised = {f.replaces for f in facts if f.replaces in by_id and by_id[f.replaces].object_value == f.object_value}
        history = tuple(f for f in facts if fact_status(f, now) in ("superseded", "ended", "scheduled")
                        or (include_retracted and f.retracted_at is not None and f.id not in revised))
        episodes = tuple(self._repository.episodes(visible, 50, entity_id=entity.id))
        neighbourhood, edges = self._neighbourhood(visible, entity, hops, now)
        return EntityView(entity, active, history, episodes, neighbourhood, edges)

    def facts_about(self, namespace: str, reference: str) -> list[FactRow]:
        """The entity's active facts and the active facts linking it to other entities: what a context needs,
        without the history, episodes and neighbourhood query_entity also gathers."""
        visible = visible_namespaces(namespace)
        entity = self.find_entity(namespace, reference)
        now = utc_now()
        active = [f for f in self._repository.facts_of(visible, entity.id) if fact_status(f, now) == "active"]
        known = {f.id for f in active}
        return active + [e for e in self._edges.neighbours(visible, entity.id, now) if e.id not in known]

    def time_travel(self, namespace: str, valid_at_text: str, known_at_text: str, entity_reference: str,
                    limit: int) -> tuple[datetime, datetime, list[FactRow], list[EpisodeRow]]:
        valid_at = parse_iso(checked_text(valid_at_text, "valid_at", 64), "valid_at")
        known_at = parse_iso(known_at_text, "known_at") or utc_now()
        visible = visible_namespaces(namespace)
        entity_id = self.find_entity(namespace, entity_reference).id if entity_reference.strip() else None
        facts = self._repository.facts_known_at(visible, valid_at, known_at, entity_id, _limit(limit))
        facts = current_links(facts, self._repository.timelines_of(list({f.subject_id for f in facts})))
        episodes = [e for e in self._repository.episodes(visible, 50, entity_id=entity_id, known_at=known_at)
                    if e.occurred_at <= valid_at]
        return valid_at, known_at, facts, episodes

    def verify_integrity(self, namespace: str) -> IntegrityReport:
        started = time.perf_counter()
        leaves, problems = self._repository.digests(visible_namespaces(namespace))
        root = merkle_root(leaves)
        purges = tuple(self._purges.purges(visible_namespaces(namespace)))
        return IntegrityReport(len(leaves), root, tuple(problems), (time.perf_counter() - started) * 1000, purges)

    def purge(self, namespace: str, ids: Sequence[str], reason: str) -> tuple[list[tuple[str, str]], IntegrityReport]:
        """Delete facts and episodes of the caller's namespace for good and rewrite the store file; the (id, kind)
        purged and the integrity report after it. NotFound when none of the ids is a fact or episode there; ids that
        are not, beside ones that are, are left out of the answer."""
        wanted = list(dict.fromkeys(checked_text(i, "ids", self._limits.max_id_chars) for i in ids if i.strip()))
        if not wanted:
            raise InvalidArgument("ids must name at least one fact or episode")
        reason = checked_text(self._secrets.text(namespace, reason), "reason", self._limits.max_value_chars,
                              required=False)
        purged = self._purges.purge_records(wanted, namespace, reason, utc_now())
        missing = sorted(set(wanted) - {record_id for record_id, _ in purged})
        if purged:
            self.forget_caches([namespace])
            self._db.rewrite()
        if missing and not purged:
            raise NotFound(f"no fact or episode {', '.join(missing)} in namespace {namespace!r}")
        return purged, self.verify_integrity(namespace)

    def read_graph(self, namespace: str, limit: int) -> tuple[list[EntityRow], list[FactRow], list[RelationRow]]:
        visible = visible_namespaces(namespace)
        limit = _limit(limit, 100)
        return (self._repository.list_entities(visible, limit), self._repository.active_facts(visible, utc_now(), limit),
                self._repository.relations(visible, None, limit))

    def counts(self, namespace: str) -> GraphCounts:
        return self._repository.counts(visible_namespaces(namespace), utc_now())

    def recent_episodes(self, namespace: str, limit: int, kinds: Sequence[str] = ()) -> list[EpisodeRow]:
        return self._repository.episodes(visible_namespaces(namespace), limit, kinds=kinds)

    def active_facts(self, namespace: str, limit: int) -> list[FactRow]:
        return self._repository.active_facts(visible_namespaces(namespace), utc_now(), limit)

    def entity_names(self, namespace: str, ids: Sequence[str]) -> dict[str, str]:
        if not ids:
            return {}
        return {e.id: e.name for e in self._repository.entities_by_id(visible_namespaces(namespace), list(set(ids)))}

    def neighbour_keys(self, namespaces: Sequence[str], keys: Sequence[str]) -> dict[str, list[tuple[str, float]]]:
        """For each key with an entity: the keys of the entities one active fact away from it, with the fact's
        confidence. Keys not cached yet are looked up in one query (a search asks for several at once)."""
        found: dict[str, list[tuple[str, float]]] = {}
        now = utc_now()
        for key, entity in self._entities_by_keys(namespaces[0], keys).items():
            edges = self._edges.neighbours(namespaces, entity.id, now)
            others = {(e.object_id if e.subject_id == entity.id else e.subject_id): e.confidence for e in edges}
            if not others:
                continue
            missing = [i for i in others if i not in self._keys_by_id]
            if missing:
                if len(self._keys_by_id) > MAX_UNKNOWN_KEYS:
                    self._keys_by_id = {}
                self._keys_by_id.update((row.id, row.key)
                                        for row in self._repository.entities_by_id(namespaces, missing))
            found[key] = [(self._keys_by_id[i], confidence) for i, confidence in others.items()
                          if i in self._keys_by_id]
        return found

    def find_entity(self, namespace: str, reference: str) -> EntityRow:
        reference = checked_text(reference, "entity", self._limits.max_name_chars)
        visible = visible_namespaces(namespace)
        if reference.startswith("ent_"):
            found = self._repository.entities_by_id(visible, [reference])
        else:
            found = self._entity_by_key(namespace, entity_key(reference))
            found = [found] if found else []
        if not found:
            raise NotFound(f"no entity {reference!r} in namespace {namespace!r}")
        return _prefer_own(found, namespace)

    @contextmanager
    def _creating(self, created: _Created) -> Iterator[None]:
        """Forget cached entities that a failed write created: its transaction rolled them back."""
        try:
            yield
        except BaseException:
            lost = {e.id for e in created.entities}
            for cache_key in [k for k, e in self._entities_by_key.items() if e.id in lost]:
                del self._entities_by_key[cache_key]
            raise
        # Committed: names that resolved to nothing before may resolve now, from any namespace.
        keys = {e.key for e in created.entities}
        if keys:
            self._unknown_keys = {k for k in self._unknown_keys if k[1] not in keys}

    def forget_caches(self, namespaces: Iterable[str]) -> None:
        """Entities and facts reached these namespaces behind the caches' back (a restore): names that resolved to
        nothing may resolve now, a name may now have an entity of its own namespace, and the edges must be reloaded."""
        self._unknown_keys = set()
        self._entities_by_key = {}
        self._keys_by_id = {}
        for namespace in namespaces:
            self._edges.forget(namespace)

    def _entities_by_keys(self, namespace: str, keys: Sequence[str]) -> dict[str, EntityRow]:
        """_entity_by_key() of each key, those neither cached nor known to be unknown read in one query."""
        found = {key: cached for key in keys if (cached := self._entities_by_key.get((namespace, key))) is not None}
        asked = [key for key in dict.fromkeys(keys) if key not in found and (namespace, key) not in self._unknown_keys]
        if not asked:
            return found
        in_transaction = self._db.in_transaction()
        for key, entities in self._repository.entities_of_keys(visible_namespaces(namespace), asked).items():
            if entities:
                found[key] = self._entities_by_key[(namespace, key)] = _prefer_own(entities, namespace)
            elif not in_transaction:
                if len(self._unknown_keys) >= MAX_UNKNOWN_KEYS:
                    self._unknown_keys.clear()
                self._unknown_keys.add((namespace, key))
        return found

    def _entity_by_key(self, namespace: str, key: str, trust_unknown: bool = True) -> EntityRow | None:
        cached = self._entities_by_key.get((namespace, key))
        if cached is None and (not trust_unknown or (namespace, key) not in self._unknown_keys):
            found = self._repository.entities_by_key(visible_namespaces(namespace), [key])
            if found:
                cached = self._entities_by_key[(namespace, key)] = _prefer_own(found, namespace)
            elif not self._db.in_transaction():
                if len(self._unknown_keys) >= MAX_UNKNOWN_KEYS:  # every word a prompt looks up lands here: stay bounded
                    self._unknown_keys.clear()
                self._unknown_keys.add((namespace, key))
        return cached

    # -- helpers -------------------------------------------------------------

    def _resolve(self, cursor, namespace: str, reference: str, create: bool, created: _Created,
                 entity_type: str | None = None) -> EntityRow:
        visible = visible_namespaces(namespace)
        if reference.startswith("ent_"):
            found = self._repository.entities_by_id(visible, [reference])
            if not found:
                raise NotFound(f"no entity with id {reference!r} in namespace {namespace!r}")
            return found[0]
        key = entity_key(reference)
        if not key:
            raise InvalidArgument(f"{reference[:80]!r} is not a usable entity name")
        found = self._entity_by_key(namespace, key, trust_unknown=False)  # writes never trust a cached miss
        if found:
            return found
        if not create:
            raise NotFound(f"no entity {reference!r} in namespace {namespace!r}; pass create_entities=true to create it")
        kind = entity_type or ("TECHNOLOGY" if is_technology(reference) else "CONCEPT")
        row = EntityRow(new_id("ent"), namespace, reference.strip("`\"' "), key, kind, (), utc_now())
        self._repository.insert_entity(cursor, row)
        created.entities.append(row)
        return row

    def _resolve_object(self, cursor, namespace: str, value: str, kind: str, create: bool,
                        created: _Created) -> EntityRow | None:
        if kind == "literal":
            return None
        if kind == "entity" or value.startswith("ent_"):
            return self._resolve(cursor, namespace, value, create, created)
        found = self._entity_by_key(namespace, entity_key(value), trust_unknown=False)
        if found:
            return found
        if create and is_technology(value):
            return self._resolve(cursor, namespace, value, create, created, "TECHNOLOGY")
        return None

    @staticmethod
    def _correction_target(versions: Sequence[Interval], corrects: str, valid_from: datetime) -> Interval:
        if corrects:
            target = next((v for v in versions if v.id == corrects), None)
            if target is None:
                raise NotFound(f"no still-believed fact {corrects!r} for this subject and predicate to correct")
            return target
        now = utc_now()
        target = next((v for v in versions if v.covers(min(valid_from, now))), None) or (versions[-1] if versions else None)
        if target is None:
            raise NotFound("nothing to correct: this subject has no fact with this predicate yet; record it without correction")
        return target

    @staticmethod
    def _rows_for(plan: TimelinePlan, stored: dict[str, FactRow], namespace: str, subject_id: str, predicate: str,
                  object_id: str | None, object_value: str, singular: bool, confidence: float, source: str,
                  now: datetime) -> dict[str, FactRow]:
        rows: dict[str, FactRow] = {}
        for interval in plan.insert:
            original = stored.get(interval.replaces) if interval.replaces else None
            if original is not None and interval.id != plan.new_fact.id:
                # A re-cut copy keeps everything of the row it was cut from except its interval and links.
                row = FactRow(interval.id, namespace, subject_id, predicate, original.object_id, original.object_value,
                              interval.valid_from, interval.valid_to, now, None, interval.superseded_by, original.id,
                              original.singular, original.confidence, original.source)
            else:
                row = FactRow(interval.id, namespace, subject_id, predicate, object_id, object_value,
                              interval.valid_from, interval.valid_to, now, None, interval.superseded_by,
                              interval.replaces, singular, confidence, source)
            rows[row.id] = row
        return rows

    def _neighbourhood(self, visible: Sequence[str], entity: EntityRow, hops: int,
                       now: datetime) -> tuple[tuple[tuple[EntityRow, int], ...], tuple[FactRow, ...]]:
        distance = {entity.id: 0}
        edges: dict[str, FactRow] = {}
        frontier = [entity.id]
        for hop in range(1, hops + 1):
            if not frontier or len(distance) >= MAX_NEIGHBOURHOOD:
                break
            reached = []
            for edge in (e for node in frontier for e in self._edges.neighbours(visible, node, now)):
                edges[edge.id] = edge
                for node in (edge.subject_id, edge.object_id):
                    if node not in distance and len(distance) < MAX_NEIGHBOURHOOD:
                        distance[node] = hop
                        reached.append(node)
            frontier = reached
        rows = {e.id: e for e in self._repository.entities_by_id(visible, list(distance))}
        nodes = tuple((rows[i], d) for i, d in sorted(distance.items(), key=lambda x: x[1]) if i in rows)
        kept = tuple(e for e in edges.values() if e.subject_id in distance and e.object_id in distance)
        return nodes, kept


def current_links(rows: Sequence[FactRow], known: Sequence[FactRow]) -> list[FactRow]:
    """The rows with `superseded_by` pointing at the successor's still-believed version.

    Stored links are never rewritten: when the successor is later re-cut or corrected, the version that
    now stands for it is the row that replaces it with the same valid_from, followed until one is believed.
    """
    by_id = {r.id: r for r in known}
    same_start: dict[str, str] = {}
    for row in known:
        original = by_id.get(row.replaces) if row.replaces else None
        if original is not None and original.valid_from == row.valid_from:
            same_start[original.id] = row.id

    def current(fact_id: str) -> str:
        for _ in range(len(by_id) + 1):
            row = by_id.get(fact_id)
            if row is None or row.retracted_at is None or fact_id not in same_start:
                return fact_id
            fact_id = same_start[fact_id]
        return fact_id

    return [replace(r, superseded_by=current(r.superseded_by)) if r.superseded_by else r for r in rows]


def _interval(row: FactRow) -> Interval:
    return Interval(row.id, row.object_id or row.object_value.lower(), row.valid_from, row.valid_to,
                    row.superseded_by, row.replaces)


def _prefer_own(found: Sequence[EntityRow], namespace: str) -> EntityRow:
    return next((e for e in found if e.namespace == namespace), found[0])
