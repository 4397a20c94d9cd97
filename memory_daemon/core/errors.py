"""The daemon's error hierarchy and its one mapping onto gRPC status codes."""

from __future__ import annotations

import grpc


class CortexdError(Exception):
    """A failure to report to the caller as it is; its message says what was wrong."""

    status = grpc.StatusCode.INTERNAL


class InvalidArgument(CortexdError):
    status = grpc.StatusCode.INVALID_ARGUMENT


class NotFound(CortexdError):
    status = grpc.StatusCode.NOT_FOUND


class FailedPrecondition(CortexdError):
    status = grpc.StatusCode.FAILED_PRECONDITION


class Unavailable(CortexdError):
    status = grpc.StatusCode.UNAVAILABLE


class DeadlineExceeded(CortexdError):
    status = grpc.StatusCode.DEADLINE_EXCEEDED


# Status details travel in gRPC metadata, which peers refuse past 8-16 KiB; a message quoting a huge argument back
# would otherwise reach the caller as RESOURCE_EXHAUSTED instead of the error it explains.
MAX_STATUS_MESSAGE_BYTES = 2048


def grpc_status_of(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and message a failed call reports; unexpected errors become INTERNAL."""
    if isinstance(error, CortexdError):
        return error.status, _bounded(str(error))
    return grpc.StatusCode.INTERNAL, _bounded(f"internal error: {type(error).__name__}: {error}")


def _bounded(message: str) -> str:
    encoded = message.encode("utf-8", errors="replace")
    if len(encoded) <= MAX_STATUS_MESSAGE_BYTES:
        return message
    kept = encoded[:MAX_STATUS_MESSAGE_BYTES - 64].decode("utf-8", errors="ignore")
    return f"{kept}… (message cut: {len(encoded)} bytes in all)"
