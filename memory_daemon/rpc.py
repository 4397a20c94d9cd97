"""Thin RPC handlers: each unpacks a request, calls the memory domain and packs the reply."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from google.protobuf import json_format

from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon import __version__
from memory_daemon.memories import ImportItem, ImportOutcome, MemoryService, NewMemory
from memory_daemon.store import SCHEMA_VERSION, Database, MemoryRow
from memory_daemon.timefmt import format_iso


@dataclass(frozen=True)
class Caller:
    """Who is calling: the namespace its memories live in."""

    namespace: str


def memory_message(row: MemoryRow) -> pb.Memory:
    message = pb.Memory(
        id=row.id, content=row.content, tags=row.tags, entities=row.entities, strength=row.strength,
        created_at=format_iso(row.created_at), last_used_at=format_iso(row.last_used_at), use_count=row.use_count,
        source=row.source, context=row.context, session_id=row.session_id, namespace=row.namespace,
        external_id=row.external_id or "",
    )
    message.meta.update(row.meta)
    return message


class MemoryRpc:
    """The MemoryService handlers, by RPC name; called from gRPC and from the MCP bridge alike."""

    def __init__(self, memories: MemoryService, database: Database, listen_address: str) -> None:
        self._memories = memories
        self._database = database
        self._listen_address = listen_address
        self._started = time.monotonic()

    def SaveMemory(self, request: pb.SaveMemoryRequest, caller: Caller) -> pb.SaveMemoryReply:
        new = NewMemory(
            content=request.content, tags=tuple(request.tags), entities=tuple(request.entities),
            strength=request.strength if request.HasField("strength") else None, source=request.source,
            context=request.context, session_id=request.session_id,
            meta=json_format.MessageToDict(request.meta) if request.HasField("meta") else {},
        )
        return pb.SaveMemoryReply(memory=memory_message(self._memories.save(caller.namespace, new)))

    def SearchMemory(self, request: pb.SearchMemoryRequest, caller: Caller) -> pb.SearchMemoryReply:
        hits = self._memories.search(
            caller.namespace, request.query, request.limit, request.tags, request.since, request.until
        )
        return pb.SearchMemoryReply(
            hits=[pb.SearchHit(memory=memory_message(h.memory), score=round(h.score, 4)) for h in hits]
        )

    def OpenMemories(self, request: pb.OpenMemoriesRequest, caller: Caller) -> pb.OpenMemoriesReply:
        rows = self._memories.open(caller.namespace, request.ids)
        return pb.OpenMemoriesReply(memories=[memory_message(r) for r in rows])

    def TouchMemory(self, request: pb.TouchMemoryRequest, caller: Caller) -> pb.TouchMemoryReply:
        row = self._memories.touch(caller.namespace, request.id, request.boost_strength)
        return pb.TouchMemoryReply(memory=memory_message(row))

    def ImportMemories(self, records: list[pb.ImportRecord], caller: Caller) -> pb.ImportReply:
        outcome: ImportOutcome = self._memories.import_items(
            ImportItem(external_id=r.id.strip(), text=r.text, namespace=r.namespace or caller.namespace,
                       timestamp=r.timestamp)
            for r in records
        )
        return pb.ImportReply(imported=outcome.imported, skipped=outcome.skipped, errors=outcome.errors)

    def GetStatus(self, request: pb.GetStatusRequest, caller: Caller) -> pb.GetStatusReply:
        return pb.GetStatusReply(
            version=__version__, pid=os.getpid(), uptime_seconds=round(time.monotonic() - self._started, 3),
            data_dir=str(self._database.path.parent), database_path=str(self._database.path),
            schema_version=SCHEMA_VERSION, memory_count=self._memories.count(),
            listen_address=self._listen_address, namespace=caller.namespace,
        )

    def recent_memories(self, caller: Caller, limit: int = 20) -> list[pb.Memory]:
        return [memory_message(r) for r in self._memories.recent(caller.namespace, limit)]
