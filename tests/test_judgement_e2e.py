"""Learned judgement end to end: save requests from the intent model's heads, merges and supersession from the
relation model, through a real daemon and a real `cortexd proxy`. None of these texts is in any training file."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from conftest import CORTEXD, Daemon, mcp_session, payload
from preprocessing.registry import models_dir

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def daemon(module_daemon):
    """One daemon for the tests on the shipped models, each in its own namespace; the two on broken models
    start their own."""
    return module_daemon


async def test_a_polite_request_to_store_is_must_save_and_a_task_note_is_not(daemon):
    async with mcp_session(daemon.address, "judge") as host:
        asked = payload(await host.call_tool("analyze_message",
                                             {"message": "could you store that our on-call rotation is weekly"}))
        assert asked["action_recommendation"] == "MUST_SAVE" and asked["should_save"] is True
        assert asked["signals"]["save_request"] is True
        task = payload(await host.call_tool("analyze_message",
                                            {"message": "keep in mind the file is UTF-16 when you parse it"}))
        assert task["signals"].get("save_request", False) is False  # a nested false is left out
        assert task["action_recommendation"] != "MUST_SAVE"
        recall = payload(await host.call_tool("analyze_message",
                                              {"message": "what did I tell you about our on-call rotation?"}))
        assert recall["signals"]["recall_request"] is True and recall["action_recommendation"] == "SHOULD_SEARCH"
        assert asked["degraded"] == [] and task["degraded"] == []


async def test_a_paraphrase_merges_into_the_memory_it_repeats(daemon):
    async with mcp_session(daemon.address, "judge-merge") as host:
        first = payload(await host.call_tool("save_memory", {
            "content": "Nightly reindex of the search cluster runs at 02:00 UTC"}))["memory"]
        again = payload(await host.call_tool("save_memory", {
            "content": "The search cluster gets re-indexed every night around 2am UTC"}))
        assert again["merged"] is True and again["memory"]["id"] == first["id"]
        assert again["deduplication"]["action"] == "MERGE"
        assert any("relation model: DUPLICATE" in r for r in again["deduplication"]["reasons"])


async def test_an_update_supersedes_and_keeps_the_old_memory_in_history(daemon):
    async with mcp_session(daemon.address, "judge-update") as host:
        old = payload(await host.call_tool("save_memory", {"content": "We support Python 3.9 to 3.11"}))["memory"]
        new = payload(await host.call_tool("save_memory", {"content": "Python 3.9 support is gone; 3.10+ only now"}))
        assert new["merged"] is False and new["deduplication"]["action"] == "UPDATE_CANDIDATE"
        assert new["superseded_memories"] == [old["id"]]
        current = payload(await host.call_tool("search_memory", {"query": "which Python versions do we support?"}))
        assert current["hits"][0]["memory"]["id"] == new["memory"]["id"]
        history = payload(await host.call_tool("search_memory", {"query": "which Python versions do we support?",
                                                                  "include_history": True}))
        kept = next(h["memory"] for h in history["hits"] if h["memory"]["id"] == old["id"])
        assert kept["superseded_by"] == new["memory"]["id"]


async def test_a_partial_update_keeps_the_unchanged_part_answerable(daemon):
    async with mcp_session(daemon.address, "judge-partial") as host:
        old = payload(await host.call_tool("save_memory", {
            "content": "The mobile team uses Kotlin for Android and Swift for iOS."}))["memory"]
        new = payload(await host.call_tool("save_memory", {
            "content": "The Android app was rewritten in Flutter, iOS is still Swift."}))
        assert new["deduplication"]["action"] == "UPDATE_CANDIDATE"
        assert new["superseded_memories"] == []
        assert new["memory"]["meta"]["partially_updates"] == old["id"]
        ios = payload(await host.call_tool("search_memory", {"query": "what language is the iOS app written in?"}))
        assert old["id"] in [h["memory"]["id"] for h in ios["hits"]]
        assert not next(h for h in ios["hits"] if h["memory"]["id"] == old["id"])["memory"].get("superseded_by")


async def test_another_holders_change_leaves_the_users_own_fact_current(daemon):
    # The relation model reads the second text as an update of the first (1.00); the judge overrules it.
    async with mcp_session(daemon.address, "judge-holder") as host:
        own = payload(await host.call_tool("save_memory", {"content": "I'm allergic to shellfish."}))["memory"]
        other = payload(await host.call_tool("save_memory", {
            "content": "priya's allergy retest came back clear, no shellfish allergy anymore"}))
        assert other["superseded_memories"] == [] and other["deduplication"]["action"] == "NEW"
        assert any("another instance or holder" in r for r in other["deduplication"]["reasons"])
        found = payload(await host.call_tool("search_memory", {"query": "which seafood am I allergic to?"}))
        mine = next(h["memory"] for h in found["hits"] if h["memory"]["id"] == own["id"])
        assert not mine.get("superseded_by")


async def test_the_users_own_fact_comes_before_another_holders_look_alike(daemon):
    # Words and meaning put the platform team's retro first for this question; it names another holder than the
    # question's "my", so search halves its score ([retrieval] holder_factor).
    async with mcp_session(daemon.address, "judge-holder-rank") as host:
        mine = payload(await host.call_tool("save_memory", {"content": "My retro is on Friday afternoons."}))["memory"]
        payload(await host.call_tool("save_memory", {
            "content": "The platform team's sprint retro moved to Thursday mornings this month."}))
        found = payload(await host.call_tool("search_memory", {"query": "when is my sprint retro these days?"}))
        assert found["hits"][0]["memory"]["id"] == mine["id"]


@pytest.mark.parametrize("own, theirs, question", [
    ("I train at the gym on Tuesday evenings.", "Tomasz switched his gym sessions to Thursday mornings.",
     "what day are my gym sessions?"),
    ("I have Mondays off work.", "Ingrid switched her day off to Thursdays.", "which day off do I have?"),
])
async def test_the_users_own_fact_comes_before_a_named_persons_change_of_theirs(daemon, own, theirs, question):
    # Words and meaning put the other person's change first (it did at 829d541). No "'s" names the holder, but "his"
    # and "her" point back to the subject: the change is theirs, and search halves its score for a question about
    # the user's own.
    async with mcp_session(daemon.address, "judge-holder-subject-" + theirs.split()[0]) as host:
        mine = payload(await host.call_tool("save_memory", {"content": own}))["memory"]
        payload(await host.call_tool("save_memory", {"content": theirs}))
        found = payload(await host.call_tool("search_memory", {"query": question}))
        assert found["hits"][0]["memory"]["id"] == mine["id"]
        assert not found["hits"][0]["memory"].get("superseded_by")


@pytest.mark.parametrize("own, theirs, change, question", [
    ("I'm in the required reviewers group for the ledger repo.", "Marek is also a required reviewer on ledger.",
     "Marek got dropped from ledger reviewers when he changed teams.",
     "Can I approve pull requests on the ledger codebase?"),
    ("My usual takeaway is the green curry from Saffron Lane.", "My brother's go-to takeaway is Pizzeria Orso.",
     "hes gone off orso's, its all smashburgers now", "Where should I order dinner from if I want my usual?"),
])
async def test_the_users_own_fact_comes_before_a_change_the_parse_names_no_holder_in(daemon, own, theirs, change,
                                                                                      question):
    # The change replaces the other person's fact, and words and meaning put it first for the user's question (at
    # edecdaf it came first). No possessive, named group or pronoun pointing back marks whose it is; the holder model
    # reads it as another's own fact, and search lowers it for a question about the user's own alone.
    async with mcp_session(daemon.address, "judge-holder-model-" + change.split()[0]) as host:
        mine = payload(await host.call_tool("save_memory", {"content": own}))["memory"]
        for text in (theirs, change):
            payload(await host.call_tool("save_memory", {"content": text}))
        found = payload(await host.call_tool("search_memory", {"query": question}))
        assert found["hits"][0]["memory"]["id"] == mine["id"]
        assert not found["hits"][0]["memory"].get("superseded_by")


async def test_an_imported_change_without_a_change_word_stays_current_beside_a_later_remark(daemon, tmp_path):
    # "Halved that this week" replaces the timeout (an update that names no subject). The relation model reads the
    # later remark as an update of it (0.99), as it does after any change; the store knows it is one, so it stays.
    source = tmp_path / "brisk.jsonl"
    source.write_text(
        '{"id": "timeout", "text": "The Brisk scheduler keeps a 20 minute job timeout.", '
        '"timestamp": "2025-04-02T09:00:00Z"}\n'
        '{"id": "halved", "text": "Halved that this week, the ops review wanted it stricter.", '
        '"timestamp": "2025-05-14T16:00:00Z"}\n'
        '{"id": "remark", "text": "Brisk scheduler sends a warning email five minutes before a job is killed.", '
        '"timestamp": "2025-05-14T16:05:00Z"}\n')
    done = subprocess.run([*CORTEXD, "import", str(source), "--wait", "300", "--daemon", daemon.address,
                           "--namespace", "judge-unworded-change"], capture_output=True, text=True, timeout=360)
    assert done.returncode == 0, done.stderr
    async with mcp_session(daemon.address, "judge-unworded-change") as host:
        found = payload(await host.call_tool("search_memory", {
            "query": "how long can a Brisk job run before it is killed?", "include_history": True}))
        stored = {h["memory"]["external_id"]: h["memory"] for h in found["hits"]}
        assert stored["timeout"].get("superseded_by") == stored["halved"]["id"]
        assert not stored["halved"].get("superseded_by") and not stored["remark"].get("superseded_by")


async def test_a_corrupt_relation_model_degrades_only_dedup(workdir):
    broken_models = workdir / "models"
    shutil.copytree(models_dir(), broken_models)
    (broken_models / "relation" / "model_int8.onnx").write_bytes(b"not an onnx model")
    daemon = Daemon(workdir, env={**os.environ, "CORTEXD_MODELS_DIR": str(broken_models)}).start()
    try:
        async with mcp_session(daemon.address, "judge-broken") as host:
            reply = payload(await host.call_tool("analyze_message",
                                                 {"message": "could you store that our on-call rotation is weekly"}))
            assert reply["action_recommendation"] == "MUST_SAVE" and reply["intent_source"] == "model"
            assert [d for d in reply["degraded"] if "relation model" in d and "fallback" in d]
            assert not [d for d in reply["degraded"] if "relation model" not in d]
            first = payload(await host.call_tool("save_memory", {"content": "Deploys happen on Tuesdays"}))
            again = payload(await host.call_tool("save_memory", {"content": "deploys happen on tuesdays."}))
            assert again["merged"] is True and again["memory"]["id"] == first["memory"]["id"]
    finally:
        daemon.stop()


async def test_a_missing_intent_model_falls_back_to_rules_for_requests_only(workdir):
    broken_models = workdir / "models"
    shutil.copytree(models_dir(), broken_models, ignore=shutil.ignore_patterns("model_int8.onnx"))
    for kept in ("encoder", "relation"):
        shutil.copy(models_dir() / kept / "model_int8.onnx", broken_models / kept / "model_int8.onnx")
    daemon = Daemon(workdir, env={**os.environ, "CORTEXD_MODELS_DIR": str(broken_models)}).start()
    try:
        async with mcp_session(daemon.address, "judge-rules") as host:
            reply = payload(await host.call_tool("analyze_message", {"message": "remember that I prefer pnpm"}))
            assert reply["action_recommendation"] == "MUST_SAVE" and reply["intent_source"] == "rules"
            assert [d for d in reply["degraded"] if "intent classifier" in d]
            assert not [d for d in reply["degraded"] if "relation model" in d or "sentence encoder" in d]
    finally:
        daemon.stop()
