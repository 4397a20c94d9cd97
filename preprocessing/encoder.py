"""Sentence embeddings: all-MiniLM-L6-v2 as an int8 ONNX model on onnxruntime, mean-pooled and L2-normalised."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from preprocessing.bounds import ENCODER_CHARS, text_prefix
from preprocessing.onnx_text import cpu_session, model_inputs, wordpiece_tokenizer
from preprocessing.registry import VerifiedModel, verified_model

ENCODER_MODEL = "encoder"
DIMENSIONS = 384
MAX_TOKENS = 256


class SentenceEncoder:
    """encode(texts) -> (n, 384) float32 unit vectors; no torch at run time."""

    def __init__(self, model_path: Path, tokenizer_path: Path, threads: int = 1) -> None:
        self._session = cpu_session(model_path, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        self._tokenizer = wordpiece_tokenizer(tokenizer_path, MAX_TOKENS)

    @classmethod
    def from_registry(cls, threads: int = 1) -> "SentenceEncoder":
        model: VerifiedModel = verified_model(ENCODER_MODEL)
        return cls(model.file("model_int8.onnx"), model.file("tokenizer.json"), threads)

    def tokenize(self, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """The model's input arrays, padded to the longest text; the tokenizer reads each text's first ENCODER_CHARS
        characters, which hold the MAX_TOKENS word pieces kept (it would otherwise split a whole 64 KiB text)."""
        return model_inputs(self._tokenizer, [text_prefix(text, ENCODER_CHARS) for text in texts], self._inputs)

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
