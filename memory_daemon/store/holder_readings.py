"""SQL for the holder model's stored readings: per memory, by which model and of which text, another's fact or not."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence

from memory_daemon.store.database import Database, in_list


def content_digest(content: str) -> str:
    """What a reading is of: a memory edited since it was read has another digest, so its reading is not used."""
    return hashlib.md5(content.encode("utf-8"), usedforsecurity=False).hexdigest()


class HolderReadingStore:
    """Readings are derived data (dumps leave them out); forgetting a memory deletes its reading in the same
    transaction (store/corrections.py), and a reading of a memory gone meanwhile is not stored."""

    def __init__(self, database: Database) -> None:
        self._db = database

    def read(self, ids: Sequence[str], model: str) -> dict[str, tuple[str, bool]]:
        """memory id -> (digest of the text read, whether the model read it as another's) for `model`'s readings."""
        if not ids:
            return {}
        rows = self._db.cursor().execute(
            f"SELECT memory_id, digest, other FROM holder_readings WHERE memory_id IN {in_list(ids)} AND model = ?",
            [*ids, model]).fetchall()
        return {memory_id: (digest, bool(other)) for memory_id, digest, other in rows}

    def keep(self, readings: Mapping[str, tuple[str, bool]], model: str) -> None:
        """Store (memory id -> (digest, other)) readings by `model`, over any earlier reading of the same memories;
        ids no longer in the store (forgotten while being read) are left out."""
        if not readings:
            return
        values = ", ".join(["(?, ?, ?)"] * len(readings))
        params = [x for memory_id, (digest, other) in readings.items() for x in (memory_id, digest, other)]
        with self._db.transaction() as cursor:
            cursor.execute(
                f"INSERT OR REPLACE INTO holder_readings (memory_id, model, digest, other) "
                f"SELECT v.memory_id, ?, v.digest, v.other FROM (VALUES {values}) AS v(memory_id, digest, other) "
                "SEMI JOIN memories m ON m.id = v.memory_id", [model, *params])

    def drop_other_models(self, model: str) -> int:
        """Delete readings made by any other model than `model` (a retrained model reads everything again)."""
        with self._db.transaction() as cursor:
            (count,) = cursor.execute("SELECT count(*) FROM holder_readings WHERE model <> ?", [model]).fetchone()
            if count:
                cursor.execute("DELETE FROM holder_readings WHERE model <> ?", [model])
        return int(count)
