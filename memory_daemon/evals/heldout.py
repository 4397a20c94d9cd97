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
# then examined, and its save requests went into the request heads' training. v4 was frozen after that, by helpers
# who saw neither code nor errors, and scored once at the end of the next round; its save requests were then examined
# and joined the heads' training. The pairs and timelines of both joined the relation model's training in run 12, so
# both are training data now. v5 was frozen after that by a fresh helper and
# scored once: its save requests then joined the heads' training, and 9 of its pairs were read while weighing a change,
# so it is a development set too. v6 (save requests and timelines only) was frozen after that and scored once; its
# save requests joined the heads' fourteenth round and its timelines relation run 13, so it is training data now. v8
# (save requests and timelines; v7 held timelines only) was frozen before those two; the request targets are judged on
# it. v8's save requests then joined the heads' fifteenth round; v9 (save requests only) was frozen before that round
# and scored once with its model, then read again to compare it with the fourteenth round's model and to list its
# errors, so it is a development set now; no unseen request split remains. v10 (timelines only) was frozen after
# v8's timelines were read, and scored once in session 10 (`cortexd eval timelines tests/data/heldout_10/timelines_test_10.jsonl`). No pair split has been written since v5, so
# the dedup targets are still printed against v5, marked as the development set it now is. v9's save requests joined
# the heads' sixteenth round (session 11); v11 (save requests and timelines, two fresh helpers) was frozen before that
# round, and its save requests were scored once with its model: the request targets are judged on them. Its relation
# pairs, the first pair split since v5 (a third fresh helper), were scored once with the unchanged relation model: the
# dedup targets are judged on them. Its timelines were scored once in session 12, with the reranker (which then stayed
# off by default: README, Retrieval); v10's had been scored in session 10, and both are development sets now. v12
# (timelines only, a fresh helper, session 12) is frozen and unscored, but its text was shown once in that session's
# review of its own diff: read, not scored (README, Quality). v13 (relation pairs and timelines, a fresh helper, session
# 18) was frozen unscored and scored once in session 19 with relation run 12 (shipped) and run 14 (not shipped): the
# dedup targets were judged on its pairs until v14 (relation pairs and timelines, another fresh helper, session 19,
# frozen unscored) was scored once in session 20 with relation run 15 (shipped) and run 12: the dedup targets are
# judged on v14's pairs now, and v13's pairs are a development set. v5's pairs joined the relation model's training
# from run 14's build on (run 15 is the first shipped model trained on them), so v5 is training data now. v15 (relation
# pairs and timelines, another fresh helper, session 20, frozen unscored) was scored once in session 24, with relation
# run 15 and session 24's supersession beside the code before it: the dedup targets are judged on v15's pairs now, and
# v14's pairs are a development set. v16 (timelines only, a fresh helper, session 24) was scored once in session 25.
# Timelines only since: v17 (session 25; unscored, its text shown once in a review), v18 and v19 (session 27, each
# scored once there, development sets since), v20 (session 27; scored once in session 28, a development set since),
# and v21 and v22 (session 28, frozen unscored and unread).
V3 = HeldOutSplit(3, "heldout_3", "_3", "scored; now training data")
V4 = HeldOutSplit(4, "heldout_4", "_4", "scored; now training data")
V5 = HeldOutSplit(5, "heldout_5", "_5", "scored; now training data")
V6 = HeldOutSplit(6, "heldout_6", "_6", "scored; now training data")
V8 = HeldOutSplit(8, "heldout_8", "_8", "scored; requests now training data, timelines a development set")
V9 = HeldOutSplit(9, "heldout_9", "_9", "scored; now training data")
V11 = HeldOutSplit(11, "heldout_11", "_11", "scored once; its pairs a development set now")
V13 = HeldOutSplit(13, "heldout_13", "_13", "scored once; its pairs a development set now")
V14 = HeldOutSplit(14, "heldout_14", "_14", "scored once; its pairs a development set now")
V15 = HeldOutSplit(15, "heldout_15", "_15", "scored once")
REQUESTS_JUDGED = V11
PAIRS_JUDGED = V15
SPLITS = (V1, V2, V3, V4, V5, V6, V8, V9, V11, V13, V14, V15)


def split_files(stem: str) -> list[tuple[str, Path]]:
    """(split name, file) of every split that has a file of this kind, oldest first."""
    return [(split.name, split.file(stem)) for split in SPLITS if split.file(stem).is_file()]


# v3 has no entity lines, and the entity extractor has not changed since v2 was scored: its entities are judged on v2.
ENTITIES_SEEN = HeldOutSplit(1, "heldout", "", "scored; a development set now")
ENTITIES_JUDGED = HeldOutSplit(2, "heldout_2", "_2", "scored once; the latest entity split")
