"""Passive capture: a tool call the proxy observed becomes a tool_observation episode, and what it states, memories."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

from memory_daemon.core.errors import CortexdError, InvalidArgument
from memory_daemon.core.validation import loaded_json
from memory_daemon.graph.service import OBSERVATION_KIND, EpisodeInput, GraphService
from memory_daemon.memory.service import AnalyzeItem, MemoryService, NewMemory
from memory_daemon.store import MemoryRow
from proxy_server.redaction import MARKER_START, is_marker_only, redact_text, redact_value

SAVED_ACTIONS = ("MUST_SAVE", "SHOULD_SAVE")  # and only when the analysis says should_save: conservative on purpose
MAX_NAME_CHARS = 128
MAX_ARGUMENTS_CHARS = 32 * 1024
MAX_RESULT_CHARS = 4000
MAX_SENTENCES = 12  # analysed per call: an issue body is a few sentences, a pasted log is not worth reading
MAX_SENTENCE_CHARS = 500
MIN_SENTENCE_WORDS = 4
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
_LIST_MARKER = re.compile(r"^\s*(?:[-*+>#]+|\d+[.)])\s+")


@dataclass(frozen=True)
class Observation:
    upstream: str
    tool: str
    arguments_json: str
    result_text: str = ""
    is_error: bool = False

    @property
    def tool_name(self) -> str:
        """The name the host called it by."""
        return f"{self.upstream}__{self.tool}"


@dataclass(frozen=True)
class ObservationOutcome:
    episode_id: str
    memories: tuple[MemoryRow, ...]
    degraded: tuple[str, ...]


def _checked_name(value: str, field_name: str) -> str:
    value = value.strip()
    if not value or len(value) > MAX_NAME_CHARS or not value.isprintable():
        raise InvalidArgument(f"{field_name}: expected 1-{MAX_NAME_CHARS} printable characters")
    return value


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def headline(arguments: dict) -> str:
    """The first line of the first text argument: an issue's title, a commit message's subject."""
    for text in _strings(arguments):
        line = text.strip().splitlines()[0].strip() if text.strip() else ""
        if line and not is_marker_only(line):
            return line[:200]
    return ""


def prose_sentences(value: object) -> Iterator[str]:
    """The sentences of the argument text worth analysing: several words each, no secret left in them."""
    for text in _strings(value):
        for piece in _SENTENCE_END.split(text):
            sentence = _LIST_MARKER.sub("", piece).strip()
            # A sentence that held a secret says nothing worth keeping once the secret is gone.
            if len(sentence.split()) >= MIN_SENTENCE_WORDS and len(sentence) <= MAX_SENTENCE_CHARS \
                    and MARKER_START not in sentence:
                yield sentence


class ObservationRecorder:
    def __init__(self, memories: MemoryService, graph: GraphService) -> None:
        self._memories = memories
        self._graph = graph

    def record(self, namespace: str, observation: Observation) -> ObservationOutcome:
        """Store the call as an episode (redacted again: the proxy is trusted to, not relied on), then save the
        statements its arguments make that analysis would save from a user's message."""
        upstream = _checked_name(observation.upstream, "upstream")
        tool = _checked_name(observation.tool, "tool")
        if len(observation.arguments_json) > MAX_ARGUMENTS_CHARS:
            raise InvalidArgument(f"arguments_json is {len(observation.arguments_json)} characters; "
                                  f"the limit is {MAX_ARGUMENTS_CHARS}")
        arguments = loaded_json(observation.arguments_json or "{}", "arguments_json")
        if not isinstance(arguments, dict):
            raise InvalidArgument("arguments_json must be a JSON object")
        arguments = redact_value(arguments)
        # Cut before redacting: only what is kept needs it, and the work stays bounded whatever was sent.
        result = redact_text(observation.result_text[:MAX_RESULT_CHARS])
        name = f"{upstream}__{tool}"
        sentences = list(dict.fromkeys(prose_sentences(arguments)))[:MAX_SENTENCES]
        title = f"{name}: {headline(arguments)}" if headline(arguments) else name
        body = "\n".join((
            f"tool: {name}",
            f"arguments: {json.dumps(arguments, ensure_ascii=False, sort_keys=True)}",
            f"result{' (error)' if observation.is_error else ''}: {result}",
        ))
        episode, _ = self._graph.record_episode(namespace, EpisodeInput(kind=OBSERVATION_KIND, title=title[:300],
                                                                        body=body), kinds=(OBSERVATION_KIND,))
        if observation.is_error or not sentences:
            return ObservationOutcome(episode.id, (), ())
        try:
            analyses = self._memories.analyze([AnalyzeItem(s, "", namespace) for s in sentences])
        except CortexdError as error:  # models unavailable: the episode is kept, nothing is judged
            return ObservationOutcome(episode.id, (), (f"analysis: {error}",))
        saved, problems = [], []
        for sentence, analysis in zip(sentences, analyses, strict=True):
            if analysis.action in SAVED_ACTIONS and analysis.should_save:
                try:
                    outcome = self._memories.save(namespace, NewMemory(
                        content=sentence, source=f"observation:{name}", context=title[:300],
                        meta={"episode_id": episode.id, "upstream": upstream, "tool": tool}))
                except CortexdError as error:  # one sentence the store refuses does not cost the others
                    problems.append(f"save: {error}")
                    continue
                saved.append(outcome.memory)
        return ObservationOutcome(episode.id, tuple(saved), tuple(problems))
