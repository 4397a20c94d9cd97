"""SQL for remembered write replies: look one up by (namespace, key), remember one, prune old ones."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory_daemon.store.database import Database, first_row


@dataclass(frozen=True)
class RememberedReply:
    method: str
    request_sha256: str
    reply: bytes
    created_at: datetime


class IdempotencyRepository:
    """The idempotency_keys table; every query is parametrised."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def find(self, namespace: str, key: str, not_before: datetime) -> RememberedReply | None:
        row = first_row(self._db.cursor().execute(
            "SELECT method, request_sha256, reply, created_at FROM idempotency_keys "
            "WHERE namespace = ? AND key = ? AND created_at >= ?",
            [namespace, key, not_before],
        ))
        return RememberedReply(row[0], row[1], bytes(row[2]), row[3]) if row else None

    def remember(self, namespace: str, key: str, reply: RememberedReply) -> None:
        # OR REPLACE: an expired row for the same key may still be there, waiting for the next prune.
        with self._db.writing() as cursor:
            cursor.execute(
                "INSERT OR REPLACE INTO idempotency_keys (namespace, key, method, request_sha256, reply, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                [namespace, key, reply.method, reply.request_sha256, reply.reply, reply.created_at],
            )

    def prune(self, older_than: datetime, keep_newest: int) -> None:
        """Forget replies remembered before `older_than`, and all but the newest `keep_newest`."""
        with self._db.writing() as cursor:
            cursor.execute("DELETE FROM idempotency_keys WHERE created_at < ?", [older_than])
            cursor.execute(
                "DELETE FROM idempotency_keys WHERE (namespace, key) IN ("
                "SELECT namespace, key FROM idempotency_keys ORDER BY created_at DESC OFFSET ?)",
                [keep_newest],
            )
