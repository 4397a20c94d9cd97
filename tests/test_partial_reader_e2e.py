"""search_memory and compile_context through a real proxy: of a memory and a partial update that changed one of its
details, the partial-update reader puts first the one the question asks about, and the context of a question about
the changed detail leaves the older memory out, while one about an unchanged detail keeps it. Without the reader
(`[activation] partial_model = false`) the cosine margin orders them, and every context shows both."""

from __future__ import annotations

import pytest

from conftest import mcp_session, running_daemon, payload

pytestmark = pytest.mark.anyio

# Written for this test; none of it is in the reader's training data (models/partial/data).
OLDER = "Quarterly planning day is on 14 March at the Lindqvist Hotel, catering by Maple & Rye, agenda from Sunniva."
NEWER = "Planning day catering got switched to Bramble Kitchen."
CHANGED = "Who is doing the food for the planning day?"
UNCHANGED = "Where is the quarterly planning day being held?"


async def _save_both(host) -> tuple[str, str]:
    old = payload(await host.call_tool("save_memory", {"content": OLDER}))["memory"]
    new = payload(await host.call_tool("save_memory", {"content": NEWER}))
    assert new["memory"]["meta"]["partially_updates"] == old["id"], new  # the update is linked as partial
    assert new["superseded_memories"] == [], new
    return old["id"], new["memory"]["id"]


async def _ranked(host, query: str) -> list[dict]:
    return payload(await host.call_tool("search_memory", {"query": query}))["hits"]


async def _context(host, task: str) -> list[str]:
    reply = payload(await host.call_tool("compile_context", {"task": task, "max_tokens": 350}))
    return [item["id"] for item in reply.get("items", []) if item["kind"] == "memory"]


async def test_the_question_decides_which_of_a_memory_and_its_partial_update_answers(module_daemon):
    async with mcp_session(module_daemon.address, "partial-reader") as host:
        old, new = await _save_both(host)
        changed = await _ranked(host, CHANGED)
        assert [h["memory"]["id"] for h in changed][:2] == [new, old], changed
        assert [h["signal_scores"]["partial"] for h in changed[:2]] == [1.0, 0.0], changed
        unchanged = await _ranked(host, UNCHANGED)
        assert [h["memory"]["id"] for h in unchanged][:2] == [old, new], unchanged
        scores = [h["score"] for h in changed + unchanged]
        assert scores[:len(changed)] == sorted(scores[:len(changed)], reverse=True), "hits stay in score order"
        # The older memory holds only the outdated caterer: left out of a context about the food, kept for the place.
        assert await _context(host, CHANGED) == [new]
        assert old in await _context(host, UNCHANGED)


@pytest.fixture(scope="module")
def daemon_without_reader():
    yield from running_daemon(CORTEXD_PARTIAL_MODEL="false")


async def test_without_the_reader_every_context_shows_both(daemon_without_reader):
    async with mcp_session(daemon_without_reader.address, "partial-off") as host:
        old, new = await _save_both(host)
        assert not any("partial" in h["signal_scores"] for h in await _ranked(host, CHANGED))
        assert set(await _context(host, CHANGED)) == {old, new}
