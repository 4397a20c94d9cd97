"""SQL for the memories table: inserts, lookups by id, usage updates and keyword candidates."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memory_daemon.store.database import Database, chunks_to_the_end, first_row

MEMORY_COLUMNS = (
    "id, namespace, content, tags, entities, strength, created_at, last_used_at, "
    "use_count, source, context, session_id, meta, external_id, superseded_by, superseded_at, long_term, archived_at"
)
_INSERT = f"INSERT INTO memories ({MEMORY_COLUMNS}, search_text, embedding) VALUES ({', '.join('?' * 20)})"
EMBEDDING_DIMENSIONS = 384
PARTIAL_UPDATE_KEY = "partially_updates"  # meta key: the memory a partial update revises, which stays current
INSERT_CHUNK = 200


@dataclass(frozen=True, slots=True)  # no per-row __dict__: a row cache holds up to a million of these
class MemoryRow:
    id: str
    namespace: str
    content: str
    tags: tuple[str, ...]
    entities: tuple[str, ...]
    strength: float
    created_at: datetime
    last_used_at: datetime
    use_count: int
    source: str = ""
    context: str = ""
    session_id: str = ""
    meta: dict = field(default_factory=dict)
    external_id: str | None = None
    superseded_by: str | None = None  # the newer memory that updates this one
    superseded_at: datetime | None = None
    long_term: bool = False  # promoted: never garbage-collected
    archived_at: datetime | None = None  # set by gc; archived memories are kept but not searched

    def as_params(self) -> list:
        return [
            self.id, self.namespace, self.content, list(self.tags), list(self.entities), self.strength,
            self.created_at, self.last_used_at, self.use_count, self.source, self.context,
            self.session_id, json.dumps(self.meta, sort_keys=True), self.external_id, self.superseded_by,
            self.superseded_at, self.long_term, self.archived_at, self.search_text,
        ]

    @property
    def search_text(self) -> str:
        return " ".join((self.content, *self.tags, *self.entities)).lower()


# The SQL type of each value MemoryRow.as_params() gives, in order: an insert binds one list per column and unnests them.
_PARAM_TYPES = ("VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR[]", "VARCHAR[]", "DOUBLE", "TIMESTAMP", "TIMESTAMP", "BIGINT",
                "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "VARCHAR", "TIMESTAMP", "BOOLEAN", "TIMESTAMP",
                "VARCHAR")
_UNNESTED = ", ".join(f"unnest(?::{sql_type}[]) AS c{i}" for i, sql_type in enumerate(_PARAM_TYPES))
_VECTOR_FROM_COLUMNS = ("[" + ", ".join(f"import_vectors.column{d}" for d in range(EMBEDDING_DIMENSIONS))
                        + f"]::FLOAT[{EMBEDDING_DIMENSIONS}]")


def embedding_matrix(embeddings: Sequence[Sequence[float] | None] | None, count: int) -> np.ndarray | None:
    """The embeddings as one (count, 384) float32 matrix, when every row has one of the stored size; else None."""
    if embeddings is None or len(embeddings) != count or any(e is None for e in embeddings):
        return None
    matrix = np.asarray(embeddings, dtype=np.float32)
    return matrix if matrix.ndim == 2 and matrix.shape[1] == EMBEDDING_DIMENSIONS else None


def stored_vector(embedding: Sequence[float] | None) -> list[float] | None:
    if embedding is None:
        return None
    vector = [float(x) for x in embedding]
    if len(vector) != EMBEDDING_DIMENSIONS:
        raise ValueError(f"embedding has {len(vector)} dimensions, the store keeps {EMBEDDING_DIMENSIONS}")
    return vector


# What a saved lexical index keeps of each memory, computed alike here (at write) and in SQL (at start): the
# md5 of its content, context, tags and entities, joined by unit and record separators.
INDEXED_DIGEST = ("md5(concat_ws(chr(31), content, context, array_to_string(tags, chr(30)), "
                  "array_to_string(entities, chr(30))))")


def indexed_digest(content: str, context: str, tags: Sequence[str], entities: Sequence[str]) -> str:
    """INDEXED_DIGEST of one memory, in Python."""
    joined = "\x1f".join((content, context, "\x1e".join(tags), "\x1e".join(entities)))
    return hashlib.md5(joined.encode("utf-8"), usedforsecurity=False).hexdigest()


# pair_hash() (retrieval.ann_index) in SQL: of (id, content) for the vector index, of (id, INDEXED_DIGEST) for the
# lexical index. An index keeps one per row and compares it with these at start.
ROW_HASH = "md5_number_lower(id || chr(31) || content)"
INDEXED_HASH = f"md5_number_lower(id || chr(31) || {INDEXED_DIGEST})"

BULK_READ_CHUNK = 10_000  # rows fetched and turned into MemoryRows at a time by a whole-namespace read

# The rows a vector index holds: those with an embedding, but statements still waiting for their update check.
_EMBEDDED_AND_CHECKED = ("embedding IS NOT NULL AND NOT EXISTS (SELECT 1 FROM update_checks q "
                         "WHERE q.memory_id = memories.id)")


def _stacked(embeddings) -> np.ndarray:
    """A fetched embedding column as one (rows, 384) float32 matrix."""
    return (np.stack(embeddings).astype(np.float32, copy=False) if len(embeddings)
            else np.zeros((0, EMBEDDING_DIMENSIONS), dtype=np.float32))


_NO_META: dict = {}  # shared by every row without meta: nothing changes a row's meta in place (replace() copies it)
_SHARED_STRENGTHS: dict[float, float] = {}
_SHARED_STRENGTHS_AT_MOST = 4096


def _shared_strength(value: float) -> float:
    """One float object per distinct strength (most rows share a few), up to a bound."""
    shared = _SHARED_STRENGTHS.get(value)
    if shared is None:
        if len(_SHARED_STRENGTHS) >= _SHARED_STRENGTHS_AT_MOST:
            return value
        shared = _SHARED_STRENGTHS.setdefault(value, value)
    return shared


def memory_row(values: Sequence) -> MemoryRow:
    (id_, namespace, content, tags, entities, strength, created_at, last_used_at,
     use_count, source, context, session_id, meta, external_id, superseded_by, superseded_at, long_term,
     archived_at) = values
    # A row cache holds up to a million rows: values most rows repeat are shared, not copied per row (about a
    # third of a row's bytes): the id (interned, as the indexes' id lists intern it, so the three hold one str),
    # names of namespaces and sources, an external id equal to the id, an unused memory's last use equal to its
    # creation, an empty meta, a strength.
    id_ = sys.intern(id_)
    return MemoryRow(
        id=id_, namespace=sys.intern(namespace), content=content, tags=tuple(tags), entities=tuple(entities),
        strength=_shared_strength(float(strength)), created_at=created_at,
        last_used_at=created_at if last_used_at == created_at else last_used_at, use_count=int(use_count),
        source=sys.intern(source), context=context, session_id=session_id,
        meta=json.loads(meta) if meta and meta != "{}" else _NO_META,
        external_id=id_ if external_id == id_ else external_id, superseded_by=superseded_by,
        superseded_at=superseded_at, long_term=bool(long_term), archived_at=archived_at,
    )


class MemoryRepository:
    """Reads and writes memories; every query is parametrised and scoped to namespaces."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def database(self) -> Database:
        return self._db

    def namespace_counts(self) -> list[tuple[str, int, int, int, int]]:
        """(namespace, memories, facts, episodes, decisions) for every namespace holding any of them, by name."""
        rows = self._db.cursor().execute(
            "SELECT namespace, sum(m), sum(f), sum(e), sum(d) FROM ("
            " SELECT namespace, 1 AS m, 0 AS f, 0 AS e, 0 AS d FROM memories"
            " UNION ALL SELECT namespace, 0, 1, 0, 0 FROM facts"
            " UNION ALL SELECT namespace, 0, 0, 1, 0 FROM episodes"
            " UNION ALL SELECT namespace, 0, 0, 0, 1 FROM decisions"
            ") GROUP BY namespace ORDER BY namespace").fetchall()
        return [(name, int(m), int(f), int(e), int(d)) for name, m, f, e, d in rows]

    def insert(self, row: MemoryRow, embedding: Sequence[float] | None = None) -> None:
        with self._db.writing() as cursor:
            cursor.execute(_INSERT, row.as_params() + [stored_vector(embedding)])

    def insert_many(self, rows: Sequence[MemoryRow], embeddings: Sequence[Sequence[float] | None] | None = None,
                    queued_for_check: Sequence[MemoryRow] = (), queued_at: datetime | None = None) -> None:
        """Rows in one transaction, a column per bound list (a bound value per field cost twice as much, and 384 bound
        floats per embedding five times). Rows in `queued_for_check` join the update-check queue
        (store/update_checks.py) in the same transaction."""
        if not rows:
            return
        matrix = embedding_matrix(embeddings, len(rows))
        with self._db.transaction() as cursor:
            for start in range(0, len(rows), INSERT_CHUNK):
                chunk = rows[start: start + INSERT_CHUNK]
                if embeddings is not None and matrix is None:  # some rows without one: a bound list per row
                    params = [r.as_params() + [stored_vector(e)]
                              for r, e in zip(chunk, embeddings[start: start + INSERT_CHUNK], strict=True)]
                    row = "(" + ", ".join("?" * len(params[0])) + ")"
                    cursor.execute(_INSERT.split(" VALUES ")[0] + " VALUES " + ", ".join([row] * len(params)),
                                   [value for values in params for value in values])
                    continue
                columns = [list(column) for column in zip(*(r.as_params() for r in chunk))]
                if matrix is None:
                    cursor.execute(f"INSERT INTO memories ({MEMORY_COLUMNS}, search_text, embedding) "
                                   f"SELECT *, NULL FROM (SELECT {_UNNESTED})", columns)
                    continue
                # The embeddings are scanned from a float32 array: a column per dimension, a last one for the position.
                import_vectors = np.ascontiguousarray(np.vstack([matrix[start: start + len(chunk)].T,
                                                                 np.arange(len(chunk), dtype=np.float32)[None, :]]))
                cursor.execute(
                    f"INSERT INTO memories ({MEMORY_COLUMNS}, search_text, embedding) SELECT v.* EXCLUDE (position), "
                    f"{_VECTOR_FROM_COLUMNS} FROM (SELECT {_UNNESTED}, unnest(range(?)) AS position) AS v "
                    f"JOIN import_vectors ON import_vectors.column{EMBEDDING_DIMENSIONS} = v.position",
                    [*columns, len(chunk)])
                del import_vectors
            if queued_for_check:
                cursor.execute("INSERT INTO update_checks (memory_id, namespace, queued_at) "
                               "SELECT unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), ?",
                               [[r.id for r in queued_for_check], [r.namespace for r in queued_for_check], queued_at])

    def embeddings(self, namespace: str) -> tuple[list[str], np.ndarray, np.ndarray, dict[str, str]]:
        """Ids, the ROW_HASH of each (id, content), and embeddings of a namespace's memories that have one (but
        statements waiting for their update check), oldest first, and the successor of each superseded one."""
        columns, ids, hashes, successors = self._embedded(namespace, ", embedding")
        return ids, hashes, _stacked(columns["embedding"]), successors

    def texts_and_embeddings(self, namespace: str) -> tuple[list[str], list[str], np.ndarray, dict[str, str]]:
        """embeddings() with each memory's content in place of its hash (what clustering reads)."""
        columns, ids, _hashes, successors = self._embedded(namespace, ", content, embedding")
        return ids, columns["content"].tolist(), _stacked(columns["embedding"]), successors

    def embedded_rows(self, namespace: str) -> tuple[list[str], np.ndarray, dict[str, str]]:
        """embeddings() without the embeddings: what a saved vector index is caught up against at start."""
        _columns, ids, hashes, successors = self._embedded(namespace, "")
        return ids, hashes, successors

    def superseded_in(self, namespace: str) -> dict[str, str]:
        """Superseded id -> its successor, of the namespace's rows embeddings() would give."""
        return dict(self._db.cursor().execute(
            f"SELECT id, superseded_by FROM memories WHERE namespace = ? AND superseded_by IS NOT NULL "
            f"AND {_EMBEDDED_AND_CHECKED}", [namespace]).fetchall())

    def _embedded(self, namespace: str, extra_column: str) -> tuple[dict, list[str], np.ndarray, dict[str, str]]:
        # fetchnumpy hands over each embedding as one float32 array; fetchall would build 384 Python floats per
        # row first (about 9 KB each, 16 GB of transient objects at a million memories).
        columns = self._db.cursor().execute(
            # Not those waiting for their update check: the check adds each to the vector index once it has run.
            f"SELECT id, {ROW_HASH} AS row_hash, superseded_by{extra_column} FROM memories WHERE namespace = ? "
            f"AND {_EMBEDDED_AND_CHECKED} ORDER BY created_at",
            [namespace],
        ).fetchnumpy()
        # tolist(), not list(): iterating a masked array (superseded_by has NULLs) costs microseconds an element.
        ids, successors = (columns[c].tolist() for c in ("id", "superseded_by"))
        hashes = np.asarray(columns["row_hash"], dtype=np.uint64)
        return columns, ids, hashes, {m: s for m, s in zip(ids, successors, strict=True) if isinstance(s, str)}

    def indexed_hashes(self, namespace: str) -> dict[str, int]:
        """Memory id -> INDEXED_HASH, for each memory of the namespace, oldest first (a saved lexical index is
        checked against these at start)."""
        columns = self._db.cursor().execute(
            f"SELECT id, {INDEXED_HASH} AS row_hash FROM memories WHERE namespace = ? ORDER BY created_at",
            [namespace],
        ).fetchnumpy()
        return dict(zip(columns["id"].tolist(), columns["row_hash"].tolist()))

    def indexed_fingerprint(self, namespace: str) -> tuple[int, int]:
        """fingerprint() (retrieval.ann_index) of the namespace's (id, INDEXED_DIGEST) pairs, computed in SQL."""
        return self._fingerprint(INDEXED_HASH, "namespace = ?", [namespace])

    def embedded_fingerprint(self, namespace: str) -> tuple[int, int]:
        """fingerprint() of the (id, content) pairs embedded_rows() gives, computed in SQL."""
        return self._fingerprint(ROW_HASH, f"namespace = ? AND {_EMBEDDED_AND_CHECKED}", [namespace])

    def _fingerprint(self, row_hash: str, where: str, params: list) -> tuple[int, int]:
        count, value = first_row(self._db.cursor().execute(
            f"SELECT count(*), coalesce(bit_xor({row_hash}), 0) FROM memories WHERE {where}", params))
        return int(count), int(value)

    def embeddings_of(self, namespace: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        """The stored embedding of each of these ids that the namespace holds (in chunks, each one IN list)."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(ids), 1000):
            chunk = list(ids[start: start + 1000])
            columns = self._db.cursor().execute(
                f"SELECT id, embedding FROM memories WHERE id IN ({', '.join('?' * len(chunk))}) "
                "AND namespace = ? AND embedding IS NOT NULL",
                [*chunk, namespace],
            ).fetchnumpy()
            found.update((m, np.asarray(v, dtype=np.float32)) for m, v in zip(columns["id"], columns["embedding"]))
        return found

    def get_many(self, ids: Sequence[str], namespaces: Sequence[str]) -> list[MemoryRow]:
        if not ids:
            return []
        # An IN list is answered from the primary-key index; list_contains would scan the table.
        rows = self._db.cursor().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id IN ({', '.join('?' * len(ids))}) AND list_contains(?, namespace)",
            [*ids, list(namespaces)],
        ).fetchall()
        return [memory_row(r) for r in rows]

    def mark_superseded(self, memory_id: str, successor_id: str, at: datetime) -> None:
        """Record that a newer memory replaces this one; the first successor wins, nothing is deleted."""
        self.mark_superseded_many([(memory_id, successor_id)], at)

    def mark_superseded_many(self, pairs: Sequence[tuple[str, str]], at: datetime) -> None:
        """(older id, newer id) pairs in one statement; a memory already superseded keeps its first successor."""
        first: dict[str, str] = {}
        for old, new in pairs:
            first.setdefault(old, new)
        if not first:
            return
        values = ", ".join(["(?, ?)"] * len(first))
        with self._db.writing() as cursor:
            cursor.execute(
                f"UPDATE memories SET superseded_by = v.new_id, superseded_at = ? FROM (VALUES {values}) AS v(old_id, new_id) "
                "WHERE memories.id = v.old_id AND memories.superseded_by IS NULL",
                [at, *(x for pair in first.items() for x in pair)],
            )

    def set_long_term(self, memory_ids: Sequence[str], namespaces: Sequence[str]) -> list[MemoryRow]:
        with self._db.writing() as cursor:
            rows = cursor.execute(
                f"UPDATE memories SET long_term = true WHERE id IN ({', '.join('?' * len(memory_ids))}) "
                f"AND list_contains(?, namespace) RETURNING {MEMORY_COLUMNS}",
                [*memory_ids, list(namespaces)],
            ).fetchall()
        return [memory_row(r) for r in rows]

    def archive(self, memory_ids: Sequence[str], at: datetime) -> None:
        if memory_ids:
            with self._db.writing() as cursor:
                cursor.execute(
                    f"UPDATE memories SET archived_at = ? WHERE id IN ({', '.join('?' * len(memory_ids))}) "
                    "AND archived_at IS NULL AND NOT long_term",
                    [at, *memory_ids],
                )

    def recent_in_session(self, namespace: str, session_id: str, limit: int, before=None) -> list[MemoryRow]:
        """The session's newest memories (created at or before `before`, when given), newest first."""
        rows = self._db.cursor().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND session_id = ? "
            "AND (?::TIMESTAMP IS NULL OR created_at <= ?) ORDER BY created_at DESC LIMIT ?",
            [namespace, session_id, before, before, limit],
        ).fetchall()
        return [memory_row(r) for r in rows]

    def latest_in_sessions(self, namespace: str, session_ids: Iterable[str]) -> dict[str, MemoryRow]:
        """Session id -> its newest memory, for those of the sessions that have one: one scan for all of them, where a
        query per session would scan the namespace once per session (an import of many sessions into a large store)."""
        rows = self._db.cursor().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND list_contains(?, session_id) "
            "QUALIFY row_number() OVER (PARTITION BY session_id ORDER BY created_at DESC) = 1",
            [namespace, list(session_ids)],
        ).fetchall()
        found = [memory_row(r) for r in rows]
        return {row.session_id: row for row in found}

    def latest_current_before(self, namespace: str, before, limit: int, exclude: str = "") -> list[MemoryRow]:
        """The namespace's newest current memories created at or before `before` (but `exclude`), newest first."""
        rows = self._db.cursor().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? AND created_at <= ? AND superseded_by IS NULL "
            "AND archived_at IS NULL AND id <> ? ORDER BY created_at DESC LIMIT ?",
            [namespace, before, exclude, limit],
        ).fetchall()
        return [memory_row(r) for r in rows]

    def page(self, namespace: str, offset: int, limit: int) -> list[MemoryRow]:
        rows = self._db.cursor().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? ORDER BY created_at, id LIMIT ? OFFSET ?",
            [namespace, limit, offset],
        ).fetchall()
        return [memory_row(r) for r in rows]

    def all_in(self, namespace: str) -> list[MemoryRow]:
        """Every memory of a namespace, oldest first: what the in-memory indexes are built from."""
        cursor = self._db.cursor().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE namespace = ? ORDER BY created_at", [namespace])
        # Converted a chunk at a time: a million fetched tuples at once (about 800 bytes each) would be freed among
        # the rows made from them, leaving the heap too fragmented to shrink (1.15 GB of RSS against 0.5 GB).
        rows: list[MemoryRow] = []
        for chunk in chunks_to_the_end(cursor, BULK_READ_CHUNK):
            rows += [memory_row(r) for r in chunk]
        return rows

    def record_use(self, memory_id: str, namespaces: Sequence[str], used_at: datetime, strength_boost: float) -> MemoryRow | None:
        with self._db.writing() as cursor:
            row = first_row(cursor.execute(
                f"""
            UPDATE memories
               SET use_count = use_count + 1,
                   last_used_at = ?,
                   strength = round(least(2.0, strength + ?), 6)
             WHERE id = ? AND list_contains(?, namespace)
            RETURNING {MEMORY_COLUMNS}
            """,
                [used_at, strength_boost, memory_id, list(namespaces)],
            ))
        return memory_row(row) if row else None

    def keyword_candidates(
        self,
        namespaces: Sequence[str],
        terms: Sequence[str],
        tags: Sequence[str],
        since: datetime | None,
        until: datetime | None,
        limit: int,
    ) -> list[MemoryRow]:
        """Memories containing any of the lower-case terms, those containing the most terms first."""
        pattern = "|".join(re.escape(term) for term in terms)
        rows = self._db.cursor().execute(
            f"""
            SELECT {MEMORY_COLUMNS} FROM memories
             WHERE list_contains(?, namespace)
               AND list_has_all(tags, ?::VARCHAR[])
               AND (?::TIMESTAMP IS NULL OR created_at >= ?::TIMESTAMP)
               AND (?::TIMESTAMP IS NULL OR created_at < ?::TIMESTAMP)
               AND regexp_matches(search_text, ?)
             ORDER BY list_sum([contains(search_text, term)::INT FOR term IN ?::VARCHAR[]]) DESC,
                      strength DESC, created_at DESC
             LIMIT ?
            """,
            [list(namespaces), list(tags), since, since, until, until, pattern, list(terms), limit],
        ).fetchall()
        return [memory_row(r) for r in rows]

    def recent(self, namespaces: Sequence[str], limit: int) -> list[MemoryRow]:
        rows = self._db.cursor().execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE list_contains(?, namespace) ORDER BY created_at DESC LIMIT ?",
            [list(namespaces), limit],
        ).fetchall()
        return [memory_row(r) for r in rows]

    def existing_external_ids(self, namespace: str, external_ids: Iterable[str]) -> set[str]:
        rows = self._db.cursor().execute(
            # A hash semi-join: list_contains compared every stored id with the whole list.
            "SELECT external_id FROM memories WHERE namespace = ? AND external_id IN (SELECT unnest(?::VARCHAR[]))",
            [namespace, list(external_ids)],
        ).fetchall()
        return {r[0] for r in rows}

    def count(self) -> int:
        return int(first_row(self._db.cursor().execute("SELECT count(*) FROM memories"))[0])
