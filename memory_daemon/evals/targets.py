"""Whether a measured figure meets its target: the one verdict every `cortexd eval` table prints."""

from __future__ import annotations

from collections.abc import Mapping


def verdict(targets: Mapping[str, tuple[str, float]], name: str, value: float | None) -> str:
    """">= 0.9: met" or "<= 0.05: MISSED" for a named figure; "" when it has no target or was not measured."""
    if name not in targets or value is None:
        return ""
    op, bound = targets[name]
    ok = value >= bound if op == ">=" else value <= bound
    return f"{op} {bound:g}: {'met' if ok else 'MISSED'}"
