"""The curated technology list: each name's spellings and evidence tier, its canonical key, and one-edit typo correction."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

TECHNOLOGY = "TECHNOLOGY"  # the entity label of a gazetteer match
TRAILING_VERSION = re.compile(r"^(?P<base>.+?)[\s-]*(?:v\.?\s*)?(?P<version>\d+(?:\.\d+){0,3}(?:\.x)?)$", re.IGNORECASE)
YEAR = re.compile(r"(?:19|20)\d\d")


def normalise_version(version: str) -> str:
    version = version.lower().lstrip("v")
    return version[:-2] if version.endswith(".x") else version


GAZETTEER_PATH = Path(__file__).parent / "data" / "technology_gazetteer.json"


@dataclass(frozen=True)
class TechnologyForm:
    """One spelling of a technology name and how much evidence it needs."""

    canonical: str
    spelling: str
    tier: str  # "plain" (any case), "cased" (exact spelling, else context), "context" (always context)
    year_versions: bool


class TechnologyGazetteer:
    """The curated technology list in data/technology_gazetteer.json, indexed for matching and key normalisation."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.entries: list[dict[str, Any]] = data["technologies"]
        self.plain: dict[str, TechnologyForm] = {}
        self.ambiguous: dict[str, list[TechnologyForm]] = {}
        self.by_canonical: dict[str, TechnologyForm] = {}
        for entry in self.entries:
            cased = set(entry.get("cased", ()))
            context = set(entry.get("context", ()))
            years = bool(entry.get("year_versions"))
            for spelling in [entry["name"], *entry["aliases"]]:
                tier = "cased" if spelling in cased else "context" if spelling in context else "plain"
                form = TechnologyForm(entry["name"], spelling, tier, years)
                if tier == "plain":
                    self.plain.setdefault(spelling.lower(), form)
                else:
                    self.ambiguous.setdefault(spelling.lower(), []).append(form)
            self.by_canonical[entry["name"]] = TechnologyForm(entry["name"], entry["name"], "plain", years)
        # A spelling that is plain for one entry ("kafka") is not ambiguous for another.
        for lower in list(self.ambiguous):
            if lower in self.plain:
                del self.ambiguous[lower]
        cues = data["context_cues"]
        self.cues_before = frozenset(cues["before"])
        self.prepositions = frozenset(cues["before_with_preposition"])
        self.cues_after = frozenset(cues["after"])
        self.joiners = frozenset(cues["joiners"])
        self.camelcase_words = frozenset(w.lower() for w in data["camelcase_words"])
        self._typo_index = self._build_typo_index()
        self._longest_typo_name = max((len(name) for name in self._typo_index), default=0)

    @classmethod
    def load(cls, path: Path = GAZETTEER_PATH) -> "TechnologyGazetteer":
        return load_gazetteer(str(path))

    def __len__(self) -> int:
        return len(self.entries)

    def ruler_patterns(self) -> list[dict[str, str]]:
        """Phrase patterns for the plain tier; the ruler matches them on LOWER."""
        return [{"label": TECHNOLOGY, "pattern": form.spelling, "id": form.canonical} for form in self.plain.values()]

    def form(self, text: str) -> TechnologyForm | None:
        """Any tier, case-insensitive: for text already known to be technical (backticks, gold labels)."""
        lower = " ".join(text.split()).lower()
        if lower in self.plain:
            return self.plain[lower]
        forms = self.ambiguous.get(lower)
        return forms[0] if forms else None

    def resolve(self, text: str) -> tuple[TechnologyForm, str | None] | None:
        """Name plus optional version ("Postgres 16", "React v18", "python3.12") -> (form, version)."""
        text = " ".join(text.split())
        form = self.form(text)
        if form:
            return form, None
        match = TRAILING_VERSION.match(text)
        if not match:
            return None
        base = match["base"].rstrip(" -")
        if base.lower().endswith(" version"):
            base = base[: -len(" version")]
        form = self.form(base)
        version = normalise_version(match["version"])
        if form is None or (YEAR.fullmatch(version) and not form.year_versions):
            return None
        return form, version

    def correct_typo(self, word: str, known_words: frozenset[str] = frozenset()) -> TechnologyForm | None:
        """A plain single-word name one typo away ("kubernets", "pyhton", "postgress"), or None.

        Typos here are a swap of neighbouring letters (6+ letters) or a dropped or
        doubled letter (8+ letters). Substitutions are not corrected: one changed
        letter turns too many English words into names ("networks" -> NetworkX,
        "authentic" -> Authentik). Nor is any word in known_words (the model's
        vocabulary: "mosquito" is not a typo of Mosquitto). The first letter must
        agree, and a swap beats a dropped or doubled letter when both fit.
        """
        lower = word.lower()
        # A word longer than every name plus one letter is no typo of one; checking it would cost its length squared.
        if not 6 <= len(lower) <= self._longest_typo_name + 1 or not lower.isalpha() or lower in known_words:
            return None
        found: set[str] = set(self._typo_index.get(lower, ()))
        for variant in deletions(lower):
            found.update(self._typo_index.get(variant, ()))
        ranked: list[tuple[int, str]] = []
        for alias in found:
            if alias[0] != lower[0] or alias == lower or alias.startswith(lower):
                # A name that extends a word ("containerd" from "container") is not a typo of it.
                continue
            distance, swapped = edit_distance_one(lower, alias)
            if distance != 1:
                continue
            if swapped:
                ranked.append((0, alias))
            elif len(alias) != len(lower) and min(len(lower), len(alias)) >= 8:
                ranked.append((1, alias))
        ranked.sort()
        if not ranked or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
            return None
        return self.plain[ranked[0][1]]

    def _build_typo_index(self) -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for lower in self.plain:
            if len(lower) < 6 or not lower.isalpha():
                continue
            index.setdefault(lower, set()).add(lower)
            for variant in deletions(lower):
                index.setdefault(variant, set()).add(lower)
        return index


@lru_cache(maxsize=4)
def load_gazetteer(path: str) -> TechnologyGazetteer:
    with open(path, encoding="utf-8") as handle:
        return TechnologyGazetteer(json.load(handle))


def deletions(word: str) -> Iterable[str]:
    return (word[:i] + word[i + 1 :] for i in range(len(word)))


def edit_distance_one(a: str, b: str) -> tuple[int, bool]:
    """(1, swapped) when a and b differ by one edit (optimal string alignment), else (2, False)."""
    if abs(len(a) - len(b)) > 1:
        return 2, False
    if len(a) == len(b):
        diffs = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diffs) == 1:
            return 1, False
        if len(diffs) == 2 and diffs[1] == diffs[0] + 1 and a[diffs[0]] == b[diffs[1]] and a[diffs[1]] == b[diffs[0]]:
            return 1, True
        return 2, False
    short, long = (a, b) if len(a) < len(b) else (b, a)
    for i in range(len(long)):
        if long[:i] + long[i + 1 :] == short:
            return 1, False
    return 2, False
