"""compile_context through a real proxy: of two current memories on one subject that import left unlinked, the older
is left out of the context where the precedence model is sure the newer answers the task now."""

from __future__ import annotations

import pytest

from conftest import mcp_session, payload

pytestmark = pytest.mark.anyio

# Written for this test. Import leaves the two unlinked: the newer changes one detail of the older (a partial update
# that names no change marker import reads), so both stay current.
OLDER = "Checkout service config: timeout 600 ms, 2 retries, pool size 20."
NEWER = "After last week's 504s we raised the checkout timeout to 1200 ms."


@pytest.fixture(scope="module")
def daemon(module_daemon):
    records = [{"id": "newer", "text": NEWER, "timestamp": "2026-04-10T09:00:00Z"},
               {"id": "older", "text": OLDER, "timestamp": "2026-03-10T09:00:00Z"}]
    with module_daemon.client("context-precedence") as client:
        reply = client.import_records(records)
        assert not reply.errors and client.wait_for_update_checks(120) == 0
        assert not any(m.superseded_by for m in client.export_memories(limit=10).memories), "import left them unlinked"
    return module_daemon


async def _context(daemon, task: str) -> str:
    async with mcp_session(daemon.address, "context-precedence") as host:
        return payload(await host.call_tool("compile_context", {"task": task}))["markdown"]


async def test_the_older_memory_is_left_out_where_the_newer_answers_the_task(daemon):
    context = await _context(daemon, "What is the checkout service's timeout?")
    assert NEWER in context and OLDER not in context, context


async def test_a_detail_the_newer_memory_did_not_touch_keeps_the_older_one(daemon):
    context = await _context(daemon, "What pool size does checkout use?")
    assert OLDER in context, context


@pytest.mark.xfail(strict=True, reason="known wrong drop: the precedence model is sure (0.982) the newer memory answers "
                                        "how many retries, which only the older one states (README, Quality, "
                                        "\"Session 46, D\")")
async def test_the_retries_the_newer_memory_did_not_touch_keep_the_older_one(daemon):
    context = await _context(daemon, "How many retries does the checkout service make?")
    assert OLDER in context, context
