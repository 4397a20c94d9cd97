"""Export, import and backup: a dump restores every row losslessly, a bad dump stores nothing, a live backup is whole."""

from __future__ import annotations

import base64
import json
import os
import shutil
import stat
import subprocess
import threading

import duckdb
import grpc
import pytest

from conftest import CORTEXD, Daemon
from memory_daemon.client.python_client import as_dict
from memory_daemon.store import SCHEMA_VERSION


def _cli(daemon, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(CORTEXD + [*args, "--daemon", daemon.address], capture_output=True, text=True, timeout=300,
                          input=stdin)


def _seed(daemon) -> dict:
    """Every kind of row, with history: superseded, archived, long-term and imported memories, a fact superseded
    and then corrected (a retracted row), an entity-to-entity edge, an episode, decisions with an outcome, relations."""
    with daemon.client("acme") as acme, daemon.client("ops") as ops:
        old = acme.save_memory(content="Deploys happen on Tuesdays", tags=["ops"]).memory
        new = acme.save_memory(content="We moved deploys to Thursday afternoons", supersedes=old.id).memory
        faint = acme.save_memory(content="Someone mentioned a blue mug in the kitchen", strength=0.0).memory
        assert acme.collect_garbage(apply=True, grace_days=0).archived == [faint.id]
        kept = acme.save_memory(content="Alice owns the billing service", meta={"origin": "onboarding"}).memory
        acme.promote_memory(ids=[kept.id])
        acme.touch_memory(id=kept.id, boost_strength=True)
        acme.import_records([{"id": "ext-1", "text": "The payments team meets on Mondays",
                              "timestamp": "2025-01-02T09:00:00Z"}])
        assert acme.wait_for_update_checks(120) == 0
        ops.save_memory(content="Pager rotation changes every Friday at noon")
        ops.save_memory(content="The café's guest Wi-Fi is «Gäste-5G» ✓ (ask 田中 for the 🔑)")

        acme.upsert_fact(subject="auth_service", predicate="database", object="PostgreSQL",
                         valid_from="2026-01-01T00:00:00Z", create_entities=True)
        acme.upsert_fact(subject="auth_service", predicate="database", object="MySQL",
                         valid_from="2026-03-01T00:00:00Z", create_entities=True)
        acme.upsert_fact(subject="auth_service", predicate="database", object="MariaDB", correction=True,
                         create_entities=True)
        acme.upsert_fact(subject="auth_service", predicate="uses", object="Redis", object_kind="entity",
                         create_entities=True)
        episode = acme.record_episode(kind="adr", title="Sessions live in Redis", body="Because of latency.",
                                      files=["auth/session.py"], entities=["auth_service"]).episode
        decision = acme.log_decision(type="tooling", question="Which package manager?", options=["npm", "pnpm"],
                                     chosen="pnpm", reasoning="workspaces and disk use", session_id="s1").decision
        acme.record_outcome(decision_id=decision.id, was_successful=True, impact_score=0.8, learnings="fast installs")
        acme.log_decision(type="process", question="Release cadence?", options=["weekly", "daily"], chosen="weekly")
        acme.create_relation(from_id=new.id, relation="see_also", to_id=episode.id)
    return {"old": old.id, "new": new.id, "faint": faint.id, "kept": kept.id, "episode": episode.id}


def _canonical(value):
    """Lists in a stable order: two daemons may list equal rows in a different order (their caches were built
    differently); the rows themselves must be equal."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return sorted((_canonical(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    return value


def _views(daemon) -> dict:
    """What the read paths answer, as plain dicts: search, query_entity, time_travel and the integrity root."""
    with daemon.client("acme") as acme:
        integrity = as_dict(acme.verify_integrity())
        return _canonical({
            "search": [h["memory"]["id"] for h in as_dict(acme.search_memory(query="deploy day",
                                                                             include_history=True))["hits"]],
            "entity": as_dict(acme.query_entity(entity="auth_service", include_retracted=True)),
            "past": as_dict(acme.time_travel(valid_at="2026-02-01T00:00:00Z", known_at="2030-01-01T00:00:00Z",
                                             entity="auth_service")),
            "integrity": {k: integrity[k] for k in ("ok", "rows_checked", "merkle_root", "problems")},
        })


def test_export_import_export_is_byte_identical_and_the_restore_is_seen_at_once(daemon, workdir):
    ids = _seed(daemon)
    first = workdir / "first.jsonl"
    exported = _cli(daemon, "export", "--all-namespaces", "--output", str(first))
    assert exported.returncode == 0, exported.stderr
    assert stat.S_IMODE(first.stat().st_mode) == 0o600

    lines = [json.loads(line) for line in first.read_text(encoding="utf-8").splitlines()]
    header, *rows, end = lines
    assert header == {"kind": "header", "format": "cortexd-dump", "format_version": 1, "cortexd_version": "0.1.0",
                      "schema_version": SCHEMA_VERSION, "namespace": None}
    kinds = [r["kind"] for r in rows]
    order = ["memory", "memory_version", "tombstone", "entity", "fact", "episode", "decision", "relation", "purge"]
    assert kinds == sorted(kinds, key=order.index), "kinds come in dump order"
    for kind in order:
        kind_ids = [r["row"]["id"] for r in rows if r["kind"] == kind]
        # Nothing was edited or forgotten in the seed: those two kinds have no rows here (test_forget_edit has them).
        assert kind_ids == sorted(kind_ids) and bool(kind_ids) == (kind not in ("memory_version", "tombstone", "purge"))
    assert end == {"kind": "end", "rows": {k: kinds.count(k) for k in order}}
    memories = {r["row"]["id"]: r["row"] for r in rows if r["kind"] == "memory"}
    assert memories[ids["old"]]["superseded_by"] == ids["new"] and memories[ids["old"]]["superseded_at"].endswith("Z")
    assert memories[ids["faint"]]["archived_at"] is not None
    assert memories[ids["kept"]]["long_term"] is True and memories[ids["kept"]]["meta"] == {"origin": "onboarding"}
    assert memories[ids["kept"]]["use_count"] == 1
    assert {m["external_id"] for m in memories.values()} >= {"ext-1"}
    assert len(base64.b64decode(memories[ids["new"]]["embedding"])) == 384 * 4
    facts = [r["row"] for r in rows if r["kind"] == "fact"]
    assert any(f["retracted_at"] for f in facts) and any(f["superseded_by"] for f in facts)
    assert any(f["replaces"] for f in facts)
    decisions = [r["row"] for r in rows if r["kind"] == "decision"]
    assert any(d["was_successful"] is True and d["impact_score"] == 0.8 for d in decisions)
    assert {r["row"]["namespace"] for r in rows if r["kind"] == "memory"} == {"acme", "ops"}

    (workdir / "target").mkdir()
    target = Daemon(workdir / "target").start()
    try:
        with target.client("acme") as acme:  # load the indexes and caches the restore must refresh
            assert acme.search_memory(query="deploy day").hits == []
            with pytest.raises(grpc.RpcError) as missing:
                acme.query_entity(entity="auth_service")
            assert missing.value.code() == grpc.StatusCode.NOT_FOUND

        restored = _cli(target, "import", str(first), "--json")
        assert restored.returncode == 0, restored.stderr
        reply = json.loads(restored.stdout)
        assert {k: int(v) for k, v in reply["restored"].items()} == end["rows"]

        assert _views(target) == _views(daemon), "search, the graph and time travel see the restored rows at once"
        assert _views(target)["integrity"]["ok"] is True
        with target.client("ops") as ops:
            assert [h.memory.content for h in ops.search_memory(query="pager rotation").hits] == [
                "Pager rotation changes every Friday at noon"]

        second = _cli(target, "export", "--all-namespaces")
        assert second.returncode == 0, second.stderr
        assert second.stdout.encode("utf-8") == first.read_bytes(), "export -> import -> export is byte-identical"

        again = json.loads(_cli(target, "import", str(first), "--json").stdout)
        assert all(int(v) == 0 for v in again["restored"].values())
        assert {k: int(v) for k, v in again["skipped"].items()} == end["rows"], "a restore can be re-run"

        one = _cli(daemon, "export", "--namespace", "ops").stdout.splitlines()
        assert json.loads(one[0])["namespace"] == "ops"
        assert {json.loads(line)["row"]["namespace"] for line in one[1:-1]} == {"ops"}
    finally:
        target.stop()


def _dump(*rows: dict, header: dict | None = None, end: bool = True) -> list[str]:
    head = {"kind": "header", "format": "cortexd-dump", "format_version": 1, "cortexd_version": "0.1.0",
            "schema_version": SCHEMA_VERSION, "namespace": None, **(header or {})}
    counts = {}
    for row in rows:
        counts[row["kind"]] = counts.get(row["kind"], 0) + 1
    return [json.dumps(head)] + [json.dumps(r) for r in rows] + ([json.dumps({"kind": "end", "rows": counts})] if end else [])


def _memory(memory_id: str, **changes) -> dict:
    row = {"id": memory_id, "namespace": "acme", "content": "Restored by hand", "tags": [], "entities": [],
           "strength": 1.0, "created_at": "2026-01-01T00:00:00.000000Z", "last_used_at": "2026-01-01T00:00:00.000000Z",
           "use_count": 0, "source": "", "context": "", "session_id": "", "meta": {}, "search_text": "restored by hand"}
    row.update(changes)
    return {"kind": "memory", "row": row}


@pytest.mark.parametrize("lines, expected", [
    (_dump(_memory("mem_1"), _memory("mem_2", colour="blue")), "line 3: memory has no column 'colour'"),
    (_dump(_memory("mem_1"), {"kind": "memo", "row": {}}), "line 3: unknown kind 'memo'"),
    (_dump(_memory("mem_1", created_at="yesterday")), "line 2: column 'created_at': expected a UTC time"),
    (_dump(_memory("mem_1", embedding="AAAA")), "line 2: column 'embedding': 3 bytes, expected 1536"),
    (_dump(_memory("mem_1"), _memory("mem_1")), "line 3: memory id 'mem_1' already appeared on line 2"),
    (_dump({"kind": "memory", "row": {"id": "mem_1", "namespace": "acme"}}), "lacks the required column 'content'"),
    (_dump(_memory("mem_1", namespace="../etc")), "line 2: memory: namespace '../etc' is invalid"),
    (_dump(_memory("mem_1"), end=False), "the dump stops before its end line: it is truncated"),
    (_dump(_memory("mem_1"))[:-1] + ['{"kind": "end", "rows": {"memory": 2}}'], "counts 2 memory rows, the dump holds 1"),
    (_dump(_memory("mem_1"), header={"format_version": 2}), "dump format version 2, newer than this cortexd"),
    (_dump(_memory("mem_1"), header={"schema_version": SCHEMA_VERSION + 1}),
     f"store schema version {SCHEMA_VERSION + 1}, newer than this cortexd"),
    (['{"kind": "header", "format": "cortexd-dump"', "{}"], "line 1: not valid JSON"),
], ids=["unknown-column", "unknown-kind", "bad-time", "bad-embedding", "duplicate-id", "missing-column",
        "bad-namespace", "truncated", "miscounted", "newer-format", "newer-schema", "bad-json"])
def test_a_bad_dump_is_refused_naming_the_line_and_nothing_is_stored(module_daemon, lines, expected):
    # One daemon for every case (a fresh one each cost ≈ 3 s); every dump is refused, so its store stays empty.
    with module_daemon.client("acme") as client:
        with pytest.raises(grpc.RpcError) as refused:
            client.restore_store(lines)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert expected in refused.value.details() and "nothing was stored" in refused.value.details()
        assert client.get_status().memory_count == 0


def test_the_cli_routes_a_dump_to_the_restore_and_plain_records_to_the_import(daemon, workdir):
    bad = workdir / "bad.jsonl"
    bad.write_text("\n".join(_dump(_memory("mem_1"), _memory("mem_2", colour="blue"))) + "\n")
    refused = _cli(daemon, "import", str(bad))
    assert refused.returncode == 1 and "line 3: memory has no column 'colour'" in refused.stderr

    good = "\n".join(_dump(_memory("mem_1"), _memory("mem_2", archived_at="2026-02-01T00:00:00Z"))) + "\n"
    restored = _cli(daemon, "import", "-", "--namespace", "acme", stdin=good)
    assert restored.returncode == 0 and "restored 2 memory" in restored.stdout, restored.stderr
    plain = _cli(daemon, "import", "-", "--namespace", "acme", stdin='{"id": "x-1", "text": "A plain record"}\n')
    assert plain.returncode == 0 and "imported 1" in plain.stdout, plain.stderr
    with daemon.client("acme") as client:
        assert client.get_status().memory_count == 3
        archived = client.open_memories(ids=["mem_2"]).memories[0]
        assert archived.archived_at == "2026-02-01T00:00:00Z" and archived.long_term is False


def test_backup_while_four_clients_write_holds_every_acknowledged_write(daemon, workdir):
    acknowledged: list[str] = []
    facts: list[str] = []
    stop = threading.Event()
    started = threading.Barrier(5)
    failures: list[BaseException] = []

    def write(writer: int) -> None:
        try:
            with daemon.client("busy") as client:
                for sequence in range(10_000):
                    if sequence == 3:
                        started.wait(timeout=300)
                    if stop.is_set():
                        return
                    if sequence % 3 == 2:  # a new owner supersedes the last: history in the graph too
                        facts.append(client.upsert_fact(subject=f"service-{writer}", predicate="owner",
                                                        object=f"team-{sequence}", object_kind="literal",
                                                        create_entities=True).fact.id)
                        continue
                    reply = client.save_memory(content=f"Writer {writer} entry {sequence}: build {writer * 1000 + sequence} "
                                                       f"passed on runner r{sequence % 7}", extract_facts=False)
                    acknowledged.append(reply.memory.id)
        except BaseException as error:  # noqa: BLE001 - reported below
            failures.append(error)

    writers = [threading.Thread(target=write, args=(n,)) for n in range(4)]
    for thread in writers:
        thread.start()
    try:
        started.wait(timeout=300)  # every writer has written and is still writing
        before, facts_before = set(acknowledged), set(facts)
        dest = workdir / "backups" / "store.duckdb"
        dest.parent.mkdir()
        result = _cli(daemon, "backup", str(dest), "--json")
    finally:
        stop.set()
        for thread in writers:
            thread.join()
    assert not failures, failures
    assert result.returncode == 0, result.stderr
    reply = json.loads(result.stdout)
    assert reply["path"] == str(dest) and int(reply["size_bytes"]) == dest.stat().st_size
    assert stat.S_IMODE(dest.stat().st_mode) == 0o600
    assert [p.name for p in dest.parent.iterdir()] == ["store.duckdb"], "no staging files are left behind"

    with duckdb.connect(str(dest), read_only=True) as con:
        stored = {r[0] for r in con.execute("SELECT id FROM memories").fetchall()}
        stored_facts = {r[0] for r in con.execute("SELECT id FROM facts").fetchall()}
        keys = con.execute("SELECT count(*) FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'").fetchone()
        version = con.execute("SELECT max(version) FROM schema_version").fetchone()[0]
    assert before <= stored and facts_before <= stored_facts, "every write acknowledged before the backup began is in it"
    assert facts_before, "the writers wrote facts before the backup"
    assert int(reply["rows"]["memories"]) == len(stored) >= len(before) >= 4
    assert keys[0] >= 7 and version == SCHEMA_VERSION

    again = _cli(daemon, "backup", str(dest))
    assert again.returncode == 1 and "already exists" in again.stderr
    relative = _cli(daemon, "memory", "backup-store", "--dest", "store2.duckdb")
    assert relative.returncode == 1 and "give an absolute path" in relative.stderr

    copy = Daemon(workdir / "restored")
    copy.data_dir.mkdir(parents=True)
    shutil.copyfile(dest, copy.data_dir / "cortexd.duckdb")
    copy.start()
    try:
        with copy.client("busy") as client:
            integrity = client.verify_integrity()
            assert integrity.ok and integrity.rows_checked == len(stored_facts)
            assert client.get_status().memory_count == len(stored)
            found = client.open_memories(ids=sorted(before)[:50]).memories
            assert len(found) == min(50, len(before))
    finally:
        copy.stop()
    assert os.path.exists(dest)
