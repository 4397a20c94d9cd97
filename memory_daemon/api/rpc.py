"""Thin RPC handlers: each unpacks a request, calls the memory domain and packs the reply."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass

from google.protobuf import json_format

from cortexd.connect import GLOBAL_NAMESPACE, MAX_MESSAGE_BYTES
from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon import __version__
from memory_daemon.activation.analyzer import Analysis
from memory_daemon.api.caller import Caller
from memory_daemon.graph.service import GraphService
from memory_daemon.api.decision_rpc import decision_message
from memory_daemon.api.graph_rpc import episode_messages, fact_message
from memory_daemon.core.config import Limits
from memory_daemon.core.errors import InvalidArgument, Unavailable
from memory_daemon.core.validation import checked_text, json_depth
from memory_daemon.context.preflight import TOKEN_ESTIMATOR, ContextCompiler
from memory_daemon.memory.service import (
    AnalyzeItem, ImportItem, ImportOutcome, MemoryService, NewMemory, checked_namespace,
)
from memory_daemon.journal.observations import Observation, ObservationRecorder
from memory_daemon.api.proxy_health import ProxyHealthBoard
from preprocessing.dedup import DedupVerdict

from memory_daemon.store import SCHEMA_VERSION, Database, MemoryRow
from memory_daemon.store.graph import EpisodeRow, FactRow
from memory_daemon.store.dump import DumpRepository
from memory_daemon.ops.transfer import DumpReader, StoreTransfer
from memory_daemon.core.timefmt import format_iso
from memory_daemon.context.unified_search import SearchResult, UnifiedSearch, checked_kinds

MAX_ANALYZE_BATCH = 256
PREVIEW_CHARS = 80  # of a memory a forget by query shows before it is confirmed
# Replies that list memories stop short of this many bytes, far below the gRPC message limit: the MCP bridge carries
# the same reply again as JSON, which is larger.
REPLY_BUDGET_BYTES = MAX_MESSAGE_BYTES // 4
# The meta a reply may carry; within these, the Memory nests well inside protobuf's 100-level decoding limit.
_REPLY_META = Limits()


def reply_meta(meta: dict) -> dict:
    """The stored meta as a reply carries it. One past the limits (stored before they existed, or restored from an
    old dump) is replaced by a note: packed as it is, it would fail every reply that carries it, searches included."""
    depth = json_depth(meta)
    if depth > _REPLY_META.max_meta_depth:
        problem = f"nested {depth} levels deep, past the limit of {_REPLY_META.max_meta_depth}"
    else:
        size = len(json.dumps(meta, ensure_ascii=False, separators=(",", ":")).encode("utf-8", errors="replace"))
        if size <= _REPLY_META.max_meta_bytes:
            return meta
        problem = f"{size} bytes of JSON, past the limit of {_REPLY_META.max_meta_bytes}"
    return {"cortexd_meta_omitted": f"this memory's meta is {problem}; the store keeps it (`cortexd export`)"}


def readable_namespace(requested: str, caller: Caller) -> str:
    """The namespace a read names, when the caller may read it: its own or the shared global one."""
    if requested:
        checked_namespace(requested)  # the caller's own was checked when the call came in (servicers.caller_of)
    if not requested or requested == caller.namespace:
        return caller.namespace
    if requested == GLOBAL_NAMESPACE:
        return requested
    raise InvalidArgument(f"namespace {requested[:64]!r}: this call reads only the caller's namespace "
                          f"{caller.namespace!r} and {GLOBAL_NAMESPACE!r}; connect with that namespace instead")


def memory_message(row: MemoryRow) -> pb.Memory:
    message = pb.Memory(
        id=row.id, content=row.content, tags=row.tags, entities=row.entities, strength=row.strength,
        created_at=format_iso(row.created_at), last_used_at=format_iso(row.last_used_at), use_count=row.use_count,
        source=row.source, context=row.context, session_id=row.session_id, namespace=row.namespace,
        external_id=row.external_id or "", superseded_by=row.superseded_by or "", long_term=row.long_term,
        archived_at=format_iso(row.archived_at) if row.archived_at else "",
        superseded_at=format_iso(row.superseded_at) if row.superseded_at else "",
    )
    message.meta.update(reply_meta(row.meta))
    return message


def _meta_of(request: pb.SaveMemoryRequest) -> dict:
    if not request.HasField("meta"):
        return {}
    try:
        return json_format.MessageToDict(request.meta)
    except ValueError:  # a NaN or infinite number_value, which JSON has no word for
        raise InvalidArgument("meta holds NaN or an infinity, which JSON cannot carry") from None


def dedup_message(verdict: DedupVerdict | None, content: str = "") -> pb.Deduplication | None:
    if verdict is None:
        return None
    return pb.Deduplication(action=verdict.action.value, memory_id=verdict.memory_id or "", memory_content=content,
                            similarity=round(verdict.similarity, 4), reasons=verdict.reasons)


def analysis_message(analysis: Analysis, item_id: str = "") -> pb.AnalyzeMessageReply:
    signals = analysis.signals
    return pb.AnalyzeMessageReply(
        id=item_id,
        signals=pb.PhraseSignals(
            save_request=signals.save_request, recall_request=signals.recall_request,
            importance_marker=signals.importance_marker, matched_phrases=[p.text for p in signals.matched_phrases],
        ),
        should_save=analysis.should_save,
        action_recommendation=analysis.action,
        confidence=analysis.confidence,
        intent=analysis.intent.intent,
        intent_source=analysis.intent.source,
        intent_probabilities={k: round(v, 4) for k, v in analysis.intent.all_probs.items()},
        suggested_entities=[pb.SuggestedEntity(text=e.text, label=e.label, key=e.key) for e in analysis.entities],
        suggested_tags=analysis.tags,
        suggested_strength=round(analysis.strength, 3),
        deduplication=dedup_message(analysis.deduplication, analysis.dedup_content),
        reasoning=analysis.reasoning,
        context_used=analysis.context_used,
        timings_ms=analysis.timings_ms,
        degraded=analysis.degraded,
        suggested_content=analysis.suggested_content,
        suggested_facts=[pb.SuggestedFact(subject=t.subject, predicate=t.predicate, object=t.object, singular=t.singular,
                                          change=t.change, previous_object=t.previous_object or "")
                         for t in analysis.suggested_facts],
    )


class MemoryRpc:
    """The MemoryService handlers, by RPC name; called from gRPC and from the MCP bridge alike."""

    def __init__(self, memories: MemoryService, database: Database, listen_address: str,
                 graph: GraphService | None = None, compiler: ContextCompiler | None = None,
                 search: UnifiedSearch | None = None) -> None:
        self._memories = memories
        self._search = search  # search over facts, episodes and decisions too; memories only without it
        self._graph = graph
        self._compiler = compiler
        self._observations = ObservationRecorder(memories, graph) if graph is not None else None
        self._proxies = ProxyHealthBoard()
        self._database = database
        self._listen_address = listen_address
        self._started = time.monotonic()
        self._transfer = StoreTransfer(DumpRepository(database), memories, graph)

    @property
    def limits(self) -> Limits:
        return self._memories.limits

    def SaveMemory(self, request: pb.SaveMemoryRequest, caller: Caller) -> pb.SaveMemoryReply:
        new = NewMemory(
            content=request.content, tags=tuple(request.tags), entities=tuple(request.entities),
            strength=request.strength if request.HasField("strength") else None, source=request.source,
            context=request.context, session_id=request.session_id,
            meta=_meta_of(request),
            extract_facts=request.extract_facts if request.HasField("extract_facts") else None,
            supersedes=request.supersedes.strip(),
        )
        outcome = self._memories.save(caller.namespace, new)
        rows = [*outcome.facts, *outcome.superseded_facts]
        names = self._graph.entity_names(caller.namespace, [r.subject_id for r in rows]) if rows and self._graph else {}
        return pb.SaveMemoryReply(
            memory=memory_message(outcome.memory), auto_filled=outcome.auto_filled, merged=outcome.merged,
            deduplication=dedup_message(outcome.deduplication, outcome.dedup_content), degraded=outcome.degraded,
            facts=[fact_message(r, names) for r in outcome.facts],
            superseded_facts=[fact_message(r, names) for r in outcome.superseded_facts],
            superseded_memories=outcome.superseded_memories,
        )

    def AnalyzeMessage(self, request: pb.AnalyzeMessageRequest, caller: Caller) -> pb.AnalyzeMessageReply:
        item = AnalyzeItem(request.message, request.session_id, readable_namespace(request.namespace, caller))
        return analysis_message(self._memories.analyze([item])[0])

    def AnalyzeMessages(self, request: pb.AnalyzeMessagesRequest, caller: Caller) -> pb.AnalyzeMessagesReply:
        if len(request.items) > MAX_ANALYZE_BATCH:
            raise InvalidArgument(f"items: at most {MAX_ANALYZE_BATCH} per call, got {len(request.items)}")
        for item in request.items:  # each id comes back in the reply
            checked_text(item.id, "items.id", self.limits.max_id_chars, required=False)
        # A script's batch names each record's namespace, as an import does; the MCP tool above cannot.
        items = [AnalyzeItem(i.message, i.session_id, i.namespace or caller.namespace) for i in request.items]
        analyses = self._memories.analyze(items)
        return pb.AnalyzeMessagesReply(
            results=[analysis_message(a, i.id) for a, i in zip(analyses, request.items, strict=True)]
        )

    def GetModelStatus(self, request: pb.GetModelStatusRequest, caller: Caller) -> pb.GetModelStatusReply:
        statuses, degraded = self._memories.model_statuses()
        return pb.GetModelStatusReply(
            models=[pb.ModelStatus(name=s.name, path=s.path, ok=s.ok, detail=s.detail, sha256=s.sha256, load_ms=s.load_ms)
                    for s in statuses],
            degraded=degraded,
        )

    def SearchMemory(self, request: pb.SearchMemoryRequest, caller: Caller) -> pb.SearchMemoryReply:
        query = self._memories.search_query(
            caller.namespace, request.query, request.limit, request.tags, request.since, request.until,
            request.signals, request.session_id, request.include_history, request.entity,
        )
        if self._search is None:
            checked_kinds(request.kinds)
            results = [SearchResult("memory", h.memory, h.score, h.signal_scores) for h in self._memories.retrieve(query)]
        else:
            results = self._search.search(query, request.kinds)
        return pb.SearchMemoryReply(hits=self._hit_messages(caller, results))

    def _hit_messages(self, caller: Caller, results: list[SearchResult]) -> list[pb.SearchHit]:
        rows = [r.row for r in results]
        facts = [r for r in rows if isinstance(r, FactRow)]
        names = self._graph.entity_names(caller.namespace, [f.subject_id for f in facts]) if facts else {}
        episodes = {e.id: e for e in episode_messages(self._graph, caller.namespace,
                                                      [r for r in rows if isinstance(r, EpisodeRow)])} if self._graph else {}
        hits, size = [], 0
        for result in results:
            hit = pb.SearchHit(kind=result.kind, score=round(result.score, 6), signal_scores=result.signal_scores)
            row = result.row
            if result.kind == "memory":
                hit.memory.CopyFrom(memory_message(row))
            elif result.kind == "fact":
                hit.fact.CopyFrom(fact_message(row, names))
            elif result.kind == "episode":
                hit.episode.CopyFrom(episodes[row.id])
            else:
                hit.decision.CopyFrom(decision_message(row))
            size += hit.ByteSize()
            if hits and size > REPLY_BUDGET_BYTES:
                break  # the best hits come first: those that fit are answered rather than none
            hits.append(hit)
        return hits

    def OpenMemories(self, request: pb.OpenMemoriesRequest, caller: Caller) -> pb.OpenMemoriesReply:
        rows = self._memories.open(caller.namespace, request.ids)
        reply = pb.OpenMemoriesReply(memories=[memory_message(r) for r in rows])
        if len(rows) > 1 and reply.ByteSize() > REPLY_BUDGET_BYTES:
            raise InvalidArgument(f"ids: these {len(rows)} memories come to {reply.ByteSize()} bytes, more than one "
                                  f"reply carries ({REPLY_BUDGET_BYTES}); open fewer at a time")
        return reply

    def TouchMemory(self, request: pb.TouchMemoryRequest, caller: Caller) -> pb.TouchMemoryReply:
        row = self._memories.touch(caller.namespace, request.id, request.boost_strength)
        return pb.TouchMemoryReply(memory=memory_message(row))

    def ImportMemories(self, records: list[pb.ImportRecord], caller: Caller) -> pb.ImportReply:
        outcome: ImportOutcome = self._memories.import_items(
            ImportItem(external_id=r.id.strip(), text=r.text, namespace=r.namespace or caller.namespace,
                       timestamp=r.timestamp, speaker=r.speaker.strip(), session=r.session.strip())
            for r in records
        )
        return pb.ImportReply(imported=outcome.imported, skipped=outcome.skipped, errors=outcome.errors,
                              update_checks_pending=outcome.checks_pending)

    def GetStatus(self, request: pb.GetStatusRequest, caller: Caller) -> pb.GetStatusReply:
        return pb.GetStatusReply(
            version=__version__, pid=os.getpid(), uptime_seconds=round(time.monotonic() - self._started, 3),
            data_dir=str(self._database.path.parent), database_path=str(self._database.path),
            schema_version=SCHEMA_VERSION, memory_count=self._memories.count(),
            listen_address=self._listen_address, namespace=caller.namespace, proxies=self._proxies.live(),
            wal_bytes=self._database.wal_bytes(), **self._model_state(),
            indexes=[pb.IndexStatus(namespace=state.namespace, mode=state.mode, rows=state.rows,
                                    unsaved=state.unsaved) for state in self._memories.index_states()],
            update_checks=[pb.UpdateChecksPending(namespace=namespace, pending=count)
                           for namespace, count in self._memories.update_checks_pending().items()],
            holder_readings_pending=self._memories.holder_readings_pending(),
        )

    def RebuildIndexes(self, request: pb.RebuildIndexesRequest, caller: Caller) -> pb.RebuildIndexesReply:
        namespace = caller.namespace
        if request.target_namespace:
            try:
                namespace = checked_namespace(request.target_namespace)
            except InvalidArgument as error:
                raise InvalidArgument(f"target_namespace: {error}") from None
        return pb.RebuildIndexesReply(namespace=namespace, mode=self._memories.rebuild_indexes(namespace))

    def _model_state(self) -> dict:
        """Without waiting for the load: status must answer while the models are still loading."""
        if not self._memories.models_loaded():
            return {"models": "loading"}
        _statuses, degraded = self._memories.model_statuses()
        return {"models": "degraded" if degraded else "ready", "degraded_models": degraded}

    def RecordObservation(self, request: pb.RecordObservationRequest, caller: Caller) -> pb.RecordObservationReply:
        if self._observations is None:
            raise Unavailable("passive capture needs the knowledge graph, which this daemon was started without")
        outcome = self._observations.record(caller.namespace, Observation(
            upstream=request.upstream, tool=request.tool, arguments_json=request.arguments_json,
            result_text=request.result_text, is_error=request.is_error))
        return pb.RecordObservationReply(episode_id=outcome.episode_id,
                                         memories=[memory_message(m) for m in outcome.memories],
                                         degraded=outcome.degraded)

    def ReportProxyHealth(self, request: pb.ReportProxyHealthRequest, caller: Caller) -> pb.ReportProxyHealthReply:
        return pb.ReportProxyHealthReply(report_within_seconds=self._proxies.report(request.proxy))

    @property
    def compiler(self) -> ContextCompiler:
        if self._compiler is None:
            raise Unavailable("context compilation is not configured in this daemon")
        return self._compiler

    def CompileContext(self, request: pb.CompileContextRequest, caller: Caller) -> pb.CompileContextReply:
        compiled = self.compiler.compile(caller.namespace, request.task, request.session_id.strip(),
                                          request.max_tokens if request.HasField("max_tokens") else None)
        return pb.CompileContextReply(
            markdown=compiled.markdown,
            items=[pb.ContextItem(tier=l.tier, kind=l.kind, id=l.id, text=l.text, tokens=l.tokens,
                                  relevance=round(l.relevance, 4)) for l in compiled.lines],
            tokens_used=compiled.tokens_used, max_tokens=compiled.max_tokens, token_estimator=TOKEN_ESTIMATOR,
            left_out=compiled.left_out,
        )

    def ObserveMemoryUsage(self, request: pb.ObserveMemoryUsageRequest, caller: Caller) -> pb.ObserveMemoryUsageReply:
        used, unused = self._memories.observe_usage(caller.namespace, request.ids, request.response)
        return pb.ObserveMemoryUsageReply(used=[memory_message(r) for r in used], unused=unused)

    def PromoteMemory(self, request: pb.PromoteMemoryRequest, caller: Caller) -> pb.PromoteMemoryReply:
        promoted = self._memories.promote(caller.namespace, request.ids, request.auto)
        return pb.PromoteMemoryReply(promoted=[memory_message(r) for r in promoted])

    def CollectGarbage(self, request: pb.CollectGarbageRequest, caller: Caller) -> pb.CollectGarbageReply:
        archived, checked, kept, spared = self._memories.collect_garbage(
            caller.namespace, request.apply,
            request.forget_threshold if request.HasField("forget_threshold") else None,
            request.grace_days if request.HasField("grace_days") else None)
        return pb.CollectGarbageReply(archived=archived, checked=checked, long_term_kept=kept, applied=request.apply,
                                      within_grace=spared)

    def ForgetMemory(self, request: pb.ForgetMemoryRequest, caller: Caller) -> pb.ForgetMemoryReply:
        outcome = self._memories.forget(caller.namespace, request.ids, request.query, request.confirm, request.limit,
                                        request.purge, request.reason)
        forgotten = outcome.forgotten
        return pb.ForgetMemoryReply(
            memories=[pb.ForgottenMemory(id=memory_id, preview=text[:PREVIEW_CHARS] if outcome.previewed else "")
                      for memory_id, text in forgotten.memories],
            previewed=outcome.previewed, facts_removed=forgotten.facts_removed,
            replies_removed=forgotten.replies_removed, contexts_cleared=forgotten.contexts_cleared,
            purged=outcome.purged)

    def EditMemory(self, request: pb.EditMemoryRequest, caller: Caller) -> pb.EditMemoryReply:
        row, versions = self._memories.edit(caller.namespace, request.id, request.content, request.reason,
                                            request.drop_history)
        return pb.EditMemoryReply(memory=memory_message(row), history_versions=versions)

    def UnarchiveMemory(self, request: pb.UnarchiveMemoryRequest, caller: Caller) -> pb.UnarchiveMemoryReply:
        rows = self._memories.unarchive(caller.namespace, request.ids)
        return pb.UnarchiveMemoryReply(unarchived=[memory_message(row) for row in rows])

    def ListNamespaces(self, request: pb.ListNamespacesRequest, caller: Caller) -> pb.ListNamespacesReply:
        return pb.ListNamespacesReply(namespaces=[
            pb.NamespaceCounts(namespace=name, memories=m, facts=f, episodes=e, decisions=d)
            for name, m, f, e, d in self._memories.namespaces()])

    def ClusterMemories(self, request: pb.ClusterMemoriesRequest, caller: Caller) -> pb.ClusterMemoriesReply:
        clusters = self._memories.clusters(caller.namespace,
                                           request.similarity if request.HasField("similarity") else None, request.limit)
        return pb.ClusterMemoriesReply(clusters=[
            pb.MemoryCluster(ids=c.ids, contents=c.contents, mean_similarity=c.mean_similarity) for c in clusters])

    def ConsolidateMemories(self, request: pb.ConsolidateMemoriesRequest, caller: Caller) -> pb.ConsolidateMemoriesReply:
        row, merged = self._memories.consolidate(caller.namespace, request.ids, request.content)
        return pb.ConsolidateMemoriesReply(memory=memory_message(row), merged=merged)

    def ExportMemories(self, request: pb.ExportMemoriesRequest, caller: Caller) -> pb.ExportMemoriesReply:
        rows, next_offset = self._memories.export(caller.namespace, request.offset, request.limit)
        messages, size = [], 0
        for row in rows:
            message = memory_message(row)
            size += message.ByteSize()
            if messages and size > REPLY_BUDGET_BYTES:
                # A shorter page: the next one starts at the first memory left out.
                return pb.ExportMemoriesReply(memories=messages, next_offset=request.offset + len(messages))
            messages.append(message)
        return pb.ExportMemoriesReply(memories=messages, next_offset=next_offset)

    def ExportStore(self, request: pb.ExportStoreRequest, caller: Caller) -> Iterator[list[str]]:
        """The dump's lines, a chunk at a time (the servicer streams them)."""
        return self._transfer.export(None if request.all_namespaces else caller.namespace)

    def dump_reader(self) -> DumpReader:
        """Checks a dump's lines as they stream in; RestoreStore stores them once all have arrived."""
        return self._transfer.reader()

    def RestoreStore(self, reader: DumpReader, caller: Caller) -> pb.RestoreStoreReply:
        outcome = self._transfer.restore(reader)
        return pb.RestoreStoreReply(restored=outcome.restored, skipped=outcome.skipped)

    def BackupStore(self, request: pb.BackupStoreRequest, caller: Caller) -> pb.BackupStoreReply:
        outcome = self._transfer.backup(request.dest)
        return pb.BackupStoreReply(path=str(outcome.path), size_bytes=outcome.size_bytes, rows=outcome.rows)

    def recent_memories(self, caller: Caller, limit: int = 20) -> list[pb.Memory]:
        return [memory_message(r) for r in self._memories.recent(caller.namespace, limit)]


@dataclass(frozen=True)
class RpcTable:
    """The handler objects of every service, so the MCP bridge can dispatch a tool to its RPC."""

    memory: MemoryRpc
    graph: object  # GraphRpc
    decision: object  # DecisionRpc

    def handler(self, service_name: str, rpc_name: str):
        target = {"MemoryService": self.memory, "GraphService": self.graph, "DecisionService": self.decision}[service_name]
        return getattr(target, rpc_name)
