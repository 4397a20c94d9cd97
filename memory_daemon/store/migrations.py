"""Versioned schema migrations; each entry upgrades a store file by one version, in place."""

from __future__ import annotations

# Append only: a released migration is never edited, so every existing file
# can be brought to the newest schema by replaying what it has not seen yet.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            """
            CREATE TABLE memories (
                id           VARCHAR PRIMARY KEY,
                namespace    VARCHAR NOT NULL,
                content      VARCHAR NOT NULL,
                tags         VARCHAR[] NOT NULL,
                entities     VARCHAR[] NOT NULL,
                strength     DOUBLE NOT NULL,
                created_at   TIMESTAMP NOT NULL,
                last_used_at TIMESTAMP NOT NULL,
                use_count    BIGINT NOT NULL,
                source       VARCHAR NOT NULL,
                context      VARCHAR NOT NULL,
                session_id   VARCHAR NOT NULL,
                meta         JSON NOT NULL,
                external_id  VARCHAR,
                -- lower-cased content, tags and entities, kept for keyword matching
                search_text  VARCHAR NOT NULL
            )
            """,
            "CREATE INDEX memories_namespace ON memories (namespace)",
        ),
    ),
    (
        2,
        (
            # Sentence embeddings (all-MiniLM-L6-v2, 384 floats, unit length); NULL where the encoder was unavailable.
            "ALTER TABLE memories ADD COLUMN embedding FLOAT[384]",
        ),
    ),
)
