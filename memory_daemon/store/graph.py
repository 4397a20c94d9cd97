"""SQL for the knowledge graph: entities, bi-temporal facts, episodes, relations, and their content digests."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import astuple, dataclass, fields, replace
from datetime import datetime

from memory_daemon.store.database import Database, first_row, in_list

# The canonical digest of a row: its fields as text, joined with the ASCII unit separator, NULL as a NUL
# character that no text contains (so (NULL, "x") and ("x", NULL) never collide), then SHA-256. Writes
# compute it in Python (row_digest); verification recomputes it in SQL (FACT_DIGEST, EPISODE_DIGEST) over
# the stored columns. tests/test_graph.py holds the two to the same answer on awkward values.
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%S.%f"
_TIME = "strftime({}, '" + _TIME_FORMAT + "')"


def _digest(parts: Sequence[str]) -> str:
    return "sha256(concat_ws(chr(31), " + ", ".join(f"coalesce({p}, chr(0))" for p in parts) + "))"


FACT_DIGEST = _digest([
    "id", "namespace", "subject_id", "predicate", "object_id", "object_value",
    _TIME.format("valid_from"), _TIME.format("valid_to"), _TIME.format("recorded_at"), _TIME.format("retracted_at"),
    "superseded_by", "replaces", "CAST(singular AS VARCHAR)", "CAST(confidence AS VARCHAR)", "source",
])
EPISODE_DIGEST = _digest([
    "id", "namespace", "kind", "title", "body", "array_to_string(files, chr(30))",
    "array_to_string(entity_ids, chr(30))", _TIME.format("occurred_at"), _TIME.format("recorded_at"),
])


def _text_of(value) -> str:
    if value is None:
        return "\x00"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime):
        return value.strftime(_TIME_FORMAT)
    if isinstance(value, float):
        return repr(value)  # DuckDB prints doubles as the shortest round-trip form too
    if isinstance(value, tuple):
        return "\x1e".join(value)
    return str(value)


def row_digest(row: "FactRow | EpisodeRow") -> str:
    """The digest FACT_DIGEST / EPISODE_DIGEST compute for this row in SQL."""
    values = [getattr(row, f.name) for f in fields(row) if f.name != "sha256"]
    return hashlib.sha256("\x1f".join(_text_of(v) for v in values).encode()).hexdigest()


@dataclass(frozen=True)
class EntityRow:
    id: str
    namespace: str
    name: str
    key: str
    type: str
    aliases: tuple[str, ...]
    created_at: datetime


@dataclass(frozen=True)
class FactRow:
    id: str
    namespace: str
    subject_id: str
    predicate: str
    object_id: str | None
    object_value: str
    valid_from: datetime
    valid_to: datetime | None
    recorded_at: datetime
    retracted_at: datetime | None
    superseded_by: str | None
    replaces: str | None
    singular: bool
    confidence: float
    source: str
    sha256: str = ""


@dataclass(frozen=True)
class EpisodeRow:
    id: str
    namespace: str
    kind: str
    title: str
    body: str
    files: tuple[str, ...]
    entity_ids: tuple[str, ...]
    occurred_at: datetime
    recorded_at: datetime
    sha256: str = ""


@dataclass(frozen=True)
class RelationRow:
    id: str
    namespace: str
    from_id: str
    relation: str
    to_id: str
    strength: float
    created_at: datetime


def _columns(row_type) -> list[str]:
    return [f.name for f in fields(row_type)]


_ENTITY = ", ".join(_columns(EntityRow))
_FACT = ", ".join(_columns(FactRow))
_EPISODE = ", ".join(_columns(EpisodeRow))
_RELATION = ", ".join(_columns(RelationRow))


def _insert(table: str, columns: str, rows: int = 1) -> str:
    row = "(" + ", ".join("?" * len(columns.split(", "))) + ")"
    return f"INSERT INTO {table} ({columns}) VALUES {', '.join([row] * rows)}"

# Still believed, and true at the given valid time.
ACTIVE_AT = "retracted_at IS NULL AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)"
# As the system knew it at known_at, true at valid_at.
KNOWN_AND_VALID = ("recorded_at <= ? AND (retracted_at IS NULL OR retracted_at > ?) "
                   "AND valid_from <= ? AND (valid_to IS NULL OR valid_to > ?)")


def _entity(values) -> EntityRow:
    row = EntityRow(*values)
    return EntityRow(**{**row.__dict__, "aliases": tuple(row.aliases)})


def _fact(values) -> FactRow:
    return FactRow(*values[:15], sha256=values[15])


def _episode(values) -> EpisodeRow:
    row = EpisodeRow(*values)
    return EpisodeRow(**{**row.__dict__, "files": tuple(row.files), "entity_ids": tuple(row.entity_ids)})


@dataclass(frozen=True)
class GraphCounts:
    entities: int
    active_facts: int
    superseded_facts: int
    retracted_facts: int
    episodes: int
    relations: int


@dataclass(frozen=True)
class DigestMismatch:
    table: str
    id: str
    stored: str
    computed: str


class GraphRepository:
    """Reads and writes the graph tables; every query is parametrised and scoped to namespaces."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def database(self) -> Database:
        return self._db

    # -- entities ----------------------------------------------------------

    def entities_by_key(self, namespaces: Sequence[str], keys: Sequence[str]) -> list[EntityRow]:
        """Entities with one of these keys, else those listing one of them as an alias."""
        cursor = self._db.cursor()
        rows = cursor.execute(
            f"SELECT {_ENTITY} FROM entities WHERE key IN {in_list(keys)} AND list_contains(?, namespace)",
            [*keys, list(namespaces)],
        ).fetchall()
        if not rows:
            rows = cursor.execute(
                f"SELECT {_ENTITY} FROM entities WHERE list_has_any(aliases, ?::VARCHAR[]) AND list_contains(?, namespace)",
                [list(keys), list(namespaces)],
            ).fetchall()
        return [_entity(r) for r in rows]

    def entities_of_keys(self, namespaces: Sequence[str], keys: Sequence[str]) -> dict[str, list[EntityRow]]:
        """entities_by_key() of each key, in one query: key -> its entities (none for a key nothing matches)."""
        if not keys:
            return {}
        rows = [_entity(r) for r in self._db.cursor().execute(
            f"SELECT {_ENTITY} FROM entities WHERE (key IN {in_list(keys)} OR list_has_any(aliases, ?::VARCHAR[])) "
            f"AND list_contains(?, namespace)",
            [*keys, list(keys), list(namespaces)],
        ).fetchall()]
        return {key: [r for r in rows if r.key == key] or [r for r in rows if key in r.aliases] for key in keys}

    def entities_by_id(self, namespaces: Sequence[str], ids: Sequence[str]) -> list[EntityRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_ENTITY} FROM entities WHERE id IN {in_list(ids)} AND list_contains(?, namespace)",
            [*ids, list(namespaces)],
        ).fetchall()
        return [_entity(r) for r in rows]

    def insert_entity(self, cursor, row: EntityRow) -> None:
        cursor.execute(f"INSERT INTO entities ({_ENTITY}) VALUES ({', '.join('?' * 7)})",
                       [*astuple(row)[:5], list(row.aliases), row.created_at])

    def list_entities(self, namespaces: Sequence[str], limit: int) -> list[EntityRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_ENTITY} FROM entities WHERE list_contains(?, namespace) ORDER BY created_at LIMIT ?",
            [list(namespaces), limit],
        ).fetchall()
        return [_entity(r) for r in rows]

    # -- facts -------------------------------------------------------------

    def timeline(self, cursor, namespace: str, subject_id: str, predicate: str, object_key: str | None) -> list[FactRow]:
        """Still-believed rows of one (subject, predicate), or of one (subject, predicate, object) when given."""
        # The subject's rows come from the index; the rest is filtered here, since every extra condition
        # in SQL costs DuckDB more than the few rows one subject has.
        rows = [_fact(r) for r in cursor.execute(f"SELECT {_FACT} FROM facts WHERE subject_id = ?", [subject_id]).fetchall()]
        return sorted(
            (r for r in rows if r.predicate == predicate and r.namespace == namespace and r.retracted_at is None
             and (object_key is None or (r.object_id or r.object_value.lower()) == object_key)),
            key=lambda r: r.valid_from,
        )

    def insert_facts(self, cursor, rows: Iterable[FactRow]) -> list[FactRow]:
        """One multi-row INSERT (DuckDB pays per statement); returns the rows as stored, with their digests."""
        rows = [replace(r, sha256=row_digest(r)) for r in rows]
        if rows:
            cursor.execute(_insert("facts", _FACT, len(rows)), [v for r in rows for v in astuple(r)])
        return rows

    def retract_facts(self, cursor, rows: Iterable[FactRow], retracted_at: datetime) -> None:
        """Set the recorded-time end of still-believed rows, with their new digest."""
        for row in rows:
            cursor.execute("UPDATE facts SET retracted_at = ?, sha256 = ? WHERE id = ?",
                           [retracted_at, row_digest(replace(row, retracted_at=retracted_at)), row.id])

    def facts_by_id(self, namespaces: Sequence[str], ids: Sequence[str]) -> list[FactRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_FACT} FROM facts WHERE id IN {in_list(ids)} AND list_contains(?, namespace)",
            [*ids, list(namespaces)],
        ).fetchall()
        return [_fact(r) for r in rows]

    def facts_of(self, namespaces: Sequence[str], entity_id: str, condition: str = "TRUE",
                 parameters: Sequence = ()) -> list[FactRow]:
        """Rows with the entity as subject or object that meet the condition, oldest first.

        Two indexed lookups: an OR of the two columns would make DuckDB scan the whole table.
        """
        cursor = self._db.cursor()
        rows = []
        for column, extra in (("subject_id", ""), ("object_id", " AND subject_id <> ?")):
            rows += cursor.execute(
                f"SELECT {_FACT} FROM facts WHERE {column} = ?{extra} AND list_contains(?, namespace) AND {condition}",
                [entity_id, *([entity_id] if extra else []), list(namespaces), *parameters],
            ).fetchall()
        return sorted((_fact(r) for r in rows), key=lambda f: (f.valid_from, f.recorded_at))

    def active_edges(self, namespaces: Sequence[str], at: datetime) -> list[FactRow]:
        """Every believed fact between two entities that has not ended by `at`: the traversable graph."""
        rows = self._db.cursor().execute(
            f"SELECT {_FACT} FROM facts WHERE object_id IS NOT NULL AND retracted_at IS NULL "
            "AND (valid_to IS NULL OR valid_to > ?) AND list_contains(?, namespace)",
            [at, list(namespaces)],
        ).fetchall()
        return [_fact(r) for r in rows]

    def facts_known_at(self, namespaces: Sequence[str], valid_at: datetime, known_at: datetime,
                       entity_id: str | None, limit: int) -> list[FactRow]:
        parameters = [known_at, known_at, valid_at, valid_at]
        if entity_id is not None:
            return self.facts_of(namespaces, entity_id, KNOWN_AND_VALID, parameters)[:limit]
        rows = self._db.cursor().execute(
            f"SELECT {_FACT} FROM facts WHERE list_contains(?, namespace) AND {KNOWN_AND_VALID} "
            "ORDER BY subject_id, predicate LIMIT ?",
            [list(namespaces), *parameters, limit],
        ).fetchall()
        return [_fact(r) for r in rows]

    def active_facts(self, namespaces: Sequence[str], at: datetime, limit: int,
                     predicates: Sequence[str] = ()) -> list[FactRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_FACT} FROM facts WHERE list_contains(?, namespace) AND {ACTIVE_AT} "
            "AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], predicate)) ORDER BY recorded_at DESC LIMIT ?",
            [list(namespaces), at, at, list(predicates), list(predicates), limit],
        ).fetchall()
        return [_fact(r) for r in rows]

    def timelines_of(self, subject_ids: Sequence[str]) -> list[FactRow]:
        """Every row, believed or retracted, about these subjects: what links between versions resolve against."""
        rows = self._db.cursor().execute(
            f"SELECT {_FACT} FROM facts WHERE subject_id IN {in_list(subject_ids)}", [*subject_ids]
        ).fetchall()
        return [_fact(r) for r in rows]

    # -- episodes and relations --------------------------------------------

    def insert_episode(self, cursor, row: EpisodeRow) -> None:
        values = list(astuple(replace(row, sha256=row_digest(row))))
        values[5], values[6] = list(row.files), list(row.entity_ids)
        cursor.execute(_insert("episodes", _EPISODE), values)

    def episodes(self, namespaces: Sequence[str], limit: int, entity_id: str | None = None,
                 kinds: Sequence[str] = (), known_at: datetime | None = None) -> list[EpisodeRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_EPISODE} FROM episodes WHERE list_contains(?, namespace) "
            "AND (?::VARCHAR IS NULL OR list_contains(entity_ids, ?)) "
            "AND (len(?::VARCHAR[]) = 0 OR list_contains(?::VARCHAR[], kind)) "
            "AND (?::TIMESTAMP IS NULL OR recorded_at <= ?) ORDER BY occurred_at DESC LIMIT ?",
            [list(namespaces), entity_id, entity_id, list(kinds), list(kinds), known_at, known_at, limit],
        ).fetchall()
        return [_episode(r) for r in rows]

    def episodes_by_id(self, namespaces: Sequence[str], ids: Sequence[str]) -> list[EpisodeRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_EPISODE} FROM episodes WHERE id IN {in_list(ids)} AND list_contains(?, namespace)",
            [*ids, list(namespaces)],
        ).fetchall()
        return [_episode(r) for r in rows]

    def insert_relation(self, row: RelationRow) -> None:
        with self._db.writing() as cursor:
            cursor.execute(f"INSERT INTO relations ({_RELATION}) VALUES ({', '.join('?' * 7)})", list(astuple(row)))

    def relations(self, namespaces: Sequence[str], node_ids: Sequence[str] | None, limit: int) -> list[RelationRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_RELATION} FROM relations WHERE list_contains(?, namespace) "
            "AND (?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], from_id) OR list_contains(?::VARCHAR[], to_id)) "
            "ORDER BY created_at LIMIT ?",
            [list(namespaces), node_ids, node_ids, node_ids, limit],
        ).fetchall()
        return [RelationRow(*r) for r in rows]

    def node_exists(self, namespaces: Sequence[str], node_id: str) -> bool:
        cursor = self._db.cursor()
        return any(
            first_row(cursor.execute(f"SELECT 1 FROM {table} WHERE id = ? AND list_contains(?, namespace)",
                                     [node_id, list(namespaces)]))
            for table in ("memories", "entities", "episodes", "facts")
        )

    # -- summary and integrity ---------------------------------------------

    def counts(self, namespaces: Sequence[str], at: datetime) -> GraphCounts:
        ns = list(namespaces)
        cursor = self._db.cursor()
        facts = first_row(cursor.execute(
            f"SELECT count(*) FILTER (WHERE {ACTIVE_AT}), "
            "count(*) FILTER (WHERE retracted_at IS NULL AND valid_to IS NOT NULL AND valid_to <= ?), "
            "count(*) FILTER (WHERE retracted_at IS NOT NULL) FROM facts WHERE list_contains(?, namespace)",
            [at, at, at, ns],
        ))
        one = lambda table: first_row(cursor.execute(  # noqa: E731
            f"SELECT count(*) FROM {table} WHERE list_contains(?, namespace)", [ns]))[0]
        return GraphCounts(one("entities"), facts[0], facts[1], facts[2], one("episodes"), one("relations"))

    def digests(self, namespaces: Sequence[str] | None) -> tuple[list[tuple[str, str]], list[DigestMismatch]]:
        """(id, recomputed digest) of every fact and episode, ordered by id, and the rows whose stored digest differs."""
        leaves: list[tuple[str, str]] = []
        mismatches: list[DigestMismatch] = []
        cursor = self._db.cursor()
        for table, digest in (("facts", FACT_DIGEST), ("episodes", EPISODE_DIGEST)):
            rows = cursor.execute(
                f"SELECT id, sha256, {digest} FROM {table} "
                "WHERE ?::VARCHAR[] IS NULL OR list_contains(?::VARCHAR[], namespace) ORDER BY id",
                [namespaces, namespaces],
            ).fetchall()
            for row_id, stored, computed in rows:
                leaves.append((row_id, computed))
                if stored != computed:
                    mismatches.append(DigestMismatch(table, row_id, stored, computed))
        return leaves, mismatches
