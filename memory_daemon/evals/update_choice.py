"""`cortexd eval update-choice`: which sure update an imported statement replaces, learned choice against the closest."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from preprocessing.dedup import DedupCandidate

from memory_daemon.evals.heldout import DATA

# The timelines the shipped choice was fitted on (models/update_choice/fit.py) and the development sets it is
# measured on; held-out v21 and v22 are neither, and are scored only through `cortexd eval timelines`.
TRAINING_SETS = tuple(DATA / d / f"timelines_test{s}.jsonl" for d, s in [
    ("heldout", ""), ("heldout_2", "_2"), ("heldout_3", "_3"), ("heldout_4", "_4"), ("heldout_5", "_5"),
    ("heldout_6", "_6"), ("heldout_7", "_7"), ("heldout_8", "_8"), ("heldout_10", "_10"), ("heldout_17", "_17")])
DEVELOPMENT_SETS = tuple(DATA / f"heldout_{n}" / f"timelines_test_{n}.jsonl" for n in (11, 12, 13, 14, 15, 16, 18, 19, 20))


@dataclass(frozen=True)
class ChoiceEvent:
    """One timeline statement and the earlier memories the relation model is sure it wholly updates, as import reads
    them (RelationJudge.read_imported); `truth` is the memory it replaces in the writer's timeline ("" when it
    replaces none), `outdated` those the writer marked stale."""

    source: str
    timeline: str
    new_text: str
    sure: tuple[DedupCandidate, ...]
    truth: str
    outdated: frozenset[str]


def read_timelines(path: Path) -> list[dict]:
    rows = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{number}: not JSON ({error.msg})") from None
        if not isinstance(row, dict) or not {"id", "memories", "current"} <= set(row):
            raise ValueError(f"{path}:{number}: a timeline needs id, memories and current")
        rows.append(row)
    return rows


def choice_events(path: Path, judge, encoder) -> list[ChoiceEvent]:
    """Every statement of every timeline in the file, in time order, read against the memories before it."""
    events = []
    for timeline in read_timelines(path):
        memories = sorted(timeline["memories"], key=lambda m: m["timestamp"])
        order = [m["id"] for m in memories]
        outdated = frozenset(timeline.get("stale") or ())
        chain = sorted(outdated, key=order.index) + [timeline["current"]]
        replaces = dict(zip(chain[1:], chain))
        # One text a call: int8 vectors shift with a batch's padding.
        vectors = [np.asarray(encoder.encode([m["text"]]))[0] for m in memories]
        for position, new in enumerate(memories[1:], 1):
            earlier = [DedupCandidate(m["id"], m["text"], float(vectors[i] @ vectors[position]))
                       for i, m in enumerate(memories[:position])]
            _, sure = judge.read_imported(new["text"], sorted(earlier, key=lambda c: -c.similarity))
            if sure:
                events.append(ChoiceEvent(path.parent.name, timeline["id"], new["text"],
                                          tuple(p.candidate for p in sure), replaces.get(new["id"], ""), outdated))
    return events


def closest(new_text: str, candidates: Sequence[DedupCandidate]) -> DedupCandidate:
    """The rule the learned choice replaces: the closest in meaning."""
    return max(candidates, key=lambda c: c.similarity)


def tally(events: Sequence[ChoiceEvent], choose: Callable[[str, Sequence[DedupCandidate]], DedupCandidate]) -> dict:
    """What a choice does: replaces the writer's predecessor (right), an outdated memory, or a still-true one."""
    counts: Counter = Counter()
    for event in events:
        chosen = choose(event.new_text, event.sure).memory_id
        contested = len(event.sure) > 1 and any(c.memory_id == event.truth for c in event.sure)
        counts["events"] += 1
        counts["truth among several"] += contested
        counts["right among several"] += contested and chosen == event.truth
        if chosen == event.truth:
            counts["replaces its predecessor"] += 1
        elif chosen in event.outdated:
            counts["replaces another outdated memory"] += 1
        else:
            counts["replaces a still-true memory"] += 1
    return dict(counts)


def load_models():
    """The shipped relation judge (with the holder check, as `eval relations` reads pairs) and sentence encoder."""
    from preprocessing.encoder import SentenceEncoder
    from preprocessing.entities import EntityExtractor
    from preprocessing.holders import HolderReader
    from preprocessing.relation_dedup import RelationJudge
    from preprocessing.relation_model import RelationModel

    holders = HolderReader(EntityExtractor.load().parsed)
    judge = RelationJudge(RelationModel.load(threads=2), names_other_holder=holders.names_other_holder)
    return judge, SentenceEncoder.from_registry(threads=2)


ROWS = ("events", "replaces its predecessor", "replaces another outdated memory", "replaces a still-true memory",
        "truth among several", "right among several")


def evaluate_update_choice(paths: list[Path] | None = None, as_json: bool = False) -> int:
    """Print, per timeline file, what the learned choice and the closest-in-meaning rule replace."""
    from preprocessing.registry import ModelUnavailable
    from preprocessing.update_choice import UpdateChooser

    paths = paths or list(DEVELOPMENT_SETS)
    try:
        judge, encoder = load_models()
        chooser = UpdateChooser.load()
        results = {}
        for path in paths:
            events = choice_events(Path(path), judge, encoder)
            results[str(path)] = {"learned choice": tally(events, chooser.choose), "closest in meaning": tally(events, closest)}
    except (OSError, ValueError, ModelUnavailable) as error:
        print(f"cortexd eval update-choice: {error}", file=sys.stderr)
        return 2
    if as_json:
        print(json.dumps(results, indent=2))
        return 0
    for path, result in results.items():
        print(f"\n{path}")
        print(f"  {'':36s} {'learned choice':>15s} {'closest':>9s}")
        for row in ROWS:
            print(f"  {row:36s} {result['learned choice'].get(row, 0):>15d} {result['closest in meaning'].get(row, 0):>9d}")
    return 0
