"""Fact triples from the dependency parse: the documented shapes on our own sentences, fields, negatives, speed."""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from preprocessing.entities import EntityExtractor
from preprocessing.triples import (
    CHANGE,
    ENDED,
    RENAME,
    STATE,
    TEAM,
    USER,
    FactTriple,
    extract_triples,
    normalise_key,
)


@pytest.fixture(scope="module")
def extractor() -> EntityExtractor:
    return EntityExtractor.load()


def keys(extractor: EntityExtractor, text: str) -> set[tuple[str, str, str]]:
    return {(t.subject_key, t.predicate, t.object_key) for t in extractor.analyze(text).triples}


def triple(extractor: EntityExtractor, text: str) -> FactTriple:
    found = extractor.analyze(text).triples
    assert len(found) == 1, (text, found)
    return found[0]


# Each sentence with the exact set of (subject_key, predicate, object_key) it must give.
CASES: list[tuple[str, set[tuple[str, str, str]]]] = [
    # -- "X uses / owns / depends on Y" (coding agent) ---------------------------------------------------------
    ("The billing service uses Postgres 16.", {("billing service", "uses", "postgresql 16")}),
    ("auth_service depends on Redis 7", {("auth_service", "depends_on", "redis 7")}),
    ("`auth_service` depends on `libfoo` now", {("auth_service", "depends_on", "libfoo")}),
    ("the api uses fastapi and sqlalchemy", {("api", "uses", "fastapi"), ("api", "uses", "sqlalchemy")}),
    ("the worker depends on RabbitMQ and Postgres",
     {("worker", "depends_on", "rabbitmq"), ("worker", "depends_on", "postgresql")}),
    ("our monorepo uses Turborepo", {("monorepo", "uses", "turborepo")}),
    ("the ingest job runs on Kubernetes", {("ingest job", "uses", "kubernetes")}),
    ("the frontend is written in TypeScript", {("frontend", "uses", "typescript")}),
    ("the search service is backed by Elasticsearch", {("search service", "uses", "elasticsearch")}),
    ("payments-api relies on the ledger package", {("payments-api", "depends_on", "ledger package")}),
    ("Priya owns billing.", {("priya", "owns", "billing")}),
    ("FYI the payments team owns the ledger service", {("payments team", "owns", "ledger service")}),
    ("Sam maintains the CLI", {("sam", "owns", "cli")}),
    ("billing is owned by Priya", {("billing", "owned_by", "priya")}),
    ("the on-call rotation is owned by the platform team", {("on-call rotation", "owned_by", "platform team")}),
    ("remember that the billing service uses Postgres 16", {("billing service", "uses", "postgresql 16")}),
    ("Note: billing uses Postgres", {("billing", "uses", "postgresql")}),
    ("we're on Node 20", {(TEAM, "uses", "node.js 20")}),
    ("we're going with Postgres for billing", {("billing", "uses", "postgresql")}),
    ("we decided to use pnpm for the monorepo", {("monorepo", "uses", "pnpm")}),
    ("we use Redis for caching", {(TEAM, "uses", "redis")}),
    ("the docs site is hosted on Netlify", {("docs site", "hosted_on", "netlify")}),
    ("we host the docs on Netlify", {("docs", "hosted_on", "netlify")}),
    ("the config lives in `src/api/config.py`", {("config", "located_in", "src/api/config.py")}),
    ("the lint rules are defined in `.eslintrc.json`", {("lint rules", "located_in", ".eslintrc.json")}),
    ("we keep secrets in Vault", {("secrets", "located_in", "vault")}),
    ("the metrics endpoint listens on port 9100", {("metrics endpoint", "port", "9100")}),
    ("the grpc server is on port 50051", {("grpc server", "port", "50051")}),
    ("The repo uses Python 3.12 and Poetry", {("repo", "uses", "python 3.12"), ("repo", "uses", "poetry")}),
    ("the backup script lives in /opt/scripts/backup.sh",
     {("backup script", "located_in", "/opt/scripts/backup.sh")}),
    # -- "X is Y", "X's Y is Z" ------------------------------------------------------------------------------
    ("The API's database is MySQL.", {("api", "database", "mysql")}),
    ("the project's license is MIT", {("project", "license", "mit")}),
    ("the owner of the billing service is Priya", {("billing service", "owned_by", "priya")}),
    ("our deploy day is Thursday", {(TEAM, "deploy_day", "thursday")}),
    ("the staging database is Postgres 15", {("staging database", "is", "postgresql 15")}),
    ("Redis 7 is our cache", {(TEAM, "cache", "redis 7")}),
    ("Node 18 is our runtime", {(TEAM, "runtime", "node.js 18")}),
    ("Kafka is a message broker", {("apache kafka", "is_a", "message broker")}),
    ("Kafka is deprecated", {("apache kafka", "status", "deprecated")}),
    ("the v1 endpoints are deprecated", {("v1 endpoints", "status", "deprecated")}),
    ("the old repo was archived", {("old repo", "status", "archived")}),
    ("the auth service is now on Postgres 16", {("auth service", "uses", "postgresql 16")}),
    # -- "we moved X to Y", "X was renamed to Y", switches ---------------------------------------------------
    ("we moved the frontend to Vercel", {("frontend", "moved_to", "vercel")}),
    ("We switched from MySQL to Postgres for the billing service.",
     {("billing service", "moved_to", "postgresql")}),
    ("we migrated billing from MySQL to Postgres", {("billing", "moved_to", "postgresql")}),
    ("we migrated the ingest pipeline to Airflow", {("ingest pipeline", "moved_to", "airflow")}),
    ("`src/legacy` was moved to `archive/legacy`", {("src/legacy", "moved_to", "archive/legacy")}),
    ("The user-service repo was renamed to accounts-api.",
     {("user-service repo", "renamed_to", "accounts-api")}),
    ("we renamed auth-svc to identity", {("auth-svc", "renamed_to", "identity")}),
    ("the repo is now called accounts-api", {("repo", "renamed_to", "accounts-api")}),
    ("We replaced Jenkins with GitHub Actions", {("jenkins", "replaced_by", "github actions")}),
    ("billing now uses Postgres instead of MySQL", {("billing", "uses", "postgresql")}),
    ("the auth service now depends on Redis 7 for sessions", {("auth service", "depends_on", "redis 7")}),
    ("we upgraded Redis to 7.2", {("redis", "version", "7.2")}),
    ("We moved the standup to 10am", {("standup", "moved_to", "10am")}),
    ("we changed the deploy day to Friday", {(TEAM, "deploy_day", "friday")}),
    ("we deploy on Thursdays", {(TEAM, "deploy_day", "thursdays")}),
    ("our retro is on Fridays", {("retro", "scheduled", "fridays")}),
    ("we switched the CI from CircleCI to GitHub Actions", {("ci", "moved_to", "github actions")}),
    # -- work -----------------------------------------------------------------------------------------------
    ("I work at Stripe", {(USER, "works_at", "stripe")}),
    ("Dana is my manager", {(USER, "manager", "dana")}),
    ("I report to Dana", {(USER, "reports_to", "dana")}),
    ("Priya is the tech lead for billing", {("billing", "tech_lead", "priya")}),
    ("Marco works on the payments team", {("marco", "works_on", "payments team")}),
    ("the client prefers email over Slack", {("client", "prefers", "email")}),
    ("The design review moved to Fridays", {("design review", "moved_to", "fridays")}),
    # -- personal -------------------------------------------------------------------------------------------
    ("i live in lisbon", {(USER, "located_in", "lisbon")}),
    ("my brother lives in Toronto", {("brother", "located_in", "toronto")}),
    ("Our office is in Berlin", {("office", "located_in", "berlin")}),
    ("I'm allergic to peanuts", {(USER, "allergic_to", "peanuts")}),
    ("My sister's name is Ana", {("sister", "name", "ana")}),
    ("My sister is a nurse", {("sister", "is_a", "nurse")}),
    ("my wife is vegetarian", {("wife", "status", "vegetarian")}),
    ("i'm vegan", {(USER, "status", "vegan")}),
    ("we're remote", {(TEAM, "status", "remote")}),
    ("my mom's birthday is May 4th", {("mom", "birthday", "may 4th")}),
    ("my favorite editor is Neovim", {(USER, "favorite_editor", "neovim")}),
    ("I moved to Berlin last year", {(USER, "moved_to", "berlin")}),
    ("my dog is called Biscuit", {("dog", "name", "biscuit")}),
    ("my partner works at a hospital", {("partner", "works_at", "hospital")}),
    ("I prefer tabs over spaces", {(USER, "prefers", "tabs")}),
    ("The dentist appointment was moved to Friday", {("dentist appointment", "moved_to", "friday")}),
    # -- facts that ended ("not ... anymore", "no longer") ----------------------------------------------------
    ("billing doesn't use Redis anymore", {("billing", "uses", "redis")}),
    ("Priya no longer owns billing", {("priya", "owns", "billing")}),
    ("I'm not vegetarian anymore", {(USER, "status", "vegetarian")}),
    ("Tom doesn't lead the infra team anymore, Ana does", {("tom", "leads", "infra team")}),
    ("Jenkins is gone, we're on Buildkite now", {(TEAM, "uses", "buildkite")}),
    # -- negatives: questions, how-to, requests, hypotheticals, hedges, chit-chat, vague statements -------------
    ("is the billing service using Redis?", set()),
    ("what does auth use?", set()),
    ("what database does billing use", set()),
    ("does the api depend on Redis", set()),
    ("how do I make the api use Postgres", set()),
    ("Why is the build so slow", set()),
    ("should the cache live in Redis?", set()),
    ("use Postgres for billing", set()),
    ("please rename the file to main.py", set()),
    ("can you check if billing depends on Redis", set()),
    ("maybe we should use Redis", set()),
    ("we might move the frontend to Netlify", set()),
    ("we will migrate to Kubernetes next quarter", set()),
    ("if we switch to Postgres we need a migration", set()),
    ("let's use Postgres", set()),
    ("I think billing uses Postgres", set()),
    ("I wonder if Priya owns billing", set()),
    ("billing uses Postgres, I think", set()),
    ("the cache is Redis, Sarah said", set()),
    ("I'm not sure whether auth depends on Redis", set()),
    ("billing doesn't use Redis", set()),
    ("Priya doesn't own billing", set()),
    ("we used to use MySQL", set()),
    ("thanks, that works!", set()),
    ("lol nice", set()),
    ("the weather is nice today", set()),
    ("I'm tired", set()),
    ("I'm done", set()),
    ("I'm free tomorrow", set()),
    ("it depends", set()),
    ("it uses a lot of memory", set()),
    ("this is a thing", set()),
    ("hmm 🤔", set()),
    ("This code uses a global variable which is bad", set()),
    ("we are using too much memory", set()),
    ("I'm working on the migration script today", set()),
    ("the build is broken again", set()),
    ("The problem is the timeout", set()),
    ("I was using Docker yesterday", set()),
    ("tests run on every push", set()),
    ("I live in neovim", set()),
    ("```\nbilling uses postgres\n```", set()),
]


@pytest.mark.parametrize("text,expected", CASES, ids=[text[:48] for text, _ in CASES])
def test_extracts_expected_triples(extractor, text, expected):
    assert keys(extractor, text) == expected


def test_the_case_list_is_large_and_varied():
    positives = [text for text, expected in CASES if expected]
    negatives = [text for text, expected in CASES if not expected]
    assert len(positives) >= 50 and len(negatives) >= 20
    assert sum(text == text.lower() for text in positives) >= 10  # lower-case, chat-style
    assert sum(not text.rstrip().endswith((".", "!", "?")) for text in positives) >= 30  # no final punctuation
    assert sum("`" in text for text in positives) >= 2 and sum("/" in text for text in positives) >= 2
    predicates = {p for _, expected in CASES for _, p, _ in expected}
    assert len(predicates) >= 20
    assert all(re.fullmatch(r"[a-z][a-z0-9_]{0,63}", p) for p in predicates)  # names the graph store accepts


# -- the fields ------------------------------------------------------------------------------------------------


def test_singular_predicates_supersede_and_plural_ones_accumulate(extractor):
    assert triple(extractor, "The API's database is MySQL.").singular
    assert triple(extractor, "we moved the frontend to Vercel").singular
    assert triple(extractor, "billing is owned by Priya").singular
    assert triple(extractor, "Kafka is deprecated").singular
    assert triple(extractor, "the staging database is Postgres 15").singular
    assert not triple(extractor, "The billing service uses Postgres 16.").singular
    assert not triple(extractor, "auth_service depends on Redis 7").singular
    assert not triple(extractor, "Priya owns billing.").singular
    assert not triple(extractor, "Kafka is a message broker").singular
    assert not triple(extractor, "the project's dependencies are numpy").singular  # a plural attribute


def test_change_kinds_and_previous_values(extractor):
    plain = triple(extractor, "The billing service uses Postgres 16.")
    assert plain.change == STATE and plain.previous_object is None
    assert triple(extractor, "`auth_service` depends on `libfoo` now").change == CHANGE
    assert triple(extractor, "we moved the frontend to Vercel").change == CHANGE
    switched = triple(extractor, "We switched from MySQL to Postgres for the billing service.")
    assert (switched.change, switched.previous_object, switched.previous_key) == (CHANGE, "MySQL", "mysql")
    instead = triple(extractor, "billing now uses Postgres instead of MySQL")
    assert (instead.change, instead.previous_key) == (CHANGE, "mysql")
    migrated = triple(extractor, "we migrated billing from MySQL to Postgres")
    assert migrated.previous_key == "mysql"
    renamed = triple(extractor, "The user-service repo was renamed to accounts-api.")
    assert renamed.change == RENAME and renamed.subject == "user-service repo" and renamed.object == "accounts-api"
    assert triple(extractor, "my dog is called Biscuit").change == STATE  # a name, not a rename
    for text in ("billing doesn't use Redis anymore", "Priya no longer owns billing", "I'm not vegetarian anymore"):
        assert triple(extractor, text).change == ENDED


def test_surfaces_keep_versions_identifiers_and_paths_and_keys_match_entities(extractor):
    versioned = triple(extractor, "The billing service uses Postgres 16.")
    assert (versioned.subject, versioned.object) == ("billing service", "Postgres 16")
    assert versioned.object_key == "postgresql 16"
    assert versioned.object_is_entity and not versioned.subject_is_entity
    code = triple(extractor, "`auth_service` depends on `libfoo` now")
    assert (code.subject, code.object) == ("auth_service", "libfoo") and code.subject_is_entity
    path = triple(extractor, "the config lives in `src/api/config.py`")
    assert path.object == "src/api/config.py" and path.object_is_entity
    analysis = extractor.analyze("We switched from MySQL to Postgres for the billing service.")
    entity_keys = {e.key for e in analysis.entities}
    assert analysis.triples[0].object_key in entity_keys and analysis.triples[0].previous_key in entity_keys
    not_entity = triple(extractor, "Priya owns billing.")
    assert not not_entity.object_is_entity and not_entity.object_key == "billing"


def test_user_and_team_subjects(extractor):
    assert triple(extractor, "I work at Stripe").subject == USER
    assert triple(extractor, "we deploy on Thursdays").subject == TEAM
    assert triple(extractor, "my team uses Linear for tickets").subject_key == TEAM
    assert triple(extractor, "our deploy day is Thursday").subject_key == TEAM


def test_several_sentences_and_clauses(extractor):
    text = (
        "Quick context: billing uses Postgres 16. Priya owns billing, and auth depends on Redis 7. What about search?"
    )
    assert keys(extractor, text) == {
        ("billing", "uses", "postgresql 16"),
        ("priya", "owns", "billing"),
        ("auth", "depends_on", "redis 7"),
    }


def test_normalise_key():
    assert normalise_key("The billing service") == "billing service"
    assert normalise_key("`src/api`") == "src/api"
    assert normalise_key("Priya's") == "priya"
    assert normalise_key("our  Deploy   day") == "deploy day"


# -- robustness and cost ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "🤔🤔🤔",
        "```python\ndef f():\n    return db.use(postgres)\n```",
        "a" * 5000,
        "billing uses Postgres. " * 400,
        "\x00\x01 weird \u202e text",
        "uses uses uses depends on on on",
        "X's Y's Z's is is is",
        "https://example.com/billing uses postgres?x=1",
    ],
)
def test_odd_input_never_raises(extractor, text):
    found = extractor.analyze(text).triples
    assert isinstance(found, tuple) and len(found) <= 16


def test_a_doc_without_a_parse_gives_no_triples():
    import spacy

    blank = spacy.blank("en")
    assert extract_triples(blank("billing uses Postgres")) == ()
    assert EntityExtractor(nlp=spacy.blank("en")).analyze("billing uses Postgres").triples == ()


def test_extraction_cost_beyond_the_parse_is_small(extractor):
    texts = [text for text, _ in CASES]
    docs = list(extractor.nlp.pipe(texts))
    entities = [extractor._analyze_doc(doc).entities for doc in docs]
    timings = []
    for _ in range(3):
        for doc, ents in zip(docs, entities):
            start = time.perf_counter()
            extract_triples(doc, ents)
            timings.append(time.perf_counter() - start)
    median = statistics.median(timings)
    print(f"triple extraction: median {median * 1e6:.0f} µs per message beyond the parse")
    assert median < 0.002


def test_preprocessing_triples_imports_no_store_or_rpc():
    code = (
        "import sys, preprocessing.triples\n"
        "bad = [m for m in ('memory_daemon', 'grpc', 'duckdb', 'spacy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parent.parent)
