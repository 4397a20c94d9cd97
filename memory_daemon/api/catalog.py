"""Derives the MCP tool catalog (names, descriptions, JSON input schemas) from the proto descriptors."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from google.protobuf import descriptor_pb2, json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message
from google.protobuf.message_factory import GetMessageClass

from cortexd.v1 import cortexd_pb2
from memory_daemon.core.errors import InvalidArgument

_SCALAR_TYPES = {
    FieldDescriptor.TYPE_STRING: "string",
    FieldDescriptor.TYPE_BYTES: "string",
    FieldDescriptor.TYPE_BOOL: "boolean",
    FieldDescriptor.TYPE_DOUBLE: "number",
    FieldDescriptor.TYPE_FLOAT: "number",
}
_STRUCT = "google.protobuf.Struct"
# FileDescriptorProto / DescriptorProto / ServiceDescriptorProto field numbers,
# used to address comments in SourceCodeInfo.
_MESSAGE_TYPE, _SERVICE, _FIELD, _NESTED_TYPE, _METHOD = 4, 6, 2, 3, 2


@dataclass(frozen=True)
class ToolBinding:
    """One MCP tool and the RPC behind it."""

    name: str
    method: MethodDescriptor
    description: str
    input_schema: dict[str, Any]
    title: str = ""
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    everyday: bool = False  # in the default profile

    @property
    def rpc_name(self) -> str:
        return self.method.name

    def listing(self, profile: str) -> tuple[str, dict[str, Any]]:
        """(description, input schema) as a profile lists the tool. "full": the whole comment and every parameter;
        the default profile: the comment's first sentence and the parameters not marked `(advanced)`, so the
        catalog a host loads into every conversation stays small. Both accept every parameter."""
        if profile == "full":
            return self.description, self.input_schema
        advanced = {f.name for f in self.method.input_type.fields if f.GetOptions().Extensions[cortexd_pb2.advanced]}
        schema = {"type": "object",
                  "properties": {k: v for k, v in self.input_schema["properties"].items() if k not in advanced}}
        if "required" in self.input_schema:
            schema["required"] = self.input_schema["required"]
        return first_sentence(self.description), schema

    def parse_arguments(self, arguments: dict[str, Any]) -> Message:
        """The RPC request from MCP arguments; an unknown, missing or mistyped field is named in the error."""
        properties = self.input_schema["properties"]
        unknown = sorted(set(arguments) - set(properties))
        if unknown:
            raise InvalidArgument(
                f"{self.name}: unknown argument {', '.join(map(repr, unknown))}; "
                f"allowed: {', '.join(properties) or 'none, it takes no arguments'}"
            )
        missing = [name for name in self.input_schema.get("required", ()) if arguments.get(name) in (None, "", [])]
        if missing:
            raise InvalidArgument(f"{self.name}: missing required argument {', '.join(map(repr, missing))}")
        request = GetMessageClass(self.method.input_type)()
        for name, value in arguments.items():
            problem = _type_problem(properties[name], value)
            if problem:
                raise InvalidArgument(f"{self.name}: argument {name!r} {problem}")
        try:
            json_format.ParseDict({k: v for k, v in arguments.items() if v is not None}, request)
        except json_format.ParseError as error:
            raise InvalidArgument(f"{self.name}: {error}") from None
        return request


def _type_problem(schema: dict[str, Any], value: Any) -> str | None:
    """Why value does not fit schema, in words; None when it fits (null means 'omitted')."""
    if value is None:
        return None
    expected = schema.get("type")
    checks = {
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
    }
    if expected in checks and not checks[expected](value):
        return f"must be of type {expected}, got {type(value).__name__}"
    if expected == "array":
        for item in value:
            problem = _type_problem(schema.get("items", {}), item)
            if problem:
                return f"items {problem}"
    return None


@cache
def _comments() -> dict[str, str]:
    """Leading comments of every method and field, keyed by full name, from the source-info descriptor set."""
    blob = resources.files("cortexd.v1").joinpath("cortexd.binpb").read_bytes()
    file_set = descriptor_pb2.FileDescriptorSet.FromString(blob)
    comments: dict[str, str] = {}
    for file in file_set.file:
        by_path = {tuple(loc.path): loc.leading_comments.strip() for loc in file.source_code_info.location}

        def walk(messages, prefix: str, path: tuple[int, ...]) -> None:
            for i, message in enumerate(messages):
                name = f"{prefix}.{message.name}"
                for j, field in enumerate(message.field):
                    comments[f"{name}.{field.name}"] = by_path.get(path + (i, _FIELD, j), "")
                walk(message.nested_type, name, path + (i, _NESTED_TYPE))

        walk(file.message_type, file.package, (_MESSAGE_TYPE,))
        for s, service in enumerate(file.service):
            for m, method in enumerate(service.method):
                comments[f"{file.package}.{service.name}.{method.name}"] = by_path.get((_SERVICE, s, _METHOD, m), "")
    return comments


def rpc_descriptions() -> dict[str, str]:
    """One-line descriptions of every RPC and request field, keyed by full name, for derived help texts."""
    return {name: _one_line(comment) for name, comment in _comments().items()}


def first_sentence(text: str) -> str:
    """Up to the first full stop (or ? or !) that ends a sentence: one followed by a capital or the end."""
    match = re.match(r"(.+?[.?!])(?=\s+[A-Z`\"(]|$)", text)
    return match.group(1) if match else text


def _one_line(comment: str) -> str:
    return " ".join(line.strip() for line in comment.splitlines() if line.strip())


def _field_schema(field: FieldDescriptor) -> dict[str, Any]:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {"type": "object", "additionalProperties": _value_schema(value_field)}
    schema = _value_schema(field)
    if field.is_repeated:
        schema = {"type": "array", "items": schema}
    return schema


def choices_of(field: FieldDescriptor) -> tuple[str, ...]:
    """The closed set of values a field's `(choices)` option names, in order; () when it names none."""
    return tuple(c for c in field.GetOptions().Extensions[cortexd_pb2.choices].split("|") if c)


def _value_schema(field: FieldDescriptor) -> dict[str, Any]:
    if field.type in _SCALAR_TYPES:
        schema: dict[str, Any] = {"type": _SCALAR_TYPES[field.type]}
        if choices := choices_of(field):
            schema["enum"] = list(choices)
        return schema
    if field.type == FieldDescriptor.TYPE_ENUM:
        return {"type": "string", "enum": [v.name for v in field.enum_type.values]}
    if field.type in (FieldDescriptor.TYPE_MESSAGE, FieldDescriptor.TYPE_GROUP):
        if field.message_type.full_name == _STRUCT:
            return {"type": "object"}
        return message_schema(field.message_type)
    return {"type": "integer"}


def message_schema(message: Descriptor) -> dict[str, Any]:
    """JSON Schema of a request message: field comments as descriptions, `(required)` fields required."""
    comments = _comments()
    properties: dict[str, Any] = {}
    required: list[str] = []
    for field in message.fields:
        schema = _field_schema(field)
        description = _one_line(comments.get(field.full_name, ""))
        if description:
            schema["description"] = description
        properties[field.name] = schema
        if field.GetOptions().Extensions[cortexd_pb2.required]:
            required.append(field.name)
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


@cache
def tool_catalog() -> dict[str, ToolBinding]:
    """Every RPC carrying the `mcp_tool` option, as an MCP tool, in proto order."""
    tools: dict[str, ToolBinding] = {}
    comments = _comments()
    for service in cortexd_pb2.DESCRIPTOR.services_by_name.values():
        for method in service.methods:
            options = method.GetOptions().Extensions
            name = options[cortexd_pb2.mcp_tool]
            if name:
                tools[name] = ToolBinding(
                    name=name,
                    method=method,
                    description=_one_line(comments.get(method.full_name, "")),
                    input_schema=message_schema(method.input_type),
                    title=options[cortexd_pb2.tool_title],
                    read_only=not options[cortexd_pb2.writes],
                    destructive=options[cortexd_pb2.destructive],
                    idempotent=options[cortexd_pb2.idempotent],
                    everyday=options[cortexd_pb2.everyday],
                )
    return tools


PROFILES = ("default", "full")


def tools_in_profile(profile: str) -> list[ToolBinding]:
    """The tools a profile lists: "default" (or "") the everyday ones, "full" all, in proto order."""
    if profile not in ("", *PROFILES):
        raise InvalidArgument(f"profile {profile[:40]!r} is not one of: {', '.join(PROFILES)}")
    return [t for t in tool_catalog().values() if profile == "full" or t.everyday]


def reply_to_json(reply: Message) -> str:
    """An RPC reply as the JSON text a tool returns, compact: proto field names; the reply's own fields always
    (an empty search still says `"hits": []`), but inside each hit, memory and other nested object only the fields
    that are set (an absent one is empty, false or 0); and in each object the text first (`content`)."""
    compact = json_format.MessageToDict(reply, preserving_proto_field_name=True)
    every = json_format.MessageToDict(reply, preserving_proto_field_name=True,
                                      always_print_fields_with_no_presence=True)
    return json.dumps(_text_first({k: compact.get(k, v) for k, v in every.items()}), ensure_ascii=False,
                      separators=(",", ":"))


_TEXT_FIRST = ("content", "text", "summary")


def _text_first(value: Any) -> Any:
    if isinstance(value, dict):
        ordered = {k: _text_first(value[k]) for k in _TEXT_FIRST if k in value}
        ordered.update((k, _text_first(v)) for k, v in value.items() if k not in ordered)
        return ordered
    if isinstance(value, list):
        return [_text_first(item) for item in value]
    return value
