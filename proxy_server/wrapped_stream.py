"""Plumbing for a read stream that wraps the transport's: iteration, context management and closing pass through."""

from __future__ import annotations

import anyio


class WrappedReadStream:
    """Subclasses change what receive() returns; everything else behaves as the wrapped stream does."""

    def __init__(self, inner) -> None:
        self._inner = inner

    @property
    def last_context(self):
        return getattr(self._inner, "last_context", None)

    async def receive(self):
        return await self._inner.receive()

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self):
        return self

    async def __anext__(self):
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()
