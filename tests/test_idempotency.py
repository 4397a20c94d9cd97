"""Idempotent writes: one key, one write, one reply; across daemon restarts and through the proxy's retry."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path

import anyio
import grpc
import pytest

from conftest import CORTEXD, mcp_session

H2_DATA_FRAME = 0x0


def _count(daemon, namespace: str, query: str) -> int:
    with daemon.client(namespace) as client:
        return sum(query in h.memory.content for h in client.search_memory(query=query, limit=50).hits)


def test_the_same_write_sent_twice_with_one_key_is_stored_once_and_answered_alike(daemon):
    with daemon.client("acme") as client:
        first = client.save_memory(content="The release train leaves every second Wednesday", idempotency_key="k-1")
        again = client.save_memory(content="The release train leaves every second Wednesday", idempotency_key="k-1")
        assert again == first
        assert client.get_status().memory_count == 1

        with pytest.raises(grpc.RpcError) as refused:
            client.save_memory(content="Something else entirely", idempotency_key="k-1")
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "idempotency-key 'k-1' was used" in refused.value.details()
        assert "different request (SaveMemory)" in refused.value.details()
        with pytest.raises(grpc.RpcError) as other_method:
            client.touch_memory(id=first.memory.id, idempotency_key="k-1")
        assert other_method.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as malformed:
            client.save_memory(content="x", idempotency_key="has spaces")
        assert malformed.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "idempotency-key" in malformed.value.details()

        fact = client.upsert_fact(subject="billing", predicate="owner", object="alice", create_entities=True,
                                  idempotency_key="k-2")
        assert client.upsert_fact(subject="billing", predicate="owner", object="alice", create_entities=True,
                                  idempotency_key="k-2") == fact
        tool = client.call_tool("log_decision", {"type": "tooling", "question": "Which CI?", "chosen": "GitHub Actions"},
                                idempotency_key="k-3")
        assert client.call_tool("log_decision", {"type": "tooling", "question": "Which CI?",
                                                 "chosen": "GitHub Actions"}, idempotency_key="k-3") == tool
        assert len(client.list_decisions().decisions) == 1
        assert client.search_memory(query="release train", idempotency_key="k-1").hits, "reads ignore keys"

    with daemon.client("ops") as other:  # keys belong to a namespace
        other.save_memory(content="Something else entirely", idempotency_key="k-1")
        assert other.get_status().memory_count == 2


def test_concurrent_sends_with_one_key_write_once(daemon):
    replies, errors = [], []

    def send() -> None:
        try:
            with daemon.client("acme") as client:
                replies.append(client.save_memory(content="Invoices are sent on the first of the month",
                                                  idempotency_key="same-key"))
        except grpc.RpcError as error:
            errors.append(error)

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors and len(replies) == 4
    assert len({r.memory.id for r in replies}) == 1 and all(r == replies[0] for r in replies)
    assert _count(daemon, "acme", "Invoices are sent") == 1


def test_a_key_outlives_a_daemon_restart_and_the_cli_passes_it(daemon):
    def remember() -> dict:
        result = subprocess.run(CORTEXD + ["remember", "Standups move to 9:30 from Monday", "--namespace", "acme",
                                           "--idempotency-key", "standup-change", "--json", "--daemon", daemon.address],
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    first = remember()
    daemon.stop()
    daemon.start()
    assert remember() == first
    with daemon.client("acme") as client:
        assert client.get_status().memory_count == 1


class HoldingRelay:
    """A Unix-socket relay between a proxy and the daemon. Once told to hold, it keeps the daemon's answers from
    the proxy, and it cuts the proxy's connection when told: the daemon did the work, the proxy never heard."""

    def __init__(self, listen: Path, daemon_socket: Path) -> None:
        self.listen = listen
        self.daemon_socket = daemon_socket
        self.holding = False
        self.reply_held = asyncio.Event()
        self._clients: list[asyncio.StreamWriter] = []
        self._tasks: set[asyncio.Task] = set()
        self._server: asyncio.AbstractServer | None = None

    @property
    def address(self) -> str:
        return f"unix:{self.listen}"

    async def start(self) -> None:
        self._server = await asyncio.start_unix_server(self._relay, path=str(self.listen))

    def cut(self) -> None:
        self.holding = False
        for writer in self._clients:
            writer.transport.abort()
        self._clients.clear()

    async def close(self) -> None:
        self.cut()
        self._server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _relay(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        self._tasks.add(asyncio.current_task())
        self._clients.append(client_writer)
        try:
            daemon_reader, daemon_writer = await asyncio.open_unix_connection(str(self.daemon_socket))
        except OSError:
            client_writer.transport.abort()
            return

        async def to_daemon() -> None:
            try:
                while data := await client_reader.read(65536):
                    daemon_writer.write(data)
            except OSError:  # the connection was cut
                pass
            daemon_writer.close()

        async def to_client() -> None:
            # HTTP/2 frames from the server: 9-byte header (length, type, flags, stream), then the payload. A DATA
            # frame on a stream carries a reply message; while holding, frames are dropped, and a DATA frame noted.
            pending = b""
            while data := await _read_or_eof(daemon_reader):
                pending += data
                while len(pending) >= 9 and len(pending) >= 9 + int.from_bytes(pending[:3], "big"):
                    size = 9 + int.from_bytes(pending[:3], "big")
                    frame, pending = pending[:size], pending[size:]
                    if not self.holding:
                        client_writer.write(frame)
                    elif frame[3] == H2_DATA_FRAME and size > 9:
                        self.reply_held.set()
            if not self.holding:  # a held connection stays open until cut, whatever the daemon does
                client_writer.close()

        await asyncio.gather(to_daemon(), to_client(), return_exceptions=True)


async def _read_or_eof(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.read(65536)
    except OSError:  # the daemon was killed
        return b""


@pytest.mark.anyio
async def test_the_proxy_retries_a_call_a_daemon_restart_cut_off_without_writing_twice(daemon, workdir):
    relay = HoldingRelay(workdir / "relay.sock", daemon.socket)
    await relay.start()
    content = "The on-call handbook lives in the ops wiki under Runbooks"
    try:
        async with mcp_session(relay.address, "acme") as host:
            warm = await host.call_tool("save_memory", {"content": "Warm-up: the proxy is connected"})
            assert not warm.is_error, warm.content[0].text
            relay.holding = True
            results = []
            async with anyio.create_task_group() as group:
                async def call() -> None:
                    results.append(await host.call_tool("save_memory", {"content": content}))

                group.start_soon(call)
                with anyio.fail_after(120):
                    await relay.reply_held.wait()  # the daemon stored it, remembered the key and answered
                daemon.process.kill()
                daemon.process.wait()
                await anyio.to_thread.run_sync(daemon.start)
                relay.cut()  # now the proxy learns the call was cut off, and retries with the same key
            (result,) = results
            assert not result.is_error, result.content[0].text
            reply = json.loads(result.content[0].text)
    finally:
        await relay.close()

    # Saved again, the same content would have been merged into the first save (use count 1, merged true), which
    # hides a duplicate from the count: the first reply itself must come back, and the memory be untouched.
    assert reply["merged"] is False and reply["memory"]["content"] == content
    with daemon.client("acme") as client:
        assert client.get_status().memory_count == 2, "the retried save was not applied twice"
        assert client.open_memories(ids=[reply["memory"]["id"]]).memories[0].use_count == 0
    assert _count(daemon, "acme", "on-call handbook") == 1


def test_remembered_replies_are_bounded_by_age_and_count(tmp_path):
    from datetime import timedelta

    from memory_daemon.store import Database
    from memory_daemon.store.idempotency import IdempotencyRepository, RememberedReply
    from memory_daemon.core.timefmt import utc_now

    database = Database(tmp_path / "cortexd.duckdb")
    try:
        repository = IdempotencyRepository(database)
        now = utc_now()
        for n in range(12):
            repository.remember("acme", f"k{n}", RememberedReply("/m", "d", b"reply", now - timedelta(hours=n * 3)))
        repository.prune(now - timedelta(hours=24), keep_newest=5)
        assert [repository.find("acme", f"k{n}", now - timedelta(days=30)) is not None for n in range(12)] == \
               [True] * 5 + [False] * 7
        assert repository.find("acme", "k4", now - timedelta(hours=11)) is None, "an expired reply is not replayed"
    finally:
        database.close()
