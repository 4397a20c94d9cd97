"""SQL for the decision log: inserts, lookups, listings, tier changes, access counts and outcomes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from datetime import datetime

from memory_daemon.store.database import Database, in_list


@dataclass(frozen=True)
class DecisionRow:
    id: str
    namespace: str
    type: str
    question: str
    options: tuple[str, ...]
    chosen: str
    reasoning: str
    confidence: float
    session_id: str
    summary: str
    key_choice: str
    tier: str  # hot, warm or cold
    created_at: datetime
    last_accessed_at: datetime
    access_count: int
    # None until an outcome is recorded.
    outcome_recorded_at: datetime | None = None
    was_successful: bool | None = None
    impact_score: float | None = None
    learnings: str | None = None

    @property
    def has_outcome(self) -> bool:
        return self.outcome_recorded_at is not None


_COLUMNS = ", ".join(f.name for f in fields(DecisionRow))
_INSERT = f"INSERT INTO decisions ({_COLUMNS}) VALUES ({', '.join('?' * len(fields(DecisionRow)))})"


def _row(values: Sequence) -> DecisionRow:
    row = DecisionRow(*values)
    return DecisionRow(**{**row.__dict__, "options": tuple(row.options), "access_count": int(row.access_count)})


class DecisionRepository:
    """Reads and writes the decisions table; every query is parametrised and scoped to namespaces.

    Reads use this thread's cursor, so inside a `Database.transaction()` they see its uncommitted writes.
    """

    def __init__(self, database: Database) -> None:
        self._db = database

    @property
    def database(self) -> Database:
        return self._db

    # -- reads -------------------------------------------------------------

    def by_id(self, namespaces: Sequence[str], ids: Sequence[str]) -> list[DecisionRow]:
        rows = self._db.cursor().execute(
            f"SELECT {_COLUMNS} FROM decisions WHERE id IN {in_list(ids)} AND list_contains(?, namespace)",
            [*ids, list(namespaces)],
        ).fetchall()
        return [_row(r) for r in rows]

    def newest(self, namespaces: Sequence[str], limit: int, session_id: str = "", decision_type: str = "",
               tier: str = "") -> list[DecisionRow]:
        """Decisions newest first, narrowed by whichever of session, type and tier are given."""
        conditions, parameters = ["list_contains(?, namespace)"], [list(namespaces)]
        for column, value in (("session_id", session_id), ("type", decision_type), ("tier", tier)):
            if value:
                conditions.append(f"{column} = ?")
                parameters.append(value)
        rows = self._db.cursor().execute(
            f"SELECT {_COLUMNS} FROM decisions WHERE {' AND '.join(conditions)} "
            "ORDER BY created_at DESC, id DESC LIMIT ?",
            [*parameters, limit],
        ).fetchall()
        return [_row(r) for r in rows]

    def in_session(self, namespace: str, session_id: str) -> list[DecisionRow]:
        """Every decision of one session, newest first."""
        rows = self._db.cursor().execute(
            f"SELECT {_COLUMNS} FROM decisions WHERE session_id = ? AND namespace = ? "
            "ORDER BY created_at DESC, id DESC",
            [session_id, namespace],
        ).fetchall()
        return [_row(r) for r in rows]

    def idle_since(self, namespaces: Sequence[str], before: datetime) -> list[DecisionRow]:
        """Decisions not yet cold whose last access was before `before`: the only ones idleness can demote."""
        rows = self._db.cursor().execute(
            f"SELECT {_COLUMNS} FROM decisions WHERE list_contains(?, namespace) AND tier <> 'cold' "
            "AND last_accessed_at < ?",
            [list(namespaces), before],
        ).fetchall()
        return [_row(r) for r in rows]

    # -- writes ------------------------------------------------------------

    def insert(self, cursor, row: DecisionRow) -> None:
        values = list(astuple(row))
        values[4] = list(row.options)
        cursor.execute(_INSERT, values)

    def set_tier(self, cursor, ids: Sequence[str], tier: str) -> None:
        if ids:
            cursor.execute(f"UPDATE decisions SET tier = ? WHERE id IN {in_list(ids)}", [tier, *ids])

    def record_access(self, cursor, ids: Sequence[str], at: datetime, tier: str) -> None:
        """One more access for each of these decisions, all landing in the same tier (one statement)."""
        if ids:
            cursor.execute(
                f"UPDATE decisions SET access_count = access_count + 1, last_accessed_at = ?, tier = ? "
                f"WHERE id IN {in_list(ids)}",
                [at, tier, *ids],
            )

    def save_outcome(self, cursor, row: DecisionRow) -> None:
        """Store the row's outcome together with the access and tier change that recording it made."""
        cursor.execute(
            "UPDATE decisions SET outcome_recorded_at = ?, was_successful = ?, impact_score = ?, learnings = ?, "
            "last_accessed_at = ?, access_count = ?, tier = ? WHERE id = ?",
            [row.outcome_recorded_at, row.was_successful, row.impact_score, row.learnings,
             row.last_accessed_at, row.access_count, row.tier, row.id],
        )
