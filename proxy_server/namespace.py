"""One namespace rule for the proxy, the hooks and the CLI: the flag, else CORTEXD_NAMESPACE, else the git repo."""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from cortexd.connect import DEFAULT_NAMESPACE

NAMESPACE_ENV = "CORTEXD_NAMESPACE"
NAMESPACE_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
NAMESPACE_RULE = "1-64 letters, digits, '.', '_' or '-', starting with a letter or digit"


class BadNamespace(ValueError):
    """A namespace given by flag or environment that the daemon would refuse."""


@dataclass(frozen=True)
class Namespace:
    """The namespace a surface uses, where it came from, and how a repository name was changed to fit (if it was)."""

    name: str
    source: str  # "flag", "CORTEXD_NAMESPACE", "git repository", "default"
    repository: str = ""  # the repository's own name, when it had to change to become a namespace

    @property
    def explicit(self) -> bool:
        return self.source == "flag"

    def describe(self) -> str:
        """e.g. "namespace 'cafe' (git repository 'café', renamed to fit the namespace rule)"."""
        if self.repository:
            return f"namespace {self.name!r} (git repository {self.repository!r}, renamed to fit the namespace rule)"
        return f"namespace {self.name!r} ({self.source})"


def checked(name: str, where: str) -> str:
    if not NAMESPACE_PATTERN.fullmatch(name):
        raise BadNamespace(f"{where}: namespace {name[:80]!r} is invalid: use {NAMESPACE_RULE}")
    return name


def repository_namespace(name: str) -> str:
    """A repository's name as a namespace: accents folded ("café" -> "cafe"), other characters to "-"; a name with
    no letter or digit left gets a stable one from its hash ("日本" -> "repo-2e5d3c1a")."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii")
    fitted = re.sub(r"[^A-Za-z0-9._-]+", "-", folded).strip("-._")[:64].rstrip("-._")
    return fitted or "repo-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def resolve_namespace(flag: str | None, directory: Path, environ: Mapping[str, str] | None = None) -> Namespace:
    """The flag, else CORTEXD_NAMESPACE, else the enclosing git repository's name, else `default`."""
    environ = os.environ if environ is None else environ
    if flag:
        return Namespace(checked(flag, "--namespace"), "flag")
    from_env = environ.get(NAMESPACE_ENV, "").strip()
    if from_env:
        return Namespace(checked(from_env, NAMESPACE_ENV), NAMESPACE_ENV)
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            name = repository_namespace(candidate.name)
            return Namespace(name, "git repository", candidate.name if name != candidate.name else "")
    return Namespace(DEFAULT_NAMESPACE, "default")
