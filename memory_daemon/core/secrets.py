"""Keeps secrets out of the store: every write path passes what it stores through here first."""

from __future__ import annotations

from proxy_server.redaction import redact_text, redact_value


class SecretFilter:
    """Redacts text and JSON-like values per namespace; the namespaces in `off_in` keep what was typed."""

    def __init__(self, off_in: tuple[str, ...] = ()) -> None:
        self.off_in = frozenset(off_in)

    def text(self, namespace: str, text: str) -> str:
        return text if namespace in self.off_in or not text else redact_text(text)

    def texts(self, namespace: str, texts) -> tuple[str, ...]:
        return tuple(self.text(namespace, text) for text in texts)

    def value(self, namespace: str, value: object) -> object:
        """A JSON-like value (a memory's meta) with secret-shaped text redacted, and the text under a secret-looking
        key ("api_key", "password") blanked; numbers and flags stay, so {"token_count": 5} keeps its 5."""
        return value if namespace in self.off_in else redact_value(value, blank_text_only=True)
