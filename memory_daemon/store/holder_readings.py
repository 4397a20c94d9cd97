"""SQL for the kept readings of whose fact each memory states: by which reader, of which text, and what it read."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from memory_daemon.store.database import Database, first_row, in_list


class StoredReading(NamedTuple):
    digest: str  # of the text read
    first_person: bool  # the parse: the user speaks of their own
    named: tuple[str, ...]  # the parse: the holders it names
    other: bool | None  # the holder model: another's own fact (None without the model)


class Unread(NamedTuple):
    """A current memory with no reading of its text by the reader asked about."""

    id: str
    content: str
    created_at: datetime


# Current memories with no reading of their present text by a reader (DuckDB's md5 is content_digest's).
UNREAD = """
    FROM memories m LEFT JOIN holder_readings h ON h.memory_id = m.id AND h.reader = ? AND h.digest = md5(m.content)
    WHERE h.memory_id IS NULL AND m.superseded_by IS NULL AND m.archived_at IS NULL"""


def content_digest(content: str) -> str:
    """What a reading is of: a memory edited since it was read has another digest, so its reading is not used."""
    return hashlib.md5(content.encode("utf-8"), usedforsecurity=False).hexdigest()


class HolderReadingStore:
    """Readings are derived data (dumps leave them out); forgetting a memory deletes its reading in the same
    transaction (store/corrections.py), and a reading of a memory gone meanwhile is not stored."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def read(self, ids: Sequence[str], reader: str) -> dict[str, StoredReading]:
        """memory id -> what `reader` read of it."""
        if not ids:
            return {}
        rows = self._db.cursor().execute(
            "SELECT memory_id, digest, first_person, named, other FROM holder_readings "
            f"WHERE memory_id IN {in_list(ids)} AND reader = ?", [*ids, reader]).fetchall()
        return {memory_id: StoredReading(digest, first_person, tuple(named), other)
                for memory_id, digest, first_person, named, other in rows}

    def keep(self, readings: Mapping[str, StoredReading], reader: str) -> None:
        """Store readings by `reader` over any earlier reading of the same memories; ids no longer in the store
        (forgotten while being read) are left out."""
        if not readings:
            return
        ids = list(readings)
        with self._db.transaction() as cursor:
            present = {memory_id for (memory_id,) in cursor.execute(
                f"SELECT id FROM memories WHERE id IN {in_list(ids)}", ids).fetchall()}
            kept = [[memory_id, reader, r.digest, r.first_person, list(r.named), r.other]
                    for memory_id, r in readings.items() if memory_id in present]
            if kept:
                cursor.executemany(
                    "INSERT OR REPLACE INTO holder_readings (memory_id, reader, digest, first_person, named, other) "
                    "VALUES (?, ?, ?, ?, ?, ?)", kept)

    def count_unread(self, reader: str) -> int:
        """How many current memories `reader` has not read as they now stand."""
        (count,) = first_row(self._db.cursor().execute(f"SELECT count(*) {UNREAD}", [reader]))
        return int(count)

    def unread(self, reader: str, before: tuple[datetime, str] | None, limit: int) -> list[Unread]:
        """Up to `limit` current memories `reader` has not read as they now stand, newest first, from just before
        `before` (the created_at and id of the last one of the previous page)."""
        after_page, parameters = "", [reader]
        if before is not None:
            after_page = " AND (m.created_at < ? OR (m.created_at = ? AND m.id < ?))"
            parameters += [before[0], before[0], before[1]]
        rows = self._db.cursor().execute(
            f"SELECT m.id, m.content, m.created_at {UNREAD}{after_page} ORDER BY m.created_at DESC, m.id DESC LIMIT ?",
            [*parameters, limit]).fetchall()
        return [Unread(*row) for row in rows]

    def drop_other_readers(self, reader: str) -> int:
        """Delete readings made by any other reader than `reader` (a retrained model, another threshold, new rules)."""
        with self._db.transaction() as cursor:
            (count,) = first_row(cursor.execute("SELECT count(*) FROM holder_readings WHERE reader <> ?", [reader]))
            if count:
                cursor.execute("DELETE FROM holder_readings WHERE reader <> ?", [reader])
        return int(count)
