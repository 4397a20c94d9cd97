"""The demo's engineering story: an ADR, a migration that supersedes facts, a correction, time travel, and a tamper caught."""

from __future__ import annotations

import json
import signal
import time

import duckdb

from memory_daemon.client.launcher import DaemonProcess, proxy_session


def _say(text: str) -> None:
    print(text, flush=True)


async def _call(host, tool: str, arguments: dict) -> dict:
    result = await host.call_tool(tool, arguments)
    if result.is_error:
        raise RuntimeError(f"{tool}: {result.content[0].text}")
    return json.loads(result.content[0].text)


def _facts(facts: list[dict]) -> str:
    return "; ".join(f"{f['subject']} {f['predicate']} {f['object']}" for f in facts) or "(none)"


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{time.time_ns() // 1000 % 1_000_000:06d}Z"


async def graph_story(daemon: DaemonProcess) -> None:
    _say("\n--- the knowledge graph: three sessions on the 'shop' codebase, through a real proxy ---\n")
    async with proxy_session(daemon.address, "shop", "--tools", "full") as host:
        _say("[session 1, January] ADR-3: auth_service signs its tokens with JWT_HS256 and keeps users in PostgreSQL 15")
        adr = await _call(host, "record_episode", {
            "kind": "adr", "title": "ADR-3: auth_service issues JWT_HS256 tokens",
            "body": "Symmetric keys are enough while only one service verifies tokens.",
            "files": ["auth/tokens.py"], "entities": ["auth_service"], "occurred_at": "2026-01-10T09:00:00Z",
            "create_entities": True})
        for predicate, value in (("token_format", "JWT_HS256"), ("database", "PostgreSQL 15")):
            await _call(host, "upsert_fact", {"subject": "auth_service", "predicate": predicate, "object": value,
                                                     "valid_from": "2026-01-10T09:00:00Z", "source": adr["episode"]["id"]})
        await _call(host, "upsert_fact", {"subject": "billing", "predicate": "depends_on", "object": "auth_service",
                                                 "valid_from": "2026-01-10T09:00:00Z", "create_entities": True})
        await _call(host, "record_episode", {
            "kind": "invariant", "title": "auth_service never accepts unsigned or expired tokens",
            "entities": ["auth_service"]})

        _say("[session 2, June]     migration: auth_service moved to PASETO v4 on June 1")
        migration = await _call(host, "record_episode", {
            "kind": "migration", "title": "auth_service tokens migrated to PASETO v4",
            "body": "HS256 keys had to be shared with every verifier.", "entities": ["auth_service"],
            "occurred_at": "2026-06-01T08:00:00Z"})
        changed = await _call(host, "upsert_fact", {
            "subject": "auth_service", "predicate": "token_format", "object": "PASETO v4",
            "valid_from": "2026-06-01T08:00:00Z", "source": migration["episode"]["id"]})
        old = changed["superseded"][0]
        _say(f"                     upsert_fact -> {changed['status']}; superseded: {old['object']} "
             f"valid {old['valid_from'][:10]} .. {old['valid_to'][:10]} (kept in history, not deleted)")

        before_correction = _now()
        _say("[session 3]          correction: 'actually auth_service was always on PostgreSQL 16, never 15'")
        corrected = await _call(host, "upsert_fact", {
            "subject": "auth_service", "predicate": "database", "object": "PostgreSQL 16", "correction": True})
        _say(f"                     upsert_fact -> {corrected['status']}; retracted {corrected['retracted_ids']} "
             f"on the recorded-time axis; the new fact covers the same valid time from "
             f"{corrected['fact']['valid_from'][:10]}\n")

        _say("[session 3]          from conversation: save_memory extracts facts from what the user says")
        for message in ("The checkout service's queue is RabbitMQ", "actually the checkout service's queue is Kafka now"):
            saved = await _call(host, "save_memory", {"content": message})
            _say(f"                     save_memory {message!r} -> facts: {_facts(saved['facts'])}"
                 + (f"; superseded: {_facts(saved['superseded_facts'])}" if saved["superseded_facts"] else ""))
        _say("")

        view = await _call(host, "query_entity", {"entity": "auth_service", "include_retracted": True})
        _say(f"query_entity auth_service: active -> {_facts(view['active'])}")
        _say("                                  history -> " + "; ".join(
            f"{f['object']} ({f['status']})" for f in view["history"]))
        _say(f"                                  episodes -> {[e['title'] for e in view['episodes']]}")
        _say(f"                                  2-hop neighbourhood -> {[n['entity']['name'] for n in view['neighbourhood']]}")

        march = await _call(host, "time_travel", {"valid_at": "2026-03-01T00:00:00Z", "entity": "auth_service"})
        _say(f"\ntime travel, valid time: true on 2026-03-01 -> {_facts(march['facts'])}")
        believed = await _call(host, "time_travel", {"valid_at": "2026-03-01T00:00:00Z", "known_at": before_correction,
                                                            "entity": "auth_service"})
        _say(f"time travel, both axes: true on 2026-03-01 as known before the correction -> {_facts(believed['facts'])}")

        briefing = await host.get_prompt("architecture-briefing", {"component": "auth_service"})
        _say("\nprompt architecture-briefing(auth_service) -- superseded and retracted facts never appear:")
        for line in briefing.messages[0].content.text.splitlines():
            if line.startswith("- "):
                _say(f"    {line}")

        report = await _call(host, "verify_integrity", {})
        _say(f"\nverify_integrity -> ok={report['ok']}, {report['rows_checked']} rows, "
             f"Merkle root {report['merkle_root'][:16]}...")
        target = changed["fact"]["id"]

    _say(f"stopping the daemon and editing fact {target} with a plain DuckDB connection "
         "(PASETO v4 -> JWT_HS256)...")
    daemon.stop(signal.SIGTERM)
    with duckdb.connect(str(daemon.data_dir / "cortexd.duckdb")) as con:
        con.execute("UPDATE facts SET object_value = 'JWT_HS256' WHERE id = ?", [target])
    daemon.start()
    async with proxy_session(daemon.address, "shop", "--tools", "full") as host:
        report = await _call(host, "verify_integrity", {})
        problems = ", ".join(f"{p['table']}/{p['id']}" for p in report["problems"])
        _say(f"after the restart, verify_integrity -> ok={report['ok']}; tampered rows: {problems}")
