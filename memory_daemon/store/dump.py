"""SQL for dumps and backups: the dumped tables' real columns, snapshot reads by id, bulk restore inserts, file copies."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb

from memory_daemon.core.errors import FailedPrecondition
from memory_daemon.store.database import Database, first_row

# Every table holding what users stored, in dump order. schema_version and idempotency_keys are the store's own
# bookkeeping: a restore runs its own migrations, and remembered replies belong to one daemon's clients.
DUMPED_TABLES = ("memories", "memory_history", "memory_tombstones", "entities", "facts", "episodes", "decisions",
                 "relations", "purged_records")
INSERT_CHUNK = 200  # rows per multi-row INSERT: DuckDB pays per statement


@dataclass(frozen=True)
class Column:
    name: str
    sql_type: str  # as DuckDB names it: VARCHAR, VARCHAR[], FLOAT[384], TIMESTAMP, JSON, ...
    nullable: bool


def _quoted(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class DumpRepository:
    """Reads and writes the dumped tables by their real columns; table names come from DUMPED_TABLES only, and
    column names are checked against the table before they reach SQL."""

    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def database(self) -> Database:
        return self._db

    def columns(self, table: str, cursor=None) -> tuple[Column, ...]:
        """The table's columns in the store, in table order: the one definition of what a dump holds."""
        rows = (cursor or self._db.cursor()).execute(
            "SELECT column_name, data_type, is_nullable = 'YES' FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_catalog = current_database() AND table_name = ? "
            "ORDER BY ordinal_position",
            [_known(table)],
        ).fetchall()
        return tuple(Column(name, sql_type, bool(nullable)) for name, sql_type, nullable in rows)

    @contextmanager
    def snapshot(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A cursor of its own inside one read transaction: every page read through it sees the same store."""
        cursor = self._db.new_cursor()
        try:
            cursor.begin()
            yield cursor
        finally:
            try:
                cursor.rollback()
            finally:
                cursor.close()

    def page(self, cursor, table: str, columns: Sequence[Column], namespace: str | None, after_id: str,
             limit: int) -> list[tuple]:
        """Up to `limit` rows with ids after `after_id`, by id; of one namespace, or of all when None."""
        names = ", ".join(_quoted(c.name) for c in columns)
        return cursor.execute(
            f"SELECT {names} FROM {_known(table)} WHERE (?::VARCHAR IS NULL OR namespace = ?) AND id > ? "
            "ORDER BY id LIMIT ?",
            [namespace, namespace, after_id, limit],
        ).fetchall()

    def existing_ids(self, cursor, table: str, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), 1000):
            chunk = ids[start: start + 1000]
            found.update(r[0] for r in cursor.execute(
                f"SELECT id FROM {_known(table)} WHERE id IN ({', '.join('?' * len(chunk))})", list(chunk)).fetchall())
        return found

    def insert(self, cursor, table: str, column_names: Sequence[str], rows: Sequence[Sequence]) -> None:
        """Rows given as values in column_names order; columns left out take their default (NULL)."""
        real = {c.name for c in self.columns(table, cursor)}
        unknown = [name for name in column_names if name not in real]
        if unknown:
            raise ValueError(f"{table} has no column {', '.join(unknown)}")
        head = f"INSERT INTO {_known(table)} ({', '.join(_quoted(n) for n in column_names)}) VALUES "
        row = "(" + ", ".join("?" * len(column_names)) + ")"
        for start in range(0, len(rows), INSERT_CHUNK):
            chunk = rows[start: start + INSERT_CHUNK]
            cursor.execute(head + ", ".join([row] * len(chunk)), [value for values in chunk for value in values])

    def backup(self, path: Path) -> dict[str, int]:
        """Copy the whole store into a new DuckDB file at `path` (which must not exist) and count its rows.

        COPY FROM DATABASE is one statement, so it reads one snapshot: every write committed before it started."""
        alias = "backup_" + uuid.uuid4().hex[:12]
        cursor = self._db.cursor()
        source = first_row(cursor.execute("SELECT current_database()"))[0]
        try:
            cursor.execute(f"ATTACH ? AS {alias}", [str(path)])
        except duckdb.Error as error:
            raise FailedPrecondition(f"dest {path}: cannot create the backup file: {error}") from None
        try:
            cursor.execute(f"COPY FROM DATABASE {_quoted(source)} TO {alias}")
            tables = [r[0] for r in cursor.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? AND table_schema = 'main' "
                "ORDER BY table_name", [alias]).fetchall()]
            return {table: int(first_row(cursor.execute(f"SELECT count(*) FROM {alias}.main.{_quoted(table)}"))[0])
                    for table in tables}
        except duckdb.Error as error:
            raise FailedPrecondition(f"backup to {path} failed: {error}") from None
        finally:
            cursor.execute(f"DETACH {alias}")


def _known(table: str) -> str:
    if table not in DUMPED_TABLES:
        raise ValueError(f"{table!r} is not a dumped table")
    return table
