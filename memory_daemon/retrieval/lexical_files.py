"""One namespace's saved BM25 postings: flat arrays in a .npz beside a JSON manifest, written atomically, checked on load."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import preprocessing.terms
from memory_daemon.retrieval.ann_index import IndexFiles, UnusableIndex, fsync, refuse_unless_string_ids, sha256_of
from memory_daemon.retrieval.postings import DOC, VALUE, Postings

FORMAT = 2  # 2: each document's pair_hash(id, digest) in the arrays, in place of the digests in the manifest
# What the saved terms were made with: a change to the tokenizer makes every saved index stale (rebuilt once).
TOKENIZER = hashlib.sha256(Path(preprocessing.terms.__file__).read_bytes()).hexdigest()[:16]


@dataclass
class SavedPostings:
    """What a save writes and a load gives back: the three posting maps, each document's length, and the memory id
    and pair_hash(id, digest) behind each document position (id "" for a document dropped since it was indexed)."""

    terms: Postings  # term -> documents, with the term's frequency in each
    identifiers: Postings  # exact identifier token -> documents
    entities: Postings  # entity key -> documents
    lengths: np.ndarray  # float32, one per document
    ids: list[str]
    hashes: np.ndarray  # uint64, one per document


def save(files: IndexFiles, namespace: str, saved: SavedPostings) -> None:
    """Arrays first, then the manifest naming their size and sha256, each renamed into place: a kill mid-save leaves
    the old pair, or arrays the manifest does not describe, which load() refuses."""
    files.directory.mkdir(parents=True, exist_ok=True)
    arrays_tmp = files.lexical_arrays.with_suffix(".tmp")
    with open(arrays_tmp, "wb") as handle:
        np.savez(handle, term_offsets=saved.terms.offsets, term_docs=saved.terms.docs, term_counts=saved.terms.values,
                 identifier_offsets=saved.identifiers.offsets, identifier_docs=saved.identifiers.docs,
                 entity_offsets=saved.entities.offsets, entity_docs=saved.entities.docs, lengths=saved.lengths,
                 hashes=saved.hashes)
    fsync(arrays_tmp)
    os.replace(arrays_tmp, files.lexical_arrays)
    manifest = {"format": FORMAT, "tokenizer": TOKENIZER, "namespace": namespace,
                "arrays_bytes": files.lexical_arrays.stat().st_size, "arrays_sha256": sha256_of(files.lexical_arrays),
                "ids": saved.ids, "terms": saved.terms.keys,
                "identifiers": saved.identifiers.keys, "entities": saved.entities.keys}
    manifest_tmp = files.lexical_manifest.with_suffix(".tmp")
    manifest_tmp.write_text(json.dumps(manifest), encoding="utf-8")
    fsync(manifest_tmp)
    os.replace(manifest_tmp, files.lexical_manifest)


def load(files: IndexFiles, namespace: str) -> SavedPostings:
    """The saved postings; UnusableIndex when the files are missing, damaged, of another format or tokenizer, or
    disagree with each other."""
    try:
        manifest = json.loads(files.lexical_manifest.read_text(encoding="utf-8"))
        expected = (FORMAT, TOKENIZER, namespace)
        found = tuple(manifest.get(k) for k in ("format", "tokenizer", "namespace"))
        if found != expected:
            raise UnusableIndex(f"lexical manifest {found} is not {expected}")
        if files.lexical_arrays.stat().st_size != manifest["arrays_bytes"] \
                or sha256_of(files.lexical_arrays) != manifest["arrays_sha256"]:
            raise UnusableIndex("lexical arrays differ from the ones their manifest describes")
        with np.load(files.lexical_arrays, allow_pickle=False) as arrays:
            terms = Postings(manifest["terms"], arrays["term_offsets"], arrays["term_docs"].astype(DOC, copy=False),
                             arrays["term_counts"].astype(VALUE, copy=False))
            identifiers = Postings(manifest["identifiers"], arrays["identifier_offsets"], arrays["identifier_docs"],
                                   None)
            entities = Postings(manifest["entities"], arrays["entity_offsets"], arrays["entity_docs"], None)
            lengths = arrays["lengths"].astype(VALUE, copy=False)
            hashes = arrays["hashes"].astype(np.uint64, copy=False)
        ids = manifest["ids"]
    except UnusableIndex:
        raise
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise UnusableIndex(f"{type(error).__name__}: {error}") from None
    refuse_unless_string_ids(ids)
    documents = len(ids)
    if len(hashes) != documents \
            or len(lengths) != documents or any(len(p.docs) and int(p.docs.max()) >= documents
                                                for p in (terms, identifiers, entities)):
        raise UnusableIndex("lexical arrays and manifest disagree on the number of documents")
    return SavedPostings(terms, identifiers, entities, lengths, ids, hashes)
