"""Secrets never reach the store on any write path, through real proxies and the CLI; a namespace may opt out loudly."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from conftest import CORTEXD, Daemon, mcp_session, store_cells_holding, payload

pytestmark = pytest.mark.anyio

GITHUB = "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"
OPENAI = "sk-proj-ABCDEFGHIJKLMNOPQRST1234"
PASSWORD = "hunt3r!xq"
SECRETS = (GITHUB, OPENAI, PASSWORD)


async def test_no_write_path_stores_a_secret_and_markers_name_the_kind(workdir):
    env = {**os.environ, "CORTEXD_REDACTION_OFF_IN_NAMESPACES": "scratch"}
    daemon = Daemon(workdir, env=env).start()
    try:
        async with mcp_session(daemon.address, "acme") as host:
            saved = payload(await host.call_tool("save_memory", {
                "content": f"remember that the staging password={PASSWORD} and the token is {GITHUB}",
                "context": f"earlier: my OpenAI key {OPENAI}", "tags": ["infra"],
                "meta": {"api_key": "plain-value", "token_count": 5}}))["memory"]
            assert saved["content"] == ("remember that the staging password=[REDACTED:password] and the token is "
                                        "[REDACTED:github-token]")
            assert saved["context"] == "earlier: my OpenAI key [REDACTED:api-key]"
            assert saved["meta"] == {"api_key": "[REDACTED]", "token_count": 5}, "a count under a 'token' key stays"
            analysis = payload(await host.call_tool("analyze_message", {
                "message": f"the wifi password is {PASSWORD} btw", "session_id": "s1"}))
            assert PASSWORD not in json.dumps(analysis)
            payload(await host.call_tool("upsert_fact", {"subject": "ci bot", "predicate": "uses token",
                                                                "object": GITHUB, "create_entities": True}))
            payload(await host.call_tool("record_episode", {"kind": "session_note", "title": "Rotated keys",
                                                                   "body": f"new key {OPENAI}"}))
            payload(await host.call_tool("log_decision", {"type": "tooling", "question": "Which key for CI?",
                                                          "chosen": "the bot token",
                                                          "reasoning": f"token {GITHUB} has repo scope"}))
            edited = payload(await host.call_tool("edit_memory", {"id": saved["id"],
                                                                  "content": f"the token is now {GITHUB}"}))
            assert edited["memory"]["content"] == "the token is now [REDACTED:github-token]"
        async with mcp_session(daemon.address, "scratch") as scratch:
            kept = payload(await scratch.call_tool("save_memory", {"content": f"test fixture key {OPENAI}"}))
            assert kept["memory"]["content"] == f"test fixture key {OPENAI}", "redaction is off in this namespace"

        remembered = subprocess.run([*CORTEXD, "remember", f"my OpenAI key {OPENAI}", "--daemon", daemon.address,
                                     "--namespace", "acme"], capture_output=True, text=True, timeout=60)
        assert remembered.returncode == 0, remembered.stderr
        records = workdir / "records.jsonl"
        records.write_text(json.dumps({"id": "r1", "text": f"deploy password={PASSWORD}",
                                       "timestamp": "2024-05-01T10:00:00Z"}) + "\n", encoding="utf-8")
        imported = subprocess.run([*CORTEXD, "import", str(records), "--daemon", daemon.address,
                                   "--namespace", "acme"], capture_output=True, text=True, timeout=60)
        assert imported.returncode == 0, imported.stderr
        assert "redaction_off" in daemon.log() and "scratch" in daemon.log()
    finally:
        daemon.stop()
    found = store_cells_holding(daemon.data_dir / "cortexd.duckdb", SECRETS)
    # Only the opted-out namespace keeps one: its memory, and the stored reply of its save (search_text is lowered).
    assert {needle: set(places) for needle, places in found.items()} == {
        OPENAI: {"memories.content", "idempotency_keys.reply"}}
