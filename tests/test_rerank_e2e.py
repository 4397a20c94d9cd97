"""search_memory through a real proxy: by default (`[retrieval] rerank_depth = 2`) the relevance model reranks the
best two hits, so of two memories the fused signals barely tell apart the one that answers comes first; with
`rerank_depth = 0` the fused order stands."""

from __future__ import annotations

import pytest

from conftest import mcp_session, running_daemon, payload

pytestmark = pytest.mark.anyio

# Written for this test. The look-alike is another fact about the same CI, shares more of the question's words and
# is saved later; without the reranker it comes first.
ANSWER = "Larkspur's CI runs on Buildkite agents in our own cluster."
LOOK_ALIKE = "The Larkspur CI nightly run uploads its artifacts to the larkspur-builds bucket."
QUESTION = "What does the Larkspur CI run on?"
# The same attribute under another condition: the reranker reads it as no answer.
EXPENSES = ["Expense claims over 500 euros need sign-off from Ingrid Solberg in finance.",
            "Expense claims under 500 euros are approved automatically as long as a receipt is attached."]
EXPENSES_QUESTION = "Who has to sign off my 900 euro travel claim?"


async def _hits(daemon, namespace: str, memories: list[str], question: str) -> list[dict]:
    async with mcp_session(daemon.address, namespace) as host:
        for text in memories:
            payload(await host.call_tool("save_memory", {"content": text}))
        return payload(await host.call_tool("search_memory", {"query": question}))["hits"]


def _texts(hits: list[dict]) -> list[str]:
    return [hit["memory"]["content"] for hit in hits]


@pytest.fixture(scope="module")
def daemon_without_reranker():
    yield from running_daemon(CORTEXD_RETRIEVAL_RERANK_DEPTH="0")


async def test_the_reranker_puts_the_answer_above_a_look_alike_and_reports_its_reading(module_daemon):
    hits = await _hits(module_daemon, "rerank-on", [ANSWER, LOOK_ALIKE], QUESTION)
    assert _texts(hits)[:2] == [ANSWER, LOOK_ALIKE], hits
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True), "the reported score is the reranked one, in order"
    assert all(0.0 <= hit["signal_scores"]["rerank"] <= 1.0 for hit in hits), hits

    expenses = await _hits(module_daemon, "rerank-expenses", EXPENSES, EXPENSES_QUESTION)
    assert _texts(expenses)[0] == EXPENSES[0], expenses
    readings = {hit["memory"]["content"]: hit["signal_scores"]["rerank"] for hit in expenses}
    assert readings[EXPENSES[0]] > 0.5 > readings[EXPENSES[1]], readings


async def test_with_depth_0_the_reranker_is_off_and_the_look_alike_comes_first(daemon_without_reranker):
    hits = await _hits(daemon_without_reranker, "rerank-off", [ANSWER, LOOK_ALIKE], QUESTION)
    assert _texts(hits)[:2] == [LOOK_ALIKE, ANSWER], hits
    assert not any("rerank" in hit["signal_scores"] for hit in hits), hits
