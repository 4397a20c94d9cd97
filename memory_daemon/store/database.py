"""Opens the DuckDB file, applies migrations, hands each worker thread its own cursor, and folds the WAL in."""

from __future__ import annotations

import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from memory_daemon.core.deadlines import current_deadline
from memory_daemon.core.errors import FailedPrecondition
from memory_daemon.store.migrations import MIGRATIONS

SCHEMA_VERSION = MIGRATIONS[-1][0]
# DuckDB's own checkpoint on commit is off: one that fails midway (the data dir turned read-only) invalidates the open
# database, and every later call fails. WalCheckpointer checks the dir first and checkpoints between writes instead.
DUCKDB_AUTOMATIC_CHECKPOINT_OFF = "1TB"
# DuckDB keeps what a large read allocated (loading 100,000 embeddings for the vector index left about 250 MB in its
# allocator after every result was freed) unless its allocator's background threads hand idle pages back to the OS.
CONNECTION_CONFIG = {"wal_autocheckpoint": DUCKDB_AUTOMATIC_CHECKPOINT_OFF, "allocator_background_threads": True}


class StoreFault(Exception):
    """The store cannot be opened, or its WAL folded in, here; the message says why and what to do."""


class StoreLocked(StoreFault):
    """Another process holds the DuckDB file open."""


def wal_path_of(database_path: Path) -> Path:
    """Where DuckDB keeps the write-ahead log of the file at `database_path`."""
    return database_path.with_name(database_path.name + ".wal")


def unwritable_reason(directory: Path) -> str | None:
    """Why no file can be created in `directory`, or None when one can. DuckDB creates its WAL there at the first
    write and removes it at each checkpoint, so a store in a read-only dir opens fine and fails later."""
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".cortexd-write-check-"):
            pass
    except OSError as error:
        return error.strerror or str(error)
    return None


def _open_fault(path: Path, error: duckdb.Error) -> StoreFault:
    message = str(error).removeprefix("IO Error: ")
    holder = re.search(r"Conflicting lock is held in (.+?) \(PID (\d+)\)", message)
    if holder is not None:
        return StoreLocked(f"another process (pid {holder.group(2)}, {holder.group(1)}) holds the store {path}; "
                           f"a DuckDB file opens in one process at a time: stop it first (kill {holder.group(2)})")
    return StoreFault(f"cannot open the store {path}: {message}")


def in_list(values: Sequence) -> str:
    """Placeholders for an IN list, "(?, ?)" ("(NULL)", which matches nothing, when empty): DuckDB answers
    `id IN (?, ?)` from the index, `list_contains` by scanning."""
    return "(" + ", ".join("?" * len(values)) + ")" if values else "(NULL)"


def first_row(result: duckdb.DuckDBPyConnection) -> tuple | None:
    """The first row of a query, with the result read to its end. fetchone() leaves the result streaming, and the
    cursor's transaction open with it until that cursor runs its next statement; DuckDB cannot clean up the commits
    made after an open transaction began, so CHECKPOINT fails ("other write transactions active") until then."""
    rows = result.fetchall()
    return rows[0] if rows else None


def chunks_to_the_end(result: duckdb.DuckDBPyConnection, size: int) -> Iterator[list[tuple]]:
    """A query's rows, `size` at a time, with the result always read to its end (see first_row): an exception in
    the caller's loop drains the rest instead of leaving the result streaming."""
    try:
        while chunk := result.fetchmany(size):  # the one streaming read in the store, and it reads to the end
            yield chunk
    finally:
        result.fetchall()


class Database:
    """One DuckDB file owned by this process; thread-safe through per-thread cursors."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._connection = duckdb.connect(str(path), config=CONNECTION_CONFIG)
        except duckdb.IOException as error:
            raise _open_fault(path, error) from None
        self._checkpoint_cursor = self._connection.cursor()  # used under the write lock only
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._cursors_lock = threading.Lock()
        # DuckDB aborts one of two transactions that update the same row at once ("Conflict on tuple
        # deletion"); writes are short, so one writer at a time costs little and never conflicts.
        self._write_lock = threading.Lock()
        self._writes = 0
        self._generation = 0  # moves when rewrite() swaps the file in: every thread's cursor is then reopened
        self._migrate()

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's cursor; DuckDB connections must not be shared between threads."""
        cursor = getattr(self._local, "cursor", None)
        if cursor is None or getattr(self._local, "generation", 0) != self._generation:
            with self._cursors_lock:
                cursor = self._connection.cursor()
                self._cursors.append(cursor)
            self._local.cursor, self._local.generation = cursor, self._generation
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
        row = first_row(self.cursor().execute("SELECT max(version) FROM schema_version"))
        return int(row[0] or 0)

    @property
    def wal_path(self) -> Path:
        return wal_path_of(self.path)

    def wal_bytes(self) -> int:
        """The write-ahead log's size: committed writes not yet folded into the file (0 when there is none)."""
        try:
            return self.wal_path.stat().st_size
        except FileNotFoundError:
            return 0

    def checkpoint(self) -> None:
        """Fold the WAL into the file. Between writes: holding the write lock, no write transaction of ours is open,
        and a plain CHECKPOINT (unlike FORCE) aborts nothing. It still fails ("other write transactions active") while
        a read that began before the last commit runs; the caller tries again."""
        with self._write_lock:
            self._checkpoint_cursor.execute("CHECKPOINT")

    def rewrite(self) -> int:
        """Copy every table into a fresh file and swap it in for this one; returns the file's new size in bytes.

        DELETE and CHECKPOINT free a row's blocks, but the freed blocks keep its bytes until DuckDB reuses them; a
        copy holds live rows only. Run under the write lock with every cursor closed, so nothing writes meanwhile;
        a read that was running on another thread fails and is answered with an error."""
        import os
        import stat

        fresh = self.path.with_name(self.path.name + ".rewrite")
        with self._write_lock, self._cursors_lock:
            for cursor in self._cursors:
                cursor.close()
            self._cursors.clear()
            self._generation += 1
            self._checkpoint_cursor.execute("CHECKPOINT")
            for leftover in (fresh, wal_path_of(fresh)):
                leftover.unlink(missing_ok=True)
            (catalog,) = first_row(self._checkpoint_cursor.execute("SELECT current_database()"))
            quoted_path = str(fresh).replace("'", "''")
            try:
                self._checkpoint_cursor.execute(f"ATTACH '{quoted_path}' AS cortexd_rewrite")
                try:
                    self._checkpoint_cursor.execute(f'COPY FROM DATABASE "{catalog}" TO cortexd_rewrite')
                finally:
                    self._checkpoint_cursor.execute("DETACH cortexd_rewrite")
                os.chmod(fresh, stat.S_IMODE(self.path.stat().st_mode))
            except BaseException:
                for leftover in (fresh, wal_path_of(fresh)):
                    leftover.unlink(missing_ok=True)
                raise
            self._checkpoint_cursor.close()
            self._connection.close()
            os.replace(fresh, self.path)
            self._connection = duckdb.connect(str(self.path), config=CONNECTION_CONFIG)
            self._checkpoint_cursor = self._connection.cursor()
            self._writes += 1
        return self.path.stat().st_size

    def close(self) -> None:
        """Close every cursor (ending whatever transaction a result still held), fold the WAL in and close the file.
        Raises StoreFault, once closed, when the WAL had to stay: it keeps every committed write for the next start."""
        with self._cursors_lock:
            for cursor in self._cursors:
                cursor.close()
            self._cursors.clear()
        kept_because = None
        if self.wal_bytes() > 0:
            if (reason := unwritable_reason(self.path.parent)) is not None:
                kept_because = f"the data dir {self.path.parent} is not writable ({reason})"
            else:
                try:
                    self.checkpoint()
                except duckdb.Error as error:
                    kept_because = f"CHECKPOINT failed ({error})"
        wal_bytes = self.wal_bytes()
        self._checkpoint_cursor.close()
        self._connection.close()
        if kept_because is not None:
            raise StoreFault(f"{kept_because}, so the write-ahead log {self.wal_path} ({wal_bytes} bytes) was not "
                             "folded into the store; it keeps every acknowledged write and is replayed at the next start")

    def _migrate(self) -> None:
        con = self._connection
        con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)")
        current = int(first_row(con.execute("SELECT coalesce(max(version), 0) FROM schema_version"))[0])
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
