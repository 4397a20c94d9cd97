"""Foundations every room of the daemon shares: the error hierarchy, settings and config.toml, time formats, logging,
input checks and the dump format's names.

Imports nothing from the rest of `memory_daemon`; `config_file` and `dump_format` stay free of pydantic so that
client-side code (hooks, dump verbs) may use them and still start fast.
"""
