"""`cortexd config show|path`: every effective value with its source, and bad keys or values named."""

from __future__ import annotations

import json
import os

import pytest

from memory_daemon.cli import main


@pytest.fixture
def environment(tmp_path, monkeypatch):
    for name in list(os.environ):
        if name.startswith("CORTEXD_") or name.startswith("XDG_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return tmp_path


def show(capsys, *extra: str) -> tuple[int, str, str]:
    code = main(["config", "show", *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def settings_of(capsys) -> dict:
    code, out, err = show(capsys, "--json")
    assert code == 0, err
    return json.loads(out)


def test_path_is_the_platform_config_file_unless_a_variable_names_another(environment, capsys, monkeypatch):
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(environment / "config" / "cortexd" / "config.toml")
    monkeypatch.setenv("CORTEXD_CONFIG", str(environment / "elsewhere.toml"))
    assert main(["config", "path"]) == 0
    assert capsys.readouterr().out.strip() == str(environment / "elsewhere.toml")


def test_without_a_file_everything_is_a_default(environment, capsys):
    report = settings_of(capsys)
    assert report["config_file_exists"] is False
    assert {entry["source"] for entry in report["settings"].values()} == {"default"}
    assert report["settings"]["activation.dedup_similarity"]["value"] == 0.85
    assert report["settings"]["retrieval.decay_model"]["value"] == "exponential"
    assert report["settings"]["hooks.deadline_ms"]["value"] == 300
    assert report["settings"]["token_file"]["value"] is None


def test_each_value_names_where_it_came_from(environment, capsys, monkeypatch):
    config = environment / "config" / "cortexd" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text("[activation]\ntags = false\n\n[retrieval]\nrrf_k = 30\nhalf_life_days = 7\n\n"
                      "[hooks]\nmax_tokens = 400\n")
    monkeypatch.setenv("CORTEXD_RETRIEVAL_RRF_K", "45")
    monkeypatch.setenv("CORTEXD_DEDUP", "false")
    monkeypatch.setenv("CORTEXD_DATA_DIR", str(environment / "store"))
    settings = settings_of(capsys)["settings"]
    assert settings["activation.tags"] == {"value": False, "source": str(config)}
    assert settings["activation.dedup"] == {"value": False, "source": "CORTEXD_DEDUP"}
    assert settings["retrieval.rrf_k"] == {"value": 45.0, "source": "CORTEXD_RETRIEVAL_RRF_K"}  # env over file
    assert settings["retrieval.half_life_days"] == {"value": 7.0, "source": str(config)}
    assert settings["hooks.max_tokens"] == {"value": 400, "source": str(config)}
    assert settings["activation.phrases"] == {"value": True, "source": "default"}
    assert settings["data_dir"] == {"value": str(environment / "store"), "source": "CORTEXD_DATA_DIR"}

    code, out, _ = show(capsys)
    assert code == 0
    tags_line = next(line for line in out.splitlines() if line.startswith("activation.tags "))
    assert tags_line.split() == ["activation.tags", "=", "false", "#", str(config)]


@pytest.mark.parametrize(
    ("text", "variables", "named"),
    [
        ("[activation]\ncolour = 'red'\n", {}, "activation.colour"),
        ("[retrieval]\ndecay_model = 'linear'\n", {}, "retrieval.decay_model"),
        ("", {"CORTEXD_RETRIEVAL_CANDIDATES": "many"}, "retrieval.candidates"),
        ("[hooks]\ndeadline_ms = 5\n", {}, "hooks.deadline_ms"),
        ("[activation\n", {}, "not valid TOML"),
    ],
)
def test_a_bad_key_or_value_is_named(environment, capsys, monkeypatch, text, variables, named):
    config = environment / "bad.toml"
    config.write_text(text)
    monkeypatch.setenv("CORTEXD_CONFIG", str(config))
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    code, out, err = show(capsys)
    assert code == 2 and named in err and out == ""


def test_a_table_nothing_reads_is_reported(environment, capsys, monkeypatch):
    config = environment / "typo.toml"
    config.write_text("[retreival]\nrrf_k = 30\n")
    monkeypatch.setenv("CORTEXD_CONFIG", str(config))
    assert settings_of(capsys)["ignored"] == ["[retreival]"]
    code, out, _ = show(capsys)
    assert code == 0 and "# ignored: [retreival]" in out
