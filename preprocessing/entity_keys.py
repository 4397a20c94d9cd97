"""Canonical keys for entity names outside a parse: technology names take their gazetteer form, others are lower-cased."""

from __future__ import annotations

from preprocessing.entities import GAZETTEER_PATH, _generic_key, _load_gazetteer, _technology_key


def _gazetteer():
    return _load_gazetteer(str(GAZETTEER_PATH))


def entity_key(name: str) -> str:
    """"Postgres 16" -> "postgresql 16", "The Billing Team" -> "billing team"; the keys entity extraction gives."""
    text = " ".join(name.strip().strip("`\"'").split())
    resolved = _gazetteer().resolve(text)
    return _technology_key(*resolved) if resolved else _generic_key(text)


def is_technology(name: str) -> bool:
    return _gazetteer().resolve(" ".join(name.strip().strip("`\"'").split())) is not None
