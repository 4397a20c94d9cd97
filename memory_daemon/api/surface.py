"""The MCP resources and prompts the daemon offers, next to the tools derived from the proto."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from google.protobuf import json_format

from cortexd.v1 import cortexd_pb2 as pb
from memory_daemon.context import briefings
from memory_daemon.core.errors import InvalidArgument, NotFound
from memory_daemon.core.validation import checked_text
from memory_daemon.api.caller import Caller
from memory_daemon.api.rpc import RpcTable


@dataclass(frozen=True)
class Resource:
    uri: str
    name: str
    description: str
    read: Callable[[RpcTable, Caller], object]


def _as_dict(message) -> dict:
    return json_format.MessageToDict(message, preserving_proto_field_name=True)


RESOURCES = (
    Resource(
        "cortex://status", "status", "The daemon's version, store and memory count.",
        lambda rpcs, caller: _as_dict(rpcs.memory.GetStatus(pb.GetStatusRequest(), caller)),
    ),
    Resource(
        "cortex://memories/recent", "recent memories", "The 20 newest memories visible in this namespace.",
        lambda rpcs, caller: [_as_dict(m) for m in rpcs.memory.recent_memories(caller)],
    ),
    Resource(
        "cortex://graph/summary", "graph summary",
        "Counts of entities, active, superseded and retracted facts, episodes and relations, and the Merkle root.",
        lambda rpcs, caller: rpcs.graph.summary(caller),
    ),
    Resource(
        "cortex://graph/integrity", "graph integrity",
        "Every fact's and episode's hash recomputed: the Merkle root and any row that no longer matches.",
        lambda rpcs, caller: _as_dict(rpcs.graph.VerifyIntegrity(pb.VerifyIntegrityRequest(), caller)),
    ),
    Resource(
        "cortex://episodes/recent", "recent episodes", "The 20 newest episodes: ADRs, root causes, invariants, notes.",
        lambda rpcs, caller: [_as_dict(e) for e in rpcs.graph.recent_episodes(caller, 20)],
    ),
)

MEMORY_GUIDELINES = """\
You have long-term memory through the cortexd tools. Use it like a careful colleague would.

When you are unsure whether a user message is worth remembering, call `analyze_message` with the message
(and a session_id for the conversation) and act on `action_recommendation`:

- MUST_SAVE: the user explicitly asked you to remember something. Always call `save_memory`.
- SHOULD_SAVE: a preference, decision or durable fact. Usually call `save_memory`.
- SHOULD_SEARCH: the user asks about something said before. Call `search_memory` before answering.
- UPDATE_CANDIDATE: the message changes something stored before (`deduplication.memory_id` names it when
  known). Save the new version and mention the change to the user.
- DUPLICATE_DETECTED: it is already stored. Don't save it again; `save_memory` would only reinforce it.
- NONE: nothing to remember.

When you save, write one self-contained sentence (`suggested_content` resolves "that"/"it" from earlier turns).
`save_memory` fills in entities, tags and strength when you leave them out, so pass them only when you know
better. When the user says a memory is wrong, call `edit_memory`; when they ask you to forget something, call
`forget_memory` (with a query it previews the matches: show them, then confirm). Secrets are redacted before they
are stored, but don't save them on purpose, nor chit-chat or one-off task instructions.
"""


@dataclass(frozen=True)
class Prompt:
    name: str
    description: str
    arguments: tuple[pb.PromptArgumentSpec, ...]
    render: Callable[[RpcTable, Caller, dict[str, str]], str]


PROMPTS = (
    Prompt(
        "memory-guidelines",
        "How to use cortexd's memory tools: when to save, when to search, when to reinforce.",
        (pb.PromptArgumentSpec(name="focus", description="Optional topic the session is about."),),
        lambda rpcs, caller, args: MEMORY_GUIDELINES + (f"\nThis session is about: {args['focus']}\n" if args.get("focus") else ""),
    ),
    Prompt(
        "architecture-briefing",
        "What is true now about a component: its active facts, the invariants and the decisions that concern it.",
        (pb.PromptArgumentSpec(name="component", description="The component, service or module.", required=True),),
        lambda rpcs, caller, args: briefings.architecture_briefing(rpcs.memory.compiler, caller.namespace, args["component"]),
    ),
    Prompt(
        "bug-investigation-context",
        "Known root causes and incidents like a symptom, the invariants it may break, and the facts it touches.",
        (pb.PromptArgumentSpec(name="symptom", description="What goes wrong, in a sentence.", required=True),),
        lambda rpcs, caller, args: briefings.bug_investigation_context(rpcs.memory.compiler, caller.namespace, args["symptom"]),
    ),
)


def list_resources() -> pb.ListResourcesReply:
    return pb.ListResourcesReply(
        resources=[pb.ResourceSpec(uri=r.uri, name=r.name, description=r.description, mime_type="application/json")
                   for r in RESOURCES]
    )


def read_resource(rpcs: RpcTable, caller: Caller, uri: str) -> pb.ReadResourceReply:
    for resource in RESOURCES:
        if resource.uri == uri:
            text = json.dumps(resource.read(rpcs, caller), indent=2)
            return pb.ReadResourceReply(uri=uri, mime_type="application/json", text=text)
    raise NotFound(f"no resource {uri!r}; available: {', '.join(r.uri for r in RESOURCES)}")


def list_prompts() -> pb.ListPromptsReply:
    return pb.ListPromptsReply(
        prompts=[pb.PromptSpec(name=p.name, description=p.description, arguments=p.arguments) for p in PROMPTS]
    )


def get_prompt(rpcs: RpcTable, caller: Caller, name: str, arguments: dict[str, str]) -> pb.GetPromptReply:
    for prompt in PROMPTS:
        if prompt.name == name:
            allowed = {a.name for a in prompt.arguments}
            unknown = sorted(set(arguments) - allowed)
            if unknown:
                raise InvalidArgument(f"prompt {name}: unknown argument {', '.join(unknown)}")
            missing = [a.name for a in prompt.arguments if a.required and not arguments.get(a.name)]
            if missing:
                raise InvalidArgument(f"prompt {name}: missing required argument {', '.join(missing)}")
            for argument, value in arguments.items():  # each one becomes a compile_context task or prompt text
                checked_text(value, argument, rpcs.memory.limits.max_query_chars, required=False)
            return pb.GetPromptReply(
                description=prompt.description, messages=[pb.PromptMessage(role="user", text=prompt.render(rpcs, caller, arguments))]
            )
    raise NotFound(f"no prompt {name!r}; available: {', '.join(p.name for p in PROMPTS)}")
