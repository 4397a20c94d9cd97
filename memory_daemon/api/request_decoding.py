"""Requests decoded by the daemon itself: bytes that do not decode get INVALID_ARGUMENT naming the field at fault
(invalid UTF-8 in a string, messages nested past protobuf's limit), where grpc would answer UNKNOWN."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import grpc
from google.protobuf.descriptor import Descriptor, FieldDescriptor

from memory_daemon.core.errors import InvalidArgument

OWN_METHODS = "/cortexd.v1."
MAX_PROTOBUF_DEPTH = 100  # upb's default: a message nested deeper does not decode
_VARINT, _FIXED64, _LENGTH_DELIMITED, _FIXED32 = 0, 1, 2, 5


@dataclass(frozen=True)
class Undecodable:
    """Stands in for a request whose bytes did not decode, so the handler can refuse it by name."""

    reason: str


def undecodable_reason(descriptor: Descriptor, data: bytes, error: Exception) -> str:
    """Which field made these bytes fail to decode, in words; a generic line when no field is to blame."""
    try:
        found = _problem(descriptor, data, (), 1)
    except (IndexError, ValueError):
        found = None
    if found is None:
        return f"the request is not a valid {descriptor.full_name} message ({error})"
    path, problem = found
    return f"{'.'.join(path) or descriptor.name} {problem}"


def _problem(descriptor: Descriptor, data: bytes, path: tuple[str, ...],
             depth: int) -> tuple[tuple[str, ...], str] | None:
    if depth > MAX_PROTOBUF_DEPTH:
        return path, f"nests messages more than {MAX_PROTOBUF_DEPTH} levels deep (a JSON value adds 3 levels)"
    position = 0
    while position < len(data):
        tag, position = _varint(data, position)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == _VARINT:
            _, position = _varint(data, position)
        elif wire_type == _FIXED64:
            position += 8
        elif wire_type == _FIXED32:
            position += 4
        elif wire_type == _LENGTH_DELIMITED:
            length, position = _varint(data, position)
            payload, position = data[position: position + length], position + length
            field = descriptor.fields_by_number.get(number)
            if field is None or len(payload) < length:
                continue
            # Inside google.protobuf's own types (Struct, Value) the path keeps the caller's field: "meta".
            inner = path if field.containing_type.full_name.startswith("google.protobuf.") else path + (field.name,)
            if field.type == FieldDescriptor.TYPE_STRING:
                try:
                    payload.decode("utf-8")
                except UnicodeDecodeError as error:
                    return inner, f"is not valid UTF-8 (byte {error.start} of the string)"
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                found = _problem(field.message_type, payload, inner, depth + 1)
                if found is not None:
                    return found
        else:
            return None  # groups: no cortexd message has them, so these bytes are not one of ours
    return None


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


class RequestDecodingInterceptor(grpc.aio.ServerInterceptor):
    """For cortexd's own services: each handler gets a deserializer that never raises (bytes that do not decode
    become an Undecodable) and refuses such a request with INVALID_ARGUMENT before the servicer sees it. Wrapped
    handlers are built once per method."""

    def __init__(self) -> None:
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    async def intercept_service(self, continuation, details):
        wrapped = self._wrapped.get(details.method)
        if wrapped is None:
            handler = await continuation(details)
            if handler is None or not details.method.startswith(OWN_METHODS) or handler.request_deserializer is None:
                return handler
            wrapped = self._wrapped[details.method] = _decoding(handler)
        return wrapped


def _decoding(handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    deserialize = handler.request_deserializer
    descriptor = deserialize.__self__.DESCRIPTOR  # the generated stubs pass the request class's FromString

    def tolerant(data: bytes):
        try:
            return deserialize(data)
        except Exception as error:  # noqa: BLE001 — DecodeError, or whatever upb raises for these bytes
            return Undecodable(undecodable_reason(descriptor, data, error))

    kinds = (("unary_unary", grpc.unary_unary_rpc_method_handler, _refusing_unary),
             ("unary_stream", grpc.unary_stream_rpc_method_handler, _refusing_unary),
             ("stream_unary", grpc.stream_unary_rpc_method_handler, _refusing_stream),
             ("stream_stream", grpc.stream_stream_rpc_method_handler, _refusing_stream))
    for attribute, factory, refusing in kinds:
        behaviour = getattr(handler, attribute)
        if behaviour is not None:
            return factory(refusing(behaviour), request_deserializer=tolerant,
                           response_serializer=handler.response_serializer)
    return handler


def _refusing_unary(behaviour):
    if inspect.isasyncgenfunction(behaviour):
        async def streamed(request, context):
            if isinstance(request, Undecodable):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.reason)
            async for reply in behaviour(request, context):
                yield reply

        return streamed

    async def answered(request, context):
        if isinstance(request, Undecodable):
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.reason)
        return await behaviour(request, context)

    return answered


def _refusing_stream(behaviour):
    async def checked(request_iterator):
        async for request in request_iterator:
            if isinstance(request, Undecodable):
                raise InvalidArgument(request.reason)  # the servicer reports it, as any other bad record
            yield request

    if inspect.isasyncgenfunction(behaviour):
        async def streamed(request_iterator, context):
            async for reply in behaviour(checked(request_iterator), context):
                yield reply

        return streamed

    async def answered(request_iterator, context):
        return await behaviour(checked(request_iterator), context)

    return answered
