"""Faults are reported as what they are, through a real daemon and a real proxy: a full disk is RESOURCE_EXHAUSTED
naming the path and the free space, deep JSON and invalid UTF-8 are INVALID_ARGUMENT (or a JSON-RPC parse error on
the proxy's stdin) and store nothing, JSON-RPC errors keep the request's id, and the log shows no traceback."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading

import grpc
import pytest

from conftest import CORTEXD, Daemon, mcp_session
from cortexd.connect import call_metadata
from cortexd.v1 import cortexd_pb2 as pb

pytestmark = pytest.mark.anyio
TINY_DISK = "1m"
DEEP = 100_000


def _raw_call(daemon: Daemon, method: str, reply_class, payload: bytes, namespace: str = "acme"):
    """A unary call with hand-made request bytes, as a client in another language might send them."""
    with grpc.insecure_channel(daemon.address) as channel:
        call = channel.unary_unary(method, request_serializer=lambda data: data,
                                   response_deserializer=reply_class.FromString)
        return call(payload, metadata=call_metadata(namespace, None), timeout=60)


def _string_field(number: int, data: bytes) -> bytes:
    """One length-delimited field in protobuf's wire format (lengths under 128 bytes)."""
    assert len(data) < 128
    return bytes([number << 3 | 2, len(data)]) + data


def _memories(daemon: Daemon) -> int:
    with daemon.client() as client:
        return client.get_status().memory_count


def _no_traceback(daemon: Daemon) -> None:
    log = daemon.log()
    assert "Traceback" not in log and '"internal_error"' not in log, log[-3000:]


# -- disk full ------------------------------------------------------------------------------------------------------

def _own_mount_namespace() -> list[str] | None:
    """unshare's arguments for a private mount namespace where this process may mount a tmpfs, or None."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    flags = ["--mount"] if os.geteuid() == 0 else ["--mount", "--map-root-user"]
    probe = subprocess.run([unshare, *flags, "sh", "-c", 'mount -t tmpfs -o size=64k tmpfs "$0"', "/mnt"],
                           capture_output=True)
    return [unshare, *flags] if probe.returncode == 0 else None


@pytest.fixture
def daemon_on_a_tiny_disk(workdir):
    """A daemon whose data dir is a 1 MiB tmpfs, mounted in a mount namespace of its own (nothing leaks to the
    machine, and it goes away with the daemon): a real full disk, not a simulated one."""
    namespace = _own_mount_namespace()
    if namespace is None:
        pytest.skip("needs unshare and the right to mount a tmpfs in a private mount namespace")
    daemon = Daemon(workdir)
    daemon.data_dir.mkdir(parents=True)
    mount_then_serve = ["sh", "-c", f'mount -t tmpfs -o size={TINY_DISK} tmpfs "$0" && exec "$@"', str(daemon.data_dir)]
    with open(daemon.log_path, "ab") as log:
        daemon.process = subprocess.Popen(
            [*namespace, *mount_then_serve, *CORTEXD, "serve", "--data-dir", str(daemon.data_dir),
             "--listen", daemon.address], stdout=log, stderr=log, stdin=subprocess.DEVNULL)
    daemon.wait_ready()
    yield daemon
    daemon.stop(signal.SIGKILL)  # a clean stop with a full disk is another test's concern


async def test_a_full_disk_is_resource_exhausted_naming_the_path_and_free_space(daemon_on_a_tiny_disk):
    daemon = daemon_on_a_tiny_disk
    acknowledged = 0
    with daemon.client("acme") as client:
        for number in range(1000):
            try:
                client.save_memory(content=f"filler note {number}", context="c" * 16_000)
            except grpc.RpcError as error:
                refused = error
                break
            acknowledged += 1
        else:
            pytest.fail("the 1 MiB disk never filled up")
        assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, f"{refused.code()}: {refused.details()}"
        details = refused.details()
        assert details.startswith("disk full: could not write ")
        assert str(daemon.data_dir) in details and "No space left on device" in details
        assert "free on its file system" in details
        # Nothing half-stored: the store holds exactly the acknowledged writes, and reads go on.
        assert client.get_status().memory_count == acknowledged
        assert client.search_memory(query="filler note").hits

    async with mcp_session(daemon.address, "acme") as host:
        result = await host.call_tool("save_memory", {"content": "one more filler note", "context": "c" * 16_000})
        assert result.is_error and "disk full" in result.content[0].text, result.content[0].text
    assert _memories(daemon) == acknowledged
    log = daemon.log()
    assert "Traceback" not in log and '"internal_error"' not in log
    assert sum('"resource_exhausted"' in line for line in log.splitlines()) == 2


# -- deep JSON ------------------------------------------------------------------------------------------------------

def test_json_nested_100k_deep_is_invalid_argument_and_stores_nothing(daemon):
    deep = "[" * DEEP + "]" * DEEP
    with grpc.insecure_channel(daemon.address) as channel:
        bridge = channel.unary_unary("/cortexd.v1.McpBridge/CallTool", request_serializer=pb.CallToolRequest.SerializeToString,
                                     response_deserializer=pb.CallToolReply.FromString)
        observe = channel.unary_unary("/cortexd.v1.MemoryService/RecordObservation",
                                      request_serializer=pb.RecordObservationRequest.SerializeToString,
                                      response_deserializer=pb.RecordObservationReply.FromString)
        calls = [
            (bridge, pb.CallToolRequest(name="save_memory", arguments_json='{"content": "x", "meta": %s}' % deep),
             "save_memory: arguments is nested too deeply to read"),
            (observe, pb.RecordObservationRequest(upstream="github", tool="create_issue",
                                                  arguments_json="[" * 16_000 + "]" * 16_000),
             "arguments_json is nested too deeply to read"),
        ]
        for call, request, expected in calls:
            with pytest.raises(grpc.RpcError) as refused:
                call(request, metadata=call_metadata("acme", None), timeout=60)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, refused.value.details()
            assert expected in refused.value.details()
    with daemon.client("acme") as client:
        header = next(iter(client.export_store()))
        with pytest.raises(grpc.RpcError) as refused:
            client.restore_store([header, '{"kind": "memory", "row": %s}' % deep])
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "line 2: nested too deeply to read" in refused.value.details()
    assert _memories(daemon) == 0
    _no_traceback(daemon)


# -- invalid UTF-8 over gRPC ----------------------------------------------------------------------------------------

def test_invalid_utf8_over_grpc_is_invalid_argument_naming_the_field(daemon):
    bad = b"caf\xe9 \xff"
    cases = [
        ("/cortexd.v1.MemoryService/SaveMemory", pb.SaveMemoryReply, _string_field(1, bad), "content is not valid UTF-8"),
        ("/cortexd.v1.MemoryService/SaveMemory", pb.SaveMemoryReply,
         _string_field(1, b"fine") + _string_field(6, bad), "context is not valid UTF-8"),
        ("/cortexd.v1.MemoryService/AnalyzeMessages", pb.AnalyzeMessagesReply,
         _string_field(1, _string_field(2, bad)), "items.message is not valid UTF-8"),
        ("/cortexd.v1.GraphService/UpsertFact", pb.UpsertFactReply,
         _string_field(1, bad) + _string_field(2, b"uses") + _string_field(3, b"x"), "subject is not valid UTF-8"),
    ]
    for method, reply_class, payload, expected in cases:
        with pytest.raises(grpc.RpcError) as refused:
            _raw_call(daemon, method, reply_class, payload)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT, f"{method}: {refused.value.details()}"
        assert expected in refused.value.details()

    with grpc.insecure_channel(daemon.address) as channel:  # a streamed record that does not decode
        stream = channel.stream_unary("/cortexd.v1.MemoryService/ImportMemories", request_serializer=lambda b: b,
                                      response_deserializer=pb.ImportReply.FromString)
        with pytest.raises(grpc.RpcError) as refused:
            stream(iter([_string_field(1, b"r1") + _string_field(2, bad)]), metadata=call_metadata("acme", None),
                   timeout=60)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "text is not valid UTF-8" in refused.value.details()
    assert _memories(daemon) == 0
    _no_traceback(daemon)


# -- the proxy's stdin ----------------------------------------------------------------------------------------------

class RawProxy:
    """A real `cortexd proxy` fed raw bytes on stdin, its replies read line by line."""

    def __init__(self, address: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memory_daemon", "proxy", "--daemon", address, "--no-auto-start",
             "--namespace", "acme"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "raw", "version": "0"}}}
        assert self.exchange(json.dumps(initialize).encode())["id"] == 0
        self.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')

    def _read(self) -> None:
        for line in self.process.stdout:
            if line.strip():
                self._replies.put(json.loads(line))

    def send(self, line: bytes) -> None:
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def exchange(self, line: bytes) -> dict:
        self.send(line)
        return self._replies.get(timeout=60)

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def raw_proxy(daemon):
    proxy = RawProxy(daemon.address)
    yield proxy
    proxy.close()


def test_invalid_utf8_on_the_proxy_stdin_is_a_parse_error_and_nothing_is_stored(daemon, raw_proxy):
    reply = raw_proxy.exchange(b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "save_memory", '
                               b'"arguments": {"content": "caf\xe9 is where we meet \xff"}}}')
    assert reply["id"] == 7, reply
    assert reply["error"]["code"] == -32700 and "not valid UTF-8" in reply["error"]["message"]
    assert _memories(daemon) == 0  # before: stored, with U+FFFD for each bad byte
    saved = raw_proxy.exchange(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {
        "name": "save_memory", "arguments": {"content": "café is where we meet"}}}, ensure_ascii=False).encode())
    assert saved["id"] == 8 and not saved["result"]["isError"]
    assert saved["result"]["structuredContent"]["memory"]["content"] == "café is where we meet"
    assert raw_proxy.process.poll() is None


@pytest.mark.parametrize(("line", "request_id", "code"), [
    (b'{"jsonrpc": "2.0", "id": 11, "method": "tools/call", "params": ["save_memory", {"content": "x"}]}', 11, -32602),
    (b'{"jsonrpc": "2.0", "id": "req-12", "method": "tools/call", "params": {"name": "save_memory", "arguments": '
     b'{"content": "x", "meta": ' + b"[" * DEEP + b"]" * DEEP + b"}}}", "req-12", -32700),
    (b'{"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "save_memory", "arguments": '
     b'{"content": "lone \\ud800 surrogate"}}}', 13, -32700),
    (b'{"jsonrpc": "2.0", "id": 14, "method": 5}', 14, -32600),
    (b"{this is not json", None, -32700),
])
def test_json_rpc_errors_keep_the_request_id_whenever_it_can_be_read(daemon, raw_proxy, line, request_id, code):
    reply = raw_proxy.exchange(line)
    assert reply["id"] == request_id, reply
    assert reply["error"]["code"] == code, reply
    listed = raw_proxy.exchange(b'{"jsonrpc": "2.0", "id": 99, "method": "tools/list", "params": {}}')
    assert listed["id"] == 99 and listed["result"]["tools"]
    assert _memories(daemon) == 0
