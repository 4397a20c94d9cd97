"""The held-out test splits stay exactly as their independent writer froze them (their sha256 go into each REPORT)."""

import hashlib
from pathlib import Path

import pytest

HELDOUT = Path(__file__).parent / "data" / "heldout"
FROZEN = {
    "save_requests_test.jsonl": "e0a9b52ff7acf03cc80df43ccbacc19a8af39800c263c4c4b0031ca97dd82b9a",
    "relation_pairs_test.jsonl": "dea6460ee46ac7f753e13d0ec7fc71bdd1f45aa6437661a30c60fdcb77b8f811",
    "entities_test.jsonl": "9ea2036e14a2749a8bfb7730dfe48a2ad0d948696c2bc6ffefa878069207f27e",
    "timelines_test.jsonl": "b1ed0e5c5bc98c54a8bc6d0b46ee06a77a6bb2c4ddbdfe1d3f6d4993d470f9ec",
}


@pytest.mark.parametrize("name, sha256", sorted(FROZEN.items()))
def test_heldout_split_is_unchanged(name, sha256):
    assert hashlib.sha256((HELDOUT / name).read_bytes()).hexdigest() == sha256, f"{name} was edited after freezing"
    assert f"{sha256}  {name}" in (HELDOUT / "README.md").read_text()
