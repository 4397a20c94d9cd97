"""Worker threads for store and model work, in two lanes so heavy writes never hold up reads; write deadlines."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from enum import Enum
from functools import partial

import grpc

from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.core.deadlines import Deadline
from memory_daemon.core.priority import run_in_background


class Lane(Enum):
    """Which worker threads run a call's blocking work."""

    READ = "read"  # reads and the analysis of one message: what a host waits on before it answers its user
    # Writes with their enrichment, imports and restores, batch analysis, whole-namespace scans: on threads the OS
    # runs at background priority (core.priority), so they take the CPU the reads leave.
    HEAVY = "heavy"


# Calls that write nothing but may cost seconds: they queue with the writes, not in front of the reads.
HEAVY_READS = frozenset({"AnalyzeMessages", "ClusterMemories", "ExportMemories", "VerifyIntegrity"})


def writes(method) -> bool:
    """Whether the RPC is marked `(writes)` in the proto: it changes the store and honours an idempotency key."""
    return method.GetOptions().Extensions[pb.writes]


def lane_of(method) -> Lane:
    return Lane.HEAVY if writes(method) or method.name in HEAVY_READS else Lane.READ


def write_deadline(method, context: grpc.aio.ServicerContext, name: str = "") -> Deadline | None:
    """The deadline a write RPC's work must meet to store anything (core.deadlines); None for reads or no deadline."""
    seconds_left = context.time_remaining()
    if not writes(method) or seconds_left is None:
        return None
    return Deadline(name or method.name, seconds_left)


class BlockingRunner:
    """Runs store and model work on worker threads so the event loop keeps serving other hosts.

    Reads and writes have threads of their own: however many 64 KiB saves one host sends, another host's search
    finds a free reader, and gets the CPU first (the heavy lane has half as many threads, at background priority).
    """

    def __init__(self, read_threads: int, heavy_threads: int | None = None) -> None:
        heavy_threads = heavy_threads or max(1, read_threads // 2)
        self._pools = {
            Lane.READ: ThreadPoolExecutor(max_workers=read_threads, thread_name_prefix="cortexd-read"),
            Lane.HEAVY: ThreadPoolExecutor(max_workers=heavy_threads, thread_name_prefix="cortexd-heavy",
                                           initializer=run_in_background),
        }

    async def run(self, fn, *args, lane: Lane = Lane.READ, deadline: Deadline | None = None):
        work = partial(fn, *args)
        if deadline is not None:
            work = partial(deadline.run, work)
        return await asyncio.get_running_loop().run_in_executor(self._pools[lane], work)

    def heavy(self, fn, *args):
        """run() in the heavy lane, for callers that take a plain runner function."""
        return self.run(fn, *args, lane=Lane.HEAVY)

    def shutdown(self) -> None:
        for pool in self._pools.values():
            pool.shutdown(wait=True)
