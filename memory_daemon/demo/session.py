"""`cortexd demo`: a scripted session in which hosts share memories and a knowledge graph through real proxies and one daemon."""

from __future__ import annotations

import json
import signal

import anyio

from memory_daemon.demo.graph_story import graph_story
from memory_daemon.client.launcher import DaemonProcess, proxy_session, temporary_daemon


def _say(text: str) -> None:
    print(text, flush=True)


def _result(result) -> dict:
    return json.loads(result.content[0].text) if not result.is_error else {"error": result.content[0].text}


async def _session(daemon: DaemonProcess) -> None:
    _say(f"daemon pid {daemon.process.pid} serving {daemon.address}, data in {daemon.data_dir}\n")
    async with (
        proxy_session(daemon.address, "acme") as desktop,
        proxy_session(daemon.address, "acme", "--tools", "full") as cursor,
        proxy_session(daemon.address, "personal") as notes,
    ):
        tools = [t.name for t in (await desktop.list_tools()).tools]
        everything = (await cursor.list_tools()).tools
        _say(f"[claude-desktop] proxy up, namespace 'acme'; the default profile's {len(tools)} tools: {', '.join(tools)}")
        _say(f"[cursor]         proxy up, namespace 'acme', --tools full: {len(everything)} tools")
        _say("[notes-app]      proxy up, namespace 'personal'\n")

        message = "remember that I prefer pnpm over npm for every JavaScript project"
        analysis = _result(await desktop.call_tool("analyze_message", {"message": message, "session_id": "demo"}))
        _say(f"[claude-desktop] analyze_message {message!r} -> {analysis['action_recommendation']}, "
             f"intent {analysis['intent']}, entities {[e['text'] for e in analysis['suggested_entities']]}")
        saved = _result(await desktop.call_tool("save_memory", {
            "content": "I prefer pnpm over npm for every JavaScript project"}))
        memory = saved["memory"]
        _say(f"[claude-desktop] save_memory -> {memory['id']}: {memory['content']}")
        _say(f"                   auto-filled {', '.join(saved['auto_filled'])}: entities {memory['entities']}, "
             f"tags {memory['tags']}, strength {memory['strength']}")
        again = _result(await cursor.call_tool("save_memory", {"content": "I prefer pnpm over npm for all JavaScript projects"}))
        _say(f"[cursor]         save_memory of a paraphrase -> merged into {again['memory']['id']} "
             f"({again['deduplication']['action']}), use_count {again['memory']['use_count']}")
        staging = _result(await cursor.call_tool("save_memory", {
            "content": "The staging database is db-stg-2, reachable only over the VPN", "tags": ["infra"]}))
        _say(f"[cursor]         save_memory -> {staging['memory']['id']}: {staging['memory']['content']}\n")

        found = _result(await desktop.call_tool("search_memory", {"query": "staging database"}))
        _say("[claude-desktop] search_memory 'staging database' ->")
        for hit in found["hits"]:
            _say(f"                   {hit['score']:.2f} {hit['memory']['content']}   (saved by cursor)")
        found = _result(await cursor.call_tool("search_memory", {"query": "which package manager, npm or pnpm?"}))
        _say("[cursor]         search_memory 'which package manager, npm or pnpm?' ->")
        for hit in found["hits"]:
            _say(f"                   {hit['score']:.2f} {hit['memory']['content']}   (saved by claude-desktop)")
        touched = _result(await cursor.call_tool("touch_memory", {"id": found["hits"][0]["memory"]["id"], "boost_strength": True}))
        _say(f"[cursor]         touch_memory -> use_count {touched['memory']['use_count']}, strength {touched['memory']['strength']}\n")

        isolated = _result(await notes.call_tool("search_memory", {"query": "staging database"}))
        _say(f"[notes-app]      search_memory 'staging database' -> {len(isolated['hits'])} hits (other namespace)")
        rejected = await notes.call_tool("save_memory", {"content": "   "})
        _say(f"[notes-app]      save_memory with blank content -> error: {rejected.content[0].text}\n")

        _say("restarting the daemon while the three proxies stay up...")
        daemon.stop(signal.SIGTERM)
        daemon.start()
        again = _result(await desktop.call_tool("search_memory", {"query": "pnpm"}))
        _say(f"[claude-desktop] search_memory 'pnpm' after the restart -> {again['hits'][0]['memory']['content']}")

    await graph_story(daemon)

    with daemon.client() as client:
        status = client.get_status()
    _say(f"\ndaemon holds {status.memory_count} memories in {status.database_path}; stopping it.")


def run_demo() -> int:
    with temporary_daemon() as daemon:
        anyio.run(_session, daemon)
    _say("demo finished: the daemon is stopped and its temporary data dir removed.")
    return 0
