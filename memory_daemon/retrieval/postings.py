"""Posting lists as three flat arrays (keys, offsets, docs): compact in RAM, merged in one sort, saved as they are."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain

import numpy as np

DOC = np.int32
VALUE = np.float32
_NO_DOCS = np.zeros(0, dtype=DOC)
_NO_VALUES = np.zeros(0, dtype=VALUE)


class Postings:
    """key -> the ascending positions of the documents holding it (and one value per document, such as a term's
    frequency, when `values` is given). Never changed in place: merged() makes a new one."""

    def __init__(self, keys: list[str], offsets: np.ndarray, docs: np.ndarray, values: np.ndarray | None) -> None:
        if len(offsets) != len(keys) + 1 or int(offsets[-1]) != len(docs) or (values is not None
                                                                               and len(values) != len(docs)):
            raise ValueError("posting arrays disagree on their sizes")
        self.keys = keys
        self.offsets = offsets
        self.docs = docs
        self.values = values
        self.index = {key: i for i, key in enumerate(keys)}

    @classmethod
    def empty(cls, with_values: bool) -> Postings:
        return cls([], np.zeros(1, dtype=np.int64), _NO_DOCS, _NO_VALUES if with_values else None)

    def __len__(self) -> int:
        return len(self.keys)

    def docs_of(self, key: str) -> np.ndarray:
        i = self.index.get(key)
        return _NO_DOCS if i is None else self.docs[self.offsets[i]: self.offsets[i + 1]]

    def values_of(self, key: str) -> np.ndarray:
        i = self.index.get(key)
        return _NO_VALUES if i is None else self.values[self.offsets[i]: self.offsets[i + 1]]

    def count(self, key: str) -> int:
        i = self.index.get(key)
        return 0 if i is None else int(self.offsets[i + 1] - self.offsets[i])

    def merged(self, added: Mapping[str, Sequence[int]], added_values: Mapping[str, Sequence[float]] | None = None
               ) -> Postings:
        """These postings and `added` (whose documents all come after this one's) as one: a stable sort by key
        keeps each key's documents ascending."""
        keys = self.keys + [key for key in added if key not in self.index]
        index = {key: i for i, key in enumerate(keys)}
        counts = np.fromiter((len(docs) for docs in added.values()), dtype=np.int64, count=len(added))
        added_keys = np.repeat(np.fromiter((index[key] for key in added), dtype=np.int64, count=len(added)), counts)
        key_of = np.concatenate([np.repeat(np.arange(len(self.keys), dtype=np.int64), np.diff(self.offsets)),
                                 added_keys])
        order = np.argsort(key_of, kind="stable")
        docs = np.concatenate([self.docs, np.fromiter(chain.from_iterable(added.values()), dtype=DOC,
                                                      count=int(counts.sum()))])[order]
        values = None
        if self.values is not None:
            flat = chain.from_iterable(added_values[key] for key in added)
            values = np.concatenate([self.values, np.fromiter(flat, dtype=VALUE, count=int(counts.sum()))])[order]
        offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(np.bincount(key_of, minlength=len(keys)), out=offsets[1:])
        return Postings(keys, offsets, docs, values)

    def by_document(self, documents: int) -> tuple[np.ndarray, np.ndarray]:
        """The inverse map: (offsets, key numbers) so that document d holds keys[key_numbers[offsets[d]:offsets[d+1]]]."""
        key_of = np.repeat(np.arange(len(self.keys), dtype=np.int64), np.diff(self.offsets))
        order = np.argsort(self.docs, kind="stable")
        offsets = np.zeros(documents + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.docs, minlength=documents)[:documents], out=offsets[1:])
        return offsets, key_of[order].astype(DOC)
