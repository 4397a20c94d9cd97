"""The DuckDB store: the only place in cortexd that holds SQL.

May import `core` only; every domain reaches DuckDB through the repositories here.
"""

from memory_daemon.store.database import Database, SCHEMA_VERSION
from memory_daemon.store.graph import GraphRepository
from memory_daemon.store.memories import MemoryRepository, MemoryRow

__all__ = ["Database", "GraphRepository", "MemoryRepository", "MemoryRow", "SCHEMA_VERSION"]
