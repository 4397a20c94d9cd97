"""Prompt texts built on compile_context: an architecture briefing for a component, a bug-investigation context for a symptom."""

from __future__ import annotations

from memory_daemon.context.preflight import ContextCompiler

BRIEFING_BUDGET = 1200


def architecture_briefing(compiler: ContextCompiler, namespace: str, component: str) -> str:
    compiled = compiler.compile(namespace, f"{component} architecture", max_tokens=BRIEFING_BUDGET,
                                episode_kinds=("invariant", "adr", "decision", "migration"))
    return ("You are about to work on this component. What follows is what is true now: its active facts, "
            "the invariants and decisions that concern it, and related memories. Superseded and retracted facts "
            "are left out. Cite the ids in brackets when you rely on a line.\n\n" + compiled.markdown)


def bug_investigation_context(compiler: ContextCompiler, namespace: str, symptom: str) -> str:
    compiled = compiler.compile(namespace, symptom, max_tokens=BRIEFING_BUDGET,
                                episode_kinds=("bug_root_cause", "incident", "invariant"))
    return ("You are investigating this symptom. What follows are known root causes and incidents that share its "
            "words, the invariants that may be broken, and the current facts about the components it names. "
            "Cite the ids in brackets when you rely on a line.\n\n" + compiled.markdown)
