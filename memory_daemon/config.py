"""Daemon settings: where the data lives, where it listens, and the input limits it enforces."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from pydantic import BaseModel, ConfigDict, Field

DATA_DIR_ENV = "CORTEXD_DATA_DIR"
DATABASE_FILE = "cortexd.duckdb"


def default_data_dir() -> Path:
    override = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("cortexd"))


class Limits(BaseModel):
    """Input bounds; every rejection names the limit it hit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_content_bytes: int = Field(64 * 1024, gt=0)
    max_tags: int = Field(32, gt=0)
    max_tag_chars: int = Field(64, gt=0)
    max_entities: int = Field(64, gt=0)
    max_meta_bytes: int = Field(16 * 1024, gt=0)
    max_search_limit: int = Field(100, gt=0)
    max_ids_per_open: int = Field(100, gt=0)


class DaemonSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    data_dir: Path
    listen: str
    token: str | None = None
    limits: Limits = Limits()
    worker_threads: int = Field(4, gt=0)

    @property
    def database_path(self) -> Path:
        return self.data_dir / DATABASE_FILE
