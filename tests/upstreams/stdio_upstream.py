"""A tiny stdio MCP server that `cortexd proxy` fronts in the aggregation tests: issues, sums, failures, a hang."""

from __future__ import annotations

import json
import os
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("notes")
ISSUES: list[dict] = []


@server.tool()
def create_issue(title: str, body: str = "", token: str = "") -> dict:
    """Open an issue in the test tracker."""
    ISSUES.append({"title": title, "body": body})
    return {"number": len(ISSUES), "title": title, "url": f"https://tracker.test/issues/{len(ISSUES)}",
            "body_preview": body[:300]}


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason as the error."""
    raise ToolError(f"failed on purpose: {reason}")


@server.tool()
async def hang() -> str:
    """Never answers."""
    await anyio.sleep_forever()
    return "unreachable"


@server.tool()
async def count_to(n: int, ctx: Context) -> str:
    """Counts to n, reporting progress at each step."""
    for i in range(1, n + 1):
        await ctx.report_progress(i, n, f"step {i} of {n}")
    return f"counted to {n}"


@server.tool()
def request_meta(ctx: Context) -> dict:
    """The _meta this call arrived with, progress token left out."""
    return {k: v for k, v in (ctx.request_context.meta or {}).items() if k != "progress_token"}


@server.tool()
def pid() -> int:
    """This server's process id, so that a test can kill it."""
    return os.getpid()


@server.tool()
def delete_everything() -> str:
    """A tool the proxy's deny list keeps away from hosts."""
    return "deleted"


@server.resource("notes://readme", name="readme", mime_type="text/plain")
def readme() -> str:
    """The tracker's readme."""
    return "Issues are triaged on Mondays."


@server.resource("notes://issues/{number}", name="issue", mime_type="application/json")
def issue(number: str) -> str:
    """One issue of the tracker, by number."""
    return json.dumps({"number": int(number), "title": f"issue {number}"})


@server.prompt()
def triage(issue: str) -> str:
    """Triage an issue."""
    return f"Triage this issue: {issue}"


if __name__ == "__main__":
    # A test holds the server down by creating this file: each start then exits at once, as a broken install would.
    down_flag = os.environ.get("NOTES_DOWN_FLAG", "")
    if down_flag and os.path.exists(down_flag):
        sys.exit("notes upstream: held down by " + down_flag)
    server.run()
