"""Observability: Prometheus metrics, health that follows model readiness, and `cortexd doctor` with a fix per failure."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import time
import urllib.request

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from conftest import CORTEXD, Daemon, free_port

# Imported by the daemon at start-up (through PYTHONPATH): the model load waits until the gate file exists, so a
# test can look at the daemon while its models are certainly still loading.
MODEL_GATE = '''
import os
import time
from pathlib import Path

import preprocessing.registry as registry

_timed_load = registry.timed_load


def _gated_timed_load(*args, **kwargs):
    gate = Path(os.environ["CORTEXD_TEST_MODEL_GATE"])
    while not gate.exists():
        time.sleep(0.05)
    return _timed_load(*args, **kwargs)


registry.timed_load = _gated_timed_load
'''


def scrape(port: int) -> dict[tuple[str, tuple], float]:
    """Every sample on /metrics, keyed by (name, sorted labels)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=30) as response:
        text = response.read().decode()
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def doctor(*arguments: str) -> tuple[int, dict]:
    result = subprocess.run(CORTEXD + ["doctor", "--json", *arguments], capture_output=True, text=True, timeout=120)
    return result.returncode, json.loads(result.stdout)


def test_metrics_count_rpcs_errors_model_stages_and_store_size(workdir):
    port = free_port()
    daemon = Daemon(workdir, extra_args=["--metrics", f"127.0.0.1:{port}"]).start()
    try:
        with daemon.client("acme") as client:
            client.save_memory(content="The metrics endpoint listens on loopback only")
            client.search_memory(query="metrics endpoint")
            with pytest.raises(grpc.RpcError):
                client.open_memories(ids=["mem_doesnotexist"])
        # A failed call is counted as its handler unwinds, which may be just after the client has the error.
        error_key = ("cortexd_rpc_errors_total",
                     (("code", "NOT_FOUND"), ("method", "/cortexd.v1.MemoryService/OpenMemories")))
        samples = scrape(port)
        for _ in range(100):
            if error_key in samples:
                break
            time.sleep(0.1)
            samples = scrape(port)
    finally:
        daemon.stop()

    def sample(name: str, **labels) -> float:
        return samples[(name, tuple(sorted(labels.items())))]

    save = "/cortexd.v1.MemoryService/SaveMemory"
    assert sample("cortexd_rpcs_total", method=save, code="OK") == 1
    assert sample("cortexd_rpc_duration_seconds_count", method=save) == 1
    assert sample("cortexd_rpc_duration_seconds_sum", method=save) > 0
    assert sample("cortexd_rpcs_total", method="/cortexd.v1.MemoryService/SearchMemory", code="OK") == 1
    assert sample("cortexd_rpc_errors_total", method="/cortexd.v1.MemoryService/OpenMemories", code="NOT_FOUND") == 1
    assert not any(name == "cortexd_rpc_errors_total" and dict(labels)["method"] == save for name, labels in samples)
    for stage in ("entities", "embedding", "intent", "tags"):  # model inference, then a stage that reuses the encoder
        assert sample("cortexd_activation_stage_duration_seconds_count", stage=stage) >= 1
    assert sample("cortexd_memories") == 1
    assert sample("cortexd_store_file_bytes", file="database") > 0
    assert sample("cortexd_models_loaded") == 1
    assert all(value == 1 for (name, _), value in samples.items() if name == "cortexd_model_ready")


def test_metrics_on_a_non_loopback_address_are_refused(workdir):
    result = subprocess.run(
        CORTEXD + ["serve", "--data-dir", str(workdir / "data"), "--listen", f"unix:{workdir / 's.sock'}",
                   "--metrics", f"0.0.0.0:{free_port()}"],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 2
    assert "refusing to serve metrics on non-loopback address 0.0.0.0" in result.stderr
    assert "--metrics-allow-remote" in result.stderr


def test_health_waits_for_the_models_and_degraded_models_still_serve(workdir):
    gate_dir = workdir / "gate"
    gate_dir.mkdir()
    (gate_dir / "sitecustomize.py").write_text(MODEL_GATE)
    gate = workdir / "models-may-load"
    env = dict(os.environ, PYTHONPATH=str(gate_dir), CORTEXD_TEST_MODEL_GATE=str(gate),
               CORTEXD_MODELS_DIR=str(workdir / "no-models"))  # the ONNX models are missing: degraded
    daemon = Daemon(workdir, env=env).start()
    try:
        with grpc.insecure_channel(daemon.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for service in ("", "cortexd.v1.MemoryService"):
                reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=10)
                assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
            with daemon.client() as client:
                loading = client.get_status()
                assert loading.schema_version > 0, "the store is open while the models load"
                assert loading.models == "loading" and not loading.degraded_models
            gate.touch()
            daemon.wait_serving()
            with daemon.client() as client:
                models = {m.name: m for m in client.get_model_status().models}
                status = client.get_status()
        assert status.models == "degraded"
        assert {d.split(":")[0] for d in status.degraded_models} == {
            "sentence encoder (all-MiniLM-L6-v2 int8 ONNX)", "intent classifier (fine-tuned MiniLM int8 ONNX)",
            "relation model (fine-tuned MiniLM cross-encoder int8 ONNX)",
            "relevance model (fine-tuned MiniLM cross-encoder int8 ONNX)", "holder model (fine-tuned MiniLM int8 ONNX)",
            "partial-update reader (fine-tuned MiniLM cross-encoder int8 ONNX)",
            "precedence model (fine-tuned MiniLM cross-encoder int8 ONNX)"}
        assert not models["sentence encoder (all-MiniLM-L6-v2 int8 ONNX)"].ok
        assert models["spacy en_core_web_sm + technology ruler"].ok

        code, report = doctor("--daemon", daemon.address)
        assert code == 1 and not report["healthy"]
        failed = {c["check"]: c for c in report["checks"] if not c["ok"]}
        assert set(failed) == {"model: sentence encoder (all-MiniLM-L6-v2 int8 ONNX)",
                               "model: intent classifier (fine-tuned MiniLM int8 ONNX)",
                               "model: relation model (fine-tuned MiniLM cross-encoder int8 ONNX)",
                               "model: relevance model (fine-tuned MiniLM cross-encoder int8 ONNX)",
                               "model: holder model (fine-tuned MiniLM int8 ONNX)",
                               "model: partial-update reader (fine-tuned MiniLM cross-encoder int8 ONNX)",
                               "model: precedence model (fine-tuned MiniLM cross-encoder int8 ONNX)"}
        assert all("reinstall cortexd" in c["fix"] for c in failed.values())
    finally:
        daemon.stop()


def test_doctor_checks_everything_and_prints_a_fix_for_each_failure(daemon):
    code, report = doctor("--daemon", daemon.address)
    assert code == 0 and report["healthy"], report
    daemon.wait_serving()
    with daemon.client() as client:
        status = client.get_status()
    assert status.models == "ready" and not status.degraded_models
    names = [c["check"] for c in report["checks"]]
    assert names[:6] == ["config", "socket", "socket directory", "daemon", "version", "schema"]
    assert {"disk space", "data dir"} <= set(names) and sum(n.startswith("model: ") for n in names) == 8
    assert any("sha256" in c["detail"] for c in report["checks"] if c["check"].startswith("model: "))

    os.chmod(daemon.data_dir, 0o755)
    os.chmod(daemon.socket.parent, 0o711)
    try:
        code, report = doctor("--daemon", daemon.address)
        text = subprocess.run(CORTEXD + ["doctor", "--daemon", daemon.address], capture_output=True, text=True,
                              timeout=120).stdout
    finally:
        os.chmod(daemon.data_dir, 0o700)
        os.chmod(daemon.socket.parent, 0o700)
    assert code == 1
    failed = {c["check"]: c for c in report["checks"] if not c["ok"]}
    assert set(failed) == {"data dir", "socket directory"}
    assert failed["data dir"]["fix"] == f"chmod 700 {daemon.data_dir}"
    assert failed["socket directory"]["fix"] == f"chmod 700 {daemon.socket.parent}"
    assert f"[FAIL] data dir: {daemon.data_dir} has mode 0755" in text and f"fix: chmod 700 {daemon.data_dir}" in text


def test_doctor_without_a_daemon_says_how_to_start_it(workdir):
    data_dir = workdir / "data"
    data_dir.mkdir(mode=0o700)
    code, report = doctor("--daemon", f"unix:{workdir / 'absent.sock'}", "--data-dir", str(data_dir))
    assert code == 1
    checks = {c["check"]: c for c in report["checks"]}
    assert not checks["socket"]["ok"] and not checks["daemon"]["ok"]
    assert "cortexd serve" in checks["daemon"]["fix"]
    assert checks["data dir"]["ok"] and checks["disk space"]["ok"] and checks["schema"]["ok"]
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
