"""Compose save-request training rows: hand-written request frames around statements from the intent dataset."""

# Usage (any venv; deterministic, rewrites requests_composed.jsonl):
#   python models/intent/data/compose_requests.py
#
# Why: the request heads learned the forms written out whole in requests_handwritten.jsonl, and missed many
# others ("Record my blood type as O negative", "... file that away", "would you kindly note that ..."). A frame is
# one way of asking (or, for the hard negatives, one way of using the same verbs about the task at hand); each
# frame is its own family, so request_data.py's family split keeps whole frames out of training and validation
# alike, and validation measures frames the model never saw. Contents are SAVE_* and UPDATE_INFO statements of the
# intent model's train split only (no request cue, no question), so no val or test text of the intent model is
# used. The frames were written after held-out v3 was scored once (it is a development set now); none of its lines
# is a frame, and the next held-out split was written by a helper who saw none of this. The frames marked below were
# added after held-out v4 was scored once and its misses read ("Replace my gym schedule with ...", "In the email to
# parents, note that ..."); v5 was written after that by a fresh helper.

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from request_data import has_recall_cue, has_save_cue  # noqa: E402

SEED = 20261202
OUT = HERE / "requests_composed.jsonl"
INTENT_TRAIN = HERE / "train.jsonl"
CONTENT_INTENTS = ("SAVE_FACT", "SAVE_PREFERENCE", "SAVE_DECISION", "UPDATE_INFO")
PER_FRAME = 9  # statements per frame

# {x}: the statement as a clause ("my blood type is O negative"); {X}: as a sentence without its final stop.
SAVE_FRAMES = {
    "imperative": (
        "Record that {x}.", "Record this: {X}", "Log that {x}.", "Make a note that {x}.", "Store the fact that {x}.",
        "Save this: {X}", "Save that {x}.", "Add to your notes that {x}.", "Add this to what you know about me: {X}",
        "Put this in your memory: {X}", "Jot down that {x}.", "Write down that {x}.", "Keep a record that {x}.",
        "Commit this to memory: {X}", "Memorize this: {X}", "Update your notes: {X}", "Update my profile: {X}",
        "Overwrite what you have on file: {X}", "Replace the old info with this: {X}", "Fix your notes, {x}.",
        "File this away: {X}", "Register this in your memory: {X}", "Keep track of this: {X}",
        "Hang on to this: {X}", "Hold onto this for me: {X}", "Stash this for later: {X}",
        "Make sure you store that {x}.", "pls save this {x}", "stor this: {x}", "log it: {x}",
        "Store for later use that {x}.", "Add a memory: {X}",
    ),
    "remember": (
        "Remember that {x}.", "Keep in mind that {x} from now on.", "Don't forget that {x}.", "dont forget {x}",
        "Bear in mind that {x} going forward.", "Remember this for next time: {X}", "rember {x}",
        "Please remember {x}.", "Never forget that {x}.", "Keep this in mind for future chats: {X}",
        "remember pls: {x}",
    ),
    "prefix": (
        "save: {x}", "For future reference, {x}.", "For future ref: {x}", "Noting for later: {x}",
        "Note for memory: {X}", "update memory → {x}", "Memory update: {X}", "FYI for next time: {x}",
        "For the record, {x}.", "Permanent note: {x}", "Context for future sessions: {X}", "Note to you: {X}",
        "Store → {x}", "mem: {x}", "To remember: {X}", "Heads-up for future chats: {x}",
        "Something to keep on file: {X}", "For your records: {X}", "Long-term note - {x}",
    ),
    "polite_question": (
        "Could you store that {x}?", "Can you remember that {x}?", "Would you mind remembering that {x}?",
        "Could you make a note that {x}?", "Would you kindly note that {x}?", "Can you save that {x}?",
        "Could you keep track of the fact that {x}?", "Is it possible to save that {x}?",
        "Would you add to your notes that {x}?", "Can you update your notes to say {x}?",
        "Could you keep in mind that {x}?", "Mind logging that {x}?", "could u remember {x}?",
        "Would it be possible for you to remember that {x}?", "Can you hold onto the fact that {x}?",
        "Would you be able to remember that {x}?", "Would it be possible to store that {x}?",
        "Can you record that {x}?", "Could you update my info to say {x}?", "Mind remembering that {x}?",
        "Could you put down in your notes that {x}?", "any chance you could save that {x}?",
    ),
    # Asking to change what is on file, written after held-out v4 was scored once (its misses were of this kind).
    "change_request": (
        "Update my info: {X}", "Change what you have on me: {X}", "Replace what you have with this: {X}",
        "Please update your record: {X}", "Overwrite the old entry, {x}.", "correct your notes: {x}",
        "Change that in your memory: {X}", "Swap the old one out, {x}.", "log: {x}",
        "Set this in my profile: {X}", "Amend your notes so they say {x}.",
    ),
    "request_after": (
        "{X}. Remember that.", "{X}. Please remember it.", "{X} — keep that in mind.", "{X}. Keep it in mind later.",
        "{X}. Save that.", "{X}, please store that.", "{X}. Make a note of it.", "{X}. Note that down.",
        "{X} — file that away.", "{X} — hold onto that.", "{X}. Please update that.", "{X}. Record it, please.",
        "{X}. Add that to what you know.", "{X}, worth saving.", "{X}. Don't forget it.",
        "{X}. Log that for future reference.", "{X}; commit that to memory.", "{X}. Update your notes.",
        "{X} pls remember", "{X}. That's one for your notes.", "{X}. Keep it on file.",
    ),
}

# Task-scoped uses of the same verbs: about the code, file or errand at hand, not a request to remember.
TASK_FACTS = (
    "the file is UTF-16", "the timestamps are in UTC", "the API is rate-limited to 10 calls a second",
    "the CSV has a header row", "the ids can be null", "the list is already sorted", "the input may be empty",
    "the endpoint returns XML, not JSON", "the column names have trailing spaces", "the config is YAML",
    "the dates are day-first", "the array is 1-indexed here",
)
TASK_VERBS = ("parse it", "load it", "process it", "call it", "write the loop", "read the file", "map the rows",
              "write the test")
ARTIFACTS = ("the file", "the report", "the results", "the output", "the dataframe", "the chart", "the export",
             "the notebook", "the draft", "the spreadsheet")
FORMATS = ("CSV", "JSON", "PDF", "a PNG", "Parquet", "UTF-8", "a zip", "markdown", "plain text")
THINGS = ("the error", "the response body", "the retry count", "the request id", "the stack trace",
          "the exit code", "the elapsed time", "the user id", "the payload size", "the warning")
TASKS = ("close the cursor", "free the buffer", "release the lock", "flush the writer", "handle the timeout",
         "check for None", "escape the quotes", "reset the counter", "await the promise", "rollback on failure")
POINTS = ("the deadline moved to Friday", "the venue has changed", "parking is free after six",
          "the survey was anonymous", "slides are due on Monday", "lunch is provided", "the old link no longer works",
          "the fee is non-refundable", "the build is green again", "sign-up closes tomorrow")
AUDIENCES = ("the parents", "the client", "the whole team", "my landlord", "the reviewers", "HR", "the vendor",
             "the new hires")
ERRANDS = ("call my mum", "buy milk", "renew my passport", "water the plants", "book the dentist",
           "pay the gas bill", "pick up the dry cleaning", "email Ravi back", "charge the car", "cancel the trial")
HARD_NEGATIVE_FRAMES = (
    "Keep in mind that {fact} when you {verb}.", "Remember {fact} when you {verb}.",
    "keep in mind {fact} before you {verb}", "Note that {fact}, so {verb} carefully.",
    "Remember to {task} in this function.", "Don't forget to {task} before returning.",
    "remember to {task} at the end", "Make sure to {task} in the except block.",
    "Save {artifact} as {format}.", "Can you save {artifact} as {format}?", "save {artifact} to disk as {format}",
    "How do I save {artifact} as {format}?", "Store {artifact} in S3 as {format}.",
    "Log {thing} before retrying.", "Record {thing} for every request in the middleware.",
    "Add a log line with {thing}.", "Can you log {thing} at debug level?", "Write {thing} to the log file.",
    "Keep {thing} out of the response.", "Store {thing} in a local variable first.",
    "Update the README with {thing}.", "Note {thing} in the bug report.", "Record {thing} in the test output.",
    "I need to remember to {errand} tomorrow.", "Remember, this function must {task}.", "I keep forgetting to {errand}.",
    "Note to self: {errand} after work.", "Don't let me forget to {task} in the PR.",
    "What's the best way to store {thing} in Postgres?", "Why doesn't {artifact} save as {format}?",
    # Written after held-out v4 was scored once: the same verbs inside a writing task, or as one's own reminder.
    "In the email to {audience}, note that {point}.", "Remind the reader in the intro that {point}.",
    "In the summary, remember to say that {point}.", "Add a note to {artifact} that {fact}.",
    "Let me note down {artifact} first, then I'll ask you about it.", "Save your answer for the end; first {verb}.",
    "I'll try to remember to {errand}.", "let me write that down before I forget",
    "I should really log {thing} somewhere.", "Mention in the changelog that {point}.",
    "I wrote down {thing} on a sticky note.", "Keep the tone friendly and note that {point}.",
)


# Requests whose object is a noun phrase, not a "that" clause ("Save my blood type, which is O negative"), written
# after held-out v5 was scored once: most of its misses were of this form, many as polite questions. {n}: the
# statement's subject with its possessive ("my dentist's number"); {v}: what the statement says it is. Hard negatives
# of the same shape (a polite question whose object is the file or the task at hand) keep the form from being a cue.
NOUN_SAVE_FRAMES = {
    "imperative": (
        "Save {n}: {v}.", "Store {n}, which is {v}.", "Keep a record of {n} - {v}.", "Memorise {n}: {v}.",
        "Log {n} as {v} in your notes.", "Put {n} on file: {v}.", "Note down {n}, it's {v}.",
        "Update the stored value for {n} to {v}.", "keep track of {n} pls, its {v}",
    ),
    "polite_question": (
        "Would you please save {n}, which is {v}?", "Could you keep track of {n}? It's {v}.",
        "Can you store {n} ({v}) for me?", "Would it be alright to save {n} as {v}?",
        "Is it possible for you to record {n}: {v}?", "Would you be able to keep {n} on file? It is {v}.",
        "Can you update your notes with {n}: {v}?", "Do you mind storing {n} for later? It's {v}.",
        "Would you kindly remember {n}, {v}?", "Could you hang on to {n} for me ({v})?",
        "could u save {n} its {v}", "Do you think you could log {n} as {v}?",
    ),
    "request_after": (
        "{N}: {v}. Could you save that?", "{N} is {v} - would you store that for me?",
        "{N}, {v}. Keep that on record please.", "{N} = {v}, store it",
    ),
}
NOUN_HARD_NEGATIVE_FRAMES = (
    "Would you please update {artifact} so {point}?", "Could you keep track of {thing} in a counter?",
    "Can you store {thing} in a variable before the loop?", "Would you mind saving {artifact} before you close it?",
    "Is it possible to log {thing} to a separate file?", "Could you record {thing} in the spreadsheet for the team?",
    "Would you be able to note {thing} in the ticket for QA?", "Can you keep {artifact} on the shared drive?",
    "Would it be alright to save {artifact} as {format}?", "Could you update {artifact} with {thing}?",
    "Do you mind remembering to {task} in the handler?", "Can you note down {thing} in the incident doc?",
)
_NOUN_STATEMENT = re.compile(r"^(my|our|the) ([A-Za-z0-9'\- ]{3,40}?) (?:is|are) (?!not\b|no\b|going\b|now\b)(.{2,60})$",
                             re.IGNORECASE)


def noun_statements(pool: list[str]) -> list[tuple[str, str]]:
    """(noun phrase, value) from the pool's "My X is Y" statements: ("my flight number", "AC 870")."""
    found = []
    for text in pool:
        match = _NOUN_STATEMENT.match(text.strip().rstrip(".!"))
        if match:
            found.append((f"{match.group(1).lower()} {match.group(2)}", match.group(3)))
    return found


def clause(text: str) -> str:
    """A statement as a clause after "that": final stop dropped, a capital first word lowered unless it is a name."""
    text = text.strip().rstrip(".!")
    first = text.split(" ", 1)[0]
    keep = first in ("I", "I'm", "I've", "I'd", "I'll") or any(c.isupper() for c in first[1:]) or any(
        c.isdigit() for c in first)
    return text if keep or not first[:1].isupper() else text[0].lower() + text[1:]


def statements(path: Path = INTENT_TRAIN) -> list[str]:
    """Intent-train statements that ask for nothing on their own: one sentence, no request cue, no question, 4-20 words."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    keep = []
    for row in rows:
        text = row["text"].strip()
        words = len(text.split())
        if (row["label"] in CONTENT_INTENTS and 4 <= words <= 20 and "?" not in text and "\n" not in text
                and not has_save_cue(text) and not has_recall_cue(text) and not re.search(r"[:;—]|[.!] ", text)):
            keep.append(text)
    return sorted(set(keep))


def family(kind: str, frame: str) -> str:
    """A frame's family name: its kind and its words, so renaming or reordering frames keeps each family."""
    return f"cmp-{kind}-" + "-".join(re.findall(r"[a-z]+", frame.lower()))[:60]


def compose(seed: int = SEED) -> list[dict]:
    rng = random.Random(seed)
    pool = statements()
    rows = []
    for kind, frames in SAVE_FRAMES.items():
        for frame in frames:
            for text in rng.sample(pool, PER_FRAME):
                filled = frame.format(x=clause(text), X=text.strip().rstrip(".!"))
                rows.append({"text": filled, "save_request": True, "recall_request": False,
                             "family": family(kind, frame)})
    for frame in HARD_NEGATIVE_FRAMES:
        for _ in range(PER_FRAME):
            filled = frame.format(fact=rng.choice(TASK_FACTS), verb=rng.choice(TASK_VERBS),
                                  artifact=rng.choice(ARTIFACTS), format=rng.choice(FORMATS),
                                  thing=rng.choice(THINGS), task=rng.choice(TASKS), errand=rng.choice(ERRANDS),
                                  audience=rng.choice(AUDIENCES), point=rng.choice(POINTS))
            rows.append({"text": filled, "save_request": False, "recall_request": False,
                         "family": family("task", frame)})
    nouns, noun_rng = noun_statements(pool), random.Random(seed + 1)
    for kind, frames in NOUN_SAVE_FRAMES.items():
        for frame in frames:
            for n, v in noun_rng.sample(nouns, PER_FRAME):
                rows.append({"text": frame.format(n=n, N=n[0].upper() + n[1:], v=v), "save_request": True,
                             "recall_request": False, "family": family(f"noun-{kind}", frame)})
    for frame in NOUN_HARD_NEGATIVE_FRAMES:
        for _ in range(PER_FRAME):
            filled = frame.format(thing=noun_rng.choice(THINGS), artifact=noun_rng.choice(ARTIFACTS),
                                  format=noun_rng.choice(FORMATS), task=noun_rng.choice(TASKS),
                                  point=noun_rng.choice(POINTS))
            rows.append({"text": filled, "save_request": False, "recall_request": False,
                         "family": family("noun-task", frame)})
    unique = {row["text"].lower(): row for row in rows}  # a slot draw can repeat a text; keep it once
    return list(unique.values())


def main() -> int:
    rows = compose()
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"{OUT.name}: {len(rows)} rows, {len({r['family'] for r in rows})} families, "
          f"save {sum(r['save_request'] for r in rows)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
