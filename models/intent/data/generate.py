"""Build the intent dataset (train/val/test JSONL, DATASET.md) from hand-written messages and seeded template families."""

# Usage:  .venv/bin/python models/intent/data/generate.py
# Deterministic: the same SEED and the same inputs give byte-identical outputs.

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

SEED = 20250611
HERE = Path(__file__).resolve().parent
HANDWRITTEN = HERE / "handwritten.jsonl"
PINS = HERE / "split_pins.json"  # families of earlier releases and the split each must stay in

LABELS = ("SAVE_PREFERENCE", "SAVE_DECISION", "SAVE_FACT", "RECALL_INFO", "UPDATE_INFO", "QUESTION")
SPLITS = ("train", "val", "test")
SPLIT_SHARE = {"train": 0.8, "val": 0.1, "test": 0.1}

TARGET_PER_LABEL = 1090  # hand-written + template examples per label
# Groups of rounds written after test was first measured are pinned to train and do not count against the
# per-label budget, so adding them leaves every template family (and with it val and test) exactly as it was.
BUDGET_EXEMPT_GROUP_PREFIXES = ("r7-",)
FAMILY_CAP = 60  # no template family may contribute more than this
HW_AUG_RATE = 0.35  # share of hand-written messages that also get one augmented copy
TPL_AUG_RATE = 0.45  # share of template messages that get form variation


# --------------------------------------------------------------------------------------------------------------------
# Slot lists. Composite slots (lists of dicts) keep related values together, e.g. a tool with the task it is used for.
# --------------------------------------------------------------------------------------------------------------------

PEOPLE = [
    "Priya", "Bob", "Aiko", "Mateo", "Oluwaseun", "Fatima", "Lars", "Mei", "Dmitri", "Ananya", "Kwame", "Sofia",
    "Jin-woo", "Yusuf", "Chloé", "Tomasz", "Nia", "Rahul", "Ingrid", "Carlos", "Leila", "Hiroshi", "Amara",
    "Siobhan", "Thabo", "Zeynep", "Giulia", "Minh", "Ravi", "Ayesha", "Kofi", "Elena", "Mohammed", "Beatriz", "Sven",
    "Hana", "Diego", "Olga", "Tariq", "Wanjiru", "Maya", "Ethan", "Noor", "Kenji", "Lucía", "Farhan", "Ewa", "Tunde",
    "Astrid", "Javier", "Mariam", "Arjun", "Rosa", "Ikechukwu", "Yuki", "Sami", "Dara", "Pedro", "Camille", "Anya",
]
SURNAMES = ["Okafor", "Nakamura", "Silva", "Kowalski", "Haddad", "Patel", "Müller", "Nguyen", "Mensah", "García",
            "O'Brien", "Lindqvist", "Rossi", "Petrov", "Kim", "Adeyemi", "Chen", "Yilmaz", "Fernandes", "Dubois"]
RELATIONS = ["sister", "brother", "mom", "dad", "wife", "husband", "partner", "son", "daughter", "grandma", "grandpa",
             "uncle", "aunt", "cousin", "best friend", "roommate", "niece", "nephew", "stepdad", "mother-in-law"]
WORK_RELATIONS = ["manager", "boss", "tech lead", "cofounder", "skip-level", "mentor", "PM", "designer"]
CITIES = ["Lisbon", "Nairobi", "Osaka", "Toronto", "São Paulo", "Berlin", "Lagos", "Mumbai", "Melbourne", "Reykjavik",
          "Austin", "Seoul", "Warsaw", "Cape Town", "Mexico City", "Dublin", "Istanbul", "Hanoi", "Oslo", "Denver",
          "Accra", "Bogotá", "Kraków", "Manila", "Porto", "Chennai", "Vancouver", "Edinburgh", "Tbilisi", "Montréal"]
TIMEZONES = ["CET", "Pacific time", "IST", "GMT+3", "the Eastern timezone", "JST", "UTC-3", "AEST", "WAT", "UTC+8"]
PROJECTS = ["billing-service", "auth-gateway", "Atlas", "checkout", "search-indexer", "Nimbus", "payments-api",
            "the data pipeline", "Orion", "the admin dashboard", "ingest-worker", "Hermes", "the iOS app",
            "the docs site", "the infra repo", "Kestrel", "Lighthouse", "the Android app", "notification-service",
            "Beacon", "the ETL jobs", "Sparrow", "ledger", "the onboarding flow", "Quokka"]
NEW_NAMES = ["Polaris", "Tern", "Juniper", "Halcyon", "Basalt", "Meridian", "Cobalt", "Wren", "Marlin", "Sable"]
TEAMS = ["platform", "payments", "growth", "SRE", "data", "mobile", "security", "infra", "design", "QA", "frontend",
         "ML", "billing", "identity", "developer experience"]
DATES = ["Friday", "the 14th", "March 3rd", "next Tuesday", "the end of Q3", "June 30th", "the 21st", "Monday",
         "November 12th", "the first week of May", "the 2nd", "April 18th", "mid-September", "Thursday the 9th",
         "the 28th", "January 15th", "the end of the month", "the week after next", "Oct 7", "2 December"]
CAL_DATES = ["March 3rd", "June 30th", "12 October", "Nov 12", "the 4th of July", "21 February", "August 9th",
             "January 27th", "5 May", "September 18", "December 1st", "April 23rd", "the 15th of March", "July 2nd"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
WEEKDAYS = DAYS[:5]
CLOCK = ["9:30", "10am", "11:15", "4pm", "8:45", "2:30pm", "noon", "9am", "3pm", "10:30"]
DBS = ["Postgres", "MySQL", "SQLite", "DuckDB", "MongoDB", "Redis", "DynamoDB", "ClickHouse", "Cassandra",
       "CockroachDB", "Elasticsearch", "MariaDB", "Firestore", "Supabase", "PlanetScale"]
DB_PURPOSES = ["sessions", "the event log", "analytics", "the job queue", "user profiles", "caching", "search",
               "the audit trail", "feature flags", "time-series metrics", "the product catalog", "rate limiting"]
LANGS = ["Python", "TypeScript", "Go", "Rust", "Kotlin", "Java", "C#", "Ruby", "Elixir", "Swift", "Scala", "PHP",
         "Haskell", "Zig", "C++", "Dart", "Clojure", "OCaml"]
LANG_PURPOSES = ["scripting", "CLIs", "backend services", "data work", "quick prototypes",
                 "anything performance-sensitive", "glue code", "side projects", "infra tooling"]
FRAMEWORKS = ["Django", "FastAPI", "Flask", "Rails", "Next.js", "Remix", "SvelteKit", "Spring Boot", "Phoenix",
              "Laravel", "Express", "NestJS", "Vue", "React", "Angular", "Astro", "Nuxt", "Gin", "Axum", "Ktor"]
CLOUDS = ["AWS", "GCP", "Azure", "Fly.io", "Vercel", "Netlify", "Heroku", "Cloudflare", "Hetzner", "DigitalOcean",
          "Render", "Railway", "OVH"]
CI = ["GitHub Actions", "GitLab CI", "Buildkite", "CircleCI", "Jenkins", "Drone", "TeamCity"]
HOSTS = ["db-stg-2", "db-prod-1", "redis-cache-01", "api.internal", "k8s-prod-eu", "build-box-3", "10.0.3.12",
         "pg-replica-4", "mq-01.internal", "vault.corp.local", "es-logs-2", "gw-edge-7", "192.168.1.40", "db-stg-3",
         "ci-runner-5", "pg-main.internal", "db-qa-1", "cache-eu-2"]
PORTS = ["8080", "5432", "3000", "6379", "9090", "8443", "5000", "4000", "8000", "9200", "27017", "3306", "7000",
         "8888", "5173", "8081", "9443"]
ENVS = ["staging", "prod", "dev", "QA", "sandbox", "preprod", "demo"]
SERVICES = ["the API", "the auth service", "Grafana", "the admin panel", "the webhook receiver",
            "the metrics exporter", "the gRPC gateway", "the dev server", "the queue worker", "the search API"]
CLUSTERS = ["k8s-prod-eu", "gke-main", "eks-staging-1", "aks-dev", "nomad-west", "k3s-homelab", "eks-prod-us"]
REGIONS = ["eu-west-1", "us-east-1", "ap-southeast-2", "europe-west4", "us-central1", "eu-central-1",
           "ap-northeast-1", "sa-east-1"]
FOODS = ["sushi", "spicy food", "Thai curry", "dark chocolate", "black coffee", "green tea", "oat milk lattes",
         "sourdough", "ramen", "pho", "tacos al pastor", "jollof rice", "dosa", "pierogi", "falafel", "kimchi",
         "matcha", "injera", "shakshuka", "bánh mì"]
BAD_FOODS = ["cilantro", "mushrooms", "olives", "raisins", "mayo", "licorice", "blue cheese", "durian", "okra",
             "anchovies", "coconut", "beetroot", "pickles"]
ALLERGENS = ["peanuts", "shellfish", "penicillin", "cats", "tree nuts", "gluten", "sesame", "bee stings", "latex",
             "eggs", "soy", "pollen", "ibuprofen"]
CONDITIONS = ["asthma", "celiac disease", "ADHD", "type 1 diabetes", "a bad knee", "migraines", "tinnitus",
              "red-green color blindness", "a shellfish allergy", "high blood pressure"]
HOBBIES = ["bouldering", "chess", "running", "pottery", "birdwatching", "salsa dancing", "cycling",
           "baking sourdough", "film photography", "surfing", "knitting", "hiking", "playing the cello",
           "woodworking", "trail running", "board games", "gardening", "swimming", "calligraphy", "jiu-jitsu",
           "sim racing", "crossword puzzles"]
ANIMALS = ["cat", "dog", "rabbit", "parrot", "hamster", "gecko", "tortoise", "corgi", "beagle", "guinea pig"]
PET_NAMES = ["Miso", "Pepper", "Biscuit", "Luna", "Mochi", "Kafka", "Nacho", "Simba", "Pixel", "Tofu", "Chai",
             "Ziggy", "Noodle", "Olive", "Bruno", "Sushi", "Kiwi"]
NAT_LANGS = ["French", "Spanish", "German", "Portuguese", "Japanese", "Hindi", "Swahili", "Polish", "Korean",
             "Arabic", "Turkish", "Italian", "Dutch", "Vietnamese", "Tagalog", "Yoruba", "Ukrainian"]
COMPANIES = ["Stripe", "Shopify", "a small fintech", "Acme Corp", "Globex", "Initech", "Zalando", "Nubank", "Canva",
             "Atlassian", "Flutterwave", "Rakuten", "Monzo", "Spotify", "the city hospital", "the university",
             "Mercado Libre", "Grab", "a logistics startup"]
ROLES = ["backend engineer", "staff engineer", "data scientist", "product manager", "SRE", "engineering manager",
         "designer", "frontend dev", "ML engineer", "security engineer", "QA lead", "CTO", "nurse", "teacher",
         "accountant", "solutions architect"]
CHANNELS = ["Slack", "Signal", "WhatsApp", "email", "Telegram", "a phone call", "Teams", "text", "Discord"]
GOOD_TIMES = ["early in the morning", "late at night", "after 9pm", "before lunch", "between 6 and 8am",
              "after the kids are asleep", "on weekend mornings", "in the afternoons"]
BAD_TIMES = ["before 10am", "on Fridays", "after 5pm", "over lunch", "on Monday mornings", "on weekends",
             "after 6", "before 9"]
EDITORS = ["neovim", "VS Code", "Emacs", "IntelliJ", "Zed", "Helix", "Sublime Text", "vim", "Cursor"]
EDITOR_SETTINGS = ["dark mode", "a light theme", "vim keybindings", "a huge font", "relative line numbers",
                   "word wrap off", "ligatures", "a split layout"]
CARS = ["a Corolla", "a Tesla Model 3", "a VW Golf", "an old Civic", "a Kia EV6", "a Subaru Outback",
        "a Fiat Panda", "a Prius", "a cargo bike, no car"]
LAPTOPS = ["MacBook Air M2", "ThinkPad X1", "Framework 13", "Dell XPS 15", "MacBook Pro 14", "ThinkPad T14"]
OPTIONS = ["option A", "option B", "option C", "the second approach", "plan B", "the simpler version",
           "the first proposal", "Ravi's proposal", "the cheaper vendor", "the blue design", "the hybrid approach",
           "the 3-month plan", "the lighter migration", "Fatima's design"]
KEEPS = ["the monorepo", "REST", "the current CI", "the old auth flow", "Jenkins", "the cron jobs",
         "the Python backend", "our own Kafka cluster", "the weekly release train", "manual QA for payments",
         "the current pricing", "the existing schema", "the on-prem runners", "Terraform"]
FEATURES = ["dark mode", "SSO", "the mobile redesign", "offline sync", "multi-currency support", "the plugin system",
            "GraphQL", "i18n", "the public API", "two-factor auth", "CSV export", "the referral program",
            "audit logs", "the Slack integration"]
CADENCES = ["every two weeks", "every Tuesday", "weekly", "monthly", "on demand", "twice a week", "every sprint"]
API_STYLES = ["REST", "GraphQL", "gRPC", "JSON-RPC", "webhooks plus REST"]
TIMEFRAMES = ["last week", "yesterday", "in the last sprint", "this month", "at the offsite", "on Monday",
              "in the planning meeting", "in Q2"]
TOPICS = ["the deploy window", "the staging DB", "my sister's visit", "the billing migration", "indentation",
          "the offsite", "the API rate limits", "my allergies", "the Lisbon trip", "the on-call schedule",
          "naming conventions", "the budget", "the hiring plan", "the mobile release", "the dentist",
          "the kids' school", "the logging setup", "error handling", "the Q3 roadmap", "my running plan"]
REC_CATEGORIES = ["database", "framework", "CI provider", "hosting provider", "message queue", "auth library",
                  "logging stack", "charting library", "ORM", "feature flag service"]
THINGS = ["book", "restaurant", "podcast", "library", "hotel", "dentist", "plumber", "course", "VS Code extension"]
NUMBERS = ["3", "4", "5", "6", "7", "8", "9", "12", "15", "20", "25", "40"]
AMOUNTS = ["$50k", "€120k", "£30k", "$2,000 a month", "₹8 lakh", "$15k", "R40,000"]
VAULT_PATHS = ["secret/billing/stripe", "kv/prod/api-keys", "1Password under 'Infra'", "the team vault",
               "AWS Secrets Manager under prod/payments", "secret/data/ingest"]
SLACK_CHANNELS = ["#billing-eng", "#plat-oncall", "#growth-squad", "#infra-alerts", "#mobile-dev", "#data-eng"]
CLASSES = ["yoga", "Spanish class", "choir practice", "a pottery class", "therapy", "swim lessons",
           "a climbing session", "band practice"]
PERSONAL_DECISIONS = [
    "take the offer from Canva", "move to Porto next spring", "sell the car", "start therapy",
    "run the Berlin half marathon", "learn Japanese this year", "put the kids in the bilingual school",
    "rent instead of buying", "take August off", "adopt the beagle from the shelter",
    "go back to school for a master's", "have the wedding in Lagos", "quit the side project",
    "switch the kids to the morning daycare", "turn down the promotion", "spend Christmas with my in-laws",
    "buy the house in Kraków", "go part-time from September",
]
INSTEAD_PAIRS = [
    {"a": "pathlib", "b": "os.path"}, {"a": "httpx", "b": "requests"}, {"a": "f-strings", "b": "% formatting"},
    {"a": "fetch", "b": "axios"}, {"a": "dataclasses", "b": "namedtuples"}, {"a": "logging", "b": "print statements"},
    {"a": "zod", "b": "yup"}, {"a": "date-fns", "b": "moment"}, {"a": "pnpm", "b": "npm"},
    {"a": "async/await", "b": "raw promises"}, {"a": "CSS grid", "b": "flexbox hacks"}, {"a": "SQL", "b": "the ORM"},
    {"a": "Makefiles", "b": "shell scripts"}, {"a": "structlog", "b": "the stdlib logger"},
    {"a": "named exports", "b": "default exports"}, {"a": "kilometres", "b": "miles"},
    {"a": "Celsius", "b": "Fahrenheit"},
]
SUBJECTS = ["physics", "economics", "law", "fine art", "mechanical engineering", "biology", "philosophy",
            "computer science", "music", "linguistics", "nursing", "architecture"]
COMPONENTS = ["React app", "API", "CLI", "worker", "admin UI", "SDK", "proto files", "e2e tests", "infra code"]
ENTRYPOINTS = ["`main.py`", "`src/index.ts`", "`cmd/server/main.go`", "`app/main.py`", "`src/main.rs`",
               "`bin/run`", "`server.js`"]
FLIGHTS = ["TP 1234", "LH 401", "KQ 100", "EK 29", "BA 117", "JL 44", "ET 500", "AC 870"]
TOOL_CONFIGS = [
    {"tool": "prettier", "setting": "use single quotes"}, {"tool": "eslint", "setting": "allow unused args"},
    {"tool": "black", "setting": "use a 100-char line length"}, {"tool": "ruff", "setting": "sort imports"},
    {"tool": "git", "setting": "always rebase on pull"}, {"tool": "VS Code", "setting": "format on save"},
    {"tool": "tmux", "setting": "use vim keys"}, {"tool": "zsh", "setting": "show the git branch"},
    {"tool": "pytest", "setting": "stop on the first failure"}, {"tool": "tsc", "setting": "be stricter"},
    {"tool": "neovim", "setting": "use 2-space indents for YAML"}, {"tool": "npm", "setting": "use pnpm by default"},
]
SVC_NAMES = ["Polaris", "ledger-sync", "Tern", "edge-auth", "Juniper", "blobkeeper", "Halcyon", "notifyd"]
CONFIG_FORMATS = ["TOML", "YAML", "JSON5", "plain env vars", "HCL"]
PAGINATION = ["cursor-based pagination", "offset pagination", "keyset pagination"]
ID_STYLES = ["UUIDv7", "ULIDs", "snowflake IDs", "prefixed IDs like usr_123"]
DISLIKES = ["tabs", "semicolons in JS", "ORMs", "giant PRs", "emojis in commit messages", "nested ternaries",
            "camelCase in Python", "magic numbers", "default exports", "notebooks checked into the repo",
            "mocks everywhere", "YAML configs", "one-letter variable names", "deep inheritance trees",
            "long-winded answers", "getters and setters for everything", "global state", "Friday deploys",
            "auto-generated docstrings", "meetings before 10am", "dark patterns in UIs", "ALL CAPS log messages"]
STYLES = ["4-space indents", "2-space indents", "single quotes", "double quotes", "trailing commas",
          "type hints everywhere", "early returns", "small focused functions", "f-strings over .format()",
          "descriptive variable names", "composition over inheritance", "100-character lines",
          "pure functions where possible", "explicit imports", "dataclasses over dicts", "guard clauses",
          "kebab-case file names", "tests next to the code", "comments that explain the why", "tabs over spaces"]
RESPONSE_STYLES = ["short answers", "bullet points", "code first and the explanation after", "no emojis",
                   "British spelling", "metric units", "24-hour time", "a TL;DR at the top", "step-by-step answers",
                   "plain English without jargon", "answers under 200 words", "no apologies, just the fix",
                   "full files instead of diffs", "diffs instead of full files"]
WORKFLOWS = ["rebase instead of merging", "squash commits before merging", "write conventional commit messages",
             "keep PRs small", "put risky changes behind feature flags", "open draft PRs first", "sign commits",
             "write the test first", "run the full suite before pushing", "pair on anything touching payments"]
SEATS = ["aisle seats", "window seats", "the earliest flight", "the quiet carriage", "hotels near the station"]
STANDING_CMDS = ["`make lint`", "`pnpm test`", "`cargo clippy`", "`ruff check .`", "`go vet ./...`",
                 "`npm run typecheck`", "the formatter", "`pytest -x`", "the pre-commit hooks"]
STANDING_AREAS = ["the billing code", "the auth module", "migrations", "anything in /api", "the parser",
                  "the payment webhooks", "the CLI", "the date handling"]
STANDING_FILES = ["package.json", "the Dockerfile", ".env.example", "the CI config", "schema.prisma",
                  "the Makefile", "the lockfile", "the Helm charts"]
TEST_FWS = ["pytest", "Vitest", "Jest", "Playwright", "testify", "RSpec", "JUnit 5", "ExUnit"]
BRANCHES = ["main", "master", "release", "prod", "develop"]
DIRS = ["src/routes", "api/v2", "internal/handlers", "app/endpoints", "services/api"]

TOOL_TASKS = [
    {"tool": "pnpm", "task": "installing packages"}, {"tool": "ruff", "task": "linting"},
    {"tool": "black", "task": "formatting Python"}, {"tool": "prettier", "task": "formatting TypeScript"},
    {"tool": "pytest", "task": "tests"}, {"tool": "Vitest", "task": "frontend tests"},
    {"tool": "uv", "task": "managing virtualenvs"}, {"tool": "poetry", "task": "dependency management"},
    {"tool": "ripgrep", "task": "searching code"}, {"tool": "httpie", "task": "poking at APIs"},
    {"tool": "tmux", "task": "long-running sessions"}, {"tool": "lazygit", "task": "git stuff"},
    {"tool": "docker compose", "task": "local services"}, {"tool": "just", "task": "task running"},
    {"tool": "Playwright", "task": "e2e tests"}, {"tool": "mypy", "task": "type checking"},
    {"tool": "k9s", "task": "poking at the cluster"}, {"tool": "Obsidian", "task": "notes"},
    {"tool": "Excalidraw", "task": "diagrams"}, {"tool": "Figma", "task": "mockups"},
    {"tool": "jq", "task": "JSON wrangling"}, {"tool": "fzf", "task": "finding files"},
    {"tool": "Bruno", "task": "API testing"}, {"tool": "Todoist", "task": "to-dos"},
    {"tool": "Google Calendar", "task": "scheduling"}, {"tool": "Bun", "task": "running scripts"},
]
SWITCHES = [
    {"old": "npm", "new": "pnpm"}, {"old": "yarn", "new": "pnpm"}, {"old": "webpack", "new": "Vite"},
    {"old": "Jenkins", "new": "GitHub Actions"}, {"old": "CircleCI", "new": "Buildkite"},
    {"old": "Heroku", "new": "Fly.io"}, {"old": "MySQL", "new": "Postgres"}, {"old": "REST", "new": "gRPC"},
    {"old": "Jest", "new": "Vitest"}, {"old": "pip", "new": "uv"}, {"old": "flake8", "new": "ruff"},
    {"old": "MongoDB", "new": "Postgres"}, {"old": "Slack", "new": "Teams"}, {"old": "Jira", "new": "Linear"},
    {"old": "Confluence", "new": "Notion"}, {"old": "Terraform", "new": "Pulumi"},
    {"old": "Docker Swarm", "new": "Kubernetes"}, {"old": "Sentry", "new": "Datadog"},
    {"old": "Trello", "new": "Linear"}, {"old": "Gmail", "new": "Fastmail"}, {"old": "Spotify", "new": "Tidal"},
    {"old": "Celery", "new": "Temporal"}, {"old": "Redux", "new": "Zustand"}, {"old": "Poetry", "new": "uv"},
]
NICKNAMES = [
    {"full": "Samantha", "nick": "Sam"}, {"full": "Alexander", "nick": "Alex"}, {"full": "Oluwaseun", "nick": "Seun"},
    {"full": "Jonathan", "nick": "Jon"}, {"full": "Katarzyna", "nick": "Kasia"}, {"full": "Muhammad", "nick": "Mo"},
    {"full": "Elizabeth", "nick": "Liz"}, {"full": "Siddharth", "nick": "Sid"}, {"full": "Francesca", "nick": "Fran"},
    {"full": "Guillermo", "nick": "Memo"}, {"full": "Aleksandr", "nick": "Sasha"}, {"full": "Rafael", "nick": "Rafa"},
    {"full": "Margaret", "nick": "Maggie"}, {"full": "Takahiro", "nick": "Taka"}, {"full": "Ananya", "nick": "Anu"},
    {"full": "Dorothea", "nick": "Dot"}, {"full": "Nkechi", "nick": "Kechi"}, {"full": "Bartholomew", "nick": "Bart"},
]
CORRECTIONS = [
    {"topic": "the staging port", "wrong": "5432", "right": "5433"},
    {"topic": "my sister's birthday", "wrong": "the 12th", "right": "the 21st"},
    {"topic": "the deploy window", "wrong": "Tuesdays", "right": "Thursdays"},
    {"topic": "Bob's surname", "wrong": "Smith", "right": "Smyth"},
    {"topic": "the budget", "wrong": "$40k", "right": "$45k"},
    {"topic": "the prod region", "wrong": "eu-west-1", "right": "eu-central-1"},
    {"topic": "my flight", "wrong": "Friday", "right": "Saturday"},
    {"topic": "the team size", "wrong": "eight", "right": "nine"},
    {"topic": "the API version", "wrong": "v2", "right": "v3"},
    {"topic": "the meeting room", "wrong": "4B", "right": "4D"},
    {"topic": "Aiko's team", "wrong": "mobile", "right": "platform"},
    {"topic": "my cat's age", "wrong": "three", "right": "four"},
    {"topic": "the Redis host", "wrong": "redis-01", "right": "redis-02"},
    {"topic": "Mateo's extension", "wrong": "4411", "right": "4471"},
    {"topic": "the invoice number", "wrong": "INV-2231", "right": "INV-2213"},
    {"topic": "the node version", "wrong": "18", "right": "20"},
]
FACT_SNIPPETS = [
    "staging is db-stg-2", "the API runs on port 8080", "Priya owns billing", "prod lives in eu-west-1",
    "our Sentry org is acme-eng", "the design system lives in the ui-kit repo", "Bob is the on-call lead for infra",
    "the VPN is required for the staging DB", "our default branch is main", "the cron runs at 02:00 UTC",
    "we use Node 20 everywhere", "the Grafana dashboards are under Platform/Core", "my laptop runs Fedora",
    "the bucket for exports is s3://acme-exports", "Mei handles vendor contracts",
]
LANG_CREATORS = [
    {"lang": "Python", "who": "Guido van Rossum"}, {"lang": "Ruby", "who": "Matz"},
    {"lang": "Linux", "who": "Linus Torvalds"}, {"lang": "C++", "who": "Bjarne Stroustrup"},
    {"lang": "Elixir", "who": "José Valim"}, {"lang": "JavaScript", "who": "Brendan Eich"},
    {"lang": "Rust", "who": "Graydon Hoare"}, {"lang": "Clojure", "who": "Rich Hickey"},
    {"lang": "Perl", "who": "Larry Wall"}, {"lang": "PHP", "who": "Rasmus Lerdorf"},
    {"lang": "Swift", "who": "Chris Lattner"}, {"lang": "C#", "who": "Anders Hejlsberg"},
    {"lang": "Scala", "who": "Martin Odersky"}, {"lang": "Git", "who": "Linus Torvalds"},
]
CAPITALS = [
    {"country": "Peru", "city": "Lima"}, {"country": "Kenya", "city": "Nairobi"},
    {"country": "Australia", "city": "Canberra"}, {"country": "Canada", "city": "Ottawa"},
    {"country": "Vietnam", "city": "Hanoi"}, {"country": "Nigeria", "city": "Abuja"},
    {"country": "Brazil", "city": "Brasília"}, {"country": "Turkey", "city": "Ankara"},
    {"country": "Morocco", "city": "Rabat"}, {"country": "New Zealand", "city": "Wellington"},
    {"country": "Pakistan", "city": "Islamabad"}, {"country": "Switzerland", "city": "Bern"},
    {"country": "Ghana", "city": "Accra"}, {"country": "Kazakhstan", "city": "Astana"},
]
DB_DEFAULT_PORTS = [
    {"db": "Postgres", "port": "5432"}, {"db": "MySQL", "port": "3306"}, {"db": "Redis", "port": "6379"},
    {"db": "MongoDB", "port": "27017"}, {"db": "Elasticsearch", "port": "9200"}, {"db": "ClickHouse", "port": "8123"},
]
CODE_TASKS = ["parses a CSV", "dedupes a list while keeping order", "retries HTTP calls with backoff",
              "validates email addresses", "converts timestamps to UTC", "flattens nested dicts",
              "reads env vars with defaults", "computes a moving average", "paginates through an API",
              "resizes images in a folder", "diffs two JSON files", "rate-limits a function"]
CODE_FNS = ["`store.save()`", "`cache.remember()`", "`prefs.update()`", "`memory.recall()`", "`session.commit()`",
            "`repo.persist(user)`", "`localStorage.setItem`", "`settings.save_preferences()`", "`db.upsert()`",
            "`useMemo`", "`functools.lru_cache`", "`@Cacheable`"]
ERRORS = ["ModuleNotFoundError", "ECONNREFUSED", "a segfault", "OOMKilled", "permission denied",
          "'cannot find module'", "a CORS error", "`TypeError: undefined is not a function`", "exit code 137",
          "a NullPointerException", "SSL handshake failed", "`relation \"users\" does not exist`", "a 502",
          "`borrowed value does not live long enough`"]
CMDS = ["`npm install`", "`docker compose up`", "`terraform plan`", "`pytest`", "`cargo build`", "`go test ./...`",
        "`kubectl apply -f .`", "`make`", "`bundle exec rspec`", "`pnpm dev`"]
CONCEPTS = ["event sourcing", "CRDTs", "optimistic locking", "the CAP theorem", "vector clocks", "B-trees",
            "consistent hashing", "dependency injection", "monads", "async/await", "a write-ahead log",
            "backpressure", "idempotency keys", "sharding", "feature flags", "row-level security", "HNSW"]
QUICK_TASKS = ["run the linter", "update the changelog", "add tests", "bump the version", "rebase on main",
               "close the old PR", "regenerate the lockfile", "update the docs", "remove the debug prints",
               "tag the release", "squash the commits", "delete the temp branch"]
MODULES = ["the auth module", "utils/dates.py", "the cart reducer", "the payment webhook handler", "parser.go",
           "the retry helper", "UserService", "the CSV importer"]
IDENTIFIERS = [{"a": "`usr`", "b": "`user`"}, {"a": "`data`", "b": "`payload`"}, {"a": "`cfg`", "b": "`config`"},
               {"a": "`tmp`", "b": "`buffer`"}, {"a": "`getData`", "b": "`fetchOrders`"}]
TRANSIENT = ["the build is red again", "staging is down right now", "my tests are flaky today",
             "the deploy is taking forever", "I'm exhausted today", "this bug is killing me",
             "CI has been queued for 20 minutes", "prod looks slow this morning", "the wifi here is terrible",
             "I'm stuck on the migration", "Docker ate all my disk space again", "finally got it compiling"]


@dataclass(frozen=True)
class Family:
    """One intent shape: paraphrase templates of a single label plus the slot lists they draw from."""

    id: str
    label: str
    templates: tuple[str, ...]
    slots: dict[str, list] = field(default_factory=dict)


SHARED_SLOTS: dict[str, list] = {
    "name": PEOPLE, "surname": SURNAMES, "rel": RELATIONS, "workrel": WORK_RELATIONS, "city": CITIES,
    "tz": TIMEZONES, "project": PROJECTS, "newname": NEW_NAMES, "team": TEAMS, "date": DATES, "caldate": CAL_DATES,
    "month": MONTHS, "day": DAYS, "weekday": WEEKDAYS, "clock": CLOCK, "db": DBS, "purpose": DB_PURPOSES,
    "lang": LANGS, "langpurpose": LANG_PURPOSES, "fw": FRAMEWORKS, "cloud": CLOUDS, "ci": CI, "host": HOSTS,
    "port": PORTS, "env": ENVS, "svc": SERVICES, "cluster": CLUSTERS, "region": REGIONS, "food": FOODS,
    "badfood": BAD_FOODS, "allergen": ALLERGENS, "cond": CONDITIONS, "hobby": HOBBIES, "animal": ANIMALS,
    "pet": PET_NAMES, "petage": ["1", "2", "3", "4", "5", "7", "9", "11", "13"],
    "hours": ["2", "3", "4", "5",
    "6"], "nl": NAT_LANGS, "company": COMPANIES, "role": ROLES, "ch": CHANNELS, "goodtime": GOOD_TIMES,
    "badtime": BAD_TIMES, "editor": EDITORS, "setting": EDITOR_SETTINGS, "car": CARS, "laptop": LAPTOPS,
    "option": OPTIONS, "keep": KEEPS, "feature": FEATURES, "cadence": CADENCES, "api": API_STYLES,
    "timeframe": TIMEFRAMES, "topic": TOPICS, "cat": REC_CATEGORIES, "thing": THINGS, "n": NUMBERS,
    "amount": AMOUNTS, "vault": VAULT_PATHS, "chan": SLACK_CHANNELS, "klass": CLASSES, "pdec": PERSONAL_DECISIONS,
    "svcname": SVC_NAMES, "fmt": CONFIG_FORMATS, "pag": PAGINATION, "idstyle": ID_STYLES, "dislike": DISLIKES,
    "style": STYLES, "rstyle": RESPONSE_STYLES, "wf": WORKFLOWS, "seat": SEATS, "cmd": STANDING_CMDS,
    "area": STANDING_AREAS, "file": STANDING_FILES, "testfw": TEST_FWS, "branch": BRANCHES, "dir": DIRS,
    "tt": TOOL_TASKS, "sw": SWITCHES, "nick": NICKNAMES, "corr": CORRECTIONS, "fact": FACT_SNIPPETS,
    "lc": LANG_CREATORS, "cap": CAPITALS, "dbport": DB_DEFAULT_PORTS, "codetask": CODE_TASKS, "fn": CODE_FNS,
    "err": ERRORS, "runcmd": CMDS, "concept": CONCEPTS, "qtask": QUICK_TASKS, "module": MODULES,
    "ident": IDENTIFIERS, "transient": TRANSIENT, "instead": INSTEAD_PAIRS, "subject": SUBJECTS,
    "component": COMPONENTS, "entry": ENTRYPOINTS, "flight": FLIGHTS, "toolcfg": TOOL_CONFIGS,
}
# Slots whose values read as code and may be wrapped in backticks by form variation.
CODE_SLOTS = {"host", "port", "tt.tool", "sw.old", "sw.new", "cluster", "region", "branch", "dir"}


def F(fid: str, label: str, *templates: str, **slots: list) -> Family:
    """Family shorthand, so the catalogue below reads as data."""
    return Family(fid, label, tuple(templates), dict(slots))


P, D, FA, R, U, Q = LABELS

FAMILIES: list[Family] = [
    # ---------------------------------------------------------------- SAVE_PREFERENCE
    F("pref-tool-for-task", P,
      "I always use {tt.tool} for {tt.task}", "for {tt.task} I stick with {tt.tool}",
      "my go-to for {tt.task} is {tt.tool}",
      "{tt.tool} for {tt.task}, always.", "please default to {tt.tool} whenever it's {tt.task}",
      "I'd rather use {tt.tool} for {tt.task}, every time", "when it comes to {tt.task}, {tt.tool} is what I use",
      "use {tt.tool} for {tt.task} from now on", "I'm a {tt.tool} person when it comes to {tt.task}",
      "For {tt.task}: {tt.tool}. Always."),
    F("pref-dislike", P,
      "I hate {dislike}.", "can't stand {dislike} tbh", "not a fan of {dislike}, keep that out of my stuff",
      "no {dislike} please, ever", "I really dislike {dislike}", "{dislike}? hard pass for me, always",
      "do me a favour and never give me {dislike}", "personally I loathe {dislike}",
      "strong dislike of {dislike} here, just so you know", "Please avoid {dislike} in anything you write for me."),
    F("pref-code-style", P,
      "I prefer {style}", "{style}, please, in all my code", "use {style} in anything you write for me",
      "stick to {style} in my code", "I like {style}", "always go with {style} for me",
      "can you stick to {style} going forward?", "heads up: I'm picky about {style}",
      "I'm strongly in favour of {style}", "my rule of thumb is {style}", "{style} > everything else, for me"),
    F("pref-reply-language", P,
      "from now on answer in {nl}", "please reply in {nl} going forward", "can you always respond in {nl}?",
      "switch to {nl} for all your answers please", "I'd like your replies in {nl} from here on",
      "talk to me in {nl} from now on", "answer me in {nl} by default", "{nl} from now on, please",
      "could you use {nl} whenever you reply to me?"),
    F("pref-answer-format", P,
      "I like {rstyle}", "give me {rstyle} from now on", "{rstyle} from here on please",
      "I prefer {rstyle} in your replies", "going forward: {rstyle}", "stop writing essays, {rstyle} please",
      "default to {rstyle} when you answer me", "can you always do {rstyle}?", "my preference is {rstyle}"),
    F("pref-call-me", P,
      "call me {nick.nick}", "please call me {nick.nick}", "I go by {nick.nick}", "you can call me {nick.nick}",
      "{nick.nick} is fine, nobody calls me {nick.full}", "my friends call me {nick.nick}, you should too",
      "please address me as Dr. {surname}", "when you draft emails for me, sign them as {nick.nick}",
      "I'd rather you call me {nick.nick}", "It's {nick.full} on paper but please use {nick.nick}",
      "just {nick.nick} is fine"),
    F("pref-food", P,
      "I love {food}", "{food} is my favourite", "I'm not big on {badfood}",
      "I don't like {badfood}, leave it out of recipes", "no {badfood} in anything you suggest for me please",
      "I could eat {food} every day", "whenever you suggest recipes, skip the {badfood}",
      "I prefer {food} over {food#2}", "big fan of {food}", "{badfood} is a no from me"),
    F("pref-schedule", P,
      "I usually work {goodtime}", "I do my best work {goodtime}", "I never take meetings {badtime}",
      "don't book anything for me {badtime}", "I like to keep {weekday}s meeting-free",
      "my focus time is {goodtime}, keep it clear", "I prefer async updates over meetings",
      "I tend to do deep work {goodtime}", "no calls {badtime} if you can help it"),
    F("pref-channel", P,
      "ping me on {ch} rather than {ch#2}", "I prefer {ch} for quick stuff", "{ch} is the best way to reach me",
      "don't {ch#2} me, {ch} is better", "for anything urgent use {ch}", "I'd rather get updates over {ch}",
      "reach me on {ch}, I barely check {ch#2}"),
    F("pref-git-habit", P,
      "I always {wf}", "I like to {wf}", "my habit is to {wf}", "I tend to {wf}", "I prefer to {wf}",
      "in my repos we {wf}, and I want you to as well", "personally I {wf}, every time"),
    F("pref-lang-over", P,
      "I prefer {lang} over {lang#2} for {langpurpose}", "given the choice I'll take {lang} over {lang#2}",
      "{lang} > {lang#2} for me, especially for {langpurpose}", "I'd pick {lang} for {langpurpose} any day",
      "if it's {langpurpose}, I want {lang}", "for {langpurpose} I like {lang} much more than {lang#2}",
      "I'm happier writing {lang} than {lang#2}"),
    F("pref-editor", P,
      "I'm a {editor} person", "I live in {editor}", "I use {setting} everywhere", "{setting} always, please",
      "I like {setting} in my editor", "{editor} with {setting}, that's my setup and I like it that way",
      "I'd always choose {editor} over {editor#2}"),
    F("pref-travel", P,
      "I always book {seat}", "{seat} whenever possible", "I prefer trains over flights when it's under {hours} hours",
      "when you plan trips for me, go for {seat}", "I never check bags, carry-on only",
      "for work trips I like {seat}", "I'm a {seat} kind of traveller"),
    F("pref-standing-instruction", P,
      "always run {cmd} before committing", "whenever you touch {area}, add tests",
      "never modify {file} without asking me first", "from now on write tests with {testfw}",
      "every time you open a PR, tag {name} as reviewer", "don't ever push directly to {branch}",
      "going forward, put new endpoints under {dir}", "in this repo, always run {cmd} before you say you're done",
      "each time you change {area}, update the changelog too", "never touch {file} unless I say so"),
    F("pref-instead", P,
      "I'd prefer if you used {instead.a} instead of {instead.b}",
      "use {instead.a} rather than {instead.b} for me, please",
      "please prefer {instead.a} to {instead.b} in my code", "going forward, {instead.a} over {instead.b}",
      "I'd rather see {instead.a} than {instead.b}", "can you use {instead.a} and not {instead.b} from now on?",
      "{instead.a}, not {instead.b}. that's my preference", "I always go for {instead.a} over {instead.b}"),
    F("pref-hobby", P,
      "I'm really into {hobby}", "{hobby} is my thing on weekends", "I love {hobby}",
      "I spend most Saturdays on {hobby}", "big fan of {hobby}", "nothing beats {hobby} for me",
      "I'm obsessed with {hobby} lately", "{hobby} is how I unwind"),
    # ---------------------------------------------------------------- SAVE_DECISION
    F("dec-db-for-purpose", D,
      "we're going with {db} for {purpose}", "let's use {db} for {purpose}", "{db} for {purpose}, final answer",
      "decided: {db} for {purpose}", "ok, {db} it is for {purpose}", "we picked {db} for {purpose}",
      "the call is {db} for {purpose}", "after the spike we're settling on {db} for {purpose}",
      "let's lock in {db} for {purpose}", "team agreed on {db} for {purpose}"),
    F("dec-framework", D,
      "we picked {fw} for the {project} rewrite", "the team agreed on {fw} for {project}",
      "{project} will be built with {fw}", "we're building {project} in {fw}, decision made",
      "going with {fw} for {project}", "final decision: {project} uses {fw}", "{fw} won the bake-off for {project}"),
    F("dec-keep-status-quo", D,
      "decided: {keep} stays", "we're keeping {keep}", "no migration, {keep} stays as is",
      "we agreed not to replace {keep}", "{keep} stays for now, we voted", "we'll stick with {keep}",
      "conclusion from the meeting: keep {keep}", "not touching {keep}, that's settled"),
    F("dec-process", D,
      "we'll ship releases {cadence} from now on", "team decision: releases go out {cadence}",
      "we agreed to do retros {cadence}", "decided to freeze deploys on {day}s",
      "we're doing {cadence} releases, agreed in planning", "ok so standups go async, we decided today",
      "we settled on {cadence} demos with the client", "the team voted for {cadence} on-call handoffs"),
    F("dec-hosting", D,
      "we decided to migrate {project} to {cloud}", "{project} is going to {cloud}, we signed off today",
      "we chose {cloud} to host {project}", "{cloud} won, we're hosting {project} there",
      "let's deploy {project} on {cloud}", "hosting decision: {project} goes on {cloud}"),
    F("dec-option", D,
      "{option} it is", "let's go with {option}", "approved — we go with {option}", "we'll take {option}",
      "ok, going with {option}", "{option}. decided.", "I'll go with {option}", "yeah let's do {option}",
      "we landed on {option}", "after sleeping on it: {option}"),
    F("dec-naming-design", D,
      "we'll call the new service {svcname}", "the new repo will be named {svcname}",
      "we settled on {fmt} for config files", "API pagination will be {pag}, decided",
      "we're using {idstyle} for IDs going forward, team call", "decision: configs are {fmt}",
      "let's name it {svcname} and move on", "agreed on {idstyle} for all new tables"),
    F("dec-architecture", D,
      "we're splitting {project} into {n} services", "auth will live in the gateway, we agreed",
      "we'll use event sourcing for {project}", "{project} goes serverless, decided in the design review",
      "we're keeping {project} as one app, no microservices", "design review outcome: {project} gets its own DB",
      "we decided {project} talks to {project#2} through a queue, not HTTP"),
    F("dec-people", D,
      "{name} will lead the {project} migration, decided in standup", "we're hiring {name} for the {team} role",
      "we picked {name} as the new tech lead for {team}",
      "{name} is going to own {project} going forward, we decided today",
      "we offered the job to {name}", "agreed: {name} runs the {team} retro from now on"),
    F("dec-drop", D,
      "we're not doing {feature} this quarter", "decided to drop {feature}", "we ruled out {db}",
      "{feature} is cut from the release", "we're shelving {feature} until next year",
      "no {feature} for v1, we agreed", "killing {feature}, not worth the effort"),
    F("dec-timeline", D,
      "we're targeting {date} for the launch", "launch is locked for {date}",
      "we committed to shipping {feature} by {date}", "{project} goes live on {date}, that's the plan",
      "release date set: {date}", "we agreed to cut the release on {date}"),
    F("dec-personal", D,
      "I've decided to {pdec}", "I'm going to {pdec}, made up my mind", "we decided to {pdec}",
      "final call: I'll {pdec}", "ok I'm doing it, I'll {pdec}", "after a lot of back and forth I'm going to {pdec}",
      "my partner and I agreed to {pdec}", "decision made, we'll {pdec}"),
    F("dec-team-tooling", D,
      "let's use {tt.tool} for {tt.task} in this project", "we're standardizing on {tt.tool}",
      "team decision: {tt.tool} for {tt.task}", "we adopted {tt.tool} for {tt.task}",
      "we agreed everyone uses {tt.tool} for {tt.task}",
      "{tt.tool} is the team standard now for {tt.task}, we decided"),
    F("dec-api-style", D,
      "we're going with {api} for the public API", "the public API will be {api}",
      "let's expose {project} over {api}", "decided on {api} between {project} and {project#2}",
      "{api} it is for the partner integration"),
    # ---------------------------------------------------------------- SAVE_FACT
    F("fact-ownership", FA,
      "{name} owns {project}", "{project} belongs to {name}", "the {team} team is responsible for {project}",
      "if {project} breaks, {name} is the person to talk to", "{name} is the owner of {project}",
      "{project} is maintained by the {team} team", "{name} is the point of contact for {project}",
      "fyi {name} owns {project}"),
    F("fact-hosts", FA,
      "the {env} DB is {host}", "the {env} database lives on {host}", "our {env} cluster is {cluster}",
      "{env} is in {region}", "the {env} box is {host}", "{project} is deployed to {region}",
      "{env} postgres = {host}", "we run {env} on {cluster}"),
    F("fact-ports", FA,
      "{svc} runs on port {port}", "{svc} listens on {port}", "our API runs on port {port}",
      "{svc} is on {port} locally", "port {port} is {svc}", "{svc}: port {port}"),
    F("fact-family-location", FA,
      "my {rel} lives in {city}", "my {rel} is based in {city}", "my {rel} lives over in {city}",
      "{name}, my {rel}, lives in {city}", "my {rel} and their family are in {city}",
      "my whole family is in {city}"),
    F("fact-birthday", FA,
      "my {rel}'s birthday is {caldate}", "{name}'s birthday is on {caldate}", "our anniversary is {caldate}",
      "my {rel} was born on {caldate}", "{name} turns {n} on {caldate}", "{caldate} is my {rel}'s birthday"),
    F("fact-pet", FA,
      "I have a {animal} named {pet}", "my {animal} is called {pet}", "{pet} is our {animal}",
      "we've got a {animal}, {pet}", "my {animal}'s name is {pet}", "{pet} is my {animal}, she's {petage}"),
    F("fact-job", FA,
      "I work as a {role} at {company}", "I'm a {role} on the {team} team", "I lead the {team} team",
      "I'm the {role} at {company}", "my job: {role} at {company}", "I work at {company} in the {team} team",
      "I'm on the {team} team as a {role}"),
    F("fact-health", FA,
      "I'm allergic to {allergen}", "allergic to {allergen}, fyi", "I have a {allergen} allergy",
      "I have {cond}", "I've got {cond}", "heads up that I have {cond}", "my son is allergic to {allergen}"),
    F("fact-project-stack", FA,
      "{project} is written in {lang}", "{project} is deployed on {cloud}", "our CI runs on {ci}",
      "{project} uses {db} under the hood", "the frontend for {project} is {fw}", "{project} is a {lang} monolith",
      "{project} runs on {cloud} and talks to {db}"),
    F("fact-contacts", FA,
      "{person.name}'s email is {person.email}", "{name} is the PM for {project}", "my dentist is Dr. {surname}",
      "{name} is my {workrel}", "my {workrel} is {name}", "{name} {surname} is our accountant",
      "{person.name}'s handle on Slack is @{person.handle}"),
    F("fact-where-i-live", FA,
      "I live in {city}", "I'm based in {city}", "I'm in {tz}", "home is {city}", "I'm from {city} originally",
      "I moved to {city} back in 2019", "I'm {tz}, so keep that in mind for meetings", "we live just outside {city}"),
    F("fact-team-structure", FA,
      "the {team} team has {n} engineers", "{name} reports to {name#2}", "{name} and {name#2} are on the {team} team",
      "our on-call rotation is weekly", "{team} sits under {name}'s org", "{name} is the only {role} on {team}"),
    F("fact-ids-config", FA,
      "the {svc} API key is stored in {vault}", "the Slack channel for {project} is {chan}",
      "secrets for {project} are in {vault}", "{project}'s alerts go to {chan}",
      "the {env} kubeconfig context is {cluster}",
      "our default branch is {branch}"),
    F("fact-schedule", FA,
      "standup is at {clock} every day", "our sprint ends every other {weekday}", "I have {klass} on {day}s",
      "the {team} sync is {weekday}s at {clock}", "{name} picks up the kids on {weekday}s",
      "payroll runs on the {n}th", "my {rel} visits every {day}"),
    F("fact-personal-misc", FA,
      "I drive {car}", "my laptop is a {laptop}", "I speak {nl} and {nl#2}", "I have {n} kids",
      "we have a house in {city}", "my work laptop is a {laptop}, personal one is a {laptop#2}",
      "I'm fluent in {nl}", "I'm a {role} by training"),
    F("fact-code-layout", FA,
      "the {component} is in the {dir} folder", "the {component} lives in {dir}", "migrations are in {dir}",
      "our env vars are loaded from .env.local", "the {component} for {project} is in a separate repo",
      "{project}'s entrypoint is {entry}", "the {component} code is under {dir}, the rest is legacy"),
    F("fact-background", FA,
      "I studied {subject} at university", "I used to work at {company} before this", "I grew up in {city}",
      "my {rel} works at {company} in {city}", "our main competitor is {company}", "my flight number is {flight}",
      "I have a degree in {subject}", "my {rel} is a {role}", "I've been a {role} for {n} years"),
    F("fact-with-task", FA,
      "{fact} — can you factor that in?", "fyi {fact}", "note that {fact}", "for the record: {fact}",
      "context for the next task: {fact}", "{fact}, in case you need it later", "just so you know, {fact}",
      "{fact}. keep it in mind when you write the scripts", "btw {fact}, does that change anything?"),
    # ---------------------------------------------------------------- RECALL_INFO
    F("rec-what-did-i-say", R,
      "what did I say about {topic}?", "what did I tell you about {topic}", "remind me what I said about {topic}",
      "what was my take on {topic} again", "I mentioned something about {topic} a while ago, what was it?",
      "what were my notes on {topic}", "can you pull up what I told you regarding {topic}"),
    F("rec-decision", R,
      "which {cat} did we pick?", "what did we decide on for {purpose}?", "what was the decision on {topic}",
      "did we end up going with {db} or {db#2}?", "what did we settle on for {purpose}",
      "remind me what we chose for {purpose}", "which way did we go on {topic}?",
      "what {cat} are we using, did we decide?"),
    F("rec-personal", R,
      "what's my {rel}'s name again", "do you remember my {animal}'s name?", "what's my {animal} called again",
      "when's my {rel}'s birthday?", "where does my {rel} live again?", "what was my {rel}'s new address",
      "what am I allergic to, again?", "my {rel}'s birthday is coming up — when exactly?"),
    F("rec-owner", R,
      "who owns {project} again?", "remind me who owns {project}", "who did I say was on the {team} team?",
      "who's the contact for {project}, did I tell you?", "who was running {project}? you have that somewhere",
      "which team is {project} under, per my notes?", "who did I say to ping about {project}"),
    F("rec-infra", R,
      "what's the {env} db host again?", "what port does {svc} run on, did I tell you?",
      "remind me of the {env} cluster name", "which region did I say {env} is in?",
      "what was the {env} host I gave you?", "the {svc} port I mentioned earlier — what was it",
      "where did I say the {svc} API key lives?"),
    F("rec-deadline", R,
      "what was the deadline again?", "when's the {project} deadline again", "when did we say {project} launches?",
      "what date did I give you for the {project} launch?", "remind me when {project} is due",
      "the {project} deadline was when?", "how long do we have until {project} is due, by what I told you?"),
    F("rec-my-preferences", R,
      "what indentation did I say I prefer?", "did I mention which editor I use?",
      "which package manager do I prefer, do you know?", "what language did I ask you to reply in?",
      "what do I usually use for {tt.task}?", "remind me of my code style preferences",
      "what name did I ask you to call me?", "what was my rule about {area}?"),
    F("rec-what-do-you-know", R,
      "what do you know about me?", "what have I told you about {name}?", "anything saved about {project}?",
      "pull up my notes on {topic}", "show me everything you have on {project}", "what do you have stored on {name}?",
      "list what you know about my family", "what's in your memory about {team}?"),
    F("rec-summarize-decisions", R,
      "list the decisions we made {timeframe}", "summarize what we agreed on for {project}",
      "what did we settle on {timeframe}?", "give me a recap of the decisions about {project}",
      "what were the action items we agreed {timeframe}", "recap what we decided {timeframe} about {project}"),
    F("rec-no-cue-word", R,
      "{name}'s email was...?", "that thing I told you about {topic} — what was it?",
      "I forgot {name}'s phone number, you have it?", "what was the name of that {thing} {name} recommended?",
      "quick, {name}'s birthday?", "the {thing} I mentioned last week, name?",
      "{name}'s surname — I gave it to you once"),
    F("rec-check-memory", R,
      "did I already tell you about {topic}?", "have I mentioned {name} before?",
      "is there anything in memory about {topic}?", "do you have {name}'s email on file?",
      "have we talked about {topic} before?", "do you have anything on {project} from earlier?"),
    F("rec-imperative", R,
      "look up what I said about {topic}", "fetch my notes on {topic}", "search your memory for {topic}",
      "recall {name}'s phone number", "check your notes for the {env} host", "dig up what we decided on {topic}",
      "find what I told you about {name}", "bring back the stuff I saved on {project}"),
    F("rec-use-stored", R,
      "use the port I gave you earlier for {svc}", "set up the connection with the {env} host I mentioned",
      "write the config using the db we picked", "email {name} at the address I gave you",
      "apply my usual code style rules to this file, the ones I told you",
      "book it for my {rel}'s birthday, you know the date",
      "use the team I said owns {project} as the reviewers"),
    F("rec-plain-question", R,
      "who owns {project}?", "what port is {svc} on?", "where does my {rel} live?", "what's my {animal}'s name?",
      "which {cat} are we using?", "what's {person.name}'s email?", "when is {name}'s birthday?",
      "how many engineers are on the {team} team?", "what region is {env} in?", "what time is our standup?",
      "who's my {workrel}?", "what's the {env} database host?", "where did my {rel} move to?"),
    F("rec-vague", R,
      "what was that thing about {topic}", "the {topic} stuff from last week, what did we land on",
      "wasn't there something about {name} and {project}?", "refresh my memory on {topic}",
      "I know I told you {name}'s job title, what was it", "what did {name} and I agree on {timeframe}?"),
    # ---------------------------------------------------------------- UPDATE_INFO
    F("upd-deadline", U,
      "actually the deadline moved to {date}", "the {project} deadline is now {date}",
      "{project} deadline got pushed to {date}", "heads up, {project} slipped to {date}",
      "new date for {project}: {date}", "they moved the {project} launch to {date}",
      "the {project} deadline changed, it's {date} now", "deadline update: {project} is due {date}, not {date#2}"),
    F("upd-switched-tool", U,
      "we switched from {sw.old} to {sw.new}", "we moved off {sw.old}, it's {sw.new} now",
      "no longer using {sw.old}; {sw.new} instead", "{sw.old} is gone, we're on {sw.new} now",
      "we replaced {sw.old} with {sw.new} last sprint", "as of this week it's {sw.new}, not {sw.old}",
      "migrated from {sw.old} to {sw.new}, fyi", "I've switched from {sw.old} to {sw.new}"),
    F("upd-owner-change", U,
      "{name} no longer owns {project}, {name#2} does", "{project} moved to {name#2}'s team",
      "{name#2} took over {project} from {name}", "ownership change: {project} is {name#2}'s now",
      "{name} handed {project} off to {name#2}", "it's {name#2} who owns {project} now, not {name}"),
    F("upd-infra-change", U,
      "correction: {env} is {host} now", "the {svc} port changed to {port}", "update: {env} is in {region} now",
      "{svc} moved to port {port}", "the {env} db is {host} now, the old box is gone", "we migrated {env} to {host}",
      "{svc} isn't on {port#2} anymore, it's {port}"),
    F("upd-someone-moved", U,
      "my {rel} moved to {city}", "my {rel} just relocated to {city}",
      "my {rel} doesn't live in {city} anymore, they're in {city#2}", "{name} moved to {city}, fyi",
      "I moved! I'm in {city} now", "we relocated to {city} last month", "new city for me: {city}"),
    F("upd-preference-change", U,
      "I'm not vegetarian anymore", "changed my mind, I prefer {style} now", "I don't use {tt.tool} anymore",
      "scratch the {nl} replies, English is fine again", "I've gone off {food}, don't suggest it anymore",
      "I switched to {editor} from {editor#2}", "forget the short answers thing, detailed is better now",
      "I used to hate {dislike} but I'm fine with it now"),
    F("upd-job-change", U,
      "I left {company}, I'm at {company#2} now", "new role: I'm now {role} on the {team} team",
      "got promoted to {role}", "I'm not on the {team} team anymore", "I changed jobs, now {role} at {company}",
      "{name} left the company", "{name} moved from {team} to {team#2}"),
    F("upd-correction", U,
      "scratch that, {corr.topic} is {corr.right}", "wait, I said {corr.wrong} for {corr.topic} but it's {corr.right}",
      "I was wrong about {corr.topic}: {corr.right}, not {corr.wrong}", "correction: {corr.topic} is {corr.right}",
      "small fix: {corr.topic} is {corr.right}, not {corr.wrong}",
      "oops, {corr.topic} is {corr.right}. I mistyped earlier",
      "{corr.topic} is {corr.right}, I had it wrong before"),
    F("upd-decision-reversal", U,
      "we're no longer going with {db}, it's {db#2}", "forget {db}, we're doing {db#2} after all",
      "change of plan: {db#2} instead of {db}", "we went back on {db}; {db#2} it is now",
      "the {db} decision is off, we're using {db#2}", "reversing what we decided on {option}: we're doing {option#2}",
      "we un-decided {keep}, it's being replaced after all"),
    F("upd-retract", U,
      "forget what I said about {topic}", "delete the note about {topic}",
      "that info about {topic} is outdated, drop it",
      "please remove {name}'s old number", "strike what I told you about {topic}, it's no longer true",
      "the thing about {topic} isn't true anymore", "ignore my old notes on {topic}, they're stale"),
    F("upd-contact", U,
      "{person.name}'s new email is {person.email}", "{name} changed their number",
      "my address changed, new one is {n} {street}", "{name} has a new phone: {phone}",
      "new email for {person.name}: {person.email2}",
      "{person.name} isn't on {person.email} anymore, use {person.email2}"),
    F("upd-rename", U,
      "{project} was renamed to {newname}", "we renamed the {team} team to {team#2}",
      "{project} is called {newname} now",
      "rename: {project} → {newname}", "the {team} team is now the {team#2} team",
      "{project} got rebranded as {newname}"),
    F("upd-schedule", U,
      "standup moved to {clock}", "the {team} sync is now on {weekday}s instead of {weekday#2}s",
      "my {klass} changed to {day}s", "{name} now picks up the kids on {weekday}s", "the retro is {weekday}s now",
      "we moved the weekly 1:1 to {clock}", "{klass} is {day}s now, not {day#2}s"),
    F("upd-now-value", U,
      "{project} is now on {ci}", "{name} is now on the {team} team", "{name} is the {team} lead now",
      "{env} runs on {db} now", "{project} is now written in {lang}", "my {rel} works at {company} now",
      "{project} is hosted on {cloud} these days", "we use {db} for {purpose} now instead",
      "{project} now belongs to {team}"),
    F("upd-values", U,
      "we're {n} engineers now, not {n#2}", "budget went up to {amount}", "the rate limit is {n}00 req/s now",
      "the team grew to {n}", "{project} now has {n}k users, not {n#2}k", "my {rel} is {n} now, had a birthday",
      "the limit changed to {n} per day"),
    # ---------------------------------------------------------------- QUESTION (no memory action)
    F("q-howto-preferences", Q,
      "how do I set my preferred editor in git?", "what's the best way to store user preferences in {fw}?",
      "how do I save user settings in {fw}", "how can I make {tt.tool} the default for {tt.task}?",
      "where does {editor} keep user settings?", "how would you persist preferences for a {lang} CLI tool",
      "best practice for storing per-user settings in {db}?", "how do i set a default branch name in git",
      "can {fw} remember a user's theme choice between sessions?", "what's the idiomatic way to save config in {lang}",
      "Explain how to build a settings page where users pick their preferred language."),
    F("q-decision-as-question", Q,
      "should we go with {db} or {db#2}?", "{db} or {db#2} for {purpose}?", "is {db} a good fit for {purpose}?",
      "would you pick {fw} or {fw#2} for a small team?", "what are the tradeoffs between {db} and {db#2}",
      "we're debating {fw} vs {fw#2}, thoughts?", "help me decide between {cloud} and {cloud#2} for hosting {project}",
      "pros and cons of {lang} vs {lang#2} for a CLI", "is it worth moving {project} to {cloud}?",
      "should I take the job at {company}?", "thinking about {db} for {purpose} but not sure. what would you do",
      "compare {fw} and {fw#2} for me"),
    F("q-task-request", Q,
      "refactor this function", "write a {lang} function that {codetask}", "add unit tests for {module}",
      "can you fix the failing CI on {project}", "rename {ident.a} to {ident.b} across the file",
      "bump {tt.tool} to the latest version", "generate a migration for the users table",
      "split this component into smaller pieces", "write a Dockerfile for {project}",
      "port this script from {lang} to {lang#2}", "review my PR please", "make the tests pass",
      "Write a {lang} script that {codetask}."),
    F("q-one-off-reminder", Q,
      "remember to {qtask}", "remember to {qtask} before you push", "don't forget to {qtask}",
      "make sure you {qtask} this time", "oh and {qtask} when you're done", "before you open the PR, {qtask}",
      "remember to {qtask} and then ping me", "pls {qtask} too"),
    F("q-code-save-store", Q,
      "what does {fn} do?", "why does this code call {fn} twice?", "explain how {fw} stores sessions",
      "where does {tt.tool} store its cache?", "does `localStorage` persist after the browser closes?",
      "what's the difference between `save()` and `commit()` in SQLAlchemy?", "how does Redis persist data to disk",
      "why is {fn} not saving my value?", "is `pickle` safe for storing user data?",
      "walk me through what {fn} does in this snippet", "how do I make {fn} remember the last value"),
    F("q-world-knowledge", Q,
      "{lc.lang} was created by {lc.who}", "did {lc.who} create {lc.lang}?", "who designed {lc.lang}",
      "TIL {lc.who} created {lc.lang}", "{cap.city} is the capital of {cap.country}, isn't it",
      "what's the capital of {cap.country}", "is {cap.city} the capital of {cap.country}?",
      "fun fact: {cap.city} is the capital of {cap.country}", "how old is {lc.lang}?"),
    F("q-chitchat", Q,
      "thanks!", "thank you so much", "hey", "good morning", "lol", "nice, that worked", "you're a lifesaver",
      "haha fair", "cool cool", "hello there", "how are you today?", "that's hilarious", "appreciate it",
      "ok thanks, that's all for now", "night!", "gm", "cheers", "amazing, thank you", "hi again", "wow ok",
      "perfect", "great job", "you rock", "hmm interesting", "that's wild", "good night, talk tomorrow",
      "thanks, that fixed the {err} thing"),
    F("q-short-reply", Q,
      "yes", "no", "ok", "sure", "go ahead", "nope", "do it", "ship it", "pnpm.", "yep, that one", "the second one",
      "sounds good", "lgtm", "k", "continue", "next", "try again", "yes please", "not yet", "maybe later", "y",
      "hmm no", "postgres?", "both", "neither", "why?", "wait", "stop", "undo that", "redo it", "more detail",
      "shorter"),
    F("q-debugging", Q,
      "why is {tt.tool} throwing {err}?", "getting {err} when I run {runcmd}", "the build is failing with {err}",
      "tests are red on {project} again", "{svc} is returning 502s", "my {lang} code blows up with {err}",
      "{transient}", "{transient}, any idea why?", "help, {runcmd} fails with {err}"),
    F("q-concepts", Q,
      "what's the difference between {db} and {db#2}?", "explain {concept}", "ELI5 {concept}",
      "when should I use {concept}?", "is {concept} overkill for a side project",
      "give me an example of {concept} in {lang}",
      "how does {concept} actually work", "I never really understood {concept}"),
    F("q-personal-life", Q,
      "what should I get my {rel} for their birthday?", "any tips for getting into {hobby}?",
      "how long should I boil an egg", "recipe ideas with {food}", "what's a good name for a {animal}?",
      "how do I tell my {workrel} I'm burned out", "best time of year to visit {city}?",
      "help me plan a weekend in {city}", "is {hobby} good exercise?", "how do I learn {nl} fast",
      "my {rel} is visiting next week, what should we do in {city}?"),
    F("q-general-facts-lookup", Q,
      "what's the default port for {dbport.db}?", "which port does {dbport.db} use by default",
      "what did Knuth say about premature optimization?", "what did Dijkstra think of goto?",
      "what's the latest version of {lang}?", "when was {lc.lang} first released?",
      "what was Log4Shell about", "is {dbport.port} the default {dbport.db} port?", "what year did {fw} come out"),
    F("q-change-as-task", Q,
      "how do I update {tt.tool}?", "how do I change my git email", "how do I rename a git branch",
      "correct the typo on line {n}", "update the README with the new install steps", "change the button color to blue",
      "replace {sw.old} with {sw.new} in this file", "migrate this code from {sw.old} to {sw.new}",
      "how do I switch from {sw.old} to {sw.new}?", "fix the date format in the header", "update the deps"),
    F("q-general-preferences", Q,
      "is it better to use tabs or spaces?", "do most devs prefer {lang} or {lang#2}?",
      "what do you prefer, {editor} or {editor#2}?",
      "which editor do you like best?", "what's the most popular {cat} these days?",
      "what would you name this function",
      "do people still like {fw}?", "what's your favourite {lang} feature", "is {style} considered good practice?"),
    F("q-howto-config", Q,
      "how do I configure {toolcfg.tool} to {toolcfg.setting}?", "can {toolcfg.tool} {toolcfg.setting}?",
      "is there a setting in {toolcfg.tool} to {toolcfg.setting}",
      "what's the config option to make {toolcfg.tool} {toolcfg.setting}",
      "show me how to make {toolcfg.tool} {toolcfg.setting}",
      "my {toolcfg.tool} won't {toolcfg.setting}, what am I missing?"),
    F("q-general-life", Q,
      "what's the weather usually like in {city} in {month}", "how do I get from the airport to the centre of {city}?",
      "what's a typical breakfast in {city}", "is {food} healthy?", "how many calories are in {food}",
      "what time zone is {city} in?", "best {food} in {city}?", "is {month} a good time to go to {city}",
      "how do you say thank you in {nl}?"),
    F("q-writing", Q,
      "draft an email to {name} about {topic}", "summarize this thread", "translate this paragraph to {nl}",
      "write a birthday message for my {rel}", "make this paragraph sound more professional",
      "give me three title ideas for a talk on {concept}", "proofread this for me",
      "write a polite no to the meeting invite from {name}",
      "turn these notes into a status update for the {team} team"),
    # ---------------------------------------------------------------- added in the second round (issue 4)
    # Explicit memory cues ("remember that", "keep in mind", "note:") for every label, the pref/fact and
    # fact/update boundaries (habits vs attributes, old moves vs recent ones), decisions followed by a task,
    # and QUESTION hard negatives that use memory words or are undecided.
    F("pref-memory-cue", P,
      "remember that I prefer {style}", "keep in mind I like {rstyle}",
      "note that I always use {tt.tool} for {tt.task}",
      "for future reference, I can't stand {dislike}", "save this preference: {instead.a} over {instead.b}",
      "make a note: I love {food}", "just so you know for next time, I'm really into {hobby}",
      "remember, {rstyle} for me", "please remember I'd rather have {instead.a} than {instead.b}",
      "keep in mind I really don't like {dislike}"),
    F("pref-workspace", P,
      "I basically live in {workspace}", "I spend my whole day in {workspace}", "{workspace} is where I do everything",
      "I do all my work in {workspace}, so tailor suggestions to that",
      "give me tips that work in {workspace}, that's my home base", "I'm in {workspace} all day and I like it that way",
      "my happy place is {workspace}", "I'd rather stay in {workspace} than switch tools"),
    F("pref-diet", P,
      "I'm {diet}, keep that in mind for recipes", "heads up, I'm {diet}", "I'm {diet}, so no surprises in meal plans",
      "I've been {diet} for years and I like it", "suggest restaurants that work for someone who's {diet}",
      "I'm {diet} most days", "plan my meals knowing I'm {diet}"),
    F("pref-address-me", P,
      "I prefer to be called {nick.nick}", "{nick.nick} please, not {nick.full}",
      "address me as {nick.nick} from now on",
      "use {nick.nick} when you talk to me", "I'd like to be called {nick.nick}",
      "refer to me as {nick.nick} in summaries", "I like being called {nick.nick}, it's friendlier",
      "{nick.nick} works better for me than {nick.full}", "in messages to me, {nick.nick} is good"),
    F("dec-memory-cue", D,
      "remember that we went with {db} for {purpose}", "note that we've decided on {fw} for {project}",
      "for the record: {option} it is", "keep in mind we chose {cloud} for {project}",
      "save this decision: {tt.tool} for {tt.task}, team-wide", "make a note, we picked {db} for {purpose}",
      "just so you know, we've decided to {pdec}", "log this: we're going with {option}"),
    F("dec-then-task", D,
      "{db} it is for {purpose}. can you {qtask}?", "we're going with {fw} for {project}, so please scaffold it",
      "decided on {cloud} for {project}. how do I get started?", "ok we picked {option}. write up the next steps?",
      "we'll use {tt.tool} for {tt.task}, can you set it up in the repo?",
      "going with {db} for {purpose}; what indexes would you add?",
      "final call is {fw} for {project}, can you list the migration steps?"),
    F("dec-purchase", D,
      "I'm getting the {laptop}, decided", "ordered the {laptop}, decision made",
      "we're going with {car}, picking it up on {day}", "decided on the {laptop} over the {laptop#2}",
      "after weeks of dithering I bought the {laptop}", "we settled on {car} in the end",
      "it's the {laptop}, I just pulled the trigger"),
    F("fact-memory-cue", FA,
      "remember that my {rel} lives in {city}", "keep in mind I'm allergic to {allergen}",
      "note: {svc} runs on port {port}",
      "for future reference, {name} owns {project}", "save this: the {env} DB is {host}",
      "make a note that my {rel}'s birthday is {caldate}", "just so you remember, I work at {company}",
      "remember, I'm a {role} at {company}", "store this: {project} is deployed on {cloud}"),
    F("fact-since-year", FA,
      "I've lived in {city} since {year}", "I relocated to {city} in {year} for work",
      "we've been in {city} since {year}",
      "I moved to {city} when I was {kidage}", "{city} has been home since {year}",
      "I came to {city} for uni in {year} and stayed", "I've been at {company} since {year}",
      "we bought our place in {city} in {year}", "I was born in {city} and grew up there"),
    F("fact-identity", FA,
      "my name is {name} {surname}", "I'm {name}, a {role} at {company}", "hi, I'm {name}, I run the {team} team",
      "I'm {age}", "I was born in {city}", "my full name is {name} {surname}, no middle name",
      "I'm {name}, {age}, living in {city}", "I'm {name} {surname} on all the official stuff"),
    F("rec-use-what-you-know", R,
      "based on what you know about me, suggest a {thing}",
      "given what I told you about {topic}, what should I do next?",
      "using what you know about my {rel}, suggest a gift", "plan dinner around my {rel}'s diet, you know it",
      "pick a time that fits the schedule I gave you", "write my bio from what I've told you about my work",
      "fill in the {env} connection details from what I gave you",
      "draft the reply to {name} using the decisions we made {timeframe}"),
    F("rec-do-you-know", R,
      "do you know my {rel}'s name?", "do you have {name}'s number?", "do you know where {project} is deployed?",
      "any idea what I said about {topic}?", "do you still have the {env} host?",
      "do you know which team {name} is on?",
      "do you have my {rel}'s address?", "do you know what I'm allergic to?"),
    F("rec-jog-memory", R,
      "jog my memory: who owns {project}?", "I've forgotten what we decided on {topic}, what was it?",
      "I blanked on {name}'s surname, help", "refresh me on what I said about {topic}",
      "can't remember the {env} host, you have it?", "what was it I told you about {name} again?",
      "I forgot my {rel}'s birthday, when is it?", "my memory's gone: which {cat} did we land on?"),
    F("upd-not-anymore", U,
      "I'm not at {company} anymore", "{name} isn't on the {team} team anymore", "we don't use {sw.old} anymore",
      "I don't live in {city} anymore", "{svc} isn't on port {port} anymore", "I'm not {diet} anymore",
      "{name} doesn't own {project} anymore", "my {rel} isn't in {city} anymore"),
    F("upd-used-to", U,
      "we used to use {sw.old}, now it's {sw.new}", "{name} used to own {project}, now {name#2} does",
      "I used to live in {city}, I'm in {city#2} now", "standup used to be at {clock}, it's {clock#2} now",
      "I used to be on {team}, now I'm on {team#2}", "{project} used to run on {cloud}, it's on {cloud#2} now",
      "my {rel} used to work at {company}, now it's {company#2}"),
    F("upd-explicit-cue", U,
      "update: {name} is on the {team} team now", "please update {person.name}'s email to {person.email2}",
      "change my {rel}'s city to {city} in your notes", "new info: {project} moved to {cloud}",
      "heads up, things changed: {sw.new} replaced {sw.old}", "update my details, I'm a {role} now",
      "please overwrite the old {env} host, it's {host} now", "that's outdated, {name} leads {team} now"),
    F("q-memory-words-general", Q,
      "how does {fw} remember form state between pages?", "remind me how {concept} works",
      "can you recall the formula for compound interest?", "what year did {lc.who} create {lc.lang}, do you remember?",
      "how do I make {tt.tool} remember my settings?", "what's a good way to remember {nl} vocabulary?",
      "do you remember how to reverse a list in {lang}? I always forget",
      "how do I update {tt.tool} without losing my config?"),
    F("q-oneoff-this-time", Q,
      "just this once, answer in {nl}", "for this file only, use {style}", "this time give me {rstyle}",
      "for now use {tt.tool} for {tt.task}, we'll see later", "only in this answer: skip the code",
      "just for this PR, {qtask}", "for today's notes, use {rstyle}", "in this reply, go with {instead.a}"),
    F("q-undecided", Q,
      "we're still deciding between {db} and {db#2} for {purpose}", "haven't decided on {fw} yet, what do you think?",
      "no decision yet on {cloud} vs {cloud#2}, help me compare", "I'm on the fence about whether to {pdec}",
      "torn between {option} and {option#2}, what would you do?", "not sure if we should {pdec}, thoughts?",
      "we're leaning towards {db} for {purpose} but nothing's final, any red flags?"),
]

# Contact slots are built from PEOPLE so that a name and its email address always agree.


def _ascii(s: str) -> str:
    return unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode().lower().replace("-", "")


EXTRA_SLOTS = {
    "person": [
        {"name": p, "email": f"{_ascii(p)}@{d}", "email2": f"{_ascii(p)}.{_ascii(s)}@work.dev", "handle": _ascii(p)}
        for p, d, s in zip(PEOPLE, ["acme.io", "gmail.com", "proton.me", "globex.com"] * 20, SURNAMES * 3)
    ],
    "phone": ["+44 7700 900123", "+1 415 555 0199", "+351 912 345 678", "+254 712 345678", "+91 98765 43210",
              "+49 151 2345 6789", "+81 90 1234 5678", "+55 11 91234 5678"],
    "street": ["Rua Augusta", "Baker Street", "Kurfürstendamm", "Ngong Road", "Calle de Alcalá", "Queen St W"],
    "year": ["2004", "2008", "2010", "2011", "2013", "2014", "2015", "2016", "2017", "2018", "2020", "2021"],
    "kidage": ["6", "9", "11", "12", "15", "18", "19", "22"],
    "age": ["23", "27", "31", "34", "38", "42", "45", "51", "58", "63"],
    "diet": ["vegan", "vegetarian", "pescatarian", "mostly plant-based", "doing keto", "teetotal", "dairy-free",
             "low-carb"],
    "workspace": ["the terminal", "tmux", "neovim", "VS Code", "Emacs", "JetBrains Rider", "Jupyter notebooks", "Zed",
                  "Obsidian", "Excel", "Figma", "my Notion workspace"],
}
SHARED_SLOTS.update(EXTRA_SLOTS)


# --------------------------------------------------------------------------------------------------------------------
# Template filling
# --------------------------------------------------------------------------------------------------------------------

_SLOT = re.compile(r"\{(\w+)(?:\.(\w+))?(?:#(\d))?\}")


def fill(template: str, slots: dict[str, list], rng: random.Random) -> str:
    """Fill a template; `{x}` and `{x#2}` draw different values of slot x, `{x.f}` reads field f of one composite value."""
    chosen: dict[tuple[str, str], int] = {}
    ticks: dict[tuple[str, str], bool] = {}

    def pick(name: str, idx: str) -> int:
        key = (name, idx)
        if key not in chosen:
            taken = {v for (n, _), v in chosen.items() if n == name}
            options = [i for i in range(len(slots[name])) if i not in taken]
            chosen[key] = rng.choice(options)
            ticks[key] = rng.random() < 0.15
        return chosen[key]

    def sub(m: re.Match) -> str:
        name, fld, idx = m.group(1), m.group(2), m.group(3) or "1"
        value = slots[name][pick(name, idx)]
        text = value[fld] if fld else value
        slot_id = f"{name}.{fld}" if fld else name
        if slot_id in CODE_SLOTS and ticks[(name, idx)] and "`" not in text:
            text = f"`{text}`"
        return text

    return _SLOT.sub(sub, template)


# --------------------------------------------------------------------------------------------------------------------
# Form variation. Each transform keeps the label: it changes the surface, never the memory action.
# --------------------------------------------------------------------------------------------------------------------

TASK_TALK = ["fix the lint errors", "run the tests again", "rebase on main", "bump the version",
             "push the branch when you're done", "wrap up the PR", "rename that var to `retries`",
             "add a docstring there", "kill the dev server", "regenerate the lockfile", "open the PR",
             "squash those two commits", "rerun the failing job", "merge it"]
ACK_TALK = ["ok ship it", "looks good, merge it", "nice, that worked", "the migration ran fine", "cool, tests pass now",
            "ok that diff looks right", "approved", "thanks, that fixed it", "great, CI is green", "lgtm"]
JOINERS_BEFORE = ["{task}. also {msg}", "{task} — btw {msg}", "{task}, and {msg}", "{task}. oh and {msg}",
                  "{task}. by the way, {msg}", "{task}; separately, {msg}", "{task}. unrelated: {msg}"]
JOINERS_AFTER = ["{msg}. anyway, {task}", "{msg}. now {task}", "{msg} — anyway {task} please", "{msg}. then {task}"]
OPENERS = ["Quick one.", "Context: I'm in the middle of the {project} PR.", "Morning!", "Okay, new topic.",
           "Sorry for the wall of text earlier.", "Back from lunch.", "Hey, me again.", "One more thing.",
           "Before I forget.", "Long day here."]
CLOSERS = {
    "save": ["Thanks.", "Just so you have it.", "Ok, back to the bug.", "Moving on.", "That's all.",
             "No need to reply.", "Carry on with the refactor."],
    "recall": ["I can't find it in my notes.", "Need it for the standup.", "Thanks in advance.",
               "It's for the report I'm writing.", "No rush."],
    "question": ["Thanks in advance.", "Short answer is fine.", "No rush.", "Keep it simple.", "Cheers."],
}
GREETINGS = ["hey, ", "hi! ", "yo ", "hey claude, ", "ok so ", "hello, ", "hmm, ", "alright, "]
EMOJI = [" 🙏", " 👍", " 😅", " 🚀", " 🙂", " 🔥", " ✅", " 🤔", " 😬", " 🎉", " 💀", " 🙃"]
NON_NATIVE = [
    (r"\bI prefer\b", "I am preferring"), (r"\bI always use\b", "always I use"), (r"\bwe decided\b", "we have decided"),
    (r"\bdo you remember\b", "you remember"), (r"\bwhat did I say\b", "what I said"), (r"\bI live in\b",
    "I am living in"),
    (r"\blives in\b", "is living in"), (r"\bI have a\b", "I am having a"), (r"\bmoved to\b", "is moved to"),
    (r"\bdoesn't\b", "is not"), (r"\bwe're going with\b", "we go with"), (r"\bwhat's\b", "what is"),
    (r"\bI don't like\b", "I am not liking"), (r"\bis now\b", "now is"), (r"\bagain\b", "once more"),
    (r"\bplease\b", "kindly"), (r"\bcan you\b", "you can"), (r"\bhow do I\b", "how I can"),
]
KEY_LABEL_GROUP = {P: "save", D: "save", FA: "save", U: "save", R: "recall", Q: "question"}


def _typo(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    spots = [i for i, w in enumerate(words) if len(w) >= 4 and w.isalpha()]
    if not spots:
        return text
    for i in rng.sample(spots, k=min(len(spots), rng.choice([1, 1, 2]))):
        w = words[i]
        j = rng.randrange(1, len(w) - 1)
        kind = rng.choice(["swap", "drop", "double"])
        if kind == "swap":
            w = w[:j] + w[j + 1] + w[j] + w[j + 2:]
        elif kind == "drop":
            w = w[:j] + w[j + 1:]
        else:
            w = w[:j] + w[j] + w[j:]
        words[i] = w
    return " ".join(words)


def _strip_punct(text: str, rng: random.Random) -> str:
    out = re.sub(r"[.,!?;:]+(?=\s|$)", "", text)
    if rng.random() < 0.5:
        out = out.replace("'", "")
    return out.strip()


def _non_native(text: str, rng: random.Random) -> str:
    out = text
    hits = [(p, r) for p, r in NON_NATIVE if re.search(p, out, flags=re.I)]
    for p, r in hits[:2]:
        out = re.sub(p, r, out, count=1, flags=re.I)
    if out == text or rng.random() < 0.5:
        out = re.sub(r"\b(the|a|an) ", lambda m: "" if rng.random() < 0.6 else m.group(0), out)
    return out


def _bury(text: str, label: str, rng: random.Random) -> str:
    msg = text[0].lower() + text[1:] if text[:2] != "I " and text[:2] != "I'" else text
    if rng.random() < 0.7:
        task = rng.choice(TASK_TALK + ACK_TALK)
        return rng.choice(JOINERS_BEFORE).format(task=task, msg=msg.rstrip(". "))
    out = rng.choice(JOINERS_AFTER).format(task=rng.choice(TASK_TALK), msg=msg.rstrip(". "))
    return out.replace("?.", "?").replace("!.", "!")


def _three_sentences(text: str, label: str, rng: random.Random) -> str:
    opener = rng.choice(OPENERS).format(project=rng.choice(PROJECTS))
    body = text[0].upper() + text[1:]
    if body[-1] not in ".!?":
        body += "."
    return f"{opener} {body} {rng.choice(CLOSERS[KEY_LABEL_GROUP[label]])}"


def _backticks(text: str, rng: random.Random) -> str:
    candidates = [w for w in re.findall(r"\b[\w.-]*[a-z][\w.-]*[-_.\d][\w.-]*\b", text) if "`" not in w]
    if not candidates:
        return text
    w = rng.choice(candidates)
    return text.replace(w, f"`{w}`", 1)


AUGMENTATIONS = {
    "lowercase": lambda t, lab, rng: t.lower(),
    "typo": lambda t, lab, rng: _typo(t, rng),
    "no_punctuation": lambda t, lab, rng: _strip_punct(t, rng),
    "buried_in_task_talk": _bury,
    "three_sentences": _three_sentences,
    "non_native": lambda t, lab, rng: _non_native(t, rng),
    "emoji": lambda t, lab, rng: t + rng.choice(EMOJI),
    "greeting": lambda t, lab, rng: rng.choice(GREETINGS) + (t[0].lower() + t[1:] if not t.startswith("I ") else t),
    "backticks": lambda t, lab, rng: _backticks(t, rng),
}
AUG_WEIGHTS = {"lowercase": 3, "typo": 3, "no_punctuation": 3, "buried_in_task_talk": 3, "three_sentences": 2,
               "non_native": 2, "emoji": 2, "greeting": 2, "backticks": 1}


LIGHT_FORMS = ("lowercase", "typo", "no_punctuation", "emoji", "greeting")


def augment(text: str, label: str, rng: random.Random, light: bool = False) -> tuple[str, list[str]]:
    """Apply one or two label-preserving surface transforms (only light ones to very short messages)."""
    names = [n for n in AUG_WEIGHTS if not light or n in LIGHT_FORMS]
    weights = [AUG_WEIGHTS[n] for n in names]
    first = rng.choices(names, weights)[0]
    chosen = [first]
    if rng.random() < 0.35:
        second = rng.choices(names, weights)[0]
        # A wrapper already supplies an opening; a second one reads as two messages glued together.
        wrappers = {"buried_in_task_talk", "three_sentences", "greeting"}
        if second not in chosen and not ({first, second} <= wrappers):
            chosen.append(second)
    # Surface noise (case, typos, punctuation) goes last so it also hits the wrapper text.
    order = ["non_native", "backticks", "buried_in_task_talk", "three_sentences", "greeting", "emoji",
             "lowercase", "typo", "no_punctuation"]
    out = text
    for name in sorted(chosen, key=order.index):
        out = AUGMENTATIONS[name](out, label, rng)
    return out, chosen


# --------------------------------------------------------------------------------------------------------------------
# Assembly
# --------------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Example:
    text: str
    label: str
    family: str
    source: str  # "handwritten", "handwritten-aug" or "template"


def norm_key(text: str) -> str:
    """Key for duplicate detection: case, punctuation, emoji and spacing do not make two messages different."""
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def load_handwritten() -> list[dict]:
    rows = [json.loads(line) for line in HANDWRITTEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    for r in rows:
        assert r["label"] in LABELS, r
        assert r["group"] and r["text"].strip(), r
    return rows


LIGHT_FAMILIES = {"q-chitchat", "q-short-reply"}


def family_pool(fam: Family, rng: random.Random, seen: set[str]) -> list[Example]:
    """Up to FAMILY_CAP distinct messages from one family, about TPL_AUG_RATE of them with form variation."""
    slots = {**SHARED_SLOTS, **fam.slots}
    light = fam.id in LIGHT_FAMILIES
    out: list[Example] = []
    used = Counter()
    misses = Counter()
    alive = list(range(len(fam.templates)))
    while len(out) < FAMILY_CAP and alive:
        # The least-used template goes next, so templates with many slot combinations do not crowd out the rest.
        low = min(used[i] for i in alive)
        t = rng.choice([i for i in alive if used[i] == low])
        text = fill(fam.templates[t], slots, rng)
        if rng.random() < TPL_AUG_RATE:
            text, _ = augment(text, fam.label, rng, light=light or len(text.split()) <= 2)
        key = norm_key(text)
        if not key or key in seen:
            misses[t] += 1
            if misses[t] >= 30:
                alive.remove(t)
            continue
        seen.add(key)
        used[t] += 1
        out.append(Example(text, fam.label, f"tpl-{fam.id}", "template"))
    rng.shuffle(out)
    return out


def build_examples() -> tuple[list[Example], dict]:
    rng = random.Random(SEED)
    seen: set[str] = set()
    examples: list[Example] = []
    dropped_dupes = 0
    for row in load_handwritten():
        key = norm_key(row["text"])
        if key in seen:
            dropped_dupes += 1
            continue
        seen.add(key)
        examples.append(Example(row["text"], row["label"], f"hw-{row['group']}", "handwritten"))
    originals = list(examples)
    for ex in originals:
        if rng.random() < HW_AUG_RATE:
            text, _ = augment(ex.text, ex.label, rng, light=len(ex.text.split()) <= 2)
            key = norm_key(text)
            if key and key not in seen:
                seen.add(key)
                examples.append(Example(text, ex.label, ex.family, "handwritten-aug"))

    hw_per_label = Counter(e.label for e in examples
                           if not e.family.removeprefix("hw-").startswith(BUDGET_EXEMPT_GROUP_PREFIXES))
    pools = {fam.id: family_pool(fam, random.Random(f"{SEED}-{fam.id}"), seen) for fam in FAMILIES}
    # Water-fill each label's template budget across its families so small families give all they have.
    for label in LABELS:
        fams = [f for f in FAMILIES if f.label == label]
        budget = max(0, TARGET_PER_LABEL - hw_per_label[label])
        take = {f.id: 0 for f in fams}
        open_fams = [f.id for f in fams]
        while budget > 0 and open_fams:
            share = max(1, budget // len(open_fams))
            for fid in list(open_fams):
                add = min(share, len(pools[fid]) - take[fid], budget)
                take[fid] += add
                budget -= add
                if take[fid] >= len(pools[fid]):
                    open_fams.remove(fid)
                if budget <= 0:
                    break
        for f in fams:
            examples.extend(pools[f.id][: take[f.id]])
    stats = {"dropped_handwritten_dupes": dropped_dupes}
    return examples, stats


def load_pins() -> dict[str, str]:
    """family -> split for the families of earlier releases (split_pins.json)."""
    pins = json.loads(PINS.read_text(encoding="utf-8"))["pins"]
    assert set(pins.values()) <= set(SPLITS), set(pins.values())
    return pins


def assign_splits(examples: list[Example], steps: int = 20000) -> dict[str, str]:
    """Family-level split near 80/10/10 per label, every (label, source) stratum in every split: greedy, then local search."""
    rng = random.Random(f"{SEED}-split")
    fam_counts: dict[str, Counter] = defaultdict(Counter)
    for e in examples:
        fam_counts[e.family][(e.label, e.source.split("-")[0])] += 1
    strata: Counter = Counter()
    labels: Counter = Counter()
    for c in fam_counts.values():
        strata.update(c)
        for (lab, _), n in c.items():
            labels[lab] += n
    current = {s: Counter() for s in SPLITS}

    def cost() -> float:
        total = 0.0
        for split in SPLITS:
            share = SPLIT_SHARE[split]
            by_label: Counter = Counter()
            for (lab, _), n in current[split].items():
                by_label[lab] += n
            total += sum((by_label[lab] / (share * labels[lab]) - 1) ** 2 for lab in labels)
            # Each split needs both hand-written and template families of every label; their exact mix matters less.
            total += sum(10.0 if current[split][k] <= 0 else 0.1 * (current[split][k] / (share * strata[k]) - 1) ** 2
                         for k in strata)
        return total

    # Families of earlier releases keep their split (so test stays comparable across releases); only new
    # families are placed, greedily and then by the local search below.
    pins = load_pins()
    assignment: dict[str, str] = {}
    for fam in sorted(fam_counts):
        if fam in pins:
            assignment[fam] = pins[fam]
            current[pins[fam]].update(fam_counts[fam])
    fams = sorted(f for f in fam_counts if f not in pins)
    rng.shuffle(fams)
    fams.sort(key=lambda f: -sum(fam_counts[f].values()))
    for fam in fams:
        def deficit(split: str) -> float:
            return sum(n * (SPLIT_SHARE[split] * strata[k] - current[split][k]) / strata[k]
                       for k, n in fam_counts[fam].items())
        assignment[fam] = max(SPLITS, key=deficit)
        current[assignment[fam]].update(fam_counts[fam])

    def move(fam: str, to: str) -> None:
        current[assignment[fam]].subtract(fam_counts[fam])
        current[to].update(fam_counts[fam])
        assignment[fam] = to

    best = cost()
    for _ in range(steps if fams else 0):  # every family pinned: nothing to place
        a = rng.choice(fams)
        if rng.random() < 0.5:  # move one family
            old_split = assignment[a]
            move(a, rng.choice([s for s in SPLITS if s != old_split]))
            new = cost()
            if new < best:
                best = new
            else:
                move(a, old_split)
        else:  # swap two families across splits
            b = rng.choice(fams)
            sa, sb = assignment[a], assignment[b]
            if sa == sb:
                continue
            move(a, sb)
            move(b, sa)
            new = cost()
            if new < best:
                best = new
            else:
                move(a, sa)
                move(b, sb)
    return assignment


def write_jsonl(path: Path, rows: list[Example]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for e in rows:
            fh.write(json.dumps({"text": e.text, "label": e.label, "family": e.family}, ensure_ascii=False) + "\n")


def check(examples: list[Example], assignment: dict[str, str], by_split: dict[str, list[Example]]) -> None:
    total = len(examples)
    per_label = Counter(e.label for e in examples)
    assert total >= 3300, total
    for label in LABELS:
        share = per_label[label] / total
        assert 0.15 <= share <= 0.19, (label, share)
    fam_sizes = Counter(e.family for e in examples if e.source == "template")
    assert max(fam_sizes.values()) <= FAMILY_CAP, fam_sizes.most_common(1)
    assert len([f for f in fam_sizes]) >= 60, len(fam_sizes)
    hw = sum(e.source == "handwritten" for e in examples)
    assert hw / total >= 0.20, hw / total
    fam_splits: dict[str, set[str]] = defaultdict(set)
    for split, rows in by_split.items():
        for e in rows:
            fam_splits[e.family].add(split)
    leaks = [f for f, s in fam_splits.items() if len(s) > 1]
    assert not leaks, leaks
    moved = [f for f, s in load_pins().items() if f in fam_splits and fam_splits[f] != {s}]
    assert not moved, moved
    keys = {s: {norm_key(e.text) for e in rows} for s, rows in by_split.items()}
    for a in SPLITS:
        for b in SPLITS:
            if a < b:
                assert not keys[a] & keys[b], (a, b, list(keys[a] & keys[b])[:5])
    assert len({norm_key(e.text) for e in examples}) == total


def render_doc(examples: list[Example], by_split: dict[str, list[Example]], stats: dict) -> str:
    total = len(examples)
    per_label = Counter(e.label for e in examples)
    per_split_label = {s: Counter(e.label for e in rows) for s, rows in by_split.items()}
    src = Counter(e.source for e in examples)
    fams_all = {e.family for e in examples}
    tpl_fams = {e.family for e in examples if e.source == "template"}
    hw_groups = fams_all - tpl_fams
    fams_per_split = {s: len({e.family for e in rows}) for s, rows in by_split.items()}
    tpl_per_label = Counter(f.label for f in FAMILIES if f"tpl-{f.id}" in tpl_fams)
    fam_sizes = Counter(e.family for e in examples if e.source == "template")

    lines = [
        "| label | " + " | ".join(SPLITS) + " | total | share |",
        "|---|" + "---:|" * (len(SPLITS) + 2),
    ]
    for label in LABELS:
        row = [str(per_split_label[s][label]) for s in SPLITS]
        lines.append(f"| {label} | " + " | ".join(row) + f" | {per_label[label]} | {per_label[label] / total:.1%} |")
    lines.append("| **all** | " + " | ".join(str(len(by_split[s])) for s in SPLITS) + f" | {total} | 100% |")
    counts_table = "\n".join(lines)

    fam_table = "\n".join(
        f"| {label} | {tpl_per_label[label]} | "
        f"{sum(1 for e in examples if e.label == label and e.source == 'handwritten')} | "
        f"{sum(1 for e in examples if e.label == label and e.source == 'handwritten-aug')} | "
        f"{sum(1 for e in examples if e.label == label and e.source == 'template')} |"
        for label in LABELS)
    template_list = "\n".join(
        f"- `tpl-{f.id}` ({f.label}, {len(f.templates)} paraphrase templates, {fam_sizes[f'tpl-{f.id}']} examples)"
        for f in FAMILIES)
    return DOC_TEMPLATE.format(
        total=total, counts_table=counts_table, fam_table=fam_table, template_list=template_list,
        hw=src["handwritten"], hw_share=src["handwritten"] / total, hw_aug=src["handwritten-aug"],
        tpl=src["template"], n_tpl_fams=len(tpl_fams), n_hw_groups=len(hw_groups), n_fams=len(fams_all),
        fams_train=fams_per_split["train"], fams_val=fams_per_split["val"], fams_test=fams_per_split["test"],
        cap=FAMILY_CAP, max_fam=max(fam_sizes.values()), seed=SEED, hw_aug_rate=HW_AUG_RATE,
        tpl_aug_rate=TPL_AUG_RATE, dropped=stats["dropped_handwritten_dupes"],
        augmentations=", ".join(f"`{a}`" for a in AUGMENTATIONS),
    )


DOC_TEMPLATE = """# Intent dataset (6 labels)

Labelled user messages to an AI assistant (coding agents, work, personal life) for the cortexd message-intent
classifier. Produced by `generate.py` (seed `{seed}`); do not edit the JSONL files by hand, edit
`handwritten.jsonl` or the families in `generate.py` and rerun:

```sh
.venv/bin/python models/intent/data/generate.py
```

Files: `train.jsonl`, `val.jsonl`, `test.jsonl`, one JSON object per line: `{{"text", "label", "family"}}`.
`family` starts with `hw-` for hand-written groups and `tpl-` for template families.

## Counts

{total} examples. Splits are made **by family** (no family appears in two splits; the script asserts it, and
asserts that no normalised text appears in two splits).

{counts_table}

| label | template families | hand-written | hand-written, augmented copies | template examples |
|---|---:|---:|---:|---:|
{fam_table}

- Hand-written originals: {hw} ({hw_share:.1%} of the total), in {n_hw_groups} groups of related messages;
  plus {hw_aug} augmented copies of them, which stay in the group of their original.
- Template examples: {tpl} from {n_tpl_fams} families; cap {cap} per family (largest: {max_fam}).
- Families per split: train {fams_train}, val {fams_val}, test {fams_test} ({n_fams} in all).
- Exact and near-exact duplicates (same text after lower-casing and removing punctuation and emoji) are dropped
  globally before splitting; {dropped} hand-written duplicates were dropped.

## How it was made

1. **Hand-written messages** (`handwritten.jsonl`, fields `text`, `label`, `group`): written one by one across
   coding-agent, work and personal-life contexts, with deliberately mixed register, length and form (typos,
   lowercase, fragments, non-native phrasing, emoji, code in backticks, several sentences). Groups collect 4–10
   (fifth round: 8–20) related messages (same topic or the same contrast, e.g. a recall question next to the update it might be
   confused with), so near-paraphrases never straddle splits. A group may mix labels. The second round (groups
   after `fact-emoji-misc` in the file) added explicit memory cues for every label ("remember that …", "keep in
   mind …", "note: …", and the QUESTION counterpart "remember to …"), the preference/fact boundary (habits and
   tools the user likes vs attributes, time zones, ownership), old moves and background (SAVE_FACT) vs recent
   changes (UPDATE_INFO), decisions followed by a task or phrased as a self-answered question, one-off vs
   standing instructions, and `six-*` groups that say one thing about a shared topic in each of the six labels.
   A third, small round (groups from `q-own-content-tasks` on) was written after reading the val errors of the
   first model trained on the second round: task requests about the user's own text (QUESTION) vs summaries of
   stored memory (RECALL_INFO), "delete what you have about …" (UPDATE_INFO) vs "show me what you have about …"
   (RECALL_INFO), "how do I like my …?" recalls, "for now … later" decisions, recurring schedules as facts.
   A fourth round (group `pref-address-3` and template family `pref-address-me`) followed the next run's val
   errors: how the user wants to be addressed, of which the train split had almost nothing (the first release's
   `pref-call-me` family and `pref-address` group are both in val).
   A fifth round (groups `r5-*` at the end of the file) aimed at messages written independently of the data
   rather than at single val errors: a probe of about 385 fresh messages, 20–40 per label, was written and
   labelled first and only then run through the fourth-round model (it got about 95% right). Its misses, and the
   fourth-round model's val errors, pointed at: diet choices under "keep in mind" (SAVE_PREFERENCE, not
   SAVE_FACT); changes stated without a change word ("my manager is Kemal since the reorg", "the kids' school
   starts at 8:15 this year"); reversals that read like decisions ("scratch Hetzner, we're putting it on
   Fly.io"); recalls shaped as how-to questions ("how do I take my coffee?", "use my preferred test framework");
   facts with a negation ("we rent, we don't own"); decisions with "drop"/"for now"; and QUESTION messages that
   quote memory-like text or leave a choice open ("translate: 'the meeting moved to Thursday'", "we might
   switch to Fly.io, not sure yet"). The probe, less duplicates of earlier messages and a few it was unclear how
   to label, plus further messages on those boundaries make up the round. Its groups follow topics (kids and
   school, diet, infra, tooling, the team, the office, the flat, …), each mixing labels, so the fact, recall,
   update and decision about one topic share a split.
   A sixth, small round (groups `r6-*`, 12 messages per label) was written after reading the val errors of the
   first model trained on the fifth round, and after a second fresh probe of 114 messages that this model got
   94% right: recall requests that lean on stored preferences ("do the invoice in the font I always use", "set
   up the linter the way I like it"), reversals phrased as plans ("cancel the plan to rewrite in Go, we'll keep
   Python"), changes whose only cue is an event ("after the reorg, Dana owns search"), facts with a negation
   ("our team doesn't do on-call, SRE handles it"), task requests with "remind"/"note"/"update" (QUESTION),
   "X over Y" preferences and decisions that look like facts. Its groups are pinned to train, so val and test
   stay those of the fifth round (the per-label target rose by 15 to keep their template families at the same
   size: val gained one template message) and text written against val errors stays out of test.
   To keep the template families at their earlier size over both rounds, the per-label target rose from 950 to
   1090.
   A seventh round (groups `r7-*`, 164 messages, 24–25 per label and 43 QUESTION) was written without looking
   at any model's test errors, for breadth rather than for single errors: topic groups (CI, garden, money, API
   design, health, team, home, learning, writing, databases, travel, family, code layout) that each hold the
   decision, the open question about the same choice, the fact, the recall and the later change; non-native
   phrasing; memory actions buried after task talk or a three-sentence preamble; decisions with "final", "it
   is", "screw it", "that's settled"; and QUESTION look-alikes (deliberations, how-tos, world facts, transient
   states, acknowledgements). Its groups are pinned to train and exempt from the per-label budget
   (`BUDGET_EXEMPT_GROUP_PREFIXES`), so every template family, and val and test, are byte-identical to the
   sixth round's.
2. **Template families** (`FAMILIES` in `generate.py`): each family is one intent shape written as 5–13
   paraphrase templates (the chit-chat and bare-reply families list up to 32 fixed messages instead), filled from shared slot lists (people names from many cultures, relatives, cities,
   projects, teams, tools with matching tasks, databases, frameworks, clouds, hosts, ports, dates, foods,
   hobbies, pets, languages, companies, roles, …). `{{x}}` and `{{x#2}}` draw two different values; composite slots
   keep related values together (tool+task, old+new tool, country+capital, wrong+right value).
3. **Form variation** (seeded): about {tpl_aug_rate:.0%} of template messages and one copy of about {hw_aug_rate:.0%}
   of hand-written messages get one or two of: {augmentations}. These are, in order:
   lower-casing; one or two typos (swap, drop or double a letter); punctuation removed (so `?` is not a
   QUESTION/RECALL marker); the message buried in task talk ("fix the lint errors. also …", "… anyway, rebase on
   main"); a three-sentence message (neutral opener + message + label-neutral closer); non-native phrasing
   ("I am preferring", dropped articles, "kindly"); a trailing emoji; a greeting prefix; backticks around a
   code-like token. Slot values that look like code (hosts, ports, tools, paths) are also back-ticked 15% of the time.
4. **Balancing**: each label gets the same target ({total} / 6 ≈ its share); hand-written messages count first,
   the rest is water-filled across that label's template families up to the cap.
5. **Split**: families of earlier builds stay where they were (`split_pins.json`, checked by the script): the
   first release's families keep their split, so its val and test families are still in val and test, and each
   later round's families keep the split of the training run whose val errors the next round answered (the
   fifth round's, the split of the run trained on it; the sixth round's, train). New
   families are assigned greedily
   (largest first, to the split furthest below 80/10/10), then a seeded local search moves and swaps them to
   bring every label close to 80/10/10 while keeping both hand-written and template families of every label in
   val and test.

## Labels and borderline rules

| label | meaning |
|---|---|
| SAVE_PREFERENCE | a preference, habit, like/dislike or standing instruction about how the user wants things done |
| SAVE_DECISION | a choice made or being committed to, by the user or their team |
| SAVE_FACT | a durable fact about the user, their people, projects, systems or configuration |
| RECALL_INFO | asks for (or needs) something said or stored earlier |
| UPDATE_INFO | corrects, changes or retracts something that was true or stated before |
| QUESTION | no memory action: questions, how-to, task requests, chit-chat, greetings, thanks, acknowledgements |

Borderline rules applied when labelling:

- **Any memory action beats QUESTION.** "fix the lint errors. also I prefer 4-space indents" is SAVE_PREFERENCE;
  "our API runs on 8080, can you update the compose file?" is SAVE_FACT. Precedence when one message holds
  two memory actions: UPDATE_INFO > SAVE_DECISION > SAVE_PREFERENCE > SAVE_FACT > RECALL_INFO. Messages that
  mix a save and a recall are avoided.
- **Standing vs one-off instruction.** "always run the linter before committing", "from now on answer in French" →
  SAVE_PREFERENCE. "remember to add tests", "run the linter before you push", "keep it short" (this answer only) →
  QUESTION. The word "remember" alone does not make a memory action.
- **Preference vs fact.** Likes, dislikes, habits, styles, how to address the user ("call me Sam", "I go by Sam")
  → SAVE_PREFERENCE. Objective attributes → SAVE_FACT: name on record, allergies and health, relationships,
  where people live, jobs, ownership, hosts, ports, schedules ("standup is at 9:30"). Diet choices and hobbies the
  user enjoys are preferences; allergies and intolerances are facts.
- **Decision vs preference.** A commitment to a choice (usually "we/let's/decided/going with/X it is", also personal
  life choices such as "I've decided to take the offer") → SAVE_DECISION. A personal, general taste ("I always
  use pnpm") → SAVE_PREFERENCE. A team convention adopted now ("we're standardising on ruff") → SAVE_DECISION.
- **Decision vs question.** "should we go with Postgres or MySQL?", "we're debating Vue vs React", "thinking
  about DynamoDB but not sure" → QUESTION. "let's go with Postgres" → SAVE_DECISION.
- **Decision vs fact.** An assignment or plan made now ("Priya will lead the migration, decided in standup") →
  SAVE_DECISION; an established state ("Priya owns billing") → SAVE_FACT.
- **Update vs decision/fact.** An explicit change from a previous value ("we switched from npm to pnpm",
  "Bob owns billing now, not Priya", "my sister moved to Porto", "the launch slipped to the 14th", "we're no longer
  going with Mongo, it's Postgres") → UPDATE_INFO, even when it is also a decision. Past facts with no prior
  value to replace ("I moved to Berlin back in 2019") → SAVE_FACT. Retractions ("forget what I said about the
  deploy window", "delete Bob's old number") → UPDATE_INFO.
- **Recall vs question.** RECALL_INFO when the answer can only come from what this user stored before ("which DB
  did we pick?", "when's my sister's birthday?", "use the port I gave you earlier"); QUESTION when it is general
  knowledge ("what's the default Postgres port?", "what did Knuth say about premature optimisation?").
  Task requests that depend on stored memory ("email Priya at the address I gave you") are RECALL_INFO.
- **Recall vs update.** "what was the deadline again?" → RECALL_INFO; "the deadline is now Friday" → UPDATE_INFO.
- **World facts are QUESTION.** Statements of general knowledge ("Python was created by Guido", "Canberra is the
  capital of Australia") carry no memory action about the user → QUESTION, as do transient states ("the build is
  red again", "staging is down right now", "I'm exhausted today"), which are not durable facts.
- **Bare replies are QUESTION.** "yes", "ok", "pnpm.", "the second one" carry no memory action without the
  previous turn; the classifier sees one message. "pnpm it is" (SAVE_DECISION) or "pnpm, always" (SAVE_PREFERENCE)
  state the commitment themselves.
- **Code that saves is QUESTION.** "what does `store.save()` do?", "why isn't `prefs.update()` persisting?".

## Template families

{template_list}

## Known limitations

- Templates share slot lists; a model can partly learn slot vocabulary. Family-level splits keep templates of a
  family out of val/test, but slot values (names, tools, cities) recur across families, so val/test accuracy on
  template families overstates accuracy on truly new phrasing. Hand-written val/test groups are the better signal.
- English only, with light code-switching; the non-native transform is rule-based and shallow.
- One message, no conversation context: bare replies ("pnpm.", "yes") are always QUESTION even where the previous
  turn would make them a decision.
- Some boundaries are judgement calls (habit vs fact, team convention vs decision, decision vs update); the rules
  above are applied consistently, but an independent labeller may disagree on a few percent of messages.
- Val and test are small (about 655 messages each, about 110 per label) and family-grouped, so one split's accuracy
  moves by a point or more with a single family; read val and test together.
- The third to sixth hand-written rounds were written after reading val errors (never test errors), and the
  training runs were chosen on val, so val accuracy is somewhat optimistic; test is the unbiased figure.
- Pinned families keep their split, but their size follows the water-filling, so a pinned template family can hold
  a few more or fewer examples than in the release it was pinned from.
- Multi-intent messages (save + recall) are excluded rather than labelled; the precedence rule is untested there.
- Augmentation can produce slightly unnatural text (e.g. a typo inside a name, a greeting before thanks).
"""


def main() -> None:
    examples, stats = build_examples()
    assignment = assign_splits(examples)
    by_split = {s: [e for e in examples if assignment[e.family] == s] for s in SPLITS}
    for s in SPLITS:
        random.Random(f"{SEED}-shuffle-{s}").shuffle(by_split[s])
    check(examples, assignment, by_split)
    for s in SPLITS:
        write_jsonl(HERE / f"{s}.jsonl", by_split[s])
    (HERE / "DATASET.md").write_text(render_doc(examples, by_split, stats), encoding="utf-8")

    print(f"{len(examples)} examples, {len({e.family for e in examples})} families")
    print("split".ljust(8) + "".join(lab[:12].rjust(16) for lab in LABELS) + "total".rjust(8))
    for s in SPLITS:
        c = Counter(e.label for e in by_split[s])
        print(s.ljust(8) + "".join(str(c[lab]).rjust(16) for lab in LABELS) + str(len(by_split[s])).rjust(8))
    src = Counter(e.source for e in examples)
    print("sources:", dict(src), f"hand-written share {src['handwritten'] / len(examples):.1%}")


if __name__ == "__main__":
    main()
