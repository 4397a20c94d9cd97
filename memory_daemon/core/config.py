"""Daemon settings: where the data lives, where it listens, and the input limits it enforces."""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from memory_daemon.core.config_file import raw_table

DATA_DIR_ENV = "CORTEXD_DATA_DIR"
DATABASE_FILE = "cortexd.duckdb"


def default_data_dir() -> Path:
    override = os.environ.get(DATA_DIR_ENV, "").strip()
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("cortexd"))


class Limits(BaseModel):
    """Input bounds, checked before anything is stored; every rejection names the field and the limit it hit.

    Sizes in bytes are of the UTF-8 text; lengths in characters are of the text stripped. The README lists them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # memories
    max_content_bytes: int = Field(64 * 1024, gt=0)  # also an analysed message and an observed response
    max_context_bytes: int = Field(16 * 1024, gt=0)
    max_source_chars: int = Field(1024, gt=0)  # room for a file path
    max_id_chars: int = Field(200, gt=0)  # session, memory, fact, decision and external ids
    max_tags: int = Field(32, gt=0)
    max_tag_chars: int = Field(64, gt=0)
    max_entities: int = Field(64, gt=0)  # given by the caller or found by extraction
    max_entity_chars: int = Field(200, gt=0)
    max_meta_bytes: int = Field(16 * 1024, gt=0)  # compact JSON
    max_meta_depth: int = Field(16, gt=0)  # objects and arrays inside one another
    # reads
    max_query_chars: int = Field(4096, gt=0)  # search queries, compile_context tasks, prompt arguments
    max_search_limit: int = Field(100, gt=0)
    max_ids_per_open: int = Field(100, gt=0)
    # the knowledge graph
    max_name_chars: int = Field(200, gt=0)  # subjects, entity names, files, relation ends
    max_value_chars: int = Field(2000, gt=0)  # a fact's object, an episode's title
    max_body_chars: int = Field(64 * 1024, gt=0)  # an episode's body
    max_list_items: int = Field(100, gt=0)  # an episode's files and entities
    # the decision log
    max_question_chars: int = Field(2000, gt=0)
    max_choice_chars: int = Field(500, gt=0)  # the chosen option and each other option
    max_options: int = Field(20, gt=0)
    max_reasoning_chars: int = Field(8000, gt=0)  # reasoning, and an outcome's learnings


class ActivationSettings(BaseModel):
    """Which activation stages run, and their thresholds; `[activation]` in config.toml or CORTEXD_<NAME> env vars."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    phrases: bool = True
    entities: bool = True
    encoder: bool = True
    tags: bool = True
    dedup: bool = True
    context: bool = True
    intent_model: bool = True
    relation_model: bool = True  # dedup and updates from the relation model (else the cosine-and-word rules)
    # compile_context asks the relevance model about hits the cosine rule turns away (else the rule alone decides)
    relevance_model: bool = True
    # the precedence model, which reads which of two memories answers a question now: compile_context leaves out the
    # older of its closest pair where the model is sure the newer answers the task and the relation judge reads the
    # pair as an update no check overruled (README, Quality, "Session 47, D3"); search reads the closest pair of its
    # best current hits the same way ([retrieval] update_reading_depth, "Session 49, S"), and orders them by the model
    # alone when [retrieval] precedence_depth is 2 or more (0 by default: no such ordering has passed its bar,
    # "Session 41"). Off: none of these, and the model is not loaded.
    precedence_model: bool = True
    # search and compile_context read, for a partial update beside the memory it revises, whether the question asks
    # what the update changed or what it left, with the partial-update reader (else by the cosine margin alone)
    partial_model: bool = True
    # search and import read whether a statement states another person's or group's own fact with the holder model
    # (else only the parse's marks: possessives, named groups, a pronoun pointing back)
    holder_model: bool = True
    # Once the models load, the daemon reads in the background every current memory it has no holder reading of
    # (written before readings were kept, or queued at the last stop); off, search reads those it needs.
    holder_readings_sweep: bool = True
    # save_memory upserts the facts it extracts from SAVE_FACT / UPDATE_INFO messages into the graph.
    extract_facts: bool = True
    intent_confidence: float = Field(0.7, ge=0.0, le=1.0)
    auto_save_confidence: float = Field(0.8, ge=0.0, le=1.0)
    dedup_similarity: float = Field(0.85, ge=0.0, le=1.0)
    context_window: int = Field(10, ge=1, le=100)
    tag_top_k: int = Field(5, ge=0, le=20)
    dedup_candidates: int = Field(5, ge=1, le=50)


class RetrievalSettings(BaseModel):
    """How search fuses its signals; `[retrieval]` in config.toml or CORTEXD_RETRIEVAL_<NAME> env vars."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lexical_weight: float = Field(1.5, ge=0.0)  # chosen on LoCoMo conversations 1-7 and our sets (README, Retrieval)
    dense_weight: float = Field(1.0, ge=0.0)
    graph_weight: float = Field(0.6, ge=0.0)
    temporal_weight: float = Field(0.3, ge=0.0)
    rrf_k: float = Field(60.0, gt=0.0)
    candidates: int = Field(50, ge=1, le=1000)
    min_dense_similarity: float = Field(0.3, ge=-1.0, le=1.0)
    graph_hop_decay: float = Field(0.5, gt=0.0, le=1.0)
    half_life_days: float = Field(30.0, gt=0.0)
    decay_model: str = Field("exponential", pattern="^(exponential|power)$")
    use_boost: float = Field(0.2, ge=0.0)
    # Dense search is exact below this many memories in a namespace, and goes through an HNSW graph saved in the
    # data dir above it. `coarse_index_from`, its name before the graph replaced the coarse cells, is still read.
    vector_graph_from: int = Field(20_000, ge=1,
                                   validation_alias=AliasChoices("vector_graph_from", "coarse_index_from"))
    vector_save_seconds: float = Field(60.0, gt=0.0)  # an index changed since its last save is saved this often
    # A namespace's lexical index is saved in the data dir (and loaded at the next start instead of being built
    # from the store) from this many memories on.
    lexical_save_from: int = Field(5_000, ge=1)
    # search_memory's relevance model reads the query with this many best current hits and moves each by
    # rerank_weight x the best fused score per logit of its verdict, ordering them among themselves (README,
    # Retrieval, "The reranker"). 0 turns it off, and 1 reads nothing (one hit has no order).
    rerank_depth: int = Field(2, ge=0, le=50)
    rerank_weight: float = Field(0.02, ge=0.0)
    # search_memory's precedence model ([activation] precedence_model) reads this many best current hits in pairs, in
    # time order, and orders them by the pairs each wins: which of two memories answers the question now (README,
    # Retrieval). Under 2: off, the default (README, Quality, "Session 41").
    precedence_depth: int = Field(0, ge=0, le=10)
    # search_memory reads the closest pair of this many best current hits as compile_context reads its memories (the
    # precedence model with the question, the relation judge without it) and places the newer just above the older
    # where both say it answers now (README, Quality, "Session 49, S"). Under 2: off.
    update_reading_depth: int = Field(3, ge=0, le=10)
    # Of this many best current hits, one that states its fact of another holder than the query's ("The platform
    # team's standup moved to 10:15" for "what time is my standup?") keeps holder_factor of its fused score (1: off).
    holder_depth: int = Field(5, ge=0, le=50)
    holder_factor: float = Field(0.5, ge=0.0, le=1.0)
    # A search_memory call whose signals bring in fewer than 3 memories has the relevance model read this many nearest
    # memories under min_dense_similarity and takes those it reads as about the query (README, Quality, "Session 45,
    # F"). 0: off. compile_context's own search never does.
    thin_search_depth: int = Field(6, ge=0, le=50)
    working_memory_idle_minutes: float = Field(120.0, gt=0.0)  # a session's working memory is dropped after this

    @model_validator(mode="before")
    @classmethod
    def _retired_keys(cls, values):
        """`coarse_probe_cells` tuned the coarse cells the HNSW graph replaced; a config that still sets it works."""
        if isinstance(values, dict) and "coarse_probe_cells" in values:
            values = {k: v for k, v in values.items() if k != "coarse_probe_cells"}
        return values

    def weights(self) -> dict[str, float]:
        return {"lexical": self.lexical_weight, "dense": self.dense_weight, "graph": self.graph_weight,
                "temporal": self.temporal_weight}


class StoreSettings(BaseModel):
    """When the daemon folds its write-ahead log into the DuckDB file; `[store]` in config.toml or
    CORTEXD_STORE_<NAME> env vars. A small WAL keeps a SIGKILL restart quick (the WAL is replayed at open) and each
    checkpoint short (writes wait for it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    checkpoint_wal_mib: float = Field(16.0, gt=0.0)  # once the WAL is this large
    checkpoint_writes: int = Field(1000, ge=1)  # or after this many writes
    checkpoint_idle_seconds: float = Field(5.0, gt=0.0)  # or once no write came for this long


class RedactionSettings(BaseModel):
    """Where secrets may be stored as typed: `[redaction]` in config.toml or CORTEXD_REDACTION_<NAME> env vars
    (a comma-separated list). Everywhere else every write is redacted before it is stored; the daemon logs a
    warning at start for each namespace listed here."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    off_in_namespaces: tuple[str, ...] = ()

    @field_validator("off_in_namespaces", mode="before")
    @classmethod
    def _split(cls, value):
        return tuple(part.strip() for part in value.split(",") if part.strip()) if isinstance(value, str) else value


class DaemonSettings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    data_dir: Path
    listen: str
    token: str | None = None
    # TLS on TCP: the PEM certificate chain and its private key; both or neither.
    tls_cert: Path | None = None
    tls_key: Path | None = None
    # HOST:PORT of the Prometheus endpoint; off when None. A non-loopback host needs metrics_allow_remote.
    metrics_listen: str | None = None
    metrics_allow_remote: bool = False
    limits: Limits = Limits()
    activation: ActivationSettings = ActivationSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    store: StoreSettings = StoreSettings()
    redaction: RedactionSettings = RedactionSettings()
    worker_threads: int = Field(4, gt=0)

    @property
    def database_path(self) -> Path:
        return self.data_dir / DATABASE_FILE


def load_activation_settings(path: Path | None = None, environ: dict[str, str] | None = None) -> ActivationSettings:
    """The file's `[activation]` table, overridden by CORTEXD_<FIELD> variables; a bad key or value names itself."""
    return _load_table("activation", ActivationSettings, "CORTEXD_", path, environ)


def load_retrieval_settings(path: Path | None = None, environ: dict[str, str] | None = None) -> RetrievalSettings:
    """The file's `[retrieval]` table, overridden by CORTEXD_RETRIEVAL_<FIELD> variables."""
    return _load_table("retrieval", RetrievalSettings, "CORTEXD_RETRIEVAL_", path, environ)


def load_store_settings(path: Path | None = None, environ: dict[str, str] | None = None) -> StoreSettings:
    """The file's `[store]` table, overridden by CORTEXD_STORE_<FIELD> variables."""
    return _load_table("store", StoreSettings, "CORTEXD_STORE_", path, environ)


def load_redaction_settings(path: Path | None = None, environ: dict[str, str] | None = None) -> RedactionSettings:
    """The file's `[redaction]` table, overridden by CORTEXD_REDACTION_<FIELD> variables."""
    return _load_table("redaction", RedactionSettings, "CORTEXD_REDACTION_", path, environ)


def _load_table(table: str, model, prefix: str, path: Path | None, environ: dict[str, str] | None):
    from pydantic import ValidationError

    path, values = raw_table(table, model.model_fields, prefix, path, environ)
    try:
        return model(**values)
    except ValidationError as error:
        problems = "; ".join(f"{table}.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise ValueError(f"invalid configuration ({path} / CORTEXD_* variables): {problems}") from None
