"""Thin GraphService handlers: each unpacks a request, calls the graph domain and packs the reply."""

from __future__ import annotations

from collections.abc import Iterable

from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.graph.service import EpisodeInput, FactInput, GraphService, fact_status
from memory_daemon.api.caller import Caller
from memory_daemon.store.graph import EntityRow, EpisodeRow, FactRow, RelationRow
from memory_daemon.core.timefmt import format_iso, utc_now


def _iso(value) -> str:
    return format_iso(value) if value is not None else ""


def entity_message(row: EntityRow) -> pb.Entity:
    return pb.Entity(id=row.id, name=row.name, key=row.key, type=row.type, aliases=row.aliases,
                     namespace=row.namespace, created_at=_iso(row.created_at))


def integrity_message(report) -> pb.VerifyIntegrityReply:
    return pb.VerifyIntegrityReply(
        ok=report.ok, rows_checked=report.rows_checked, merkle_root=report.merkle_root,
        problems=[pb.IntegrityProblem(table=p.table, id=p.id, stored_sha256=p.stored, computed_sha256=p.computed)
                  for p in report.problems],
        elapsed_ms=round(report.elapsed_ms, 2),
        purges=[pb.PurgedRecord(id=i, kind=kind, purged_at=format_iso(at), reason=reason)
                for i, kind, at, reason in report.purges],
    )


class GraphRpc:
    """The GraphService handlers, by RPC name; called from gRPC and from the MCP bridge alike."""

    def __init__(self, graph: GraphService) -> None:
        self._graph = graph

    def UpsertFact(self, request: pb.UpsertFactRequest, caller: Caller) -> pb.UpsertFactReply:
        outcome = self._graph.upsert_fact(caller.namespace, FactInput(
            subject=request.subject, predicate=request.predicate, object=request.object,
            object_kind=request.object_kind, valid_from=request.valid_from, valid_to=request.valid_to,
            correction=request.correction, corrects=request.corrects,
            singular=request.singular if request.HasField("singular") else None,
            confidence=request.confidence if request.HasField("confidence") else None,
            source=request.source, create_entities=request.create_entities,
        ))
        facts = self.fact_messages(caller, [outcome.fact, *outcome.superseded])
        return pb.UpsertFactReply(fact=facts[0], status=outcome.status, superseded=facts[1:],
                                  retracted_ids=outcome.retracted_ids,
                                  created_entities=[entity_message(e) for e in outcome.created_entities])

    def RetireFact(self, request: pb.RetireFactRequest, caller: Caller) -> pb.RetireFactReply:
        fact, retracted = self._graph.retire_fact(caller.namespace, request.fact_id.strip(), request.valid_to)
        return pb.RetireFactReply(fact=self.fact_messages(caller, [fact])[0], retracted_ids=retracted)

    def RecordEpisode(self, request: pb.RecordEpisodeRequest, caller: Caller) -> pb.RecordEpisodeReply:
        episode, created = self._graph.record_episode(caller.namespace, EpisodeInput(
            kind=request.kind, title=request.title, body=request.body, files=tuple(request.files),
            entities=tuple(request.entities), occurred_at=request.occurred_at, create_entities=request.create_entities,
        ))
        return pb.RecordEpisodeReply(episode=self.episode_messages(caller, [episode])[0],
                                     created_entities=[entity_message(e) for e in created])

    def QueryEntity(self, request: pb.QueryEntityRequest, caller: Caller) -> pb.QueryEntityReply:
        view = self._graph.query_entity(caller.namespace, request.entity,
                                        request.hops if request.HasField("hops") else None, request.include_retracted)
        return pb.QueryEntityReply(
            entity=entity_message(view.entity),
            active=self.fact_messages(caller, view.active),
            history=self.fact_messages(caller, view.history),
            episodes=self.episode_messages(caller, view.episodes),
            neighbourhood=[pb.GraphNode(entity=entity_message(e), hops=h) for e, h in view.neighbourhood],
            edges=self.fact_messages(caller, view.edges),
        )

    def TimeTravel(self, request: pb.TimeTravelRequest, caller: Caller) -> pb.TimeTravelReply:
        valid_at, known_at, facts, episodes = self._graph.time_travel(
            caller.namespace, request.valid_at, request.known_at, request.entity, request.limit)
        return pb.TimeTravelReply(valid_at=format_iso(valid_at), known_at=format_iso(known_at),
                                  facts=self.fact_messages(caller, facts, at=valid_at),
                                  episodes=self.episode_messages(caller, episodes))

    def VerifyIntegrity(self, request: pb.VerifyIntegrityRequest, caller: Caller) -> pb.VerifyIntegrityReply:
        return integrity_message(self._graph.verify_integrity(caller.namespace))

    def PurgeRecords(self, request: pb.PurgeRecordsRequest, caller: Caller) -> pb.PurgeRecordsReply:
        purged, report = self._graph.purge(caller.namespace, request.ids, request.reason)
        mine = {record_id for record_id, _ in purged}
        integrity = integrity_message(report)
        return pb.PurgeRecordsReply(purged=[m for m in integrity.purges if m.id in mine], integrity=integrity)

    def CreateRelation(self, request: pb.CreateRelationRequest, caller: Caller) -> pb.CreateRelationReply:
        row = self._graph.create_relation(caller.namespace, request.from_id.strip(), request.relation,
                                          request.to_id.strip(), request.strength if request.HasField("strength") else None)
        return pb.CreateRelationReply(relation=relation_message(row))

    def ReadGraph(self, request: pb.ReadGraphRequest, caller: Caller) -> pb.ReadGraphReply:
        entities, facts, relations = self._graph.read_graph(caller.namespace, request.limit)
        return pb.ReadGraphReply(entities=[entity_message(e) for e in entities], facts=self.fact_messages(caller, facts),
                                 relations=[relation_message(r) for r in relations])

    # -- resources and prompts ----------------------------------------------

    def summary(self, caller: Caller) -> dict:
        counts = self._graph.counts(caller.namespace)
        report = self._graph.verify_integrity(caller.namespace)
        return {**counts.__dict__, "merkle_root": report.merkle_root, "integrity_ok": report.ok}

    def recent_episodes(self, caller: Caller, limit: int) -> list[pb.Episode]:
        return self.episode_messages(caller, self._graph.recent_episodes(caller.namespace, limit))

    # -- packing -----------------------------------------------------------

    def fact_messages(self, caller: Caller, rows: Iterable[FactRow], at=None) -> list[pb.Fact]:
        rows = list(rows)
        names = self._graph.entity_names(caller.namespace, [r.subject_id for r in rows])
        return [fact_message(r, names, at) for r in rows]

    def episode_messages(self, caller: Caller, rows: Iterable[EpisodeRow]) -> list[pb.Episode]:
        return episode_messages(self._graph, caller.namespace, rows)


def episode_messages(graph: GraphService, namespace: str, rows: Iterable[EpisodeRow]) -> list[pb.Episode]:
    """Episode rows as the API shows them, each entity named."""
    rows = list(rows)
    if not rows:
        return []
    names = graph.entity_names(namespace, [i for r in rows for i in r.entity_ids])
    return [
        pb.Episode(id=r.id, kind=r.kind, title=r.title, body=r.body, files=r.files, entity_ids=r.entity_ids,
                   entities=[names.get(i, i) for i in r.entity_ids], occurred_at=_iso(r.occurred_at),
                   recorded_at=_iso(r.recorded_at), namespace=r.namespace, sha256=r.sha256)
        for r in rows
    ]


def fact_message(row: FactRow, subject_names: dict[str, str], at=None) -> pb.Fact:
    """A fact row as the API shows it; `status` is judged at `at` (default now)."""
    return pb.Fact(
        id=row.id, subject_id=row.subject_id, subject=subject_names.get(row.subject_id, ""), predicate=row.predicate,
        object_id=row.object_id or "", object=row.object_value, valid_from=_iso(row.valid_from),
        valid_to=_iso(row.valid_to), recorded_at=_iso(row.recorded_at), retracted_at=_iso(row.retracted_at),
        superseded_by=row.superseded_by or "", replaces=row.replaces or "", singular=row.singular,
        confidence=row.confidence, source=row.source, namespace=row.namespace, status=fact_status(row, at or utc_now()),
        sha256=row.sha256,
    )


def relation_message(row: RelationRow) -> pb.Relation:
    return pb.Relation(id=row.id, from_id=row.from_id, relation=row.relation, to_id=row.to_id, strength=row.strength,
                       created_at=_iso(row.created_at), namespace=row.namespace)
