"""search_memory through a real proxy: a search whose signals bring in fewer than three memories has the relevance
model read the nearest ones under the dense floor, so an answer told in other words than it is asked is found, and a
question nothing answers still gets no hit."""

from __future__ import annotations

import pytest

from conftest import mcp_session, payload

pytestmark = pytest.mark.anyio

# Written for this test. The answer shares no word with the question, and its MiniLM cosine to it (0.24) is under the
# dense floor (0.30): no signal brings it in. The others are about nothing the question asks.
QUESTION = "Which vehicle is parked in my driveway?"
ANSWER = "Picked up a used Skoda Octavia estate last spring."
OTHERS = ["The team standup is at 9:30 on weekdays.", "My sister Oda lives in Porto with her two kids.",
          "I'm allergic to penicillin."]


async def _search(daemon, namespace: str, memories: list[str], question: str) -> list[dict]:
    async with mcp_session(daemon.address, namespace) as host:
        for text in memories:
            payload(await host.call_tool("save_memory", {"content": text}))
        return payload(await host.call_tool("search_memory", {"query": question}))["hits"]


async def test_a_thin_search_finds_the_answer_the_dense_floor_left_out(module_daemon):
    hits = await _search(module_daemon, "thin-search", [ANSWER, *OTHERS], QUESTION)
    assert [hit["memory"]["content"] for hit in hits] == [ANSWER], hits
    assert hits[0]["signal_scores"]["dense"] < 0.3, "it came in under the floor, with its own cosine"
    assert "lexical" not in hits[0]["signal_scores"], hits


async def test_a_question_nothing_answers_still_gets_no_hit(module_daemon):
    assert await _search(module_daemon, "thin-search-none", OTHERS, QUESTION) == []
