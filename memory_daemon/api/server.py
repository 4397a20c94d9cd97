"""`cortexd serve`: the long-running gRPC daemon that owns the store and serves every host."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import signal
import stat
import sys
import threading
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from cortexd.connect import MAX_MESSAGE_BYTES, is_unix_address, socket_path_of
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
from memory_daemon import __version__
from memory_daemon.activation.analyzer import ActivationPipeline
from memory_daemon.core.config import DaemonSettings
from memory_daemon.core.errors import CortexdError
from memory_daemon.core.secrets import SecretFilter
from memory_daemon.api.interceptors import AccessLogInterceptor, BearerTokenInterceptor, MetricsInterceptor
from memory_daemon.api.request_decoding import RequestDecodingInterceptor
from memory_daemon.api.lock import AlreadyRunning, DaemonLock
from memory_daemon.core.logs import log_event
from memory_daemon.graph.service import GraphService
from memory_daemon.api.graph_rpc import GraphRpc
from memory_daemon.memory.service import MemoryService
from memory_daemon.context.preflight import ContextCompiler, working_memory_lines
from memory_daemon.api.rpc import MemoryRpc, RpcTable
from memory_daemon.api.decision_rpc import DecisionRpc
from memory_daemon.journal.decisions import DecisionLog
from memory_daemon.api.servicers import BlockingRunner, DecisionServicer, GraphServicer, McpBridgeServicer, MemoryServicer
from memory_daemon.journal.sessions import SessionMemory
from memory_daemon.store.decisions import DecisionRepository
from memory_daemon.store import Database, GraphRepository, MemoryRepository
from memory_daemon.store.checkpoints import WalCheckpointer
from memory_daemon.retrieval.ann_index import INDEX_DIR
from memory_daemon.retrieval.periodic_save import PeriodicSave
from memory_daemon.store.database import StoreFault, StoreLocked, unwritable_reason
from memory_daemon.store.idempotency import IdempotencyRepository
from memory_daemon.context.unified_search import unified_search
from memory_daemon.api.idempotency import IdempotentReplies

SHUTDOWN_GRACE_SECONDS = 10.0
MODEL_LOAD_JOIN_SECONDS = 120.0  # how long a stop waits for a model load still under way
SAVED_INDEXES_HEAD_START_SECONDS = 30.0  # the longest the models after the encoder wait for the saved indexes
EXIT_ALREADY_RUNNING = 3  # another daemon, or another process, owns the data dir, the socket or the store
EXIT_BAD_CONFIG = 2  # these settings cannot work here: a restart fixes neither this nor the one above
EXIT_STORE_FAULT = 1  # the store was lost while serving, or the stop could not fold the WAL in: a restart replays it


class ConfigError(Exception):
    """The daemon cannot start with these settings; the message says why."""


def _is_loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _host_and_port(address: str, option: str, expected: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{option} {address!r}: expected {expected}")
    return host.strip("[]"), int(port)


def check_listen_address(address: str, token: str | None) -> None:
    """TCP needs a bearer token; a non-loopback bind without one is refused outright."""
    if is_unix_address(address):
        return
    host, _port = _host_and_port(address, "--listen", "unix:/path/to.sock or HOST:PORT")
    loopback = _is_loopback(host)
    if token is None:
        where = "loopback" if loopback else f"non-loopback address {host}"
        raise ConfigError(
            f"refusing to serve TCP on {where} without a bearer token: pass --token-file FILE "
            "(or use the default Unix socket)"
        )


def server_credentials(settings: DaemonSettings) -> grpc.ServerCredentials | None:
    """TLS credentials for a TCP listener from --tls-cert/--tls-key; None for plaintext. Misuse is a ConfigError."""
    if settings.tls_cert is None and settings.tls_key is None:
        return None
    if settings.tls_cert is None or settings.tls_key is None:
        raise ConfigError("--tls-cert and --tls-key go together: pass the certificate chain and its private key")
    if is_unix_address(settings.listen):
        raise ConfigError("--tls-cert/--tls-key apply to TCP only; the Unix socket is protected by its 0600 mode")
    pem = {}
    for option, path, marker in (("--tls-cert", settings.tls_cert, b"CERTIFICATE-----"),
                                 ("--tls-key", settings.tls_key, b"PRIVATE KEY-----")):
        try:
            pem[option] = path.expanduser().read_bytes()
        except OSError as error:
            raise ConfigError(f"{option} {path}: {error.strerror or error}") from None
        if marker not in pem[option]:
            raise ConfigError(f"{option} {path}: no PEM {marker.decode().rstrip('-').lower()} in the file")
    return grpc.ssl_server_credentials([(pem["--tls-key"], pem["--tls-cert"])])


def metrics_address(settings: DaemonSettings) -> tuple[str, int] | None:
    """Where /metrics is served; a non-loopback host is refused unless --metrics-allow-remote says so."""
    if settings.metrics_listen is None:
        return None
    host, port = _host_and_port(settings.metrics_listen, "--metrics", "HOST:PORT, e.g. 127.0.0.1:9464")
    if not _is_loopback(host) and not settings.metrics_allow_remote:
        raise ConfigError(
            f"refusing to serve metrics on non-loopback address {host}: they are unauthenticated; "
            "bind 127.0.0.1 or pass --metrics-allow-remote"
        )
    return host, port


def check_data_dir(data_dir: Path) -> None:
    """The data dir exists and takes new files: the store's WAL comes and goes there while serving."""
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as error:
        raise ConfigError(f"data dir {data_dir}: cannot create it: {error.strerror or error}") from None
    if (reason := unwritable_reason(data_dir)) is not None:
        raise ConfigError(f"data dir {data_dir} is not writable ({reason}): the store keeps its write-ahead log "
                          "there; make it writable or pass another --data-dir")


def check_socket_path(path: Path) -> None:
    """Nothing, or a socket, at the socket path: a mistyped --listen must never cost the file that is there."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise ConfigError(f"--listen unix:{path}: cannot use that path: {error.strerror or error}") from None
    if stat.S_ISSOCK(mode):
        return
    kind = ("a directory" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode)
            else "a regular file" if stat.S_ISREG(mode) else "not a socket")
    raise ConfigError(f"--listen unix:{path}: {path} is {kind}, not a socket; refusing to replace it: "
                      "name a path that is free or holds a stale cortexd socket")


def _prepare_socket(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(path.parent, 0o700)
    # We hold the socket lock, so a socket left here is stale; anything else there is not ours to delete.
    check_socket_path(path)
    path.unlink(missing_ok=True)


async def serve(settings: DaemonSettings) -> int:
    check_listen_address(settings.listen, settings.token)
    server_credentials(settings)
    metrics_address(settings)
    check_data_dir(settings.data_dir)
    socket_path = socket_path_of(settings.listen) if is_unix_address(settings.listen) else None
    if socket_path is not None:
        check_socket_path(socket_path)
    locks = [DaemonLock.acquire(settings.data_dir / "cortexd.lock", f"data dir {settings.data_dir}", settings.listen)]
    try:
        if socket_path is not None:
            try:
                socket_lock = DaemonLock.acquire(socket_path.with_name(socket_path.name + ".lock"),
                                                 f"socket {socket_path}", settings.listen)
            except OSError as error:
                raise ConfigError(f"--listen unix:{socket_path}: cannot use {socket_path.parent}: "
                                  f"{error.strerror or error}") from None
            locks.append(socket_lock)
        return await _serve_locked(settings, socket_path)
    finally:
        for lock in reversed(locks):
            lock.release()


async def _serve_locked(settings: DaemonSettings, socket_path: Path | None) -> int:
    database = Database(settings.database_path)
    repository = MemoryRepository(database)
    activation = ActivationPipeline(settings.activation)
    loop = asyncio.get_running_loop()
    models_loaded = asyncio.Event()

    # Models load beside the server, so the socket answers at once; calls that need them wait for the load. The
    # encoder loads first; then the indexes saved beside the store have the cores to themselves for a while, as a
    # restarted daemon's first search needs only those, before spaCy and the classifiers (saves, analyses) load.
    saved_indexes_loaded = threading.Event()

    def load_models() -> None:
        try:
            activation.load(after_encoder=lambda: saved_indexes_loaded.wait(SAVED_INDEXES_HEAD_START_SECONDS))
            log_event("models", loaded=[f"{s.name} ({s.load_ms:.0f} ms)" for s in activation.statuses if s.ok],
                      degraded=list(activation.degraded()))
        finally:
            try:
                loop.call_soon_threadsafe(models_loaded.set)
            except RuntimeError:  # the daemon stopped while the models were loading
                pass

    model_loader = threading.Thread(target=load_models, name="cortexd-model-load", daemon=True)
    model_loader.start()
    secrets = SecretFilter(settings.redaction.off_in_namespaces)
    for namespace in sorted(secrets.off_in):
        log_event("redaction_off", level=logging.WARNING, namespace=namespace,
                  detail="[redaction] off_in_namespaces: secrets saved in this namespace are stored as typed")
    graph = GraphService(GraphRepository(database), settings.limits, secrets)
    sessions = SessionMemory(idle_seconds=60 * settings.retrieval.working_memory_idle_minutes)
    decisions = DecisionLog(DecisionRepository(database), sessions, limits=settings.limits, secrets=secrets)
    memories = MemoryService(repository, settings.limits, activation, graph, settings.retrieval, sessions, secrets,
                             index_root=settings.data_dir / INDEX_DIR)
    search = unified_search(memories, database, activation.embed_for_search, settings.retrieval, graph)
    compiler = ContextCompiler(memories, graph, search, working_memory_lines(sessions), decisions, activation.on_topic)
    rpcs = RpcTable(MemoryRpc(memories, database, settings.listen, graph, compiler, search), GraphRpc(graph),
                    DecisionRpc(decisions))
    runner = BlockingRunner(settings.worker_threads)
    replies = IdempotentReplies(IdempotencyRepository(database), runner.run)

    interceptors: list[grpc.aio.ServerInterceptor] = [AccessLogInterceptor()]
    metrics = None
    if settings.metrics_listen is not None:
        from memory_daemon.ops.metrics import DaemonMetrics  # prometheus-client is imported only when asked for

        metrics = DaemonMetrics(settings.database_path, memories.count, lambda: list(activation.statuses),
                                activation.is_loaded)
        activation.stage_observer = metrics.observe_stage
        interceptors.append(MetricsInterceptor(metrics.observe_rpc))
    interceptors.append(RequestDecodingInterceptor())  # last: it hands the servicers their requests
    if settings.token:
        # First: the interceptors after it cache one wrapped handler per method, so the token check must not be cached.
        interceptors.insert(0, BearerTokenInterceptor(settings.token))
    server = grpc.aio.server(
        interceptors=interceptors,
        options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                 ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)],
    )
    pb_grpc.add_MemoryServiceServicer_to_server(MemoryServicer(rpcs.memory, runner, replies), server)
    pb_grpc.add_GraphServiceServicer_to_server(GraphServicer(rpcs.graph, runner, replies), server)
    pb_grpc.add_DecisionServiceServicer_to_server(DecisionServicer(rpcs.decision, runner, replies), server)
    pb_grpc.add_McpBridgeServicer_to_server(McpBridgeServicer(rpcs, runner, replies), server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    service_names = [s.full_name for s in pb.DESCRIPTOR.services_by_name.values()]
    reflection.enable_server_reflection(
        service_names + [health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME], server
    )

    if socket_path is not None:
        _prepare_socket(socket_path)
        old_umask = os.umask(0o177)  # the socket is born user-only, never briefly world-connectable
        try:
            server.add_insecure_port(settings.listen)
        finally:
            os.umask(old_umask)
        os.chmod(socket_path, 0o600)
    elif (credentials := server_credentials(settings)) is not None:
        server.add_secure_port(settings.listen, credentials)
    else:
        server.add_insecure_port(settings.listen)
    if metrics is not None:
        host, port = metrics_address(settings)
        try:
            metrics.serve(host, port)
        except OSError as error:
            raise ConfigError(f"--metrics {settings.metrics_listen}: cannot listen: {error.strerror or error}") from None
        log_event("metrics", url=f"http://{settings.metrics_listen}/metrics")

    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    store_faults: list[str] = []

    def stop_for_lost_store(message: str) -> None:  # from the checkpoint thread
        store_faults.append(message)
        loop.call_soon_threadsafe(stop.set)

    checkpointer = WalCheckpointer(database, settings.store, on_store_lost=stop_for_lost_store).start()
    index_saver = PeriodicSave(memories.save_indexes, settings.retrieval.vector_save_seconds).start()
    memories.load_saved_indexes_in_background(saved_indexes_loaded)
    memories.start_background_passes()  # wait for the models, then read what imports queued (before a restart too)

    # The store is open by now; the services report NOT_SERVING until the models have loaded, then SERVING even
    # when some model is degraded (its stages are skipped; `cortexd status` and `cortexd doctor` name it).
    for name in service_names + [""]:
        await health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
    await server.start()
    log_event("ready", version=__version__, pid=os.getpid(), listen=settings.listen,
              database=str(settings.database_path), memories=memories.count())

    async def serve_once_models_loaded() -> None:
        await models_loaded.wait()
        for name in service_names + [""]:
            await health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log_event("serving", degraded_models=list(activation.degraded()))

    health_update = asyncio.create_task(serve_once_models_loaded())
    try:
        await stop.wait()
    finally:
        health_update.cancel()
        log_event("stopping", grace_seconds=SHUTDOWN_GRACE_SECONDS)
        await health.enter_graceful_shutdown()
        await server.stop(SHUTDOWN_GRACE_SECONDS)
        runner.shutdown()
        await asyncio.to_thread(memories.stop_background_passes)
        await asyncio.to_thread(index_saver.stop)  # saves what changed since the last save, once more
        await asyncio.to_thread(checkpointer.stop)
        # Exiting while onnxruntime or spaCy is still loading aborts the process ("terminate called without an
        # active exception"): a stop soon after the start waits for the load to finish (without its head start).
        saved_indexes_loaded.set()
        await asyncio.to_thread(model_loader.join, MODEL_LOAD_JOIN_SECONDS)
        if metrics is not None:
            metrics.close()
        try:
            database.close()  # folds the WAL in
        except StoreFault as fault:
            store_faults.append(str(fault))
        if socket_path is not None:
            try:
                socket_path.unlink(missing_ok=True)
            except OSError:
                pass  # a stale socket is replaced at the next start
        log_event("stopped")
    if store_faults:
        print(f"cortexd: {store_faults[0]}", file=sys.stderr)
        return EXIT_STORE_FAULT
    return 0


def run(settings: DaemonSettings, supervisor: str | None = None) -> int:
    """Serve until stopped; the exit status tells the supervisor whether a restart can help."""
    return exit_status(_run(settings), supervisor)


def exit_status(code: int, supervisor: str | None) -> int:
    """launchd restarts after every non-zero status (it has no RestartPreventExitStatus), so under it a fault a
    restart cannot fix exits 0, after its one line on stderr."""
    if supervisor == "launchd" and code in (EXIT_BAD_CONFIG, EXIT_ALREADY_RUNNING):
        return 0
    return code


def _run(settings: DaemonSettings) -> int:
    try:
        return asyncio.run(serve(settings))
    except (AlreadyRunning, StoreLocked) as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return EXIT_ALREADY_RUNNING
    except (ConfigError, CortexdError, StoreFault) as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return EXIT_BAD_CONFIG
