"""Code that runs outside the daemon and talks to it: the Python client, the host hooks (whose start time matters),
the RPC and dump verbs of the CLI, and the launcher that starts a daemon for the demo, benches and tests.

Imports only `core`'s light modules (`config_file`, `dump_format`) and the generated stubs: no duckdb, spacy,
onnxruntime, numpy or pydantic. `from memory_daemon.client import CortexdClient` works and loads the client lazily.
"""

__all__ = ["CortexdClient", "as_dict"]


def __getattr__(name: str):
    if name in __all__:
        from memory_daemon.client import python_client

        return getattr(python_client, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
