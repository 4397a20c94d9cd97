"""compile_context through a real proxy: where the precedence model is sure the newer of two current memories answers
the task, the older is left out only if the relation judge, reading the same pair, reads an update (not a partial
one): a detail the newer memory left untouched keeps the older one in the context."""

from __future__ import annotations

import pytest

from conftest import mcp_session, payload

pytestmark = pytest.mark.anyio

# Written for this test. Import leaves the two unlinked: the newer changes one detail of the older (a partial update
# that names no change marker import reads), so both stay current. The precedence model is sure (0.98) the newer
# answers even how many retries the service makes, which only the older states (README, Quality, "Session 46, D").
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


@pytest.mark.parametrize("task", ["How many retries does the checkout service make?",
                                  "What pool size does checkout use?"])
async def test_a_detail_the_newer_memory_did_not_touch_keeps_the_older_one(daemon, task):
    context = await _context(daemon, task)
    assert OLDER in context, context
