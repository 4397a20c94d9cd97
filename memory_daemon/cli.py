"""The `cortexd` command: serve, proxy, and script verbs over gRPC. Imports stay lazy so `cortexd proxy` starts fast."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


# Verbs whose answer does not depend on the namespace: they do not say which one they resolved.
NAMESPACE_FREE_VERBS = frozenset({"status", "doctor", "backup", "tools", "namespaces"})


def _add_client_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--daemon", help="daemon address: unix:/path.sock or HOST:PORT (default: $CORTEXD_ADDRESS or the user socket)")
    parser.add_argument("--namespace", help="namespace to work in (default: $CORTEXD_NAMESPACE, else the git "
                                            "repository's name, else 'default'; the same rule as the proxy and hooks)")
    parser.add_argument("--token-file", help="bearer token file for TCP (default: $CORTEXD_TOKEN_FILE)")
    parser.add_argument("--tls-ca", help="CA certificate (PEM) that signs a TCP daemon's TLS certificate "
                                         "(default: $CORTEXD_TLS_CA)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.add_argument("--idempotency-key", metavar="KEY",
                        help="a write sent again with the same key is applied once and gets its first reply")


def build_parser(derived_verbs: bool = True) -> argparse.ArgumentParser:
    """The whole command line; derived_verbs=False skips deriving the graph and decisions verbs from the proto (proxy start-up)."""
    from memory_daemon import __version__

    parser = argparse.ArgumentParser(prog="cortexd", description="Long-term memory for AI agents.")
    parser.add_argument("--version", action="version", version=f"cortexd {__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    serve = verbs.add_parser("serve", help="run the memory daemon in the foreground")
    serve.add_argument("--listen", help="unix:/path.sock or HOST:PORT (TCP needs --token-file)")
    serve.add_argument("--data-dir", help="where the store lives (default: $CORTEXD_DATA_DIR or the user data dir)")
    serve.add_argument("--token-file", help="bearer token clients must present over TCP")
    serve.add_argument("--tls-cert", help="TLS certificate chain (PEM) for TCP; clients verify it with --tls-ca")
    serve.add_argument("--tls-key", help="private key (PEM) of --tls-cert")
    serve.add_argument("--metrics", metavar="HOST:PORT", help="serve Prometheus metrics at http://HOST:PORT/metrics")
    serve.add_argument("--metrics-allow-remote", action="store_true",
                       help="allow --metrics on a non-loopback address (the endpoint has no authentication)")
    serve.add_argument("--max-content-bytes", type=int, default=64 * 1024, help="largest memory accepted (default 65536)")
    serve.add_argument("--workers", type=int, default=4,
                       help="worker threads for reads (default 4); writes and other heavy work get half as many")
    serve.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])
    serve.add_argument("--supervisor", choices=["launchd"],
                       help="launchd: exit 0 on a fault a restart cannot fix (bad settings, another owner), "
                            "since launchd restarts every other exit; the launchd agent passes it")

    proxy = verbs.add_parser("proxy", help="run the MCP server a host starts over stdio")
    proxy.add_argument("--daemon", help="daemon address (default: $CORTEXD_ADDRESS or the user socket)")
    proxy.add_argument("--namespace", help="namespace for this host (default: the git repository name of the cwd, else 'default')")
    proxy.add_argument("--token-file", help="bearer token file for TCP (default: $CORTEXD_TOKEN_FILE)")
    proxy.add_argument("--tls-ca", help="CA certificate (PEM) that signs a TCP daemon's TLS certificate "
                                        "(default: $CORTEXD_TLS_CA)")
    proxy.add_argument("--no-auto-start", dest="auto_start", action="store_false", help="do not start a daemon when none answers")
    proxy.add_argument("--data-dir", help="data dir for an auto-started daemon")
    proxy.add_argument("--timeout", type=float, default=30.0, help="deadline in seconds for each forwarded call")
    proxy.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP at /mcp instead of stdio")
    proxy.add_argument("--tools", choices=("default", "full"),
                       help="cortexd's tools to list: the everyday set (default) or every tool (full); "
                            "default: [proxy] tools in config.toml, else 'default'")

    status = verbs.add_parser("status", help="show the daemon's status")
    _add_client_options(status)

    namespaces = verbs.add_parser("namespaces", help="list the store's namespaces with their counts")
    _add_client_options(namespaces)

    reindex = verbs.add_parser("reindex", help="rebuild a namespace's search indexes from the store (the --namespace "
                                               "one); a large namespace's vector graph is rebuilt in the background")
    _add_client_options(reindex)

    remember = verbs.add_parser("remember", help="save a memory")
    remember.add_argument("text", help="the memory's text; - reads it from stdin")
    remember.add_argument("--tag", action="append", default=[], help="a tag (repeatable)")
    remember.add_argument("--strength", type=float, help="importance in [0, 2]")
    _add_client_options(remember)

    search = verbs.add_parser("search", help="search memories")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=10)
    search.add_argument("--tag", action="append", default=[], help="only memories with this tag (repeatable)")
    search.add_argument("--signal", action="append", default=[], choices=["lexical", "dense", "graph", "temporal"],
                        help="fuse only these signals (repeatable; default all)")
    search.add_argument("--history", action="store_true", help="include superseded memories, ranked below current ones")
    search.add_argument("--entity", default="", help="only memories that mention this entity (a name or its key)")
    search.add_argument("--kind", action="append", default=[], choices=["memory", "fact", "episode", "decision", "all"],
                        help="what to search (repeatable): memories only by default")
    _add_client_options(search)

    get = verbs.add_parser("get", help="show memories by id")
    get.add_argument("ids", nargs="+")
    _add_client_options(get)

    importer = verbs.add_parser("import", help='bulk-import JSONL: {"id","text","timestamp"?,"speaker"?,"session"?,"namespace"?} per line')
    importer.add_argument("file", help="JSONL file, or - for stdin; a dump from `cortexd export` is restored as it was")
    importer.add_argument("--wait", type=float, nargs="?", const=600.0, metavar="SECONDS",
                          help="after storing, wait for the background update check of the imported statements "
                               "(default up to 600 s; exit 1 if they are not done by then)")
    _add_client_options(importer)

    from memory_daemon.client.transfer_cli import add_transfer_verbs

    add_transfer_verbs(verbs, _add_client_options)

    analyze = verbs.add_parser("analyze", help="analyze messages: save/recall signals, intent, entities, tags, duplicates")
    analyze.add_argument("text", nargs="?", help="the message; omit it to read JSONL from --jsonl or stdin")
    analyze.add_argument("--jsonl", help='JSONL file, one {"id","text","namespace"?,"session_id"?} per line (- for stdin)')
    analyze.add_argument("--session", default="", help="session id, so earlier turns give context")
    analyze.add_argument("--batch-size", type=int, default=64, help="messages per batched call (default 64)")
    _add_client_options(analyze)

    doctor = verbs.add_parser("doctor", help="check the socket, daemon, models, store and disk, and say what to fix")
    doctor.add_argument("--data-dir", help="the store to check when the daemon is down (default: $CORTEXD_DATA_DIR "
                                           "or the user data dir)")
    _add_client_options(doctor)

    tools = verbs.add_parser("tools", help="list the MCP tools the daemon offers")
    _add_client_options(tools)

    call = verbs.add_parser("call", help="call any MCP tool with JSON arguments, as a host would")
    call.add_argument("tool")
    call.add_argument("arguments", nargs="?", default="{}", help="JSON object")
    _add_client_options(call)

    verbs.add_parser("demo", help="run the scripted two-host demo on a temporary daemon")

    from memory_daemon.client.hooks import add_hook_arguments

    add_hook_arguments(verbs.add_parser("hook", help="a host hook: the host's event JSON on stdin; saves what the prompt "
                                                     "asks to remember and prints the memory relevant to it"))

    graph = verbs.add_parser("graph", help="the knowledge graph: upsert-fact, record-episode, query-entity, time-travel, ...")
    decisions = verbs.add_parser("decisions", help="the decision log: log-decision, record-outcome, list-decisions, get-session")
    memory = verbs.add_parser("memory", help="every memory RPC as a verb: gc, promote-memory, cluster-memories, export-memories, ...")
    if derived_verbs:
        _add_service_verbs(graph, "GraphService")
        _add_service_verbs(decisions, "DecisionService")
        _add_service_verbs(memory, "MemoryService")

    preflight = verbs.add_parser("preflight", help="compile the context for a task within a token budget (markdown)")
    preflight.add_argument("task")
    preflight.add_argument("--session", default="", help="session id, for working memory and the session summary")
    preflight.add_argument("--max-tokens", type=int, default=350)
    _add_client_options(preflight)

    evaluate = verbs.add_parser("eval", help="measure model quality on labelled data; prints a table")
    evaluate.add_argument("suite", choices=["activation", "intent", "relations", "relevance", "precedence", "partial",
                                                "holders", "retrieval", "timelines", "kinds", "locomo"])
    evaluate.add_argument("path", nargs="?", help="locomo: LoCoMo's locomo10.json, or a directory of its "
                                                  "per-conversation files (not shipped: non-commercial licence); "
                                                  "timelines: a timeline JSONL file")
    evaluate.add_argument("--data", help="labelled data: a directory of JSONL sets (kinds: one JSONL file; relations, "
                                         "relevance, precedence, partial, holders, timelines: JSONL files, comma-separated); "
                                         "default under tests/data/")
    evaluate.add_argument("--json", action="store_true", help="print all metrics as JSON")
    evaluate.add_argument("--conversations", metavar="RANGE",
                          help="locomo: 1-based positions to run, e.g. 1-7 or 1,3,5-6 (default all)")
    only = evaluate.add_mutually_exclusive_group()
    only.add_argument("--cortexd-only", action="store_true", help="locomo: skip the BM25, dense and RRF baselines")
    evaluate.add_argument("--signal", action="append", default=[], choices=["lexical", "dense", "graph", "temporal"],
                          help="locomo: also search with this signal alone (a row each; repeatable)")
    only.add_argument("--baselines-only", action="store_true", help="locomo: skip cortexd (no daemon is started)")

    bench = verbs.add_parser("bench", help="measure speed and memory; prints a table")
    bench.add_argument("suite", choices=["transport", "activation", "graph", "retrieval", "hooks", "proxy", "load"])
    bench.add_argument("--quick", action="store_true", help="fewer iterations, for a smoke run")
    bench.add_argument("--beside-worst-case", action="store_true",
                       help="hooks: run beside a client saving 64 KiB in a loop in its own namespace "
                            "(load always runs a phase beside one)")
    bench.add_argument("--memories", type=int, action="append", default=[], metavar="N",
                       help="retrieval: only the scale row at this store size (repeatable), without the import run")

    service = verbs.add_parser("service", help="run the daemon as a systemd user unit (Linux) or launchd agent (macOS)")
    service_actions = service.add_subparsers(dest="service_verb", required=True, metavar="ACTION")
    for action, action_help in (("install", "write the unit or agent file and start it (idempotent)"),
                                ("uninstall", "stop the service and remove its file"),
                                ("status", "is the file installed, is the service running (exit 1 when not running)")):
        service_action = service_actions.add_parser(action, help=action_help)
        scope = service_action.add_mutually_exclusive_group()
        scope.add_argument("--user", dest="system", action="store_false", help="your own service manager (default)")
        scope.add_argument("--system", action="store_true",
                           help="a system unit that runs as you on /run/cortexd/cortexd.sock (systemd only, needs root)")
        service_action.set_defaults(system=False)
        service_action.add_argument("--platform", choices=["linux", "macos"], help="default: this machine's")
        service_action.add_argument("--data-dir", help="the store the service uses (default: $CORTEXD_DATA_DIR or the user data dir)")
        if action == "install":
            service_action.add_argument("--print", action="store_true", help="only print the file, change nothing")
        if action == "status":
            service_action.add_argument("--json", action="store_true", help="print JSON instead of text")

    mcp_config = verbs.add_parser("mcp-config", help="print, or merge into a host's config, the entry that runs `cortexd proxy`")
    mcp_config.add_argument("host", choices=["claude-desktop", "claude-code", "cursor"])
    mcp_config.add_argument("--install", action="store_true", help="merge it into the host's config file (keeps a backup)")
    mcp_config.add_argument("--namespace", help="namespace for this host (default: the proxy picks the git repository's name)")
    mcp_config.add_argument("--install-hooks", action="store_true",
                            help="claude-code: also add UserPromptSubmit and SessionStart hooks to ~/.claude/settings.json")

    config = verbs.add_parser("config", help="show the effective configuration and where each value came from")
    config_actions = config.add_subparsers(dest="config_verb", required=True, metavar="ACTION")
    config_actions.add_parser("show", help="every setting, with its source: default, the file, or a variable").add_argument(
        "--json", action="store_true", help="print JSON instead of text")
    config_actions.add_parser("path", help="where config.toml is read from")
    return parser


def _add_service_verbs(parser: argparse.ArgumentParser, service: str) -> None:
    from cortexd.v1 import cortexd_pb2
    from memory_daemon.api.catalog import rpc_descriptions
    from memory_daemon.client.proto_cli import add_rpc_verbs

    methods = [m for m in cortexd_pb2.DESCRIPTOR.services_by_name[service].methods
               if not m.client_streaming and not m.server_streaming]
    add_rpc_verbs(parser, methods, rpc_descriptions(), _add_client_options)


def _evaluate(args: argparse.Namespace) -> int:
    """Runs the `cortexd eval` suite asked for."""
    from memory_daemon.evals.activation import DEFAULT_DATA, evaluate_activation, evaluate_intent

    if args.suite == "intent":
        return evaluate_intent(Path(args.data) if args.data else None)
    if args.suite == "relations":
        from memory_daemon.evals.relations import evaluate_relations

        return evaluate_relations([Path(p) for p in args.data.split(",")] if args.data else None, args.json)
    if args.suite == "relevance":
        from memory_daemon.evals.relevance import evaluate_relevance

        return evaluate_relevance([Path(p) for p in args.data.split(",")] if args.data else None, args.json)
    if args.suite in ("precedence", "partial"):  # the two pair models: one input, one scoring
        from memory_daemon.evals.precedence import evaluate_precedence

        return evaluate_precedence([Path(p) for p in args.data.split(",")] if args.data else None, args.json,
                                   model_name=args.suite)
    if args.suite == "holders":
        from memory_daemon.evals.holders import evaluate_holders

        return evaluate_holders([Path(p) for p in args.data.split(",")] if args.data else None, args.json)
    if args.suite == "retrieval":
        from memory_daemon.evals.retrieval import evaluate_retrieval

        return evaluate_retrieval(Path(args.data) if args.data else None, args.json)
    if args.suite == "timelines":
        from memory_daemon.evals.timelines import evaluate_timelines

        paths = [Path(p) for p in ([args.path] if args.path else []) + (args.data.split(",") if args.data else [])]
        return evaluate_timelines(paths or None, args.json)
    if args.suite == "locomo":
        from memory_daemon.evals.locomo import evaluate_locomo
        from memory_daemon.evals.locomo_data import parse_positions

        if not (args.path or args.data):
            print("cortexd eval locomo: give the path of locomo10.json or of its per-conversation files",
                  file=sys.stderr)
            return 2
        positions = parse_positions(args.conversations) if args.conversations else None
        return evaluate_locomo(Path(args.path or args.data), positions, cortexd=not args.baselines_only,
                               baselines=not args.cortexd_only, as_json=args.json, signals=tuple(args.signal))
    if args.suite == "kinds":
        from memory_daemon.evals.kinds import evaluate_kinds

        return evaluate_kinds(Path(args.data) if args.data else None, args.json)
    return evaluate_activation(Path(args.data) if args.data else DEFAULT_DATA, args.json)


def main(argv: list[str] | None = None) -> int:
    """The `cortexd` command. A reader that stops early (`cortexd search x | head -1`) ends it quietly, as it would
    end `grep`: exit status 141 (SIGPIPE's), no traceback and no "[Errno 32]"."""
    try:
        return _main(argv)
    except BrokenPipeError:
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit must not fail again
        return EXIT_BROKEN_PIPE


EXIT_BROKEN_PIPE = 128 + 13


def _main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["hook"]:  # a fresh process per prompt: skip building the full command line
        from memory_daemon.client.hooks import main as run_hook

        return run_hook(argv[1:])
    args = build_parser(derived_verbs=argv[:1] in (["graph"], ["decisions"], ["memory"])).parse_args(argv)
    if args.verb == "serve":
        return _serve(args)
    if args.verb == "proxy":
        return _proxy(args)
    if args.verb == "demo":
        from memory_daemon.demo.session import run_demo

        return run_demo()
    if args.verb == "eval":
        try:
            return _evaluate(args)
        except (OSError, ValueError) as error:  # data that cannot be read: say what and where, no traceback
            print(f"cortexd eval {args.suite}: {error}", file=sys.stderr)
            return 2
    if args.verb == "bench":
        from memory_daemon.bench.runner import run_bench

        return run_bench(args.suite, quick=args.quick, beside_worst_case=args.beside_worst_case,
                         sizes=tuple(args.memories))
    if args.verb == "service":
        from memory_daemon.ops.service_install import run_service_verb

        return run_service_verb(args)
    if args.verb == "mcp-config":
        from memory_daemon.ops.host_setup import run_mcp_config_verb

        return run_mcp_config_verb(args)
    if args.verb == "config":
        from memory_daemon.ops.config_report import run_config_verb

        return run_config_verb(args)
    return _client_verb(args)


def _serve(args: argparse.Namespace) -> int:
    from cortexd.connect import read_token, resolve_address
    from memory_daemon.core.config import (
        DaemonSettings, Limits, default_data_dir, load_activation_settings, load_redaction_settings,
        load_retrieval_settings, load_store_settings,
    )
    from memory_daemon.core.logs import configure_logging
    from memory_daemon.api.server import EXIT_BAD_CONFIG, exit_status, run

    configure_logging(args.log_level)
    from memory_daemon.core.config_file import config_path
    from memory_daemon.ops.config_check import unknown_tables

    misnamed = unknown_tables(config_path())
    if misnamed:
        print("cortexd: " + "\ncortexd: ".join(misnamed), file=sys.stderr)
        return exit_status(EXIT_BAD_CONFIG, args.supervisor)
    try:
        settings = DaemonSettings(
            data_dir=Path(args.data_dir).expanduser() if args.data_dir else default_data_dir(),
            listen=resolve_address(args.listen),
            token=read_token(args.token_file),
            tls_cert=Path(args.tls_cert) if args.tls_cert else None,
            tls_key=Path(args.tls_key) if args.tls_key else None,
            metrics_listen=args.metrics,
            metrics_allow_remote=args.metrics_allow_remote,
            limits=Limits(max_content_bytes=args.max_content_bytes),
            worker_threads=args.workers,
            activation=load_activation_settings(),
            retrieval=load_retrieval_settings(),
            store=load_store_settings(),
            redaction=load_redaction_settings(),
        )
    except (OSError, ValueError) as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return exit_status(EXIT_BAD_CONFIG, args.supervisor)
    return run(settings, args.supervisor)


def _proxy(args: argparse.Namespace) -> int:
    import asyncio

    from cortexd.connect import read_tls_ca, read_token, resolve_address
    from memory_daemon import __version__
    from memory_daemon.core.config_file import config_path
    from proxy_server.daemon_link import DaemonLink
    from proxy_server.namespace import BadNamespace, resolve_namespace
    from proxy_server.server import run_http, run_stdio

    settings = None
    config = config_path()
    if config.is_file():  # the upstreams are declared there; without the file the proxy skips the module
        from proxy_server.upstream_config import load_proxy_settings

        try:
            settings = load_proxy_settings(config)
        except ValueError as error:
            print(f"cortexd proxy: {error}", file=sys.stderr)
            return 2
    try:
        tls_ca = read_tls_ca(args.tls_ca)
        namespace = resolve_namespace(args.namespace, Path.cwd())
    except (OSError, ValueError, BadNamespace) as error:
        print(f"cortexd proxy: {error}", file=sys.stderr)
        return 2
    if not namespace.explicit:
        print(f"cortexd proxy: {namespace.describe()}", file=sys.stderr)
    link = DaemonLink(
        address=resolve_address(args.daemon),
        namespace=namespace.name,
        token=read_token(args.token_file),
        auto_start=args.auto_start,
        data_dir=args.data_dir,
        call_timeout=args.timeout,
        tls_ca=tls_ca,
    )
    if args.http:
        host, _, port = args.http.rpartition(":")
        asyncio.run(run_http(link, __version__, host or "127.0.0.1", int(port), settings, args.tools))
    else:
        asyncio.run(run_stdio(link, __version__, settings, args.tools))
    return 0


def _client_verb(args: argparse.Namespace) -> int:
    import grpc

    from cortexd.connect import read_tls_ca, read_token
    from memory_daemon.client.python_client import CortexdClient, as_dict
    from proxy_server.namespace import resolve_namespace

    try:
        namespace = resolve_namespace(args.namespace, Path.cwd())
        if not namespace.explicit and args.verb not in NAMESPACE_FREE_VERBS \
                and not getattr(args, "all_namespaces", False):
            print(f"cortexd: {namespace.describe()}", file=sys.stderr)
        client = CortexdClient(args.daemon, namespace.name, read_token(args.token_file),
                               tls_ca=read_tls_ca(args.tls_ca) if args.tls_ca else None)
    except (OSError, ValueError) as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return 2
    try:
        with client:
            return _run_verb(client, args, as_dict)
    except grpc.RpcError as error:
        code = error.code()
        hint = " (is the daemon running? start it with `cortexd serve`)" if code == grpc.StatusCode.UNAVAILABLE else ""
        print(f"cortexd: {code.name.lower()}: {error.details()}{hint}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        raise  # the reader went away: main() ends quietly
    except (OSError, ValueError) as error:
        print(f"cortexd: {error}", file=sys.stderr)
        return 2


def _print(args: argparse.Namespace, payload: dict, text: str) -> None:
    print(json.dumps(payload, indent=2) if args.json else text)


def _status_text(status: dict) -> str:
    lines = [f"{key}: {'; '.join(value) or 'none' if isinstance(value, list) else value}"
             for key, value in status.items() if key not in ("proxies", "indexes", "update_checks")]
    for waiting in status.get("update_checks", []):
        lines.append(f"namespace {waiting['namespace']}: {waiting['pending']} imported statements wait for their "
                     "update check")
    for index in status.get("indexes", []):
        unsaved = f", {index['unsaved']} unsaved" if int(index.get("unsaved", 0)) else ""
        lines.append(f"namespace {index['namespace']}: dense search {index['mode']} over {index['rows']} rows{unsaved}")
    for proxy in status.get("proxies", []):
        lines.append(f"proxy {proxy['proxy_id']} (namespace {proxy['namespace']}), reported {proxy['reported_at']}:")
        for upstream in proxy["upstreams"]:
            capture = ", capture on" if upstream["capture"] else ""
            error = f"; last error: {upstream['last_error']}" if upstream["last_error"] else ""
            lines.append(f"  {upstream['name']} ({upstream['transport']}): {upstream['state']} since "
                         f"{upstream['state_since']}, {upstream['tool_count']} tools, {upstream['calls']} calls, "
                         f"{upstream['failed_calls']} failed{capture}{error}")
    return "\n".join(lines)


def _memory_line(memory: dict, score: float | None = None) -> str:
    tags = f"  [{', '.join(memory['tags'])}]" if memory.get("tags") else ""
    prefix = f"{score:.4f}  " if score is not None else ""
    external = f" ({memory['external_id']})" if memory.get("external_id") else ""
    stale = f"  (superseded by {memory['superseded_by']})" if memory.get("superseded_by") else ""
    return f"{prefix}{memory['id']}{external}  {memory['content']}{tags}{stale}"


def _hit_line(hit: dict) -> str:
    if "memory" in hit:
        return _memory_line(hit["memory"], hit["score"])
    prefix = f"{hit['score']:.4f}  "
    if "fact" in hit:
        fact = hit["fact"]
        status = "" if fact["status"] == "active" else f"  ({fact['status']})"
        return f"{prefix}{fact['id']}  {fact['subject']} {fact['predicate']} {fact['object']}{status}"
    if "episode" in hit:
        episode = hit["episode"]
        return f"{prefix}{episode['id']}  {episode['kind']}: {episode['title']}"
    decision = hit["decision"]
    return f"{prefix}{decision['id']}  decision: {decision['summary']}"


def _run_verb(client, args: argparse.Namespace, as_dict) -> int:
    if args.verb == "status":
        status = as_dict(client.get_status())
        _print(args, status, _status_text(status))
    elif args.verb == "namespaces":
        listed = as_dict(client.list_namespaces())["namespaces"]
        lines = [f"{'namespace':<24} {'memories':>9} {'facts':>7} {'episodes':>9} {'decisions':>10}"] + [
            f"{n['namespace']:<24} {int(n['memories']):>9} {int(n['facts']):>7} {int(n['episodes']):>9} "
            f"{int(n['decisions']):>10}" for n in listed]
        _print(args, {"namespaces": listed}, "\n".join(lines) if listed else "the store holds no namespace yet")
    elif args.verb == "reindex":
        rebuilt = as_dict(client.rebuild_indexes(idempotency_key=args.idempotency_key))
        _print(args, rebuilt, f"namespace {rebuilt['namespace']}: indexes rebuilt from the store; dense search "
                              f"{rebuilt['mode']}" + (" (exact until the graph is built)"
                                                       if rebuilt["mode"] == "building" else ""))
    elif args.verb == "remember":
        text = sys.stdin.read() if args.text == "-" else args.text
        fields = {"content": text, "tags": args.tag, "source": "cli"}
        if args.strength is not None:
            fields["strength"] = args.strength
        memory = as_dict(client.save_memory(**fields, idempotency_key=args.idempotency_key))["memory"]
        _print(args, memory, f"saved {memory['id']}")
    elif args.verb == "search":
        hits = as_dict(client.search_memory(query=args.query, limit=args.limit, tags=args.tag, signals=args.signal,
                                            include_history=args.history, entity=args.entity, kinds=args.kind))["hits"]
        _print(args, {"hits": hits}, "\n".join(_hit_line(h) for h in hits) or "no matches")
    elif args.verb == "get":
        memories = as_dict(client.open_memories(ids=args.ids))["memories"]
        _print(args, {"memories": memories}, "\n".join(_memory_line(m) for m in memories))
    elif args.verb in ("export", "backup"):
        from memory_daemon.client.transfer_cli import run_backup, run_export

        return run_export(client, args) if args.verb == "export" else run_backup(client, args, as_dict)
    elif args.verb == "import":
        from memory_daemon.client.transfer_cli import dump_lines, run_restore

        if (dump := dump_lines(args.file)) is not None:
            return run_restore(client, args, dump, as_dict)
        records = _read_jsonl(args.file)  # checked whole before the first record is sent
        total = 0 if not sys.stderr.isatty() else len(records) if isinstance(records, list) else \
            sum(1 for _ in _records_from_file(args.file, ("text",)))
        reply = as_dict(client.import_records(_with_progress(records, total)))
        if args.wait is not None and reply["update_checks_pending"]:
            reply["update_checks_pending"] = client.wait_for_update_checks(args.wait)
        pending = reply["update_checks_pending"]
        checks = (f"; {pending} statements wait for their update check (`cortexd status` shows them; until it runs, "
                  "a statement and what it updates are both current)") if pending else ""
        _print(args, reply, f"imported {reply['imported']}, skipped {reply['skipped']} already present{checks}"
               + "".join(f"\nerror: {e}" for e in reply["errors"]))
        return 1 if reply["errors"] or (args.wait is not None and pending) else 0
    elif args.verb == "analyze":
        return _analyze(client, args, as_dict)
    elif args.verb == "doctor":
        return _doctor(client, args, as_dict)
    elif args.verb == "tools":
        tools = [{"name": t.name, "description": t.description, "input_schema": json.loads(t.input_schema_json)}
                 for t in client.list_tools()]
        _print(args, {"tools": tools}, "\n".join(f"{t['name']}: {t['description']}" for t in tools))
    elif args.verb == "preflight":
        reply = client.compile_context(task=args.task, session_id=args.session, max_tokens=args.max_tokens)
        _print(args, as_dict(reply), reply.markdown + f"\n({reply.tokens_used} of {reply.max_tokens} tokens)")
    elif args.verb in ("graph", "decisions", "memory"):
        from memory_daemon.client.python_client import snake_case
        from memory_daemon.client.proto_cli import request_fields

        method = args.rpc_method
        reply = getattr(client, snake_case(method.name))(**request_fields(args, method),
                                                         idempotency_key=args.idempotency_key)
        print(json.dumps(as_dict(reply), indent=2))
        return 1 if method.name == "VerifyIntegrity" and not reply.ok else 0
    elif args.verb == "call":
        result = client.call_tool(args.tool, json.loads(args.arguments), idempotency_key=args.idempotency_key)
        print(json.dumps(result, indent=2))
    return 0


def _analyze(client, args: argparse.Namespace, as_dict) -> int:
    if args.text is not None and not args.jsonl:
        result = as_dict(client.analyze_message(message=args.text, session_id=args.session))
        if args.json:
            print(json.dumps(result, indent=2))
        else:
            entities = ", ".join(f"{e['text']} ({e['label']})" for e in result["suggested_entities"])
            print(f"{result['action_recommendation']}  should_save={result['should_save']}  "
                  f"intent={result['intent']} ({result['confidence']:.2f})\n"
                  f"entities: {entities or '-'}\ntags: {', '.join(result['suggested_tags']) or '-'}\n"
                  f"strength: {result['suggested_strength']}\nreasoning: {'; '.join(result['reasoning'])}")
        return 0
    source = args.jsonl or "-"
    batch: list[dict] = []

    def flush() -> None:
        items = [{"id": r.get("id", ""), "message": r["text"], "session_id": r.get("session_id", ""),
                  "namespace": r.get("namespace", "")} for r in batch]
        for result in client.analyze_messages(items=items).results:
            print(json.dumps(as_dict(result)), flush=True)
        batch.clear()

    for record in _read_jsonl(source, keys=("id", "text", "namespace", "session_id")):
        batch.append(record)
        if len(batch) >= args.batch_size:
            flush()
    if batch:
        flush()
    return 0


def _doctor(client, args: argparse.Namespace, as_dict) -> int:
    from memory_daemon.ops.doctor import run_doctor

    return run_doctor(client, args.data_dir, args.json, as_dict)


def _read_jsonl(path: str, keys: tuple[str, ...] = ("id", "text", "namespace", "timestamp", "speaker", "session")):
    """Import records; the whole input is checked first, so a bad line stops the import before anything is stored."""
    if path == "-":
        lines = sys.stdin.readlines()
        return list(_records(path, lines, keys))
    with open(path, encoding="utf-8") as stream:
        for _ in _records(path, stream, keys):
            pass
    return _records_from_file(path, keys)


def _records_from_file(path: str, keys: tuple[str, ...]):
    with open(path, encoding="utf-8") as stream:
        yield from _records(path, stream, keys)


def _records(path: str, lines, keys: tuple[str, ...]):
    from memory_daemon.core.jsonl import json_objects

    for number, record in json_objects(lines, path):
        if not isinstance(record.get("text"), str):
            raise ValueError(f'{path}:{number}: expected an object with a "text" string')
        problem = _record_problem(record)
        if problem:
            raise ValueError(f"{path}:{number}: {problem}")
        yield {key: str(record[key]) for key in keys if record.get(key) is not None}


def _record_problem(record: dict) -> str | None:
    """What the daemon would refuse in a record, found before anything is sent: the whole file or nothing."""
    from memory_daemon.core.errors import InvalidArgument
    from memory_daemon.core.timefmt import parse_iso
    from proxy_server.namespace import NAMESPACE_PATTERN, NAMESPACE_RULE

    if not record["text"].strip():
        return '"text" is empty'
    if record.get("timestamp") is not None:
        try:
            parse_iso(str(record["timestamp"]), "timestamp")
        except InvalidArgument as error:
            return str(error)
    namespace = record.get("namespace")
    if namespace is not None and not NAMESPACE_PATTERN.fullmatch(str(namespace)):
        return f"namespace {str(namespace)[:80]!r} is invalid: use {NAMESPACE_RULE}"
    return None


def _with_progress(records, total: int, every: int = 500):
    """The records, saying on a terminal's stderr how many were sent ("import: 1500/12000 records sent")."""
    if not sys.stderr.isatty():
        yield from records
        return
    sent = 0
    for sent, record in enumerate(records, 1):
        if sent % every == 0:
            print(f"\rimport: {sent}/{total} records sent", end="", file=sys.stderr, flush=True)
        yield record
    print(f"\rimport: {sent}/{total} records sent, waiting for the daemon", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
