"""A write is either stored and acknowledged, or refused and not stored: a hypothesis property over every write RPC
(the proto's `(writes)` option) with random nested and oversized fields, checked against the store's own dump."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from datetime import datetime
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message_factory import GetMessageClass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Daemon
from cortexd.connect import call_metadata
from cortexd.v1 import cortexd_pb2 as pb

NAMESPACE = "allornothing"
EXAMPLES_PER_RPC = 20
CALL_TIMEOUT_SECONDS = 120.0
CLEAR_REJECTIONS = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION}
WRITE_METHODS = [method for service in pb.DESCRIPTOR.services_by_name.values() for method in service.methods
                 if method.GetOptions().Extensions[pb.writes]
                 and not method.client_streaming and not method.server_streaming]
# Just past (and far past) the limits of the fields, from a 200-character id to a 64 KiB body and beyond.
OVERSIZED = (201, 501, 1025, 2001, 4097, 8001, 16_385, 65_537, 200_001)
# Content is analysed on save, and analysis of long prose is slow (a separate issue): it gets sizes the limit refuses.
ANALYSED = {"content"}
# Fields of each stored kind that a reply shows as they are stored; the dump holds the same names.
KEPT = {
    "Memory": ("content", "tags", "entities", "source", "context", "session_id", "meta", "strength", "namespace",
               "use_count", "long_term", "superseded_by", "archived_at"),
    "Fact": ("subject_id", "predicate", "object_id", "valid_from", "valid_to", "singular", "confidence", "source",
             "namespace", "retracted_at"),
    "Episode": ("kind", "title", "body", "files", "entity_ids", "occurred_at", "namespace"),
    "Decision": ("type", "question", "options", "chosen", "reasoning", "confidence", "session_id", "summary",
                 "key_choice", "tier", "access_count", "namespace"),
    "Relation": ("from_id", "relation", "to_id", "strength", "namespace"),
    "Entity": ("name", "key", "type", "aliases", "namespace"),
}
DUMP_KIND = {"Memory": "memory", "Fact": "fact", "Episode": "episode", "Decision": "decision", "Relation": "relation",
             "Entity": "entity"}


@pytest.fixture(scope="module")
def seeded():
    root = Path(tempfile.mkdtemp(prefix="cx"))
    daemon = Daemon(root).start()
    with daemon.client(NAMESPACE) as client:
        memory = client.save_memory(content="Billing runs on PostgreSQL 16", tags=["billing"]).memory
        other = client.save_memory(content="The billing team meets on Tuesdays").memory
        fact = client.upsert_fact(subject="billing_service", predicate="database", object="PostgreSQL",
                                  create_entities=True).fact
        episode = client.record_episode(kind="incident", title="billing outage", entities=["billing_service"]).episode
        decision = client.log_decision(type="tooling", question="which queue?", options=["SQS", "Kafka"],
                                       chosen="SQS", session_id="s1").decision
    known = [memory.id, other.id, fact.id, episode.id, decision.id, fact.subject_id, "billing_service", "s1",
             "PostgreSQL", "2026-03-01T12:00:00Z", "incident", "tooling", "uses", "see_also", "Billing runs on it",
             str(root / "backup.duckdb")]
    # Values each field takes in a call that does real work, so that many examples are stored, not refused.
    plausible = {
        "id": [memory.id, other.id], "ids": [memory.id, other.id], "supersedes": ["", other.id],
        "fact_id": [fact.id], "corrects": [""], "decision_id": [decision.id],
        "from_id": [memory.id, episode.id, fact.subject_id], "to_id": [other.id, fact.id, decision.id],
        "kind": ["incident", "adr", "invariant"], "type": ["tooling", "architecture"],
        "predicate": ["uses", "database", "owner"], "relation": ["see_also", "caused_by"],
        "object_kind": ["", "entity", "literal"], "subject": ["billing_service", fact.subject_id],
        "object": ["PostgreSQL", "Stripe", "MySQL"], "upstream": ["github"], "tool": ["create_issue"],
        "arguments_json": ['{"title": "Remember that billing uses Stripe for invoices"}', "{}"],
        "valid_from": ["", "2026-03-01T12:00:00Z"], "valid_to": [""], "occurred_at": ["", "2026-03-01T12:00:00Z"],
        "session_id": ["", "s1"], "options": [["SQS", "Kafka"]], "entities": [["billing_service"], []],
        "files": [["billing/app.py"]], "tags": [["billing"], []], "dest": [str(root / "backup")],
    }
    yield daemon, known, plausible
    daemon.stop()
    shutil.rmtree(root, ignore_errors=True)


def _nested(depth: int) -> dict:
    value: dict = {"leaf": 1}
    for _ in range(depth - 1):
        value = {"k": value}
    return value


def _text(known: list[str], analysed: bool) -> st.SearchStrategy[str]:
    sizes = [n for n in OVERSIZED if n > 64 * 1024] if analysed else list(OVERSIZED)
    return st.one_of(
        st.sampled_from(known),
        st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=30),
        st.builds(lambda size, unit: unit * size, st.sampled_from(sizes), st.sampled_from(["x", "é", "中"])),
    )


def _deep_meta() -> st.SearchStrategy[dict]:
    """Past the limit, around the depths where a typed request stops decoding (33) and a reply stopped packing."""
    return st.builds(_nested, st.sampled_from([17, 24, 32, 33, 34, 36, 40, 45, 49, 50, 64]))


def _meta() -> st.SearchStrategy[dict]:
    scalars = st.one_of(st.none(), st.booleans(), st.floats(), st.text(max_size=12))
    return st.one_of(
        st.builds(_nested, st.integers(1, 16)),
        _deep_meta(),
        st.builds(lambda size: {"note": "m" * size}, st.sampled_from([100, 16_000, 17_000, 200_000])),
        st.dictionaries(st.text(max_size=8), scalars, max_size=4),
    )


def _field(field: FieldDescriptor, known: list[str]) -> st.SearchStrategy:
    kind = field.type
    if field.message_type is not None:
        return _meta() if field.message_type.full_name == "google.protobuf.Struct" else st.nothing()
    if kind == FieldDescriptor.TYPE_STRING:
        single = _text(known, field.name in ANALYSED)
        if field.is_repeated:
            return st.one_of(st.lists(single, max_size=3),
                             st.builds(lambda n: [f"item {i}" for i in range(n)], st.sampled_from([21, 65, 101, 300])))
        return single
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(0, 1) | st.floats()
    return st.integers(-10, 300) | st.integers(-2 ** 31, 2 ** 31 - 1)


def _fitting(field: FieldDescriptor, plausible: dict) -> st.SearchStrategy:
    """A value that lets the call do its work."""
    if field.name == "dest":  # a new backup file each time: an existing one is refused
        return st.uuids().map(lambda u: f"{plausible['dest'][0]}-{u.hex}.duckdb")
    if field.name in plausible:
        values = plausible[field.name]
        if field.is_repeated and isinstance(values[0], str):  # ids: some of them
            return st.lists(st.sampled_from(values), min_size=1, max_size=len(values), unique=True)
        return st.sampled_from(values)
    if field.message_type is not None:
        return st.dictionaries(st.sampled_from(["source", "ticket"]), st.text(max_size=12), max_size=2)
    if field.type == FieldDescriptor.TYPE_STRING:
        words = st.sampled_from(["billing", "invoices", "Stripe", "runs", "nightly", "we", "moved", "to", "Kafka"])
        text = st.lists(words, min_size=2, max_size=8).map(" ".join)
        return st.lists(text, max_size=2) if field.is_repeated else text
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        return st.floats(0, 1)
    if field.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    return st.integers(0, 20)


def _request(descriptor, known: list[str], plausible: dict) -> st.SearchStrategy:
    """Either a wild request (any field, any value), or one that would be stored with one or two fields made
    hostile: oversized, nested, out of range."""
    fields = [f for f in descriptor.fields
              if f.message_type is None or f.message_type.full_name == "google.protobuf.Struct"]
    required = {f.name: _field(f, known) for f in fields if f.GetOptions().Extensions[pb.required]}
    optional = {f.name: _field(f, known) for f in fields if f.name not in required}
    wild = st.fixed_dictionaries(required, optional=optional)
    fitting = st.fixed_dictionaries(
        {f.name: _fitting(f, plausible) for f in fields if f.GetOptions().Extensions[pb.required]},
        optional={f.name: _fitting(f, plausible) for f in fields if f.name not in required})
    hostile = st.lists(st.sampled_from(fields), max_size=2, unique_by=lambda f: f.name).flatmap(
        lambda chosen: st.fixed_dictionaries({f.name: _field(f, known) for f in chosen}))
    spoiled = st.builds(lambda values, overrides: {**values, **overrides}, fitting, hostile)
    structs = [f.name for f in fields if f.message_type is not None]
    if not structs:
        return st.one_of(wild, spoiled, spoiled)
    deep = st.builds(lambda values, meta: {**values, structs[0]: meta}, fitting, _deep_meta())
    return st.one_of(wild, spoiled, spoiled, deep)


def _build(descriptor, values: dict):
    message = GetMessageClass(descriptor)()
    for name, value in values.items():
        target = getattr(message, name)
        if isinstance(value, dict):
            target.update(value)  # in place: copying a deep Struct would re-parse it, which fails past 32 levels
        elif isinstance(value, list):
            target.extend(value)
        else:
            setattr(message, name, value)
    return message


def _dump(client) -> dict[tuple[str, str], dict]:
    rows = {}
    for line in client.export_store(timeout=CALL_TIMEOUT_SECONDS):
        record = json.loads(line)
        if "row" in record:
            rows[(record["kind"], record["row"]["id"])] = record["row"]
    return rows


def _records(reply) -> list:
    """The stored things a reply shows: Memory, Fact, Episode, Decision, Relation and Entity messages."""
    found = []
    for field, value in reply.ListFields():
        if field.message_type is None or field.message_type.name not in KEPT:
            continue
        found += list(value) if field.is_repeated else [value]
    return found


def _same(reply_value, stored_value) -> bool:
    empty = ("", None, [], {})
    if reply_value in empty and stored_value in empty:
        return True
    if isinstance(stored_value, float) or isinstance(reply_value, float):
        return math.isclose(float(reply_value), float(stored_value), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(reply_value, str) and isinstance(stored_value, str) and stored_value.endswith("Z") \
            and reply_value.endswith("Z") and "T" in stored_value:
        try:  # two spellings of one instant ("…:00Z" and "…:00.000000Z") are the same value
            return datetime.fromisoformat(reply_value[:-1]) == datetime.fromisoformat(stored_value[:-1])
        except ValueError:  # a text that only ends like a timestamp ("Chose billing for 2026-03-01T12:00:00Z")
            pass
    return reply_value == stored_value


def _check_stored_intact(record, stored: dict[tuple[str, str], dict]) -> None:
    kind = record.DESCRIPTOR.name
    row = stored.get((DUMP_KIND[kind], record.id))
    assert row is not None, f"the reply shows {kind} {record.id}, which the store does not hold"
    shown = json_format.MessageToDict(record, preserving_proto_field_name=True,
                                      always_print_fields_with_no_presence=True)
    for name in KEPT[kind]:
        assert _same(shown.get(name), row.get(name)), f"{kind}.{name}: reply {str(shown.get(name))[:200]!r}, " \
                                                      f"stored {str(row.get(name))[:200]!r}"


def _typed_call(channel, method):
    """The RPC itself, over gRPC: (reply, None) or (None, error)."""
    reply_class = GetMessageClass(method.output_type)
    rpc = channel.unary_unary(f"/{method.containing_service.full_name}/{method.name}",
                              request_serializer=lambda m: m.SerializeToString(),
                              response_deserializer=reply_class.FromString)

    def call(values: dict):
        return rpc(_build(method.input_type, values), metadata=call_metadata(NAMESPACE, None),
                   timeout=CALL_TIMEOUT_SECONDS)

    return call


def _tool_call(channel, method):
    """The RPC as its MCP tool, through the bridge a proxy forwards to, the reply read back into the RPC's type."""
    reply_class = GetMessageClass(method.output_type)
    tool = method.GetOptions().Extensions[pb.mcp_tool]
    bridge = channel.unary_unary("/cortexd.v1.McpBridge/CallTool", request_serializer=lambda m: m.SerializeToString(),
                                 response_deserializer=pb.CallToolReply.FromString)

    def call(values: dict):
        reply = bridge(pb.CallToolRequest(name=tool, arguments_json=json.dumps(values)),
                       metadata=call_metadata(NAMESPACE, None), timeout=CALL_TIMEOUT_SECONDS)
        return json_format.ParseDict(json.loads(reply.result_json), reply_class(), ignore_unknown_fields=True)

    return call


SURFACES = [(method, "grpc") for method in WRITE_METHODS] + [
    (method, "mcp") for method in WRITE_METHODS if method.GetOptions().Extensions[pb.mcp_tool]]


@pytest.mark.parametrize(("method", "surface"), SURFACES,
                         ids=lambda p: p if isinstance(p, str) else f"{p.containing_service.name}.{p.name}")
def test_every_write_is_stored_and_acknowledged_or_refused_and_not_stored(seeded, method, surface):
    daemon, known, plausible = seeded
    with grpc.insecure_channel(daemon.address, options=[("grpc.max_send_message_length", 16 << 20)]) as channel, \
            daemon.client(NAMESPACE) as client:
        call = (_typed_call if surface == "grpc" else _tool_call)(channel, method)

        @settings(max_examples=EXAMPLES_PER_RPC, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.large_base_example])
        @given(values=_request(method.input_type, known, plausible))
        def write(values):
            before = _dump(client)
            try:
                reply = call(values)
            except grpc.RpcError as error:
                assert error.code() in CLEAR_REJECTIONS, f"{error.code().name}: {(error.details() or '')[:500]}"
                assert _dump(client) == before, f"refused ({error.details()[:200]}) but the store changed"
                return
            after = _dump(client)
            for record in _records(reply):
                _check_stored_intact(record, after)

        write()
    with daemon.client(NAMESPACE) as client:
        assert client.get_status().pid == daemon.process.pid
