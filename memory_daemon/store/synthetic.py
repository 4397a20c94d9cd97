"""Bulk-generates a synthetic knowledge graph in SQL, for benchmarks at 100k-1M facts."""

from __future__ import annotations

from collections.abc import Sequence

from memory_daemon.store.database import Database
from memory_daemon.store.graph import FACT_DIGEST

CHAIN_LENGTH = 5  # every (subject, predicate) has five versions: four superseded, one active
DAYS_PER_VERSION = 30


def seed_graph(database: Database, namespace: str, facts: int, entities: int) -> None:
    """`facts` facts in chains of five over `entities` entities; even versions point at another entity.

    Version v of chain c is valid for 30 days from 2020-01-01 + 30*v days (+ c seconds), superseded by
    version v+1; the fifth version is still active. Digests are computed as for any other row.
    """
    con = database.cursor()
    con.execute(
        "INSERT INTO entities SELECT 'ent_' || lpad(i::VARCHAR, 12, '0'), ?, 'component_' || i, 'component_' || i, "
        "'CONCEPT', []::VARCHAR[], TIMESTAMP '2020-01-01' FROM range(?) t(i)",
        [namespace, entities],
    )
    con.execute(
        f"""
        INSERT INTO facts (id, namespace, subject_id, predicate, object_id, object_value, valid_from, valid_to,
                           recorded_at, retracted_at, superseded_by, replaces, singular, confidence, source, sha256)
        SELECT *, {FACT_DIGEST} FROM (
            SELECT 'fact_' || lpad(i::VARCHAR, 12, '0') AS id, ? AS namespace,
                   'ent_' || lpad((c % ?)::VARCHAR, 12, '0') AS subject_id,
                   'attribute_' || (c // ?)::VARCHAR AS predicate,
                   CASE WHEN v % 2 = 0 THEN 'ent_' || lpad(((c * 7 + v + 1) % ?)::VARCHAR, 12, '0') END AS object_id,
                   CASE WHEN v % 2 = 0 THEN 'component_' || ((c * 7 + v + 1) % ?)::VARCHAR
                        ELSE 'value-' || v::VARCHAR END AS object_value,
                   TIMESTAMP '2020-01-01' + to_days(v * {DAYS_PER_VERSION}) + to_seconds(c) AS valid_from,
                   CASE WHEN v < {CHAIN_LENGTH - 1}
                        THEN TIMESTAMP '2020-01-01' + to_days((v + 1) * {DAYS_PER_VERSION}) + to_seconds(c) END AS valid_to,
                   TIMESTAMP '2020-01-01' + to_days(v * {DAYS_PER_VERSION}) + to_seconds(c) AS recorded_at,
                   NULL::TIMESTAMP AS retracted_at,
                   CASE WHEN v < {CHAIN_LENGTH - 1} THEN 'fact_' || lpad((i + 1)::VARCHAR, 12, '0') END AS superseded_by,
                   NULL::VARCHAR AS replaces, true AS singular, 1.0::DOUBLE AS confidence, 'synthetic' AS source
              FROM (SELECT i, i // {CHAIN_LENGTH} AS c, i % {CHAIN_LENGTH} AS v FROM range(?) t(i))
        )
        """,
        [namespace, entities, entities, entities, entities, facts],
    )
    con.execute("CHECKPOINT")


_TECHNOLOGIES = ("PostgreSQL", "Redis", "Kafka", "RabbitMQ", "Django", "FastAPI", "React", "Kubernetes", "Terraform",
                 "Python 3.12", "Go", "Rust", "nginx", "Grafana", "Prometheus", "S3", "DynamoDB", "Celery", "gRPC", "GraphQL")


def seed_holder_readings(database: Database, namespace: str, reader: str, first_person: bool, named: Sequence[str],
                         other: bool | None) -> None:
    """The kept holder reading (what `reader` read of the template: the same for every seeded memory) of the seeded
    memories of even-numbered services, as if the daemon had read them when they were written; the memories of odd
    ones stay unread. The digest is of each memory's own text, so search takes the reading as its own."""
    database.cursor().execute(
        "INSERT INTO holder_readings (memory_id, reader, digest, first_person, named, other) "
        "SELECT id, ?, md5(content), ?, ?::VARCHAR[], ? FROM memories "
        "WHERE namespace = ? AND source = 'synthetic' AND CAST(substr(id, 5) AS BIGINT) % 997 % 2 = 0",
        [reader, first_person, list(named), other, namespace])


def seed_memories(database: Database, namespace: str, count: int) -> None:
    """`count` template memories about services, hosts and technologies, with synthetic unit embeddings.

    Each embedding is its service's topic centre (997 of them, a fixed sine pattern) plus uniform noise, so a
    memory's cosine to its centre is about 0.6: clustered like real sentence embeddings, which is what an ANN index
    relies on (uniform noise has no structure for any index to find). Dense scores mean nothing beyond that; the
    rows exist to measure latency at scale.
    """
    technologies = list(_TECHNOLOGIES)
    con = database.cursor()
    con.execute(
        """
        INSERT INTO memories (id, namespace, content, tags, entities, strength, created_at, last_used_at, use_count,
                              source, context, session_id, meta, external_id, search_text, embedding)
        SELECT id, ?, content, []::VARCHAR[], []::VARCHAR[], 1.0, created, created, 0, 'synthetic', '', '', '{}',
               id, lower(content), list_transform(raw, lambda v: (v / norm)::FLOAT)::FLOAT[384]
          FROM (SELECT *, sqrt(list_sum(list_transform(raw, lambda w: w * w))) AS norm
          FROM (SELECT *, list_transform(range(384), lambda x: sin((x + 1) * ((i % 997) + 1) * 0.618)
                                                               + (random() - 0.5) * 3.0) AS raw
          FROM (SELECT i, 'mem_' || lpad(i::VARCHAR, 12, '0') AS id,
                       'service_' || (i % 997)::VARCHAR || ' uses ' || (?::VARCHAR[])[1 + i % 20] || ' on host-'
                           || (i % 53)::VARCHAR || '; owner team-' || (i % 31)::VARCHAR || ', note ' || i::VARCHAR AS content,
                       TIMESTAMP '2024-01-01' + to_seconds(i * 30) AS created
                  FROM range(?) t(i))))
        """,
        [namespace, technologies, count],
    )
    con.execute("CHECKPOINT")
