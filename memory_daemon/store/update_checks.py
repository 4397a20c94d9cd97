"""SQL for the queue of imported statements awaiting their update check, and for closing each check with what it found."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from memory_daemon.store.database import Database, in_list
from memory_daemon.store.memories import MEMORY_COLUMNS, MemoryRow, memory_row


class UpdateCheckQueue:
    """Reads the queue in the order the memories happened, and closes checks with what they found, atomically."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def pending(self) -> dict[str, set[str]]:
        """Namespace -> the ids of its memories still waiting for their check."""
        found: dict[str, set[str]] = {}
        for memory_id, namespace in self._db.cursor().execute(
                "SELECT memory_id, namespace FROM update_checks").fetchall():
            found.setdefault(namespace, set()).add(memory_id)
        return found

    def next_rows(self, limit: int) -> tuple[list[MemoryRow], list[str]]:
        """The `limit` oldest queued memories (by when they happened, ties by id), and the queued ids whose memory is
        gone (forgotten before its check ran)."""
        cursor = self._db.cursor()
        rows = cursor.execute(
            f"SELECT {', '.join('m.' + c.strip() for c in MEMORY_COLUMNS.split(','))} FROM update_checks q "
            "JOIN memories m ON m.id = q.memory_id ORDER BY m.created_at, m.id LIMIT ?", [limit]).fetchall()
        gone = cursor.execute("SELECT q.memory_id FROM update_checks q ANTI JOIN memories m ON m.id = q.memory_id "
                              "LIMIT ?", [limit]).fetchall()
        return [memory_row(r) for r in rows], [r[0] for r in gone]

    def finish(self, checked: Sequence[str], superseded: Sequence[tuple[str, str]], revised: Sequence[MemoryRow],
               at: datetime) -> None:
        """In one transaction: mark (older, newer) pairs superseded (the first successor wins), store the context and
        meta the check gave revised memories, and take the checked ids off the queue."""
        if not checked:
            return
        first: dict[str, str] = {}
        for old, new in superseded:
            first.setdefault(old, new)
        with self._db.transaction() as cursor:
            if first:
                values = ", ".join(["(?, ?)"] * len(first))
                cursor.execute(
                    f"UPDATE memories SET superseded_by = v.new_id, superseded_at = ? FROM (VALUES {values}) "
                    "AS v(old_id, new_id) WHERE memories.id = v.old_id AND memories.superseded_by IS NULL",
                    [at, *(x for pair in first.items() for x in pair)])
            for row in revised:
                cursor.execute("UPDATE memories SET context = ?, meta = ? WHERE id = ?",
                               [row.context, json.dumps(row.meta, sort_keys=True), row.id])
            ids = list(checked)
            cursor.execute(f"DELETE FROM update_checks WHERE memory_id IN {in_list(ids)}", ids)
