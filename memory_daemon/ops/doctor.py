"""`cortexd doctor`: checks socket, daemon, version, models, schema, disk and data dir, with a fix for each failure."""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import asdict, dataclass
from pathlib import Path

MIN_FREE_BYTES = 1024 ** 3  # DuckDB needs room to checkpoint, and the store grows with every memory
START_DAEMON = "start it with `cortexd serve` (or `cortexd service install`; a proxy also starts it on demand)"
RESTART_DAEMON = ("restart the daemon so it runs this installation: `systemctl --user restart cortexd` for the "
                  "service, else stop it (SIGTERM) and run `cortexd serve`")


@dataclass(frozen=True)
class Check:
    check: str
    ok: bool
    detail: str
    fix: str = ""


def _private_mode_check(name: str, path: Path, wanted: int) -> Check:
    """A path only its owner may use: no group or other bits, owned by this user."""
    info = path.stat()
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.getuid():
        return Check(name, False, f"{path} is owned by uid {info.st_uid}, not by you (uid {os.getuid()})",
                     f"run cortexd as its owner, or `chown {os.getuid()} {path}`")
    if mode & 0o077:
        return Check(name, False, f"{path} has mode {mode:04o}: other users can reach it",
                     f"chmod {wanted:o} {path}")
    return Check(name, True, f"{path} mode {mode:04o}")


def socket_checks(address: str) -> list[Check]:
    """For a Unix-socket address: the socket exists, is a socket, and it and its directory are user-only."""
    from cortexd.connect import is_unix_address, socket_path_of

    if not is_unix_address(address):
        return []
    path = socket_path_of(address)
    if not path.exists():
        return [Check("socket", False, f"no socket at {path}", START_DAEMON)]
    if not stat.S_ISSOCK(path.stat().st_mode):
        return [Check("socket", False, f"{path} exists but is not a socket",
                      f"move {path} out of the way, then {START_DAEMON}")]
    return [_private_mode_check("socket", path, 0o600), _private_mode_check("socket directory", path.parent, 0o700)]


def _schema_on_disk(database_path: Path) -> int | None:
    """The schema version in a store no daemon holds open; None when it cannot be read."""
    import duckdb

    try:
        with duckdb.connect(str(database_path), read_only=True) as con:
            return int(con.execute("SELECT max(version) FROM schema_version").fetchone()[0] or 0)
    except duckdb.Error:
        return None


def schema_check(daemon_schema: int | None, database_path: Path) -> Check:
    from memory_daemon.store import SCHEMA_VERSION

    if daemon_schema is None:
        if not database_path.exists():
            return Check("schema", True, f"no store yet at {database_path}; the daemon creates it at v{SCHEMA_VERSION}")
        daemon_schema = _schema_on_disk(database_path)
        if daemon_schema is None:
            return Check("schema", False, f"cannot read the schema version of {database_path}",
                         "another process holds the file, or it is not a cortexd store; stop that process or "
                         "point --data-dir at the right directory")
    if daemon_schema == SCHEMA_VERSION:
        return Check("schema", True, f"v{daemon_schema}, as this cortexd expects")
    if daemon_schema > SCHEMA_VERSION:
        return Check("schema", False, f"the store is at v{daemon_schema}, newer than this cortexd (v{SCHEMA_VERSION})",
                     "upgrade this cortexd installation to the version that wrote the store")
    return Check("schema", False, f"the store is at v{daemon_schema}; this cortexd migrates it to v{SCHEMA_VERSION}",
                 RESTART_DAEMON + " (the migration runs at start-up)")


def data_dir_checks(data_dir: Path) -> list[Check]:
    """Free disk space where the store lives, and a data dir only its owner may read."""
    existing = data_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    usage = shutil.disk_usage(existing)
    free_gib = usage.free / 1024 ** 3
    if usage.free < MIN_FREE_BYTES:
        disk = Check("disk space", False, f"{free_gib:.2f} GiB free on the filesystem of {data_dir}",
                     f"free at least {MIN_FREE_BYTES // 1024 ** 3} GiB there, or move the store (--data-dir)")
    else:
        disk = Check("disk space", True, f"{free_gib:.1f} GiB free on the filesystem of {data_dir}")
    if not data_dir.exists():
        return [disk, Check("data dir", True, f"{data_dir} does not exist yet; the daemon creates it with mode 0700")]
    return [disk, _private_mode_check("data dir", data_dir, 0o700)]


def _model_checks(client, as_dict) -> list[Check]:
    checks = []
    for model in as_dict(client.get_model_status())["models"]:
        detail = f"{model['detail']}; path {model['path']}; load {model['load_ms']} ms"
        if model["sha256"]:
            detail += f"; sha256 {model['sha256']}"
        checks.append(Check(f"model: {model['name']}", model["ok"], detail, "" if model["ok"] else MODELS_FIX))
    return checks


# The model files ship in the package (a wheel's cortexd_models, or a checkout's models/); the daemon looks for them
# in preprocessing.registry.models_dir().
MODELS_FIX = ("the daemon reads models from CORTEXD_MODELS_DIR if set, else the checkout's models/, else the installed "
              "package's cortexd_models/: reinstall cortexd (`make install` in a checkout, or `pip install "
              "--force-reinstall <wheel>`), or point CORTEXD_MODELS_DIR at a models/ directory; then restart the daemon")


def _model_file_check() -> Check:
    from preprocessing.registry import ModelUnavailable, verified_model

    try:
        model = verified_model("encoder")
        return Check("model files: encoder", True, f"{model.directory} matches its manifest")
    except ModelUnavailable as problem:
        from preprocessing.registry import models_dir

        return Check("model files: encoder", False, f"{problem} (looked in {models_dir()})", MODELS_FIX)


def config_check() -> Check:
    """config.toml read as `serve`, the hooks and the proxy read it: a problem there stops the daemon's next start."""
    from memory_daemon.core.config_file import config_path
    from memory_daemon.ops.config_check import config_problems

    path = config_path()
    problems = config_problems(path)
    if problems:
        return Check("config", False, "; ".join(problems), f"edit {path}; `cortexd serve` refuses to start until then")
    return Check("config", True, f"{path} is valid" if path.is_file() else f"no {path}: every setting has its default")


def diagnose(client, data_dir: Path | None, as_dict) -> list[Check]:
    """Every check, in the order a fix is best applied: the config, the socket, the daemon, what it serves, the disk."""
    import grpc

    from memory_daemon import __version__
    from memory_daemon.core.config import DATABASE_FILE, default_data_dir

    checks = [config_check(), *socket_checks(client.address)]
    try:
        status = as_dict(client.get_status())
    except grpc.RpcError as error:
        stale = any(c.check == "socket" and c.ok for c in checks)
        checks.append(Check("daemon", False, f"not reachable at {client.address}: {error.code().name.lower()}: "
                                             f"{error.details()}",
                            ("the socket is left from a daemon that died; " if stale else "") + START_DAEMON))
        data_dir = data_dir or default_data_dir()
        checks.append(schema_check(None, data_dir / DATABASE_FILE))
        checks.append(_model_file_check())
        return checks + data_dir_checks(data_dir)

    count = status["memory_count"]
    checks.append(Check("daemon", True, f"cortexd {status['version']} pid {status['pid']} at {client.address}, "
                                        f"{count} {'memory' if count == 1 else 'memories'}"))
    if status["version"] == __version__:
        checks.append(Check("version", True, f"daemon and client are both cortexd {__version__}"))
    else:
        checks.append(Check("version", False, f"the daemon runs cortexd {status['version']}, this client is "
                                              f"{__version__}", RESTART_DAEMON))
    checks.append(schema_check(status["schema_version"], Path(status["database_path"])))
    checks.extend(_model_checks(client, as_dict))
    served_dir = Path(status["data_dir"])
    if served_dir.exists() or data_dir is not None:
        checks.extend(data_dir_checks(data_dir or served_dir))
    else:
        checks.append(Check("data dir", True, f"{served_dir} is on the daemon's machine; run doctor there to check it"))
    return checks


def run_doctor(client, data_dir: str | None, as_json: bool, as_dict) -> int:
    """Print every check and its fix; exit status 1 when anything needs attention."""
    import json

    checks = diagnose(client, Path(data_dir).expanduser() if data_dir else None, as_dict)
    healthy = all(c.ok for c in checks)
    if as_json:
        print(json.dumps({"healthy": healthy, "checks": [asdict(c) for c in checks]}, indent=2))
    else:
        for check in checks:
            print(f"[{'ok' if check.ok else 'FAIL'}] {check.check}: {check.detail}")
            if check.fix:
                print(f"       fix: {check.fix}")
    return 0 if healthy else 1
