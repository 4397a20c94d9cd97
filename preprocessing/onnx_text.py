"""What every ONNX text model here shares: a CPU session, a BERT word-piece tokenizer, its input arrays and a softmax."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np


def cpu_session(model_path: Path, threads: int):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    # Idle pool threads sleep instead of spinning. They are created at normal priority, and the daemon's writes and
    # imports run on background-priority threads (memory_daemon.api.workers): spinning workers took the CPU from the
    # very thread that waited on them, and a 2,000-record import fell from 85 to 12 items/s by its second thousand.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    # No arena: it keeps the peak of the largest batch a session ever ran (an import's, or a long compile_context)
    # for the life of the daemon. Measured on the relation, relevance and encoder sessions after batches of 32-64
    # long texts: 463 MB kept with it, 120 MB without once the heap is trimmed, at the same latency.
    options.enable_cpu_mem_arena = False
    return onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


def wordpiece_tokenizer(tokenizer_path: Path, max_tokens: int):
    """The tokenizer, truncating at max_tokens and padding each batch to its longest text."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length=max_tokens)
    tokenizer.enable_padding(pad_id=tokenizer.token_to_id("[PAD]"), pad_token="[PAD]")
    return tokenizer


def model_inputs(tokenizer, texts: Sequence[str] | Sequence[tuple[str, str]],
                 input_names: Collection[str]) -> dict[str, np.ndarray]:
    """Input arrays for single texts, or for (segment A, segment B) pairs as a cross-encoder reads them."""
    encodings = tokenizer.encode_batch(list(texts))
    feeds = {
        "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
        "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
    }
    if "token_type_ids" in input_names:
        feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
    return feeds


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax of a classifier's (n, labels) logits, in float64 so each row sums to 1 within 1e-12."""
    shifted = logits.astype(np.float64)
    if shifted.size:
        shifted -= shifted.max(axis=1, keepdims=True)
    weights = np.exp(shifted)
    return weights / weights.sum(axis=1, keepdims=True) if shifted.size else weights


def write_runtime_tokenizer(source: Path, destination: Path, max_tokens: int) -> None:
    """Copy an upstream tokenizer.json for shipping: truncation at max_tokens, batch-longest padding.

    Upstream MiniLM ships truncation at 128 and fixed padding to 128; the build scripts of every model here
    write their tokenizer through this one function so run time sees the settings it expects.
    """
    import json

    from tokenizers import Tokenizer

    data = json.loads(source.read_text(encoding="utf-8"))
    if data.get("truncation") is not None:
        data["truncation"]["max_length"] = max_tokens
    if data.get("padding") is not None:
        data["padding"]["strategy"] = "BatchLongest"
    destination.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    tokenizer = Tokenizer.from_file(str(destination))
    assert tokenizer.truncation["max_length"] == max_tokens, tokenizer.truncation
    assert tokenizer.padding is None or tokenizer.padding["length"] is None, tokenizer.padding
