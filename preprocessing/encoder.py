"""Sentence embeddings: all-MiniLM-L6-v2 as an int8 ONNX model on onnxruntime, mean-pooled and L2-normalised."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from preprocessing.registry import VerifiedModel, verified_model

ENCODER_MODEL = "encoder"
DIMENSIONS = 384
MAX_TOKENS = 256


class SentenceEncoder:
    """encode(texts) -> (n, 384) float32 unit vectors; no torch at run time."""

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int = 1) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=self._tokenizer.token_to_id("[PAD]"), pad_token="[PAD]")

    @classmethod
    def from_registry(cls, threads: int = 1) -> "SentenceEncoder":
        model: VerifiedModel = verified_model(ENCODER_MODEL)
        return cls(model.file("model_int8.onnx"), model.file("tokenizer.json"), threads)

    def tokenize(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The model's input arrays, padded to the longest text."""
        encodings = self._tokenizer.encode_batch(list(texts))
        feeds = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
        }
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.array([e.type_ids for e in encodings], dtype=np.int64)
        return feeds

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        feeds = self.tokenize(texts)
        hidden = self._session.run(["last_hidden_state"], feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return (pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)).astype(np.float32)

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]
