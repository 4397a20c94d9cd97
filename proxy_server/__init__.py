"""The thin MCP front: speaks MCP to one host over stdio (or streamable HTTP) and forwards everything to the daemon over gRPC."""
