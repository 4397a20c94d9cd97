"""Helpers every `cortexd bench` suite shares: percentiles, table rows, RSS, MCP and stdio timings, the messages and
servers the suites measure with, and a worst-case client to measure beside."""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import threading
import time
from pathlib import Path

BARE_SERVER = '''
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def hello() -> str:
    """Say hello."""
    return "hello"


server.run()
'''
INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}) + "\n"
SEED_MEMORIES = 1000


BENCH_MESSAGES = (
    "remember that I prefer pnpm over npm for JavaScript projects",
    "we decided to move CI to GitHub Actions next sprint",
    "Priya owns the billing service and the invoices cron job",
    "what did I say about the staging database?",
    "actually the deadline moved to the 14th",
    "can you refactor auth_service.py to use dependency injection?",
    "thanks, that worked!",
    "our Postgres 16 cluster runs on three r6g.xlarge nodes in eu-west-1",
    "I always use Neovim with the LazyVim config",
    "don't forget: the API keys rotate every 90 days, this is critical",
    "how do I set my preferred editor in git?",
    "yes, let's go with Redis for the session cache",
    "the flaky test is in tests/test_payments.py::test_refund_partial",
    "my sister Ana lives in Lisbon and visits in June",
    "let's use Polars instead of pandas for the ETL job",
    "ok ship it — btw we decided to keep the monorepo",
)


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cold_start_ms(command: list[str]) -> float:
    """Spawn to the `initialize` response, over raw stdio."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        process.stdin.write(INITIALIZE)
        process.stdin.flush()
        while True:
            line = process.stdout.readline()
            if not line:
                raise RuntimeError(f"{command} exited before answering initialize")
            if '"id":1' in line.replace(" ", ""):
                return (time.perf_counter() - started) * 1000
    finally:
        process.kill()
        process.wait()


async def mcp_round_trips(params, tool: str | None, arguments: dict | list[dict], count: int) -> list[float]:
    """Latencies of `tools/call tool` (or `tools/list` when tool is None) over one MCP stdio session.

    A list of argument sets is cycled through, call by call."""
    rotation = arguments if isinstance(arguments, list) else [arguments]
    from mcp import ClientSession, stdio_client

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

            calls = 0

            async def once() -> None:
                nonlocal calls
                calls += 1
                if tool is None:
                    await session.list_tools()
                    return
                result = await session.call_tool(tool, rotation[calls % len(rotation)])
                if result.is_error:
                    raise RuntimeError(result.content[0].text)

            for _ in range(max(20, count // 10)):
                await once()
            samples = []
            for _ in range(count):
                started = time.perf_counter()
                await once()
                samples.append((time.perf_counter() - started) * 1000)
            return samples


def table_row(name: str, samples: list[float], note: str = "") -> str:
    return f"| {name} | {statistics.median(samples):.2f} | {percentile(samples, 0.95):.2f} | {len(samples)} | {note} |"


WORST_CASE_NAMESPACE = "bench-worst-case"
WORST_CASE_BYTES = 64 * 1024  # the content limit


def long_messages(variant: int) -> dict[str, str]:
    """64 KiB messages in shapes that once cost seconds to minutes of analysis each, by name; each variant differs
    from the others in every shape, so no cache or dedup merge makes a later one cheaper."""
    chooser = random.Random(variant)
    prose = " ".join(chooser.choice(BENCH_MESSAGES) for _ in range(2000))
    shapes = {
        "prose": prose,
        "prose without spaces": prose.replace(" ", ""),
        "one word": "x" * WORST_CASE_BYTES,
        "'=' run": "=" * WORST_CASE_BYTES,
        '"a" "a" …': '"a" ' * (WORST_CASE_BYTES // 4),
        "one-word lines": "word\n" * (WORST_CASE_BYTES // 5),
        "remember remember …": "remember " * (WORST_CASE_BYTES // 9),
        "emoji": "\U0001F600" * (WORST_CASE_BYTES // 4),
    }
    return {name: f"{variant}: {text}".encode()[:WORST_CASE_BYTES].decode("utf-8", errors="ignore")
            for name, text in shapes.items()}


def worst_case_content(sequence: int) -> str:
    """The long message shapes in turn, a new variant each time."""
    shapes = list(long_messages(sequence).values())
    return shapes[sequence % len(shapes)]


class WorstCaseSaver:
    """A client that saves 64 KiB in a loop, in a namespace of its own, on a thread, while the block runs: what the
    other clients of a suite are measured beside. Its save latencies and errors are kept."""

    def __init__(self, address: str) -> None:
        self._address = address
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._save_in_a_loop, name="bench-worst-case", daemon=True)
        self.latencies_ms: list[float] = []
        self.errors: list[str] = []

    def __enter__(self) -> "WorstCaseSaver":
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()

    def _save_in_a_loop(self) -> None:
        import grpc

        from memory_daemon.client.python_client import CortexdClient

        with CortexdClient(self._address, WORST_CASE_NAMESPACE, timeout=60) as client:
            sequence = 0
            while not self._stop.is_set():
                sequence += 1
                started = time.perf_counter()
                try:
                    client.save_memory(content=worst_case_content(sequence))
                    self.latencies_ms.append((time.perf_counter() - started) * 1000)
                except grpc.RpcError as error:
                    self.errors.append(f"{error.code().name}: {error.details()}")
