"""The daemon's error hierarchy and its one mapping onto gRPC status codes."""

from __future__ import annotations

import errno
import os
import re
import shutil

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


class ResourceExhausted(CortexdError):
    """The disk (or the user's quota) is full: the user can act on it, so it is not reported as a daemon bug."""

    status = grpc.StatusCode.RESOURCE_EXHAUSTED


class DeadlineExceeded(CortexdError):
    status = grpc.StatusCode.DEADLINE_EXCEEDED


# Status details travel in gRPC metadata, which peers refuse past 8-16 KiB; a message quoting a huge argument back
# would otherwise reach the caller as RESOURCE_EXHAUSTED instead of the error it explains.
MAX_STATUS_MESSAGE_BYTES = 2048

_OUT_OF_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})
# DuckDB reports a failed write as text, with the OS's reason: 'Could not write file "<path>": No space left on
# device'; its temp directory has a size limit of its own ('max_temp_directory_size').
_OUT_OF_SPACE_WORDS = (os.strerror(errno.ENOSPC), os.strerror(errno.EDQUOT), "max_temp_directory_size")
_QUOTED_PATH = re.compile(r'file "([^"]+)"')


def grpc_status_of(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and message a failed call reports; unexpected errors become INTERNAL."""
    error = known_fault(error) or error
    if isinstance(error, CortexdError):
        return error.status, _bounded(str(error))
    return grpc.StatusCode.INTERNAL, _bounded(f"internal error: {type(error).__name__}: {error}")


def known_fault(error: BaseException) -> CortexdError | None:
    """An error from below the domain (the OS, DuckDB, the interpreter) that has a truthful name: a full disk or
    quota, or input nested too deeply to process; None for anything else."""
    if isinstance(error, CortexdError):
        return error
    if isinstance(error, RecursionError):
        return InvalidArgument("the request is nested too deeply to process")
    if isinstance(error, OSError) and error.errno in _OUT_OF_SPACE_ERRNOS:
        return _out_of_space(error.filename, error.strerror or os.strerror(error.errno))
    # DuckDB's errors are matched by module and text: core must not import duckdb (the client side loads core).
    if type(error).__module__.split(".")[0].lstrip("_") == "duckdb":
        text = str(error)
        reason = next((words for words in _OUT_OF_SPACE_WORDS if words in text), None)
        if reason is not None:
            found = _QUOTED_PATH.search(text)
            return _out_of_space(found.group(1) if found else None, reason)
    return None


def _out_of_space(path: str | os.PathLike | None, reason: str) -> ResourceExhausted:
    where = os.fspath(path) if path else ""
    free = _free_bytes(where)
    return ResourceExhausted(
        f"disk full: could not write {where or 'the store'} ({reason})"
        + (f"; {_in_units(free)} free on its file system" if free is not None else "")
        + ". Free some space (or raise the quota), then retry."
    )


def _free_bytes(path: str) -> int | None:
    try:
        return shutil.disk_usage(os.path.dirname(path)).free if path else None
    except OSError:
        return None


def _in_units(size: float) -> str:
    if size < 1024:
        return f"{int(size)} bytes"
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        size /= 1024
        if size < 1024 or unit == "TiB":
            return f"{size:.1f} {unit}"
    return ""


def _bounded(message: str) -> str:
    encoded = message.encode("utf-8", errors="replace")
    if len(encoded) <= MAX_STATUS_MESSAGE_BYTES:
        return message
    kept = encoded[:MAX_STATUS_MESSAGE_BYTES - 64].decode("utf-8", errors="ignore")
    return f"{kept}… (message cut: {len(encoded)} bytes in all)"
