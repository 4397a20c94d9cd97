"""Memory dynamics on a real store: observed use reinforces, promotion, gc archives without deleting, clusters, consolidation."""

from __future__ import annotations

import pytest

from memory_daemon.core.config import Limits
from memory_daemon.core.errors import InvalidArgument
from memory_daemon.memory.service import ImportItem, MemoryService, NewMemory
from memory_daemon.store import Database, MemoryRepository


@pytest.fixture
def memories(tmp_path):
    database = Database(tmp_path / "dyn.duckdb")
    yield MemoryService(MemoryRepository(database), Limits())
    database.close()


def test_observed_use_reinforces_only_what_the_answer_used(memories):
    port = memories.save("ns", NewMemory("The staging API listens on port 8443 behind nginx")).memory
    lunch = memories.save("ns", NewMemory("Team lunch is on Fridays at the Thai place")).memory
    used, unused = memories.observe_usage("ns", [port.id, lunch.id], "Use port 8443 on staging; nginx proxies the API.")
    assert [m.id for m in used] == [port.id] and unused == [lunch.id]
    assert used[0].use_count == 1 and used[0].strength > port.strength


def test_gc_archives_without_deleting_and_spares_long_term(memories):
    memories.import_items([ImportItem(f"old{i}", f"old note {i} about the 2019 offsite", "ns", "2019-03-01T00:00:00Z")
                           for i in range(3)])
    fresh = memories.save("ns", NewMemory("fresh note about the 2019 offsite photos")).memory
    keep = memories.search("ns", "old note 0", 1, (), "", "")[0].memory
    memories.promote("ns", [keep.id], auto=False)
    # Imported just now: the grace period spares the two forgettable ones, however old their records are.
    found, checked, _, spared = memories.collect_garbage("ns", apply=True, threshold=None)
    assert (found, checked, spared) == ([], 4, 2)
    would, checked, _, spared = memories.collect_garbage("ns", apply=False, threshold=None, grace_days=0)
    assert checked == 4 and len(would) == 2 and keep.id not in would and fresh.id not in would and spared == 0
    assert memories.collect_garbage("ns", False, None, 0)[0] == would  # without apply nothing changes
    archived, _, long_term, _ = memories.collect_garbage("ns", apply=True, threshold=None, grace_days=0)
    assert archived == would and long_term == 1
    assert {h.memory.id for h in memories.search("ns", "2019 offsite", 10, (), "", "")} == {keep.id, fresh.id}
    opened = memories.open("ns", archived)
    assert all(m.archived_at is not None for m in opened)
    exported, next_offset = memories.export("ns", 0, 0)
    assert {m.id for m in exported} >= set(archived) and next_offset == 0
    with pytest.raises(InvalidArgument, match="forget_threshold"):
        memories.collect_garbage("ns", apply=False, threshold=5.0)
    with pytest.raises(InvalidArgument, match="grace_days"):
        memories.collect_garbage("ns", apply=False, threshold=None, grace_days=-1)


def test_promotion_by_rule_and_explicitly(memories):
    busy = memories.save("ns", NewMemory("the deploy script lives in ops/deploy.sh")).memory
    quiet = memories.save("ns", NewMemory("the wiki has a glossary page")).memory
    for _ in range(3):
        memories.touch("ns", busy.id, boost_strength=False)
    promoted = memories.promote("ns", [], auto=True)
    assert [m.id for m in promoted] == [busy.id] and promoted[0].long_term
    assert memories.promote("ns", [quiet.id], auto=False)[0].long_term
    with pytest.raises(InvalidArgument, match="needs ids, or auto=true"):
        memories.promote("ns", [], auto=False)


def test_cluster_and_consolidate_keep_provenance(daemon):
    with daemon.client("kb") as client:
        # Imported, because save_memory would already merge such near-duplicates.
        client.import_records([{"id": "a", "text": "The release checklist lives in the ops wiki"},
                               {"id": "b", "text": "Our release checklist is kept on the ops wiki page"},
                               {"id": "c", "text": "Grandma's birthday is in May"}])
        assert client.wait_for_update_checks(120) == 0
        by_external = {m.external_id: m for m in client.export_memories().memories}
        a, b = by_external["a"], by_external["b"]
        clusters = client.cluster_memories(similarity=0.6).clusters
        assert any({a.id, b.id} <= set(c.ids) for c in clusters)
        merged = client.consolidate_memories(ids=[a.id, b.id], content="The release checklist is on the ops wiki")
        assert list(merged.merged) == [a.id, b.id]
        assert list(merged.memory.meta["consolidated_from"]) == [a.id, b.id]
        originals = client.open_memories(ids=[a.id, b.id]).memories
        assert {m.superseded_by for m in originals} == {merged.memory.id}
        hits = client.search_memory(query="where is the release checklist?").hits
        assert hits[0].memory.id == merged.memory.id


def test_dynamics_verbs_on_the_cli(daemon):
    import json
    import subprocess

    from conftest import CORTEXD

    with daemon.client("cli") as client:
        kept = client.save_memory(content="The build cache lives in /var/cache/build").memory

    def cortexd(*args: str) -> dict:
        done = subprocess.run([*CORTEXD, "memory", *args, "--daemon", daemon.address, "--namespace", "cli"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    previewed = cortexd("collect-garbage", "--grace-days", "0", "--forget-threshold", "2")
    assert previewed["archived"] == [kept.id] and not previewed.get("applied")
    assert cortexd("export-memories")["memories"][0].get("archived_at", "") == "", "gc only reports unless --apply"
    assert cortexd("promote-memory", "--ids", kept.id)["promoted"][0]["long_term"] is True
    assert [m["id"] for m in cortexd("export-memories")["memories"]] == [kept.id]
