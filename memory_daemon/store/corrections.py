"""SQL for the user's corrections: forget memories with what was derived from them, edit a memory's text, unarchive."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory_daemon.store.database import Database, first_row, in_list
from memory_daemon.store.memories import MEMORY_COLUMNS, MemoryRow, memory_row, stored_vector


@dataclass(frozen=True)
class Forgotten:
    """What one forget removed: the memories (id, text), and the counts of what went with them."""

    memories: tuple[tuple[str, str], ...]
    facts_removed: int = 0
    replies_removed: int = 0
    cleared: tuple[str, ...] = ()  # other memories whose context quoted them, now cleared

    @property
    def contexts_cleared(self) -> int:
        return len(self.cleared)


def _holds_any(blob: bytes, needles: Sequence[bytes]) -> bool:
    return any(needle in blob for needle in needles)


def text_needles(texts: Sequence[str]) -> list[bytes]:
    """The byte forms a text takes in a stored reply: UTF-8 in a protobuf, JSON-escaped in a tool call's result."""
    needles = []
    for text in texts:
        if text:
            needles += [text.encode("utf-8"), json.dumps(text)[1:-1].encode("ascii")]
    return list(dict.fromkeys(needles))


class CorrectionRepository:
    """Deletes, rewrites and unarchives memories in one transaction each; the caller keeps the RAM caches in step."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def forget(self, ids: Sequence[str], namespace: str, reason: str, at: datetime) -> Forgotten:
        """Delete the memories of `namespace` among `ids`, leave a tombstone for each, and delete what holds their
        text: the facts whose source they were (and those facts' embeddings), relations to them, their edit history,
        stored replies that quote them; other memories' context that quotes them is cleared."""
        if not ids:
            return Forgotten(())
        with self._db.transaction() as cursor:
            gone = cursor.execute(
                f"DELETE FROM memories WHERE id IN {in_list(ids)} AND namespace = ? RETURNING id, content",
                [*ids, namespace]).fetchall()
            if not gone:
                return Forgotten(())
            gone_ids = [memory_id for memory_id, _ in gone]
            earlier = [text for (text,) in cursor.execute(
                f"SELECT content FROM memory_history WHERE memory_id IN {in_list(gone_ids)}", gone_ids).fetchall()]
            texts = [text for _, text in gone] + earlier
            cursor.executemany(
                "INSERT OR REPLACE INTO memory_tombstones (id, namespace, forgotten_at, reason) VALUES (?, ?, ?, ?)",
                [[memory_id, namespace, at, reason] for memory_id in gone_ids])
            cursor.execute(f"DELETE FROM memory_history WHERE memory_id IN {in_list(gone_ids)}", gone_ids)
            cursor.execute(f"DELETE FROM holder_readings WHERE memory_id IN {in_list(gone_ids)}", gone_ids)
            facts = self._drop_facts_of(cursor, gone_ids, namespace)
            self._drop_relations_of(cursor, gone_ids)
            self._drop_orphan_entities(cursor, namespace, texts)
            cleared = self._clear_quotes(cursor, namespace, texts)
            replies = self._drop_replies(cursor, namespace, [*gone_ids, *texts])
        return Forgotten(tuple(gone), len(facts), replies, tuple(cleared))

    def forget_facts_of(self, memory_id: str, namespace: str) -> int:
        """Delete the facts a memory was the source of (an edit records them again from the new text)."""
        with self._db.transaction() as cursor:
            return len(self._drop_facts_of(cursor, [memory_id], namespace))

    def scrub(self, namespace: str, texts: Sequence[str]) -> tuple[list[str], int]:
        """(memories whose context was cleared, replies deleted) for texts no longer to be kept anywhere: an edit
        that drops history."""
        with self._db.transaction() as cursor:
            return self._clear_quotes(cursor, namespace, texts), self._drop_replies(cursor, namespace, texts)

    @staticmethod
    def _drop_facts_of(cursor, sources: Sequence[str], namespace: str) -> list[str]:
        """Delete the namespace's facts whose source is one of these memories, with their embeddings; their ids."""
        facts = [fact_id for (fact_id,) in cursor.execute(
            f"DELETE FROM facts WHERE source IN {in_list(sources)} AND namespace = ? RETURNING id",
            [*sources, namespace]).fetchall()]
        if facts:
            cursor.execute(f"DELETE FROM item_embeddings WHERE id IN {in_list(facts)}", facts)
        return facts

    @staticmethod
    def _drop_relations_of(cursor, ids: Sequence[str]) -> None:
        cursor.execute(f"DELETE FROM relations WHERE from_id IN {in_list(ids)} OR to_id IN {in_list(ids)}",
                       [*ids, *ids])

    @staticmethod
    def _drop_orphan_entities(cursor, namespace: str, texts: Sequence[str]) -> None:
        """Entities named in a forgotten text that nothing refers to any more (their facts went with the memory)."""
        lowered = [t.lower() for t in texts]
        orphans = cursor.execute(
            "SELECT id, name FROM entities e WHERE namespace = ? "
            "AND NOT EXISTS (SELECT 1 FROM facts f WHERE f.subject_id = e.id OR f.object_id = e.id) "
            "AND NOT EXISTS (SELECT 1 FROM episodes p WHERE list_contains(p.entity_ids, e.id)) "
            "AND NOT EXISTS (SELECT 1 FROM relations r WHERE r.from_id = e.id OR r.to_id = e.id)",
            [namespace]).fetchall()
        doomed = [entity_id for entity_id, name in orphans if any(name.lower() in text for text in lowered)]
        if doomed:
            cursor.execute(f"DELETE FROM entities WHERE id IN {in_list(doomed)}", doomed)

    @staticmethod
    def _clear_quotes(cursor, namespace: str, texts: Sequence[str]) -> list[str]:
        """Clear the context of the namespace's memories that quote any of the texts; their ids."""
        cleared: list[str] = []
        for text in dict.fromkeys(t for t in texts if t.strip()):
            cleared += [memory_id for (memory_id,) in cursor.execute(
                "UPDATE memories SET context = '' WHERE namespace = ? AND context <> '' AND contains(context, ?) "
                "RETURNING id", [namespace, text]).fetchall()]
        return list(dict.fromkeys(cleared))

    @staticmethod
    def _drop_replies(cursor, namespace: str, texts: Sequence[str]) -> int:
        """Delete the namespace's stored replies (idempotency keys) that hold any of the texts or ids."""
        needles = text_needles(texts)
        if not needles:
            return 0
        keys = [key for key, reply in cursor.execute(
            "SELECT key, reply FROM idempotency_keys WHERE namespace = ?", [namespace]).fetchall()
            if _holds_any(bytes(reply), needles)]
        if keys:
            cursor.execute(f"DELETE FROM idempotency_keys WHERE namespace = ? AND key IN {in_list(keys)}",
                           [namespace, *keys])
        return len(keys)

    def edit(self, old: MemoryRow, new: MemoryRow, embedding, reason: str, at: datetime,
             keep_history: bool) -> int:
        """Store `new`'s text, entities and embedding over `old` (same id); keep `old`'s text as the next version of
        its history, or drop the whole history. Returns how many versions the history holds afterwards."""
        with self._db.transaction() as cursor:
            cursor.execute(
                "UPDATE memories SET content = ?, entities = ?, search_text = ?, embedding = ? "
                "WHERE id = ? AND namespace = ?",
                [new.content, list(new.entities), new.search_text, stored_vector(embedding), old.id, old.namespace])
            if not keep_history:
                cursor.execute("DELETE FROM memory_history WHERE memory_id = ?", [old.id])
                return 0
            (version,) = first_row(cursor.execute(
                "SELECT coalesce(max(version), 0) + 1 FROM memory_history WHERE memory_id = ?", [old.id]))
            cursor.execute(
                "INSERT INTO memory_history (id, namespace, memory_id, version, content, replaced_at, reason) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", [f"{old.id}#{version}", old.namespace, old.id, version, old.content,
                                                 at, reason])
            return int(version)

    def unarchive(self, ids: Sequence[str], namespace: str, at: datetime) -> list[MemoryRow]:
        """Clear `archived_at` and count the memories as used now; the rows as they are afterwards."""
        with self._db.writing() as cursor:
            rows = cursor.execute(
                f"UPDATE memories SET archived_at = NULL, last_used_at = greatest(last_used_at, ?) "
                f"WHERE id IN {in_list(ids)} AND namespace = ? RETURNING {MEMORY_COLUMNS}",
                [at, *ids, namespace]).fetchall()
        return [memory_row(r) for r in rows]

    def purge_records(self, ids: Sequence[str], namespace: str, reason: str, at: datetime) -> list[tuple[str, str]]:
        """Delete the namespace's facts and episodes among `ids` (with their embeddings and relations), record each
        purge; the (id, kind) purged."""
        if not ids:
            return []
        with self._db.transaction() as cursor:
            facts = cursor.execute(
                f"DELETE FROM facts WHERE id IN {in_list(ids)} AND namespace = ? RETURNING id, object_value",
                [*ids, namespace]).fetchall()
            episodes = cursor.execute(
                f"DELETE FROM episodes WHERE id IN {in_list(ids)} AND namespace = ? RETURNING id, title, body",
                [*ids, namespace]).fetchall()
            purged = [(fact_id, "fact") for fact_id, _ in facts] + [(row[0], "episode") for row in episodes]
            texts = [value for _, value in facts] + [text for row in episodes for text in row[1:]]
            gone = [record_id for record_id, _ in purged]
            if gone:
                self._drop_orphan_entities(cursor, namespace, texts)
                self._drop_replies(cursor, namespace, [*gone, *texts])
                cursor.execute(f"DELETE FROM item_embeddings WHERE id IN {in_list(gone)}", gone)
                self._drop_relations_of(cursor, gone)
                cursor.executemany(
                    "INSERT OR REPLACE INTO purged_records (id, namespace, kind, purged_at, reason) "
                    "VALUES (?, ?, ?, ?, ?)", [[record_id, namespace, kind, at, reason] for record_id, kind in purged])
        return purged

    def purges(self, namespaces: Sequence[str]) -> list[tuple[str, str, datetime, str]]:
        """(id, kind, purged_at, reason) of the purges recorded in these namespaces, oldest first."""
        return [tuple(r) for r in self._db.cursor().execute(
            "SELECT id, kind, purged_at, reason FROM purged_records WHERE list_contains(?, namespace) "
            "ORDER BY purged_at, id", [list(namespaces)]).fetchall()]
