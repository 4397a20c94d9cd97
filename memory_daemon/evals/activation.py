"""`cortexd eval activation`: measures the activation components on the labelled sets in tests/data/activation."""

from __future__ import annotations

import json
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "activation"
TARGETS = {
    "save-request recall": (">=", 1.0),
    "save-request false-positive rate": ("<=", 0.01),
    "entity recall": (">=", 0.90),
    "entity invented rate": ("<=", 0.15),
    "entity recall, dev set": (">=", 0.90),
    "entity invented rate, dev set": ("<=", 0.15),
    "dedup F1": (">=", 0.90),
    "dedup false-positive rate": ("<=", 0.05),
}


def _meets(name: str, value: float) -> str:
    if name not in TARGETS:
        return ""
    op, bound = TARGETS[name]
    ok = value >= bound if op == ">=" else value <= bound
    return f"{op} {bound:g}: {'met' if ok else 'MISSED'}"


def evaluate_activation(data_dir: Path = DEFAULT_DATA, as_json: bool = False) -> int:
    from preprocessing.dedup import evaluate_dedup
    from preprocessing.encoder import SentenceEncoder
    from preprocessing.entities import EntityExtractor
    from preprocessing.entity_eval import evaluate_entities
    from preprocessing.phrases import evaluate_save_requests

    phrases = evaluate_save_requests(data_dir / "save_requests.jsonl")
    extractor = EntityExtractor.load()
    entities = evaluate_entities(data_dir / "entities.jsonl", extractor)
    # The development set the entity filters were tuned on (tests/data/activation/DATASET.md); absent from other data.
    dev_path = data_dir / "entities_dev.jsonl"
    entities_dev = evaluate_entities(dev_path, extractor) if dev_path.is_file() else None
    dedup = evaluate_dedup(data_dir / "dedup_pairs.jsonl", encoder=SentenceEncoder.from_registry())
    rows = [
        ("save-request recall", phrases["recall"], f"{phrases['positives']} explicit requests"),
        ("save-request precision", phrases["precision"], ""),
        ("save-request false-positive rate", phrases["false_positive_rate"],
         f"{phrases['messages'] - phrases['positives']} other messages, {phrases['hard_negatives']} hard negatives"),
        *_entity_rows(entities, ""),
        *(_entity_rows(entities_dev, ", dev set") if entities_dev else ()),
        ("dedup precision", dedup["precision"], ""),
        ("dedup recall", dedup["recall"], f"{dedup['duplicates']} duplicate pairs"),
        ("dedup F1", dedup["f1"], ""),
        ("dedup false-positive rate", dedup["false_positive_rate"],
         f"{dedup['updates']} updates + {dedup['different']} different pairs"),
        ("update recall (UPDATE_CANDIDATE)", dedup["update_recall"], ""),
    ]
    if as_json:
        print(json.dumps({"save_requests": phrases, "entities": entities, "entities_dev": entities_dev, "dedup": dedup},
                         indent=2, default=str))
    else:
        print(f"cortexd eval activation (data: {data_dir})\n")
        print("| measure | value | data | target |")
        print("| --- | ---: | --- | --- |")
        for name, value, note in rows:
            print(f"| {name} | {value:.3f} | {note} | {_meets(name, value)} |")
        print("\nentity recall by label: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(entities["by_label"].items())))
        for name, result in (("", entities), (", dev set", entities_dev)):
            if result and result["invented_by_label"]:
                print(f"entity invented{name}, messages by label: "
                      + ", ".join(f"{k} {v}" for k, v in result["invented_by_label"].items()))
    missed = [name for name, value, _ in rows if _meets(name, value).endswith("MISSED")]
    return 1 if missed else 0


def _entity_rows(result: dict, name: str) -> list[tuple[str, float, str]]:
    return [
        (f"entity recall{name}", result["recall"],
         f"{result['gold_entities']} gold entities in {result['messages']} messages"),
        (f"entity invented rate{name}", result["invented_rate"],
         f"{result['nameless_messages']} messages that name nothing"),
    ]


def evaluate_intent(data_dir: Path | None = None) -> int:
    """Run models/intent/evaluate.py: the int8 model beside the rule fallback, written to models/intent/REPORT.md."""
    import importlib.util

    from preprocessing.registry import models_dir

    script = models_dir() / "intent" / "evaluate.py"
    spec = importlib.util.spec_from_file_location("cortexd_intent_evaluate", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(["--test", str(data_dir / "test.jsonl")] if data_dir else [])
