"""Generate same-subject relation pairs from templates (pairs_generated.jsonl, val_compatible.jsonl), deterministically."""

# Usage:  .venv/bin/python models/relation/data/generate.py      (then build.py)
#
# Why: the hand-written COMPATIBLE pairs rarely repeat the subject's exact words, while the team's sets add many
# same-subject UPDATE pairs, so the model learnt "same subject, other words" = UPDATE. Here every subject gets
# one family that covers its attributes: mostly COMPATIBLE pairs about two different attributes of the same
# subject (some phrased as a change, "X moved to port 9000", against a memory about another attribute), the
# same attribute of another subject or instance, UPDATEs of one attribute in several phrasings (restated with
# the new value, now / moved to / switched to, "B took over from A", a person swap with another verb, an
# ending), PARTIAL_UPDATEs of a two-part memory, and DUPLICATE paraphrases.
#
# One subject per kind is held back: its families never reach train.jsonl, and its same-subject COMPATIBLE
# pairs make val_compatible.jsonl, a development check of how often the model says UPDATE on them (it is not
# used for selection; val.jsonl is).

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20261202
OUT = HERE / "pairs_generated.jsonl"
VAL_COMPATIBLE = HERE / "val_compatible.jsonl"
# Per training family: how many pairs of each kind (before build.py adds the swapped copies).
SAME_SUBJECT_COMPATIBLE = 8
OTHER_SUBJECT_COMPATIBLE = 3
UPDATES = 6
PARTIAL_UPDATES = 2
DUPLICATES = 3
# Share of same-subject COMPATIBLE pairs whose new text is phrased as a change ("now", "moved to").
PHRASED_AS_CHANGE = 0.3
LOWERCASE = 0.15
TYPO = 0.05


@dataclass(frozen=True)
class Attribute:
    """One property of a subject. {S}/{s} is the subject, {v} the value, {old} the value it replaces."""

    name: str
    frames: tuple[str, ...]
    values: tuple[str, ...]
    change: tuple[str, ...] = ()
    ending: tuple[str, ...] = ()
    person: bool = False  # the value is who does it; frames use different verbs, so a swap is an UPDATE

    def predicates(self) -> list[str]:
        return [f[len("{S} "):] for f in self.frames if f.startswith("{S} ")]


@dataclass(frozen=True)
class Subject:
    name: str
    aliases: tuple[str, ...]
    other: str  # another subject or instance with the same attributes (staging vs production, another team)


@dataclass(frozen=True)
class Kind:
    name: str
    domain: str
    attributes: tuple[Attribute, ...]
    subjects: tuple[Subject, ...] = field(default=())


A = Attribute
S = Subject

KINDS = (
    Kind("container", "code", (
        A("python", ("{S} uses Python {v}", "{S} runs Python {v}", "{S} is built on python {v}",
                     "python version in {s} is {v}", "{S} ships with Python {v}"),
          ("3.10", "3.11", "3.12", "3.13"),
          ("{S} is on Python {v} now", "we moved {s} to Python {v}", "{S} switched to python {v}",
           "{s} got bumped from python {old} to {v}", "{S} now uses Python {v}")),
        A("base", ("{S} is based on {v}", "{S} uses {v} as its base image", "the base image of {s} is {v}",
                   "{S} builds from {v}"),
          ("debian bookworm-slim", "alpine 3.19", "ubuntu 22.04", "a distroless image"),
          ("{S} moved to {v}", "{S} now builds from {v}", "we switched the base image of {s} to {v}",
           "{v} replaced {old} as the base of {s}")),
        A("user", ("{S} runs as {v}", "{S} runs under {v}", "in {s} the process runs as {v}"),
          ("a non-root user", "root"),
          ("{S} runs as {v} now", "{S} was switched to run as {v}", "{S} now runs as {v}")),
        A("port", ("{S} listens on port {v}", "{S} exposes port {v}", "the port for {s} is {v}"),
          ("8080", "8000", "9000", "3000"),
          ("{S} listens on {v} now", "{S} moved to port {v}", "we changed the port of {s} from {old} to {v}")),
        A("memory", ("{S} has a memory limit of {v}", "{S} is capped at {v} of memory", "memory limit for {s}: {v}",
                     "{S} gets {v} of RAM"),
          ("512 MB", "1 GB", "2 GB", "4 GB"),
          ("{S} is capped at {v} now", "we raised the memory limit of {s} to {v}", "{S} now gets {v} of RAM"),
          ("{S} has no memory limit anymore", "we removed the memory cap on {s}")),
        A("healthcheck", ("{S} has a healthcheck on {v}", "the healthcheck of {s} hits {v}",
                          "{S} is health-checked at {v}"),
          ("/healthz", "/ready", "/status"),
          ("the healthcheck of {s} moved to {v}", "{S} is health-checked at {v} now"),
          ("{S} has no healthcheck anymore", "we dropped the healthcheck from {s}")),
        A("restart", ("{S} has restart policy {v}", "the restart policy for {s} is {v}",
                      "{S} uses the {v} restart policy"),
          ("always", "on-failure", "unless-stopped"),
          ("{S} restart policy is {v} now", "we switched {s} to restart {v}")),
    ), (
        S("the billing container", ("billing container", "the billing docker container"), "the staging billing container"),
        S("the search-indexer container", ("search-indexer", "the indexer container"), "the search-api container"),
        S("the auth-proxy container", ("auth-proxy", "the auth proxy container"), "the auth-proxy container in staging"),
        S("the reports-worker container", ("reports-worker", "the reports worker"), "the exports-worker container"),
        S("the thumbnailer container", ("thumbnailer", "the thumbnail container"), "the video-transcoder container"),
        S("the mailer container", ("mailer", "the mail container"), "the mailer container on the test cluster"),
    )),
    Kind("service", "code", (
        A("database", ("{S} stores its data in {v}", "{S} uses {v}", "{S} is backed by {v}", "the db for {s} is {v}",
                       "{S} talks to {v}"),
          ("Postgres 14", "Postgres 16", "MySQL 8", "MongoDB 7"),
          ("{S} moved to {v}", "{S} runs on {v} now", "we migrated {s} from {old} to {v}",
           "{S} was switched over to {v}")),
        A("queue", ("{S} consumes events from {v}", "{S} reads its jobs from {v}", "the queue behind {s} is {v}"),
          ("Kafka", "RabbitMQ", "SQS", "Redis streams"),
          ("{S} moved to {v}", "{v} took over from {old} as the queue for {s}", "{S} reads from {v} now")),
        A("deploy", ("{S} deploys on {v}", "deploys of {s} go out on {v}", "{S} is released on {v}",
                     "we ship {s} on {v}"),
          ("Tuesdays", "Thursdays", "Mondays", "Fridays"),
          ("{S} deploys on {v} now", "deploys of {s} moved to {v}", "the release day of {s} switched from {old} to {v}"),
          ("{S} has no fixed deploy day anymore", "{S} is deployed on every merge now, there is no release day")),
        A("owner", ("{S} is owned by {v}", "{v} owns {s}", "{v} maintains {s}", "{S} belongs to {v}",
                    "{v} is responsible for {s}"),
          ("the platform team", "the payments team", "the data team", "team Atlas"),
          ("{v} took over {s} from {old}", "{S} was handed over to {v}", "ownership of {s} moved to {v}"),
          person=True),
        A("timeout", ("{S} has a request timeout of {v}", "requests to {s} time out after {v}", "{S} times out at {v}"),
          ("5 seconds", "10 seconds", "30 seconds", "2 seconds"),
          ("the timeout of {s} was raised to {v}", "{S} times out after {v} now", "we set the timeout of {s} to {v}")),
        A("replicas", ("{S} runs {v} replicas", "{S} is scaled to {v} replicas", "we run {v} instances of {s}"),
          ("2", "3", "4", "6"),
          ("{S} was scaled to {v} replicas", "{S} runs {v} replicas now", "we went from {old} to {v} replicas of {s}")),
        A("language", ("{S} is written in {v}", "{S} is a {v} service", "the code of {s} is in {v}"),
          ("Go", "Kotlin", "Python", "Rust", "TypeScript"),
          ("{S} was rewritten in {v}", "{S} is in {v} now", "we ported {s} from {old} to {v}")),
        A("logs", ("{S} sends its logs to {v}", "logs from {s} go to {v}", "{S} ships logs to {v}"),
          ("Loki", "Datadog", "CloudWatch", "Elasticsearch"),
          ("logs from {s} go to {v} now", "{S} switched its logging to {v}", "{v} replaced {old} for the logs of {s}")),
    ), (
        S("the orders service", ("orders svc", "the orders backend"), "the invoices service"),
        S("the checkout API", ("checkout api", "the checkout backend"), "the checkout API in staging"),
        S("the notification service", ("notifications svc", "the notifier service"), "the email service"),
        S("the inventory service", ("inventory svc", "the stock service"), "the warehouse service"),
        S("the pricing service", ("pricing svc", "the prices backend"), "the pricing service in the EU region"),
        S("the user-profile service", ("profile svc", "the profiles backend"), "the accounts service"),
    )),
    Kind("project", "code", (
        A("ci", ("{S} runs CI on {v}", "CI for {s} is {v}", "{S} is built by {v}", "{S} uses {v} for CI"),
          ("GitHub Actions", "GitLab CI", "Jenkins", "CircleCI", "Buildkite"),
          ("{S} moved its CI to {v}", "CI for {s} is on {v} now", "we switched {s} from {old} to {v}")),
        A("tests", ("{S} is tested with {v}", "{S} uses {v} for tests", "the tests in {s} run on {v}"),
          ("pytest", "Jest", "Vitest", "JUnit 5"),
          ("the tests of {s} were ported to {v}", "{S} uses {v} for tests now", "{v} replaced {old} in {s}")),
        A("formatter", ("{S} is formatted with {v}", "{S} uses {v} as its formatter", "formatting in {s} is done by {v}"),
          ("black", "ruff format", "prettier", "gofmt"),
          ("{S} switched its formatter to {v}", "{S} is formatted with {v} now"),
          ("{S} has no formatter anymore", "we stopped enforcing formatting in {s}")),
        A("branch", ("the default branch of {s} is {v}", "{S} uses {v} as the default branch", "{S} merges into {v}"),
          ("main", "master", "develop", "trunk"),
          ("{S} renamed its default branch to {v}", "{S} merges into {v} now")),
        A("maintainer", ("{v} maintains {s}", "{S} is maintained by {v}", "{v} reviews every PR in {s}",
                         "{v} is the lead of {s}", "{S} is looked after by {v}"),
          ("Ana", "Jonas", "Mei", "Kofi", "Sara"),
          ("{v} took over {s} from {old}", "{v} is the maintainer of {s} now", "{S} is in {v}'s hands now"),
          ("nobody maintains {s} anymore", "{S} is unmaintained now"), person=True),
        A("release", ("{S} cuts a release {v}", "{S} is released {v}", "new versions of {s} come out {v}"),
          ("every two weeks", "monthly", "every Friday", "once a quarter"),
          ("{S} is released {v} now", "we moved {s} to releasing {v}")),
        A("node", ("{S} requires Node {v}", "{S} needs node {v}", "{S} targets Node {v}"),
          ("18", "20", "22"),
          ("{S} was bumped to Node {v}", "{S} requires Node {v} now", "we moved {s} from node {old} to {v}")),
        A("license", ("{S} is licensed under {v}", "{S} uses the {v} license", "the license of {s} is {v}"),
          ("MIT", "Apache-2.0", "GPL-3.0", "BSD-3-Clause"),
          ("{S} was relicensed under {v}", "{S} is under {v} now")),
    ), (
        S("the mobile app repo", ("mobile repo", "the app repository"), "the web app repo"),
        S("the docs site", ("docs site", "the documentation site"), "the marketing site"),
        S("the data-pipeline repo", ("data-pipeline", "the pipeline repo"), "the data-quality repo"),
        S("the design-system package", ("design system", "the ui kit package"), "the icons package"),
        S("the deploy CLI", ("deploy cli", "our deploy tool"), "the admin CLI"),
        S("the ml-training repo", ("ml-training", "the training repo"), "the ml-serving repo"),
    )),
    Kind("team", "work", (
        A("standup", ("{S} has standup at {v}", "the standup of {s} is at {v}", "{S} meets for standup at {v}",
                      "daily standup for {s}: {v}"),
          ("9:30", "10:00", "9:15", "11:00"),
          ("the standup of {s} moved to {v}", "{S} has standup at {v} now",
           "{s} standup shifted from {old} to {v}"),
          ("{S} dropped the daily standup", "{S} has no standup anymore, updates are async")),
        A("sprint", ("{S} works in {v} sprints", "{S} runs {v} sprints", "{S} plans in {v} sprints"),
          ("one-week", "two-week", "three-week", "four-week"),
          ("{S} switched to {v} sprints", "{S} works in {v} sprints now"),
          ("{S} stopped doing sprints", "{S} has no sprints anymore, it works kanban")),
        A("budget", ("{S} has a budget of {v} this year", "the budget for {s} is {v}", "{S} gets {v} for the year",
                     "{s} budget: {v}"),
          ("€120k", "€200k", "€80k", "€150k"),
          ("the budget of {s} was cut to {v}", "{S} has {v} now", "the budget for {s} went from {old} to {v}")),
        A("manager", ("{S} reports to {v}", "{v} manages {s}", "{v} is the manager of {s}", "{S} is led by {v}",
                      "{v} runs {s}"),
          ("Carla", "Dmitri", "Hannah", "Luis", "Yuki"),
          ("{v} took over {s} from {old}", "{v} is leading {s} now", "{S} got a new manager, {v}"), person=True),
        A("floor", ("{S} sits on the {v} floor", "the desks of {s} are on the {v} floor", "{S} is on the {v} floor"),
          ("second", "third", "fourth", "fifth"),
          ("{S} moved to the {v} floor", "{S} is on the {v} floor now")),
        A("retro", ("{S} holds its retro on {v}s", "the retro of {s} is on {v}", "{S} does a retrospective every {v}"),
          ("Friday", "Monday", "Thursday", "Wednesday"),
          ("the retro of {s} moved to {v}", "{S} holds its retro on {v}s now"),
          ("{S} stopped doing retros",)),
        A("headcount", ("{S} has {v} engineers", "{S} is {v} people", "there are {v} people in {s}"),
          ("5", "7", "9", "12"),
          ("{S} grew to {v} people", "{S} is down to {v} engineers", "{S} has {v} engineers now")),
    ), (
        S("the platform team", ("platform", "the platform folks"), "the infra team"),
        S("the mobile team", ("mobile", "the app team"), "the web team"),
        S("the data team", ("data team", "the analytics folks"), "the ML team"),
        S("the support team", ("support", "customer support"), "the sales team"),
        S("the growth team", ("growth", "the growth squad"), "the marketing team"),
        S("the security team", ("security", "secops"), "the compliance team"),
    )),
    Kind("colleague", "work", (
        A("role", ("{S} works as {v}", "{S} is {v}", "{S} has a job as {v}"),
          ("a backend engineer", "a product manager", "a data analyst", "an engineering manager", "a designer"),
          ("{S} became {v}", "{S} moved into a role as {v}", "{S} is {v} now")),
        A("team", ("{S} is on the {v} team", "{S} works in the {v} team", "{S} belongs to the {v} team"),
          ("payments", "search", "infra", "mobile"),
          ("{S} moved to the {v} team", "{S} switched to the {v} team", "{S} is on the {v} team now")),
        A("office", ("{S} works from the {v} office", "{S} sits in the {v} office", "{S}'s desk is in the {v} office"),
          ("Berlin", "Lisbon", "London", "Warsaw"),
          ("{S} relocated to the {v} office", "{S} works from the {v} office now",
           "{S} moved from the {old} office to {v}")),
        A("remote", ("{S} works remotely on {v}", "{S} is in home office on {v}", "{S}'s remote days are {v}"),
          ("Mondays and Fridays", "Wednesdays", "Tuesdays and Thursdays", "Fridays"),
          ("{S} works remotely on {v} now", "{S}'s remote days changed to {v}"),
          ("{S} no longer works remotely", "{S} is in the office every day now")),
        A("manager", ("{S} reports to {v}", "{v} is {s}'s manager", "{S}'s manager is {v}", "{v} manages {s}"),
          ("Greta", "Samir", "Olu", "Ingrid"),
          ("{S} reports to {v} now", "{v} took over {s}'s team from {old}", "{S} got {v} as a new manager"),
          person=True),
        A("timezone", ("{S} is in the {v} timezone", "{S} works on {v} time", "{S}'s timezone is {v}"),
          ("CET", "EST", "IST", "PST"),
          ("{S} moved to the {v} timezone", "{S} works on {v} time now")),
        A("laptop", ("{S} uses a {v}", "{S} works on a {v}", "{S}'s laptop is a {v}"),
          ("MacBook Pro", "ThinkPad X1", "Dell XPS", "Framework laptop"),
          ("{S} switched to a {v}", "{S} got a {v} now", "{S} replaced the {old} with a {v}")),
    ), (
        S("Priya", ("priya", "Priya from engineering"), "Jun"),
        S("Tomasz", ("tomasz", "Tomek"), "Rafael"),
        S("Aisha", ("aisha", "Aisha B."), "Noor"),
        S("Marco", ("marco", "Marco R."), "Stefan"),
        S("Elif", ("elif", "Elif from the data side"), "Chloe"),
        S("Ben", ("ben", "Benjamin"), "Oscar"),
    )),
    Kind("venue", "personal", (
        A("sundays", ("{S} is {v} on Sundays", "on Sundays {s} is {v}", "{S} is {v} sundays"),
          ("open", "closed"),
          ("{S} is {v} on Sundays now", "from this month {s} is {v} on Sundays")),
        A("opening", ("{S} opens at {v} on weekdays", "on weekdays {s} opens at {v}",
                      "{S} opens its doors at {v} Monday to Friday"),
          ("6:00", "7:00", "8:30", "9:00"),
          ("{S} opens at {v} on weekdays now", "weekday opening at {s} moved to {v}",
           "{S} changed its weekday opening from {old} to {v}")),
        A("closing", ("{S} closes at {v}", "{S} shuts at {v} in the evening", "closing time at {s} is {v}"),
          ("20:00", "21:00", "22:00", "23:00"),
          ("{S} closes at {v} now", "closing time at {s} moved to {v}")),
        A("price", ("{S} costs {v} a month", "a membership at {s} is {v} per month", "the monthly fee for {s} is {v}",
                    "we pay {v} a month for {s}"),
          ("€35", "€29", "€45", "€19"),
          ("{S} raised the monthly fee to {v}", "{S} costs {v} a month now", "{S} went from {old} to {v} a month")),
        A("address", ("{S} is on {v}", "{S} is located on {v}", "you find {s} on {v}"),
          ("Main Street", "Park Road", "Elm Avenue", "Station Square"),
          ("{S} moved to {v}", "{S} is on {v} now", "{S} relocated from {old} to {v}")),
        A("parking", ("{S} has {v} parking", "parking at {s} is {v}"),
          ("free", "paid"),
          ("parking at {s} is {v} now",),
          ("{S} has no parking anymore",)),
        A("beginners", ("{S} has a beginners' class on {v}", "the beginners' class at {s} is on {v}",
                        "{S} runs beginners' sessions on {v}"),
          ("Tuesday evenings", "Thursday mornings", "Saturday mornings", "Monday evenings"),
          ("the beginners' class at {s} moved to {v}", "{S} has the beginners' class on {v} now"),
          ("{S} stopped the beginners' class",)),
    ), (
        S("the gym", ("gym", "our gym"), "the gym near the office"),
        S("the climbing hall", ("climbing hall", "the bouldering place"), "the climbing hall in the north"),
        S("the swimming pool", ("the pool", "swimming pool"), "the outdoor pool"),
        S("the yoga studio", ("yoga studio", "the studio"), "the pilates studio"),
        S("the tennis club", ("tennis club", "the club"), "the squash club"),
        S("the boxing gym", ("boxing gym", "the boxing club"), "the martial arts school"),
    )),
    Kind("shop", "personal", (
        A("days", ("{S} is open {v}", "{S} opens {v}", "you can go to {s} {v}"),
          ("Monday to Saturday", "every day", "Tuesday to Sunday", "on weekdays only"),
          ("{S} is open {v} now", "{S} changed to opening {v}")),
        A("closing", ("{S} closes at {v}", "the closing time of {s} is {v}", "{S} shuts at {v}"),
          ("18:00", "19:30", "20:00", "17:00"),
          ("{S} closes at {v} now", "{S} moved its closing time to {v}", "{S} closes at {v} instead of {old}")),
        A("owner", ("{S} is run by {v}", "{v} owns {s}", "{v} runs {s}", "{S} belongs to {v}"),
          ("Mr. Okafor", "Giulia", "the Lee family", "Hans"),
          ("{v} took over {s} from {old}", "{S} was sold to {v}", "{S} is run by {v} now"), person=True),
        A("payment", ("{S} takes {v}", "at {s} you can pay {v}", "{S} accepts {v}"),
          ("cash only", "cards and cash", "only cards"),
          ("{S} takes {v} now", "{S} switched to {v}")),
        A("address", ("{S} is on {v}", "{S} is located on {v}", "you find {s} on {v}"),
          ("Rose Street", "Mill Lane", "the market square", "Bridge Road"),
          ("{S} moved to {v}", "{S} is on {v} now", "{S} relocated from {old} to {v}")),
        A("lunch", ("{S} has a lunch deal for {v}", "the lunch deal at {s} costs {v}", "lunch at {s} is {v}"),
          ("€9.50", "€11", "€8", "€12.50"),
          ("the lunch deal at {s} went up to {v}", "{S} charges {v} for lunch now"),
          ("{S} stopped the lunch deal", "{S} has no lunch deal anymore")),
    ), (
        S("the bakery on the corner", ("the corner bakery", "bakery on the corner"), "the bakery by the station"),
        S("the pharmacy near us", ("our pharmacy", "the pharmacy"), "the pharmacy in the mall"),
        S("the barber shop", ("the barber", "barber shop"), "the hair salon next door"),
        S("the pizza place downstairs", ("the pizza place", "pizza downstairs"), "the sushi place downstairs"),
        S("the bike shop", ("bike shop", "the bicycle shop"), "the outdoor shop"),
        S("the Turkish grocery", ("the grocery", "turkish grocery"), "the organic grocery"),
    )),
    Kind("device", "personal", (
        A("os", ("{S} runs {v}", "{S} is on {v}", "{S} has {v} installed"),
          ("Ubuntu 24.04", "Windows 11", "macOS Sonoma", "Fedora 40", "Debian 12"),
          ("{S} runs {v} now", "we upgraded {s} to {v}", "{S} was switched from {old} to {v}")),
        A("place", ("{S} is in {v}", "{S} sits in {v}", "we keep {s} in {v}"),
          ("the study", "the hallway cupboard", "the living room", "the basement"),
          ("{S} moved to {v}", "{S} is in {v} now", "we put {s} in {v} now")),
        A("storage", ("{S} has a {v} disk", "{S} has {v} of storage", "the disk in {s} is {v}"),
          ("512 GB", "1 TB", "2 TB", "256 GB"),
          ("{S} got a {v} disk", "{S} has {v} of storage now", "we swapped the {old} disk in {s} for {v}")),
        A("backup", ("{S} is backed up to {v}", "backups of {s} go to {v}", "{S} backs up to {v}"),
          ("the NAS", "Backblaze", "an external drive", "iCloud"),
          ("backups of {s} go to {v} now", "{S} backs up to {v} instead of {old}"),
          ("{S} is not backed up anymore", "we stopped the backups of {s}")),
        A("user", ("{S} is used by {v}", "{v} uses {s}", "{S} belongs to {v}", "{v} is the one on {s}"),
          ("Dad", "Mia", "Grandma", "Leo"),
          ("{S} was handed down to {v}", "{v} took over {s} from {old}", "{S} is {v}'s now"), person=True),
        A("warranty", ("the warranty of {s} ends in {v}", "{S} is under warranty until {v}",
                       "{S} has warranty till {v}"),
          ("March 2027", "June 2026", "January 2028"),
          ("the warranty of {s} was extended to {v}",),
          ("{S} is out of warranty",)),
    ), (
        S("my work laptop", ("the work laptop", "work laptop"), "my personal laptop"),
        S("the home server", ("home server", "the server at home"), "the backup server"),
        S("the old desktop", ("old desktop", "the old pc"), "the new desktop"),
        S("the media PC", ("media pc", "the tv computer"), "the gaming PC"),
        S("the family laptop", ("family laptop", "the shared laptop"), "the school laptop"),
        S("the NAS box", ("the nas", "nas box"), "the Raspberry Pi"),
    )),
    Kind("pet", "personal", (
        A("food", ("{S} eats {v}", "{S} gets {v} for dinner", "we feed {s} {v}", "{S} is on {v}"),
          ("dry food from Royal Canin", "wet food", "a raw diet", "grain-free kibble"),
          ("{S} eats {v} now", "we switched {s} to {v}", "{S} moved from {old} to {v}")),
        A("vet", ("{S} goes to {v}", "{S}'s vet is {v}", "the vet for {s} is {v}"),
          ("Dr. Novak", "the clinic on Hill Street", "Dr. Brandt", "the animal hospital in town"),
          ("{S} goes to {v} now", "we moved {s} to {v}", "{S} switched vets to {v}")),
        A("feeder", ("{v} feeds {s}", "{S} is fed by {v}", "{v} gives {s} the food", "feeding {s} is {v}'s job"),
          ("Tom", "Maria", "Jonas", "the neighbour's kid"),
          ("{v} took over feeding {s} from {old}", "{v} feeds {s} now", "feeding {s} went to {v}"), person=True),
        A("weight", ("{S} weighs {v}", "{S}'s weight is {v}", "at the last check {s} weighed {v}"),
          ("4 kg", "5.5 kg", "12 kg", "7 kg"),
          ("{S} is down to {v}", "{S} put on weight, {v} now", "{S} went from {old} to {v}")),
        A("medication", ("{S} takes {v} every morning", "{S} gets {v} daily", "{S} is on {v}"),
          ("a thyroid pill", "joint supplements", "allergy drops", "a heart tablet"),
          ("{S} gets {v} now", "the vet switched {s} to {v}"),
          ("{S} doesn't take {old} anymore", "we stopped {old} for {s}")),
        A("sleep", ("{S} sleeps {v}", "at night {s} sleeps {v}", "{S}'s sleeping spot is {v}"),
          ("in the kitchen", "on our bed", "in the crate", "on the sofa"),
          ("{S} sleeps {v} now", "{S} moved to sleeping {v}")),
    ), (
        S("Biscuit", ("our dog Biscuit", "biscuit"), "Pepper"),
        S("Luna", ("our cat Luna", "luna"), "Mochi"),
        S("Max", ("max the dog", "our Max"), "Bruno"),
        S("Nala", ("nala", "the cat, Nala"), "Simba"),
        S("Rocky", ("rocky", "our old dog Rocky"), "Daisy"),
        S("Ziggy", ("ziggy the rabbit", "ziggy"), "Clover"),
    )),
    Kind("activity", "personal", (
        A("when", ("{S} is on {v}", "{S} takes place on {v}", "we have {s} on {v}"),
          ("Tuesdays at 4 pm", "Wednesdays at 5:30", "Saturday mornings", "Mondays after school"),
          ("{S} moved to {v}", "{S} is on {v} now", "{S} switched from {old} to {v}"),
          ("{S} stopped for the season", "{S} is cancelled until further notice")),
        A("pickup", ("{v} picks the kids up from {s}", "after {s} the kids go home with {v}",
                     "{v} collects the kids after {s}", "pickup from {s} is {v}'s job", "{v} does the pickup after {s}"),
          ("Maria", "Tom", "Grandpa", "Aunt Sofia", "Dad"),
          ("{v} took over the pickup from {s} from {old}", "{v} does the pickup after {s} now",
           "pickup after {s} goes to {v} from now on"), person=True),
        A("coach", ("{S} is taught by {v}", "{v} teaches {s}", "the teacher for {s} is {v}", "{v} runs {s}"),
          ("Coach Evans", "Ms. Park", "Mr. Diallo", "Julia"),
          ("{v} took over {s} from {old}", "{S} has a new teacher, {v}", "{v} teaches {s} now"), person=True),
        A("venue", ("{S} is at {v}", "{S} takes place at {v}", "we go to {v} for {s}"),
          ("the community centre", "the school gym", "the city pool", "the church hall"),
          ("{S} moved to {v}", "{S} is at {v} now", "{S} relocated from {old} to {v}")),
        A("cost", ("{S} costs {v} a term", "we pay {v} per term for {s}", "{S} is {v} a term"),
          ("€90", "€120", "€75", "€150"),
          ("{S} went up to {v} a term", "{S} costs {v} a term now")),
        A("bring", ("for {s} the kids need {v}", "{S} requires {v}", "bring {v} to {s}"),
          ("a swim cap", "shin guards", "a water bottle", "indoor shoes"),
          ("{S} requires {v} now",),
          ("{S} doesn't need {old} anymore",)),
    ), (
        S("Lena's swimming class", ("lena's swimming", "swimming for Lena"), "Noah's swimming class"),
        S("Noah's football practice", ("football practice", "noah's football"), "Noah's basketball practice"),
        S("the kids' piano class", ("piano class", "piano"), "the kids' guitar class"),
        S("Mila's ballet class", ("ballet", "mila's ballet"), "Mila's tap class"),
        S("Sam's judo", ("judo", "sam's judo class"), "Sam's karate"),
        S("the chess club", ("chess club", "chess"), "the coding club"),
    )),
)


def fill(template: str, subject: str, value: str = "", old: str = "") -> str:
    text = template.replace("{S}", subject).replace("{s}", subject).replace("{v}", value).replace("{old}", old)
    return text[0].upper() + text[1:] + "."


def noisy(text: str, rng: random.Random) -> str:
    """Lightly: some texts lower-cased without the full stop, a few with two letters swapped in one word."""
    if rng.random() < LOWERCASE:
        text = text.lower().rstrip(".")
    if rng.random() < TYPO:
        words = text.split(" ")
        candidates = [i for i, w in enumerate(words) if len(w) >= 5 and w.isalpha()]
        if candidates:
            i = rng.choice(candidates)
            j = rng.randrange(1, len(words[i]) - 2)
            w = words[i]
            words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
            text = " ".join(words)
    return text


def slug(text: str) -> str:
    return "-".join(re.sub(r"[^\w\s-]", " ", text.lower()).split())


class Family:
    """The pairs of one subject."""

    def __init__(self, kind: Kind, subject: Subject) -> None:
        self.kind, self.subject = kind, subject
        self.rng = random.Random(f"{SEED}-{kind.name}-{subject.name}")
        self.name = f"gen-{kind.domain}-{kind.name}-{slug(subject.name)}"
        self.rows: list[dict] = []

    def say(self, attribute: Attribute, value: str, frame: str | None = None, subject: str | None = None) -> str:
        return fill(frame or self.rng.choice(attribute.frames), subject or self.subject.name, value)

    def add(self, existing: str, new: str, label: str, category: str) -> None:
        self.rows.append({"existing": existing, "new": noisy(new, self.rng), "label": label, "category": category,
                          "family": self.name})

    def two_values(self, attribute: Attribute) -> tuple[str, str]:
        a, b = self.rng.sample(attribute.values, 2)
        return a, b

    def same_subject_compatible(self, count: int | None) -> None:
        """Two attributes of the same subject: both true. Some new texts read as a change ("now", "moved to")."""
        pairs = list(combinations(self.kind.attributes, 2))
        self.rng.shuffle(pairs)
        for first, second in pairs[:count]:
            if self.rng.random() < 0.5:
                first, second = second, first
            existing = self.say(first, self.rng.choice(first.values))
            changes = [c for c in second.change if "{old}" not in c]
            if changes and self.rng.random() < PHRASED_AS_CHANGE:
                self.add(existing, fill(self.rng.choice(changes), self.subject.name, self.rng.choice(second.values)),
                         "COMPATIBLE", "another_attribute_change")
            else:
                self.add(existing, self.say(second, self.rng.choice(second.values)), "COMPATIBLE",
                         "another_attribute")

    def other_subject_compatible(self) -> None:
        """The same attribute of another subject or instance (staging next to production, two teams)."""
        for attribute in self.rng.sample(self.kind.attributes, OTHER_SUBJECT_COMPATIBLE):
            a, b = (self.rng.choice(attribute.values),) * 2 if self.rng.random() < 0.3 else self.two_values(attribute)
            self.add(self.say(attribute, a), self.say(attribute, b, subject=self.subject.other), "COMPATIBLE",
                     "other_subject")

    def updates(self) -> None:
        """One attribute, a new value, in turn: restated, a change phrase, the old value named, a person swap
        with another verb, an ending."""
        people = [a for a in self.kind.attributes if a.person]
        endings = [a for a in self.kind.attributes if a.ending]
        plan = ["restated", "change", "took_over", "restated", "change", "ending"]
        if people:
            plan[3] = "person_swap"
        for step in plan[:UPDATES]:
            if step == "person_swap":
                attribute = self.rng.choice(people)
            elif step == "ending" and endings:
                attribute = self.rng.choice(endings)
            elif step == "took_over":
                attribute = self.rng.choice([a for a in self.kind.attributes if any("{old}" in c for c in a.change)])
            else:
                attribute = self.rng.choice(self.kind.attributes)
            old, new = self.two_values(attribute)
            if step == "ending" and attribute.ending:
                self.add(self.say(attribute, old), fill(self.rng.choice(attribute.ending), self.subject.name, "", old),
                         "UPDATE", "ending")
            elif step == "person_swap":
                first, second = self.rng.sample(attribute.frames, 2)
                self.add(self.say(attribute, old, first), self.say(attribute, new, second), "UPDATE", "person_swap")
            elif step == "took_over":
                change = self.rng.choice([c for c in attribute.change if "{old}" in c])
                self.add(self.say(attribute, old), fill(change, self.subject.name, new, old), "UPDATE", "change")
            elif step == "change" and attribute.change:
                self.add(self.say(attribute, old), fill(self.rng.choice(attribute.change), self.subject.name, new, old),
                         "UPDATE", "change")
            else:
                self.add(self.say(attribute, old), self.say(attribute, new), "UPDATE", "restated")

    def two_part(self) -> tuple[Attribute, str, str, Attribute, str, str]:
        first, second = self.rng.sample([a for a in self.kind.attributes if a.predicates()], 2)
        p1, p2 = self.rng.choice(first.predicates()), self.rng.choice(second.predicates())
        return first, p1, self.rng.choice(first.values), second, p2, self.rng.choice(second.values)

    def partial_updates(self) -> None:
        """A two-part memory; the new text changes one part (alone, or restating the other part)."""
        for i in range(PARTIAL_UPDATES):
            first, p1, v1, second, p2, v2 = self.two_part()
            existing = fill("{S} " + p1 + " and " + p2.replace("{v}", v2), self.subject.name, v1)
            changed = self.rng.choice([v for v in first.values if v != v1])
            if i % 2 == 0 and first.change:
                new = fill(self.rng.choice(first.change), self.subject.name, changed, v1)
            else:
                new = fill("{S} " + p1 + " and " + p2.replace("{v}", v2), self.subject.name, changed)
            self.add(existing, new, "PARTIAL_UPDATE", "partial")

    def duplicates(self) -> None:
        """The same value reworded: another frame, a short name, or (for a person) another verb."""
        attributes = self.rng.sample(self.kind.attributes, DUPLICATES)
        for i, attribute in enumerate(attributes):
            value = self.rng.choice(attribute.values)
            first, second = self.rng.sample(attribute.frames, 2)
            if i == 1:
                alias = self.rng.choice(self.subject.aliases)
                self.add(self.say(attribute, value, first), fill(second, alias, value).rstrip(".").lower(),
                         "DUPLICATE", "abbreviation")
            else:
                self.add(self.say(attribute, value, first), self.say(attribute, value, second), "DUPLICATE",
                         "reorder" if attribute.person else "paraphrase")
        # A two-part memory against one of its parts, and the other way round.
        first, p1, v1, second, p2, v2 = self.two_part()
        both = fill("{S} " + p1 + " and " + p2.replace("{v}", v2), self.subject.name, v1)
        one = self.say(first, v1)
        self.add(both, one, "DUPLICATE", "subset")
        self.add(one, both, "COMPATIBLE", "restated_addition")

    def training_pairs(self) -> list[dict]:
        self.same_subject_compatible(SAME_SUBJECT_COMPATIBLE)
        self.other_subject_compatible()
        self.updates()
        self.partial_updates()
        self.duplicates()
        return self.rows

    def compatible_check(self) -> list[dict]:
        self.same_subject_compatible(None)
        return self.rows


def generate() -> tuple[list[dict], list[dict]]:
    """(training pairs, held-back same-subject COMPATIBLE pairs); the last subject of each kind is held back."""
    train, held_back = [], []
    for kind in KINDS:
        for subject in kind.subjects[:-1]:
            train += Family(kind, subject).training_pairs()
        held_back += Family(kind, kind.subjects[-1]).compatible_check()
    for rows in (train, held_back):
        seen = set()
        unique = []
        for r in rows:
            key = (r["existing"].lower(), r["new"].lower())
            if key not in seen and r["existing"].lower() != r["new"].lower():
                seen.add(key)
                unique.append(r)
        rows[:] = unique
    return train, held_back


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main() -> int:
    from collections import Counter

    train, held_back = generate()
    write_jsonl(OUT, train)
    write_jsonl(VAL_COMPATIBLE, held_back)
    print(json.dumps({
        "pairs_generated": len(train), "families": len({r["family"] for r in train}),
        "by_label_category": dict(sorted(Counter(f"{r['label']}/{r['category']}" for r in train).items())),
        "val_compatible": len(held_back), "val_compatible_families": len({r["family"] for r in held_back}),
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
