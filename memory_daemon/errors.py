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


def grpc_status_of(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and message a failed call reports; unexpected errors become INTERNAL."""
    if isinstance(error, CortexdError):
        return error.status, str(error)
    return grpc.StatusCode.INTERNAL, f"internal error: {type(error).__name__}: {error}"
