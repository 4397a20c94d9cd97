"""search_memory through a real proxy reads its best hits as compile_context reads its memories: where the precedence
model is sure the newer of two current memories answers the question now, and the relation judge, reading the pair as
import would, reads an update no check overruled, the newer is placed just above the older. A partial update keeps
its older memory first for a detail it did not touch; with the reading off, the fused order stands."""

from __future__ import annotations

import pytest

from conftest import mcp_session, payload, running_daemon

pytestmark = pytest.mark.anyio

# Written for these tests. Import leaves each pair unlinked: "from now on" without the choir's old place, and a partial
# update that names no change marker import reads, so both memories of each stay current.
CHOIR_OLDER = "The choir rehearses at St. Aidan's church hall."
CHOIR_NEWER = "choir is at the oakfield school gym from now on"
CHOIR_QUESTION = "Where does the choir rehearse?"
CONFIG_OLDER = "Checkout service config: timeout 600 ms, 2 retries, pool size 20."
CONFIG_NEWER = "After last week's 504s we raised the checkout timeout to 1200 ms."
FILLER = "The office plants get watered on Fridays."


def _imported(daemon, namespace: str, older: str, newer: str):
    records = [{"id": "older", "text": older, "timestamp": "2026-03-10T09:00:00Z"},
               {"id": "filler", "text": FILLER, "timestamp": "2026-03-20T09:00:00Z"},
               {"id": "newer", "text": newer, "timestamp": "2026-04-10T09:00:00Z"}]
    with daemon.client(namespace) as client:
        reply = client.import_records(records)
        assert not reply.errors and client.wait_for_update_checks(120) == 0
        assert not any(m.superseded_by for m in client.export_memories(limit=10).memories), "import left them unlinked"
    return daemon


@pytest.fixture(scope="module")
def daemon():
    for running in running_daemon(CORTEXD_RETRIEVAL_UPDATE_READING_DEPTH="3"):
        _imported(running, "choir", CHOIR_OLDER, CHOIR_NEWER)
        yield _imported(running, "checkout", CONFIG_OLDER, CONFIG_NEWER)


@pytest.fixture(scope="module")
def daemon_without_reading():
    for running in running_daemon(CORTEXD_RETRIEVAL_UPDATE_READING_DEPTH="0"):
        yield _imported(running, "choir", CHOIR_OLDER, CHOIR_NEWER)


async def _hits(daemon, namespace: str, question: str) -> list[dict]:
    async with mcp_session(daemon.address, namespace) as host:
        return payload(await host.call_tool("search_memory", {"query": question}))["hits"]


async def test_an_update_import_left_unlinked_comes_first(daemon):
    hits = await _hits(daemon, "choir", CHOIR_QUESTION)
    assert [hit["memory"]["content"] for hit in hits][:2] == [CHOIR_NEWER, CHOIR_OLDER], hits
    assert [hit["signal_scores"]["update"] for hit in hits[:2]] == [1.0, 0.0], hits
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True), "the reported score is the final one, in order"


async def test_a_detail_the_newer_memory_did_not_touch_keeps_the_older_one_first(daemon):
    hits = await _hits(daemon, "checkout", "How many retries does the checkout service make?")
    assert hits[0]["memory"]["content"] == CONFIG_OLDER, hits


async def test_with_the_reading_off_the_fused_order_puts_the_older_memory_first(daemon_without_reading):
    hits = await _hits(daemon_without_reading, "choir", CHOIR_QUESTION)
    assert [hit["memory"]["content"] for hit in hits][:2] == [CHOIR_OLDER, CHOIR_NEWER], hits
    assert not any("update" in hit["signal_scores"] for hit in hits), hits
