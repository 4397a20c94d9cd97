"""Strips secrets from text and tool arguments before an observation is sent to, or stored by, the daemon."""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"

# A field whose name contains one of these holds a secret whatever its value looks like.
SECRET_FIELD_NAME = re.compile(
    r"token|secret|passw(?:or)?d|api[_-]?key|apikey|authorization|credential|private[_-]?key|cookie", re.IGNORECASE)

# Values that are secrets by their shape, wherever they appear. The replacement keeps what precedes group "value".
_SECRET_SHAPES = tuple(re.compile(pattern) for pattern in (
    # PEM private keys, also when the END line was cut off
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)",
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bsk-[A-Za-z0-9_-]{16,}",  # OpenAI, Anthropic (sk-ant-...), and their kin
    r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",  # Stripe
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
    r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
    r"\bAIza[0-9A-Za-z_-]{35}",  # Google API keys
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWTs
))
# "Bearer abc…", "Basic abc…": keep the scheme, drop the credential.
_AUTH_SCHEME = re.compile(r"(?i)\b(?P<keep>(?:bearer|basic|token)\s+)(?P<value>\[REDACTED\]|[A-Za-z0-9._~+/=-]{8,})")
# "password=…", "GITHUB_TOKEN: …", '"api_key": "…"': keep the name, drop the value.
# The name around the keyword is bounded: unbounded `[\w.-]*` on both sides backtracked cubically on a long word run
# (a 64 KiB token took minutes); no secret's name is longer than this.
_NAMED_VALUE = re.compile(
    r"(?i)(?P<keep>[\w.-]{0,64}(?:token|secret|passw(?:or)?d|pwd|api[_-]?key|apikey|authorization|credential)[\w.-]{0,64}"
    r"[\"']?\s*[:=]\s*(?:(?:bearer|basic|token)\s+)?)(?P<value>\[REDACTED\]|\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&)}\]]+)")
# "https://user:secret@host": keep the user, drop the password.
_URL_PASSWORD = re.compile(r"(?P<keep>\b[a-z][a-z0-9+.-]{0,31}://[^/\s:@]{1,256}:)(?P<value>[^/\s@]{1,256})(?=@)",
                           re.IGNORECASE)


def _keep_name(match: re.Match) -> str:
    value = match.group("value")
    if value.strip("\"'") in ("", REDACTED):
        return match.group(0)
    quote = value[0] if value[0] in "\"'" and value[-1] == value[0] and len(value) > 1 else ""
    return f"{match.group('keep')}{quote}{REDACTED}{quote}"


def redact_text(text: str) -> str:
    """The text with every secret-shaped value replaced by [REDACTED]; applying it twice changes nothing more."""
    for shape in _SECRET_SHAPES:
        text = shape.sub(REDACTED, text)
    for named in (_AUTH_SCHEME, _NAMED_VALUE, _URL_PASSWORD):
        text = named.sub(_keep_name, text)
    return text


def is_secret_field(name: str) -> bool:
    return bool(SECRET_FIELD_NAME.search(name))


def redact_value(value: object) -> object:
    """A JSON-like value with secret fields blanked (any depth) and secret-shaped text replaced."""
    if isinstance(value, dict):
        return {key: (REDACTED if is_secret_field(str(key)) and value[key] not in (None, "") else redact_value(item))
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
