"""One proto, every surface: stale stubs fail, the proxy stays light, the catalog and CLI follow the proto."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORTEXD
from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.api.catalog import tool_catalog
from memory_daemon.store import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("duckdb", "spacy", "onnxruntime", "numpy", "memory_daemon.store", "preprocessing")


def test_generated_stubs_are_fresh(tmp_path):
    sys.path.insert(0, str(ROOT / "proto"))
    try:
        from generate import GENERATED_FILES, generate
    finally:
        sys.path.pop(0)
    generate(tmp_path)
    stale = [name for name in GENERATED_FILES if (tmp_path / name).read_bytes() != (ROOT / "proto" / name).read_bytes()]
    assert not stale, f"stale generated files {stale}: run `make proto` and commit the result"


@pytest.mark.parametrize("module", ["proxy_server", "proxy_server.server", "memory_daemon.cli"])
def test_the_proxy_imports_nothing_heavy(module):
    code = (
        f"import sys, {module}\n"
        "from proxy_server import daemon_link, server, namespace, autostart, stdio_guard, upstreams, upstream_config, "
        "capture, redaction, health_report\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_doors_open_one_way_the_daemon_may_import_the_proxy_never_the_reverse():
    code = ("import sys, proxy_server.server, proxy_server.capture, proxy_server.redaction\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'memory_daemon', 'preprocessing'}))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_every_rpc_marked_as_a_tool_is_in_the_catalog_with_its_comment_and_schema():
    marked = {m.GetOptions().Extensions[pb.mcp_tool]: m
              for service in pb.DESCRIPTOR.services_by_name.values() for m in service.methods
              if m.GetOptions().Extensions[pb.mcp_tool]}
    catalog = tool_catalog()
    assert set(catalog) == set(marked) == {"save_memory", "search_memory", "open_memories", "touch_memory",
                                           "analyze_message", "upsert_fact", "retire_fact",
                                           "record_episode", "query_entity", "time_travel",
                                           "verify_integrity", "create_relation", "read_graph",
                                           "compile_context", "log_decision", "record_outcome", "list_decisions",
                                           "get_session", "observe_memory_usage", "promote_memory", "collect_garbage",
                                           "cluster_memories", "consolidate_memories", "forget_memory",
                                           "edit_memory", "unarchive_memory", "purge_records"}
    upsert = catalog["upsert_fact"]
    assert upsert.input_schema["required"] == ["subject", "predicate", "object"]
    assert upsert.input_schema["properties"]["singular"] == {
        "type": "boolean", "description": upsert.input_schema["properties"]["singular"]["description"]}
    save = catalog["save_memory"]
    assert save.description.startswith("Save a memory")
    assert save.input_schema["required"] == ["content"]
    assert save.input_schema["additionalProperties"] is False
    assert save.input_schema["properties"]["tags"] == {
        "type": "array", "items": {"type": "string"}, "description": 'Short labels, e.g. "preference", "project-x".'
    }
    assert save.input_schema["properties"]["meta"]["type"] == "object"
    assert set(save.input_schema["properties"]) == {f.name for f in pb.SaveMemoryRequest.DESCRIPTOR.fields}


def _cli(daemon, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        CORTEXD + [*args, "--daemon", daemon.address], capture_output=True, text=True, timeout=60, input=stdin
    )


def test_cli_verbs_round_trip(daemon, tmp_path):
    saved = json.loads(_cli(daemon, "remember", "Use ruff for linting", "--tag", "tooling", "--namespace", "acme", "--json").stdout)
    assert saved["tags"] == ["tooling"] and saved["namespace"] == "acme"

    found = json.loads(_cli(daemon, "search", "ruff linting", "--namespace", "acme", "--json").stdout)
    assert [h["memory"]["id"] for h in found["hits"]] == [saved["id"]]
    assert json.loads(_cli(daemon, "search", "ruff", "--json").stdout)["hits"] == []  # other namespace

    got = _cli(daemon, "get", saved["id"], "--namespace", "acme")
    assert saved["id"] in got.stdout and "Use ruff for linting" in got.stdout

    missing = _cli(daemon, "get", "mem_missing", "--namespace", "acme")
    assert missing.returncode == 1 and "not_found: no memory with id mem_missing" in missing.stderr

    status = json.loads(_cli(daemon, "status", "--json").stdout)
    assert status["memory_count"] == 1 and status["schema_version"] == SCHEMA_VERSION

    tools = json.loads(_cli(daemon, "tools", "--json").stdout)["tools"]
    assert {t["name"] for t in tools} == set(tool_catalog())

    called = json.loads(_cli(daemon, "call", "search_memory", '{"query": "ruff"}', "--namespace", "acme").stdout)
    assert called["hits"][0]["memory"]["id"] == saved["id"]


def test_cli_import_keeps_external_ids_and_is_rerunnable(daemon, tmp_path):
    records = [
        {"id": "ext-1", "text": "Payments team meets on Mondays", "timestamp": "2025-01-02T09:00:00Z"},
        {"id": "ext-2", "text": "Search service is written in Rust", "namespace": "search-team"},
        {"id": "ext-3", "text": "   "},
    ]
    dump = tmp_path / "in.jsonl"
    dump.write_text("\n".join(json.dumps(r) for r in records) + "\n")

    refused = _cli(daemon, "import", str(dump), "--namespace", "acme", "--json")
    assert refused.returncode == 2 and f'{dump}:3: "text" is empty' in refused.stderr, "checked whole, nothing sent"
    dump.write_text("\n".join(json.dumps(r) for r in records[:2]) + "\n")
    first = _cli(daemon, "import", str(dump), "--namespace", "acme", "--json")
    reply = json.loads(first.stdout)
    assert reply["imported"] == 2 and reply["skipped"] == 0 and reply["errors"] == [] and first.returncode == 0

    again = json.loads(_cli(daemon, "import", str(dump), "--namespace", "acme", "--json").stdout)
    assert again["imported"] == 0 and again["skipped"] == 2

    hit = json.loads(_cli(daemon, "search", "payments mondays", "--namespace", "acme", "--json").stdout)["hits"][0]
    assert hit["memory"]["external_id"] == "ext-1" and hit["memory"]["created_at"] == "2025-01-02T09:00:00Z"
    other = json.loads(_cli(daemon, "search", "rust", "--namespace", "search-team", "--json").stdout)["hits"]
    assert [h["memory"]["external_id"] for h in other] == ["ext-2"]

    broken = _cli(daemon, "import", "-", stdin='{"id": "x", "text": "fine"}\nnot json\n')
    assert broken.returncode == 2 and "-:2: not valid JSON" in broken.stderr
    assert json.loads(_cli(daemon, "status", "--json").stdout)["memory_count"] == 2, "nothing from the bad file was stored"


def test_cli_reports_a_missing_daemon_clearly(tmp_path):
    result = subprocess.run(
        CORTEXD + ["status", "--daemon", f"unix:{tmp_path / 'none.sock'}"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1 and "cortexd serve" in result.stderr
