"""The independently written held-out splits: which one is the test now, and which were scored and became data."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "tests" / "data"


@dataclass(frozen=True)
class HeldOutSplit:
    """One helper-written split: its directory, file suffix and how it may be read now."""

    version: int
    directory: str
    suffix: str
    status: str

    @property
    def name(self) -> str:
        return f"held-out v{self.version}" + (f" ({self.status})" if self.status else "")

    def file(self, stem: str) -> Path:
        """e.g. file("relation_pairs_test") -> tests/data/heldout_2/relation_pairs_test_2.jsonl"""
        return DATA / self.directory / f"{stem}{self.suffix}.jsonl"


# v1 and v2 were each scored once at the end of a round; their save requests, relation pairs and the update pairs of
# their timelines then went into training (models/intent/request_data.py, models/relation/data/build.py), so those
# figures are training figures. Their entities trained nothing: scored and seen, they are development sets now.
V1 = HeldOutSplit(1, "heldout", "", "scored; now training data")
V2 = HeldOutSplit(2, "heldout_2", "_2", "scored; now training data")
# v3 was written and frozen before the round that trained on v1 and v2, and scored once at its end; its failures were
# then examined, and its save requests went into the request heads' training, so it is a development set now. v4 was
# frozen after that, by helpers who saw neither code nor errors, and scored once at the end of the next round; its
# save requests were then examined and joined the heads' training (its timelines are not scored yet). v5 was frozen
# after that, by a fresh helper; the targets are judged on it.
V3 = HeldOutSplit(3, "heldout_3", "_3", "scored; a development set now")
V4 = HeldOutSplit(4, "heldout_4", "_4", "scored; a development set now")
V5 = HeldOutSplit(5, "heldout_5", "_5", "")
JUDGED = V5
SPLITS = (V1, V2, V3, V4, V5)
# v3 has no entity lines, and the entity extractor has not changed since v2 was scored: its entities are judged on v2.
ENTITIES_SEEN = HeldOutSplit(1, "heldout", "", "scored; a development set now")
ENTITIES_JUDGED = HeldOutSplit(2, "heldout_2", "_2", "scored once; the latest entity split")
