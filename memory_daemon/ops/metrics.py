"""Prometheus metrics for `cortexd serve --metrics HOST:PORT`: RPC latency and errors, model stage times, store size."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from memory_daemon.core.logs import log_event
from memory_daemon.store.database import wal_path_of
from preprocessing.registry import ModelStatus

RPC_SECONDS_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
STAGE_SECONDS_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
STORE_READ_TIMEOUT_SECONDS = 5.0


class _StoreCollector(Collector):
    """Read at scrape time: the DuckDB file and WAL sizes, the memory count, and which models are ready."""

    def __init__(self, database_path: Path, memory_count: Callable[[], int],
                 model_statuses: Callable[[], Sequence[ModelStatus]], models_loaded: Callable[[], bool]) -> None:
        self._database_path = database_path
        self._memory_count = memory_count
        self._model_statuses = model_statuses
        self._models_loaded = models_loaded
        # One thread, so the store hands out one cursor for scrapes rather than one per HTTP request thread.
        self._store_reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cortexd-metrics")

    def collect(self):
        file_bytes = GaugeMetricFamily("cortexd_store_file_bytes", "Size of the DuckDB store on disk", labels=["file"])
        for label, path in (("database", self._database_path),
                            ("wal", wal_path_of(self._database_path))):
            file_bytes.add_metric([label], path.stat().st_size if path.exists() else 0)
        yield file_bytes
        try:
            count = self._store_reader.submit(self._memory_count).result(timeout=STORE_READ_TIMEOUT_SECONDS)
        except Exception as error:  # noqa: BLE001 — a scrape during shutdown or a busy store omits the count
            log_event("metrics_store_read_failed", logging.WARNING, error=f"{type(error).__name__}: {error}")
        else:
            yield GaugeMetricFamily("cortexd_memories", "Memories in the store, every namespace and state", value=count)
        yield GaugeMetricFamily("cortexd_models_loaded", "1 once the model load has finished (whatever its outcome)",
                                value=1 if self._models_loaded() else 0)
        ready = GaugeMetricFamily("cortexd_model_ready", "1 when a model loaded and matches its manifest; 0 when "
                                  "degraded (its stages are skipped)", labels=["model"])
        for status in self._model_statuses():
            ready.add_metric([status.name], 1 if status.ok else 0)
        yield ready

    def close(self) -> None:
        self._store_reader.shutdown(wait=False, cancel_futures=True)


class DaemonMetrics:
    """The daemon's metrics registry; the RPC interceptor and the activation pipeline report into it."""

    def __init__(self, database_path: Path, memory_count: Callable[[], int],
                 model_statuses: Callable[[], Sequence[ModelStatus]], models_loaded: Callable[[], bool]) -> None:
        self.registry = CollectorRegistry()
        self._rpc_seconds = Histogram("cortexd_rpc_duration_seconds", "Time to handle an RPC, by method",
                                      ["method"], buckets=RPC_SECONDS_BUCKETS, registry=self.registry)
        self._rpcs = Counter("cortexd_rpcs", "RPCs handled, by method and status code", ["method", "code"],
                             registry=self.registry)
        self._rpc_errors = Counter("cortexd_rpc_errors", "RPCs that ended with a status other than OK",
                                   ["method", "code"], registry=self.registry)
        self._stage_seconds = Histogram("cortexd_activation_stage_duration_seconds",
                                        "Time of one activation stage (model inference: entities, embedding, intent; "
                                        "then phrases, tags, dedup...) per analysed batch or message", ["stage"],
                                        buckets=STAGE_SECONDS_BUCKETS, registry=self.registry)
        self._store = _StoreCollector(database_path, memory_count, model_statuses, models_loaded)
        self.registry.register(self._store)
        self._http = None

    def observe_rpc(self, method: str, code: str, seconds: float) -> None:
        self._rpc_seconds.labels(method).observe(seconds)
        self._rpcs.labels(method, code).inc()
        if code != "OK":
            self._rpc_errors.labels(method, code).inc()

    def observe_stage(self, stage: str, milliseconds: float) -> None:
        self._stage_seconds.labels(stage).observe(milliseconds / 1000)

    def serve(self, host: str, port: int) -> None:
        """Serve /metrics over HTTP on a background thread."""
        self._http, _thread = start_http_server(port, addr=host, registry=self.registry)

    def close(self) -> None:
        if self._http is not None:
            self._http.shutdown()
            self._http.server_close()
        self._store.close()
