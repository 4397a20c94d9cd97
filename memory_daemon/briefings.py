"""Prompt texts built from the graph: an architecture briefing for a component, a bug-investigation context for a symptom."""

from __future__ import annotations

import re

from memory_daemon.errors import InvalidArgument, NotFound
from memory_daemon.graph import GraphService
from memory_daemon.store.graph import EpisodeRow, FactRow
from memory_daemon.timefmt import format_iso

MAX_EPISODES = 8
MAX_FACTS = 25
_WORD = re.compile(r"[a-z0-9_]{3,}")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _matching(episodes: list[EpisodeRow], query: str) -> list[EpisodeRow]:
    """Episodes sharing words with the query, most shared first (newest first among equals)."""
    wanted = _words(query)
    scored = [(len(wanted & _words(f"{e.title} {e.body} {' '.join(e.files)}")), e) for e in episodes]
    return [e for score, e in sorted(scored, key=lambda x: -x[0]) if score][:MAX_EPISODES]


def _fact_line(fact: FactRow, names: dict[str, str]) -> str:
    return (f"- {names.get(fact.subject_id, fact.subject_id)} {fact.predicate} {fact.object_value} "
            f"(since {format_iso(fact.valid_from)[:10]}) [FACT:{fact.id}]")


def _episode_line(episode: EpisodeRow) -> str:
    body = f": {episode.body.strip()}" if episode.body.strip() else ""
    return f"- {episode.kind} {format_iso(episode.occurred_at)[:10]} {episode.title}{body} [EP:{episode.id}]"


def _facts_about(graph: GraphService, namespace: str, text: str) -> list[FactRow]:
    """Active facts about every known entity named in the text (the whole text first, then its words)."""
    facts: dict[str, FactRow] = {}
    for candidate in [text, *re.findall(r"[\w./-]+", text)]:
        try:
            view = graph.query_entity(namespace, candidate, 1, False)
        except (NotFound, InvalidArgument):  # most words are not entities
            continue
        for fact in (*view.active, *view.edges):
            facts.setdefault(fact.id, fact)
    return list(facts.values())[:MAX_FACTS]


def _section(title: str, lines: list[str], empty: str) -> str:
    return f"## {title}\n" + ("\n".join(lines) if lines else f"_{empty}_") + "\n"


def architecture_briefing(graph: GraphService, namespace: str, component: str) -> str:
    facts = _facts_about(graph, namespace, component)
    names = graph.entity_names(namespace, [f.subject_id for f in facts])
    invariants = _matching(graph.recent_episodes(namespace, 500, ("invariant",)), component)
    decisions = _matching(graph.recent_episodes(namespace, 500, ("adr", "decision", "migration")), component)
    return (
        f"# Architecture briefing: {component}\n\n"
        "Current facts only: superseded and retracted facts are left out. Cite the ids in brackets.\n\n"
        + _section("Active facts", [_fact_line(f, names) for f in facts], "no recorded facts about this component")
        + "\n" + _section("Invariants", [_episode_line(e) for e in invariants], "no recorded invariants")
        + "\n" + _section("Decisions and migrations", [_episode_line(e) for e in decisions], "none recorded")
    )


def bug_investigation_context(graph: GraphService, namespace: str, symptom: str) -> str:
    causes = _matching(graph.recent_episodes(namespace, 500, ("bug_root_cause", "incident")), symptom)
    invariants = _matching(graph.recent_episodes(namespace, 500, ("invariant",)), symptom)
    facts = _facts_about(graph, namespace, symptom)
    names = graph.entity_names(namespace, [f.subject_id for f in facts])
    return (
        f"# Bug investigation context: {symptom}\n\n"
        "Known root causes and incidents that resemble the symptom, the invariants that may be broken, and the "
        "current facts about the components it names. Cite the ids in brackets.\n\n"
        + _section("Similar root causes and incidents", [_episode_line(e) for e in causes], "none recorded")
        + "\n" + _section("Invariants", [_episode_line(e) for e in invariants], "none that match")
        + "\n" + _section("Active facts", [_fact_line(f, names) for f in facts], "none about the components named")
    )
