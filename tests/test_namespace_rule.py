"""One namespace rule for the CLI, the proxy and the hooks; `cortexd namespaces`; analyze reads only the caller's."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import CORTEXD, mcp_session, payload
from proxy_server.namespace import BadNamespace, repository_namespace, resolve_namespace

pytestmark = pytest.mark.anyio


def test_the_rule_is_flag_then_environment_then_repository_then_default(tmp_path):
    repo = tmp_path / "café"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert resolve_namespace("given", repo / "src", {"CORTEXD_NAMESPACE": "env"}).name == "given"
    assert resolve_namespace(None, repo / "src", {"CORTEXD_NAMESPACE": "env"}).name == "env"
    from_repo = resolve_namespace(None, repo / "src", {})
    assert (from_repo.name, from_repo.source) == ("cafe", "git repository")
    assert "café" in from_repo.describe() and "renamed" in from_repo.describe()
    assert resolve_namespace(None, tmp_path, {}).name == "default"
    assert repository_namespace("日本") == repository_namespace("日本") != repository_namespace("中国")
    assert repository_namespace("日本").startswith("repo-")
    with pytest.raises(BadNamespace, match="--namespace: namespace 'café' is invalid"):
        resolve_namespace("café", tmp_path, {})
    with pytest.raises(BadNamespace, match="CORTEXD_NAMESPACE"):
        resolve_namespace(None, tmp_path, {"CORTEXD_NAMESPACE": "a b"})


def _cli(daemon, *args: str, cwd: Path, env: dict | None = None, stdin: str | None = None):
    environ = {k: v for k, v in os.environ.items() if k != "CORTEXD_NAMESPACE"}
    return subprocess.run([*CORTEXD, *args, "--daemon", daemon.address], capture_output=True, text=True, timeout=60,
                          cwd=cwd, env={**environ, **(env or {})}, input=stdin)


async def test_the_cli_and_the_proxy_started_in_a_repository_share_its_namespace(daemon, tmp_path):
    repo = tmp_path / "proj"
    (repo / ".git").mkdir(parents=True)
    saved = _cli(daemon, "remember", "-", "--json", cwd=repo, stdin="The proj CI runs on Buildkite\n")
    assert saved.returncode == 0, saved.stderr
    assert "namespace 'proj' (git repository)" in saved.stderr
    memory = json.loads(saved.stdout)
    assert (memory["namespace"], memory["content"]) == ("proj", "The proj CI runs on Buildkite")

    async with mcp_session(daemon.address, None, cwd=repo) as host:  # no --namespace: the proxy resolves it
        hits = payload(await host.call_tool("search_memory", {"query": "Buildkite CI"}))["hits"]
        assert [h["memory"]["id"] for h in hits] == [memory["id"]]

    explicit = _cli(daemon, "search", "Buildkite", "--namespace", "proj", cwd=tmp_path)
    assert explicit.returncode == 0 and memory["id"] in explicit.stdout and "namespace" not in explicit.stderr
    from_env = _cli(daemon, "search", "Buildkite", cwd=tmp_path, env={"CORTEXD_NAMESPACE": "proj"})
    assert memory["id"] in from_env.stdout and "namespace 'proj' (CORTEXD_NAMESPACE)" in from_env.stderr

    listed = _cli(daemon, "namespaces", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert {n["namespace"]: int(n["memories"]) for n in json.loads(listed.stdout)["namespaces"]} == {"proj": 1}
    table = _cli(daemon, "namespaces", cwd=tmp_path)
    assert table.stdout.splitlines()[1].split()[:2] == ["proj", "1"] and table.stderr == ""

    bad = _cli(daemon, "search", "x", "--namespace", "café", cwd=tmp_path)
    assert bad.returncode == 2 and "namespace 'café' is invalid" in bad.stderr and "Traceback" not in bad.stderr


async def test_analyze_message_reads_only_the_callers_namespace_and_global(daemon):
    async with mcp_session(daemon.address, "secret-team") as other, mcp_session(daemon.address, "acme") as host:
        payload(await other.call_tool("save_memory", {"content": "The vault unseal quorum is three of five"}))
        refused = await host.call_tool("analyze_message", {"message": "The vault unseal quorum is three of five",
                                                           "namespace": "secret-team"})
        assert refused.is_error and "reads only the caller's namespace 'acme'" in refused.content[0].text
        own = payload(await host.call_tool("analyze_message", {"message": "The vault unseal quorum is three of five"}))
        assert "three of five" not in json.dumps(own.get("dedup_content", "")) or own.get("dedup_content") == ""
