"""Idempotent writes: a write sent again with the same `idempotency-key` gets its first reply instead of running twice."""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
from collections.abc import Awaitable, Callable
from datetime import timedelta

from google.protobuf.message import Message

from cortexd.connect import IDEMPOTENCY_HEADER
from memory_daemon.core.errors import InvalidArgument, known_fault
from memory_daemon.core.logs import log_event
from memory_daemon.store.idempotency import IdempotencyRepository, RememberedReply
from memory_daemon.core.timefmt import format_iso, utc_now

KEEP_FOR = timedelta(hours=24)
MAX_KEYS = 10_000
PRUNE_EVERY = 500  # remembered replies between two prunes, so the table stays near MAX_KEYS
MAX_KEY_CHARS = 200
_KEY = re.compile(r"[\x21-\x7e]{1,%d}" % MAX_KEY_CHARS)


def idempotency_key_of(metadata) -> str | None:
    """The caller's idempotency key from call metadata; None when it sent none. A malformed key is refused."""
    key = next((value for name, value in metadata or () if name == IDEMPOTENCY_HEADER), None)
    if key is None:
        return None
    if not isinstance(key, str) or not _KEY.fullmatch(key):
        raise InvalidArgument(f"{IDEMPOTENCY_HEADER}: use 1-{MAX_KEY_CHARS} printable ASCII characters without spaces, "
                              f"e.g. a UUID")
    return key


class IdempotentReplies:
    """Runs each keyed write once and remembers its reply, in the store, for KEEP_FOR.

    The reply is remembered after the write committed, in its own statement: a daemon killed in the milliseconds
    between the two forgets the key, and a retry then writes again. Everything else is covered, restarts included.
    Two calls with one key at once: the second waits for the first and then gets its reply.
    """

    def __init__(self, repository: IdempotencyRepository, run_blocking: Callable[..., Awaitable]) -> None:
        self._repository = repository
        self._run_blocking = run_blocking
        self._in_flight: dict[tuple[str, str], asyncio.Future] = {}
        self._since_prune = 0

    async def once(self, namespace: str, key: str, method: str, request: Message, reply_class: type[Message],
                   execute: Callable[[], Awaitable[Message]]) -> Message:
        """The reply remembered for (namespace, key) if this same request made it; else execute() and remember it."""
        digest = hashlib.sha256(method.encode() + b"\0" + request.SerializeToString(deterministic=True)).hexdigest()
        slot = (namespace, key)
        while (running := self._in_flight.get(slot)) is not None:
            await asyncio.shield(running)
        # Claimed before the lookup, with no await in between: a second call with this key waits for this one.
        done = asyncio.get_running_loop().create_future()
        self._in_flight[slot] = done
        try:
            remembered = await self._run_blocking(self._repository.find, namespace, key, utc_now() - KEEP_FOR)
            if remembered is not None:
                if (remembered.method, remembered.request_sha256) != (method, digest):
                    raise InvalidArgument(
                        f"{IDEMPOTENCY_HEADER} {key!r} was used at {format_iso(remembered.created_at)} for a different "
                        f"request ({remembered.method.rsplit('/', 1)[-1]}); send a new key with each new write")
                return reply_class.FromString(remembered.reply)
            reply = await execute()  # a failed write remembers nothing: a retry runs it again
            try:
                await self._run_blocking(self._remember, namespace, key,
                                         RememberedReply(method, digest, reply.SerializeToString(), utc_now()))
            except Exception as error:
                # The write is done; failing the call now would invite the duplicate the key prevents. A full disk
                # is expected here: one line with its cause, no traceback.
                fault = known_fault(error)
                log_event("idempotency_key_not_remembered", logging.ERROR, method=method, exc_info=fault is None,
                          **({"cause": str(fault)} if fault is not None else {}))
            return reply
        finally:
            del self._in_flight[slot]
            done.set_result(None)

    def _remember(self, namespace: str, key: str, reply: RememberedReply) -> None:
        self._repository.remember(namespace, key, reply)
        self._since_prune += 1
        if self._since_prune >= PRUNE_EVERY:
            self._since_prune = 0
            self._repository.prune(utc_now() - KEEP_FOR, MAX_KEYS)
