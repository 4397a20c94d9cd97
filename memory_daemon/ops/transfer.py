"""Export, restore and back up the store: the dump's lines, their checks, and the caches a restore refreshes."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from memory_daemon import __version__
from memory_daemon.core.dump_format import DUMP_FORMAT, END_KIND, FORMAT_VERSION, HEADER_KIND, ROW_KINDS
from memory_daemon.core.errors import CortexdError, InvalidArgument
from memory_daemon.memory.service import checked_namespace
from memory_daemon.store import SCHEMA_VERSION
from memory_daemon.store.dump import DUMPED_TABLES, Column, DumpRepository
from memory_daemon.core.timefmt import parse_iso

# Each kind of row and its table, in dump order: what a row refers to comes before it where it can.
# memory_version: an edited memory's earlier text; tombstone: a forgotten memory's id, when and why (no text);
# purge: a purged fact's or episode's id, when and why (no text).
KINDS: dict[str, str] = {"memory": "memories", "memory_version": "memory_history", "tombstone": "memory_tombstones",
                         "entity": "entities", "fact": "facts", "episode": "episodes", "decision": "decisions",
                         "relation": "relations", "purge": "purged_records"}
assert tuple(KINDS) == ROW_KINDS and set(KINDS.values()) == set(DUMPED_TABLES)
HEADER_KEYS = frozenset({"kind", "format", "format_version", "cortexd_version", "schema_version", "namespace"})
EXPORT_PAGE_ROWS = 500
CHUNK_BYTES = 1 << 20  # lines per streamed message, well under the 8 MiB gRPC message limit
MAX_REPORTED_PROBLEMS = 10
RESTORE_BATCH_ROWS = 1000  # decoded embeddings become Python lists only this many rows at a time
_VECTOR_TYPE = re.compile(r"FLOAT\[(\d+)\]")
_TIME_EXAMPLE = "2026-03-01T12:00:00.000000Z"


class _Refused(Exception):
    """One line of a dump is wrong; fatal when nothing after it can be read (not a dump, a newer format)."""

    def __init__(self, message: str, fatal: bool = False) -> None:
        super().__init__(message)
        self.fatal = fatal


def dump_line(record: dict) -> str:
    """One line of a dump: sorted keys, no spaces, UTF-8 text as is. The same rows always give the same bytes."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dump_time(value: datetime) -> str:
    return value.isoformat(timespec="microseconds") + "Z"


# -- values: one encoder and one decoder per SQL type --------------------------------------------------------------

def _encoder(column: Column) -> Callable[[object], object]:
    sql_type = column.sql_type
    if sql_type in ("VARCHAR", "BIGINT", "INTEGER", "DOUBLE", "BOOLEAN"):
        encode = _same
    elif sql_type == "VARCHAR[]":
        encode = list
    elif sql_type == "TIMESTAMP":
        encode = dump_time
    elif sql_type == "JSON":
        encode = json.loads
    elif _VECTOR_TYPE.fullmatch(sql_type):
        encode = _vector_text
    else:
        raise CortexdError(f"column {column.name} has type {sql_type}, which the dump format cannot encode yet")
    return lambda value: None if value is None else encode(value)


def _same(value):
    return value


def _vector_text(vector) -> str:
    """An embedding as base64 of its little-endian float32 bytes: exact, and a restore need not recompute it."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def _decoder(column: Column) -> Callable[[object], object]:
    """A function from the dumped JSON value to the value stored; a wrong value raises _Refused naming the column."""
    sql_type = column.sql_type
    vector = _VECTOR_TYPE.fullmatch(sql_type)

    def decode(value):
        if value is None:
            if not column.nullable:
                raise _Refused(f"column {column.name!r} must not be null")
            return None
        if sql_type == "VARCHAR" and isinstance(value, str):
            return value
        if sql_type in ("BIGINT", "INTEGER") and isinstance(value, int) and not isinstance(value, bool):
            return value
        if sql_type == "DOUBLE" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if sql_type == "BOOLEAN" and isinstance(value, bool):
            return value
        if sql_type == "VARCHAR[]" and isinstance(value, list) and all(isinstance(v, str) for v in value):
            return value
        if sql_type == "TIMESTAMP" and isinstance(value, str):
            return _stored_time(column.name, value)
        if sql_type == "JSON":
            try:
                return json.dumps(value, sort_keys=True)  # as the store writes it
            except RecursionError:
                raise _Refused(f"column {column.name!r} is nested too deeply to store") from None
        if vector and isinstance(value, str):
            return _stored_vector(column.name, value, int(vector.group(1)))
        raise _Refused(f"column {column.name!r}: expected {_expected(sql_type)}, got {json.dumps(value)[:60]}")

    return decode


def _expected(sql_type: str) -> str:
    return {"VARCHAR": "a string", "BIGINT": "an integer", "INTEGER": "an integer", "DOUBLE": "a number",
            "BOOLEAN": "true or false", "VARCHAR[]": "a list of strings",
            "TIMESTAMP": f"a UTC time like {_TIME_EXAMPLE}"}.get(sql_type, "base64 of little-endian float32 values")


def _stored_time(name: str, text: str) -> datetime:
    """Naive UTC, by the same rule as every other time the daemon accepts (timefmt.parse_iso)."""
    try:
        parsed = parse_iso(text, name) if text.strip() == text else None
    except InvalidArgument:
        parsed = None
    if parsed is None:
        raise _Refused(f"column {name!r}: expected a UTC time like {_TIME_EXAMPLE}, got {text[:40]!r}")
    return parsed


def _stored_vector(name: str, text: str, dimensions: int) -> np.ndarray:
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise _Refused(f"column {name!r}: not base64") from None
    if len(raw) != 4 * dimensions:
        raise _Refused(f"column {name!r}: {len(raw)} bytes, expected {4 * dimensions} ({dimensions} float32 values)")
    return np.frombuffer(raw, dtype="<f4")


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


# -- restore: check every line, then store everything at once ------------------------------------------------------

@dataclass
class _KindRows:
    """The checked rows of one kind, grouped by the columns they give (older dumps may lack newer columns)."""

    columns: dict[str, Column]
    decoders: dict[str, Callable[[object], object]]
    required: frozenset[str]
    groups: dict[tuple[str, ...], list[list]] = field(default_factory=dict)
    line_of_id: dict[str, int] = field(default_factory=dict)
    seen: int = 0


@dataclass(frozen=True)
class RestoreOutcome:
    restored: dict[str, int]
    skipped: dict[str, int]


class DumpReader:
    """Reads a dump as it arrives, line by line, checking each against the store's real columns; it keeps the
    decoded rows and the problems found (each naming its line), and touches nothing in the store."""

    def __init__(self, columns_of: Callable[[str], tuple[Column, ...]]) -> None:
        self._kinds: dict[str, _KindRows] = {}
        for kind, table in KINDS.items():
            columns = {c.name: c for c in columns_of(table)}
            self._kinds[kind] = _KindRows(columns, {n: _decoder(c) for n, c in columns.items()},
                                          frozenset(n for n, c in columns.items() if not c.nullable))
        self._line_number = 0
        self._header: dict | None = None
        self._end: dict[str, int] | None = None
        self._end_line = 0
        self._problems: list[str] = []
        self._problem_count = 0
        self._stopped = False

    def feed(self, lines: Iterable[str]) -> None:
        for text in lines:
            self._line_number += 1
            if self._stopped or not text.strip():
                continue
            try:
                self._read(text)
            except _Refused as refused:
                self._problem(f"line {self._line_number}: {refused}")
                self._stopped = refused.fatal

    def checked_rows(self) -> dict[str, dict[tuple[str, ...], list[list]]]:
        """Every row by kind and column set, once the whole dump has been fed; raises InvalidArgument naming what
        is wrong (at most MAX_REPORTED_PROBLEMS lines of it) when anything is."""
        if self._header is None and not self._problems:
            self._problem("the input is empty: not a cortexd dump")
        elif self._end is None and not self._stopped:
            self._problem(f"line {self._line_number}: the dump stops before its end line: it is truncated")
        elif self._end is not None:
            for kind, rows in self._kinds.items():
                if self._end.get(kind, 0) != rows.seen:
                    self._problem(f"line {self._end_line}: the end line counts {self._end.get(kind, 0)} {kind} rows, "
                                  f"the dump holds {rows.seen}")
        if self._problems:
            more = self._problem_count - len(self._problems)
            raise InvalidArgument("dump refused, nothing was stored: " + "; ".join(self._problems)
                                  + (f"; and {more} more problems" if more else ""))
        return {kind: rows.groups for kind, rows in self._kinds.items()}

    def _problem(self, text: str) -> None:
        self._problem_count += 1
        if len(self._problems) < MAX_REPORTED_PROBLEMS:
            self._problems.append(text)

    def _read(self, text: str) -> None:
        try:
            record = json.loads(text, parse_constant=_no_constant)
        except RecursionError:
            raise _Refused("nested too deeply to read", fatal=self._header is None) from None
        except ValueError as error:
            raise _Refused(f"not valid JSON: {error}", fatal=self._header is None) from None
        if not isinstance(record, dict):
            raise _Refused("expected a JSON object", fatal=self._header is None)
        kind = record.get("kind")
        if self._header is None:
            self._read_header(record)
        elif self._end is not None:
            raise _Refused("a line after the end line")
        elif kind == END_KIND:
            self._read_end(record)
        elif kind == HEADER_KIND:
            raise _Refused("a second header line")
        else:
            self._read_row(kind, record)

    def _read_header(self, record: dict) -> None:
        if record.get("kind") != HEADER_KIND or record.get("format") != DUMP_FORMAT:
            raise _Refused(f'not a cortexd dump: its first line must be the header {{"format": "{DUMP_FORMAT}", '
                           f'"kind": "{HEADER_KIND}", ...}} that `cortexd export` writes', fatal=True)
        unknown = sorted(set(record) - HEADER_KEYS)
        if unknown:
            raise _Refused(f"unknown header key {unknown[0]!r}", fatal=True)
        for key, supported, what in (("format_version", FORMAT_VERSION, "dump format version"),
                                     ("schema_version", SCHEMA_VERSION, "store schema version")):
            value = record.get(key)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise _Refused(f"header key {key!r} must be a positive integer", fatal=True)
            if value > supported:
                raise _Refused(f"the dump has {what} {value}, newer than this cortexd (version {__version__}) "
                               f"reads ({supported}); upgrade cortexd to restore it", fatal=True)
        self._header = record

    def _read_end(self, record: dict) -> None:
        rows = record.get("rows")
        unknown = sorted(set(record) - {"kind", "rows"})
        if unknown:
            raise _Refused(f"unknown key {unknown[0]!r} in the end line")
        if not isinstance(rows, dict) or any(k not in KINDS or not isinstance(v, int) for k, v in rows.items()):
            raise _Refused(f"the end line's 'rows' must map kinds ({', '.join(KINDS)}) to counts")
        self._end, self._end_line = rows, self._line_number

    def _read_row(self, kind, record: dict) -> None:
        if kind not in KINDS:
            raise _Refused(f"unknown kind {str(kind)[:40]!r}; expected one of: {', '.join(KINDS)}")
        rows = self._kinds[kind]
        rows.seen += 1
        unknown = sorted(set(record) - {"kind", "row"})
        if unknown:
            raise _Refused(f"unknown key {unknown[0]!r}; a {kind} line holds only 'kind' and 'row'")
        row = record.get("row")
        if not isinstance(row, dict):
            raise _Refused(f"{kind}: 'row' must be a JSON object")
        unknown = sorted(set(row) - set(rows.columns))
        if unknown:
            raise _Refused(f"{kind} has no column {unknown[0][:60]!r}; its columns: {', '.join(rows.columns)}")
        missing = sorted(rows.required - set(row))
        if missing:
            raise _Refused(f"{kind} lacks the required column {missing[0]!r}")
        names = tuple(sorted(row))
        values = [rows.decoders[name](row[name]) for name in names]
        try:
            checked_namespace(row["namespace"])
        except InvalidArgument as error:
            raise _Refused(f"{kind}: {error}") from None
        row_id = row["id"]
        if not row_id.strip():
            raise _Refused(f"{kind}: 'id' must not be empty")
        if row_id in rows.line_of_id:
            raise _Refused(f"{kind} id {row_id[:80]!r} already appeared on line {rows.line_of_id[row_id]}")
        rows.line_of_id[row_id] = self._line_number
        rows.groups.setdefault(names, []).append(values)


# -- the service ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class BackupOutcome:
    path: Path
    size_bytes: int
    rows: dict[str, int]


class StoreTransfer:
    """Dumps the store to lines, restores lines into it and refreshes the daemon's in-RAM indexes, and backs it up."""

    def __init__(self, repository: DumpRepository, memories=None, graph=None) -> None:
        self._repository = repository
        self._memories = memories  # MemoryService: its search indexes reload restored namespaces
        self._graph = graph  # GraphService: its entity and edge caches too

    # -- export --------------------------------------------------------------------------------------------------

    def export(self, namespace: str | None) -> Iterator[list[str]]:
        """The dump of one namespace (every namespace when None) in chunks of lines of about CHUNK_BYTES.

        Lazy: nothing is read before the first chunk is asked for; close the iterator to end its snapshot early."""
        lines = self._lines(namespace)
        try:
            chunk, size = [], 0
            for line in lines:
                chunk.append(line)
                size += len(line)
                if size >= CHUNK_BYTES:
                    yield chunk
                    chunk, size = [], 0
            if chunk:
                yield chunk
        finally:
            lines.close()

    def _lines(self, namespace: str | None) -> Iterator[str]:
        with self._repository.snapshot() as cursor:
            yield dump_line({"kind": HEADER_KIND, "format": DUMP_FORMAT, "format_version": FORMAT_VERSION,
                             "cortexd_version": __version__, "schema_version": SCHEMA_VERSION, "namespace": namespace})
            counts = {}
            for kind, table in KINDS.items():
                columns = self._repository.columns(table, cursor)
                encoders = [_encoder(c) for c in columns]
                id_at = [c.name for c in columns].index("id")
                after, counts[kind] = "", 0
                while rows := self._repository.page(cursor, table, columns, namespace, after, EXPORT_PAGE_ROWS):
                    for values in rows:
                        yield dump_line({"kind": kind, "row": {c.name: encode(v) for c, encode, v
                                                               in zip(columns, encoders, values, strict=True)}})
                    counts[kind] += len(rows)
                    after = rows[-1][id_at]
            yield dump_line({"kind": END_KIND, "rows": counts})

    # -- restore -------------------------------------------------------------------------------------------------

    def reader(self) -> DumpReader:
        return DumpReader(self._repository.columns)

    def restore(self, reader: DumpReader) -> RestoreOutcome:
        """Store every row of a checked dump whose id the store does not hold yet, in one transaction; then make
        the in-RAM indexes see them."""
        checked = reader.checked_rows()
        restored = {kind: 0 for kind in KINDS}
        skipped = {kind: 0 for kind in KINDS}
        namespaces: dict[str, set[str]] = {kind: set() for kind in KINDS}
        with self._repository.database.transaction() as cursor:
            for kind, table in KINDS.items():
                for names, rows in checked[kind].items():
                    id_at, namespace_at = names.index("id"), names.index("namespace")
                    existing = self._repository.existing_ids(cursor, table, [r[id_at] for r in rows])
                    fresh = [r for r in rows if r[id_at] not in existing]
                    for start in range(0, len(fresh), RESTORE_BATCH_ROWS):
                        batch = fresh[start: start + RESTORE_BATCH_ROWS]
                        self._repository.insert(cursor, table, names, [[_stored(v) for v in r] for r in batch])
                    restored[kind] += len(fresh)
                    skipped[kind] += len(rows) - len(fresh)
                    namespaces[kind].update(r[namespace_at] for r in fresh)
        if self._memories is not None:
            self._memories.forget_indexes(namespaces["memory"])
        if self._graph is not None and (namespaces["entity"] or namespaces["fact"]):
            self._graph.forget_caches(namespaces["entity"] | namespaces["fact"])
        return RestoreOutcome(restored, skipped)

    # -- backup --------------------------------------------------------------------------------------------------

    def backup(self, dest: str) -> BackupOutcome:
        """A consistent copy of the store in a new file: written beside `dest` in a private directory, made
        user-only, then linked into place, so `dest` never exists half-written or readable by others."""
        path = _new_backup_path(dest)
        try:
            work = Path(tempfile.mkdtemp(prefix=".cortexd-backup-", dir=path.parent))
        except OSError as error:
            raise InvalidArgument(f"dest {path}: cannot write in {path.parent}: {error.strerror or error}") from None
        try:
            staged = work / path.name
            rows = self._repository.backup(staged)
            os.chmod(staged, 0o600)
            try:
                os.link(staged, path)  # fails rather than replace a file created meanwhile
            except FileExistsError:
                raise InvalidArgument(f"dest {path}: a file appeared there during the backup; nothing was replaced") from None
            except OSError:  # a file system without hard links
                if os.path.lexists(path):
                    raise InvalidArgument(f"dest {path}: a file appeared there during the backup; nothing was replaced") from None
                os.replace(staged, path)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return BackupOutcome(path, path.stat().st_size, rows)


def _stored(value):
    return value.tolist() if isinstance(value, np.ndarray) else value


def _new_backup_path(dest: str) -> Path:
    text = dest.strip()
    if not text:
        raise InvalidArgument("dest must not be empty: give the path of the backup file to create")
    if "\x00" in text:
        raise InvalidArgument("dest must not contain a NUL character")
    path = Path(text)
    if not path.is_absolute():
        raise InvalidArgument(f"dest {text[:200]!r}: give an absolute path (the daemon's working directory is not yours)")
    if path.suffix != ".duckdb":
        raise InvalidArgument(f"dest {text[:200]!r}: name the backup file *.duckdb")
    if os.path.lexists(path):
        raise InvalidArgument(f"dest {text[:200]}: already exists; a backup never replaces a file")
    if not path.parent.is_dir():
        raise InvalidArgument(f"dest {text[:200]}: the directory {str(path.parent)[:200]} does not exist")
    return path
