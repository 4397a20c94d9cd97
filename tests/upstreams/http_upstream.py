"""A tiny streamable-HTTP MCP server that `cortexd proxy` fronts in the aggregation tests: `http_upstream.py PORT`."""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("docs")


@server.tool()
def lookup(term: str) -> dict:
    """Look a term up in the test glossary."""
    return {"term": term, "definition": f"{term} is defined in the handbook", "pid": os.getpid()}


@server.tool()
async def slow(seconds: float) -> str:
    """Answers after the given number of seconds."""
    await anyio.sleep(seconds)
    return f"slept {seconds}"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
