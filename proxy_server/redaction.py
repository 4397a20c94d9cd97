"""Strips secrets from text and tool arguments before an observation is sent to, or stored by, the daemon."""

from __future__ import annotations

import re

REDACTED = "[REDACTED]"  # a whole field's value, whatever it held (its name says it is a secret)
MARKER_START = "[REDACTED"  # every marker starts so: "[REDACTED]" or "[REDACTED:<kind of secret>]"
_ALREADY = r"\[REDACTED(?::[a-z0-9-]+)?\]"

# A field whose name contains one of these holds a secret whatever its value looks like.
SECRET_FIELD_NAME = re.compile(
    r"token|secret|passw(?:or)?d|api[_-]?key|apikey|authorization|credential|private[_-]?key|cookie", re.IGNORECASE)

# Values that are secrets by their shape, wherever they appear, and what the marker calls them.
_SECRET_SHAPES = tuple((kind, re.compile(pattern)) for kind, pattern in (
    # PEM private keys, also when the END line was cut off
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\Z)"),
    ("github-token", r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    ("api-key", r"\bsk-[A-Za-z0-9_-]{16,}"),  # OpenAI, Anthropic (sk-ant-...), and their kin
    ("stripe-key", r"\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("slack-token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
))
# "Bearer abc…", "Basic abc…": keep the scheme, drop the credential.
_AUTH_SCHEME = re.compile(rf"(?i)\b(?P<keep>(?:bearer|basic|token)\s+)(?P<value>{_ALREADY}|[A-Za-z0-9._~+/=-]{{8,}})")
# "password=…", "GITHUB_TOKEN: …", '"api_key": "…"': keep the name, drop the value.
# The name around the keyword is bounded: unbounded `[\w.-]*` on both sides backtracked cubically on a long word run
# (a 64 KiB token took minutes); no secret's name is longer than this. It starts where a name or a part of one can
# start (a word's start, or after "_", "." or "-"): tried from every character, a long word run cost 64 steps a
# character (1 MB: 10 s).
_NAMED_VALUE = re.compile(
    r"(?i)(?P<keep>(?:(?<![\w.-])|(?<=[_.-]))[\w.-]{0,64}"
    r"(?P<name>token|secret|passw(?:or)?d|pwd|api[_-]?key|apikey|authorization|credential)"
    r"[\w.-]{0,64}[\"']?\s*[:=]\s*(?:(?:bearer|basic|token)\s+)?)"
    rf"(?P<value>{_ALREADY}|\"[^\"\n]*\"|'[^'\n]*'|[^\s\"',;&)}}\]]+)")
# "the wifi password is hunter2!": said in words; the value must look made up (a digit or a symbol, 6+ characters),
# so "the password is in the vault" keeps its words.
_SPOKEN_PASSWORD = re.compile(
    r"(?i)(?P<keep>\b(?P<name>password|passphrase|passcode|pin code)\s+(?:is|was|=|:)\s+)"
    r"(?P<value>(?=[^\s]*[\d\W_])[^\s,;]{6,}?)(?=[.!?]?(?:\s|$))")
# "https://user:secret@host": keep the user, drop the password.
_URL_PASSWORD = re.compile(r"(?P<keep>\b[a-z][a-z0-9+.-]{0,31}://[^/\s:@]{1,256}:)(?P<value>[^/\s@]{1,256})(?=@)",
                           re.IGNORECASE)
_NAME_KINDS = (("passw", "password"), ("pwd", "password"), ("passphrase", "password"), ("passcode", "password"),
               ("pin", "password"), ("token", "token"), ("secret", "secret"), ("key", "api-key"),
               ("authorization", "credential"), ("credential", "credential"))


def marker(kind: str) -> str:
    """What replaces a secret of this kind: "[REDACTED:github-token]"."""
    return f"[REDACTED:{kind}]"


def is_marker_only(text: str) -> bool:
    return bool(re.fullmatch(_ALREADY, text))


def _kind_of(match: re.Match) -> str:
    if "name" not in match.re.groupindex:
        return "credential" if match.re is _AUTH_SCHEME else "password"
    name = match.group("name").lower()
    return next(kind for part, kind in _NAME_KINDS if part in name)


def _keep_name(match: re.Match) -> str:
    value = match.group("value")
    if re.fullmatch(_ALREADY, value.strip("\"'")) or not value.strip("\"'"):
        return match.group(0)
    quote = value[0] if value[0] in "\"'" and value[-1] == value[0] and len(value) > 1 else ""
    return f"{match.group('keep')}{quote}{marker(_kind_of(match))}{quote}"


def redact_text(text: str) -> str:
    """The text with every secret-shaped value replaced by a marker naming its kind ("[REDACTED:api-key]");
    applying it twice changes nothing more."""
    for kind, shape in _SECRET_SHAPES:
        text = shape.sub(marker(kind), text)
    for named in (_AUTH_SCHEME, _NAMED_VALUE, _SPOKEN_PASSWORD, _URL_PASSWORD):
        text = named.sub(_keep_name, text)
    return text


def redacted_kinds(text: str) -> list[str]:
    """The kinds of secret the markers in a text name, in order of first appearance."""
    return list(dict.fromkeys(re.findall(r"\[REDACTED:([a-z0-9-]+)\]", text)))


def is_secret_field(name: str) -> bool:
    return bool(SECRET_FIELD_NAME.search(name))


def redact_value(value: object, blank_text_only: bool = False) -> object:
    """A JSON-like value with secret fields blanked (any depth) and secret-shaped text replaced. With
    `blank_text_only` (a memory's meta) a secret-named field is blanked only when it holds text, so a count or a flag
    under such a name ({"token_count": 5}) stays."""
    if isinstance(value, dict):
        return {key: (REDACTED if is_secret_field(str(key)) and _blankable(item, blank_text_only)
                      else redact_value(item, blank_text_only))
                for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item, blank_text_only) for item in value]
    if isinstance(value, str):
        return redact_text(value)
    return value


def _blankable(item: object, text_only: bool) -> bool:
    return (isinstance(item, str) and bool(item)) if text_only else item not in (None, "")
