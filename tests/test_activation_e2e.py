"""Conversational activation end to end: real models in a real daemon, through real proxies."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from conftest import CORTEXD, Daemon, mcp_session, payload
from preprocessing.registry import models_dir

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def daemon(module_daemon):
    """One daemon for the module (a fresh one each cost ≈ 3 s): each test writes to its own namespace."""
    return module_daemon


async def test_explicit_request_is_must_save_and_names_the_technology(daemon):
    async with mcp_session(daemon.address, "acme-explicit") as host:
        assert "analyze_message" in {t.name for t in (await host.list_tools()).tools}
        result = payload(await host.call_tool("analyze_message", {"message": "remember that I prefer pnpm"}))
        assert result["action_recommendation"] == "MUST_SAVE" and result["should_save"] is True
        assert result["signals"]["save_request"] is True
        assert "pnpm" in {e["key"] for e in result["suggested_entities"]}
        assert set(result["timings_ms"]) >= {"phrases", "intent", "entities", "embedding"}
        assert result["degraded"] == []


async def test_save_without_entities_is_enriched_and_caller_values_win(daemon):
    async with mcp_session(daemon.address, "acme-enriched") as host:
        enriched = payload(await host.call_tool("save_memory", {
            "content": "We decided to run PostgreSQL 16 on Kubernetes for the billing service"}))
        memory = enriched["memory"]
        assert set(enriched["auto_filled"]) == {"entities", "tags", "strength"}
        assert {"postgresql 16", "kubernetes"} <= set(memory["entities"])
        assert memory["tags"] and memory["strength"] > 1.0

        given = payload(await host.call_tool("save_memory", {
            "content": "Alice reviews every Terraform change", "tags": ["people"], "entities": ["Alice"], "strength": 0.4}))
        assert given["auto_filled"] == []
        assert given["memory"]["tags"] == ["people"] and given["memory"]["entities"] == ["Alice"]
        assert given["memory"]["strength"] == pytest.approx(0.4)


async def test_duplicate_save_reinforces_and_update_is_reported(daemon):
    async with mcp_session(daemon.address, "acme-duplicate") as host:
        first = payload(await host.call_tool("save_memory", {"content": "Deploys happen on Tuesdays"}))["memory"]
        again = payload(await host.call_tool("save_memory", {"content": "deploys happen on tuesdays."}))
        assert again["merged"] is True and again["memory"]["id"] == first["id"]
        assert again["memory"]["use_count"] == 1 and again["deduplication"]["action"] == "MERGE"

        update = payload(await host.call_tool("save_memory", {"content": "Deploys happen on Thursdays now"}))
        assert update["merged"] is False and update["memory"]["id"] != first["id"]
        assert update["deduplication"]["action"] == "UPDATE_CANDIDATE"
        assert update["deduplication"]["memory_id"] == first["id"]

        analysis = payload(await host.call_tool("analyze_message", {"message": "deploys are on Thursdays from now on"}))
        assert analysis["deduplication"]["action"] in ("UPDATE_CANDIDATE", "MERGE")

    with daemon.client("acme-duplicate") as client:
        assert len(client.export_memories(limit=10).memories) == 2


async def test_session_context_resolves_a_short_decision(daemon):
    async with mcp_session(daemon.address, "acme-session") as host:
        await host.call_tool("analyze_message", {"message": "should we use Redis or Memcached for the cache?",
                                                 "session_id": "s1"})
        reply = payload(await host.call_tool("analyze_message", {"message": "yes, let's go with that",
                                                                 "session_id": "s1"}))
        assert reply["intent"] == "SAVE_DECISION"
        assert {"redis", "memcached"} <= {e["key"] for e in reply["suggested_entities"]}
        assert reply["context_used"] == ["should we use Redis or Memcached for the cache?"]
        assert "Redis or Memcached" in reply["suggested_content"]


async def test_recall_question_should_search(daemon):
    async with mcp_session(daemon.address, "acme-recall") as host:
        reply = payload(await host.call_tool("analyze_message", {"message": "what did I say about the staging database?"}))
        assert reply["action_recommendation"] == "SHOULD_SEARCH" and reply["should_save"] is False


def test_cli_batch_analyze_keeps_ids_and_order(daemon, tmp_path):
    lines = [
        {"id": "a", "text": "remember that the staging DB is db-stg-2"},
        {"id": "b", "text": "thanks!"},
        {"id": "c", "text": "what did I tell you about the staging db?"},
    ]
    source = tmp_path / "messages.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines))
    result = subprocess.run(CORTEXD + ["analyze", "--jsonl", str(source), "--daemon", daemon.address, "--batch-size", "2"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in replies] == ["a", "b", "c"]
    assert [r["action_recommendation"] for r in replies] == ["MUST_SAVE", "NONE", "SHOULD_SEARCH"]


async def test_missing_onnx_model_degrades_instead_of_failing(workdir):
    broken_models = workdir / "models"
    shutil.copytree(models_dir(), broken_models, ignore=shutil.ignore_patterns("*.onnx"))
    daemon = Daemon(workdir, env={**os.environ, "CORTEXD_MODELS_DIR": str(broken_models)}).start()
    try:
        async with mcp_session(daemon.address, "acme") as host:
            reply = payload(await host.call_tool("analyze_message", {"message": "remember that I prefer pnpm"}))
            assert reply["action_recommendation"] == "MUST_SAVE"
            assert any("sentence encoder" in d and "missing" in d for d in reply["degraded"])
            assert any("intent classifier" in d and "rule-based fallback" in d for d in reply["degraded"])
            assert reply["intent_source"] == "rules"
            assert "embedding" not in reply["timings_ms"]
            saved = payload(await host.call_tool("save_memory", {"content": "I prefer pnpm"}))
            assert saved["degraded"] and saved["memory"]["strength"] > 0
        doctor = subprocess.run(CORTEXD + ["doctor", "--daemon", daemon.address, "--json"],
                                capture_output=True, text=True, timeout=60)
        report = json.loads(doctor.stdout)
        assert doctor.returncode == 1 and report["healthy"] is False
        encoder = next(c for c in report["checks"] if "sentence encoder" in c["check"])
        assert encoder["ok"] is False and "missing" in encoder["detail"]
    finally:
        daemon.stop()


def test_doctor_reports_every_model_with_sha256(daemon):
    result = subprocess.run(CORTEXD + ["doctor", "--daemon", daemon.address, "--json"],
                            capture_output=True, text=True, timeout=60)
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["healthy"] is True
    encoder = next(c for c in report["checks"] if "sentence encoder" in c["check"])
    manifest = json.loads((models_dir() / "encoder" / "manifest.json").read_text())
    assert manifest["files"]["model_int8.onnx"]["sha256"] in encoder["detail"]
    assert any("spacy" in c["check"] for c in report["checks"])


async def test_the_intent_model_reads_a_decision(daemon):
    async with mcp_session(daemon.address, "acme-decision") as host:
        reply = payload(await host.call_tool("analyze_message", {"message": "we decided to move CI to GitHub Actions"}))
        assert reply["intent_source"] == "model"
        assert reply["intent"] == "SAVE_DECISION"
        assert reply["action_recommendation"] == "SHOULD_SAVE" and reply["should_save"] is True


async def test_an_explicit_request_is_must_save_whatever_the_model_says(daemon):
    async with mcp_session(daemon.address, "acme-request") as host:
        reply = payload(await host.call_tool("analyze_message", {
            "message": "save this for later: to reset the staging VPN, ask Omar"}))
        assert reply["action_recommendation"] == "MUST_SAVE" and reply["should_save"] is True
