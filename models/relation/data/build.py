"""Build the relation dataset (train.jsonl, val.jsonl) from the hand-written, generated and team-labelled pairs."""

# Usage:  .venv/bin/python models/relation/data/generate.py && .venv/bin/python models/relation/data/build.py
# Deterministic: the same SEED and the same inputs give byte-identical outputs.
#
# Val is hand-written pairs only, in their written direction, so runs with and without the extra sources are
# compared on the same pairs. The held-out test split (tests/data/heldout/) is not read here or anywhere in
# models/relation/ except by the lead's final scoring.

from __future__ import annotations

import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

from preprocessing.relation_model import RELATIONS  # noqa: E402

SEED = 20261201
HANDWRITTEN = HERE / "pairs_handwritten.jsonl"
HANDWRITTEN_2 = HERE / "pairs_handwritten_2.jsonl"  # same-subject COMPATIBLE and person-swap UPDATEs, train only
HANDWRITTEN_3 = HERE / "pairs_handwritten_3.jsonl"  # near misses of DUPLICATE (additions, one value changed), train only
# Written by a helper who saw no code, data or model output: a text worded as a change about another subject than the
# memory (staging next to production, a sister next to a brother) is COMPATIBLE, beside minimal-contrast UPDATEs of the
# same subject. Train only.
LOOKALIKE = HERE / "pairs_lookalike.jsonl"
# Written for run 13 by another fresh helper from a brief naming the same blind spot: per family, look-alike changes
# about another subject (COMPATIBLE) beside same-subject UPDATEs worded with only a pronoun or short reference, plain
# changes, and PARTIAL_UPDATEs or paraphrase DUPLICATEs. Train only.
CONTRAST = HERE / "pairs_contrast.jsonl"
# Written for run 14 by another fresh helper (no code, data or model output seen) from a brief naming the blind spot
# that held-out v11's timelines and pairs showed in development: the same attribute stated or changed for another
# qualifier (environment, team, person's role, pool, client) is COMPATIBLE, beside same-qualifier UPDATEs that change
# several details at once or correct one, and PARTIAL_UPDATEs. Train only.
QUALIFIER = HERE / "pairs_qualifier.jsonl"
# Written for run 15 by another fresh helper: a memory that holds one value is wholly updated by a change of it
# (UPDATE), while the same wording against a several-part memory changes one part (PARTIAL_UPDATE). Train only.
SINGLE_VALUE = HERE / "pairs_single_value.jsonl"
# The probes (development checks run before any test split is scored): single-value changes that must read UPDATE, and
# one-part changes of several-part memories that must read PARTIAL_UPDATE. No family of the later sources with one of
# their texts, after normalising, is trained on.
PROBES = (HERE / "probe_single_value.jsonl", HERE / "probe_partial.jsonl")
# Families left out by name because they hold, or closely reword, the text of a check the model must not have seen.
LEFT_OUT_FAMILIES = {
    # its memory is the text of a clear pair in tests/test_relation_model.py (found after run 14 was trained)
    "qf-sister-city": "a clear pair of tests/test_relation_model.py",
    # the brief's examples were the probe's and tests/test_update_check_pass.py's texts, and the writer reused them
    "sv-deploy-day": "tests/test_update_check_pass.py and the single-value probe",
    "sv-backup-time": "the single-value probe",
    "sv-standup": "the single-value probe",
    "sv-rent": "the single-value probe",
}
GENERATED = HERE / "pairs_generated.jsonl"  # written by generate.py, train only
VAL_COMPATIBLE = HERE / "val_compatible.jsonl"  # generate.py's held-back families: a development check, not val
DEDUP_PAIRS = REPO / "tests" / "data" / "activation" / "dedup_pairs.jsonl"
TIMELINES = REPO / "tests" / "data" / "retrieval" / "timelines.jsonl"
# The frozen held-out pairs: a training pair equal to one of them (after normalising) is dropped, and only the count
# is printed. Nothing else here reads them.
# v3 and v4 were scored once with run 10 and joined SCORED_HELDOUT for run 12. v5 was scored once too, then 9 of its
# pairs were read, and it was the development pair split until v11; from run 14 it is training data. v11 (scored once
# in session 11, a development set since) and v13 (frozen in session 18, scored once in session 19 after run 14 was
# trained) stay out, and so do v14 (frozen in session 19, scored once in session 20 with run 15) and v15 (frozen in
# session 20, unscored).
HELDOUT_PAIRS = (REPO / "tests" / "data" / "heldout_11" / "relation_pairs_test_11.jsonl",
                 REPO / "tests" / "data" / "heldout_13" / "relation_pairs_test_13.jsonl",
                 REPO / "tests" / "data" / "heldout_14" / "relation_pairs_test_14.jsonl",
                 REPO / "tests" / "data" / "heldout_15" / "relation_pairs_test_15.jsonl")
# Held-out splits that were scored once and reported: from then on they are training data (source "scored_heldout"),
# written by other hands than ours, and a fresh split (HELDOUT_PAIRS) takes their place as the test.
SCORED_HELDOUT = (REPO / "tests" / "data" / "heldout" / "relation_pairs_test.jsonl",
                  REPO / "tests" / "data" / "heldout_2" / "relation_pairs_test_2.jsonl",
                  REPO / "tests" / "data" / "heldout_3" / "relation_pairs_test_3.jsonl",
                  REPO / "tests" / "data" / "heldout_4" / "relation_pairs_test_4.jsonl",
                  REPO / "tests" / "data" / "heldout_5" / "relation_pairs_test_5.jsonl")
# Their timelines give UPDATE (and, for a partial update, PARTIAL_UPDATE) pairs the way the team's timelines do, and
# their control scenarios COMPATIBLE pairs (see load_timelines). v6's timelines (run 12's development check) and v7's
# (run 12's test, read afterwards) joined for run 13; v8's and v10's for run 14 (below).
SCORED_TIMELINES = (REPO / "tests" / "data" / "heldout" / "timelines_test.jsonl",
                    REPO / "tests" / "data" / "heldout_2" / "timelines_test_2.jsonl",
                    REPO / "tests" / "data" / "heldout_3" / "timelines_test_3.jsonl",
                    REPO / "tests" / "data" / "heldout_4" / "timelines_test_4.jsonl",
                    REPO / "tests" / "data" / "heldout_5" / "timelines_test_5.jsonl",
                    REPO / "tests" / "data" / "heldout_6" / "timelines_test_6.jsonl",
                    REPO / "tests" / "data" / "heldout_7" / "timelines_test_7.jsonl",
                    # Scored once each in sessions 9 and 10 and reported; training data for run 14. v11's, v13's and
                    # v14's (scored once, development sets since), v12's (read, unscored) and v15's (frozen, unscored)
                    # stay out.
                    REPO / "tests" / "data" / "heldout_8" / "timelines_test_8.jsonl",
                    REPO / "tests" / "data" / "heldout_10" / "timelines_test_10.jsonl")
VAL_SHARE = 0.15
SPLIT_TRIALS = 4000  # seeded family shuffles; the one whose val label mix is closest to 15 % of each label wins

# The label of (a, b) is the label of (b, a) for these, so training also sees the pair the other way round.
# A DUPLICATE of category "subset" is not: turned round, the new text adds details, which reads as an addition.
SYMMETRIC = {"DUPLICATE", "COMPATIBLE", "UNRELATED"}
# Nor is a generated "restated_addition" (one part, then both parts): turned round it is a subset DUPLICATE.
NOT_SYMMETRIC_CATEGORIES = {"subset", "restated_addition"}
# dedup_pairs.jsonl labels: "different" covers both COMPATIBLE and UNRELATED, so those pairs are left out.
DEDUP_LABELS = {"duplicate": "DUPLICATE", "update": "UPDATE"}


def norm_key(text: str) -> str:
    """Case, punctuation and spacing do not make two texts different."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def pair(existing: str, new: str, label: str, category: str, family: str, source: str,
         augmented: str = "") -> dict:
    row = {"existing": existing, "new": new, "label": label, "category": category, "family": family,
           "source": source}
    if augmented:
        row["augmented"] = augmented
    return row


def load_written(path: Path = HANDWRITTEN, source: str = "handwritten") -> list[dict]:
    """A pair file in the hand-written format ({existing, new, label, category, family}), tagged with its source."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        assert r["label"] in RELATIONS, r
        assert r["existing"].strip() and r["new"].strip() and r["family"], r
    return [pair(r["existing"], r["new"], r["label"], r["category"], r["family"], source) for r in rows]


def load_scored_heldout() -> list[dict]:
    """The pairs of the held-out splits already scored; a family per pair (each was written on its own)."""
    rows = []
    for path in SCORED_HELDOUT:
        for r in map(json.loads, filter(str.strip, path.read_text(encoding="utf-8").splitlines())):
            rows.append(pair(r["existing"], r["new"], r["label"], r["category"], f"scored-{r['id']}",
                             "scored_heldout"))
    return rows


def load_dedup_pairs() -> tuple[list[dict], int]:
    """duplicate -> DUPLICATE, update -> UPDATE; a family per existing text (several rows share one)."""
    rows, skipped = [], 0
    for line in DEDUP_PAIRS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        label = DEDUP_LABELS.get(r["label"])
        if label is None:
            skipped += 1
            continue
        family = "team-dedup-" + "-".join(norm_key(r["existing"]).split()[:6])
        rows.append(pair(r["existing"], r["new"], label, f"dedup:{r['note']}", family, "dedup_pairs"))
    return rows, skipped


def load_timelines(path: Path = TIMELINES, source: str = "timelines", family_prefix: str = "team",
                   controls: bool = False) -> list[dict]:
    """UPDATE pairs (an older memory, the one that replaced it) from each timeline's stale and current ids.

    Every stale memory against the current one is an UPDATE, except in a reversal, where the current text goes
    back to the first value (stale[0] -> current would read as a repeat); there, and in chains, each version
    against the next one is an UPDATE. In a "partial" timeline the pair is a PARTIAL_UPDATE. Distractor memories
    are left out: whether one is COMPATIBLE or UNRELATED to the versioned fact is a judgement per pair, and they
    were not written with that in mind. With `controls`, a control timeline (its answer never changed, and later
    memories were written to look like updates of it) gives (answer, each later memory) as COMPATIBLE pairs.
    """
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        t = json.loads(line)
        text = {m["id"]: m["text"] for m in t["memories"]}
        when = {m["id"]: m["timestamp"] for m in t["memories"]}
        versions = sorted(t["stale"], key=lambda i: when[i]) + [t["current"]]
        links: list[tuple[str, str]] = []
        if t["kind"] in ("chain", "reversal"):
            links += list(zip(versions, versions[1:]))
        if t["kind"] == "chain":
            links += [(s, t["current"]) for s in versions[:-2]]
        if t["kind"] not in ("chain", "reversal"):
            links += [(s, t["current"]) for s in versions[:-1]]
        for old, new in dict.fromkeys(links):
            label = "PARTIAL_UPDATE" if t["kind"] == "partial" else "UPDATE"
            rows.append(pair(text[old], text[new], label, f"timeline:{t['kind']}", f"{family_prefix}-{t['id']}", source))
        if controls and t["kind"] == "control":
            for later in (m["id"] for m in t["memories"] if when[m["id"]] > when[t["current"]]):
                rows.append(pair(text[t["current"]], text[later], "COMPATIBLE", "timeline:control",
                                 f"{family_prefix}-{t['id']}", source))
    return rows


def split_families(rows: list[dict]) -> set[str]:
    """The val families: a seeded search for the family set nearest 15 % of every label."""
    by_family: dict[str, Counter] = defaultdict(Counter)
    for r in rows:
        by_family[r["family"]][r["label"]] += 1
    totals = Counter(r["label"] for r in rows)
    families = sorted(by_family)
    rng = random.Random(SEED)
    best, best_cost = None, float("inf")
    for _ in range(SPLIT_TRIALS):
        rng.shuffle(families)
        val: list[str] = []
        counts: Counter = Counter()
        for family in families:
            if sum(counts.values()) >= VAL_SHARE * len(rows):
                break
            val.append(family)
            counts.update(by_family[family])
        cost = sum(abs(counts[label] / totals[label] - VAL_SHARE) for label in RELATIONS)
        if cost < best_cost:
            best, best_cost = set(val), cost
    return best


def swapped(rows: list[dict]) -> list[dict]:
    return [pair(r["new"], r["existing"], r["label"], r["category"], r["family"], r["source"], "swap")
            for r in rows if r["label"] in SYMMETRIC and r["category"] not in NOT_SYMMETRIC_CATEGORIES]


def heldout_pairs() -> set[tuple[str, str]]:
    """Normalised (existing, new) of every frozen held-out pair, used only to keep them out of training."""
    return {(norm_key(row["existing"]), norm_key(row["new"])) for path in HELDOUT_PAIRS
            for row in map(json.loads, path.read_text(encoding="utf-8").splitlines()) if row}


def texts_of(rows: list[dict]) -> set[str]:
    return {norm_key(r[k]) for r in rows for k in ("existing", "new")}


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main() -> int:
    handwritten = load_written()
    val_families = split_families(handwritten)
    val = [r for r in handwritten if r["family"] in val_families]
    train_hw = [r for r in handwritten if r["family"] not in val_families]

    val_texts = texts_of(val)
    dedup, dedup_skipped = load_dedup_pairs()
    timelines = load_timelines()
    handwritten_2 = load_written(HANDWRITTEN_2, "handwritten2")
    handwritten_3 = load_written(HANDWRITTEN_3, "handwritten3") if HANDWRITTEN_3.is_file() else []
    lookalike = load_written(LOOKALIKE, "lookalike") if LOOKALIKE.is_file() else []
    contrast = load_written(CONTRAST, "contrast") if CONTRAST.is_file() else []
    qualifier = load_written(QUALIFIER, "qualifier") if QUALIFIER.is_file() else []
    single_value = load_written(SINGLE_VALUE, "single_value") if SINGLE_VALUE.is_file() else []
    generated = load_written(GENERATED, "generated")
    scored_heldout = load_scored_heldout() + [row for path in SCORED_TIMELINES
                                              for row in load_timelines(path, "scored_heldout", "scored", controls=True)]
    val_compatible = load_written(VAL_COMPATIBLE, "generated")
    extra, dropped = [], Counter()
    seen_pairs = {(norm_key(r["existing"]), norm_key(r["new"])) for r in handwritten}
    # The later sources come after the earlier ones, so adding them leaves the earlier sources' rows as they were.
    heldout = heldout_pairs()
    earlier = dedup + timelines + handwritten_2 + generated + handwritten_3 + scored_heldout + lookalike + contrast
    probe_texts = texts_of([json.loads(line) for path in PROBES
                            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()])
    later = qualifier + single_value
    left_out = set(LEFT_OUT_FAMILIES) | {r["family"] for r in later if texts_of([r]) & probe_texts}
    for r in earlier + later:
        key = (norm_key(r["existing"]), norm_key(r["new"]))
        if r["family"] in left_out:
            dropped[f"{r['source']}: family holds a check's text"] += 1
        elif key in heldout or key[::-1] in heldout:
            dropped[f"{r['source']}: equals a held-out pair"] += 1
        elif norm_key(r["existing"]) in val_texts or norm_key(r["new"]) in val_texts:
            dropped[f"{r['source']}: shares a text with val"] += 1
        elif key in seen_pairs:
            dropped[f"{r['source']}: repeats a pair"] += 1
        else:
            seen_pairs.add(key)
            extra.append(r)
    in_heldout = [r for r in train_hw if (norm_key(r["existing"]), norm_key(r["new"])) in heldout
                  or (norm_key(r["new"]), norm_key(r["existing"])) in heldout]
    dropped["handwritten: equals a held-out pair"] = len(in_heldout)
    train = [r for r in train_hw if r not in in_heldout] + extra
    keys = {(norm_key(r["existing"]), norm_key(r["new"])) for r in train}
    turned = [r for r in swapped(train) if (norm_key(r["existing"]), norm_key(r["new"])) not in keys]
    dropped["swap: the reverse pair is already there"] = len(swapped(train)) - len(turned)
    train += turned

    # No family and no normalised text in both splits.
    assert not {r["family"] for r in train} & {r["family"] for r in val}
    assert not texts_of(train) & val_texts, sorted(texts_of(train) & val_texts)[:5]
    assert len({(norm_key(r["existing"]), norm_key(r["new"])) for r in train}) == len(train)
    assert all(r["label"] in RELATIONS for r in train + val)
    # The development check shares no family or text with train, nor any text with val.
    assert not {r["family"] for r in train} & {r["family"] for r in val_compatible}
    assert not texts_of(train) & texts_of(val_compatible), sorted(texts_of(train) & texts_of(val_compatible))[:5]
    assert not val_texts & texts_of(val_compatible)
    assert {r["label"] for r in val_compatible} == {"COMPATIBLE"}
    # The sources added after the probes were written bring none of their texts. (One single-value probe memory, "The
    # team standup is at 9:30", was already a text of the hand-written pairs, in train and val, when the lead wrote it.)
    later_sources = {r["source"] for r in later}
    assert not texts_of([r for r in train if r["source"] in later_sources]) & probe_texts

    write_jsonl(HERE / "train.jsonl", train)
    write_jsonl(HERE / "val.jsonl", val)
    summary = {
        "train": len(train), "val": len(val), "val_families": len(val_families),
        "val_compatible": len(val_compatible),
        "train_families": len({r["family"] for r in train}),
        "by_label": {split: dict(Counter(r["label"] for r in rows)) for split, rows in
                     (("train", train), ("val", val))},
        "by_source": dict(Counter((r["source"], r.get("augmented", "")) for r in train).items()),
        "dedup_pairs_skipped_different": dedup_skipped,
        "extra_dropped": dict(dropped),
    }
    print(json.dumps({k: (v if not isinstance(v, dict) else {str(kk): vv for kk, vv in v.items()})
                      for k, v in summary.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
