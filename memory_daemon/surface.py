"""The MCP resources and prompts the daemon offers, next to the tools derived from the proto."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf import json_format

from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.errors import InvalidArgument, NotFound
from memory_daemon.rpc import Caller, MemoryRpc


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    description: str
    read: Callable[[MemoryRpc, Caller], object]


def _as_dict(message) -> dict:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


RESOURCES = (
    Resource(
        "cortex://status", "status", "The daemon's version, store and memory count.",
        lambda rpc, caller: _as_dict(rpc.GetStatus(pb.GetStatusRequest(), caller)),
    ),
    Resource(
        "cortex://memories/recent", "recent memories", "The 20 newest memories visible in this namespace.",
        lambda rpc, caller: [_as_dict(m) for m in rpc.recent_memories(caller)],
    ),
)

MEMORY_GUIDELINES = """\
You have long-term memory through the cortexd tools. Use it like a careful colleague would:

- When the user states a preference, a decision, a durable fact about themselves, their people,
  projects or systems, or explicitly asks you to remember something, call `save_memory` with one
  self-contained sentence (resolve "it"/"that" to what they refer to). Add tags and entities when
  you know them.
- Before answering a question that may depend on earlier conversations ("what did I say about…",
  "which database do we use?"), call `search_memory` first, then `open_memories` for full details.
- When a memory you retrieved actually helped, call `touch_memory` on it so that it stays strong.
- Do not save chit-chat, one-off task instructions, or secrets such as tokens and passwords.
"""


@dataclass(frozen=True)
class Prompt:
    name: str
    description: str
    arguments: tuple[pb.PromptArgumentSpec, ...]
    render: Callable[[dict[str, str]], str]


PROMPTS = (
    Prompt(
        "memory-guidelines",
        "How to use cortexd's memory tools: when to save, when to search, when to reinforce.",
        (pb.PromptArgumentSpec(name="focus", description="Optional topic the session is about."),),
        lambda args: MEMORY_GUIDELINES + (f"\nThis session is about: {args['focus']}\n" if args.get("focus") else ""),
    ),
)


def list_resources() -> pb.ListResourcesReply:
    return pb.ListResourcesReply(
        resources=[pb.ResourceSpec(uri=r.uri, name=r.name, description=r.description, mime_type="application/json")
                   for r in RESOURCES]
    )


def read_resource(rpc: MemoryRpc, caller: Caller, uri: str) -> pb.ReadResourceReply:
    for resource in RESOURCES:
        if resource.uri == uri:
            text = json.dumps(resource.read(rpc, caller), indent=2)
            return pb.ReadResourceReply(uri=uri, mime_type="application/json", text=text)
    raise NotFound(f"no resource {uri!r}; available: {', '.join(r.uri for r in RESOURCES)}")


def list_prompts() -> pb.ListPromptsReply:
    return pb.ListPromptsReply(
        prompts=[pb.PromptSpec(name=p.name, description=p.description, arguments=p.arguments) for p in PROMPTS]
    )


def get_prompt(name: str, arguments: dict[str, str]) -> pb.GetPromptReply:
    for prompt in PROMPTS:
        if prompt.name == name:
            allowed = {a.name for a in prompt.arguments}
            unknown = sorted(set(arguments) - allowed)
            if unknown:
                raise InvalidArgument(f"prompt {name}: unknown argument {', '.join(unknown)}")
            missing = [a.name for a in prompt.arguments if a.required and not arguments.get(a.name)]
            if missing:
                raise InvalidArgument(f"prompt {name}: missing required argument {', '.join(missing)}")
            return pb.GetPromptReply(
                description=prompt.description, messages=[pb.PromptMessage(role="user", text=prompt.render(arguments))]
            )
    raise NotFound(f"no prompt {name!r}; available: {', '.join(p.name for p in PROMPTS)}")
