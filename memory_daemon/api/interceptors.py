"""Server interceptors: bearer-token checks for TCP, one structured log line per RPC, and RPC metrics."""

from __future__ import annotations

import hmac
import logging
import time

import grpc

from cortexd.connect import AUTH_HEADER, NAMESPACE_HEADER
from memory_daemon.core.logs import log_event

_UNAUTHENTICATED_EXEMPT = ("/grpc.health.v1.Health/",)


def _rebuild(handler: grpc.RpcMethodHandler, wrap) -> grpc.RpcMethodHandler:
    """The same handler with its behaviour passed through wrap(behaviour)."""
    kinds = (
        ("unary_unary", grpc.unary_unary_rpc_method_handler),
        ("unary_stream", grpc.unary_stream_rpc_method_handler),
        ("stream_unary", grpc.stream_unary_rpc_method_handler),
        ("stream_stream", grpc.stream_stream_rpc_method_handler),
    )
    for attribute, factory in kinds:
        behaviour = getattr(handler, attribute)
        if behaviour is not None:
            return factory(
                wrap(behaviour, attribute),
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
    return handler


class BearerTokenInterceptor(grpc.aio.ServerInterceptor):
    """Rejects calls without `authorization: Bearer <token>`; compared in constant time, never logged."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        if handler is None or details.method.startswith(_UNAUTHENTICATED_EXEMPT):
            return handler
        presented = dict(details.invocation_metadata or ()).get(AUTH_HEADER, "")
        if hmac.compare_digest(presented.encode(), self._expected):
            return handler

        def deny(_behaviour, _kind):
            async def rejected(_request, context):
                await context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token")

            return rejected

        return _rebuild(handler, deny)


class _ObservingInterceptor(grpc.aio.ServerInterceptor):
    """Calls on_end(method, code name, seconds, context) as each unary-response RPC ends; wrapped handlers are built
    once per method, not per call."""

    def __init__(self) -> None:
        self._wrapped: dict[str, grpc.RpcMethodHandler] = {}

    def on_end(self, method: str, code: str, seconds: float, context) -> None:
        raise NotImplementedError

    async def intercept_service(self, continuation, details):
        method = details.method
        wrapped = self._wrapped.get(method)
        if wrapped is None:
            handler = await continuation(details)
            if handler is None:
                return None
            wrapped = self._wrapped[method] = _rebuild(
                handler, lambda behaviour, kind: self._observed(method, behaviour, kind))
        return wrapped

    def _observed(self, method: str, behaviour, kind: str):
        if kind not in ("unary_unary", "stream_unary"):
            return behaviour

        async def observed(request, context):
            started = time.perf_counter()
            failed = False
            try:
                return await behaviour(request, context)
            except BaseException:
                failed = True
                raise
            finally:
                code = context.code() or (grpc.StatusCode.UNKNOWN if failed else grpc.StatusCode.OK)
                code_name = code.name if isinstance(code, grpc.StatusCode) else str(code)
                self.on_end(method, code_name, time.perf_counter() - started, context)

        return observed


class AccessLogInterceptor(_ObservingInterceptor):
    """One structured log line per unary-response RPC: method, status code, latency and namespace."""

    def on_end(self, method: str, code: str, seconds: float, context) -> None:
        namespace = next((v for k, v in context.invocation_metadata() or () if k == NAMESPACE_HEADER), "")
        log_event("rpc", logging.INFO if code == "OK" else logging.WARNING, method=method, code=code,
                  ms=round(seconds * 1000, 3), namespace=namespace)


class MetricsInterceptor(_ObservingInterceptor):
    """Feeds each unary-response RPC's latency and status code to the metrics registry (`serve --metrics`)."""

    def __init__(self, observe_rpc) -> None:
        super().__init__()
        self._observe_rpc = observe_rpc

    def on_end(self, method: str, code: str, seconds: float, context) -> None:
        self._observe_rpc(method, code, seconds)
