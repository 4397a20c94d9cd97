"""Running cortexd as a real service: systemd and launchd units, MCP host setup, `cortexd doctor`, `cortexd config`,
Prometheus metrics, and export, restore and backup of the store.

May import `core`, `store`, `memory` and `client` (for the hook settings and the launcher); never `api`.
"""
