"""Who is calling an RPC: the namespace its memories and graph live in."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Caller:
    namespace: str
