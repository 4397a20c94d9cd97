"""Dedup and update decisions from the relation model: which of its nearest memories a new text repeats or replaces."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from preprocessing.dedup import (
    DedupAction, DedupCandidate, DeduplicationChecker, DedupVerdict, announces_change, names_other_instance,
    same_words, states_a_new_number,
)

from preprocessing.relation_model import Relation

if TYPE_CHECKING:  # the model (and onnxruntime) is loaded by whoever builds the judge
    from preprocessing.relation_model import RelationModel

# Cosine below which a pair goes to the model at all. On the relation training pairs (models/relation/data/train.jsonl),
# 99.7 % of duplicates, 95.6 % of updates and 96.8 % of partial updates are at or above 0.30, and 55 % of the
# unrelated ones below it; every pair under the floor is answered UNRELATED without the cross-encoder's cost.
CANDIDATE_FLOOR = 0.30
# The import's update check runs in the background, where no one waits on a pair's 4.5 ms: it reads from 0.15 (99.9 %,
# 99.4 % and 99.6 % of them; 32 % of the unrelated below). The pairs it adds are loose neighbours, which is safe only
# because a text replaces one memory and that memory's versions, not every neighbour it reads as changed (versions_of).
# A save reading from 0.15 took 15-20 ms more at p50 in a 400-memory namespace (33-38 ms against 49-53 ms).
IMPORT_CANDIDATE_FLOOR = 0.15
MAX_PAIRS = 8  # pairs per new text in one model call: a pair costs about 4.5 ms of CPU
UPDATES = ("UPDATE", "PARTIAL_UPDATE")
VERSIONS = ("DUPLICATE", *UPDATES)  # what one memory is to another version of the same statement
MAX_EARLIER_READ = 2  # earlier versions of a change-worded memory read to tell a chain's next step from a neighbour
SURE_UPDATE = 0.9  # the confidence at which an UPDATE retires a memory that was not the best match (and an import's)
# Pairs read recently: a host analyses a message and then saves it, and the save meets the same neighbours.
REMEMBERED_PAIRS = 2048
PAIR_KEY_CHARS = 1000


@dataclass(frozen=True)
class JudgedPair:
    """One candidate memory and what the new text is to it: the model's reading, or the number rules' when the model
    read a pair whose numbers differ as a duplicate or an unsure update (`overruled` says so)."""

    candidate: DedupCandidate
    relation: Relation
    overruled: str = ""


# What the number rules' verdict means as a relation, when they overrule a DUPLICATE.
# A merge would drop the differing number, so a pair the rules would merge is kept as two memories.
_RULE_RELATIONS = {DedupAction.MERGE: "COMPATIBLE", DedupAction.UPDATE_CANDIDATE: "UPDATE",
                   DedupAction.REVIEW: "COMPATIBLE", DedupAction.NEW: "UNRELATED"}


class RelationJudge:
    """check(new_text, candidates) -> DedupVerdict, with the DedupChecker's interface: MERGE only on DUPLICATE,
    UPDATE_CANDIDATE on UPDATE or PARTIAL_UPDATE, NEW otherwise. A model failure answers NEW with `degraded` set."""

    def __init__(self, model: RelationModel, floor: float = CANDIDATE_FLOOR, max_pairs: int = MAX_PAIRS,
                 overrule_numbers: bool = True, guard_changed_memories: bool = True,
                 states_change: Callable[[str], bool] = announces_change,
                 worded_as_change: Callable[[str], bool] = announces_change,
                 names_other_holder: Callable[[str, str], bool] | None = None) -> None:
        self.model = model
        self.floor = floor
        self.max_pairs = max_pairs
        self.overrule_numbers = overrule_numbers  # off: the model's reading stands even where a new number appears
        self.guard_changed_memories = guard_changed_memories  # off: an UPDATE of a memory that is a change stands
        self.states_change = states_change  # does a new text say it changes something (the intent model, or rules)
        self.worded_as_change = worded_as_change  # is a memory a statement of change (the rules, with the intent model)
        # (memory, new text) -> does the new text state its fact of another holder (holders.HolderReader; None: unread)
        self.names_other_holder = names_other_holder
        self._read: OrderedDict[tuple[str, str], Relation] = OrderedDict()
        self._lock = threading.Lock()
        self._rules = DeduplicationChecker()

    def forget_texts(self, texts: Sequence[str]) -> None:
        """Drop remembered pairs that hold any of the texts (forgotten memories), or, for a text longer than a key
        keeps, its beginning."""
        heads = [t[:PAIR_KEY_CHARS] for t in texts if t]
        with self._lock:
            for pair in [p for p in self._read if any(h in p[0] or h in p[1] for h in heads)]:
                del self._read[pair]

    def judge(self, new_text: str, candidates: Sequence[DedupCandidate],
              floor: float | None = None) -> list[JudgedPair]:
        """The model's reading of each candidate at or above the floor (the closest max_pairs), closest first. A
        caller that chose the candidates by something other than meaning (what "it" may refer to) passes floor=-1."""
        floor = self.floor if floor is None else floor
        close = sorted((c for c in candidates if c.similarity >= floor), key=lambda c: -c.similarity)
        return self.judge_pairs([(new_text, c) for c in close[: self.max_pairs]])

    def judge_pairs(self, pairs: Sequence[tuple[str, DedupCandidate]]) -> list[JudgedPair]:
        """Each (new text, candidate) pair read as `judge` reads it, every unread pair in one model call: pairs of
        several new texts cost less together (four short pairs: 14 ms in one call, 23 ms in four)."""
        # The model reads at most 96 word pieces of a pair, far fewer than these characters: the key is exact and small.
        keys = [(c.text[:PAIR_KEY_CHARS], new_text[:PAIR_KEY_CHARS]) for new_text, c in pairs]
        with self._lock:
            known = {key: self._read[key] for key in keys if key in self._read}
        unread = [key for key in dict.fromkeys(keys) if key not in known]
        if unread:
            read = dict(zip(unread, self.model.classify(unread), strict=True))
            self._remember(read)
            known.update(read)
        return [self._checked(JudgedPair(c, known[key]), new_text) for (new_text, c), key in zip(pairs, keys, strict=True)]

    def _checked(self, pair: JudgedPair, new_text: str) -> JudgedPair:
        """The model's reading, unless one of three checks overrules it. An update of another environment's or holder's
        fact is none (below). A memory worded as a change is not retired by a statement that says no change (below).
        And a merge must not lose a value: the model can read "runs on Python 3.9" and "… 3.10" as one statement (it
        sees digits poorly), so a DUPLICATE, or an UPDATE it is not sure of, whose new text writes a number in digits
        that the memory does not hold goes to the rules, which compare numbers, versions and times (an
        UPDATE_CANDIDATE there, or keep both). A paraphrase that spells the same numbers in words ("forty thousand",
        "half past nine") stays the model's."""
        relation = pair.relation
        if relation.label in UPDATES and (names_other_instance(new_text, pair.candidate.text) or (
                self.names_other_holder is not None and self.names_other_holder(pair.candidate.text, new_text))):
            # The model reads a change of the same attribute for another environment or holder as an update, with
            # confidence 0.99-1.00, however many such pairs it was trained on ("cut the sandbox limit to 100 req per
            # min" after "Production API rate limit: 1,000 requests per minute"; "theo's allergy retest came back
            # clear" after "I'm allergic to penicillin"): it would retire the user's own, unchanged fact.
            return JudgedPair(pair.candidate, Relation("COMPATIBLE", relation.probabilities.get("COMPATIBLE", 0.0),
                                                       relation.probabilities),
                              f"{relation.label} overruled: the new text is about another instance or holder")
        if self.guard_changed_memories and relation.label == "UPDATE" and self.is_a_change(pair.candidate) \
                and not self.states_change(new_text) and not self.updates_an_earlier_version(pair.candidate, new_text):
            # The model's one known systematic error: after a memory that is a change or a correction ("Correction:
            # Sara's birthday is actually 21 May", "Scaled it up to 8"), it reads any later statement on the subject
            # ("Sara likes dark chocolate", "worker memory limit is 1 GiB per pod") as an update, with confidence
            # 0.87-1.00. Such a pair keeps both memories unless the new text says it changes something too ("the
            # build image went from Node 20 to 22"), or it is the next step of the change's chain
            # (updates_an_earlier_version).
            return JudgedPair(pair.candidate, Relation("COMPATIBLE", relation.probabilities.get("COMPATIBLE", 0.0),
                                                       relation.probabilities),
                              "UPDATE overruled: the memory is a change and the new text states none")
        unsure_update = relation.label == "UPDATE" and relation.confidence < SURE_UPDATE
        if not self.overrule_numbers or not (relation.label == "DUPLICATE" or unsure_update) \
                or not states_a_new_number(new_text, pair.candidate.text):
            return pair
        verdict = self._rules.compare(new_text, pair.candidate)
        label = _RULE_RELATIONS[verdict.action]
        return JudgedPair(pair.candidate, Relation(label, relation.probabilities.get(label, 0.0) if label != "UPDATE"
                                                   else 1.0, relation.probabilities),
                          f"{relation.label} overruled, numbers differ; the rules read it as {verdict.action.value}")

    def is_a_change(self, memory: DedupCandidate) -> bool:
        """Whether a stored memory states a change: it superseded or revised another (`memory.earlier`, which the
        store knows whatever its words: "sorry, wrong box: …", "Halved that today"), or it is worded as one."""
        return bool(memory.earlier) or self.worded_as_change(memory.text)

    def updates_an_earlier_version(self, changed: DedupCandidate, new_text: str) -> bool:
        """Whether the new text is a sure UPDATE, read alone, of one of the changed memory's earlier versions
        (`changed.earlier`: what it superseded or revised in part) that is not worded as a change itself
        (MAX_EARLIER_READ of them, newest first): then it is the next step of that chain ("Yesterday's deploy put
        auth on Node 20" after "The auth service runs on Node 16" and "Auth service upgraded to Node 18"), not merely
        another statement on the change's subject, which the model does not read as changing what came before."""
        plain = [text for text in changed.earlier if not self.worded_as_change(text)][:MAX_EARLIER_READ]
        for text in plain:
            relation = self._read_alone(text, new_text)
            if relation.label == "UPDATE" and relation.confidence >= SURE_UPDATE:
                return True
        return False

    def _read_alone(self, existing: str, new_text: str) -> Relation:
        """The model's reading of one pair, in a call of its own (int8 activations are scaled per call), remembered."""
        pair = (existing[:PAIR_KEY_CHARS], new_text[:PAIR_KEY_CHARS])
        with self._lock:
            known = self._read.get(pair)
        if known is not None:
            return known
        relation = self.model.classify([pair])[0]
        self._remember({pair: relation})
        return relation

    def _remember(self, read: dict[tuple[str, str], Relation]) -> None:
        with self._lock:
            self._read.update(read)
            while len(self._read) > REMEMBERED_PAIRS:
                self._read.popitem(last=False)

    def versions_of(self, replaced: DedupCandidate, others: Sequence[DedupCandidate]) -> list[DedupCandidate]:
        """Of the other memories a text is sure it updates, those the model reads as versions of the one it replaces
        (an update in whole or in part, or a restatement, either way round, at SURE_UPDATE or more). The model reads
        a statement of change as a sure update of several neighbours ("her swimming lessons are now Saturdays" of
        "Maya's piano lessons are on Tuesdays" too): a statement replaces one statement with all its versions, not
        the neighbours it happens to read as changed."""
        if not others:
            return []
        later = self.judge(replaced.text, others, floor=-1.0)  # the replaced memory as a newer version of each
        earlier = [self.judge(other.text, [replaced], floor=-1.0)[0] for other in others]  # and as an older one
        versions = {pair.candidate.memory_id for pair in later if is_version(pair)}
        versions |= {other.memory_id for other, pair in zip(others, earlier, strict=True) if is_version(pair)}
        return [other for other in others if other.memory_id in versions]

    def replaced_with_versions(self, replaced: DedupCandidate, sure: Sequence[JudgedPair]) -> list[str]:
        """The ids a text replaces: `replaced`, then those of the other sure updates that are its versions
        (versions_of). A failing model replaces the one memory it was sure of."""
        others = [p.candidate for p in sure if p.candidate.memory_id != replaced.memory_id]
        try:
            versions = self.versions_of(replaced, others)
        except Exception:  # noqa: BLE001 - a failing model must never block a save or an import
            versions = []
        return [replaced.memory_id, *(c.memory_id for c in versions)]

    def check(self, new_text: str, candidates: Sequence[DedupCandidate]) -> DedupVerdict:
        if not candidates:
            return DedupVerdict(DedupAction.NEW, None, 0.0, ("no similar memories",))
        copy = next((c for c in candidates if same_words(new_text, c.text)), None)
        if copy is not None:
            return DedupVerdict(DedupAction.MERGE, copy.memory_id, copy.similarity, ("same text",), "DUPLICATE")
        closest = max(c.similarity for c in candidates)
        try:
            judged = self.judge(new_text, candidates)
        except Exception as error:  # noqa: BLE001 - a failing model must never block a save
            return DedupVerdict(DedupAction.NEW, None, closest, (f"relation model failed: {error}",),
                                degraded=f"relation model failed: {type(error).__name__}: {error}")
        verdict = verdict_of(judged, closest)
        if verdict.action != DedupAction.UPDATE_CANDIDATE or verdict.relation != "UPDATE":
            return verdict
        replaced = next(p.candidate for p in judged if p.candidate.memory_id == verdict.memory_id)
        return replace(verdict, also_updates=tuple(self.replaced_with_versions(replaced, sure_updates(judged))[1:]))


def verdict_of(judged: Sequence[JudgedPair], closest: float) -> DedupVerdict:
    """An existing duplicate first (nothing new to store), then the likeliest update, else NEW."""
    duplicates = [p for p in judged if p.relation.label == "DUPLICATE"]
    if duplicates:
        best = max(duplicates, key=lambda p: p.relation.probabilities["DUPLICATE"])
        return _verdict(DedupAction.MERGE, best)
    updates = [p for p in judged if p.relation.label in UPDATES]
    if updates:
        # One memory (check() adds only its versions): the model reads a statement of change as a sure update of
        # several neighbours ("her swimming lessons are now Saturdays" of "Maya's piano lessons are on Tuesdays"
        # too), and the likeliest is the one it changes.
        best = max(updates, key=lambda p: sum(p.relation.probabilities[label] for label in UPDATES))
        return _verdict(DedupAction.UPDATE_CANDIDATE, best)
    if not judged:
        return DedupVerdict(DedupAction.NEW, None, closest, (f"no memory within cosine {CANDIDATE_FLOOR:.2f}",))
    best = max(judged, key=lambda p: p.candidate.similarity)
    said = f"closest memory: relation model {best.overruled}" if best.overruled else \
        f"closest memory is {best.relation.label} ({best.relation.confidence:.2f})"
    # The closest memory's label says the model decided (the save then asks no rule whether the text updates one).
    return DedupVerdict(DedupAction.NEW, None, best.candidate.similarity, (said,), best.relation.label)


def is_version(pair: JudgedPair) -> bool:
    """The pair's two texts are versions of one statement, by the model's reading at SURE_UPDATE or more."""
    return pair.relation.label in VERSIONS and sum(pair.relation.probabilities[v] for v in VERSIONS) >= SURE_UPDATE


def sure_updates(judged: Sequence[JudgedPair],
                 overruled_counts: Callable[[JudgedPair], bool] = lambda pair: False) -> list[JudgedPair]:
    """The pairs read as whole updates at SURE_UPDATE or more, most confident first: the model's own readings, and
    those the number rules made updates where `overruled_counts` accepts them."""
    sure = [p for p in judged if p.relation.label == "UPDATE" and p.relation.confidence >= SURE_UPDATE
            and (not p.overruled or overruled_counts(p))]
    return sorted(sure, key=lambda p: -p.relation.confidence)


def _verdict(action: DedupAction, pair: JudgedPair) -> DedupVerdict:
    relation = pair.relation
    said = f"relation model: {relation.label} ({relation.confidence:.2f})" if not pair.overruled else \
        f"relation model: {pair.overruled}"
    return DedupVerdict(action, pair.candidate.memory_id, pair.candidate.similarity,
                        (said, f"cosine {pair.candidate.similarity:.2f}"), relation.label)
