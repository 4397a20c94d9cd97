"""Addresses, channel options and call metadata that the daemon and every client agree on."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

NAMESPACE_HEADER = "x-cortexd-namespace"
AUTH_HEADER = "authorization"
# One per logical write, chosen by the caller: a write retried with the same key is applied once (cortexd.proto).
IDEMPOTENCY_HEADER = "idempotency-key"
ADDRESS_ENV = "CORTEXD_ADDRESS"
TOKEN_FILE_ENV = "CORTEXD_TOKEN_FILE"
TLS_CA_ENV = "CORTEXD_TLS_CA"
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


def read_tls_ca(ca_file: str | None = None) -> bytes | None:
    """The PEM CA certificate that signs the daemon's TLS certificate: the given file or $CORTEXD_TLS_CA, else None."""
    path = ca_file or os.environ.get(TLS_CA_ENV, "").strip()
    if not path:
        return None
    pem = Path(path).expanduser().read_bytes()
    if b"-----BEGIN CERTIFICATE-----" not in pem:
        raise ValueError(f"TLS CA file {path} holds no PEM certificate")
    return pem


def open_channel(address: str, tls_ca: bytes | None = None, *, aio: bool = False):
    """A channel to the daemon: over TCP with TLS verified against tls_ca when one is given, else plaintext.

    A Unix socket is always plaintext (the daemon serves TLS on TCP only), so a CA set in the environment never
    breaks local use."""
    import grpc

    module = grpc.aio if aio else grpc
    if tls_ca is None or is_unix_address(address):
        return module.insecure_channel(address, options=CHANNEL_OPTIONS)
    return module.secure_channel(address, grpc.ssl_channel_credentials(root_certificates=tls_ca), options=CHANNEL_OPTIONS)


def call_metadata(namespace: str | None, token: str | None) -> tuple[tuple[str, str], ...]:
    """gRPC metadata carrying the caller's namespace and, over TCP, its bearer token."""
    metadata: list[tuple[str, str]] = []
    if namespace:
        metadata.append((NAMESPACE_HEADER, namespace))
    if token:
        metadata.append((AUTH_HEADER, f"Bearer {token}"))
    return tuple(metadata)
