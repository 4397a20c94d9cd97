"""The `cortexd export`, `cortexd backup` and dump-restoring `cortexd import` verbs (client side, no store imports)."""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from memory_daemon.core.dump_format import ROW_KINDS, is_dump_header


def add_transfer_verbs(verbs, add_client_options) -> None:
    export = verbs.add_parser("export", help="write a lossless dump (JSONL) of a namespace, or of every namespace; "
                                             "`cortexd import` restores it")
    export.add_argument("--all-namespaces", action="store_true", help="every namespace, not only --namespace's")
    export.add_argument("-o", "--output", help="write to this new file (user-only) instead of stdout")
    add_client_options(export)

    backup = verbs.add_parser("backup", help="copy the whole store, while the daemon serves, into a new DuckDB file")
    backup.add_argument("dest", help="the new file, ending in .duckdb; a path on the daemon's machine")
    add_client_options(backup)


def run_export(client, args: argparse.Namespace) -> int:
    if args.all_namespaces and args.namespace:
        print("cortexd: pass --namespace or --all-namespaces, not both", file=sys.stderr)
        return 2
    if args.output is None:
        sys.stdout.reconfigure(encoding="utf-8")  # a dump is UTF-8 whatever the locale
        _write_dump(client.export_store(all_namespaces=args.all_namespaces), sys.stdout)
        return 0
    # A dump holds everything the store does: it is born user-only and never replaces a file.
    try:
        descriptor = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        print(f"cortexd: {args.output} already exists; export never replaces a file", file=sys.stderr)
        return 2
    try:
        with open(descriptor, "w", encoding="utf-8", newline="\n") as stream:
            count = _write_dump(client.export_store(all_namespaces=args.all_namespaces), stream)
    except BaseException:
        os.unlink(args.output)  # half a dump is no dump (import would refuse it: it lacks its end line)
        raise
    print(f"exported {count} lines to {args.output}", file=sys.stderr)
    return 0


def _write_dump(lines: Iterable[str], stream) -> int:
    count = 0
    for line in lines:
        stream.write(line + "\n")
        count += 1
    stream.flush()
    return count


def run_backup(client, args: argparse.Namespace, as_dict) -> int:
    dest = os.path.abspath(os.path.expanduser(args.dest))  # the daemon's working directory is not ours
    reply = as_dict(client.backup_store(dest=dest, idempotency_key=args.idempotency_key))
    rows = ", ".join(f"{table} {count}" for table, count in sorted(reply["rows"].items()))
    print(json.dumps(reply, indent=2) if args.json else
          f"backed up to {reply['path']} ({int(reply['size_bytes']):,} bytes): {rows}")
    return 0


def dump_lines(path: str) -> Iterator[str] | None:
    """The input's lines when it is a dump (its first non-blank line is a dump header); None for plain records.

    Standard input can be read only once, so it is read here and, for plain records, put back as sys.stdin."""
    if path == "-":
        text = sys.stdin.read()
        lines = text.splitlines()
        if _first_is_header(lines):
            return iter(lines)
        sys.stdin = io.StringIO(text)
        return None
    with open(path, encoding="utf-8") as stream:
        if not _first_is_header(stream):
            return None
    return _file_lines(Path(path))


def _first_is_header(lines: Iterable[str]) -> bool:
    first = next((line for line in lines if line.strip()), "")
    return is_dump_header(first)


def _file_lines(path: Path) -> Iterator[str]:
    with open(path, encoding="utf-8") as stream:
        yield from stream


def run_restore(client, args: argparse.Namespace, lines: Iterator[str], as_dict) -> int:
    """Stream a dump to the daemon; it checks every line before storing any, so a bad dump stores nothing."""
    reply = as_dict(client.restore_store(lines))
    restored = ", ".join(f"{reply['restored'][kind]} {kind}" for kind in ROW_KINDS if int(reply["restored"].get(kind, 0)))
    skipped = sum(int(count) for count in reply["skipped"].values())
    print(json.dumps(reply, indent=2) if args.json else
          f"restored {restored or 'nothing'}; skipped {skipped} already present")
    return 0
