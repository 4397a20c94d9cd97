"""`cortexd eval locomo PATH`: evidence recall of cortexd's search and of BM25, dense and RRF baselines on LoCoMo."""

from __future__ import annotations

import json
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from memory_daemon.evals.locomo_data import CATEGORIES, SCORED_CATEGORIES, Conversation, load_conversations
from memory_daemon.evals.retrieval import UPDATE_CHECK_TIMEOUT_SECONDS, exported_memories, recall_at_k, summarize

SEARCH_LIMIT = 10
CORTEXD = "cortexd"
BASELINES = ("BM25", "dense (MiniLM)", "BM25+dense RRF")
METRICS = ("R@5", "R@10", "hit@10")
ENCODE_BATCH = 64  # turns per encoder call, to bound the padded batch's memory


def question_scores(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """R@5 and R@10 (share of the evidence turns in the top 5 / 10) and hit@10 (any of them in the top 10)."""
    return {"R@5": recall_at_k(ranked, evidence, 5), "R@10": recall_at_k(ranked, evidence, 10),
            "hit@10": 1.0 if set(evidence).intersection(ranked[:10]) else 0.0}


def import_records(conversation: Conversation) -> list[dict]:
    return [{"id": t.dia_id, "text": t.text, "timestamp": t.timestamp, "session": t.session, "speaker": t.speaker}
            for t in conversation.turns]


class RetrieverRun:
    """One retriever's scored questions and search latencies, summarised at the end."""

    def __init__(self) -> None:
        self.scored: list[tuple[str, dict[str, float]]] = []
        self.latencies_ms: list[float] = []

    def search(self, conversation: Conversation, ranked_ids: Callable[[str], list[str]]) -> None:
        for question in conversation.questions:
            started = time.perf_counter()
            ranked = ranked_ids(question.question)
            self.latencies_ms.append(1000 * (time.perf_counter() - started))
            self.scored.append((CATEGORIES[question.category], question_scores(ranked[:SEARCH_LIMIT], question.evidence)))

    def summary(self) -> dict:
        found = summarize(self.scored, list(SCORED_CATEGORIES.values()))
        return {"overall": found["overall"], "by_category": found["by_group"],
                "search_ms_p50": statistics.median(self.latencies_ms) if self.latencies_ms else None}


def stored_memories(client) -> tuple[int, int]:
    """(memories in the client's namespace, how many of them a newer memory superseded)."""
    memories = list(exported_memories(client))
    return len(memories), sum(1 for m in memories if m.superseded_by)


def run_cortexd(conversations: list[Conversation], signals: tuple[str, ...] = ()) -> tuple[dict[str, RetrieverRun],
                                                                                      list[dict]]:
    """Each conversation imported into its own namespace of one temporary daemon, then its questions searched with
    every signal fused, and with each of `signals` alone (a row each)."""
    from memory_daemon.client.launcher import temporary_daemon

    runs = {CORTEXD: RetrieverRun(), **{f"{CORTEXD} --signal {signal}": RetrieverRun() for signal in signals}}
    imports = []
    with temporary_daemon() as daemon:
        daemon.wait_serving()
        for conversation in conversations:
            with daemon.client(conversation.namespace) as client:
                started = time.perf_counter()
                reply = client.import_records(import_records(conversation))
                if client.wait_for_update_checks(UPDATE_CHECK_TIMEOUT_SECONDS):  # turns are not checked: none expected
                    raise RuntimeError(f"update checks unfinished after {UPDATE_CHECK_TIMEOUT_SECONDS} s")
                seconds = time.perf_counter() - started
                stored, superseded = stored_memories(client)
                imports.append({"conversation": conversation.name, "turns": len(conversation.turns), "stored": stored,
                                "superseded": superseded, "import_seconds": seconds, "errors": list(reply.errors)[:5]})

                for signal, run in zip(("", *signals), runs.values(), strict=True):
                    def ranked_ids(query: str, chosen=[signal] if signal else []) -> list[str]:
                        hits = client.search_memory(query=query, limit=SEARCH_LIMIT, signals=chosen).hits
                        return [hit.memory.external_id or hit.memory.id for hit in hits]

                    run.search(conversation, ranked_ids)
    return runs, imports


def run_baselines(conversations: list[Conversation]) -> dict[str, RetrieverRun]:
    """BM25, MiniLM cosine and their RRF over the same turn texts, one index per conversation."""
    from preprocessing.encoder import SentenceEncoder

    from memory_daemon.evals.baseline_retrievers import BM25, cosine_rank, reciprocal_rank_fusion

    import numpy as np

    encoder = SentenceEncoder.from_registry()
    runs = {name: RetrieverRun() for name in BASELINES}
    for conversation in conversations:
        ids = [t.dia_id for t in conversation.turns]
        texts = [t.text for t in conversation.turns]
        bm25 = BM25(texts)
        vectors = np.concatenate([encoder.encode(texts[i:i + ENCODE_BATCH]) for i in range(0, len(texts), ENCODE_BATCH)])

        def by_bm25(query: str) -> list[str]:
            return [ids[d] for d in bm25.rank(query)]

        def by_dense(query: str) -> list[str]:
            return [ids[d] for d in cosine_rank(vectors, encoder.encode_one(query))]

        def by_rrf(query: str) -> list[str]:
            fused = reciprocal_rank_fusion([bm25.rank(query), cosine_rank(vectors, encoder.encode_one(query))])
            return [ids[d] for d in fused]

        for name, ranked_ids in zip(BASELINES, (by_bm25, by_dense, by_rrf)):
            runs[name].search(conversation, ranked_ids)
    return runs


# --- report -------------------------------------------------------------------------------------------------------

def _cell(values: dict, metric: str) -> str:
    return f"{values[metric]:.3f}" if values.get("n") else "-"


def render_markdown(report: dict) -> str:
    rows, counts = report["retrievers"], report["questions"]
    lines = [f"cortexd eval locomo (data: {report['data']}; conversations: {', '.join(report['conversations'])})", "",
             f"{counts['total']} questions with evidence, top {SEARCH_LIMIT}", "",
             "| retriever | R@5 | R@10 | hit@10 | search p50 ms |", "| --- | ---: | ---: | ---: | ---: |"]
    for name, row in rows.items():
        lines.append(f"| {name} | " + " | ".join(_cell(row["overall"], m) for m in METRICS)
                     + (f" | {row['search_ms_p50']:.2f} |" if row["search_ms_p50"] is not None else " | - |"))
    lines += ["", "R@10 by category:", "", "| category (n) | " + " | ".join(rows) + " |", "| --- |" + " ---: |" * len(rows)]
    for category, n in counts["by_category"].items():
        lines.append(f"| {category} ({n}) | " + " | ".join(_cell(r["by_category"][category], "R@10") for r in rows.values())
                     + " |")
    labels = report["labels"]
    lines += ["", "questions left out: " + (", ".join(f"{n} {why}" for why, n in labels["skipped"].items()) or "none")]
    lines.append(f"evidence ids repaired: {len(labels['repaired_ids'])}" + "".join(f"\n  {r}" for r in labels["repaired_ids"]))
    lines.append(f"evidence ids dropped: {len(labels['dropped_ids'])}" + "".join(f"\n  {d}" for d in labels["dropped_ids"]))
    if report.get("imports"):
        total = sum(i["import_seconds"] for i in report["imports"])
        lines += ["", f"cortexd import: {sum(i['turns'] for i in report['imports'])} turns in {total:.1f} s", "",
                  "| conversation | turns | stored | superseded after import | import s |", "| --- | ---: | ---: | ---: | ---: |"]
        for i in report["imports"]:
            lines.append(f"| {i['conversation']} | {i['turns']} | {i['stored']} | {i['superseded']} | {i['import_seconds']:.1f} |")
        lines += [f"import errors in {i['conversation']}: {i['errors']}" for i in report["imports"] if i["errors"]]
    lines.append(f"\nrun time {report['seconds']:.0f} s")
    return "\n".join(lines)


def evaluate_locomo(path: Path, positions: list[int] | None = None, cortexd: bool = True, baselines: bool = True,
                    as_json: bool = False, signals: tuple[str, ...] = ()) -> int:
    """Load the chosen conversations, run the chosen retrievers, print the tables (or JSON)."""
    started = time.perf_counter()
    conversations, labels = load_conversations(path, positions)
    retrievers: dict[str, dict] = {}
    imports: list[dict] = []
    if cortexd:
        runs, imports = run_cortexd(conversations, signals)
        retrievers.update({name: run.summary() for name, run in runs.items()})
    if baselines:
        retrievers.update({name: run.summary() for name, run in run_baselines(conversations).items()})
    by_category = Counter(CATEGORIES[q.category] for c in conversations for q in c.questions)
    report = {
        "data": str(path),
        "conversations": [c.name for c in conversations],
        "questions": {"total": sum(by_category.values()),
                      "by_category": {name: by_category[name] for name in SCORED_CATEGORIES.values()}},
        "labels": labels.as_dict(),
        "retrievers": retrievers,
        "imports": imports,
        "seconds": time.perf_counter() - started,
    }
    print(json.dumps(report, indent=2) if as_json else render_markdown(report))
    return 0
