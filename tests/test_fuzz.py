"""Fuzzing: random and malformed arguments at every MCP tool (through a real proxy) and every unary RPC (over gRPC).

The daemon must never crash or hang, and every rejection must be a clear InvalidArgument / tool error naming the field.
"""

from __future__ import annotations

import json
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import grpc
import pytest
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message_factory import GetMessageClass
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Daemon
from cortexd.connect import call_metadata
from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.api.catalog import tool_catalog

EXAMPLES_PER_TOOL = 25
EXAMPLES_PER_RPC = 20
CALL_TIMEOUT_SECONDS = 120.0  # far above any honest call; reaching it means the daemon hung
NAMESPACE = "fuzz"
HUGE = "x" * (70 * 1024)  # past the 64 KiB content limit
FUZZ_SETTINGS = settings(max_examples=EXAMPLES_PER_TOOL, deadline=None, database=None,
                         suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                HealthCheck.large_base_example, HealthCheck.filter_too_much])
# The status of a clear rejection; anything else (INTERNAL, UNKNOWN, DEADLINE_EXCEEDED, UNAVAILABLE) is a daemon bug.
CLEAR_REJECTIONS = {grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION}
TOOL_REJECTION_PREFIXES = ("invalid argument: ", "not found: ", "failed precondition: ")
UNARY_METHODS = [method for service in pb.DESCRIPTOR.services_by_name.values() for method in service.methods
                 if not method.client_streaming and not method.server_streaming]


class RawProxy:
    """A real `cortexd proxy` driven over raw JSON-RPC lines, so a hung call shows up as a timeout, not a stall."""

    def __init__(self, address: str, namespace: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "memory_daemon", "proxy", "--daemon", address, "--no-auto-start",
             "--namespace", namespace, "--timeout", str(CALL_TIMEOUT_SECONDS), "--tools", "full"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self._next_id = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "fuzz", "version": "0"}})
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        for line in self.process.stdout:
            if line.strip():
                self._replies.put(json.loads(line))

    def _send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self._next_id += 1
        self._send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        while True:
            try:
                reply = self._replies.get(timeout=CALL_TIMEOUT_SECONDS + 30)
            except queue.Empty:
                raise AssertionError(f"the proxy gave no answer to {method} {json.dumps(params)[:300]}") from None
            if reply.get("id") == self._next_id:
                return reply

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture(scope="module")
def fuzzed():
    """One daemon for the whole module, seeded so that some fuzzed ids exist; known ids are offered as strings."""
    root = Path(tempfile.mkdtemp(prefix="cx"))
    daemon = Daemon(root).start()
    with daemon.client(NAMESPACE) as client:
        memory = client.save_memory(content="The fuzz target keeps its state in DuckDB 2.0", tags=["fuzz"]).memory
        fact = client.upsert_fact(subject="fuzz_service", predicate="database", object="DuckDB",
                                  create_entities=True).fact
        episode = client.record_episode(kind="incident", title="fuzzing found nothing", entities=["fuzz_service"]).episode
        decision = client.log_decision(type="tooling", question="which fuzzer?", options=["hypothesis", "atheris"],
                                       chosen="hypothesis", session_id="s1").decision
    known = [memory.id, fact.id, episode.id, decision.id, fact.subject_id, "fuzz_service", "s1", "DuckDB",
             "2026-03-01T12:00:00Z", "incident", "hot", "entity", "literal"]
    yield daemon, known
    daemon.stop()
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def proxy(fuzzed):
    daemon, _ = fuzzed
    raw = RawProxy(daemon.address, NAMESPACE)
    yield raw
    raw.close()


def _strings(known: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=40),
        st.sampled_from(known),
        st.sampled_from(["", " \t\n", HUGE, "\x00", "Robert'); DROP TABLE memories;--", "../etc", "é中\U0001f600\u202e",
                         "-1", "1e309", "null", "[]", "{}", "mem_doesnotexist"]),
    )


def _plausible_strings(known: list[str]) -> st.SearchStrategy[str]:
    return st.sampled_from(known) | st.text(st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1,
                                            max_size=30)


def _plausible(schema: dict, known: list[str]) -> st.SearchStrategy:
    """A value of the right type and in a sensible range, so that calls get past validation and do real work."""
    kind = schema.get("type")
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if kind == "string":
        return _plausible_strings(known)
    if kind == "integer":
        return st.integers(0, 50)
    if kind == "number":
        return st.floats(0, 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_plausible(schema.get("items", {}), known), max_size=3)
    if kind == "object" and "properties" in schema:
        return _plausible_arguments(schema, known)
    return st.dictionaries(st.text(max_size=8), st.text(max_size=8), max_size=2)


def _plausible_arguments(schema: dict, known: list[str]) -> st.SearchStrategy[dict]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    return st.fixed_dictionaries(
        {name: _plausible(s, known) for name, s in properties.items() if name in required},
        optional={name: _plausible(s, known) for name, s in properties.items() if name not in required},
    )


def _any_json(known: list[str]) -> st.SearchStrategy:
    scalars = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                        st.floats(allow_nan=False, allow_infinity=False), _strings(known))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                           max_size=3), max_leaves=6)


def _well_typed(schema: dict, known: list[str]) -> st.SearchStrategy:
    kind = schema.get("type")
    if "enum" in schema:
        return st.sampled_from(schema["enum"]) | _strings(known)
    if kind == "string":
        return _strings(known)
    if kind == "integer":
        return st.integers(-10, 300) | st.integers(-2 ** 70, 2 ** 70)
    if kind == "number":
        return st.floats(-3, 3) | st.floats(allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(_argument(schema.get("items", {}), known), max_size=4)
    if kind == "object" and "properties" in schema:
        return _arguments(schema, known)
    return st.dictionaries(st.text(max_size=8), _any_json(known), max_size=3)


def _argument(schema: dict, known: list[str]) -> st.SearchStrategy:
    """Mostly the right type; sometimes null or any other JSON value."""
    return st.one_of(_well_typed(schema, known), _well_typed(schema, known), _any_json(known))


def _arguments(schema: dict, known: list[str]) -> st.SearchStrategy[dict]:
    """Any subset of the properties (required ones may be missing), plus, sometimes, keys the schema does not have."""
    properties = schema.get("properties", {})
    declared = st.fixed_dictionaries({}, optional={name: _argument(s, known) for name, s in properties.items()})
    extra = st.dictionaries(st.text(min_size=1, max_size=12).filter(lambda k: k not in properties), _any_json(known),
                            max_size=2)
    return st.one_of(_plausible_arguments(schema, known), declared, st.builds(lambda a, b: {**b, **a}, declared, extra))


def _names_a_field(text: str, field_names: set[str]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) for name in field_names if name)


def _schema_field_names(schema: dict) -> set[str]:
    names = set(schema.get("properties", {}))
    for child in schema.get("properties", {}).values():
        names |= _schema_field_names(child.get("items", child))
    return names


@pytest.mark.parametrize("tool_name", list(tool_catalog()))
def test_every_mcp_tool_survives_random_and_malformed_arguments(fuzzed, proxy, tool_name):
    daemon, known = fuzzed
    listed = {t["name"]: t for t in proxy.request("tools/list", {})["result"]["tools"]}
    schema = listed[tool_name]["inputSchema"]
    field_names = _schema_field_names(schema)

    @FUZZ_SETTINGS
    @given(arguments=_arguments(schema, known))
    def call(arguments):
        reply = proxy.request("tools/call", {"name": tool_name, "arguments": arguments})
        assert "error" not in reply, f"JSON-RPC error instead of a tool result: {reply['error']}"
        result = reply["result"]
        if not result.get("isError"):
            return
        text = result["content"][0]["text"]
        assert text.startswith(TOOL_REJECTION_PREFIXES), f"not a clear rejection: {text[:500]}"
        if text.startswith("invalid argument: "):
            unknown = {repr(key)[1:-1] for key in set(arguments) - set(schema["properties"])}
            assert _names_a_field(text, field_names | unknown), f"the error names no field: {text[:500]}"

    call()
    assert proxy.process.poll() is None, "the proxy died"
    with daemon.client(NAMESPACE) as client:
        assert client.get_status().pid == daemon.process.pid


def _scalar(field: FieldDescriptor, known: list[str], plausible: bool = False) -> st.SearchStrategy:
    kind = field.type
    if plausible:
        if kind == FieldDescriptor.TYPE_STRING:
            return _plausible_strings(known)
        if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
            return st.floats(0, 1)
        if kind not in (FieldDescriptor.TYPE_BOOL, FieldDescriptor.TYPE_BYTES, FieldDescriptor.TYPE_ENUM):
            return st.integers(0, 50)
    if kind == FieldDescriptor.TYPE_STRING:
        return _strings(known)
    if kind == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=40)
    if kind == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if kind in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        width = 32 if kind == FieldDescriptor.TYPE_FLOAT else 64
        return st.floats(-3, 3, width=width) | st.floats(width=width)  # NaN and infinities included
    if kind == FieldDescriptor.TYPE_ENUM:
        return st.sampled_from([v.number for v in field.enum_type.values]) | st.integers(-5, 50)
    if kind in (FieldDescriptor.TYPE_INT32, FieldDescriptor.TYPE_SINT32, FieldDescriptor.TYPE_SFIXED32):
        return st.integers(-10, 300) | st.integers(-2 ** 31, 2 ** 31 - 1)
    if kind in (FieldDescriptor.TYPE_UINT32, FieldDescriptor.TYPE_FIXED32):
        return st.integers(0, 2 ** 32 - 1)
    if kind in (FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64):
        return st.integers(0, 2 ** 64 - 1)
    return st.integers(-2 ** 63, 2 ** 63 - 1)


def _json_scalars(known: list[str]) -> st.SearchStrategy:
    return st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False), _strings(known))


def _message(descriptor, known: list[str], depth: int = 0, plausible: bool = False) -> st.SearchStrategy:
    """A request message with a random subset of its fields set to random values (nested up to two levels).

    plausible: every `(required)` field is set and values stay in sensible ranges, so the call does real work."""
    if descriptor.full_name == "google.protobuf.Struct":
        return st.dictionaries(st.text(max_size=8), _json_scalars(known), max_size=3).map(_struct)
    fields, required = {}, {}
    for field in descriptor.fields:
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key, value = field.message_type.fields_by_name["key"], field.message_type.fields_by_name["value"]
            if value.message_type is None:
                fields[field.name] = st.dictionaries(_scalar(key, known, plausible), _scalar(value, known, plausible),
                                                     max_size=3)
            continue
        if field.message_type is not None:
            if depth >= 2:
                continue
            single = _message(field.message_type, known, depth + 1, plausible)
        else:
            single = _scalar(field, known, plausible)
        strategy = st.lists(single, max_size=3) if field.is_repeated else single
        if plausible and field.GetOptions().Extensions[pb.required]:
            required[field.name] = strategy
        else:
            fields[field.name] = strategy
    return st.fixed_dictionaries(required, optional=fields).map(lambda values: _build(descriptor, values))


def _request(descriptor, known: list[str]) -> st.SearchStrategy:
    return st.one_of(_message(descriptor, known, plausible=True), _message(descriptor, known))


def _struct(values: dict):
    from google.protobuf import struct_pb2

    struct = struct_pb2.Struct()
    struct.update(values)
    return struct


def _build(descriptor, values: dict):
    message = GetMessageClass(descriptor)()
    for name, value in values.items():
        field = descriptor.fields_by_name[name]
        target = getattr(message, name)
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            target.update(value)
        elif field.is_repeated:
            target.extend(value)
        elif field.message_type is not None:
            target.CopyFrom(value)
        else:
            setattr(message, name, value)
    return message


def _message_field_names(descriptor, depth: int = 0) -> set[str]:
    names = {field.name for field in descriptor.fields}
    if depth < 2:
        for field in descriptor.fields:
            if field.message_type is not None:
                names |= _message_field_names(field.message_type, depth + 1)
    return names


@pytest.mark.parametrize("method", UNARY_METHODS, ids=lambda m: f"{m.containing_service.name}.{m.name}")
def test_every_unary_rpc_survives_random_field_values(fuzzed, method):
    daemon, known = fuzzed
    reply_class = GetMessageClass(method.output_type)
    field_names = _message_field_names(method.input_type)

    with grpc.insecure_channel(daemon.address) as channel:
        rpc = channel.unary_unary(f"/{method.containing_service.full_name}/{method.name}",
                                  request_serializer=lambda m: m.SerializeToString(),
                                  response_deserializer=reply_class.FromString)

        @settings(FUZZ_SETTINGS, max_examples=EXAMPLES_PER_RPC)
        @given(request=_request(method.input_type, known))
        def call(request):
            try:
                rpc(request, metadata=call_metadata(NAMESPACE, None), timeout=CALL_TIMEOUT_SECONDS)
            except grpc.RpcError as error:
                details = error.details() or ""
                assert error.code() in CLEAR_REJECTIONS, f"{error.code().name}: {details[:500]}"
                if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                    assert _names_a_field(details, field_names | {"arguments", "uri", "name"}), \
                        f"the error names no field: {details[:500]}"

        call()
    with daemon.client(NAMESPACE) as client:
        assert client.get_status().pid == daemon.process.pid

