"""Thin DecisionService handlers: each unpacks a request, calls the decision log and packs the reply."""

from __future__ import annotations

from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.api.caller import Caller
from memory_daemon.journal.decisions import DecisionLog, NewDecision
from memory_daemon.journal.sessions import SessionSummary, WorkingItem
from memory_daemon.store.decisions import DecisionRow
from memory_daemon.core.timefmt import format_iso


def _iso(value) -> str:
    return format_iso(value) if value is not None else ""


def decision_message(row: DecisionRow) -> pb.Decision:
    outcome = pb.DecisionOutcome(
        recorded=row.has_outcome, was_successful=bool(row.was_successful), impact_score=row.impact_score or 0.0,
        learnings=row.learnings or "", recorded_at=_iso(row.outcome_recorded_at),
    )
    return pb.Decision(
        id=row.id, type=row.type, question=row.question, options=row.options, chosen=row.chosen,
        reasoning=row.reasoning, confidence=row.confidence, session_id=row.session_id, summary=row.summary,
        key_choice=row.key_choice, tier=row.tier, created_at=_iso(row.created_at),
        last_accessed_at=_iso(row.last_accessed_at), access_count=row.access_count, outcome=outcome,
        namespace=row.namespace,
    )


def working_item_message(item: WorkingItem) -> pb.WorkingItem:
    return pb.WorkingItem(kind=item.kind, id=item.id, text=item.text, at=_iso(item.at))


def session_summary_message(summary: SessionSummary) -> pb.SessionSummary:
    return pb.SessionSummary(decisions=summary.decisions, decisions_by_type=summary.decisions_by_type,
                             outcomes_recorded=summary.outcomes_recorded,
                             success_rate=round(summary.success_rate, 4), text=summary.text)


class DecisionRpc:
    """The DecisionService handlers, by RPC name; called from gRPC and from the MCP bridge alike."""

    def __init__(self, decisions: DecisionLog) -> None:
        self._decisions = decisions

    def LogDecision(self, request: pb.LogDecisionRequest, caller: Caller) -> pb.LogDecisionReply:
        row = self._decisions.log_decision(caller.namespace, NewDecision(
            type=request.type, question=request.question, chosen=request.chosen, options=tuple(request.options),
            reasoning=request.reasoning, confidence=request.confidence if request.HasField("confidence") else None,
            session_id=request.session_id,
        ))
        return pb.LogDecisionReply(decision=decision_message(row))

    def RecordOutcome(self, request: pb.RecordOutcomeRequest, caller: Caller) -> pb.RecordOutcomeReply:
        row = self._decisions.record_outcome(
            caller.namespace, request.decision_id, request.was_successful,
            request.impact_score if request.HasField("impact_score") else None, request.learnings,
        )
        return pb.RecordOutcomeReply(decision=decision_message(row))

    def ListDecisions(self, request: pb.ListDecisionsRequest, caller: Caller) -> pb.ListDecisionsReply:
        rows = self._decisions.list_decisions(caller.namespace, request.session_id, request.type, request.tier,
                                              request.limit)
        return pb.ListDecisionsReply(decisions=[decision_message(r) for r in rows])

    def GetSession(self, request: pb.GetSessionRequest, caller: Caller) -> pb.GetSessionReply:
        view = self._decisions.session(caller.namespace, request.session_id)
        return pb.GetSessionReply(session_id=view.session_id,
                                  working_memory=[working_item_message(i) for i in view.working_memory],
                                  summary=session_summary_message(view.summary))

    @property
    def domain(self) -> DecisionLog:
        return self._decisions
