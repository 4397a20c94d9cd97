"""search_memory through a real proxy: the relevance model reranks the best hits, so of two memories the fused signals
barely tell apart the one that answers comes first, and with the reranker off (rerank_depth 0) it does not."""

from __future__ import annotations

import json
import os

import pytest

from conftest import Daemon, mcp_session

pytestmark = pytest.mark.anyio

# Written for this test. The look-alike shares the question's words ("expense claims", "500 euros", "approved")
# and is saved later; it answers another question (claims under the limit).
ANSWER = "Expense claims over 500 euros are approved by Ingrid Solberg."
LOOK_ALIKE = "Expense claims under 500 euros are approved automatically with a receipt."
QUESTION = "Who approves expense claims over 500 euros?"
# Off topic for the question, though they share its subject: the reranker reads them as such.
KITCHEN = ["Our team has kitchen clean-up duty in the first week of every month.",
           "The office kitchen dishwasher is broken until Friday.",
           "Kitchen supplies for the team are ordered by Grete every month."]
KITCHEN_QUESTION = "Which week of the month is my team on kitchen duty?"


def payload(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def _hits(daemon, namespace: str, memories: list[str], question: str) -> list[dict]:
    async with mcp_session(daemon.address, namespace) as host:
        for text in memories:
            payload(await host.call_tool("save_memory", {"content": text}))
        return payload(await host.call_tool("search_memory", {"query": question}))["hits"]


def _texts(hits: list[dict]) -> list[str]:
    return [hit["memory"]["content"] for hit in hits]


async def test_the_reranker_puts_the_answer_above_a_look_alike_and_reports_its_reading(module_daemon):
    hits = await _hits(module_daemon, "rerank-on", [ANSWER, LOOK_ALIKE], QUESTION)
    assert _texts(hits)[:2] == [ANSWER, LOOK_ALIKE], hits
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True), "the reported score is the reranked one, in order"
    assert all(0.0 <= hit["signal_scores"]["rerank"] <= 1.0 for hit in hits), hits

    kitchen = await _hits(module_daemon, "rerank-kitchen", KITCHEN, KITCHEN_QUESTION)
    assert _texts(kitchen)[0] == KITCHEN[0], kitchen
    readings = {hit["memory"]["content"]: hit["signal_scores"]["rerank"] for hit in kitchen}
    assert readings[KITCHEN[0]] > 0.5 > max(readings[KITCHEN[1]], readings[KITCHEN[2]]), readings


async def test_without_the_reranker_the_look_alike_comes_first(workdir):
    daemon = Daemon(workdir, env={**os.environ, "CORTEXD_RETRIEVAL_RERANK_DEPTH": "0"}).start()
    try:
        hits = await _hits(daemon, "rerank-off", [ANSWER, LOOK_ALIKE], QUESTION)
        assert _texts(hits)[:2] == [LOOK_ALIKE, ANSWER], hits
        assert not any("rerank" in hit["signal_scores"] for hit in hits), hits
    finally:
        daemon.stop()
