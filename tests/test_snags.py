"""The small things a new user meets: --version, a closed pipe, a misspelled config table, a bad record in an import."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import CORTEXD
from memory_daemon import __version__


def _run(*args: str, env: dict | None = None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*CORTEXD, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, **kwargs)


def test_version():
    done = _run("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"cortexd {__version__}"


def test_a_reader_that_stops_early_ends_the_cli_quietly(daemon):
    with daemon.client("pipe") as client:
        # Chat turns (a speaker each) import without the relation model's reading of every statement.
        client.import_records({"id": f"r{i}", "text": f"note {i} about the pipeline", "speaker": "user",
                               "session": "pipe"} for i in range(400))
    # `| head -c 1`: the reader closes the pipe after one byte while the CLI still writes.
    shell = (f"{' '.join(CORTEXD)} search pipeline --limit 100 --json --namespace pipe --daemon {daemon.address} "
             "| head -c 1 > /dev/null; echo \"status=${PIPESTATUS[0]}\"")
    done = subprocess.run(["bash", "-c", shell], capture_output=True, text=True, timeout=120, cwd=os.getcwd())
    assert "Errno 32" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip() in ("status=0", "status=141")


def test_a_misspelled_config_table_stops_serve_and_doctor_names_it(tmp_path):
    config = tmp_path / "config.toml"
    config.write_text("[retreival]\nlexical_weight = 2.0\n", encoding="utf-8")
    env = {"CORTEXD_CONFIG": str(config)}
    served = _run("serve", "--data-dir", str(tmp_path / "data"), "--listen", f"unix:{tmp_path}/s.sock", env=env)
    assert served.returncode == 2
    assert "unknown table [retreival]" in served.stderr and "did you mean [retrieval]?" in served.stderr
    doctor = _run("doctor", "--json", "--daemon", f"unix:{tmp_path}/none.sock", env=env)
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert doctor.returncode == 1 and checks["config"]["ok"] is False
    assert "[retreival]" in checks["config"]["detail"] and str(config) in checks["config"]["fix"]

    config.write_text("[hooks]\nmax_tokens = 'lots'\n", encoding="utf-8")  # a bad value that turned hooks off
    doctor = _run("doctor", "--json", "--daemon", f"unix:{tmp_path}/none.sock", env=env)
    checks = {c["check"]: c for c in json.loads(doctor.stdout)["checks"]}
    assert checks["config"]["ok"] is False and "hooks." in checks["config"]["detail"]


def test_an_import_with_one_bad_record_stores_nothing(daemon, tmp_path):
    records = tmp_path / "records.jsonl"
    lines = [{"id": f"r{i}", "text": f"record {i}", "timestamp": "2024-05-01T10:00:00Z"} for i in range(1, 10)]
    lines[6]["timestamp"] = "last tuesday"
    records.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    done = _run("import", str(records), "--namespace", "imp", "--daemon", daemon.address)
    assert done.returncode == 2 and f"{records}:7: timestamp: 'last tuesday' is not an ISO-8601 time" in done.stderr
    with daemon.client("imp") as client:
        assert client.get_status().memory_count == 0, "nothing was stored"
