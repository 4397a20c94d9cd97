"""An index's id list with lookup by id, in about a sixth of the RAM of a dict from id to position."""

from __future__ import annotations

import sys
from collections.abc import Iterable

import numpy as np

# Ids appended since the last sort wait in a dict until there are this many, or an eighth of the sorted ones.
MERGE_FROM = 10_000


class IdPositions:
    """The ids of an index's rows by position ("" at a row dropped since, which keeps its place), and each held
    id's position.

    A dict from a million ids to their positions costs about 70 MB (its table and an int object per entry); here
    the positions are found from a sorted array of the ids' str hashes (cached in each str, so computing them again
    costs nothing), 12 bytes a row. A hash match is confirmed against the id at that position, and a dropped row's
    id is blanked, so a stale or colliding hash never answers."""

    _key = staticmethod(hash)

    def __init__(self, ids: list[str], merge_from: int = MERGE_FROM) -> None:
        ids[:] = map(sys.intern, ids)  # one str per memory for both indexes and the row cache (memory_row() interns)
        self.ids = ids  # owned: change it through append() and pop() only
        self._merge_from = merge_from
        self._added: dict[str, int] = {}
        self._held = sum(1 for m in ids if m)
        self._sort(len(ids))

    def __len__(self) -> int:
        """How many ids are held (not dropped)."""
        return self._held

    def __contains__(self, memory_id: str) -> bool:
        return self.get(memory_id) is not None

    def get(self, memory_id: str) -> int | None:
        position = self._added.get(memory_id)
        if position is not None:
            return position
        key = self._key(memory_id)
        i = int(np.searchsorted(self._hashes, key))
        while i < len(self._hashes) and self._hashes[i] == key:
            position = int(self._order[i])
            if self.ids[position] == memory_id:
                return position
            i += 1
        return None

    def positions_of(self, memory_ids: Iterable[str]) -> list[int | None]:
        """get() of many ids at once (one vectorised search for those in the sorted part)."""
        memory_ids = list(memory_ids)
        if not len(self._hashes):
            return [self.get(memory_id) for memory_id in memory_ids]
        keys = np.fromiter(map(self._key, memory_ids), dtype=np.int64, count=len(memory_ids))
        first = self._order[np.minimum(np.searchsorted(self._hashes, keys), len(self._hashes) - 1)].tolist()
        ids = self.ids
        return [first_position if ids[first_position] == memory_id else self.get(memory_id)
                for memory_id, first_position in zip(memory_ids, first)]

    def append(self, memory_id: str) -> int:
        """Add an id at the end; its position. The caller checks it is not held already."""
        position = len(self.ids)
        self.ids.append(sys.intern(memory_id))
        self._added[memory_id] = position
        self._held += 1
        if len(self._added) >= max(self._merge_from, len(self._hashes) // 8):
            self._sort(len(self.ids))
        return position

    def pop(self, memory_id: str) -> int | None:
        """Drop a held id: its place in the list is blanked. Its former position, or None if it was not held."""
        position = self.get(memory_id)
        if position is not None:
            self._added.pop(memory_id, None)
            self.ids[position] = ""
            self._held -= 1
        return position

    def _sort(self, size: int) -> None:
        """Sort the hashes of the first `size` ids (every id, the dict of added ones emptied)."""
        keys = np.fromiter(map(self._key, self.ids[:size]), dtype=np.int64, count=size)
        order = np.argsort(keys, kind="stable")
        self._hashes = keys[order]
        self._order = order.astype(np.int32 if size < 2**31 else np.int64)
        self._added = {}
