"""search_memory through a real proxy: of two current memories on one subject (a partial update leaves the older one
current for what it did not change), the precedence model, when search reads it (`[retrieval] precedence_depth` 2 or
more), puts first the one that answers the question now; by default search does not, the partial-update reader
orders such a pair, and without either the fused order puts the older first."""

from __future__ import annotations

import pytest

from conftest import mcp_session, running_daemon, payload

pytestmark = pytest.mark.anyio

# Written for this test; none of it is in the precedence model's training data (models/precedence/data). The older
# memory shares more of the question's words, so the fused signals put it first.
OLDER = "The Halden book club meets on the first Monday of each month at the Corner Library."
NEWER = "Halden book club has moved to the first Wednesday of the month, still at the Corner Library."
QUESTION = "Which day does the Halden book club meet?"


async def _hits(daemon, namespace: str) -> list[dict]:
    async with mcp_session(daemon.address, namespace) as host:
        for text in (OLDER, NEWER):
            payload(await host.call_tool("save_memory", {"content": text}))
        return payload(await host.call_tool("search_memory", {"query": QUESTION}))["hits"]


@pytest.fixture(scope="module")
def daemon_with_precedence():
    yield from running_daemon(CORTEXD_PRECEDENCE_MODEL="true", CORTEXD_RETRIEVAL_PRECEDENCE_DEPTH="3")


async def test_the_memory_that_answers_now_comes_first_and_says_why(daemon_with_precedence):
    hits = await _hits(daemon_with_precedence, "precedence-on")
    assert [hit["memory"]["content"] for hit in hits][:2] == [NEWER, OLDER], hits
    assert not any(hit["memory"].get("superseded_by") for hit in hits), "a partial update leaves both current"
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True), "the reported score is the final one, in order"
    assert [hit["signal_scores"]["precedence"] for hit in hits[:2]] == [1.0, 0.0], hits


async def test_by_default_the_partial_update_reader_orders_the_two(module_daemon):
    """Off by default: the precedence model reads nothing. The newer memory is a partial update of the older (it
    changed the day, not the place), so the partial-update reader, on by default, reads the pair instead."""
    hits = await _hits(module_daemon, "precedence-off")
    assert [hit["memory"]["content"] for hit in hits][:2] == [NEWER, OLDER], hits
    assert not any("precedence" in hit["signal_scores"] for hit in hits), hits
    assert [hit["signal_scores"]["partial"] for hit in hits[:2]] == [1.0, 0.0], hits


@pytest.fixture(scope="module")
def daemon_without_pair_models():
    yield from running_daemon(CORTEXD_PARTIAL_MODEL="false", CORTEXD_PRECEDENCE_MODEL="false")


async def test_without_either_pair_model_the_fused_order_puts_the_older_memory_first(daemon_without_pair_models):
    hits = await _hits(daemon_without_pair_models, "pair-models-off")
    assert [hit["memory"]["content"] for hit in hits][:2] == [OLDER, NEWER], hits
    assert not any({"precedence", "partial"} & set(hit["signal_scores"]) for hit in hits), hits


async def test_a_sure_verdict_for_a_memory_about_something_else_does_not_count(daemon_with_precedence):
    """The shipped model is sure (0.987) that the newer memory here answers, though only a word of it ("lesson") is
    the question's: the relevance model reads it as off the question (0.015), so its verdict does not count and the
    fused order stands."""
    lesson = "Ines has violin lessons on Thursdays at 5pm."
    elsewhere = "Update: the team lesson-learned review moved to Thursday."
    async with mcp_session(daemon_with_precedence.address, "precedence-elsewhere") as host:
        for text in (lesson, elsewhere):
            payload(await host.call_tool("save_memory", {"content": text}))
        hits = payload(await host.call_tool("search_memory", {"query": "When is Ines's violin lesson?"}))["hits"]
    by_text = {hit["memory"]["content"]: hit for hit in hits}
    assert hits[0]["memory"]["content"] == lesson, hits
    assert by_text[elsewhere]["signal_scores"]["precedence"] == 0.0, hits  # read, and it won nothing
