"""Crash safety: SIGKILL under 8 concurrent writers loses no acknowledged write, the store reopens, proxies reconnect."""

from __future__ import annotations

import json
import os
import signal
import uuid
from dataclasses import dataclass, field

import anyio
import grpc
import pytest

from conftest import Daemon, mcp_session
from cortexd.connect import CHANNEL_OPTIONS, call_metadata
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc

pytestmark = pytest.mark.anyio

ROUNDS = 5
WRITERS = 8
LOAD_SECONDS = 3.0  # of writing before each kill
NAMESPACE = "crash"


@dataclass
class Acknowledged:
    """Writes the daemon confirmed: each must survive every later crash."""

    memories: dict[str, str | None] = field(default_factory=dict)  # id -> content (None: merged into that id)
    facts: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (subject, object)


async def _write_until_the_daemon_dies(address: str, round_number: int, writer: int, acknowledged: Acknowledged) -> None:
    metadata = call_metadata(NAMESPACE, None)
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        memory, graph = pb_grpc.MemoryServiceStub(channel), pb_grpc.GraphServiceStub(channel)
        sequence = 0
        while True:
            sequence += 1
            tag = uuid.uuid4().hex[:10]
            try:
                if sequence % 4 == 1:  # a fact first, so even a writer cut off early has written one
                    subject, value = f"service-{tag}", f"team-{round_number}-{writer}-{sequence}"
                    reply = await graph.UpsertFact(
                        pb.UpsertFactRequest(subject=subject, predicate="owner", object=value, object_kind="literal",
                                             create_entities=True), metadata=metadata, timeout=30)
                    acknowledged.facts[reply.fact.id] = (subject, value)
                else:
                    content = f"Crash round {round_number} writer {writer} entry {sequence}: build {tag} passed"
                    reply = await memory.SaveMemory(pb.SaveMemoryRequest(content=content), metadata=metadata, timeout=30)
                    acknowledged.memories[reply.memory.id] = None if reply.merged else content
            except grpc.aio.AioRpcError as error:
                # The kill: whatever was in flight was never acknowledged, so it may or may not be stored.
                assert error.code() == grpc.StatusCode.UNAVAILABLE, error
                return


async def _load_then_kill(daemon: Daemon, round_number: int, acknowledged: Acknowledged) -> int:
    before = len(acknowledged.memories) + len(acknowledged.facts)
    async with anyio.create_task_group() as group:
        for writer in range(WRITERS):
            group.start_soon(_write_until_the_daemon_dies, daemon.address, round_number, writer, acknowledged)
        await anyio.sleep(LOAD_SECONDS)
        os.kill(daemon.process.pid, signal.SIGKILL)
    await anyio.to_thread.run_sync(daemon.process.wait)
    return len(acknowledged.memories) + len(acknowledged.facts) - before


def _assert_every_acknowledged_write_is_stored(daemon: Daemon, acknowledged: Acknowledged) -> None:
    with daemon.client(NAMESPACE) as client:
        ids = list(acknowledged.memories)
        stored = {}
        for start in range(0, len(ids), 100):
            stored.update({m.id: m.content for m in client.open_memories(ids=ids[start:start + 100]).memories})
        for memory_id, content in acknowledged.memories.items():
            assert memory_id in stored, f"acknowledged memory {memory_id} was lost"
            assert content is None or stored[memory_id] == content
        facts = {f.id: (f.subject, f.object) for f in client.read_graph(limit=1000).facts}
        assert len(facts) < 1000, "read_graph's limit would hide facts; lower the load"
        for fact_id, fact in acknowledged.facts.items():
            assert facts.get(fact_id) == fact, f"acknowledged fact {fact_id} was lost"
        assert client.verify_integrity().ok


async def test_sigkill_under_concurrent_writers_loses_no_acknowledged_write(workdir):
    daemon = Daemon(workdir).start()
    acknowledged = Acknowledged()
    try:
        async with mcp_session(daemon.address, NAMESPACE) as host:  # a host whose proxy lives through every crash
            for round_number in range(ROUNDS):
                with daemon.client() as client:
                    await anyio.to_thread.run_sync(client.get_model_status)  # waits for the model load
                written = await _load_then_kill(daemon, round_number, acknowledged)
                assert written > 0, "no write was acknowledged before the kill"

                await anyio.to_thread.run_sync(daemon.start)  # the same data dir, no repair step
                await anyio.to_thread.run_sync(_assert_every_acknowledged_write_is_stored, daemon, acknowledged)

                saved = await host.call_tool("save_memory", {"content": f"Written through the proxy after crash "
                                                                        f"{round_number}: it reconnected"})
                assert not saved.is_error, saved.content[0].text
                reply = json.loads(saved.content[0].text)
                acknowledged.memories[reply["memory"]["id"]] = None if reply["merged"] else reply["memory"]["content"]
    finally:
        daemon.stop()
    assert len(acknowledged.memories) > ROUNDS and acknowledged.facts
