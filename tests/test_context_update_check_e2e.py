"""compile_context through a real proxy leaves out a memory that a newer one in the same context wholly updates, even
when the store never linked the two, and keeps both where the newer one revises only part, or is another instance's."""

from __future__ import annotations

import json

import pytest

from conftest import mcp_session

pytestmark = pytest.mark.anyio

# Written for this test. Each case: the older memory, the newer one, a question both answer, and whether the older
# one belongs in the context beside the newer. The newer text reaches the store through edit_memory, which corrects
# a memory's words without an update check: the pair is left unlinked, as import leaves an update of a memory beyond
# the nearest few it reads a record against.
CASES = [
    ("My dentist is Dr. Okafor at Millbrook Dental.", "Switched dentists: I see Dr. Lind at Harbour Smiles now.",
     "Who is my dentist?", False),
    ("Our staging database runs Postgres 14.", "Upgraded the staging database to Postgres 16 last night.",
     "Which Postgres version does the staging database run?", False),
    # A partial update: the room is unchanged, so the older memory still answers part of the question.
    ("The team standup is at 9:30 every morning in room Fir.", "Moved the team standup to 10:15, still in room Fir.",
     "When and where is the team standup?", True),
    # Another instance's change: the staging database is not upgraded by production's upgrade.
    ("The staging database is Postgres 14.", "Upgraded the production database to Postgres 16 last night.",
     "Which Postgres version is the staging database on?", True),
]
PLACEHOLDER = "Picked up a new pair of running shoes at the market on Saturday."


def payload(result) -> dict:
    assert not result.is_error, result.content[0].text
    return json.loads(result.content[0].text)


async def _context_of(host, task: str) -> list[str]:
    reply = payload(await host.call_tool("compile_context", {"task": task, "max_tokens": 350}))
    return [item["text"] for item in reply.get("items", []) if item["kind"] == "memory"]


@pytest.mark.parametrize("older, newer, question, older_kept", CASES)
async def test_a_context_shows_the_newer_of_two_unlinked_versions_only_when_it_updates_the_whole(
        module_daemon, older, newer, question, older_kept):
    async with mcp_session(module_daemon.address, f"ctx-update-{CASES.index((older, newer, question, older_kept))}") \
            as host:
        kept = payload(await host.call_tool("save_memory", {"content": older}))["memory"]["id"]
        edited = payload(await host.call_tool("save_memory", {"content": PLACEHOLDER}))["memory"]["id"]
        payload(await host.call_tool("edit_memory", {"id": edited, "content": newer, "reason": "wrong memory"}))
        found = payload(await host.call_tool("search_memory", {"query": question}))
        assert {kept, edited} <= {hit["memory"]["id"] for hit in found["hits"]}, found  # both current, both found
        lines = await _context_of(host, question)
        assert any(newer in line for line in lines), lines
        assert any(older in line for line in lines) == older_kept, lines
