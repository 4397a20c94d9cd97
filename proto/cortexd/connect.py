"""Addresses, channel options and call metadata that the daemon and every client agree on."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

NAMESPACE_HEADER = "x-cortexd-namespace"
AUTH_HEADER = "authorization"
ADDRESS_ENV = "CORTEXD_ADDRESS"
TOKEN_FILE_ENV = "CORTEXD_TOKEN_FILE"
DEFAULT_NAMESPACE = "default"
GLOBAL_NAMESPACE = "global"
MAX_MESSAGE_BYTES = 8 * 1024 * 1024

# Short reconnect backoff: a restarted daemon must be picked up within a second,
# not after gRPC's default exponential backoff of up to two minutes.
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 1000),
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.enable_retries", 0),
)


def default_socket_path() -> Path:
    """The per-user socket: $XDG_RUNTIME_DIR/cortexd/cortexd.sock, else a private temp dir."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "").strip()
    if not runtime:
        candidate = Path(f"/run/user/{os.getuid()}")
        runtime = str(candidate) if candidate.is_dir() and os.access(candidate, os.W_OK) else ""
    base = Path(runtime) / "cortexd" if runtime else Path(tempfile.gettempdir()) / f"cortexd-{os.getuid()}"
    return base / "cortexd.sock"


def resolve_address(explicit: str | None = None) -> str:
    """The daemon address: the explicit one, else $CORTEXD_ADDRESS, else the default socket."""
    address = (explicit or os.environ.get(ADDRESS_ENV, "")).strip()
    return address or f"unix:{default_socket_path()}"


def is_unix_address(address: str) -> bool:
    return address.startswith("unix:")


def socket_path_of(address: str) -> Path:
    """The filesystem path of a `unix:` address."""
    return Path(address.removeprefix("unix:").removeprefix("//"))


def read_token(token_file: str | None = None) -> str | None:
    """The bearer token from the given file or $CORTEXD_TOKEN_FILE; None when neither is set."""
    path = token_file or os.environ.get(TOKEN_FILE_ENV, "").strip()
    if not path:
        return None
    token = Path(path).expanduser().read_text(encoding="utf-8").strip()
    if not token:
        raise ValueError(f"token file {path} is empty")
    return token


def call_metadata(namespace: str | None, token: str | None) -> tuple[tuple[str, str], ...]:
    """gRPC metadata carrying the caller's namespace and, over TCP, its bearer token."""
    metadata: list[tuple[str, str]] = []
    if namespace:
        metadata.append((NAMESPACE_HEADER, namespace))
    if token:
        metadata.append((AUTH_HEADER, f"Bearer {token}"))
    return tuple(metadata)
