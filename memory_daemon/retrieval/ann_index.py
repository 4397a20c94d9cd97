"""One namespace's HNSW graph over its embeddings (usearch, f16), saved beside the store and checked before use."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

INDEX_DIR = "indexes"  # under the data dir: one directory per large namespace, derived from the store
DIMENSIONS = 384
# 2: each row's pair_hash() instead of a digest of its text, so a start compares numbers computed in SQL (a graph
# saved in format 1 is rebuilt once, in the background, searched exactly meanwhile)
FORMAT = 2
# f16 keeps recall@10 at 1.000 against exact search where i8 lost 8 points (README, "Choosing the index libraries").
SCALAR = "f16"
# Links per node and candidates kept while adding, then per search. On the bench's 1M clustered synthetic store
# (1,000 tight clusters of 1,000), M 16 / 128 gave recall@10 0.633 at 128 candidates per search; M 32 / 256 gives
# 1.000 at 100k from 128, and at 1M, over five builds (a threaded build differs from run to run), 0.874-0.943 at
# 128, 0.946-0.994 at 256 and 0.997-1.000 at 512 (graph search p50 about 2.5, 3.7 and 4.7 ms). So a graph of
# LARGE_GRAPH rows or more keeps LARGE_EXPANSION_SEARCH candidates per search, a smaller one EXPANSION_SEARCH.
# A graph saved with other links keeps them until `cortexd reindex` (usearch reads them from the file).
CONNECTIVITY = 32
EXPANSION_ADD = 256
EXPANSION_SEARCH = 256
LARGE_GRAPH, LARGE_EXPANSION_SEARCH = 500_000, 512
THREADS = 2


class UnusableIndex(Exception):
    """A saved index that is missing, unreadable, of another format, or out of step with its own manifest."""


# A saved index further behind the store than this share of its rows is rebuilt rather than caught up row by row.
CATCH_UP_SHARE = 0.25


def refuse_unless_string_ids(ids: object) -> None:
    """UnusableIndex unless a saved manifest's ids are a list of strings (the id lists intern them: IdPositions)."""
    if not isinstance(ids, list) or not all(isinstance(m, str) for m in ids):
        raise UnusableIndex("manifest ids are not a list of strings")


def refuse_if_far_behind(missing: int, stale: int, stored: int, rows: str) -> None:
    """UnusableIndex when more than CATCH_UP_SHARE of the store's `stored` rows would have to be caught up: `missing`
    written since the save, `stale` deleted or edited since."""
    if missing + stale > CATCH_UP_SHARE * max(stored, 1):
        raise UnusableIndex(f"{missing} {rows} missing and {stale} deleted or edited since the save, of {stored}")


@dataclass(frozen=True)
class IndexFiles:
    """Where one namespace's saved graph and its manifest (the memory id behind each key) live."""

    directory: Path

    @classmethod
    def of(cls, root: Path, namespace: str) -> IndexFiles:
        # A namespace name may hold characters a file name cannot; the manifest keeps the name itself.
        return cls(root / hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:24])

    @property
    def graph(self) -> Path:
        return self.directory / "vectors.usearch"

    @property
    def manifest(self) -> Path:
        return self.directory / "vectors.json"

    @property
    def lexical_arrays(self) -> Path:
        return self.directory / "lexical.npz"

    @property
    def lexical_manifest(self) -> Path:
        return self.directory / "lexical.json"

    def exist(self) -> bool:
        """Whether a vector graph was saved (the lexical postings are looked for on their own)."""
        return self.graph.is_file() or self.manifest.is_file()

    def lexical_exist(self) -> bool:
        return self.lexical_arrays.is_file() or self.lexical_manifest.is_file()

    def remove(self) -> None:
        """Drop the saved vector graph and its manifest (the lexical postings stay)."""
        for path in (self.graph, self.manifest):
            path.unlink(missing_ok=True)

    def remove_lexical(self) -> None:
        for path in (self.lexical_arrays, self.lexical_manifest):
            path.unlink(missing_ok=True)

    def size_bytes(self) -> int:
        """Both indexes' files on disk."""
        return sum(p.stat().st_size for p in (self.graph, self.manifest, self.lexical_arrays, self.lexical_manifest)
                   if p.is_file())


class AnnIndex:
    """HNSW over a namespace's embeddings. Its keys are positions in the namespace's id list (VectorIndex's), so a
    search answers positions; removed positions are gone from the graph but keep their place in the list."""

    def __init__(self, index) -> None:
        self._index = index
        self._expansion: int | None = None  # set_expansion()'s; None: expansion_for() the graph's size

    @classmethod
    def empty(cls) -> AnnIndex:
        return cls(_usearch_index())

    @classmethod
    def build(cls, positions: np.ndarray, vectors: np.ndarray) -> AnnIndex:
        index = cls.empty()
        index.add(positions, vectors)
        return index

    def __len__(self) -> int:
        return len(self._index)

    def add(self, positions: np.ndarray, vectors: np.ndarray) -> None:
        if len(positions):
            self._index.add(np.asarray(positions, dtype=np.uint64), np.asarray(vectors, dtype=np.float32),
                            threads=THREADS)

    def remove(self, positions: list[int]) -> None:
        for position in positions:
            self._index.remove(int(position))

    def set_expansion(self, expansion: int) -> None:
        """Candidates kept per search from now on (expansion_for() the size unless set): recall against latency."""
        self._expansion = int(expansion)

    def search(self, vector: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(positions, cosines) of up to `count` nearest, nearest first."""
        count = min(count, len(self._index))
        if count <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        expansion = self._expansion or expansion_for(len(self._index))
        if self._index.expansion_search != expansion:
            self._index.expansion_search = expansion
        found = self._index.search(np.asarray(vector, dtype=np.float32), count)
        return found.keys.astype(np.int64), (1.0 - found.distances).astype(np.float32)

    def vectors(self, positions: list[int]) -> list[np.ndarray | None]:
        """The stored (f16, read back as f32) vector at each position; None where the graph has none."""
        if not positions:
            return []
        got = self._index.get(np.asarray(positions, dtype=np.uint64), dtype=np.float32)
        rows = got if isinstance(got, tuple) else list(got)
        return [None if row is None else np.asarray(row, dtype=np.float32).reshape(DIMENSIONS) for row in rows]

    def save(self, files: IndexFiles, namespace: str, ids: list[str], hashes: np.ndarray) -> None:
        """Write the graph, then the manifest, each to a temporary name renamed into place: a kill mid-save leaves
        the old pair, or a graph whose size its manifest does not match, which load() refuses. The manifest keeps
        the memory id behind each key ("" where removed) and the pair_hash() of the (id, text) it was embedded
        from, to be checked against the store at the next start."""
        files.directory.mkdir(parents=True, exist_ok=True)
        graph_tmp = files.graph.with_suffix(".usearch.tmp")
        self._index.save(str(graph_tmp))
        fsync(graph_tmp)
        os.replace(graph_tmp, files.graph)
        manifest = {"format": FORMAT, "namespace": namespace, "dimensions": DIMENSIONS, "scalar": SCALAR,
                    "graph_size": len(self._index), "graph_bytes": files.graph.stat().st_size,
                    "graph_sha256": sha256_of(files.graph), "ids": ids, "hashes": hashes.tolist()}
        manifest_tmp = files.manifest.with_suffix(".json.tmp")
        manifest_tmp.write_text(json.dumps(manifest), encoding="utf-8")
        fsync(manifest_tmp)
        os.replace(manifest_tmp, files.manifest)

    @classmethod
    def load(cls, files: IndexFiles, namespace: str) -> tuple[AnnIndex, list[str], np.ndarray]:
        """The saved graph, the id behind each key ("" for a removed one) and the pair_hash() of the (id, text) each
        was embedded from (0 where removed); UnusableIndex when anything about them is off."""
        try:
            manifest = json.loads(files.manifest.read_text(encoding="utf-8"))
            expected = (FORMAT, namespace, DIMENSIONS, SCALAR)
            found = tuple(manifest.get(k) for k in ("format", "namespace", "dimensions", "scalar"))
            if found != expected:
                raise UnusableIndex(f"manifest {found} is not {expected}")
            if files.graph.stat().st_size != manifest["graph_bytes"] or sha256_of(files.graph) != manifest["graph_sha256"]:
                # usearch reads a damaged graph without complaint (or crashes on it), so the bytes are checked first
                raise UnusableIndex("graph file differs from the one its manifest describes")
            index = _usearch_index()
            index.load(str(files.graph))
            ids = manifest["ids"]
            hashes = np.array(manifest["hashes"], dtype=np.uint64)
        except UnusableIndex:
            raise
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as error:
            raise UnusableIndex(f"{type(error).__name__}: {error}") from None
        refuse_unless_string_ids(ids)
        if len(index) != manifest["graph_size"] or len(index) > len(ids) \
                or hashes.shape != (len(ids),) or index.ndim != DIMENSIONS:
            raise UnusableIndex("graph and manifest disagree on its size")
        return cls(index), ids, hashes


def _usearch_index():
    """An empty graph with this module's settings, which a load then fills from a file."""
    # onnxruntime first: imported after usearch (its numkong extension) in one process, it crashes the process
    # (a segfault in its import, onnxruntime 1.32 after usearch 2.26 with numkong 7.8), and the daemon imports the two on two threads.
    try:
        import onnxruntime  # noqa: F401
    except ImportError:
        pass
    from usearch.index import Index  # imported by the daemon only, when a namespace is large enough to need it

    return Index(ndim=DIMENSIONS, metric="cos", dtype=SCALAR, connectivity=CONNECTIVITY,
                 expansion_add=EXPANSION_ADD, expansion_search=EXPANSION_SEARCH)


def expansion_for(rows: int) -> int:
    """Candidates a search of a graph of this many rows keeps (see LARGE_GRAPH)."""
    return LARGE_EXPANSION_SEARCH if rows >= LARGE_GRAPH else EXPANSION_SEARCH


def pair_hash(memory_id: str, value: str) -> int:
    """The low 64 bits of md5(id + "\\x1f" + value): what an index keeps of the text (or fields) behind each row.
    The store computes the same in SQL (md5_number_lower), so a start compares numbers, not texts, and an edit in
    place changes it."""
    digest = hashlib.md5(f"{memory_id}\x1f{value}".encode("utf-8"), usedforsecurity=False).digest()
    return int.from_bytes(digest[8:], "little")


def fingerprint(pairs: Iterable[tuple[str, str]]) -> tuple[int, int]:
    """(how many, XOR of pair_hash) over (memory id, value) pairs. The store computes the same over its rows in SQL
    (MemoryRepository's *_fingerprint), so a saved index whose fingerprint equals the store's holds exactly the
    store's rows, and a start uses it without comparing them one by one."""
    count, value = 0, 0
    for memory_id, text in pairs:
        value ^= pair_hash(memory_id, text)
        count += 1
    return count, value


def fingerprint_of(hashes: np.ndarray, ids: list[str]) -> tuple[int, int]:
    """fingerprint() from rows' pair hashes already held, one per id ("" at a row no longer held): (how many are
    held, XOR of theirs)."""
    kept = hashes[np.array([bool(m) for m in ids], dtype=bool)]
    return int(len(kept)), int(np.bitwise_xor.reduce(kept)) if len(kept) else 0


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def fsync(path: Path) -> None:
    """Flush a file written under a temporary name before it is renamed into place."""
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())
