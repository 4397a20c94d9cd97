"""A daemon under one host's heaviest saves: a late save stores nothing and says so, and other hosts' reads go on."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import threading
import time

import grpc
import numpy as np
import pytest

from cortexd.connect import CHANNEL_OPTIONS, call_metadata
from cortexd.v1 import cortexd_pb2 as pb
from cortexd.v1 import cortexd_pb2_grpc as pb_grpc
from memory_daemon.activation.analyzer import ActivationPipeline
from memory_daemon.api.workers import BlockingRunner, Lane, lane_of
from memory_daemon.client.python_client import CortexdClient
from memory_daemon.core.config import ActivationSettings
from memory_daemon.core.priority import BACKGROUND_NICENESS, MAX_NICENESS, in_background, run_in_background

KIB = 1024
WAIT_SECONDS = 300.0  # a bound on waiting for the daemon, never a measured latency

_SUBJECTS = ("the billing team", "our staging cluster", "the mobile app", "Priya", "the data platform", "Jonas")
_VERBS = ("reviewed", "documented", "planned", "discussed", "summarised", "tested")
_OBJECTS = ("the quarterly report", "the onboarding guide", "the invoice export", "the search index",
            "the holiday rota", "the release checklist")


def long_prose(marker: str, size: int = 60 * KIB, seed: int = 0) -> str:
    """Plain sentences with no save, recall or change cue, about `size` characters, with `marker` near the end."""
    chooser = random.Random(seed)
    sentences = []
    while sum(len(s) + 1 for s in sentences) < size - 200:
        sentences.append(f"On day {len(sentences)} {chooser.choice(_SUBJECTS)} {chooser.choice(_VERBS)} "
                         f"{chooser.choice(_OBJECTS)} with {chooser.choice(_SUBJECTS)}.")
    return " ".join(sentences) + f" The code word is {marker}."


def log_events(daemon, event: str) -> list[dict]:
    lines = daemon.log_path.read_text(errors="replace").splitlines()
    return [entry for entry in map(json.loads, filter(lambda line: line.startswith("{"), lines))
            if entry.get("event") == event]


def test_reads_and_one_message_analysis_have_their_own_lane():
    methods = {m.name: m for s in pb.DESCRIPTOR.services_by_name.values() for m in s.methods}
    for name in ("SearchMemory", "CompileContext", "AnalyzeMessage", "OpenMemories", "GetSession", "QueryEntity"):
        assert lane_of(methods[name]) is Lane.READ, name
    for name in ("SaveMemory", "AnalyzeMessages", "UpsertFact", "ConsolidateMemories", "RecordObservation"):
        assert lane_of(methods[name]) is Lane.HEAVY, name


def test_a_save_whose_deadline_runs_out_before_it_is_stored_stores_nothing(daemon):
    with daemon.client("late") as client:
        client.get_model_status()  # the models have loaded: the save below spends its time analysing, not waiting
        before = client.get_status().memory_count
    marker = "zebracornfjord"
    # Long enough to pass validation and start the analysis, far too short for the analysis of 60 KiB of prose.
    with CortexdClient(daemon.address, "late", timeout=0.05) as hurried:
        with pytest.raises(grpc.RpcError) as refused:
            hurried.save_memory(content=long_prose(marker))
    assert refused.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED

    with daemon.client("late") as client:
        # The daemon's worker carries on after the caller gave up: wait until it has either refused the save or
        # (the fault this guards against) stored it anyway.
        waited_until = time.monotonic() + WAIT_SECONDS
        while not log_events(daemon, "deadline_exceeded") and client.get_status().memory_count == before:
            assert time.monotonic() < waited_until, "the daemon neither stored nor refused the save"
            time.sleep(0.05)
        assert client.get_status().memory_count == before, "a save whose caller had given up was stored"
        assert not client.search_memory(query=marker).hits
    [refusal] = log_events(daemon, "deadline_exceeded")
    assert refusal["method"] == "SaveMemory" and refusal["stage"] in ("before anything was stored", "before it started")


def test_a_tool_call_save_whose_deadline_runs_out_stores_nothing(daemon):
    """Through the MCP bridge too: the proxy's tool call carries its caller's deadline."""
    with daemon.client("late-tool") as client:
        client.get_model_status()
        with grpc.insecure_channel(daemon.address, options=CHANNEL_OPTIONS) as channel:
            with pytest.raises(grpc.RpcError) as refused:
                pb_grpc.McpBridgeStub(channel).CallTool(
                    pb.CallToolRequest(name="save_memory",
                                       arguments_json=json.dumps({"content": long_prose("quokkavelvet")})),
                    metadata=call_metadata("late-tool", None), timeout=0.05)
        assert refused.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        waited_until = time.monotonic() + WAIT_SECONDS
        while not log_events(daemon, "deadline_exceeded") and client.get_status().memory_count == 0:
            assert time.monotonic() < waited_until, "the daemon neither stored nor refused the save"
            time.sleep(0.05)
        assert client.get_status().memory_count == 0
    assert log_events(daemon, "deadline_exceeded")[0]["method"] == "save_memory"


async def _reads_during_saves(address: str, saves: int, reads: int) -> tuple[int, int]:
    """Sends `saves` 60 KiB saves in one namespace; once the first is stored, runs `reads` rounds of what a host
    does before answering its user (search, analyze_message, compile_context) in another namespace. Returns how many
    saves were still in flight when the last read finished, and how many saves there were."""
    async with grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        stub = pb_grpc.MemoryServiceStub(channel)
        heavy, light = call_metadata("flood", None), call_metadata("reader", None)
        await stub.SaveMemory(pb.SaveMemoryRequest(content="Priya owns the billing service."), metadata=light,
                              timeout=WAIT_SECONDS)
        pending = [asyncio.ensure_future(stub.SaveMemory(pb.SaveMemoryRequest(content=long_prose(f"flood{n}", seed=n)),
                                                         metadata=heavy, timeout=WAIT_SECONDS))
                   for n in range(saves)]
        await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for _ in range(reads):
            hits = (await stub.SearchMemory(pb.SearchMemoryRequest(query="who owns billing"), metadata=light,
                                            timeout=WAIT_SECONDS)).hits
            assert hits and "Priya" in hits[0].memory.content
            await stub.AnalyzeMessage(pb.AnalyzeMessageRequest(message="what did I say about billing?"),
                                      metadata=light, timeout=WAIT_SECONDS)
            await stub.CompileContext(pb.CompileContextRequest(task="fix the billing export"), metadata=light,
                                      timeout=WAIT_SECONDS)
        in_flight = sum(not call.done() for call in pending)
        await asyncio.gather(*pending)  # every save still succeeds
        return in_flight, saves


def test_one_namespaces_large_saves_never_hold_up_another_namespaces_reads(daemon):
    with daemon.client("reader") as client:
        client.get_model_status()
    in_flight, saves = asyncio.run(_reads_during_saves(daemon.address, saves=16, reads=5))
    # With one pool for everything the reads queue behind the saves sent before them, so nearly all saves are done
    # by the time they finish; in their own lane they finish while most saves still wait for a heavy worker.
    assert in_flight >= saves // 2, f"only {in_flight} of {saves} saves were still in flight when the reads finished"


def test_heavy_work_runs_at_background_priority_and_reads_do_not():
    runner = BlockingRunner(2)

    def probe() -> tuple[bool, int]:
        return in_background(), os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    async def both():
        return await runner.run(probe), await runner.run(probe, lane=Lane.HEAVY)

    (read_background, read_nice), (heavy_background, heavy_nice) = asyncio.run(both())
    runner.shutdown()
    assert not read_background and heavy_background
    if sys.platform.startswith("linux"):
        assert heavy_nice == min(MAX_NICENESS, read_nice + BACKGROUND_NICENESS)


class RecordingEncoder:
    def __init__(self) -> None:
        self.in_background: list[bool] = []

    def encode(self, texts):
        self.in_background.append(in_background())
        return np.zeros((len(texts), 384), dtype=np.float32)


def test_a_background_callers_model_stages_run_in_the_background_too():
    settings = ActivationSettings(entities=False, tags=False, dedup=False, intent_model=False)
    pipeline = ActivationPipeline(settings)
    pipeline.encoder = encoder = RecordingEncoder()
    pipeline._loaded.set()  # the recording encoder stands in for the loaded models
    pipeline.analyze("a host waits for this one")
    background = threading.Thread(target=lambda: (run_in_background(), pipeline.analyze("a save's analysis")))
    background.start()
    background.join()
    assert encoder.in_background == [False, True]
