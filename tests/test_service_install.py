"""`cortexd service install|uninstall|status`: unit and agent files that verify, and round trips against stand-in managers."""

from __future__ import annotations

import os
import plistlib
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from memory_daemon.cli import main
from memory_daemon.ops.service_install import EXIT_CODES_A_RESTART_CANNOT_FIX, LAUNCHD_LABEL

# Stand-ins for systemctl and launchctl: they log every call and keep "running" in a marker file, so install,
# status and uninstall run their real code paths without ever reaching this machine's service manager.
FAKE_SYSTEMCTL = """#!/bin/sh
echo "$*" >> "$FAKE_MANAGER_LOG"
if [ "$FAKE_MANAGER_MODE" = unreachable ]; then echo "Failed to connect to bus: No medium found" >&2; exit 1; fi
case "$*" in
  *is-active*) if [ -f "$FAKE_MANAGER_LOG.running" ]; then echo active; exit 0; else echo inactive; exit 3; fi;;
  *"enable --now"*|*restart*) touch "$FAKE_MANAGER_LOG.running";;
  *"disable --now"*) rm -f "$FAKE_MANAGER_LOG.running";;
esac
exit 0
"""

FAKE_LAUNCHCTL = """#!/bin/sh
echo "$*" >> "$FAKE_MANAGER_LOG"
if [ "$FAKE_MANAGER_MODE" = unreachable ]; then echo "Bootstrap failed: 5: Input/output error" >&2; exit 5; fi
case "$1:$2" in
  print:*/dev.cortexd.serve)
    if [ -f "$FAKE_MANAGER_LOG.running" ]; then printf 'gui/501/dev.cortexd.serve = {\\n\\tstate = running\\n}\\n'; exit 0; fi
    echo "Could not find service" >&2; exit 113;;
  bootstrap:*) touch "$FAKE_MANAGER_LOG.running";;
  bootout:*) if [ -f "$FAKE_MANAGER_LOG.running" ]; then rm -f "$FAKE_MANAGER_LOG.running"; else exit 3; fi;;
esac
exit 0
"""


@pytest.fixture
def machine(tmp_path, monkeypatch):
    """A home, config dir and runtime dir of our own, and stand-in service managers first on PATH."""
    for name in list(os.environ):
        if name.startswith("CORTEXD_") or name.startswith("XDG_") or name.startswith("FAKE_MANAGER"):
            monkeypatch.delenv(name)
    home = tmp_path / "home"
    home.mkdir()
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    for name, script in (("systemctl", FAKE_SYSTEMCTL), ("launchctl", FAKE_LAUNCHCTL)):
        (fake_bin / name).write_text(script)
        (fake_bin / name).chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    monkeypatch.setenv("CORTEXD_DATA_DIR", str(tmp_path / "data dir 100%"))
    monkeypatch.setenv("PATH", f"{fake_bin}:{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MANAGER_LOG", str(tmp_path / "manager.log"))
    return tmp_path


def manager_calls(machine: Path) -> list[str]:
    log = machine / "manager.log"
    return log.read_text().splitlines() if log.exists() else []


def unit_path(machine: Path) -> Path:
    return machine / "config" / "systemd" / "user" / "cortexd.service"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def systemd_analyze_verify(unit: Path, user: bool, runtime_dir: Path) -> subprocess.CompletedProcess:
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed")
    # Works without systemd as PID 1 or a session bus: verify loads the unit in a throwaway manager of its own,
    # which for --user needs only a runtime dir.
    runtime_dir.mkdir(mode=0o700, exist_ok=True)
    return subprocess.run(["systemd-analyze", "verify", *(["--user"] if user else []), str(unit)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir)})


def problems_with(verified: subprocess.CompletedProcess) -> list[str]:
    """verify exits 0 on mere warnings (an unknown key, a bad value), each a line naming our unit; lines about the
    machine's own units are not ours to judge."""
    return [line for line in (verified.stdout + verified.stderr).splitlines() if "cortexd.service" in line]


def test_the_user_unit_passes_systemd_analyze_verify(machine, capsys):
    code, unit_text, _ = run(capsys, "service", "install", "--print", "--platform", "linux")
    assert code == 0 and not unit_path(machine).exists()  # --print changes nothing
    assert 'Environment="CORTEXD_DATA_DIR=' + str(machine / "data dir 100%%") + '"' in unit_text
    assert f"--listen unix:{machine / 'run' / 'cortexd' / 'cortexd.sock'}" in unit_text
    exec_start = next(line for line in unit_text.splitlines() if line.startswith("ExecStart="))
    assert Path(exec_start.removeprefix("ExecStart=").split()[0]).is_absolute()
    assert "Restart=on-failure" in unit_text and "StandardError=journal" in unit_text

    unit = machine / "cortexd.service"
    unit.write_text(unit_text)
    verified = systemd_analyze_verify(unit, user=True, runtime_dir=machine / "verify-run")
    assert verified.returncode == 0 and not problems_with(verified), verified


def test_the_system_unit_passes_systemd_analyze_verify(machine, capsys):
    code, unit_text, _ = run(capsys, "service", "install", "--system", "--print", "--platform", "linux")
    assert code == 0
    assert "User=" in unit_text and "RuntimeDirectory=cortexd" in unit_text
    assert "--listen unix:/run/cortexd/cortexd.sock" in unit_text and "WantedBy=multi-user.target" in unit_text
    unit = machine / "cortexd.service"
    unit.write_text(unit_text)
    verified = systemd_analyze_verify(unit, user=False, runtime_dir=machine / "verify-run")
    assert verified.returncode == 0 and not problems_with(verified), verified


def test_the_launch_agent_is_a_valid_plist(machine, capsys):
    code, text, _ = run(capsys, "service", "install", "--print", "--platform", "macos")
    assert code == 0
    agent = plistlib.loads(text.encode())
    assert agent["Label"] == LAUNCHD_LABEL
    assert Path(agent["ProgramArguments"][0]).is_absolute()
    assert agent["ProgramArguments"][-5:] == ["serve", "--listen", f"unix:{machine / 'run' / 'cortexd' / 'cortexd.sock'}",
                                              "--supervisor", "launchd"]
    assert agent["KeepAlive"] == {"SuccessfulExit": False} and agent["RunAtLoad"] is True
    log = machine / "home" / "Library" / "Logs" / "cortexd" / "cortexd.log"
    assert agent["StandardOutPath"] == agent["StandardErrorPath"] == str(log)
    assert agent["EnvironmentVariables"]["CORTEXD_DATA_DIR"] == str(machine / "data dir 100%")


def test_install_without_a_reachable_manager_writes_the_unit_and_prints_the_commands(machine, capsys, monkeypatch):
    monkeypatch.setenv("FAKE_MANAGER_MODE", "unreachable")
    code, out, _ = run(capsys, "service", "install", "--platform", "linux")
    assert code == 0 and unit_path(machine).is_file()
    assert "cannot reach the user service manager (Failed to connect to bus: No medium found)" in out
    assert "  systemctl --user daemon-reload\n  systemctl --user enable --now cortexd.service" in out
    assert manager_calls(machine) == ["--user show-environment"]  # asked whether it works, nothing else

    code, out, _ = run(capsys, "service", "status", "--platform", "linux")
    assert code == 1 and "(up to date)" in out and "state: unknown" in out and "cannot reach" in out

    code, out, _ = run(capsys, "service", "uninstall", "--platform", "linux")
    assert code == 0 and not unit_path(machine).exists() and "removed" in out
    code, out, _ = run(capsys, "service", "uninstall", "--platform", "linux")
    assert code == 0 and "nothing to do" in out


def test_systemd_round_trip_is_idempotent(machine, capsys):
    code, out, _ = run(capsys, "service", "install", "--platform", "linux")
    assert code == 0 and f"wrote {unit_path(machine)}" in out
    assert manager_calls(machine) == ["--user show-environment", "--user daemon-reload",
                                      "--user enable --now cortexd.service"]
    unit_text = unit_path(machine).read_text()
    assert stat.S_IMODE(unit_path(machine).stat().st_mode) == 0o644

    code, out, _ = run(capsys, "service", "install", "--platform", "linux")
    assert code == 0 and "already installed and up to date" in out
    assert unit_path(machine).read_text() == unit_text
    assert manager_calls(machine)[3:] == ["--user show-environment", "--user enable --now cortexd.service"]

    code, out, _ = run(capsys, "service", "status", "--platform", "linux", "--json")
    assert code == 0 and '"state": "active"' in out and '"up_to_date": true' in out

    code, out, _ = run(capsys, "service", "uninstall", "--platform", "linux")
    assert code == 0 and not unit_path(machine).exists()
    assert manager_calls(machine)[-3:] == ["--user show-environment", "--user disable --now cortexd.service",
                                           "--user daemon-reload"]
    code, out, _ = run(capsys, "service", "status", "--platform", "linux")
    assert code == 1 and "not installed" in out and "state: inactive" in out


def test_a_changed_unit_is_rewritten_and_the_daemon_restarted(machine, capsys):
    assert run(capsys, "service", "install", "--platform", "linux")[0] == 0
    unit_path(machine).write_text(unit_path(machine).read_text().replace("RestartSec=2", "RestartSec=9"))
    code, out, _ = run(capsys, "service", "status", "--platform", "linux")
    assert "differs from what install would write now" in out
    code, out, _ = run(capsys, "service", "install", "--platform", "linux")
    assert code == 0 and f"updated {unit_path(machine)}" in out and "RestartSec=2" in unit_path(machine).read_text()
    assert manager_calls(machine)[-3:] == ["--user daemon-reload", "--user enable cortexd.service",
                                           "--user restart cortexd.service"]


def test_launchd_round_trip(machine, capsys):
    agent = machine / "home" / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"
    code, out, _ = run(capsys, "service", "install", "--platform", "macos")
    assert code == 0 and agent.is_file() and plistlib.loads(agent.read_bytes())["Label"] == LAUNCHD_LABEL
    assert (machine / "home" / "Library" / "Logs" / "cortexd").is_dir()
    domain = f"gui/{os.getuid()}"
    assert manager_calls(machine)[-2:] == [f"bootout {domain}/{LAUNCHD_LABEL}", f"bootstrap {domain} {agent}"]

    calls_so_far = len(manager_calls(machine))
    code, out, _ = run(capsys, "service", "install", "--platform", "macos")
    assert code == 0 and "already installed and up to date" in out and "already running" in out
    assert not any(call.startswith("boot") for call in manager_calls(machine)[calls_so_far:])

    code, out, _ = run(capsys, "service", "status", "--platform", "macos")
    assert code == 0 and "state: running" in out

    code, out, _ = run(capsys, "service", "uninstall", "--platform", "macos")
    assert code == 0 and not agent.exists() and manager_calls(machine)[-1] == f"bootout {domain}/{LAUNCHD_LABEL}"


def test_a_failing_manager_call_is_reported_with_what_was_not_run(machine, capsys, tmp_path):
    failing = tmp_path / "bin" / "systemctl"
    failing.write_text('#!/bin/sh\ncase "$*" in *daemon-reload*) echo "Access denied" >&2; exit 1;; esac\nexit 0\n')
    code, out, err = run(capsys, "service", "install", "--platform", "linux")
    assert code == 1 and unit_path(machine).is_file()
    assert "`systemctl --user daemon-reload` failed: Access denied" in err
    assert "not run after that failure: systemctl --user enable --now cortexd.service" in err


def test_system_scope_is_refused_on_macos(machine, capsys):
    code, out, err = run(capsys, "service", "install", "--system", "--platform", "macos")
    assert code == 2 and "--system is supported with systemd only" in err


def test_no_restart_for_the_exit_codes_a_restart_cannot_fix():
    from memory_daemon.api.server import EXIT_ALREADY_RUNNING, EXIT_BAD_CONFIG

    assert set(EXIT_CODES_A_RESTART_CANNOT_FIX) == {EXIT_BAD_CONFIG, EXIT_ALREADY_RUNNING}


def test_neither_manager_restarts_a_daemon_that_a_restart_cannot_fix(machine, capsys):
    # A non-socket file or a directory at the socket path, a read-only data dir and bad options exit 2; another daemon
    # or process owning the data dir, socket or store file exits 3 (tests/test_lifecycle.py runs each through
    # `cortexd serve`). Exit 1, a store lost while serving or a stop that could not fold the WAL in, is restarted:
    # the restart replays the WAL.
    from memory_daemon.api.server import EXIT_ALREADY_RUNNING, EXIT_BAD_CONFIG, EXIT_STORE_FAULT, exit_status

    _, unit_text, _ = run(capsys, "service", "install", "--print", "--platform", "linux")
    assert "Restart=on-failure" in unit_text
    assert f"RestartPreventExitStatus={EXIT_BAD_CONFIG} {EXIT_ALREADY_RUNNING}" in unit_text.splitlines()
    # launchd restarts after every non-zero exit and has no RestartPreventExitStatus: the agent passes
    # --supervisor launchd, and the daemon then exits 0 where systemd would see 2 or 3.
    _, plist_text, _ = run(capsys, "service", "install", "--print", "--platform", "macos")
    agent = plistlib.loads(plist_text.encode())
    assert agent["KeepAlive"] == {"SuccessfulExit": False}
    assert agent["ProgramArguments"][-2:] == ["--supervisor", "launchd"]
    assert agent["ProcessType"] == "Standard", "Background would let macOS throttle every memory call"
    for code in EXIT_CODES_A_RESTART_CANNOT_FIX:
        assert exit_status(code, "launchd") == 0 and exit_status(code, None) == code
    assert exit_status(EXIT_STORE_FAULT, "launchd") == exit_status(EXIT_STORE_FAULT, None) == EXIT_STORE_FAULT
