"""`cortexd eval activation`: save/recall requests, entities and dedup, on our sets beside the held-out test."""

from __future__ import annotations

import json
from pathlib import Path

from memory_daemon.evals.heldout import ENTITIES_JUDGED, ENTITIES_SEEN, PAIRS_JUDGED, REQUESTS_JUDGED, split_files
from memory_daemon.evals.targets import verdict

REPO = Path(__file__).resolve().parents[2]
DEFAULT_DATA = REPO / "tests" / "data" / "activation"
REQUESTS_VAL = REPO / "models" / "intent" / "data" / "requests_val.jsonl"
# Targets of the issue that brought the learned judgement, on the independently written held-out set.
TARGETS = {
    "save-request recall": (">=", 0.95),
    "save-request false-positive rate": ("<=", 0.02),
    "save-request false-positive rate, hard negatives": ("<=", 0.03),
    "entity recall": (">=", 0.90),
    "entity invented rate": ("<=", 0.15),
    "dedup F1": (">=", 0.90),
    "paraphrase recall": (">=", 0.85),
    "dedup false-positive rate": ("<=", 0.05),
    "updates merged as duplicates": ("<=", 0.05),
}


def _meets(name: str, value: float | None) -> str:
    return verdict(TARGETS, name, value)


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _is_hard_negative(row: dict) -> bool:
    return row.get("category") == "hard_negative" or row.get("kind") == "hard_negative"


def request_scores(rows: list[dict], said: list[bool]) -> dict:
    """Recall, false-positive rate overall and on the hard negatives (where the set marks them) of save requests."""
    positives = [s for r, s in zip(rows, said) if r["save_request"]]
    negatives = [s for r, s in zip(rows, said) if not r["save_request"]]
    hard = [s for r, s in zip(rows, said) if not r["save_request"] and _is_hard_negative(r)]
    return {"messages": len(rows), "positives": len(positives), "hard_negatives": len(hard),
            "save-request recall": sum(positives) / len(positives) if positives else 0.0,
            "save-request false-positive rate": sum(negatives) / len(negatives) if negatives else 0.0,
            "save-request false-positive rate, hard negatives": sum(hard) / len(hard) if hard else None}


def _request_readers():
    """(name, fn(texts) -> [(save, recall)]) for the intent model's heads and the phrase rules."""
    from preprocessing.intent_model import IntentModel
    from preprocessing.phrases import PhraseDetector

    model, rules = IntentModel.from_registry(), PhraseDetector()

    def by_model(texts):  # one message per call, as the daemon reads a single analyze_message
        readings = [model.classify_with_requests(t) for t in texts]
        return [(bool(r.save_request), bool(r.recall_request)) for r in readings]

    def by_rules(texts):
        signals = [rules.detect(t) for t in texts]
        return [(s.save_request, s.recall_request) for s in signals]

    return [("model", by_model), ("rules", by_rules)]


def score_requests(path: Path, readers) -> dict:
    rows = _rows(path)
    results = {}
    for name, read in readers:
        said = read([r["text"] for r in rows])
        scores = request_scores(rows, [s for s, _ in said])
        scores["recall-request accuracy"] = sum(bool(r.get("recall_request", False)) == recall
                                                for r, (_, recall) in zip(rows, said)) / len(rows)
        results[name] = scores
    return results


def evaluate_activation(data_dir: Path = DEFAULT_DATA, as_json: bool = False) -> int:
    """Print each component on its sets: ours (tuned on, or used to select), validation, and the held-out test."""
    from preprocessing.entities import EntityExtractor
    from preprocessing.entity_eval import evaluate_entities

    request_sets = [("team set (rules were tuned on it)", data_dir / "save_requests.jsonl"),
                    ("validation (model selection)", REQUESTS_VAL)]
    request_sets += split_files("save_requests_test")
    readers = _request_readers()
    requests = {name: score_requests(path, readers) for name, path in request_sets if path.is_file()}
    extractor = EntityExtractor.load()
    entity_sets = [("team set", data_dir / "entities.jsonl"), ("dev set (tuned on)", data_dir / "entities_dev.jsonl"),
                   ("check split (scored once)", data_dir / "entities_final.jsonl"),
                   (ENTITIES_SEEN.name, ENTITIES_SEEN.file("entities_test")),
                   (ENTITIES_JUDGED.name, ENTITIES_JUDGED.file("entities_test"))]
    entities = {name: evaluate_entities(path, extractor) for name, path in entity_sets if path.is_file()}
    dedup = _dedup_results()
    if as_json:
        print(json.dumps({"save_requests": requests, "entities": entities, "dedup": dedup}, indent=2, default=str))
        return 0
    missed = []
    print(f"cortexd eval activation (data: {data_dir}; request targets judged on {REQUESTS_JUDGED.name}, dedup on "
          f"{PAIRS_JUDGED.name}, entities on {ENTITIES_JUDGED.name})\n")
    print("Explicit save requests: the intent model's head beside the phrase rules\n")
    print("| set | messages | model recall | model FP rate | model FP, hard neg. | rules recall | rules FP rate "
          "| rules FP, hard neg. | target (held-out) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for name, result in requests.items():
        model, rules = result["model"], result["rules"]
        cells = [f"{m[k]:.3f}" if m[k] is not None else "–" for m in (model, rules) for k in (
            "save-request recall", "save-request false-positive rate", "save-request false-positive rate, hard negatives")]
        verdicts = [_meets(k, model[k]) for k in ("save-request recall", "save-request false-positive rate",
                                                  "save-request false-positive rate, hard negatives")
                    if model[k] is not None] if name == REQUESTS_JUDGED.name else []
        missed += [v for v in verdicts if v.endswith("MISSED")]
        print(f"| {name} | {model['messages']} | " + " | ".join(cells) + f" | {'; '.join(verdicts)} |")
    print("\nEntities\n")
    print("| set | messages | recall | invented rate (messages naming nothing) | target (held-out) |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, result in entities.items():
        verdicts = [_meets("entity recall", result["recall"]), _meets("entity invented rate", result["invented_rate"])] \
            if name == ENTITIES_JUDGED.name else []
        missed += [v for v in verdicts if v.endswith("MISSED")]
        print(f"| {name} | {result['messages']} | {result['recall']:.3f} | {result['invented_rate']:.3f} "
              f"({result['nameless_messages']}) | {'; '.join(verdicts)} |")
    print("\nDedup: the relation model's decisions (rules beside them: `cortexd eval relations`)\n")
    measures = ("dedup F1", "paraphrase recall", "dedup false-positive rate", "updates merged as duplicates")
    print("| set | pairs | " + " | ".join(measures) + " | target (held-out) |")
    print("| --- | ---: |" + " ---: |" * len(measures) + " --- |")
    for name, result in dedup.items():
        view = result["dedup (relation model)"]
        verdicts = [_meets(m, view[m]) for m in measures] if name == PAIRS_JUDGED.name else []
        missed += [v for v in verdicts if v.endswith("MISSED")]
        print(f"| {name} | {result['pairs']} | " + " | ".join(f"{view[m]:.3f}" for m in measures)
              + f" | {'; '.join(verdicts)} |")
    return 1 if missed else 0


def _dedup_results() -> dict:
    from memory_daemon.evals.relations import VALIDATION, score_sets

    sets = [("validation (model selection)", VALIDATION)]
    sets += split_files("relation_pairs_test")
    return score_sets([(name, path) for name, path in sets if path.is_file()])


def evaluate_intent(data_dir: Path | None = None) -> int:
    """Run models/intent/evaluate.py: the int8 model beside the rule fallback, written to models/intent/REPORT.md."""
    import importlib.util

    from preprocessing.registry import models_dir

    script = models_dir() / "intent" / "evaluate.py"
    spec = importlib.util.spec_from_file_location("cortexd_intent_evaluate", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(["--test", str(data_dir / "test.jsonl")] if data_dir else [])
