"""Secrets never leave the proxy or reach the store: by shape, by field name, in the proxy's request and the daemon's."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from memory_daemon.journal.observations import headline, prose_sentences
from proxy_server.capture import MAX_RESULT_CHARS, observation_request
from proxy_server.redaction import REDACTED, redact_text, redact_value, redacted_kinds

# Each shape and the kind of secret its marker names.
SHAPED = {
    "github classic": ("ghp_abcdefghijklmnopqrstuvwxyz0123456789AB", "github-token"),
    "github fine-grained": ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "github-token"),
    "anthropic": ("sk-ant-api03-abcdefghijklmnop1234", "api-key"),
    "openai": ("sk-proj-ABCDEFGHIJKLMNOPQRST", "api-key"),
    "stripe": ("sk_live_abcdefghijklmnop1234", "stripe-key"),
    "aws": ("AKIAIOSFODNN7EXAMPLE", "aws-access-key"),
    "slack": ("xoxb-1234567890-abcdefghij", "slack-token"),
    "google": ("AIzaSyA1234567890abcdefghijklmnopqrstuv", "google-api-key"),
    "jwt": ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "jwt"),
}


@pytest.mark.parametrize("kind", sorted(SHAPED))
def test_secret_shapes_are_redacted_wherever_they_appear_and_the_marker_names_the_kind(kind):
    secret, named = SHAPED[kind]
    text = f"deploy with {secret} tonight"
    assert redact_text(text) == f"deploy with [REDACTED:{named}] tonight"
    assert redacted_kinds(redact_text(text)) == [named]


@pytest.mark.parametrize("text, expected", [
    ("password=hunter2; user=bob", "password=[REDACTED:password]; user=bob"),
    ("GITHUB_TOKEN: abc123def", "GITHUB_TOKEN: [REDACTED:token]"),
    ('{"api_key": "plain-value", "name": "x"}', '{"api_key": "[REDACTED:api-key]", "name": "x"}'),
    ("client_secret = 'xyz'", "client_secret = '[REDACTED:secret]'"),
    ("Authorization: Bearer abcdef0123456789xyz", "Authorization: Bearer [REDACTED:credential]"),
    ('curl -H "Authorization: token abcdef0123456789"', 'curl -H "Authorization: token [REDACTED:credential]"'),
    ("https://bob:s3cr3t@example.com/repo.git", "https://bob:[REDACTED:password]@example.com/repo.git"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nabc\n-----END RSA PRIVATE KEY-----\nafter",
     "[REDACTED:private-key]\nafter"),
    ("key: -----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXkt", "key: [REDACTED:private-key]"),  # END cut off
    ("the wifi password is Tr0ub4dor&3 at home", "the wifi password is [REDACTED:password] at home"),
    ("The password is in the team vault.", "The password is in the team vault."),
    ("We decided to use PostgreSQL 16. The token expired yesterday.",
     "We decided to use PostgreSQL 16. The token expired yesterday."),
])
def test_named_values_lose_their_value_and_keep_their_name(text, expected):
    assert redact_text(text) == expected
    assert redact_text(expected) == expected, "redacting twice (proxy, then daemon) changes nothing more"


def test_secret_fields_are_blanked_at_any_depth_whatever_their_value():
    arguments = {"title": "Rotate keys", "Token": "short", "headers": {"Authorization": "Basic dXNlcjpwYXNz"},
                 "config": {"API_KEY": 42, "apiKey": ["a", "b"], "db_password": "pw", "client-secret": "s"},
                 "notes": ["ok", "ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"], "count": 3, "refresh_token": ""}
    assert redact_value(arguments) == {
        "title": "Rotate keys", "Token": REDACTED, "headers": {"Authorization": REDACTED},
        "config": {"API_KEY": REDACTED, "apiKey": REDACTED, "db_password": REDACTED, "client-secret": REDACTED},
        "notes": ["ok", "[REDACTED:github-token]"], "count": 3, "refresh_token": "",
    }


def test_the_proxy_redacts_before_it_cuts_and_sends():
    secret = SHAPED["github classic"][0]
    result = types.CallToolResult(content=[types.TextContent(type="text", text="x" * (MAX_RESULT_CHARS - 10) + " " + secret)])
    request = observation_request("github", "create_issue", {"body": f"token is {secret}", "password": "pw"}, result)
    assert secret not in request.result_text and secret[:8] not in request.result_text, "cut after redacting"
    assert json.loads(request.arguments_json) == {"body": "token is [REDACTED:github-token]", "password": REDACTED}
    assert (request.upstream, request.tool, request.is_error) == ("github", "create_issue", False)


def test_the_daemon_analyses_only_sentences_free_of_secrets():
    arguments = redact_value({"title": "Switch CI", "body": "- We decided to move CI to GitHub Actions.\n"
                                                            "The runner token is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB."})
    assert list(prose_sentences(arguments)) == ["We decided to move CI to GitHub Actions."]
    assert headline({"token": REDACTED, "message": "fix: retry on 503\n\nlonger text"}) == "fix: retry on 503"
