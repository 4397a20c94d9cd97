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
    (
        3,
        (
            # The bi-temporal knowledge graph. Rows are append-only: a change of belief sets `retracted_at`
            # on the old row (its recorded-time end) and inserts new rows; nothing is updated otherwise or deleted.
            # `sha256` is the row's canonical digest (store/graph.py), so out-of-band edits are detectable.
            """
            CREATE TABLE entities (
                id          VARCHAR PRIMARY KEY,
                namespace   VARCHAR NOT NULL,
                name        VARCHAR NOT NULL,
                -- normalised name: lower case, technology names canonical ("postgres" -> "postgresql")
                key         VARCHAR NOT NULL,
                type        VARCHAR NOT NULL,
                aliases     VARCHAR[] NOT NULL,
                created_at  TIMESTAMP NOT NULL
            )
            """,
            "CREATE INDEX entities_key ON entities (key)",
            """
            CREATE TABLE facts (
                id            VARCHAR PRIMARY KEY,
                namespace     VARCHAR NOT NULL,
                subject_id    VARCHAR NOT NULL,
                predicate     VARCHAR NOT NULL,
                -- the object is an entity (object_id set, object_value its name) or a literal (object_id NULL)
                object_id     VARCHAR,
                object_value  VARCHAR NOT NULL,
                valid_from    TIMESTAMP NOT NULL,
                valid_to      TIMESTAMP,          -- NULL: still true; intervals are half-open [from, to)
                recorded_at   TIMESTAMP NOT NULL,
                retracted_at  TIMESTAMP,          -- NULL: still believed
                superseded_by VARCHAR,            -- the fact that follows this one in valid time
                replaces      VARCHAR,            -- the retracted row this one revises in recorded time
                singular      BOOLEAN NOT NULL,
                confidence    DOUBLE NOT NULL,
                source        VARCHAR NOT NULL,   -- episode or memory id, or free text
                sha256        VARCHAR NOT NULL
            )
            """,
            "CREATE INDEX facts_subject ON facts (subject_id)",
            "CREATE INDEX facts_object ON facts (object_id)",
            "CREATE INDEX facts_replaces ON facts (replaces)",
            """
            CREATE TABLE episodes (
                id           VARCHAR PRIMARY KEY,
                namespace    VARCHAR NOT NULL,
                kind         VARCHAR NOT NULL,
                title        VARCHAR NOT NULL,
                body         VARCHAR NOT NULL,
                files        VARCHAR[] NOT NULL,
                entity_ids   VARCHAR[] NOT NULL,
                occurred_at  TIMESTAMP NOT NULL,
                recorded_at  TIMESTAMP NOT NULL,
                sha256       VARCHAR NOT NULL
            )
            """,
            "CREATE INDEX episodes_namespace ON episodes (namespace, occurred_at)",
            """
            CREATE TABLE relations (
                id          VARCHAR PRIMARY KEY,
                namespace   VARCHAR NOT NULL,
                from_id     VARCHAR NOT NULL,
                relation    VARCHAR NOT NULL,
                to_id       VARCHAR NOT NULL,
                strength    DOUBLE NOT NULL,
                created_at  TIMESTAMP NOT NULL
            )
            """,
            "CREATE INDEX relations_from ON relations (from_id)",
            "CREATE INDEX relations_to ON relations (to_id)",
        ),
    ),
    (
        4,
        (
            # A newer memory that updates, corrects, reverses or negates this one; nothing is deleted.
            "ALTER TABLE memories ADD COLUMN superseded_by VARCHAR",
            "ALTER TABLE memories ADD COLUMN superseded_at TIMESTAMP",
        ),
    ),
    (
        5,
        (
            # The decision log. `summary` and `key_choice` are generated when the decision is logged;
            # `tier` (hot, warm or cold) moves with use and idleness (memory_daemon/journal/decisions.py);
            # the outcome columns stay NULL until an outcome is recorded.
            """
            CREATE TABLE decisions (
                id                  VARCHAR PRIMARY KEY,
                namespace           VARCHAR NOT NULL,
                type                VARCHAR NOT NULL,
                question            VARCHAR NOT NULL,
                options             VARCHAR[] NOT NULL,
                chosen              VARCHAR NOT NULL,
                reasoning           VARCHAR NOT NULL,
                confidence          DOUBLE NOT NULL,
                session_id          VARCHAR NOT NULL,
                summary             VARCHAR NOT NULL,
                key_choice          VARCHAR NOT NULL,
                tier                VARCHAR NOT NULL,
                created_at          TIMESTAMP NOT NULL,
                last_accessed_at    TIMESTAMP NOT NULL,
                access_count        BIGINT NOT NULL,
                outcome_recorded_at TIMESTAMP,
                was_successful      BOOLEAN,
                impact_score        DOUBLE,
                learnings           VARCHAR
            )
            """,
            "CREATE INDEX decisions_session ON decisions (session_id)",
        ),
    ),
    (
        6,
        (
            # Memory dynamics: promoted to long-term memory (never garbage-collected), and archived by gc
            # when its decayed strength fell below the forget threshold (kept, exportable, not searched).
            "ALTER TABLE memories ADD COLUMN long_term BOOLEAN DEFAULT false",
            "ALTER TABLE memories ADD COLUMN archived_at TIMESTAMP",
        ),
    ),
    (
        7,
        (
            # Replies of writes sent with an `idempotency-key` header, so a retry with the same key gets the
            # first reply instead of writing twice, even after a daemon restart (memory_daemon/api/idempotency.py).
            # Rows older than a day, and the oldest beyond 10,000, are pruned; dumps leave this table out.
            """
            CREATE TABLE idempotency_keys (
                namespace      VARCHAR NOT NULL,
                key            VARCHAR NOT NULL,
                method         VARCHAR NOT NULL,   -- /package.Service/Method, or that of CallTool plus the tool
                request_sha256 VARCHAR NOT NULL,
                reply          BLOB NOT NULL,      -- the serialized reply message
                created_at     TIMESTAMP NOT NULL,
                PRIMARY KEY (namespace, key)
            )
            """,
        ),
    ),
    (
        8,
        (
            # Embeddings of facts, episodes and decisions for search over every kind (memory_daemon/retrieval/item_index.py),
            # kept so a restarted daemon does not embed them again. Derived data: dumps leave this table out, and a
            # missing row is embedded again on the next search.
            """
            CREATE TABLE item_embeddings (
                id        VARCHAR PRIMARY KEY,     -- a fact, episode or decision id
                namespace VARCHAR NOT NULL,
                embedding FLOAT[384] NOT NULL
            )
            """,
            "CREATE INDEX item_embeddings_namespace ON item_embeddings (namespace)",
        ),
    ),
    (
        9,
        (
            # The user's corrections (memory_daemon/store/corrections.py). A forgotten memory leaves a tombstone
            # without its text, so an export says it was removed; an edited memory keeps its earlier texts here
            # (one row per version, `id` = "<memory id>#<version>"), unless the edit asked to drop them.
            """
            CREATE TABLE memory_tombstones (
                id           VARCHAR PRIMARY KEY,   -- the forgotten memory's id
                namespace    VARCHAR NOT NULL,
                forgotten_at TIMESTAMP NOT NULL,
                reason       VARCHAR NOT NULL
            )
            """,
            """
            CREATE TABLE memory_history (
                id          VARCHAR PRIMARY KEY,
                namespace   VARCHAR NOT NULL,
                memory_id   VARCHAR NOT NULL,
                version     INTEGER NOT NULL,      -- 1 is the text first saved
                content     VARCHAR NOT NULL,
                replaced_at TIMESTAMP NOT NULL,
                reason      VARCHAR NOT NULL
            )
            """,
            "CREATE INDEX memory_history_memory ON memory_history (memory_id)",
        ),
    ),
    (
        10,
        (
            # Facts and episodes purged for good (a secret in them): their rows are deleted, which changes the
            # integrity root, so each purge is recorded here (what, when, why; never the text) and VerifyIntegrity
            # reports them beside the root.
            """
            CREATE TABLE purged_records (
                id        VARCHAR PRIMARY KEY,     -- the fact's or episode's id
                namespace VARCHAR NOT NULL,
                kind      VARCHAR NOT NULL,        -- fact or episode
                purged_at TIMESTAMP NOT NULL,
                reason    VARCHAR NOT NULL
            )
            """,
        ),
    ),
    (
        11,
        (
            # Imported statements waiting for the background update check (memory_daemon/memory/update_checks.py):
            # written in the import's transaction, deleted in the transaction that records what the check found, so
            # a restart resumes where the pass stopped. Derived work, not data: dumps leave this table out.
            """
            CREATE TABLE update_checks (
                memory_id VARCHAR PRIMARY KEY,
                namespace VARCHAR NOT NULL,
                queued_at TIMESTAMP NOT NULL
            )
            """,
        ),
    ),
    (
        12,
        (
            # Whose fact each memory states, as search reads it (memory_daemon/memory/holder_readings.py): the parse's
            # holders and the holder model's reading, made once in the background after the memory is written.
            # `digest` is of the text read (an edited memory is read again); `reader` names the model and the parse
            # rules, and readings by another are deleted. Derived data: dumps leave this table out, and forgetting a
            # memory deletes its reading.
            """
            CREATE TABLE holder_readings (
                memory_id    VARCHAR PRIMARY KEY,
                reader       VARCHAR NOT NULL,     -- the holder model (sha256@threshold) and the parse rules' digest
                digest       VARCHAR NOT NULL,     -- md5 of the memory's content when it was read
                first_person BOOLEAN NOT NULL,     -- the parse: the user speaks of their own
                named        VARCHAR[] NOT NULL,   -- the parse: the holders it names ("theo", "platform team")
                other        BOOLEAN               -- the holder model: another's own fact (NULL without the model)
            )
            """,
        ),
    ),
)
