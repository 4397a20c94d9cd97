"""Runs `cortexd serve` as a service: writes, removes and inspects a systemd unit (Linux) or launchd agent (macOS)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from memory_daemon.ops.installed import cortexd_command, current_platform, location_environment, write_atomically

UNIT_NAME = "cortexd.service"
LAUNCHD_LABEL = "dev.cortexd.serve"
# A system unit has no per-user runtime dir, so it listens on a fixed socket that clients name in $CORTEXD_ADDRESS.
SYSTEM_SOCKET = Path("/run/cortexd/cortexd.sock")
SYSTEM_DATA_DIR = Path("/var/lib/cortexd")
# memory_daemon.api.server's EXIT_BAD_CONFIG and EXIT_ALREADY_RUNNING: a restart fixes neither (a test keeps them equal).
EXIT_CODES_A_RESTART_CANNOT_FIX = (2, 3)
MANAGER_CALL_TIMEOUT_S = 30
RUNNING_STATES = ("active", "running")


class ServiceError(Exception):
    """The service cannot be set up here; the message says why and what to do instead."""


@dataclass(frozen=True)
class ManagerStep:
    """One call to the service manager; a tolerated failure is expected (e.g. unloading a job that is not loaded)."""

    argv: tuple[str, ...]
    failure_tolerated: bool = False

    def __str__(self) -> str:
        return " ".join(self.argv)


@dataclass(frozen=True)
class ManagerReply:
    ok: bool
    output: str


def _call(argv: tuple[str, ...]) -> ManagerReply:
    executable = shutil.which(argv[0])
    if executable is None:
        return ManagerReply(False, f"{argv[0]} not found on PATH")
    try:
        done = subprocess.run([executable, *argv[1:]], capture_output=True, text=True, timeout=MANAGER_CALL_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return ManagerReply(False, str(error))
    return ManagerReply(done.returncode == 0, (done.stdout.strip() + "\n" + done.stderr.strip()).strip())


@dataclass(frozen=True)
class Systemd:
    """systemd: the user's own service manager (scope 'user') or the system's (scope 'system')."""

    scope: str

    @property
    def name(self) -> str:
        return f"the systemd {self.scope} manager"

    @property
    def _systemctl(self) -> tuple[str, ...]:
        return ("systemctl", "--user") if self.scope == "user" else ("systemctl",)

    def file_path(self) -> Path:
        if self.scope == "system":
            return Path("/etc/systemd/system") / UNIT_NAME
        config_home = os.environ.get("XDG_CONFIG_HOME", "").strip() or str(Path.home() / ".config")
        return Path(config_home) / "systemd" / "user" / UNIT_NAME

    def unusable_reason(self) -> str | None:
        reply = _call((*self._systemctl, "show-environment"))
        if reply.ok:
            return None
        return (f"`{' '.join(self._systemctl)}` cannot reach the {self.scope} service manager "
                f"({reply.output.splitlines()[-1] if reply.output else 'no reason given'}); "
                "expected in a container or a session that systemd does not manage")

    def start_steps(self, file_change: str) -> list[ManagerStep]:
        enable_now = ManagerStep((*self._systemctl, "enable", "--now", UNIT_NAME))
        if file_change == "unchanged":
            return [enable_now]
        reload = ManagerStep((*self._systemctl, "daemon-reload"))
        if file_change == "new":
            return [reload, enable_now]
        # restart, not start: a daemon already running must pick up the changed unit.
        return [reload, ManagerStep((*self._systemctl, "enable", UNIT_NAME)),
                ManagerStep((*self._systemctl, "restart", UNIT_NAME))]

    def stop_steps(self) -> list[ManagerStep]:
        return [ManagerStep((*self._systemctl, "disable", "--now", UNIT_NAME))]

    def after_removal_steps(self) -> list[ManagerStep]:
        return [ManagerStep((*self._systemctl, "daemon-reload"))]

    def state(self) -> str:
        # is-active exits non-zero for every state but "active", and still prints the state.
        reply = _call((*self._systemctl, "is-active", UNIT_NAME))
        return reply.output.splitlines()[0] if reply.output else "unknown"

    def logs_hint(self) -> str:
        return f"journalctl {'--user ' if self.scope == 'user' else ''}-u cortexd"


@dataclass(frozen=True)
class Launchd:
    """launchd, as the logged-in user's agent (the gui/<uid> domain)."""

    scope: str = "user"
    name: str = "launchd"

    @property
    def _domain(self) -> str:
        return f"gui/{os.getuid()}"

    def file_path(self) -> Path:
        return Path.home() / "Library" / "LaunchAgents" / f"{LAUNCHD_LABEL}.plist"

    def log_path(self) -> Path:
        return Path.home() / "Library" / "Logs" / "cortexd" / "cortexd.log"

    def unusable_reason(self) -> str | None:
        reply = _call(("launchctl", "print", self._domain))
        return None if reply.ok else f"`launchctl print {self._domain}` failed ({reply.output or 'no reason given'})"

    def start_steps(self, file_change: str) -> list[ManagerStep]:
        if file_change == "unchanged" and self.state() == "running":
            return []
        # launchd keeps the definition it loaded, so a changed file is unloaded and loaded again.
        return [ManagerStep(("launchctl", "bootout", f"{self._domain}/{LAUNCHD_LABEL}"), failure_tolerated=True),
                ManagerStep(("launchctl", "bootstrap", self._domain, str(self.file_path())))]

    def stop_steps(self) -> list[ManagerStep]:
        return [ManagerStep(("launchctl", "bootout", f"{self._domain}/{LAUNCHD_LABEL}"), failure_tolerated=True)]

    def after_removal_steps(self) -> list[ManagerStep]:
        return []

    def state(self) -> str:
        reply = _call(("launchctl", "print", f"{self._domain}/{LAUNCHD_LABEL}"))
        if not reply.ok:
            return "not loaded"
        for line in reply.output.splitlines():
            key, _, value = line.strip().partition(" = ")
            if key == "state":
                return value.strip()
        return "loaded"

    def logs_hint(self) -> str:
        return f"tail -f {self.log_path()}"


ServiceManager = Systemd | Launchd


@dataclass(frozen=True)
class ServiceDefinition:
    """The file `service install` writes and the manager that runs it."""

    manager: ServiceManager
    path: Path
    text: str
    address: str


def service_definition(platform: str, scope: str = "user", data_dir: Path | None = None,
                       run_as: str | None = None) -> ServiceDefinition:
    """What install would write on this platform, for the current user and environment."""
    from cortexd.connect import resolve_address
    from memory_daemon.core.config import DATA_DIR_ENV, default_data_dir

    environment = location_environment()
    environment.pop("CORTEXD_ADDRESS", None)  # the unit names its address with --listen
    if scope == "system":
        if platform != "linux":
            raise ServiceError("--system is supported with systemd only; on macOS install the per-user agent (--user)")
        address = f"unix:{SYSTEM_SOCKET}"
        environment[DATA_DIR_ENV] = str(data_dir.absolute() if data_dir else SYSTEM_DATA_DIR)
        manager: ServiceManager = Systemd("system")
        text = systemd_unit(cortexd_command(), address, environment, manager, run_as or _invoking_user())
    else:
        # The service listens exactly where this shell's clients look, and uses the store this shell's cortexd uses.
        address = resolve_address()
        environment[DATA_DIR_ENV] = str(data_dir.absolute() if data_dir else default_data_dir().absolute())
        if platform == "linux":
            manager = Systemd("user")
            text = systemd_unit(cortexd_command(), address, environment, manager)
        elif platform == "macos":
            manager = Launchd()
            text = launchd_plist(cortexd_command(), address, environment, manager.log_path())
        else:
            raise ServiceError(f"cortexd has no service set-up for {platform}; run `cortexd serve` under your own supervisor")
    return ServiceDefinition(manager, manager.file_path(), text, address)


def _invoking_user() -> str:
    import pwd

    return os.environ.get("SUDO_USER", "").strip() or pwd.getpwuid(os.getuid()).pw_name


def systemd_unit(command: list[str], address: str, environment: dict[str, str], manager: Systemd,
                 run_as: str | None = None) -> str:
    systemctl = "systemctl --user" if manager.scope == "user" else "systemctl"
    lines = [
        "# Written by `cortexd service install`; `cortexd service uninstall` removes it.",
        f"# Put local changes in a drop-in (`{systemctl} edit cortexd`): a re-install rewrites this file.",
        "[Unit]",
        "Description=cortexd memory daemon (long-term memory for AI agents)",
        "",
        "[Service]",
        "Type=exec",
        "ExecStart=" + " ".join(_systemd_word(word) for word in [*command, "serve", "--listen", address]),
    ]
    if manager.scope == "system":
        lines += [f"User={run_as}", "RuntimeDirectory=cortexd", "RuntimeDirectoryMode=0700"]
        if environment.get("CORTEXD_DATA_DIR") == str(SYSTEM_DATA_DIR):
            lines += ["StateDirectory=cortexd", "StateDirectoryMode=0700"]
    lines += [f"Environment={_systemd_quoted(f'{name}={value}')}" for name, value in environment.items()]
    lines += [
        "Restart=on-failure",
        "RestartSec=2",
        "# Exit 2 is a setting that cannot work here (a bad path or option, a read-only data dir) and 3 another daemon",
        "# or process owning the data dir, socket or store: a restart fixes neither.",
        "RestartPreventExitStatus=" + " ".join(map(str, EXIT_CODES_A_RESTART_CANNOT_FIX)),
        "# SIGTERM lets in-flight calls finish and checkpoints the store.",
        "TimeoutStopSec=30",
        "StandardOutput=journal",
        "StandardError=journal",
        "",
        "[Install]",
        f"WantedBy={'default.target' if manager.scope == 'user' else 'multi-user.target'}",
        "",
    ]
    return "\n".join(lines)


def _systemd_quoted(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    return f'"{escaped}"'


def _systemd_word(word: str) -> str:
    if word and all(c.isalnum() or c in "/._-:+=,@" for c in word):
        return word
    # Inside ExecStart, `$` would expand a variable and `%` a specifier.
    return _systemd_quoted(word).replace("$", "$$")


def launchd_plist(command: list[str], address: str, environment: dict[str, str], log_path: Path) -> str:
    import plistlib

    agent = {
        "Label": LAUNCHD_LABEL,
        # launchd has no RestartPreventExitStatus: with --supervisor launchd, a fault a restart cannot fix (exit 2 or 3
        # elsewhere) exits 0, so KeepAlive leaves the agent stopped with its one line in the log.
        "ProgramArguments": [*command, "serve", "--listen", address, "--supervisor", "launchd"],
        "EnvironmentVariables": environment,
        "RunAtLoad": True,
        # Restarted when it crashes or fails, not after a clean stop.
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 5,
        # "Background" lets macOS throttle CPU and I/O: every host's memory call would wait on it.
        "ProcessType": "Standard",
        "StandardOutPath": str(log_path),
        "StandardErrorPath": str(log_path),
    }
    return plistlib.dumps(agent, sort_keys=False).decode("utf-8")


@dataclass(frozen=True)
class ServiceStatus:
    manager: str
    path: Path
    installed: bool
    up_to_date: bool
    state: str | None
    note: str

    @property
    def running(self) -> bool:
        return self.installed and self.state in RUNNING_STATES


def service_status(definition: ServiceDefinition) -> ServiceStatus:
    installed = definition.path.is_file()
    up_to_date = installed and definition.path.read_text(encoding="utf-8") == definition.text
    reason = definition.manager.unusable_reason()
    state = None if reason else definition.manager.state()
    return ServiceStatus(definition.manager.name, definition.path, installed, up_to_date, state, reason or "")


def run_service_verb(args: argparse.Namespace) -> int:
    """`cortexd service install|uninstall|status`."""
    try:
        definition = service_definition(args.platform or current_platform(), "system" if args.system else "user",
                                        Path(args.data_dir).expanduser() if args.data_dir else None)
        if args.service_verb == "install":
            if getattr(args, "print", False):
                print(definition.text, end="")
                return 0
            return _install(definition)
        if args.service_verb == "uninstall":
            return _uninstall(definition)
        return _print_status(service_status(definition), getattr(args, "json", False))
    except ServiceError as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        hint = " (a system unit needs root: run it with sudo)" if isinstance(error, PermissionError) else ""
        print(f"cortexd: {error}{hint}", file=sys.stderr)
        return 2


def _install(definition: ServiceDefinition) -> int:
    manager = definition.manager
    previous = definition.path.read_text(encoding="utf-8") if definition.path.is_file() else None
    change = "new" if previous is None else "unchanged" if previous == definition.text else "changed"
    if change == "unchanged":
        print(f"{definition.path} is already installed and up to date")
    else:
        if isinstance(manager, Launchd):
            # launchd does not create the directory of its log file.
            manager.log_path().parent.mkdir(parents=True, exist_ok=True)
        write_atomically(definition.path, definition.text, 0o644)
        print(f"{'wrote' if change == 'new' else 'updated'} {definition.path}")
    if manager.scope == "system":
        print(f"clients reach this daemon with CORTEXD_ADDRESS={definition.address}")
    reason = manager.unusable_reason()
    if reason:
        print(f"not started: {reason}.\nRun these in a session that {manager.name} manages:")
        for step in manager.start_steps(change):
            print(f"  {step}")
        return 0
    steps = manager.start_steps(change)
    if not steps:
        print(f"cortexd is already running under {manager.name}")
    elif not _run_steps(steps):
        return 1
    print(f"logs: {manager.logs_hint()}")
    return 0


def _uninstall(definition: ServiceDefinition) -> int:
    manager = definition.manager
    if not definition.path.exists():
        print(f"not installed ({definition.path} does not exist); nothing to do")
        return 0
    reason = manager.unusable_reason()
    if not reason and not _run_steps(manager.stop_steps()):
        return 1
    definition.path.unlink()
    print(f"removed {definition.path}")
    if reason:
        # Without a reachable manager, nothing here can be running under this file.
        print(f"nothing stopped: {reason}")
        return 0
    return 0 if _run_steps(manager.after_removal_steps()) else 1


def _run_steps(steps: list[ManagerStep]) -> bool:
    """Call the manager step by step; on a failure, say what failed and what was not run."""
    for index, step in enumerate(steps):
        reply = _call(step.argv)
        if reply.ok or step.failure_tolerated:
            print(f"ran: {step}")
            continue
        print(f"cortexd: `{step}` failed: {reply.output or 'no output'}", file=sys.stderr)
        remaining = steps[index + 1:]
        if remaining:
            print("not run after that failure: " + "; ".join(map(str, remaining)), file=sys.stderr)
        return False
    return True


def _print_status(status: ServiceStatus, as_json: bool) -> int:
    if as_json:
        print(json.dumps({"manager": status.manager, "path": str(status.path), "installed": status.installed,
                          "up_to_date": status.up_to_date, "state": status.state, "running": status.running,
                          "note": status.note}, indent=2))
        return 0 if status.running else 1
    if status.installed:
        freshness = "up to date" if status.up_to_date else "differs from what install would write now (re-run install)"
        print(f"installed: {status.path} ({freshness})")
    else:
        print(f"not installed: {status.path} does not exist (`cortexd service install`)")
    if status.state is None:
        print(f"state: unknown, {status.note}")
    else:
        print(f"state: {status.state} (as {status.manager} reports it)")
    return 0 if status.running else 1
