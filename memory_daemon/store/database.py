"""Opens the DuckDB file, applies migrations and hands each worker thread its own cursor."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from memory_daemon.core.deadlines import current_deadline
from memory_daemon.core.errors import FailedPrecondition
from memory_daemon.store.migrations import MIGRATIONS

SCHEMA_VERSION = MIGRATIONS[-1][0]


class Database:
    """One DuckDB file owned by this process; thread-safe through per-thread cursors."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection = duckdb.connect(str(path))
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        # DuckDB aborts one of two transactions that update the same row at once ("Conflict on tuple
        # deletion"); writes are short, so one writer at a time costs little and never conflicts.
        self._write_lock = threading.Lock()
        self._writes = 0
        self._migrate()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor; DuckDB connections must not be shared between threads."""
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            cursor = self._connection.cursor()
            self._local.cursor = cursor
            with self._cursors_lock:
                self._cursors.append(cursor)
        return cursor

    def new_cursor(self) -> duckdb.DuckDBPyConnection:
        """A cursor of its own, not this thread's, for work that spans several calls (a snapshot); the caller closes it."""
        return self._connection.cursor()

    @property
    def write_count(self) -> int:
        """Grows after every write through writing() or transaction(): a cache that saw the same count saw every
        committed write (the count moves after the commit)."""
        return self._writes

    @contextmanager
    def writing(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """This thread's cursor, holding the single-writer lock for one autocommit statement.

        The deadline of the call being served (core.deadlines) is checked once the lock is held, the moment before
        the statement runs: a call that can no longer be answered in time stores nothing."""
        with self._write_lock:
            deadline = current_deadline()
            if deadline is not None:
                deadline.before_write()
            try:
                yield self.cursor()
            finally:
                self._writes += 1
            if deadline is not None:
                deadline.stored()

    @contextmanager
    def transaction(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """This thread's cursor in a transaction under the single-writer lock; the deadline of the call being served
        is checked the moment before the commit, and a late call's transaction is rolled back instead."""
        with self._write_lock:
            deadline = current_deadline()
            cursor = self.cursor()
            cursor.begin()
            self._local.in_transaction = True
            try:
                yield cursor
                if deadline is not None:
                    deadline.before_write()
            except BaseException:
                cursor.rollback()
                raise
            else:
                cursor.commit()
            finally:
                self._local.in_transaction = False
                self._writes += 1
            if deadline is not None:
                deadline.stored()

    def in_transaction(self) -> bool:
        """Whether this thread is inside transaction(): what it reads there may still be rolled back."""
        return getattr(self._local, "in_transaction", False)

    def schema_version(self) -> int:
        row = self.cursor().execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)

    def checkpoint(self) -> None:
        self.cursor().execute("CHECKPOINT")

    def close(self) -> None:
        with self._cursors_lock:
            for cursor in self._cursors:
                cursor.close()
            self._cursors.clear()
        self._connection.close()

    def _migrate(self) -> None:
        con = self._connection
        con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)")
        current = int(con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchone()[0])
        if current > SCHEMA_VERSION:
            raise FailedPrecondition(
                f"{self.path} has schema version {current}, newer than this cortexd supports ({SCHEMA_VERSION}); "
                "upgrade cortexd to open it"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            con.begin()
            try:
                for statement in statements:
                    con.execute(statement)
                con.execute(
                    "INSERT INTO schema_version VALUES (?, ?)",
                    [version, datetime.now(timezone.utc).replace(tzinfo=None)],
                )
            except BaseException:
                con.rollback()
                raise
            con.commit()
