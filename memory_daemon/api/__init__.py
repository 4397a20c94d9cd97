"""The daemon's gRPC face: `cortexd serve`, the servicers and thin RPC handlers, interceptors, the MCP tool catalog,
resources and prompts derived from the proto, idempotent replies, and the single-daemon lock.

May import everything below it (domains, `context`, `ops`, `store`, `core`); nothing imports `api` but the CLI, and
it never imports `bench`, `evals`, `demo` or `client`.
"""
