"""The daemon as a process: one per data dir, safe sockets, tokens over TCP, health, reflection, clean shutdown."""

from __future__ import annotations

import signal
import stat
import subprocess

import duckdb
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from conftest import CORTEXD, Daemon, free_port
from cortexd.connect import call_metadata
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
from memory_daemon.client.python_client import CortexdClient


def test_socket_is_user_only(daemon):
    assert stat.S_IMODE(daemon.socket.stat().st_mode) == 0o600
    assert stat.S_IMODE(daemon.socket.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(daemon.data_dir.stat().st_mode) == 0o700


def test_second_daemon_on_the_same_data_dir_is_refused_naming_the_first(daemon, workdir):
    other_socket = workdir / "other.sock"
    second = subprocess.run(
        CORTEXD + ["serve", "--data-dir", str(daemon.data_dir), "--listen", f"unix:{other_socket}"],
        capture_output=True, text=True, timeout=60,
    )
    assert second.returncode == 3
    assert f"pid {daemon.process.pid}" in second.stderr and str(daemon.data_dir) in second.stderr
    assert not other_socket.exists()
    with daemon.client() as client:
        assert client.get_status().pid == daemon.process.pid


def test_second_daemon_on_the_same_socket_is_refused(daemon, workdir):
    second = subprocess.run(
        CORTEXD + ["serve", "--data-dir", str(workdir / "elsewhere"), "--listen", daemon.address],
        capture_output=True, text=True, timeout=60,
    )
    assert second.returncode == 3 and f"pid {daemon.process.pid}" in second.stderr
    with daemon.client() as client:
        assert client.get_status().pid == daemon.process.pid


def test_sigterm_checkpoints_removes_the_socket_and_keeps_the_data(daemon):
    with daemon.client("acme") as client:
        saved = client.save_memory(content="Survives a restart").memory
    assert daemon.stop(signal.SIGTERM) == 0
    assert not daemon.socket.exists()
    assert not (daemon.data_dir / "cortexd.duckdb.wal").exists(), "the WAL was checkpointed into the file"
    with duckdb.connect(str(daemon.data_dir / "cortexd.duckdb"), read_only=True) as con:
        assert con.execute("SELECT content FROM memories WHERE id = ?", [saved.id]).fetchone() == ("Survives a restart",)
    daemon.start()
    with daemon.client("acme") as client:
        assert client.open_memories(ids=[saved.id]).memories[0].content == "Survives a restart"
    assert '"event": "rpc"' in daemon.log() and '"ms":' in daemon.log()


def test_health_and_reflection(daemon):
    daemon.wait_serving()  # NOT_SERVING until the models have loaded
    with grpc.insecure_channel(daemon.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "cortexd.v1.MemoryService", "cortexd.v1.McpBridge"):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)
        names = {s.name for r in replies for s in r.list_services_response.service}
        assert {"cortexd.v1.MemoryService", "cortexd.v1.McpBridge", "grpc.health.v1.Health"} <= names


@pytest.mark.parametrize("host", ["127.0.0.1", "0.0.0.0"])
def test_tcp_without_a_token_is_refused(workdir, host):
    result = subprocess.run(
        CORTEXD + ["serve", "--data-dir", str(workdir / "data"), "--listen", f"{host}:{free_port()}"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "without a bearer token" in result.stderr and "--token-file" in result.stderr


def test_tcp_requires_the_right_token(workdir):
    token_file = workdir / "token"
    token_file.write_text("s3cret-token\n")
    port = free_port()
    address = f"127.0.0.1:{port}"
    daemon = Daemon(workdir, extra_args=["--token-file", str(token_file)])
    daemon.process = subprocess.Popen(
        CORTEXD + ["serve", "--data-dir", str(daemon.data_dir), "--listen", address, "--token-file", str(token_file)],
        stdout=subprocess.DEVNULL, stderr=open(daemon.log_path, "ab"),
    )
    try:
        with CortexdClient(address, token="s3cret-token") as client:
            client.wait_ready(timeout=30)
            assert client.save_memory(content="over tcp").memory.id
        with grpc.insecure_channel(address) as channel:
            stub = pb_grpc.MemoryServiceStub(channel)
            for metadata in (call_metadata("x", None), call_metadata("x", "wrong-token")):
                with pytest.raises(grpc.RpcError) as raised:
                    stub.GetStatus(pb.GetStatusRequest(), metadata=metadata, timeout=10)
                assert raised.value.code() == grpc.StatusCode.UNAUTHENTICATED
            health = health_pb2_grpc.HealthStub(channel)
            serving = health_pb2.HealthCheckResponse.SERVING  # once the models have loaded
            assert any(u.status == serving for u in health.Watch(health_pb2.HealthCheckRequest(), timeout=60))
        assert "s3cret-token" not in daemon.log()
    finally:
        daemon.stop()


def test_a_store_from_a_newer_cortexd_is_refused(workdir):
    data = workdir / "data"
    data.mkdir()
    with duckdb.connect(str(data / "cortexd.duckdb")) as con:
        con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL, applied_at TIMESTAMP NOT NULL)")
        con.execute("INSERT INTO schema_version VALUES (999, now())")
    result = subprocess.run(
        CORTEXD + ["serve", "--data-dir", str(data), "--listen", f"unix:{workdir / 's.sock'}"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "schema version 999" in result.stderr and "upgrade cortexd" in result.stderr


def test_invalid_namespace_is_rejected(daemon):
    with CortexdClient(daemon.address, namespace="../etc") as client:
        with pytest.raises(grpc.RpcError) as raised:
            client.save_memory(content="x")
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "namespace '../etc' is invalid" in raised.value.details()


def test_concurrent_writes_to_one_memory_never_conflict(daemon):
    from concurrent.futures import ThreadPoolExecutor

    with daemon.client("acme") as client:
        memory_id = client.save_memory(content="The on-call rota changes every Monday").memory.id

        def touch(_):
            return client.touch_memory(id=memory_id).memory.use_count

        def save(n):
            return client.save_memory(content="The on-call rota changes every Monday").memory.id

        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(touch, range(24)))
            saved_ids = list(pool.map(save, range(8)))
        final = client.open_memories(ids=[memory_id]).memories[0]
    assert final.use_count == 24 + saved_ids.count(memory_id)
    assert memory_id in saved_ids, "identical content merges into the existing memory"
