"""Every request is checked whole before anything is stored, and nothing a store holds can break a reply: deep and
oversized fields are refused by name, and poison records written before the limits are answered around."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import grpc
import pytest

from conftest import Daemon, mcp_session
from cortexd.connect import call_metadata
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
# The limits as the README documents them.
META_DEPTH_LIMIT = 16
ENTITY_CHARS_LIMIT = 200
ENTITIES_LIMIT = 64
CONTEXT_BYTES_LIMIT = 16 * 1024
MEGABYTE = 1_000_000


def nested(depth: int) -> dict:
    """A JSON object nested `depth` levels deep."""
    value: dict = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


@pytest.fixture(scope="module")
def shared():
    """One daemon for the tests that only send what is refused: nothing they send is stored."""
    root = Path(tempfile.mkdtemp(prefix="cx"))
    running = Daemon(root).start()
    yield running
    running.stop()
    shutil.rmtree(root, ignore_errors=True)


def stored_memories(daemon: Daemon) -> int:
    with daemon.client() as client:
        return client.get_status().memory_count


def grpc_stubs(daemon: Daemon):
    channel = grpc.insecure_channel(daemon.address)
    return channel, pb_grpc.MemoryServiceStub(channel)


def save_with_meta(stub, namespace: str, content: str, meta: dict):
    request = pb.SaveMemoryRequest(content=content)
    request.meta.update(meta)  # not SaveMemoryRequest(meta=...): that copy re-parses the Struct and may fail here
    return stub.SaveMemory(request, metadata=call_metadata(namespace, None), timeout=60)


@pytest.mark.anyio
async def test_deep_meta_in_global_is_refused_and_every_search_from_another_namespace_succeeds(daemon):
    channel, stub = grpc_stubs(daemon)
    with channel:
        save_with_meta(stub, "global", "the zebra crossing is painted every spring", {"team": "roads"})
        # Typed gRPC stored depth 33 and reported success; depth 34-49 decoded nowhere (UNKNOWN).
        for depth in (META_DEPTH_LIMIT + 1, 20, 31, 34, 49):
            with pytest.raises(grpc.RpcError) as refused:
                save_with_meta(stub, "global", f"poison zebra meta {depth} levels deep", nested(depth))
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()
            assert "meta" in refused.value.details()
        async with mcp_session(daemon.address, "global") as host:
            # Through MCP, depth 34-49 was stored but reported INTERNAL.
            for depth in (34, 45, 49):
                result = await host.call_tool("save_memory", {"content": f"poison zebra by mcp {depth}",
                                                              "meta": nested(depth)})
                assert result.is_error and "invalid argument" in result.content[0].text
                assert "meta" in result.content[0].text
        assert stored_memories(daemon) == 1

        for namespace in ("acme", "other", "global"):
            hits = stub.SearchMemory(pb.SearchMemoryRequest(query="zebra poison"),
                                     metadata=call_metadata(namespace, None), timeout=60).hits
            assert [h.memory.content for h in hits] == ["the zebra crossing is painted every spring"]
            assert dict(hits[0].memory.meta) == {"team": "roads"}
        async with mcp_session(daemon.address, "acme") as host:
            result = await host.call_tool("search_memory", {"query": "zebra poison"})
            assert not result.is_error, result.content[0].text
            assert len(json.loads(result.content[0].text)["hits"]) == 1


def test_meta_at_the_limits_is_stored_and_read_back_intact(daemon):
    deepest = nested(META_DEPTH_LIMIT)
    channel, stub = grpc_stubs(daemon)
    with channel:
        saved = save_with_meta(stub, "acme", "a memory with the deepest meta allowed", deepest).memory
        opened = pb_grpc.MemoryServiceStub(channel).OpenMemories(
            pb.OpenMemoriesRequest(ids=[saved.id]), metadata=call_metadata("acme", None), timeout=60).memories[0]
    from google.protobuf import json_format

    assert json_format.MessageToDict(opened.meta) == json.loads(json.dumps(deepest), parse_int=float)


@pytest.mark.parametrize(("field", "value", "named"), [
    ("entities", ["e" * MEGABYTE], "entities is 1000000 characters; the limit is 200"),
    ("entities", ["e" * (ENTITY_CHARS_LIMIT + 1)], "entities is 201 characters; the limit is 200"),
    ("source", "s" * MEGABYTE, "source is 1000000 characters; the limit is 1024"),
    ("context", "c" * MEGABYTE, "context is 1000000 bytes; the limit is 16384 bytes"),
    ("context", "é" * (CONTEXT_BYTES_LIMIT // 2 + 1), "context is 16386 bytes; the limit is 16384 bytes"),
    ("session_id", "x" * MEGABYTE, "session_id is 1000000 characters; the limit is 200"),
    ("supersedes", "mem_" + "0" * 300, "supersedes is 304 characters; the limit is 200"),
])
def test_every_save_field_has_a_limit_and_nothing_is_stored_past_it(shared, field, value, named):
    with shared.client("acme") as client:
        with pytest.raises(grpc.RpcError) as refused:
            client.save_memory(content="a memory with one field too large", **{field: value})
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert named in refused.value.details()
    assert stored_memories(shared) == 0


@pytest.mark.parametrize(("rpc", "request_fields", "named"), [
    ("search_memory", {"query": "q" * (5 * MEGABYTE)}, "query is 5000000 characters; the limit is 4096"),
    ("search_memory", {"query": "ok", "session_id": "s" * MEGABYTE}, "session_id is 1000000 characters"),
    ("search_memory", {"query": "ok", "entity": "e" * MEGABYTE}, "entity is 1000000 characters; the limit is 200"),
    ("compile_context", {"task": "t" * (5 * MEGABYTE)}, "task is 5000000 characters; the limit is 4096"),
    ("compile_context", {"task": "ok", "session_id": "s" * MEGABYTE}, "session_id is 1000000 characters"),
    ("analyze_message", {"message": "hi", "session_id": "s" * MEGABYTE}, "session_id is 1000000 characters"),
    ("open_memories", {"ids": ["mem_" + "0" * MEGABYTE]}, "ids is 1000004 characters; the limit is 200"),
    ("touch_memory", {"id": "mem_" + "0" * MEGABYTE}, "id is 1000004 characters; the limit is 200"),
    ("retire_fact", {"fact_id": "fact_" + "0" * MEGABYTE}, "fact_id is 1000005 characters; the limit is 200"),
])
def test_queries_tasks_and_ids_are_capped_with_a_clear_error(shared, rpc, request_fields, named):
    with shared.client("acme") as client:
        with pytest.raises(grpc.RpcError) as refused:
            getattr(client, rpc)(**request_fields)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert named in refused.value.details()


def test_briefing_prompt_arguments_are_capped(shared):
    channel = grpc.insecure_channel(shared.address)
    with channel:
        with pytest.raises(grpc.RpcError) as refused:
            pb_grpc.McpBridgeStub(channel).GetPrompt(
                pb.GetPromptRequest(name="architecture-briefing", arguments={"component": "c" * MEGABYTE}),
                metadata=call_metadata("acme", None), timeout=60)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "component is 1000000 characters; the limit is 4096" in refused.value.details()


def test_entities_found_by_extraction_are_capped(daemon):
    with daemon.client("acme") as client:
        # A path-like token is taken for one entity as long as the token (it stored 65,536 characters once).
        saved = client.save_memory(content="Remember that the service lives at /srv/" + "a" * 20_000).memory
        opened = client.open_memories(ids=[saved.id]).memories[0]
    assert all(len(e) <= ENTITY_CHARS_LIMIT for e in opened.entities), [len(e) for e in opened.entities]
    assert len(opened.entities) <= ENTITIES_LIMIT


def _poisoned_dump(lines: list[str], template_id: str, rows: list[dict]) -> list[str]:
    """The dump with its one memory row replaced by `rows` (the end line recounted): what an older store held."""
    template = next(json.loads(line) for line in lines if json.loads(line).get("kind") == "memory")
    assert template["row"]["id"] == template_id
    poisoned = []
    for line in lines:
        record = json.loads(line)
        if record.get("kind") == "memory":
            for row in rows:
                full = {**template["row"], **row}
                if "search_text" in full:  # the lower-cased words a keyword match reads
                    full["search_text"] = full["content"].lower()
                poisoned.append(json.dumps({"kind": "memory", "row": full}))
        elif record.get("kind") == "end":
            record["rows"]["memory"] = len(rows)
            poisoned.append(json.dumps(record))
        else:
            poisoned.append(line)
    return poisoned


@pytest.mark.anyio
async def test_a_store_already_holding_poison_records_still_answers_every_search(daemon):
    """Rows written before the limits (restored here from a dump, as an older store would hold them): a meta
    nested 40 deep in global and ten memories with 1 MB contexts. Searches in any namespace, an export and an
    open all succeed; the deep meta is replaced by a note, and the store keeps it."""
    with daemon.client("global") as client:
        template = client.save_memory(content="template row for the poisoned dump").memory
        lines = list(client.export_store())
    rows = [{"id": "mem_poisondeepmeta0", "content": "poison meta about the zebra crossing", "meta": nested(40)}]
    rows += [{"id": f"mem_poisoncontext{i:02}", "content": f"zebra crossing note {i}", "context": "z" * MEGABYTE}
             for i in range(10)]
    channel, stub = grpc_stubs(daemon)
    with channel, daemon.client("global") as client:
        # Every other row of the dump is in the store already and is skipped; the poison rows are stored.
        restored = client.restore_store(_poisoned_dump(lines, template.id, rows), timeout=120)
        assert restored.restored["memory"] == 11

        for namespace in ("acme", "other", "global"):
            hits = stub.SearchMemory(pb.SearchMemoryRequest(query="zebra crossing poison"),
                                     metadata=call_metadata(namespace, None), timeout=120).hits
            assert hits, namespace
            deep = [h.memory for h in hits if h.memory.id == "mem_poisondeepmeta0"]
            if deep:
                assert list(deep[0].meta) == ["cortexd_meta_omitted"]
                assert "nested 40 levels deep" in deep[0].meta["cortexd_meta_omitted"]
        page = stub.ExportMemories(pb.ExportMemoriesRequest(), metadata=call_metadata("global", None), timeout=120)
        exported = list(page.memories)
        while page.next_offset:
            page = stub.ExportMemories(pb.ExportMemoriesRequest(offset=page.next_offset),
                                       metadata=call_metadata("global", None), timeout=120)
            exported += page.memories
        assert len({m.id for m in exported}) == 12
        opened = client.open_memories(ids=["mem_poisondeepmeta0"]).memories[0]
        assert list(opened.meta) == ["cortexd_meta_omitted"]
        # The store keeps the meta as it was: the lossless dump still carries it.
        kept = next(json.loads(line)["row"]["meta"] for line in client.export_store()
                    if '"mem_poisondeepmeta0"' in line)
        assert kept == nested(40)
    async with mcp_session(daemon.address, "acme") as host:
        result = await host.call_tool("search_memory", {"query": "zebra crossing poison"})
        assert not result.is_error, result.content[0].text[:300]
