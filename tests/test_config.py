"""Activation settings: config file, environment overrides, and errors that name the bad key."""

from __future__ import annotations

import json
import os

import pytest

from conftest import Daemon, mcp_session
from memory_daemon.core.config import load_activation_settings


def test_file_values_and_environment_overrides(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[activation]\ndedup_similarity = 0.9\ntag_top_k = 3\ntags = true\n")
    settings = load_activation_settings(config, environ={"CORTEXD_TAGS": "false", "CORTEXD_CONTEXT_WINDOW": "4"})
    assert settings.dedup_similarity == 0.9 and settings.tag_top_k == 3
    assert settings.tags is False and settings.context_window == 4
    assert load_activation_settings(tmp_path / "absent.toml", environ={}).intent_confidence == 0.7


@pytest.mark.parametrize(
    ("text", "environ", "expected"),
    [
        ("[activation]\ndedup_similarity = 1.5\n", {}, "activation.dedup_similarity"),
        ("[activation]\ncolour = 'red'\n", {}, "activation.colour"),
        ("", {"CORTEXD_AUTO_SAVE_CONFIDENCE": "high"}, "activation.auto_save_confidence"),
        ("[activation\n", {}, "not valid TOML"),
    ],
)
def test_bad_settings_name_the_key(tmp_path, text, environ, expected):
    config = tmp_path / "config.toml"
    config.write_text(text)
    with pytest.raises(ValueError, match=expected.replace(".", r"\.")):
        load_activation_settings(config, environ=environ)


@pytest.mark.anyio
async def test_a_stage_disabled_by_environment_is_skipped(workdir):
    daemon = Daemon(workdir, env={**os.environ, "CORTEXD_TAGS": "false", "CORTEXD_DEDUP": "false"}).start()
    try:
        async with mcp_session(daemon.address, "acme") as host:
            reply = json.loads((await host.call_tool("analyze_message", {"message": "I prefer pnpm over npm"})).content[0].text)
            assert "tags" not in reply["timings_ms"] and "dedup" not in reply["timings_ms"]
            assert reply["degraded"] == []
    finally:
        daemon.stop()


def test_daemon_refuses_a_bad_config_file(workdir):
    import subprocess

    from conftest import CORTEXD

    bad = workdir / "config.toml"
    bad.write_text("[activation]\ncontext_window = 0\n")
    result = subprocess.run(
        CORTEXD + ["serve", "--data-dir", str(workdir / "d"), "--listen", f"unix:{workdir / 's.sock'}"],
        capture_output=True, text=True, timeout=60, env={**os.environ, "CORTEXD_CONFIG": str(bad)},
    )
    assert result.returncode == 2 and "activation.context_window" in result.stderr


def test_retrieval_settings_from_file_and_environment(tmp_path):
    from memory_daemon.core.config import load_retrieval_settings

    config = tmp_path / "config.toml"
    config.write_text("[retrieval]\nworking_memory_idle_minutes = 15\nvector_graph_from = 50000\n")
    settings = load_retrieval_settings(config, environ={"CORTEXD_RETRIEVAL_VECTOR_SAVE_SECONDS": "8"})
    assert (settings.working_memory_idle_minutes, settings.vector_graph_from, settings.vector_save_seconds) == (15, 50000, 8)
    # The keys of the coarse cells the graph replaced still load: the size under its old name, the cells' probe
    # count ignored.
    config.write_text("[retrieval]\ncoarse_index_from = 40000\ncoarse_probe_cells = 8\n")
    assert load_retrieval_settings(config, environ={}).vector_graph_from == 40000
    with pytest.raises(ValueError, match="working_memory_idle_minutes"):
        load_retrieval_settings(config, environ={"CORTEXD_RETRIEVAL_WORKING_MEMORY_IDLE_MINUTES": "0"})
